/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-routing-engine.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbRoutingEngine");

NS_OBJECT_ENSURE_REGISTERED(IbRoutingEngine);

TypeId
IbRoutingEngine::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbRoutingEngine").SetParent<Object>().SetGroupName("Infiniband");
    return tid;
}

} // namespace ns3

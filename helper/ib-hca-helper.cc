/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-hca-helper.h"

#include "ns3/abort.h"
#include "ns3/ib-connection-manager.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/node.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbHcaHelper");

IbHcaHelper::IbHcaHelper()
{
    m_factory.SetTypeId("ns3::IbHca");
}

void
IbHcaHelper::SetHcaAttribute(std::string name, const AttributeValue& value)
{
    m_factory.Set(name, value);
}

Ptr<IbHca>
IbHcaHelper::Install(Ptr<Node> node) const
{
    NS_ABORT_MSG_IF(node->GetObject<IbHca>(),
                    "IbHcaHelper::Install: node " << node->GetId() << " already has an IbHca");
    NS_ABORT_MSG_IF(node->GetObject<IbSwitch>(),
                    "IbHcaHelper::Install: node " << node->GetId() << " is a switch");
    Ptr<IbHca> hca = m_factory.Create<IbHca>();
    node->AggregateObject(hca);
    for (uint32_t i = 0; i < node->GetNDevices(); ++i)
    {
        Ptr<IbNetDevice> dev = DynamicCast<IbNetDevice>(node->GetDevice(i));
        if (dev)
        {
            hca->AddPort(dev);
        }
    }
    NS_ABORT_MSG_IF(hca->GetNPorts() == 0,
                    "IbHcaHelper::Install: node " << node->GetId() << " has no IbNetDevice");
    return hca;
}

std::vector<Ptr<IbHca>>
IbHcaHelper::Install(NodeContainer nodes) const
{
    std::vector<Ptr<IbHca>> out;
    for (auto it = nodes.Begin(); it != nodes.End(); ++it)
    {
        out.push_back(Install(*it));
    }
    return out;
}

void
IbHcaHelper::ConnectRc(Ptr<IbQueuePair> a,
                       Ptr<IbQueuePair> b,
                       Ptr<IbSubnetManager> sm,
                       IbQpAttr base)
{
    IbConnectionManager::ConnectRc(a, b, sm, base);
}

void
IbHcaHelper::ConnectUd(Ptr<IbQueuePair> qp, uint32_t qkey)
{
    IbConnectionManager::ConnectUd(qp, qkey);
}

} // namespace ns3

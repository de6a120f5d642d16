/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-raw-traffic-helper.h"

#include "ns3/ib-net-device.h"
#include "ns3/ib-raw-traffic-application.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbRawTrafficHelper");

IbRawTrafficHelper::IbRawTrafficHelper(uint16_t dlid)
{
    m_factory.SetTypeId("ns3::IbRawTrafficApplication");
    m_factory.Set("Dlid", UintegerValue(dlid));
}

void
IbRawTrafficHelper::SetAttribute(std::string name, const AttributeValue& value)
{
    m_factory.Set(name, value);
}

ApplicationContainer
IbRawTrafficHelper::Install(Ptr<IbNetDevice> device) const
{
    Ptr<IbRawTrafficApplication> app = m_factory.Create<IbRawTrafficApplication>();
    app->SetDevice(device);
    device->GetNode()->AddApplication(app);
    return ApplicationContainer(app);
}

} // namespace ns3

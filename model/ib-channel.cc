/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-channel.h"

#include "ib-net-device.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbChannel");

NS_OBJECT_ENSURE_REGISTERED(IbChannel);

TypeId
IbChannel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbChannel")
            .SetParent<Channel>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbChannel>()
            .AddAttribute("Delay",
                          "One-way propagation delay of the cable (used when Length is 0).",
                          TimeValue(NanoSeconds(10)),
                          MakeTimeAccessor(&IbChannel::m_delay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("Length",
                          "Cable length in metres; when non-zero it sets the delay to "
                          "Length x DelayPerMetre and Delay is ignored.",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&IbChannel::m_length),
                          MakeDoubleChecker<double>(0.0, 1e6))
            .AddAttribute("DelayPerMetre",
                          "Propagation delay per metre of cable (about 5 ns/m for copper "
                          "and fibre).",
                          TimeValue(NanoSeconds(5)),
                          MakeTimeAccessor(&IbChannel::m_delayPerMetre),
                          MakeTimeChecker(Time(0)));
    return tid;
}

IbChannel::IbChannel()
    : m_nodeIds{0, 0},
      m_nDevices(0),
      m_length(0.0)
{
    NS_LOG_FUNCTION(this);
}

IbChannel::~IbChannel()
{
    NS_LOG_FUNCTION(this);
}

void
IbChannel::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_devices[0] = nullptr;
    m_devices[1] = nullptr;
    m_nDevices = 0;
    Channel::DoDispose();
}

void
IbChannel::Attach(Ptr<IbNetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    NS_ABORT_MSG_IF(m_nDevices >= 2,
                    "IbChannel " << GetId()
                                 << ": a cable joins exactly two ports; a third port (node "
                                 << device->GetNode()->GetId()
                                 << ") was attached. Create one IbChannel per cable.");
    m_nodeIds[m_nDevices] = device->GetNode()->GetId();
    m_devices[m_nDevices++] = device;
    if (m_nDevices == 2)
    {
        for (auto& d : m_devices)
        {
            Simulator::ScheduleWithContext(d->GetNode()->GetId(),
                                           Time(0),
                                           &IbNetDevice::NotifyLinkUp,
                                           d);
        }
    }
}

Time
IbChannel::GetDelay() const
{
    if (m_length > 0.0)
    {
        return Time::FromDouble(m_length * m_delayPerMetre.GetDouble(), Time::GetResolution());
    }
    return m_delay;
}

void
IbChannel::Transmit(Ptr<Packet> packet,
                    Ptr<IbNetDevice> src,
                    Time headerEnd,
                    Time txEnd,
                    bool linkPacket)
{
    NS_LOG_FUNCTION(this << packet << src << headerEnd << txEnd << linkPacket);
    const uint32_t d = (src == m_devices[0]) ? 1 : 0;
    IbNetDevice* dst = PeekPointer(m_devices[d]);
    const Time lastNeeded = (dst->IsCutThrough() && !linkPacket) ? headerEnd : txEnd;
    Simulator::ScheduleWithContext(m_nodeIds[d],
                                   lastNeeded + GetDelay() + dst->GetRxDelay(),
                                   &IbNetDevice::ReceiveFromChannel,
                                   dst,
                                   packet,
                                   linkPacket);
}

Ptr<IbNetDevice>
IbChannel::GetPeer(Ptr<const IbNetDevice> device) const
{
    if (m_nDevices < 2)
    {
        return nullptr;
    }
    return (device == m_devices[0]) ? m_devices[1] : m_devices[0];
}

std::size_t
IbChannel::GetNDevices() const
{
    return m_nDevices;
}

Ptr<NetDevice>
IbChannel::GetDevice(std::size_t i) const
{
    NS_ASSERT(i < m_nDevices);
    return m_devices[i];
}

Ptr<IbNetDevice>
IbChannel::GetIbDevice(std::size_t i) const
{
    NS_ASSERT(i < m_nDevices);
    return m_devices[i];
}

} // namespace ns3

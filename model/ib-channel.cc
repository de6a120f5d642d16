/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-channel.h"

#include "ib-flow-control-header.h"
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
    : m_nDevices(0),
      m_length(0.0)
{
    NS_LOG_FUNCTION(this);
    for (auto& dir : m_dir)
    {
        // A raw pointer back, so that the channel and its directions (which the scheduler
        // may still hold) do not keep each other alive.
        dir = Create<Direction>();
        dir->channel = this;
    }
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
    for (auto& dir : m_dir)
    {
        dir->Clear();
        dir->dst = nullptr;
        dir->channel = nullptr;
    }
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
    m_dir[m_nDevices]->dst = PeekPointer(device);
    m_dir[m_nDevices]->context = device->GetNode()->GetId();
    m_devices[m_nDevices++] = device;
    UpdatePortModes();
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
IbChannel::UpdatePortModes()
{
    for (auto& dir : m_dir)
    {
        if (dir->dst != nullptr)
        {
            dir->dstCutThrough = dir->dst->IsCutThrough();
            dir->dstRxDelay = dir->dst->GetRxDelay();
        }
    }
}

void
IbChannel::Transmit(IbOwnedPacket packet,
                    Ptr<IbNetDevice> src,
                    Time headerEnd,
                    Time txEnd,
                    bool linkPacket)
{
    NS_LOG_FUNCTION(this << packet.Get() << src << headerEnd << txEnd << linkPacket);
    const uint32_t d = (src == m_devices[0]) ? 1 : 0;
    const Direction& dir = *m_dir[d];
    const Time lastNeeded = (dir.dstCutThrough && !linkPacket) ? headerEnd : txEnd;
    InFlight item;
    item.packet = std::move(packet);
    item.linkPacket = linkPacket;
    Launch(d, lastNeeded + GetDelay() + dir.dstRxDelay, std::move(item));
}

void
IbChannel::TransmitFlowControl(const IbFlowControlHeader& fc, Ptr<IbNetDevice> src, Time txEnd)
{
    NS_LOG_FUNCTION(this << src << txEnd);
    const uint32_t d = (src == m_devices[0]) ? 1 : 0;
    InFlight item;
    if (m_dir[d]->dst->m_watched & IbNetDevice::WATCH_FC_RX)
    {
        item.packet = IbOwnedPacket(MakeFlowControlPacket(fc)); // someone watches it arrive
    }
    item.fctbs = fc.GetFctbs();
    item.fccl = fc.GetFccl();
    item.vl = fc.GetVl();
    item.linkPacket = true;
    Launch(d, txEnd + GetDelay() + m_dir[d]->dstRxDelay, std::move(item));
}

Ptr<Packet>
IbChannel::MakeFlowControlPacket(const IbFlowControlHeader& fc)
{
    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(fc);
    return p;
}

void
IbChannel::Launch(uint32_t d, Time delay, InFlight&& item)
{
    Direction& dir = *m_dir[d];
    const Time at = Simulator::Now() + delay;
    NS_ABORT_MSG_IF(at < dir.lastArrival,
                    "IbChannel " << GetId() << ": a packet would arrive at node " << dir.context
                                 << " at " << at.As(Time::NS) << ", before one sent earlier ("
                                 << dir.lastArrival.As(Time::NS)
                                 << "); do not shorten a cable's Delay or Length, or a "
                                    "switch's latency, while packets are on it");
    dir.lastArrival = at;
    dir.Push(std::move(item));
    dir.Ref(); // the scheduler's reference, dropped after the event ran
    Simulator::ScheduleWithContext(dir.context, delay, &dir);
}

void
IbChannel::Arrive(Direction& dir)
{
    InFlight item = dir.Pop();
    if (!item.packet)
    {
        dir.dst->ApplyFlowControl(item.vl, item.fctbs, item.fccl);
        return;
    }
    dir.dst->ReceiveFromChannel(item.packet.Release(), item.linkPacket);
}

void
IbChannel::Direction::Push(InFlight&& item)
{
    // The ring holds the oldest items; once it is full, newer ones wait in overflow and
    // Pop refills the ring from it, so overflow is only ever non-empty behind a full ring
    // and the order is kept.
    if (size == ring.size())
    {
        overflow.Push(std::move(item));
        return;
    }
    ring[(head + size) % ring.size()] = std::move(item);
    ++size;
}

IbChannel::InFlight
IbChannel::Direction::Pop()
{
    NS_ASSERT(size > 0);
    InFlight item = std::move(ring[head]); // leaves the slot without a packet
    head = static_cast<uint8_t>((head + 1) % ring.size());
    --size;
    if (!overflow.Empty())
    {
        ring[(head + size) % ring.size()] = overflow.Pop();
        ++size;
    }
    return item;
}

void
IbChannel::Direction::Clear()
{
    for (auto& item : ring)
    {
        item.packet.Reset();
    }
    head = 0;
    size = 0;
    overflow.Clear();
}

void
IbChannel::Direction::Notify()
{
    if (channel != nullptr)
    {
        channel->Arrive(*this);
    }
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

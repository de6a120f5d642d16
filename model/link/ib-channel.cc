/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-channel.h"

#include "ib-net-device.h"

#include "ns3/double.h"
#include "ns3/ib-flow-control-header.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-prefetch.h"
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
                          "One-way propagation delay of the cable (used when Length is 0). "
                          "Read, it gives the propagation delay in effect (Length x "
                          "DelayPerMetre when Length is set; FecLatency comes on top): ns-3's "
                          "distributed engines take their lookahead from it.",
                          TimeValue(NanoSeconds(10)),
                          MakeTimeAccessor(&IbChannel::SetDelay, &IbChannel::GetDelayAttribute),
                          MakeTimeChecker()) // SetDelay refuses a negative one, saying so
            .AddAttribute("Length",
                          "Cable length in metres; when non-zero it sets the delay to "
                          "Length x DelayPerMetre and Delay is ignored.",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&IbChannel::SetLength, &IbChannel::GetLength),
                          MakeDoubleChecker<double>()) // checked by SetLength
            .AddAttribute(
                "DelayPerMetre",
                "Propagation delay per metre of cable (about 5 ns/m for copper "
                "and fibre).",
                TimeValue(NanoSeconds(5)),
                MakeTimeAccessor(&IbChannel::SetDelayPerMetre, &IbChannel::GetDelayPerMetre),
                MakeTimeChecker()) // checked by SetDelayPerMetre
            .AddAttribute(
                "FecLatency",
                "Forward error correction latency of the link, one way (encoder and "
                "decoder), added to the propagation delay of every packet in both "
                "directions. 0 by default: HDR, NDR and XDR links run RS-FEC, whose latency "
                "NVIDIA does not publish (transceiver specifications of the Ethernet KP4 "
                "RS(544,514) code cite 100-120 ns); set it to study it.",
                TimeValue(Time(0)),
                MakeTimeAccessor(&IbChannel::SetFecLatency, &IbChannel::GetFecLatency),
                MakeTimeChecker()) // checked by SetFecLatency
            .AddTraceSource("LinkState",
                            "The cable failed (false: SetLinkDown) or came up again (true: "
                            "when its ports are up after SetLinkUp).",
                            MakeTraceSourceAccessor(&IbChannel::m_linkStateTrace),
                            "ns3::IbChannel::LinkStateTracedCallback");
    return tid;
}

IbChannel::IbChannel()
    : m_nDevices(0),
      m_length(0.0),
      m_fecLatency(Time(0))
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

bool
IbChannel::IsBetweenRanks() const
{
    return false;
}

Time
IbChannel::GetDelay() const
{
    return GetPropagationDelay() + m_fecLatency;
}

Time
IbChannel::GetPropagationDelay() const
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
    // Between MPI ranks the propagation delay is the lookahead: zero would stall the
    // granted-time-window engine to one time step per round and spin the null-message
    // engine for ever. IbHelper::Connect checks it when the cable is made; this catches
    // a Delay, Length or DelayPerMetre set to zero afterwards.
    NS_ABORT_MSG_IF(m_nDevices == 2 && IsBetweenRanks() &&
                        !GetPropagationDelay().IsStrictlyPositive(),
                    "IbChannel " << GetId() << " between MPI ranks: Delay=" << m_delay.As(Time::NS)
                                 << ", Length=" << m_length
                                 << " m, DelayPerMetre=" << m_delayPerMetre.As(Time::NS)
                                 << " give no propagation delay, which is the ranks' lookahead; "
                                    "give the cable a positive Delay (or Length)");
    const Time propagation = GetDelay();
    const bool direct = m_portsLaunch || GetInstanceTypeId() == IbChannel::GetTypeId();
    for (std::size_t d = 0; d < 2; ++d)
    {
        Direction& dir = *m_dir[d];
        if (dir.dst != nullptr)
        {
            dir.dstCutThrough = dir.dst->IsCutThrough();
            dir.arrivalDelay = propagation + dir.dst->GetRxDelay();
        }
        else
        {
            dir.arrivalDelay = propagation;
        }
        // The port at the other end sends on this direction (if it is still this cable's).
        IbNetDevice* src = PeekPointer(m_devices[1 - d]);
        if (src != nullptr && PeekPointer(src->m_channel) == this)
        {
            src->m_hot.txDir = direct ? &dir : nullptr;
        }
    }
}

void
IbChannel::SetDelay(Time delay)
{
    NS_ABORT_MSG_IF(delay.IsStrictlyNegative(),
                    "IbChannel attribute Delay=" << delay.As(Time::NS)
                                                 << " is negative; a cable's delay is 0 or more");
    m_delay = delay;
    UpdatePortModes();
}

Time
IbChannel::GetDelayAttribute() const
{
    // The delay in effect: a Length set after the cable was made (Config::Set on it)
    // would otherwise leave the distributed engines a lookahead longer than the cable.
    // Without FecLatency, so that reading the attribute and setting it back is no change.
    return GetPropagationDelay();
}

void
IbChannel::SetLength(double length)
{
    NS_ABORT_MSG_IF(!(length >= 0 && length <= 1e6),
                    "IbChannel attribute Length=" << length
                                                  << " m: a cable is 0 (then Delay applies) to "
                                                     "1e6 metres long");
    m_length = length;
    UpdatePortModes();
}

double
IbChannel::GetLength() const
{
    return m_length;
}

void
IbChannel::SetDelayPerMetre(Time delay)
{
    NS_ABORT_MSG_IF(delay.IsStrictlyNegative(),
                    "IbChannel attribute DelayPerMetre="
                        << delay.As(Time::NS) << " is negative; about 5 ns per metre is usual");
    m_delayPerMetre = delay;
    UpdatePortModes();
}

Time
IbChannel::GetDelayPerMetre() const
{
    return m_delayPerMetre;
}

void
IbChannel::SetFecLatency(Time latency)
{
    NS_ABORT_MSG_IF(latency.IsStrictlyNegative(),
                    "IbChannel attribute FecLatency="
                        << latency.As(Time::NS)
                        << " is negative; it is 0 (no FEC) or the FEC's one-way latency");
    m_fecLatency = latency;
    UpdatePortModes();
}

Time
IbChannel::GetFecLatency() const
{
    return m_fecLatency;
}

void
IbChannel::Transmit(IbOwnedPacket packet,
                    Ptr<IbNetDevice> src,
                    Time headerEnd,
                    Time txEnd,
                    bool linkPacket)
{
    NS_LOG_FUNCTION(this << packet.Get() << src << headerEnd << txEnd << linkPacket);
    Direction& dir = *m_dir[(src == m_devices[0]) ? 1 : 0];
    if (!linkPacket)
    {
        const uint32_t head = IbPacket::PeekHead(*packet.Get());
        const uint32_t bytes = packet.Get()->GetSize();
        dir.SendData(std::move(packet), head, bytes, headerEnd, txEnd);
        return;
    }
    InFlight item;
    item.packet = std::move(packet);
    item.linkPacket = true;
    dir.Launch(txEnd + dir.arrivalDelay, std::move(item));
}

void
IbChannel::TransmitFlowControl(const IbFlowControlHeader& fc, Ptr<IbNetDevice> src, Time txEnd)
{
    NS_LOG_FUNCTION(this << src << txEnd);
    m_dir[(src == m_devices[0]) ? 1 : 0]->SendFlowControl(fc.GetFirstWord(), txEnd);
}

Ptr<Packet>
IbChannel::MakeFlowControlPacket(const IbFlowControlHeader& fc)
{
    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(fc);
    return p;
}

void
IbChannel::Direction::SendData(IbOwnedPacket packet,
                               uint32_t head,
                               uint32_t bytes,
                               Time headerEnd,
                               Time txEnd)
{
    NS_ASSERT(bytes <= 0xFFFF);
    InFlight item;
    item.packet = std::move(packet);
    item.head = head;
    item.bytes = static_cast<uint16_t>(bytes);
    Launch((dstCutThrough ? headerEnd : txEnd) + arrivalDelay, std::move(item));
}

void
IbChannel::Direction::SendFlowControl(uint32_t word, Time txEnd)
{
    // Only the fields cross; Arrive builds the packet if the receiver's FlowControlRx
    // trace is connected then.
    InFlight item;
    item.head = word;
    item.linkPacket = true;
    Launch(txEnd + arrivalDelay, std::move(item));
}

void
IbChannel::Direction::Launch(Time delay, InFlight&& item)
{
    const Time at = Simulator::Now() + delay;
    NS_ABORT_MSG_IF(at < lastArrival,
                    "IbChannel " << (channel != nullptr ? channel->GetId() : 0)
                                 << ": a packet would arrive at node " << context << " at "
                                 << at.As(Time::NS) << ", before one sent earlier ("
                                 << lastArrival.As(Time::NS)
                                 << "); do not shorten a cable's Delay or Length, or a "
                                    "switch's latency, while packets are on it");
    lastArrival = at;
    const uint8_t vl = item.linkPacket ? IbFlowControlHeader::VlOf(item.head) : item.head >> 28;
    Push(std::move(item));
    Ref(); // the scheduler's reference, dropped after the event ran
    // Arrive reads the receiving port's first lines and the VL's: on a large fabric, long
    // out of the cache.
    dst->HintArrival(vl);
    Simulator::ScheduleWithContext(context, delay, this);
}

void
IbChannel::Direction::Arrive()
{
    InFlight item = Pop();
    if (dst->m_hot.failed)
    {
        return; // on the cable when it failed (LoseInFlight); nothing is sent while it is down
    }
    if (!item.linkPacket)
    {
        dst->ReceiveData(std::move(item.packet), item.head, item.bytes);
        return;
    }
    if (item.packet)
    {
        dst->ReceiveFromChannel(item.packet.Release(), true);
        return;
    }
    const uint8_t vl = IbFlowControlHeader::VlOf(item.head);
    const uint16_t fctbs = IbFlowControlHeader::FctbsOf(item.head);
    const uint16_t fccl = IbFlowControlHeader::FcclOf(item.head);
    if (dst->m_hot.watched & IbNetDevice::WATCH_FC_RX)
    {
        // Someone watches it arrive: the packet the fields stand for.
        IbFlowControlHeader fc;
        fc.SetOp(IbFlowControlHeader::OpOf(item.head));
        fc.SetFctbs(fctbs);
        fc.SetVl(vl);
        fc.SetFccl(fccl);
        dst->ReceiveFromChannel(MakeFlowControlPacket(fc), true);
        return;
    }
    dst->ApplyFlowControl(vl, fctbs, fccl);
}

void
IbChannel::Direction::Push(InFlight&& item)
{
    // An item that finds the direction empty waits in first, in the object's first line;
    // the others queue in the ring behind it. Once the ring is full, newer ones wait in
    // overflow and Pop refills the ring from it, so overflow is only ever non-empty behind
    // a full ring and the order is kept.
    if (!firstFull && size == 0)
    {
        first = std::move(item);
        firstFull = true;
        return;
    }
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
    if (firstFull)
    {
        firstFull = false;
        return std::move(first); // leaves first without a packet
    }
    NS_ASSERT(size > 0);
    // Only a full ring can have items waiting behind it: the overflow queue (in the
    // object's last line) is looked at only then.
    const bool wasFull = size == ring.size();
    InFlight item = std::move(ring[head]); // leaves the slot without a packet
    head = static_cast<uint8_t>((head + 1) % ring.size());
    --size;
    if (wasFull && !overflow.Empty())
    {
        ring[(head + size) % ring.size()] = overflow.Pop();
        ++size;
    }
    return item;
}

void
IbChannel::Direction::Clear()
{
    first.packet.Reset();
    firstFull = false;
    for (auto& item : ring)
    {
        item.packet.Reset();
    }
    head = 0;
    size = 0;
    overflow.Clear();
}

void
IbChannel::Direction::LoseInFlight()
{
    auto lose = [this](const InFlight& item) {
        if (!item.linkPacket)
        {
            dst->LoseToFailedLink(item.packet.Get(), true);
        }
    };
    if (firstFull)
    {
        lose(first);
    }
    for (uint8_t i = 0; i < size; ++i)
    {
        lose(ring[(head + i) % ring.size()]);
    }
    for (std::size_t i = 0; i < overflow.Size(); ++i)
    {
        lose(overflow.At(i));
    }
}

void
IbChannel::Direction::Notify()
{
    if (dst != nullptr) // null once the cable is disposed of
    {
        Arrive();
    }
}

void
IbChannel::SetLinkDown()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_nDevices != 2,
                    "IbChannel " << GetId() << "::SetLinkDown: the cable has " << m_nDevices
                                 << " port(s) attached; fail a cable that joins two ports");
    NS_ABORT_MSG_IF(IsBetweenRanks(),
                    "IbChannel " << GetId()
                                 << "::SetLinkDown: the cable joins two MPI ranks, whose other "
                                    "end cannot be told; fail a cable within one rank");
    if (m_down)
    {
        return;
    }
    m_down = true;
    m_linkStateTrace(false);
    for (auto& d : m_devices)
    {
        d->LinkFailed();
    }
    for (auto& dir : m_dir)
    {
        dir->LoseInFlight();
    }
}

void
IbChannel::SetLinkUp()
{
    NS_LOG_FUNCTION(this);
    if (!m_down)
    {
        return;
    }
    m_down = false;
    // The ports lose what was on the wire at the failure until it has drained (they tell
    // it by being down): they come up only after the last of it would have arrived.
    Time at = Simulator::Now();
    for (const auto& dir : m_dir)
    {
        at = std::max(at, dir->lastArrival);
    }
    Simulator::Schedule(at - Simulator::Now(), [this]() {
        if (m_down || m_nDevices != 2)
        {
            return; // failed again meanwhile, or disposed of
        }
        m_linkStateTrace(true);
        for (auto& d : m_devices)
        {
            d->LinkRestored();
        }
    });
}

bool
IbChannel::IsLinkDown() const
{
    return m_down;
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

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-channel.h"

#include "eth-net-device.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthChannel");

NS_OBJECT_ENSURE_REGISTERED(EthChannel);

TypeId
EthChannel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::EthChannel")
            .SetParent<Channel>()
            .SetGroupName("Infiniband")
            .AddConstructor<EthChannel>()
            .AddAttribute("Delay",
                          "One-way propagation delay of the cable. The default, 10 ns, is 2 m "
                          "at about 5 ns/m (copper or fibre), a cable within a rack.",
                          TimeValue(NanoSeconds(10)),
                          MakeTimeAccessor(&EthChannel::SetDelay, &EthChannel::GetDelay),
                          MakeTimeChecker()); // SetDelay refuses a negative one, saying so
    return tid;
}

EthChannel::EthChannel()
{
    NS_LOG_FUNCTION(this);
    for (auto& dir : m_dir)
    {
        // A raw pointer back, so that the cable and its directions (which the scheduler
        // may still hold) do not keep each other alive.
        dir = Create<Direction>();
        dir->channel = this;
    }
}

EthChannel::~EthChannel()
{
    NS_LOG_FUNCTION(this);
}

void
EthChannel::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& dir : m_dir)
    {
        dir->Clear();
        dir->dst = nullptr;
        dir->channel = nullptr;
    }
    m_devices[0] = nullptr;
    m_devices[1] = nullptr;
    m_nDevices = 0;
    Channel::DoDispose();
}

void
EthChannel::Attach(Ptr<EthNetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    NS_ABORT_MSG_IF(m_nDevices >= 2,
                    "EthChannel " << GetId()
                                  << ": a cable joins exactly two ports; a third port (node "
                                  << (device->GetNode() ? device->GetNode()->GetId() : 0)
                                  << ") was attached. Create one EthChannel per cable.");
    Direction& dir = *m_dir[m_nDevices];
    dir.dst = PeekPointer(device);
    dir.context = device->GetNode() ? device->GetNode()->GetId() : 0;
    m_devices[m_nDevices++] = device;
    UpdatePortModes();
    const bool remote = m_nDevices == 2 && IsBetweenRanks();
    for (auto& d : m_dir)
    {
        d->betweenRanks = remote;
    }
    if (m_nDevices == 2)
    {
        m_devices[0]->NotifyLinkUp();
        m_devices[1]->NotifyLinkUp();
    }
}

Ptr<EthNetDevice>
EthChannel::GetPeer(const EthNetDevice* device) const
{
    if (m_nDevices < 2)
    {
        return nullptr;
    }
    return device == PeekPointer(m_devices[0]) ? m_devices[1] : m_devices[0];
}

Time
EthChannel::GetDelay() const
{
    return m_delay;
}

void
EthChannel::SetDelay(Time delay)
{
    NS_ABORT_MSG_IF(delay.IsStrictlyNegative(),
                    "EthChannel attribute Delay=" << delay.As(Time::NS)
                                                  << " is negative; a cable's delay is 0 or "
                                                     "more (about 5 ns per metre)");
    m_delay = delay;
    UpdatePortModes();
}

void
EthChannel::UpdatePortModes()
{
    for (std::size_t d = 0; d < 2; ++d)
    {
        Direction& dir = *m_dir[d];
        dir.propagation = m_delay;
        if (dir.dst != nullptr)
        {
            dir.dstCutThrough = dir.dst->IsCutThrough();
            dir.arrivalDelay = m_delay + dir.dst->GetRxDelay();
        }
        else
        {
            dir.arrivalDelay = m_delay;
        }
        // The port at the other end sends on this direction (if it is still this cable's).
        EthNetDevice* src = PeekPointer(m_devices[1 - d]);
        if (src != nullptr && PeekPointer(src->m_channel) == this)
        {
            src->m_txDir = &dir;
        }
    }
}

bool
EthChannel::IsBetweenRanks() const
{
    return false;
}

void
EthChannel::ShipData(IbOwnedPacket frame, EthNetDevice* dst, Time rxTime)
{
    NS_FATAL_ERROR("EthChannel " << GetId() << " has both ports in this process: nothing to ship");
}

void
EthChannel::ShipControl(Ptr<Packet> frame, EthNetDevice* dst, Time rxTime)
{
    NS_FATAL_ERROR("EthChannel " << GetId() << " has both ports in this process: nothing to ship");
}

std::size_t
EthChannel::GetNDevices() const
{
    return m_nDevices;
}

Ptr<NetDevice>
EthChannel::GetDevice(std::size_t i) const
{
    NS_ABORT_MSG_UNLESS(i < m_nDevices,
                        "EthChannel::GetDevice(" << i << "): the cable has " << m_nDevices
                                                 << " ports attached; use 0 or 1");
    return m_devices[i];
}

void
EthChannel::Direction::SendData(IbOwnedPacket frame, uint32_t bytes, Time headerEnd, Time txEnd)
{
    const Time delay = (dstCutThrough ? headerEnd : txEnd) + arrivalDelay;
    const Time at = Simulator::Now() + delay;
    NS_ABORT_MSG_IF(at < lastArrival,
                    "EthChannel " << (channel != nullptr ? channel->GetId() : 0)
                                  << ": a frame would arrive at node " << context << " at "
                                  << at.As(Time::NS) << ", before one sent earlier ("
                                  << lastArrival.As(Time::NS)
                                  << "); do not shorten a cable's Delay, or a port's rxDelay, "
                                     "while frames are on it");
    lastArrival = at;
    if (betweenRanks)
    {
        channel->ShipData(std::move(frame), dst, at);
        return;
    }
    InFlight item;
    item.frame = std::move(frame);
    item.bytes = bytes;
    inFlight.Push(std::move(item));
    Ref(); // the scheduler's reference, dropped after the event ran
    Simulator::ScheduleWithContext(context, delay, this);
}

void
EthChannel::Direction::SendControl(Ptr<Packet> frame, Time txEnd)
{
    if (betweenRanks)
    {
        channel->ShipControl(frame, dst, Simulator::Now() + txEnd + propagation);
        return;
    }
    Simulator::ScheduleWithContext(context,
                                   txEnd + propagation,
                                   &EthNetDevice::ReceiveControl,
                                   Ptr<EthNetDevice>(dst),
                                   frame);
}

void
EthChannel::Direction::Clear()
{
    inFlight.Clear();
}

void
EthChannel::Direction::Notify()
{
    if (dst == nullptr) // the cable was disposed of
    {
        return;
    }
    InFlight item = inFlight.Pop();
    dst->ReceiveData(std::move(item.frame), item.bytes);
}

} // namespace ns3

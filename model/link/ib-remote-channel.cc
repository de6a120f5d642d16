/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-remote-channel.h"

#ifdef NS3_MPI

#include "ib-net-device.h"

#include "ns3/abort.h"
#include "ns3/global-value.h"
#include "ns3/ib-flow-control-header.h"
#include "ns3/log.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbRemoteChannel");

namespace
{

/// Does nothing: scheduled at the current time, it makes the next pending event "now".
void
NowGuard()
{
}

/**
 * Under ns-3's null-message engine, a packet sent to another rank carries the promise
 * that nothing earlier than (next pending event, or the safe time) + lookahead will
 * follow. The next pending event may lie well after the current time, while a port sends
 * a flow-control packet and then, in the same event, a data packet that arrives sooner
 * than that promise: the other rank would receive it in its past. A pending event at the
 * current time keeps the promise at now + lookahead, which no later packet of this event
 * can undercut (each arrives at least a cable delay, the lookahead, after now).
 */
void
KeepNullMessagePromisesTight()
{
    static const bool nullMessage = [] {
        StringValue impl;
        GlobalValue::GetValueByName("SimulatorImplementationType", impl);
        return impl.Get() == "ns3::NullMessageSimulatorImpl";
    }();
    // The guard of this simulation: forgotten at Simulator::Destroy, so that the next
    // simulation in the process does not take an old guard for one of its own.
    static EventId guard;
    static bool forgetAtDestroy = false;
    if (nullMessage && (guard.IsExpired() || guard.GetTs() != Simulator::Now().GetTimeStep()))
    {
        guard = Simulator::ScheduleNow(&NowGuard);
        if (!forgetAtDestroy)
        {
            forgetAtDestroy = true;
            Simulator::ScheduleDestroy([]() {
                guard = EventId();
                forgetAtDestroy = false;
            });
        }
    }
}

/// The largest message ns-3's MPI interfaces receive (MAX_MPI_MSG_SIZE in ns-3 3.37 to
/// 3.4x): the serialized packet plus 16 bytes of time, node and device.
constexpr uint32_t kMaxMpiMessage = 2000;

} // namespace

NS_OBJECT_ENSURE_REGISTERED(IbRemoteHeader);
NS_OBJECT_ENSURE_REGISTERED(IbRemoteChannel);

// ---------------------------------------------------------------- IbRemoteHeader

IbRemoteHeader::IbRemoteHeader()
    : m_kind(DATA)
{
}

IbRemoteHeader::IbRemoteHeader(bool linkPacket)
    : m_kind(linkPacket ? LINK : DATA)
{
}

TypeId
IbRemoteHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbRemoteHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbRemoteHeader>();
    return tid;
}

TypeId
IbRemoteHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbRemoteHeader::GetSerializedSize() const
{
    return 1;
}

void
IbRemoteHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteU8(m_kind);
}

uint32_t
IbRemoteHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < 1)
    {
        return 0;
    }
    const uint8_t kind = start.ReadU8();
    if (kind != DATA && kind != LINK)
    {
        return 0;
    }
    m_kind = kind;
    return 1;
}

void
IbRemoteHeader::Print(std::ostream& os) const
{
    os << "IbRemote " << (m_kind == LINK ? "flow-control" : "data");
}

bool
IbRemoteHeader::IsLinkPacket() const
{
    return m_kind == LINK;
}

// ---------------------------------------------------------------- IbRemoteChannel

TypeId
IbRemoteChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbRemoteChannel")
                            .SetParent<IbChannel>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbRemoteChannel>();
    return tid;
}

IbRemoteChannel::IbRemoteChannel()
    : m_remoteTxPackets(0)
{
    NS_LOG_FUNCTION(this);
}

IbRemoteChannel::~IbRemoteChannel()
{
    NS_LOG_FUNCTION(this);
}

void
IbRemoteChannel::Transmit(IbOwnedPacket packet,
                          Ptr<IbNetDevice> src,
                          Time headerEnd,
                          Time txEnd,
                          bool linkPacket)
{
    NS_LOG_FUNCTION(this << packet.Get() << src << headerEnd << txEnd << linkPacket);
    const uint32_t here = MpiInterface::GetSystemId();
    if (src->GetNode()->GetSystemId() != here)
    {
        // A port of another rank (e.g. sending its initial credits at link up): that
        // rank simulates it and sends the packet; a copy from here would arrive twice.
        NS_LOG_LOGIC("sender on rank " << src->GetNode()->GetSystemId() << ": not sent here");
        return;
    }
    Ptr<IbNetDevice> dst = GetPeer(src);
    NS_ASSERT_MSG(dst, "IbRemoteChannel::Transmit on a cable with one port");
    if (dst->GetNode()->GetSystemId() == here)
    {
        IbChannel::Transmit(std::move(packet), src, headerEnd, txEnd, linkPacket);
        return;
    }
    // The same arrival time as IbChannel::Transmit, as an absolute time.
    const Time lastNeeded = (dst->IsCutThrough() && !linkPacket) ? headerEnd : txEnd;
    const Time rxTime = Simulator::Now() + lastNeeded + GetDelay() + dst->GetRxDelay();
    // The packet object may be shared (the sender keeps it while PhyTxEnd is traced, a
    // trace sink may hold it): ship a copy with the marker header, not the packet.
    Ptr<Packet> copy = packet.Get()->Copy();
    copy->AddHeader(IbRemoteHeader(linkPacket));
    ++m_remoteTxPackets;
    NS_LOG_LOGIC("to node " << dst->GetNode()->GetId() << " device " << dst->GetIfIndex()
                            << " on rank " << dst->GetNode()->GetSystemId() << " at " << rxTime);
    SendToRank(copy, rxTime, src->GetNode(), dst, "IbRemoteChannel");
}

void
IbRemoteChannel::SendToRank(Ptr<Packet> packet,
                            Time rxTime,
                            Ptr<Node> srcNode,
                            Ptr<NetDevice> dst,
                            const char* channel)
{
    // A larger message would be cut short by the receiving rank's fixed buffer
    // (MPI_ERR_TRUNCATE: the job aborts). Virtual payloads serialize as a length only;
    // real bytes (HCA DataMode, SHARP or IPoIB data) count in full.
    // ns-3 3.37 adds 16 bytes (time, node, device) with granted time windows and 24 with
    // null messages (a second time): the larger, whichever engine runs.
    const uint32_t message = packet->GetSerializedSize() + 24;
    NS_ABORT_MSG_IF(message > kMaxMpiMessage,
                    channel << ": a packet from node " << srcNode->GetId() << " to node "
                            << dst->GetNode()->GetId() << " on rank "
                            << dst->GetNode()->GetSystemId() << " serializes to " << message
                            << " bytes, more than the " << kMaxMpiMessage
                            << " ns-3's MPI interface receives; across ranks, carry virtual "
                               "payloads (IbHca DataMode false) or packets of at most about "
                               "1.9 KB of real bytes (a smaller Mtu)");
    KeepNullMessagePromisesTight();
    MpiInterface::SendPacket(packet, rxTime, dst->GetNode()->GetId(), dst->GetIfIndex());
}

void
IbRemoteChannel::TransmitFlowControl(const IbFlowControlHeader& fc,
                                     Ptr<IbNetDevice> src,
                                     Time txEnd)
{
    NS_LOG_FUNCTION(this << src << txEnd);
    const uint32_t here = MpiInterface::GetSystemId();
    Ptr<IbNetDevice> dst = GetPeer(src);
    if (src->GetNode()->GetSystemId() == here && dst != nullptr &&
        dst->GetNode()->GetSystemId() == here)
    {
        IbChannel::TransmitFlowControl(fc, src, txEnd);
        return;
    }
    Transmit(IbOwnedPacket(MakeFlowControlPacket(fc)), src, txEnd, txEnd, true);
}

void
IbRemoteChannel::EnableMpiReceive(Ptr<IbNetDevice> device)
{
    NS_LOG_FUNCTION(device);
    if (device->GetObject<MpiReceiver>())
    {
        return;
    }
    Ptr<MpiReceiver> receiver = CreateObject<MpiReceiver>();
    receiver->SetReceiveCallback(MakeBoundCallback(&IbRemoteChannel::ReceiveFromRemote, device));
    device->AggregateObject(receiver);
}

void
IbRemoteChannel::ReceiveFromRemote(Ptr<IbNetDevice> device, Ptr<Packet> packet)
{
    NS_LOG_FUNCTION(device << packet);
    IbRemoteHeader marker;
    NS_ABORT_MSG_IF(packet->RemoveHeader(marker) != 1,
                    "IbRemoteChannel: a packet from another rank for node "
                        << device->GetNode()->GetId() << " device " << device->GetIfIndex()
                        << " has no IbRemoteHeader: only IbRemoteChannel may send to an "
                           "IbNetDevice over MPI");
    device->ReceiveFromChannel(packet, marker.IsLinkPacket());
}

bool
IbRemoteChannel::IsBetweenRanks() const
{
    return true;
}

uint64_t
IbRemoteChannel::GetRemoteTxPackets() const
{
    return m_remoteTxPackets;
}

} // namespace ns3

#endif /* NS3_MPI */

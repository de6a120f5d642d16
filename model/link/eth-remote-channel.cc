/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-remote-channel.h"

#ifdef NS3_MPI

#include "eth-net-device.h"
#include "ib-remote-channel.h"

#include "ns3/abort.h"
#include "ns3/eth-frame.h"
#include "ns3/log.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node.h"
#include "ns3/packet.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthRemoteChannel");

NS_OBJECT_ENSURE_REGISTERED(EthRemoteChannel);

TypeId
EthRemoteChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::EthRemoteChannel")
                            .SetParent<EthChannel>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<EthRemoteChannel>();
    return tid;
}

EthRemoteChannel::EthRemoteChannel()
{
    NS_LOG_FUNCTION(this);
}

EthRemoteChannel::~EthRemoteChannel()
{
    NS_LOG_FUNCTION(this);
}

bool
EthRemoteChannel::IsBetweenRanks() const
{
    return true;
}

uint64_t
EthRemoteChannel::GetRemoteTxFrames() const
{
    return m_remoteTxFrames;
}

void
EthRemoteChannel::ShipData(IbOwnedPacket frame, EthNetDevice* dst, Time rxTime)
{
    Ship(frame.Release(), dst, rxTime);
}

void
EthRemoteChannel::ShipControl(Ptr<Packet> frame, EthNetDevice* dst, Time rxTime)
{
    Ship(frame, dst, rxTime);
}

void
EthRemoteChannel::Ship(Ptr<Packet> frame, EthNetDevice* dst, Time rxTime)
{
    NS_LOG_FUNCTION(this << frame << dst << rxTime);
    Ptr<EthNetDevice> src = GetPeer(dst);
    NS_ASSERT_MSG(src, "EthRemoteChannel: a frame on a cable with one port");
    const uint32_t here = MpiInterface::GetSystemId();
    if (src->GetNode()->GetSystemId() != here)
    {
        // A port of another rank (set up by code that runs on every rank): its own rank
        // simulates it and sends the frame; a copy from here would arrive twice.
        NS_LOG_LOGIC("sender on rank " << src->GetNode()->GetSystemId() << ": not sent here");
        return;
    }
    NS_ABORT_MSG_IF(dst->GetNode()->GetSystemId() == here,
                    "EthRemoteChannel " << GetId() << ": both ports (nodes "
                                        << src->GetNode()->GetId() << " and "
                                        << dst->GetNode()->GetId() << ") are on rank " << here
                                        << "; a cable within a rank is an EthChannel "
                                           "(EthHelper::Connect chooses the type)");
    ++m_remoteTxFrames;
    IbRemoteChannel::SendToRank(frame,
                                rxTime,
                                src->GetNode(),
                                Ptr<NetDevice>(dst),
                                "EthRemoteChannel");
}

void
EthRemoteChannel::EnableMpiReceive(Ptr<EthNetDevice> device)
{
    NS_LOG_FUNCTION(device);
    if (device->GetObject<MpiReceiver>())
    {
        return;
    }
    Ptr<MpiReceiver> receiver = CreateObject<MpiReceiver>();
    receiver->SetReceiveCallback(MakeBoundCallback(&EthRemoteChannel::ReceiveFromRemote, device));
    device->AggregateObject(receiver);
}

void
EthRemoteChannel::ReceiveFromRemote(Ptr<EthNetDevice> device, Ptr<Packet> frame)
{
    NS_LOG_FUNCTION(device << frame);
    uint8_t head[EthFrame::HEADER_SIZE];
    NS_ABORT_MSG_IF(EthFrame::CopyHead(*frame, head, sizeof(head)) < sizeof(head),
                    "EthRemoteChannel: a " << frame->GetSize() << "-byte packet from another rank "
                                           << "for node " << device->GetNode()->GetId()
                                           << " device " << device->GetIfIndex()
                                           << " is not an Ethernet frame");
    if (EthFrame::PeekEtherType(head) == EthFrame::ETHERTYPE_MAC_CONTROL)
    {
        device->ReceiveControl(frame);
        return;
    }
    const uint32_t bytes = frame->GetSize();
    device->ReceiveData(IbOwnedPacket(frame), bytes);
}

} // namespace ns3

#endif /* NS3_MPI */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "roce-rdma-port.h"

#include "ns3/abort.h"
#include "ns3/eth-frame.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceRdmaPort");

namespace
{

/// Bytes a RoCEv2 packet adds to its payload inside the IP MTU: IPv4, UDP, BTH, the largest
/// extension headers (AtomicETH, 28) and the ICRC.
constexpr uint32_t kIpOverhead = 20 + 8 + 12 + 28 + 4;

} // namespace

RoceRdmaPort::RoceRdmaPort(Ptr<EthNetDevice> dev, Ipv4Address address, uint8_t defaultPriority)
    : m_keep(dev),
      m_dev(PeekPointer(dev)),
      m_address(address),
      m_defaultPriority(defaultPriority & 0x7)
{
}

bool
RoceRdmaPort::IsRoce() const
{
    return true;
}

Ptr<NetDevice>
RoceRdmaPort::GetDevice() const
{
    return m_keep;
}

DataRate
RoceRdmaPort::GetDataRate() const
{
    return m_dev->GetDataRate();
}

uint32_t
RoceRdmaPort::GetWireOverhead() const
{
    return EthFrame::PREAMBLE_SFD + EthFrame::IFG;
}

uint32_t
RoceRdmaPort::GetActiveMtu() const
{
    // As RoCE drivers do: the largest IBA MTU whose packets fit the interface's IP MTU.
    const uint32_t room = m_dev->GetMtu() > kIpOverhead ? m_dev->GetMtu() - kIpOverhead : 0;
    uint32_t mtu = 4096;
    while (mtu > 256 && mtu > room)
    {
        mtu /= 2;
    }
    return mtu;
}

uint32_t
RoceRdmaPort::GetLocalAddress() const
{
    return m_address.Get();
}

std::string
RoceRdmaPort::SlProblem(uint8_t sl) const
{
    if (sl > 7)
    {
        return "is not an 802.1p priority (0..7), which the SL of a RoCE queue pair stands for";
    }
    return "";
}

uint8_t
RoceRdmaPort::GetClassForSl(uint8_t sl) const
{
    return sl == 0 ? m_defaultPriority : (sl & 0x7);
}

std::string
RoceRdmaPort::FirstHopProblem(uint32_t remote) const
{
    if (!m_dev->GetPeer())
    {
        return "cannot be reached: the port has no cable (EthNetDevice::Attach)";
    }
    if (remote == m_address.Get())
    {
        return "is the port's own address; RoCE loopback is not modelled";
    }
    return "";
}

std::string
RoceRdmaPort::AddressText(uint32_t remote) const
{
    std::ostringstream os;
    os << Ipv4Address(remote);
    return os.str();
}

uint32_t
RoceRdmaPort::GetTxQueueLength(uint8_t cls) const
{
    return m_dev->GetQueueLength(cls);
}

void
RoceRdmaPort::Send(Ptr<Packet> p, uint8_t cls)
{
    m_dev->Enqueue(std::move(p), cls, 0);
}

RocePacket::Addressing
RoceRdmaPort::Addressing(uint32_t remote) const
{
    if (!m_peerKnown)
    {
        Ptr<EthNetDevice> peer = m_dev->GetPeer();
        NS_ABORT_MSG_UNLESS(peer,
                            "RoCE port on node " << m_dev->GetNode()->GetId()
                                                 << " has no cable: attach its EthNetDevice "
                                                    "to an EthChannel before sending");
        m_peerMac = peer->GetMacAddress();
        m_peerKnown = true;
    }
    RocePacket::Addressing a;
    a.srcMac = m_dev->GetMacAddress();
    a.dstMac = m_peerMac;
    a.srcIp = m_address;
    a.dstIp = Ipv4Address(remote);
    return a;
}

void
RoceRdmaPort::Seal(Ptr<Packet> p,
                   uint32_t remote,
                   uint8_t sl,
                   uint16_t entropy,
                   const IbBthHeader& bth,
                   uint32_t zeroTail)
{
    RocePacket::Addressing a = Addressing(remote);
    a.dscp = static_cast<uint8_t>(GetClassForSl(sl) << 3);
    a.udpSrcPort = entropy;
    RocePacket::Seal(p, a, bth, zeroTail);
}

Ptr<Packet>
RoceRdmaPort::MakeCnp(uint32_t remote, uint32_t destQp, uint16_t entropy, uint8_t dscp) const
{
    RocePacket::Addressing a = Addressing(remote);
    a.dscp = dscp;
    a.ecn = 0;
    a.udpSrcPort = entropy;
    return RocePacket::MakeCnp(a, destQp);
}

uint32_t
RoceRdmaPort::GetBthOffset() const
{
    return RocePacket::BTH_OFFSET;
}

uint32_t
RoceRdmaPort::GetTrailerSize() const
{
    return RocePacket::TRAILER_SIZE;
}

} // namespace ns3

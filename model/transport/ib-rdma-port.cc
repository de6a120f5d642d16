/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-rdma-port.h"

#include "ns3/ib-lrh-header.h"
#include "ns3/ib-packet.h"
#include "ns3/log.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbRdmaPort");

IbRdmaPort::IbRdmaPort(Ptr<IbNetDevice> dev)
    : m_keep(dev),
      m_dev(PeekPointer(dev))
{
}

bool
IbRdmaPort::IsRoce() const
{
    return false;
}

Ptr<NetDevice>
IbRdmaPort::GetDevice() const
{
    return m_keep;
}

DataRate
IbRdmaPort::GetDataRate() const
{
    return m_dev->GetDataRate();
}

uint32_t
IbRdmaPort::GetWireOverhead() const
{
    return 0;
}

uint32_t
IbRdmaPort::GetActiveMtu() const
{
    return m_dev->GetIbMtu();
}

uint32_t
IbRdmaPort::GetLocalAddress() const
{
    return m_dev->GetLid();
}

std::string
IbRdmaPort::SlProblem(uint8_t sl) const
{
    if (sl > 15)
    {
        return "is not a service level (0..15)";
    }
    if (m_dev->GetVlForSl(sl) == IbNetDevice::VL15)
    {
        return "maps to VL15 (drop) on the port; choose another SL";
    }
    return "";
}

uint8_t
IbRdmaPort::GetClassForSl(uint8_t sl) const
{
    return m_dev->GetVlForSl(sl & 0xF);
}

std::string
IbRdmaPort::FirstHopProblem(uint32_t remote) const
{
    return m_dev->FirstHopProblem(static_cast<uint16_t>(remote));
}

std::string
IbRdmaPort::AddressText(uint32_t remote) const
{
    std::ostringstream os;
    os << remote << " (0x" << std::hex << remote << ")";
    return os.str();
}

uint32_t
IbRdmaPort::GetTxQueueLength(uint8_t cls) const
{
    return m_dev->GetTxQueueLength(cls);
}

void
IbRdmaPort::Send(Ptr<Packet> p, uint8_t /* cls: the port maps the LRH SL itself */)
{
    m_dev->SendIbPacket(std::move(p));
}

void
IbRdmaPort::Seal(Ptr<Packet> p,
                 uint32_t remote,
                 uint8_t sl,
                 uint16_t /* entropy */,
                 const IbBthHeader& bth,
                 uint32_t zeroTail)
{
    IbLrhHeader lrh;
    lrh.SetVl(m_dev->GetVlForSl(sl));
    lrh.SetSl(sl);
    lrh.SetDlid(static_cast<uint16_t>(remote));
    lrh.SetSlid(m_dev->GetLid());
    IbPacket::Seal(p, lrh, nullptr, bth, zeroTail);
}

const IbCaCongestionSetting*
IbRdmaPort::GetCongestionSetting() const
{
    return m_dev->GetCongestionSetting();
}

bool
IbRdmaPort::IsAdaptiveRouting() const
{
    return m_dev->IsAdaptiveRouting();
}

Ptr<Packet>
IbRdmaPort::MakeCnp(uint32_t remote, uint32_t destQp, uint8_t sl) const
{
    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::CNP);
    bth.SetBecn(true);
    bth.SetDestQp(destQp);
    bth.SetPsn(0);
    Ptr<Packet> p = Create<Packet>();
    IbLrhHeader lrh;
    lrh.SetVl(m_dev->GetVlForSl(sl));
    lrh.SetSl(sl);
    lrh.SetDlid(static_cast<uint16_t>(remote));
    lrh.SetSlid(m_dev->GetLid());
    IbPacket::Seal(p, lrh, nullptr, bth, 0);
    return p;
}

uint32_t
IbRdmaPort::GetBthOffset() const
{
    return IbPacket::LRH_SIZE;
}

uint32_t
IbRdmaPort::GetTrailerSize() const
{
    return IbPacket::CRC_SIZE;
}

} // namespace ns3

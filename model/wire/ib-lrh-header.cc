/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-lrh-header.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbLrhHeader");

NS_OBJECT_ENSURE_REGISTERED(IbLrhHeader);

IbLrhHeader::IbLrhHeader()
    : m_vl(0),
      m_lver(0),
      m_sl(0),
      m_lnh(LNH_IBA_LOCAL),
      m_dlid(0),
      m_pktLen(0),
      m_slid(0)
{
}

TypeId
IbLrhHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbLrhHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbLrhHeader>();
    return tid;
}

TypeId
IbLrhHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbLrhHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IbLrhHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteU8(static_cast<uint8_t>((m_vl << 4) | m_lver));
    start.WriteU8(static_cast<uint8_t>((m_sl << 4) | m_lnh));
    start.WriteHtonU16(m_dlid);
    start.WriteHtonU16(m_pktLen);
    start.WriteHtonU16(m_slid);
}

uint32_t
IbLrhHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("LRH needs " << SIZE << " bytes, " << start.GetRemainingSize() << " left");
        return 0;
    }
    uint8_t b = start.ReadU8();
    m_vl = b >> 4;
    m_lver = b & 0x0F;
    b = start.ReadU8();
    m_sl = b >> 4;
    m_lnh = b & 0x03;
    m_dlid = start.ReadNtohU16();
    m_pktLen = start.ReadNtohU16() & 0x07FF;
    m_slid = start.ReadNtohU16();
    return SIZE;
}

void
IbLrhHeader::Print(std::ostream& os) const
{
    os << "Virtual Lane: " << +m_vl << ", Link Version: " << +m_lver << ", Service Level: " << +m_sl
       << ", Link Next Header: " << +m_lnh << ", Destination Local ID: " << m_dlid
       << ", Packet Length: " << m_pktLen << ", Source Local ID: " << m_slid;
}

void
IbLrhHeader::SetVl(uint8_t vl)
{
    NS_ABORT_MSG_UNLESS(vl <= 15, "IbLrhHeader::SetVl: LRH VL " << +vl << " out of range 0..15");
    m_vl = vl;
}

uint8_t
IbLrhHeader::GetVl() const
{
    return m_vl;
}

void
IbLrhHeader::SetLinkVersion(uint8_t lver)
{
    NS_ABORT_MSG_UNLESS(lver <= 15,
                        "IbLrhHeader::SetLinkVersion: LRH LVer " << +lver << " out of range 0..15");
    m_lver = lver;
}

uint8_t
IbLrhHeader::GetLinkVersion() const
{
    return m_lver;
}

void
IbLrhHeader::SetSl(uint8_t sl)
{
    NS_ABORT_MSG_UNLESS(sl <= 15, "IbLrhHeader::SetSl: LRH SL " << +sl << " out of range 0..15");
    m_sl = sl;
}

uint8_t
IbLrhHeader::GetSl() const
{
    return m_sl;
}

void
IbLrhHeader::SetLnh(uint8_t lnh)
{
    NS_ABORT_MSG_UNLESS(lnh <= 3, "IbLrhHeader::SetLnh: LRH LNH " << +lnh << " out of range 0..3");
    m_lnh = lnh;
}

uint8_t
IbLrhHeader::GetLnh() const
{
    return m_lnh;
}

void
IbLrhHeader::SetDlid(uint16_t dlid)
{
    m_dlid = dlid;
}

uint16_t
IbLrhHeader::GetDlid() const
{
    return m_dlid;
}

void
IbLrhHeader::SetPktLen(uint16_t pktLen)
{
    NS_ABORT_MSG_UNLESS(pktLen <= 0x07FF,
                        "IbLrhHeader::SetPktLen: LRH PktLen " << pktLen
                                                              << " out of range 0..2047 (words)");
    m_pktLen = pktLen;
}

uint16_t
IbLrhHeader::GetPktLen() const
{
    return m_pktLen;
}

void
IbLrhHeader::SetSlid(uint16_t slid)
{
    m_slid = slid;
}

uint16_t
IbLrhHeader::GetSlid() const
{
    return m_slid;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-grh-header.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbGrhHeader");

NS_OBJECT_ENSURE_REGISTERED(IbGrhHeader);

IbGrhHeader::IbGrhHeader()
    : m_ipVer(6),
      m_tclass(0),
      m_flowLabel(0),
      m_payLen(0),
      m_nxtHdr(NXT_HDR_BTH),
      m_hopLmt(0),
      m_sgid(Ipv6Address::GetAny()),
      m_dgid(Ipv6Address::GetAny())
{
}

TypeId
IbGrhHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbGrhHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbGrhHeader>();
    return tid;
}

TypeId
IbGrhHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbGrhHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IbGrhHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU32((static_cast<uint32_t>(m_ipVer) << 28) |
                       (static_cast<uint32_t>(m_tclass) << 20) | m_flowLabel);
    start.WriteHtonU16(m_payLen);
    start.WriteU8(m_nxtHdr);
    start.WriteU8(m_hopLmt);
    uint8_t gid[16];
    m_sgid.Serialize(gid);
    start.Write(gid, sizeof(gid));
    m_dgid.Serialize(gid);
    start.Write(gid, sizeof(gid));
}

uint32_t
IbGrhHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("GRH needs " << SIZE << " bytes, " << start.GetRemainingSize() << " left");
        return 0;
    }
    const uint32_t word = start.ReadNtohU32();
    m_ipVer = static_cast<uint8_t>(word >> 28);
    m_tclass = static_cast<uint8_t>((word >> 20) & 0xFF);
    m_flowLabel = word & 0xFFFFF;
    m_payLen = start.ReadNtohU16();
    m_nxtHdr = start.ReadU8();
    m_hopLmt = start.ReadU8();
    uint8_t gid[16];
    start.Read(gid, sizeof(gid));
    m_sgid = Ipv6Address::Deserialize(gid);
    start.Read(gid, sizeof(gid));
    m_dgid = Ipv6Address::Deserialize(gid);
    return SIZE;
}

void
IbGrhHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    os << "IP Version: " << +m_ipVer << ", Traffic Class: " << +m_tclass
       << ", Flow Label: " << m_flowLabel << ", Payload Length: " << m_payLen
       << ", Next Header: " << +m_nxtHdr << ", Hop Limit: " << +m_hopLmt
       << ", Source GID: " << m_sgid << ", Destination GID: " << m_dgid;
    os.flags(flags);
}

void
IbGrhHeader::SetIpVer(uint8_t ipVer)
{
    NS_ABORT_MSG_UNLESS(ipVer <= 15,
                        "IbGrhHeader::SetIpVer: GRH IPVer " << +ipVer << " out of range 0..15");
    m_ipVer = ipVer;
}

uint8_t
IbGrhHeader::GetIpVer() const
{
    return m_ipVer;
}

void
IbGrhHeader::SetTrafficClass(uint8_t tclass)
{
    m_tclass = tclass;
}

uint8_t
IbGrhHeader::GetTrafficClass() const
{
    return m_tclass;
}

void
IbGrhHeader::SetFlowLabel(uint32_t flowLabel)
{
    NS_ABORT_MSG_UNLESS(flowLabel <= 0xFFFFF,
                        "IbGrhHeader::SetFlowLabel: GRH FlowLabel "
                            << flowLabel << " out of range 0..1048575 (20 bits)");
    m_flowLabel = flowLabel;
}

uint32_t
IbGrhHeader::GetFlowLabel() const
{
    return m_flowLabel;
}

void
IbGrhHeader::SetPayLen(uint16_t payLen)
{
    m_payLen = payLen;
}

uint16_t
IbGrhHeader::GetPayLen() const
{
    return m_payLen;
}

void
IbGrhHeader::SetNxtHdr(uint8_t nxtHdr)
{
    m_nxtHdr = nxtHdr;
}

uint8_t
IbGrhHeader::GetNxtHdr() const
{
    return m_nxtHdr;
}

void
IbGrhHeader::SetHopLmt(uint8_t hopLmt)
{
    m_hopLmt = hopLmt;
}

uint8_t
IbGrhHeader::GetHopLmt() const
{
    return m_hopLmt;
}

void
IbGrhHeader::SetSgid(const Ipv6Address& sgid)
{
    m_sgid = sgid;
}

Ipv6Address
IbGrhHeader::GetSgid() const
{
    return m_sgid;
}

void
IbGrhHeader::SetDgid(const Ipv6Address& dgid)
{
    m_dgid = dgid;
}

Ipv6Address
IbGrhHeader::GetDgid() const
{
    return m_dgid;
}

} // namespace ns3

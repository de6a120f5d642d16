/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-bth-header.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbBthHeader");

NS_OBJECT_ENSURE_REGISTERED(IbBthHeader);

IbBthHeader::IbBthHeader()
    : m_opcode(IbOpcode::RC_SEND_FIRST),
      m_se(false),
      m_migReq(false),
      m_padCnt(0),
      m_tver(0),
      m_pkey(0xFFFF),
      m_fecn(false),
      m_becn(false),
      m_destQp(0),
      m_ackReq(false),
      m_psn(0)
{
}

TypeId
IbBthHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbBthHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbBthHeader>();
    return tid;
}

TypeId
IbBthHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbBthHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IbBthHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteU8(m_opcode);
    start.WriteU8(
        static_cast<uint8_t>((m_se ? 0x80 : 0) | (m_migReq ? 0x40 : 0) | (m_padCnt << 4) | m_tver));
    start.WriteHtonU16(m_pkey);
    start.WriteHtonU32((m_fecn ? 0x80000000U : 0) | (m_becn ? 0x40000000U : 0) | m_destQp);
    start.WriteHtonU32((m_ackReq ? 0x80000000U : 0) | m_psn);
}

uint32_t
IbBthHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("BTH needs " << SIZE << " bytes, " << start.GetRemainingSize() << " left");
        return 0;
    }
    m_opcode = start.ReadU8();
    const uint8_t b = start.ReadU8();
    m_se = (b & 0x80) != 0;
    m_migReq = (b & 0x40) != 0;
    m_padCnt = (b >> 4) & 0x03;
    m_tver = b & 0x0F;
    m_pkey = start.ReadNtohU16();
    uint32_t word = start.ReadNtohU32();
    m_fecn = (word & 0x80000000U) != 0;
    m_becn = (word & 0x40000000U) != 0;
    m_destQp = word & 0xFFFFFF;
    word = start.ReadNtohU32();
    m_ackReq = (word & 0x80000000U) != 0;
    m_psn = word & 0xFFFFFF;
    return SIZE;
}

void
IbBthHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const auto fill = os.fill();
    os << "Opcode: " << OpcodeName(m_opcode) << " (" << +m_opcode << "), Solicited Event: " << m_se
       << ", MigReq: " << m_migReq << ", Pad Count: " << +m_padCnt
       << ", Header Version: " << +m_tver << ", Partition Key: 0x" << std::hex << std::setfill('0')
       << std::setw(4) << m_pkey << std::dec << ", FECN: " << m_fecn << ", BECN: " << m_becn
       << ", Destination Queue Pair: 0x" << std::hex << std::setw(6) << m_destQp << std::dec
       << ", Acknowledge Request: " << m_ackReq << ", Packet Sequence Number: " << m_psn;
    os.flags(flags);
    os.fill(fill);
}

void
IbBthHeader::SetOpcode(uint8_t opcode)
{
    m_opcode = opcode;
}

uint8_t
IbBthHeader::GetOpcode() const
{
    return m_opcode;
}

void
IbBthHeader::SetSolicitedEvent(bool se)
{
    m_se = se;
}

bool
IbBthHeader::GetSolicitedEvent() const
{
    return m_se;
}

void
IbBthHeader::SetMigReq(bool migReq)
{
    m_migReq = migReq;
}

bool
IbBthHeader::GetMigReq() const
{
    return m_migReq;
}

void
IbBthHeader::SetPadCnt(uint8_t padCnt)
{
    NS_ABORT_MSG_UNLESS(padCnt <= 3,
                        "IbBthHeader::SetPadCnt: BTH PadCnt " << +padCnt << " out of range 0..3");
    m_padCnt = padCnt;
}

uint8_t
IbBthHeader::GetPadCnt() const
{
    return m_padCnt;
}

void
IbBthHeader::SetTVer(uint8_t tver)
{
    NS_ABORT_MSG_UNLESS(tver <= 15,
                        "IbBthHeader::SetTVer: BTH TVer " << +tver << " out of range 0..15");
    m_tver = tver;
}

uint8_t
IbBthHeader::GetTVer() const
{
    return m_tver;
}

void
IbBthHeader::SetPKey(uint16_t pkey)
{
    m_pkey = pkey;
}

uint16_t
IbBthHeader::GetPKey() const
{
    return m_pkey;
}

void
IbBthHeader::SetFecn(bool fecn)
{
    m_fecn = fecn;
}

bool
IbBthHeader::GetFecn() const
{
    return m_fecn;
}

void
IbBthHeader::SetBecn(bool becn)
{
    m_becn = becn;
}

bool
IbBthHeader::GetBecn() const
{
    return m_becn;
}

void
IbBthHeader::SetDestQp(uint32_t destQp)
{
    NS_ABORT_MSG_UNLESS(destQp <= 0xFFFFFF,
                        "IbBthHeader::SetDestQp: BTH DestQP "
                            << destQp << " out of range 0..16777215 (24 bits)");
    m_destQp = destQp;
}

uint32_t
IbBthHeader::GetDestQp() const
{
    return m_destQp;
}

void
IbBthHeader::SetAckReq(bool ackReq)
{
    m_ackReq = ackReq;
}

bool
IbBthHeader::GetAckReq() const
{
    return m_ackReq;
}

void
IbBthHeader::SetPsn(uint32_t psn)
{
    NS_ABORT_MSG_UNLESS(psn <= 0xFFFFFF,
                        "IbBthHeader::SetPsn: BTH PSN " << psn
                                                        << " out of range 0..16777215 (24 bits)");
    m_psn = psn;
}

uint32_t
IbBthHeader::GetPsn() const
{
    return m_psn;
}

const char*
IbBthHeader::OpcodeName(uint8_t opcode)
{
    switch (opcode)
    {
    case IbOpcode::RC_SEND_FIRST:
        return "RC Send First";
    case IbOpcode::RC_SEND_MIDDLE:
        return "RC Send Middle";
    case IbOpcode::RC_SEND_LAST:
        return "RC Send Last";
    case IbOpcode::RC_SEND_LAST_WITH_IMMEDIATE:
        return "RC Send Last Immediate";
    case IbOpcode::RC_SEND_ONLY:
        return "RC Send Only";
    case IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE:
        return "RC Send Only Immediate";
    case IbOpcode::RC_RDMA_WRITE_FIRST:
        return "RC RDMA Write First";
    case IbOpcode::RC_RDMA_WRITE_MIDDLE:
        return "RC RDMA Write Middle";
    case IbOpcode::RC_RDMA_WRITE_LAST:
        return "RC RDMA Write Last";
    case IbOpcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE:
        return "RC RDMA Write Last Immediate";
    case IbOpcode::RC_RDMA_WRITE_ONLY:
        return "RC RDMA Write Only";
    case IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
        return "RC RDMA Write Only Immediate";
    case IbOpcode::RC_RDMA_READ_REQUEST:
        return "RC RDMA Read Request";
    case IbOpcode::RC_RDMA_READ_RESPONSE_FIRST:
        return "RC RDMA Read Response First";
    case IbOpcode::RC_RDMA_READ_RESPONSE_MIDDLE:
        return "RC RDMA Read Response Middle";
    case IbOpcode::RC_RDMA_READ_RESPONSE_LAST:
        return "RC RDMA Read Response Last";
    case IbOpcode::RC_RDMA_READ_RESPONSE_ONLY:
        return "RC RDMA Read Response Only";
    case IbOpcode::RC_ACKNOWLEDGE:
        return "RC Acknowledge";
    case IbOpcode::RC_ATOMIC_ACKNOWLEDGE:
        return "RC Atomic Acknowledge";
    case IbOpcode::RC_COMPARE_SWAP:
        return "RC Compare Swap";
    case IbOpcode::RC_FETCH_ADD:
        return "RC Fetch Add";
    case IbOpcode::UD_SEND_ONLY:
        return "UD Send Only";
    case IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE:
        return "UD Send Only Immediate";
    case IbOpcode::CNP:
        return "CNP";
    default:
        return "Unknown";
    }
}

bool
IbBthHeader::HasPayload(uint8_t opcode)
{
    if (!IsKnownOpcode(opcode))
    {
        return false;
    }
    switch (opcode)
    {
    case IbOpcode::RC_RDMA_READ_REQUEST:
    case IbOpcode::RC_ACKNOWLEDGE:
    case IbOpcode::RC_ATOMIC_ACKNOWLEDGE:
    case IbOpcode::RC_COMPARE_SWAP:
    case IbOpcode::RC_FETCH_ADD:
        return false;
    default:
        return true;
    }
}

} // namespace ns3

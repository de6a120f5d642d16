/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-flow-control-header.h"

#include "ib-crc.h"

#include "ns3/abort.h"
#include "ns3/ib-ns3-compat.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbFlowControlHeader");

NS_OBJECT_ENSURE_REGISTERED(IbFlowControlHeader);

IbFlowControlHeader::IbFlowControlHeader()
    : m_op(OP_NORMAL),
      m_fctbs(0),
      m_vl(0),
      m_fccl(0),
      m_lpcrc(0),
      m_lpcrcReceived(false)
{
}

TypeId
IbFlowControlHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbFlowControlHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbFlowControlHeader>();
    return tid;
}

TypeId
IbFlowControlHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbFlowControlHeader::GetSerializedSize() const
{
    return SIZE;
}

uint32_t
IbFlowControlHeader::GetFirstWord() const
{
    return FirstWordOf(m_op, m_fctbs, m_vl, m_fccl);
}

void
IbFlowControlHeader::FirstFourBytes(uint8_t* out) const
{
    const uint32_t word = GetFirstWord();
    out[0] = static_cast<uint8_t>(word >> 24);
    out[1] = static_cast<uint8_t>(word >> 16);
    out[2] = static_cast<uint8_t>(word >> 8);
    out[3] = static_cast<uint8_t>(word);
}

uint16_t
IbFlowControlHeader::ComputeLpcrc() const
{
    uint8_t bytes[4];
    FirstFourBytes(bytes);
    return IbCrc::ComputeLpcrc(bytes);
}

void
IbFlowControlHeader::Serialize(Buffer::Iterator start) const
{
    uint8_t bytes[4];
    FirstFourBytes(bytes);
    start.Write(bytes, sizeof(bytes));
    ib_compat::WriteLe16(start, IbCrc::ComputeLpcrc(bytes));
}

uint32_t
IbFlowControlHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("Flow-control packet needs " << SIZE << " bytes, " << start.GetRemainingSize()
                                                  << " left");
        return 0;
    }
    const uint32_t word = start.ReadNtohU32();
    m_op = OpOf(word);
    m_fctbs = FctbsOf(word);
    m_vl = VlOf(word);
    m_fccl = FcclOf(word);
    m_lpcrc = ib_compat::ReadLe16(start);
    m_lpcrcReceived = true;
    return SIZE;
}

void
IbFlowControlHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const auto fill = os.fill();
    os << "Operand: " << +m_op << ", Flow Control Total Blocks Sent: " << m_fctbs
       << ", Virtual Lane: " << +m_vl << ", Flow Control Credit Limit: " << m_fccl
       << ", Link Packet CRC: 0x" << std::hex << std::setfill('0') << std::setw(4) << GetLpcrc();
    os.flags(flags);
    os.fill(fill);
}

void
IbFlowControlHeader::SetOp(uint8_t op)
{
    NS_ABORT_MSG_UNLESS(op <= 15,
                        "IbFlowControlHeader::SetOp: Flow-control Op " << +op
                                                                       << " out of range 0..15");
    m_op = op;
    m_lpcrcReceived = false;
}

uint8_t
IbFlowControlHeader::GetOp() const
{
    return m_op;
}

void
IbFlowControlHeader::SetFctbs(uint16_t fctbs)
{
    NS_ABORT_MSG_UNLESS(fctbs <= 0x0FFF,
                        "IbFlowControlHeader::SetFctbs: Flow-control FCTBS "
                            << fctbs << " out of range 0..4095");
    m_fctbs = fctbs;
    m_lpcrcReceived = false;
}

uint16_t
IbFlowControlHeader::GetFctbs() const
{
    return m_fctbs;
}

void
IbFlowControlHeader::SetVl(uint8_t vl)
{
    NS_ABORT_MSG_UNLESS(vl <= 15,
                        "IbFlowControlHeader::SetVl: Flow-control VL " << +vl
                                                                       << " out of range 0..15");
    m_vl = vl;
    m_lpcrcReceived = false;
}

uint8_t
IbFlowControlHeader::GetVl() const
{
    return m_vl;
}

void
IbFlowControlHeader::SetFccl(uint16_t fccl)
{
    NS_ABORT_MSG_UNLESS(fccl <= 0x0FFF,
                        "IbFlowControlHeader::SetFccl: Flow-control FCCL "
                            << fccl << " out of range 0..4095");
    m_fccl = fccl;
    m_lpcrcReceived = false;
}

uint16_t
IbFlowControlHeader::GetFccl() const
{
    return m_fccl;
}

uint16_t
IbFlowControlHeader::GetLpcrc() const
{
    // Computed when asked for, not by every setter: a port fills a header per credit
    // update and reads only its fields unless the packet is built or watched.
    return m_lpcrcReceived ? m_lpcrc : ComputeLpcrc();
}

bool
IbFlowControlHeader::IsLpcrcValid() const
{
    return !m_lpcrcReceived || m_lpcrc == ComputeLpcrc();
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-deth-header.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbDethHeader");

NS_OBJECT_ENSURE_REGISTERED(IbDethHeader);

IbDethHeader::IbDethHeader()
    : m_qkey(0),
      m_srcQp(0)
{
}

TypeId
IbDethHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbDethHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbDethHeader>();
    return tid;
}

TypeId
IbDethHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbDethHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IbDethHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU32(m_qkey);
    start.WriteHtonU32(m_srcQp);
}

uint32_t
IbDethHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("DETH needs " << SIZE << " bytes, " << start.GetRemainingSize() << " left");
        return 0;
    }
    m_qkey = start.ReadNtohU32();
    m_srcQp = start.ReadNtohU32() & 0xFFFFFF;
    return SIZE;
}

void
IbDethHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const auto fill = os.fill();
    os << std::hex << std::setfill('0') << "Queue Key: 0x" << std::setw(8) << m_qkey
       << ", Source Queue Pair: 0x" << std::setw(6) << m_srcQp;
    os.flags(flags);
    os.fill(fill);
}

void
IbDethHeader::SetQKey(uint32_t qkey)
{
    m_qkey = qkey;
}

uint32_t
IbDethHeader::GetQKey() const
{
    return m_qkey;
}

void
IbDethHeader::SetSrcQp(uint32_t srcQp)
{
    NS_ABORT_MSG_UNLESS(srcQp <= 0xFFFFFF,
                        "IbDethHeader::SetSrcQp: DETH SrcQP "
                            << srcQp << " out of range 0..16777215 (24 bits)");
    m_srcQp = srcQp;
}

uint32_t
IbDethHeader::GetSrcQp() const
{
    return m_srcQp;
}

} // namespace ns3

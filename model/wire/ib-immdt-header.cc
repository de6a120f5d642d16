/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-immdt-header.h"

#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbImmDtHeader");

NS_OBJECT_ENSURE_REGISTERED(IbImmDtHeader);

IbImmDtHeader::IbImmDtHeader()
    : m_immediateData(0)
{
}

TypeId
IbImmDtHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbImmDtHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbImmDtHeader>();
    return tid;
}

TypeId
IbImmDtHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbImmDtHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IbImmDtHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU32(m_immediateData);
}

uint32_t
IbImmDtHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("ImmDt needs " << SIZE << " bytes, " << start.GetRemainingSize() << " left");
        return 0;
    }
    m_immediateData = start.ReadNtohU32();
    return SIZE;
}

void
IbImmDtHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const auto fill = os.fill();
    os << "Immediate Data: 0x" << std::hex << std::setfill('0') << std::setw(8) << m_immediateData;
    os.flags(flags);
    os.fill(fill);
}

void
IbImmDtHeader::SetImmediateData(uint32_t immediateData)
{
    m_immediateData = immediateData;
}

uint32_t
IbImmDtHeader::GetImmediateData() const
{
    return m_immediateData;
}

} // namespace ns3

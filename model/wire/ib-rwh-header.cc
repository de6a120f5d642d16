/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-rwh-header.h"

#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbRwhHeader");

NS_OBJECT_ENSURE_REGISTERED(IbRwhHeader);

IbRwhHeader::IbRwhHeader()
    : m_etherType(0)
{
}

TypeId
IbRwhHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbRwhHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbRwhHeader>();
    return tid;
}

TypeId
IbRwhHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbRwhHeader::GetSerializedSize() const
{
    return 4;
}

void
IbRwhHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU16(0);
    start.WriteHtonU16(m_etherType);
}

uint32_t
IbRwhHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < 4)
    {
        return 0;
    }
    start.ReadNtohU16();
    m_etherType = start.ReadNtohU16();
    return 4;
}

void
IbRwhHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const char fill = os.fill();
    os << "Raw Header: EtherType: 0x" << std::hex << std::setw(4) << std::setfill('0')
       << m_etherType;
    os.flags(flags);
    os.fill(fill);
}

void
IbRwhHeader::SetEtherType(uint16_t etherType)
{
    m_etherType = etherType;
}

uint16_t
IbRwhHeader::GetEtherType() const
{
    return m_etherType;
}

} // namespace ns3

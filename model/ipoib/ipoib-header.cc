/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ipoib-header.h"

#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IpoibHeader");

NS_OBJECT_ENSURE_REGISTERED(IpoibHeader);

TypeId
IpoibHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IpoibHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IpoibHeader>();
    return tid;
}

TypeId
IpoibHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

IpoibHeader::IpoibHeader(uint16_t etherType)
    : m_etherType(etherType),
      m_reserved(0)
{
}

uint16_t
IpoibHeader::GetEtherType() const
{
    return m_etherType;
}

void
IpoibHeader::SetEtherType(uint16_t etherType)
{
    m_etherType = etherType;
}

uint16_t
IpoibHeader::GetReserved() const
{
    return m_reserved;
}

uint32_t
IpoibHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IpoibHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU16(m_etherType);
    start.WriteHtonU16(0);
}

uint32_t
IpoibHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        return 0; // truncated: nothing read, as the IBA headers do
    }
    m_etherType = start.ReadNtohU16();
    m_reserved = start.ReadNtohU16();
    return SIZE;
}

void
IpoibHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    os << "IPoIB type=0x" << std::hex << std::setw(4) << std::setfill('0') << m_etherType;
    os.flags(flags);
    os << std::setfill(' ');
}

} // namespace ns3

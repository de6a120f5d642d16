/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-crc-trailer.h"

#include "ns3/ib-ns3-compat.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbCrcTrailer");

NS_OBJECT_ENSURE_REGISTERED(IbCrcTrailer);

IbCrcTrailer::IbCrcTrailer()
    : m_icrc(0),
      m_vcrc(0),
      m_hasIcrc(true)
{
}

TypeId
IbCrcTrailer::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbCrcTrailer")
                            .SetParent<Trailer>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbCrcTrailer>();
    return tid;
}

TypeId
IbCrcTrailer::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbCrcTrailer::GetSerializedSize() const
{
    return m_hasIcrc ? ICRC_SIZE + VCRC_SIZE : VCRC_SIZE;
}

void
IbCrcTrailer::Serialize(Buffer::Iterator end) const
{
    Buffer::Iterator i = end;
    i.Prev(GetSerializedSize());
    if (m_hasIcrc)
    {
        ib_compat::WriteLe32(i, m_icrc);
    }
    ib_compat::WriteLe16(i, m_vcrc);
}

uint32_t
IbCrcTrailer::Deserialize(Buffer::Iterator end)
{
    const uint32_t size = GetSerializedSize();
    const uint32_t before = end.GetSize() - end.GetRemainingSize();
    if (before < size)
    {
        NS_LOG_LOGIC("CRC trailer needs " << size << " bytes, " << before << " present");
        return 0;
    }
    Buffer::Iterator i = end;
    i.Prev(size);
    if (m_hasIcrc)
    {
        m_icrc = ib_compat::ReadLe32(i);
    }
    m_vcrc = ib_compat::ReadLe16(i);
    return size;
}

uint32_t
IbCrcTrailer::Deserialize(Buffer::Iterator start, Buffer::Iterator end)
{
    m_hasIcrc = end.GetDistanceFrom(start) == ICRC_SIZE + VCRC_SIZE;
    return Deserialize(end);
}

void
IbCrcTrailer::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const auto fill = os.fill();
    os << std::hex << std::setfill('0');
    if (m_hasIcrc)
    {
        os << "Invariant CRC: 0x" << std::setw(8) << m_icrc << ", ";
    }
    os << "Variant CRC: 0x" << std::setw(4) << m_vcrc;
    os.flags(flags);
    os.fill(fill);
}

void
IbCrcTrailer::SetIcrc(uint32_t icrc)
{
    m_icrc = icrc;
}

uint32_t
IbCrcTrailer::GetIcrc() const
{
    return m_icrc;
}

void
IbCrcTrailer::SetVcrc(uint16_t vcrc)
{
    m_vcrc = vcrc;
}

uint16_t
IbCrcTrailer::GetVcrc() const
{
    return m_vcrc;
}

void
IbCrcTrailer::SetHasIcrc(bool hasIcrc)
{
    m_hasIcrc = hasIcrc;
}

bool
IbCrcTrailer::GetHasIcrc() const
{
    return m_hasIcrc;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "roce-icrc-trailer.h"

#include "ns3/ib-ns3-compat.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RoceIcrcTrailer");

NS_OBJECT_ENSURE_REGISTERED(RoceIcrcTrailer);

RoceIcrcTrailer::RoceIcrcTrailer(uint32_t icrc)
    : m_icrc(icrc)
{
}

TypeId
RoceIcrcTrailer::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceIcrcTrailer")
                            .SetParent<Trailer>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<RoceIcrcTrailer>();
    return tid;
}

TypeId
RoceIcrcTrailer::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
RoceIcrcTrailer::GetSerializedSize() const
{
    return SIZE;
}

void
RoceIcrcTrailer::Serialize(Buffer::Iterator end) const
{
    Buffer::Iterator i = end;
    i.Prev(SIZE);
    ib_compat::WriteLe32(i, m_icrc);
}

uint32_t
RoceIcrcTrailer::Deserialize(Buffer::Iterator end)
{
    const uint32_t before = end.GetSize() - end.GetRemainingSize();
    if (before < SIZE)
    {
        NS_LOG_LOGIC("ICRC trailer needs " << SIZE << " bytes, " << before << " present");
        return 0;
    }
    Buffer::Iterator i = end;
    i.Prev(SIZE);
    m_icrc = ib_compat::ReadLe32(i);
    return SIZE;
}

void
RoceIcrcTrailer::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const auto fill = os.fill();
    os << "Invariant CRC: 0x" << std::hex << std::setfill('0') << std::setw(8) << m_icrc;
    os.flags(flags);
    os.fill(fill);
}

void
RoceIcrcTrailer::SetIcrc(uint32_t icrc)
{
    m_icrc = icrc;
}

uint32_t
RoceIcrcTrailer::GetIcrc() const
{
    return m_icrc;
}

} // namespace ns3

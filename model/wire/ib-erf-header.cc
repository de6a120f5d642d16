/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-erf-header.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbErfHeader");

NS_OBJECT_ENSURE_REGISTERED(IbErfHeader);

IbErfHeader::IbErfHeader()
    : m_timestamp(0),
      m_type(TYPE_INFINIBAND),
      m_flags(0x04),
      m_wlen(0)
{
}

TypeId
IbErfHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbErfHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbErfHeader>();
    return tid;
}

TypeId
IbErfHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbErfHeader::GetSerializedSize() const
{
    return 16;
}

void
IbErfHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteU64(m_timestamp); // WriteU64 writes least significant byte first
    start.WriteU8(m_type);
    start.WriteU8(m_flags);
    start.WriteHtonU16(static_cast<uint16_t>(16 + m_wlen)); // rlen
    start.WriteHtonU16(0);                                  // lctr
    start.WriteHtonU16(m_wlen);
}

uint32_t
IbErfHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < 16)
    {
        return 0;
    }
    m_timestamp = start.ReadU64();
    m_type = start.ReadU8();
    m_flags = start.ReadU8();
    start.ReadNtohU16();
    start.ReadNtohU16();
    m_wlen = start.ReadNtohU16();
    return 16;
}

void
IbErfHeader::Print(std::ostream& os) const
{
    os << "ERF: Timestamp: " << GetTimestamp().As(Time::S) << ", Type: " << unsigned(m_type)
       << ", Wire length: " << m_wlen;
}

void
IbErfHeader::SetTimestamp(Time t)
{
    const int64_t ps = t.GetPicoSeconds();
    const uint64_t seconds = static_cast<uint64_t>(ps / 1000000000000LL);
    const uint64_t remPs = static_cast<uint64_t>(ps % 1000000000000LL);
    // fraction = remPs / 1e12 * 2^32, rounded to nearest (128-bit: remPs * 2^32 > 2^64)
    __extension__ typedef unsigned __int128 u128; // GCC and Clang; __extension__: not ISO C++
    const uint64_t fraction = static_cast<uint64_t>(
        ((static_cast<u128>(remPs) << 32) + 500000000000ULL) / 1000000000000ULL);
    m_timestamp = (seconds << 32) + fraction;
}

Time
IbErfHeader::GetTimestamp() const
{
    const uint64_t seconds = m_timestamp >> 32;
    const uint64_t fraction = m_timestamp & 0xffffffffULL;
    __extension__ typedef unsigned __int128 u128; // GCC and Clang; __extension__: not ISO C++
    const uint64_t ps = static_cast<uint64_t>(
        (static_cast<u128>(fraction) * 1000000000000ULL + (static_cast<u128>(1) << 31)) >> 32);
    return PicoSeconds(static_cast<int64_t>(seconds * 1000000000000ULL + ps));
}

void
IbErfHeader::SetPacketLength(uint16_t bytes)
{
    m_wlen = bytes;
}

uint16_t
IbErfHeader::GetPacketLength() const
{
    return m_wlen;
}

uint8_t
IbErfHeader::GetType() const
{
    return m_type;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ipoib-address.h"

#include "ns3/assert.h"
#include "ns3/ib-ns3-compat.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IpoibAddress");

IpoibAddress::IpoibAddress()
{
    m_bytes.fill(0);
}

IpoibAddress::IpoibAddress(uint32_t qpn, const std::array<uint8_t, 16>& gid, uint8_t flags)
{
    m_bytes[0] = flags;
    m_bytes[1] = (qpn >> 16) & 0xFF;
    m_bytes[2] = (qpn >> 8) & 0xFF;
    m_bytes[3] = qpn & 0xFF;
    for (uint32_t i = 0; i < 16; ++i)
    {
        m_bytes[4 + i] = gid[i];
    }
}

IpoibAddress
IpoibAddress::FromGuid(uint32_t qpn, uint64_t guid)
{
    std::array<uint8_t, 16> gid{};
    gid[0] = 0xfe;
    gid[1] = 0x80;
    for (uint32_t i = 0; i < 8; ++i)
    {
        gid[8 + i] = (guid >> (56 - 8 * i)) & 0xFF;
    }
    return IpoibAddress(qpn, gid);
}

IpoibAddress
IpoibAddress::GetBroadcast(uint16_t pkey)
{
    // RFC 4391 section 4: ff1<scope 2>:401b:<P_Key>:0000:0000:0000:ffff:ffff
    std::array<uint8_t, 16> gid{};
    gid[0] = 0xff;
    gid[1] = 0x12;
    gid[2] = 0x40;
    gid[3] = 0x1b;
    gid[4] = pkey >> 8;
    gid[5] = pkey & 0xFF;
    gid[12] = 0xff;
    gid[13] = 0xff;
    gid[14] = 0xff;
    gid[15] = 0xff;
    return IpoibAddress(MULTICAST_QPN, gid);
}

uint32_t
IpoibAddress::GetQpn() const
{
    return (uint32_t(m_bytes[1]) << 16) | (uint32_t(m_bytes[2]) << 8) | m_bytes[3];
}

std::array<uint8_t, 16>
IpoibAddress::GetGid() const
{
    std::array<uint8_t, 16> gid;
    for (uint32_t i = 0; i < 16; ++i)
    {
        gid[i] = m_bytes[4 + i];
    }
    return gid;
}

uint64_t
IpoibAddress::GetGuid() const
{
    uint64_t g = 0;
    for (uint32_t i = 12; i < LENGTH; ++i)
    {
        g = (g << 8) | m_bytes[i];
    }
    return g;
}

bool
IpoibAddress::IsMulticast() const
{
    return m_bytes[4] == 0xff;
}

void
IpoibAddress::CopyTo(uint8_t buffer[LENGTH]) const
{
    std::copy(m_bytes.begin(), m_bytes.end(), buffer);
}

void
IpoibAddress::CopyFrom(const uint8_t buffer[LENGTH])
{
    std::copy(buffer, buffer + LENGTH, m_bytes.begin());
}

Address
IpoibAddress::ConvertTo() const
{
    return Address(GetType(), m_bytes.data(), LENGTH);
}

IpoibAddress::operator Address() const
{
    return ConvertTo();
}

IpoibAddress
IpoibAddress::ConvertFrom(const Address& address)
{
    NS_ASSERT_MSG(IsMatchingType(address), "not a 20-byte IPoIB address: " << address);
    uint8_t buf[Address::MAX_SIZE];
    address.CopyTo(buf);
    IpoibAddress a;
    a.CopyFrom(buf);
    return a;
}

bool
IpoibAddress::IsMatchingType(const Address& address)
{
    return address.CheckCompatible(GetType(), LENGTH);
}

uint8_t
IpoibAddress::GetType()
{
    // Hardware addresses are of kind "MacAddress": ARP and ND decode 20-byte ones as such.
    static uint8_t type = ib_compat::RegisterAddressType("MacAddress", LENGTH);
    return type;
}

std::ostream&
operator<<(std::ostream& os, const IpoibAddress& a)
{
    const auto gid = a.GetGid();
    const auto flags = os.flags();
    os << "qpn=0x" << std::hex << std::setfill('0') << std::setw(6) << a.GetQpn() << " gid=";
    for (uint32_t i = 0; i < 16; i += 2)
    {
        os << (i ? ":" : "") << std::setw(2) << unsigned(gid[i]) << std::setw(2)
           << unsigned(gid[i + 1]);
    }
    os.flags(flags);
    os << std::setfill(' ');
    return os;
}

} // namespace ns3

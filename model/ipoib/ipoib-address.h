/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IPOIB_ADDRESS_H
#define IPOIB_ADDRESS_H

#include "ns3/address.h"

#include <array>
#include <cstdint>
#include <ostream>

namespace ns3
{

/**
 * @ingroup infiniband-ipoib
 * @brief The 20-byte IPoIB link-layer address (RFC 4391 section 9.1.1): one byte of
 * flags/reserved, the 24-bit QP number, then the 16-byte port GID.
 *
 * In this model a unicast GID is the link-local GID fe80::<node GUID> of the host's
 * channel adapter (port 1's GUID is taken equal to the node GUID, as on single-port
 * HCAs); the subnet manager resolves it to a LID. The broadcast address is the IPv4
 * broadcast group of RFC 4391 section 4: QPN 0xFFFFFF and multicast GID
 * ff12:401b:<P_Key>::ffff:ffff (P_Key 0xFFFF).
 *
 * As an ns3::Address it has its own address type (registered once) and length 20.
 * Conversion accepts any 20-byte Address of type 0 too, because ns-3's ArpHeader
 * deserializes hardware addresses without a type.
 */
class IpoibAddress
{
  public:
    /// Length in bytes.
    static constexpr uint8_t LENGTH = 20;
    /// QPN of a multicast (broadcast) destination.
    static constexpr uint32_t MULTICAST_QPN = 0xFFFFFF;

    /// An all-zero address.
    IpoibAddress();
    /**
     * @param qpn QP number (24 bits)
     * @param gid port GID (16 bytes, network order)
     * @param flags the first byte (RFC 4391: connected-mode flags; 0 here)
     */
    IpoibAddress(uint32_t qpn, const std::array<uint8_t, 16>& gid, uint8_t flags = 0);
    /**
     * @param qpn QP number
     * @param guid node GUID: the GID is fe80::<guid>
     * @return the unicast address
     */
    static IpoibAddress FromGuid(uint32_t qpn, uint64_t guid);
    /**
     * @param pkey the partition key
     * @return the IPv4 broadcast address of RFC 4391 for that partition
     */
    static IpoibAddress GetBroadcast(uint16_t pkey = 0xFFFF);
    /// @return the QP number
    uint32_t GetQpn() const;
    /// @return the GID
    std::array<uint8_t, 16> GetGid() const;
    /// @return the low 64 bits of the GID (the GUID of a unicast address)
    uint64_t GetGuid() const;
    /// @return true if the GID is a multicast GID (first byte 0xff)
    bool IsMulticast() const;
    /**
     * @param buffer receives the 20 bytes
     */
    void CopyTo(uint8_t buffer[LENGTH]) const;
    /**
     * @param buffer the 20 bytes
     */
    void CopyFrom(const uint8_t buffer[LENGTH]);
    /// @return this address as an ns3::Address
    Address ConvertTo() const;
    /// @return this address as an ns3::Address
    operator Address() const;
    /**
     * @param address an Address (an IpoibAddress, or any 20-byte address of type 0)
     * @return it as an IpoibAddress
     */
    static IpoibAddress ConvertFrom(const Address& address);
    /**
     * @param address an Address
     * @return true if ConvertFrom accepts it
     */
    static bool IsMatchingType(const Address& address);
    /// @return the registered address type
    static uint8_t GetType();

    /**
     * @param a an address
     * @param b another
     * @return true if equal
     */
    friend bool operator==(const IpoibAddress& a, const IpoibAddress& b)
    {
        return a.m_bytes == b.m_bytes;
    }

    /**
     * @param a an address
     * @param b another
     * @return true if different
     */
    friend bool operator!=(const IpoibAddress& a, const IpoibAddress& b)
    {
        return !(a == b);
    }

    /**
     * @param a an address
     * @param b another
     * @return byte-wise order
     */
    friend bool operator<(const IpoibAddress& a, const IpoibAddress& b)
    {
        return a.m_bytes < b.m_bytes;
    }

  private:
    std::array<uint8_t, LENGTH> m_bytes; //!< flags, QPN, GID
};

/**
 * @ingroup infiniband-ipoib
 * @param os stream
 * @param a address
 * @return os, with "qpn=0x000002 gid=fe80:..." written
 */
std::ostream& operator<<(std::ostream& os, const IpoibAddress& a);

} // namespace ns3

#endif /* IPOIB_ADDRESS_H */

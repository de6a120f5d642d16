/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IPOIB_HEADER_H
#define IPOIB_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-ipoib
 * @brief The 4-byte IPoIB encapsulation header (RFC 4391 section 6): a 16-bit EtherType
 * (0x0800 IPv4, 0x0806 ARP, 0x86DD IPv6) and 16 reserved bits, sent as zero.
 */
class IpoibHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 4;

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;

    /**
     * @param etherType the EtherType of the payload
     */
    explicit IpoibHeader(uint16_t etherType = 0);

    /// @return the EtherType
    uint16_t GetEtherType() const;
    /// @param etherType the EtherType
    void SetEtherType(uint16_t etherType);
    /// @return the reserved field as received
    uint16_t GetReserved() const;

    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

  private:
    uint16_t m_etherType; //!< EtherType
    uint16_t m_reserved;  //!< reserved (0)
};

} // namespace ns3

#endif /* IPOIB_HEADER_H */

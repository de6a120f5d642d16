/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ERF_HEADER_H
#define IB_ERF_HEADER_H

#include "ns3/header.h"
#include "ns3/nstime.h"

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief The 16-byte Endace ERF record header that precedes each InfiniBand packet in a
 * pcap file of link type 197 (LINKTYPE_ERF), as Mellanox ibdump writes it.
 *
 * Layout: timestamp (8 bytes, little-endian 32.32 fixed-point seconds), type (1 byte,
 * 21 = InfiniBand), flags (1 byte, 0x04 = varying-length record), rlen (2 bytes
 * big-endian: 16 + packet length), lctr (2 bytes, 0), wlen (2 bytes big-endian: packet
 * length). Wireshark then decodes the record from the LRH to the VCRC.
 */
class IbErfHeader : public Header
{
  public:
    /// pcap link type of ERF records.
    static constexpr uint32_t LINKTYPE_ERF = 197;
    /// ERF record type of an InfiniBand packet.
    static constexpr uint8_t TYPE_INFINIBAND = 21;

    IbErfHeader();
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    /**
     * @param start where to read
     * @return 16, or 0 if fewer than 16 bytes remain
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    /// @param t the capture time
    void SetTimestamp(Time t);
    /// @return the capture time, to the resolution of 32.32 fixed point
    Time GetTimestamp() const;
    /// @param bytes the captured packet's length (LRH through VCRC)
    void SetPacketLength(uint16_t bytes);
    /// @return the captured packet's length
    uint16_t GetPacketLength() const;
    /// @return the record type
    uint8_t GetType() const;

  private:
    uint64_t m_timestamp; //!< 32.32 fixed-point seconds
    uint8_t m_type;       //!< record type
    uint8_t m_flags;      //!< flags
    uint16_t m_wlen;      //!< packet length
};

} // namespace ns3

#endif /* IB_ERF_HEADER_H */

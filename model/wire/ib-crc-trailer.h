/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_CRC_TRAILER_H
#define IB_CRC_TRAILER_H

#include "ns3/trailer.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief The CRC trailer of an InfiniBand packet: ICRC (4 bytes) then VCRC (2 bytes).
 *
 * Both values are written least significant byte first (see IbCrc). Raw packets (LRH LNH 0 or
 * 1) carry only the VCRC: SetHasIcrc(false) makes the trailer 2 bytes. The trailer only stores
 * the values; IbCrc computes them.
 *
 * Note: Wireshark shows the CRC bytes read as a big-endian number, i.e. byte-swapped with respect
 * to the values printed here.
 */
class IbCrcTrailer : public Trailer
{
  public:
    /// Size of the ICRC in bytes.
    static constexpr uint32_t ICRC_SIZE = 4;
    /// Size of the VCRC in bytes.
    static constexpr uint32_t VCRC_SIZE = 2;

    /// @brief Create a 6-byte trailer (with ICRC) with both values 0.
    IbCrcTrailer();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbCrcTrailer
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 6 with an ICRC, 2 without
     */
    uint32_t GetSerializedSize() const override;
    /**
     * @brief Write the trailer, both values least significant byte first.
     * @param end the end of the area to write into (the trailer is written just before it)
     */
    void Serialize(Buffer::Iterator end) const override;
    /**
     * @brief Read the trailer (6 bytes, or 2 if SetHasIcrc(false) was called before).
     * @param end the end of the area the trailer is read from
     * @return the number of bytes read, or 0 if fewer bytes than GetSerializedSize() precede end
     * (nothing is read)
     */
    uint32_t Deserialize(Buffer::Iterator end) override;
    /**
     * @brief Read a trailer whose extent is known (Packet::Print): 6 bytes hold ICRC and
     * VCRC, 2 bytes the VCRC alone (a raw packet).
     * @param start the first byte of the trailer
     * @param end just past its last byte
     * @return the number of bytes read
     */
    uint32_t Deserialize(Buffer::Iterator start, Buffer::Iterator end) override;
    /**
     * @brief Print the values with Wireshark's names: "Invariant CRC: 0x..., Variant CRC: 0x...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the ICRC value.
     * @param icrc the ICRC
     */
    void SetIcrc(uint32_t icrc);
    /**
     * @brief Get the ICRC value.
     * @return the ICRC
     */
    uint32_t GetIcrc() const;
    /**
     * @brief Set the VCRC value.
     * @param vcrc the VCRC
     */
    void SetVcrc(uint16_t vcrc);
    /**
     * @brief Get the VCRC value.
     * @return the VCRC
     */
    uint16_t GetVcrc() const;
    /**
     * @brief Choose whether the trailer carries an ICRC (IBA packets) or only a VCRC (raw).
     * @param hasIcrc true (default) for 6 bytes, false for 2 bytes
     */
    void SetHasIcrc(bool hasIcrc);
    /**
     * @brief Tell whether the trailer carries an ICRC.
     * @return true for a 6-byte trailer
     */
    bool GetHasIcrc() const;

  private:
    uint32_t m_icrc; //!< Invariant CRC
    uint16_t m_vcrc; //!< Variant CRC
    bool m_hasIcrc;  //!< Whether the ICRC is present
};

} // namespace ns3

#endif /* IB_CRC_TRAILER_H */

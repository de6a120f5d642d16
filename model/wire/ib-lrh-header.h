/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_LRH_HEADER_H
#define IB_LRH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand Local Route Header (LRH), 8 bytes, first header of every packet.
 *
 * Wire layout (big-endian): VL 4, LVer 4 | SL 4, reserved 2, LNH 2 | DLID 16 |
 * reserved 5, PktLen 11 | SLID 16. Reserved bits are written as 0 and ignored on reading.
 */
class IbLrhHeader : public Header
{
  public:
    /// LNH value: raw packet (a raw header follows the LRH).
    static constexpr uint8_t LNH_RAW = 0;
    /// LNH value: IPv6 packet not carrying IBA transport.
    static constexpr uint8_t LNH_IP_NON_IBA = 1;
    /// LNH value: IBA local packet, the BTH follows the LRH.
    static constexpr uint8_t LNH_IBA_LOCAL = 2;
    /// LNH value: IBA global packet, the GRH follows the LRH.
    static constexpr uint8_t LNH_IBA_GLOBAL = 3;
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 8;

    /// @brief Create an LRH with VL 0, LVer 0, SL 0, LNH 2, DLID 0, PktLen 0, SLID 0.
    IbLrhHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbLrhHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 8
     */
    uint32_t GetSerializedSize() const override;
    /**
     * @brief Write the header (big-endian fields, reserved bits 0).
     * @param start where to write it
     */
    void Serialize(Buffer::Iterator start) const override;
    /**
     * @brief Read the header.
     * @param start where the header starts
     * @return the number of bytes read (8), or 0 if fewer than 8 bytes remain (nothing is read)
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    /**
     * @brief Print the fields with Wireshark's names, e.g. "Virtual Lane: 0, ...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the Virtual Lane.
     * @param vl the VL, 0..15
     */
    void SetVl(uint8_t vl);
    /**
     * @brief Get the Virtual Lane.
     * @return the VL
     */
    uint8_t GetVl() const;
    /**
     * @brief Set the Link Version.
     * @param lver the link version, 0..15
     */
    void SetLinkVersion(uint8_t lver);
    /**
     * @brief Get the Link Version.
     * @return the link version
     */
    uint8_t GetLinkVersion() const;
    /**
     * @brief Set the Service Level.
     * @param sl the SL, 0..15
     */
    void SetSl(uint8_t sl);
    /**
     * @brief Get the Service Level.
     * @return the SL
     */
    uint8_t GetSl() const;
    /**
     * @brief Set the Link Next Header.
     * @param lnh the LNH, 0..3 (see the LNH_* constants)
     */
    void SetLnh(uint8_t lnh);
    /**
     * @brief Get the Link Next Header.
     * @return the LNH
     */
    uint8_t GetLnh() const;
    /**
     * @brief Set the Destination Local ID.
     * @param dlid the DLID
     */
    void SetDlid(uint16_t dlid);
    /**
     * @brief Get the Destination Local ID.
     * @return the DLID
     */
    uint16_t GetDlid() const;
    /**
     * @brief Set the Packet Length: 4-byte words from the first LRH byte through the ICRC.
     * @param pktLen the packet length in words, 0..2047
     */
    void SetPktLen(uint16_t pktLen);
    /**
     * @brief Get the Packet Length in 4-byte words (LRH through ICRC, VCRC excluded).
     * @return the packet length in words
     */
    uint16_t GetPktLen() const;
    /**
     * @brief Set the Source Local ID.
     * @param slid the SLID
     */
    void SetSlid(uint16_t slid);
    /**
     * @brief Get the Source Local ID.
     * @return the SLID
     */
    uint16_t GetSlid() const;

  private:
    uint8_t m_vl;      //!< Virtual Lane, 4 bits
    uint8_t m_lver;    //!< Link Version, 4 bits
    uint8_t m_sl;      //!< Service Level, 4 bits
    uint8_t m_lnh;     //!< Link Next Header, 2 bits
    uint16_t m_dlid;   //!< Destination Local ID
    uint16_t m_pktLen; //!< Packet Length in 4-byte words, 11 bits
    uint16_t m_slid;   //!< Source Local ID
};

} // namespace ns3

#endif /* IB_LRH_HEADER_H */

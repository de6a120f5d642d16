/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_GRH_HEADER_H
#define IB_GRH_HEADER_H

#include "ns3/header.h"
#include "ns3/ipv6-address.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand Global Route Header (GRH), 40 bytes, present when the LRH LNH is 3.
 *
 * Wire layout (big-endian): IPVer 4, TClass 8, FlowLabel 20 | PayLen 16, NxtHdr 8, HopLmt 8 |
 * SGID 128 | DGID 128. GIDs have the format of IPv6 addresses. PayLen counts the bytes from the
 * first byte after the GRH through the ICRC.
 */
class IbGrhHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 40;
    /// NxtHdr value announcing a BTH (IBA transport).
    static constexpr uint8_t NXT_HDR_BTH = 0x1B;

    /// @brief Create a GRH with IPVer 6, NxtHdr 0x1B and every other field 0 (GIDs ::).
    IbGrhHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbGrhHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 40
     */
    uint32_t GetSerializedSize() const override;
    /**
     * @brief Write the header (big-endian fields).
     * @param start where to write it
     */
    void Serialize(Buffer::Iterator start) const override;
    /**
     * @brief Read the header.
     * @param start where the header starts
     * @return the number of bytes read (40), or 0 if fewer than 40 bytes remain (nothing is read)
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    /**
     * @brief Print the fields with Wireshark's names, e.g. "IP Version: 6, ...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the IP Version.
     * @param ipVer the version, 0..15 (6 for IBA)
     */
    void SetIpVer(uint8_t ipVer);
    /**
     * @brief Get the IP Version.
     * @return the version
     */
    uint8_t GetIpVer() const;
    /**
     * @brief Set the Traffic Class.
     * @param tclass the traffic class
     */
    void SetTrafficClass(uint8_t tclass);
    /**
     * @brief Get the Traffic Class.
     * @return the traffic class
     */
    uint8_t GetTrafficClass() const;
    /**
     * @brief Set the Flow Label.
     * @param flowLabel the flow label, 0..0xFFFFF (20 bits)
     */
    void SetFlowLabel(uint32_t flowLabel);
    /**
     * @brief Get the Flow Label.
     * @return the flow label
     */
    uint32_t GetFlowLabel() const;
    /**
     * @brief Set the Payload Length: bytes after the GRH through the ICRC.
     * @param payLen the payload length in bytes
     */
    void SetPayLen(uint16_t payLen);
    /**
     * @brief Get the Payload Length.
     * @return the payload length in bytes
     */
    uint16_t GetPayLen() const;
    /**
     * @brief Set the Next Header.
     * @param nxtHdr the next header (0x1B = BTH)
     */
    void SetNxtHdr(uint8_t nxtHdr);
    /**
     * @brief Get the Next Header.
     * @return the next header
     */
    uint8_t GetNxtHdr() const;
    /**
     * @brief Set the Hop Limit.
     * @param hopLmt the hop limit
     */
    void SetHopLmt(uint8_t hopLmt);
    /**
     * @brief Get the Hop Limit.
     * @return the hop limit
     */
    uint8_t GetHopLmt() const;
    /**
     * @brief Set the Source GID.
     * @param sgid the source GID
     */
    void SetSgid(const Ipv6Address& sgid);
    /**
     * @brief Get the Source GID.
     * @return the source GID
     */
    Ipv6Address GetSgid() const;
    /**
     * @brief Set the Destination GID.
     * @param dgid the destination GID
     */
    void SetDgid(const Ipv6Address& dgid);
    /**
     * @brief Get the Destination GID.
     * @return the destination GID
     */
    Ipv6Address GetDgid() const;

  private:
    uint8_t m_ipVer;      //!< IP Version, 4 bits
    uint8_t m_tclass;     //!< Traffic Class
    uint32_t m_flowLabel; //!< Flow Label, 20 bits
    uint16_t m_payLen;    //!< Payload Length
    uint8_t m_nxtHdr;     //!< Next Header
    uint8_t m_hopLmt;     //!< Hop Limit
    Ipv6Address m_sgid;   //!< Source GID
    Ipv6Address m_dgid;   //!< Destination GID
};

} // namespace ns3

#endif /* IB_GRH_HEADER_H */

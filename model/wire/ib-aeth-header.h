/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_AETH_HEADER_H
#define IB_AETH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand ACK Extended Transport Header (AETH), 4 bytes.
 *
 * Wire layout (big-endian): Syndrome 8 | MSN 24. Syndrome bit 7 is reserved, bits 6..5 give the
 * class (00 ACK, 01 RNR NAK, 11 NAK; 10 reserved) and bits 4..0 its value: for an ACK the credit
 * count (0x1F = unlimited), for an RNR NAK the RNR timer code, for a NAK the NAK code (syndromes
 * 0x60..0x64, see the NAK_* constants).
 */
class IbAethHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 4;
    /// Syndrome: NAK, PSN sequence error.
    static constexpr uint8_t NAK_PSN_SEQUENCE_ERROR = 0x60;
    /// Syndrome: NAK, invalid request.
    static constexpr uint8_t NAK_INVALID_REQUEST = 0x61;
    /// Syndrome: NAK, remote access error.
    static constexpr uint8_t NAK_REMOTE_ACCESS_ERROR = 0x62;
    /// Syndrome: NAK, remote operational error.
    static constexpr uint8_t NAK_REMOTE_OPERATIONAL_ERROR = 0x63;
    /// Syndrome: NAK, invalid RD request.
    static constexpr uint8_t NAK_INVALID_RD_REQUEST = 0x64;
    /// Credit count of an ACK meaning "unlimited credits" (end-to-end flow control off).
    static constexpr uint8_t CREDIT_COUNT_UNLIMITED = 0x1F;

    /// @brief Create an AETH with syndrome 0 (ACK, credit count 0) and MSN 0.
    IbAethHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbAethHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 4
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
     * @return the number of bytes read (4), or 0 if fewer than 4 bytes remain (nothing is read)
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    /**
     * @brief Print the fields with Wireshark's names, e.g. "Syndrome: 31 (Ack, Credit Count:
     * 31), Message Sequence Number: 1".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the Syndrome.
     * @param syndrome the syndrome (see AckSyndrome(), RnrNakSyndrome(), NAK_*)
     */
    void SetSyndrome(uint8_t syndrome);
    /**
     * @brief Get the Syndrome.
     * @return the syndrome
     */
    uint8_t GetSyndrome() const;
    /**
     * @brief Set the Message Sequence Number.
     * @param msn the MSN, 0..0xFFFFFF (24 bits)
     */
    void SetMsn(uint32_t msn);
    /**
     * @brief Get the Message Sequence Number.
     * @return the MSN
     */
    uint32_t GetMsn() const;

    /**
     * @brief Tell whether the syndrome is an ACK.
     * @return true if bits 7..5 are 000
     */
    bool IsAck() const;
    /**
     * @brief Tell whether the syndrome is an RNR NAK.
     * @return true if bits 7..5 are 001
     */
    bool IsRnrNak() const;
    /**
     * @brief Tell whether the syndrome is a NAK.
     * @return true if bits 7..5 are 011
     */
    bool IsNak() const;
    /**
     * @brief Get the credit count of an ACK (low 5 bits of the syndrome).
     * @return the credit count code, CREDIT_COUNT_UNLIMITED for unlimited
     */
    uint8_t GetCreditCount() const;
    /**
     * @brief Get the RNR timer code of an RNR NAK (low 5 bits of the syndrome).
     * @return the RNR timer code
     */
    uint8_t GetRnrTimerCode() const;

    /**
     * @brief Tell whether a syndrome is an ACK.
     * @param syndrome the syndrome
     * @return true if bits 7..5 are 000
     */
    static bool IsAckSyndrome(uint8_t syndrome);
    /**
     * @brief Tell whether a syndrome is an RNR NAK.
     * @param syndrome the syndrome
     * @return true if bits 7..5 are 001
     */
    static bool IsRnrNakSyndrome(uint8_t syndrome);
    /**
     * @brief Tell whether a syndrome is a NAK.
     * @param syndrome the syndrome
     * @return true if bits 7..5 are 011
     */
    static bool IsNakSyndrome(uint8_t syndrome);
    /**
     * @brief Build an ACK syndrome.
     * @param creditCount the credit count code, 0..31 (31 = unlimited)
     * @return the syndrome
     */
    static uint8_t AckSyndrome(uint8_t creditCount);
    /**
     * @brief Build an RNR NAK syndrome.
     * @param rnrTimerCode the RNR timer code, 0..31
     * @return the syndrome
     */
    static uint8_t RnrNakSyndrome(uint8_t rnrTimerCode);

  private:
    uint8_t m_syndrome; //!< Syndrome
    uint32_t m_msn;     //!< Message Sequence Number, 24 bits
};

} // namespace ns3

#endif /* IB_AETH_HEADER_H */

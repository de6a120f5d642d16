/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_DETH_HEADER_H
#define IB_DETH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand Datagram Extended Transport Header (DETH), 8 bytes, carried by UD packets.
 *
 * Wire layout (big-endian): Q_Key 32 | reserved 8, SrcQP 24. The reserved byte is written as 0
 * and ignored on reading.
 */
class IbDethHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 8;

    /// @brief Create a DETH with Q_Key 0 and SrcQP 0.
    IbDethHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbDethHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 8
     */
    uint32_t GetSerializedSize() const override;
    /**
     * @brief Write the header (big-endian fields, reserved byte 0).
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
     * @brief Print the fields with Wireshark's names, e.g. "Queue Key: 0x00000b1b, ...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the Queue Key.
     * @param qkey the Q_Key
     */
    void SetQKey(uint32_t qkey);
    /**
     * @brief Get the Queue Key.
     * @return the Q_Key
     */
    uint32_t GetQKey() const;
    /**
     * @brief Set the Source QP.
     * @param srcQp the QP number, 0..0xFFFFFF (24 bits)
     */
    void SetSrcQp(uint32_t srcQp);
    /**
     * @brief Get the Source QP.
     * @return the QP number
     */
    uint32_t GetSrcQp() const;

  private:
    uint32_t m_qkey;  //!< Queue Key
    uint32_t m_srcQp; //!< Source QP, 24 bits
};

} // namespace ns3

#endif /* IB_DETH_HEADER_H */

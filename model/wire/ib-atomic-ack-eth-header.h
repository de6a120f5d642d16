/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ATOMIC_ACK_ETH_HEADER_H
#define IB_ATOMIC_ACK_ETH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand Atomic Acknowledge Extended Transport Header (AtomicAckETH), 8 bytes.
 *
 * Wire layout: the 64-bit original remote data, big-endian. Follows the AETH in an RC ATOMIC
 * ACKNOWLEDGE.
 */
class IbAtomicAckEthHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 8;

    /// @brief Create an AtomicAckETH with original data 0.
    IbAtomicAckEthHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbAtomicAckEthHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 8
     */
    uint32_t GetSerializedSize() const override;
    /**
     * @brief Write the header (big-endian).
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
     * @brief Print the field with Wireshark's name: "Original Remote Data: 0x...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the original remote data (the value before the atomic operation).
     * @param originalData the data
     */
    void SetOriginalData(uint64_t originalData);
    /**
     * @brief Get the original remote data.
     * @return the data
     */
    uint64_t GetOriginalData() const;

  private:
    uint64_t m_originalData; //!< Original remote data
};

} // namespace ns3

#endif /* IB_ATOMIC_ACK_ETH_HEADER_H */

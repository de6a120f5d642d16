/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_IMMDT_HEADER_H
#define IB_IMMDT_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand Immediate Data Extended Transport Header (ImmDt), 4 bytes.
 *
 * Wire layout: the 32-bit immediate data, big-endian. Carried by the "with Immediate" opcodes.
 */
class IbImmDtHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 4;

    /// @brief Create an ImmDt with immediate data 0.
    IbImmDtHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbImmDtHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 4
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
     * @return the number of bytes read (4), or 0 if fewer than 4 bytes remain (nothing is read)
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    /**
     * @brief Print the field with Wireshark's name: "Immediate Data: 0x...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the Immediate Data.
     * @param immediateData the data
     */
    void SetImmediateData(uint32_t immediateData);
    /**
     * @brief Get the Immediate Data.
     * @return the data
     */
    uint32_t GetImmediateData() const;

  private:
    uint32_t m_immediateData; //!< Immediate Data
};

} // namespace ns3

#endif /* IB_IMMDT_HEADER_H */

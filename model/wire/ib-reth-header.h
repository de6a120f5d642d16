/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_RETH_HEADER_H
#define IB_RETH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand RDMA Extended Transport Header (RETH), 16 bytes.
 *
 * Wire layout (big-endian): VA 64 | R_Key 32 | DMA length 32. Carried by RDMA WRITE First/Only
 * and RDMA READ Request.
 */
class IbRethHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 16;

    /// @brief Create a RETH with every field 0.
    IbRethHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbRethHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 16
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
     * @return the number of bytes read (16), or 0 if fewer than 16 bytes remain (nothing is read)
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    /**
     * @brief Print the fields with Wireshark's names, e.g. "Virtual Address: 0x..., ...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the Virtual Address.
     * @param va the remote virtual address
     */
    void SetVirtualAddress(uint64_t va);
    /**
     * @brief Get the Virtual Address.
     * @return the remote virtual address
     */
    uint64_t GetVirtualAddress() const;
    /**
     * @brief Set the Remote Key.
     * @param rkey the R_Key
     */
    void SetRKey(uint32_t rkey);
    /**
     * @brief Get the Remote Key.
     * @return the R_Key
     */
    uint32_t GetRKey() const;
    /**
     * @brief Set the DMA Length.
     * @param dmaLength the length in bytes of the RDMA operation
     */
    void SetDmaLength(uint32_t dmaLength);
    /**
     * @brief Get the DMA Length.
     * @return the length in bytes of the RDMA operation
     */
    uint32_t GetDmaLength() const;

  private:
    uint64_t m_va;        //!< Virtual Address
    uint32_t m_rkey;      //!< Remote Key
    uint32_t m_dmaLength; //!< DMA Length
};

} // namespace ns3

#endif /* IB_RETH_HEADER_H */

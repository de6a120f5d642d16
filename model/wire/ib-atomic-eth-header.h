/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ATOMIC_ETH_HEADER_H
#define IB_ATOMIC_ETH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand Atomic Extended Transport Header (AtomicETH), 28 bytes.
 *
 * Wire layout (big-endian): VA 64 | R_Key 32 | SwapOrAdd 64 | Compare 64. Carried by
 * CmpSwap and FetchAdd.
 */
class IbAtomicEthHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 28;

    /// @brief Create an AtomicETH with every field 0.
    IbAtomicEthHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbAtomicEthHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 28
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
     * @return the number of bytes read (28), or 0 if fewer than 28 bytes remain (nothing is read)
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
     * @brief Set the Swap (CmpSwap) or Add (FetchAdd) data.
     * @param swapOrAdd the operand
     */
    void SetSwapOrAdd(uint64_t swapOrAdd);
    /**
     * @brief Get the Swap (CmpSwap) or Add (FetchAdd) data.
     * @return the operand
     */
    uint64_t GetSwapOrAdd() const;
    /**
     * @brief Set the Compare data (CmpSwap).
     * @param compare the compare operand
     */
    void SetCompare(uint64_t compare);
    /**
     * @brief Get the Compare data.
     * @return the compare operand
     */
    uint64_t GetCompare() const;

  private:
    uint64_t m_va;        //!< Virtual Address
    uint32_t m_rkey;      //!< Remote Key
    uint64_t m_swapOrAdd; //!< Swap or Add data
    uint64_t m_compare;   //!< Compare data
};

} // namespace ns3

#endif /* IB_ATOMIC_ETH_HEADER_H */

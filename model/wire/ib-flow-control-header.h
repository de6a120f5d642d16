/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_FLOW_CONTROL_HEADER_H
#define IB_FLOW_CONTROL_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand link-level flow-control packet, 6 bytes.
 *
 * Wire layout: Op 4, FCTBS 12 | VL 4, FCCL 12 (big-endian) | LPCRC 16. The LPCRC is computed by
 * Serialize() with IbCrc::ComputeLpcrc() over the first 4 bytes and written least significant
 * byte first, like the VCRC it shares its polynomial with. Deserialize() keeps the received LPCRC;
 * IsLpcrcValid() checks it against the received fields.
 */
class IbFlowControlHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 6;
    /// Op value of a normal flow-control packet.
    static constexpr uint8_t OP_NORMAL = 0;
    /// Op value of a flow-control init packet.
    static constexpr uint8_t OP_INIT = 1;

    /// @brief Create a normal flow-control packet for VL 0 with FCTBS 0 and FCCL 0.
    IbFlowControlHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbFlowControlHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 6
     */
    uint32_t GetSerializedSize() const override;
    /**
     * @brief Write the packet, with the LPCRC computed from the fields.
     * @param start where to write it
     */
    void Serialize(Buffer::Iterator start) const override;
    /**
     * @brief Read the packet, keeping the received LPCRC (see IsLpcrcValid()).
     * @param start where the packet starts
     * @return the number of bytes read (6), or 0 if fewer than 6 bytes remain (nothing is read)
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    /**
     * @brief Print the fields with Wireshark's names, e.g. "Operand: 0, ...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the Op field.
     * @param op OP_NORMAL or OP_INIT (0..15)
     */
    void SetOp(uint8_t op);
    /**
     * @brief Get the Op field.
     * @return the op
     */
    uint8_t GetOp() const;
    /**
     * @brief Set the Flow Control Total Blocks Sent (64-byte blocks sent on the VL, mod 4096).
     * @param fctbs the FCTBS, 0..4095
     */
    void SetFctbs(uint16_t fctbs);
    /**
     * @brief Get the Flow Control Total Blocks Sent.
     * @return the FCTBS
     */
    uint16_t GetFctbs() const;
    /**
     * @brief Set the Virtual Lane the packet is about.
     * @param vl the VL, 0..15
     */
    void SetVl(uint8_t vl);
    /**
     * @brief Get the Virtual Lane.
     * @return the VL
     */
    uint8_t GetVl() const;
    /**
     * @brief Set the Flow Control Credit Limit (mod 4096).
     * @param fccl the FCCL, 0..4095
     */
    void SetFccl(uint16_t fccl);
    /**
     * @brief Get the Flow Control Credit Limit.
     * @return the FCCL
     */
    uint16_t GetFccl() const;
    /**
     * @brief Get the LPCRC: the received one after Deserialize(), otherwise the one that
     * Serialize() would write for the current fields.
     * @return the LPCRC
     */
    uint16_t GetLpcrc() const;
    /**
     * @brief Tell whether the LPCRC matches the fields.
     * @return true if GetLpcrc() equals the LPCRC computed over the fields
     */
    bool IsLpcrcValid() const;

    /**
     * @brief The packet's first four bytes as one big-endian number: Op (bits 31-28),
     * FCTBS (27-16), VL (15-12), FCCL (11-0). IbChannel carries it instead of a packet.
     * @return the word
     */
    uint32_t GetFirstWord() const;

    /**
     * The first word of a flow-control packet with these fields (each kept to its width,
     * as GetFirstWord does), without a header object: what the model sends per packet.
     * @param op the Op
     * @param fctbs the FCTBS
     * @param vl the VL
     * @param fccl the FCCL
     * @return the word
     */
    static uint32_t FirstWordOf(uint8_t op, uint16_t fctbs, uint8_t vl, uint16_t fccl)
    {
        return (static_cast<uint32_t>(op & 0xF) << 28) |
               (static_cast<uint32_t>(fctbs & 0xFFF) << 16) |
               (static_cast<uint32_t>(vl & 0xF) << 12) | (fccl & 0xFFFu);
    }

    /// @param word a first word (GetFirstWord) @return its Op
    static uint8_t OpOf(uint32_t word)
    {
        return static_cast<uint8_t>(word >> 28);
    }

    /// @param word a first word (GetFirstWord) @return its FCTBS
    static uint16_t FctbsOf(uint32_t word)
    {
        return static_cast<uint16_t>((word >> 16) & 0xFFF);
    }

    /// @param word a first word (GetFirstWord) @return its VL
    static uint8_t VlOf(uint32_t word)
    {
        return static_cast<uint8_t>((word >> 12) & 0xF);
    }

    /// @param word a first word (GetFirstWord) @return its FCCL
    static uint16_t FcclOf(uint32_t word)
    {
        return static_cast<uint16_t>(word & 0xFFF);
    }

  private:
    /**
     * @brief Write the first 4 bytes (Op, FCTBS, VL, FCCL) of the packet.
     * @param out 4 bytes
     */
    void FirstFourBytes(uint8_t* out) const;
    /**
     * @brief Compute the LPCRC of the current fields.
     * @return the LPCRC
     */
    uint16_t ComputeLpcrc() const;

    uint8_t m_op;         //!< Op, 4 bits
    uint16_t m_fctbs;     //!< FCTBS, 12 bits
    uint8_t m_vl;         //!< VL, 4 bits
    uint16_t m_fccl;      //!< FCCL, 12 bits
    uint16_t m_lpcrc;     //!< LPCRC received by Deserialize()
    bool m_lpcrcReceived; //!< m_lpcrc holds a received LPCRC (no field set since)
};

} // namespace ns3

#endif /* IB_FLOW_CONTROL_HEADER_H */

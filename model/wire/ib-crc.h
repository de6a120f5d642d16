/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_CRC_H
#define IB_CRC_H

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief The CRCs of the InfiniBand link and transport layers: ICRC, VCRC and LPCRC.
 *
 * All functions are static and thread-safe; the class has no state.
 *
 * - ICRC (invariant CRC): CRC-32 with the Ethernet polynomial 0x04C11DB7, reflected, initial
 *   value and final XOR 0xFFFFFFFF (the same value as zlib's crc32()). It covers the packet from
 *   the first LRH byte through the last pad byte, with the fields that may change in flight
 *   replaced by 1s (see ComputeIcrc()). It is written on the wire least significant byte first.
 * - VCRC (variant CRC): CRC-16 with polynomial 0x100B, reflected, initial value 0xFFFF, final
 *   XOR 0xFFFF, over the packet from the first LRH byte through the ICRC, nothing masked. It is
 *   written on the wire least significant byte first.
 * - LPCRC (link packet CRC of a flow-control packet): IBA defines it with the VCRC polynomial
 *   0x100B, initial value 0xFFFF and a final inversion; this module computes it exactly like the
 *   VCRC (reflected) over the first 4 bytes of the flow-control packet.
 *
 * Both ICRC and VCRC masking and byte order were confirmed on every packet of a real ibdump
 * capture. The bulk computations read eight bytes per step (slicing by eight). The "zero tail"
 * functions serve the simulator's hot path, where the payload is virtual (known to be all zero
 * bytes and never materialised): the update of the CRC register over n zero bytes is a linear map
 * over GF(2), so it is applied with precomputed byte-sliced tables for n = 2^k (k = 0..16),
 * composed by the bits of n, at a cost of O(log n) table look-ups (for n >= 2^17, far above any
 * InfiniBand packet, the 2^16 map is repeated n / 2^16 times).
 */
class IbCrc
{
  public:
    /**
     * @brief Compute the ICRC of a packet.
     *
     * The masked (variant) fields are chosen by the LNH field, pkt[1] & 0x3:
     * - LNH = 2 (IBA local): LRH VL (high nibble of byte 0) set to 1s and the BTH byte after
     *   P_Key (FECN, BECN, reserved; packet offset 12) set to 0xFF;
     * - LNH = 3 (IBA global): the whole 8-byte LRH set to 0xFF, GRH TClass (8 bits after IPVer),
     *   FlowLabel (20 bits) and HopLmt (GRH byte 7) set to 1s, and the BTH byte after P_Key
     *   (packet offset 52) set to 0xFF;
     * - LNH = 0 or 1 (raw packets carry no ICRC): only the LRH VL is masked.
     * Fields beyond len are not masked. The input is never modified.
     *
     * @param pkt the packet from the first LRH byte through the last pad byte
     * @param len the number of bytes at pkt
     * @return the ICRC value; on the wire its least significant byte comes first
     */
    static uint32_t ComputeIcrc(const uint8_t* pkt, uint32_t len);

    /**
     * @brief Compute the VCRC of a packet.
     * @param pkt the packet from the first LRH byte through the last ICRC byte
     * @param len the number of bytes at pkt
     * @return the VCRC value; on the wire its least significant byte comes first
     */
    static uint16_t ComputeVcrc(const uint8_t* pkt, uint32_t len);

    /**
     * @brief Compute the ICRC of a packet whose bytes after a header part are all zero.
     *
     * Equal to ComputeIcrc() of (hdr followed by zeroLen zero bytes), at a cost of
     * O(hdrLen + log zeroLen).
     *
     * @param hdr the first hdrLen bytes of the packet (starting with the LRH)
     * @param hdrLen the number of bytes at hdr
     * @param zeroLen the number of zero bytes that follow (payload and pad)
     * @return the ICRC value
     */
    static uint32_t ComputeIcrcZeroTail(const uint8_t* hdr, uint32_t hdrLen, uint32_t zeroLen);

    /**
     * @brief Compute the VCRC of a packet whose bytes between a header part and the ICRC are all
     * zero.
     *
     * Equal to ComputeVcrc() of (hdr, then zeroLen zero bytes, then the 4 bytes of icrc, least
     * significant first), at a cost of O(hdrLen + log zeroLen).
     *
     * @param hdr the first hdrLen bytes of the packet (starting with the LRH)
     * @param hdrLen the number of bytes at hdr
     * @param zeroLen the number of zero bytes that follow (payload and pad)
     * @param icrc the ICRC of the packet
     * @return the VCRC value
     */
    static uint16_t ComputeVcrcZeroTail(const uint8_t* hdr,
                                        uint32_t hdrLen,
                                        uint32_t zeroLen,
                                        uint32_t icrc);

    /**
     * @brief Update a VCRC after byte 0 of the covered region (LRH VL/LVer) changed.
     *
     * By linearity of the CRC, the new value is the old one XOR the CRC register contribution
     * of (oldByte0 XOR newByte0) followed by len - 1 zero bytes. Cost O(log len).
     *
     * @param oldVcrc the VCRC of the packet before the change
     * @param oldByte0 the old value of byte 0
     * @param newByte0 the new value of byte 0
     * @param len the number of bytes covered by the VCRC (LRH through ICRC), at least 1
     * @return the VCRC of the packet after the change
     */
    static uint16_t UpdateVcrcForFirstByte(uint16_t oldVcrc,
                                           uint8_t oldByte0,
                                           uint8_t newByte0,
                                           uint32_t len);

    /**
     * @brief Compute the LPCRC of a flow-control packet.
     *
     * CRC-16 with the VCRC polynomial 0x100B (reflected), initial value 0xFFFF and final
     * inversion (XOR 0xFFFF), over the first 4 bytes (Op, FCTBS, VL, FCCL) of the packet.
     *
     * @param fc4 the first 4 bytes of the flow-control packet
     * @return the LPCRC value
     */
    static uint16_t ComputeLpcrc(const uint8_t* fc4);

    /// Number of leading packet bytes that can contain ICRC-masked fields (LRH + GRH + BTH).
    static constexpr uint32_t ICRC_MASKED_PREFIX = 60;
};

} // namespace ns3

#endif /* IB_CRC_H */

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
 *
 * The plain CRC-32 functions (Crc32(), Crc32Extend(), Crc32ExtendZeros(), Crc32Delta(),
 * UpdateCrc32()) serve the Ethernet FCS (EthFrame) and the RoCEv2 ICRC (RocePacket) with the
 * same tables: the FCS of a frame with a virtual payload is extended over the zeros, and the
 * FCS of a frame edited in flight (ECN mark, TTL, MAC addresses) is updated from the changed
 * bytes alone.
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
     * @brief Update a VCRC after one byte of the covered region changed (a switch setting
     * FECN in the BTH, for instance).
     *
     * The change d at @p offset reaches the final register as Z^(len - offset)(d), Z one zero
     * byte. Cost O(log len).
     *
     * @param oldVcrc the VCRC of the packet before the change
     * @param offset the byte's offset from the first LRH byte (less than @p len)
     * @param oldByte its old value
     * @param newByte its new value
     * @param len the number of bytes covered by the VCRC (LRH through ICRC)
     * @return the VCRC of the packet after the change
     */
    static uint16_t UpdateVcrcForByte(uint16_t oldVcrc,
                                      uint32_t offset,
                                      uint8_t oldByte,
                                      uint8_t newByte,
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

    /**
     * @brief Compute the plain CRC-32 of a byte string (IEEE 802.3 FCS, zlib's crc32()).
     *
     * The ICRC's CRC without any masking: polynomial 0x04C11DB7, reflected, initial value and
     * final XOR 0xFFFFFFFF. The Ethernet FCS is this value, written least significant byte first.
     *
     * @param data the bytes
     * @param len the number of bytes at data
     * @return the CRC-32 value
     */
    static uint32_t Crc32(const uint8_t* data, uint32_t len);

    /**
     * @brief Continue a CRC-32 over more bytes.
     *
     * Crc32Extend(Crc32(a, n), b, m) equals Crc32 of a followed by b, as zlib's
     * crc32(crc, buf, len) chaining. Crc32Extend(0, data, len) equals Crc32(data, len).
     *
     * @param crc the CRC-32 of the bytes before data
     * @param data the bytes that follow
     * @param len the number of bytes at data
     * @return the CRC-32 of the whole
     */
    static uint32_t Crc32Extend(uint32_t crc, const uint8_t* data, uint32_t len);

    /**
     * @brief Continue a CRC-32 over zero bytes, in O(log zeros) table look-ups.
     *
     * Equal to Crc32Extend(crc, (zeros zero bytes), zeros), without the bytes.
     *
     * @param crc the CRC-32 of the bytes before the zeros
     * @param zeros the number of zero bytes that follow
     * @return the CRC-32 of the whole
     */
    static uint32_t Crc32ExtendZeros(uint32_t crc, uint32_t zeros);

    /**
     * @brief The change of the CRC-32 of a region when some of its bytes change.
     *
     * A CRC with fixed initial value and final XOR is affine over GF(2): changing bytes
     * [offset, offset + n) of an L-byte region by XORing them with x changes its CRC-32 by the
     * value returned here, which depends on x and on the L - offset - n bytes after the change
     * only (not on the region's other bytes). So the new CRC is the old one XOR this delta, at a
     * cost of O(n + log(L - offset - n)): the rest of the region is never read.
     *
     * @param xorBytes x: old bytes XOR new bytes, n of them
     * @param n the number of changed bytes (bytes of x that are 0 are unchanged ones)
     * @param offset the offset of the first changed byte in the region
     * @param len L, the number of bytes the CRC covers; offset + n <= len
     * @return the value to XOR into the region's CRC-32
     */
    static uint32_t Crc32Delta(const uint8_t* xorBytes, uint32_t n, uint32_t offset, uint32_t len);

    /**
     * @brief Update the CRC-32 of a region after bytes of it changed (Crc32Delta()).
     * @param crc the CRC-32 of the region before the change
     * @param oldBytes the n bytes at offset before the change
     * @param newBytes the n bytes at offset after the change
     * @param n the number of bytes compared, at most 64
     * @param offset the offset of oldBytes in the region
     * @param len the number of bytes the CRC covers; offset + n <= len
     * @return the CRC-32 of the region after the change
     */
    static uint32_t UpdateCrc32(uint32_t crc,
                                const uint8_t* oldBytes,
                                const uint8_t* newBytes,
                                uint32_t n,
                                uint32_t offset,
                                uint32_t len);

    /// Number of leading packet bytes that can contain ICRC-masked fields (LRH + GRH + BTH).
    static constexpr uint32_t ICRC_MASKED_PREFIX = 60;

    /// Most bytes UpdateCrc32() compares in one call.
    static constexpr uint32_t UPDATE_MAX_BYTES = 64;
};

} // namespace ns3

#endif /* IB_CRC_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PACKET_H
#define IB_PACKET_H

#include "ib-bth-header.h"
#include "ib-grh-header.h"
#include "ib-lrh-header.h"

#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief Assembles and edits complete IBA packets (LRH ... ICRC VCRC) held in ns3::Packet.
 *
 * The packet's bytes are always the bytes on the wire: LRH PktLen, BTH PadCnt, GRH
 * PayLen, ICRC and VCRC are computed here from the actual contents. Payload may be
 * "virtual" (a zero-filled ns3::Packet area that costs no memory); Seal() is then told
 * how many trailing bytes are zeros and extends the CRCs over them in O(log n) instead
 * of reading them (IbCrc::ComputeIcrcZeroTail), which keeps packet construction off
 * the profile.
 */
class IbPacket
{
  public:
    /// Bytes of LRH.
    static constexpr uint32_t LRH_SIZE = 8;
    /// Bytes of GRH.
    static constexpr uint32_t GRH_SIZE = 40;
    /// Bytes of BTH.
    static constexpr uint32_t BTH_SIZE = 12;
    /// Bytes of ICRC + VCRC.
    static constexpr uint32_t CRC_SIZE = 6;
    /// Bytes of a credit block.
    static constexpr uint32_t BLOCK_SIZE = 64;

    /**
     * @param payloadBytes payload length
     * @return the number of pad bytes (0..3) that round it up to a 4-byte multiple
     */
    static uint32_t PadFor(uint32_t payloadBytes);

    /**
     * @param payloadBytes payload length
     * @param extBytes extension-header bytes after BTH
     * @param global true if a GRH is present
     * @return wire size of the packet, LRH through VCRC
     */
    static uint32_t WireSize(uint32_t payloadBytes, uint32_t extBytes, bool global);

    /**
     * @param wireBytes packet size on the wire
     * @return the credit blocks it occupies
     */
    static uint32_t Blocks(uint32_t wireBytes)
    {
        return (wireBytes + BLOCK_SIZE - 1) / BLOCK_SIZE;
    }

    /**
     * Turn a transport payload into a complete IBA packet.
     *
     * On entry @p p holds the extension headers (if any) followed by the payload. Seal
     * pads the payload to a 4-byte multiple, sets BTH PadCnt, GRH PayLen (if @p grh),
     * LRH LNH and PktLen, adds the headers and appends ICRC and VCRC.
     *
     * @param p the packet, modified in place
     * @param lrh the LRH to use (VL, SL, DLID, SLID, LVer are taken from it)
     * @param grh a GRH, or nullptr for a local packet
     * @param bth the BTH to use
     * @param zeroTailBytes how many bytes at the end of @p p are known to be zero
     *        (the virtual payload); 0 if the payload holds real data
     */
    static void Seal(Ptr<Packet> p,
                     IbLrhHeader lrh,
                     const IbGrhHeader* grh,
                     IbBthHeader bth,
                     uint32_t zeroTailBytes);

    /**
     * Turn a payload into a raw datagram: LRH (LNH = 0) | RWH (EtherType) | payload,
     * padded with zeros to a 4-byte multiple (raw datagrams have no pad count; the
     * payload's own length field tells the receiver where it ends) | VCRC.
     * @param p the payload, modified in place
     * @param lrh the LRH to use
     * @param etherType the payload's EtherType
     */
    static void SealRaw(Ptr<Packet> p, IbLrhHeader lrh, uint16_t etherType);

    /**
     * @param p a sealed packet
     * @return its LRH, read from the first 8 bytes without copying the packet
     */
    static IbLrhHeader PeekLrh(Ptr<const Packet> p);

    /**
     * The first four bytes of a packet as one big-endian number: for a data packet the
     * LRH's VL (bits 31-28), SL (23-20) and DLID (15-0); for a flow-control packet Op,
     * FCTBS, VL and FCCL. Ports, cables and switches carry it beside the packet so that
     * forwarding does not read the packet's buffer.
     * @param p a packet of at least four bytes
     * @return its first four bytes
     */
    static uint32_t PeekHead(const Packet& p);

    /**
     * @param head a data packet's first four bytes (PeekHead)
     * @param vl a VL
     * @return @p head with its VL field (bits 31-28) set to @p vl
     */
    static uint32_t HeadWithVl(uint32_t head, uint8_t vl)
    {
        return (head & 0x0FFFFFFFu) | (static_cast<uint32_t>(vl & 0xF) << 28);
    }

    /**
     * @param head a data packet's first four bytes (PeekHead)
     * @return the LRH's Link Next Header (bits 17-16), one of IbLrhHeader's LNH_* constants
     */
    static uint8_t LnhOfHead(uint32_t head)
    {
        return static_cast<uint8_t>((head >> 16) & 0x3);
    }

    /**
     * Rewrite the LRH VL field of a sealed packet and update its VCRC (not its ICRC,
     * which does not cover VL). Costs a few buffer operations and O(log n) table
     * look-ups, independent of the payload size.
     * @param p the packet
     * @param vl the new VL
     */
    static void SetVl(Ptr<Packet> p, uint8_t vl);

    /**
     * Set FECN in the BTH of a sealed IBA transport packet (a switch marking congestion,
     * IBA annex A10) and update its VCRC; the ICRC does not cover FECN. Raw packets carry
     * no BTH and are left alone, as is a packet already marked.
     * @param p the packet
     * @param head its first four bytes (PeekHead), for the LNH
     * @return true if the packet was marked now
     */
    static bool SetFecn(Ptr<Packet> p, uint32_t head);
};

} // namespace ns3

#endif /* IB_PACKET_H */

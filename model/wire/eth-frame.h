/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_FRAME_H
#define ETH_FRAME_H

#include "ns3/mac48-address.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <array>
#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief Builds, checks and edits Ethernet II frames held in ns3::Packet (static functions only).
 *
 * A frame's packet holds the bytes from the destination MAC address through the FCS: the
 * preamble, start-of-frame delimiter and inter-frame gap are not in the packet but count in
 * the time a frame takes on the wire (WireBytes()). No 802.1Q tag is used: the priority of a
 * frame is its IPv4 DSCP (the port's DSCP -> priority map).
 *
 * The frame is written with ns-3's own EthernetHeader and EthernetTrailer (and an IPv4 frame's
 * header is ns-3's Ipv4Header), so that packet printing and ascii traces show the headers and
 * the ns-3 stack removes them as it added them. The FCS is the CRC-32 of IEEE 802.3 (the
 * ICRC's CRC, IbCrc::Crc32()), over the destination MAC through the last pad byte, written
 * least significant byte first as on the wire.
 *
 * Costs: Frame() reads the real bytes of the packet once and extends the FCS over a virtual
 * (all-zero) payload in O(log n) (IbCrc::Crc32ExtendZeros()); SetCe() and RewriteHop() edit
 * the first 34 bytes as bytes (EthRawHeader; ns-3's headers on packets that record
 * metadata), update the IPv4 header checksum incrementally (RFC 1624) and the FCS from the
 * changed bytes alone (IbCrc::Crc32Delta()), whatever the frame's length. The Peek*() functions
 * read fields in place from a frame's first bytes (copied out with CopyHead()), like IbHeaderView.
 * Only ComputeFcs() and CheckFcs() of a Packet read every byte: they serve tests and captures; a
 * port models bit errors with its error model instead of recomputing every FCS.
 */
class EthFrame
{
  public:
    /// Bytes of the Ethernet II header: destination MAC, source MAC, EtherType.
    static constexpr uint32_t HEADER_SIZE = 14;
    /// Bytes of the FCS.
    static constexpr uint32_t FCS_SIZE = 4;
    /// Bytes of preamble and start-of-frame delimiter before each frame on the wire.
    static constexpr uint32_t PREAMBLE_SFD = 8;
    /// Bytes of the minimum inter-frame gap after each frame on the wire.
    static constexpr uint32_t IFG = 12;
    /// Bytes of the shortest frame, header through FCS (shorter ones are zero-padded).
    static constexpr uint32_t MIN_FRAME = 64;
    /// Bytes of the shortest frame body, between header and FCS (MIN_FRAME - 14 - 4).
    static constexpr uint32_t MIN_BODY = MIN_FRAME - HEADER_SIZE - FCS_SIZE;
    /// Bytes of an IPv4 header without options.
    static constexpr uint32_t IPV4_HEADER_SIZE = 20;
    /// EtherType of IPv4.
    static constexpr uint16_t ETHERTYPE_IPV4 = 0x0800;
    /// EtherType of ARP.
    static constexpr uint16_t ETHERTYPE_ARP = 0x0806;
    /// EtherType of MAC control frames (PAUSE, PFC).
    static constexpr uint16_t ETHERTYPE_MAC_CONTROL = 0x8808;
    /// MAC control opcode of a PFC (IEEE 802.1Qbb priority-based flow control) frame.
    static constexpr uint16_t PFC_OPCODE = 0x0101;
    /// Bytes of a PFC frame's body before its padding: opcode, class-enable vector, 8 times.
    static constexpr uint32_t PFC_BODY = 2 + 2 + 8 * 2;

    /// @return the destination MAC address of PFC frames, 01:80:C2:00:00:01
    static Mac48Address PfcDestination();

    /**
     * @param frameBytes the frame's size, header through FCS
     * @return the bytes it occupies on the wire: max(frameBytes, 64) + preamble/SFD (8) + IFG
     *         (12)
     */
    static uint32_t WireBytes(uint32_t frameBytes)
    {
        return (frameBytes < MIN_FRAME ? MIN_FRAME : frameBytes) + PREAMBLE_SFD + IFG;
    }

    /**
     * Turn a packet into an Ethernet II frame: add the header, zero padding up to 60 bytes
     * before the FCS if the frame is short, and the FCS.
     *
     * @param p the frame body on entry (e.g. an IPv4 packet), the whole frame on return
     * @param src the source MAC address
     * @param dst the destination MAC address
     * @param etherType the EtherType of the body
     * @param zeroTail how many bytes at the end of @p p are known to be zero (a virtual
     *        payload): the FCS is extended over them in O(log n) instead of reading them;
     *        0 if the body holds real data
     */
    static void Frame(Ptr<Packet> p,
                      Mac48Address src,
                      Mac48Address dst,
                      uint16_t etherType,
                      uint32_t zeroTail);

    /**
     * Frame() for a body whose zero bytes are followed by a few known bytes (RoCEv2: the
     * virtual payload and pad, then the ICRC). The body is [real bytes][zeros zero
     * bytes][tailLen bytes equal to tail]; only the real bytes are read from @p p.
     *
     * @param p the frame body on entry, the whole frame on return
     * @param src the source MAC address
     * @param dst the destination MAC address
     * @param etherType the EtherType of the body
     * @param zeros how many zero bytes precede the tail
     * @param tail the last tailLen bytes of the body (the caller's copy)
     * @param tailLen the number of bytes at tail
     */
    static void FrameWithTail(Ptr<Packet> p,
                              Mac48Address src,
                              Mac48Address dst,
                              uint16_t etherType,
                              uint32_t zeros,
                              const uint8_t* tail,
                              uint32_t tailLen);

    /**
     * Remove the header and the FCS; for an IPv4 frame, also the padding of a short frame
     * (the body is trimmed to the IPv4 total length). The FCS is not checked.
     * @param p a frame on entry, its body on return
     * @return the EtherType
     */
    static uint16_t Unframe(Ptr<Packet> p);

    /**
     * @param frame a frame's bytes from the destination MAC, without the FCS
     * @param len the number of bytes at frame
     * @return their FCS (CRC-32; on the wire least significant byte first)
     */
    static uint32_t ComputeFcs(const uint8_t* frame, uint32_t len);

    /**
     * Reads every byte of the packet (O(n)): for tests and captures.
     * @param frameWithoutFcs a frame from the destination MAC, without the FCS
     * @return its FCS
     */
    static uint32_t ComputeFcs(const Packet& frameWithoutFcs);

    /**
     * Reads every byte of the packet (O(n)): for tests and captures.
     * @param frame a whole frame, header through FCS
     * @return true if its last 4 bytes are the FCS of the bytes before them
     */
    static bool CheckFcs(const Packet& frame);

    /**
     * @param frame a whole frame's bytes, header through FCS
     * @param len the number of bytes at frame
     * @return true if the last 4 bytes are the FCS of the bytes before them
     */
    static bool CheckFcs(const uint8_t* frame, uint32_t len);

    /**
     * Copy a frame's first bytes, for the Peek*() functions and IbHeaderView.
     * @param frame the frame
     * @param buf where to copy
     * @param max the size of buf
     * @return the number of bytes copied: min(frame size, max)
     */
    static uint32_t CopyHead(const Packet& frame, uint8_t* buf, uint32_t max);

    /**
     * A PFC (IEEE 802.1Qbb) frame: destination 01:80:C2:00:00:01, EtherType 0x8808, opcode
     * 0x0101, the class-enable vector (bit i: priority i; the high byte of the 16-bit field
     * is reserved, 0), eight pause times in quanta of 512 bit times (priority 0 first), zero
     * padding, FCS: 64 bytes.
     * @param src the sending port's MAC address
     * @param classEnable the priorities whose time is valid
     * @param quanta the pause time of each priority (0: resume)
     * @return the frame
     */
    static Ptr<Packet> MakePfc(Mac48Address src,
                               uint8_t classEnable,
                               const std::array<uint16_t, 8>& quanta);

    /**
     * Decode a PFC frame from its first bytes. A frame is a PFC frame if its EtherType is
     * 0x8808 and its opcode 0x0101 (the destination address is not checked, nor the FCS).
     * @param frame the frame's bytes from the destination MAC
     * @param len the number of bytes at frame (at least 34 for a PFC frame)
     * @param classEnable receives the class-enable vector
     * @param quanta receives the eight pause times
     * @return false (outputs unchanged) if it is not a PFC frame
     */
    static bool ParsePfc(const uint8_t* frame,
                         uint32_t len,
                         uint8_t& classEnable,
                         std::array<uint16_t, 8>& quanta);

    /**
     * @param frame at least 14 bytes of a frame
     * @return its EtherType
     */
    static uint16_t PeekEtherType(const uint8_t* frame)
    {
        return static_cast<uint16_t>((frame[12] << 8) | frame[13]);
    }

    /**
     * @param frame at least 34 bytes of a frame
     * @return true if it is IPv4 (EtherType 0x0800, version 4) without IP options
     */
    static bool IsPlainIpv4(const uint8_t* frame)
    {
        return PeekEtherType(frame) == ETHERTYPE_IPV4 && frame[HEADER_SIZE] == 0x45;
    }

    /// The 5-tuple of an IPv4 frame (ECMP hashing).
    struct FlowKey
    {
        uint32_t srcIp{0};   //!< source IPv4 address
        uint32_t dstIp{0};   //!< destination IPv4 address
        uint16_t srcPort{0}; //!< UDP or TCP source port; 0 for other protocols and fragments
        uint16_t dstPort{0}; //!< UDP or TCP destination port; 0 likewise
        uint8_t protocol{0}; //!< IPv4 protocol
    };

    /**
     * Read an IPv4 frame's 5-tuple in place. The ports are read for UDP (17) and TCP (6) when
     * the frame is not a non-first fragment and @p len holds them; otherwise they are 0.
     * @param frame the frame's first bytes, from the destination MAC
     * @param len the number of bytes at frame
     * @param key receives the 5-tuple
     * @return false (key unchanged) if the bytes are not an IPv4 frame's headers
     */
    static bool PeekFlow(const uint8_t* frame, uint32_t len, FlowKey& key);

    /**
     * @param frame at least 16 bytes of an IPv4 frame
     * @return its DSCP (0..63)
     */
    static uint8_t PeekDscp(const uint8_t* frame)
    {
        return frame[HEADER_SIZE + 1] >> 2;
    }

    /**
     * @param frame at least 16 bytes of an IPv4 frame
     * @return its ECN field: 0 not ECT, 1 ECT(1), 2 ECT(0), 3 CE
     */
    static uint8_t PeekEcn(const uint8_t* frame)
    {
        return frame[HEADER_SIZE + 1] & 0x3;
    }

    /**
     * @param frame at least 34 bytes of an IPv4 frame
     * @return its destination IPv4 address (host order, as Ipv4Address::Get())
     */
    static uint32_t PeekDstIp(const uint8_t* frame)
    {
        const uint8_t* d = frame + HEADER_SIZE + 16;
        return (static_cast<uint32_t>(d[0]) << 24) | (static_cast<uint32_t>(d[1]) << 16) |
               (static_cast<uint32_t>(d[2]) << 8) | d[3];
    }

    /**
     * Mark an ECN-capable IPv4 frame Congestion Experienced (ECN 11), and update its IPv4
     * header checksum and its FCS from the changed bytes (O(log n), the payload is not read).
     * A frame already CE is left as it is (and true returned).
     *
     * IPv4 header checksum: rewritten to the correct value for the new header (for a header
     * whose checksum was right, the value RFC 1624's incremental update gives); a checksum
     * of 0 in a header it does not verify (the ns-3 stack's frames with checksums disabled,
     * Node's ChecksumEnabled false) stays 0.
     *
     * @param frame a whole frame
     * @return false (frame unchanged) if the frame is not IPv4 without options, or not
     *         ECN-capable (ECN 00)
     */
    static bool SetCe(Ptr<Packet> frame);

    /**
     * What an IPv4 router does to a frame per hop: new source and destination MAC addresses,
     * TTL decremented, IPv4 header checksum (as SetCe()) and FCS updated from the changed
     * bytes (O(log n)).
     * @param frame a whole frame
     * @param src the new source MAC address (the output port's)
     * @param dst the new destination MAC address (the next hop's)
     * @return false (frame unchanged) if the TTL is 1 or 0 (the packet must be dropped), or
     *         if the frame is not IPv4 without options (check PeekEtherType() first to tell
     *         the two apart)
     */
    static bool RewriteHop(Ptr<Packet> frame, Mac48Address src, Mac48Address dst);

    /// Bytes of a frame that RewriteHop() and SetCe() change: the Ethernet and IPv4 headers.
    static constexpr uint32_t EDIT_BYTES = HEADER_SIZE + IPV4_HEADER_SIZE;

    /**
     * RewriteHop() for a switch that has already copied the frame's first bytes (CopyHead()),
     * and that may also mark it Congestion Experienced (as SetCe()) in the same edit.
     * @param frame a whole frame
     * @param head the frame's first EDIT_BYTES bytes, as they are now
     * @param src the new source MAC address
     * @param dst the new destination MAC address
     * @param markCe true to also set ECN to CE (ignored unless the frame is ECN-capable)
     * @return as RewriteHop()
     */
    static bool RewriteHop(Ptr<Packet> frame,
                           const uint8_t* head,
                           Mac48Address src,
                           Mac48Address dst,
                           bool markCe);
};

} // namespace ns3

#endif /* ETH_FRAME_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ROCE_PACKET_H
#define ROCE_PACKET_H

#include "eth-frame.h"
#include "ib-bth-header.h"
#include "ib-header-view.h"

#include "ns3/ipv4-address.h"
#include "ns3/mac48-address.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief Assembles RoCEv2 packets (IBA transport over UDP/IPv4 over Ethernet) in ns3::Packet
 * (static functions only, like IbPacket).
 *
 * A RoCEv2 frame is: Ethernet header (14) | IPv4 (20, no options, DF, protocol 17) | UDP (8,
 * destination port 4791, checksum 0) | BTH (12) | extension headers | payload | pad (0..3) |
 * ICRC (4) | Ethernet padding if the frame is short | FCS (4). The IBA LRH and GRH are
 * replaced by the Ethernet and IP headers; the BTH and what follows are the IBA transport's
 * own, decoded by IbHeaderView::AtBth() (View()).
 *
 * The ICRC is computed by the rules of the RoCEv2 annex (IBA annex A17) for IPv4: CRC-32 (as
 * the IBA ICRC and the Ethernet FCS) over 8 bytes of 0xFF standing for the LRH, then the IPv4
 * header through the last pad byte, with the fields that change in flight taken as 1s: IPv4
 * TOS (DSCP and ECN), TTL and header checksum, UDP checksum, and the BTH byte after P_Key
 * (FECN, BECN, reserved). It is written least significant byte first, as in IBA. The masking
 * and byte order were checked against a CNP captured on a ConnectX-4 Lx (see the tests).
 *
 * As IbPacket::Seal, Seal() reads the real bytes once and extends the ICRC and the FCS over a
 * virtual payload in O(log n); a switch's SetCe and RewriteHop (EthFrame) change only fields
 * the ICRC does not cover, so the ICRC stays valid end to end.
 */
class RocePacket
{
  public:
    /// Bytes of the IPv4 header (no options).
    static constexpr uint32_t IPV4_SIZE = 20;
    /// Bytes of the UDP header.
    static constexpr uint32_t UDP_SIZE = 8;
    /// Bytes of the ICRC.
    static constexpr uint32_t ICRC_SIZE = 4;
    /// UDP destination port of RoCEv2 (IANA).
    static constexpr uint16_t UDP_PORT = 4791;
    /// Offset of the BTH in a RoCEv2 frame: Ethernet, IPv4 and UDP headers.
    static constexpr uint32_t BTH_OFFSET = EthFrame::HEADER_SIZE + IPV4_SIZE + UDP_SIZE;
    /// Bytes after the pad: ICRC and FCS.
    static constexpr uint32_t TRAILER_SIZE = ICRC_SIZE + EthFrame::FCS_SIZE;
    /// BTH opcode of a congestion notification packet (RoCEv2 annex: CNP).
    static constexpr uint8_t CNP_OPCODE = 0x81;
    /// Reserved (zero) bytes after a CNP's BTH.
    static constexpr uint32_t CNP_RESERVED = 16;
    /// IPv4 protocol number of UDP.
    static constexpr uint8_t IP_PROTOCOL_UDP = 17;

    /// The addresses and IP/UDP fields of one RoCEv2 packet.
    struct Addressing
    {
        Mac48Address srcMac;         //!< source MAC address (the sending port's)
        Mac48Address dstMac;         //!< destination MAC address (the next hop's)
        Ipv4Address srcIp;           //!< source IPv4 address
        Ipv4Address dstIp;           //!< destination IPv4 address
        uint8_t dscp{0};             //!< DSCP, 0..63
        uint8_t ecn{2};              //!< ECN: 0 not ECT, 1 ECT(1), 2 ECT(0) (default), 3 CE
        uint8_t ttl{64};             //!< IPv4 TTL
        uint16_t udpSrcPort{0xC000}; //!< UDP source port (flow entropy for ECMP)
    };

    /**
     * @param payloadBytes payload length
     * @param extBytes extension-header bytes after the BTH
     * @return the frame's bytes, destination MAC through FCS, padding to 64 included
     */
    static uint32_t FrameSize(uint32_t payloadBytes, uint32_t extBytes);

    /**
     * Turn a transport payload into a complete RoCEv2 frame.
     *
     * On entry @p p holds the extension headers (if any) followed by the payload. Seal pads
     * the payload to a 4-byte multiple, sets BTH PadCnt, adds the BTH, the UDP header (source
     * port from @p a, destination 4791, length, checksum 0), the IPv4 header (total length,
     * identification 0, DF, TTL, DSCP and ECN from @p a, header checksum), the ICRC, then the
     * Ethernet header and FCS (EthFrame::FrameWithTail()).
     *
     * @param p the packet, modified in place
     * @param a the addresses and IP fields
     * @param bth the BTH to use (its PadCnt is set here)
     * @param zeroTail how many bytes at the end of @p p are known to be zero (the virtual
     *        payload); 0 if the payload holds real data
     */
    static void Seal(Ptr<Packet> p, const Addressing& a, IbBthHeader bth, uint32_t zeroTail);

    /**
     * The RoCEv2 ICRC of an IPv4 packet (masking as in the class description; the UDP and BTH
     * offsets follow the IPv4 header length). The input is never modified.
     * @param ip the packet from the first IPv4 header byte through the last pad byte
     * @param len the number of bytes at @p ip
     * @return the ICRC; on the wire its least significant byte comes first
     */
    static uint32_t ComputeIcrc(const uint8_t* ip, uint32_t len);

    /**
     * ComputeIcrc() of (ipHdr followed by zeroLen zero bytes), at a cost of
     * O(hdrLen + log zeroLen).
     * @param ipHdr the first hdrLen bytes, from the first IPv4 header byte
     * @param hdrLen the number of bytes at ipHdr
     * @param zeroLen the number of zero bytes that follow (virtual payload and pad)
     * @return the ICRC
     */
    static uint32_t ComputeIcrcZeroTail(const uint8_t* ipHdr, uint32_t hdrLen, uint32_t zeroLen);

    /**
     * @param frame a frame's first bytes, from the destination MAC
     * @param len the number of bytes at frame
     * @return true if they are Ethernet / IPv4 without options, not a fragment / UDP to port
     *         4791, with room for the BTH
     */
    static bool IsRoce(const uint8_t* frame, uint32_t len);

    /**
     * Check a whole RoCEv2 frame's ICRC (it reads every byte: for tests and captures). The
     * ICRC is found from the IPv4 total length, so an Ethernet-padded frame is checked right.
     * @param frame the frame, destination MAC through FCS (or at least through the ICRC)
     * @param len the number of bytes at frame
     * @return true if IsRoce() and the ICRC matches
     */
    static bool CheckIcrc(const uint8_t* frame, uint32_t len);

    /**
     * @param frame a RoCEv2 frame's first bytes (IsRoce())
     * @param len the number of bytes at frame
     * @return the IBA decoder over them: IbHeaderView::AtBth(frame, len, BTH_OFFSET)
     */
    static IbHeaderView View(const uint8_t* frame, uint32_t len)
    {
        return IbHeaderView::AtBth(frame, len, BTH_OFFSET);
    }

    /**
     * A CNP (RoCEv2 congestion notification packet) for the DCQCN notification point: BTH with
     * opcode 0x81, BECN set, P_Key 0xFFFF, PSN 0 and the destination QP, 16 reserved zero
     * bytes, ICRC, FCS (78 bytes).
     * @param a the addresses (back to the sender of the marked packet); a.dscp is the CNP's
     *        DSCP; a.ecn is not used: a CNP is not ECN-capable (ECN 0)
     * @param destQp the QP to notify (the marked packet's source QP)
     * @return the frame
     */
    static Ptr<Packet> MakeCnp(const Addressing& a, uint32_t destQp);
};

} // namespace ns3

#endif /* ROCE_PACKET_H */

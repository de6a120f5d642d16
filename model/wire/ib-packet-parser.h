/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PACKET_PARSER_H
#define IB_PACKET_PARSER_H

#include "ib-aeth-header.h"
#include "ib-atomic-ack-eth-header.h"
#include "ib-atomic-eth-header.h"
#include "ib-bth-header.h"
#include "ib-deth-header.h"
#include "ib-grh-header.h"
#include "ib-header-view.h"
#include "ib-immdt-header.h"
#include "ib-lrh-header.h"
#include "ib-reth-header.h"

#include <cstdint>
#include <sstream>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief Validating parser of one InfiniBand packet given as contiguous wire bytes.
 *
 * Parse() takes the bytes from the first LRH byte through the VCRC (as in an ibdump/ERF
 * capture), checks them and fills the public members. Checks, in this order (the first failure
 * is reported):
 * 1. the buffer holds an LRH and a VCRC;
 * 2. the VCRC (last 2 bytes, least significant first) matches the bytes before it;
 * 3. LRH PktLen * 4 + 2 equals the buffer length;
 * 4. LNH 2 or 3: there is room for the ICRC and it matches (IbCrc::ComputeIcrc());
 * 5. the structure: GRH present (LNH 3) with IPVer 6, NxtHdr 0x1B and PayLen matching, BTH
 *    present, opcode known, extension headers (per opcode) within the packet, pad count not
 *    larger than the bytes after the headers.
 * The CRCs are checked before the structure, as a receiving port does, so that a corrupted bit
 * anywhere is reported as a CRC error; a structural error with good CRCs means that the sender
 * built the packet wrongly.
 *
 * Raw packets: LNH 0 has a 4-byte raw header (reserved 16, EtherType 16) after the LRH, then the
 * payload, then the VCRC (no ICRC); LNH 1 (IPv6, non-IBA) has the IPv6 packet as payload right
 * after the LRH, then the VCRC.
 *
 * The header fields are decoded by IbHeaderView (the decoder the per-packet paths use too) over
 * the bytes before the trailer, whose Has*() checks bound every read; the trailers are read
 * through bounds-checked accessors. The input is never modified. This class serves tests and
 * capture checks, not the simulator's per-packet path.
 */
class IbPacketParser
{
  public:
    /// @brief Create a parser holding no packet.
    IbPacketParser();

    /**
     * @brief Validate and parse a packet.
     * @param data the packet from the first LRH byte through the VCRC
     * @param len the number of bytes at data
     * @param error if not null, receives a precise description of the first problem found, or
     * is cleared on success
     * @return true if the packet is well-formed and both CRCs are correct
     */
    bool Parse(const uint8_t* data, uint32_t len, std::string* error);

    /**
     * @brief Validate and parse a RoCEv2 frame (RocePacket).
     *
     * Takes the frame from the destination MAC through the FCS (as in a DLT_EN10MB capture
     * with FCS). Checks, in this order (the first failure is reported):
     * 1. the buffer holds the Ethernet, IPv4, UDP and BTH headers, an ICRC and an FCS;
     * 2. the FCS (last 4 bytes, least significant first) matches the bytes before it;
     * 3. EtherType IPv4, IPv4 version 4 without options, header checksum right, protocol UDP,
     *    not a fragment, total length within the frame (what follows it up to the FCS is
     *    Ethernet padding, allowed only in a 64-byte frame), UDP destination port 4791, UDP
     *    length equal to the IPv4 payload;
     * 4. the ICRC (RocePacket::ComputeIcrc());
     * 5. the transport, as Parse(): opcode known (or the CNP opcode, 0x81, whose 16 reserved
     *    bytes count as its payload), extension headers within the packet, pad count.
     * The IBA fields are decoded by IbHeaderView::AtBth(); m_lrh is left at its default and
     * m_hasGrh false; m_payloadOffset counts from the destination MAC.
     *
     * @param frame the frame from the destination MAC through the FCS
     * @param len the number of bytes at frame
     * @param error if not null, receives a precise description of the first problem found, or
     * is cleared on success
     * @return true if the frame is a well-formed RoCEv2 packet and its FCS, IPv4 checksum and
     * ICRC are correct
     */
    bool ParseRoce(const uint8_t* frame, uint32_t len, std::string* error);

    /// @brief Forget the last packet: every member back to its initial value.
    void Reset();

    IbLrhHeader m_lrh;                   //!< the LRH
    bool m_hasGrh;                       //!< whether a GRH was parsed (LNH 3)
    IbGrhHeader m_grh;                   //!< the GRH, valid if m_hasGrh
    bool m_hasBth;                       //!< whether a BTH was parsed (LNH 2 or 3)
    IbBthHeader m_bth;                   //!< the BTH, valid if m_hasBth
    bool m_hasDeth;                      //!< whether a DETH was parsed
    IbDethHeader m_deth;                 //!< the DETH, valid if m_hasDeth
    bool m_hasReth;                      //!< whether a RETH was parsed
    IbRethHeader m_reth;                 //!< the RETH, valid if m_hasReth
    bool m_hasAtomicEth;                 //!< whether an AtomicETH was parsed
    IbAtomicEthHeader m_atomicEth;       //!< the AtomicETH, valid if m_hasAtomicEth
    bool m_hasAeth;                      //!< whether an AETH was parsed
    IbAethHeader m_aeth;                 //!< the AETH, valid if m_hasAeth
    bool m_hasAtomicAckEth;              //!< whether an AtomicAckETH was parsed
    IbAtomicAckEthHeader m_atomicAckEth; //!< the AtomicAckETH, valid if m_hasAtomicAckEth
    bool m_hasImmDt;                     //!< whether an ImmDt was parsed
    IbImmDtHeader m_immDt;               //!< the ImmDt, valid if m_hasImmDt
    bool m_hasRawHeader;                 //!< whether a raw header was parsed (LNH 0)
    uint16_t m_rawEtherType;             //!< EtherType of the raw header, valid if m_hasRawHeader
    uint32_t m_payloadOffset;            //!< offset of the payload from the first LRH byte
    uint32_t m_payloadLength;            //!< payload bytes, pad excluded
    uint8_t m_padCount;                  //!< pad bytes after the payload (BTH PadCnt)
    bool m_hasIcrc;                      //!< whether the packet carries an ICRC (LNH 2 or 3)
    uint32_t m_receivedIcrc;             //!< the ICRC found in the packet
    uint32_t m_computedIcrc;             //!< the ICRC computed over the packet
    bool m_icrcValid;                    //!< whether the ICRC was checked and is correct
    uint16_t m_receivedVcrc;             //!< the VCRC found in the packet
    uint16_t m_computedVcrc;             //!< the VCRC computed over the packet
    bool m_vcrcValid;                    //!< whether the VCRC was checked and is correct
    bool m_isRoce;                       //!< whether ParseRoce() parsed the packet
    uint32_t m_srcIp;                    //!< RoCE: IPv4 source address (host order)
    uint32_t m_dstIp;                    //!< RoCE: IPv4 destination address (host order)
    uint8_t m_dscp;                      //!< RoCE: IPv4 DSCP
    uint8_t m_ecn;                       //!< RoCE: IPv4 ECN
    uint8_t m_ttl;                       //!< RoCE: IPv4 TTL
    uint16_t m_udpSrcPort;               //!< RoCE: UDP source port
    uint32_t m_receivedFcs;              //!< RoCE: the FCS found in the frame
    uint32_t m_computedFcs;              //!< RoCE: the FCS computed over the frame
    bool m_fcsValid;                     //!< RoCE: whether the FCS was checked and is correct

  private:
    /**
     * @brief Check and decode the BTH and what follows (step 5 of Parse() and ParseRoce()).
     * @param view the view of the bytes before the ICRC, its BTH located
     * @param covered the number of bytes before the ICRC
     * @param offset the offset of the BTH
     * @param msg receives the problem, if any
     * @return true if the transport headers and pad are well-formed
     */
    bool ParseTransport(IbHeaderView& view,
                        uint32_t covered,
                        uint32_t offset,
                        std::ostringstream& msg);

    /**
     * @brief Read one byte.
     * @param offset the offset of the byte
     * @return the byte, or 0 if offset is not below m_len (which the callers rule out)
     */
    uint8_t ByteAt(uint32_t offset) const;
    /**
     * @brief Read a little-endian value of n bytes (n <= 4).
     * @param offset the offset of the first byte
     * @param n the number of bytes
     * @return the value
     */
    uint32_t LittleEndianAt(uint32_t offset, uint32_t n) const;

    const uint8_t* m_data; //!< bytes being parsed (only during Parse())
    uint32_t m_len;        //!< number of bytes at m_data
};

} // namespace ns3

#endif /* IB_PACKET_PARSER_H */

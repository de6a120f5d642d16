/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "roce-packet.h"

#include "ib-crc.h"
#include "ib-packet.h"
#include "ib-pad-trailer.h"
#include "roce-icrc-trailer.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/ipv4-header.h"
#include "ns3/log.h"
#include "ns3/udp-header.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RocePacket");

namespace
{

/// Bytes kept on the stack when copying the real (non-virtual) part of a packet.
constexpr uint32_t kStackBytes = 512;

/// Bytes of 0xFF that stand for the LRH at the start of the ICRC's input.
constexpr uint32_t kLrhOnes = 8;

/// Most IPv4 bytes that can hold masked fields: a 60-byte header, UDP, BTH through byte 4.
constexpr uint32_t kMaskedMax = 60 + RocePacket::UDP_SIZE + 5;

/**
 * @param p two bytes
 * @return them as a big-endian number
 */
uint16_t
ReadBe16(const uint8_t* p)
{
    return static_cast<uint16_t>((p[0] << 8) | p[1]);
}

/**
 * Copy the first @p len bytes of @p p: to the stack buffer if they fit, else to a buffer kept
 * for the thread and reused.
 * @param p the packet
 * @param len bytes to copy
 * @param stack a kStackBytes buffer
 * @return the buffer holding the bytes
 */
const uint8_t*
CopyFront(const Packet& p, uint32_t len, uint8_t* stack)
{
    uint8_t* buf = stack;
    if (len > kStackBytes)
    {
        thread_local std::vector<uint8_t> scratch;
        if (scratch.size() < len)
        {
            scratch.resize(len);
        }
        buf = scratch.data();
    }
    p.CopyData(buf, len);
    return buf;
}

} // namespace

uint32_t
RocePacket::FrameSize(uint32_t payloadBytes, uint32_t extBytes)
{
    const uint32_t bytes = BTH_OFFSET + IbPacket::BTH_SIZE + extBytes + payloadBytes +
                           IbPacket::PadFor(payloadBytes) + TRAILER_SIZE;
    return std::max(bytes, EthFrame::MIN_FRAME);
}

uint32_t
RocePacket::ComputeIcrc(const uint8_t* ip, uint32_t len)
{
    return ComputeIcrcZeroTail(ip, len, 0);
}

uint32_t
RocePacket::ComputeIcrcZeroTail(const uint8_t* ipHdr, uint32_t hdrLen, uint32_t zeroLen)
{
    NS_ASSERT_MSG(ipHdr != nullptr || hdrLen == 0, "RocePacket::ComputeIcrcZeroTail: null");
    const uint64_t total = static_cast<uint64_t>(hdrLen) + zeroLen;
    // The masked fields: IPv4 TOS (1), TTL (8), header checksum (10, 11); UDP checksum (6, 7
    // after the IPv4 header); BTH byte 4 (FECN, BECN, reserved).
    const uint32_t ihl = (hdrLen > 0) ? (ipHdr[0] & 0x0F) * 4u : IPV4_SIZE;
    const uint32_t udp = std::max(ihl, IPV4_SIZE);
    const uint32_t bth4 = udp + UDP_SIZE + 4;
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(total, bth4 + 1));
    uint8_t prefix[kLrhOnes + kMaskedMax];
    std::memset(prefix, 0xFF, kLrhOnes);
    uint8_t* m = prefix + kLrhOnes;
    const uint32_t copied = std::min(hdrLen, n);
    if (copied > 0)
    {
        std::memcpy(m, ipHdr, copied);
    }
    std::memset(m + copied, 0, n - copied);
    for (uint32_t offset : {1u, 8u, 10u, 11u, udp + 6, udp + 7, bth4})
    {
        if (offset < n)
        {
            m[offset] = 0xFF;
        }
    }
    uint32_t crc = IbCrc::Crc32(prefix, kLrhOnes + n);
    if (hdrLen > n)
    {
        crc = IbCrc::Crc32Extend(crc, ipHdr + n, hdrLen - n);
    }
    return IbCrc::Crc32ExtendZeros(crc, static_cast<uint32_t>(total - std::max(hdrLen, n)));
}

bool
RocePacket::IsRoce(const uint8_t* frame, uint32_t len)
{
    if (len < BTH_OFFSET || !EthFrame::IsPlainIpv4(frame))
    {
        return false;
    }
    const uint8_t* ip = frame + EthFrame::HEADER_SIZE;
    const bool fragment = (ReadBe16(ip + 6) & 0x3FFF) != 0; // MF or an offset
    return ip[9] == IP_PROTOCOL_UDP && !fragment && ReadBe16(ip + IPV4_SIZE + 2) == UDP_PORT;
}

bool
RocePacket::CheckIcrc(const uint8_t* frame, uint32_t len)
{
    if (!IsRoce(frame, len))
    {
        return false;
    }
    const uint32_t total = ReadBe16(frame + EthFrame::HEADER_SIZE + 2);
    if (total < IPV4_SIZE + UDP_SIZE + ICRC_SIZE || EthFrame::HEADER_SIZE + total > len)
    {
        return false;
    }
    const uint8_t* ip = frame + EthFrame::HEADER_SIZE;
    const uint8_t* icrc = ip + total - ICRC_SIZE;
    const uint32_t received =
        static_cast<uint32_t>(icrc[0]) | (static_cast<uint32_t>(icrc[1]) << 8) |
        (static_cast<uint32_t>(icrc[2]) << 16) | (static_cast<uint32_t>(icrc[3]) << 24);
    return ComputeIcrc(ip, total - ICRC_SIZE) == received;
}

void
RocePacket::Seal(Ptr<Packet> p, const Addressing& a, IbBthHeader bth, uint32_t zeroTail)
{
    NS_LOG_FUNCTION(p << a.srcIp << a.dstIp << +bth.GetOpcode() << zeroTail);
    NS_ASSERT_MSG(zeroTail <= p->GetSize(),
                  "zeroTail " << zeroTail << " exceeds the packet size " << p->GetSize());
    NS_ABORT_MSG_IF(a.dscp > 63, "RocePacket::Seal: DSCP " << +a.dscp << " is not in 0..63");
    NS_ABORT_MSG_IF(a.ecn > 3, "RocePacket::Seal: ECN " << +a.ecn << " is not in 0..3");
    // Extension headers are multiples of 4 bytes, so the pad depends on the payload only.
    const uint32_t pad = IbPacket::PadFor(p->GetSize());
    if (pad != 0)
    {
        p->AddTrailer(IbPadTrailer(static_cast<uint8_t>(pad)));
    }
    bth.SetPadCnt(static_cast<uint8_t>(pad));
    p->AddHeader(bth);
    const uint32_t udpLength = UDP_SIZE + p->GetSize() + ICRC_SIZE;
    NS_ABORT_MSG_IF(IPV4_SIZE + udpLength > 0xFFFF,
                    "RocePacket::Seal: a " << p->GetSize() - IbPacket::BTH_SIZE
                                           << "-byte payload does not fit an IPv4 packet: send "
                                              "at most the path MTU per packet");
    // A placeholder ICRC first, so that the UDP header (which takes its length from the bytes
    // after it) and the IPv4 header count it.
    p->AddTrailer(RoceIcrcTrailer(0));
    UdpHeader udp;
    udp.SetSourcePort(a.udpSrcPort);
    udp.SetDestinationPort(UDP_PORT);
    p->AddHeader(udp);
    Ipv4Header ip;
    ip.SetSource(a.srcIp);
    ip.SetDestination(a.dstIp);
    ip.SetProtocol(IP_PROTOCOL_UDP);
    ip.SetPayloadSize(static_cast<uint16_t>(udpLength));
    ip.SetIdentification(0);
    ip.SetDontFragment();
    ip.SetTtl(a.ttl);
    ip.SetTos(static_cast<uint8_t>((a.dscp << 2) | a.ecn));
    ip.EnableChecksum();
    p->AddHeader(ip);

    // ICRC over the IPv4 header through the last pad byte: the real bytes, then the zeros.
    const uint32_t zeros = zeroTail + pad;
    const uint32_t realLen = p->GetSize() - ICRC_SIZE - zeros;
    uint8_t stack[kStackBytes];
    const uint8_t* real = CopyFront(*p, realLen, stack);
    const uint32_t icrc = ComputeIcrcZeroTail(real, realLen, zeros);
    RoceIcrcTrailer trailer;
    p->RemoveTrailer(trailer);
    trailer.SetIcrc(icrc);
    p->AddTrailer(trailer);

    const uint8_t icrcBytes[ICRC_SIZE] = {static_cast<uint8_t>(icrc),
                                          static_cast<uint8_t>(icrc >> 8),
                                          static_cast<uint8_t>(icrc >> 16),
                                          static_cast<uint8_t>(icrc >> 24)};
    EthFrame::FrameWithTail(p,
                            a.srcMac,
                            a.dstMac,
                            EthFrame::ETHERTYPE_IPV4,
                            zeros,
                            icrcBytes,
                            ICRC_SIZE);
}

Ptr<Packet>
RocePacket::MakeCnp(const Addressing& a, uint32_t destQp)
{
    NS_LOG_FUNCTION(a.srcIp << a.dstIp << destQp);
    Ptr<Packet> p = Create<Packet>(CNP_RESERVED);
    IbBthHeader bth;
    bth.SetOpcode(CNP_OPCODE);
    bth.SetBecn(true);
    bth.SetDestQp(destQp);
    bth.SetPsn(0);
    Addressing cnp = a;
    cnp.ecn = 0;
    Seal(p, cnp, bth, CNP_RESERVED);
    return p;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-frame.h"

#include "eth-pad-trailer.h"
#include "eth-raw-header.h"
#include "ib-crc.h"

#include "ns3/assert.h"
#include "ns3/ethernet-header.h"
#include "ns3/ethernet-trailer.h"
#include "ns3/ipv4-header.h"
#include "ns3/log.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthFrame");

namespace
{

/// Bytes kept on the stack when copying the real (non-virtual) part of a frame.
constexpr uint32_t kStackBytes = 512;

/// Bytes SetCe() and RewriteHop() may change: the Ethernet header and the IPv4 header.
constexpr uint32_t kEditBytes = EthFrame::EDIT_BYTES;

/**
 * Copy the first @p len bytes of @p p: to the stack buffer if they fit, else to a buffer kept
 * for the thread and reused (no allocation per call once it has grown).
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

/**
 * @param p four bytes
 * @return them as a little-endian number (the FCS's byte order)
 */
uint32_t
ReadLe32(const uint8_t* p)
{
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
           (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

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
 * @param ip a 20-byte IPv4 header
 * @return true if its header checksum is right (the one's complement sum of its 16-bit words
 *         is 0xFFFF)
 */
bool
Ipv4ChecksumVerifies(const uint8_t* ip)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i < EthFrame::IPV4_HEADER_SIZE; i += 2)
    {
        sum += ReadBe16(ip + i);
    }
    while (sum > 0xFFFF)
    {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return sum == 0xFFFF;
}

/**
 * Update the IPv4 header checksum at @p ip + 10 for one 16-bit word changed from @p oldWord
 * to @p newWord (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m')).
 * @param ip the IPv4 header
 * @param oldWord the 16-bit word before the change
 * @param newWord the word after it
 */
void
UpdateIpChecksum(uint8_t* ip, uint16_t oldWord, uint16_t newWord)
{
    uint32_t sum = static_cast<uint16_t>(~ReadBe16(ip + 10));
    sum += static_cast<uint16_t>(~oldWord);
    sum += newWord;
    while (sum > 0xFFFF)
    {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    const uint16_t checksum = static_cast<uint16_t>(~sum);
    ip[10] = static_cast<uint8_t>(checksum >> 8);
    ip[11] = static_cast<uint8_t>(checksum & 0xFF);
}

/**
 * Make the edits of SetCe() and RewriteHop() on a copy of a frame's first kEditBytes.
 * @param b the bytes, changed in place
 * @param newMacs if not null, the new source (first) and destination (second) addresses
 * @param decrementTtl true to decrement the TTL
 * @param markCe true to set ECN to CE
 * @return true if the IPv4 checksum is the ns-3 stack's 0 (checksums disabled) and stays 0
 */
bool
EditBytes(uint8_t* b,
          const std::pair<Mac48Address, Mac48Address>* newMacs,
          bool decrementTtl,
          bool markCe)
{
    uint8_t* ip = b + EthFrame::HEADER_SIZE;
    // ns-3's stack writes a zero checksum when checksums are disabled: keep that convention.
    const bool keepZero = ip[10] == 0 && ip[11] == 0 && !Ipv4ChecksumVerifies(ip);
    if (markCe)
    {
        const uint16_t before = ReadBe16(ip);
        ip[1] |= Ipv4Header::ECN_CE;
        if (!keepZero)
        {
            UpdateIpChecksum(ip, before, ReadBe16(ip));
        }
    }
    if (decrementTtl)
    {
        const uint16_t before = ReadBe16(ip + 8);
        --ip[8];
        if (!keepZero)
        {
            UpdateIpChecksum(ip, before, ReadBe16(ip + 8));
        }
    }
    if (newMacs != nullptr)
    {
        newMacs->second.CopyTo(b);    // destination first
        newMacs->first.CopyTo(b + 6); // then source
    }
    return keepZero;
}

/**
 * Rewrite the Ethernet and IPv4 headers of a frame and update its FCS from the changed bytes.
 *
 * On a packet that records metadata (Packet::EnablePrinting()) the headers are removed and
 * added back as ns-3's EthernetHeader and Ipv4Header, which is what the metadata lists;
 * otherwise as raw bytes (EthRawHeader), without parsing them. The bytes are the same.
 * @param frame the frame: plain IPv4 (EthFrame::IsPlainIpv4), at least kEditBytes + FCS bytes
 * @param old the frame's first kEditBytes bytes
 * @param newMacs if not null, the new source (first) and destination (second) addresses
 * @param decrementTtl true to decrement the TTL
 * @param markCe true to set ECN to CE
 */
void
EditHeaders(Ptr<Packet> frame,
            const uint8_t* old,
            const std::pair<Mac48Address, Mac48Address>* newMacs,
            bool decrementTtl,
            bool markCe)
{
    uint8_t now[kEditBytes];
    std::copy(old, old + kEditBytes, now);
    const bool zeroChecksum = EditBytes(now, newMacs, decrementTtl, markCe);
    if (!frame->BeginItem().HasNext())
    {
        EthRawHeader raw(kEditBytes);
        frame->RemoveHeader(raw);
        std::copy(now, now + kEditBytes, raw.Data());
        frame->AddHeader(raw);
    }
    else
    {
        EthernetHeader eth;
        frame->RemoveHeader(eth);
        Ipv4Header ip;
        frame->RemoveHeader(ip);
        Buffer b;
        b.AddAtStart(kEditBytes);
        b.Begin().Write(now, kEditBytes);
        Buffer::Iterator it = b.Begin();
        it.Next(EthFrame::HEADER_SIZE);
        ip.Deserialize(it); // the edited fields
        if (!zeroChecksum)
        {
            ip.EnableChecksum(); // Serialize writes 0 otherwise; the sum equals EditBytes'
        }
        frame->AddHeader(ip);
        eth.Deserialize(b.Begin());
        frame->AddHeader(eth);
    }
    EthernetTrailer fcs;
    frame->RemoveTrailer(fcs);
    fcs.SetFcs(IbCrc::UpdateCrc32(fcs.GetFcs(), old, now, kEditBytes, 0, frame->GetSize()));
    frame->AddTrailer(fcs);
}

/**
 * Copy the first kEditBytes of a frame that SetCe() or RewriteHop() may edit.
 * @param frame the frame
 * @param old receives the bytes
 * @return true if the frame is long enough and plain IPv4
 */
bool
EditableIpv4(const Packet& frame, uint8_t* old)
{
    if (frame.GetSize() < kEditBytes + EthFrame::FCS_SIZE)
    {
        return false;
    }
    frame.CopyData(old, kEditBytes);
    return EthFrame::IsPlainIpv4(old);
}

} // namespace

Mac48Address
EthFrame::PfcDestination()
{
    static const Mac48Address pfc("01:80:c2:00:00:01");
    return pfc;
}

void
EthFrame::Frame(Ptr<Packet> p,
                Mac48Address src,
                Mac48Address dst,
                uint16_t etherType,
                uint32_t zeroTail)
{
    FrameWithTail(p, src, dst, etherType, zeroTail, nullptr, 0);
}

void
EthFrame::FrameWithTail(Ptr<Packet> p,
                        Mac48Address src,
                        Mac48Address dst,
                        uint16_t etherType,
                        uint32_t zeros,
                        const uint8_t* tail,
                        uint32_t tailLen)
{
    const uint32_t body = p->GetSize();
    NS_ASSERT_MSG(static_cast<uint64_t>(zeros) + tailLen <= body,
                  "EthFrame::Frame: " << zeros << " zero bytes and a " << tailLen
                                      << "-byte tail exceed the " << body << "-byte body");
    NS_ASSERT_MSG(tail != nullptr || tailLen == 0, "EthFrame::FrameWithTail: null tail");
    EthernetHeader eth;
    eth.SetSource(src);
    eth.SetDestination(dst);
    eth.SetLengthType(etherType);
    p->AddHeader(eth);
    const uint32_t pad = body < MIN_BODY ? MIN_BODY - body : 0;
    if (pad != 0)
    {
        p->AddTrailer(EthPadTrailer(static_cast<uint8_t>(pad)));
    }
    // FCS over [header and real bytes][zeros][tail][pad zeros]: the zeros are not read.
    const uint32_t realLen = HEADER_SIZE + body - zeros - tailLen;
    uint8_t stack[kStackBytes];
    const uint8_t* real = CopyFront(*p, realLen, stack);
    uint32_t crc = IbCrc::Crc32(real, realLen);
    if (tailLen == 0)
    {
        crc = IbCrc::Crc32ExtendZeros(crc, zeros + pad);
    }
    else
    {
        crc = IbCrc::Crc32ExtendZeros(crc, zeros);
        crc = IbCrc::Crc32Extend(crc, tail, tailLen);
        crc = IbCrc::Crc32ExtendZeros(crc, pad);
    }
    EthernetTrailer fcs;
    fcs.SetFcs(crc);
    p->AddTrailer(fcs);
}

uint16_t
EthFrame::Unframe(Ptr<Packet> p)
{
    NS_LOG_FUNCTION(p);
    NS_ASSERT_MSG(p->GetSize() >= HEADER_SIZE + FCS_SIZE,
                  "EthFrame::Unframe: a " << p->GetSize() << "-byte packet is not a frame");
    EthernetHeader eth;
    p->RemoveHeader(eth);
    EthernetTrailer fcs;
    p->RemoveTrailer(fcs);
    const uint16_t etherType = eth.GetLengthType();
    if (etherType == ETHERTYPE_IPV4 && p->GetSize() >= IPV4_HEADER_SIZE)
    {
        uint8_t ip[4];
        p->CopyData(ip, sizeof(ip));
        const uint32_t total = ReadBe16(ip + 2);
        if (total >= IPV4_HEADER_SIZE && total < p->GetSize())
        {
            p->RemoveAtEnd(p->GetSize() - total);
        }
    }
    return etherType;
}

uint32_t
EthFrame::ComputeFcs(const uint8_t* frame, uint32_t len)
{
    return IbCrc::Crc32(frame, len);
}

uint32_t
EthFrame::ComputeFcs(const Packet& frameWithoutFcs)
{
    uint8_t stack[kStackBytes];
    const uint32_t len = frameWithoutFcs.GetSize();
    return IbCrc::Crc32(CopyFront(frameWithoutFcs, len, stack), len);
}

bool
EthFrame::CheckFcs(const uint8_t* frame, uint32_t len)
{
    if (len < FCS_SIZE)
    {
        return false;
    }
    return IbCrc::Crc32(frame, len - FCS_SIZE) == ReadLe32(frame + len - FCS_SIZE);
}

bool
EthFrame::CheckFcs(const Packet& frame)
{
    uint8_t stack[kStackBytes];
    const uint32_t len = frame.GetSize();
    return CheckFcs(CopyFront(frame, len, stack), len);
}

uint32_t
EthFrame::CopyHead(const Packet& frame, uint8_t* buf, uint32_t max)
{
    const uint32_t n = std::min(frame.GetSize(), max);
    frame.CopyData(buf, n);
    return n;
}

Ptr<Packet>
EthFrame::MakePfc(Mac48Address src, uint8_t classEnable, const std::array<uint16_t, 8>& quanta)
{
    NS_LOG_FUNCTION(src << +classEnable);
    uint8_t body[PFC_BODY];
    body[0] = static_cast<uint8_t>(PFC_OPCODE >> 8);
    body[1] = static_cast<uint8_t>(PFC_OPCODE & 0xFF);
    body[2] = 0; // reserved high byte of the class-enable vector
    body[3] = classEnable;
    for (uint32_t i = 0; i < 8; ++i)
    {
        body[4 + 2 * i] = static_cast<uint8_t>(quanta[i] >> 8);
        body[5 + 2 * i] = static_cast<uint8_t>(quanta[i] & 0xFF);
    }
    Ptr<Packet> p = Create<Packet>(body, PFC_BODY);
    Frame(p, src, PfcDestination(), ETHERTYPE_MAC_CONTROL, 0);
    return p;
}

bool
EthFrame::ParsePfc(const uint8_t* frame,
                   uint32_t len,
                   uint8_t& classEnable,
                   std::array<uint16_t, 8>& quanta)
{
    if (len < HEADER_SIZE + PFC_BODY || PeekEtherType(frame) != ETHERTYPE_MAC_CONTROL ||
        ReadBe16(frame + HEADER_SIZE) != PFC_OPCODE)
    {
        return false;
    }
    classEnable = frame[HEADER_SIZE + 3];
    for (uint32_t i = 0; i < 8; ++i)
    {
        quanta[i] = ReadBe16(frame + HEADER_SIZE + 4 + 2 * i);
    }
    return true;
}

bool
EthFrame::PeekFlow(const uint8_t* frame, uint32_t len, FlowKey& key)
{
    if (len < HEADER_SIZE + IPV4_HEADER_SIZE || PeekEtherType(frame) != ETHERTYPE_IPV4)
    {
        return false;
    }
    const uint8_t* ip = frame + HEADER_SIZE;
    const uint32_t ihl = (ip[0] & 0x0F) * 4u;
    if ((ip[0] >> 4) != 4 || ihl < IPV4_HEADER_SIZE)
    {
        return false;
    }
    key.protocol = ip[9];
    key.srcIp = (static_cast<uint32_t>(ReadBe16(ip + 12)) << 16) | ReadBe16(ip + 14);
    key.dstIp = (static_cast<uint32_t>(ReadBe16(ip + 16)) << 16) | ReadBe16(ip + 18);
    key.srcPort = 0;
    key.dstPort = 0;
    const bool firstFragment = (ReadBe16(ip + 6) & 0x1FFF) == 0;
    const bool ports = key.protocol == 6 || key.protocol == 17;
    if (ports && firstFragment && len >= HEADER_SIZE + ihl + 4)
    {
        key.srcPort = ReadBe16(ip + ihl);
        key.dstPort = ReadBe16(ip + ihl + 2);
    }
    return true;
}

bool
EthFrame::SetCe(Ptr<Packet> frame)
{
    uint8_t old[kEditBytes];
    if (!EditableIpv4(*frame, old))
    {
        return false;
    }
    const uint8_t ecn = PeekEcn(old);
    if (ecn == Ipv4Header::ECN_NotECT)
    {
        return false;
    }
    if (ecn != Ipv4Header::ECN_CE)
    {
        EditHeaders(frame, old, nullptr, false, true);
    }
    return true;
}

bool
EthFrame::RewriteHop(Ptr<Packet> frame, Mac48Address src, Mac48Address dst)
{
    uint8_t head[kEditBytes];
    return EditableIpv4(*frame, head) && RewriteHop(frame, head, src, dst, false);
}

bool
EthFrame::RewriteHop(Ptr<Packet> frame,
                     const uint8_t* head,
                     Mac48Address src,
                     Mac48Address dst,
                     bool markCe)
{
    if (frame->GetSize() < kEditBytes + FCS_SIZE || !IsPlainIpv4(head) ||
        head[HEADER_SIZE + 8] <= 1)
    {
        return false;
    }
    const uint8_t ecn = PeekEcn(head);
    const bool ce = markCe && ecn != Ipv4Header::ECN_NotECT && ecn != Ipv4Header::ECN_CE;
    const std::pair<Mac48Address, Mac48Address> macs(src, dst);
    EditHeaders(frame, head, &macs, true, ce);
    return true;
}

} // namespace ns3

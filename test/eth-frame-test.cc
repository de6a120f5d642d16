/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Ethernet frames (EthFrame) and the plain CRC-32 functions of IbCrc. Every expected FCS comes
 * from a bit-at-a-time CRC-32 written in this file (polynomial division, no tables), checked
 * against the CRC-32 check value of the standard (the CRC of "123456789" is 0xCBF43926); every
 * expected IPv4 header checksum from a one's complement sum written here; PFC bytes from the
 * field layout of IEEE 802.1Qbb, written out by hand.
 */

#include "ns3/eth-frame.h"
#include "ns3/ib-crc.h"
#include "ns3/ipv4-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/mac48-address.h"
#include "ns3/packet.h"
#include "ns3/udp-header.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

using Bytes = std::vector<uint8_t>;

/// CRC-32 of IEEE 802.3 by polynomial division, one bit at a time: register shifted MSB
/// first, input bits taken least significant first, result bit-reversed, init and final XOR
/// 0xFFFFFFFF.
uint32_t
RefCrc32(const uint8_t* data, size_t len)
{
    uint32_t reg = 0xFFFFFFFF;
    for (size_t n = 0; n < len; ++n)
    {
        for (unsigned bit = 0; bit < 8; ++bit)
        {
            const bool in = ((data[n] >> bit) & 1U) != 0;
            const bool feedback = ((reg >> 31) != 0) != in;
            reg <<= 1;
            if (feedback)
            {
                reg ^= 0x04C11DB7;
            }
        }
    }
    uint32_t out = 0;
    for (unsigned i = 0; i < 32; ++i)
    {
        out = (out << 1) | ((reg >> i) & 1U);
    }
    return out ^ 0xFFFFFFFF;
}

uint32_t
RefCrc32(const Bytes& b)
{
    return RefCrc32(b.data(), b.size());
}

/// @return the packet's bytes
Bytes
BytesOf(Ptr<const Packet> p)
{
    Bytes b(p->GetSize());
    p->CopyData(b.data(), b.size());
    return b;
}

/// @return the little-endian 32-bit number at @p p
uint32_t
Le32(const uint8_t* p)
{
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

/// @return true if the 20-byte IPv4 header at @p ip has a right header checksum
bool
Ipv4ChecksumOk(const uint8_t* ip)
{
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
    {
        sum += (ip[i] << 8) | ip[i + 1];
    }
    sum = (sum & 0xFFFF) + (sum >> 16);
    sum = (sum & 0xFFFF) + (sum >> 16);
    return sum == 0xFFFF;
}

/// Expect the last 4 bytes of @p frame to be the reference CRC-32 of the others.
void
ExpectFcsRight(const Bytes& frame)
{
    ASSERT_GE(frame.size(), 4u);
    EXPECT_EQ(Le32(frame.data() + frame.size() - 4), RefCrc32(frame.data(), frame.size() - 4));
}

const Mac48Address kMacA("02:00:00:00:00:0a");
const Mac48Address kMacB("02:00:00:00:00:0b");

/**
 * An IPv4/UDP packet (ns-3's headers) of @p payload bytes, virtual unless @p real.
 * @param payload UDP payload bytes
 * @param ecn the ECN field
 * @param checksum true to write a real IPv4 header checksum (else 0, as ns-3 without checksums)
 * @param real true for a payload of materialised zero bytes
 */
Ptr<Packet>
UdpPacket(uint32_t payload,
          Ipv4Header::EcnType ecn,
          bool checksum = true,
          bool real = false,
          uint8_t ttl = 64)
{
    Ptr<Packet> p;
    if (real)
    {
        Bytes zeros(payload, 0);
        p = Create<Packet>(zeros.data(), payload);
    }
    else
    {
        p = Create<Packet>(payload);
    }
    UdpHeader udp;
    udp.SetSourcePort(1234);
    udp.SetDestinationPort(5678);
    p->AddHeader(udp);
    Ipv4Header ip;
    ip.SetSource(Ipv4Address("10.0.1.2"));
    ip.SetDestination(Ipv4Address("10.0.2.3"));
    ip.SetProtocol(17);
    ip.SetPayloadSize(p->GetSize());
    ip.SetTtl(ttl);
    ip.SetDscp(Ipv4Header::DSCP_AF31); // 26
    ip.SetEcn(ecn);
    ip.SetIdentification(0x1234);
    if (checksum)
    {
        ip.EnableChecksum();
    }
    p->AddHeader(ip);
    return p;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// IbCrc's plain CRC-32
// ---------------------------------------------------------------------------------------------

TEST(Crc32, MatchesTheCheckValueAndTheBitwiseReference)
{
    const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
    EXPECT_EQ(RefCrc32(check, sizeof(check)), 0xCBF43926u) << "the reference itself";
    EXPECT_EQ(IbCrc::Crc32(check, sizeof(check)), 0xCBF43926u);
    EXPECT_EQ(IbCrc::Crc32(nullptr, 0), 0u);
    std::mt19937 rng(7);
    for (uint32_t len : {1u, 3u, 7u, 8u, 9u, 15u, 16u, 17u, 60u, 64u, 100u, 1514u})
    {
        Bytes b(len);
        for (auto& x : b)
        {
            x = static_cast<uint8_t>(rng());
        }
        EXPECT_EQ(IbCrc::Crc32(b.data(), len), RefCrc32(b)) << len;
        // Chaining at every split point.
        for (uint32_t cut = 0; cut <= len; cut += 1 + len / 7)
        {
            EXPECT_EQ(IbCrc::Crc32Extend(IbCrc::Crc32(b.data(), cut), b.data() + cut, len - cut),
                      RefCrc32(b))
                << len << " cut " << cut;
        }
    }
}

TEST(Crc32, ZeroExtensionEqualsMaterialisedZeros)
{
    const uint8_t head[] = {0xde, 0xad, 0xbe, 0xef, 0x01};
    for (uint32_t zeros :
         {0u, 1u, 2u, 7u, 8u, 63u, 64u, 65u, 1000u, 4096u, 9000u, 65535u, 65536u, 200003u})
    {
        Bytes b(head, head + sizeof(head));
        b.resize(sizeof(head) + zeros, 0);
        EXPECT_EQ(IbCrc::Crc32ExtendZeros(IbCrc::Crc32(head, sizeof(head)), zeros), RefCrc32(b))
            << zeros;
        // No head at all: the zeros from the initial value.
        Bytes z(zeros, 0);
        EXPECT_EQ(IbCrc::Crc32ExtendZeros(0, zeros), RefCrc32(z)) << zeros;
    }
}

TEST(Crc32, DeltaUpdateEqualsFullRecomputation)
{
    std::mt19937 rng(11);
    for (int trial = 0; trial < 300; ++trial)
    {
        const uint32_t len = 1 + rng() % 3000;
        Bytes b(len);
        for (auto& x : b)
        {
            x = static_cast<uint8_t>(rng());
        }
        const uint32_t n = 1 + rng() % std::min<uint32_t>(len, IbCrc::UPDATE_MAX_BYTES);
        const uint32_t offset = rng() % (len - n + 1);
        const uint32_t before = IbCrc::Crc32(b.data(), len);
        const Bytes old(b.begin() + offset, b.begin() + offset + n);
        for (uint32_t i = 0; i < n; ++i)
        {
            b[offset + i] = static_cast<uint8_t>(rng());
        }
        const uint32_t updated =
            IbCrc::UpdateCrc32(before, old.data(), b.data() + offset, n, offset, len);
        EXPECT_EQ(updated, RefCrc32(b)) << "len " << len << " offset " << offset << " n " << n;
        Bytes x(n);
        for (uint32_t i = 0; i < n; ++i)
        {
            x[i] = old[i] ^ b[offset + i];
        }
        EXPECT_EQ(before ^ IbCrc::Crc32Delta(x.data(), n, offset, len), RefCrc32(b));
    }
}

// ---------------------------------------------------------------------------------------------
// Frames
// ---------------------------------------------------------------------------------------------

TEST(EthFrame, WireBytesCountPreambleGapAndMinimumSize)
{
    // 8 bytes preamble + SFD, 12 bytes gap; frames shorter than 64 bytes are padded to 64.
    EXPECT_EQ(EthFrame::WireBytes(64), 84u);
    EXPECT_EQ(EthFrame::WireBytes(20), 84u);
    EXPECT_EQ(EthFrame::WireBytes(1518), 1538u);
    EXPECT_EQ(EthFrame::WireBytes(9018), 9038u);
}

TEST(EthFrame, FrameLaysOutHeaderBodyAndFcs)
{
    const uint8_t body[] = {0x45, 0x00, 0x00, 0x40, 1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                            11,   12,   13,   14,   15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                            25,   26,   27,   28,   29, 30, 31, 32, 33, 34, 35, 36, 37, 38,
                            39,   40,   41,   42,   43, 44, 45, 46, 47, 48, 49, 50, 51, 52,
                            53,   54,   55,   56,   57, 58, 59, 60, 61, 62, 63, 64, 65, 66};
    Ptr<Packet> p = Create<Packet>(body, sizeof(body));
    EthFrame::Frame(p, kMacA, kMacB, 0x88B5, 0);
    const Bytes f = BytesOf(p);
    ASSERT_EQ(f.size(), 14 + sizeof(body) + 4);
    const Bytes dst = {0x02, 0, 0, 0, 0, 0x0b};
    const Bytes src = {0x02, 0, 0, 0, 0, 0x0a};
    EXPECT_EQ(Bytes(f.begin(), f.begin() + 6), dst);
    EXPECT_EQ(Bytes(f.begin() + 6, f.begin() + 12), src);
    EXPECT_EQ(f[12], 0x88);
    EXPECT_EQ(f[13], 0xB5);
    EXPECT_EQ(Bytes(f.begin() + 14, f.end() - 4), Bytes(body, body + sizeof(body)));
    ExpectFcsRight(f);
    EXPECT_TRUE(EthFrame::CheckFcs(*p));
    EXPECT_EQ(EthFrame::PeekEtherType(f.data()), 0x88B5);
    Ptr<Packet> noFcs = p->CreateFragment(0, p->GetSize() - 4);
    EXPECT_EQ(EthFrame::ComputeFcs(*noFcs), Le32(f.data() + f.size() - 4));
    EXPECT_EQ(EthFrame::ComputeFcs(f.data(), f.size() - 4), Le32(f.data() + f.size() - 4));
}

TEST(EthFrame, ShortFramesArePaddedTo64AndUnframeTrimsIpv4Padding)
{
    // An IPv4 packet of 20 + 8 + 2 = 30 bytes: 16 bytes of padding make the frame 64.
    Ptr<Packet> p = UdpPacket(2, Ipv4Header::ECN_NotECT);
    ASSERT_EQ(p->GetSize(), 30u);
    EthFrame::Frame(p, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 2);
    const Bytes f = BytesOf(p);
    ASSERT_EQ(f.size(), 64u);
    for (size_t i = 14 + 30; i < 60; ++i)
    {
        EXPECT_EQ(f[i], 0) << "pad byte " << i;
    }
    ExpectFcsRight(f);
    EXPECT_EQ(EthFrame::Unframe(p), EthFrame::ETHERTYPE_IPV4);
    EXPECT_EQ(p->GetSize(), 30u) << "trimmed to the IPv4 total length";
    Ipv4Header ip;
    p->RemoveHeader(ip);
    EXPECT_EQ(ip.GetDestination(), Ipv4Address("10.0.2.3"));

    // A non-IP short frame keeps its padding; an empty one is padded to 64 as well.
    Ptr<Packet> arp = Create<Packet>(28);
    EthFrame::Frame(arp, kMacA, Mac48Address::GetBroadcast(), EthFrame::ETHERTYPE_ARP, 28);
    EXPECT_EQ(arp->GetSize(), 64u);
    ExpectFcsRight(BytesOf(arp));
    EXPECT_EQ(EthFrame::Unframe(arp), EthFrame::ETHERTYPE_ARP);
    EXPECT_EQ(arp->GetSize(), 46u);
    Ptr<Packet> empty = Create<Packet>();
    EthFrame::Frame(empty, kMacA, kMacB, 0x88B5, 0);
    EXPECT_EQ(empty->GetSize(), 64u);
    ExpectFcsRight(BytesOf(empty));
}

TEST(EthFrame, ZeroTailFcsEqualsMaterialisedPayload)
{
    for (uint32_t payload : {0u, 1u, 17u, 18u, 100u, 1472u, 4096u, 8972u})
    {
        Ptr<Packet> v = UdpPacket(payload, Ipv4Header::ECN_ECT0);
        Ptr<Packet> r = UdpPacket(payload, Ipv4Header::ECN_ECT0, true, true);
        EthFrame::Frame(v, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, payload);
        EthFrame::Frame(r, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 0);
        const Bytes fv = BytesOf(v);
        EXPECT_EQ(fv, BytesOf(r)) << payload;
        ExpectFcsRight(fv);
        EXPECT_EQ(fv.size(), std::max<uint32_t>(64, 14 + 28 + payload + 4));
    }
    // Zeros followed by known tail bytes (how RoCE frames its ICRC), short and long bodies.
    for (uint32_t zeros : {0u, 3u, 40u, 1000u})
    {
        const uint8_t head[] = {9, 8, 7};
        const uint8_t tail[] = {0xA1, 0xB2, 0xC3, 0xD4};
        Bytes body(head, head + 3);
        body.resize(3 + zeros, 0);
        body.insert(body.end(), tail, tail + 4);
        Ptr<Packet> t = Create<Packet>(head, 3);
        t->AddAtEnd(Create<Packet>(zeros));
        t->AddAtEnd(Create<Packet>(tail, 4));
        Ptr<Packet> m = Create<Packet>(body.data(), body.size());
        EthFrame::FrameWithTail(t, kMacA, kMacB, 0x88B5, zeros, tail, 4);
        EthFrame::Frame(m, kMacA, kMacB, 0x88B5, 0);
        EXPECT_EQ(BytesOf(t), BytesOf(m)) << zeros;
        ExpectFcsRight(BytesOf(t));
    }
}

TEST(EthFrame, CheckFcsFindsACorruptedByte)
{
    Ptr<Packet> p = UdpPacket(200, Ipv4Header::ECN_ECT0);
    EthFrame::Frame(p, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 200);
    Bytes f = BytesOf(p);
    EXPECT_TRUE(EthFrame::CheckFcs(f.data(), f.size()));
    for (size_t i : {size_t(0), size_t(13), size_t(100), f.size() - 5, f.size() - 1})
    {
        Bytes g = f;
        g[i] ^= 0x10;
        EXPECT_FALSE(EthFrame::CheckFcs(g.data(), g.size())) << "byte " << i;
        Ptr<Packet> q = Create<Packet>(g.data(), g.size());
        EXPECT_FALSE(EthFrame::CheckFcs(*q)) << "byte " << i;
    }
}

TEST(EthFrame, PfcFrameBytesAreAsIeee8021Qbb)
{
    // XOFF for priorities 3 and 5 (class-enable 0b00101000), times 0xFFFF and 0x1234.
    std::array<uint16_t, 8> quanta{};
    quanta[3] = 0xFFFF;
    quanta[5] = 0x1234;
    Ptr<Packet> p = EthFrame::MakePfc(kMacA, 0x28, quanta);
    const Bytes f = BytesOf(p);
    ASSERT_EQ(f.size(), 64u);
    Bytes expected = {
        0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, // destination: the MAC control multicast address
        0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, // source
        0x88, 0x08,                         // EtherType: MAC control
        0x01, 0x01,                         // opcode: PFC
        0x00, 0x28,                         // class-enable vector
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // times of priorities 0, 1, 2
        0xFF, 0xFF, 0x00, 0x00, 0x12, 0x34, // 3, 4, 5
        0x00, 0x00, 0x00, 0x00,             // 6, 7
    };
    expected.resize(60, 0); // padding to the minimum frame
    EXPECT_EQ(Bytes(f.begin(), f.begin() + 60), expected);
    ExpectFcsRight(f);
    uint8_t ce = 0;
    std::array<uint16_t, 8> q{};
    ASSERT_TRUE(EthFrame::ParsePfc(f.data(), f.size(), ce, q));
    EXPECT_EQ(ce, 0x28);
    EXPECT_EQ(q, quanta);
    // Not PFC: an IPv4 frame, a classic PAUSE (opcode 0x0001), a truncated PFC.
    Ptr<Packet> ip = UdpPacket(10, Ipv4Header::ECN_NotECT);
    EthFrame::Frame(ip, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 10);
    const Bytes fi = BytesOf(ip);
    EXPECT_FALSE(EthFrame::ParsePfc(fi.data(), fi.size(), ce, q));
    Bytes pause = f;
    pause[14] = 0x00;
    pause[15] = 0x01;
    EXPECT_FALSE(EthFrame::ParsePfc(pause.data(), pause.size(), ce, q));
    EXPECT_FALSE(EthFrame::ParsePfc(f.data(), 33, ce, q));
    EXPECT_EQ(EthFrame::PfcDestination(), Mac48Address("01:80:c2:00:00:01"));
}

TEST(EthFrame, PeeksReadIpv4FieldsInPlace)
{
    Ptr<Packet> p = UdpPacket(100, Ipv4Header::ECN_ECT1);
    EthFrame::Frame(p, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 100);
    uint8_t head[64];
    ASSERT_EQ(EthFrame::CopyHead(*p, head, sizeof(head)), 64u);
    EXPECT_TRUE(EthFrame::IsPlainIpv4(head));
    EXPECT_EQ(EthFrame::PeekDscp(head), 26);
    EXPECT_EQ(EthFrame::PeekEcn(head), 1);
    EXPECT_EQ(EthFrame::PeekDstIp(head), Ipv4Address("10.0.2.3").Get());
    EthFrame::FlowKey k;
    ASSERT_TRUE(EthFrame::PeekFlow(head, sizeof(head), k));
    EXPECT_EQ(k.srcIp, Ipv4Address("10.0.1.2").Get());
    EXPECT_EQ(k.dstIp, Ipv4Address("10.0.2.3").Get());
    EXPECT_EQ(k.srcPort, 1234);
    EXPECT_EQ(k.dstPort, 5678);
    EXPECT_EQ(k.protocol, 17);
    // Too short for the ports: addresses only.
    ASSERT_TRUE(EthFrame::PeekFlow(head, 34, k));
    EXPECT_EQ(k.srcPort, 0);
    EXPECT_EQ(k.dstPort, 0);
    EXPECT_EQ(k.dstIp, Ipv4Address("10.0.2.3").Get());
    // Not IPv4.
    Ptr<Packet> arp = Create<Packet>(28);
    EthFrame::Frame(arp, kMacA, kMacB, EthFrame::ETHERTYPE_ARP, 28);
    uint8_t a[64];
    EthFrame::CopyHead(*arp, a, sizeof(a));
    EXPECT_FALSE(EthFrame::IsPlainIpv4(a));
    EXPECT_FALSE(EthFrame::PeekFlow(a, sizeof(a), k));
    uint8_t small[10];
    EXPECT_EQ(EthFrame::CopyHead(*Create<Packet>(10), small, 64), 10u);
}

// ---------------------------------------------------------------------------------------------
// In-flight edits
// ---------------------------------------------------------------------------------------------

TEST(EthFrame, SetCeMarksAndKeepsChecksumAndFcsValid)
{
    for (auto ecn : {Ipv4Header::ECN_ECT0, Ipv4Header::ECN_ECT1})
    {
        for (uint32_t payload : {0u, 50u, 4000u})
        {
            Ptr<Packet> p = UdpPacket(payload, ecn);
            EthFrame::Frame(p, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, payload);
            const Bytes before = BytesOf(p);
            ASSERT_TRUE(Ipv4ChecksumOk(before.data() + 14));
            ASSERT_TRUE(EthFrame::SetCe(p));
            const Bytes after = BytesOf(p);
            ASSERT_EQ(after.size(), before.size());
            EXPECT_EQ(after[15], (26 << 2) | 3) << "DSCP kept, ECN CE";
            EXPECT_TRUE(Ipv4ChecksumOk(after.data() + 14)) << payload;
            ExpectFcsRight(after);
            // Only the TOS byte and the header checksum changed (and so the FCS).
            for (size_t i = 0; i + 4 < after.size(); ++i)
            {
                if (i != 15 && i != 24 && i != 25)
                {
                    EXPECT_EQ(after[i], before[i]) << "byte " << i;
                }
            }
            // Again: already CE, true and unchanged.
            EXPECT_TRUE(EthFrame::SetCe(p));
            EXPECT_EQ(BytesOf(p), after);
        }
    }
    // Not ECN-capable, and not IPv4: false, unchanged.
    Ptr<Packet> n = UdpPacket(10, Ipv4Header::ECN_NotECT);
    EthFrame::Frame(n, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 10);
    const Bytes nb = BytesOf(n);
    EXPECT_FALSE(EthFrame::SetCe(n));
    EXPECT_EQ(BytesOf(n), nb);
    Ptr<Packet> arp = Create<Packet>(28);
    EthFrame::Frame(arp, kMacA, kMacB, EthFrame::ETHERTYPE_ARP, 28);
    const Bytes ab = BytesOf(arp);
    EXPECT_FALSE(EthFrame::SetCe(arp));
    EXPECT_EQ(BytesOf(arp), ab);
}

TEST(EthFrame, RewriteHopSetsMacsDecrementsTtlAndKeepsChecksumAndFcsValid)
{
    const Mac48Address c("02:00:00:00:00:0c");
    const Mac48Address d("02:00:00:00:00:0d");
    for (uint32_t payload : {0u, 1u, 1472u, 8972u})
    {
        Ptr<Packet> p = UdpPacket(payload, Ipv4Header::ECN_ECT0);
        EthFrame::Frame(p, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, payload);
        const Bytes before = BytesOf(p);
        ASSERT_TRUE(EthFrame::RewriteHop(p, c, d));
        ASSERT_TRUE(EthFrame::RewriteHop(p, d, c));
        const Bytes after = BytesOf(p);
        ASSERT_EQ(after.size(), before.size());
        EXPECT_EQ(after[0 + 5], 0x0c) << "destination of the second hop";
        EXPECT_EQ(after[6 + 5], 0x0d) << "source of the second hop";
        EXPECT_EQ(after[14 + 8], 62) << "TTL 64 after two hops";
        EXPECT_TRUE(Ipv4ChecksumOk(after.data() + 14));
        ExpectFcsRight(after);
        EXPECT_TRUE(EthFrame::CheckFcs(*p));
        EXPECT_EQ(Bytes(after.begin() + 34, after.end() - 4),
                  Bytes(before.begin() + 34, before.end() - 4))
            << "everything after the IPv4 header is untouched";
    }
    // TTL 1: the router must drop it.
    Ptr<Packet> last = UdpPacket(10, Ipv4Header::ECN_ECT0, true, false, 1);
    EthFrame::Frame(last, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 10);
    const Bytes lb = BytesOf(last);
    EXPECT_FALSE(EthFrame::RewriteHop(last, c, d));
    EXPECT_EQ(BytesOf(last), lb);
    // ns-3 stack frames without checksums keep a zero checksum; the FCS is still right.
    Ptr<Packet> z = UdpPacket(10, Ipv4Header::ECN_ECT0, false);
    EthFrame::Frame(z, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 10);
    ASSERT_TRUE(EthFrame::RewriteHop(z, c, d));
    ASSERT_TRUE(EthFrame::SetCe(z));
    const Bytes zb = BytesOf(z);
    EXPECT_EQ(zb[24], 0);
    EXPECT_EQ(zb[25], 0);
    EXPECT_EQ(zb[22], 63);
    EXPECT_EQ(zb[15] & 3, 3);
    ExpectFcsRight(zb);
    // Not IPv4.
    Ptr<Packet> arp = Create<Packet>(28);
    EthFrame::Frame(arp, kMacA, kMacB, EthFrame::ETHERTYPE_ARP, 28);
    EXPECT_FALSE(EthFrame::RewriteHop(arp, c, d));
}

TEST(EthFrame, OneSwitchEditEqualsTheFrameBuiltWithTheNewFields)
{
    // RewriteHop with the bytes a switch has already copied, and a CE mark in the same edit,
    // must give byte for byte the frame that ns-3's headers build with the new MACs, TTL and
    // ECN (the IPv4 checksum recomputed in full, the FCS over every byte).
    const Mac48Address c("02:00:00:00:00:0c");
    const Mac48Address d("02:00:00:00:00:0d");
    const Ipv4Header::EcnType ecns[] = {Ipv4Header::ECN_NotECT,
                                        Ipv4Header::ECN_ECT1,
                                        Ipv4Header::ECN_ECT0,
                                        Ipv4Header::ECN_CE};
    for (uint32_t payload : {0u, 17u, 1472u, 4096u})
    {
        for (Ipv4Header::EcnType ecn : ecns)
        {
            for (bool checksum : {true, false})
            {
                for (bool mark : {false, true})
                {
                    Ptr<Packet> p = UdpPacket(payload, ecn, checksum, false, 9);
                    EthFrame::Frame(p, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, payload);
                    uint8_t head[EthFrame::EDIT_BYTES];
                    ASSERT_EQ(EthFrame::CopyHead(*p, head, sizeof(head)), sizeof(head));
                    ASSERT_TRUE(EthFrame::RewriteHop(p, head, c, d, mark));
                    const bool ce =
                        ecn == Ipv4Header::ECN_CE || (mark && ecn != Ipv4Header::ECN_NotECT);
                    Ptr<Packet> want =
                        UdpPacket(payload, ce ? Ipv4Header::ECN_CE : ecn, checksum, false, 8);
                    EthFrame::Frame(want, c, d, EthFrame::ETHERTYPE_IPV4, payload);
                    EXPECT_EQ(BytesOf(p), BytesOf(want))
                        << payload << "-byte payload, ECN " << ecn << ", checksum " << checksum
                        << ", mark " << mark;
                }
            }
        }
    }
    uint8_t head[EthFrame::EDIT_BYTES];
    Ptr<Packet> last = UdpPacket(10, Ipv4Header::ECN_ECT0, true, false, 1);
    EthFrame::Frame(last, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 10);
    EthFrame::CopyHead(*last, head, sizeof(head));
    const Bytes lb = BytesOf(last);
    EXPECT_FALSE(EthFrame::RewriteHop(last, head, c, d, true)) << "TTL 1: dropped, not edited";
    EXPECT_EQ(BytesOf(last), lb);
}

TEST(EthFrame, AnEditedFrameUnframesToThePacketTheStackSent)
{
    Ptr<Packet> p = UdpPacket(300, Ipv4Header::ECN_ECT0);
    EthFrame::Frame(p, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 300);
    ASSERT_TRUE(EthFrame::RewriteHop(p, kMacB, kMacA));
    ASSERT_TRUE(EthFrame::SetCe(p));
    EXPECT_EQ(EthFrame::Unframe(p), EthFrame::ETHERTYPE_IPV4);
    Ipv4Header ip;
    ip.EnableChecksum();
    p->RemoveHeader(ip);
    EXPECT_TRUE(ip.IsChecksumOk());
    EXPECT_EQ(ip.GetTtl(), 63);
    EXPECT_EQ(ip.GetEcn(), Ipv4Header::ECN_CE);
    EXPECT_EQ(ip.GetDscp(), Ipv4Header::DSCP_AF31);
    UdpHeader udp;
    p->RemoveHeader(udp);
    EXPECT_EQ(udp.GetDestinationPort(), 5678);
    EXPECT_EQ(p->GetSize(), 300u);
}

TEST(EthFrame, PacketMetadataStaysConsistentThroughEdits)
{
    // The frame is made of ns-3's EthernetHeader, Ipv4Header and EthernetTrailer, and the edits
    // remove and re-add exactly those: with metadata checking on (which ns-3 allows only before
    // the process makes its first packet, hence a child process), removing the headers in the
    // order the stack does must not abort, and printing shows every header.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto run = []() {
        Packet::EnableChecking();
        Ptr<Packet> p = UdpPacket(10, Ipv4Header::ECN_ECT0);
        EthFrame::Frame(p, kMacA, kMacB, EthFrame::ETHERTYPE_IPV4, 10);
        const bool edited = EthFrame::RewriteHop(p, kMacB, kMacA) && EthFrame::SetCe(p);
        std::ostringstream printed;
        p->Print(printed);
        const std::string s = printed.str();
        std::cerr << s << "\n";
        const bool shown = s.find("ns3::EthernetHeader") != std::string::npos &&
                           s.find("ns3::Ipv4Header") != std::string::npos &&
                           s.find("ns3::UdpHeader") != std::string::npos &&
                           s.find("ns3::EthPadTrailer") != std::string::npos &&
                           s.find("ns3::EthernetTrailer") != std::string::npos;
        EthFrame::Unframe(p);
        Ipv4Header ip;
        p->RemoveHeader(ip);
        UdpHeader udp;
        p->RemoveHeader(udp);
        std::exit(edited && shown && p->GetSize() == 10 ? 0 : 1);
    };
    EXPECT_EXIT(run(), ::testing::ExitedWithCode(0), "");
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * RoCEv2 wire format (RocePacket, IbHeaderView::AtBth, IbPacketParser::ParseRoce). Where the
 * expected values come from:
 *  - the ICRC rules: a RoCEv2 CNP captured on a ConnectX-4 Lx (hex dump published with Scapy's
 *    RoCE tests), whose ICRC the hardware computed;
 *  - one packet written out byte by byte from the header layouts (IPv4 RFC 791, UDP RFC 768,
 *    BTH IBA 9.2), with its IPv4 checksum, ICRC and FCS computed by Python's zlib.crc32 and a
 *    one's complement sum over those bytes (the script is in the comment);
 *  - for every other packet, a reference written in this file: the annex A17 masking applied to
 *    a copy of the bytes, then a bit-at-a-time CRC-32, and a one's complement IPv4 sum;
 *  - tshark (Wireshark's dissectors) decoding a pcap of the frames, with FCS and IPv4
 *    checksum validation on.
 */

#include "shell-test-util.h"

#include "ns3/eth-frame.h"
#include "ns3/ib-aeth-header.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-deth-header.h"
#include "ns3/ib-header-view.h"
#include "ns3/ib-immdt-header.h"
#include "ns3/ib-packet-parser.h"
#include "ns3/ib-reth-header.h"
#include "ns3/ipv4-address.h"
#include "ns3/mac48-address.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/roce-packet.h"
#include "ns3/trace-helper.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

using Bytes = std::vector<uint8_t>;

/// CRC-32 of IEEE 802.3 by bitwise polynomial division (see eth-frame-test.cc).
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

/// The RoCEv2 ICRC as annex A17 defines it, for IPv4 without options: 8 bytes of 0xFF, then
/// the IP packet with TOS, TTL, header checksum, UDP checksum and BTH byte 4 as 1s.
uint32_t
RefRoceIcrc(const uint8_t* ip, size_t len)
{
    Bytes m(8, 0xFF);
    m.insert(m.end(), ip, ip + len);
    for (size_t offset : {1, 8, 10, 11, 26, 27, 32})
    {
        if (offset < len)
        {
            m[8 + offset] = 0xFF;
        }
    }
    return RefCrc32(m.data(), m.size());
}

uint32_t
Le32(const uint8_t* p)
{
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

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

Bytes
BytesOf(Ptr<const Packet> p)
{
    Bytes b(p->GetSize());
    p->CopyData(b.data(), b.size());
    return b;
}

/// Expect a frame's IPv4 checksum, ICRC (by the reference) and FCS (by the reference) right.
void
ExpectFrameValid(const Bytes& f, const std::string& what)
{
    ASSERT_GE(f.size(), 64u) << what;
    EXPECT_EQ(Le32(f.data() + f.size() - 4), RefCrc32(f.data(), f.size() - 4)) << what << ": FCS";
    EXPECT_TRUE(Ipv4ChecksumOk(f.data() + 14)) << what << ": IPv4 checksum";
    const uint32_t total = (f[16] << 8) | f[17];
    ASSERT_LE(14 + total, f.size() - 4) << what;
    EXPECT_EQ(Le32(f.data() + 14 + total - 4), RefRoceIcrc(f.data() + 14, total - 4))
        << what << ": ICRC";
    EXPECT_TRUE(RocePacket::CheckIcrc(f.data(), f.size())) << what;
}

// A RoCEv2 CNP captured on a ConnectX-4 Lx, without its FCS (74 bytes): Ethernet, IPv4 (DSCP
// 48, ECT(0), ID 0x718c, DF, TTL 64, 10.0.17.1 -> 10.0.18.1), UDP (0 -> 4791, length 40),
// BTH (opcode 0x81, P_Key 0xffff, BECN, QP 0x118, PSN 0), 16 reserved bytes, ICRC.
const uint8_t kCapturedCnp[] = {
    0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00, 0x45,
    0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01,
    0x0a, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff,
    0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd, 0x00, 0x2a,
};

/// The addressing of most packets here.
RocePacket::Addressing
TestAddressing()
{
    RocePacket::Addressing a;
    a.srcMac = Mac48Address("02:00:00:00:00:0a");
    a.dstMac = Mac48Address("02:00:00:00:00:0b");
    a.srcIp = Ipv4Address("10.0.1.2");
    a.dstIp = Ipv4Address("10.0.2.3");
    a.dscp = 26;
    a.ecn = 2;
    a.ttl = 64;
    a.udpSrcPort = 0xC123;
    return a;
}

/// One packet shape of the mix below.
struct Shape
{
    uint8_t opcode;
    uint32_t payload;
    uint32_t destQp;
    uint32_t psn;
};

/**
 * @param s the shape
 * @param real true for a payload of materialised zero bytes, false for a virtual one
 * @return the sealed frame
 */
Ptr<Packet>
SealShape(const Shape& s, bool real)
{
    Ptr<Packet> p;
    if (real)
    {
        Bytes zeros(s.payload, 0);
        p = Create<Packet>(zeros.data(), s.payload);
    }
    else
    {
        p = Create<Packet>(s.payload);
    }
    const uint8_t ext = IbBthHeader::ExtensionHeaders(s.opcode);
    if (ext & IbBthHeader::EXT_IMMDT)
    {
        IbImmDtHeader imm;
        imm.SetImmediateData(0xC0FFEE00 + s.psn);
        p->AddHeader(imm);
    }
    if (ext & IbBthHeader::EXT_AETH)
    {
        IbAethHeader aeth;
        aeth.SetSyndrome(0x1F);
        aeth.SetMsn(s.psn);
        p->AddHeader(aeth);
    }
    if (ext & IbBthHeader::EXT_RETH)
    {
        IbRethHeader reth;
        reth.SetVirtualAddress(0x7f0000001000ULL + s.psn);
        reth.SetRKey(0x1234);
        reth.SetDmaLength(s.payload);
        p->AddHeader(reth);
    }
    if (ext & IbBthHeader::EXT_DETH)
    {
        IbDethHeader deth;
        deth.SetQKey(0x11111111);
        deth.SetSrcQp(0x123);
        p->AddHeader(deth);
    }
    IbBthHeader bth;
    bth.SetOpcode(s.opcode);
    bth.SetDestQp(s.destQp);
    bth.SetPsn(s.psn);
    bth.SetAckReq(true);
    RocePacket::Seal(p, TestAddressing(), bth, real ? 0 : s.payload);
    return p;
}

/// @return packet shapes: opcodes with every kind of extension header, payloads that need
/// padding, and frames short enough to need Ethernet padding
std::vector<Shape>
Shapes()
{
    std::vector<Shape> out;
    uint32_t psn = 0xFFFFF8; // crosses the 24-bit wrap
    for (uint8_t op : {IbOpcode::RC_SEND_ONLY,
                       IbOpcode::RC_SEND_FIRST,
                       IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE,
                       IbOpcode::RC_RDMA_WRITE_ONLY,
                       IbOpcode::RC_RDMA_WRITE_MIDDLE,
                       IbOpcode::RC_ACKNOWLEDGE,
                       IbOpcode::UD_SEND_ONLY})
    {
        for (uint32_t payload : {0u, 1u, 2u, 3u, 5u, 256u, 1021u, 4096u})
        {
            const uint32_t pl = (op == IbOpcode::RC_ACKNOWLEDGE) ? 0 : payload;
            out.push_back({op, pl, 0x100 + static_cast<uint32_t>(out.size()), psn});
            psn = (psn + 1) & 0xFFFFFF;
        }
    }
    return out;
}

using shelltest::RunCommand;

std::vector<std::string>
Split(const std::string& line, char sep)
{
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string item;
    while (std::getline(ss, item, sep))
    {
        f.push_back(item);
    }
    return f;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// ICRC
// ---------------------------------------------------------------------------------------------

TEST(RoceIcrc, MatchesTheIcrcAConnectX4LxComputed)
{
    // The ICRC the hardware wrote, bytes 82 fd 00 2a, least significant first.
    const uint8_t* ip = kCapturedCnp + 14;
    const uint32_t ipLen = sizeof(kCapturedCnp) - 14; // 60, the IPv4 total length
    EXPECT_EQ(Le32(ip + ipLen - 4), 0x2a00fd82u);
    EXPECT_EQ(RefRoceIcrc(ip, ipLen - 4), 0x2a00fd82u) << "the test's own reference";
    EXPECT_EQ(RocePacket::ComputeIcrc(ip, ipLen - 4), 0x2a00fd82u);
    // The 16 reserved bytes are zeros: the zero-tail form gives the same.
    EXPECT_EQ(RocePacket::ComputeIcrcZeroTail(ip, ipLen - 4 - 16, 16), 0x2a00fd82u);
    Bytes first10(ip, ip + 10);
    first10.resize(ipLen - 4, 0);
    EXPECT_EQ(RocePacket::ComputeIcrcZeroTail(ip, 10, ipLen - 4 - 10),
              RefRoceIcrc(first10.data(), first10.size()))
        << "masked fields inside the zero tail";
    EXPECT_TRUE(RocePacket::CheckIcrc(kCapturedCnp, sizeof(kCapturedCnp)));
    EXPECT_TRUE(RocePacket::IsRoce(kCapturedCnp, sizeof(kCapturedCnp)));
    // The fields that change in flight do not change the ICRC; any other byte does.
    Bytes b(kCapturedCnp, kCapturedCnp + sizeof(kCapturedCnp));
    b[14 + 1] = 0x03;  // TOS
    b[14 + 8] = 1;     // TTL
    b[14 + 10] = 0x12; // header checksum
    b[14 + 27] = 0x77; // UDP checksum
    b[14 + 32] = 0x80; // FECN
    EXPECT_TRUE(RocePacket::CheckIcrc(b.data(), b.size()));
    b[14 + 12] ^= 1; // source address
    EXPECT_FALSE(RocePacket::CheckIcrc(b.data(), b.size()));
}

TEST(RoceIcrc, MatchesTheReferenceOnRandomPackets)
{
    uint32_t seed = 12345;
    auto next = [&seed]() {
        seed = seed * 1103515245u + 12345u;
        return static_cast<uint8_t>(seed >> 16);
    };
    for (uint32_t len : {20u, 28u, 32u, 33u, 40u, 41u, 64u, 100u, 1500u})
    {
        Bytes b(len);
        for (auto& x : b)
        {
            x = next();
        }
        b[0] = 0x45;
        EXPECT_EQ(RocePacket::ComputeIcrc(b.data(), len), RefRoceIcrc(b.data(), len)) << len;
    }
}

// ---------------------------------------------------------------------------------------------
// Seal
// ---------------------------------------------------------------------------------------------

TEST(RocePacket, SealWritesEveryByteAsSpecified)
{
    // RC SEND Only, SE 0, M 0, P_Key 0xffff, QP 0x123, AckReq, PSN 0xabcd, payload "hello".
    // Written out by hand; the IPv4 checksum, ICRC and FCS were computed by this Python:
    //   ip = 45 6a 0034 0000 4000 40 11 <csum> 0a000102 0a000203  (csum: ~sum of 16-bit words)
    //   m = ip|udp|bth|payload|pad with bytes 1, 8, 10, 11, 26, 27, 32 set to 0xff
    //   icrc = zlib.crc32(b'\xff' * 8 + m); fcs = zlib.crc32(frame up to the FCS)
    // giving checksum 0x234b, ICRC 0xfe97904e, FCS 0x0638f161.
    const Bytes expected = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x0b, // destination MAC
        0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, // source MAC
        0x08, 0x00,                         // IPv4
        0x45, 0x6a, 0x00, 0x34,             // version 4, IHL 5, DSCP 26 ECN 2, total 52
        0x00, 0x00, 0x40, 0x00,             // ID 0, DF
        0x40, 0x11, 0x23, 0x4b,             // TTL 64, UDP, header checksum
        0x0a, 0x00, 0x01, 0x02,             // 10.0.1.2
        0x0a, 0x00, 0x02, 0x03,             // 10.0.2.3
        0xc1, 0x23, 0x12, 0xb7,             // UDP 0xc123 -> 4791
        0x00, 0x20, 0x00, 0x00,             // length 32, checksum 0
        0x04, 0x30, 0xff, 0xff,             // BTH: RC SEND Only, PadCnt 3, P_Key
        0x00, 0x00, 0x01, 0x23,             // FECN/BECN 0, QP 0x123
        0x80, 0x00, 0xab, 0xcd,             // AckReq, PSN 0xabcd
        0x68, 0x65, 0x6c, 0x6c, 0x6f,       // "hello"
        0x00, 0x00, 0x00,                   // pad
        0x4e, 0x90, 0x97, 0xfe,             // ICRC 0xfe97904e
        0x61, 0xf1, 0x38, 0x06,             // FCS 0x0638f161
    };
    const uint8_t hello[] = {'h', 'e', 'l', 'l', 'o'};
    Ptr<Packet> p = Create<Packet>(hello, sizeof(hello));
    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::RC_SEND_ONLY);
    bth.SetDestQp(0x123);
    bth.SetAckReq(true);
    bth.SetPsn(0xabcd);
    RocePacket::Seal(p, TestAddressing(), bth, 0);
    EXPECT_EQ(BytesOf(p), expected);
    EXPECT_EQ(p->GetSize(), RocePacket::FrameSize(5, 0));
    ExpectFrameValid(BytesOf(p), "hello");
}

TEST(RocePacket, ZeroTailEqualsMaterialisedAndSizesAreAsFrameSize)
{
    for (const Shape& s : Shapes())
    {
        const Bytes v = BytesOf(SealShape(s, false));
        const Bytes r = BytesOf(SealShape(s, true));
        const std::string what = std::string(IbBthHeader::OpcodeName(s.opcode)) + " payload " +
                                 std::to_string(s.payload);
        EXPECT_EQ(v, r) << what;
        ExpectFrameValid(v, what);
        const uint32_t ext = IbBthHeader::ExtensionHeaderSize(s.opcode);
        EXPECT_EQ(v.size(), RocePacket::FrameSize(s.payload, ext)) << what;
        // From the layouts: 14 + 20 + 8 + 12 + ext + payload + pad + ICRC 4 + FCS 4, and
        // at least 64.
        const uint32_t pad = (4 - s.payload % 4) % 4;
        EXPECT_EQ(v.size(), std::max<uint32_t>(64, 62 + ext + s.payload + pad)) << what;
        EXPECT_TRUE(RocePacket::IsRoce(v.data(), v.size()));
    }
    // The shortest: RC SEND Only with no payload is 62 bytes, padded to 64 after the ICRC.
    const Bytes shortest = BytesOf(SealShape({IbOpcode::RC_SEND_ONLY, 0, 1, 1}, false));
    ASSERT_EQ(shortest.size(), 64u);
    EXPECT_EQ((shortest[16] << 8) | shortest[17], 44) << "IPv4 total length without the pad";
    EXPECT_EQ(shortest[58], 0);
    EXPECT_EQ(shortest[59], 0);
}

TEST(RocePacket, SwitchEditsKeepIcrcChecksumAndFcsValid)
{
    const Mac48Address c("02:00:00:00:00:0c");
    const Mac48Address d("02:00:00:00:00:0d");
    for (const Shape& s : Shapes())
    {
        Ptr<Packet> p = SealShape(s, false);
        const Bytes before = BytesOf(p);
        ASSERT_TRUE(EthFrame::RewriteHop(p, c, d));
        ASSERT_TRUE(EthFrame::SetCe(p));
        ASSERT_TRUE(EthFrame::RewriteHop(p, d, c));
        const Bytes after = BytesOf(p);
        const std::string what = std::string(IbBthHeader::OpcodeName(s.opcode)) + " payload " +
                                 std::to_string(s.payload);
        ExpectFrameValid(after, what);
        EXPECT_EQ(after[14 + 8], 62) << what;
        EXPECT_EQ(EthFrame::PeekEcn(after.data()), 3) << what;
        EXPECT_EQ(EthFrame::PeekDscp(after.data()), 26) << what;
        EXPECT_EQ(Bytes(after.begin() + 34, after.end() - 4),
                  Bytes(before.begin() + 34, before.end() - 4))
            << what << ": UDP, BTH, payload, ICRC unchanged";
    }
}

TEST(RocePacket, IsRoceTellsRoceFromOtherFrames)
{
    const Bytes f = BytesOf(SealShape({IbOpcode::RC_SEND_ONLY, 8, 1, 1}, false));
    EXPECT_TRUE(RocePacket::IsRoce(f.data(), f.size()));
    EXPECT_TRUE(RocePacket::IsRoce(f.data(), RocePacket::BTH_OFFSET));
    EXPECT_FALSE(RocePacket::IsRoce(f.data(), RocePacket::BTH_OFFSET - 1));
    Bytes other = f;
    other[37] = 0xb8; // UDP port 4792
    EXPECT_FALSE(RocePacket::IsRoce(other.data(), other.size()));
    other = f;
    other[23] = 6; // TCP
    EXPECT_FALSE(RocePacket::IsRoce(other.data(), other.size()));
    other = f;
    other[20] |= 0x20; // more fragments
    EXPECT_FALSE(RocePacket::IsRoce(other.data(), other.size()));
    other = f;
    other[12] = 0x86; // IPv6 EtherType
    other[13] = 0xdd;
    EXPECT_FALSE(RocePacket::IsRoce(other.data(), other.size()));
}

TEST(RocePacket, CnpHasTheLayoutOfTheCapturedOne)
{
    RocePacket::Addressing a;
    a.srcMac = Mac48Address("7c:fe:90:64:3b:32");
    a.dstMac = Mac48Address("e4:1d:2d:ab:2b:c2");
    a.srcIp = Ipv4Address("10.0.17.1");
    a.dstIp = Ipv4Address("10.0.18.1");
    a.dscp = 48;
    a.ecn = 2; // ignored: a CNP is not ECT
    a.ttl = 64;
    a.udpSrcPort = 0;
    Ptr<Packet> p = RocePacket::MakeCnp(a, 0x118);
    const Bytes f = BytesOf(p);
    ASSERT_EQ(f.size(), sizeof(kCapturedCnp) + 4) << "78 bytes with the FCS";
    ExpectFrameValid(f, "CNP");
    // The same bytes as the capture but for the IPv4 ECN (0 here, the ConnectX sent ECT(0)),
    // identification (0 here) and so the IPv4 checksum and the ICRC.
    for (size_t i = 0; i < sizeof(kCapturedCnp) - 4; ++i)
    {
        if (i == 15 || i == 18 || i == 19 || i == 24 || i == 25)
        {
            continue;
        }
        EXPECT_EQ(f[i], kCapturedCnp[i]) << "byte " << i;
    }
    EXPECT_EQ(f[15], 48 << 2) << "DSCP 48, ECN 0";
    const IbHeaderView v = RocePacket::View(f.data(), f.size());
    ASSERT_TRUE(v.HasBth());
    EXPECT_EQ(v.GetOpcode(), RocePacket::CNP_OPCODE);
    EXPECT_TRUE(v.GetBecn());
    EXPECT_FALSE(v.GetFecn());
    EXPECT_EQ(v.GetDestQp(), 0x118u);
    EXPECT_EQ(v.GetPsn(), 0u);
    EXPECT_EQ(v.GetPKey(), 0xFFFF);
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

TEST(IbHeaderView, AtBthDecodesRoceFrames)
{
    for (const Shape& s : Shapes())
    {
        const Bytes f = BytesOf(SealShape(s, false));
        IbHeaderView v = IbHeaderView::AtBth(f.data(), f.size(), RocePacket::BTH_OFFSET);
        EXPECT_FALSE(v.HasLrh());
        EXPECT_FALSE(v.HasGrh());
        ASSERT_TRUE(v.HasBth());
        EXPECT_EQ(v.GetBthOffset(), RocePacket::BTH_OFFSET);
        EXPECT_EQ(v.GetOpcode(), s.opcode);
        EXPECT_EQ(v.GetDestQp(), s.destQp);
        EXPECT_EQ(v.GetPsn(), s.psn);
        EXPECT_TRUE(v.GetAckReq());
        EXPECT_EQ(v.GetPadCnt(), (4 - s.payload % 4) % 4);
        EXPECT_EQ(v.GetPKey(), 0xFFFF);
        ASSERT_TRUE(v.DecodeExtensionHeaders());
        const uint32_t ext = IbBthHeader::ExtensionHeaderSize(s.opcode);
        EXPECT_EQ(v.GetHeadersSize(), 42 + 12 + ext) << "payload offset in the frame";
        if (v.GetExtensionHeaders() & IbBthHeader::EXT_RETH)
        {
            EXPECT_EQ(v.GetRethVirtualAddress(), 0x7f0000001000ULL + s.psn);
            EXPECT_EQ(v.GetDmaLength(), s.payload);
        }
        if (v.GetExtensionHeaders() & IbBthHeader::EXT_AETH)
        {
            EXPECT_EQ(v.GetSyndrome(), 0x1F);
            EXPECT_EQ(v.GetMsn(), s.psn);
        }
        if (v.GetExtensionHeaders() & IbBthHeader::EXT_DETH)
        {
            EXPECT_EQ(v.GetQKey(), 0x11111111u);
            EXPECT_EQ(v.GetSrcQp(), 0x123u);
        }
        if (v.GetExtensionHeaders() & IbBthHeader::EXT_IMMDT)
        {
            EXPECT_EQ(v.GetImmediateData(), 0xC0FFEE00 + s.psn);
        }
        // Only the first bytes, as a port copies them.
        uint8_t head[64];
        const uint32_t n = EthFrame::CopyHead(*Create<Packet>(f.data(), f.size()), head, 64);
        IbHeaderView h = RocePacket::View(head, n);
        ASSERT_TRUE(h.HasBth());
        EXPECT_EQ(h.GetPsn(), s.psn);
    }
    // A span too short for the BTH.
    const Bytes f = BytesOf(SealShape({IbOpcode::RC_SEND_ONLY, 0, 1, 1}, false));
    EXPECT_FALSE(IbHeaderView::AtBth(f.data(), 53, RocePacket::BTH_OFFSET).HasBth());
    EXPECT_TRUE(IbHeaderView::AtBth(f.data(), 54, RocePacket::BTH_OFFSET).HasBth());
}

/// @return @p f with its FCS recomputed by the reference (after a deliberate change)
Bytes
WithFcs(Bytes f)
{
    const uint32_t fcs = RefCrc32(f.data(), f.size() - 4);
    for (int i = 0; i < 4; ++i)
    {
        f[f.size() - 4 + i] = static_cast<uint8_t>(fcs >> (8 * i));
    }
    return f;
}

TEST(RocePacketParser, AcceptsEveryFrameSealedAndTheCapturedCnp)
{
    IbPacketParser parser;
    std::string error;
    for (const Shape& s : Shapes())
    {
        Ptr<Packet> p = SealShape(s, false);
        EthFrame::RewriteHop(p,
                             Mac48Address("02:00:00:00:00:0c"),
                             Mac48Address("02:00:00:00:00:0d"));
        EthFrame::SetCe(p);
        const Bytes f = BytesOf(p);
        ASSERT_TRUE(parser.ParseRoce(f.data(), f.size(), &error))
            << IbBthHeader::OpcodeName(s.opcode) << " payload " << s.payload << ": " << error;
        EXPECT_TRUE(parser.m_isRoce);
        EXPECT_TRUE(parser.m_fcsValid);
        EXPECT_TRUE(parser.m_icrcValid);
        EXPECT_EQ(parser.m_bth.GetOpcode(), s.opcode);
        EXPECT_EQ(parser.m_bth.GetDestQp(), s.destQp);
        EXPECT_EQ(parser.m_bth.GetPsn(), s.psn);
        EXPECT_EQ(parser.m_payloadLength, s.payload);
        EXPECT_EQ(parser.m_padCount, (4 - s.payload % 4) % 4);
        EXPECT_EQ(parser.m_payloadOffset, 54 + IbBthHeader::ExtensionHeaderSize(s.opcode));
        EXPECT_EQ(parser.m_srcIp, Ipv4Address("10.0.1.2").Get());
        EXPECT_EQ(parser.m_dstIp, Ipv4Address("10.0.2.3").Get());
        EXPECT_EQ(parser.m_dscp, 26);
        EXPECT_EQ(parser.m_ecn, 3);
        EXPECT_EQ(parser.m_ttl, 63);
        EXPECT_EQ(parser.m_udpSrcPort, 0xC123);
        EXPECT_EQ(parser.m_hasReth,
                  (IbBthHeader::ExtensionHeaders(s.opcode) & IbBthHeader::EXT_RETH) != 0);
    }
    // The hardware's CNP, with an FCS added.
    Bytes cnp(kCapturedCnp, kCapturedCnp + sizeof(kCapturedCnp));
    cnp.resize(cnp.size() + 4);
    cnp = WithFcs(cnp);
    ASSERT_TRUE(parser.ParseRoce(cnp.data(), cnp.size(), &error)) << error;
    EXPECT_EQ(parser.m_bth.GetOpcode(), RocePacket::CNP_OPCODE);
    EXPECT_TRUE(parser.m_bth.GetBecn());
    EXPECT_EQ(parser.m_bth.GetDestQp(), 0x118u);
    EXPECT_EQ(parser.m_payloadLength, 16u);
    EXPECT_EQ(parser.m_receivedIcrc, 0x2a00fd82u);
}

TEST(RocePacketParser, RejectsEachKindOfDamageWithItsReason)
{
    const Bytes good = BytesOf(SealShape({IbOpcode::RC_RDMA_WRITE_ONLY, 100, 7, 9}, false));
    IbPacketParser parser;
    std::string error;
    ASSERT_TRUE(parser.ParseRoce(good.data(), good.size(), &error)) << error;
    auto expectError = [&](const Bytes& f, const std::string& what) {
        EXPECT_FALSE(parser.ParseRoce(f.data(), f.size(), &error)) << what;
        EXPECT_NE(error.find(what), std::string::npos) << "wanted '" << what << "', got: " << error;
    };
    Bytes f = good;
    f[70] ^= 1; // a payload byte, FCS not fixed
    expectError(f, "bad FCS");
    f = good;
    f[70] ^= 1; // a payload byte, FCS fixed: the ICRC catches it
    expectError(WithFcs(f), "bad ICRC");
    f = good;
    f[14 + 8] = 7; // TTL without the checksum
    expectError(WithFcs(f), "bad IPv4 header checksum");
    f = good;
    f[37] = 0xb8; // port 4792
    expectError(WithFcs(f), "UDP destination port 4792");
    f = good;
    f[12] = 0x86;
    f[13] = 0xdd;
    expectError(WithFcs(f), "is not IPv4");
    f = good;
    f[42] = 0x1F; // an opcode nobody knows (the ICRC covers it: recompute both)
    {
        const uint32_t total = (f[16] << 8) | f[17];
        const uint32_t icrc = RefRoceIcrc(f.data() + 14, total - 4);
        for (int i = 0; i < 4; ++i)
        {
            f[14 + total - 4 + i] = static_cast<uint8_t>(icrc >> (8 * i));
        }
    }
    expectError(WithFcs(f), "unknown BTH opcode 0x1f");
    f = good;
    f.insert(f.end() - 4, {0, 0, 0, 0}); // bytes after the IP packet in a long frame
    expectError(WithFcs(f), "only a 64-byte frame has Ethernet padding");
    for (uint32_t n = 0; n < good.size(); n += 7)
    {
        EXPECT_FALSE(parser.ParseRoce(good.data(), n, &error)) << n;
    }
}

// ---------------------------------------------------------------------------------------------
// tshark
// ---------------------------------------------------------------------------------------------

#ifdef IB_TSHARK_TESTS
TEST(RocePcap, TsharkDecodesRoceFramesWithGoodFcsAndChecksums)
{
    if (RunCommand("command -v tshark").empty())
    {
        GTEST_SKIP() << "tshark is not installed (utils/install-deps.sh installs it)";
    }
    char tmpl[] = "/tmp/roce-pcap-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    const std::string path = dir + "/roce.pcap";

    /// What was written, per frame.
    struct Written
    {
        int opcode; ///< -1: a PFC frame
        uint32_t destQp;
        uint32_t psn;
        uint32_t pad;
        uint32_t icrc;
    };

    std::vector<Written> written;
    {
        Ptr<PcapFileWrapper> file = CreateObject<PcapFileWrapper>();
        file->Open(path, std::ios::out | std::ios::binary);
        file->Init(PcapHelper::DLT_EN10MB, 65535, 0);
        uint32_t k = 0;
        auto write = [&](Ptr<Packet> p, const Written& w) {
            file->Write(MicroSeconds(++k), p);
            written.push_back(w);
        };
        auto icrcOf = [](Ptr<Packet> p) {
            const Bytes f = BytesOf(p);
            const uint32_t total = (f[16] << 8) | f[17];
            return Le32(f.data() + 14 + total - 4);
        };
        for (const Shape& s : Shapes())
        {
            Ptr<Packet> p = SealShape(s, false);
            // Every other frame as a switch forwards it: rewritten and ECN-marked.
            if (k % 2 == 1)
            {
                EthFrame::RewriteHop(p,
                                     Mac48Address("02:00:00:00:00:0c"),
                                     Mac48Address("02:00:00:00:00:0d"));
                EthFrame::SetCe(p);
            }
            write(p, {s.opcode, s.destQp, s.psn, (4 - s.payload % 4) % 4, icrcOf(p)});
        }
        RocePacket::Addressing a = TestAddressing();
        Ptr<Packet> cnp = RocePacket::MakeCnp(a, 0xABCDE);
        write(cnp, {RocePacket::CNP_OPCODE, 0xABCDE, 0, 0, icrcOf(cnp)});
        std::array<uint16_t, 8> quanta{};
        quanta[3] = 0xFFFF;
        write(EthFrame::MakePfc(a.srcMac, 0x08, quanta), {-1, 0, 0, 0, 0});
        file->Close();
    }

    // Wireshark 3.x and later name the FCS preference eth.fcs; older ones eth.assume_fcs.
    const bool newPref = RunCommand("tshark -G defaultprefs 2>/dev/null | grep -c '^#eth.fcs:'")
                             .find_first_not_of("0\n") != std::string::npos;
    std::string base = "tshark -n -r '" + path + "' " +
                       (newPref ? "-o eth.fcs:Always" : "-o eth.assume_fcs:TRUE") +
                       " -o eth.check_fcs:TRUE -o ip.check_checksum:TRUE"
                       " --disable-heuristic mellanox_eoib";
    // Zero payloads would otherwise be claimed by protocols over RDMA (see ib-pcap-test.cc).
    for (const char* proto :
         {"rpcordma", "smc", "smb_direct", "nvme-rdma", "lnet", "iser", "infiniband_sdp", "fcoib"})
    {
        base += std::string(" --disable-protocol ") + proto;
    }
    const std::string fields = RunCommand(
        base +
        " -T fields -E separator=, -E aggregator=/ -e frame.protocols -e eth.fcs.status"
        " -e ip.checksum.status -e udp.dstport -e infiniband.bth.opcode -e infiniband.bth.destqp"
        " -e infiniband.bth.psn -e infiniband.bth.padcnt -e infiniband.invariant.crc"
        " -e macc.opcode -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 2>/dev/null");
    std::istringstream lines(fields);
    std::string line;
    size_t k = 0;
    while (std::getline(lines, line))
    {
        ASSERT_LT(k, written.size()) << "tshark printed more frames than were written";
        std::vector<std::string> f = Split(line, ',');
        f.resize(12);
        const Written& w = written[k];
        EXPECT_EQ(f[1], "1") << "FCS good, frame " << k << ": " << line;
        if (w.opcode >= 0)
        {
            EXPECT_NE(f[0].find("eth:ethertype:ip:udp:infiniband"), std::string::npos) << line;
            EXPECT_EQ(f[2], "1") << "IPv4 checksum good: " << line;
            EXPECT_EQ(f[3], "4791") << line;
            EXPECT_EQ(std::stoul(f[4], nullptr, 0), unsigned(w.opcode)) << line;
            EXPECT_EQ(std::stoul(f[5], nullptr, 0), w.destQp) << line;
            EXPECT_EQ(std::stoul(f[6], nullptr, 0), w.psn) << line;
            EXPECT_EQ(std::stoul(f[7], nullptr, 0), w.pad) << line;
            // Wireshark 4.0 shows no ICRC for a CNP (an opcode it does not know), and shows
            // the four ICRC bytes as a big-endian number: the value byte-swapped.
            if (w.opcode != RocePacket::CNP_OPCODE)
            {
                ASSERT_FALSE(f[8].empty()) << line;
                EXPECT_EQ(std::stoul(f[8], nullptr, 0), __builtin_bswap32(w.icrc)) << line;
            }
        }
        else
        {
            EXPECT_NE(f[0].find("macc"), std::string::npos) << line;
            EXPECT_EQ(std::stoul(f[9], nullptr, 0), 0x0101u) << line;
            EXPECT_EQ(std::stoul(f[10], nullptr, 0), 0x08u) << line;
            EXPECT_EQ(std::stoul(f[11], nullptr, 0), 0xFFFFu) << line;
        }
        ++k;
    }
    EXPECT_EQ(k, written.size());
    const std::string malformed = RunCommand(base + " -Y '_ws.malformed || _ws.expert.severity "
                                                    ">= error' 2>/dev/null");
    EXPECT_TRUE(malformed.empty()) << "tshark reports malformed frames or errors:\n" << malformed;
    if (!std::getenv("IB_TEST_KEEP_FILES"))
    {
        RunCommand("rm -rf '" + dir + "'");
    }
}
#endif

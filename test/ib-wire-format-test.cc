/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Wire-format tests of the infiniband module: IBA headers, CRC trailer, flow-control packet,
// IbCrc and IbPacketParser. Golden packets are embedded below (from a real ibdump capture,
// Wireshark's InfiniBand sample); the CRC reference used here is an independent bit-at-a-time
// polynomial division written in this file.

#include "ns3/buffer.h"
#include "ns3/ib-aeth-header.h"
#include "ns3/ib-atomic-ack-eth-header.h"
#include "ns3/ib-atomic-eth-header.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-crc-trailer.h"
#include "ns3/ib-crc.h"
#include "ns3/ib-deth-header.h"
#include "ns3/ib-flow-control-header.h"
#include "ns3/ib-grh-header.h"
#include "ns3/ib-immdt-header.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-packet-parser.h"
#include "ns3/ib-reth-header.h"
#include "ns3/ib-rwh-header.h"
#include "ns3/ipoib-header.h"
#include "ns3/ipv6-address.h"
#include "ns3/packet.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------------------------
// Golden packets: LRH through VCRC, exactly as captured (pcap link type 197, ERF type 21).
// ---------------------------------------------------------------------------------------------

// Frame 1 of the capture, 290 bytes.
const uint8_t kGoldenUdSmp[] = {
    0xf0, 0x02, 0xff, 0xff, 0x00, 0x48, 0xff, 0xff, 0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0xe9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x81, 0x01, 0x01,
    0x00, 0x00, 0x01, 0x02, 0x00, 0x01, 0x50, 0x9c, 0x00, 0x01, 0x25, 0xc8, 0x00, 0x20, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x65, 0xef, 0x88,
    0x00, 0x37,
};
// Frame 11 of the capture, 30 bytes.
const uint8_t kGoldenRcAck[] = {
    0x00, 0x02, 0x00, 0x04, 0x00, 0x07, 0x00, 0x01, 0x11, 0x40, 0xff, 0xff, 0x00, 0x87, 0x04,
    0x08, 0x00, 0xd4, 0x0a, 0x55, 0x1f, 0x00, 0x00, 0x01, 0xa8, 0x03, 0x55, 0x50, 0x30, 0x81,
};
// Frame 10 of the capture, 114 bytes.
const uint8_t kGoldenRcSendOnly[] = {
    0x00, 0x02, 0x00, 0x01, 0x00, 0x1c, 0x00, 0x04, 0x04, 0x40, 0xff, 0xff, 0x00, 0xfc, 0x04,
    0x07, 0x80, 0xd4, 0x0a, 0x55, 0x08, 0x00, 0x00, 0x00, 0x45, 0x00, 0x00, 0x54, 0x00, 0x00,
    0x40, 0x00, 0x40, 0x01, 0x25, 0x4e, 0x0a, 0x00, 0x01, 0x22, 0x0a, 0x00, 0x00, 0x3a, 0x08,
    0x00, 0x85, 0x76, 0x17, 0x02, 0x00, 0x01, 0xf7, 0x41, 0x2b, 0x48, 0x00, 0x00, 0x00, 0x00,
    0x72, 0x29, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16,
    0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25,
    0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33, 0x34,
    0x35, 0x36, 0x37, 0x0a, 0xcc, 0xa5, 0xdf, 0x24, 0xa8,
};
// Frame 5 of the capture, 134 bytes.
const uint8_t kGoldenGlobalUd[] = {
    0x00, 0x03, 0xc0, 0x00, 0x00, 0x21, 0x00, 0x04, 0x60, 0x00, 0x00, 0x00, 0x00, 0x54, 0x1b,
    0x00, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xc9, 0x02, 0x00, 0x24,
    0xf6, 0x36, 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff,
    0xff, 0xff, 0xff, 0x64, 0x40, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff, 0x00, 0x00, 0x20, 0xaf,
    0x00, 0x00, 0x0b, 0x1b, 0x00, 0x00, 0x04, 0x05, 0x08, 0x06, 0x00, 0x00, 0x00, 0x20, 0x08,
    0x00, 0x14, 0x04, 0x00, 0x01, 0x80, 0x00, 0x04, 0x05, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x02, 0xc9, 0x02, 0x00, 0x24, 0xf6, 0x36, 0x0a, 0x00, 0x01, 0x22, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x3a, 0xbd, 0x6b, 0xd6, 0xa8, 0x88, 0x83,
};

/// A golden packet and its name.
struct Golden
{
    const char* name;    //!< name for messages
    const uint8_t* data; //!< bytes
    uint32_t len;        //!< number of bytes
};

/// @return all embedded golden packets
std::vector<Golden>
GoldenPackets()
{
    return {{"UD SEND Only (SMP, QP0, VL15)", kGoldenUdSmp, sizeof(kGoldenUdSmp)},
            {"RC ACKNOWLEDGE", kGoldenRcAck, sizeof(kGoldenRcAck)},
            {"RC SEND Only", kGoldenRcSendOnly, sizeof(kGoldenRcSendOnly)},
            {"UD SEND Only, global (IPoIB ARP)", kGoldenGlobalUd, sizeof(kGoldenGlobalUd)}};
}

// ---------------------------------------------------------------------------------------------
// Independent CRC reference: the Rocksoft model, computed by bit-at-a-time polynomial division
// with the register shifted MSB first, the input bits fed least significant first (refin) and
// the final register bit-reversed (refout). No table, no reflected polynomial.
// ---------------------------------------------------------------------------------------------

uint64_t
ReverseBits(uint64_t v, unsigned width)
{
    uint64_t r = 0;
    for (unsigned i = 0; i < width; ++i)
    {
        r = (r << 1) | ((v >> i) & 1U);
    }
    return r;
}

uint64_t
BitwiseCrc(const uint8_t* data,
           size_t len,
           unsigned width,
           uint64_t poly,
           uint64_t init,
           uint64_t xorOut)
{
    const uint64_t top = uint64_t{1} << (width - 1);
    const uint64_t mask = (width == 64) ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    uint64_t reg = init;
    for (size_t n = 0; n < len; ++n)
    {
        for (unsigned bit = 0; bit < 8; ++bit)
        {
            const bool in = ((data[n] >> bit) & 1U) != 0;
            const bool feedback = ((reg & top) != 0) != in;
            reg = (reg << 1) & mask;
            if (feedback)
            {
                reg ^= poly;
            }
        }
    }
    return ReverseBits(reg, width) ^ xorOut;
}

uint32_t
RefCrc32(const uint8_t* data, size_t len)
{
    return static_cast<uint32_t>(BitwiseCrc(data, len, 32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF));
}

uint16_t
RefCrc16(const uint8_t* data, size_t len)
{
    return static_cast<uint16_t>(BitwiseCrc(data, len, 16, 0x100B, 0xFFFF, 0xFFFF));
}

/// The ICRC as IBA defines it, masking done here independently of IbCrc.
uint32_t
RefIcrc(const uint8_t* pkt, size_t len)
{
    Bytes m(pkt, pkt + len);
    const uint8_t lnh = (len > 1) ? (m[1] & 3) : 0;
    auto ones = [&m](size_t i, uint8_t bits) {
        if (i < m.size())
        {
            m[i] |= bits;
        }
    };
    if (lnh == 3)
    {
        for (size_t i = 0; i < 8; ++i)
        {
            ones(i, 0xFF); // LRH
        }
        ones(8, 0x0F);  // TClass (high nibble)
        ones(9, 0xFF);  // TClass (low nibble), FlowLabel
        ones(10, 0xFF); // FlowLabel
        ones(11, 0xFF); // FlowLabel
        ones(15, 0xFF); // HopLmt
        ones(52, 0xFF); // BTH FECN/BECN/reserved
    }
    else
    {
        ones(0, 0xF0); // VL
        if (lnh == 2)
        {
            ones(12, 0xFF); // BTH FECN/BECN/reserved
        }
    }
    return RefCrc32(m.data(), m.size());
}

uint32_t
Le32(const uint8_t* p)
{
    return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

uint16_t
Le16(const uint8_t* p)
{
    return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

void
PutLe(Bytes& b, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; ++i)
    {
        b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
}

/// Set PktLen of the LRH in body (LRH..pad) and append ICRC (if wanted) and VCRC, computed with
/// the independent reference.
Bytes
Finish(Bytes body, bool withIcrc)
{
    const size_t total = body.size() + (withIcrc ? 4 : 0);
    const uint16_t words = static_cast<uint16_t>(total / 4);
    body[4] = static_cast<uint8_t>((body[4] & 0xF8) | ((words >> 8) & 0x07));
    body[5] = static_cast<uint8_t>(words & 0xFF);
    if (withIcrc)
    {
        PutLe(body, RefIcrc(body.data(), body.size()), 4);
    }
    PutLe(body, RefCrc16(body.data(), body.size()), 2);
    return body;
}

/// Recompute the VCRC of a complete packet in place (what a switch does after a change).
void
FixVcrc(Bytes& pkt)
{
    const uint16_t v = RefCrc16(pkt.data(), pkt.size() - 2);
    pkt[pkt.size() - 2] = static_cast<uint8_t>(v);
    pkt[pkt.size() - 1] = static_cast<uint8_t>(v >> 8);
}

template <class H>
Bytes
SerializeHeader(const H& h)
{
    Buffer b;
    b.AddAtStart(h.GetSerializedSize());
    h.Serialize(b.Begin());
    Bytes out(b.GetSize());
    b.CopyData(out.data(), out.size());
    return out;
}

Bytes
PacketBytes(Ptr<const Packet> p)
{
    Bytes out(p->GetSize());
    p->CopyData(out.data(), out.size());
    return out;
}

template <class H>
std::string
PrintToString(const H& h)
{
    std::ostringstream os;
    h.Print(os);
    return os.str();
}

/// Serialize a header into a packet with a payload behind it, remove it into a fresh object.
template <class H>
H
RoundTrip(const H& h)
{
    Ptr<Packet> p = Create<Packet>(37);
    p->AddHeader(h);
    H out;
    EXPECT_EQ(p->RemoveHeader(out), h.GetSerializedSize());
    EXPECT_EQ(p->GetSize(), 37u);
    return out;
}

/// Deserialize from every too-short buffer: must return 0 and leave the object unchanged.
template <class H>
void
ExpectTruncatedRejected(const H& sample)
{
    const uint32_t size = sample.GetSerializedSize();
    const Bytes before = SerializeHeader(sample);
    for (uint32_t n = 0; n < size; ++n)
    {
        Buffer b;
        b.AddAtStart(n);
        Buffer::Iterator w = b.Begin();
        for (uint32_t i = 0; i < n; ++i)
        {
            w.WriteU8(0xA5);
        }
        H h = sample;
        EXPECT_EQ(h.Deserialize(b.Begin()), 0u) << "length " << n;
        EXPECT_EQ(SerializeHeader(h), before) << "fields changed at length " << n;
    }
    // Too short from an iterator inside a larger buffer.
    Buffer b;
    b.AddAtStart(size + 10);
    Buffer::Iterator it = b.Begin();
    it.Next(11);
    H h = sample;
    EXPECT_EQ(h.Deserialize(it), 0u);
    // Exactly enough.
    it = b.Begin();
    it.Next(10);
    EXPECT_EQ(h.Deserialize(it), size);
}

} // namespace

// =============================================================================================
// IbWireFormat: byte-exact serialization, round trips, truncation, Print.
// =============================================================================================

TEST(IbWireFormat, LrhBytes)
{
    IbLrhHeader h;
    h.SetVl(0xA);
    h.SetLinkVersion(0x3);
    h.SetSl(0x5);
    h.SetLnh(IbLrhHeader::LNH_IBA_GLOBAL);
    h.SetDlid(0x1234);
    h.SetPktLen(0x5A5);
    h.SetSlid(0xBEEF);
    // clang-format off
    const Bytes expected = {
        0xA3,       // VL 0xA | LVer 0x3
        0x53,       // SL 0x5 | reserved 00 | LNH 11
        0x12, 0x34, // DLID
        0x05, 0xA5, // reserved 00000 | PktLen 101 1010 0101
        0xBE, 0xEF, // SLID
    };
    // clang-format on
    EXPECT_EQ(h.GetSerializedSize(), 8u);
    EXPECT_EQ(SerializeHeader(h), expected);
}

TEST(IbWireFormat, GrhBytes)
{
    IbGrhHeader h;
    h.SetIpVer(6);
    h.SetTrafficClass(0xAB);
    h.SetFlowLabel(0x12345);
    h.SetPayLen(0x0102);
    h.SetNxtHdr(0x1B);
    h.SetHopLmt(0x40);
    h.SetSgid(Ipv6Address("fe80::1:2:3:4"));
    h.SetDgid(Ipv6Address("ff12:401b::1"));
    // clang-format off
    const Bytes expected = {
        0x6A, 0xB1, 0x23, 0x45, // IPVer 6 | TClass 0xAB | FlowLabel 0x12345
        0x01, 0x02,             // PayLen
        0x1B,                   // NxtHdr
        0x40,                   // HopLmt
        0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // SGID fe80::1:2:3:4
        0x00, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x04, //
        0xff, 0x12, 0x40, 0x1b, 0x00, 0x00, 0x00, 0x00, // DGID ff12:401b::1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, //
    };
    // clang-format on
    EXPECT_EQ(h.GetSerializedSize(), 40u);
    EXPECT_EQ(SerializeHeader(h), expected);
}

TEST(IbWireFormat, BthBytes)
{
    IbBthHeader h;
    h.SetOpcode(IbOpcode::RC_RDMA_WRITE_ONLY);
    h.SetSolicitedEvent(true);
    h.SetMigReq(false);
    h.SetPadCnt(2);
    h.SetTVer(5);
    h.SetPKey(0x8001);
    h.SetFecn(true);
    h.SetBecn(false);
    h.SetDestQp(0xABCDEF);
    h.SetAckReq(true);
    h.SetPsn(0x123456);
    // clang-format off
    const Bytes expected = {
        0x0A,             // OpCode RC RDMA WRITE Only
        0xA5,             // SE 1 | M 0 | PadCnt 10 | TVer 0101
        0x80, 0x01,       // P_Key
        0x80,             // FECN 1 | BECN 0 | reserved 000000
        0xAB, 0xCD, 0xEF, // DestQP
        0x80,             // AckReq 1 | reserved 0000000
        0x12, 0x34, 0x56, // PSN
    };
    // clang-format on
    EXPECT_EQ(h.GetSerializedSize(), 12u);
    EXPECT_EQ(SerializeHeader(h), expected);

    // The other bit of each pair.
    h.SetSolicitedEvent(false);
    h.SetMigReq(true);
    h.SetFecn(false);
    h.SetBecn(true);
    h.SetAckReq(false);
    const Bytes expected2 =
        {0x0A, 0x65, 0x80, 0x01, 0x40, 0xAB, 0xCD, 0xEF, 0x00, 0x12, 0x34, 0x56};
    EXPECT_EQ(SerializeHeader(h), expected2);
}

TEST(IbWireFormat, RethBytes)
{
    IbRethHeader h;
    h.SetVirtualAddress(0x0123456789ABCDEFULL);
    h.SetRKey(0xDEADBEEF);
    h.SetDmaLength(0x00010203);
    // clang-format off
    const Bytes expected = {
        0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, // VA
        0xDE, 0xAD, 0xBE, 0xEF,                         // R_Key
        0x00, 0x01, 0x02, 0x03,                         // DMA length
    };
    // clang-format on
    EXPECT_EQ(h.GetSerializedSize(), 16u);
    EXPECT_EQ(SerializeHeader(h), expected);
}

TEST(IbWireFormat, AethBytes)
{
    IbAethHeader h;
    h.SetSyndrome(IbAethHeader::NAK_INVALID_REQUEST);
    h.SetMsn(0xABCDEF);
    // clang-format off
    const Bytes expected = {
        0x61,             // Syndrome: NAK, invalid request
        0xAB, 0xCD, 0xEF, // MSN
    };
    // clang-format on
    EXPECT_EQ(h.GetSerializedSize(), 4u);
    EXPECT_EQ(SerializeHeader(h), expected);
}

TEST(IbWireFormat, DethBytes)
{
    IbDethHeader h;
    h.SetQKey(0x80010002);
    h.SetSrcQp(0x123456);
    // clang-format off
    const Bytes expected = {
        0x80, 0x01, 0x00, 0x02, // Q_Key
        0x00,                   // reserved
        0x12, 0x34, 0x56,       // SrcQP
    };
    // clang-format on
    EXPECT_EQ(h.GetSerializedSize(), 8u);
    EXPECT_EQ(SerializeHeader(h), expected);
}

TEST(IbWireFormat, ImmDtBytes)
{
    IbImmDtHeader h;
    h.SetImmediateData(0xCAFEBABE);
    const Bytes expected = {0xCA, 0xFE, 0xBA, 0xBE}; // immediate data
    EXPECT_EQ(h.GetSerializedSize(), 4u);
    EXPECT_EQ(SerializeHeader(h), expected);
}

TEST(IbWireFormat, AtomicEthBytes)
{
    IbAtomicEthHeader h;
    h.SetVirtualAddress(0x0001020304050607ULL);
    h.SetRKey(0x08090A0B);
    h.SetSwapOrAdd(0x1112131415161718ULL);
    h.SetCompare(0x2122232425262728ULL);
    // clang-format off
    const Bytes expected = {
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, // VA
        0x08, 0x09, 0x0A, 0x0B,                         // R_Key
        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, // SwapOrAdd
        0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, // Compare
    };
    // clang-format on
    EXPECT_EQ(h.GetSerializedSize(), 28u);
    EXPECT_EQ(SerializeHeader(h), expected);
}

TEST(IbWireFormat, AtomicAckEthBytes)
{
    IbAtomicAckEthHeader h;
    h.SetOriginalData(0xF0E0D0C0B0A09080ULL);
    const Bytes expected = {0xF0, 0xE0, 0xD0, 0xC0, 0xB0, 0xA0, 0x90, 0x80}; // original data
    EXPECT_EQ(h.GetSerializedSize(), 8u);
    EXPECT_EQ(SerializeHeader(h), expected);
}

TEST(IbWireFormat, CrcTrailerBytes)
{
    IbCrcTrailer t;
    t.SetIcrc(0x11223344);
    t.SetVcrc(0xAABB);
    Ptr<Packet> p = Create<Packet>();
    p->AddTrailer(t);
    // clang-format off
    const Bytes expected = {
        0x44, 0x33, 0x22, 0x11, // ICRC, least significant byte first
        0xBB, 0xAA,             // VCRC, least significant byte first
    };
    // clang-format on
    EXPECT_EQ(t.GetSerializedSize(), 6u);
    EXPECT_EQ(PacketBytes(p), expected);

    IbCrcTrailer raw;
    raw.SetHasIcrc(false);
    raw.SetVcrc(0x1234);
    Ptr<Packet> q = Create<Packet>();
    q->AddTrailer(raw);
    EXPECT_EQ(raw.GetSerializedSize(), 2u);
    EXPECT_EQ(PacketBytes(q), (Bytes{0x34, 0x12})); // VCRC only
}

TEST(IbWireFormat, FlowControlBytes)
{
    IbFlowControlHeader h;
    h.SetOp(IbFlowControlHeader::OP_INIT);
    h.SetFctbs(0xABC);
    h.SetVl(7);
    h.SetFccl(0x123);
    // clang-format off
    const uint8_t first4[] = {
        0x1A, 0xBC, // Op 0001 | FCTBS 1010 1011 1100
        0x71, 0x23, // VL 0111 | FCCL 0001 0010 0011
    };
    // clang-format on
    const uint16_t lpcrc = RefCrc16(first4, 4);
    Bytes expected(first4, first4 + 4);
    expected.push_back(static_cast<uint8_t>(lpcrc));      // LPCRC, low byte first
    expected.push_back(static_cast<uint8_t>(lpcrc >> 8)); // LPCRC, high byte
    EXPECT_EQ(h.GetSerializedSize(), 6u);
    EXPECT_EQ(SerializeHeader(h), expected);
    EXPECT_EQ(h.GetLpcrc(), lpcrc);
    EXPECT_TRUE(h.IsLpcrcValid());
    // The word a cable carries instead of the packet is the same four bytes.
    const uint32_t word = h.GetFirstWord();
    EXPECT_EQ(word, 0x1ABC7123u);
    EXPECT_EQ(IbFlowControlHeader::OpOf(word), IbFlowControlHeader::OP_INIT);
    EXPECT_EQ(IbFlowControlHeader::FctbsOf(word), 0xABC);
    EXPECT_EQ(IbFlowControlHeader::VlOf(word), 7);
    EXPECT_EQ(IbFlowControlHeader::FcclOf(word), 0x123);
}

TEST(IbWireFormat, Defaults)
{
    IbLrhHeader lrh;
    EXPECT_EQ(lrh.GetVl(), 0);
    EXPECT_EQ(lrh.GetLinkVersion(), 0);
    EXPECT_EQ(lrh.GetSl(), 0);
    EXPECT_EQ(lrh.GetLnh(), IbLrhHeader::LNH_IBA_LOCAL);
    EXPECT_EQ(lrh.GetDlid(), 0);
    EXPECT_EQ(lrh.GetPktLen(), 0);
    EXPECT_EQ(lrh.GetSlid(), 0);
    IbGrhHeader grh;
    EXPECT_EQ(grh.GetIpVer(), 6);
    EXPECT_EQ(grh.GetNxtHdr(), 0x1B);
    IbBthHeader bth;
    EXPECT_EQ(bth.GetPKey(), 0xFFFF);
    EXPECT_EQ(bth.GetPadCnt(), 0);
    IbCrcTrailer t;
    EXPECT_TRUE(t.GetHasIcrc());
    EXPECT_EQ(t.GetSerializedSize(), 6u);
    EXPECT_EQ(IbLrhHeader::LNH_RAW, 0);
    EXPECT_EQ(IbLrhHeader::LNH_IP_NON_IBA, 1);
    EXPECT_EQ(IbLrhHeader::LNH_IBA_LOCAL, 2);
    EXPECT_EQ(IbLrhHeader::LNH_IBA_GLOBAL, 3);
}

TEST(IbWireFormat, TypeIds)
{
    EXPECT_EQ(IbLrhHeader::GetTypeId().GetName(), "ns3::IbLrhHeader");
    EXPECT_EQ(IbGrhHeader::GetTypeId().GetName(), "ns3::IbGrhHeader");
    EXPECT_EQ(IbBthHeader::GetTypeId().GetName(), "ns3::IbBthHeader");
    EXPECT_EQ(IbRethHeader::GetTypeId().GetName(), "ns3::IbRethHeader");
    EXPECT_EQ(IbAethHeader::GetTypeId().GetName(), "ns3::IbAethHeader");
    EXPECT_EQ(IbDethHeader::GetTypeId().GetName(), "ns3::IbDethHeader");
    EXPECT_EQ(IbImmDtHeader::GetTypeId().GetName(), "ns3::IbImmDtHeader");
    EXPECT_EQ(IbAtomicEthHeader::GetTypeId().GetName(), "ns3::IbAtomicEthHeader");
    EXPECT_EQ(IbAtomicAckEthHeader::GetTypeId().GetName(), "ns3::IbAtomicAckEthHeader");
    EXPECT_EQ(IbCrcTrailer::GetTypeId().GetName(), "ns3::IbCrcTrailer");
    EXPECT_EQ(IbFlowControlHeader::GetTypeId().GetName(), "ns3::IbFlowControlHeader");
    EXPECT_EQ(IbLrhHeader::GetTypeId().GetParent(), Header::GetTypeId());
    EXPECT_EQ(IbCrcTrailer::GetTypeId().GetParent(), Trailer::GetTypeId());
    EXPECT_EQ(IbBthHeader::GetTypeId().GetGroupName(), "Infiniband");
    IbDethHeader d;
    EXPECT_EQ(d.GetInstanceTypeId(), IbDethHeader::GetTypeId());
}

TEST(IbWireFormat, RoundTrips)
{
    IbLrhHeader lrh;
    lrh.SetVl(15);
    lrh.SetLinkVersion(1);
    lrh.SetSl(9);
    lrh.SetLnh(IbLrhHeader::LNH_RAW);
    lrh.SetDlid(0xC000);
    lrh.SetPktLen(2047);
    lrh.SetSlid(7);
    IbLrhHeader lrh2 = RoundTrip(lrh);
    EXPECT_EQ(lrh2.GetVl(), 15);
    EXPECT_EQ(lrh2.GetLinkVersion(), 1);
    EXPECT_EQ(lrh2.GetSl(), 9);
    EXPECT_EQ(lrh2.GetLnh(), IbLrhHeader::LNH_RAW);
    EXPECT_EQ(lrh2.GetDlid(), 0xC000);
    EXPECT_EQ(lrh2.GetPktLen(), 2047);
    EXPECT_EQ(lrh2.GetSlid(), 7);

    IbGrhHeader grh;
    grh.SetIpVer(6);
    grh.SetTrafficClass(0xFE);
    grh.SetFlowLabel(0xFFFFF);
    grh.SetPayLen(4136);
    grh.SetNxtHdr(0x1B);
    grh.SetHopLmt(255);
    grh.SetSgid(Ipv6Address("fe80::2:c902:24:f636"));
    grh.SetDgid(Ipv6Address("ff12:401b:ffff::ffff:ffff"));
    IbGrhHeader grh2 = RoundTrip(grh);
    EXPECT_EQ(grh2.GetIpVer(), 6);
    EXPECT_EQ(grh2.GetTrafficClass(), 0xFE);
    EXPECT_EQ(grh2.GetFlowLabel(), 0xFFFFFu);
    EXPECT_EQ(grh2.GetPayLen(), 4136);
    EXPECT_EQ(grh2.GetNxtHdr(), 0x1B);
    EXPECT_EQ(grh2.GetHopLmt(), 255);
    EXPECT_EQ(grh2.GetSgid(), Ipv6Address("fe80::2:c902:24:f636"));
    EXPECT_EQ(grh2.GetDgid(), Ipv6Address("ff12:401b:ffff::ffff:ffff"));

    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE);
    bth.SetSolicitedEvent(true);
    bth.SetMigReq(true);
    bth.SetPadCnt(3);
    bth.SetTVer(15);
    bth.SetPKey(0x7FFF);
    bth.SetFecn(true);
    bth.SetBecn(true);
    bth.SetDestQp(0xFFFFFF);
    bth.SetAckReq(true);
    bth.SetPsn(0xFFFFFE);
    IbBthHeader bth2 = RoundTrip(bth);
    EXPECT_EQ(bth2.GetOpcode(), IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE);
    EXPECT_TRUE(bth2.GetSolicitedEvent());
    EXPECT_TRUE(bth2.GetMigReq());
    EXPECT_EQ(bth2.GetPadCnt(), 3);
    EXPECT_EQ(bth2.GetTVer(), 15);
    EXPECT_EQ(bth2.GetPKey(), 0x7FFF);
    EXPECT_TRUE(bth2.GetFecn());
    EXPECT_TRUE(bth2.GetBecn());
    EXPECT_EQ(bth2.GetDestQp(), 0xFFFFFFu);
    EXPECT_TRUE(bth2.GetAckReq());
    EXPECT_EQ(bth2.GetPsn(), 0xFFFFFEu);

    IbRethHeader reth;
    reth.SetVirtualAddress(0xFFFFFFFF00000001ULL);
    reth.SetRKey(0x12345678);
    reth.SetDmaLength(1U << 31);
    IbRethHeader reth2 = RoundTrip(reth);
    EXPECT_EQ(reth2.GetVirtualAddress(), 0xFFFFFFFF00000001ULL);
    EXPECT_EQ(reth2.GetRKey(), 0x12345678u);
    EXPECT_EQ(reth2.GetDmaLength(), 1U << 31);

    IbAethHeader aeth;
    aeth.SetSyndrome(IbAethHeader::RnrNakSyndrome(14));
    aeth.SetMsn(0x00F00D);
    IbAethHeader aeth2 = RoundTrip(aeth);
    EXPECT_EQ(aeth2.GetSyndrome(), 0x2E);
    EXPECT_EQ(aeth2.GetMsn(), 0x00F00Du);

    IbDethHeader deth;
    deth.SetQKey(0x80010000);
    deth.SetSrcQp(0xFFFFFF);
    IbDethHeader deth2 = RoundTrip(deth);
    EXPECT_EQ(deth2.GetQKey(), 0x80010000u);
    EXPECT_EQ(deth2.GetSrcQp(), 0xFFFFFFu);

    IbImmDtHeader imm;
    imm.SetImmediateData(0xFFFFFFFF);
    EXPECT_EQ(RoundTrip(imm).GetImmediateData(), 0xFFFFFFFFu);

    IbAtomicEthHeader atomic;
    atomic.SetVirtualAddress(0x1000);
    atomic.SetRKey(0xABCD);
    atomic.SetSwapOrAdd(0xFFFFFFFFFFFFFFFFULL);
    atomic.SetCompare(0x8000000000000000ULL);
    IbAtomicEthHeader atomic2 = RoundTrip(atomic);
    EXPECT_EQ(atomic2.GetVirtualAddress(), 0x1000u);
    EXPECT_EQ(atomic2.GetRKey(), 0xABCDu);
    EXPECT_EQ(atomic2.GetSwapOrAdd(), 0xFFFFFFFFFFFFFFFFULL);
    EXPECT_EQ(atomic2.GetCompare(), 0x8000000000000000ULL);

    IbAtomicAckEthHeader atomicAck;
    atomicAck.SetOriginalData(42);
    EXPECT_EQ(RoundTrip(atomicAck).GetOriginalData(), 42u);

    IbFlowControlHeader fc;
    fc.SetOp(IbFlowControlHeader::OP_NORMAL);
    fc.SetFctbs(4095);
    fc.SetVl(14);
    fc.SetFccl(2048);
    IbFlowControlHeader fc2 = RoundTrip(fc);
    EXPECT_EQ(fc2.GetOp(), IbFlowControlHeader::OP_NORMAL);
    EXPECT_EQ(fc2.GetFctbs(), 4095);
    EXPECT_EQ(fc2.GetVl(), 14);
    EXPECT_EQ(fc2.GetFccl(), 2048);
    EXPECT_EQ(fc2.GetLpcrc(), fc.GetLpcrc());
    EXPECT_TRUE(fc2.IsLpcrcValid());
}

TEST(IbWireFormat, CrcTrailerRoundTrip)
{
    Ptr<Packet> p = Create<Packet>(100);
    IbCrcTrailer t;
    t.SetIcrc(0xDEADBEEF);
    t.SetVcrc(0x8001);
    p->AddTrailer(t);
    IbCrcTrailer t2;
    EXPECT_EQ(p->RemoveTrailer(t2), 6u);
    EXPECT_EQ(t2.GetIcrc(), 0xDEADBEEFu);
    EXPECT_EQ(t2.GetVcrc(), 0x8001);
    EXPECT_EQ(p->GetSize(), 100u);

    IbCrcTrailer raw;
    raw.SetHasIcrc(false);
    raw.SetVcrc(0x0102);
    p->AddTrailer(raw);
    IbCrcTrailer raw2;
    raw2.SetHasIcrc(false);
    EXPECT_EQ(p->RemoveTrailer(raw2), 2u);
    EXPECT_EQ(raw2.GetVcrc(), 0x0102);
    EXPECT_EQ(p->GetSize(), 100u);
}

TEST(IbWireFormat, TruncatedHeadersGiveZero)
{
    IbLrhHeader lrh;
    lrh.SetDlid(5);
    ExpectTruncatedRejected(lrh);
    IbGrhHeader grh;
    grh.SetHopLmt(3);
    ExpectTruncatedRejected(grh);
    IbBthHeader bth;
    bth.SetPsn(77);
    ExpectTruncatedRejected(bth);
    IbRethHeader reth;
    reth.SetRKey(9);
    ExpectTruncatedRejected(reth);
    IbAethHeader aeth;
    aeth.SetMsn(9);
    ExpectTruncatedRejected(aeth);
    IbDethHeader deth;
    deth.SetQKey(9);
    ExpectTruncatedRejected(deth);
    IbImmDtHeader imm;
    imm.SetImmediateData(9);
    ExpectTruncatedRejected(imm);
    IbAtomicEthHeader atomic;
    atomic.SetCompare(9);
    ExpectTruncatedRejected(atomic);
    IbAtomicAckEthHeader atomicAck;
    atomicAck.SetOriginalData(9);
    ExpectTruncatedRejected(atomicAck);
    IbFlowControlHeader fc;
    fc.SetFccl(9);
    ExpectTruncatedRejected(fc);
    IbRwhHeader rwh;
    rwh.SetEtherType(0x0800);
    ExpectTruncatedRejected(rwh);
    IpoibHeader ipoib;
    ipoib.SetEtherType(0x0800);
    ExpectTruncatedRejected(ipoib);
}

TEST(IbWireFormat, TruncatedTrailerGivesZero)
{
    for (bool hasIcrc : {true, false})
    {
        const uint32_t size = hasIcrc ? 6 : 2;
        for (uint32_t n = 0; n < size; ++n)
        {
            Buffer b;
            b.AddAtStart(n);
            IbCrcTrailer t;
            t.SetHasIcrc(hasIcrc);
            t.SetIcrc(1);
            t.SetVcrc(2);
            EXPECT_EQ(t.Deserialize(b.End()), 0u) << "length " << n;
            EXPECT_EQ(t.GetIcrc(), 1u);
            EXPECT_EQ(t.GetVcrc(), 2);
        }
        Buffer b;
        b.AddAtStart(size);
        IbCrcTrailer t;
        t.SetHasIcrc(hasIcrc);
        EXPECT_EQ(t.Deserialize(b.End()), size);
    }
}

TEST(IbWireFormat, PrintShowsFieldNames)
{
    IbLrhHeader lrh;
    lrh.SetDlid(5);
    lrh.SetPktLen(71);
    lrh.SetSlid(13);
    EXPECT_EQ(PrintToString(lrh),
              "Virtual Lane: 0, Link Version: 0, Service Level: 0, Link Next Header: 2, "
              "Destination Local ID: 5, Packet Length: 71, Source Local ID: 13");

    IbGrhHeader grh;
    grh.SetSgid(Ipv6Address("fe80::2:c902:24:f636"));
    const std::string g = PrintToString(grh);
    for (const char* field : {"IP Version: 6",
                              "Traffic Class: ",
                              "Flow Label: ",
                              "Payload Length: ",
                              "Next Header: 27",
                              "Hop Limit: ",
                              "Source GID: fe80::2:c902:24:f636",
                              "Destination GID: "})
    {
        EXPECT_NE(g.find(field), std::string::npos) << field << " missing in " << g;
    }

    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::RC_SEND_ONLY);
    bth.SetDestQp(0xfc0407);
    bth.SetPsn(13896277);
    const std::string b = PrintToString(bth);
    for (const char* field : {"Opcode: RC Send Only (4)",
                              "Solicited Event: ",
                              "MigReq: ",
                              "Pad Count: ",
                              "Header Version: ",
                              "Partition Key: 0xffff",
                              "FECN: ",
                              "BECN: ",
                              "Destination Queue Pair: 0xfc0407",
                              "Acknowledge Request: ",
                              "Packet Sequence Number: 13896277"})
    {
        EXPECT_NE(b.find(field), std::string::npos) << field << " missing in " << b;
    }

    IbAethHeader aeth;
    aeth.SetSyndrome(0x1F);
    aeth.SetMsn(1);
    EXPECT_EQ(PrintToString(aeth),
              "Syndrome: 31 (Ack, Credit Count: 31), Message Sequence Number: 1");
    aeth.SetSyndrome(IbAethHeader::NAK_PSN_SEQUENCE_ERROR);
    EXPECT_NE(PrintToString(aeth).find("Nak, PSN Sequence Error"), std::string::npos);

    IbDethHeader deth;
    deth.SetQKey(0xb1b);
    deth.SetSrcQp(0x405);
    EXPECT_EQ(PrintToString(deth), "Queue Key: 0x00000b1b, Source Queue Pair: 0x000405");

    IbRethHeader reth;
    const std::string r = PrintToString(reth);
    EXPECT_NE(r.find("Virtual Address: 0x"), std::string::npos);
    EXPECT_NE(r.find("Remote Key: 0x"), std::string::npos);
    EXPECT_NE(r.find("DMA Length: 0"), std::string::npos);
    EXPECT_NE(PrintToString(IbImmDtHeader()).find("Immediate Data: 0x"), std::string::npos);
    const std::string a = PrintToString(IbAtomicEthHeader());
    EXPECT_NE(a.find("Swap (Or Add) Data: 0x"), std::string::npos);
    EXPECT_NE(a.find("Compare Data: 0x"), std::string::npos);
    EXPECT_NE(PrintToString(IbAtomicAckEthHeader()).find("Original Remote Data: 0x"),
              std::string::npos);
    IbCrcTrailer t;
    t.SetIcrc(0x505503a8);
    t.SetVcrc(0x8130);
    EXPECT_EQ(PrintToString(t), "Invariant CRC: 0x505503a8, Variant CRC: 0x8130");
    const std::string f = PrintToString(IbFlowControlHeader());
    for (const char* field : {"Operand: 0",
                              "Flow Control Total Blocks Sent: 0",
                              "Virtual Lane: 0",
                              "Flow Control Credit Limit: 0",
                              "Link Packet CRC: 0x"})
    {
        EXPECT_NE(f.find(field), std::string::npos) << field << " missing in " << f;
    }

    // Print leaves the stream's formatting as it was.
    std::ostringstream os;
    bth.Print(os);
    os << 255;
    EXPECT_EQ(os.str().substr(os.str().size() - 3), "255");
}

TEST(IbWireFormat, OpcodeHelpers)
{
    struct Row
    {
        uint8_t opcode;
        const char* name;
        uint32_t extSize;
        bool payload;
    };

    const Row rows[] = {
        {IbOpcode::RC_SEND_FIRST, "RC Send First", 0, true},
        {IbOpcode::RC_SEND_MIDDLE, "RC Send Middle", 0, true},
        {IbOpcode::RC_SEND_LAST, "RC Send Last", 0, true},
        {IbOpcode::RC_SEND_LAST_WITH_IMMEDIATE, "RC Send Last Immediate", 4, true},
        {IbOpcode::RC_SEND_ONLY, "RC Send Only", 0, true},
        {IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE, "RC Send Only Immediate", 4, true},
        {IbOpcode::RC_RDMA_WRITE_FIRST, "RC RDMA Write First", 16, true},
        {IbOpcode::RC_RDMA_WRITE_MIDDLE, "RC RDMA Write Middle", 0, true},
        {IbOpcode::RC_RDMA_WRITE_LAST, "RC RDMA Write Last", 0, true},
        {IbOpcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, "RC RDMA Write Last Immediate", 4, true},
        {IbOpcode::RC_RDMA_WRITE_ONLY, "RC RDMA Write Only", 16, true},
        {IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, "RC RDMA Write Only Immediate", 20, true},
        {IbOpcode::RC_RDMA_READ_REQUEST, "RC RDMA Read Request", 16, false},
        {IbOpcode::RC_RDMA_READ_RESPONSE_FIRST, "RC RDMA Read Response First", 4, true},
        {IbOpcode::RC_RDMA_READ_RESPONSE_MIDDLE, "RC RDMA Read Response Middle", 0, true},
        {IbOpcode::RC_RDMA_READ_RESPONSE_LAST, "RC RDMA Read Response Last", 4, true},
        {IbOpcode::RC_RDMA_READ_RESPONSE_ONLY, "RC RDMA Read Response Only", 4, true},
        {IbOpcode::RC_ACKNOWLEDGE, "RC Acknowledge", 4, false},
        {IbOpcode::RC_ATOMIC_ACKNOWLEDGE, "RC Atomic Acknowledge", 12, false},
        {IbOpcode::RC_COMPARE_SWAP, "RC Compare Swap", 28, false},
        {IbOpcode::RC_FETCH_ADD, "RC Fetch Add", 28, false},
        {IbOpcode::UD_SEND_ONLY, "UD Send Only", 8, true},
        {IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE, "UD Send Only Immediate", 12, true},
    };
    uint32_t known = 0;
    for (const auto& row : rows)
    {
        EXPECT_TRUE(IbBthHeader::IsKnownOpcode(row.opcode));
        EXPECT_STREQ(IbBthHeader::OpcodeName(row.opcode), row.name);
        EXPECT_EQ(IbBthHeader::ExtensionHeaderSize(row.opcode), row.extSize) << row.name;
        EXPECT_EQ(IbBthHeader::HasPayload(row.opcode), row.payload) << row.name;
    }
    for (uint32_t op = 0; op < 256; ++op)
    {
        if (IbBthHeader::IsKnownOpcode(static_cast<uint8_t>(op)))
        {
            ++known;
        }
        else
        {
            // The congestion notification packet is named, though it carries no transport.
            EXPECT_STREQ(IbBthHeader::OpcodeName(static_cast<uint8_t>(op)),
                         op == IbOpcode::CNP ? "CNP" : "Unknown");
            EXPECT_EQ(IbBthHeader::ExtensionHeaderSize(static_cast<uint8_t>(op)), 0u);
        }
    }
    EXPECT_EQ(known, sizeof(rows) / sizeof(rows[0]));
    EXPECT_EQ(IbBthHeader::ExtensionHeaders(IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE),
              IbBthHeader::EXT_RETH | IbBthHeader::EXT_IMMDT);
    EXPECT_EQ(IbBthHeader::ExtensionHeaders(IbOpcode::RC_ATOMIC_ACKNOWLEDGE),
              IbBthHeader::EXT_AETH | IbBthHeader::EXT_ATOMIC_ACK_ETH);
    EXPECT_EQ(IbBthHeader::ExtensionHeaders(IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE),
              IbBthHeader::EXT_DETH | IbBthHeader::EXT_IMMDT);
}

TEST(IbWireFormat, AethSyndromeClasses)
{
    IbAethHeader h;
    h.SetSyndrome(IbAethHeader::AckSyndrome(IbAethHeader::CREDIT_COUNT_UNLIMITED));
    EXPECT_EQ(h.GetSyndrome(), 0x1F);
    EXPECT_TRUE(h.IsAck());
    EXPECT_FALSE(h.IsRnrNak());
    EXPECT_FALSE(h.IsNak());
    EXPECT_EQ(h.GetCreditCount(), 31);
    h.SetSyndrome(IbAethHeader::RnrNakSyndrome(0x12));
    EXPECT_EQ(h.GetSyndrome(), 0x32);
    EXPECT_TRUE(h.IsRnrNak());
    EXPECT_EQ(h.GetRnrTimerCode(), 0x12);
    for (uint8_t s = IbAethHeader::NAK_PSN_SEQUENCE_ERROR;
         s <= IbAethHeader::NAK_INVALID_RD_REQUEST;
         ++s)
    {
        h.SetSyndrome(s);
        EXPECT_TRUE(h.IsNak());
        EXPECT_FALSE(h.IsAck());
        EXPECT_FALSE(h.IsRnrNak());
    }
    EXPECT_EQ(IbAethHeader::NAK_PSN_SEQUENCE_ERROR, 0x60);
    EXPECT_EQ(IbAethHeader::NAK_INVALID_REQUEST, 0x61);
    EXPECT_EQ(IbAethHeader::NAK_REMOTE_ACCESS_ERROR, 0x62);
    EXPECT_EQ(IbAethHeader::NAK_REMOTE_OPERATIONAL_ERROR, 0x63);
    EXPECT_EQ(IbAethHeader::NAK_INVALID_RD_REQUEST, 0x64);
    // Class 010 is reserved: none of the three.
    EXPECT_FALSE(IbAethHeader::IsAckSyndrome(0x40));
    EXPECT_FALSE(IbAethHeader::IsRnrNakSyndrome(0x40));
    EXPECT_FALSE(IbAethHeader::IsNakSyndrome(0x40));
}

TEST(IbWireFormat, SettersRefuseValuesTheirFieldsCannotHoldInEveryBuild)
{
    // Checked with asserts only before: a release build truncated the value into the
    // field and wrote a different header than the one asked for.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbLrhHeader lrh;
    EXPECT_DEATH(lrh.SetVl(16), "IbLrhHeader::SetVl: LRH VL 16 out of range 0\\.\\.15");
    EXPECT_DEATH(lrh.SetLinkVersion(16), "IbLrhHeader::SetLinkVersion: LRH LVer 16");
    EXPECT_DEATH(lrh.SetSl(16), "IbLrhHeader::SetSl: LRH SL 16");
    EXPECT_DEATH(lrh.SetLnh(4), "IbLrhHeader::SetLnh: LRH LNH 4");
    EXPECT_DEATH(lrh.SetPktLen(2048), "IbLrhHeader::SetPktLen: LRH PktLen 2048");
    IbBthHeader bth;
    EXPECT_DEATH(bth.SetPadCnt(4), "IbBthHeader::SetPadCnt: BTH PadCnt 4");
    EXPECT_DEATH(bth.SetTVer(16), "IbBthHeader::SetTVer: BTH TVer 16");
    EXPECT_DEATH(bth.SetDestQp(1U << 24), "IbBthHeader::SetDestQp: BTH DestQP 16777216");
    EXPECT_DEATH(bth.SetPsn(1U << 24), "IbBthHeader::SetPsn: BTH PSN 16777216");
    IbAethHeader aeth;
    EXPECT_DEATH(aeth.SetMsn(1U << 24), "IbAethHeader::SetMsn: AETH MSN 16777216");
    EXPECT_DEATH(IbAethHeader::AckSyndrome(32), "IbAethHeader::AckSyndrome: AETH credit count 32");
    EXPECT_DEATH(IbAethHeader::RnrNakSyndrome(32),
                 "IbAethHeader::RnrNakSyndrome: AETH RNR timer code 32");
    IbDethHeader deth;
    EXPECT_DEATH(deth.SetSrcQp(1U << 24), "IbDethHeader::SetSrcQp: DETH SrcQP 16777216");
    IbGrhHeader grh;
    EXPECT_DEATH(grh.SetIpVer(16), "IbGrhHeader::SetIpVer: GRH IPVer 16");
    EXPECT_DEATH(grh.SetFlowLabel(1U << 20), "IbGrhHeader::SetFlowLabel: GRH FlowLabel 1048576");
    IbFlowControlHeader fc;
    EXPECT_DEATH(fc.SetOp(16), "IbFlowControlHeader::SetOp: Flow-control Op 16");
    EXPECT_DEATH(fc.SetFctbs(4096), "IbFlowControlHeader::SetFctbs: Flow-control FCTBS 4096");
    EXPECT_DEATH(fc.SetVl(16), "IbFlowControlHeader::SetVl: Flow-control VL 16");
    EXPECT_DEATH(fc.SetFccl(4096), "IbFlowControlHeader::SetFccl: Flow-control FCCL 4096");
    // The largest values fit.
    lrh.SetVl(15);
    lrh.SetPktLen(2047);
    bth.SetPsn(0xFFFFFF);
    fc.SetFccl(4095);
    EXPECT_EQ(lrh.GetVl(), 15);
    EXPECT_EQ(lrh.GetPktLen(), 2047);
    EXPECT_EQ(bth.GetPsn(), 0xFFFFFFu);
    EXPECT_EQ(fc.GetFccl(), 4095);
}

TEST(IbWireFormat, GoldenHeadersReserializeToCapturedBytes)
{
    for (const auto& g : GoldenPackets())
    {
        SCOPED_TRACE(g.name);
        IbPacketParser parser;
        std::string error;
        ASSERT_TRUE(parser.Parse(g.data, g.len, &error)) << error;
        // Rebuild the packet from the parsed headers and the payload bytes, in ns-3 order.
        Ptr<Packet> p = Create<Packet>(g.data + parser.m_payloadOffset,
                                       parser.m_payloadLength + parser.m_padCount);
        if (parser.m_hasImmDt)
        {
            p->AddHeader(parser.m_immDt);
        }
        if (parser.m_hasAtomicAckEth)
        {
            p->AddHeader(parser.m_atomicAckEth);
        }
        if (parser.m_hasAeth)
        {
            p->AddHeader(parser.m_aeth);
        }
        if (parser.m_hasAtomicEth)
        {
            p->AddHeader(parser.m_atomicEth);
        }
        if (parser.m_hasReth)
        {
            p->AddHeader(parser.m_reth);
        }
        if (parser.m_hasDeth)
        {
            p->AddHeader(parser.m_deth);
        }
        p->AddHeader(parser.m_bth);
        if (parser.m_hasGrh)
        {
            p->AddHeader(parser.m_grh);
        }
        p->AddHeader(parser.m_lrh);
        const Bytes covered = PacketBytes(p);
        IbCrcTrailer t;
        t.SetIcrc(IbCrc::ComputeIcrc(covered.data(), covered.size()));
        Bytes withIcrc = covered;
        PutLe(withIcrc, t.GetIcrc(), 4);
        t.SetVcrc(IbCrc::ComputeVcrc(withIcrc.data(), withIcrc.size()));
        p->AddTrailer(t);
        EXPECT_EQ(PacketBytes(p), Bytes(g.data, g.data + g.len));

        // And the trailer reads back the captured values.
        IbCrcTrailer t2;
        EXPECT_EQ(p->RemoveTrailer(t2), 6u);
        EXPECT_EQ(t2.GetIcrc(), Le32(g.data + g.len - 6));
        EXPECT_EQ(t2.GetVcrc(), Le16(g.data + g.len - 2));
    }
}

// =============================================================================================
// IbCrc
// =============================================================================================

TEST(IbCrc, ReferenceImplementationCheckValues)
{
    // The standard check value of CRC-32 (zlib crc32 of "123456789") validates the reference.
    const uint8_t digits[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
    EXPECT_EQ(RefCrc32(digits, sizeof(digits)), 0xCBF43926u);
    EXPECT_EQ(RefCrc32(digits, 0), 0u);
    EXPECT_EQ(RefCrc16(digits, 0), 0u);
    EXPECT_EQ(IbCrc::ComputeVcrc(digits, sizeof(digits)), RefCrc16(digits, sizeof(digits)));
    EXPECT_EQ(IbCrc::ComputeVcrc(nullptr, 0), 0);
    EXPECT_EQ(IbCrc::ComputeIcrc(nullptr, 0), 0u);
}

TEST(IbCrc, GoldenPacketsTrailers)
{
    for (const auto& g : GoldenPackets())
    {
        SCOPED_TRACE(g.name);
        const uint32_t icrcOffset = g.len - 6;
        const uint32_t capturedIcrc = Le32(g.data + icrcOffset);
        const uint16_t capturedVcrc = Le16(g.data + g.len - 2);
        EXPECT_EQ(RefIcrc(g.data, icrcOffset), capturedIcrc);
        EXPECT_EQ(RefCrc16(g.data, g.len - 2), capturedVcrc);
        EXPECT_EQ(IbCrc::ComputeIcrc(g.data, icrcOffset), capturedIcrc);
        EXPECT_EQ(IbCrc::ComputeVcrc(g.data, g.len - 2), capturedVcrc);
    }
    // Known values, as Wireshark shows them (bytes read big-endian): RC ACK ICRC 0xa8035550,
    // VCRC 0x3081.
    EXPECT_EQ(IbCrc::ComputeIcrc(kGoldenRcAck, sizeof(kGoldenRcAck) - 6), 0x505503a8u);
    EXPECT_EQ(IbCrc::ComputeVcrc(kGoldenRcAck, sizeof(kGoldenRcAck) - 2), 0x8130);
}

TEST(IbCrc, RandomBuffersMatchReference)
{
    std::mt19937 rng(12345);
    for (int iter = 0; iter < 300; ++iter)
    {
        const uint32_t len = (iter < 80) ? static_cast<uint32_t>(iter) : rng() % 2100;
        Bytes buf(len);
        for (auto& b : buf)
        {
            b = static_cast<uint8_t>(rng());
        }
        EXPECT_EQ(IbCrc::ComputeIcrc(buf.data(), len), RefIcrc(buf.data(), len)) << len;
        EXPECT_EQ(IbCrc::ComputeVcrc(buf.data(), len), RefCrc16(buf.data(), len)) << len;
        if (len >= 2)
        {
            for (uint8_t lnh = 0; lnh < 4; ++lnh)
            {
                buf[1] = static_cast<uint8_t>((buf[1] & 0xFC) | lnh);
                EXPECT_EQ(IbCrc::ComputeIcrc(buf.data(), len), RefIcrc(buf.data(), len))
                    << len << " LNH " << +lnh;
            }
        }
    }
}

TEST(IbCrc, IcrcIgnoresVariantFieldsOnly)
{
    // Local: VL nibble and BTH byte 4 are variant.
    Bytes local(kGoldenRcAck, kGoldenRcAck + sizeof(kGoldenRcAck) - 6);
    const uint32_t base = IbCrc::ComputeIcrc(local.data(), local.size());
    for (size_t i = 0; i < local.size(); ++i)
    {
        for (unsigned bit = 0; bit < 8; ++bit)
        {
            if (i == 1 && bit < 2)
            {
                continue; // LNH selects the masking itself
            }
            Bytes m = local;
            m[i] ^= static_cast<uint8_t>(1U << bit);
            const bool variant = (i == 0 && bit >= 4) || i == 12;
            EXPECT_EQ(IbCrc::ComputeIcrc(m.data(), m.size()) == base, variant)
                << "byte " << i << " bit " << bit;
        }
    }
    // Global: whole LRH, TClass, FlowLabel, HopLmt and BTH byte 4 (offset 52) are variant.
    Bytes global(kGoldenGlobalUd, kGoldenGlobalUd + sizeof(kGoldenGlobalUd) - 6);
    const uint32_t gbase = IbCrc::ComputeIcrc(global.data(), global.size());
    for (size_t i = 0; i < global.size(); ++i)
    {
        for (unsigned bit = 0; bit < 8; ++bit)
        {
            if (i == 1 && bit < 2)
            {
                continue;
            }
            Bytes m = global;
            m[i] ^= static_cast<uint8_t>(1U << bit);
            const bool variant =
                i < 8 || (i == 8 && bit < 4) || (i >= 9 && i <= 11) || i == 15 || i == 52;
            EXPECT_EQ(IbCrc::ComputeIcrc(m.data(), m.size()) == gbase, variant)
                << "byte " << i << " bit " << bit;
        }
    }
}

TEST(IbCrc, ComputeDoesNotModifyInput)
{
    Bytes pkt(kGoldenGlobalUd, kGoldenGlobalUd + sizeof(kGoldenGlobalUd));
    const Bytes copy = pkt;
    IbCrc::ComputeIcrc(pkt.data(), pkt.size() - 6);
    IbCrc::ComputeVcrc(pkt.data(), pkt.size() - 2);
    IbCrc::ComputeIcrcZeroTail(pkt.data(), 68, 100);
    IbCrc::ComputeVcrcZeroTail(pkt.data(), 68, 100, 5);
    EXPECT_EQ(pkt, copy);
}

TEST(IbCrc, ZeroTailMatchesFullComputation)
{
    std::mt19937 rng(777);
    std::vector<uint32_t> zeroLens = {0,    1,     2,     3,     4,      5,      7,
                                      8,    255,   256,   257,   1023,   4095,   4096,
                                      4100, 65535, 65536, 65537, 131071, 131072, 200003};
    for (int i = 0; i < 12; ++i)
    {
        zeroLens.push_back(rng() % 9000);
    }
    // Header parts: golden local and global headers, and short or odd-sized ones, so that the
    // masked fields also fall into the zero tail.
    std::vector<Bytes> headers;
    headers.emplace_back(kGoldenUdSmp, kGoldenUdSmp + 28);       // LRH BTH DETH
    headers.emplace_back(kGoldenRcAck, kGoldenRcAck + 24);       // LRH BTH AETH
    headers.emplace_back(kGoldenGlobalUd, kGoldenGlobalUd + 68); // LRH GRH BTH DETH
    for (uint32_t n : {0U, 1U, 2U, 5U, 10U, 12U, 13U, 30U, 52U, 53U, 59U, 60U, 61U, 100U})
    {
        Bytes h(n);
        for (auto& b : h)
        {
            b = static_cast<uint8_t>(rng());
        }
        if (n > 1)
        {
            h[1] = static_cast<uint8_t>((h[1] & 0xFC) | (n % 4));
        }
        headers.push_back(h);
    }
    for (const auto& hdr : headers)
    {
        for (uint32_t zeros : zeroLens)
        {
            Bytes full = hdr;
            full.resize(hdr.size() + zeros, 0);
            const uint32_t icrc = IbCrc::ComputeIcrc(full.data(), full.size());
            EXPECT_EQ(IbCrc::ComputeIcrcZeroTail(hdr.data(), hdr.size(), zeros), icrc)
                << "hdr " << hdr.size() << " zeros " << zeros;
            PutLe(full, icrc, 4);
            EXPECT_EQ(IbCrc::ComputeVcrcZeroTail(hdr.data(), hdr.size(), zeros, icrc),
                      IbCrc::ComputeVcrc(full.data(), full.size()))
                << "hdr " << hdr.size() << " zeros " << zeros;
        }
    }
    // And against the independent reference for a few sizes.
    for (uint32_t zeros : {0U, 3U, 4096U})
    {
        Bytes full(kGoldenRcAck, kGoldenRcAck + 24);
        full.resize(24 + zeros, 0);
        EXPECT_EQ(IbCrc::ComputeIcrcZeroTail(kGoldenRcAck, 24, zeros),
                  RefIcrc(full.data(), full.size()));
    }
}

TEST(IbCrc, UpdateVcrcForFirstByte)
{
    // Golden packets: a switch rewrites VL (and LVer) in byte 0.
    for (const auto& g : GoldenPackets())
    {
        Bytes pkt(g.data, g.data + g.len);
        const uint32_t covered = g.len - 2;
        const uint16_t oldVcrc = Le16(pkt.data() + covered);
        for (uint32_t b0 = 0; b0 < 256; ++b0)
        {
            Bytes m = pkt;
            m[0] = static_cast<uint8_t>(b0);
            EXPECT_EQ(IbCrc::UpdateVcrcForFirstByte(oldVcrc, pkt[0], m[0], covered),
                      IbCrc::ComputeVcrc(m.data(), covered))
                << g.name << " byte0 " << b0;
        }
    }
    // Random buffers of many lengths.
    std::mt19937 rng(99);
    for (uint32_t len : {1U, 2U, 3U, 4U, 255U, 256U, 4096U, 4200U, 70000U})
    {
        Bytes buf(len);
        for (auto& b : buf)
        {
            b = static_cast<uint8_t>(rng());
        }
        const uint16_t oldVcrc = IbCrc::ComputeVcrc(buf.data(), len);
        const uint8_t old0 = buf[0];
        buf[0] = static_cast<uint8_t>(rng());
        EXPECT_EQ(IbCrc::UpdateVcrcForFirstByte(oldVcrc, old0, buf[0], len),
                  IbCrc::ComputeVcrc(buf.data(), len))
            << len;
    }
}

TEST(IbCrc, Lpcrc)
{
    std::mt19937 rng(4242);
    for (int i = 0; i < 200; ++i)
    {
        uint8_t fc[4];
        for (auto& b : fc)
        {
            b = static_cast<uint8_t>(rng());
        }
        EXPECT_EQ(IbCrc::ComputeLpcrc(fc), RefCrc16(fc, 4));
    }
    // Round trip through the flow-control packet, then corruption.
    IbFlowControlHeader h;
    h.SetOp(IbFlowControlHeader::OP_NORMAL);
    h.SetFctbs(0x321);
    h.SetVl(3);
    h.SetFccl(0xFED);
    const Bytes wire = SerializeHeader(h);
    EXPECT_EQ(Le16(wire.data() + 4), RefCrc16(wire.data(), 4));
    for (size_t i = 0; i <= wire.size(); ++i)
    {
        for (unsigned bit = 0; bit < 8; ++bit)
        {
            Bytes m = wire;
            if (i < wire.size())
            {
                m[i] ^= static_cast<uint8_t>(1U << bit);
            }
            Buffer b;
            b.AddAtStart(m.size());
            b.Begin().Write(m.data(), m.size());
            IbFlowControlHeader r;
            ASSERT_EQ(r.Deserialize(b.Begin()), 6u);
            EXPECT_EQ(r.IsLpcrcValid(), i == wire.size()) << "byte " << i << " bit " << bit;
            if (i == wire.size())
            {
                EXPECT_EQ(r.GetOp(), IbFlowControlHeader::OP_NORMAL);
                EXPECT_EQ(r.GetFctbs(), 0x321);
                EXPECT_EQ(r.GetVl(), 3);
                EXPECT_EQ(r.GetFccl(), 0xFED);
                EXPECT_EQ(r.GetLpcrc(), h.GetLpcrc());
                break;
            }
        }
    }
}

// =============================================================================================
// IbPacketParser
// =============================================================================================

TEST(IbPacketParser, AcceptsGoldenPackets)
{
    IbPacketParser p;
    std::string error = "stale";
    for (const auto& g : GoldenPackets())
    {
        EXPECT_TRUE(p.Parse(g.data, g.len, &error)) << g.name << ": " << error;
        EXPECT_TRUE(error.empty());
        EXPECT_TRUE(p.m_icrcValid);
        EXPECT_TRUE(p.m_vcrcValid);
        EXPECT_TRUE(p.m_hasIcrc);
        EXPECT_EQ(p.m_receivedIcrc, p.m_computedIcrc);
        EXPECT_EQ(p.m_receivedVcrc, p.m_computedVcrc);
        EXPECT_EQ(p.m_payloadOffset + p.m_payloadLength + p.m_padCount + 6, g.len);
    }

    // Frame 1: SubnGet(SMInfo) on QP0, VL15 (values as tshark shows them).
    ASSERT_TRUE(p.Parse(kGoldenUdSmp, sizeof(kGoldenUdSmp), nullptr));
    EXPECT_EQ(p.m_lrh.GetVl(), 15);
    EXPECT_EQ(p.m_lrh.GetLnh(), IbLrhHeader::LNH_IBA_LOCAL);
    EXPECT_EQ(p.m_lrh.GetDlid(), 65535);
    EXPECT_EQ(p.m_lrh.GetPktLen(), 72);
    EXPECT_EQ(p.m_lrh.GetSlid(), 65535);
    EXPECT_FALSE(p.m_hasGrh);
    EXPECT_EQ(p.m_bth.GetOpcode(), IbOpcode::UD_SEND_ONLY);
    EXPECT_EQ(p.m_bth.GetPKey(), 0xFFFF);
    EXPECT_EQ(p.m_bth.GetDestQp(), 0u);
    EXPECT_EQ(p.m_bth.GetPsn(), 489u);
    EXPECT_TRUE(p.m_hasDeth);
    EXPECT_EQ(p.m_deth.GetQKey(), 0u);
    EXPECT_EQ(p.m_deth.GetSrcQp(), 0u);
    EXPECT_EQ(p.m_payloadOffset, 28u);
    EXPECT_EQ(p.m_payloadLength, 256u);                   // a MAD
    EXPECT_EQ(kGoldenUdSmp[p.m_payloadOffset + 1], 0x81); // MAD management class: SMP DR

    // Frame 11: RC ACKNOWLEDGE.
    ASSERT_TRUE(p.Parse(kGoldenRcAck, sizeof(kGoldenRcAck), nullptr));
    EXPECT_EQ(p.m_lrh.GetVl(), 0);
    EXPECT_EQ(p.m_lrh.GetDlid(), 4);
    EXPECT_EQ(p.m_lrh.GetPktLen(), 7);
    EXPECT_EQ(p.m_lrh.GetSlid(), 1);
    EXPECT_EQ(p.m_bth.GetOpcode(), IbOpcode::RC_ACKNOWLEDGE);
    EXPECT_TRUE(p.m_bth.GetMigReq());
    EXPECT_EQ(p.m_bth.GetDestQp(), 0x870408u);
    EXPECT_FALSE(p.m_bth.GetAckReq());
    EXPECT_EQ(p.m_bth.GetPsn(), 13896277u);
    EXPECT_TRUE(p.m_hasAeth);
    EXPECT_FALSE(p.m_hasDeth);
    EXPECT_EQ(p.m_aeth.GetSyndrome(), 31);
    EXPECT_TRUE(p.m_aeth.IsAck());
    EXPECT_EQ(p.m_aeth.GetMsn(), 1u);
    EXPECT_EQ(p.m_payloadLength, 0u);
    EXPECT_EQ(PrintToString(p.m_lrh),
              "Virtual Lane: 0, Link Version: 0, Service Level: 0, Link Next Header: 2, "
              "Destination Local ID: 4, Packet Length: 7, Source Local ID: 1");

    // Frame 10: RC SEND Only (IPoIB-CM carrying an ICMP echo request).
    ASSERT_TRUE(p.Parse(kGoldenRcSendOnly, sizeof(kGoldenRcSendOnly), nullptr));
    EXPECT_EQ(p.m_lrh.GetDlid(), 1);
    EXPECT_EQ(p.m_lrh.GetSlid(), 4);
    EXPECT_EQ(p.m_lrh.GetPktLen(), 28);
    EXPECT_EQ(p.m_bth.GetOpcode(), IbOpcode::RC_SEND_ONLY);
    EXPECT_EQ(p.m_bth.GetDestQp(), 0xfc0407u);
    EXPECT_TRUE(p.m_bth.GetAckReq());
    EXPECT_EQ(p.m_bth.GetPsn(), 13896277u);
    EXPECT_EQ(p.m_payloadOffset, 20u);
    EXPECT_EQ(p.m_payloadLength, 88u);
    EXPECT_EQ(kGoldenRcSendOnly[p.m_payloadOffset], 0x08); // EtherType IPv4 (0x0800)

    // Frame 5: global UD SEND Only (IPoIB ARP to a multicast GID).
    ASSERT_TRUE(p.Parse(kGoldenGlobalUd, sizeof(kGoldenGlobalUd), nullptr));
    EXPECT_EQ(p.m_lrh.GetLnh(), IbLrhHeader::LNH_IBA_GLOBAL);
    EXPECT_EQ(p.m_lrh.GetDlid(), 49152);
    EXPECT_EQ(p.m_lrh.GetSlid(), 4);
    EXPECT_EQ(p.m_lrh.GetPktLen(), 33);
    ASSERT_TRUE(p.m_hasGrh);
    EXPECT_EQ(p.m_grh.GetIpVer(), 6);
    EXPECT_EQ(p.m_grh.GetTrafficClass(), 0);
    EXPECT_EQ(p.m_grh.GetFlowLabel(), 0u);
    EXPECT_EQ(p.m_grh.GetPayLen(), 84);
    EXPECT_EQ(p.m_grh.GetNxtHdr(), 27);
    EXPECT_EQ(p.m_grh.GetHopLmt(), 0);
    EXPECT_EQ(p.m_grh.GetSgid(), Ipv6Address("fe80::2:c902:24:f636"));
    EXPECT_EQ(p.m_grh.GetDgid(), Ipv6Address("ff12:401b:ffff::ffff:ffff"));
    EXPECT_EQ(p.m_bth.GetOpcode(), IbOpcode::UD_SEND_ONLY);
    EXPECT_TRUE(p.m_bth.GetMigReq());
    EXPECT_EQ(p.m_bth.GetDestQp(), 0xffffffu);
    EXPECT_EQ(p.m_bth.GetPsn(), 8367u);
    EXPECT_EQ(p.m_deth.GetQKey(), 0xb1bu);
    EXPECT_EQ(p.m_deth.GetSrcQp(), 0x405u);
    EXPECT_EQ(p.m_payloadOffset, 68u);
    EXPECT_EQ(p.m_payloadLength, 60u);
}

TEST(IbPacketParser, RejectsEveryTruncation)
{
    IbPacketParser p;
    for (const auto& g : GoldenPackets())
    {
        for (uint32_t n = 0; n < g.len; ++n)
        {
            std::string error;
            EXPECT_FALSE(p.Parse(g.data, n, &error)) << g.name << " length " << n;
            EXPECT_FALSE(error.empty()) << g.name << " length " << n;
        }
    }
    std::string error;
    EXPECT_FALSE(p.Parse(kGoldenRcAck, 7, &error));
    EXPECT_EQ(error, "buffer of 7 bytes is shorter than the 8-byte LRH");
    EXPECT_FALSE(p.Parse(nullptr, 0, &error));
    EXPECT_EQ(error, "buffer of 0 bytes is shorter than the 8-byte LRH");
    EXPECT_FALSE(p.Parse(nullptr, 0, nullptr)); // no error string wanted
}

TEST(IbPacketParser, RejectsPktLenMismatch)
{
    // The RC ACK with PktLen 8 instead of 7, CRCs recomputed.
    Bytes body(kGoldenRcAck, kGoldenRcAck + sizeof(kGoldenRcAck) - 6);
    Bytes pkt = Finish(body, true);
    pkt[5] = 8;
    const uint32_t icrc = RefIcrc(pkt.data(), pkt.size() - 6);
    for (unsigned i = 0; i < 4; ++i)
    {
        pkt[pkt.size() - 6 + i] = static_cast<uint8_t>(icrc >> (8 * i));
    }
    FixVcrc(pkt);
    IbPacketParser p;
    std::string error;
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error, "LRH PktLen 8 words = 32 bytes but 28 bytes precede the VCRC");
    // 4 bytes of payload more than PktLen says.
    Bytes longer = body;
    longer.insert(longer.end(), 4, 0);
    Bytes pkt2 = Finish(longer, true);
    pkt2[5] = 7;
    FixVcrc(pkt2);
    EXPECT_FALSE(p.Parse(pkt2.data(), pkt2.size(), &error));
    EXPECT_EQ(error, "LRH PktLen 7 words = 28 bytes but 32 bytes precede the VCRC");
}

TEST(IbPacketParser, AnySingleBitFlipIsACrcError)
{
    IbPacketParser p;
    for (const auto& g : GoldenPackets())
    {
        for (uint32_t i = 0; i < g.len; ++i)
        {
            for (unsigned bit = 0; bit < 8; ++bit)
            {
                Bytes m(g.data, g.data + g.len);
                m[i] ^= static_cast<uint8_t>(1U << bit);
                std::string error;
                EXPECT_FALSE(p.Parse(m.data(), m.size(), &error));
                EXPECT_TRUE(error.find("ICRC") != std::string::npos ||
                            error.find("VCRC") != std::string::npos)
                    << g.name << " byte " << i << " bit " << bit << ": " << error;
            }
        }
    }
}

TEST(IbPacketParser, CorruptionBehindAValidVcrcIsAnIcrcError)
{
    // A bit flipped inside a switch, which then recomputes the VCRC: the ICRC catches it unless
    // the bit is a variant field. LNH and PktLen bits are left out (they change the structure).
    IbPacketParser p;
    for (const auto& g : GoldenPackets())
    {
        const bool global = (g.data[1] & 3) == 3;
        for (uint32_t i = 0; i < g.len - 2; ++i)
        {
            for (unsigned bit = 0; bit < 8; ++bit)
            {
                if ((i == 1 && bit < 2) || i == 4 || i == 5)
                {
                    continue;
                }
                Bytes m(g.data, g.data + g.len);
                m[i] ^= static_cast<uint8_t>(1U << bit);
                FixVcrc(m);
                const bool variant = global ? (i < 8 || (i == 8 && bit < 4) ||
                                               (i >= 9 && i <= 11) || i == 15 || i == 52)
                                            : ((i == 0 && bit >= 4) || i == 12);
                std::string error;
                const bool ok = p.Parse(m.data(), m.size(), &error);
                EXPECT_EQ(ok, variant)
                    << g.name << " byte " << i << " bit " << bit << ": " << error;
                if (!variant)
                {
                    EXPECT_EQ(error.rfind("bad ICRC", 0), 0u) << error;
                }
            }
        }
    }
    // The variant fields are parsed with their new values.
    Bytes m(kGoldenRcAck, kGoldenRcAck + sizeof(kGoldenRcAck));
    m[0] = 0x70;  // VL 7
    m[12] = 0xC0; // FECN and BECN
    FixVcrc(m);
    ASSERT_TRUE(p.Parse(m.data(), m.size(), nullptr));
    EXPECT_EQ(p.m_lrh.GetVl(), 7);
    EXPECT_TRUE(p.m_bth.GetFecn());
    EXPECT_TRUE(p.m_bth.GetBecn());
}

TEST(IbPacketParser, RejectsStructuralErrors)
{
    IbPacketParser p;
    std::string error;
    const Bytes lrhLocal = {0x00, 0x02, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01};
    const Bytes lrhGlobal = {0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01};
    auto bth = [](uint8_t opcode, uint8_t padCnt) {
        return Bytes{opcode,
                     static_cast<uint8_t>(padCnt << 4),
                     0xFF,
                     0xFF,
                     0x00,
                     0x00,
                     0x00,
                     0x05,
                     0x00,
                     0x00,
                     0x00,
                     0x01};
    };
    auto cat = [](std::initializer_list<Bytes> parts) {
        Bytes out;
        for (const auto& part : parts)
        {
            out.insert(out.end(), part.begin(), part.end());
        }
        return out;
    };

    // Unknown opcode.
    Bytes pkt = Finish(cat({lrhLocal, bth(0x15, 0)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error, "unknown BTH opcode 0x15");

    // RC ACKNOWLEDGE without its AETH.
    pkt = Finish(cat({lrhLocal, bth(IbOpcode::RC_ACKNOWLEDGE, 0)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error,
              "extension headers of RC Acknowledge (4 bytes) longer than the 0 bytes between the "
              "BTH and the ICRC");

    // UD SEND Only with a 4-byte DETH stub.
    pkt = Finish(cat({lrhLocal, bth(IbOpcode::UD_SEND_ONLY, 0), Bytes(4, 0)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_NE(error.find("extension headers of UD Send Only (8 bytes)"), std::string::npos);

    // Pad count larger than payload + pad.
    pkt = Finish(cat({lrhLocal, bth(IbOpcode::RC_SEND_ONLY, 3)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error, "BTH PadCnt 3 larger than the 0 bytes of payload and pad");

    // BTH short: 4 bytes after the LRH.
    pkt = Finish(cat({lrhLocal, Bytes(4, 0)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error, "BTH short: needs 12 bytes at offset 8, 4 precede the ICRC");

    // No room for the ICRC at all.
    pkt = Finish(lrhLocal, false);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error, "LNH=2 packet of 10 bytes has no room for the 4-byte ICRC after the LRH");

    // GRH short.
    pkt = Finish(cat({lrhGlobal, bth(IbOpcode::RC_SEND_ONLY, 0)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error,
              "GRH missing or short: LNH=3 needs 40 bytes after the LRH, 12 precede the ICRC");

    // GRH with a wrong PayLen, NxtHdr, IPVer.
    IbGrhHeader grh;
    grh.SetPayLen(99);
    pkt = Finish(cat({lrhGlobal, SerializeHeader(grh), bth(IbOpcode::RC_SEND_ONLY, 0)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error, "GRH PayLen 99 but 16 bytes lie between the GRH and the VCRC");
    grh.SetPayLen(16);
    grh.SetNxtHdr(0x11);
    pkt = Finish(cat({lrhGlobal, SerializeHeader(grh), bth(IbOpcode::RC_SEND_ONLY, 0)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error, "GRH NxtHdr 0x11 is not 0x1b (BTH)");
    grh.SetNxtHdr(0x1B);
    grh.SetIpVer(4);
    pkt = Finish(cat({lrhGlobal, SerializeHeader(grh), bth(IbOpcode::RC_SEND_ONLY, 0)}), true);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error, "GRH IPVer 4 is not 6");
    grh.SetIpVer(6);
    pkt = Finish(cat({lrhGlobal, SerializeHeader(grh), bth(IbOpcode::RC_SEND_ONLY, 0)}), true);
    EXPECT_TRUE(p.Parse(pkt.data(), pkt.size(), &error)) << error;

    // Bad ICRC, good VCRC.
    pkt = Finish(cat({lrhLocal, bth(IbOpcode::RC_SEND_ONLY, 0)}), true);
    pkt[pkt.size() - 6] ^= 1;
    FixVcrc(pkt);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error.rfind("bad ICRC: received 0x", 0), 0u) << error;
    EXPECT_FALSE(p.m_icrcValid);
    EXPECT_TRUE(p.m_vcrcValid);

    // Bad VCRC.
    pkt = Finish(cat({lrhLocal, bth(IbOpcode::RC_SEND_ONLY, 0)}), true);
    pkt.back() ^= 0x80;
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_EQ(error.rfind("bad VCRC: received 0x", 0), 0u) << error;
    EXPECT_FALSE(p.m_vcrcValid);
}

TEST(IbPacketParser, ParsesBuiltPackets)
{
    IbPacketParser p;
    std::string error;
    IbLrhHeader lrh;
    lrh.SetVl(1);
    lrh.SetSl(1);
    lrh.SetDlid(7);
    lrh.SetSlid(9);

    // RC RDMA WRITE Only with Immediate: RETH then ImmDt, 6 payload bytes and 2 pad bytes.
    {
        IbBthHeader bth;
        bth.SetOpcode(IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
        bth.SetPadCnt(2);
        bth.SetDestQp(0x11);
        bth.SetPsn(100);
        IbRethHeader reth;
        reth.SetVirtualAddress(0xABCDEF00);
        reth.SetRKey(0x1234);
        reth.SetDmaLength(6);
        IbImmDtHeader imm;
        imm.SetImmediateData(0xFEEDF00D);
        Bytes body = SerializeHeader(lrh);
        for (const Bytes& part :
             {SerializeHeader(bth), SerializeHeader(reth), SerializeHeader(imm)})
        {
            body.insert(body.end(), part.begin(), part.end());
        }
        for (uint8_t b : {1, 2, 3, 4, 5, 6, 0, 0})
        {
            body.push_back(b);
        }
        const Bytes pkt = Finish(body, true);
        ASSERT_TRUE(p.Parse(pkt.data(), pkt.size(), &error)) << error;
        EXPECT_TRUE(p.m_hasReth);
        EXPECT_TRUE(p.m_hasImmDt);
        EXPECT_FALSE(p.m_hasAeth);
        EXPECT_EQ(p.m_reth.GetVirtualAddress(), 0xABCDEF00u);
        EXPECT_EQ(p.m_reth.GetRKey(), 0x1234u);
        EXPECT_EQ(p.m_reth.GetDmaLength(), 6u);
        EXPECT_EQ(p.m_immDt.GetImmediateData(), 0xFEEDF00Du);
        EXPECT_EQ(p.m_payloadOffset, 8u + 12u + 16u + 4u);
        EXPECT_EQ(p.m_payloadLength, 6u);
        EXPECT_EQ(p.m_padCount, 2);
        EXPECT_EQ(pkt[p.m_payloadOffset], 1);
        // The hot-path CRCs over a virtual (all-zero) payload agree with a materialised one.
        Bytes zeroBody(body.begin(), body.begin() + p.m_payloadOffset);
        zeroBody.resize(zeroBody.size() + 8, 0);
        const Bytes zeroPkt = Finish(zeroBody, true); // headers (with PktLen) + 8 zero bytes
        const uint32_t icrc = IbCrc::ComputeIcrcZeroTail(zeroPkt.data(), p.m_payloadOffset, 8);
        EXPECT_EQ(icrc, Le32(zeroPkt.data() + zeroPkt.size() - 6));
        EXPECT_EQ(IbCrc::ComputeVcrcZeroTail(zeroPkt.data(), p.m_payloadOffset, 8, icrc),
                  Le16(zeroPkt.data() + zeroPkt.size() - 2));
    }

    // RC ATOMIC ACKNOWLEDGE: AETH then AtomicAckETH.
    {
        IbBthHeader bth;
        bth.SetOpcode(IbOpcode::RC_ATOMIC_ACKNOWLEDGE);
        IbAethHeader aeth;
        aeth.SetSyndrome(IbAethHeader::AckSyndrome(3));
        aeth.SetMsn(12);
        IbAtomicAckEthHeader ack;
        ack.SetOriginalData(0x0102030405060708ULL);
        Bytes body = SerializeHeader(lrh);
        for (const Bytes& part :
             {SerializeHeader(bth), SerializeHeader(aeth), SerializeHeader(ack)})
        {
            body.insert(body.end(), part.begin(), part.end());
        }
        const Bytes pkt = Finish(body, true);
        ASSERT_TRUE(p.Parse(pkt.data(), pkt.size(), &error)) << error;
        EXPECT_TRUE(p.m_hasAeth);
        EXPECT_TRUE(p.m_hasAtomicAckEth);
        EXPECT_EQ(p.m_aeth.GetMsn(), 12u);
        EXPECT_EQ(p.m_atomicAckEth.GetOriginalData(), 0x0102030405060708ULL);
        EXPECT_EQ(p.m_payloadLength, 0u);
    }

    // RC CmpSwap: AtomicETH.
    {
        IbBthHeader bth;
        bth.SetOpcode(IbOpcode::RC_COMPARE_SWAP);
        IbAtomicEthHeader atomic;
        atomic.SetVirtualAddress(0x1000);
        atomic.SetRKey(5);
        atomic.SetSwapOrAdd(6);
        atomic.SetCompare(7);
        Bytes body = SerializeHeader(lrh);
        for (const Bytes& part : {SerializeHeader(bth), SerializeHeader(atomic)})
        {
            body.insert(body.end(), part.begin(), part.end());
        }
        const Bytes pkt = Finish(body, true);
        ASSERT_TRUE(p.Parse(pkt.data(), pkt.size(), &error)) << error;
        EXPECT_TRUE(p.m_hasAtomicEth);
        EXPECT_EQ(p.m_atomicEth.GetCompare(), 7u);
        EXPECT_EQ(p.m_atomicEth.GetSwapOrAdd(), 6u);
    }

    // UD SEND Only with Immediate: DETH then ImmDt.
    {
        IbBthHeader bth;
        bth.SetOpcode(IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE);
        IbDethHeader deth;
        deth.SetQKey(0x11111111);
        deth.SetSrcQp(0x22);
        IbImmDtHeader imm;
        imm.SetImmediateData(0x33);
        Bytes body = SerializeHeader(lrh);
        for (const Bytes& part :
             {SerializeHeader(bth), SerializeHeader(deth), SerializeHeader(imm)})
        {
            body.insert(body.end(), part.begin(), part.end());
        }
        body.insert(body.end(), 16, 0xEE);
        const Bytes pkt = Finish(body, true);
        ASSERT_TRUE(p.Parse(pkt.data(), pkt.size(), &error)) << error;
        EXPECT_TRUE(p.m_hasDeth);
        EXPECT_TRUE(p.m_hasImmDt);
        EXPECT_EQ(p.m_deth.GetSrcQp(), 0x22u);
        EXPECT_EQ(p.m_immDt.GetImmediateData(), 0x33u);
        EXPECT_EQ(p.m_payloadOffset, 32u);
        EXPECT_EQ(p.m_payloadLength, 16u);
    }
}

TEST(IbPacketParser, RawPackets)
{
    IbPacketParser p;
    std::string error;
    // LNH 0: LRH, raw header (reserved, EtherType 0x86DD), 8 payload bytes, VCRC only.
    Bytes body = {0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01, // LRH, LNH 0
                  0x00, 0x00, 0x86, 0xDD,                         // raw header
                  1,    2,    3,    4,    5,    6,    7,    8};
    Bytes pkt = Finish(body, false);
    ASSERT_TRUE(p.Parse(pkt.data(), pkt.size(), &error)) << error;
    EXPECT_EQ(p.m_lrh.GetLnh(), IbLrhHeader::LNH_RAW);
    EXPECT_EQ(p.m_lrh.GetPktLen(), 5);
    EXPECT_FALSE(p.m_hasIcrc);
    EXPECT_FALSE(p.m_hasBth);
    EXPECT_TRUE(p.m_hasRawHeader);
    EXPECT_EQ(p.m_rawEtherType, 0x86DD);
    EXPECT_EQ(p.m_payloadOffset, 12u);
    EXPECT_EQ(p.m_payloadLength, 8u);
    EXPECT_TRUE(p.m_vcrcValid);

    // The trailer of a raw packet is the VCRC only.
    Ptr<Packet> packet = Create<Packet>(pkt.data(), pkt.size());
    IbCrcTrailer t;
    t.SetHasIcrc(false);
    EXPECT_EQ(packet->RemoveTrailer(t), 2u);
    EXPECT_EQ(t.GetVcrc(), Le16(pkt.data() + pkt.size() - 2));

    // Raw header missing.
    pkt = Finish(Bytes(body.begin(), body.begin() + 8), false);
    EXPECT_FALSE(p.Parse(pkt.data(), pkt.size(), &error));
    EXPECT_NE(error.find("raw header"), std::string::npos) << error;

    // LNH 1: the IPv6 packet follows the LRH.
    body[1] = 0x01;
    pkt = Finish(body, false);
    ASSERT_TRUE(p.Parse(pkt.data(), pkt.size(), &error)) << error;
    EXPECT_EQ(p.m_lrh.GetLnh(), IbLrhHeader::LNH_IP_NON_IBA);
    EXPECT_FALSE(p.m_hasRawHeader);
    EXPECT_EQ(p.m_payloadOffset, 8u);
    EXPECT_EQ(p.m_payloadLength, 12u);
}

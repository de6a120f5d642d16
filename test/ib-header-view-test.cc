/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// IbHeaderView, the decoder of IBA header bytes: packets of every opcode family are built
// with the header classes and IbPacket::Seal (local and global, with and without ImmDt),
// and every field the view decodes is checked against the header objects they were built
// from. Also: spans too short for a header, unknown opcodes, raw packets, and agreement
// with IbPacketParser on the same bytes.

#include "ns3/ib-aeth-header.h"
#include "ns3/ib-atomic-ack-eth-header.h"
#include "ns3/ib-atomic-eth-header.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-deth-header.h"
#include "ns3/ib-grh-header.h"
#include "ns3/ib-header-view.h"
#include "ns3/ib-immdt-header.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-packet-parser.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-reth-header.h"
#include "ns3/ipv6-address.h"
#include "ns3/packet.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// The headers of one test packet, as built (the expected values of every check).
struct Spec
{
    std::string name;                //!< what the packet is
    uint8_t opcode{0};               //!< BTH opcode
    bool grh{false};                 //!< with a GRH (LNH 3)
    uint32_t payload{0};             //!< payload bytes
    bool deth{false};                //!< with a DETH
    bool reth{false};                //!< with a RETH
    bool atomicEth{false};           //!< with an AtomicETH
    bool aeth{false};                //!< with an AETH
    bool atomicAckEth{false};        //!< with an AtomicAckETH
    bool immDt{false};               //!< with an ImmDt
    IbLrhHeader lrhH;                //!< LRH (LNH and PktLen set by Seal)
    IbGrhHeader grhH;                //!< GRH (PayLen set by Seal)
    IbBthHeader bthH;                //!< BTH (PadCnt set by Seal)
    IbDethHeader dethH;              //!< DETH
    IbRethHeader rethH;              //!< RETH
    IbAtomicEthHeader atomicEthH;    //!< AtomicETH
    IbAethHeader aethH;              //!< AETH
    IbAtomicAckEthHeader atomicAckH; //!< AtomicAckETH
    IbImmDtHeader immDtH;            //!< ImmDt
};

/// Field values that differ from each other and from their neighbours' bytes; @p k varies them.
Spec
MakeSpec(const std::string& name, uint8_t opcode, bool grh, uint32_t k)
{
    Spec s;
    s.name = name + (grh ? " (global)" : " (local)");
    s.opcode = opcode;
    s.grh = grh;
    s.payload = 5 + 3 * k; // pads 3, 2, 1, 0, ...
    s.lrhH.SetVl(static_cast<uint8_t>((3 + k) & 0xF));
    s.lrhH.SetLinkVersion(static_cast<uint8_t>((1 + k) & 0xF));
    s.lrhH.SetSl(static_cast<uint8_t>((9 + k) & 0xF));
    s.lrhH.SetDlid(static_cast<uint16_t>(0x1234 + k));
    s.lrhH.SetSlid(static_cast<uint16_t>(0xA5C3 - k));
    s.grhH.SetIpVer(6);
    s.grhH.SetTrafficClass(static_cast<uint8_t>(0xB7 + k));
    s.grhH.SetFlowLabel(0xE1D2C - k);
    s.grhH.SetNxtHdr(IbGrhHeader::NXT_HDR_BTH);
    s.grhH.SetHopLmt(static_cast<uint8_t>(0x3F + k));
    s.grhH.SetSgid(Ipv6Address("fe80::1:2:3:4"));
    s.grhH.SetDgid(Ipv6Address("fe80::a0b:c0d:e0f:1011"));
    s.bthH.SetOpcode(opcode);
    s.bthH.SetSolicitedEvent(k % 2 == 0);
    s.bthH.SetMigReq(k % 3 == 0);
    s.bthH.SetTVer(static_cast<uint8_t>(k & 0xF));
    s.bthH.SetPKey(static_cast<uint16_t>(0x8001 + k));
    s.bthH.SetFecn(k % 2 == 1);
    s.bthH.SetBecn(k % 3 == 1);
    s.bthH.SetDestQp(0xABCDEF - k);
    s.bthH.SetAckReq(k % 2 == 0);
    s.bthH.SetPsn(0x123456 + k);
    s.dethH.SetQKey(0x80010203u + k);
    s.dethH.SetSrcQp(0x456789 + k);
    s.rethH.SetVirtualAddress(0x0102030405060708ULL + k);
    s.rethH.SetRKey(0x99AABBCCu - k);
    s.rethH.SetDmaLength(0x10000u + k);
    s.atomicEthH.SetVirtualAddress(0x1112131415161718ULL + k);
    s.atomicEthH.SetRKey(0x21222324u + k);
    s.atomicEthH.SetSwapOrAdd(0x3132333435363738ULL - k);
    s.atomicEthH.SetCompare(0x4142434445464748ULL + k);
    s.aethH.SetSyndrome(static_cast<uint8_t>(0x1F - k));
    s.aethH.SetMsn(0x515253 + k);
    s.atomicAckH.SetOriginalData(0x6162636465666768ULL + k);
    s.immDtH.SetImmediateData(0x71727374u + k);
    return s;
}

/// The bytes of the packet @p s describes: extension headers, payload, then IbPacket::Seal.
std::vector<uint8_t>
Build(const Spec& s)
{
    std::vector<uint8_t> payload(s.payload);
    for (uint32_t i = 0; i < s.payload; ++i)
    {
        payload[i] = static_cast<uint8_t>(0xC0 + i);
    }
    Ptr<Packet> p = Create<Packet>(payload.data(), payload.size());
    // AddHeader prepends: the last header on the wire first.
    if (s.immDt)
    {
        p->AddHeader(s.immDtH);
    }
    if (s.atomicAckEth)
    {
        p->AddHeader(s.atomicAckH);
    }
    if (s.aeth)
    {
        p->AddHeader(s.aethH);
    }
    if (s.atomicEth)
    {
        p->AddHeader(s.atomicEthH);
    }
    if (s.reth)
    {
        p->AddHeader(s.rethH);
    }
    if (s.deth)
    {
        p->AddHeader(s.dethH);
    }
    IbPacket::Seal(p, s.lrhH, s.grh ? &s.grhH : nullptr, s.bthH, 0);
    std::vector<uint8_t> bytes(p->GetSize());
    p->CopyData(bytes.data(), bytes.size());
    return bytes;
}

/// The extension headers @p s has, as EXT_* bits.
uint8_t
ExtOf(const Spec& s)
{
    return (s.deth ? IbBthHeader::EXT_DETH : 0) | (s.reth ? IbBthHeader::EXT_RETH : 0) |
           (s.atomicEth ? IbBthHeader::EXT_ATOMIC_ETH : 0) | (s.aeth ? IbBthHeader::EXT_AETH : 0) |
           (s.atomicAckEth ? IbBthHeader::EXT_ATOMIC_ACK_ETH : 0) |
           (s.immDt ? IbBthHeader::EXT_IMMDT : 0);
}

/// Bytes of the extension headers @p s has, from the header classes' sizes.
uint32_t
ExtBytesOf(const Spec& s)
{
    return (s.deth ? s.dethH.GetSerializedSize() : 0) + (s.reth ? s.rethH.GetSerializedSize() : 0) +
           (s.atomicEth ? s.atomicEthH.GetSerializedSize() : 0) +
           (s.aeth ? s.aethH.GetSerializedSize() : 0) +
           (s.atomicAckEth ? s.atomicAckH.GetSerializedSize() : 0) +
           (s.immDt ? s.immDtH.GetSerializedSize() : 0);
}

/// Every field the view decodes from the bytes of @p s, against @p s.
void
ExpectDecodes(const Spec& s, const std::vector<uint8_t>& bytes)
{
    SCOPED_TRACE(s.name);
    IbHeaderView v(bytes.data(), bytes.size());
    ASSERT_TRUE(v.HasLrh());
    EXPECT_EQ(v.GetData(), bytes.data());
    EXPECT_EQ(v.GetLength(), bytes.size());
    EXPECT_EQ(v.GetVl(), s.lrhH.GetVl());
    EXPECT_EQ(v.GetLinkVersion(), s.lrhH.GetLinkVersion());
    EXPECT_EQ(v.GetSl(), s.lrhH.GetSl());
    EXPECT_EQ(v.GetLnh(), s.grh ? IbLrhHeader::LNH_IBA_GLOBAL : IbLrhHeader::LNH_IBA_LOCAL);
    EXPECT_EQ(v.GetDlid(), s.lrhH.GetDlid());
    EXPECT_EQ(v.GetSlid(), s.lrhH.GetSlid());
    // PktLen: LRH through ICRC, in words (the packet less its 2-byte VCRC).
    EXPECT_EQ(v.GetPktLen() * 4u, bytes.size() - 2);
    EXPECT_FALSE(v.HasRawHeader());

    ASSERT_EQ(v.HasGrh(), s.grh);
    uint32_t bth = s.lrhH.GetSerializedSize();
    if (s.grh)
    {
        EXPECT_EQ(v.GetIpVer(), s.grhH.GetIpVer());
        EXPECT_EQ(v.GetTrafficClass(), s.grhH.GetTrafficClass());
        EXPECT_EQ(v.GetFlowLabel(), s.grhH.GetFlowLabel());
        // PayLen: BTH through ICRC.
        EXPECT_EQ(v.GetPayLen(), bytes.size() - 2 - bth - s.grhH.GetSerializedSize());
        EXPECT_EQ(v.GetNxtHdr(), s.grhH.GetNxtHdr());
        EXPECT_EQ(v.GetHopLmt(), s.grhH.GetHopLmt());
        EXPECT_EQ(Ipv6Address::Deserialize(v.GetSgid()), s.grhH.GetSgid());
        EXPECT_EQ(Ipv6Address::Deserialize(v.GetDgid()), s.grhH.GetDgid());
        bth += s.grhH.GetSerializedSize();
    }

    ASSERT_TRUE(v.HasBth());
    EXPECT_EQ(v.GetBthOffset(), bth);
    EXPECT_EQ(v.GetOpcode(), s.opcode);
    EXPECT_EQ(v.GetSolicitedEvent(), s.bthH.GetSolicitedEvent());
    EXPECT_EQ(v.GetMigReq(), s.bthH.GetMigReq());
    EXPECT_EQ(v.GetPadCnt(), IbPacket::PadFor(s.payload));
    EXPECT_EQ(v.GetTVer(), s.bthH.GetTVer());
    EXPECT_EQ(v.GetPKey(), s.bthH.GetPKey());
    EXPECT_EQ(v.GetFecn(), s.bthH.GetFecn());
    EXPECT_EQ(v.GetBecn(), s.bthH.GetBecn());
    EXPECT_EQ(v.GetDestQp(), s.bthH.GetDestQp());
    EXPECT_EQ(v.GetAckReq(), s.bthH.GetAckReq());
    EXPECT_EQ(v.GetPsn(), s.bthH.GetPsn());

    EXPECT_FALSE(v.HasExtensionHeaders());
    ASSERT_TRUE(v.DecodeExtensionHeaders());
    EXPECT_TRUE(v.HasExtensionHeaders());
    EXPECT_EQ(v.GetExtensionHeaders(), ExtOf(s));
    const uint32_t headers = bth + s.bthH.GetSerializedSize() + ExtBytesOf(s);
    EXPECT_EQ(v.GetHeadersSize(), headers);
    EXPECT_EQ(IbBthHeader::ExtensionHeaderSize(s.opcode), ExtBytesOf(s));
    // The payload follows the headers; then pad and ICRC + VCRC.
    EXPECT_EQ(bytes.size(), headers + s.payload + v.GetPadCnt() + IbPacket::CRC_SIZE);
    EXPECT_EQ(bytes[headers], 0xC0);
    if (s.deth)
    {
        EXPECT_EQ(v.GetQKey(), s.dethH.GetQKey());
        EXPECT_EQ(v.GetSrcQp(), s.dethH.GetSrcQp());
    }
    if (s.reth)
    {
        EXPECT_EQ(v.GetRethVirtualAddress(), s.rethH.GetVirtualAddress());
        EXPECT_EQ(v.GetRethRKey(), s.rethH.GetRKey());
        EXPECT_EQ(v.GetDmaLength(), s.rethH.GetDmaLength());
    }
    if (s.atomicEth)
    {
        EXPECT_EQ(v.GetAtomicVirtualAddress(), s.atomicEthH.GetVirtualAddress());
        EXPECT_EQ(v.GetAtomicRKey(), s.atomicEthH.GetRKey());
        EXPECT_EQ(v.GetSwapOrAdd(), s.atomicEthH.GetSwapOrAdd());
        EXPECT_EQ(v.GetCompare(), s.atomicEthH.GetCompare());
    }
    if (s.aeth)
    {
        EXPECT_EQ(v.GetSyndrome(), s.aethH.GetSyndrome());
        EXPECT_EQ(v.GetMsn(), s.aethH.GetMsn());
    }
    if (s.atomicAckEth)
    {
        EXPECT_EQ(v.GetOriginalData(), s.atomicAckH.GetOriginalData());
    }
    if (s.immDt)
    {
        EXPECT_EQ(v.GetImmediateData(), s.immDtH.GetImmediateData());
    }

    // A span of the headers alone decodes the same; one byte fewer lacks the last one.
    IbHeaderView exact(bytes.data(), headers);
    EXPECT_TRUE(exact.DecodeExtensionHeaders());
    if (ExtBytesOf(s) > 0)
    {
        IbHeaderView cut(bytes.data(), headers - 1);
        EXPECT_TRUE(cut.HasBth());
        EXPECT_FALSE(cut.DecodeExtensionHeaders());
        EXPECT_FALSE(cut.HasExtensionHeaders());
    }
    IbHeaderView noBth(bytes.data(), bth + s.bthH.GetSerializedSize() - 1);
    EXPECT_FALSE(noBth.HasBth());
    EXPECT_FALSE(noBth.DecodeExtensionHeaders());
    EXPECT_EQ(noBth.HasGrh(), s.grh);
}

/// One packet of every opcode family, local and global.
std::vector<Spec>
AllSpecs()
{
    std::vector<Spec> out;
    uint32_t k = 0;
    for (const bool grh : {false, true})
    {
        auto add = [&](const std::string& name, uint8_t opcode) -> Spec& {
            out.push_back(MakeSpec(name, opcode, grh, k++));
            return out.back();
        };
        add("RC SEND First", IbOpcode::RC_SEND_FIRST);
        add("RC SEND Middle", IbOpcode::RC_SEND_MIDDLE);
        add("RC SEND Last", IbOpcode::RC_SEND_LAST);
        add("RC SEND Last with Immediate", IbOpcode::RC_SEND_LAST_WITH_IMMEDIATE).immDt = true;
        add("RC SEND Only", IbOpcode::RC_SEND_ONLY);
        add("RC SEND Only with Immediate", IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE).immDt = true;
        add("RC RDMA WRITE First", IbOpcode::RC_RDMA_WRITE_FIRST).reth = true;
        add("RC RDMA WRITE Middle", IbOpcode::RC_RDMA_WRITE_MIDDLE);
        add("RC RDMA WRITE Last", IbOpcode::RC_RDMA_WRITE_LAST);
        add("RC RDMA WRITE Last with Immediate", IbOpcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE)
            .immDt = true;
        add("RC RDMA WRITE Only", IbOpcode::RC_RDMA_WRITE_ONLY).reth = true;
        {
            Spec& s = add("RC RDMA WRITE Only with Immediate",
                          IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
            s.reth = true;
            s.immDt = true;
        }
        add("RC RDMA READ Request", IbOpcode::RC_RDMA_READ_REQUEST).reth = true;
        add("RC RDMA READ Response First", IbOpcode::RC_RDMA_READ_RESPONSE_FIRST).aeth = true;
        add("RC RDMA READ Response Middle", IbOpcode::RC_RDMA_READ_RESPONSE_MIDDLE);
        add("RC RDMA READ Response Last", IbOpcode::RC_RDMA_READ_RESPONSE_LAST).aeth = true;
        add("RC RDMA READ Response Only", IbOpcode::RC_RDMA_READ_RESPONSE_ONLY).aeth = true;
        add("RC ACKNOWLEDGE", IbOpcode::RC_ACKNOWLEDGE).aeth = true;
        {
            Spec& s = add("RC ATOMIC ACKNOWLEDGE", IbOpcode::RC_ATOMIC_ACKNOWLEDGE);
            s.aeth = true;
            s.atomicAckEth = true;
        }
        add("RC CmpSwap", IbOpcode::RC_COMPARE_SWAP).atomicEth = true;
        add("RC FetchAdd", IbOpcode::RC_FETCH_ADD).atomicEth = true;
        add("UD SEND Only", IbOpcode::UD_SEND_ONLY).deth = true;
        {
            Spec& s = add("UD SEND Only with Immediate", IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE);
            s.deth = true;
            s.immDt = true;
        }
    }
    return out;
}

} // namespace

TEST(IbHeaderView, BigEndianReaders)
{
    const uint8_t b[8] = {0x81, 0x92, 0xA3, 0xB4, 0xC5, 0xD6, 0xE7, 0xF8};
    EXPECT_EQ(IbHeaderView::ReadBe16(b), 0x8192);
    EXPECT_EQ(IbHeaderView::ReadBe24(b), 0x8192A3u);
    EXPECT_EQ(IbHeaderView::ReadBe32(b), 0x8192A3B4u);
    EXPECT_EQ(IbHeaderView::ReadBe64(b), 0x8192A3B4C5D6E7F8ULL);
    EXPECT_EQ(IbHeaderView::ReadBe24(b + 5), 0xD6E7F8u);
}

TEST(IbHeaderView, DecodesEveryOpcodeFamily)
{
    const std::vector<Spec> specs = AllSpecs();
    // Every opcode IbBthHeader knows, local and global.
    uint32_t known = 0;
    for (uint32_t op = 0; op < 256; ++op)
    {
        known += IbBthHeader::IsKnownOpcode(static_cast<uint8_t>(op)) ? 1 : 0;
    }
    EXPECT_EQ(specs.size(), 2 * known);
    for (const Spec& s : specs)
    {
        ExpectDecodes(s, Build(s));
    }
}

TEST(IbHeaderView, AgreesWithThePacketParser)
{
    for (const Spec& s : AllSpecs())
    {
        SCOPED_TRACE(s.name);
        const std::vector<uint8_t> bytes = Build(s);
        IbPacketParser parser;
        std::string error;
        ASSERT_TRUE(parser.Parse(bytes.data(), bytes.size(), &error)) << error;
        IbHeaderView v(bytes.data(), bytes.size());
        ASSERT_TRUE(v.DecodeExtensionHeaders());
        EXPECT_EQ(parser.m_lrh.GetDlid(), v.GetDlid());
        EXPECT_EQ(parser.m_lrh.GetPktLen(), v.GetPktLen());
        EXPECT_EQ(parser.m_hasGrh, v.HasGrh());
        EXPECT_EQ(parser.m_bth.GetPsn(), v.GetPsn());
        EXPECT_EQ(parser.m_bth.GetDestQp(), v.GetDestQp());
        EXPECT_EQ(parser.m_payloadOffset, v.GetHeadersSize());
        EXPECT_EQ(parser.m_payloadLength, s.payload);
        EXPECT_EQ(parser.m_padCount, v.GetPadCnt());
        EXPECT_EQ(parser.m_hasDeth, s.deth);
        EXPECT_EQ(parser.m_hasReth, s.reth);
        EXPECT_EQ(parser.m_hasAtomicEth, s.atomicEth);
        EXPECT_EQ(parser.m_hasAeth, s.aeth);
        EXPECT_EQ(parser.m_hasAtomicAckEth, s.atomicAckEth);
        EXPECT_EQ(parser.m_hasImmDt, s.immDt);
        if (s.grh)
        {
            EXPECT_EQ(parser.m_grh.GetFlowLabel(), s.grhH.GetFlowLabel());
            EXPECT_EQ(parser.m_grh.GetDgid(), s.grhH.GetDgid());
        }
        if (s.reth)
        {
            EXPECT_EQ(parser.m_reth.GetDmaLength(), s.rethH.GetDmaLength());
        }
        if (s.atomicEth)
        {
            EXPECT_EQ(parser.m_atomicEth.GetCompare(), s.atomicEthH.GetCompare());
        }
        if (s.immDt)
        {
            EXPECT_EQ(parser.m_immDt.GetImmediateData(), s.immDtH.GetImmediateData());
        }
    }
}

TEST(IbHeaderView, ShortSpansUnknownOpcodesAndRawPackets)
{
    const Spec s = MakeSpec("RC SEND Only", IbOpcode::RC_SEND_ONLY, false, 0);
    std::vector<uint8_t> bytes = Build(s);

    // Fewer bytes than an LRH: nothing.
    IbHeaderView empty(bytes.data(), s.lrhH.GetSerializedSize() - 1);
    EXPECT_FALSE(empty.HasLrh());
    EXPECT_FALSE(empty.HasGrh());
    EXPECT_FALSE(empty.HasBth());
    EXPECT_FALSE(empty.HasRawHeader());
    EXPECT_FALSE(empty.DecodeExtensionHeaders());

    // An opcode IbBthHeader does not know: the BTH is there, its extension headers are not.
    const uint32_t bth = s.lrhH.GetSerializedSize();
    bytes[bth] = 0x1F;
    ASSERT_FALSE(IbBthHeader::IsKnownOpcode(0x1F));
    IbHeaderView unknown(bytes.data(), bytes.size());
    EXPECT_TRUE(unknown.HasBth());
    EXPECT_EQ(unknown.GetOpcode(), 0x1F);
    EXPECT_EQ(unknown.GetPsn(), s.bthH.GetPsn());
    EXPECT_FALSE(unknown.DecodeExtensionHeaders());

    // LNH 3 with a span that ends inside the GRH: no GRH, no BTH.
    const Spec g = MakeSpec("RC SEND Only", IbOpcode::RC_SEND_ONLY, true, 0);
    const std::vector<uint8_t> global = Build(g);
    IbHeaderView shortGrh(global.data(), bth + g.grhH.GetSerializedSize() - 1);
    EXPECT_EQ(shortGrh.GetLnh(), IbLrhHeader::LNH_IBA_GLOBAL);
    EXPECT_FALSE(shortGrh.HasGrh());
    EXPECT_FALSE(shortGrh.HasBth());

    // A raw packet (LNH 0): the LRH and the raw header's EtherType, no BTH.
    Ptr<Packet> raw = Create<Packet>(10);
    IbPacket::SealRaw(raw, s.lrhH, 0x86DD);
    std::vector<uint8_t> rawBytes(raw->GetSize());
    raw->CopyData(rawBytes.data(), rawBytes.size());
    IbHeaderView r(rawBytes.data(), rawBytes.size());
    EXPECT_EQ(r.GetLnh(), IbLrhHeader::LNH_RAW);
    EXPECT_EQ(r.GetDlid(), s.lrhH.GetDlid());
    EXPECT_EQ(r.GetSlid(), s.lrhH.GetSlid());
    EXPECT_EQ(r.GetPktLen() * 4u, rawBytes.size() - 2);
    EXPECT_TRUE(r.HasRawHeader());
    EXPECT_EQ(r.GetRawEtherType(), 0x86DD);
    EXPECT_FALSE(r.HasGrh());
    EXPECT_FALSE(r.HasBth());
    EXPECT_FALSE(r.DecodeExtensionHeaders());
    EXPECT_FALSE(IbHeaderView(rawBytes.data(), bth + 3).HasRawHeader());
}

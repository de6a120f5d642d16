/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-packet-parser.h"

#include "eth-frame.h"
#include "ib-crc.h"
#include "ib-header-view.h"
#include "roce-packet.h"

#include "ns3/assert.h"
#include "ns3/log.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbPacketParser");

namespace
{

/// Size of the ICRC.
constexpr uint32_t ICRC_BYTES = 4;
/// Size of the VCRC.
constexpr uint32_t VCRC_BYTES = 2;
/// Size of the raw header of an LNH 0 packet.
constexpr uint32_t RAW_HEADER_BYTES = 4;

/**
 * Format a value as 0x-prefixed hexadecimal.
 * @param value the value
 * @param digits the number of digits
 * @return the text
 */
std::string
Hex(uint32_t value, int digits)
{
    std::ostringstream os;
    os << "0x" << std::hex << std::setfill('0') << std::setw(digits) << value;
    return os.str();
}

/**
 * @param v a view holding an LRH
 * @return the LRH it holds
 */
IbLrhHeader
LrhOf(const IbHeaderView& v)
{
    IbLrhHeader h;
    h.SetVl(v.GetVl());
    h.SetLinkVersion(v.GetLinkVersion());
    h.SetSl(v.GetSl());
    h.SetLnh(v.GetLnh());
    h.SetDlid(v.GetDlid());
    h.SetPktLen(v.GetPktLen());
    h.SetSlid(v.GetSlid());
    return h;
}

/**
 * @param v a view holding a GRH
 * @return the GRH it holds
 */
IbGrhHeader
GrhOf(const IbHeaderView& v)
{
    IbGrhHeader h;
    h.SetIpVer(v.GetIpVer());
    h.SetTrafficClass(v.GetTrafficClass());
    h.SetFlowLabel(v.GetFlowLabel());
    h.SetPayLen(v.GetPayLen());
    h.SetNxtHdr(v.GetNxtHdr());
    h.SetHopLmt(v.GetHopLmt());
    h.SetSgid(Ipv6Address::Deserialize(v.GetSgid()));
    h.SetDgid(Ipv6Address::Deserialize(v.GetDgid()));
    return h;
}

/**
 * @param v a view holding a BTH
 * @return the BTH it holds
 */
IbBthHeader
BthOf(const IbHeaderView& v)
{
    IbBthHeader h;
    h.SetOpcode(v.GetOpcode());
    h.SetSolicitedEvent(v.GetSolicitedEvent());
    h.SetMigReq(v.GetMigReq());
    h.SetPadCnt(v.GetPadCnt());
    h.SetTVer(v.GetTVer());
    h.SetPKey(v.GetPKey());
    h.SetFecn(v.GetFecn());
    h.SetBecn(v.GetBecn());
    h.SetDestQp(v.GetDestQp());
    h.SetAckReq(v.GetAckReq());
    h.SetPsn(v.GetPsn());
    return h;
}

} // namespace

IbPacketParser::IbPacketParser()
    : m_hasGrh(false),
      m_hasBth(false),
      m_hasDeth(false),
      m_hasReth(false),
      m_hasAtomicEth(false),
      m_hasAeth(false),
      m_hasAtomicAckEth(false),
      m_hasImmDt(false),
      m_hasRawHeader(false),
      m_rawEtherType(0),
      m_payloadOffset(0),
      m_payloadLength(0),
      m_padCount(0),
      m_hasIcrc(false),
      m_receivedIcrc(0),
      m_computedIcrc(0),
      m_icrcValid(false),
      m_receivedVcrc(0),
      m_computedVcrc(0),
      m_vcrcValid(false),
      m_isRoce(false),
      m_srcIp(0),
      m_dstIp(0),
      m_dscp(0),
      m_ecn(0),
      m_ttl(0),
      m_udpSrcPort(0),
      m_receivedFcs(0),
      m_computedFcs(0),
      m_fcsValid(false),
      m_data(nullptr),
      m_len(0)
{
}

void
IbPacketParser::Reset()
{
    *this = IbPacketParser();
}

uint8_t
IbPacketParser::ByteAt(uint32_t offset) const
{
    if (m_data == nullptr || offset >= m_len)
    {
        NS_LOG_WARN("read at " << offset << " past the end of a " << m_len << "-byte packet");
        return 0;
    }
    return m_data[offset];
}

uint32_t
IbPacketParser::LittleEndianAt(uint32_t offset, uint32_t n) const
{
    uint32_t value = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        value |= static_cast<uint32_t>(ByteAt(offset + i)) << (8 * i);
    }
    return value;
}

bool
IbPacketParser::Parse(const uint8_t* data, uint32_t len, std::string* error)
{
    NS_LOG_FUNCTION(this << static_cast<const void*>(data) << len);
    Reset();
    std::ostringstream msg;
    // Runs on every return path: forget the caller's buffer, report the message.
    auto fail = [this, &msg, error]() {
        m_data = nullptr;
        m_len = 0;
        NS_LOG_LOGIC("rejected: " << msg.str());
        if (error != nullptr)
        {
            *error = msg.str();
        }
        return false;
    };
    if (error != nullptr)
    {
        error->clear();
    }
    if (data == nullptr && len > 0)
    {
        msg << "null buffer of " << len << " bytes";
        return fail();
    }
    m_data = data;
    m_len = len;

    // 1. Room for the LRH and the VCRC.
    if (len < IbLrhHeader::SIZE)
    {
        msg << "buffer of " << len << " bytes is shorter than the " << IbLrhHeader::SIZE
            << "-byte LRH";
        return fail();
    }
    if (len < IbLrhHeader::SIZE + VCRC_BYTES)
    {
        msg << "buffer of " << len << " bytes has no room for the " << VCRC_BYTES
            << "-byte VCRC after the LRH";
        return fail();
    }

    // 2. VCRC over everything before it.
    m_receivedVcrc = static_cast<uint16_t>(LittleEndianAt(len - VCRC_BYTES, VCRC_BYTES));
    m_computedVcrc = IbCrc::ComputeVcrc(data, len - VCRC_BYTES);
    m_vcrcValid = (m_receivedVcrc == m_computedVcrc);
    if (!m_vcrcValid)
    {
        msg << "bad VCRC: received " << Hex(m_receivedVcrc, 4) << ", computed "
            << Hex(m_computedVcrc, 4);
        return fail();
    }

    // Every header field is read through IbHeaderView, over the bytes before the trailer, so
    // that no header can be read from CRC bytes.
    const IbHeaderView lrhView(data, len - VCRC_BYTES);
    const uint8_t lnh = lrhView.GetLnh();
    m_hasIcrc = (lnh == IbLrhHeader::LNH_IBA_LOCAL || lnh == IbLrhHeader::LNH_IBA_GLOBAL);
    m_lrh = LrhOf(lrhView);

    // 3. PktLen.
    const uint32_t pktLenBytes = static_cast<uint32_t>(m_lrh.GetPktLen()) * 4;
    if (pktLenBytes + VCRC_BYTES != len)
    {
        msg << "LRH PktLen " << m_lrh.GetPktLen() << " words = " << pktLenBytes << " bytes but "
            << (len - VCRC_BYTES) << " bytes precede the VCRC";
        return fail();
    }

    // Raw packets: no ICRC, no transport headers.
    if (lnh == IbLrhHeader::LNH_RAW)
    {
        if (!lrhView.HasRawHeader())
        {
            msg << "raw packet (LNH=0): the " << RAW_HEADER_BYTES << "-byte raw header needs "
                << RAW_HEADER_BYTES << " bytes after the LRH, "
                << (len - VCRC_BYTES - IbLrhHeader::SIZE) << " precede the VCRC";
            return fail();
        }
        m_hasRawHeader = true;
        m_rawEtherType = lrhView.GetRawEtherType();
        m_payloadOffset = IbLrhHeader::SIZE + RAW_HEADER_BYTES;
        m_payloadLength = len - VCRC_BYTES - m_payloadOffset;
        m_data = nullptr;
        m_len = 0;
        return true;
    }
    if (lnh == IbLrhHeader::LNH_IP_NON_IBA)
    {
        m_payloadOffset = IbLrhHeader::SIZE;
        m_payloadLength = len - VCRC_BYTES - m_payloadOffset;
        m_data = nullptr;
        m_len = 0;
        return true;
    }

    // 4. ICRC (LNH 2 or 3).
    if (len < IbLrhHeader::SIZE + ICRC_BYTES + VCRC_BYTES)
    {
        msg << "LNH=" << +lnh << " packet of " << len << " bytes has no room for the " << ICRC_BYTES
            << "-byte ICRC after the LRH";
        return fail();
    }
    const uint32_t covered = len - ICRC_BYTES - VCRC_BYTES;
    m_receivedIcrc = LittleEndianAt(covered, ICRC_BYTES);
    m_computedIcrc = IbCrc::ComputeIcrc(data, covered);
    m_icrcValid = (m_receivedIcrc == m_computedIcrc);
    if (!m_icrcValid)
    {
        msg << "bad ICRC: received " << Hex(m_receivedIcrc, 8) << ", computed "
            << Hex(m_computedIcrc, 8);
        return fail();
    }

    // 5. Structure, from the bytes before the ICRC.
    IbHeaderView view(data, covered);
    uint32_t offset = IbLrhHeader::SIZE;
    if (lnh == IbLrhHeader::LNH_IBA_GLOBAL)
    {
        if (!view.HasGrh())
        {
            msg << "GRH missing or short: LNH=3 needs " << IbGrhHeader::SIZE
                << " bytes after the LRH, " << (covered - offset) << " precede the ICRC";
            return fail();
        }
        m_grh = GrhOf(view);
        offset += IbGrhHeader::SIZE;
        m_hasGrh = true;
        if (m_grh.GetIpVer() != 6)
        {
            msg << "GRH IPVer " << +m_grh.GetIpVer() << " is not 6";
            return fail();
        }
        if (m_grh.GetNxtHdr() != IbGrhHeader::NXT_HDR_BTH)
        {
            msg << "GRH NxtHdr " << Hex(m_grh.GetNxtHdr(), 2) << " is not 0x1b (BTH)";
            return fail();
        }
        const uint32_t afterGrh = len - VCRC_BYTES - offset;
        if (m_grh.GetPayLen() != afterGrh)
        {
            msg << "GRH PayLen " << m_grh.GetPayLen() << " but " << afterGrh
                << " bytes lie between the GRH and the VCRC";
            return fail();
        }
    }
    if (!ParseTransport(view, covered, offset, msg))
    {
        return fail();
    }
    m_data = nullptr;
    m_len = 0;
    return true;
}

bool
IbPacketParser::ParseTransport(IbHeaderView& view,
                               uint32_t covered,
                               uint32_t offset,
                               std::ostringstream& msg)
{
    if (!view.HasBth())
    {
        msg << "BTH short: needs " << IbBthHeader::SIZE << " bytes at offset " << offset << ", "
            << (covered - offset) << " precede the ICRC";
        return false;
    }
    NS_ASSERT(view.GetBthOffset() == offset);
    m_bth = BthOf(view);
    offset += IbBthHeader::SIZE;
    m_hasBth = true;
    const uint8_t opcode = m_bth.GetOpcode();
    if ((m_isRoce && opcode == RocePacket::CNP_OPCODE) || (!m_isRoce && opcode == IbOpcode::CNP))
    {
        // No extension headers: the reserved bytes (RoCE) are the payload.
        m_padCount = m_bth.GetPadCnt();
        if (m_padCount > covered - offset)
        {
            msg << "BTH PadCnt " << +m_padCount << " larger than the " << (covered - offset)
                << " bytes after the CNP's BTH";
            return false;
        }
        m_payloadOffset = offset;
        m_payloadLength = covered - offset - m_padCount;
        return true;
    }
    if (!IbBthHeader::IsKnownOpcode(opcode))
    {
        msg << "unknown BTH opcode " << Hex(opcode, 2);
        return false;
    }
    if (!view.DecodeExtensionHeaders())
    {
        const uint32_t extSize = IbBthHeader::ExtensionHeaderSize(opcode);
        msg << "extension headers of " << IbBthHeader::OpcodeName(opcode) << " (" << extSize
            << " bytes) longer than the " << (covered - offset)
            << " bytes between the BTH and the ICRC";
        return false;
    }
    // Extension headers, in wire order; each fits (DecodeExtensionHeaders checked).
    const uint8_t ext = view.GetExtensionHeaders();
    if (ext & IbBthHeader::EXT_DETH)
    {
        m_deth.SetQKey(view.GetQKey());
        m_deth.SetSrcQp(view.GetSrcQp());
        m_hasDeth = true;
    }
    if (ext & IbBthHeader::EXT_RETH)
    {
        m_reth.SetVirtualAddress(view.GetRethVirtualAddress());
        m_reth.SetRKey(view.GetRethRKey());
        m_reth.SetDmaLength(view.GetDmaLength());
        m_hasReth = true;
    }
    if (ext & IbBthHeader::EXT_ATOMIC_ETH)
    {
        m_atomicEth.SetVirtualAddress(view.GetAtomicVirtualAddress());
        m_atomicEth.SetRKey(view.GetAtomicRKey());
        m_atomicEth.SetSwapOrAdd(view.GetSwapOrAdd());
        m_atomicEth.SetCompare(view.GetCompare());
        m_hasAtomicEth = true;
    }
    if (ext & IbBthHeader::EXT_AETH)
    {
        m_aeth.SetSyndrome(view.GetSyndrome());
        m_aeth.SetMsn(view.GetMsn());
        m_hasAeth = true;
    }
    if (ext & IbBthHeader::EXT_ATOMIC_ACK_ETH)
    {
        m_atomicAckEth.SetOriginalData(view.GetOriginalData());
        m_hasAtomicAckEth = true;
    }
    if (ext & IbBthHeader::EXT_IMMDT)
    {
        m_immDt.SetImmediateData(view.GetImmediateData());
        m_hasImmDt = true;
    }
    offset = view.GetHeadersSize();
    const uint32_t payloadAndPad = covered - offset;
    m_padCount = m_bth.GetPadCnt();
    if (m_padCount > payloadAndPad)
    {
        msg << "BTH PadCnt " << +m_padCount << " larger than the " << payloadAndPad
            << " bytes of payload and pad";
        return false;
    }
    m_payloadOffset = offset;
    m_payloadLength = payloadAndPad - m_padCount;
    return true;
}

bool
IbPacketParser::ParseRoce(const uint8_t* frame, uint32_t len, std::string* error)
{
    NS_LOG_FUNCTION(this << static_cast<const void*>(frame) << len);
    Reset();
    m_isRoce = true;
    std::ostringstream msg;
    auto fail = [this, &msg, error]() {
        m_data = nullptr;
        m_len = 0;
        NS_LOG_LOGIC("rejected: " << msg.str());
        if (error != nullptr)
        {
            *error = msg.str();
        }
        return false;
    };
    if (error != nullptr)
    {
        error->clear();
    }
    if (frame == nullptr && len > 0)
    {
        msg << "null buffer of " << len << " bytes";
        return fail();
    }
    m_data = frame;
    m_len = len;
    constexpr uint32_t eth = EthFrame::HEADER_SIZE;
    constexpr uint32_t udpAt = eth + RocePacket::IPV4_SIZE;

    // 1. Room for the headers and trailers.
    const uint32_t least = RocePacket::BTH_OFFSET + IbBthHeader::SIZE + RocePacket::TRAILER_SIZE;
    if (len < least)
    {
        msg << "frame of " << len << " bytes is shorter than the " << least
            << " bytes of the Ethernet, IPv4, UDP and BTH headers, ICRC and FCS";
        return fail();
    }

    // 2. FCS over everything before it.
    m_receivedFcs = LittleEndianAt(len - EthFrame::FCS_SIZE, EthFrame::FCS_SIZE);
    m_computedFcs = EthFrame::ComputeFcs(frame, len - EthFrame::FCS_SIZE);
    m_fcsValid = (m_receivedFcs == m_computedFcs);
    if (!m_fcsValid)
    {
        msg << "bad FCS: received " << Hex(m_receivedFcs, 8) << ", computed "
            << Hex(m_computedFcs, 8);
        return fail();
    }

    // 3. Ethernet, IPv4 and UDP headers.
    if (EthFrame::PeekEtherType(frame) != EthFrame::ETHERTYPE_IPV4)
    {
        msg << "EtherType " << Hex(EthFrame::PeekEtherType(frame), 4) << " is not IPv4 (0x0800)";
        return fail();
    }
    const uint8_t* ip = frame + eth;
    if (ip[0] != 0x45)
    {
        msg << "IPv4 version/IHL byte " << Hex(ip[0], 2)
            << " is not 0x45 (version 4, 20-byte header without options)";
        return fail();
    }
    uint32_t sum = 0;
    for (uint32_t i = 0; i < RocePacket::IPV4_SIZE; i += 2)
    {
        sum += IbHeaderView::ReadBe16(ip + i);
    }
    sum = (sum & 0xFFFF) + (sum >> 16);
    sum = (sum & 0xFFFF) + (sum >> 16);
    if (sum != 0xFFFF)
    {
        msg << "bad IPv4 header checksum " << Hex(IbHeaderView::ReadBe16(ip + 10), 4);
        return fail();
    }
    if (ip[9] != RocePacket::IP_PROTOCOL_UDP)
    {
        msg << "IPv4 protocol " << +ip[9] << " is not UDP (17)";
        return fail();
    }
    if ((IbHeaderView::ReadBe16(ip + 6) & 0x3FFF) != 0)
    {
        msg << "IPv4 fragment (flags/offset " << Hex(IbHeaderView::ReadBe16(ip + 6), 4)
            << "): RoCEv2 packets are not fragmented";
        return fail();
    }
    const uint32_t total = IbHeaderView::ReadBe16(ip + 2);
    const uint32_t room = len - eth - EthFrame::FCS_SIZE;
    const uint32_t leastIp = least - eth - EthFrame::FCS_SIZE;
    if (total < leastIp || total > room)
    {
        msg << "IPv4 total length " << total << " outside " << leastIp << ".." << room
            << " (headers through ICRC .. bytes before the FCS)";
        return fail();
    }
    if (total < room && len != EthFrame::MIN_FRAME)
    {
        msg << (room - total) << " bytes after the IPv4 packet in a " << len
            << "-byte frame: only a 64-byte frame has Ethernet padding";
        return fail();
    }
    if (IbHeaderView::ReadBe16(frame + udpAt + 2) != RocePacket::UDP_PORT)
    {
        msg << "UDP destination port " << IbHeaderView::ReadBe16(frame + udpAt + 2)
            << " is not RoCEv2's 4791";
        return fail();
    }
    const uint32_t udpLen = IbHeaderView::ReadBe16(frame + udpAt + 4);
    if (udpLen != total - RocePacket::IPV4_SIZE)
    {
        msg << "UDP length " << udpLen << " but the IPv4 payload is "
            << total - RocePacket::IPV4_SIZE << " bytes";
        return fail();
    }
    m_dscp = ip[1] >> 2;
    m_ecn = ip[1] & 0x3;
    m_ttl = ip[8];
    m_srcIp = IbHeaderView::ReadBe32(ip + 12);
    m_dstIp = IbHeaderView::ReadBe32(ip + 16);
    m_udpSrcPort = IbHeaderView::ReadBe16(frame + udpAt);

    // 4. ICRC.
    m_hasIcrc = true;
    const uint32_t covered = eth + total - RocePacket::ICRC_SIZE; // frame bytes before the ICRC
    m_receivedIcrc = LittleEndianAt(covered, RocePacket::ICRC_SIZE);
    m_computedIcrc = RocePacket::ComputeIcrc(ip, total - RocePacket::ICRC_SIZE);
    m_icrcValid = (m_receivedIcrc == m_computedIcrc);
    if (!m_icrcValid)
    {
        msg << "bad ICRC: received " << Hex(m_receivedIcrc, 8) << ", computed "
            << Hex(m_computedIcrc, 8);
        return fail();
    }

    // 5. The transport, from the bytes before the ICRC.
    IbHeaderView view = RocePacket::View(frame, covered);
    if (!ParseTransport(view, covered, RocePacket::BTH_OFFSET, msg))
    {
        return fail();
    }
    m_data = nullptr;
    m_len = 0;
    return true;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-packet-parser.h"

#include "ib-crc.h"

#include "ns3/assert.h"
#include "ns3/buffer.h"
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

    // Headers are read through Buffer::Iterator from a copy that ends where the trailer starts,
    // so that no header can be read from CRC bytes.
    const uint8_t lnh = ByteAt(1) & 0x03;
    m_hasIcrc = (lnh == IbLrhHeader::LNH_IBA_LOCAL || lnh == IbLrhHeader::LNH_IBA_GLOBAL);
    Buffer buffer;
    buffer.AddAtStart(len - VCRC_BYTES);
    buffer.Begin().Write(data, len - VCRC_BYTES);
    if (m_lrh.Deserialize(buffer.Begin()) != IbLrhHeader::SIZE)
    {
        msg << "LRH unreadable";
        return fail();
    }

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
        if (len - VCRC_BYTES < IbLrhHeader::SIZE + RAW_HEADER_BYTES)
        {
            msg << "raw packet (LNH=0): the " << RAW_HEADER_BYTES << "-byte raw header needs "
                << RAW_HEADER_BYTES << " bytes after the LRH, "
                << (len - VCRC_BYTES - IbLrhHeader::SIZE) << " precede the VCRC";
            return fail();
        }
        m_hasRawHeader = true;
        m_rawEtherType = static_cast<uint16_t>((ByteAt(IbLrhHeader::SIZE + 2) << 8) |
                                               ByteAt(IbLrhHeader::SIZE + 3));
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
    buffer.RemoveAtEnd(ICRC_BYTES);
    Buffer::Iterator it = buffer.Begin();
    it.Next(IbLrhHeader::SIZE);
    m_receivedIcrc = LittleEndianAt(covered, ICRC_BYTES);
    m_computedIcrc = IbCrc::ComputeIcrc(data, covered);
    m_icrcValid = (m_receivedIcrc == m_computedIcrc);
    if (!m_icrcValid)
    {
        msg << "bad ICRC: received " << Hex(m_receivedIcrc, 8) << ", computed "
            << Hex(m_computedIcrc, 8);
        return fail();
    }

    // 5. Structure.
    uint32_t offset = IbLrhHeader::SIZE;
    if (lnh == IbLrhHeader::LNH_IBA_GLOBAL)
    {
        if (covered - offset < IbGrhHeader::SIZE)
        {
            msg << "GRH missing or short: LNH=3 needs " << IbGrhHeader::SIZE
                << " bytes after the LRH, " << (covered - offset) << " precede the ICRC";
            return fail();
        }
        const uint32_t read = m_grh.Deserialize(it);
        NS_ASSERT(read == IbGrhHeader::SIZE);
        it.Next(read);
        offset += read;
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
    if (covered - offset < IbBthHeader::SIZE)
    {
        msg << "BTH short: needs " << IbBthHeader::SIZE << " bytes at offset " << offset << ", "
            << (covered - offset) << " precede the ICRC";
        return fail();
    }
    {
        const uint32_t read = m_bth.Deserialize(it);
        NS_ASSERT(read == IbBthHeader::SIZE);
        it.Next(read);
        offset += read;
        m_hasBth = true;
    }
    const uint8_t opcode = m_bth.GetOpcode();
    if (!IbBthHeader::IsKnownOpcode(opcode))
    {
        msg << "unknown BTH opcode " << Hex(opcode, 2);
        return fail();
    }
    const uint32_t extSize = IbBthHeader::ExtensionHeaderSize(opcode);
    if (covered - offset < extSize)
    {
        msg << "extension headers of " << IbBthHeader::OpcodeName(opcode) << " (" << extSize
            << " bytes) longer than the " << (covered - offset)
            << " bytes between the BTH and the ICRC";
        return fail();
    }
    // Extension headers, in wire order; each fits (extSize was checked).
    const uint8_t ext = IbBthHeader::ExtensionHeaders(opcode);
    auto readExt = [&it, &offset](Header& h, bool& present) {
        const uint32_t read = h.Deserialize(it);
        NS_ASSERT(read == h.GetSerializedSize());
        it.Next(read);
        offset += read;
        present = true;
    };
    if (ext & IbBthHeader::EXT_DETH)
    {
        readExt(m_deth, m_hasDeth);
    }
    if (ext & IbBthHeader::EXT_RETH)
    {
        readExt(m_reth, m_hasReth);
    }
    if (ext & IbBthHeader::EXT_ATOMIC_ETH)
    {
        readExt(m_atomicEth, m_hasAtomicEth);
    }
    if (ext & IbBthHeader::EXT_AETH)
    {
        readExt(m_aeth, m_hasAeth);
    }
    if (ext & IbBthHeader::EXT_ATOMIC_ACK_ETH)
    {
        readExt(m_atomicAckEth, m_hasAtomicAckEth);
    }
    if (ext & IbBthHeader::EXT_IMMDT)
    {
        readExt(m_immDt, m_hasImmDt);
    }
    const uint32_t payloadAndPad = covered - offset;
    m_padCount = m_bth.GetPadCnt();
    if (m_padCount > payloadAndPad)
    {
        msg << "BTH PadCnt " << +m_padCount << " larger than the " << payloadAndPad
            << " bytes of payload and pad";
        return fail();
    }
    m_payloadOffset = offset;
    m_payloadLength = payloadAndPad - m_padCount;
    m_data = nullptr;
    m_len = 0;
    return true;
}

} // namespace ns3

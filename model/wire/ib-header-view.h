/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_HEADER_VIEW_H
#define IB_HEADER_VIEW_H

#include "ib-bth-header.h"
#include "ib-grh-header.h"
#include "ib-lrh-header.h"

#include "ns3/assert.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief The one decoder of IBA header bytes: LRH, GRH presence, BTH and the extension
 * headers, read in place from a contiguous byte span.
 *
 * The view neither copies nor allocates: it keeps a pointer to the span (which must outlive
 * it) and a few offsets. The constructor reads the LRH's LNH and locates the GRH (LNH 3) and
 * the BTH (LNH 2 or 3), a few comparisons; DecodeExtensionHeaders() looks the BTH opcode up
 * and locates its extension headers (in wire order DETH, RETH, AtomicETH, AETH, AtomicAckETH,
 * ImmDt). Each Get*() reads its field from the bytes when called (big-endian, as on the wire,
 * reserved bits ignored, as the header classes' Deserialize() do), so a user pays only for the
 * fields it reads.
 *
 * The per-packet paths (IbHca, IbQueuePair, SharpAggregationNode) copy a packet's first bytes
 * out of the ns3::Packet with CopyData and decode them here; IbPacketParser validates whole
 * packets and takes its fields from here too. Nothing is checked by the accessors: a field may
 * be read only when its header is present (HasLrh(), HasGrh(), HasBth(), HasRawHeader(), or
 * DecodeExtensionHeaders() true and the header's EXT_* bit in GetExtensionHeaders()).
 */
class IbHeaderView
{
  public:
    /**
     * @param p two bytes
     * @return the big-endian 16-bit value there
     */
    static uint16_t ReadBe16(const uint8_t* p)
    {
        return static_cast<uint16_t>((p[0] << 8) | p[1]);
    }

    /**
     * @param p three bytes
     * @return the big-endian 24-bit value there
     */
    static uint32_t ReadBe24(const uint8_t* p)
    {
        return (static_cast<uint32_t>(p[0]) << 16) | (static_cast<uint32_t>(p[1]) << 8) | p[2];
    }

    /**
     * @param p four bytes
     * @return the big-endian 32-bit value there
     */
    static uint32_t ReadBe32(const uint8_t* p)
    {
        return (static_cast<uint32_t>(p[0]) << 24) | ReadBe24(p + 1);
    }

    /**
     * @param p eight bytes
     * @return the big-endian 64-bit value there
     */
    static uint64_t ReadBe64(const uint8_t* p)
    {
        return (static_cast<uint64_t>(ReadBe32(p)) << 32) | ReadBe32(p + 4);
    }

    /**
     * Locate the headers at the start of a span: the LRH, and after it the GRH (LNH 3) and
     * the BTH (LNH 2 or 3) if the span holds them.
     * @param data the bytes, from the first LRH byte (a whole packet or only its first bytes)
     * @param len the number of bytes at @p data
     */
    IbHeaderView(const uint8_t* data, uint32_t len)
        : m_data(data),
          m_len(len)
    {
        if (len < IbLrhHeader::SIZE)
        {
            return;
        }
        m_hasLrh = true;
        const uint8_t lnh = data[1] & 0x03;
        if (lnh < IbLrhHeader::LNH_IBA_LOCAL)
        {
            return;
        }
        uint32_t bth = IbLrhHeader::SIZE;
        if (lnh == IbLrhHeader::LNH_IBA_GLOBAL)
        {
            if (len < IbLrhHeader::SIZE + IbGrhHeader::SIZE)
            {
                return;
            }
            m_hasGrh = true;
            bth += IbGrhHeader::SIZE;
        }
        if (len >= bth + IbBthHeader::SIZE)
        {
            m_bth = static_cast<uint8_t>(bth);
        }
    }

    /**
     * A view of a span whose BTH is at a given offset and that has no LRH or GRH: a RoCEv2
     * frame (Ethernet, IP and UDP headers before the BTH, RocePacket::BTH_OFFSET for IPv4),
     * so that the one IBA decoder serves RoCE too. HasLrh() and HasGrh() are false (the LRH
     * and GRH accessors must not be called), HasBth() is true if the span holds the BTH, and
     * DecodeExtensionHeaders(), the BTH and extension header accessors work as for an IBA
     * packet; GetHeadersSize() is then the payload's offset from the span's start.
     * @param data the bytes, from the span's start (e.g. the destination MAC of a frame)
     * @param len the number of bytes at @p data
     * @param bthOffset the offset of the BTH in the span, 1..255
     * @return the view
     */
    static IbHeaderView AtBth(const uint8_t* data, uint32_t len, uint32_t bthOffset)
    {
        return IbHeaderView(data, len, bthOffset);
    }

    /**
     * Look the BTH opcode up and locate its extension headers.
     * @return true if the span holds a BTH with a known opcode (IbBthHeader::IsKnownOpcode)
     *         and all of the opcode's extension headers
     */
    bool DecodeExtensionHeaders()
    {
        if (m_bth == 0)
        {
            return false;
        }
        const uint8_t opcode = m_data[m_bth];
        if (!IbBthHeader::IsKnownOpcode(opcode))
        {
            return false;
        }
        m_ext = IbBthHeader::ExtensionHeaders(opcode);
        m_headersSize = m_bth + IbBthHeader::SIZE + IbBthHeader::ExtensionBytes(m_ext);
        m_hasExt = m_len >= m_headersSize;
        return m_hasExt;
    }

    /// @return the span's first byte
    const uint8_t* GetData() const
    {
        return m_data;
    }

    /// @return the span's length
    uint32_t GetLength() const
    {
        return m_len;
    }

    /// @return true if the span holds an LRH
    bool HasLrh() const
    {
        return m_hasLrh;
    }

    /// @return true if the LRH says GRH (LNH 3) and the span holds it
    bool HasGrh() const
    {
        return m_hasGrh;
    }

    /// @return true if the LRH says BTH (LNH 2, or 3 with the GRH) and the span holds it
    bool HasBth() const
    {
        return m_bth != 0;
    }

    /// @return true if the LRH says raw (LNH 0) and the span holds the 4-byte raw header
    bool HasRawHeader() const
    {
        return m_hasLrh && GetLnh() == IbLrhHeader::LNH_RAW && m_len >= IbLrhHeader::SIZE + 4;
    }

    /// @return true if DecodeExtensionHeaders() found all the extension headers
    bool HasExtensionHeaders() const
    {
        return m_hasExt;
    }

    // --- LRH (HasLrh())

    /// @return LRH VL
    uint8_t GetVl() const
    {
        return m_data[0] >> 4;
    }

    /// @return LRH LVer
    uint8_t GetLinkVersion() const
    {
        return m_data[0] & 0x0F;
    }

    /// @return LRH SL
    uint8_t GetSl() const
    {
        return m_data[1] >> 4;
    }

    /// @return LRH LNH, one of IbLrhHeader's LNH_* constants
    uint8_t GetLnh() const
    {
        return m_data[1] & 0x03;
    }

    /// @return LRH DLID
    uint16_t GetDlid() const
    {
        return ReadBe16(m_data + 2);
    }

    /// @return LRH PktLen (4-byte words, 11 bits)
    uint16_t GetPktLen() const
    {
        return ReadBe16(m_data + 4) & 0x07FF;
    }

    /// @return LRH SLID
    uint16_t GetSlid() const
    {
        return ReadBe16(m_data + 6);
    }

    // --- raw header (HasRawHeader())

    /// @return the raw header's EtherType
    uint16_t GetRawEtherType() const
    {
        return ReadBe16(m_data + IbLrhHeader::SIZE + 2);
    }

    // --- GRH (HasGrh())

    /// @return GRH IPVer
    uint8_t GetIpVer() const
    {
        return Grh()[0] >> 4;
    }

    /// @return GRH TClass
    uint8_t GetTrafficClass() const
    {
        return static_cast<uint8_t>((ReadBe16(Grh()) >> 4) & 0xFF);
    }

    /// @return GRH FlowLabel (20 bits)
    uint32_t GetFlowLabel() const
    {
        return ReadBe32(Grh()) & 0xFFFFF;
    }

    /// @return GRH PayLen
    uint16_t GetPayLen() const
    {
        return ReadBe16(Grh() + 4);
    }

    /// @return GRH NxtHdr
    uint8_t GetNxtHdr() const
    {
        return Grh()[6];
    }

    /// @return GRH HopLmt
    uint8_t GetHopLmt() const
    {
        return Grh()[7];
    }

    /// @return the 16 bytes of the GRH SGID
    const uint8_t* GetSgid() const
    {
        return Grh() + 8;
    }

    /// @return the 16 bytes of the GRH DGID
    const uint8_t* GetDgid() const
    {
        return Grh() + 24;
    }

    // --- BTH (HasBth())

    /// @return the offset of the BTH in the span (8, or 48 after a GRH; AtBth()'s offset)
    uint32_t GetBthOffset() const
    {
        return m_bth;
    }

    /// @return BTH OpCode
    uint8_t GetOpcode() const
    {
        return Bth()[0];
    }

    /// @return BTH SE
    bool GetSolicitedEvent() const
    {
        return (Bth()[1] & 0x80) != 0;
    }

    /// @return BTH M (MigReq)
    bool GetMigReq() const
    {
        return (Bth()[1] & 0x40) != 0;
    }

    /// @return BTH PadCnt
    uint8_t GetPadCnt() const
    {
        return (Bth()[1] >> 4) & 0x03;
    }

    /// @return BTH TVer
    uint8_t GetTVer() const
    {
        return Bth()[1] & 0x0F;
    }

    /// @return BTH P_Key
    uint16_t GetPKey() const
    {
        return ReadBe16(Bth() + 2);
    }

    /// @return BTH FECN
    bool GetFecn() const
    {
        return (Bth()[4] & 0x80) != 0;
    }

    /// @return BTH BECN
    bool GetBecn() const
    {
        return (Bth()[4] & 0x40) != 0;
    }

    /// @return BTH DestQP
    uint32_t GetDestQp() const
    {
        return ReadBe24(Bth() + 5);
    }

    /// @return BTH AckReq
    bool GetAckReq() const
    {
        return (Bth()[8] & 0x80) != 0;
    }

    /// @return BTH PSN
    uint32_t GetPsn() const
    {
        return ReadBe24(Bth() + 9);
    }

    // --- extension headers (DecodeExtensionHeaders() true)

    /// @return the opcode's extension headers, as IbBthHeader's EXT_* bits
    uint8_t GetExtensionHeaders() const
    {
        return m_ext;
    }

    /// @return LRH, GRH, BTH and extension header bytes: the offset of the payload
    uint32_t GetHeadersSize() const
    {
        return m_headersSize;
    }

    /// @return DETH Q_Key (EXT_DETH)
    uint32_t GetQKey() const
    {
        return ReadBe32(Ext(IbBthHeader::EXT_DETH));
    }

    /// @return DETH SrcQP (EXT_DETH)
    uint32_t GetSrcQp() const
    {
        return ReadBe24(Ext(IbBthHeader::EXT_DETH) + 5);
    }

    /// @return RETH VA (EXT_RETH)
    uint64_t GetRethVirtualAddress() const
    {
        return ReadBe64(Ext(IbBthHeader::EXT_RETH));
    }

    /// @return RETH R_Key (EXT_RETH)
    uint32_t GetRethRKey() const
    {
        return ReadBe32(Ext(IbBthHeader::EXT_RETH) + 8);
    }

    /// @return RETH DMA Length (EXT_RETH)
    uint32_t GetDmaLength() const
    {
        return ReadBe32(Ext(IbBthHeader::EXT_RETH) + 12);
    }

    /// @return AtomicETH VA (EXT_ATOMIC_ETH)
    uint64_t GetAtomicVirtualAddress() const
    {
        return ReadBe64(Ext(IbBthHeader::EXT_ATOMIC_ETH));
    }

    /// @return AtomicETH R_Key (EXT_ATOMIC_ETH)
    uint32_t GetAtomicRKey() const
    {
        return ReadBe32(Ext(IbBthHeader::EXT_ATOMIC_ETH) + 8);
    }

    /// @return AtomicETH Swap (or Add) Data (EXT_ATOMIC_ETH)
    uint64_t GetSwapOrAdd() const
    {
        return ReadBe64(Ext(IbBthHeader::EXT_ATOMIC_ETH) + 12);
    }

    /// @return AtomicETH Compare Data (EXT_ATOMIC_ETH)
    uint64_t GetCompare() const
    {
        return ReadBe64(Ext(IbBthHeader::EXT_ATOMIC_ETH) + 20);
    }

    /// @return AETH Syndrome (EXT_AETH)
    uint8_t GetSyndrome() const
    {
        return Ext(IbBthHeader::EXT_AETH)[0];
    }

    /// @return AETH MSN (EXT_AETH)
    uint32_t GetMsn() const
    {
        return ReadBe24(Ext(IbBthHeader::EXT_AETH) + 1);
    }

    /// @return AtomicAckETH Original Remote Data (EXT_ATOMIC_ACK_ETH)
    uint64_t GetOriginalData() const
    {
        return ReadBe64(Ext(IbBthHeader::EXT_ATOMIC_ACK_ETH));
    }

    /// @return ImmDt (EXT_IMMDT)
    uint32_t GetImmediateData() const
    {
        return ReadBe32(Ext(IbBthHeader::EXT_IMMDT));
    }

  private:
    /**
     * The AtBth() view.
     * @param data the bytes
     * @param len the number of bytes at @p data
     * @param bthOffset the offset of the BTH, 1..255
     */
    IbHeaderView(const uint8_t* data, uint32_t len, uint32_t bthOffset)
        : m_data(data),
          m_len(len)
    {
        NS_ASSERT_MSG(bthOffset >= 1 && bthOffset <= 0xFF,
                      "IbHeaderView::AtBth: BTH offset " << bthOffset << " is not in 1..255");
        if (len >= bthOffset + IbBthHeader::SIZE)
        {
            m_bth = static_cast<uint8_t>(bthOffset);
        }
    }

    /// @return the GRH's first byte
    const uint8_t* Grh() const
    {
        return m_data + IbLrhHeader::SIZE;
    }

    /// @return the BTH's first byte
    const uint8_t* Bth() const
    {
        return m_data + m_bth;
    }

    /**
     * @param which one EXT_* bit
     * @return the first byte of that extension header. DETH, RETH and AtomicETH are found
     *         after the BTH and the headers before them; AETH, AtomicAckETH and ImmDt before
     *         the payload and the headers from them on: at most two headers to add up
     *         (@p which is a constant, so that the choice costs nothing).
     */
    const uint8_t* Ext(uint8_t which) const
    {
        if (which <= IbBthHeader::EXT_ATOMIC_ETH)
        {
            const uint8_t before = static_cast<uint8_t>(m_ext & (which - 1));
            return m_data + m_bth + IbBthHeader::SIZE + IbBthHeader::ExtensionBytes(before);
        }
        const uint8_t fromHere = static_cast<uint8_t>(m_ext & ~(which - 1));
        return m_data + m_headersSize - IbBthHeader::ExtensionBytes(fromHere);
    }

    const uint8_t* m_data;     //!< the span
    uint32_t m_len;            //!< bytes in the span
    uint32_t m_headersSize{0}; //!< payload offset (DecodeExtensionHeaders())
    uint8_t m_bth{0};          //!< BTH offset; 0: no BTH
    uint8_t m_ext{0};          //!< EXT_* bits (DecodeExtensionHeaders())
    bool m_hasLrh{false};      //!< the span holds an LRH
    bool m_hasGrh{false};      //!< LNH 3 and the span holds the GRH
    bool m_hasExt{false};      //!< DecodeExtensionHeaders() found every extension header
};

} // namespace ns3

#endif /* IB_HEADER_VIEW_H */

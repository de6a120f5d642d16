/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_BTH_HEADER_H
#define IB_BTH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief BTH OpCode values of the RC and UD transports (upper 3 bits: transport, lower 5:
 * operation).
 */
struct IbOpcode
{
    static constexpr uint8_t RC_SEND_FIRST = 0x00;                     //!< RC SEND First
    static constexpr uint8_t RC_SEND_MIDDLE = 0x01;                    //!< RC SEND Middle
    static constexpr uint8_t RC_SEND_LAST = 0x02;                      //!< RC SEND Last
    static constexpr uint8_t RC_SEND_LAST_WITH_IMMEDIATE = 0x03;       //!< RC SEND Last w/ Imm
    static constexpr uint8_t RC_SEND_ONLY = 0x04;                      //!< RC SEND Only
    static constexpr uint8_t RC_SEND_ONLY_WITH_IMMEDIATE = 0x05;       //!< RC SEND Only w/ Imm
    static constexpr uint8_t RC_RDMA_WRITE_FIRST = 0x06;               //!< RC RDMA WRITE First
    static constexpr uint8_t RC_RDMA_WRITE_MIDDLE = 0x07;              //!< RC RDMA WRITE Middle
    static constexpr uint8_t RC_RDMA_WRITE_LAST = 0x08;                //!< RC RDMA WRITE Last
    static constexpr uint8_t RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09; //!< RC WRITE Last w/ Imm
    static constexpr uint8_t RC_RDMA_WRITE_ONLY = 0x0A;                //!< RC RDMA WRITE Only
    static constexpr uint8_t RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B; //!< RC WRITE Only w/ Imm
    static constexpr uint8_t RC_RDMA_READ_REQUEST = 0x0C;              //!< RC RDMA READ Request
    static constexpr uint8_t RC_RDMA_READ_RESPONSE_FIRST = 0x0D;       //!< RC READ Response First
    static constexpr uint8_t RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E;      //!< RC READ Response Mid.
    static constexpr uint8_t RC_RDMA_READ_RESPONSE_LAST = 0x0F;        //!< RC READ Response Last
    static constexpr uint8_t RC_RDMA_READ_RESPONSE_ONLY = 0x10;        //!< RC READ Response Only
    static constexpr uint8_t RC_ACKNOWLEDGE = 0x11;                    //!< RC ACKNOWLEDGE
    static constexpr uint8_t RC_ATOMIC_ACKNOWLEDGE = 0x12;             //!< RC ATOMIC ACKNOWLEDGE
    static constexpr uint8_t RC_COMPARE_SWAP = 0x13;                   //!< RC CmpSwap
    static constexpr uint8_t RC_FETCH_ADD = 0x14;                      //!< RC FetchAdd
    static constexpr uint8_t UD_SEND_ONLY = 0x64;                      //!< UD SEND Only
    static constexpr uint8_t UD_SEND_ONLY_WITH_IMMEDIATE = 0x65;       //!< UD SEND Only w/ Imm
    /// Congestion Notification Packet of InfiniBand congestion control (IBA annex A10): BTH
    /// with BECN set and DestQP the source's QP, no payload. RoCEv2's CNP is 0x81.
    static constexpr uint8_t CNP = 0x80;
};

/**
 * @ingroup infiniband-wire
 * @brief InfiniBand Base Transport Header (BTH), 12 bytes.
 *
 * Wire layout (big-endian): OpCode 8 | SE 1, M 1, PadCnt 2, TVer 4 | P_Key 16 |
 * FECN 1, BECN 1, reserved 6 | DestQP 24 | AckReq 1, reserved 7 | PSN 24.
 * Reserved bits are written as 0 and ignored on reading.
 */
class IbBthHeader : public Header
{
  public:
    /// Serialized size in bytes.
    static constexpr uint32_t SIZE = 12;

    /// Bit of ExtensionHeaders(): a DETH (8 bytes) follows.
    static constexpr uint8_t EXT_DETH = 0x01;
    /// Bit of ExtensionHeaders(): a RETH (16 bytes) follows.
    static constexpr uint8_t EXT_RETH = 0x02;
    /// Bit of ExtensionHeaders(): an AtomicETH (28 bytes) follows.
    static constexpr uint8_t EXT_ATOMIC_ETH = 0x04;
    /// Bit of ExtensionHeaders(): an AETH (4 bytes) follows.
    static constexpr uint8_t EXT_AETH = 0x08;
    /// Bit of ExtensionHeaders(): an AtomicAckETH (8 bytes) follows.
    static constexpr uint8_t EXT_ATOMIC_ACK_ETH = 0x10;
    /// Bit of ExtensionHeaders(): an ImmDt (4 bytes) follows.
    static constexpr uint8_t EXT_IMMDT = 0x20;

    /// @brief Create a BTH with P_Key 0xFFFF and every other field 0 (opcode RC SEND First).
    IbBthHeader();

    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    /**
     * @brief Get the TypeId of this instance.
     * @return the TypeId of IbBthHeader
     */
    TypeId GetInstanceTypeId() const override;
    /**
     * @brief Get the serialized size.
     * @return 12
     */
    uint32_t GetSerializedSize() const override;
    /**
     * @brief Write the header (big-endian fields, reserved bits 0).
     * @param start where to write it
     */
    void Serialize(Buffer::Iterator start) const override;
    /**
     * @brief Read the header.
     * @param start where the header starts
     * @return the number of bytes read (12), or 0 if fewer than 12 bytes remain (nothing is read)
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    /**
     * @brief Print the fields with Wireshark's names, e.g. "Opcode: RC Send Only (4), ...".
     * @param os the output stream
     */
    void Print(std::ostream& os) const override;

    /**
     * @brief Set the OpCode.
     * @param opcode the opcode (see IbOpcode)
     */
    void SetOpcode(uint8_t opcode);
    /**
     * @brief Get the OpCode.
     * @return the opcode
     */
    uint8_t GetOpcode() const;
    /**
     * @brief Set the Solicited Event bit.
     * @param se the bit
     */
    void SetSolicitedEvent(bool se);
    /**
     * @brief Get the Solicited Event bit.
     * @return the bit
     */
    bool GetSolicitedEvent() const;
    /**
     * @brief Set the MigReq bit.
     * @param migReq the bit
     */
    void SetMigReq(bool migReq);
    /**
     * @brief Get the MigReq bit.
     * @return the bit
     */
    bool GetMigReq() const;
    /**
     * @brief Set the Pad Count: pad bytes after the payload.
     * @param padCnt the pad count, 0..3
     */
    void SetPadCnt(uint8_t padCnt);
    /**
     * @brief Get the Pad Count.
     * @return the pad count
     */
    uint8_t GetPadCnt() const;
    /**
     * @brief Set the Transport Header Version.
     * @param tver the version, 0..15
     */
    void SetTVer(uint8_t tver);
    /**
     * @brief Get the Transport Header Version.
     * @return the version
     */
    uint8_t GetTVer() const;
    /**
     * @brief Set the Partition Key.
     * @param pkey the P_Key
     */
    void SetPKey(uint16_t pkey);
    /**
     * @brief Get the Partition Key.
     * @return the P_Key
     */
    uint16_t GetPKey() const;
    /**
     * @brief Set the FECN bit (forward explicit congestion notification).
     * @param fecn the bit
     */
    void SetFecn(bool fecn);
    /**
     * @brief Get the FECN bit.
     * @return the bit
     */
    bool GetFecn() const;
    /**
     * @brief Set the BECN bit (backward explicit congestion notification).
     * @param becn the bit
     */
    void SetBecn(bool becn);
    /**
     * @brief Get the BECN bit.
     * @return the bit
     */
    bool GetBecn() const;
    /**
     * @brief Set the Destination QP.
     * @param destQp the QP number, 0..0xFFFFFF (24 bits)
     */
    void SetDestQp(uint32_t destQp);
    /**
     * @brief Get the Destination QP.
     * @return the QP number
     */
    uint32_t GetDestQp() const;
    /**
     * @brief Set the Acknowledge Request bit.
     * @param ackReq the bit
     */
    void SetAckReq(bool ackReq);
    /**
     * @brief Get the Acknowledge Request bit.
     * @return the bit
     */
    bool GetAckReq() const;
    /**
     * @brief Set the Packet Sequence Number.
     * @param psn the PSN, 0..0xFFFFFF (24 bits)
     */
    void SetPsn(uint32_t psn);
    /**
     * @brief Get the Packet Sequence Number.
     * @return the PSN
     */
    uint32_t GetPsn() const;

    /**
     * @brief Get the name of an opcode as Wireshark-like text, e.g. "RC Send Only".
     * @param opcode the opcode
     * @return the name, or "Unknown" for an opcode this module does not know
     */
    static const char* OpcodeName(uint8_t opcode);
    /**
     * @brief Tell whether an opcode is one of the RC or UD opcodes in IbOpcode.
     * @param opcode the opcode
     * @return true if known
     */
    static constexpr bool IsKnownOpcode(uint8_t opcode);
    /**
     * @brief Get the extension headers that follow the BTH for an opcode, as EXT_* bits.
     *
     * On the wire they appear in the order DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt.
     *
     * @param opcode the opcode
     * @return the EXT_* bits (0 for an unknown opcode)
     */
    static constexpr uint8_t ExtensionHeaders(uint8_t opcode);
    /**
     * @brief Get the total size of the extension headers that follow the BTH for an opcode.
     *
     * RETH 16, AETH 4, DETH 8, ImmDt 4, AtomicETH 28, AtomicAckETH 8, summed for the headers the
     * opcode carries (e.g. RC RDMA WRITE Only with Immediate: 20, UD SEND Only: 8).
     *
     * @param opcode the opcode
     * @return the size in bytes (0 for an unknown opcode)
     */
    static constexpr uint32_t ExtensionHeaderSize(uint8_t opcode);
    /**
     * @brief Get the total size of some extension headers.
     * @param ext EXT_* bits
     * @return the size in bytes of the headers named by @p ext
     */
    static constexpr uint32_t ExtensionBytes(uint8_t ext);
    /**
     * @brief Tell whether packets with this opcode may carry a payload.
     * @param opcode the opcode
     * @return false for RDMA READ Request, (Atomic) Acknowledge, CmpSwap, FetchAdd and unknown
     * opcodes; true otherwise
     */
    static bool HasPayload(uint8_t opcode);

  private:
    uint8_t m_opcode;  //!< OpCode
    bool m_se;         //!< Solicited Event
    bool m_migReq;     //!< MigReq
    uint8_t m_padCnt;  //!< Pad Count, 2 bits
    uint8_t m_tver;    //!< Transport Header Version, 4 bits
    uint16_t m_pkey;   //!< Partition Key
    bool m_fecn;       //!< FECN
    bool m_becn;       //!< BECN
    uint32_t m_destQp; //!< Destination QP, 24 bits
    bool m_ackReq;     //!< Acknowledge Request
    uint32_t m_psn;    //!< Packet Sequence Number, 24 bits
};

// Inline (constexpr): the per-packet decoder (IbHeaderView) looks opcodes up without a call.

constexpr bool
IbBthHeader::IsKnownOpcode(uint8_t opcode)
{
    return opcode <= IbOpcode::RC_FETCH_ADD || opcode == IbOpcode::UD_SEND_ONLY ||
           opcode == IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE;
}

constexpr uint8_t
IbBthHeader::ExtensionHeaders(uint8_t opcode)
{
    switch (opcode)
    {
    case IbOpcode::RC_SEND_LAST_WITH_IMMEDIATE:
    case IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE:
    case IbOpcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE:
        return EXT_IMMDT;
    case IbOpcode::RC_RDMA_WRITE_FIRST:
    case IbOpcode::RC_RDMA_WRITE_ONLY:
    case IbOpcode::RC_RDMA_READ_REQUEST:
        return EXT_RETH;
    case IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
        return EXT_RETH | EXT_IMMDT;
    case IbOpcode::RC_RDMA_READ_RESPONSE_FIRST:
    case IbOpcode::RC_RDMA_READ_RESPONSE_LAST:
    case IbOpcode::RC_RDMA_READ_RESPONSE_ONLY:
    case IbOpcode::RC_ACKNOWLEDGE:
        return EXT_AETH;
    case IbOpcode::RC_ATOMIC_ACKNOWLEDGE:
        return EXT_AETH | EXT_ATOMIC_ACK_ETH;
    case IbOpcode::RC_COMPARE_SWAP:
    case IbOpcode::RC_FETCH_ADD:
        return EXT_ATOMIC_ETH;
    case IbOpcode::UD_SEND_ONLY:
        return EXT_DETH;
    case IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE:
        return EXT_DETH | EXT_IMMDT;
    default:
        // RC SEND First/Middle/Last/Only, RDMA WRITE Middle/Last, READ Response Middle,
        // and unknown opcodes.
        return 0;
    }
}

constexpr uint32_t
IbBthHeader::ExtensionBytes(uint8_t ext)
{
    uint32_t size = 0;
    size += (ext & EXT_DETH) ? 8 : 0;
    size += (ext & EXT_RETH) ? 16 : 0;
    size += (ext & EXT_ATOMIC_ETH) ? 28 : 0;
    size += (ext & EXT_AETH) ? 4 : 0;
    size += (ext & EXT_ATOMIC_ACK_ETH) ? 8 : 0;
    size += (ext & EXT_IMMDT) ? 4 : 0;
    return size;
}

constexpr uint32_t
IbBthHeader::ExtensionHeaderSize(uint8_t opcode)
{
    return ExtensionBytes(ExtensionHeaders(opcode));
}

} // namespace ns3

#endif /* IB_BTH_HEADER_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-aeth-header.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbAethHeader");

NS_OBJECT_ENSURE_REGISTERED(IbAethHeader);

namespace
{

/// Mask of the syndrome class bits (7..5).
constexpr uint8_t SYNDROME_CLASS_MASK = 0xE0;
/// Class bits of an ACK.
constexpr uint8_t SYNDROME_CLASS_ACK = 0x00;
/// Class bits of an RNR NAK.
constexpr uint8_t SYNDROME_CLASS_RNR_NAK = 0x20;
/// Class bits of a NAK.
constexpr uint8_t SYNDROME_CLASS_NAK = 0x60;

/**
 * @param syndrome a NAK syndrome
 * @return Wireshark-like text for the NAK code
 */
const char*
NakCodeName(uint8_t syndrome)
{
    switch (syndrome)
    {
    case IbAethHeader::NAK_PSN_SEQUENCE_ERROR:
        return "PSN Sequence Error";
    case IbAethHeader::NAK_INVALID_REQUEST:
        return "Invalid Request";
    case IbAethHeader::NAK_REMOTE_ACCESS_ERROR:
        return "Remote Access Error";
    case IbAethHeader::NAK_REMOTE_OPERATIONAL_ERROR:
        return "Remote Operational Error";
    case IbAethHeader::NAK_INVALID_RD_REQUEST:
        return "Invalid RD Request";
    default:
        return "Reserved";
    }
}

} // namespace

IbAethHeader::IbAethHeader()
    : m_syndrome(0),
      m_msn(0)
{
}

TypeId
IbAethHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbAethHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbAethHeader>();
    return tid;
}

TypeId
IbAethHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbAethHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IbAethHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU32((static_cast<uint32_t>(m_syndrome) << 24) | m_msn);
}

uint32_t
IbAethHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("AETH needs " << SIZE << " bytes, " << start.GetRemainingSize() << " left");
        return 0;
    }
    const uint32_t word = start.ReadNtohU32();
    m_syndrome = static_cast<uint8_t>(word >> 24);
    m_msn = word & 0xFFFFFF;
    return SIZE;
}

void
IbAethHeader::Print(std::ostream& os) const
{
    os << "Syndrome: " << +m_syndrome << " (";
    if (IsAck())
    {
        os << "Ack, Credit Count: " << +GetCreditCount();
    }
    else if (IsRnrNak())
    {
        os << "RNR Nak, RNR Timer: " << +GetRnrTimerCode();
    }
    else if (IsNak())
    {
        os << "Nak, " << NakCodeName(m_syndrome);
    }
    else
    {
        os << "Reserved";
    }
    os << "), Message Sequence Number: " << m_msn;
}

void
IbAethHeader::SetSyndrome(uint8_t syndrome)
{
    m_syndrome = syndrome;
}

uint8_t
IbAethHeader::GetSyndrome() const
{
    return m_syndrome;
}

void
IbAethHeader::SetMsn(uint32_t msn)
{
    NS_ABORT_MSG_UNLESS(msn <= 0xFFFFFF,
                        "IbAethHeader::SetMsn: AETH MSN " << msn
                                                          << " out of range 0..16777215 (24 bits)");
    m_msn = msn;
}

uint32_t
IbAethHeader::GetMsn() const
{
    return m_msn;
}

bool
IbAethHeader::IsAck() const
{
    return IsAckSyndrome(m_syndrome);
}

bool
IbAethHeader::IsRnrNak() const
{
    return IsRnrNakSyndrome(m_syndrome);
}

bool
IbAethHeader::IsNak() const
{
    return IsNakSyndrome(m_syndrome);
}

uint8_t
IbAethHeader::GetCreditCount() const
{
    return m_syndrome & 0x1F;
}

uint8_t
IbAethHeader::GetRnrTimerCode() const
{
    return m_syndrome & 0x1F;
}

bool
IbAethHeader::IsAckSyndrome(uint8_t syndrome)
{
    return (syndrome & SYNDROME_CLASS_MASK) == SYNDROME_CLASS_ACK;
}

bool
IbAethHeader::IsRnrNakSyndrome(uint8_t syndrome)
{
    return (syndrome & SYNDROME_CLASS_MASK) == SYNDROME_CLASS_RNR_NAK;
}

bool
IbAethHeader::IsNakSyndrome(uint8_t syndrome)
{
    return (syndrome & SYNDROME_CLASS_MASK) == SYNDROME_CLASS_NAK;
}

uint8_t
IbAethHeader::AckSyndrome(uint8_t creditCount)
{
    NS_ABORT_MSG_UNLESS(creditCount <= 31,
                        "IbAethHeader::AckSyndrome: AETH credit count " << +creditCount
                                                                        << " out of range 0..31");
    return SYNDROME_CLASS_ACK | creditCount;
}

uint8_t
IbAethHeader::RnrNakSyndrome(uint8_t rnrTimerCode)
{
    NS_ABORT_MSG_UNLESS(rnrTimerCode <= 31,
                        "IbAethHeader::RnrNakSyndrome: AETH RNR timer code "
                            << +rnrTimerCode << " out of range 0..31");
    return SYNDROME_CLASS_RNR_NAK | rnrTimerCode;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "pcie-link.h"

#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PcieLink");

NS_OBJECT_ENSURE_REGISTERED(PcieLink);

namespace
{

/// @return true if @p v is a power of two
bool
IsPowerOfTwo(uint32_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/// @return @p bytes split into pieces of at most @p piece bytes: how many pieces
uint64_t
Pieces(uint64_t bytes, uint32_t piece)
{
    return (bytes + piece - 1) / piece;
}

} // namespace

TypeId
PcieLink::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PcieLink")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<PcieLink>()
            .AddAttribute("Generation",
                          "PCI Express generation: 1 to 5 (2.5, 5, 8, 16, 32 GT/s per lane).",
                          UintegerValue(4),
                          MakeUintegerAccessor(&PcieLink::m_generation),
                          MakeIbUintegerChecker<uint32_t>("PcieLink", "Generation", 1, 5))
            .AddAttribute("Lanes",
                          "Negotiated link width: 1, 2, 4, 8, 12, 16 or 32 lanes.",
                          UintegerValue(16),
                          MakeUintegerAccessor(&PcieLink::m_lanes),
                          MakeIbUintegerChecker<uint32_t>("PcieLink", "Lanes", 1, 32))
            .AddAttribute("MaxPayloadSize",
                          "Max_Payload_Size in bytes (128 to 4096, a power of two): the "
                          "largest payload of a posted write.",
                          UintegerValue(256),
                          MakeUintegerAccessor(&PcieLink::m_mps),
                          MakeIbUintegerChecker<uint32_t>("PcieLink", "MaxPayloadSize", 128, 4096))
            .AddAttribute(
                "MaxReadRequestSize",
                "Max_Read_Request_Size in bytes (128 to 4096, a power of two): the most "
                "one memory-read request asks for.",
                UintegerValue(512),
                MakeUintegerAccessor(&PcieLink::m_mrrs),
                MakeIbUintegerChecker<uint32_t>("PcieLink", "MaxReadRequestSize", 128, 4096))
            .AddAttribute(
                "ReadCompletionSize",
                "Bytes of data in each completion the root complex returns for a read "
                "(64 to MaxPayloadSize, a power of two; some split at the 64-byte read "
                "completion boundary, others return MaxPayloadSize).",
                UintegerValue(256),
                MakeUintegerAccessor(&PcieLink::m_readCompletion),
                MakeIbUintegerChecker<uint32_t>("PcieLink", "ReadCompletionSize", 64, 4096))
            .AddAttribute("ReadLatency",
                          "From the adapter's memory-read request to its first completion "
                          "(a round trip through the root complex to host memory).",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&PcieLink::m_readLatency),
                          MakeIbTimeChecker("PcieLink", "ReadLatency", Time(0)))
            .AddAttribute("WriteLatency",
                          "From the adapter's posted write to the data being visible to "
                          "the CPU.",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&PcieLink::m_writeLatency),
                          MakeIbTimeChecker("PcieLink", "WriteLatency", Time(0)))
            .AddAttribute("MmioLatency",
                          "From the CPU's store to a device register (a doorbell) to the "
                          "adapter seeing it.",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&PcieLink::m_mmioLatency),
                          MakeIbTimeChecker("PcieLink", "MmioLatency", Time(0)));
    return tid;
}

PcieLink::PcieLink()
    : m_generation(4),
      m_lanes(16),
      m_mps(256),
      m_mrrs(512),
      m_readCompletion(256)
{
    NS_LOG_FUNCTION(this);
}

PcieLink::~PcieLink()
{
    NS_LOG_FUNCTION(this);
}

void
PcieLink::Validate() const
{
    NS_ABORT_MSG_IF(m_lanes != 1 && m_lanes != 2 && m_lanes != 4 && m_lanes != 8 && m_lanes != 12 &&
                        m_lanes != 16 && m_lanes != 32,
                    "PcieLink attribute Lanes=" << m_lanes
                                                << " is not a PCIe link width; use 1, 2, 4, "
                                                   "8, 12, 16 or 32");
    NS_ABORT_MSG_IF(!IsPowerOfTwo(m_mps),
                    "PcieLink attribute MaxPayloadSize=" << m_mps
                                                         << " is not a power of two; use 128, "
                                                            "256, 512, 1024, 2048 or 4096");
    NS_ABORT_MSG_IF(!IsPowerOfTwo(m_mrrs),
                    "PcieLink attribute MaxReadRequestSize="
                        << m_mrrs
                        << " is not a power of two; use 128, 256, 512, 1024, 2048 or "
                           "4096");
    NS_ABORT_MSG_IF(!IsPowerOfTwo(m_readCompletion) || m_readCompletion > m_mps,
                    "PcieLink attribute ReadCompletionSize="
                        << m_readCompletion << " must be a power of two from 64 to "
                        << "MaxPayloadSize (" << m_mps << ")");
}

double
PcieLink::GetDirectionRate() const
{
    Validate();
    static const double kGtPerSecond[] = {0, 2.5e9, 5e9, 8e9, 16e9, 32e9};
    const double code = m_generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
    return kGtPerSecond[m_generation] * code * m_lanes / 8.0;
}

uint64_t
PcieLink::ReadCompletionBytes(uint64_t bytes) const
{
    return bytes + Pieces(bytes, m_readCompletion) * (TLP_FRAMING + CPL_HEADER);
}

uint64_t
PcieLink::ReadRequestBytes(uint64_t bytes) const
{
    return Pieces(bytes, m_mrrs) * (TLP_FRAMING + REQ_HEADER);
}

uint64_t
PcieLink::WriteBytes(uint64_t bytes) const
{
    return bytes + Pieces(bytes, m_mps) * (TLP_FRAMING + REQ_HEADER);
}

double
PcieLink::TransferSteps(uint64_t linkBytes) const
{
    if (m_rate == 0)
    {
        m_rate = GetDirectionRate();
        m_stepsPerByte = static_cast<double>(Seconds(1).GetTimeStep()) / m_rate;
    }
    return static_cast<double>(linkBytes) * m_stepsPerByte;
}

Time
PcieLink::TransferTime(uint64_t linkBytes) const
{
    // Rounded up to the time step: a transfer never takes less than its bytes need.
    return TimeStep(static_cast<uint64_t>(std::ceil(TransferSteps(linkBytes))));
}

double
PcieLink::GetReadCeiling() const
{
    return GetDirectionRate() * m_readCompletion / (m_readCompletion + TLP_FRAMING + CPL_HEADER);
}

double
PcieLink::GetWriteCeiling() const
{
    return GetDirectionRate() * m_mps / (m_mps + TLP_FRAMING + REQ_HEADER);
}

Time
PcieLink::GetReadLatency() const
{
    return m_readLatency;
}

Time
PcieLink::GetWriteLatency() const
{
    return m_writeLatency;
}

Time
PcieLink::GetMmioLatency() const
{
    return m_mmioLatency;
}

std::string
PcieLink::Describe() const
{
    std::ostringstream os;
    os << "PCIe Gen" << m_generation << " x" << m_lanes << ", MPS " << m_mps << ", MRRS " << m_mrrs
       << ", read completions " << m_readCompletion << " B";
    return os.str();
}

} // namespace ns3

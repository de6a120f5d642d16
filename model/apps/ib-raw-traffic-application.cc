/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-raw-traffic-application.h"

#include "ns3/abort.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbRawTrafficApplication");

NS_OBJECT_ENSURE_REGISTERED(IbRawTrafficApplication);

TypeId
IbRawTrafficApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbRawTrafficApplication")
            .SetParent<Application>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbRawTrafficApplication>()
            .AddAttribute("Dlid",
                          "Destination LID.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbRawTrafficApplication::m_dlid),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("Sl",
                          "Service level (the port maps it to a VL).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbRawTrafficApplication::m_sl),
                          MakeIbUintegerChecker<uint8_t>("IbRawTrafficApplication", "Sl", 0, 15))
            .AddAttribute("PayloadSize",
                          "Payload bytes per packet (at most the port's MTU).",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&IbRawTrafficApplication::m_payloadSize),
                          MakeUintegerChecker<uint32_t>()) // checked at start, with the MTU
            .AddAttribute(
                "DestQp",
                "Destination queue pair number in the BTH.",
                UintegerValue(0x100),
                MakeUintegerAccessor(&IbRawTrafficApplication::m_destQp),
                MakeIbUintegerChecker<uint32_t>("IbRawTrafficApplication", "DestQp", 0, 0xFFFFFF))
            .AddAttribute(
                "StartPsn",
                "PSN of the first packet.",
                UintegerValue(0),
                MakeUintegerAccessor(&IbRawTrafficApplication::m_psn),
                MakeIbUintegerChecker<uint32_t>("IbRawTrafficApplication", "StartPsn", 0, 0xFFFFFF))
            .AddAttribute("DataRate",
                          "Offered rate in wire bytes; 0 bps saturates the VL.",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&IbRawTrafficApplication::m_rate),
                          MakeDataRateChecker())
            .AddAttribute("MaxPackets",
                          "Packets to send before stopping (0 = until StopTime).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbRawTrafficApplication::m_maxPackets),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute(
                "QueueTarget",
                "Saturating mode: packets kept in the port's VL queue.",
                UintegerValue(2),
                MakeUintegerAccessor(&IbRawTrafficApplication::m_queueTarget),
                MakeIbUintegerChecker<uint32_t>("IbRawTrafficApplication", "QueueTarget", 1))
            .AddTraceSource("Tx",
                            "A packet was handed to the port, which took it (a packet its "
                            "full transmit queue refused is not reported here).",
                            MakeTraceSourceAccessor(&IbRawTrafficApplication::m_txTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

IbRawTrafficApplication::IbRawTrafficApplication()
    : m_dlid(0),
      m_sl(0),
      m_vl(0),
      m_payloadSize(4096),
      m_destQp(0x100),
      m_psn(0),
      m_maxPackets(0),
      m_queueTarget(2),
      m_sent(0),
      m_running(false)
{
    NS_LOG_FUNCTION(this);
}

IbRawTrafficApplication::~IbRawTrafficApplication()
{
    NS_LOG_FUNCTION(this);
}

void
IbRawTrafficApplication::DoDispose()
{
    if (GetTxStartPort() != nullptr)
    {
        GetTxStartPort()->RemoveTxStartListener(this);
    }
    m_device = nullptr;
    Application::DoDispose();
}

void
IbRawTrafficApplication::SetDevice(Ptr<IbNetDevice> device)
{
    m_device = device;
}

uint64_t
IbRawTrafficApplication::GetSent() const
{
    return m_sent;
}

uint16_t
IbRawTrafficApplication::GetSlid() const
{
    return m_slid;
}

uint16_t
IbRawTrafficApplication::GetDlid() const
{
    return m_dlid;
}

Time
IbRawTrafficApplication::GetEndTime() const
{
    return m_endedAt;
}

bool
IbRawTrafficApplication::Done() const
{
    return m_maxPackets != 0 && m_sent >= m_maxPackets;
}

void
IbRawTrafficApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    if (!m_device)
    {
        for (uint32_t i = 0; i < GetNode()->GetNDevices() && !m_device; ++i)
        {
            m_device = GetNode()->GetDevice(i)->GetObject<IbNetDevice>();
        }
    }
    NS_ABORT_MSG_UNLESS(m_device,
                        "IbRawTrafficApplication on node " << GetNode()->GetId()
                                                           << " has no IbNetDevice to send "
                                                              "from; install a port first.");
    NS_ABORT_MSG_IF(m_payloadSize > 4096,
                    "IbRawTrafficApplication on node "
                        << GetNode()->GetId() << ": PayloadSize=" << m_payloadSize
                        << " exceeds 4096, the largest IBA MTU; an IBA packet carries at most "
                           "4096 payload bytes, so lower PayloadSize (larger messages are the "
                           "RDMA transport's, which segments them).");
    NS_ABORT_MSG_IF(m_payloadSize > m_device->GetIbMtu(),
                    "IbRawTrafficApplication on node "
                        << GetNode()->GetId() << ": PayloadSize=" << m_payloadSize
                        << " exceeds the port's MTU " << m_device->GetIbMtu()
                        << "; lower PayloadSize or raise the IbNetDevice Mtu.");
    NS_ABORT_MSG_IF(m_dlid == 0 || m_dlid >= 0xC000,
                    "IbRawTrafficApplication on node "
                        << GetNode()->GetId() << ": Dlid=" << m_dlid
                        << " is not a unicast LID (1..0xBFFF); set the Dlid attribute to "
                           "the destination port's LID.");
    CheckDlidIsReachable();
    m_vl = m_device->GetVlForSl(m_sl);
    NS_ABORT_MSG_IF(m_vl == IbNetDevice::VL15,
                    "IbRawTrafficApplication on node "
                        << GetNode()->GetId() << ": Sl=" << unsigned(m_sl)
                        << " maps to VL15 in the port's SlToVlTable, which means drop: every "
                           "packet would be lost (or, sent on VL15, skip flow control). Map the "
                           "SL to a data VL in SlToVlTable or choose another Sl.");
    // Read once: on a large fabric the LID's line of the port is not in the cache when a
    // packet is built, and the subnet manager assigns LIDs before applications start.
    m_slid = m_device->GetLid();
    m_running = true;
    m_paced = 0;
    if (!Done())
    {
        m_endedAt = Time::Max();
    }
    NS_ABORT_MSG_IF(m_rate.GetBitRate() == 0 && m_queueTarget > m_device->GetTxQueueMaxPackets(),
                    "IbRawTrafficApplication on node "
                        << GetNode()->GetId() << ": QueueTarget=" << m_queueTarget
                        << " exceeds the port's TxQueueMaxPackets="
                        << m_device->GetTxQueueMaxPackets()
                        << ": every top-up would end with a refused packet (MacTxDrop); lower "
                           "QueueTarget or raise TxQueueMaxPackets.");
    if (m_rate.GetBitRate() == 0)
    {
        m_device->AddTxStartListener(this);
        TopUp();
    }
    else
    {
        SendTimer();
    }
}

void
IbRawTrafficApplication::CheckDlidIsReachable() const
{
    const std::string problem = m_device->FirstHopProblem(m_dlid);
    NS_ABORT_MSG_UNLESS(problem.empty(),
                        "IbRawTrafficApplication on node "
                            << GetNode()->GetId() << ": Dlid=" << m_dlid << " (0x" << std::hex
                            << m_dlid << std::dec << ") " << problem << ".");
}

void
IbRawTrafficApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    m_running = false;
    if (m_endedAt == Time::Max())
    {
        m_endedAt = Simulator::Now();
    }
    m_sendEvent.Cancel();
    if (GetTxStartPort() != nullptr)
    {
        GetTxStartPort()->RemoveTxStartListener(this);
    }
}

bool
IbRawTrafficApplication::SendOne()
{
    Ptr<Packet> p = Create<Packet>(m_payloadSize);
    IbLrhHeader lrh;
    lrh.SetVl(m_vl);
    lrh.SetSl(m_sl);
    lrh.SetDlid(m_dlid);
    lrh.SetSlid(m_slid);
    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::RC_SEND_ONLY);
    bth.SetDestQp(m_destQp);
    bth.SetPsn(m_psn);
    IbPacket::Seal(p, lrh, nullptr, bth, m_payloadSize);
    if (!m_device->SendIbPacket(p))
    {
        return false; // the port's transmit queue is full (its MacTxDrop fired)
    }
    m_txTrace(p);
    m_psn = (m_psn + 1) & 0xFFFFFF;
    ++m_sent;
    if (Done())
    {
        m_endedAt = Simulator::Now();
    }
    return true;
}

bool
IbRawTrafficApplication::TxStarted(uint8_t vl)
{
    return vl == m_vl && TopUp();
}

bool
IbRawTrafficApplication::TopUp()
{
    if (m_toppingUp)
    {
        // Called back from inside SendOne (the packet found the port idle and started at
        // once): that send is not counted yet, nor its PSN taken. The loop below goes on.
        return false;
    }
    m_toppingUp = true;
    bool queued = false;
    while (m_running && !Done() && m_device->GetTxQueueLength(m_vl) < m_queueTarget)
    {
        if (!SendOne())
        {
            break;
        }
        queued = true;
    }
    m_toppingUp = false;
    return queued;
}

void
IbRawTrafficApplication::SendTimer()
{
    if (!m_running || Done())
    {
        return;
    }
    // Packet k leaves k x wire bytes / DataRate after the first, computed whole each time:
    // one packet's time rounded to the time resolution and added up drifted (22.24 ns
    // rounded to 22 at 100 Gb/s and 252-byte payloads: 1.1 % too fast). A DataRate or
    // PayloadSize changed mid-run starts the count again from now.
    const uint32_t wire = IbPacket::WireSize(m_payloadSize, 0, false);
    if (m_paced == 0 || m_pacedRate != m_rate || m_pacedWire != wire)
    {
        m_paceOrigin = Simulator::Now();
        m_paced = 0;
        m_pacedRate = m_rate;
        m_pacedWire = wire;
    }
    SendOne();
    ++m_paced;
    const int64x64_t seconds = int64x64_t(static_cast<int64_t>(m_paced * wire * 8)) /
                               int64x64_t(static_cast<int64_t>(m_rate.GetBitRate()));
    const Time next = m_paceOrigin + Time::From(seconds * Seconds(1).GetTimeStep());
    m_sendEvent = Simulator::Schedule(std::max(next - Simulator::Now(), Time(0)),
                                      &IbRawTrafficApplication::SendTimer,
                                      this);
}

} // namespace ns3

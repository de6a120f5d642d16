/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-hca.h"

#include "ib-completion-queue.h"
#include "ib-memory-region.h"
#include "ib-queue-pair.h"
#include "ib-rdma-port.h"
#include "roce-rdma-port.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/eth-frame.h"
#include "ns3/eth-net-device.h"
#include "ns3/ib-header-view.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/roce-packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbHca");

NS_OBJECT_ENSURE_REGISTERED(IbHca);

namespace
{

/// First address RegisterMemory(length, access) hands out.
constexpr uint64_t kFirstAutoAddr = 0x10000000ULL;
/// Alignment (and guard gap) of automatically placed regions.
constexpr uint64_t kAutoAlign = 4096;

} // namespace

TypeId
IbHca::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbHca")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbHca>()
            .AddAttribute("DataMode",
                          "If true, memory regions own real bytes and the transport carries "
                          "them (packets hold the payload, the responder copies it); if false "
                          "payloads are virtual (zero-filled, no memory). Set it before "
                          "registering memory.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&IbHca::m_dataMode),
                          MakeBooleanChecker())
            .AddAttribute("DoorbellLatency",
                          "From PostSend to the WR's first packet on the wire: the MMIO "
                          "doorbell write and the WQE (and payload) fetch over PCIe.",
                          TimeValue(NanoSeconds(300)),
                          MakeTimeAccessor(&IbHca::m_doorbellLatency),
                          MakeIbTimeChecker("IbHca", "DoorbellLatency", Time(0)))
            .AddAttribute("PcieWriteLatency",
                          "From the arrival of the packet that completes an operation to its "
                          "data and completion being visible in host memory (PCIe posted "
                          "write of the data and the CQE).",
                          TimeValue(NanoSeconds(250)),
                          MakeTimeAccessor(&IbHca::m_pcieWriteLatency),
                          MakeIbTimeChecker("IbHca", "PcieWriteLatency", Time(0)))
            .AddAttribute("PcieLink",
                          "The PCI Express link to the host (a PcieLink): with one, posting, "
                          "payload fetch, received data and completions cross it (see the "
                          "class description); without one (the default) the host interface "
                          "is the idealized DoorbellLatency and PcieWriteLatency alone.",
                          PointerValue(),
                          MakePointerAccessor(&IbHca::m_pcie),
                          MakePointerChecker<PcieLink>())
            .AddAttribute("MaxInlineData",
                          "Most bytes a send work request may carry inline in its WQE "
                          "(ibv_qp_cap max_inline_data); a larger inline request is refused.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbHca::m_maxInline),
                          MakeIbUintegerChecker<uint32_t>("IbHca", "MaxInlineData", 0, 4096))
            .AddAttribute("BlueFlameSize",
                          "With a PcieLink: a WQE of at most this many bytes is written with "
                          "the doorbell (BlueFlame), so the adapter does not fetch it; 0 = "
                          "never.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbHca::m_blueFlame),
                          MakeIbUintegerChecker<uint32_t>("IbHca", "BlueFlameSize", 0, 4096))
            .AddAttribute("AckDelay",
                          "Responder: from the arrival of a request to its ACK or NAK being "
                          "ready to send.",
                          TimeValue(NanoSeconds(100)),
                          MakeTimeAccessor(&IbHca::m_ackDelay),
                          MakeIbTimeChecker("IbHca", "AckDelay", Time(0)))
            .AddAttribute("ResponseDelay",
                          "Responder: from the arrival of a READ or atomic request to its first "
                          "response packet being ready (includes the PCIe read of the data).",
                          TimeValue(NanoSeconds(500)),
                          MakeTimeAccessor(&IbHca::m_responseDelay),
                          MakeIbTimeChecker("IbHca", "ResponseDelay", Time(0)))
            .AddAttribute("AckCoalescing",
                          "The responder ACKs at least every N packets (and always on AckReq); "
                          "the requester sets AckReq on every N-th packet of a message and on "
                          "its last.",
                          UintegerValue(16),
                          MakeUintegerAccessor(&IbHca::m_ackCoalescing),
                          MakeIbUintegerChecker<uint32_t>("IbHca", "AckCoalescing", 1))
            .AddAttribute(
                "MaxOutstandingPackets",
                "Send window of each RC QP: PSNs sent beyond the oldest "
                "unacknowledged one before a SEND/WRITE packet may go (READs are "
                "bounded by the QP's maxRdAtomic instead).",
                UintegerValue(256),
                MakeUintegerAccessor(&IbHca::m_maxOutstanding),
                MakeIbUintegerChecker<uint32_t>("IbHca", "MaxOutstandingPackets", 1, 0x7FFFFF))
            .AddAttribute("PortQueueDepth",
                          "Packets the HCA keeps queued in a port's VL transmit queue; the "
                          "next ones are generated when it drains.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&IbHca::m_portQueueDepth),
                          MakeIbUintegerChecker<uint32_t>("IbHca", "PortQueueDepth", 1, 64))
            // DCQCN on RoCE ports. Defaults: the ConnectX-5 firmware defaults (mlxconfig
            // RPG_*, DCE_TCP_*, RATE_REDUCE_MONITOR_PERIOD, MIN_TIME_BETWEEN_CNPS, CNP_DSCP)
            // and the DCQCN paper's gain; doc/validation-sources.md cites each.
            .AddAttribute("DcqcnEnabled",
                          "RoCE ports: DCQCN rate control (reaction point) on each queue pair "
                          "and CNP generation (notification point) for ECN-marked packets.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&IbHca::m_dcqcnEnabled),
                          MakeBooleanChecker())
            .AddAttribute("DcqcnGain",
                          "DCQCN g: weight of a new CNP (or of its absence) in alpha.",
                          DoubleValue(1.0 / 256),
                          MakeDoubleAccessor(&IbHca::SetDcqcnGain, &IbHca::GetDcqcnGain),
                          MakeIbDoubleChecker("IbHca", "DcqcnGain", 0.0, 1.0))
            .AddAttribute(
                "DcqcnInitialAlpha",
                "DCQCN alpha at the first rate cut (firmware INITIAL_ALPHA_VALUE "
                "1023 of 1024).",
                DoubleValue(1023.0 / 1024),
                MakeDoubleAccessor(&IbHca::SetDcqcnInitialAlpha, &IbHca::GetDcqcnInitialAlpha),
                MakeIbDoubleChecker("IbHca", "DcqcnInitialAlpha", 0.0, 1.0))
            .AddAttribute(
                "DcqcnAlphaPeriod",
                "DCQCN: alpha decays by (1 - g) every period without a CNP "
                "(firmware DCE_TCP_RTT).",
                TimeValue(MicroSeconds(1)),
                MakeTimeAccessor(&IbHca::SetDcqcnAlphaPeriod, &IbHca::GetDcqcnAlphaPeriod),
                MakeIbTimeChecker("IbHca", "DcqcnAlphaPeriod", NanoSeconds(1)))
            .AddAttribute(
                "DcqcnIncreaseTimer",
                "DCQCN rate-increase timer period (firmware RPG_TIME_RESET).",
                TimeValue(MicroSeconds(300)),
                MakeTimeAccessor(&IbHca::SetDcqcnIncreaseTimer, &IbHca::GetDcqcnIncreaseTimer),
                MakeIbTimeChecker("IbHca", "DcqcnIncreaseTimer", NanoSeconds(1)))
            .AddAttribute(
                "DcqcnByteCounter",
                "DCQCN: bytes sent per rate-increase event (firmware RPG_BYTE_RESET).",
                UintegerValue(32767),
                MakeUintegerAccessor(&IbHca::SetDcqcnByteCounter, &IbHca::GetDcqcnByteCounter),
                MakeIbUintegerChecker<uint64_t>("IbHca", "DcqcnByteCounter", 1))
            .AddAttribute(
                "DcqcnThreshold",
                "DCQCN F: rate-increase events of fast recovery before additive "
                "increase (firmware RPG_THRESHOLD).",
                UintegerValue(1),
                MakeUintegerAccessor(&IbHca::SetDcqcnThreshold, &IbHca::GetDcqcnThreshold),
                MakeIbUintegerChecker<uint32_t>("IbHca", "DcqcnThreshold", 0, 1000))
            .AddAttribute("DcqcnAdditiveIncrease",
                          "DCQCN additive-increase step of the target rate (firmware "
                          "RPG_AI_RATE).",
                          DataRateValue(DataRate("5Mb/s")),
                          MakeDataRateAccessor(&IbHca::SetDcqcnAdditiveIncrease,
                                               &IbHca::GetDcqcnAdditiveIncrease),
                          MakeDataRateChecker())
            .AddAttribute(
                "DcqcnHyperIncrease",
                "DCQCN hyper-increase step of the target rate (firmware "
                "RPG_HAI_RATE).",
                DataRateValue(DataRate("50Mb/s")),
                MakeDataRateAccessor(&IbHca::SetDcqcnHyperIncrease, &IbHca::GetDcqcnHyperIncrease),
                MakeDataRateChecker())
            .AddAttribute("DcqcnMinRate",
                          "DCQCN: the lowest rate a queue pair is cut to (firmware "
                          "RPG_MIN_RATE).",
                          DataRateValue(DataRate("1Mb/s")),
                          MakeDataRateAccessor(&IbHca::SetDcqcnMinRate, &IbHca::GetDcqcnMinRate),
                          MakeDataRateChecker())
            .AddAttribute(
                "DcqcnMaxDecrease",
                "DCQCN: the largest fraction of its rate one cut takes (firmware "
                "RPG_MIN_DEC_FAC 50 %).",
                DoubleValue(0.5),
                MakeDoubleAccessor(&IbHca::SetDcqcnMaxDecrease, &IbHca::GetDcqcnMaxDecrease),
                MakeIbDoubleChecker("IbHca", "DcqcnMaxDecrease", 0.0, 1.0))
            .AddAttribute("DcqcnRateReducePeriod",
                          "DCQCN: least time between two rate cuts of a queue pair (firmware "
                          "RATE_REDUCE_MONITOR_PERIOD).",
                          TimeValue(MicroSeconds(4)),
                          MakeTimeAccessor(&IbHca::SetDcqcnRateReducePeriod,
                                           &IbHca::GetDcqcnRateReducePeriod),
                          MakeIbTimeChecker("IbHca", "DcqcnRateReducePeriod", Time(0)))
            .AddAttribute("CnpInterval",
                          "DCQCN notification point: least time between two CNPs for one "
                          "queue pair (firmware MIN_TIME_BETWEEN_CNPS).",
                          TimeValue(MicroSeconds(4)),
                          MakeTimeAccessor(&IbHca::m_cnpInterval),
                          MakeIbTimeChecker("IbHca", "CnpInterval", Time(0)))
            .AddAttribute("CnpDscp",
                          "DSCP of the CNPs a RoCE port sends (firmware CNP_DSCP; the default "
                          "DSCP-to-priority map puts 48 on priority 6).",
                          UintegerValue(48),
                          MakeUintegerAccessor(&IbHca::m_cnpDscp),
                          MakeIbUintegerChecker<uint8_t>("IbHca", "CnpDscp", 0, 63))
            .AddAttribute("RocePriority",
                          "RoCE ports: the 802.1p priority of queue pairs with SL 0 (the "
                          "default); SL 1..7 choose priority 1..7. Packets carry DSCP = 8 x "
                          "priority. 3 is the lossless class of common RoCE deployments and "
                          "EthNetDevice's default PfcEnabled. Set it before adding ports.",
                          UintegerValue(3),
                          MakeUintegerAccessor(&IbHca::m_rocePriority),
                          MakeIbUintegerChecker<uint8_t>("IbHca", "RocePriority", 0, 7))
            .AddTraceSource("CctiChanged",
                            "InfiniBand congestion control: a reaction point's CCTI changed "
                            "(a BECN raised it or the CCTI timer lowered it).",
                            MakeTraceSourceAccessor(&IbHca::m_cctiTrace),
                            "ns3::IbHca::CctiTracedCallback")
            .AddTraceSource("BecnReceived",
                            "InfiniBand congestion control: a BECN arrived for a queue pair "
                            "(in a CNP, or set in another packet's BTH).",
                            MakeTraceSourceAccessor(&IbHca::m_becnTrace),
                            "ns3::IbHca::BecnTracedCallback");
    return tid;
}

IbHca::IbHca()
    : m_dataMode(false),
      m_maxInline(0),
      m_blueFlame(0),
      m_ackCoalescing(16),
      m_maxOutstanding(256),
      m_portQueueDepth(1),
      m_dcqcnEnabled(true),
      m_cnpInterval(MicroSeconds(4)),
      m_cnpDscp(48),
      m_rocePriority(3),
      m_cnpsSent(0),
      m_cnpsReceived(0),
      m_ports(1),
      m_mrs(1),
      m_keyTag(0),
      m_nextAddr(kFirstAutoAddr),
      m_txPackets(0),
      m_rxPackets(0),
      m_unknownDrops(0)
{
    NS_LOG_FUNCTION(this);
}

IbHca::~IbHca()
{
    NS_LOG_FUNCTION(this);
}

void
IbHca::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& ps : m_ports)
    {
        if (ps.dev)
        {
            ps.dev->SetIbReceiveCallback(
                MakeNullCallback<void, Ptr<IbNetDevice>, Ptr<Packet>, uint8_t, uint32_t>());
            ps.dev->SetTxReadyCallback(MakeNullCallback<void, Ptr<IbNetDevice>, uint8_t>());
        }
        if (ps.eth)
        {
            ps.eth->SetOwner(nullptr, 0);
        }
    }
    m_ports.clear();
    for (auto& qp : m_qps)
    {
        if (qp)
        {
            qp->Dispose();
        }
    }
    m_qps.clear();
    for (auto& mr : m_mrs)
    {
        if (mr)
        {
            mr->Dispose();
        }
    }
    m_mrs.clear();
    m_freeMrs.clear();
    m_pcie = nullptr;
    Object::DoDispose();
}

uint8_t
IbHca::AddPort(Ptr<IbNetDevice> port)
{
    NS_LOG_FUNCTION(this << port);
    NS_ABORT_MSG_IF(m_ports.size() > 254, "IbHca: an HCA has at most 254 ports");
    NS_ABORT_MSG_IF(port->GetRxDrainRate().GetBitRate() != 0,
                    "IbHca on node "
                        << port->GetNode()->GetId() << ": its port " << port->GetIfIndex()
                        << " has RxDrainRate=" << port->GetRxDrainRate()
                        << ", but an HCA takes every packet off the port's buffers at once "
                           "(the queue pairs model the host side), so the rate would be "
                           "ignored; leave the port's RxDrainRate at 0 (slow consumers are "
                           "modelled by an RNR NAK or the application's pace).");
    const uint8_t n = static_cast<uint8_t>(m_ports.size());
    PortState ps;
    ps.dev = port;
    ps.owned = std::make_shared<IbRdmaPort>(port);
    ps.link = ps.owned.get();
    m_ports.push_back(std::move(ps));
    port->SetIbReceiveCallback(MakeCallback(&IbHca::Receive, this).Bind(n));
    port->SetTxReadyCallback(MakeCallback(&IbHca::TxReady, this).Bind(n));
    port->SetConsumer(this, n); // the same calls, without the Callback indirection
    return n;
}

void
IbHca::SetDcqcnGain(double v)
{
    m_dcqcn.g = v;
}

double
IbHca::GetDcqcnGain() const
{
    return m_dcqcn.g;
}

void
IbHca::SetDcqcnInitialAlpha(double v)
{
    m_dcqcn.initialAlpha = v;
}

double
IbHca::GetDcqcnInitialAlpha() const
{
    return m_dcqcn.initialAlpha;
}

void
IbHca::SetDcqcnAlphaPeriod(Time v)
{
    m_dcqcn.alphaPeriod = v;
}

Time
IbHca::GetDcqcnAlphaPeriod() const
{
    return m_dcqcn.alphaPeriod;
}

void
IbHca::SetDcqcnIncreaseTimer(Time v)
{
    m_dcqcn.increaseTimer = v;
}

Time
IbHca::GetDcqcnIncreaseTimer() const
{
    return m_dcqcn.increaseTimer;
}

void
IbHca::SetDcqcnByteCounter(uint64_t v)
{
    m_dcqcn.byteCounter = v;
}

uint64_t
IbHca::GetDcqcnByteCounter() const
{
    return m_dcqcn.byteCounter;
}

void
IbHca::SetDcqcnThreshold(uint32_t v)
{
    m_dcqcn.threshold = v;
}

uint32_t
IbHca::GetDcqcnThreshold() const
{
    return m_dcqcn.threshold;
}

void
IbHca::SetDcqcnAdditiveIncrease(DataRate v)
{
    m_dcqcn.additiveBps = static_cast<double>(v.GetBitRate());
}

DataRate
IbHca::GetDcqcnAdditiveIncrease() const
{
    return DataRate(static_cast<uint64_t>(m_dcqcn.additiveBps));
}

void
IbHca::SetDcqcnHyperIncrease(DataRate v)
{
    m_dcqcn.hyperBps = static_cast<double>(v.GetBitRate());
}

DataRate
IbHca::GetDcqcnHyperIncrease() const
{
    return DataRate(static_cast<uint64_t>(m_dcqcn.hyperBps));
}

void
IbHca::SetDcqcnMinRate(DataRate v)
{
    m_dcqcn.minRateBps = static_cast<double>(v.GetBitRate());
}

DataRate
IbHca::GetDcqcnMinRate() const
{
    return DataRate(static_cast<uint64_t>(m_dcqcn.minRateBps));
}

void
IbHca::SetDcqcnMaxDecrease(double v)
{
    m_dcqcn.maxDecrease = v;
}

double
IbHca::GetDcqcnMaxDecrease() const
{
    return m_dcqcn.maxDecrease;
}

void
IbHca::SetDcqcnRateReducePeriod(Time v)
{
    m_dcqcn.rateReducePeriod = v;
}

Time
IbHca::GetDcqcnRateReducePeriod() const
{
    return m_dcqcn.rateReducePeriod;
}

uint64_t
IbHca::GetCnpsSent() const
{
    return m_cnpsSent;
}

uint64_t
IbHca::GetCnpsReceived() const
{
    return m_cnpsReceived;
}

uint8_t
IbHca::AddRocePort(Ptr<EthNetDevice> port, Ipv4Address address)
{
    NS_LOG_FUNCTION(this << port << address);
    NS_ABORT_MSG_IF(m_ports.size() > 254, "IbHca: an HCA has at most 254 ports");
    NS_ABORT_MSG_IF(address == Ipv4Address() || address.IsBroadcast() || address.IsMulticast(),
                    "IbHca::AddRocePort on node "
                        << port->GetNode()->GetId() << ": " << address
                        << " is not a unicast IPv4 address; a RoCE port needs one (its GID)");
    const uint8_t n = static_cast<uint8_t>(m_ports.size());
    PortState ps;
    ps.owned = std::make_shared<RoceRdmaPort>(port, address, m_rocePriority);
    ps.link = ps.owned.get();
    ps.eth = port;
    m_ports.push_back(std::move(ps));
    port->SetOwner(this, n);
    return n;
}

Ptr<EthNetDevice>
IbHca::GetEthPort(uint8_t n) const
{
    NS_ABORT_MSG_UNLESS(n >= 1 && n < m_ports.size(),
                        "IbHca: no port " << unsigned(n) << " (the HCA has " << m_ports.size() - 1
                                          << ")");
    NS_ABORT_MSG_UNLESS(m_ports[n].eth,
                        "IbHca: port " << unsigned(n)
                                       << " is an InfiniBand port, not an Ethernet one; use "
                                          "GetPort(n)");
    return m_ports[n].eth;
}

Ipv4Address
IbHca::GetIpAddress(uint8_t n) const
{
    GetEthPort(n);
    return Ipv4Address(m_ports[n].link->GetLocalAddress());
}

void
IbHca::PortReceive(uint8_t port, EthNetDevice* dev, Ptr<Packet> frame, uint8_t prio)
{
    NS_LOG_FUNCTION(this << unsigned(port) << frame);
    ++m_rxPackets;
    // Ethernet, IPv4, UDP, BTH and the largest header that follows it in a packet that may
    // need a CNP (DETH of a UD packet).
    constexpr uint32_t kHead = RocePacket::BTH_OFFSET + IbPacket::BTH_SIZE + 8;
    uint8_t h[kHead];
    const uint32_t size = frame->GetSize();
    if (size < RocePacket::BTH_OFFSET + IbPacket::BTH_SIZE + RocePacket::TRAILER_SIZE)
    {
        ++m_unknownDrops;
        return;
    }
    const uint32_t copied = std::min(size, kHead);
    frame->CopyData(h, copied);
    if (!RocePacket::IsRoce(h, copied))
    {
        NS_LOG_LOGIC("not a RoCEv2 packet: dropped");
        ++m_unknownDrops;
        return;
    }
    IbHeaderView view = IbHeaderView::AtBth(h, copied, RocePacket::BTH_OFFSET);
    const uint32_t qpn = view.GetDestQp();
    IbQueuePair* qp = FindQp(qpn);
    if (view.GetOpcode() == RocePacket::CNP_OPCODE)
    {
        ++m_cnpsReceived;
        if (qp != nullptr)
        {
            qp->ReceiveCnp();
        }
        return;
    }
    RdmaRxInfo info;
    info.bthOffset = RocePacket::BTH_OFFSET;
    info.trailer = RocePacket::TRAILER_SIZE;
    info.source = IbHeaderView::ReadBe32(h + EthFrame::HEADER_SIZE + 12);
    info.sl = prio;
    info.congested = EthFrame::PeekEcn(h) == 3;
    if (info.congested && qp != nullptr && m_dcqcnEnabled)
    {
        NotifyCongestion(port, qp, info.source, view);
    }
    DeliverToQp(qpn, std::move(frame), info);
}

void
IbHca::NotifyCongestion(uint8_t port, IbQueuePair* qp, uint32_t source, IbHeaderView& view)
{
    const Time now = Simulator::Now();
    if (qp->m_cnpSentOnce && now - qp->m_lastCnpSent < m_cnpInterval)
    {
        return;
    }
    uint32_t destQp = 0;
    if (!CnpDestQp(qp, view, destQp))
    {
        return;
    }
    qp->m_cnpSentOnce = true;
    qp->m_lastCnpSent = now;
    ++qp->m_counters.cnpsSent;
    ++m_cnpsSent;
    auto* roce = static_cast<RoceRdmaPort*>(m_ports[port].link);
    Ptr<Packet> cnp = roce->MakeCnp(source, destQp, qp->m_entropy, m_cnpDscp);
    roce->Send(cnp, static_cast<uint8_t>(m_cnpDscp >> 3));
}

IbQueuePair*
IbHca::FindQp(uint32_t qpn) const
{
    return qpn >= FIRST_QPN && qpn - FIRST_QPN < m_qps.size() ? PeekPointer(m_qps[qpn - FIRST_QPN])
                                                              : nullptr;
}

bool
IbHca::CnpDestQp(IbQueuePair* qp, IbHeaderView& view, uint32_t& destQp)
{
    if (qp->GetType() != IbQpType::UD)
    {
        destQp = qp->m_attr.destQpNum;
        return true;
    }
    // A datagram's sender is the QP its DETH names.
    if (!view.DecodeExtensionHeaders() || !(view.GetExtensionHeaders() & IbBthHeader::EXT_DETH))
    {
        return false;
    }
    destQp = view.GetSrcQp();
    return true;
}

void
IbHca::AnswerFecn(uint8_t port, IbQueuePair* qp, const Packet& packet, uint16_t slid, uint8_t sl)
{
    // LRH, BTH and a UD packet's DETH: the CNP's destination.
    constexpr uint32_t kHead = IbPacket::LRH_SIZE + IbPacket::BTH_SIZE + 8;
    uint8_t h[kHead];
    const uint32_t copied = packet.CopyData(h, std::min(packet.GetSize(), kHead));
    IbHeaderView view(h, copied);
    uint32_t destQp = 0;
    if (!CnpDestQp(qp, view, destQp))
    {
        return;
    }
    ++qp->m_counters.cnpsSent;
    ++m_cnpsSent;
    auto* ib = static_cast<IbRdmaPort*>(m_ports[port].link);
    Ptr<Packet> cnp = ib->MakeCnp(slid, destQp, sl);
    ib->Send(cnp, ib->GetClassForSl(sl));
}

IbCcRateControl*
IbHca::SlRateControl(uint8_t port, uint8_t sl)
{
    NS_ABORT_MSG_UNLESS(port >= 1 && port < m_ports.size() && sl < 16,
                        "IbHca::SlRateControl: no port " << unsigned(port) << " or SL "
                                                         << unsigned(sl));
    std::unique_ptr<IbCcRateControl>& cc = m_ports[port].slCc[sl];
    const IbCaCongestionSetting* setting = m_ports[port].link->GetCongestionSetting();
    if (!cc)
    {
        cc = std::make_unique<IbCcRateControl>();
        cc->SetCctiCallback(MakeCallback(&IbHca::NotifyCctiChange, this).Bind(0u, sl));
    }
    if (setting != nullptr && !cc->IsActive())
    {
        cc->Init(setting, static_cast<double>(m_ports[port].link->GetDataRate().GetBitRate()));
    }
    return cc.get();
}

void
IbHca::NotifyCctiChange(uint32_t qpn, uint8_t sl, uint16_t oldCcti, uint16_t newCcti)
{
    m_cctiTrace(qpn, sl, oldCcti, newCcti);
}

uint64_t
IbHca::GetFecnsReceived() const
{
    return m_fecnsReceived;
}

uint64_t
IbHca::GetBecnsReceived() const
{
    return m_becnsReceived;
}

void
IbHca::PortTxReady(uint8_t port, EthNetDevice* dev, uint8_t prio)
{
    Pump(port, prio);
}

void
IbHca::PortTxStarted(uint8_t port, EthNetDevice* dev, uint8_t prio, uint32_t bytes, uint32_t cookie)
{
    if (m_ports[port].ready[prio].Empty())
    {
        return;
    }
    Pump(port, prio);
}

uint8_t
IbHca::GetNPorts() const
{
    return static_cast<uint8_t>(m_ports.size() - 1);
}

Ptr<IbNetDevice>
IbHca::GetPort(uint8_t n) const
{
    NS_ABORT_MSG_UNLESS(n >= 1 && n < m_ports.size(),
                        "IbHca: no port " << unsigned(n) << " (the HCA has " << m_ports.size() - 1
                                          << ")");
    NS_ABORT_MSG_UNLESS(m_ports[n].dev,
                        "IbHca: port " << unsigned(n)
                                       << " is an Ethernet (RoCE) port, not an InfiniBand one; "
                                          "use GetRdmaPort(n)->GetDevice() or GetEthPort(n)");
    return m_ports[n].dev;
}

RdmaPort*
IbHca::GetRdmaPort(uint8_t n) const
{
    NS_ABORT_MSG_UNLESS(n >= 1 && n < m_ports.size(),
                        "IbHca: no port " << unsigned(n) << " (the HCA has " << m_ports.size() - 1
                                          << ")");
    return m_ports[n].link;
}

uint16_t
IbHca::GetLid(uint8_t port) const
{
    RdmaPort* p = GetRdmaPort(port);
    return p->IsRoce() ? 0 : static_cast<uint16_t>(p->GetLocalAddress());
}

Ptr<IbCompletionQueue>
IbHca::CreateCq(uint32_t depth)
{
    Ptr<IbCompletionQueue> cq = CreateObject<IbCompletionQueue>();
    cq->SetAttribute("Depth", UintegerValue(depth));
    return cq;
}

Ptr<IbQueuePair>
IbHca::CreateQp(IbQpType type,
                Ptr<IbCompletionQueue> sendCq,
                Ptr<IbCompletionQueue> recvCq,
                uint32_t maxSendWr,
                uint32_t maxRecvWr)
{
    NS_ABORT_MSG_IF(!sendCq || !recvCq, "IbHca::CreateQp: both completion queues are needed");
    NS_ABORT_MSG_IF(maxSendWr == 0 || maxRecvWr == 0,
                    "IbHca::CreateQp: maxSendWr and maxRecvWr must be at least 1");
    const uint32_t qpn = FIRST_QPN + static_cast<uint32_t>(m_qps.size());
    NS_ABORT_MSG_IF(qpn > 0xFFFFFF, "IbHca::CreateQp: QP numbers exhausted");
    Ptr<IbQueuePair> qp = CreateObject<IbQueuePair>();
    qp->Setup(this, qpn, type, sendCq, recvCq, maxSendWr, maxRecvWr);
    m_qps.push_back(qp);
    NS_LOG_LOGIC("QP " << qpn << " created");
    return qp;
}

void
IbHca::Release(Ptr<IbQueuePair> qp, std::initializer_list<Ptr<IbMemoryRegion>> regions)
{
    if (qp && GetQp(qp->GetQpNum()) == qp)
    {
        DestroyQp(qp);
    }
    for (const Ptr<IbMemoryRegion>& mr : regions)
    {
        if (mr && LookupMr(mr->GetLkey()) == PeekPointer(mr))
        {
            DeregisterMemory(mr);
        }
    }
}

uint32_t
IbHca::GetNextQpn() const
{
    return FIRST_QPN + static_cast<uint32_t>(m_qps.size());
}

void
IbHca::DestroyQp(Ptr<IbQueuePair> qp)
{
    NS_ABORT_MSG_UNLESS(qp && GetQp(qp->GetQpNum()) == qp,
                        "IbHca::DestroyQp: the queue pair is not a live QP of this HCA");
    NS_LOG_LOGIC("QP " << qp->GetQpNum() << " destroyed");
    Deactivate(PeekPointer(qp));
    m_qps[qp->GetQpNum() - FIRST_QPN] = nullptr;
    qp->Dispose();
}

Ptr<IbQueuePair>
IbHca::GetQp(uint32_t qpn) const
{
    return Ptr<IbQueuePair>(FindQp(qpn));
}

Ptr<IbMemoryRegion>
IbHca::RegisterMemory(uint64_t addr, uint64_t length, uint32_t access)
{
    NS_LOG_FUNCTION(this << addr << length << access);
    NS_ABORT_MSG_IF((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) != 0 &&
                        (access & IB_ACCESS_LOCAL_WRITE) == 0,
                    "IbHca::RegisterMemory: access 0x"
                        << std::hex << access << std::dec
                        << " gives remote write or atomic rights without local write; verbs "
                           "refuses this (ibv_reg_mr: EINVAL): add IB_ACCESS_LOCAL_WRITE");
    // A deregistered region's index is used again, so that a program that registers per
    // operation does not run out of the 2^24 indices, with its previous key's 8-bit tag
    // plus one: a stale key names nothing until that index has been reused 256 times.
    uint64_t index = m_mrs.size();
    uint32_t tag = m_keyTag++ & 0xFF;
    if (!m_freeMrs.empty())
    {
        index = m_freeMrs.back() >> 8;
        tag = (m_freeMrs.back() + 1) & 0xFF;
        m_freeMrs.pop_back();
    }
    NS_ABORT_MSG_IF(index > 0xFFFFFF,
                    "IbHca::RegisterMemory: keys exhausted: 2^24 - 1 regions are registered at "
                    "once on this HCA; deregister regions no longer used");
    const uint32_t key = static_cast<uint32_t>((index << 8) | tag);
    Ptr<IbMemoryRegion> mr = CreateObject<IbMemoryRegion>();
    mr->Setup(addr, length, key, access, m_dataMode);
    if (index == m_mrs.size())
    {
        m_mrs.push_back(mr);
    }
    else
    {
        m_mrs[index] = mr;
    }
    return mr;
}

Ptr<IbMemoryRegion>
IbHca::RegisterMemory(uint64_t length, uint32_t access)
{
    const uint64_t addr = m_nextAddr;
    m_nextAddr += (length + kAutoAlign - 1) / kAutoAlign * kAutoAlign + kAutoAlign;
    return RegisterMemory(addr, length, access);
}

void
IbHca::DeregisterMemory(Ptr<IbMemoryRegion> mr)
{
    IbMemoryRegion* found = LookupMr(mr->GetLkey());
    NS_ABORT_MSG_IF(found != PeekPointer(mr),
                    "IbHca::DeregisterMemory: the region is not registered on this HCA");
    // Outstanding work keeps plain pointers to its regions: deregistering one under it
    // would leave them dangling. (Verbs would complete such work in error; a script that
    // does this almost always means to wait for the completion first.)
    for (const Ptr<IbQueuePair>& qp : m_qps)
    {
        const char* use = qp ? qp->GetUseOf(PeekPointer(mr)) : nullptr;
        NS_ABORT_MSG_IF(use != nullptr,
                        "IbHca::DeregisterMemory: the region with lkey 0x"
                            << std::hex << mr->GetLkey() << std::dec << " on node "
                            << (GetObject<Node>() ? GetObject<Node>()->GetId() : 0)
                            << " is still used by " << use << " of QP " << qp->GetQpNum()
                            << "; deregister it after that work has completed (poll its CQ)");
    }
    m_mrs[mr->GetLkey() >> 8] = nullptr;
    m_freeMrs.push_back(mr->GetLkey());
}

Ptr<IbMemoryRegion>
IbHca::GetMemoryRegion(uint32_t key) const
{
    return LookupMr(key);
}

IbMemoryRegion*
IbHca::LookupMr(uint32_t key) const
{
    const uint32_t index = key >> 8;
    if (index == 0 || index >= m_mrs.size())
    {
        return nullptr;
    }
    IbMemoryRegion* mr = PeekPointer(m_mrs[index]);
    return (mr != nullptr && mr->GetLkey() == key) ? mr : nullptr;
}

bool
IbHca::IsDataMode() const
{
    return m_dataMode;
}

Time
IbHca::GetDoorbellLatency() const
{
    return m_doorbellLatency;
}

Time
IbHca::GetPcieWriteLatency() const
{
    return m_pcieWriteLatency;
}

Time
IbHca::GetAckDelay() const
{
    return m_ackDelay;
}

Time
IbHca::GetResponseDelay() const
{
    return m_responseDelay;
}

uint32_t
IbHca::GetAckCoalescing() const
{
    return m_ackCoalescing;
}

uint32_t
IbHca::GetMaxOutstandingPackets() const
{
    return m_maxOutstanding;
}

uint64_t
IbHca::GetPacketsSent() const
{
    return m_txPackets;
}

Ptr<PcieLink>
IbHca::GetPcieLink() const
{
    return m_pcie;
}

uint32_t
IbHca::GetMaxInlineData() const
{
    return m_maxInline;
}

uint64_t
IbHca::GetPacketsReceived() const
{
    return m_rxPackets;
}

uint64_t
IbHca::GetUnknownDrops() const
{
    return m_unknownDrops;
}

uint8_t*
IbHca::Scratch(uint32_t bytes)
{
    if (m_scratch.size() < bytes)
    {
        m_scratch.resize(bytes);
    }
    return m_scratch.data();
}

void
IbHca::DeliverCompletion(const Ptr<IbCompletionQueue>& cq, const IbWorkCompletion& wc)
{
    // Always through the scheduler, so that completion callbacks never run inside the
    // transport (and completions keep their order on a CQ).
    Simulator::Schedule(VisibleDelay(true), &IbCompletionQueue::Deliver, cq, wc);
}

uint32_t
IbHca::WqeBytes(const IbSendWr& wr, bool ud)
{
    const bool rdma = wr.opcode == IbWrOpcode::RDMA_WRITE ||
                      wr.opcode == IbWrOpcode::RDMA_WRITE_WITH_IMM ||
                      wr.opcode == IbWrOpcode::RDMA_READ;
    const bool atomic = wr.opcode == IbWrOpcode::ATOMIC_CMP_AND_SWP ||
                        wr.opcode == IbWrOpcode::ATOMIC_FETCH_AND_ADD;
    uint32_t bytes = 16;
    bytes += rdma || atomic ? 16 : 0;
    bytes += atomic ? 16 : 0;
    bytes += ud ? 48 : 0;
    bytes += wr.inlineData ? (4 + wr.sge.length + 15) / 16 * 16 : 16;
    return (bytes + 63) / 64 * 64;
}

Time
IbHca::PostDelay(const IbSendWr& wr, bool ud) const
{
    if (m_pcie == nullptr)
    {
        return m_doorbellLatency;
    }
    const uint32_t wqe = WqeBytes(wr, ud);
    const bool pushed = wqe <= m_blueFlame;
    // The doorbell: 8 bytes, or the WQE itself (BlueFlame), in one posted write.
    Time d = m_doorbellLatency + m_pcie->GetMmioLatency() +
             m_pcie->TransferTime(m_pcie->WriteBytes(pushed ? wqe : 8));
    if (!pushed)
    {
        d += m_pcie->GetReadLatency() + m_pcie->TransferTime(m_pcie->ReadCompletionBytes(wqe));
    }
    const bool data = wr.opcode == IbWrOpcode::SEND || wr.opcode == IbWrOpcode::SEND_WITH_IMM ||
                      wr.opcode == IbWrOpcode::RDMA_WRITE ||
                      wr.opcode == IbWrOpcode::RDMA_WRITE_WITH_IMM;
    if (data && wr.sge.length > 0 && !wr.inlineData)
    {
        d += m_pcie->GetReadLatency();
    }
    return d;
}

Time
IbHca::MemoryReadLatency() const
{
    return m_pcie == nullptr ? Time(0) : m_pcie->GetReadLatency();
}

double
IbHca::DmaReadStart(Time from, double steps) const
{
    // The payload streams once its read was issued and the direction is free; the adapter
    // fetches about one packet ahead (its transfer may have started up to two packet times
    // before it leaves, and two time steps for the turn DmaReadGate gives), so a direction
    // idle for long is no credit later. (With less slack a queue pair whose gate is
    // recomputed when it wakes would find it one step later each time, for ever.)
    const double now = static_cast<double>(Simulator::Now().GetTimeStep());
    return std::max({static_cast<double>(from.GetTimeStep()), m_downFree, now - 2 * steps - 2});
}

Time
IbHca::DmaReadGate(Time from, uint32_t bytes, const IbQueuePair* qp) const
{
    if (m_pcie == nullptr || bytes == 0)
    {
        return from;
    }
    const double steps = m_pcie->TransferSteps(m_pcie->ReadCompletionBytes(bytes));
    const double end = DmaReadStart(from, steps) + steps;
    // The queue pair that took the direction last waits one time step more, so that the
    // others waiting for it go first when they tie (round robin, as the port serves them).
    // The transfers' times do not move: only which packet is pulled first.
    const uint64_t turn = qp == m_lastDmaQp ? 1 : 0;
    return TimeStep(static_cast<uint64_t>(std::ceil(end)) + turn);
}

void
IbHca::DmaRead(Time from, uint32_t bytes, const IbQueuePair* qp)
{
    if (m_pcie == nullptr || bytes == 0)
    {
        return;
    }
    m_lastDmaQp = qp;
    const double steps = m_pcie->TransferSteps(m_pcie->ReadCompletionBytes(bytes));
    m_downFree = DmaReadStart(from, steps) + steps;
    const double now = static_cast<double>(Simulator::Now().GetTimeStep());
    m_upFree = std::max(now, m_upFree) + m_pcie->TransferSteps(m_pcie->ReadRequestBytes(bytes));
}

void
IbHca::DmaWrite(uint32_t bytes)
{
    if (m_pcie == nullptr || bytes == 0)
    {
        return;
    }
    const double now = static_cast<double>(Simulator::Now().GetTimeStep());
    m_upFree = std::max(now, m_upFree) + m_pcie->TransferSteps(m_pcie->WriteBytes(bytes));
}

Time
IbHca::VisibleDelay(bool cqe)
{
    if (m_pcie == nullptr)
    {
        return m_pcieWriteLatency;
    }
    const Time now = Simulator::Now();
    double done = std::max(static_cast<double>(now.GetTimeStep()), m_upFree);
    if (cqe)
    {
        done += m_pcie->TransferSteps(m_pcie->WriteBytes(CQE_BYTES));
        m_upFree = done;
    }
    return TimeStep(static_cast<uint64_t>(std::ceil(done))) - now + m_pcie->GetWriteLatency() +
           m_pcieWriteLatency;
}

void
IbHca::Receive(uint8_t port, Ptr<IbNetDevice> dev, Ptr<Packet> packet, uint8_t vl, uint32_t blocks)
{
    PortReceive(port, PeekPointer(dev), std::move(packet), vl, blocks);
}

void
IbHca::PortReceive(uint8_t port, IbNetDevice* dev, Ptr<Packet> packet, uint8_t vl, uint32_t blocks)
{
    NS_LOG_FUNCTION(this << unsigned(port) << packet);
    if (m_pcie == nullptr)
    {
        // The HCA takes every packet off the port at once: its buffer credits return now.
        dev->ReleaseRxBuffer(vl, blocks);
        ReceiveIbPacket(port, std::move(packet));
        return;
    }
    // The packet holds its receive buffer until it has been written to host memory, in
    // order behind the writes before it.
    ReceiveIbPacket(port, std::move(packet));
    const Time now = Simulator::Now();
    const Time done = TimeStep(static_cast<uint64_t>(std::ceil(m_upFree)));
    if (done > now)
    {
        Simulator::Schedule(done - now,
                            &IbNetDevice::ReleaseRxBuffer,
                            Ptr<IbNetDevice>(dev),
                            vl,
                            blocks);
    }
    else
    {
        dev->ReleaseRxBuffer(vl, blocks);
    }
}

void
IbHca::ReceiveIbPacket(uint8_t port, Ptr<Packet> packet)
{
    ++m_rxPackets;
    uint8_t h[IbPacket::LRH_SIZE + IbPacket::BTH_SIZE];
    if (packet->GetSize() < sizeof(h) + IbPacket::CRC_SIZE)
    {
        ++m_unknownDrops;
        return;
    }
    packet->CopyData(h, sizeof(h));
    const IbHeaderView view(h, sizeof(h));
    if (view.GetLnh() != IbLrhHeader::LNH_IBA_LOCAL)
    {
        NS_LOG_LOGIC("not a local IBA transport packet (raw or global): dropped");
        ++m_unknownDrops;
        return;
    }
    RdmaRxInfo info;
    info.bthOffset = IbPacket::LRH_SIZE;
    info.trailer = IbPacket::CRC_SIZE;
    info.source = view.GetSlid();
    info.sl = view.GetSl();
    info.congested = view.GetFecn();
    if (info.congested || view.GetBecn() || view.GetOpcode() == IbOpcode::CNP)
    {
        // Congestion control (IBA annex A10): rare, off the common path.
        const uint32_t qpn = view.GetDestQp();
        IbQueuePair* qp = FindQp(qpn);
        if (view.GetBecn())
        {
            ++m_becnsReceived;
            m_becnTrace(qpn, view.GetSlid());
            if (qp != nullptr)
            {
                qp->ReceiveBecn();
            }
        }
        if (view.GetOpcode() == IbOpcode::CNP)
        {
            ++m_cnpsReceived;
            if (qp != nullptr)
            {
                ++qp->m_counters.cnpsReceived;
            }
            return;
        }
        if (info.congested)
        {
            ++m_fecnsReceived;
            if (qp != nullptr && m_ports[port].link->GetCongestionSetting() != nullptr)
            {
                AnswerFecn(port, qp, *packet, view.GetSlid(), view.GetSl());
            }
        }
    }
    DeliverToQp(view.GetDestQp(), std::move(packet), info);
}

void
IbHca::DeliverToQp(uint32_t qpn, Ptr<Packet> packet, const RdmaRxInfo& info)
{
    IbQueuePair* qp = FindQp(qpn);
    if (qp == nullptr)
    {
        NS_LOG_LOGIC("no QP " << qpn << ": dropped");
        ++m_unknownDrops;
        return;
    }
    qp->Receive(packet, info);
}

void
IbHca::TxReady(uint8_t port, Ptr<IbNetDevice> dev, uint8_t vl)
{
    Pump(port, vl);
}

void
IbHca::PortTxReady(uint8_t port, IbNetDevice* dev, uint8_t vl)
{
    Pump(port, vl);
}

void
IbHca::Activate(IbQueuePair* qp)
{
    if (qp->m_inReadyList)
    {
        return;
    }
    const uint8_t port = qp->GetPortNum();
    if (port == 0 || port >= m_ports.size())
    {
        return;
    }
    const uint8_t vl = qp->CurrentVl() & 0xF;
    qp->m_inReadyList = true;
    m_ports[port].ready[vl].Push(qp);
    Pump(port, vl);
}

void
IbHca::Deactivate(IbQueuePair* qp)
{
    if (!qp->m_inReadyList)
    {
        return;
    }
    qp->m_inReadyList = false;
    for (PortState& ps : m_ports)
    {
        for (IbFifo<IbQueuePair*>& list : ps.ready)
        {
            IbFifo<IbQueuePair*> kept;
            while (!list.Empty())
            {
                IbQueuePair* q = list.Pop();
                if (q != qp)
                {
                    kept.Push(q);
                }
            }
            list = std::move(kept);
        }
    }
}

void
IbHca::Pump(uint8_t port, uint8_t vl)
{
    PortState& ps = m_ports[port];
    ps.pending |= static_cast<uint16_t>(1u << vl);
    if (ps.pumping)
    {
        return; // SendIbPacket called us back: the loop below serves it
    }
    ps.pumping = true;
    RdmaPort* dev = ps.link;
    while (ps.pending != 0)
    {
        uint8_t v = 0;
        while (!(ps.pending & (1u << v)))
        {
            ++v;
        }
        ps.pending &= static_cast<uint16_t>(~(1u << v));
        IbFifo<IbQueuePair*>& list = ps.ready[v];
        while (!list.Empty() && dev->GetTxQueueLength(v) < m_portQueueDepth)
        {
            IbQueuePair* qp = list.Pop();
            qp->m_inReadyList = false;
            Ptr<Packet> p = qp->PullPacket();
            if (p)
            {
                ++m_txPackets;
                dev->Send(p, v);
            }
            // Round robin: a QP with more to send goes to the back of the list.
            const Time next = qp->NextSendTime();
            if (p && next <= Simulator::Now())
            {
                const uint8_t nv = qp->CurrentVl() & 0xF;
                qp->m_inReadyList = true;
                ps.ready[nv].Push(qp);
                if (nv != v)
                {
                    ps.pending |= static_cast<uint16_t>(1u << nv);
                }
            }
            else if (next != Time::Max() && next > Simulator::Now())
            {
                qp->WakeAt(next);
            }
        }
    }
    ps.pumping = false;
}

} // namespace ns3

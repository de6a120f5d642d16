/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-net-device.h"

#include "ib-channel.h"

#include "ns3/data-rate.h"
#include "ns3/error-model.h"
#include "ns3/ib-crc-trailer.h"
#include "ns3/ib-flow-control-header.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-prefetch.h"
#include "ns3/ib-range-checker.h"
#include "ns3/ib-rwh-header.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbNetDevice");

namespace
{
/**
 * Fire a per-packet trace source only if something is connected to it: an unconnected
 * TracedCallback still costs a call and a reference count round trip on the packet, and
 * asking it (IsEmpty) reads its own cache line; the port's m_hot.watched bit is in the line
 * every packet reads anyway.
 * @param watched whether the trace source has something connected (its m_hot.watched bit)
 * @param trace the trace source
 * @param args its arguments
 */
template <typename... Ts, typename... Args>
inline void
FireIfConnected(bool watched, const TracedCallback<Ts...>& trace, Args&&... args)
{
    if (watched)
    {
        trace(std::forward<Args>(args)...);
    }
}
} // namespace

NS_OBJECT_ENSURE_REGISTERED(IbNetDevice);

namespace
{

/// Largest header stack a data packet can carry: LRH, GRH, BTH, AtomicETH + ImmDt, CRCs.
constexpr uint32_t kMaxHeaderBytes = 128;

/// @return index of the lowest set bit of a non-zero mask
inline uint8_t
LowestBit(uint32_t mask)
{
    return static_cast<uint8_t>(__builtin_ctz(mask));
}

/// @return a LID as the Mac16Address ns-3 upper layers see
Mac16Address
LidToAddress(uint16_t lid)
{
    uint8_t buf[2] = {static_cast<uint8_t>(lid >> 8), static_cast<uint8_t>(lid & 0xff)};
    Mac16Address a;
    a.CopyFrom(buf);
    return a;
}

/// @return the LID in a Mac16Address
uint16_t
AddressToLid(const Mac16Address& a)
{
    uint8_t buf[2];
    a.CopyTo(buf);
    return static_cast<uint16_t>((buf[0] << 8) | buf[1]);
}

} // namespace

TypeId
IbNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbNetDevice")
            .SetParent<NetDevice>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbNetDevice>()
            .AddAttribute(
                "LinkSpeed",
                "Link speed: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR.",
                StringValue("EDR"),
                MakeStringAccessor(&IbNetDevice::SetLinkSpeed, &IbNetDevice::GetLinkSpeed),
                MakeStringChecker())
            .AddAttribute(
                "LinkWidth",
                "Link width: 1x, 2x, 4x, 8x or 12x.",
                StringValue("4x"),
                MakeStringAccessor(&IbNetDevice::SetLinkWidth, &IbNetDevice::GetLinkWidth),
                MakeStringChecker())
            .AddAttribute("Mtu",
                          "IBA MTU, the largest payload of one packet in bytes: 256, 512, "
                          "1024, 2048 or 4096.",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&IbNetDevice::SetIbMtu, &IbNetDevice::GetIbMtu),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "NumDataVls",
                "Number of data virtual lanes in operation, VL0 upwards: 1, 2, 4, 8 or 15 "
                "(IBA VLCap). Both ends of a cable must agree.",
                UintegerValue(8),
                MakeUintegerAccessor(&IbNetDevice::SetNumDataVls, &IbNetDevice::GetNumDataVls),
                MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "VlBufferSize",
                "Receive buffer per data VL, in bytes (whole 64-byte blocks are "
                "used; at most 2048 blocks can be advertised at once).",
                UintegerValue(65536),
                MakeUintegerAccessor(&IbNetDevice::SetVlBufferSize, &IbNetDevice::GetVlBufferSize),
                MakeIbUintegerChecker<uint32_t>("IbNetDevice", "VlBufferSize", 64))
            .AddAttribute(
                "CreditUpdateThreshold",
                "Bytes of receive buffer freed on a VL that make the port send a "
                "flow-control packet for it (capped so that a stalled sender "
                "always gets an update).",
                UintegerValue(8192),
                MakeUintegerAccessor(&IbNetDevice::SetCreditUpdateThreshold,
                                     &IbNetDevice::GetCreditUpdateThreshold),
                MakeIbUintegerChecker<uint32_t>("IbNetDevice", "CreditUpdateThreshold", 64))
            .AddAttribute("FlowControlRefresh",
                          "Longest time between flow-control packets of an active VL; "
                          "0 means 65,536 symbol times of the link speed, as IBA requires.",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&IbNetDevice::m_fcRefresh),
                          MakeIbTimeChecker("IbNetDevice", "FlowControlRefresh", Time(0)))
            .AddAttribute(
                "VlArbitrationHigh",
                "High-priority VL arbitration table, 'VL:weight,...' (weights in "
                "64-byte units, 0..255). OpenSM's default is 0:4.",
                StringValue("0:4"),
                MakeStringAccessor(&IbNetDevice::SetVlArbHigh, &IbNetDevice::GetVlArbHigh),
                MakeStringChecker())
            .AddAttribute("VlArbitrationLow",
                          "Low-priority VL arbitration table, 'VL:weight,...'. OpenSM's "
                          "default gives VL1..VL14 weight 4 each.",
                          StringValue("1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,"
                                      "14:4"),
                          MakeStringAccessor(&IbNetDevice::SetVlArbLow, &IbNetDevice::GetVlArbLow),
                          MakeStringChecker())
            .AddAttribute("LimitOfHighPriority",
                          "Bytes, in 4 KB units, the high-priority table may send while the "
                          "low-priority table waits: 0 = one packet, 255 = unbounded.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbNetDevice::SetLimitOfHighPriority,
                                               &IbNetDevice::GetLimitOfHighPriority),
                          MakeUintegerChecker<uint8_t>())
            .AddAttribute("SlToVlTable",
                          "16 comma-separated VLs, the VL of SL0..SL15 (15 = drop). Empty: "
                          "SL s goes to VL (s mod NumDataVls).",
                          StringValue(""),
                          MakeStringAccessor(&IbNetDevice::SetSlToVl, &IbNetDevice::GetSlToVl),
                          MakeStringChecker())
            .AddAttribute("TxQueueMaxPackets",
                          "Packets a VL transmit queue holds before SendIbPacket drops.",
                          UintegerValue(256),
                          MakeUintegerAccessor(&IbNetDevice::m_txQueueMaxPackets),
                          MakeIbUintegerChecker<uint32_t>("IbNetDevice", "TxQueueMaxPackets", 1))
            .AddAttribute("RxDrainRate",
                          "Rate at which a host port's upper layer takes received packets "
                          "out of the VL buffers; 0 bps = at once. A port with an IbHca "
                          "hands packets to it at once and must keep this at 0.",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&IbNetDevice::m_rxDrainRate),
                          MakeDataRateChecker())
            .AddAttribute("RawDatagramSl",
                          "Service level of the raw datagrams that Send() emits.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbNetDevice::m_rawSl),
                          MakeIbUintegerChecker<uint8_t>("IbNetDevice", "RawDatagramSl", 0, 15))
            .AddAttribute("Lid",
                          "Local identifier of the port (0 = unassigned).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbNetDevice::SetLid, &IbNetDevice::GetLid),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("ReceiveErrorModel",
                          "Error model applied to arriving data packets; a corrupted packet "
                          "fails its VCRC and is dropped, as hardware does. The model decides "
                          "whether a packet is corrupt; it must not change the packet's bytes "
                          "(the port has read its header before).",
                          PointerValue(),
                          MakePointerAccessor(&IbNetDevice::SetReceiveErrorModel,
                                              &IbNetDevice::GetReceiveErrorModel),
                          MakePointerChecker<ErrorModel>())
            .AddTraceSource("MacTx",
                            "A packet was accepted for transmission.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_macTxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("MacTxDrop",
                            "A packet was refused for transmission (SL mapped to VL15, "
                            "queue full, larger than the MTU).",
                            MakeTraceSourceAccessor(&IbNetDevice::m_macTxDropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("LinkDownDrop",
                            "A packet was lost because the cable or the port is down: it was "
                            "on the wire, queued here, or forwarded here by a switch (the "
                            "bool is true on the wire).",
                            MakeTraceSourceAccessor(&IbNetDevice::m_linkDownDropTrace),
                            "ns3::IbNetDevice::LinkDownDropTracedCallback")
            .AddTraceSource(
                "MacRx",
                "A data packet was delivered to the port's consumer (ns-3's protocols or the "
                "port's IbHca; not fired at switch ports).",
                MakeTraceSourceAccessor(&IbNetDevice::m_macRxTrace),
                "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyTxBegin",
                            "A data packet started serialization.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_phyTxBeginTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyTxEnd",
                            "A data packet finished serialization.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_phyTxEndTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyRxEnd",
                            "The last bit of a data packet arrived.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_phyRxEndTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyRxDrop",
                            "An arriving data packet failed its CRC and was dropped.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_phyRxDropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("Sniffer",
                            "Data packets sent and received (for pcap).",
                            MakeTraceSourceAccessor(&IbNetDevice::m_snifferTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PromiscSniffer",
                            "Data packets sent and received (for pcap, promiscuous).",
                            MakeTraceSourceAccessor(&IbNetDevice::m_promiscSnifferTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("CreditStall",
                            "A VL's head packet got the credits it had waited for; "
                            "arguments: VL, time waited.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_creditStallTrace),
                            "ns3::IbNetDevice::CreditStallTracedCallback")
            .AddTraceSource("TxQueueDepth",
                            "Packets in a VL's transmit queue changed; arguments: VL, packets.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_txQueueDepthTrace),
                            "ns3::IbNetDevice::VlValueTracedCallback")
            .AddTraceSource("RxBufferOccupancy",
                            "Bytes held in a VL's receive buffer changed; arguments: VL, "
                            "bytes (whole blocks).",
                            MakeTraceSourceAccessor(&IbNetDevice::m_rxBufferTrace),
                            "ns3::IbNetDevice::VlValueTracedCallback")
            .AddTraceSource("FlowControlTx",
                            "A flow-control packet was sent.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_fcTxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("FlowControlRx",
                            "A flow-control packet arrived.",
                            MakeTraceSourceAccessor(&IbNetDevice::m_fcRxTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

IbNetDevice::IbNetDevice()
{
    NS_LOG_FUNCTION(this);
    m_hot.rate = IbLinkRate::GetDataRate(IbLinkRate::EDR, 4);
    // The hint sizes (HOT_LINES, ARRIVAL_LINES) count lines from the object's start.
    NS_ABORT_MSG_UNLESS(reinterpret_cast<const char*>(&m_hot) -
                                    reinterpret_cast<const char*>(this) ==
                                static_cast<std::ptrdiff_t>(HOT_START) &&
                            reinterpret_cast<uintptr_t>(this) % IbPrefetch::LINE == 0,
                        "IbNetDevice: the hot state is not where the prefetch hints assume");
    // One event object for every end of transmission (at most one is pending): no
    // allocation per packet. It holds a raw pointer, so it does not keep the port alive.
    m_hot.txCompleteEvent = Ptr<EventImpl>(MakeEvent(&IbNetDevice::TransmitComplete, this), false);
    // The per-packet trace sources keep a bit of m_hot.watched, which every packet tests.
    m_phyRxEndTrace.Watch(&m_hot.watched, WATCH_PHY_RX_END);
    m_rxBufferTrace.Watch(&m_hot.watched, WATCH_RX_BUFFER);
    m_snifferTrace.Watch(&m_hot.watched, WATCH_SNIFFER);
    m_promiscSnifferTrace.Watch(&m_hot.watched, WATCH_PROMISC_SNIFFER);
    m_txQueueDepthTrace.Watch(&m_hot.watched, WATCH_TX_QUEUE_DEPTH);
    m_phyTxBeginTrace.Watch(&m_hot.watched, WATCH_PHY_TX_BEGIN);
    m_phyTxEndTrace.Watch(&m_hot.watched, WATCH_PHY_TX_END);
    m_fcTxTrace.Watch(&m_hot.watched, WATCH_FC_TX);
    m_fcRxTrace.Watch(&m_hot.watched, WATCH_FC_RX);
    m_macTxTrace.Watch(&m_hot.watched, WATCH_MAC_TX);
    m_macRxTrace.Watch(&m_hot.watched, WATCH_MAC_RX);
}

IbNetDevice::~IbNetDevice()
{
    NS_LOG_FUNCTION(this);
    ForgetTxStartListeners();
}

void
IbNetDevice::ForgetTxStartListeners()
{
    while (m_txStartListeners != nullptr)
    {
        RemoveTxStartListener(m_txStartListeners);
    }
}

void
IbNetDevice::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_node = nullptr;
    m_channel = nullptr;
    m_hot.txDir = nullptr;
    SetReceiveErrorModel(nullptr);
    m_hot.txCurrent = TxItem();
    m_txReadyCallback.Nullify();
    m_hot.forwarder = nullptr;
    m_hca = nullptr;
    ForgetTxStartListeners();
    for (auto& v : m_vl)
    {
        v.tx.queue.Clear();
    }
    m_drainQueue.Clear();
    m_refreshEvent.Cancel();
    m_hot.refreshPending = false;
    m_drainEvent.Cancel();
    m_ibRxCallback = MakeNullCallback<void, Ptr<IbNetDevice>, Ptr<Packet>, uint8_t, uint32_t>();
    m_rxCallback =
        MakeNullCallback<bool, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&>();
    m_promiscCallback.Nullify();
    NetDevice::DoDispose();
}

void
IbNetDevice::DoInitialize()
{
    NS_LOG_FUNCTION(this);
    if (!m_configured)
    {
        Configure();
    }
    NetDevice::DoInitialize();
}

// ---------------------------------------------------------------- attributes

void
IbNetDevice::SetLinkSpeed(std::string speed)
{
    IbLinkRate::Speed s;
    NS_ABORT_MSG_UNLESS(IbLinkRate::ParseSpeed(speed, s),
                        "IbNetDevice attribute LinkSpeed='"
                            << speed << "' is not an InfiniBand link speed; use one of "
                            << IbLinkRate::ValidSpeedNames() << ".");
    m_speed = s;
    Retrain("LinkSpeed");
}

std::string
IbNetDevice::GetLinkSpeed() const
{
    return IbLinkRate::SpeedName(m_speed);
}

void
IbNetDevice::SetLinkWidth(std::string width)
{
    uint8_t w;
    NS_ABORT_MSG_UNLESS(IbLinkRate::ParseWidth(width, w),
                        "IbNetDevice attribute LinkWidth='"
                            << width << "' is not an InfiniBand link width; use one of 1x, 2x, "
                            << "4x, 8x, 12x.");
    m_width = w;
    Retrain("LinkWidth");
}

void
IbNetDevice::Retrain(const char* attribute)
{
    if (m_retraining)
    {
        return; // the training under way reads the attributes as they are when it ends
    }
    if (!m_hot.linkUp)
    {
        // Trained with the peer at link up (NotifyLinkUp).
        m_activeSpeed = m_speed;
        SetRate(IbLinkRate::GetDataRate(m_speed, m_width));
        return;
    }
    Ptr<IbNetDevice> peer = m_channel->GetPeer(this);
    if (TrainedRate(*peer) == m_hot.rate && peer->TrainedRate(*this) == peer->m_hot.rate)
    {
        return; // the link runs as it does (the same value, or a speed the peer lacks)
    }
    NS_ABORT_MSG_IF(m_channel->IsBetweenRanks(),
                    "IbNetDevice on node "
                        << m_node->GetId() << ": attribute " << attribute
                        << " changed while the link is up, on a cable between MPI ranks: the "
                           "other rank's end cannot train with it. Set it before the "
                           "simulation starts.");
    // A speed or width change takes the link down to train again, as real ports do. No
    // packet starts at either end; those on the wire arrive at the rate they were sent
    // with (a cut-through switch behind the cable times their tails by it); then both
    // ends come up at the new rate and exchange credits. Upper layers are not told
    // (ns-3's ARP, for one, empties its cache on a link change): the link is down for
    // about a packet time, and nothing is lost.
    Time end = Simulator::Now();
    for (IbNetDevice* d : {this, PeekPointer(peer)})
    {
        d->m_hot.linkUp = false;
        d->m_retraining = true;
        NS_ASSERT(d->m_hot.txDir != nullptr);
        end = std::max(
            {end, d->m_hot.txDir->lastArrival, d->m_hot.txFreeAt + d->m_hot.txDir->arrivalDelay});
    }
    NS_LOG_INFO("node " << m_node->GetId() << ": " << attribute
                        << " changed, the link trains again until " << end.As(Time::NS));
    Simulator::Schedule(end - Simulator::Now(), &IbNetDevice::FinishRetrain, this);
}

void
IbNetDevice::FinishRetrain()
{
    Ptr<IbNetDevice> peer = m_channel->GetPeer(this);
    const std::array<IbNetDevice*, 2> ends{this, PeekPointer(peer)};
    for (IbNetDevice* d : ends)
    {
        d->m_retraining = false;
    }
    if (m_hot.failed || peer->m_hot.failed)
    {
        return; // the cable failed meanwhile: it comes up when it is restored
    }
    for (IbNetDevice* d : ends)
    {
        d->TrainWith(d == this ? *peer : *this);
        d->m_hot.linkUp = true;
    }
    // Credits freed while the link was down were not advertised: one flow-control packet
    // per VL resynchronises both ends (and stands for those requested before). Both ends
    // send theirs before either starts a data packet.
    for (IbNetDevice* d : ends)
    {
        d->m_hot.fcPending = 0;
        for (uint8_t vl = 0; vl < d->m_hot.numDataVls; ++vl)
        {
            d->SendFlowControl(vl, IbFlowControlHeader::OP_NORMAL);
        }
    }
    for (IbNetDevice* d : ends)
    {
        d->TrySend();
    }
}

void
IbNetDevice::SetRate(DataRate rate)
{
    if (rate == m_hot.rate)
    {
        return;
    }
    const Time now = Simulator::Now();
    m_capacityBits +=
        static_cast<double>(m_hot.rate.GetBitRate()) * (now - m_rateSince).GetSeconds();
    m_rateSince = now;
    m_hot.rate = rate;
    m_hot.txCarry = 0.0;
    UpdateRate();
}

DataRate
IbNetDevice::TrainedRate(const IbNetDevice& peer) const
{
    return IbLinkRate::GetDataRate(std::min(m_speed, peer.m_speed),
                                   std::min(m_width, peer.m_width));
}

void
IbNetDevice::TrainWith(const IbNetDevice& peer)
{
    // Real ports train to the highest speed and the widest width both support, each on
    // its own: an EDR 4x port and an HDR 2x port run EDR 2x (50 Gb/s), not 100 Gb/s.
    m_activeSpeed = std::min(m_speed, peer.m_speed);
    const DataRate trained = TrainedRate(peer);
    if (trained != IbLinkRate::GetDataRate(m_speed, m_width))
    {
        NS_LOG_WARN("node " << m_node->GetId() << ": link trains down to "
                            << IbLinkRate::SpeedName(m_activeSpeed) << " "
                            << unsigned(std::min(m_width, peer.m_width)) << "x, " << trained);
    }
    SetRate(trained);
}

double
IbNetDevice::GetWireCapacityBits(Time at) const
{
    NS_ABORT_MSG_IF(at < m_rateSince,
                    "IbNetDevice::GetWireCapacityBits: " << at.As(Time::US) << " is before the "
                                                         << "last rate change at "
                                                         << m_rateSince.As(Time::US));
    return m_capacityBits +
           static_cast<double>(m_hot.rate.GetBitRate()) * (at - m_rateSince).GetSeconds();
}

void
IbNetDevice::UpdateRate()
{
    const double stepsPerSecond = static_cast<double>(Seconds(1).GetTimeStep());
    m_hot.stepsPerByte = 8.0 * stepsPerSecond / static_cast<double>(m_hot.rate.GetBitRate());
    m_hot.lrhTime = m_hot.rate.CalculateBytesTxTime(IbPacket::LRH_SIZE);
}

Time
IbNetDevice::SerializationTime(uint32_t bytes, bool backToBack)
{
    const double exact = bytes * m_hot.stepsPerByte + (backToBack ? m_hot.txCarry : 0.0);
    const int64_t steps = std::llround(exact);
    m_hot.txCarry = exact - static_cast<double>(steps);
    return TimeStep(steps);
}

std::string
IbNetDevice::GetLinkWidth() const
{
    return std::to_string(m_width) + "x";
}

void
IbNetDevice::SetIbMtu(uint32_t mtu)
{
    NS_ABORT_MSG_UNLESS(mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096,
                        "IbNetDevice attribute Mtu=" << mtu
                                                     << " is not an IBA MTU; use one of 256, "
                                                        "512, 1024, 2048, 4096.");
    RefuseOnceUp("Mtu", mtu != m_mtu); // both ends must agree, checked at link up
    m_mtu = mtu;
    m_configured = false;
}

void
IbNetDevice::RefuseOnceUp(const char* attribute, bool changed) const
{
    NS_ABORT_MSG_IF(m_hot.linkUp && changed,
                    "IbNetDevice attribute " << attribute
                                             << " cannot change once the link is up; set it "
                                                "before the simulation starts.");
}

void
IbNetDevice::SetVlBufferSize(uint32_t bytes)
{
    // Credits already advertised count on the buffer: it cannot shrink under them, and
    // a larger one would only be announced by a later flow-control packet.
    RefuseOnceUp("VlBufferSize", bytes != m_vlBufferSize);
    m_vlBufferSize = bytes;
    m_configured = false; // the next Configure turns it into blocks
}

void
IbNetDevice::SetCreditUpdateThreshold(uint32_t bytes)
{
    RefuseOnceUp("CreditUpdateThreshold", bytes != m_creditUpdateBytes);
    m_creditUpdateBytes = bytes;
    m_configured = false;
}

void
IbNetDevice::SetLimitOfHighPriority(uint8_t limit)
{
    RefuseOnceUp("LimitOfHighPriority", limit != m_arbiterLimit);
    m_arbiterLimit = limit;
    m_configured = false;
}

uint32_t
IbNetDevice::GetCreditUpdateThreshold() const
{
    return m_creditUpdateBytes;
}

uint8_t
IbNetDevice::GetLimitOfHighPriority() const
{
    return m_arbiterLimit;
}

uint32_t
IbNetDevice::GetIbMtu() const
{
    return m_mtu;
}

void
IbNetDevice::SetNumDataVls(uint32_t n)
{
    NS_ABORT_MSG_UNLESS(n >= 1 && n <= MAX_DATA_VLS,
                        "IbNetDevice attribute NumDataVls=" << n
                                                            << " is out of range; data VLs are "
                                                               "VL0..VL14, so use 1..15.");
    // IBA VLCap (PortInfo) codes 1..5: VL0, VL0-1, VL0-3, VL0-7, VL0-14.
    NS_ABORT_MSG_UNLESS(n == 1 || n == 2 || n == 4 || n == 8 || n == 15,
                        "IbNetDevice attribute NumDataVls="
                            << n
                            << ": an IBA port operates 1, 2, 4, 8 or 15 data VLs (VLCap); use "
                               "the next of these up (the subnet manager maps SLs onto them).");
    NS_ABORT_MSG_IF(m_hot.linkUp,
                    "IbNetDevice attribute NumDataVls cannot change once the link is up.");
    m_hot.numDataVls = static_cast<uint8_t>(n);
    m_configured = false;
    if (m_hot.forwarder != nullptr)
    {
        m_hot.forwarder->PortSlToVlChanged();
    }
}

void
IbNetDevice::SetVlArbHigh(std::string table)
{
    std::vector<IbVlArbiter::Entry> entries;
    std::string error;
    NS_ABORT_MSG_UNLESS(IbVlArbiter::ParseTable(table, entries, error),
                        "IbNetDevice attribute VlArbitrationHigh='" << table << "': " << error
                                                                    << ".");
    m_arbiter.SetHighTable(entries);
    m_configured = false;
}

std::string
IbNetDevice::GetVlArbHigh() const
{
    return IbVlArbiter::FormatTable(m_arbiter.GetHighTable());
}

void
IbNetDevice::SetVlArbLow(std::string table)
{
    std::vector<IbVlArbiter::Entry> entries;
    std::string error;
    NS_ABORT_MSG_UNLESS(IbVlArbiter::ParseTable(table, entries, error),
                        "IbNetDevice attribute VlArbitrationLow='" << table << "': " << error
                                                                   << ".");
    m_arbiter.SetLowTable(entries);
    m_configured = false;
}

std::string
IbNetDevice::GetVlArbLow() const
{
    return IbVlArbiter::FormatTable(m_arbiter.GetLowTable());
}

void
IbNetDevice::SetSlToVl(std::string table)
{
    m_sl2vlText = table;
    m_configured = false;
    if (m_hot.forwarder != nullptr)
    {
        m_hot.forwarder->PortSlToVlChanged();
    }
}

std::string
IbNetDevice::GetSlToVl() const
{
    return m_sl2vlText;
}

void
IbNetDevice::Configure()
{
    NS_LOG_FUNCTION(this);
    const std::string where = m_node ? "IbNetDevice on node " + std::to_string(m_node->GetId()) +
                                           " port " + std::to_string(m_ifIndex)
                                     : std::string("IbNetDevice");
    // SL-to-VL table.
    if (m_sl2vlText.empty())
    {
        for (uint8_t sl = 0; sl < 16; ++sl)
        {
            m_sl2vl[sl] = sl % m_hot.numDataVls;
        }
    }
    else
    {
        std::stringstream ss(m_sl2vlText);
        std::string item;
        uint32_t sl = 0;
        while (std::getline(ss, item, ','))
        {
            NS_ABORT_MSG_IF(sl >= 16,
                            where << ": attribute SlToVlTable='" << m_sl2vlText
                                  << "' has more than 16 entries; give one VL per SL0..SL15.");
            unsigned long vl = 0;
            std::size_t used = 0;
            bool ok = true;
            try
            {
                vl = std::stoul(item, &used);
                ok = item.find_first_not_of(" \t", used) == std::string::npos;
            }
            catch (const std::exception&)
            {
                ok = false;
            }
            NS_ABORT_MSG_UNLESS(ok && (vl < m_hot.numDataVls || vl == VL15),
                                where << ": attribute SlToVlTable='" << m_sl2vlText
                                      << "': entry for SL" << sl << " is '" << item
                                      << "'; it must be a data VL below NumDataVls="
                                      << unsigned(m_hot.numDataVls) << " or 15 (drop).");
            m_sl2vl[sl++] = static_cast<uint8_t>(vl);
        }
        NS_ABORT_MSG_UNLESS(sl == 16,
                            where << ": attribute SlToVlTable='" << m_sl2vlText << "' has " << sl
                                  << " entries; give 16, one VL per SL0..SL15.");
    }
    // VLs that the arbitration tables can ever pick; a packet for another VL is refused
    // at SendIbPacket with a message.
    m_arbitratedMask = 0;
    for (const auto* table : {&m_arbiter.GetHighTable(), &m_arbiter.GetLowTable()})
    {
        for (const auto& e : *table)
        {
            if (e.weight > 0)
            {
                m_arbitratedMask |= static_cast<uint16_t>(1u << e.vl);
            }
        }
    }
    m_arbiter.SetLimitOfHighPriority(m_arbiterLimit);
    m_arbiter.Reset();
    // Buffers and credit thresholds.
    m_hot.capacityBlocks = m_vlBufferSize / IbPacket::BLOCK_SIZE;
    m_maxPacketBlocks = IbPacket::Blocks(m_mtu + kMaxHeaderBytes);
    NS_ABORT_MSG_IF(m_hot.capacityBlocks < m_maxPacketBlocks,
                    where << ": VlBufferSize=" << m_vlBufferSize
                          << " bytes cannot hold one packet of the MTU (" << m_mtu
                          << " bytes of payload plus headers); use at least "
                          << m_maxPacketBlocks * IbPacket::BLOCK_SIZE << " bytes.");
    // A stalled sender must always be woken: once at most m_hot.updateBlocks freed blocks are
    // unreported, the sender's view of the buffer still has room for a full packet. That
    // view is at most 2048 blocks ahead of the ABR (ComputeFccl: half the 12-bit space),
    // whatever the buffer holds, so a larger buffer does not allow a larger threshold.
    const uint32_t window = std::min<uint32_t>(m_hot.capacityBlocks, 2048);
    const uint32_t maxUpdate =
        window > m_maxPacketBlocks ? window - m_maxPacketBlocks : uint32_t{1};
    m_hot.updateBlocks =
        std::clamp<uint32_t>(m_creditUpdateBytes / IbPacket::BLOCK_SIZE, 1, maxUpdate);
    UpdateRate();
    m_configured = true;
}

// ---------------------------------------------------------------- IB API

bool
IbNetDevice::Attach(Ptr<IbChannel> channel)
{
    NS_LOG_FUNCTION(this << channel);
    m_channel = channel;
    m_channel->Attach(this);
    return true;
}

void
IbNetDevice::SetIbReceiveCallback(IbReceiveCallback cb)
{
    m_ibRxCallback = cb;
    m_hot.forwarder = nullptr;
    m_hca = nullptr;
}

void
IbNetDevice::SetTxReadyCallback(TxReadyCallback cb)
{
    m_txReadyCallback = cb;
    m_hot.forwarder = nullptr;
    m_hca = nullptr;
}

void
IbNetDevice::SetForwarder(IbPacketForwarder* owner, uint8_t port)
{
    m_hot.forwarder = owner;
    m_hca = nullptr;
    m_hot.ownerPort = port;
}

void
IbNetDevice::SetConsumer(IbPacketConsumer* owner, uint8_t port)
{
    m_hca = owner;
    m_hot.forwarder = nullptr;
    m_hot.ownerPort = port;
}

DataRate
IbNetDevice::GetRxDrainRate() const
{
    return m_rxDrainRate;
}

void
IbNetDevice::AddTxStartListener(IbTxStartListener* listener)
{
    NS_ABORT_MSG_IF(listener->m_txStartPort != nullptr,
                    "AddTxStartListener: the listener is already registered on a port ("
                        << (listener->m_txStartPort == this ? "this one" : "another one")
                        << "); remove it there first.");
    IbTxStartListener** tail = &m_txStartListeners;
    while (*tail != nullptr)
    {
        tail = &(*tail)->m_nextOnPort;
    }
    *tail = listener;
    listener->m_txStartPort = this;
    listener->m_nextOnPort = nullptr;
    m_hot.watched |= WATCH_TX_START;
}

void
IbNetDevice::RemoveTxStartListener(IbTxStartListener* listener)
{
    for (IbTxStartListener** at = &m_txStartListeners; *at != nullptr; at = &(*at)->m_nextOnPort)
    {
        if (*at == listener)
        {
            *at = listener->m_nextOnPort;
            listener->m_txStartPort = nullptr;
            listener->m_nextOnPort = nullptr;
            break;
        }
    }
    if (m_txStartListeners == nullptr)
    {
        m_hot.watched &= static_cast<uint16_t>(~WATCH_TX_START);
    }
}

void
IbNetDevice::CheckWireSize(uint32_t bytes, const char* what) const
{
    NS_ABORT_MSG_IF(bytes > 0xFFFF,
                    "IbNetDevice on node " << m_node->GetId() << ": " << what << " a packet of "
                                           << bytes
                                           << " bytes; IBA packets are at most 4 KB of payload "
                                              "plus headers (split the data by the MTU)");
}

void
IbNetDevice::EnqueueForwarded(Ptr<Packet> packet,
                              uint8_t vl,
                              IbNetDevice* inPort,
                              uint8_t inVl,
                              Time earliestStart,
                              uint32_t bytes)
{
    NS_ASSERT(bytes == 0 || bytes == packet->GetSize());
    const uint32_t size = bytes != 0 ? bytes : packet->GetSize();
    CheckWireSize(size, "a switch forwards");
    const uint32_t head = IbPacket::PeekHead(*packet);
    EnqueueForwarded(IbOwnedPacket(packet), vl, inPort, inVl, earliestStart, size, head);
}

void
IbNetDevice::EnqueueForwardedCopy(Ptr<Packet> packet,
                                  uint8_t vl,
                                  IbSharedRelease* release,
                                  Time earliestStart)
{
    static_assert(alignof(IbSharedRelease) >= 2, "the lowest bit of its address is free");
    // Tagged: TransmitComplete tells it from a port by the lowest bit.
    IbNetDevice* tagged =
        reinterpret_cast<IbNetDevice*>(reinterpret_cast<uintptr_t>(release) | uintptr_t{1});
    EnqueueForwarded(packet, vl, tagged, release->vl, earliestStart);
}

void
IbNetDevice::EnqueueForwarded(IbOwnedPacket packet,
                              uint8_t vl,
                              IbNetDevice* inPort,
                              uint8_t inVl,
                              Time earliestStart,
                              uint32_t bytes,
                              uint32_t head)
{
    NS_LOG_FUNCTION(this << packet.Get() << unsigned(vl));
    NS_ASSERT(bytes == packet.Get()->GetSize());
    NS_ASSERT(head == IbPacket::PeekHead(*packet.Get()) && (head >> 28) == vl);
    TxVl& q = m_vl[vl].tx;
    if (m_hot.watched & WATCH_MAC_TX)
    {
        m_macTxTrace(packet.Share());
    }
    NS_ASSERT(bytes <= 0xFFFF);
    TxItem item;
    item.bytes = static_cast<uint16_t>(bytes);
    item.head = head;
    item.packet = std::move(packet);
    item.releasePort = inPort;
    item.releaseVl = inVl;
    item.earliestStart = earliestStart;
    // An idle transmitter with nothing queued and nothing else to send takes the packet at
    // once, as TrySend would right after queueing it (same credit check, same arbiter
    // step), without writing it into the queue's ring and reading it back: on a large
    // fabric that ring slot is a cache miss, and in an uncongested one most forwarded
    // packets find their output idle. The queue-depth trace sees every packet pass through
    // the queue: not with it connected.
    if (!m_hot.txBusy && m_hot.linkUp && m_hot.txNonEmpty == 0 && m_hot.fcPending == 0 &&
        vl != VL15 && !(m_hot.watched & WATCH_TX_QUEUE_DEPTH))
    {
        uint16_t headBlocks[16];
        headBlocks[vl] = item.Blocks();
        if (HasCredits(vl, headBlocks[vl]))
        {
            const int selected = m_arbiter.Select(static_cast<uint16_t>(1u << vl), headBlocks);
            if (selected != vl)
            {
                AbortUnarbitrated(static_cast<uint16_t>(1u << vl));
            }
            m_hot.txCurrent = std::move(item);
            StartTransmission(vl, true);
            return;
        }
    }
    if (m_hot.failed)
    {
        // IBA switches discard packets for a port that is not active: the input buffer
        // is free at once, so the failure does not back up into the fabric.
        LoseToFailedLink(item.packet.Get(), false);
        ReleaseForwarded(item);
        return;
    }
    q.queue.Push(std::move(item));
    m_hot.txNonEmpty |= static_cast<uint16_t>(1u << vl);
    FireIfConnected(m_hot.watched & WATCH_TX_QUEUE_DEPTH, m_txQueueDepthTrace, vl, q.queue.Size());
    if (!m_hot.txBusy)
    {
        TrySend();
    }
}

void
IbNetDevice::SetSwitchPortMode(Time rxDelay, bool cutThrough)
{
    m_rxDelay = rxDelay;
    m_hot.cutThrough = cutThrough;
    if (m_channel != nullptr)
    {
        m_channel->UpdatePortModes();
    }
}

Time
IbNetDevice::GetRxDelay() const
{
    return m_rxDelay;
}

bool
IbNetDevice::IsCutThrough() const
{
    return m_hot.cutThrough;
}

void
IbNetDevice::SetLid(uint16_t lid)
{
    m_lid = lid;
}

uint16_t
IbNetDevice::GetLid() const
{
    return m_lid;
}

void
IbNetDevice::SetLmc(uint8_t lmc)
{
    NS_ABORT_MSG_IF(lmc > 7, "IbNetDevice::SetLmc: LMC " << unsigned(lmc) << "; IBA allows 0..7");
    m_lmc = lmc;
}

uint8_t
IbNetDevice::GetLmc() const
{
    return m_lmc;
}

void
IbNetDevice::SetCongestionSetting(std::shared_ptr<const IbCaCongestionSetting> setting)
{
    m_ccSetting = std::move(setting);
}

std::string
IbNetDevice::FirstHopProblem(uint16_t dlid) const
{
    Ptr<IbNetDevice> peer = m_channel ? m_channel->GetPeer(this) : nullptr;
    if (!peer)
    {
        return "";
    }
    const uint32_t node = peer->GetNode() ? peer->GetNode()->GetId() : 0;
    std::ostringstream os;
    if (peer->m_hot.forwarder != nullptr)
    {
        if (peer->m_hot.forwarder->HasRoute(dlid))
        {
            return "";
        }
        os << "has no route in the forwarding table of the switch on node " << node
           << " that the port's cable leads to, which would drop every packet; use a LID the "
              "subnet manager assigned (the destination IbNetDevice's GetLid()), or route the "
              "subnet (IbFabricHelper, IbSubnetManager) first";
        return os.str();
    }
    if (peer->GetLid() == dlid)
    {
        return "";
    }
    os << "is not the LID of the only port it can reach: the cable leads straight to node " << node
       << "'s port, LID " << peer->GetLid() << "; use " << peer->GetLid();
    return os.str();
}

IbLinkRate::Speed
IbNetDevice::GetLinkSpeedValue() const
{
    return m_speed;
}

uint8_t
IbNetDevice::GetLinkWidthValue() const
{
    return m_width;
}

uint8_t
IbNetDevice::GetVlForSl(uint8_t sl) const
{
    NS_ASSERT(sl < 16);
    if (!m_configured)
    {
        const_cast<IbNetDevice*>(this)->Configure();
    }
    return m_sl2vl[sl];
}

bool
IbNetDevice::IsVlArbitrated(uint8_t vl) const
{
    if (!m_configured)
    {
        const_cast<IbNetDevice*>(this)->Configure();
    }
    return vl < 16 && (m_arbitratedMask & (1u << vl)) != 0;
}

uint32_t
IbNetDevice::GetVlBufferSize() const
{
    return m_vlBufferSize;
}

void
IbNetDevice::SetReceiveErrorModel(Ptr<ErrorModel> em)
{
    m_receiveErrorModel = em;
    // A bit of m_hot.watched, in the port's first line, says whether to look at it.
    if (em)
    {
        m_hot.watched |= WATCH_RX_ERROR_MODEL;
    }
    else
    {
        m_hot.watched &= static_cast<uint16_t>(~WATCH_RX_ERROR_MODEL);
    }
}

Ptr<ErrorModel>
IbNetDevice::GetReceiveErrorModel() const
{
    return m_receiveErrorModel;
}

Time
IbNetDevice::GetCreditStallTime(uint8_t vl) const
{
    NS_ASSERT(vl < 16);
    const TxVl& t = m_vl[vl].tx;
    // (a stall an owner noted while the wire was busy starts when the wire is free)
    return t.stalled && Simulator::Now() > t.stallStart
               ? m_stallTotal[vl] + (Simulator::Now() - t.stallStart)
               : m_stallTotal[vl];
}

void
IbNetDevice::NoteCreditStall(uint8_t vl, uint32_t blocks)
{
    NS_ASSERT(vl < m_hot.numDataVls && m_vl[vl].tx.queue.Empty());
    TxVl& t = m_vl[vl].tx;
    t.stallBlocks = static_cast<uint16_t>(blocks);
    if (!t.stalled)
    {
        t.stalled = true;
        t.stallStart = std::max(Simulator::Now(), m_hot.txFreeAt);
    }
}

uint32_t
IbNetDevice::GetRxBufferUsed(uint8_t vl) const
{
    NS_ASSERT(vl < 16);
    return m_vl[vl].rx.usedBlocks * IbPacket::BLOCK_SIZE;
}

uint32_t
IbNetDevice::GetAvailableCredits(uint8_t vl) const
{
    NS_ASSERT(vl < MAX_DATA_VLS);
    const uint16_t c = (m_vl[vl].tx.fccl - m_vl[vl].tx.fctbs) & 0xFFF;
    return c <= 2048 ? c : 0;
}

uint64_t
IbNetDevice::GetRxCrcErrors() const
{
    return m_rxCrcErrors;
}

uint64_t
IbNetDevice::GetFlowControlPacketsSent() const
{
    return m_hot.fcSent;
}

uint64_t
IbNetDevice::GetTxPackets() const
{
    return m_hot.txPackets;
}

uint64_t
IbNetDevice::GetTxBytes() const
{
    return m_hot.txBytes;
}

double
IbNetDevice::GetTxBytesOnWire() const
{
    double bytes = static_cast<double>(m_hot.txBytes);
    if (m_hot.txBusy)
    {
        // The packet being sent ends at m_hot.txFreeAt and takes m_hot.stepsPerByte per byte; it
        // may not have started yet (after a flow-control packet, or a cut-through tail).
        const double left = (m_hot.txFreeAt - Simulator::Now()).GetTimeStep() / m_hot.stepsPerByte;
        bytes -= std::clamp(left, 0.0, static_cast<double>(m_hot.txCurrent.bytes));
    }
    return bytes;
}

// ---------------------------------------------------------------- link state

void
IbNetDevice::NotifyLinkUp()
{
    NS_LOG_FUNCTION(this);
    if (!m_configured)
    {
        Configure();
    }
    Ptr<IbNetDevice> peer = m_channel->GetPeer(this);
    NS_ABORT_MSG_IF(peer->GetNumDataVls() != m_hot.numDataVls,
                    "IbNetDevice on node "
                        << m_node->GetId() << " has NumDataVls=" << unsigned(m_hot.numDataVls)
                        << " but its peer on node " << peer->GetNode()->GetId() << " has "
                        << unsigned(peer->GetNumDataVls())
                        << "; set the same NumDataVls on both ends of a cable.");
    // IBA links run at the smaller of the two MTUs (NeighborMTU, set by the subnet
    // manager); the model does not negotiate it. A packet larger than the peer's MTU could
    // exceed its VL buffer and wait for credits forever, and the peer's credit updates
    // are sized for its own MTU: both ends must agree.
    NS_ABORT_MSG_IF(peer->GetIbMtu() != m_mtu,
                    "IbNetDevice on node "
                        << m_node->GetId() << " has Mtu=" << m_mtu << " but its peer on node "
                        << peer->GetNode()->GetId() << " has Mtu=" << peer->GetIbMtu()
                        << "; set the same Mtu on both ends of a cable (an IBA link runs at the "
                           "smaller one, which the model does not negotiate).");
    TrainWith(*peer);
    m_hot.linkUp = true;
    m_arbiter.Reset();
    for (uint8_t vl = 0; vl < m_hot.numDataVls; ++vl)
    {
        SendFlowControl(vl, IbFlowControlHeader::OP_INIT);
    }
    m_linkChangeCallbacks();
    TrySend();
}

bool
IbNetDevice::IsLinkUp() const
{
    return m_hot.linkUp;
}

void
IbNetDevice::AddLinkChangeCallback(Callback<void> callback)
{
    m_linkChangeCallbacks.ConnectWithoutContext(callback);
}

uint64_t
IbNetDevice::GetLinkDownDrops() const
{
    return m_linkDownDrops;
}

void
IbNetDevice::LoseToFailedLink(Ptr<const Packet> packet, bool onWire)
{
    ++m_linkDownDrops;
    m_linkDownDropTrace(packet, onWire);
}

void
IbNetDevice::LinkFailed()
{
    NS_LOG_FUNCTION(this);
    if (m_hot.failed)
    {
        return;
    }
    NS_LOG_INFO("node " << m_node->GetId() << " port " << m_ifIndex << ": link down");
    m_hot.failed = true;
    m_hot.linkUp = false;
    m_hot.fcPending = 0;
    // What waits here is lost (a switch's input buffers are freed); the packet being
    // serialized is on the wire already, and the cable loses it.
    for (uint8_t vl = 0; vl < m_vl.size(); ++vl)
    {
        TxVl& t = m_vl[vl].tx;
        while (!t.queue.Empty())
        {
            TxItem item = t.queue.Pop();
            LoseToFailedLink(item.packet.Get(), false);
            ReleaseForwarded(item);
        }
        // Link initialisation starts the flow-control state over on both sides: no
        // credits until the peer's first flow-control packet after re-training, and the
        // receive side's ABR set again by it.
        t.fctbs = 0;
        t.fccl = 0;
        t.stalled = false;
        t.stallBlocks = 0;
        m_vl[vl].rx.abr = 0;
        m_vl[vl].rx.freedBlocks = 0;
    }
    m_hot.txNonEmpty = 0;
    m_linkChangeCallbacks();
    for (uint8_t vl = 0; vl < m_hot.numDataVls; ++vl)
    {
        NotifyTxReady(vl); // the owner drops (switch) or holds (HCA) what waits for the port
    }
}

void
IbNetDevice::LinkRestored()
{
    NS_LOG_FUNCTION(this);
    if (!m_hot.failed)
    {
        return;
    }
    NS_LOG_INFO("node " << m_node->GetId() << " port " << m_ifIndex << ": link up again");
    m_hot.failed = false;
    NotifyLinkUp();
}

// ---------------------------------------------------------------- transmit

bool
IbNetDevice::SendIbPacket(Ptr<Packet> packet)
{
    NS_LOG_FUNCTION(this << packet);
    if (!m_configured)
    {
        Configure();
    }
    uint32_t head = IbPacket::PeekHead(*packet);
    const uint8_t currentVl = head >> 28;
    const uint8_t sl = (head >> 20) & 0xF;
    const uint8_t vl = (currentVl == VL15) ? VL15 : m_sl2vl[sl];
    const uint32_t bytes = packet->GetSize();
    if ((vl == VL15 && currentVl != VL15) || bytes > m_mtu + kMaxHeaderBytes)
    {
        NS_LOG_WARN(
            "node " << m_node->GetId() << " drops a packet: "
                    << (vl == VL15 ? "its SL maps to VL15 (drop)" : "it is larger than the MTU"));
        m_macTxDropTrace(packet);
        return false;
    }
    NS_ABORT_MSG_IF(vl != VL15 && !(m_arbitratedMask & (1u << vl)),
                    "IbNetDevice on node "
                        << m_node->GetId() << ": SL" << unsigned(sl) << " maps to VL"
                        << unsigned(vl) << ", but no entry of weight > 0 names VL" << unsigned(vl)
                        << " in VlArbitrationHigh='" << GetVlArbHigh() << "' or VlArbitrationLow='"
                        << GetVlArbLow()
                        << "', so the packet could never be sent. Add an entry such as "
                        << unsigned(vl) << ":4, or map the SL elsewhere with SlToVlTable.");
    TxVl& q = m_vl[vl].tx;
    if (q.queue.Size() >= m_txQueueMaxPackets)
    {
        NS_LOG_LOGIC("VL" << unsigned(vl) << " transmit queue full");
        m_macTxDropTrace(packet);
        return false;
    }
    if (vl != currentVl)
    {
        IbPacket::SetVl(packet, vl);
        head = IbPacket::HeadWithVl(head, vl);
    }
    FireIfConnected(m_hot.watched & WATCH_MAC_TX, m_macTxTrace, packet);
    q.queue.Push({IbOwnedPacket(packet), head, static_cast<uint16_t>(bytes), 0, nullptr, Time()});
    m_hot.txNonEmpty |= static_cast<uint16_t>(1u << vl);
    FireIfConnected(m_hot.watched & WATCH_TX_QUEUE_DEPTH, m_txQueueDepthTrace, vl, q.queue.Size());
    if (!m_hot.txBusy)
    {
        TrySend();
    }
    return true;
}

uint16_t
IbNetDevice::ComputeFccl(uint8_t vl) const
{
    const RxVl& r = m_vl[vl].rx;
    const uint32_t freeBlocks = m_hot.capacityBlocks - r.usedBlocks;
    return static_cast<uint16_t>((r.abr + std::min<uint32_t>(freeBlocks, 2048)) & 0xFFF);
}

void
IbNetDevice::AbortUnarbitrated(uint16_t vls) const
{
    const uint8_t vl = LowestBit(vls);
    NS_FATAL_ERROR("IbNetDevice on node "
                   << m_node->GetId() << " port " << m_ifIndex << ": a packet waits on VL"
                   << unsigned(vl) << ", but no entry of weight > 0 names VL" << unsigned(vl)
                   << " in VlArbitrationHigh='" << GetVlArbHigh() << "' or VlArbitrationLow='"
                   << GetVlArbLow()
                   << "', so it could never be sent (a switch put it there by its SL-to-VL "
                      "table). Add an entry such as "
                   << unsigned(vl)
                   << ":4 to this port's arbitration tables, or map the SL to another VL.");
}

void
IbNetDevice::TrySend()
{
    if (m_hot.txBusy || !m_hot.linkUp)
    {
        return;
    }
    // Flow-control packets go first, between data packets.
    while (m_hot.fcPending != 0)
    {
        const uint8_t vl = LowestBit(m_hot.fcPending);
        m_hot.fcPending &= static_cast<uint16_t>(~(1u << vl));
        SendFlowControl(vl, IbFlowControlHeader::OP_NORMAL);
    }
    if (m_hot.txNonEmpty == 0)
    {
        return;
    }
    int vl = -1;
    if (m_hot.txNonEmpty & (1u << VL15))
    {
        vl = VL15;
    }
    else
    {
        uint16_t eligible = 0;
        uint16_t headBlocks[16];
        for (uint32_t mask = m_hot.txNonEmpty; mask != 0; mask &= mask - 1)
        {
            const uint8_t v = LowestBit(mask);
            TxVl& t = m_vl[v].tx;
            headBlocks[v] = t.queue.Front().Blocks();
            if (HasCredits(v, headBlocks[v]))
            {
                eligible |= static_cast<uint16_t>(1u << v);
            }
            else if (!t.stalled)
            {
                t.stalled = true;
                t.stallStart = Simulator::Now();
            }
        }
        if (eligible == 0)
        {
            return;
        }
        vl = m_arbiter.Select(eligible, headBlocks);
        if (vl < 0)
        {
            AbortUnarbitrated(eligible);
        }
    }
    TxVl& t = m_vl[vl].tx;
    m_hot.txCurrent = t.queue.Pop();
    const bool emptied = t.queue.Empty();
    if (emptied)
    {
        m_hot.txNonEmpty &= static_cast<uint16_t>(~(1u << vl));
    }
    FireIfConnected(m_hot.watched & WATCH_TX_QUEUE_DEPTH,
                    m_txQueueDepthTrace,
                    static_cast<uint8_t>(vl),
                    t.queue.Size());
    StartTransmission(static_cast<uint8_t>(vl), emptied);
}

void
IbNetDevice::StartTransmission(uint8_t vl, bool emptied)
{
    // The direction the packet leaves on: asked for now, written at the end (Launch).
    IbPrefetch::Now(m_hot.txDir);
    TxVl& t = m_vl[vl].tx;
    const TxItem& item = m_hot.txCurrent;
    if (vl != VL15)
    {
        t.fctbs = (t.fctbs + item.Blocks()) & 0xFFF;
    }
    // The wire may still carry flow-control packets sent just now, and a cut-through
    // packet may not start before its own tail allows: start after both.
    const Time now = Simulator::Now();
    const Time start = std::max({now, m_hot.txFreeAt, item.earliestStart});
    const bool backToBack = start == m_hot.txFreeAt;
    const Time startDelay = start - now;
    const Time txEnd = startDelay + SerializationTime(item.bytes, backToBack);
    const Time headerEnd = startDelay + m_hot.lrhTime;
    m_hot.txBusy = true;
    ++m_hot.txPackets;
    m_hot.txBytes += item.bytes;
    m_hot.txFreeAt = now + txEnd;
    NS_LOG_LOGIC("VL" << unsigned(vl) << " sends " << item.bytes << " bytes until "
                      << m_hot.txFreeAt);
    if (m_hot.watched & (WATCH_PHY_TX_BEGIN | WATCH_SNIFFER | WATCH_PROMISC_SNIFFER))
    {
        // At the first bit on the wire (pcap and ascii records are stamped with the time
        // of the call), which flow-control packets or a cut-through tail may delay.
        const Ptr<Packet> p = item.packet.Share();
        if (startDelay.IsZero())
        {
            FireTxBeginTraces(p);
        }
        else
        {
            Simulator::Schedule(startDelay, &IbNetDevice::FireTxBeginTraces, this, p);
        }
    }
    if (m_hot.watched & WATCH_TX_START)
    {
        IbTxStartListener* filled = nullptr;
        for (IbTxStartListener* l = m_txStartListeners; l != nullptr;)
        {
            IbTxStartListener* next = l->m_nextOnPort; // l may remove itself
            if (l->TxStarted(vl) && filled == nullptr)
            {
                filled = l;
            }
            l = next;
        }
        // Listeners that keep one queue topped up (saturating sources on one VL) fill the
        // slot this packet freed in list order: the first would take every slot and the
        // others none. The one that filled it goes last, so that they take turns (moving
        // the first one instead favoured the first of two sources whenever a third, on
        // another VL or finished, filled nothing).
        if (filled != nullptr)
        {
            // Found by address before anything of it is read: it may have removed (even
            // destroyed) itself.
            IbTxStartListener** link = &m_txStartListeners;
            while (*link != nullptr && *link != filled)
            {
                link = &(*link)->m_nextOnPort;
            }
            if (*link == filled && filled->m_nextOnPort != nullptr)
            {
                *link = filled->m_nextOnPort;
                IbTxStartListener* last = filled->m_nextOnPort;
                while (last->m_nextOnPort != nullptr)
                {
                    last = last->m_nextOnPort;
                }
                last->m_nextOnPort = filled;
                filled->m_nextOnPort = nullptr;
            }
        }
    }
    // TransmitComplete reads this port's first three lines and releases the packet's input
    // buffer on the port it came in by (its first line and the VL's), or on a multicast
    // copy's shared record.
    IbPrefetch::Hint(this, HOT_LINES);
    if (item.releasePort != nullptr)
    {
        const uintptr_t release = reinterpret_cast<uintptr_t>(item.releasePort);
        if (release & 1)
        {
            IbPrefetch::Also(reinterpret_cast<const void*>(release & ~uintptr_t{1}), 1);
        }
        else
        {
            IbPrefetch::Also(item.releasePort, 1, &item.releasePort->m_vl[item.releaseVl].rx);
        }
    }
    Simulator::Schedule(txEnd, m_hot.txCompleteEvent);
    // The packet stays with the port until the end of serialization only for PhyTxEnd,
    // and then the cable carries a copy: a cut-through switch downstream may rewrite the
    // VL of what it receives before the last bit leaves here, and PhyTxEnd shows the
    // packet as sent. Otherwise its reference goes to the cable outright, without writing
    // the packet's reference count (on a large fabric, no longer in the cache).
    IbOwnedPacket onCable = !(m_hot.watched & WATCH_PHY_TX_END)
                                ? std::move(m_hot.txCurrent.packet)
                                : IbOwnedPacket(m_hot.txCurrent.packet.Get()->Copy());
    if (m_hot.txDir != nullptr)
    {
        // Neither the IbChannel object nor the packet is read: on a large fabric, cache misses.
        m_hot.txDir->SendData(std::move(onCable), item.head, item.bytes, headerEnd, txEnd);
    }
    else
    {
        m_channel->Transmit(std::move(onCable), this, headerEnd, txEnd, false);
    }
    if (emptied)
    {
        // VL15 too: it takes no credits, but a switch hands an output VL its next packet
        // only when that VL's queue is empty, and waits for this call to hand it more.
        NotifyTxReady(vl);
    }
}

void
IbNetDevice::FireTxBeginTraces(Ptr<Packet> p)
{
    FireIfConnected(m_hot.watched & WATCH_PHY_TX_BEGIN, m_phyTxBeginTrace, p);
    FireIfConnected(m_hot.watched & WATCH_SNIFFER, m_snifferTrace, p);
    FireIfConnected(m_hot.watched & WATCH_PROMISC_SNIFFER, m_promiscSnifferTrace, p);
}

void
IbNetDevice::NotifyTxReady(uint8_t vl)
{
    if (m_hot.forwarder != nullptr)
    {
        m_hot.forwarder->PortTxReady(m_hot.ownerPort, this, vl);
    }
    else if (m_hca != nullptr)
    {
        m_hca->PortTxReady(m_hot.ownerPort, this, vl);
    }
    else if (!m_txReadyCallback.IsNull())
    {
        m_txReadyCallback(this, vl);
    }
}

void
IbNetDevice::TransmitComplete()
{
    NS_LOG_FUNCTION(this);
    m_hot.txBusy = false;
    TxItem item = std::move(m_hot.txCurrent);
    m_hot.txCurrent = TxItem();
    if (item.packet && (m_hot.watched & WATCH_PHY_TX_END))
    {
        m_phyTxEndTrace(item.packet.Share());
    }
    ReleaseForwarded(item);
    TrySend();
}

void
IbNetDevice::ReleaseForwarded(const TxItem& item)
{
    if (item.releasePort == nullptr)
    {
        return;
    }
    const uintptr_t release = reinterpret_cast<uintptr_t>(item.releasePort);
    if (release & 1)
    {
        // A multicast copy: the buffer is free once the last copy has left.
        IbSharedRelease* shared = reinterpret_cast<IbSharedRelease*>(release & ~uintptr_t{1});
        if (--shared->remaining == 0)
        {
            shared->port->ReleaseRxBuffer(shared->vl, shared->blocks);
            shared->Recycle();
        }
    }
    else
    {
        // A forwarded packet has left the switch: its input buffer space is free now.
        item.releasePort->ReleaseRxBuffer(item.releaseVl, item.Blocks());
    }
}

void
IbNetDevice::SendFlowControl(uint8_t vl, uint8_t op)
{
    NS_LOG_FUNCTION(this << unsigned(vl) << unsigned(op));
    NS_ASSERT(!m_hot.txBusy);
    const uint16_t fctbs = m_vl[vl].tx.fctbs;
    const uint16_t fccl = ComputeFccl(vl);
    NS_ASSERT(fctbs <= 0xFFF && fccl <= 0xFFF && vl <= 15 && op <= 15); // (FirstWordOf masks)
    const Time now = Simulator::Now();
    const bool backToBack = m_hot.txFreeAt >= now;
    const Time start = backToBack ? m_hot.txFreeAt : now;
    m_hot.txFreeAt = start + SerializationTime(IbFlowControlHeader::SIZE, backToBack);
    m_vl[vl].rx.freedBlocks = 0;
    m_vl[vl].rx.lastFcSent = now;
    ++m_hot.fcSent;
    if (!(m_hot.watched & WATCH_FC_TX) && m_hot.txDir != nullptr)
    {
        // Only the fields cross the cable (IbChannel::Direction::Arrive): no header object.
        m_hot.txDir->SendFlowControl(IbFlowControlHeader::FirstWordOf(op, fctbs, vl, fccl),
                                     m_hot.txFreeAt - now);
        return;
    }
    IbFlowControlHeader fc;
    fc.SetOp(op);
    fc.SetFctbs(fctbs);
    fc.SetVl(vl);
    fc.SetFccl(fccl);
    if (!(m_hot.watched & WATCH_FC_TX))
    {
        m_channel->TransmitFlowControl(fc, this, m_hot.txFreeAt - now);
        return;
    }
    Ptr<Packet> p = IbChannel::MakeFlowControlPacket(fc);
    m_fcTxTrace(p);
    m_channel->Transmit(IbOwnedPacket(p), this, m_hot.txFreeAt - now, m_hot.txFreeAt - now, true);
}

void
IbNetDevice::RequestFlowControl(uint8_t vl)
{
    if (!m_hot.linkUp)
    {
        return;
    }
    m_hot.fcPending |= static_cast<uint16_t>(1u << vl);
    if (!m_hot.txBusy)
    {
        TrySend();
    }
}

// ---------------------------------------------------------------- receive

void
IbNetDevice::ReceiveFromChannel(Ptr<Packet> packet, bool linkPacket)
{
    NS_LOG_FUNCTION(this << packet << linkPacket);
    if (linkPacket)
    {
        ReceiveFlowControl(packet);
        return;
    }
    const uint32_t head = IbPacket::PeekHead(*packet);
    const uint32_t bytes = packet->GetSize();
    // The cable and the transmit queues carry sizes in 16 bits (IBA packets are at most
    // 4 KB plus headers); only a packet from another MPI rank enters here unchecked.
    CheckWireSize(bytes, "received");
    ReceiveData(IbOwnedPacket(packet), head, bytes);
}

void
IbNetDevice::ReceiveData(IbOwnedPacket owned, uint32_t head, uint32_t bytes)
{
    NS_LOG_FUNCTION(this << owned.Get() << bytes);
    NS_ASSERT(head == IbPacket::PeekHead(*owned.Get()) && bytes == owned.Get()->GetSize());
    if (m_hot.watched & WATCH_PHY_RX_END)
    {
        m_phyRxEndTrace(owned.Share());
    }
    const uint8_t vl = head >> 28;
    const uint32_t blocks = IbPacket::Blocks(bytes);
    const bool flowControlled = vl != VL15;
    if (flowControlled)
    {
        NS_ABORT_MSG_IF(vl >= m_hot.numDataVls,
                        "IbNetDevice on node "
                            << m_node->GetId() << " received a packet on VL" << unsigned(vl)
                            << " but has NumDataVls=" << unsigned(m_hot.numDataVls));
        RxVl& r = m_vl[vl].rx;
        r.abr = (r.abr + blocks) & 0xFFF;
        r.active = true;
        if (!m_hot.refreshPending)
        {
            // A flag, not m_refreshEvent.IsExpired(): that looks the event up in the
            // scheduler, a cache miss per received packet on a large fabric.
            m_hot.refreshPending = true;
            const Time period = m_fcRefresh.IsZero()
                                    ? IbLinkRate::FlowControlRefreshPeriod(m_activeSpeed)
                                    : m_fcRefresh;
            m_refreshEvent = Simulator::Schedule(period, &IbNetDevice::RefreshFlowControl, this);
        }
    }
    if ((m_hot.watched & WATCH_RX_ERROR_MODEL) && m_receiveErrorModel->IsCorrupt(owned.Share()))
    {
        // The VCRC check fails: hardware discards the packet; its blocks never occupy
        // the buffer, and the credits they stood for go back to the sender.
        NS_LOG_LOGIC("packet failed its CRC; dropped");
        ++m_rxCrcErrors;
        m_phyRxDropTrace(owned.Share());
        if (flowControlled)
        {
            m_vl[vl].rx.freedBlocks += blocks;
            if (m_vl[vl].rx.freedBlocks >= m_hot.updateBlocks)
            {
                RequestFlowControl(vl);
            }
        }
        return;
    }
    if (flowControlled)
    {
        RxVl& r = m_vl[vl].rx;
        r.usedBlocks += blocks;
        NS_ASSERT_MSG(r.usedBlocks <= m_hot.capacityBlocks,
                      "credit accounting broken: VL" << unsigned(vl) << " buffer holds "
                                                     << r.usedBlocks << " of "
                                                     << m_hot.capacityBlocks << " blocks");
        FireIfConnected(m_hot.watched & WATCH_RX_BUFFER,
                        m_rxBufferTrace,
                        vl,
                        r.usedBlocks * IbPacket::BLOCK_SIZE);
    }
    if (m_hot.watched & (WATCH_SNIFFER | WATCH_PROMISC_SNIFFER))
    {
        const Ptr<Packet> p = owned.Share();
        FireIfConnected(m_hot.watched & WATCH_SNIFFER, m_snifferTrace, p);
        FireIfConnected(m_hot.watched & WATCH_PROMISC_SNIFFER, m_promiscSnifferTrace, p);
    }
    if (m_hot.forwarder != nullptr)
    {
        m_hot.forwarder
            ->PortForward(m_hot.ownerPort, this, std::move(owned), head, bytes, vl, blocks);
        return;
    }
    Ptr<Packet> packet = owned.Release();
    if (m_hca != nullptr)
    {
        // The HCA is this port's consumer: MacRx fires for what it is handed, as for what
        // goes up to ns-3's protocols without one (IbFabricStats counts flows with it).
        FireIfConnected(m_hot.watched & WATCH_MAC_RX, m_macRxTrace, packet);
        m_hca->PortReceive(m_hot.ownerPort, this, std::move(packet), vl, blocks);
        return;
    }
    if (!m_ibRxCallback.IsNull())
    {
        m_ibRxCallback(this, packet, vl, blocks);
        return;
    }
    if (m_rxDrainRate.GetBitRate() == 0)
    {
        DeliverUp(packet, head);
        if (flowControlled)
        {
            ReleaseRxBuffer(vl, blocks);
        }
        return;
    }
    m_drainQueue.Push({packet, vl});
    if (m_drainQueue.Size() == 1)
    {
        m_drainEvent = Simulator::Schedule(m_rxDrainRate.CalculateBytesTxTime(packet->GetSize()),
                                           &IbNetDevice::DrainComplete,
                                           this);
    }
}

void
IbNetDevice::DrainComplete()
{
    auto [packet, vl] = m_drainQueue.Pop();
    // The blocks the packet holds, counted before DeliverUp: for a raw datagram it strips
    // the LRH, RWH and VCRC from this very packet, and counting after it released a block
    // too few whenever those 14 bytes crossed a 64-byte boundary (the VL stalled for good
    // after some 900 full-MTU datagrams).
    const uint32_t blocks = IbPacket::Blocks(packet->GetSize());
    DeliverUp(packet, IbPacket::PeekHead(*packet));
    if (vl != VL15)
    {
        ReleaseRxBuffer(vl, blocks);
    }
    if (!m_drainQueue.Empty())
    {
        m_drainEvent = Simulator::Schedule(
            m_rxDrainRate.CalculateBytesTxTime(m_drainQueue.Front().first->GetSize()),
            &IbNetDevice::DrainComplete,
            this);
    }
}

void
IbNetDevice::ReleaseRxBuffer(uint8_t vl, uint32_t blocks)
{
    if (vl == VL15)
    {
        return; // VL15 has no flow control and no accounted buffer
    }
    NS_ASSERT(vl < MAX_DATA_VLS);
    RxVl& r = m_vl[vl].rx;
    NS_ASSERT_MSG(r.usedBlocks >= blocks,
                  "VL" << unsigned(vl) << ": releasing " << blocks << " blocks but only "
                       << r.usedBlocks << " are in use");
    r.usedBlocks -= blocks;
    r.freedBlocks += blocks;
    FireIfConnected(m_hot.watched & WATCH_RX_BUFFER,
                    m_rxBufferTrace,
                    vl,
                    r.usedBlocks * IbPacket::BLOCK_SIZE);
    if (r.freedBlocks >= m_hot.updateBlocks)
    {
        RequestFlowControl(vl);
    }
}

void
IbNetDevice::ReceiveFlowControl(Ptr<Packet> packet)
{
    m_fcRxTrace(packet);
    IbFlowControlHeader fc;
    packet->PeekHeader(fc);
    if (!fc.IsLpcrcValid())
    {
        NS_LOG_WARN("flow-control packet with a bad LPCRC ignored");
        return;
    }
    ApplyFlowControl(fc.GetVl(), fc.GetFctbs(), fc.GetFccl());
}

void
IbNetDevice::ApplyFlowControl(uint8_t vl, uint16_t fctbs, uint16_t fccl)
{
    NS_ABORT_MSG_IF(vl >= m_hot.numDataVls,
                    "IbNetDevice on node " << m_node->GetId() << " got a flow-control packet for VL"
                                           << unsigned(vl)
                                           << " but has NumDataVls=" << unsigned(m_hot.numDataVls));
    // The sender's FCTBS counts every block it put on this VL before this packet, all of
    // which have arrived (the cable is FIFO): resynchronise ABR as IBA prescribes.
    m_vl[vl].rx.abr = fctbs;
    TxVl& t = m_vl[vl].tx;
    t.fccl = fccl;
    if (t.stalled && HasCredits(vl, t.queue.Empty() ? t.stallBlocks : t.queue.Front().Blocks()))
    {
        const Time waited = Simulator::Now() - t.stallStart;
        t.stalled = false;
        t.stallBlocks = 0;
        if (!waited.IsNegative()) // (noted by the owner, it ended before the wire was free)
        {
            m_stallTotal[vl] += waited;
            m_creditStallTrace(vl, waited);
        }
    }
    if (t.queue.Empty())
    {
        NotifyTxReady(vl);
    }
    if (!m_hot.txBusy)
    {
        TrySend();
    }
}

void
IbNetDevice::RefreshFlowControl()
{
    const Time period =
        m_fcRefresh.IsZero() ? IbLinkRate::FlowControlRefreshPeriod(m_activeSpeed) : m_fcRefresh;
    bool any = false;
    m_hot.refreshPending = false;
    for (uint8_t vl = 0; vl < m_hot.numDataVls; ++vl)
    {
        RxVl& r = m_vl[vl].rx;
        if (!r.active)
        {
            continue;
        }
        any = true;
        r.active = false;
        if (Simulator::Now() - r.lastFcSent >= period)
        {
            RequestFlowControl(vl);
        }
    }
    if (any)
    {
        m_hot.refreshPending = true;
        m_refreshEvent = Simulator::Schedule(period, &IbNetDevice::RefreshFlowControl, this);
    }
}

void
IbNetDevice::DeliverUp(Ptr<Packet> packet, uint32_t head)
{
    FireIfConnected(m_hot.watched & WATCH_MAC_RX, m_macRxTrace, packet);
    if (IbPacket::LnhOfHead(head) != IbLrhHeader::LNH_RAW)
    {
        // IBA transport packets go to an HCA's transport, which installs an
        // IbReceiveCallback; ns-3 protocols only see raw datagrams. Decided from the head
        // word: neither the packet's bytes nor the callbacks' lines of this object are
        // read (on a large fabric, cache misses).
        return;
    }
    if (m_rxCallback.IsNull() && m_promiscCallback.IsNull())
    {
        return;
    }
    IbLrhHeader lrh;
    packet->RemoveHeader(lrh);
    IbRwhHeader rwh;
    packet->RemoveHeader(rwh);
    IbCrcTrailer crc;
    crc.SetHasIcrc(false);
    packet->RemoveTrailer(crc);
    const Mac16Address from = LidToAddress(lrh.GetSlid());
    const Mac16Address to = LidToAddress(lrh.GetDlid());
    // With LMC, the port answers to its 2^LMC LIDs from the aligned base m_lid.
    const bool forMe = (lrh.GetDlid() >> m_lmc) == (m_lid >> m_lmc);
    if (!m_promiscCallback.IsNull())
    {
        m_promiscCallback(this,
                          packet,
                          rwh.GetEtherType(),
                          from,
                          to,
                          forMe ? NetDevice::PACKET_HOST : NetDevice::PACKET_OTHERHOST);
    }
    if (forMe && !m_rxCallback.IsNull())
    {
        m_rxCallback(this, packet, rwh.GetEtherType(), from);
    }
}

// ---------------------------------------------------------------- NetDevice

void
IbNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
IbNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
IbNetDevice::GetChannel() const
{
    return m_channel;
}

void
IbNetDevice::SetAddress(Address address)
{
    m_lid = AddressToLid(Mac16Address::ConvertFrom(address));
}

Address
IbNetDevice::GetAddress() const
{
    return LidToAddress(m_lid);
}

bool
IbNetDevice::SetMtu(const uint16_t mtu)
{
    const uint32_t ib = mtu + IbRwhHeader().GetSerializedSize();
    if (ib != 256 && ib != 512 && ib != 1024 && ib != 2048 && ib != 4096)
    {
        NS_LOG_ERROR("IbNetDevice::SetMtu(" << mtu
                                            << "): the upper-layer MTU is the IBA MTU minus "
                                               "the 4-byte raw header; use 252, 508, 1020, "
                                               "2044 or 4092.");
        return false;
    }
    SetIbMtu(ib);
    return true;
}

uint16_t
IbNetDevice::GetMtu() const
{
    return static_cast<uint16_t>(m_mtu - IbRwhHeader().GetSerializedSize());
}

bool
IbNetDevice::IsBroadcast() const
{
    return false;
}

Address
IbNetDevice::GetBroadcast() const
{
    return Mac16Address("ff:ff");
}

bool
IbNetDevice::IsMulticast() const
{
    return false;
}

Address
IbNetDevice::GetMulticast(Ipv4Address multicastGroup) const
{
    NS_LOG_WARN("IbNetDevice raw datagrams have no multicast mapping");
    return Mac16Address("ff:ff");
}

Address
IbNetDevice::GetMulticast(Ipv6Address addr) const
{
    NS_LOG_WARN("IbNetDevice raw datagrams have no multicast mapping");
    return Mac16Address("ff:ff");
}

bool
IbNetDevice::IsPointToPoint() const
{
    // ns-3's distributed engines (DistributedSimulatorImpl, NullMessageSimulatorImpl) take
    // their lookahead from the point-to-point devices whose peer is on another rank, and
    // look at no other device: a cable between ranks reports itself as one.
    if (!m_channel || !m_node)
    {
        return false;
    }
    Ptr<IbNetDevice> peer = m_channel->GetPeer(this);
    return peer && peer->GetNode() && peer->GetNode()->GetSystemId() != m_node->GetSystemId();
}

bool
IbNetDevice::IsBridge() const
{
    return false;
}

bool
IbNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber)
{
    NS_LOG_FUNCTION(this << packet << dest << protocolNumber);
    if (!Mac16Address::IsMatchingType(dest))
    {
        NS_LOG_ERROR("IbNetDevice::Send: destination " << dest << " is not a LID (Mac16Address)");
        m_macTxDropTrace(packet);
        return false;
    }
    if (packet->GetSize() > GetMtu())
    {
        NS_LOG_ERROR("IbNetDevice::Send: " << packet->GetSize()
                                           << " bytes exceed the upper-layer MTU " << GetMtu());
        m_macTxDropTrace(packet);
        return false;
    }
    const uint8_t vl = GetVlForSl(m_rawSl);
    if (vl == VL15)
    {
        // The LRH would say VL15, and SendIbPacket would take it for a management packet
        // that skips flow control: IBA drops a data SL mapped to VL15.
        NS_LOG_ERROR("IbNetDevice::Send on node "
                     << m_node->GetId() << ": RawDatagramSl=" << unsigned(m_rawSl)
                     << " maps to VL15 in SlToVlTable, which means drop; map the SL to a data "
                        "VL or choose another RawDatagramSl");
        m_macTxDropTrace(packet);
        return false;
    }
    IbLrhHeader lrh;
    lrh.SetSl(m_rawSl);
    lrh.SetVl(vl);
    lrh.SetDlid(AddressToLid(Mac16Address::ConvertFrom(dest)));
    lrh.SetSlid(m_lid);
    IbPacket::SealRaw(packet, lrh, protocolNumber);
    return SendIbPacket(packet);
}

bool
IbNetDevice::SendFrom(Ptr<Packet> packet,
                      const Address& source,
                      const Address& dest,
                      uint16_t protocolNumber)
{
    NS_LOG_ERROR("IbNetDevice does not support SendFrom: a port sends with its own LID");
    return false;
}

Ptr<Node>
IbNetDevice::GetNode() const
{
    return m_node;
}

void
IbNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool
IbNetDevice::NeedsArp() const
{
    return false;
}

void
IbNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_rxCallback = cb;
}

void
IbNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback cb)
{
    m_promiscCallback = cb;
}

bool
IbNetDevice::SupportsSendFrom() const
{
    return false;
}

} // namespace ns3

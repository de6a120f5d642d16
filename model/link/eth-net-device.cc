/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-net-device.h"

#include "eth-channel.h"

#include "ns3/boolean.h"
#include "ns3/error-model.h"
#include "ns3/eth-frame.h"
#include "ns3/ib-range-checker.h"
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
#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthNetDevice");

NS_OBJECT_ENSURE_REGISTERED(EthNetDevice);

namespace
{

/**
 * Fire a per-frame trace source only if something is connected to it (its m_watched bit):
 * an unconnected TracedCallback still costs a call and a reference count round trip.
 * @param watched whether the trace source has something connected
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

/// @return the highest set bit of a non-zero mask
inline uint8_t
HighestBit(uint32_t mask)
{
    return static_cast<uint8_t>(31 - __builtin_clz(mask));
}

/// Bytes of a frame the port reads to classify it: through the IPv4 TOS byte.
constexpr uint32_t kClassifyBytes = 16;

/**
 * Parse a comma-separated list of unsigned numbers.
 * @param text the list
 * @param max the largest value allowed
 * @param values the numbers
 * @param error what is wrong, if false is returned
 * @return true if every entry is a number from 0 to @p max
 */
bool
ParseList(const std::string& text,
          unsigned long max,
          std::vector<unsigned long>& values,
          std::string& error)
{
    values.clear();
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        unsigned long v = 0;
        std::size_t used = 0;
        bool ok = item.find_first_not_of(" \t") != std::string::npos;
        try
        {
            v = std::stoul(item, &used);
            ok = ok && item.find_first_not_of(" \t", used) == std::string::npos &&
                 item.find('-') == std::string::npos;
        }
        catch (const std::exception&)
        {
            ok = false;
        }
        if (!ok || v > max)
        {
            std::ostringstream os;
            os << "entry " << values.size() << " is '" << item << "', not a number from 0 to "
               << max;
            error = os.str();
            return false;
        }
        values.push_back(v);
    }
    if (!text.empty() && text.back() == ',')
    {
        error = "it ends with a comma";
        return false;
    }
    return true;
}

} // namespace

TypeId
EthNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::EthNetDevice")
            .SetParent<NetDevice>()
            .SetGroupName("Infiniband")
            .AddConstructor<EthNetDevice>()
            .AddAttribute(
                "DataRate",
                "Data rate of the port (both ends of a cable must agree).",
                DataRateValue(DataRate("100Gb/s")),
                MakeDataRateAccessor(&EthNetDevice::SetDataRate, &EthNetDevice::GetDataRate),
                MakeDataRateChecker())
            .AddAttribute(
                "Mtu",
                "IP MTU: the largest payload NetDevice::Send takes (frames are up to "
                "18 bytes larger). It also sizes the ETS quantum.",
                UintegerValue(9000),
                MakeUintegerAccessor(&EthNetDevice::SetMtuAttribute, &EthNetDevice::GetMtu),
                MakeIbUintegerChecker<uint16_t>("EthNetDevice", "Mtu", 68))
            .AddAttribute("Address",
                          "MAC address of the port (EthHelper allocates one if it is left at "
                          "00:00:00:00:00:00).",
                          Mac48AddressValue(Mac48Address("00:00:00:00:00:00")),
                          MakeMac48AddressAccessor(&EthNetDevice::SetMacAddress,
                                                   &EthNetDevice::GetMacAddress),
                          MakeMac48AddressChecker())
            .AddAttribute(
                "PfcEnabled",
                "Bit mask of the lossless priorities: bit i set means priority i "
                "obeys received PFC frames and may be paused with SetPfcXoff. The "
                "default, 0x08, is priority 3 (DSCP 26 with the default map, the "
                "usual RoCE class).",
                UintegerValue(0x08),
                MakeUintegerAccessor(&EthNetDevice::SetPfcEnabled, &EthNetDevice::GetPfcEnabled),
                MakeUintegerChecker<uint8_t>())
            .AddAttribute(
                "EtsWeights",
                "ETS weights of priorities 0..7, 'w0,...,w7' (0..255 each): 0 makes "
                "a priority strict (served first, highest number first); the others "
                "share the rest by deficit round robin over wire bytes in proportion "
                "to their weights (only the ratios matter). Empty: all strict.",
                StringValue("0,0,0,0,0,0,0,0"),
                MakeStringAccessor(&EthNetDevice::SetEtsWeights, &EthNetDevice::GetEtsWeights),
                MakeStringChecker())
            .AddAttribute("DscpToPriority",
                          "Priority of each DSCP 0..63 for received IPv4 frames and frames of "
                          "NetDevice::Send: 64 comma-separated values 0..7. Empty: DSCP >> 3 "
                          "(the class selector). Non-IPv4 frames get priority 0.",
                          StringValue(""),
                          MakeStringAccessor(&EthNetDevice::SetDscpToPriority,
                                             &EthNetDevice::GetDscpToPriority),
                          MakeStringChecker())
            .AddAttribute("PauseQuanta",
                          "Pause time of the XOFF frames SetPfcXoff sends, in quanta of 512 "
                          "bit times; repeated every ceil(PauseQuanta / 2) quanta while the "
                          "XOFF holds.",
                          UintegerValue(0xFFFF),
                          MakeUintegerAccessor(&EthNetDevice::m_pauseQuanta),
                          MakeIbUintegerChecker<uint16_t>("EthNetDevice", "PauseQuanta", 1))
            .AddAttribute("TxQueueMaxBytes",
                          "Bytes a priority queue may hold for NetDevice::Send to add a frame "
                          "(drop tail; frames of Enqueue are never dropped).",
                          UintegerValue(262144),
                          MakeUintegerAccessor(&EthNetDevice::m_txQueueMaxBytes),
                          MakeIbUintegerChecker<uint32_t>("EthNetDevice", "TxQueueMaxBytes", 64))
            .AddAttribute("TxReadyThreshold",
                          "The owner hears PortTxReady when a frame leaving a priority queue "
                          "takes it from above to at most this many bytes (0: when it empties).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&EthNetDevice::m_txReadyThreshold),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "VerifyFcs",
                "Check the FCS of every data frame received (reads the whole frame). "
                "Off by default: frames are corrupted by the ReceiveErrorModel only.",
                BooleanValue(false),
                MakeBooleanAccessor(&EthNetDevice::SetVerifyFcs, &EthNetDevice::GetVerifyFcs),
                MakeBooleanChecker())
            .AddAttribute("ReceiveErrorModel",
                          "Error model applied to arriving data frames; a corrupted frame "
                          "fails its FCS and is dropped (counted, PhyRxDrop). The model "
                          "decides only; it must not change the frame's bytes.",
                          PointerValue(),
                          MakePointerAccessor(&EthNetDevice::SetReceiveErrorModel,
                                              &EthNetDevice::GetReceiveErrorModel),
                          MakePointerChecker<ErrorModel>())
            .AddTraceSource("MacTx",
                            "A frame was queued for transmission (Enqueue or Send).",
                            MakeTraceSourceAccessor(&EthNetDevice::m_macTxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("MacTxDrop",
                            "NetDevice::Send refused a packet (larger than the MTU, queue "
                            "full, not a MAC address).",
                            MakeTraceSourceAccessor(&EthNetDevice::m_macTxDropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("MacRx",
                            "A data frame (with its header and FCS) was handed to the owner or "
                            "the ns-3 stack.",
                            MakeTraceSourceAccessor(&EthNetDevice::m_macRxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyTxBegin",
                            "A data frame's first byte went on the wire.",
                            MakeTraceSourceAccessor(&EthNetDevice::m_phyTxBeginTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyTxEnd",
                            "A data frame's wire time (with its gap) ended.",
                            MakeTraceSourceAccessor(&EthNetDevice::m_phyTxEndTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyRxEnd",
                            "A data frame arrived (before the FCS check).",
                            MakeTraceSourceAccessor(&EthNetDevice::m_phyRxEndTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PhyRxDrop",
                            "An arriving data frame failed its FCS and was dropped.",
                            MakeTraceSourceAccessor(&EthNetDevice::m_phyRxDropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("Sniffer",
                            "Frames sent and received, data and PFC (for pcap).",
                            MakeTraceSourceAccessor(&EthNetDevice::m_snifferTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PromiscSniffer",
                            "Frames sent and received, data and PFC (for pcap, promiscuous).",
                            MakeTraceSourceAccessor(&EthNetDevice::m_promiscSnifferTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("PfcSent",
                            "A PFC frame went on the wire naming a priority; arguments: the "
                            "priority, its quanta (0: XON). Once per priority named.",
                            MakeTraceSourceAccessor(&EthNetDevice::m_pfcSentTrace),
                            "ns3::EthNetDevice::PfcTracedCallback")
            .AddTraceSource("PfcReceived",
                            "A PFC frame arrived naming a priority; arguments: the priority, "
                            "its quanta. Once per priority named (also those not in "
                            "PfcEnabled, which ignore it).",
                            MakeTraceSourceAccessor(&EthNetDevice::m_pfcReceivedTrace),
                            "ns3::EthNetDevice::PfcTracedCallback")
            .AddTraceSource("TxQueueBytes",
                            "Bytes in a priority queue changed; arguments: the priority, bytes.",
                            MakeTraceSourceAccessor(&EthNetDevice::m_queueBytesTrace),
                            "ns3::EthNetDevice::QueueBytesTracedCallback");
    return tid;
}

EthNetDevice::EthNetDevice()
{
    NS_LOG_FUNCTION(this);
    // One event object for every end of transmission (at most one is pending): no
    // allocation per frame. It holds a raw pointer, so it does not keep the port alive.
    m_txCompleteEvent = Ptr<EventImpl>(MakeEvent(&EthNetDevice::TransmitComplete, this), false);
    m_macTxTrace.Watch(&m_watched, WATCH_MAC_TX);
    m_macRxTrace.Watch(&m_watched, WATCH_MAC_RX);
    m_phyTxBeginTrace.Watch(&m_watched, WATCH_PHY_TX_BEGIN);
    m_phyTxEndTrace.Watch(&m_watched, WATCH_PHY_TX_END);
    m_phyRxEndTrace.Watch(&m_watched, WATCH_PHY_RX_END);
    m_snifferTrace.Watch(&m_watched, WATCH_SNIFFER);
    m_promiscSnifferTrace.Watch(&m_watched, WATCH_PROMISC_SNIFFER);
    m_queueBytesTrace.Watch(&m_watched, WATCH_QUEUE_BYTES);
    for (uint32_t d = 0; d < 64; ++d)
    {
        m_dscpToPrio[d] = static_cast<uint8_t>(d >> 3);
    }
    m_rate = DataRate("100Gb/s");
    Configure();
}

EthNetDevice::~EthNetDevice()
{
    NS_LOG_FUNCTION(this);
}

void
EthNetDevice::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_pauseEvent.Cancel();
    m_refreshEvent.Cancel();
    m_refreshPending = false;
    for (auto& p : m_prio)
    {
        p.queue.Clear();
        p.bytes = 0;
    }
    m_nonEmpty = 0;
    m_txCurrent = TxItem();
    m_owner = nullptr;
    m_txDir = nullptr;
    m_channel = nullptr;
    m_node = nullptr;
    SetReceiveErrorModel(nullptr);
    m_rxCallback.Nullify();
    m_promiscCallback.Nullify();
    NetDevice::DoDispose();
}

void
EthNetDevice::DoInitialize()
{
    NS_LOG_FUNCTION(this);
    Ptr<EthNetDevice> peer = GetPeer();
    NS_ABORT_MSG_IF(peer && peer->GetDataRate() != m_rate,
                    Where() << " has DataRate=" << m_rate << " but its peer " << peer->Where()
                            << " has DataRate=" << peer->GetDataRate()
                            << "; an Ethernet link runs at one rate: set the same DataRate on "
                               "both ends (EthHelper::SetDeviceAttribute).");
    NetDevice::DoInitialize();
}

std::string
EthNetDevice::Where() const
{
    std::ostringstream os;
    os << "EthNetDevice";
    if (m_node)
    {
        os << " on node " << m_node->GetId() << " device " << m_ifIndex;
    }
    return os.str();
}

// ---------------------------------------------------------------- attributes

void
EthNetDevice::SetDataRate(DataRate rate)
{
    NS_ABORT_MSG_IF(rate.GetBitRate() == 0,
                    Where() << " attribute DataRate=0bps: give the port a positive rate, e.g. "
                               "100Gb/s.");
    m_rate = rate;
    m_txCarry = 0.0;
    Configure();
}

void
EthNetDevice::SetMtuAttribute(uint16_t mtu)
{
    m_mtu = mtu;
    Configure();
}

void
EthNetDevice::SetEtsWeights(std::string weights)
{
    std::vector<unsigned long> values;
    std::string error;
    NS_ABORT_MSG_UNLESS(ParseList(weights, 255, values, error),
                        Where() << " attribute EtsWeights='" << weights << "': " << error
                                << "; give eight weights 'w0,...,w7' from 0 (strict) to 255.");
    NS_ABORT_MSG_UNLESS(values.empty() || values.size() == NUM_PRIORITIES,
                        Where() << " attribute EtsWeights='" << weights << "' has " << values.size()
                                << " entries; give eight, one per priority 0..7 (0 = strict), "
                                   "e.g. '0,0,0,50,50,0,0,0'.");
    for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
    {
        m_etsWeights[p] = values.empty() ? 0 : static_cast<uint8_t>(values[p]);
    }
    Configure();
}

std::string
EthNetDevice::GetEtsWeights() const
{
    std::ostringstream os;
    for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
    {
        os << (p ? "," : "") << unsigned(m_etsWeights[p]);
    }
    return os.str();
}

void
EthNetDevice::SetDscpToPriority(std::string map)
{
    std::vector<unsigned long> values;
    std::string error;
    NS_ABORT_MSG_UNLESS(ParseList(map, NUM_PRIORITIES - 1, values, error),
                        Where() << " attribute DscpToPriority='" << map << "': " << error
                                << "; give 64 priorities 0..7, one per DSCP, or '' for "
                                   "DSCP >> 3.");
    NS_ABORT_MSG_UNLESS(values.empty() || values.size() == 64,
                        Where() << " attribute DscpToPriority has " << values.size()
                                << " entries; give 64, the priority of DSCP 0..63, or '' "
                                   "for DSCP >> 3.");
    for (uint32_t d = 0; d < 64; ++d)
    {
        m_dscpToPrio[d] = static_cast<uint8_t>(values.empty() ? d >> 3 : values[d]);
    }
    m_dscpText = map;
}

std::string
EthNetDevice::GetDscpToPriority() const
{
    return m_dscpText;
}

void
EthNetDevice::SetPfcEnabled(uint8_t mask)
{
    // A priority leaving the lossless set is no longer held by the peer's PFC.
    const uint8_t released = m_pausedByPeer & static_cast<uint8_t>(~mask);
    m_pfcEnabled = mask;
    if (released != 0)
    {
        const Time now = Simulator::Now();
        for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
        {
            if (released & (1u << p))
            {
                m_prio[p].pausedTotal += now - m_prio[p].pauseStart;
                m_prio[p].pausedUntil = now;
            }
        }
        m_pausedByPeer &= mask;
        SchedulePauseExpiry();
        TrySend();
    }
}

uint8_t
EthNetDevice::GetPfcEnabled() const
{
    return m_pfcEnabled;
}

void
EthNetDevice::SetVerifyFcs(bool on)
{
    m_watched = static_cast<uint16_t>(on ? (m_watched | WATCH_VERIFY_FCS)
                                         : (m_watched & ~WATCH_VERIFY_FCS));
}

bool
EthNetDevice::GetVerifyFcs() const
{
    return (m_watched & WATCH_VERIFY_FCS) != 0;
}

void
EthNetDevice::SetMacAddress(Mac48Address address)
{
    m_address = address;
}

void
EthNetDevice::SetReceiveErrorModel(Ptr<ErrorModel> em)
{
    m_receiveErrorModel = em;
    m_watched = static_cast<uint16_t>(em ? (m_watched | WATCH_RX_ERROR_MODEL)
                                         : (m_watched & ~WATCH_RX_ERROR_MODEL));
}

Ptr<ErrorModel>
EthNetDevice::GetReceiveErrorModel() const
{
    return m_receiveErrorModel;
}

void
EthNetDevice::Configure()
{
    const double stepsPerSecond = static_cast<double>(Seconds(1).GetTimeStep());
    m_stepsPerByte = 8.0 * stepsPerSecond / static_cast<double>(m_rate.GetBitRate());
    m_headerTime =
        TimeStep(std::llround((EthFrame::PREAMBLE_SFD + EthFrame::MIN_FRAME) * m_stepsPerByte));
    // ETS: the smallest weight's quantum holds a frame of the MTU, so that every visit of
    // the round robin sends at least one such frame.
    m_strictMask = 0;
    uint32_t minWeight = 0;
    for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
    {
        if (m_etsWeights[p] == 0)
        {
            m_strictMask |= static_cast<uint8_t>(1u << p);
        }
        else if (minWeight == 0 || m_etsWeights[p] < minWeight)
        {
            minWeight = m_etsWeights[p];
        }
    }
    m_etsMask = static_cast<uint8_t>(~m_strictMask);
    const uint32_t maxWire =
        EthFrame::WireBytes(m_mtu + EthFrame::HEADER_SIZE + EthFrame::FCS_SIZE);
    const uint32_t unit = minWeight == 0 ? 0 : (maxWire + minWeight - 1) / minWeight;
    for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
    {
        m_prio[p].quantum = m_etsWeights[p] * unit;
        m_prio[p].deficit = 0;
    }
    m_drrCurrent = m_etsMask != 0 ? static_cast<uint8_t>(__builtin_ctz(m_etsMask)) : 0;
    m_drrCharged = false;
}

Time
EthNetDevice::SerializationTime(uint32_t wireBytes, bool backToBack)
{
    const double exact = wireBytes * m_stepsPerByte + (backToBack ? m_txCarry : 0.0);
    const int64_t steps = std::llround(exact);
    m_txCarry = exact - static_cast<double>(steps);
    return TimeStep(steps);
}

Time
EthNetDevice::GetFrameTime(uint32_t frameBytes) const
{
    return TimeStep(std::llround(EthFrame::WireBytes(frameBytes) * m_stepsPerByte));
}

Time
EthNetDevice::GetPauseTime(uint16_t quanta) const
{
    // In integers: quanta x 512 x steps per second / bit rate, to the nearest step.
    __extension__ typedef unsigned __int128 u128; // GCC and Clang; __extension__: not ISO C++
    const u128 bitRate = m_rate.GetBitRate();
    const u128 num = static_cast<u128>(quanta) * PAUSE_QUANTUM_BITS *
                     static_cast<u128>(Seconds(1).GetTimeStep());
    return TimeStep(static_cast<int64_t>((num + bitRate / 2) / bitRate));
}

// ---------------------------------------------------------------- owner API

bool
EthNetDevice::Attach(Ptr<EthChannel> channel)
{
    NS_LOG_FUNCTION(this << channel);
    NS_ABORT_MSG_IF(m_channel,
                    Where() << " already has a cable; a port takes one (install another "
                               "port for another link).");
    m_channel = channel;
    channel->Attach(this);
    return true;
}

void
EthNetDevice::NotifyLinkUp()
{
    NS_LOG_FUNCTION(this);
    m_linkUp = true;
    m_linkChangeCallbacks();
    TrySend();
}

void
EthNetDevice::SetOwner(EthPortOwner* owner, uint8_t port)
{
    m_owner = owner;
    m_ownerPort = port;
}

EthPortOwner*
EthNetDevice::GetOwner() const
{
    return m_owner;
}

Ptr<EthNetDevice>
EthNetDevice::GetPeer() const
{
    return m_channel ? m_channel->GetPeer(this) : nullptr;
}

void
EthNetDevice::SetCutThrough(bool on, Time rxDelay)
{
    NS_ABORT_MSG_IF(rxDelay.IsStrictlyNegative(),
                    Where() << "::SetCutThrough: rxDelay " << rxDelay.As(Time::NS)
                            << " is negative; give 0 or a forwarding latency.");
    m_cutThrough = on;
    m_rxDelay = rxDelay;
    if (m_channel)
    {
        m_channel->UpdatePortModes();
    }
}

bool
EthNetDevice::IsCutThrough() const
{
    return m_cutThrough;
}

Time
EthNetDevice::GetRxDelay() const
{
    return m_rxDelay;
}

uint8_t
EthNetDevice::Classify(const uint8_t* frame, uint32_t len) const
{
    if (len < kClassifyBytes || EthFrame::PeekEtherType(frame) != EthFrame::ETHERTYPE_IPV4)
    {
        return 0;
    }
    return m_dscpToPrio[EthFrame::PeekDscp(frame) & 63];
}

bool
EthNetDevice::Enqueue(Ptr<Packet> frame, uint8_t prio, uint32_t cookie)
{
    const uint32_t bytes = frame->GetSize();
    DoEnqueue(IbOwnedPacket(frame), bytes, prio, cookie, Time(0));
    return true;
}

bool
EthNetDevice::Enqueue(Ptr<Packet> frame, uint8_t prio, uint32_t cookie, Time earliestStart)
{
    const uint32_t bytes = frame->GetSize();
    DoEnqueue(IbOwnedPacket(frame), bytes, prio, cookie, earliestStart);
    return true;
}

void
EthNetDevice::DoEnqueue(IbOwnedPacket frame,
                        uint32_t bytes,
                        uint8_t prio,
                        uint32_t cookie,
                        Time earliestStart)
{
    NS_ABORT_MSG_IF(prio >= NUM_PRIORITIES,
                    Where() << ": a frame was queued on priority " << unsigned(prio)
                            << "; priorities are 0..7.");
    FireIfConnected(m_watched & WATCH_MAC_TX, m_macTxTrace, frame.Share());
    Prio& q = m_prio[prio];
    TxItem item;
    item.frame = std::move(frame);
    item.bytes = bytes;
    item.cookie = cookie;
    item.earliestStart = earliestStart;
    q.queue.Push(std::move(item));
    q.bytes += bytes;
    m_nonEmpty |= static_cast<uint8_t>(1u << prio);
    FireIfConnected(m_watched & WATCH_QUEUE_BYTES, m_queueBytesTrace, prio, q.bytes);
    if (!m_txBusy)
    {
        TrySend();
    }
}

// ---------------------------------------------------------------- transmit

void
EthNetDevice::TrySend()
{
    if (m_txBusy || !m_linkUp)
    {
        return;
    }
    if (m_pfcPending != 0)
    {
        SendPfcFrame(); // ahead of every data frame; its end calls TrySend again
        return;
    }
    const uint8_t eligible = m_nonEmpty & static_cast<uint8_t>(~m_pausedByPeer);
    if (eligible == 0)
    {
        return;
    }
    const uint8_t strict = eligible & m_strictMask;
    const uint8_t prio = strict != 0 ? HighestBit(strict) : SelectEts(eligible);
    Prio& q = m_prio[prio];
    const uint32_t before = q.bytes;
    m_txCurrent = q.queue.Pop();
    q.bytes -= m_txCurrent.bytes;
    if (q.queue.Empty())
    {
        m_nonEmpty &= static_cast<uint8_t>(~(1u << prio));
    }
    StartTransmission(prio, before);
}

uint8_t
EthNetDevice::SelectEts(uint8_t eligible)
{
    NS_ASSERT(eligible != 0 && (eligible & m_strictMask) == 0);
    // Deficit round robin. Terminates: every visit to an eligible priority adds its
    // quantum (> 0) until the deficit covers the head frame.
    for (;;)
    {
        const uint8_t c = m_drrCurrent;
        Prio& q = m_prio[c];
        if (eligible & (1u << c))
        {
            if (!m_drrCharged)
            {
                q.deficit += q.quantum;
                m_drrCharged = true;
            }
            const uint32_t wire = EthFrame::WireBytes(q.queue.Front().bytes);
            if (q.deficit >= wire)
            {
                q.deficit -= wire;
                return c;
            }
        }
        else if (q.queue.Empty())
        {
            q.deficit = 0; // an idle priority keeps no credit; a paused one keeps its own
        }
        // The next ETS priority, cyclically.
        const uint8_t above = static_cast<uint8_t>(m_etsMask & ~((2u << c) - 1));
        m_drrCurrent = static_cast<uint8_t>(__builtin_ctz(above != 0 ? above : m_etsMask));
        m_drrCharged = false;
    }
}

void
EthNetDevice::StartTransmission(uint8_t prio, uint32_t bytesBefore)
{
    const TxItem& item = m_txCurrent;
    const uint32_t bytes = item.bytes;
    const uint32_t cookie = item.cookie;
    const Time now = Simulator::Now();
    const Time start = std::max(now, item.earliestStart);
    const bool backToBack = start == m_txFreeAt;
    const Time startDelay = start - now;
    const Time txEnd = startDelay + SerializationTime(EthFrame::WireBytes(bytes), backToBack);
    const Time headerEnd = startDelay + m_headerTime;
    m_txBusy = true;
    m_txIsPfc = false;
    m_txPrio = prio;
    ++m_txFrames;
    m_txBytes += bytes;
    m_txFreeAt = now + txEnd;
    NS_LOG_LOGIC("priority " << unsigned(prio) << " sends " << bytes << " bytes until "
                             << m_txFreeAt);
    if (m_watched & (WATCH_PHY_TX_BEGIN | WATCH_SNIFFER | WATCH_PROMISC_SNIFFER))
    {
        // At the first byte on the wire (pcap records are stamped with the call's time).
        const Ptr<Packet> p = item.frame.Share();
        if (startDelay.IsZero())
        {
            FireTxBeginTraces(p);
        }
        else
        {
            Simulator::Schedule(startDelay, &EthNetDevice::FireTxBeginTraces, this, p);
        }
    }
    Simulator::Schedule(txEnd, m_txCompleteEvent);
    // The frame stays with the port until the end of its wire time only for PhyTxEnd; the
    // cable then carries a copy, since a switch downstream rewrites what it receives
    // (EthFrame::RewriteHop) before the last byte leaves here. Otherwise its reference
    // goes to the cable outright.
    IbOwnedPacket onCable = !(m_watched & WATCH_PHY_TX_END)
                                ? std::move(m_txCurrent.frame)
                                : IbOwnedPacket(m_txCurrent.frame.Get()->Copy());
    m_txDir->SendData(std::move(onCable), bytes, headerEnd, txEnd);
    const uint32_t bytesAfter = m_prio[prio].bytes;
    FireIfConnected(m_watched & WATCH_QUEUE_BYTES, m_queueBytesTrace, prio, bytesAfter);
    if (m_owner != nullptr)
    {
        // Last: the owner may queue more (TrySend waits for the transmitter).
        m_owner->PortTxStarted(m_ownerPort, this, prio, bytes, cookie);
        if (bytesBefore > m_txReadyThreshold && bytesAfter <= m_txReadyThreshold)
        {
            m_owner->PortTxReady(m_ownerPort, this, prio);
        }
    }
}

void
EthNetDevice::FireTxBeginTraces(Ptr<Packet> p)
{
    FireIfConnected(m_watched & WATCH_PHY_TX_BEGIN, m_phyTxBeginTrace, p);
    FireIfConnected(m_watched & WATCH_SNIFFER, m_snifferTrace, p);
    FireIfConnected(m_watched & WATCH_PROMISC_SNIFFER, m_promiscSnifferTrace, p);
}

void
EthNetDevice::TransmitComplete()
{
    m_txBusy = false;
    if (!m_txIsPfc)
    {
        if (m_txCurrent.frame && (m_watched & WATCH_PHY_TX_END))
        {
            m_phyTxEndTrace(m_txCurrent.frame.Share());
        }
        m_txCurrent = TxItem();
    }
    m_txIsPfc = false;
    TrySend();
}

// ---------------------------------------------------------------- PFC, sending

void
EthNetDevice::SetPfcXoff(uint8_t prio, bool xoff)
{
    NS_LOG_FUNCTION(this << unsigned(prio) << xoff);
    NS_ABORT_MSG_UNLESS(prio < NUM_PRIORITIES && (m_pfcEnabled & (1u << prio)),
                        Where() << "::SetPfcXoff: priority " << unsigned(prio)
                                << " is not lossless here (PfcEnabled=0x" << std::hex
                                << unsigned(m_pfcEnabled) << std::dec
                                << "); pause only priorities of PfcEnabled, or add bit "
                                << unsigned(prio) << " to it.");
    const uint8_t bit = static_cast<uint8_t>(1u << prio);
    if (((m_xoff & bit) != 0) == xoff)
    {
        return;
    }
    m_xoff = static_cast<uint8_t>(xoff ? (m_xoff | bit) : (m_xoff & ~bit));
    m_pfcPending |= bit;
    if (m_xoff == 0 && m_refreshPending)
    {
        m_refreshEvent.Cancel();
        m_refreshPending = false;
    }
    TrySend();
}

bool
EthNetDevice::IsPfcXoff(uint8_t prio) const
{
    return (m_xoff >> (prio & 7)) & 1;
}

void
EthNetDevice::SendPfcFrame()
{
    NS_ASSERT(!m_txBusy && m_pfcPending != 0);
    std::array<uint16_t, 8> quanta{};
    const uint8_t classes = m_pfcPending;
    m_pfcPending = 0;
    for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
    {
        if (classes & (1u << p))
        {
            quanta[p] = (m_xoff & (1u << p)) ? m_pauseQuanta : 0;
            ++m_prio[p].pfcSent;
            m_pfcSentTrace(p, quanta[p]);
        }
    }
    Ptr<Packet> frame = EthFrame::MakePfc(m_address, classes, quanta);
    const Time now = Simulator::Now();
    const Time txEnd = SerializationTime(EthFrame::WireBytes(frame->GetSize()), now == m_txFreeAt);
    NS_LOG_LOGIC("PFC frame for classes 0x" << std::hex << unsigned(classes) << std::dec
                                            << " until " << now + txEnd);
    m_txBusy = true;
    m_txIsPfc = true;
    m_txFreeAt = now + txEnd;
    FireIfConnected(m_watched & WATCH_SNIFFER, m_snifferTrace, frame);
    FireIfConnected(m_watched & WATCH_PROMISC_SNIFFER, m_promiscSnifferTrace, frame);
    Simulator::Schedule(txEnd, m_txCompleteEvent);
    m_txDir->SendControl(frame, txEnd);
    if (m_xoff != 0 && !m_refreshPending)
    {
        // XOFFs are repeated before half their pause time has run out at the peer.
        m_refreshPending = true;
        m_refreshEvent =
            Simulator::Schedule(GetPauseTime(static_cast<uint16_t>((m_pauseQuanta + 1u) / 2)),
                                &EthNetDevice::RefreshXoff,
                                this);
    }
}

void
EthNetDevice::RefreshXoff()
{
    m_refreshPending = false;
    if (m_xoff == 0)
    {
        return;
    }
    m_pfcPending |= m_xoff;
    TrySend();
}

// ---------------------------------------------------------------- PFC, receiving

void
EthNetDevice::ReceiveControl(Ptr<Packet> frame)
{
    NS_LOG_FUNCTION(this << frame);
    FireIfConnected(m_watched & WATCH_SNIFFER, m_snifferTrace, frame);
    FireIfConnected(m_watched & WATCH_PROMISC_SNIFFER, m_promiscSnifferTrace, frame);
    uint8_t buf[EthFrame::MIN_FRAME] = {};
    const uint32_t len = frame->CopyData(buf, sizeof(buf));
    uint8_t classes = 0;
    std::array<uint16_t, 8> quanta{};
    if (!EthFrame::ParsePfc(buf, len, classes, quanta))
    {
        NS_LOG_LOGIC("a MAC control frame that is not PFC; dropped");
        return;
    }
    ApplyPfc(classes, quanta);
}

void
EthNetDevice::ApplyPfc(uint8_t classes, const std::array<uint16_t, 8>& quanta)
{
    const Time now = Simulator::Now();
    bool resumed = false;
    for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
    {
        const uint8_t bit = static_cast<uint8_t>(1u << p);
        if (!(classes & bit))
        {
            continue;
        }
        Prio& q = m_prio[p];
        ++q.pfcReceived;
        m_pfcReceivedTrace(p, quanta[p]);
        if (!(m_pfcEnabled & bit))
        {
            NS_LOG_LOGIC("PFC for priority " << unsigned(p) << ", not in PfcEnabled; ignored");
            continue;
        }
        if (quanta[p] == 0)
        {
            if (m_pausedByPeer & bit)
            {
                q.pausedTotal += now - q.pauseStart;
                m_pausedByPeer &= static_cast<uint8_t>(~bit);
                resumed = true;
            }
            q.pausedUntil = now;
            continue;
        }
        q.pausedUntil = now + GetPauseTime(quanta[p]);
        if (!(m_pausedByPeer & bit))
        {
            q.pauseStart = now;
            m_pausedByPeer |= bit;
        }
    }
    SchedulePauseExpiry();
    if (resumed)
    {
        TrySend();
    }
}

void
EthNetDevice::SchedulePauseExpiry()
{
    m_pauseEvent.Cancel();
    if (m_pausedByPeer == 0)
    {
        return;
    }
    Time earliest = Time::Max();
    for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
    {
        if (m_pausedByPeer & (1u << p))
        {
            earliest = std::min(earliest, m_prio[p].pausedUntil);
        }
    }
    m_pauseEvent =
        Simulator::Schedule(earliest - Simulator::Now(), &EthNetDevice::PauseExpired, this);
}

void
EthNetDevice::PauseExpired()
{
    const Time now = Simulator::Now();
    for (uint8_t p = 0; p < NUM_PRIORITIES; ++p)
    {
        Prio& q = m_prio[p];
        if ((m_pausedByPeer & (1u << p)) && q.pausedUntil <= now)
        {
            q.pausedTotal += q.pausedUntil - q.pauseStart;
            m_pausedByPeer &= static_cast<uint8_t>(~(1u << p));
        }
    }
    SchedulePauseExpiry();
    TrySend();
}

Time
EthNetDevice::GetPausedTime(uint8_t prio) const
{
    const Prio& q = m_prio[prio & 7];
    return IsPausedByPeer(prio) ? q.pausedTotal + (Simulator::Now() - q.pauseStart) : q.pausedTotal;
}

// ---------------------------------------------------------------- receive

void
EthNetDevice::ReceiveData(IbOwnedPacket frame, uint32_t bytes)
{
    uint8_t head[kClassifyBytes] = {};
    const uint32_t len = frame.Get()->CopyData(head, kClassifyBytes);
    if (len >= EthFrame::HEADER_SIZE &&
        EthFrame::PeekEtherType(head) == EthFrame::ETHERTYPE_MAC_CONTROL)
    {
        // A PFC frame an owner queued as data (a NIC's own flow control, a test).
        ReceiveControl(frame.Release());
        return;
    }
    FireIfConnected(m_watched & WATCH_PHY_RX_END, m_phyRxEndTrace, frame.Share());
    if (((m_watched & WATCH_RX_ERROR_MODEL) && m_receiveErrorModel->IsCorrupt(frame.Share())) ||
        ((m_watched & WATCH_VERIFY_FCS) && !EthFrame::CheckFcs(*frame.Get())))
    {
        NS_LOG_LOGIC("frame failed its FCS; dropped");
        ++m_fcsErrors;
        m_phyRxDropTrace(frame.Share());
        return;
    }
    ++m_rxFrames;
    m_rxBytes += bytes;
    if (m_watched & (WATCH_SNIFFER | WATCH_PROMISC_SNIFFER))
    {
        const Ptr<Packet> p = frame.Share();
        FireIfConnected(m_watched & WATCH_SNIFFER, m_snifferTrace, p);
        FireIfConnected(m_watched & WATCH_PROMISC_SNIFFER, m_promiscSnifferTrace, p);
    }
    const uint8_t prio = Classify(head, len);
    FireIfConnected(m_watched & WATCH_MAC_RX, m_macRxTrace, frame.Share());
    if (m_owner != nullptr)
    {
        m_owner->PortReceive(m_ownerPort, this, frame.Release(), prio);
        return;
    }
    DeliverUp(frame.Release());
}

void
EthNetDevice::DeliverUp(Ptr<Packet> frame)
{
    if (m_rxCallback.IsNull() && m_promiscCallback.IsNull())
    {
        return;
    }
    uint8_t macs[12];
    frame->CopyData(macs, sizeof(macs));
    Mac48Address dst;
    Mac48Address src;
    dst.CopyFrom(macs);
    src.CopyFrom(macs + 6);
    const uint16_t etherType = EthFrame::Unframe(frame);
    NetDevice::PacketType type = NetDevice::PACKET_OTHERHOST;
    if (dst == m_address)
    {
        type = NetDevice::PACKET_HOST;
    }
    else if (dst.IsBroadcast())
    {
        type = NetDevice::PACKET_BROADCAST;
    }
    else if (dst.IsGroup())
    {
        type = NetDevice::PACKET_MULTICAST;
    }
    if (!m_promiscCallback.IsNull())
    {
        m_promiscCallback(this, frame, etherType, src, dst, type);
    }
    if (type != NetDevice::PACKET_OTHERHOST && !m_rxCallback.IsNull())
    {
        m_rxCallback(this, frame, etherType, src);
    }
}

// ---------------------------------------------------------------- counters

uint64_t
EthNetDevice::GetTxFrames() const
{
    return m_txFrames;
}

uint64_t
EthNetDevice::GetTxBytes() const
{
    return m_txBytes;
}

uint64_t
EthNetDevice::GetRxFrames() const
{
    return m_rxFrames;
}

uint64_t
EthNetDevice::GetRxBytes() const
{
    return m_rxBytes;
}

uint64_t
EthNetDevice::GetTxDrops() const
{
    return m_txDrops;
}

uint64_t
EthNetDevice::GetPfcFramesSent(uint8_t prio) const
{
    return m_prio[prio & 7].pfcSent;
}

uint64_t
EthNetDevice::GetPfcFramesReceived(uint8_t prio) const
{
    return m_prio[prio & 7].pfcReceived;
}

uint64_t
EthNetDevice::GetFcsErrors() const
{
    return m_fcsErrors;
}

// ---------------------------------------------------------------- NetDevice

void
EthNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
EthNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
EthNetDevice::GetChannel() const
{
    return m_channel;
}

void
EthNetDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address
EthNetDevice::GetAddress() const
{
    return m_address;
}

bool
EthNetDevice::SetMtu(const uint16_t mtu)
{
    if (mtu < 68)
    {
        NS_LOG_ERROR(Where() << "::SetMtu(" << mtu << "): an IPv4 MTU is at least 68 bytes");
        return false;
    }
    SetMtuAttribute(mtu);
    return true;
}

uint16_t
EthNetDevice::GetMtu() const
{
    return m_mtu;
}

bool
EthNetDevice::IsLinkUp() const
{
    return m_linkUp;
}

void
EthNetDevice::AddLinkChangeCallback(Callback<void> callback)
{
    m_linkChangeCallbacks.ConnectWithoutContext(callback);
}

bool
EthNetDevice::IsBroadcast() const
{
    return true;
}

Address
EthNetDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
EthNetDevice::IsMulticast() const
{
    return true;
}

Address
EthNetDevice::GetMulticast(Ipv4Address multicastGroup) const
{
    return Mac48Address::GetMulticast(multicastGroup);
}

Address
EthNetDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
EthNetDevice::IsPointToPoint() const
{
    // ns-3's distributed engines take their lookahead from the point-to-point devices whose
    // peer is on another rank, and look at no other device: a cable between ranks reports
    // itself as one (as IbNetDevice's do).
    return m_channel && m_channel->IsBetweenRanks();
}

bool
EthNetDevice::IsBridge() const
{
    return false;
}

bool
EthNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber)
{
    return SendFrom(packet, m_address, dest, protocolNumber);
}

bool
EthNetDevice::SendFrom(Ptr<Packet> packet,
                       const Address& source,
                       const Address& dest,
                       uint16_t protocolNumber)
{
    NS_LOG_FUNCTION(this << packet << source << dest << protocolNumber);
    if (!Mac48Address::IsMatchingType(dest) || !Mac48Address::IsMatchingType(source))
    {
        NS_LOG_ERROR(Where() << "::Send: source " << source << " or destination " << dest
                             << " is not a Mac48Address; dropped");
        ++m_txDrops;
        m_macTxDropTrace(packet);
        return false;
    }
    if (packet->GetSize() > m_mtu)
    {
        NS_LOG_WARN(Where() << "::Send: " << packet->GetSize() << " bytes exceed the MTU " << m_mtu
                            << "; dropped");
        ++m_txDrops;
        m_macTxDropTrace(packet);
        return false;
    }
    EthFrame::Frame(packet,
                    Mac48Address::ConvertFrom(source),
                    Mac48Address::ConvertFrom(dest),
                    protocolNumber,
                    0);
    uint8_t head[kClassifyBytes] = {};
    const uint32_t len = packet->CopyData(head, kClassifyBytes);
    const uint8_t prio = Classify(head, len);
    const uint32_t bytes = packet->GetSize();
    if (m_prio[prio].bytes + bytes > m_txQueueMaxBytes)
    {
        NS_LOG_LOGIC("priority " << unsigned(prio) << " queue full; dropped");
        ++m_txDrops;
        m_macTxDropTrace(packet);
        return false;
    }
    DoEnqueue(IbOwnedPacket(packet), bytes, prio, STACK_COOKIE, Time(0));
    return true;
}

Ptr<Node>
EthNetDevice::GetNode() const
{
    return m_node;
}

void
EthNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool
EthNetDevice::NeedsArp() const
{
    return true;
}

void
EthNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_rxCallback = cb;
}

void
EthNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback cb)
{
    m_promiscCallback = cb;
}

bool
EthNetDevice::SupportsSendFrom() const
{
    return true;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-switch.h"

#include "eth-flow-hash.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/eth-channel.h"
#include "ns3/eth-frame.h"
#include "ns3/eth-net-device.h"
#include "ns3/ib-ns3-compat.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthSwitch");

NS_OBJECT_ENSURE_REGISTERED(EthSwitch);

namespace
{

/// No route in the direct table.
constexpr uint16_t kNoGroup = 0xFFFF;
/// The direct table spans at most this many addresses (2 bytes each); beyond, a scan.
constexpr uint64_t kMaxDirect = 1u << 20;
/// Bytes of a frame's start the switch reads: Ethernet, IPv4 with options, L4 ports.
constexpr uint32_t kPeekBytes = 64;
/// IPv4 TTL's offset in the frame.
constexpr uint32_t kTtlOffset = 14 + 8;
/// Ethernet header + FCS around an IP packet.
constexpr uint32_t kFrameOverhead = 18;

/// @return the number of bits set in @p v
uint32_t
PopCount(uint8_t v)
{
    uint32_t n = 0;
    for (; v != 0; v &= v - 1)
    {
        ++n;
    }
    return n;
}

} // namespace

TypeId
EthSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::EthSwitch")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<EthSwitch>()
            .AddAttribute(
                "OrderSimultaneousArrivals",
                "Forward the frames that arrive at the same instant in the order of their "
                "input ports, after every other event of that instant, instead of in the order "
                "their arrival events were scheduled. The two orders differ between a "
                "sequential run and a distributed (MPI) run, whose events from other ranks are "
                "scheduled when their message comes in; set it in both runs to compare them "
                "frame for frame. It costs one event per instant with arrivals.",
                BooleanValue(false),
                MakeBooleanAccessor(&EthSwitch::m_orderArrivals),
                MakeBooleanChecker())
            .AddAttribute(
                "ForwardingLatency",
                "Port-to-port latency: from the arrival of a frame's first 64 bytes (cut-"
                "through) or last byte (store-and-forward) to its queueing on the output. "
                "Default: about 500 ns, reported for Broadcom Tomahawk L3 switching "
                "(ipspace.net, 'Broadcom Tomahawk 101', 2015).",
                TimeValue(NanoSeconds(500)),
                MakeTimeAccessor(&EthSwitch::SetForwardingLatency,
                                 &EthSwitch::GetForwardingLatency),
                MakeIbTimeChecker("EthSwitch", "ForwardingLatency", Time(0)))
            .AddAttribute("CutThrough",
                          "Forward once the first 64 bytes of a frame have arrived (true) or "
                          "once the whole frame has (false, store-and-forward).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&EthSwitch::SetCutThrough, &EthSwitch::IsCutThrough),
                          MakeBooleanChecker())
            .AddAttribute("LoadBalancing",
                          "How a port of an ECMP group is chosen: Ecmp (hash of the 5-tuple), "
                          "Spray (round robin per frame), Flowlet (per flowlet, least-loaded "
                          "port for a new one) or Adaptive (least-loaded port per frame).",
                          EnumValue(EthSwitch::ECMP),
                          ib_compat::MakeEnumAccessor<LoadBalancing>(&EthSwitch::m_lb),
                          MakeEnumChecker(EthSwitch::ECMP,
                                          "Ecmp",
                                          EthSwitch::SPRAY,
                                          "Spray",
                                          EthSwitch::FLOWLET,
                                          "Flowlet",
                                          EthSwitch::ADAPTIVE,
                                          "Adaptive"))
            .AddAttribute(
                "HashFunction",
                "Flow hash for Ecmp and Flowlet: Crc32 (CRC-32 of the 5-tuple, "
                "seeded through a non-linear finalizer) or XorFold (the tuple's "
                "words XORed and folded: linear, polarizes whatever the seeds).",
                EnumValue(EthSwitch::CRC32),
                ib_compat::MakeEnumAccessor<HashFunction>(&EthSwitch::m_hash),
                MakeEnumChecker(EthSwitch::CRC32, "Crc32", EthSwitch::XOR_FOLD, "XorFold"))
            .AddAttribute("HashSeed",
                          "The switch's hash seed. Switches of one fabric should have "
                          "different seeds: with equal seeds (and the Crc32 hash) the "
                          "switches of consecutive tiers pick ports by the same function "
                          "of the flow, and the upper tiers use a fraction of their "
                          "uplinks (polarization).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&EthSwitch::m_seed),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("FlowletTimeout",
                          "Flowlet: a gap longer than this in a flow-table entry starts a new "
                          "flowlet, which may take another port. A model default, several "
                          "times the queueing delay differences of a 100 Gb/s Clos.",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&EthSwitch::m_flowletTimeout),
                          MakeIbTimeChecker("EthSwitch", "FlowletTimeout", Time(0)))
            .AddAttribute("FlowletTableSize",
                          "Flowlet: entries of the flowlet table (a power of two), indexed by "
                          "the flow hash.",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&EthSwitch::SetFlowletTableSize,
                                               &EthSwitch::GetFlowletTableSize),
                          MakeIbUintegerChecker<uint32_t>("EthSwitch", "FlowletTableSize", 1))
            .AddAttribute(
                "BufferSize",
                "The packet buffer shared by all ports, bytes. Default: 42 MB "
                "(42 MiB here), the on-chip buffer of Broadcom Tomahawk 2 "
                "(BCM56970, 64 x 100G), as reported by port-buffers.forwardingplane."
                "net.",
                UintegerValue(42ull << 20),
                MakeUintegerAccessor(&EthSwitch::SetBufferSize, &EthSwitch::GetBufferSize),
                MakeIbUintegerChecker<uint64_t>("EthSwitch", "BufferSize", 1))
            .AddAttribute("PfcAlpha",
                          "Lossless dynamic threshold: an (ingress port, priority) may hold "
                          "up to alpha x (free shared pool) in the shared pool before XOFF "
                          "(Choudhury-Hahne dynamic threshold). With one congested pair it "
                          "settles at alpha / (1 + alpha) of the pool.",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&EthSwitch::m_pfcAlpha),
                          MakeIbDoubleChecker("EthSwitch", "PfcAlpha", 0.0))
            .AddAttribute("LossyAlpha",
                          "Lossy dynamic threshold: an egress queue (port, priority) of lossy "
                          "frames may hold up to alpha x (free shared pool); beyond, frames "
                          "are dropped (LossyBufferFull).",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&EthSwitch::m_lossyAlpha),
                          MakeIbDoubleChecker("EthSwitch", "LossyAlpha", 0.0))
            .AddAttribute(
                "ReservedBytes",
                "Bytes reserved for each (ingress port, lossless priority), used "
                "before the shared pool. Default 9360, the reserved buffer per "
                "priority group of Dell SmartFabric OS10 at 10-100G (about one "
                "jumbo frame).",
                UintegerValue(9360),
                MakeUintegerAccessor(&EthSwitch::SetReservedBytes, &EthSwitch::GetReservedBytes),
                MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "HeadroomBytes",
                "Headroom of each (ingress port, lossless priority), bytes. 0 (the "
                "default): computed per port by EthSwitch::ComputeHeadroom from "
                "its rate, cable delay, MTU, ForwardingLatency and "
                "PeerResponseTime.",
                UintegerValue(0),
                MakeUintegerAccessor(&EthSwitch::SetHeadroomBytes, &EthSwitch::GetHeadroomBytes),
                MakeUintegerChecker<uint32_t>())
            .AddAttribute("XonOffset",
                          "XON is sent when a paused pair's shared use has fallen this many "
                          "bytes below its dynamic threshold (and its headroom is empty). 0 "
                          "(the default): one MTU-sized frame of the port, as the Linux mlx5 "
                          "driver's xon = xoff threshold - MTU.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&EthSwitch::SetXonOffset, &EthSwitch::GetXonOffset),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "PeerResponseTime",
                "Time the peer takes to stop after a PFC frame reached it, beyond "
                "finishing the frame it is sending; enters the computed headroom. "
                "EthNetDevice stops at once.",
                TimeValue(Time(0)),
                MakeTimeAccessor(&EthSwitch::SetPeerResponseTime, &EthSwitch::GetPeerResponseTime),
                MakeIbTimeChecker("EthSwitch", "PeerResponseTime", Time(0)))
            .AddAttribute("EcnEnabled",
                          "Mark ECN-capable frames CE by the RED-like profile (EcnKmin, "
                          "EcnKmax, EcnPmax) of their egress queue.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&EthSwitch::m_ecn),
                          MakeBooleanChecker())
            .AddAttribute("EcnKmin",
                          "Egress queue bytes at or below which no frame is marked. Default: "
                          "HPCC's DCQCN profile for 25 Gb/s (100 KB; it scales Kmin and Kmax "
                          "with the link rate).",
                          UintegerValue(100000),
                          MakeUintegerAccessor(&EthSwitch::m_kmin),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnKmax",
                          "Egress queue bytes above which every ECT frame is marked. Default: "
                          "HPCC's DCQCN profile for 25 Gb/s (400 KB).",
                          UintegerValue(400000),
                          MakeUintegerAccessor(&EthSwitch::m_kmax),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnPmax",
                          "Marking probability at EcnKmax (linear from 0 at EcnKmin); 0 to 1. "
                          "Default: HPCC's DCQCN profile, 0.2.",
                          DoubleValue(0.2),
                          MakeDoubleAccessor(&EthSwitch::m_pmax),
                          MakeIbDoubleChecker("EthSwitch", "EcnPmax", 0.0))
            .AddTraceSource("Drop",
                            "A frame was dropped (reason, ingress port, frame).",
                            MakeTraceSourceAccessor(&EthSwitch::m_dropTrace),
                            "ns3::EthSwitch::DropTracedCallback")
            .AddTraceSource("EcnMark",
                            "A frame was marked CE (egress port, priority, bytes ahead of it, "
                            "frame).",
                            MakeTraceSourceAccessor(&EthSwitch::m_ecnTrace),
                            "ns3::EthSwitch::EcnTracedCallback")
            .AddTraceSource("PfcXoff",
                            "The switch asked an ingress port to pause a priority (port, "
                            "priority).",
                            MakeTraceSourceAccessor(&EthSwitch::m_xoffTrace),
                            "ns3::EthSwitch::PfcTracedCallback")
            .AddTraceSource("PfcXon",
                            "The switch asked an ingress port to resume a priority (port, "
                            "priority).",
                            MakeTraceSourceAccessor(&EthSwitch::m_xonTrace),
                            "ns3::EthSwitch::PfcTracedCallback")
            .AddTraceSource("EgressQueue",
                            "Bytes queued at an egress (port, priority) changed.",
                            MakeTraceSourceAccessor(&EthSwitch::m_egressTrace),
                            "ns3::EthSwitch::QueueTracedCallback")
            .AddTraceSource("IngressBuffer",
                            "Bytes charged to a lossless (ingress port, priority) changed "
                            "(total, shared part, headroom part).",
                            MakeTraceSourceAccessor(&EthSwitch::m_ingressTrace),
                            "ns3::EthSwitch::IngressTracedCallback");
    return tid;
}

EthSwitch::EthSwitch()
    : m_info(1),
      m_drops(1),
      m_ports(1)
{
    NS_LOG_FUNCTION(this);
    m_uniform = CreateObject<UniformRandomVariable>();
}

EthSwitch::~EthSwitch()
{
    NS_LOG_FUNCTION(this);
}

void
EthSwitch::DoInitialize()
{
    NS_LOG_FUNCTION(this);
    // Cables and port attributes may have changed since a getter compiled the tables.
    Invalidate();
    Compile();
    Object::DoInitialize();
}

void
EthSwitch::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& p : m_ports)
    {
        if (p)
        {
            p->SetOwner(nullptr, 0);
        }
    }
    m_ports.clear();
    m_arrivals.clear();
    m_draining.clear();
    m_info.clear();
    m_ingress.clear();
    m_egress.clear();
    m_egressLossy.clear();
    m_flowlets.clear();
    m_uniform = nullptr;
    Object::DoDispose();
}

const char*
EthSwitch::DropReasonName(DropReason reason)
{
    switch (reason)
    {
    case NO_ROUTE:
        return "NoRoute";
    case TTL_EXPIRED:
        return "TtlExpired";
    case LOSSY_BUFFER_FULL:
        return "LossyBufferFull";
    case HEADROOM_OVERFLOW:
        return "HeadroomOverflow";
    default:
        return "?";
    }
}

std::string
EthSwitch::Name() const
{
    std::ostringstream os;
    os << "EthSwitch";
    Ptr<Node> node = GetObject<Node>();
    if (node)
    {
        os << " on node " << node->GetId();
    }
    return os.str();
}

uint8_t
EthSwitch::AddPort(Ptr<EthNetDevice> port)
{
    NS_LOG_FUNCTION(this << port);
    NS_ABORT_MSG_IF(!port, Name() << "::AddPort: the port is null");
    NS_ABORT_MSG_IF(m_ports.size() > 254, Name() << "::AddPort: a switch has at most 254 ports");
    for (std::size_t i = 1; i < m_ports.size(); ++i)
    {
        NS_ABORT_MSG_IF(m_ports[i] == port,
                        Name() << "::AddPort: the device is already port " << i);
    }
    const uint8_t n = static_cast<uint8_t>(m_ports.size());
    m_ports.push_back(port);
    port->SetOwner(this, n);
    port->SetCutThrough(m_cutThrough, m_latency);
    m_info.resize(m_ports.size());
    m_drops.resize(m_ports.size());
    m_ingress.resize(m_ports.size() * 8);
    m_egress.resize(m_ports.size() * 8, 0);
    m_egressLossy.resize(m_ports.size() * 8, 0);
    Invalidate();
    return n;
}

uint8_t
EthSwitch::GetNPorts() const
{
    return static_cast<uint8_t>(m_ports.size() - 1);
}

Ptr<EthNetDevice>
EthSwitch::GetPort(uint8_t n) const
{
    CheckPort(n, "GetPort");
    return m_ports[n];
}

void
EthSwitch::CheckPort(uint8_t port, const char* what) const
{
    NS_ABORT_MSG_UNLESS(port >= 1 && port < m_ports.size(),
                        Name() << "::" << what << ": no port " << unsigned(port)
                               << "; the switch has ports 1.." << m_ports.size() - 1);
}

void
EthSwitch::Invalidate()
{
    m_dirty = true;
}

void
EthSwitch::AddRoute(Ipv4Address dest, Ipv4Mask mask, std::vector<uint8_t> ports)
{
    NS_LOG_FUNCTION(this << dest << mask);
    const uint16_t length = mask.GetPrefixLength();
    const uint32_t contiguous = length == 0 ? 0 : (0xFFFFFFFFu << (32 - length));
    NS_ABORT_MSG_UNLESS(mask.Get() == contiguous,
                        Name() << "::AddRoute(" << dest << " mask " << mask
                               << "): the mask is not contiguous; use a prefix mask such as "
                               << Ipv4Mask(contiguous));
    NS_ABORT_MSG_IF(ports.empty(),
                    Name() << "::AddRoute(" << dest << "/" << length
                           << "): no ports; give at least one output port");
    for (uint8_t p : ports)
    {
        NS_ABORT_MSG_UNLESS(p >= 1 && p < m_ports.size(),
                            Name() << "::AddRoute(" << dest << "/" << length << "): port "
                                   << unsigned(p) << ", but the switch has ports 1.."
                                   << m_ports.size() - 1
                                   << "; add its ports first (AddPort) or fix the route");
    }
    // The same port list is one group (Spray and Adaptive state is per group).
    uint32_t group = 0;
    for (; group < m_groups.size(); ++group)
    {
        const Group& g = m_groups[group];
        if (g.size == ports.size() &&
            std::equal(ports.begin(), ports.end(), m_groupPorts.begin() + g.offset))
        {
            break;
        }
    }
    if (group == m_groups.size())
    {
        NS_ABORT_MSG_IF(m_groups.size() >= kNoGroup - 1,
                        Name() << "::AddRoute: more than " << kNoGroup - 1
                               << " different port groups");
        NS_ABORT_MSG_IF(ports.size() > 0xFFFF,
                        Name() << "::AddRoute: a group of more than 65535 ports");
        Group g;
        g.offset = static_cast<uint32_t>(m_groupPorts.size());
        g.size = static_cast<uint16_t>(ports.size());
        m_groups.push_back(g);
        m_groupPorts.insert(m_groupPorts.end(), ports.begin(), ports.end());
    }
    Route r;
    r.mask = contiguous;
    r.prefix = dest.Get() & contiguous;
    r.length = static_cast<uint8_t>(length);
    r.group = static_cast<uint16_t>(group);
    auto same = std::find_if(m_routes.begin(), m_routes.end(), [&r](const Route& x) {
        return x.prefix == r.prefix && x.mask == r.mask;
    });
    if (same != m_routes.end())
    {
        *same = r;
    }
    else
    {
        m_routes.push_back(r);
    }
    Invalidate();
}

void
EthSwitch::AddForeignHost(Ipv4Address address, const std::string& name)
{
    m_foreign[address.Get()] = name;
}

void
EthSwitch::ClearRoutes()
{
    m_routes.clear();
    m_groups.clear();
    m_groupPorts.clear();
    Invalidate();
}

uint32_t
EthSwitch::GetNRoutes() const
{
    return static_cast<uint32_t>(m_routes.size());
}

std::vector<uint8_t>
EthSwitch::GetRoute(Ipv4Address dest) const
{
    const_cast<EthSwitch*>(this)->Compile();
    const int32_t g = Lookup(dest.Get());
    if (g < 0)
    {
        return {};
    }
    const Group& grp = m_groups[g];
    return std::vector<uint8_t>(m_groupPorts.begin() + grp.offset,
                                m_groupPorts.begin() + grp.offset + grp.size);
}

void
EthSwitch::Compile()
{
    if (!m_dirty)
    {
        return;
    }
    NS_LOG_FUNCTION(this);
    CompileRoutes();
    CompilePorts();
    NS_ABORT_MSG_UNLESS(m_kmin < m_kmax || !m_ecn,
                        Name() << ": EcnKmin=" << m_kmin << " must be below EcnKmax=" << m_kmax
                               << "; raise EcnKmax or set EcnEnabled=false");
    NS_ABORT_MSG_UNLESS(m_pmax <= 1.0,
                        Name() << ": EcnPmax=" << m_pmax << " is a probability; use 0 to 1");
    NS_ABORT_MSG_UNLESS((m_flowletTableSize & (m_flowletTableSize - 1)) == 0,
                        Name() << ": FlowletTableSize=" << m_flowletTableSize
                               << " is not a power of two; use e.g. 4096");
    if (m_flowlets.size() != m_flowletTableSize)
    {
        m_flowlets.assign(m_flowletTableSize, Flowlet());
    }
    m_dirty = false;
}

void
EthSwitch::CompileRoutes()
{
    m_sorted.resize(m_routes.size());
    for (uint32_t i = 0; i < m_routes.size(); ++i)
    {
        m_sorted[i] = i;
    }
    std::stable_sort(m_sorted.begin(), m_sorted.end(), [this](uint32_t a, uint32_t b) {
        return m_routes[a].length > m_routes[b].length;
    });
    // The direct table spans the routes of /16 and longer (host routes, per-leaf and
    // per-pod subnets); shorter ones (a default route) only fill it in.
    uint64_t lo = std::numeric_limits<uint64_t>::max();
    uint64_t hi = 0;
    for (const Route& r : m_routes)
    {
        if (r.length >= 16)
        {
            lo = std::min<uint64_t>(lo, r.prefix);
            hi = std::max<uint64_t>(hi, uint64_t(r.prefix) | (~r.mask & 0xFFFFFFFFu));
        }
    }
    m_direct.clear();
    m_directBase = 0;
    if (lo > hi)
    {
        return;
    }
    if (hi - lo + 1 > kMaxDirect)
    {
        NS_LOG_WARN(Name() << ": routes span " << hi - lo + 1
                           << " addresses, more than the direct table's " << kMaxDirect
                           << "; lookups scan the routes");
        return;
    }
    m_directBase = static_cast<uint32_t>(lo);
    m_direct.assign(hi - lo + 1, kNoGroup);
    // Shortest first, so that longer prefixes overwrite.
    for (auto it = m_sorted.rbegin(); it != m_sorted.rend(); ++it)
    {
        const Route& r = m_routes[*it];
        const uint64_t start = std::max<uint64_t>(lo, r.prefix);
        const uint64_t end = std::min<uint64_t>(hi, uint64_t(r.prefix) | (~r.mask & 0xFFFFFFFFu));
        for (uint64_t a = start; a <= end && start <= end; ++a)
        {
            m_direct[a - lo] = r.group;
        }
    }
}

uint32_t
EthSwitch::ComputeHeadroom(DataRate rate,
                           Time cableDelay,
                           Time latency,
                           Time peerResponse,
                           uint32_t mtuFrameBytes)
{
    // Bytes in flight towards the switch after it decides XOFF: the cable in both
    // directions (the PFC frame's way out, the data's way in), the forwarding latency
    // (received, not yet charged) and the peer's response time, at the link rate; plus
    // the frame the switch is sending when it decides (its PFC frame waits behind it),
    // the frame the peer is sending when the PFC frame arrives, a store-and-forward frame
    // partly received, and the PFC frame itself.
    const double seconds = (cableDelay * int64_t(2) + latency + peerResponse).GetSeconds();
    const double inFlight = seconds * static_cast<double>(rate.GetBitRate()) / 8.0;
    const uint64_t bytes = static_cast<uint64_t>(std::ceil(inFlight)) +
                           3ull * EthFrame::WireBytes(mtuFrameBytes) +
                           EthFrame::WireBytes(EthFrame::MIN_FRAME);
    NS_ABORT_MSG_IF(bytes > std::numeric_limits<uint32_t>::max(),
                    "EthSwitch::ComputeHeadroom: " << bytes << " bytes of headroom (rate " << rate
                                                   << ", cable delay " << cableDelay
                                                   << "); shorten the cable");
    return static_cast<uint32_t>(bytes);
}

void
EthSwitch::CompilePorts()
{
    uint64_t set = 0; // reserved + headroom of all lossless pairs
    for (std::size_t n = 1; n < m_ports.size(); ++n)
    {
        EthNetDevice* dev = PeekPointer(m_ports[n]);
        PortInfo& info = m_info[n];
        info.dev = dev;
        info.mac = dev->GetMacAddress();
        Ptr<EthNetDevice> peer = dev->GetPeer();
        info.peerMac = peer ? peer->GetMacAddress() : Mac48Address::GetBroadcast();
        info.rate = dev->GetDataRate();
        info.lossless = dev->GetPfcEnabled();
        const uint32_t mtuFrame = dev->GetMtu() + kFrameOverhead;
        info.xonOffset = m_xonOffset != 0 ? m_xonOffset : mtuFrame;
        Ptr<EthChannel> ch = DynamicCast<EthChannel>(dev->GetChannel());
        if (m_headroomBytes != 0)
        {
            info.headroom = m_headroomBytes;
        }
        else if (ch)
        {
            info.headroom =
                ComputeHeadroom(info.rate, ch->GetDelay(), m_latency, m_peerResponse, mtuFrame);
        }
        else
        {
            info.headroom = 0; // no cable: nothing arrives
        }
        set += uint64_t(PopCount(info.lossless)) * (uint64_t(m_reserved) + info.headroom);
    }
    NS_ABORT_MSG_IF(set >= m_bufferSize,
                    Name() << ": BufferSize=" << m_bufferSize << " bytes does not hold the " << set
                           << " bytes of reserved (ReservedBytes=" << m_reserved
                           << ") and headroom of its " << m_ports.size() - 1
                           << " ports' lossless priorities; raise BufferSize or lower "
                              "ReservedBytes/HeadroomBytes");
    m_sharedSize = m_bufferSize - set;
}

int32_t
EthSwitch::LookupScan(uint32_t dst) const
{
    for (uint32_t i : m_sorted)
    {
        const Route& r = m_routes[i];
        if ((dst & r.mask) == r.prefix)
        {
            return r.group;
        }
    }
    return -1;
}

int32_t
EthSwitch::Lookup(uint32_t dst) const
{
    const uint32_t off = dst - m_directBase;
    if (off < m_direct.size())
    {
        const uint16_t g = m_direct[off];
        return g == kNoGroup ? -1 : g;
    }
    return LookupScan(dst);
}

uint32_t
EthSwitch::FlowHash(const uint8_t* header, uint32_t len) const
{
    EthFrame::FlowKey k{};
    EthFrame::PeekFlow(header, len, k);
    return m_hash == CRC32
               ? EthFlowHash::Crc32(k.srcIp, k.dstIp, k.srcPort, k.dstPort, k.protocol, m_seed)
               : EthFlowHash::XorFold(k.srcIp, k.dstIp, k.srcPort, k.dstPort, k.protocol, m_seed);
}

uint8_t
EthSwitch::LeastLoaded(Group& g, uint8_t prio)
{
    const uint8_t* ports = &m_groupPorts[g.offset];
    uint32_t start = g.next;
    uint8_t best = ports[start];
    uint32_t bestBytes = m_egress[best * 8 + prio];
    for (uint32_t k = 1; k < g.size && bestBytes != 0; ++k)
    {
        uint32_t i = start + k;
        if (i >= g.size)
        {
            i -= g.size;
        }
        const uint32_t b = m_egress[ports[i] * 8 + prio];
        if (b < bestBytes)
        {
            best = ports[i];
            bestBytes = b;
        }
    }
    g.next = static_cast<uint16_t>(start + 1 == g.size ? 0 : start + 1);
    return best;
}

void
EthSwitch::Drop(DropReason reason, uint8_t inPort, Ptr<Packet> frame)
{
    NS_LOG_LOGIC(Name() << ": " << DropReasonName(reason) << " drop of a frame from port "
                        << unsigned(inPort));
    ++m_drops[inPort][reason];
    m_dropTrace(reason, inPort, frame);
}

void
EthSwitch::PortReceive(uint8_t inPort, EthNetDevice* dev, Ptr<Packet> frame, uint8_t prio)
{
    NS_LOG_FUNCTION(this << unsigned(inPort) << frame << unsigned(prio));
    if (m_orderArrivals)
    {
        // Forwarded at the end of this instant, in port order (DrainArrivals).
        if (m_arrivals.empty())
        {
            Simulator::ScheduleNow(&EthSwitch::DrainArrivals, this);
        }
        m_arrivals.push_back({inPort, prio, frame});
        return;
    }
    Forward(inPort, frame, prio);
}

void
EthSwitch::DrainArrivals()
{
    // A port's cable delivers one data frame per instant, so the input ports are distinct
    // and the order total. The two vectors trade places and keep their capacity.
    m_draining.swap(m_arrivals);
    std::sort(m_draining.begin(), m_draining.end(), [](const Arrival& a, const Arrival& b) {
        return a.inPort < b.inPort;
    });
    for (Arrival& a : m_draining)
    {
        Forward(a.inPort, std::move(a.frame), a.prio);
    }
    m_draining.clear();
}

void
EthSwitch::Forward(uint8_t inPort, Ptr<Packet> frame, uint8_t prio)
{
    if (m_dirty)
    {
        Compile();
    }
    uint8_t header[kPeekBytes];
    const uint32_t size = frame->GetSize();
    const uint32_t len = EthFrame::CopyHead(*frame, header, kPeekBytes);
    if (len < EthFrame::HEADER_SIZE + EthFrame::IPV4_HEADER_SIZE || !EthFrame::IsPlainIpv4(header))
    {
        Drop(NO_ROUTE, inPort, frame); // the switch routes IPv4 (without options) only
        return;
    }
    const int32_t gi = Lookup(EthFrame::PeekDstIp(header));
    if (gi < 0)
    {
        const auto foreign = m_foreign.find(EthFrame::PeekDstIp(header));
        NS_ABORT_MSG_IF(foreign != m_foreign.end(),
                        Name() << ": a frame from port " << unsigned(inPort) << " for "
                               << foreign->second << " (" << Ipv4Address(foreign->first)
                               << "), a host of another subnet: a rail-only fabric joins no "
                                  "two rails. Keep fabric traffic on a rail (collectives "
                                  "\"hier\", with RailAwareAllToAll for all-to-all) or "
                                  "build the fabric with spines (RailOptimized2Level)");
        Drop(NO_ROUTE, inPort, frame);
        return;
    }
    if (header[kTtlOffset] <= 1)
    {
        Drop(TTL_EXPIRED, inPort, frame);
        return;
    }
    Group& g = m_groups[gi];
    uint8_t out;
    if (g.size == 1)
    {
        out = m_groupPorts[g.offset];
    }
    else
    {
        switch (m_lb)
        {
        case ECMP:
            out = m_groupPorts[g.offset + FlowHash(header, len) % g.size];
            break;
        case SPRAY:
            out = m_groupPorts[g.offset + g.next];
            g.next = static_cast<uint16_t>(g.next + 1 == g.size ? 0 : g.next + 1);
            break;
        case FLOWLET: {
            Flowlet& f = m_flowlets[FlowHash(header, len) & (m_flowletTableSize - 1)];
            const int64_t now = Simulator::Now().GetTimeStep();
            if (f.group == gi && now - f.last <= m_flowletTimeout.GetTimeStep())
            {
                out = f.port;
            }
            else
            {
                out = LeastLoaded(g, prio);
                f.group = static_cast<uint16_t>(gi);
                f.port = out;
            }
            f.last = now;
            break;
        }
        default:
            out = LeastLoaded(g, prio);
            break;
        }
    }
    // Admission.
    uint32_t cookie = (uint32_t(inPort) << 3) | prio;
    if ((m_info[inPort].lossless >> prio) & 1)
    {
        if (!AdmitLossless(inPort, prio, size))
        {
            Drop(HEADROOM_OVERFLOW, inPort, frame);
            return;
        }
        cookie |= COOKIE_LOSSLESS;
    }
    else
    {
        const uint64_t free = m_sharedSize - m_sharedUsed;
        uint32_t& lossy = m_egressLossy[out * 8 + prio];
        if (lossy >= m_lossyAlpha * static_cast<double>(free) || size > free)
        {
            Drop(LOSSY_BUFFER_FULL, inPort, frame);
            return;
        }
        lossy += size;
        m_sharedUsed += size;
    }
    const PortInfo& info = m_info[out];
    uint32_t& queued = m_egress[out * 8 + prio];
    const uint8_t ecn = EthFrame::PeekEcn(header);
    const bool mark = m_ecn && (ecn == 1 || ecn == 2) && queued > m_kmin && DecideEcn(queued);
    // One edit: MACs, TTL and ECN (TTL > 1: cannot fail).
    EthFrame::RewriteHop(frame, header, info.mac, info.peerMac, mark);
    if (mark)
    {
        ++m_ecnMarks;
        m_ecnTrace(out, prio, queued, frame);
    }
    queued += size;
    m_egressTrace(out, prio, queued);
    ++m_forwarded;
    if (m_cutThrough && info.rate > m_info[inPort].rate)
    {
        // Onto a faster link: the frame may not finish leaving (preamble and frame at the
        // output's rate) before its tail has arrived (the bytes after the first 64, at the
        // input's rate), each byte being available ForwardingLatency after its arrival.
        const Time tail = m_info[inPort].rate.CalculateBytesTxTime(
            std::max(size, EthFrame::MIN_FRAME) - EthFrame::MIN_FRAME);
        const Time outTime = info.rate.CalculateBytesTxTime(EthFrame::PREAMBLE_SFD + size);
        if (tail > outTime)
        {
            info.dev->Enqueue(frame, prio, cookie, Simulator::Now() + tail - outTime);
            return;
        }
    }
    info.dev->Enqueue(frame, prio, cookie);
}

bool
EthSwitch::DecideEcn(uint32_t queued)
{
    if (queued > m_kmax)
    {
        return true;
    }
    const double p =
        m_pmax * static_cast<double>(queued - m_kmin) / static_cast<double>(m_kmax - m_kmin);
    return m_uniform->GetValue() < p;
}

bool
EthSwitch::AdmitLossless(uint8_t inPort, uint8_t prio, uint32_t bytes)
{
    IngressPg& pg = m_ingress[inPort * 8 + prio];
    const PortInfo& info = m_info[inPort];
    uint32_t toReserved = 0;
    uint32_t rest = bytes;
    if (!pg.xoff)
    {
        toReserved = std::min(rest, m_reserved > pg.reserved ? m_reserved - pg.reserved : 0);
        rest -= toReserved;
        const uint64_t free = m_sharedSize - m_sharedUsed;
        if (rest == 0 || (pg.shared < m_pfcAlpha * static_cast<double>(free) && rest <= free))
        {
            pg.reserved += toReserved;
            pg.shared += rest;
            m_sharedUsed += rest;
            if (rest != 0 && pg.shared >= m_pfcAlpha * static_cast<double>(free - rest))
            {
                // At the threshold: what comes next goes to headroom until XON.
                pg.xoff = true;
                ++m_xoffs;
                info.dev->SetPfcXoff(prio, true);
                m_xoffTrace(inPort, prio);
            }
            m_ingressTrace(inPort,
                           prio,
                           pg.reserved + pg.shared + pg.headroom,
                           pg.shared,
                           pg.headroom);
            return true;
        }
    }
    if (pg.headroom + rest > info.headroom)
    {
        return false;
    }
    if (!pg.xoff)
    {
        // The threshold fell below the pair's use (others took the pool): pause now.
        pg.xoff = true;
        ++m_xoffs;
        info.dev->SetPfcXoff(prio, true);
        m_xoffTrace(inPort, prio);
    }
    pg.reserved += toReserved;
    pg.headroom += rest;
    m_ingressTrace(inPort, prio, pg.reserved + pg.shared + pg.headroom, pg.shared, pg.headroom);
    return true;
}

void
EthSwitch::ReleaseLossless(uint8_t inPort, uint8_t prio, uint32_t bytes)
{
    IngressPg& pg = m_ingress[inPort * 8 + prio];
    const uint32_t fromHeadroom = std::min(pg.headroom, bytes);
    pg.headroom -= fromHeadroom;
    bytes -= fromHeadroom;
    const uint32_t fromShared = std::min(pg.shared, bytes);
    pg.shared -= fromShared;
    m_sharedUsed -= fromShared;
    bytes -= fromShared;
    NS_ASSERT_MSG(bytes <= pg.reserved, "ingress accounting underflow");
    pg.reserved -= std::min(pg.reserved, bytes);
    if (pg.xoff && pg.headroom == 0)
    {
        const double threshold = m_pfcAlpha * static_cast<double>(m_sharedSize - m_sharedUsed);
        if (pg.shared == 0 ||
            static_cast<double>(pg.shared) + m_info[inPort].xonOffset <= threshold)
        {
            pg.xoff = false;
            ++m_xons;
            m_info[inPort].dev->SetPfcXoff(prio, false);
            m_xonTrace(inPort, prio);
        }
    }
    m_ingressTrace(inPort, prio, pg.reserved + pg.shared + pg.headroom, pg.shared, pg.headroom);
}

void
EthSwitch::PortTxReady(uint8_t port, EthNetDevice* dev, uint8_t prio)
{
    // Enqueue never refuses a frame: the MMU, not the port's queue, bounds what waits.
}

void
EthSwitch::PortTxStarted(uint8_t port,
                         EthNetDevice* dev,
                         uint8_t prio,
                         uint32_t bytes,
                         uint32_t cookie)
{
    uint32_t& queued = m_egress[port * 8 + prio];
    NS_ASSERT_MSG(queued >= bytes, "egress accounting underflow");
    queued -= bytes;
    m_egressTrace(port, prio, queued);
    const uint8_t inPort = static_cast<uint8_t>(cookie >> 3);
    const uint8_t inPrio = cookie & 7;
    if (cookie & COOKIE_LOSSLESS)
    {
        ReleaseLossless(inPort, inPrio, bytes);
    }
    else
    {
        m_egressLossy[port * 8 + prio] -= bytes;
        m_sharedUsed -= bytes;
    }
}

uint64_t
EthSwitch::GetForwardedFrames() const
{
    return m_forwarded;
}

uint64_t
EthSwitch::GetDropCount(DropReason reason) const
{
    NS_ABORT_MSG_UNLESS(reason < N_DROP_REASONS,
                        Name() << "::GetDropCount: no reason " << unsigned(reason));
    uint64_t n = 0;
    for (const auto& d : m_drops)
    {
        n += d[reason];
    }
    return n;
}

uint64_t
EthSwitch::GetDropCount(DropReason reason, uint8_t inPort) const
{
    NS_ABORT_MSG_UNLESS(reason < N_DROP_REASONS,
                        Name() << "::GetDropCount: no reason " << unsigned(reason));
    CheckPort(inPort, "GetDropCount");
    return m_drops[inPort][reason];
}

uint64_t
EthSwitch::GetEcnMarks() const
{
    return m_ecnMarks;
}

uint64_t
EthSwitch::GetXoffCount() const
{
    return m_xoffs;
}

uint64_t
EthSwitch::GetXonCount() const
{
    return m_xons;
}

uint32_t
EthSwitch::GetIngressBytes(uint8_t port, uint8_t prio) const
{
    CheckPort(port, "GetIngressBytes");
    const IngressPg& pg = m_ingress[port * 8 + (prio & 7)];
    return pg.reserved + pg.shared + pg.headroom;
}

uint32_t
EthSwitch::GetIngressSharedBytes(uint8_t port, uint8_t prio) const
{
    CheckPort(port, "GetIngressSharedBytes");
    return m_ingress[port * 8 + (prio & 7)].shared;
}

uint32_t
EthSwitch::GetIngressHeadroomBytes(uint8_t port, uint8_t prio) const
{
    CheckPort(port, "GetIngressHeadroomBytes");
    return m_ingress[port * 8 + (prio & 7)].headroom;
}

bool
EthSwitch::IsXoff(uint8_t port, uint8_t prio) const
{
    CheckPort(port, "IsXoff");
    return m_ingress[port * 8 + (prio & 7)].xoff;
}

uint32_t
EthSwitch::GetEgressBytes(uint8_t port, uint8_t prio) const
{
    CheckPort(port, "GetEgressBytes");
    return m_egress[port * 8 + (prio & 7)];
}

uint32_t
EthSwitch::GetHeadroomSize(uint8_t port) const
{
    CheckPort(port, "GetHeadroomSize");
    const_cast<EthSwitch*>(this)->Compile();
    return m_info[port].headroom;
}

uint64_t
EthSwitch::GetSharedPoolSize() const
{
    const_cast<EthSwitch*>(this)->Compile();
    return m_sharedSize;
}

uint64_t
EthSwitch::GetSharedPoolUsed() const
{
    return m_sharedUsed;
}

double
EthSwitch::GetPfcThreshold() const
{
    const_cast<EthSwitch*>(this)->Compile();
    return m_pfcAlpha * static_cast<double>(m_sharedSize - m_sharedUsed);
}

int64_t
EthSwitch::AssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

void
EthSwitch::SetForwardingLatency(Time latency)
{
    m_latency = latency;
    UpdatePortModes();
    Invalidate(); // the computed headroom counts it
}

Time
EthSwitch::GetForwardingLatency() const
{
    return m_latency;
}

void
EthSwitch::SetCutThrough(bool cutThrough)
{
    m_cutThrough = cutThrough;
    UpdatePortModes();
}

bool
EthSwitch::IsCutThrough() const
{
    return m_cutThrough;
}

void
EthSwitch::UpdatePortModes()
{
    for (std::size_t i = 1; i < m_ports.size(); ++i)
    {
        m_ports[i]->SetCutThrough(m_cutThrough, m_latency);
    }
}

void
EthSwitch::SetFlowletTableSize(uint32_t n)
{
    m_flowletTableSize = n;
    Invalidate();
}

uint32_t
EthSwitch::GetFlowletTableSize() const
{
    return m_flowletTableSize;
}

void
EthSwitch::SetBufferSize(uint64_t bytes)
{
    m_bufferSize = bytes;
    Invalidate();
}

uint64_t
EthSwitch::GetBufferSize() const
{
    return m_bufferSize;
}

void
EthSwitch::SetReservedBytes(uint32_t bytes)
{
    m_reserved = bytes;
    Invalidate();
}

uint32_t
EthSwitch::GetReservedBytes() const
{
    return m_reserved;
}

void
EthSwitch::SetHeadroomBytes(uint32_t bytes)
{
    m_headroomBytes = bytes;
    Invalidate();
}

uint32_t
EthSwitch::GetHeadroomBytes() const
{
    return m_headroomBytes;
}

void
EthSwitch::SetXonOffset(uint32_t bytes)
{
    m_xonOffset = bytes;
    Invalidate();
}

uint32_t
EthSwitch::GetXonOffset() const
{
    return m_xonOffset;
}

void
EthSwitch::SetPeerResponseTime(Time t)
{
    m_peerResponse = t;
    Invalidate();
}

Time
EthSwitch::GetPeerResponseTime() const
{
    return m_peerResponse;
}

} // namespace ns3

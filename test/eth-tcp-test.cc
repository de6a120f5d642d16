/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * ns-3's TCP on the EthSwitch fabric (EthFabricHelper::SetHostStack(TCP)): the hosts'
 * Internet stack on their EthNetDevice ports, static ARP for the gateway, default routes,
 * and the switches forwarding the IPv4/TCP frames by the same routes and ECMP as RoCE.
 *
 * - A BulkSend flow through one and through two switches reaches the line rate times
 *   MSS / (MSS + per-segment overheads) once slow start is over.
 * - An incast of 16 NewReno senders into one receiver overflows the receiver port's
 *   lossy egress queue at the dynamic threshold (LOSSY_BUFFER_FULL drops, no ECN marks);
 *   the same incast with DCTCP (ECN on, marking at K) is marked, drops nothing, and keeps
 *   the receiver's link busy.
 * - CollectiveHelper::InstallTcp over such a fabric: a ring allreduce is exact and takes at
 *   least the ring's bytes over the link rate.
 *
 * Every expected number follows from the rates, the frame format and the switch's
 * configured buffer and thresholds.
 */

#include "ns3/applications-module.h"
#include "ns3/collective-helper.h"
#include "ns3/core-module.h"
#include "ns3/eth-fabric-helper.h"
#include "ns3/eth-net-device.h"
#include "ns3/eth-switch.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-topology.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <cstring>
#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

// Per-segment bytes besides the MSS, at the wire: TCP header 20 + timestamp option 10
// padded to 12 (ns-3's default Timestamp=true; SACK blocks only on ACKs), IPv4 20,
// Ethernet header 14 + FCS 4, preamble and SFD 8, inter-frame gap 12.
constexpr uint32_t kTcpHeader = 32;
constexpr uint32_t kIpv4 = 20;
constexpr uint32_t kEthFrame = 18;
constexpr uint32_t kPreambleIfg = 20;
constexpr uint32_t kMtu = 1500;
constexpr uint32_t kMss = kMtu - kIpv4 - kTcpHeader; // 1448: one segment fills the MTU
constexpr uint32_t kWire = kMss + kTcpHeader + kIpv4 + kEthFrame + kPreambleIfg; // 1538

class EthTcpTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kMss));
    }

    void TearDown() override
    {
        Simulator::Destroy();
        Config::Reset();
    }
};

/**
 * @param topology the shape
 * @param rate every link's rate
 * @param helperSetup more configuration
 * @return a TCP fabric: 1500-byte MTU, 1 us cables
 */
template <typename F>
EthFabric
BuildTcp(const IbTopology& topology, DataRate rate, F helperSetup)
{
    EthFabricHelper fh;
    fh.SetHostStack(EthFabricHelper::TCP);
    fh.SetDataRate(rate);
    fh.SetDeviceAttribute("Mtu", UintegerValue(kMtu));
    fh.SetChannelAttribute("Delay", TimeValue(MicroSeconds(1)));
    helperSetup(fh);
    return fh.Build(topology);
}

/**
 * @param f a fabric
 * @param tid the congestion control of every host's TCP sockets
 */
void
SetCongestionControl(const EthFabric& f, TypeId tid)
{
    for (uint32_t h = 0; h < f.GetNHosts(); ++h)
    {
        f.hosts.Get(h)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(tid));
    }
}

/**
 * A BulkSend from host @p from to host @p to of the fabric, port 5000 + @p from.
 * @param f the fabric
 * @param from sender
 * @param to receiver
 * @return the sink
 */
Ptr<PacketSink>
AddBulkFlow(const EthFabric& f, uint32_t from, uint32_t to)
{
    const uint16_t port = static_cast<uint16_t>(5000 + from);
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer s = sink.Install(f.hosts.Get(to));
    s.Start(Seconds(0));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(f.Address(to), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(0));
    bulk.SetAttribute("SendSize", UintegerValue(kMss));
    ApplicationContainer c = bulk.Install(f.hosts.Get(from));
    c.Start(Seconds(0));
    return DynamicCast<PacketSink>(s.Get(0));
}

/// Bytes a set of sinks received between two times.
struct Window
{
    std::vector<Ptr<PacketSink>> sinks; ///< the sinks
    uint64_t atStart{0};                ///< their total at the start
    uint64_t atEnd{0};                  ///< their total at the end

    /// @return the sinks' total now
    uint64_t Total() const
    {
        uint64_t t = 0;
        for (const auto& s : sinks)
        {
            t += s->GetTotalRx();
        }
        return t;
    }

    /**
     * @param start when the measurement starts
     * @param end when it ends
     */
    void Measure(Time start, Time end)
    {
        Simulator::Schedule(start, [this]() { atStart = Total(); });
        Simulator::Schedule(end, [this]() { atEnd = Total(); });
    }
};

/**
 * One BulkSend flow over a chain of @p switches switches; goodput over [2 ms, 12 ms].
 * @param switches 1 or 2
 * @param rate link rate
 * @param [out] noRoute the switches' NoRoute drops (ARP or anything else not IPv4)
 * @param [out] forwarded the frames the switches forwarded
 * @return goodput, bit/s
 */
double
ChainGoodput(uint32_t switches, DataRate rate, uint64_t* noRoute, uint64_t* forwarded)
{
    EthFabric f = BuildTcp(IbTopologyBuilder::Chain(switches), rate, [](EthFabricHelper&) {});
    SetCongestionControl(f, TcpNewReno::GetTypeId());
    Window w;
    w.sinks.push_back(AddBulkFlow(f, 0, 1));
    const Time start = MilliSeconds(2);
    const Time end = MilliSeconds(12);
    w.Measure(start, end);
    Simulator::Stop(end);
    Simulator::Run();
    *noRoute = 0;
    *forwarded = 0;
    for (const auto& sw : f.ethSwitches)
    {
        *noRoute += sw->GetDropCount(EthSwitch::NO_ROUTE);
        *forwarded += sw->GetForwardedFrames();
    }
    return static_cast<double>(w.atEnd - w.atStart) * 8 / (end - start).GetSeconds();
}

TEST_F(EthTcpTest, HostsGetAddressesGatewayRouteAndStaticArp)
{
    EthFabric f = BuildTcp(IbTopologyBuilder::FatTree2Level(4, 8),
                           DataRate("10Gbps"),
                           [](EthFabricHelper&) {});
    ASSERT_EQ(f.GetNHosts(), 8u);
    EXPECT_TRUE(f.hcas.empty());
    ASSERT_EQ(f.interfaces.GetN(), 8u);
    const Ipv4Address gw = EthFabricHelper::GetGatewayAddress();
    for (uint32_t h = 0; h < 8; ++h)
    {
        EXPECT_EQ(f.Address(h), Ipv4Address(Ipv4Address("10.3.0.1").Get() + h));
        EXPECT_EQ(f.interfaces.GetAddress(h), f.Address(h));
        Ptr<Ipv4L3Protocol> ip = f.hosts.Get(h)->GetObject<Ipv4L3Protocol>();
        ASSERT_TRUE(ip);
        const uint32_t k = f.interfaces.Get(h).second;
        Ptr<EthNetDevice> dev = DynamicCast<EthNetDevice>(ip->GetNetDevice(k));
        ASSERT_TRUE(dev);
        EXPECT_EQ(dev, f.hostDevices.Get(h));
        EXPECT_EQ(dev->GetOwner(), nullptr); // the ns-3 stack's port
        EXPECT_EQ(ip->GetAddress(k, 0).GetMask(), Ipv4Mask::GetOnes());
        // The gateway's MAC is the first-hop switch port's, permanently.
        ArpCache::Entry* e = ip->GetInterface(k)->GetArpCache()->Lookup(gw);
        ASSERT_NE(e, nullptr);
        EXPECT_TRUE(e->IsPermanent());
        EXPECT_EQ(Mac48Address::ConvertFrom(e->GetMacAddress()), dev->GetPeer()->GetMacAddress());
        // Every other host is reached via the gateway out of this port.
        Ipv4Header hdr;
        hdr.SetDestination(f.Address((h + 5) % 8));
        Socket::SocketErrno err;
        Ptr<Ipv4Route> r = ip->GetRoutingProtocol()->RouteOutput(nullptr, hdr, nullptr, err);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->GetGateway(), gw);
        EXPECT_EQ(r->GetOutputDevice(), dev);
        EXPECT_EQ(r->GetSource(), f.Address(h));
    }
}

TEST_F(EthTcpTest, RoceStaysTheDefault)
{
    EthFabricHelper fh;
    EthFabric f = fh.Build(IbTopologyBuilder::Chain(1));
    EXPECT_EQ(f.hcas.size(), 2u);
    EXPECT_EQ(f.interfaces.GetN(), 0u);
    EXPECT_FALSE(f.hosts.Get(0)->GetObject<Ipv4>());
}

// Goodput of one bulk flow. The sender's window (the receiver's 128 KiB RcvBufSize) is far
// above the path's bandwidth-delay product (10 Gb/s x a few us), so after slow start the
// sender's port never idles: segments leave back to back, each taking kWire bytes of wire
// time, and the switches (same rate in and out) add no gap. The ACKs use the other
// direction of each cable. Expected: rate x MSS / kWire = 9.4148 Gb/s. Slow start from 10
// segments to the window takes a few RTTs (tens of us), long before the 2 ms start of the
// 10 ms measurement, which counts whole segments (1448 B of 11.8 MB: 1.2e-4); 0.2 % leaves
// room for that and for the ACK clock's phase at both ends of the window.
TEST_F(EthTcpTest, BulkSendThroughOneAndTwoSwitchesReachesLineRateTimesMssOverWireBytes)
{
    const DataRate rate("10Gbps");
    const double expected = rate.GetBitRate() * double(kMss) / kWire;
    for (uint32_t switches : {1u, 2u})
    {
        uint64_t noRoute = 0;
        uint64_t forwarded = 0;
        const double g = ChainGoodput(switches, rate, &noRoute, &forwarded);
        EXPECT_NEAR(g / expected, 1.0, 0.002) << switches << " switch(es): " << g << " bit/s";
        // No ARP (the static entry answers) and nothing else the L3 switch cannot route.
        EXPECT_EQ(noRoute, 0u);
        EXPECT_GT(forwarded, 0u);
        Simulator::Destroy();
    }
}

/// What an incast run shows.
struct IncastResult
{
    uint64_t drops{0};                 ///< LOSSY_BUFFER_FULL at the switch
    uint64_t otherDrops{0};            ///< any other reason
    uint64_t marks{0};                 ///< CE marks
    uint32_t maxQueue{0};              ///< the receiver port's priority-0 egress queue, peak bytes
    uint32_t minMarkQueue{UINT32_MAX}; ///< the smallest queue a marked frame found
    uint64_t sharedPool{0};            ///< the switch's shared pool
    double goodput{0};                 ///< all flows, bit/s, over [5 ms, 15 ms]
};

constexpr uint32_t kSenders = 16;
constexpr uint32_t kBuffer = 2u << 20; // switch BufferSize
constexpr uint32_t kEcnK = 60000;      // DCTCP marking threshold
constexpr double kLossyAlpha = 1.0;    // the default

/**
 * kSenders hosts send to one receiver through one switch (all 10 Gb/s).
 * @param cc the congestion control of every host
 * @return what happened
 */
IncastResult
RunIncast(TypeId cc)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(kSenders + 1, "sw");
    for (uint32_t i = 0; i <= kSenders; ++i)
    {
        t.ConnectNextFree(t.AddCa(1, "host-" + std::to_string(i)), sw);
    }
    EthFabric f = BuildTcp(t, DataRate("10Gbps"), [](EthFabricHelper& fh) {
        fh.SetSwitchAttribute("BufferSize", UintegerValue(kBuffer));
        fh.SetSwitchAttribute("LossyAlpha", DoubleValue(kLossyAlpha));
        // DCTCP's step marking: every ECT frame that finds more than K bytes queued.
        fh.SetSwitchAttribute("EcnKmin", UintegerValue(kEcnK));
        fh.SetSwitchAttribute("EcnKmax", UintegerValue(kEcnK + 1));
        fh.SetSwitchAttribute("EcnPmax", DoubleValue(1.0));
    });
    SetCongestionControl(f, cc);
    const uint32_t receiver = kSenders;
    Window w;
    for (uint32_t i = 0; i < kSenders; ++i)
    {
        w.sinks.push_back(AddBulkFlow(f, i, receiver));
    }
    w.Measure(MilliSeconds(5), MilliSeconds(15));
    Ptr<EthSwitch> s = f.ethSwitches.at(0);
    // The receiver's switch port: the peer of its own port.
    const Ptr<EthNetDevice> toReceiver =
        DynamicCast<EthNetDevice>(f.hostDevices.Get(receiver))->GetPeer();
    uint8_t outPort = 0;
    for (uint8_t p = 1; p <= s->GetNPorts(); ++p)
    {
        if (s->GetPort(p) == toReceiver)
        {
            outPort = p;
        }
    }
    IncastResult r;
    s->TraceConnectWithoutContext("EgressQueue",
                                  MakeCallback(+[](IncastResult* r,
                                                   uint8_t want,
                                                   uint8_t port,
                                                   uint8_t prio,
                                                   uint32_t bytes) {
                                      if (port == want && prio == 0)
                                      {
                                          r->maxQueue = std::max(r->maxQueue, bytes);
                                      }
                                  }).Bind(&r, outPort));
    s->TraceConnectWithoutContext(
        "EcnMark",
        MakeCallback(+[](IncastResult* r, uint8_t, uint8_t, uint32_t q, Ptr<const Packet>) {
            r->minMarkQueue = std::min(r->minMarkQueue, q);
        }).Bind(&r));
    Simulator::Stop(MilliSeconds(15));
    Simulator::Run();
    r.drops = s->GetDropCount(EthSwitch::LOSSY_BUFFER_FULL);
    r.otherDrops = s->GetDropCount(EthSwitch::NO_ROUTE) + s->GetDropCount(EthSwitch::TTL_EXPIRED) +
                   s->GetDropCount(EthSwitch::HEADROOM_OVERFLOW);
    r.marks = s->GetEcnMarks();
    r.sharedPool = s->GetSharedPoolSize();
    r.goodput = static_cast<double>(w.atEnd - w.atStart) * 8 / 0.010;
    return r;
}

// Incast, NewReno. A lossy egress queue is admitted a frame while it holds less than
// alpha x (free shared pool); with this queue the only one of any size (the ACKs toward
// the senders leave as they come), it stops growing at q* = alpha / (1 + alpha) x pool, and
// frames beyond it are dropped. The pool is the 2 MiB buffer less the reserved and headroom
// parts of the lossless priority 3 on 17 ports (about 1.8 MB): q* is about 0.9 MB, while
// 16 windows of 128 KiB (the receiver's RcvBufSize), 2.1 MB, all wait at this queue (the
// senders' own ports run at the same rate as the switch's and do not queue): NewReno, in
// slow start until its first loss, must overflow it. Its sockets are not ECN-capable: no
// marks.
TEST_F(EthTcpTest, IncastWithNewRenoDropsAtTheLossyDynamicThreshold)
{
    const IncastResult r = RunIncast(TcpNewReno::GetTypeId());
    const double qStar = kLossyAlpha / (1 + kLossyAlpha) * static_cast<double>(r.sharedPool);
    ASSERT_GT(16.0 * 131072, qStar) << "the test's premise";
    EXPECT_GT(r.drops, 0u);
    EXPECT_EQ(r.otherDrops, 0u);
    EXPECT_EQ(r.marks, 0u);
    // The queue reached the threshold and never passed it by more than one frame.
    EXPECT_LE(r.maxQueue, qStar + kWire);
    EXPECT_GE(r.maxQueue, qStar - 2 * kWire);
}

// Incast, DCTCP (ns-3's TcpDctcp turns ECN on, ECT(0), for the senders and the receiver).
// Every ECT frame that finds more than K = 60 KB queued is marked. DCTCP's first marked
// ACKs come back about K / rate = 48 us after the queue passed K, and with its initial
// alpha of 1 each sender halves its window then and leaves slow start; the queue peaks at
// the 16 initial windows (10 segments each, 232 KB) plus what one RTT of slow start adds,
// far below q* (0.9 MB): no drops, and the queue then stays near K. K is many times the
// path's bandwidth-delay product (10 Gb/s x ~6 us = 7.5 KB), so the receiver's link never
// idles: the 16 flows together get the line rate x MSS / kWire (2 %: the segments' count
// granularity is negligible, but DCTCP's sawtooth at 16 windows of a few segments could
// let the queue touch zero now and then).
TEST_F(EthTcpTest, IncastWithDctcpIsMarkedAndDropsNothing)
{
    const IncastResult r = RunIncast(TcpDctcp::GetTypeId());
    const double qStar = kLossyAlpha / (1 + kLossyAlpha) * static_cast<double>(r.sharedPool);
    EXPECT_GT(r.marks, 0u);
    EXPECT_GT(r.minMarkQueue, kEcnK); // marks only above K
    EXPECT_EQ(r.drops, 0u);
    EXPECT_EQ(r.otherDrops, 0u);
    EXPECT_LT(r.maxQueue, qStar);
    const double expected = 10e9 * double(kMss) / kWire;
    EXPECT_NEAR(r.goodput / expected, 1.0, 0.02) << r.goodput;
}

// A ring allreduce over TCP on a leaf-spine of EthSwitches (4 hosts on 2 leaves, ECMP over
// 2 spines), the collective library's TCP transport on the fabric's hosts as they are. Each
// rank sends 2 (n - 1) / n of the buffer over its one link: the duration is at least that
// many payload bits over the link rate (1.26 ms for 2 MiB at 10 Gb/s and n = 4). Elements
// are small integers, so the float sums are exact.
TEST_F(EthTcpTest, CollectiveRingAllreduceOverTcpOnEthSwitchesIsExact)
{
    const uint32_t n = 4;
    const DataRate rate("10Gbps");
    EthFabric f = BuildTcp(IbTopologyBuilder::FatTree2Level(4, n), rate, [](EthFabricHelper&) {});
    ASSERT_EQ(f.switches.GetN(), 4u); // 2 leaves, 2 spines
    CollectiveHelper ch;
    ch.SetAlgorithm("ring");
    ch.SetTcpTransportAttribute("SegmentSize", UintegerValue(kMss));
    Ptr<CollectiveCommunicator> comm = ch.InstallTcp(f.hosts);
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::ALLREDUCE;
    spec.count = 512 * 1024; // float32: 2 MiB
    spec.type = CollectiveDataType::FLOAT32;
    spec.op = CollectiveRedOp::SUM;
    std::vector<std::vector<uint8_t>> buffers(n, std::vector<uint8_t>(spec.count * 4));
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint64_t i = 0; i < spec.count; ++i)
        {
            const float v = static_cast<float>((i + r) % 7);
            std::memcpy(&buffers[r][i * 4], &v, 4);
        }
    }
    const Time d = CollectiveHelper::Run(comm, spec, &buffers);
    ASSERT_NE(d, Time::Max()) << "the allreduce did not finish";
    uint64_t wrong = 0;
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint64_t i = 0; i < spec.count; ++i)
        {
            float want = 0;
            for (uint32_t k = 0; k < n; ++k)
            {
                want += static_cast<float>((i + k) % 7);
            }
            float got;
            std::memcpy(&got, &buffers[r][i * 4], 4);
            wrong += got != want;
        }
    }
    EXPECT_EQ(wrong, 0u);
    const double bound = 2.0 * (n - 1) / n * spec.count * 4 * 8 / rate.GetBitRate();
    EXPECT_GE(d.GetSeconds(), bound);
    uint64_t forwarded = 0;
    for (const auto& sw : f.ethSwitches)
    {
        EXPECT_EQ(sw->GetDropCount(EthSwitch::NO_ROUTE), 0u);
        forwarded += sw->GetForwardedFrames();
    }
    EXPECT_GT(forwarded, 0u);
}

} // namespace

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Fabric tests: topologies built into ns-3 by IbFabricHelper and brought up by the
 * subnet manager. Packets really cross the fabric: every host sends one packet to every
 * other host and each must arrive, over the number of switches the path record gives.
 */

#include "ns3/core-module.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-deadlock-watchdog.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-fabric-stats.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-multicast-group.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-netdiscover-reader.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-perftest-application.h"
#include "ns3/ib-raw-traffic-application.h"
#include "ns3/ib-raw-traffic-helper.h"
#include "ns3/ib-routing-file.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-traffic-pattern.h"
#include "ns3/network-module.h"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <queue>
#include <set>
#include <sstream>
#include <tuple>

using namespace ns3;

namespace
{

class IbFabricTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        IbHelper::ResetLidAllocation();
    }

    void TearDown() override
    {
        Simulator::Destroy();
        Names::Clear();
    }
};

/// Switch hops of a shortest path between two CAs, by BFS over the topology.
uint32_t
ShortestSwitchHops(const IbTopology& t, uint32_t from, uint32_t to)
{
    std::vector<int> dist(t.GetNNodes(), -1);
    std::queue<uint32_t> q;
    dist[from] = 0;
    q.push(from);
    while (!q.empty())
    {
        const uint32_t n = q.front();
        q.pop();
        for (const auto& p : t.GetNode(n).ports)
        {
            if (p.peerNode >= 0 && dist[p.peerNode] < 0)
            {
                dist[p.peerNode] = dist[n] + 1;
                // CAs do not forward.
                if (t.GetNode(p.peerNode).type == IbTopology::SWITCH || uint32_t(p.peerNode) == to)
                {
                    q.push(p.peerNode);
                }
            }
        }
    }
    return dist[to] - 1; // links - 1 = switches
}

/**
 * Every host sends one 256-byte packet to every other host (with the SL the path
 * record gives); count arrivals by (source LID, destination LID).
 * @return the number of packets that arrived at the right host
 */
uint64_t
AllPairsPackets(const IbFabric& f)
{
    const uint32_t n = f.hosts.GetN();
    uint64_t* good = new uint64_t(0);
    for (uint32_t d = 0; d < n; ++d)
    {
        Ptr<IbNetDevice> dst = f.HostPort(d);
        dst->TraceConnectWithoutContext(
            "MacRx",
            MakeCallback(+[](uint64_t* g, uint16_t lid, Ptr<const Packet> p) {
                if (IbPacket::PeekLrh(p).GetDlid() == lid)
                {
                    ++*g;
                }
            }).Bind(good, dst->GetLid()));
    }
    for (uint32_t s = 0; s < n; ++s)
    {
        for (uint32_t d = 0; d < n; ++d)
        {
            if (s == d)
            {
                continue;
            }
            Ptr<IbNetDevice> src = f.HostPort(s);
            const IbPathRecord pr = f.subnetManager->GetPathRecord(src, f.HostPort(d));
            EXPECT_TRUE(pr.valid) << "host " << s << " -> host " << d;
            Ptr<Packet> p = Create<Packet>(256);
            IbLrhHeader lrh;
            lrh.SetSl(pr.sl);
            lrh.SetVl(src->GetVlForSl(pr.sl));
            lrh.SetDlid(pr.dlid);
            lrh.SetSlid(pr.slid);
            IbBthHeader bth;
            bth.SetOpcode(IbOpcode::UD_SEND_ONLY);
            IbPacket::Seal(p, lrh, nullptr, bth, 256);
            // Spread the sends so queues never fill.
            Simulator::Schedule(MicroSeconds(1) + NanoSeconds(50 * (s * n + d)),
                                [src, p]() { src->SendIbPacket(p); });
        }
    }
    Simulator::Run();
    const uint64_t result = *good;
    delete good;
    return result;
}

} // namespace

TEST_F(IbFabricTest, AllPairsReachableOnFatTreesWithEveryEngine)
{
    struct Case
    {
        std::string name;
        IbTopology topology;
    };

    std::vector<Case> cases;
    cases.push_back({"2-level radix 8, 24 hosts", IbTopologyBuilder::FatTree2Level(8, 24, 1.0)});
    cases.push_back({"2-level radix 8, 2:1", IbTopologyBuilder::FatTree2Level(8, 20, 2.0)});
    cases.push_back({"3-level radix 4, 16 hosts", IbTopologyBuilder::FatTree3Level(4, 16, 1.0)});
    cases.push_back({"4-ary 2-tree", IbTopologyBuilder::KaryNTree(4, 2)});
    cases.push_back({"2-ary 3-tree", IbTopologyBuilder::KaryNTree(2, 3)});
    for (const auto& c : cases)
    {
        for (const std::string engine : {"minhop", "updn", "ftree"})
        {
            IbFabricHelper fh;
            fh.SetSubnetManagerAttribute("RoutingEngine", StringValue(engine));
            IbFabric f = fh.Build(c.topology);
            const uint32_t n = f.hosts.GetN();
            EXPECT_EQ(AllPairsPackets(f), uint64_t(n) * (n - 1)) << c.name << ", " << engine;
            // Minimal paths for minhop and ftree.
            const IbTopology& t = f.subnetManager->GetTopology();
            const std::vector<uint32_t> cas = t.GetCas();
            for (uint32_t s = 0; s < cas.size(); ++s)
            {
                for (uint32_t d = 0; d < cas.size(); ++d)
                {
                    if (s == d)
                    {
                        continue;
                    }
                    const IbPathRecord pr =
                        f.subnetManager->GetPathRecord(f.HostPort(s), f.HostPort(d));
                    const uint32_t best = ShortestSwitchHops(t, cas[s], cas[d]);
                    if (engine != "updn")
                    {
                        EXPECT_EQ(pr.hops, best) << c.name << ", " << engine;
                    }
                    else
                    {
                        EXPECT_GE(pr.hops, best);
                    }
                }
            }
            // Deadlock freedom for the tree-aware engines.
            if (engine != "minhop")
            {
                const auto cycles = f.subnetManager->CheckDeadlocks();
                EXPECT_TRUE(cycles.empty())
                    << c.name << ", " << engine << ": " << (cycles.empty() ? "" : cycles[0]);
            }
            Simulator::Destroy();
            Names::Clear();
            IbHelper::ResetLidAllocation();
        }
    }
}

TEST_F(IbFabricTest, RingRoutedWithMinhopOnOneVlHasACycle)
{
    IbFabricHelper fh;
    fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    fh.SetDeviceAttribute("VlArbitrationHigh", StringValue("0:4"));
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("minhop"));
    IbFabric f = fh.Build(IbTopologyBuilder::Ring(5, 1));
    const auto cycles = f.subnetManager->CheckDeadlocks();
    ASSERT_FALSE(cycles.empty());
    // The description names the ring's switches and ports.
    EXPECT_NE(cycles[0].find("VL0"), std::string::npos) << cycles[0];
    EXPECT_NE(cycles[0].find("port"), std::string::npos) << cycles[0];
    Simulator::Destroy();
    Names::Clear();
    // updn on the same ring is deadlock-free.
    IbFabricHelper fh2;
    fh2.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    fh2.SetSubnetManagerAttribute("RoutingEngine", StringValue("updn"));
    IbFabric f2 = fh2.Build(IbTopologyBuilder::Ring(5, 1));
    EXPECT_TRUE(f2.subnetManager->CheckDeadlocks().empty());
    const uint32_t n = f2.hosts.GetN();
    EXPECT_EQ(AllPairsPackets(f2), uint64_t(n) * (n - 1));
}

/**
 * @param engine routing engine
 * @param [out] report the watchdog's report
 * @return true if the watchdog saw a deadlock in 5 ms of all-to-all on an 8-switch ring
 */
bool
RingDeadlocks(const std::string& engine, std::string& report)
{
    IbFabricHelper fh;
    fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue(engine));
    IbFabric f = fh.Build(IbTopologyBuilder::Ring(8, 1));
    ApplicationContainer apps =
        IbTrafficPattern::InstallRawFlows(f, IbTrafficPattern::AllToAll(8), ObjectFactory());
    apps.Start(MicroSeconds(1));
    apps.Stop(MilliSeconds(5));
    Ptr<IbDeadlockWatchdog> w = CreateObject<IbDeadlockWatchdog>();
    w->SetAttribute("Interval", TimeValue(MicroSeconds(500)));
    w->Install(f);
    Simulator::Stop(MilliSeconds(5));
    Simulator::Run();
    report = w->GetReport();
    const bool dead = w->IsDeadlocked();
    Simulator::Destroy();
    Names::Clear();
    IbHelper::ResetLidAllocation();
    return dead;
}

TEST_F(IbFabricTest, TheWatchdogReportsADeadlockedRingAndNotAnUpDownOne)
{
    std::string report;
    ASSERT_TRUE(RingDeadlocks("minhop", report));
    EXPECT_NE(report.find("waiting for each other's credits in a cycle"), std::string::npos)
        << report;
    EXPECT_NE(report.find("waits for"), std::string::npos) << report;
    // The cycle closes: the report ends with the port it started from.
    const size_t first = report.find("\n  ");
    const size_t last = report.rfind("\n  ");
    ASSERT_NE(first, last);
    const std::string a = report.substr(first + 3, report.find(" (", first) - first - 3);
    const std::string b = report.substr(last + 3, report.find(" (", last) - last - 3);
    EXPECT_EQ(a, b) << report;
    EXPECT_FALSE(RingDeadlocks("updn", report)) << report;
}

TEST_F(IbFabricTest, SampleIbnetdiscoverFileIsFullyReachable)
{
    // IB_SOURCE_DIR is absolute; __FILE__ may be relative to the build folder (ccache with
    // base_dir rewrites it), which would tie the test to the working directory.
    const std::string file =
        std::string(IB_SOURCE_DIR) + "/examples/topologies/two-level-fat-tree.ibnd";
    IbTopology t;
    std::string error;
    ASSERT_TRUE(IbNetDiscoverReader::Read(file, t, &error)) << error;
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("updn"));
    IbFabric f = fh.Build(t);
    const uint32_t n = f.hosts.GetN();
    ASSERT_GT(n, 1u);
    EXPECT_EQ(AllPairsPackets(f), uint64_t(n) * (n - 1));
    EXPECT_TRUE(f.subnetManager->CheckDeadlocks().empty());
}

TEST_F(IbFabricTest, LftDumpReadBackThroughFileEngineGivesIdenticalRoutes)
{
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    const IbTopology topo = IbTopologyBuilder::FatTree2Level(8, 16, 1.0);
    IbFabric f = fh.Build(topo);
    char path[] = "/tmp/ib-lfts-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    {
        std::ofstream out(path);
        f.subnetManager->WriteLfts(out);
    }
    const IbRoutingTables original = f.subnetManager->GetRoutingTables();
    Simulator::Destroy();
    Names::Clear();
    IbHelper::ResetLidAllocation();

    Ptr<IbFileRouting> fileEngine = CreateObject<IbFileRouting>();
    fileEngine->SetAttribute("FileName", StringValue(path));
    IbFabricHelper fh2;
    IbFabric f2 = fh2.Build(topo, false);
    f2.subnetManager = CreateObject<IbSubnetManager>();
    f2.subnetManager->SetRoutingEngine(fileEngine);
    f2.subnetManager->Configure(topo, f2.nodeOf);
    const IbRoutingTables& reread = f2.subnetManager->GetRoutingTables();
    ASSERT_EQ(reread.lft.size(), original.lft.size());
    for (uint32_t i = 0; i < original.lft.size(); ++i)
    {
        EXPECT_EQ(reread.lft[i], original.lft[i]) << "node " << i;
    }
    const uint32_t n = f2.hosts.GetN();
    EXPECT_EQ(AllPairsPackets(f2), uint64_t(n) * (n - 1));
    std::remove(path);
}

// A saturating stream of 4 KB packets on a 100 Gb/s cable: the bytes a port has put on the
// wire grow with time at the line rate, also in the middle of a packet (where GetTxBytes
// already counts the whole packet), so the port's utilisation over a window that ends
// mid-packet is 1, not 1 plus part of a packet over the window.
TEST_F(IbFabricTest, PortUtilisationIsTheWindowsShareOnTheWireAlsoWhenItEndsMidPacket)
{
    IbFabric f = IbFabricHelper().Build(IbTopologyBuilder::Chain(0, IbLinkRate::EDR, 4));
    Ptr<IbNetDevice> src = f.HostPort(0);
    Ptr<IbNetDevice> dst = f.HostPort(1);
    IbRawTrafficHelper traffic(dst->GetLid());
    traffic.SetAttribute("PayloadSize", UintegerValue(4096));
    traffic.Install(src).Start(MicroSeconds(1));
    const double bytesPerNs = src->GetDataRate().GetBitRate() / 8e9;
    ASSERT_DOUBLE_EQ(bytesPerNs, 12.5);
    const double wire = IbPacket::WireSize(4096, 0, false);
    const Time start = MicroSeconds(3);
    // A window of about six packets that ends in the middle of one, wherever they start.
    const Time stop = start + NanoSeconds(2000 + 137);
    IbFabricStats stats;
    stats.Install(f, start);
    // Samples 37 ns apart from 2 us on: (time in ns, bytes on the wire, bytes started).
    std::vector<std::tuple<int64_t, double, uint64_t>> samples;
    for (int64_t t = 2000; t < stop.GetNanoSeconds(); t += 37)
    {
        Simulator::Schedule(NanoSeconds(t), [&samples, src, t]() {
            samples.emplace_back(t, src->GetTxBytesOnWire(), src->GetTxBytes());
        });
    }
    Simulator::Stop(stop);
    Simulator::Run();

    ASSERT_GT(samples.size(), 10u);
    uint32_t midPacket = 0;
    for (std::size_t i = 1; i < samples.size(); ++i)
    {
        const auto& [t0, onWire0, started0] = samples[i - 1];
        const auto& [t1, onWire1, started1] = samples[i];
        // Packet ends fall on whole nanoseconds (12.5 bytes), so each sample is within a
        // nanosecond's bytes of the exact figure.
        EXPECT_NEAR(onWire1 - onWire0, (t1 - t0) * bytesPerNs, 2 * bytesPerNs) << "at " << t1;
        EXPECT_LE(onWire1, static_cast<double>(started1));
        EXPECT_GT(onWire1, static_cast<double>(started1) - wire - 1e-9);
        if (static_cast<double>(started1) - onWire1 > wire / 4)
        {
            ++midPacket;
        }
    }
    EXPECT_GT(midPacket, samples.size() / 2) << "the samples must fall inside packets";

    auto nameOf = [](Ptr<IbNetDevice> d) { // as IbFabricStats names ports
        const std::string n = Names::FindName(d->GetNode());
        return (n.empty() ? "node " + std::to_string(d->GetNode()->GetId()) : n) + " port " +
               std::to_string(d->GetIfIndex() + 1);
    };
    double srcUtilisation = -1;
    double dstUtilisation = -1;
    for (const auto& port : stats.GetPorts(stop))
    {
        if (port.name == nameOf(src))
        {
            srcUtilisation = port.utilisation;
        }
        if (port.name == nameOf(dst))
        {
            dstUtilisation = port.utilisation;
        }
    }
    // Two nanoseconds' bytes of rounding over a 2137 ns window.
    EXPECT_NEAR(srcUtilisation, 1.0, 2.0 / 2137);
    EXPECT_DOUBLE_EQ(dstUtilisation, 0.0); // it sends flow control only

    // A window that does not end after it starts (a warm-up as long as the run) is refused.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(stats.GetPorts(start),
                 "IbFabricStats: the window would end at \\+3.*us, not after its start at "
                 "\\+3.*us \\(Install\\); stop the statistics after they start");
}

TEST_F(IbFabricTest, AFlowToAHostTheFabricLacksIsRefusedNamingTheFlow)
{
    // Chain(1): two hosts. Flow 1 names host 9; the message says which flow and how many
    // hosts there are, in every build (not an assertion that Release builds leave out).
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbFabric f = IbFabricHelper().Build(IbTopologyBuilder::Chain(1));
    ObjectFactory flow;
    flow.SetTypeId("ns3::IbRawTrafficApplication");
    EXPECT_DEATH(IbTrafficPattern::InstallRawFlows(f, {{0, 1}, {1, 9}}, flow),
                 "IbTrafficPattern::InstallRawFlows: flow 1 \\(1 -> 9\\) names host 9, which "
                 "does not exist; the fabric has 2 hosts \\(0\\.\\.1\\)");
    EXPECT_DEATH(f.HostPort(2),
                 "IbFabric::HostPort: host 2 does not exist; the fabric has 2 hosts "
                 "\\(0\\.\\.1\\)");
    EXPECT_EQ(IbTrafficPattern::InstallRawFlows(f, {{0, 1}, {1, 0}}, flow).GetN(), 2u);
}

namespace
{

/**
 * One 4-port switch, host h0 with two ports and host h1 with two ports, h1 cabled on its
 * port 1 only.
 * @param h0Port1 whether h0's port 1 is cabled too (its port 2 always is)
 * @return the fabric, brought up
 */
IbFabric
TwoPortHosts(bool h0Port1)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(4, "sw", 0x10);
    const uint32_t h0 = t.AddCa(2, "h0", 0x20);
    const uint32_t h1 = t.AddCa(2, "h1", 0x30);
    std::string error;
    if (h0Port1)
    {
        EXPECT_TRUE(t.Connect(h0, 1, sw, 3, IbLinkRate::EDR, 4, &error)) << error;
    }
    EXPECT_TRUE(t.Connect(h0, 2, sw, 1, IbLinkRate::EDR, 4, &error)) << error;
    EXPECT_TRUE(t.Connect(h1, 1, sw, 2, IbLinkRate::EDR, 4, &error)) << error;
    return IbFabricHelper().Build(t);
}

} // namespace

TEST_F(IbFabricTest, RawFlowsTakeAnEmptyFactoryAndRefuseAnotherType)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbFabric f = IbFabricHelper().Build(IbTopologyBuilder::Chain(1));
    ApplicationContainer apps = IbTrafficPattern::InstallRawFlows(f, {{0, 1}}, ObjectFactory());
    ASSERT_EQ(apps.GetN(), 1u);
    EXPECT_TRUE(DynamicCast<IbRawTrafficApplication>(apps.Get(0)));
    ObjectFactory other;
    other.SetTypeId("ns3::IbPerftestApplication");
    EXPECT_DEATH(IbTrafficPattern::InstallRawFlows(f, {{0, 1}}, other),
                 "IbTrafficPattern::InstallRawFlows: the factory makes "
                 "ns3::IbPerftestApplication; it must make ns3::IbRawTrafficApplication");
}

TEST(IbHelperCables, APortTakesOneCableAndNoneToItself)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbHelper ib;
    Ptr<Node> n = CreateObject<Node>();
    Ptr<IbNetDevice> a = ib.InstallPort(n);
    Ptr<IbNetDevice> b = ib.InstallPort(CreateObject<Node>());
    Ptr<IbNetDevice> c = ib.InstallPort(CreateObject<Node>());
    EXPECT_DEATH(ib.Connect(a, a),
                 "IbHelper::Connect: cannot cable device 0 of node " + std::to_string(n->GetId()) +
                     " to itself");
    ib.Connect(a, b);
    EXPECT_DEATH(ib.Connect(c, a),
                 "IbHelper::Connect: device 0 of node " + std::to_string(n->GetId()) +
                     " already has a cable; a port takes one cable");
    Simulator::Destroy();
}

TEST_F(IbFabricTest, ACabledPortItsSwitchDoesNotKnowIsRefusedNamingTheNode)
{
    // A switch node whose port was installed as a plain device, never added with
    // IbSwitch::AddPort: the subnet manager stops with its message (it used to throw
    // std::out_of_range when the switch had no port at all).
    EXPECT_DEATH(
        {
            IbHelper ib;
            Ptr<Node> swNode = CreateObject<Node>();
            swNode->AggregateObject(CreateObject<IbSwitch>());
            Ptr<IbNetDevice> stray = ib.InstallPort(swNode, false);
            Ptr<IbNetDevice> host = ib.InstallPort(CreateObject<Node>(), false);
            ib.Connect(host, stray);
            Ptr<IbSubnetManager> sm = CreateObject<IbSubnetManager>();
            sm->Configure(NodeContainer(host->GetNode()));
        },
        "the port on node 0 is cabled but not a port of its switch; add it with "
        "IbSwitch::AddPort");
}

TEST_F(IbFabricTest, AHostCabledOnlyOnItsSecondPortIsReachedThere)
{
    // A dual-port HCA with only port 2 cabled (common in real fabrics): its host port is
    // port 2, with a LID, and traffic to it arrives.
    IbFabric f = TwoPortHosts(false);
    Ptr<IbNetDevice> p0 = f.HostPort(0);
    ASSERT_NE(p0->GetLid(), 0);
    EXPECT_EQ(p0->GetIfIndex(), 1u); // the node's second device: port 2
    EXPECT_TRUE(f.subnetManager->GetPathRecord(f.HostPort(1), p0).valid);
    uint64_t received = 0;
    p0->TraceConnectWithoutContext("MacRx", MakeCallback(+[](uint64_t* n, Ptr<const Packet>) {
                                                ++*n;
                                            }).Bind(&received));
    IbRawTrafficHelper traffic(p0->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(5));
    traffic.Install(f.HostPort(1)).Start(MicroSeconds(1));
    Simulator::Run();
    EXPECT_EQ(received, 5u);
}

TEST_F(IbFabricTest, WithLmcAPortTakesDatagramsToEveryLidOfItsRange)
{
    // Lmc=1: each host port has two LIDs, base and base + 1, routed by the switches. A raw
    // datagram to base + 1 reaches the port and must go up as addressed to it.
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("Lmc", UintegerValue(1));
    IbFabric f = fh.Build(IbTopologyBuilder::Chain(1));
    Ptr<IbNetDevice> a = f.HostPort(0);
    Ptr<IbNetDevice> b = f.HostPort(1);
    ASSERT_EQ(b->GetLid() % 2, 0);
    EXPECT_EQ(b->GetLmc(), 1);
    uint32_t up = 0;
    b->SetReceiveCallback(
        MakeCallback(+[](uint32_t* n, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&) {
            ++*n;
            return true;
        }).Bind(&up));
    Simulator::Schedule(MicroSeconds(1), [&]() {
        for (uint16_t k = 0; k < 2; ++k)
        {
            const uint16_t lid = b->GetLid() + k;
            const uint8_t bytes[2] = {static_cast<uint8_t>(lid >> 8),
                                      static_cast<uint8_t>(lid & 0xFF)};
            Mac16Address to;
            to.CopyFrom(bytes);
            ASSERT_TRUE(a->Send(Create<Packet>(64), to, 0x0800));
        }
    });
    Simulator::Run();
    EXPECT_EQ(up, 2u);
}

/*
 * A raw flow that delivers nothing is a flow of the statistics, with zero throughput
 * (before, only flows that delivered a packet existed, so a starved flow raised the mean
 * and Jain's index); and the statistics refuse a window that ended before they are read.
 */
TEST_F(IbFabricTest, FabricStatsCountFlowsThatDeliveredNothing)
{
    IbFabric f = IbFabricHelper().Build(IbTopologyBuilder::FatTree2Level(4, 4));
    IbFabricStats stats;
    stats.Install(f, Seconds(0));
    Ptr<RateErrorModel> lossy = CreateObject<RateErrorModel>();
    lossy->SetAttribute("ErrorRate", DoubleValue(1.0));
    lossy->SetAttribute("ErrorUnit", EnumValue(RateErrorModel::ERROR_UNIT_PACKET));
    f.HostPort(3)->SetReceiveErrorModel(lossy);
    for (uint32_t src : {0u, 2u})
    {
        IbRawTrafficHelper traffic(f.HostPort(src + 1)->GetLid());
        traffic.SetAttribute("MaxPackets", UintegerValue(10));
        traffic.Install(f.HostPort(src)).Start(MicroSeconds(1));
    }
    Simulator::Stop(MicroSeconds(50));
    Simulator::Run();
    const std::vector<IbFabricStats::Flow> flows = stats.GetFlows();
    ASSERT_EQ(flows.size(), 2u);
    for (const auto& flow : flows)
    {
        const bool starved = flow.dlid == f.HostPort(3)->GetLid();
        EXPECT_EQ(flow.packets, starved ? 0u : 10u) << flow.slid << " -> " << flow.dlid;
    }
    std::ostringstream out;
    stats.Print(out, MicroSeconds(50));
    EXPECT_NE(out.str().find("2 flows: payload Gb/s min 0.000"), std::string::npos) << out.str();
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(stats.Print(out, MicroSeconds(20)),
                 "IbFabricStats: the window would end at .*20.*us, but the counters are read "
                 "now, at .*50.*us");
}

TEST_F(IbFabricTest, FabricStatsLeaveOutFlowsThatEndedBeforeTheWindow)
{
    // A window from 20 us: host 0's 10 packets (MaxPackets) are sent and delivered by
    // about 2 us, so it is no flow of the window (before, it was listed as starved, with
    // 0 Gb/s, pulling down the minimum and Jain's index); host 2's saturating flow is.
    IbFabric f = IbFabricHelper().Build(IbTopologyBuilder::FatTree2Level(4, 4));
    IbFabricStats stats;
    stats.Install(f, MicroSeconds(20));
    IbRawTrafficHelper done(f.HostPort(1)->GetLid());
    done.SetAttribute("MaxPackets", UintegerValue(10));
    done.Install(f.HostPort(0)).Start(MicroSeconds(1));
    IbRawTrafficHelper saturating(f.HostPort(3)->GetLid());
    saturating.Install(f.HostPort(2)).Start(MicroSeconds(1));
    Simulator::Stop(MicroSeconds(50));
    Simulator::Run();
    const std::vector<IbFabricStats::Flow> flows = stats.GetFlows();
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(flows[0].dlid, f.HostPort(3)->GetLid());
    EXPECT_GT(flows[0].packets, 0u);
}

TEST_F(IbFabricTest, FabricStatsReadTheLidsWhenTheyAreAsked)
{
    // Installed before the subnet manager has numbered the ports: the LIDs used to be read
    // then (all 0), so a flow that delivered nothing was never listed.
    const IbTopology t = IbTopologyBuilder::FatTree2Level(4, 4);
    IbFabric f = IbFabricHelper().Build(t, false);
    IbFabricStats stats;
    stats.Install(f, Seconds(0));
    f.subnetManager = CreateObject<IbSubnetManager>();
    f.subnetManager->Configure(t, f.nodeOf);
    Ptr<RateErrorModel> lossy = CreateObject<RateErrorModel>();
    lossy->SetAttribute("ErrorRate", DoubleValue(1.0));
    lossy->SetAttribute("ErrorUnit", EnumValue(RateErrorModel::ERROR_UNIT_PACKET));
    f.HostPort(1)->SetReceiveErrorModel(lossy);
    IbRawTrafficHelper traffic(f.HostPort(1)->GetLid());
    traffic.Install(f.HostPort(0)).Start(MicroSeconds(1));
    Simulator::Stop(MicroSeconds(20));
    Simulator::Run();
    const std::vector<IbFabricStats::Flow> flows = stats.GetFlows();
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(flows[0].dlid, f.HostPort(1)->GetLid());
    EXPECT_EQ(flows[0].packets, 0u);
}

TEST_F(IbFabricTest, FabricStatsSeeEveryCabledHostPort)
{
    // A dual-rail host (both ports cabled): a flow to its second port is a flow, and both
    // its ports are ports. A host port without a cable is not counted.
    IbFabric f = TwoPortHosts(true);
    Ptr<IbNetDevice> rail2 = DynamicCast<IbNetDevice>(f.hosts.Get(0)->GetDevice(1));
    ASSERT_NE(rail2->GetLid(), 0);
    IbFabricStats stats;
    stats.Install(f, Seconds(0));
    IbRawTrafficHelper traffic(rail2->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(4));
    traffic.Install(f.HostPort(1)).Start(MicroSeconds(1));
    Simulator::Run();
    const std::vector<IbFabricStats::Flow> flows = stats.GetFlows();
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(flows[0].dlid, rail2->GetLid());
    EXPECT_EQ(flows[0].packets, 4u);
    // Ports: h0's two, h1's one (its port 2 has no cable) and the switch's three.
    EXPECT_EQ(stats.GetPorts(Simulator::Now()).size(), 6u);
}

TEST_F(IbFabricTest, FabricStatsTakeTheRanksOwnNodes)
{
    // A distributed run's rank holds every node but runs its own. Here (one process, no
    // MPI) the second leaf's nodes get system id 1: the statistics of rank 0 leave out
    // its ports and the flows that end there, which they reported as starved before.
    const IbTopology t = IbTopologyBuilder::FatTree2Level(4, 4); // 2 leaves of 2 hosts
    IbFabricHelper fh;
    std::vector<uint32_t> rank(t.GetNNodes(), 0);
    uint32_t leaves = 0;
    for (uint32_t n = 0; n < t.GetNNodes(); ++n)
    {
        const IbTopology::Node& node = t.GetNode(n);
        bool leaf = false;
        for (uint32_t p = 1; p < node.ports.size(); ++p)
        {
            leaf |= node.type == IbTopology::SWITCH && node.ports[p].peerNode >= 0 &&
                    t.GetNode(node.ports[p].peerNode).type == IbTopology::CA;
        }
        if (leaf && leaves++ == 1)
        {
            rank[n] = 1;
            for (uint32_t p = 1; p < node.ports.size(); ++p)
            {
                if (node.ports[p].peerNode >= 0 &&
                    t.GetNode(node.ports[p].peerNode).type == IbTopology::CA)
                {
                    rank[node.ports[p].peerNode] = 1;
                }
            }
        }
    }
    fh.SetRankOfNode([&rank](uint32_t i) { return rank[i]; });
    IbFabric f = fh.Build(t);
    ASSERT_EQ(f.hosts.GetN(), 4u);
    IbFabricStats stats;
    stats.Install(f, Seconds(0));
    // A flow from every host to every other.
    for (uint32_t a = 0; a < 4; ++a)
    {
        for (uint32_t b = 0; b < 4; ++b)
        {
            if (a != b && f.hosts.Get(a)->GetSystemId() == 0)
            {
                IbRawTrafficHelper traffic(f.HostPort(b)->GetLid());
                traffic.SetAttribute("MaxPackets", UintegerValue(2));
                traffic.Install(f.HostPort(a)).Start(MicroSeconds(1));
            }
        }
    }
    Simulator::Run();
    uint32_t local = 0;
    std::set<uint16_t> localLids;
    for (uint32_t h = 0; h < 4; ++h)
    {
        if (f.hosts.Get(h)->GetSystemId() == 0)
        {
            ++local;
            localLids.insert(f.HostPort(h)->GetLid());
        }
    }
    ASSERT_EQ(local, 2u);
    const std::vector<IbFabricStats::Flow> flows = stats.GetFlows();
    ASSERT_EQ(flows.size(), 2u); // the two rank-0 hosts to each other
    for (const auto& fl : flows)
    {
        EXPECT_EQ(localLids.count(fl.dlid), 1u);
        EXPECT_EQ(fl.packets, 2u);
    }
    // The ports of rank 0: its 2 hosts' and its leaf's and spines' (every switch but the
    // second leaf).
    uint32_t ports = 2;
    for (uint32_t n = 0; n < t.GetNNodes(); ++n)
    {
        if (t.GetNode(n).type == IbTopology::SWITCH && rank[n] == 0)
        {
            for (const auto& port : t.GetNode(n).ports)
            {
                ports += port.peerNode >= 0 ? 1 : 0;
            }
        }
    }
    EXPECT_EQ(stats.GetPorts(Simulator::Now()).size(), ports);
}

TEST_F(IbFabricTest, APathRecordFromASwitchLidIsRefusedNamingTheSwitch)
{
    // A switch's LID is its management port 0, which has no port device to start from.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbFabric f = IbFabricHelper().Build(IbTopologyBuilder::Chain(1));
    const uint16_t swLid = f.switchOf[2]->GetLid();
    ASSERT_NE(swLid, 0);
    EXPECT_DEATH(f.subnetManager->GetPathRecord(swLid, f.HostPort(0)->GetLid()),
                 "GetPathRecord: source LID " + std::to_string(swLid) +
                     " is switch '[^']+' \\(its management port 0\\); path records start at "
                     "a channel adapter port");
    EXPECT_TRUE(f.subnetManager->GetPathRecord(f.HostPort(1), f.HostPort(0)).valid);
    // To a switch's LID, on the other hand, there is a path: one switch, the destination
    // (before, the record was invalid: the LFT's port 0 ended the walk as a dead end).
    const IbPathRecord toSwitch = f.subnetManager->GetPathRecord(f.HostPort(0)->GetLid(), swLid);
    EXPECT_TRUE(toSwitch.valid);
    EXPECT_EQ(toSwitch.hops, 1u);
}

TEST_F(IbFabricTest, MulticastGroupsSpanTheirMembersAndRefuseWhatCannotBeAGroup)
{
    // Hosts 0 and 3 sit on the two leaves of a 4-host, radix-4 two-level tree: the group
    // takes both leaves and one spine; each leaf forwards to its host and to that spine.
    IbFabric f = IbFabricHelper().Build(IbTopologyBuilder::FatTree2Level(4, 4));
    const auto entries =
        IbMulticastGroup::Create(f.subnetManager, 0xC001, {f.HostPort(0), f.HostPort(3)});
    ASSERT_EQ(entries.size(), 3u);
    uint32_t withTwoPorts = 0;
    for (const auto& [node, ports] : entries)
    {
        withTwoPorts += ports.size() == 2 ? 1 : 0;
    }
    EXPECT_EQ(withTwoPorts, 3u); // leaves: host + uplink; spine: one port to each leaf
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(IbMulticastGroup::Create(f.subnetManager, 0xC002, {}),
                 "group 0xc002 has no members; pass the CA ports");
    Ptr<IbNetDevice> switchPort;
    for (const auto& sw : f.switchOf)
    {
        if (sw)
        {
            switchPort = sw->GetPort(1);
            break;
        }
    }
    ASSERT_TRUE(switchPort);
    EXPECT_DEATH(IbMulticastGroup::Create(f.subnetManager, 0xC003, {f.HostPort(1), switchPort}),
                 "member 1 \\(a port of node [0-9]+\\) is not a CA port of the subnet "
                 "manager's fabric");
    // Two hosts cabled back to back: no switch forwards their multicast (before, the group
    // was created empty and never delivered).
    EXPECT_DEATH(
        {
            IbFabric pair = IbFabricHelper().Build(IbTopologyBuilder::Chain(0));
            IbMulticastGroup::Create(pair.subnetManager,
                                     0xC004,
                                     {pair.HostPort(0), pair.HostPort(1)});
        },
        "member port 1 of \"[^\"]+\" is not cabled to a switch; multicast is forwarded by "
        "switches");
}

TEST(IbHelperLids, EverySimulationNumbersItsPortsFromLidOne)
{
    // A parameter sweep: ports installed in three simulations one after another, with no
    // IbHelper::ResetLidAllocation in between. Simulator::Destroy restarts the allocation,
    // so each simulation's ports get LIDs 1, 2, ... (and a sweep never runs out of the
    // 49151 unicast LIDs; the subnet manager may renumber them afterwards).
    IbHelper::ResetLidAllocation();
    for (int run = 0; run < 3; ++run)
    {
        IbHelper ib;
        Ptr<Node> node = CreateObject<Node>();
        EXPECT_EQ(ib.InstallPort(node)->GetLid(), 1) << "simulation " << run;
        EXPECT_EQ(ib.InstallPort(node)->GetLid(), 2) << "simulation " << run;
        Simulator::Destroy();
    }
}

TEST(IbHelperLids, FabricsTakeNoAutomaticLids)
{
    // IbFabricHelper's ports get their LIDs from the subnet manager: a switch port has
    // none, and none takes one of IbHelper's automatic LIDs. Before, every port did, so a
    // fabric of more than 49151 ports (FatTree3Level(32, 8192): 49,152) aborted although
    // it needs 9,472 LIDs, and so did the eighth 1024-host fabric of one simulation.
    IbHelper::ResetLidAllocation();
    IbFabric f = IbFabricHelper().Build(IbTopologyBuilder::FatTree2Level(4, 4));
    for (const auto& sw : f.switchOf)
    {
        if (sw)
        {
            EXPECT_EQ(sw->GetPort(1)->GetLid(), 0);
        }
    }
    EXPECT_NE(f.HostPort(0)->GetLid(), 0);
    IbHelper ib;
    EXPECT_EQ(ib.InstallPort(CreateObject<Node>())->GetLid(), 1);
    Simulator::Destroy();
}

TEST(IbTrafficPatternDraws, APatternOverFewerThanTwoHostsIsRefused)
{
    // All-to-all and incast over one host were no flows, silently; shift said "sends hosts
    // to themselves".
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(IbTrafficPattern::AllToAll(1),
                 "AllToAll: 1 host\\(s\\); a traffic pattern needs at least 2");
    EXPECT_DEATH(IbTrafficPattern::Incast(1, 0), "Incast: 1 host\\(s\\)");
    EXPECT_DEATH(IbTrafficPattern::ByName("shift", 1, 1), "Shift: 1 host\\(s\\)");
    EXPECT_EQ(IbTrafficPattern::AllToAll(2).size(), 2u);
    EXPECT_EQ(IbTrafficPattern::Incast(3, 2).size(), 2u);
}

TEST(IbTrafficPatternDraws, ARandomPermutationIsTheSameOnEveryStandardLibrary)
{
    // std::mt19937 seeded with 1 gives 1791095845, 4282876139, 3093770124, 4005303368
    // (its sequence is fixed by the C++ standard). None is rejected (2^32 mod i is 0, 1,
    // 0, 0 for i = 4, 3, 2, 1), so Sattolo's swaps take positions 1791095845 mod 4 = 1,
    // 4282876139 mod 3 = 2, then 0 and 0: [0 1 2 3 4] -> [0 4 2 3 1] -> [0 4 3 2 1] ->
    // [3 4 0 2 1] -> [4 3 0 2 1], the cycle 0 4 1 3 2.
    const std::vector<IbTrafficPattern::Flow> expected{{0, 4}, {1, 3}, {2, 0}, {3, 2}, {4, 1}};
    EXPECT_EQ(IbTrafficPattern::RandomPermutation(5, 1), expected);

    // Larger sizes: every host sends once and receives once, and following the
    // destinations from host 0 visits every host before coming back (one cycle).
    for (uint32_t n : {2u, 3u, 128u, 1000u})
    {
        const auto flows = IbTrafficPattern::RandomPermutation(n, 7);
        ASSERT_EQ(flows.size(), n);
        std::vector<uint32_t> dst(n);
        std::vector<bool> received(n, false);
        for (uint32_t i = 0; i < n; ++i)
        {
            EXPECT_EQ(flows[i].first, i);
            dst[i] = flows[i].second;
            EXPECT_FALSE(received[dst[i]]) << "host " << dst[i] << " receives twice, n = " << n;
            received[dst[i]] = true;
        }
        uint32_t h = 0;
        uint32_t steps = 0;
        do
        {
            h = dst[h];
            ++steps;
        } while (h != 0 && steps <= n);
        EXPECT_EQ(steps, n) << "n = " << n;
    }
}

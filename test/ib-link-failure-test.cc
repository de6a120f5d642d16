/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Link failures: what a failed cable loses, how the subnet manager routes around it (trap,
 * heavy sweep, LFT blocks by SMP), how RC connections recover through retransmission or
 * fail with RETRY_EXC_ERR, and a data-mode allreduce across a failure.
 */

#include "collective-test-util.h"

#include "ns3/collective-communicator.h"
#include "ns3/collective-helper.h"
#include "ns3/core-module.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-link-failure-helper.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-multicast-group.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-outage-monitor.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-topology.h"
#include "ns3/network-module.h"
#include "ns3/sharp-aggregation-manager.h"
#include "ns3/sharp-aggregation-node.h"
#include "ns3/sharp-collective-algorithm.h"
#include "ns3/sharp-helper.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

class IbLinkFailureTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// TrapDelay, SmpTime and MaxWireSmps as the defaults give them.
const Time kTrapDelay = MicroSeconds(100);
const Time kSmpTime = MicroSeconds(10);
constexpr uint32_t kWireSmps = 4;

/**
 * @param smps SMPs
 * @return the time the SM takes for them, kWireSmps at a time
 */
Time
Batches(uint32_t smps)
{
    return kSmpTime * static_cast<int64_t>((smps + kWireSmps - 1) / kWireSmps);
}

/**
 * @param topo a topology
 * @return the SMPs of a heavy sweep's discovery: NodeInfo and NodeDescription per node,
 *         SwitchInfo per switch, PortInfo per port
 */
uint32_t
DiscoverySmps(const IbTopology& topo)
{
    uint32_t smps = 0;
    for (const auto& n : topo.GetNodes())
    {
        smps += (n.type == IbTopology::SWITCH ? 3 : 2) + static_cast<uint32_t>(n.ports.size()) - 1;
    }
    return smps;
}

/**
 * @param dataMode carry real bytes
 * @param reroute RerouteOnLinkChange
 * @return a 2-level fat tree of radix 8 (8 leaves of 4 hosts, 4 spines), EDR, ftree
 */
IbFabric
Tree(std::vector<Ptr<IbHca>>& hcas, bool dataMode, bool reroute = true, bool ar = false)
{
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    fh.SetSubnetManagerAttribute("RerouteOnLinkChange", BooleanValue(reroute));
    fh.SetSubnetManagerAttribute("CheckDeadlock", BooleanValue(true));
    fh.SetSubnetManagerAttribute("AdaptiveRouting", BooleanValue(ar));
    fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    IbFabric fab = fh.Build(IbTopologyBuilder::FatTree2Level(8, 32, 1.0, IbLinkRate::EDR, 4));
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(dataMode));
    hcas = hh.Install(fab.hosts);
    return fab;
}

/**
 * @param fab the fabric
 * @param host a host
 * @return the topology index of the leaf switch it is cabled to
 */
uint32_t
LeafOf(const IbFabric& fab, uint32_t host)
{
    const IbTopology& topo = fab.subnetManager->GetTopology();
    for (uint32_t i = 0; i < fab.nodeOf.size(); ++i)
    {
        if (fab.nodeOf[i] == fab.hosts.Get(host))
        {
            return topo.GetNode(i).ports[1].peerNode;
        }
    }
    return 0;
}

/// An RC connection carrying WRITEs, with what its requester reported.
struct Stream
{
    Ptr<IbQueuePair> qp[2];             ///< requester, responder
    Ptr<IbMemoryRegion> src;            ///< source
    Ptr<IbMemoryRegion> dst;            ///< destination
    std::vector<IbWorkCompletion> done; ///< send completions
    std::vector<Time> rewinds;          ///< when the requester went back
};

std::unique_ptr<Stream>
StartStream(const IbFabric& fab,
            Ptr<IbHca> a,
            Ptr<IbHca> b,
            uint32_t messages,
            uint32_t bytes,
            uint8_t timeout,
            uint8_t retryCnt)
{
    auto s = std::make_unique<Stream>();
    Ptr<IbCompletionQueue> cqa = a->CreateCq();
    Ptr<IbCompletionQueue> cqb = b->CreateCq();
    s->qp[0] = a->CreateQp(IbQpType::RC, cqa, cqa);
    s->qp[1] = b->CreateQp(IbQpType::RC, cqb, cqb);
    IbQpAttr base;
    base.timeout = timeout;
    base.retryCnt = retryCnt;
    IbHcaHelper::ConnectRc(s->qp[0], s->qp[1], fab.subnetManager, base);
    const uint64_t total = uint64_t(messages) * bytes;
    s->src = a->RegisterMemory(total, IB_ACCESS_LOCAL_WRITE);
    s->dst = b->RegisterMemory(total, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    if (s->src->GetData() != nullptr)
    {
        uint32_t seed = 7;
        for (uint64_t i = 0; i < total; ++i)
        {
            seed = seed * 1103515245u + 12345u;
            s->src->GetData()[i] = static_cast<uint8_t>(seed >> 16);
        }
    }
    Stream* raw = s.get();
    cqa->TraceConnectWithoutContext(
        "Completion",
        Callback<void, const IbWorkCompletion&>(
            [raw](const IbWorkCompletion& wc) { raw->done.push_back(wc); }));
    s->qp[0]->TraceConnectWithoutContext(
        "Retransmit",
        Callback<void, uint32_t, const std::string&>(
            [raw](uint32_t, const std::string&) { raw->rewinds.push_back(Simulator::Now()); }));
    for (uint32_t m = 0; m < messages; ++m)
    {
        IbSendWr wr;
        wr.wrId = m;
        wr.opcode = IbWrOpcode::RDMA_WRITE;
        wr.sge.addr = s->src->GetAddr() + uint64_t(m) * bytes;
        wr.sge.length = bytes;
        wr.sge.lkey = s->src->GetLkey();
        wr.remoteAddr = s->dst->GetAddr() + uint64_t(m) * bytes;
        wr.rkey = s->dst->GetRkey();
        std::string err;
        NS_ABORT_MSG_UNLESS(s->qp[0]->PostSend(wr, &err), err);
    }
    return s;
}

} // namespace

// A cable fails with traffic on it: the packets on the wire and in the port's queue are
// lost, both ends forget their credits, and after it comes back (no reroute) the link
// starts over from initial flow-control packets and the RC stream completes intact.
TEST_F(IbLinkFailureTest, FailedCableLosesItsPacketsAndStartsOverWhenRestored)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(hcas, true, false);
    const uint16_t dlid = fab.HostPort(4)->GetLid();
    Ptr<IbSwitch> leaf = fab.switchOf[LeafOf(fab, 0)];
    const uint8_t up = leaf->GetLftEntry(dlid);
    Ptr<IbChannel> cable = DynamicCast<IbChannel>(leaf->GetPort(up)->GetChannel());
    auto s = StartStream(fab, hcas[0], hcas[4], 4, 256 * 1024, 6, 7);
    uint64_t onWire = 0;
    uint64_t queued = 0;
    leaf->GetPort(up)->TraceConnectWithoutContext(
        "LinkDownDrop",
        Callback<void, Ptr<const Packet>, bool>(
            [&](Ptr<const Packet>, bool wire) { (wire ? onWire : queued)++; }));
    std::vector<std::pair<Time, bool>> states;
    cable->TraceConnectWithoutContext("LinkState", Callback<void, bool>([&](bool upNow) {
                                          states.emplace_back(Simulator::Now(), upNow);
                                      }));
    const Time down = MicroSeconds(30);
    const Time back = MicroSeconds(400);
    IbLinkFailureHelper lf;
    lf.Schedule(cable, down, back);
    Simulator::Schedule(down + NanoSeconds(1), [&]() {
        EXPECT_TRUE(leaf->GetPort(up)->IsFailed());
        EXPECT_FALSE(leaf->GetPort(up)->IsLinkUp());
        EXPECT_EQ(leaf->GetPort(up)->GetTxQueueLength(0), 0u);
        EXPECT_FALSE(leaf->GetPort(up)->HasCreditsFor(0, 1)) << "credits forgotten";
    });
    Simulator::Run();
    // The stream ran at line rate towards the leaf: a packet was on the cable (10 ns plus
    // a cut-through header) or being serialized when it failed, and at least one waited.
    EXPECT_GE(onWire + queued, 1u);
    EXPECT_EQ(leaf->GetPort(up)->GetLinkDownDrops(), onWire + queued);
    ASSERT_EQ(states.size(), 2u);
    EXPECT_EQ(states[0], std::make_pair(down, false));
    EXPECT_EQ(states[1].second, true);
    EXPECT_GE(states[1].first, back);
    EXPECT_LT(states[1].first, back + NanoSeconds(1)) << "the wire drained long before";
    EXPECT_FALSE(leaf->GetPort(up)->IsFailed());
    EXPECT_EQ(fab.subnetManager->GetSweeps(), 0u) << "RerouteOnLinkChange=false";
    ASSERT_EQ(s->done.size(), 4u);
    for (const auto& wc : s->done)
    {
        EXPECT_EQ(wc.status, IbWcStatus::SUCCESS);
    }
    EXPECT_EQ(std::memcmp(s->src->GetData(), s->dst->GetData(), s->src->GetLength()), 0);
    // Recovery came from the first local ACK timeout after the cable was back: the
    // requester went back every 262 us (timeout 6) from its last progress.
    ASSERT_GE(s->rewinds.size(), 2u);
    const Time period = IbAckTimeoutValue(6);
    for (size_t k = 1; k < s->rewinds.size(); ++k)
    {
        if (s->rewinds[k - 1] < back)
        {
            EXPECT_EQ(s->rewinds[k] - s->rewinds[k - 1], period);
        }
    }
}

// The SM learns of the failure by trap, sweeps (an SMP per node, switch and port, four
// on the wire at a time) and writes the LFT blocks that changed: the tables avoid the
// cable from then on, every host still reaches every other, and the routes are free of
// credit loops. When the cable is back, a second sweep restores the original tables.
TEST_F(IbLinkFailureTest, SubnetManagerRoutesAroundTheCableAndBackAgain)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(hcas, false);
    Ptr<IbSubnetManager> sm = fab.subnetManager;
    std::vector<std::vector<uint8_t>> original;
    for (const auto& sw : fab.switchOf)
    {
        original.push_back(sw ? sw->GetLft() : std::vector<uint8_t>());
    }
    const uint32_t leafIdx = LeafOf(fab, 0);
    Ptr<IbSwitch> leaf = fab.switchOf[leafIdx];
    const uint8_t up = 5; // the leaf's first up port
    const auto peer = sm->GetTopology().GetNode(leafIdx).ports[up];
    Ptr<IbChannel> cable = IbLinkFailureHelper::FindCable(fab.nodeOf[leafIdx], up);
    const uint32_t discovery = DiscoverySmps(sm->GetTopology());
    std::vector<std::pair<Time, uint32_t>> reroutes;
    sm->TraceConnectWithoutContext("Rerouted", Callback<void, uint32_t>([&](uint32_t blocks) {
                                       reroutes.emplace_back(Simulator::Now(), blocks);
                                   }));
    const Time down = MicroSeconds(10);
    const Time back = MilliSeconds(3);
    IbLinkFailureHelper().Schedule(cable, down, back);
    Simulator::Schedule(MilliSeconds(2), [&]() {
        // Rerouted: nothing is routed over the cable any more, from either end.
        ASSERT_EQ(reroutes.size(), 1u);
        EXPECT_GT(reroutes[0].second, 0u);
        EXPECT_EQ(reroutes[0].first,
                  down + kTrapDelay + Batches(discovery) + Batches(reroutes[0].second));
        EXPECT_EQ(sm->GetLastRerouteTime(), reroutes[0].first);
        for (uint8_t p : leaf->GetLft())
        {
            EXPECT_NE(p, up);
        }
        for (uint8_t p : fab.switchOf[peer.peerNode]->GetLft())
        {
            EXPECT_NE(p, peer.peerPort);
        }
        for (uint32_t a = 0; a < 32; ++a)
        {
            for (uint32_t b = 0; b < 32; ++b)
            {
                if (a != b)
                {
                    EXPECT_TRUE(sm->GetPathRecord(fab.HostPort(a), fab.HostPort(b)).valid)
                        << a << " -> " << b;
                }
            }
        }
        EXPECT_TRUE(sm->CheckDeadlocks().empty());
        EXPECT_EQ(sm->GetTopology().GetNode(leafIdx).ports[up].peerNode, -1);
    });
    Simulator::Stop(MilliSeconds(6));
    Simulator::Run();
    ASSERT_EQ(reroutes.size(), 2u);
    EXPECT_EQ(sm->GetSweeps(), 2u);
    EXPECT_EQ(reroutes[1].first,
              back + kTrapDelay + Batches(discovery) + Batches(reroutes[1].second));
    for (uint32_t i = 0; i < fab.switchOf.size(); ++i)
    {
        if (fab.switchOf[i])
        {
            EXPECT_EQ(fab.switchOf[i]->GetLft(), original[i]) << "switch " << i;
        }
    }
    EXPECT_EQ(sm->GetTopology().GetNode(leafIdx).ports[up].peerNode, peer.peerNode);
}

// An RC stream whose path loses a cable mid-transfer: its outage runs from the first lost
// packet to the first retransmission after the reroute, which is the first local ACK
// timeout after it; the stream completes with the bytes it sent.
TEST_F(IbLinkFailureTest, RcStreamRecoversAtTheFirstTimeoutAfterTheReroute)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(hcas, true);
    IbOutageMonitor monitor;
    monitor.Install(fab);
    const uint16_t dlid = fab.HostPort(4)->GetLid();
    Ptr<IbSwitch> leaf = fab.switchOf[LeafOf(fab, 0)];
    const uint8_t up = leaf->GetLftEntry(dlid);
    Ptr<IbChannel> cable = DynamicCast<IbChannel>(leaf->GetPort(up)->GetChannel());
    auto s = StartStream(fab, hcas[0], hcas[4], 8, 256 * 1024, 6, 7);
    const Time down = MicroSeconds(50);
    IbLinkFailureHelper().Schedule(cable, down);
    Simulator::Run();
    ASSERT_EQ(s->done.size(), 8u);
    for (const auto& wc : s->done)
    {
        EXPECT_EQ(wc.status, IbWcStatus::SUCCESS);
    }
    EXPECT_EQ(std::memcmp(s->src->GetData(), s->dst->GetData(), s->src->GetLength()), 0);
    const Time rerouted = fab.subnetManager->GetLastRerouteTime();
    const Time period = IbAckTimeoutValue(6);
    EXPECT_GT(rerouted, down + kTrapDelay);
    // The first go-back after the reroute brings the first packet through.
    Time recovery = Time::Max();
    for (const Time& t : s->rewinds)
    {
        if (t >= rerouted)
        {
            recovery = std::min(recovery, t);
        }
    }
    ASSERT_NE(recovery, Time::Max());
    EXPECT_LT(recovery - rerouted, period);
    bool found = false;
    for (const auto& o : monitor.GetOutages())
    {
        if (o.dlid == dlid && o.destQp == s->qp[1]->GetQpNum())
        {
            found = true;
            // The packet the leaf was sending had crossed into the spine (cut-through): the
            // first lost is the next one, within a packet time (4122 bytes at 100 Gb/s).
            EXPECT_GE(o.firstLost, down);
            EXPECT_LE(o.firstLost, down + NanoSeconds(330));
            ASSERT_NE(o.recovered, Time::Max());
            // Four hops (two switches' cut-through, three cables) from the go-back.
            EXPECT_GE(o.recovered, recovery);
            EXPECT_LT(o.recovered, recovery + MicroSeconds(2));
            // detection + reroute <= outage < detection + reroute + one timeout
            EXPECT_GE(o.Duration(), rerouted - down);
            EXPECT_LT(o.Duration(), rerouted - down + period + MicroSeconds(2));
            EXPECT_GT(o.lost, 0u);
        }
    }
    EXPECT_TRUE(found);
    std::ostringstream os;
    monitor.Print(os);
    EXPECT_NE(os.str().find("outages"), std::string::npos);
}

// No reroute and few retries: the WRITE at the head completes with RETRY_EXC_ERR at the
// retryCnt-th timeout after the first go-back, and the queue pair flushes the rest.
TEST_F(IbLinkFailureTest, RetriesExhaustedBeforeRecoveryCompleteWithRetryExcErr)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(hcas, false, false);
    const uint16_t dlid = fab.HostPort(4)->GetLid();
    Ptr<IbSwitch> leaf = fab.switchOf[LeafOf(fab, 0)];
    Ptr<IbChannel> cable =
        DynamicCast<IbChannel>(leaf->GetPort(leaf->GetLftEntry(dlid))->GetChannel());
    auto s = StartStream(fab, hcas[0], hcas[4], 4, 256 * 1024, 6, 3);
    IbLinkFailureHelper().Schedule(cable, MicroSeconds(50));
    Simulator::Run();
    ASSERT_EQ(s->done.size(), 4u);
    size_t k = 0;
    while (k < s->done.size() && s->done[k].status == IbWcStatus::SUCCESS)
    {
        ++k; // those acknowledged before the failure
    }
    ASSERT_LT(k, s->done.size());
    const IbWorkCompletion& failed = s->done[k];
    EXPECT_EQ(failed.status, IbWcStatus::RETRY_EXC_ERR);
    ASSERT_EQ(s->rewinds.size(), 3u);
    EXPECT_GT(s->rewinds.front(), MicroSeconds(50));
    // The retryCnt-th timeout after the first go-back, and the CQE's PCIe write.
    EXPECT_EQ(failed.timestamp,
              s->rewinds.front() + IbAckTimeoutValue(6) * 3 + hcas[0]->GetPcieWriteLatency());
    for (++k; k < s->done.size(); ++k)
    {
        EXPECT_EQ(s->done[k].status, IbWcStatus::WR_FLUSH_ERR);
    }
    EXPECT_EQ(s->qp[0]->GetState(), IbQpState::ERR);
}

// A data-mode ring allreduce on 8 hosts loses a spine cable mid-operation: the transport's
// queue pairs recover by retransmission after the reroute and the result is exact.
TEST_F(IbLinkFailureTest, DataModeAllreduceCompletesCorrectlyAcrossAFailure)
{
    using namespace ibtest;
    IbSetup s;
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    fh.SetSubnetManagerAttribute("CheckDeadlock", BooleanValue(true));
    s.fabric = fh.Build(IbTopologyBuilder::FatTree2Level(4, 8));
    s.helper.SetHcaAttribute("DataMode", BooleanValue(true));
    s.helper.SetAlgorithm("ring");
    s.helper.SetIbTransportAttribute("Timeout", UintegerValue(6));
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    IbOutageMonitor monitor;
    monitor.Install(s.fabric);
    CollectiveOpSpec spec;
    spec.type = CollectiveDataType::FLOAT32;
    spec.count = 1 << 20; // 4 MiB per rank
    const Buffers in = MakeInputs(spec.type, spec.op, 8, spec.count * 4, 5);
    // Without the failure first, for the time it takes.
    Buffers out = in;
    const Time healthy = CollectiveHelper::Run(comm, spec, &out);
    ASSERT_NE(healthy, Time::Max());
    // Then fail a leaf's up cable a third of the way into the next one.
    const std::vector<Ptr<IbChannel>> cables = IbLinkFailureHelper::SwitchCables(s.fabric);
    ASSERT_FALSE(cables.empty());
    const Time start = Simulator::Now();
    Simulator::Schedule(healthy / 3, &IbChannel::SetLinkDown, cables.front());
    out = in;
    const Time withFailure = CollectiveHelper::Run(comm, spec, &out);
    ASSERT_NE(withFailure, Time::Max());
    std::vector<const uint8_t*> res;
    for (const auto& b : out)
    {
        res.push_back(b.data());
    }
    EXPECT_EQ(CheckReduce(spec.type, spec.op, in, res, 0, spec.count * 4, "across a failure"), 0u);
    EXPECT_EQ(s.fabric.subnetManager->GetSweeps(), 1u);
    EXPECT_FALSE(monitor.GetOutages().empty());
    // Its flows across the cable waited for the reroute: it ended after it.
    EXPECT_GT(start + withFailure, s.fabric.subnetManager->GetLastRerouteTime());
    std::cout << "allreduce 4 MiB x 8: healthy " << healthy.As(Time::US) << ", with a failure "
              << withFailure.As(Time::US) << std::endl;
    monitor.Print(std::cout, 8);
}

// Adaptive routing leaves a failed member out of its group at once: a request stream
// whose LFT port failed goes on over the other up ports without waiting for the SM.
TEST_F(IbLinkFailureTest, AdaptiveRoutingAvoidsTheFailedPortWithoutTheSubnetManager)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(hcas, true, false, true);
    const IbTopology& topo = fab.subnetManager->GetTopology();
    const uint32_t leafIdx = LeafOf(fab, 0);
    Ptr<IbSwitch> leaf = fab.switchOf[leafIdx];
    // A destination whose ACKs come back through another spine than the one the
    // requests' LFT port leads to: responses keep their LFT path (no AR for them).
    uint32_t dst = 0;
    uint8_t up = 0;
    for (uint32_t h = 4; h < 32 && dst == 0; ++h)
    {
        up = leaf->GetLftEntry(fab.HostPort(h)->GetLid());
        const uint32_t there = LeafOf(fab, h);
        const uint8_t back = fab.switchOf[there]->GetLftEntry(fab.HostPort(0)->GetLid());
        if (topo.GetNode(there).ports[back].peerNode != topo.GetNode(leafIdx).ports[up].peerNode)
        {
            dst = h;
        }
    }
    ASSERT_NE(dst, 0u);
    Ptr<IbChannel> cable = DynamicCast<IbChannel>(leaf->GetPort(up)->GetChannel());
    auto s = StartStream(fab, hcas[0], hcas[dst], 8, 256 * 1024, 6, 7);
    const Time down = MicroSeconds(50);
    IbLinkFailureHelper().Schedule(cable, down);
    uint64_t dropsAfter = 0;
    Simulator::Schedule(down + NanoSeconds(1),
                        [&]() { dropsAfter = leaf->GetPort(up)->GetLinkDownDrops(); });
    Simulator::Run();
    ASSERT_EQ(s->done.size(), 8u);
    for (const auto& wc : s->done)
    {
        EXPECT_EQ(wc.status, IbWcStatus::SUCCESS);
    }
    EXPECT_EQ(std::memcmp(s->src->GetData(), s->dst->GetData(), s->src->GetLength()), 0);
    EXPECT_EQ(fab.subnetManager->GetSweeps(), 0u);
    // Nothing more was sent towards the failed port after it failed.
    EXPECT_EQ(leaf->GetPort(up)->GetLinkDownDrops(), dropsAfter);
}

// Bad failure specifications are refused with the entry and what to change.
TEST_F(IbLinkFailureTest, BadFailureSpecificationsAreRefusedWithTheEntry)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(hcas, false);
    IbLinkFailureHelper lf;
    EXPECT_DEATH(lf.ScheduleFromSpec(fab, "nosuch:1@1ms", "--failLink"), "no node named 'nosuch'");
    const std::string leaf = fab.subnetManager->GetTopology().GetNode(LeafOf(fab, 0)).name;
    EXPECT_DEATH(lf.ScheduleFromSpec(fab, leaf + ":99@1ms", "--failLink"), "port '99'");
    EXPECT_DEATH(lf.ScheduleFromSpec(fab, leaf + ":5@soon", "--failLink"), "not a time");
    EXPECT_DEATH(lf.ScheduleFromSpec(fab, leaf + ":5@2ms-1ms", "--failLink"), "after it fails");
    EXPECT_DEATH(lf.ScheduleFromSpec(fab, leaf + "-5", "--failLink"), "NODE:PORT@DOWN");
    lf.ScheduleFromSpec(fab, leaf + ":5@1ms-2ms", "--failLink");
    // A cable may fail at the very start (0 is not negative: it used to be refused so).
    Ptr<IbChannel> early = IbLinkFailureHelper::FindCable(fab.nodeOf[LeafOf(fab, 0)], 6);
    lf.Schedule(early, Time(0), MilliSeconds(3));
    Simulator::Schedule(NanoSeconds(1), [early]() { EXPECT_TRUE(early->IsLinkDown()); });
    Simulator::Stop(MilliSeconds(4));
    Simulator::Run();
    EXPECT_FALSE(early->IsLinkDown());
    EXPECT_EQ(fab.subnetManager->GetSweeps(),
              4u); // one per change: down at 0 and 1 ms, up at 2 and 3 ms
}

// A multicast group's tree is rebuilt by the sweep: no switch lists the failed cable's
// ports for it, and its entries still join every member switch.
TEST_F(IbLinkFailureTest, MulticastTreeIsRebuiltWithoutTheFailedCable)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(hcas, false);
    Ptr<IbSubnetManager> sm = fab.subnetManager;
    const uint16_t mlid = 0xC001;
    std::vector<Ptr<IbNetDevice>> members;
    for (uint32_t h = 0; h < 32; ++h)
    {
        members.push_back(fab.HostPort(h));
    }
    IbMulticastGroup::Create(sm, mlid, members);
    // A cable of the tree: one the first leaf uses towards a spine.
    const uint32_t leafIdx = LeafOf(fab, 0);
    uint8_t up = 0;
    for (uint8_t p : fab.switchOf[leafIdx]->GetMftEntry(mlid))
    {
        if (p > 4)
        {
            up = p;
        }
    }
    ASSERT_NE(up, 0u) << "the first leaf joins the tree through a spine";
    const auto peer = sm->GetTopology().GetNode(leafIdx).ports[up];
    IbLinkFailureHelper().Schedule(IbLinkFailureHelper::FindCable(fab.nodeOf[leafIdx], up),
                                   MicroSeconds(10));
    Simulator::Stop(MilliSeconds(2));
    Simulator::Run();
    ASSERT_EQ(sm->GetSweeps(), 1u);
    const IbTopology& topo = sm->GetTopology();
    for (uint8_t p : fab.switchOf[leafIdx]->GetMftEntry(mlid))
    {
        EXPECT_NE(p, up);
    }
    for (uint8_t p : fab.switchOf[peer.peerNode]->GetMftEntry(mlid))
    {
        EXPECT_NE(p, peer.peerPort);
    }
    // Walk the tree from the first leaf along the entries: every leaf is reached.
    std::vector<bool> seen(topo.GetNNodes(), false);
    std::vector<uint32_t> todo{leafIdx};
    seen[leafIdx] = true;
    while (!todo.empty())
    {
        const uint32_t s = todo.back();
        todo.pop_back();
        for (uint8_t p : fab.switchOf[s]->GetMftEntry(mlid))
        {
            const int32_t next = topo.GetNode(s).ports[p].peerNode;
            ASSERT_GE(next, 0) << "an entry names a port without a cable";
            if (topo.GetNode(next).type == IbTopology::SWITCH && !seen[next])
            {
                seen[next] = true;
                todo.push_back(next);
            }
        }
    }
    for (uint32_t h = 0; h < 32; ++h)
    {
        EXPECT_TRUE(seen[LeafOf(fab, h)]) << "host " << h;
    }
}

// Random failures: every cable alternates between exponential up times (mean MTBF) and
// repair times (mean MTTR); the subnet manager follows each change.
TEST_F(IbLinkFailureTest, RandomFailuresAlternateWithTheirMeanTimes)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(hcas, false);
    const std::vector<Ptr<IbChannel>> cables = IbLinkFailureHelper::SwitchCables(fab);
    ASSERT_EQ(cables.size(), 32u); // 8 leaves x 4 spines
    const Time mtbf = MilliSeconds(1);
    const Time mttr = MicroSeconds(100);
    const Time until = MilliSeconds(20);
    std::vector<std::vector<uint8_t>> original;
    for (const auto& sw : fab.switchOf)
    {
        original.push_back(sw ? sw->GetLft() : std::vector<uint8_t>());
    }
    const uint32_t failures = IbLinkFailureHelper().ScheduleRandom(cables, mtbf, mttr, until, 7);
    std::vector<Time> downSince(cables.size(), Time::Max());
    std::vector<double> repairs;
    uint32_t downs = 0;
    for (size_t c = 0; c < cables.size(); ++c)
    {
        cables[c]->TraceConnectWithoutContext(
            "LinkState",
            Callback<void, bool>([&, c](bool up) {
                if (!up)
                {
                    EXPECT_EQ(downSince[c], Time::Max());
                    downSince[c] = Simulator::Now();
                    ++downs;
                    return;
                }
                ASSERT_NE(downSince[c], Time::Max());
                repairs.push_back((Simulator::Now() - downSince[c]).GetSeconds());
                downSince[c] = Time::Max();
            }));
    }
    Simulator::Run();
    EXPECT_EQ(downs, failures);
    ASSERT_EQ(repairs.size(), failures) << "every failure is repaired";
    // About 32 x 20 / 1.1 = 580 failures; their mean repair time within 4 standard errors.
    EXPECT_GT(failures, 450u);
    EXPECT_LT(failures, 720u);
    double mean = 0;
    for (double r : repairs)
    {
        mean += r / repairs.size();
    }
    const double se = mttr.GetSeconds() / std::sqrt(repairs.size());
    EXPECT_NEAR(mean, mttr.GetSeconds(), 4 * se);
    EXPECT_GT(fab.subnetManager->GetSweeps(), 10u);
    // At the end every cable is up and the tables are those of the healthy fabric.
    for (const auto& c : cables)
    {
        EXPECT_FALSE(c->IsLinkDown());
    }
    EXPECT_TRUE(fab.subnetManager->CheckDeadlocks().empty());
    for (uint32_t i = 0; i < fab.switchOf.size(); ++i)
    {
        if (fab.switchOf[i])
        {
            EXPECT_EQ(fab.switchOf[i]->GetLft(), original[i]) << "switch " << i;
        }
    }
}

// A SHARP tree that loses a cable between its root and a leaf is rebuilt over the other
// spines once the subnet manager has rerouted: the next allreduce runs in the network on
// the new tree, with the exact result.
TEST_F(IbLinkFailureTest, SharpTreeIsRebuiltAfterTheRerouteAndStaysInTheNetwork)
{
    using namespace ibtest;
    IbSetup s;
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    fh.SetSubnetManagerAttribute("CheckDeadlock", BooleanValue(true));
    s.fabric = fh.Build(IbTopologyBuilder::FatTree2Level(8, 16));
    Ptr<SharpAggregationManager> am = SharpHelper().Install(s.fabric);
    s.helper.SetHcaAttribute("DataMode", BooleanValue(true));
    s.helper.SetAlgorithm("sharp");
    s.helper.SetSharpManager(am);
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    Ptr<SharpCollectiveAlgorithm> sharp =
        DynamicCast<SharpCollectiveAlgorithm>(comm->GetAlgorithm());
    Ptr<SharpTree> first = sharp->GetTree();
    ASSERT_TRUE(first) << sharp->GetRefusal();
    CollectiveOpSpec spec;
    spec.type = CollectiveDataType::INT32;
    spec.count = 1024;
    const Buffers in = MakeInputs(spec.type, spec.op, 16, spec.count * 4, 9);
    auto check = [&](const char* what) {
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max()) << what;
        std::vector<const uint8_t*> res;
        for (const auto& b : out)
        {
            res.push_back(b.data());
        }
        EXPECT_EQ(CheckReduce(spec.type, spec.op, in, res, 0, spec.count * 4, what), 0u);
    };
    check("before the failure");
    EXPECT_EQ(sharp->GetInNetworkOps(), 1u);
    // The cable from the root spine to the first leaf of the tree.
    Ptr<IbSwitch> root = first->ans[first->rootIndex]->GetSwitch();
    Ptr<IbChannel> cable;
    for (uint8_t p = 1; p <= root->GetNPorts() && !cable; ++p)
    {
        Ptr<IbNetDevice> peer =
            DynamicCast<IbChannel>(root->GetPort(p)->GetChannel())->GetPeer(root->GetPort(p));
        if (peer->GetNode()->GetObject<IbSwitch>()->GetLid() == first->leafLid[0])
        {
            cable = DynamicCast<IbChannel>(root->GetPort(p)->GetChannel());
        }
    }
    ASSERT_TRUE(cable);
    cable->SetLinkDown();
    Simulator::Stop(MilliSeconds(2)); // the sweep, with no operation in flight
    Simulator::Run();
    EXPECT_EQ(s.fabric.subnetManager->GetSweeps(), 1u);
    EXPECT_TRUE(first->broken);
    EXPECT_GE(am->GetBrokenTrees(), 1u);
    check("after the reroute");
    EXPECT_EQ(sharp->GetTreeRebuilds(), 1u);
    EXPECT_EQ(sharp->GetInNetworkOps(), 2u);
    EXPECT_EQ(sharp->GetFallbackOps(), 0u);
    Ptr<SharpTree> second = sharp->GetTree();
    ASSERT_TRUE(second);
    EXPECT_NE(second->ans[second->rootIndex]->GetSwitch(), root) << "another spine is the root";
    check("again on the new tree");
    EXPECT_EQ(sharp->GetInNetworkOps(), 3u);
}

namespace
{
/// @return the cable from the root switch of @p tree to the leaf switch of its rank 0
Ptr<IbChannel>
RootToFirstLeafCable(Ptr<SharpTree> tree)
{
    Ptr<IbSwitch> root = tree->ans[tree->rootIndex]->GetSwitch();
    for (uint8_t p = 1; p <= root->GetNPorts(); ++p)
    {
        Ptr<IbChannel> cable = DynamicCast<IbChannel>(root->GetPort(p)->GetChannel());
        Ptr<IbNetDevice> peer = cable->GetPeer(root->GetPort(p));
        if (peer->GetNode()->GetObject<IbSwitch>()->GetLid() == tree->leafLid[0])
        {
            return cable;
        }
    }
    return nullptr;
}

/// A data-mode SHARP communicator over the 16 hosts of a 2-level fat tree.
struct SharpFailureSetup
{
    ibtest::IbSetup s;                   ///< fabric and collective helper
    Ptr<SharpAggregationManager> am;     ///< aggregation manager
    Ptr<CollectiveCommunicator> comm;    ///< the communicator
    Ptr<SharpCollectiveAlgorithm> sharp; ///< its algorithm
    std::vector<Time> restarts;          ///< InNetworkRestart times
    CollectiveOpSpec spec;               ///< a 1 MiB INT32 sum (streaming channel)
    ibtest::Buffers in;                  ///< the ranks' inputs

    /**
     * @param reroute IbSubnetManager RerouteOnLinkChange
     * @param timeout SharpCollectiveAlgorithm OperationTimeout
     */
    SharpFailureSetup(bool reroute, Time timeout)
    {
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
        fh.SetSubnetManagerAttribute("CheckDeadlock", BooleanValue(true));
        fh.SetSubnetManagerAttribute("RerouteOnLinkChange", BooleanValue(reroute));
        s.fabric = fh.Build(IbTopologyBuilder::FatTree2Level(8, 16));
        am = SharpHelper().Install(s.fabric);
        s.helper.SetHcaAttribute("DataMode", BooleanValue(true));
        s.helper.SetAlgorithm("sharp");
        s.helper.SetAlgorithmAttribute("OperationTimeout", TimeValue(timeout));
        s.helper.SetSharpManager(am);
        comm = s.helper.InstallIb(s.fabric);
        sharp = DynamicCast<SharpCollectiveAlgorithm>(comm->GetAlgorithm());
        comm->TraceConnectWithoutContext(
            "InNetworkRestart",
            Callback<void, uint32_t>([this](uint32_t) { restarts.push_back(Simulator::Now()); }));
        spec.type = CollectiveDataType::INT32;
        spec.count = 256 * 1024;
        in = ibtest::MakeInputs(spec.type, spec.op, 16, spec.count * 4, 11);
    }

    /**
     * Run the allreduce and check every rank's result.
     * @param what for the messages
     * @return its duration (Time::Max() if it did not finish)
     */
    Time RunAndCheck(const char* what)
    {
        ibtest::Buffers out = in;
        const Time d = CollectiveHelper::Run(comm, spec, &out);
        EXPECT_NE(d, Time::Max()) << what;
        std::vector<const uint8_t*> res;
        for (const auto& b : out)
        {
            res.push_back(b.data());
        }
        EXPECT_EQ(ibtest::CheckReduce(spec.type, spec.op, in, res, 0, spec.count * 4, what), 0u);
        return d;
    }
};
} // namespace

// A cable of the tree fails in the middle of a streaming allreduce: the fragments on it
// are lost and SHARP does not resend them. When the subnet manager's reroute breaks the
// tree the operation is given up in the network and runs again host-based from the
// ranks' inputs, with the exact result; the next one runs in the network on a new tree.
TEST_F(IbLinkFailureTest, ASharpOperationInFlightWhenItsTreeLosesACableRunsAgainHostBased)
{
    SharpFailureSetup f(true, Time(0));
    ASSERT_TRUE(f.sharp->GetTree()) << f.sharp->GetRefusal();
    Ptr<IbChannel> cable = RootToFirstLeafCable(f.sharp->GetTree());
    ASSERT_TRUE(cable);
    const Time healthy = f.RunAndCheck("healthy");
    EXPECT_EQ(f.sharp->GetRestartedOps(), 0u);
    // Fail the cable a fifth of the way into the operation.
    const Time start = Simulator::Now();
    const Time down = start + healthy / 5;
    Simulator::Schedule(down - start, &IbChannel::SetLinkDown, cable);
    const Time d = f.RunAndCheck("lost in the network and run again");
    EXPECT_EQ(f.sharp->GetRestartedOps(), 1u);
    EXPECT_EQ(f.comm->GetRestarts(1), 0u); // (operation ids count from 1)
    EXPECT_EQ(f.comm->GetRestarts(2), 1u);
    ASSERT_EQ(f.restarts.size(), 1u);
    // Given up at the reroute that broke the tree, not before; the host-based run after it
    // takes at least as long as a healthy ring would need, so the operation lasts past it.
    const Time rerouted = f.s.fabric.subnetManager->GetLastRerouteTime();
    EXPECT_GT(rerouted, down + kTrapDelay);
    EXPECT_EQ(f.restarts[0], rerouted);
    EXPECT_GT(start + d, rerouted);
    EXPECT_EQ(f.sharp->GetFallbackOps(), 0u);
    // The next operation builds another tree and stays in the network.
    f.RunAndCheck("on the rebuilt tree");
    EXPECT_EQ(f.sharp->GetTreeRebuilds(), 1u);
    EXPECT_EQ(f.sharp->GetRestartedOps(), 1u);
    EXPECT_EQ(f.sharp->GetInNetworkOps(), 3u);
    EXPECT_TRUE(f.s.fabric.subnetManager->CheckDeadlocks().empty());
}

// Without rerouting, a cable of the tree that fails and comes back loses the fragments
// that were on it and nothing marks the tree broken: OperationTimeout, counted from the
// last result, gives the operation up; it runs again host-based over the restored cable.
TEST_F(IbLinkFailureTest, OperationTimeoutGivesUpASharpOperationThatLostFragments)
{
    const Time timeout = MicroSeconds(500);
    SharpFailureSetup f(false, timeout);
    ASSERT_TRUE(f.sharp->GetTree()) << f.sharp->GetRefusal();
    Ptr<IbChannel> cable = RootToFirstLeafCable(f.sharp->GetTree());
    ASSERT_TRUE(cable);
    const Time healthy = f.RunAndCheck("healthy");
    const Time start = Simulator::Now();
    const Time down = start + healthy / 5;
    Simulator::Schedule(down - start, &IbChannel::SetLinkDown, cable);
    Simulator::Schedule(down - start + MicroSeconds(100), &IbChannel::SetLinkUp, cable);
    const Time d = f.RunAndCheck("given up by the timeout");
    ASSERT_EQ(f.restarts.size(), 1u);
    EXPECT_EQ(f.sharp->GetRestartedOps(), 1u);
    // The last result came before the failure or within one crossing of the fabric after.
    EXPECT_GE(f.restarts[0], down + timeout - healthy / 5);
    EXPECT_LE(f.restarts[0], down + timeout + MicroSeconds(10));
    EXPECT_GT(start + d, f.restarts[0]);
    EXPECT_EQ(f.s.fabric.subnetManager->GetSweeps(), 0u);
    // The tree the operation was lost on is not used again: the next one builds another.
    f.RunAndCheck("on the rebuilt tree");
    EXPECT_EQ(f.sharp->GetTreeRebuilds(), 1u);
    EXPECT_EQ(f.sharp->GetRestartedOps(), 1u);
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * SHARP tests: the aggregation manager's trees follow the subnet manager's routes and the
 * hardware limits; in data mode SHARP allreduce gives the reference result for every
 * operator and type on both channels (LLT and SAT), and reduce and barrier work; small
 * allreduce latency, large allreduce bandwidth and the credit window's effect against the
 * model's timing; refusal and fallback when trees, streaming flows or buffers run out,
 * and when a switch on the way has no aggregation node.
 */

#include "collective-test-util.h"

#include "ns3/collective-helper.h"
#include "ns3/core-module.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/network-module.h"
#include "ns3/sharp-aggregation-manager.h"
#include "ns3/sharp-collective-algorithm.h"
#include "ns3/sharp-helper.h"

#include <gtest/gtest.h>
#include <regex>

using namespace ns3;
using namespace ns3::ibtest;

namespace
{

class SharpTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        IbHelper::ResetLidAllocation();
        RngSeedManager::SetSeed(7);
        RngSeedManager::SetRun(1);
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// A fat tree with SHARP in its switches.
struct SharpSetup
{
    IbFabric fabric;                 ///< the fabric
    Ptr<SharpAggregationManager> am; ///< its aggregation manager
    CollectiveHelper helper;         ///< communicators ("sharp")
};

/**
 * @param s the setup to fill
 * @param radix switch radix of the two-level fat tree
 * @param hosts hosts
 * @param dataMode real bytes
 * @param sh the SHARP helper (its attributes)
 * @param speed link speed
 */
void
BuildSharp(SharpSetup& s,
           uint32_t radix,
           uint32_t hosts,
           bool dataMode = true,
           const SharpHelper& sh = SharpHelper(),
           IbLinkRate::Speed speed = IbLinkRate::EDR)
{
    IbFabricHelper fh;
    s.fabric = fh.Build(IbTopologyBuilder::FatTree2Level(radix, hosts, 1.0, speed));
    s.am = sh.Install(s.fabric);
    s.helper.SetHcaAttribute("DataMode", BooleanValue(dataMode));
    s.helper.SetAlgorithm("sharp");
    s.helper.SetSharpManager(s.am);
}

/**
 * BuildSharp with 8 hosts on radix-4 switches whose aggregation nodes take one tree each
 * (MaxTrees 1): a second communicator is refused a tree while the first holds one, and
 * takes the id of a dropped one.
 * @param s the setup to fill
 */
void
BuildSharpOneTreePerSwitch(SharpSetup& s)
{
    SharpHelper sh;
    sh.SetAggregationNodeAttribute("MaxTrees", UintegerValue(1));
    BuildSharp(s, 4, 8, true, sh);
}

/**
 * @param comm a communicator
 * @return its SHARP algorithm
 */
Ptr<SharpCollectiveAlgorithm>
Sharp(Ptr<CollectiveCommunicator> comm)
{
    return DynamicCast<SharpCollectiveAlgorithm>(comm->GetAlgorithm());
}

/**
 * @param b buffers
 * @return one pointer per buffer
 */
std::vector<const uint8_t*>
Ptrs(const Buffers& b)
{
    std::vector<const uint8_t*> p;
    for (const auto& x : b)
    {
        p.push_back(x.data());
    }
    return p;
}

/// The timing parameters of one SHARP fragment's trip (all from the fabric's attributes).
struct TripModel
{
    DataRate rate;    ///< link rate (all links equal)
    Time delay;       ///< cable delay
    Time forwarding;  ///< switch ForwardingLatency
    Time doorbell;    ///< HCA DoorbellLatency
    Time pcie;        ///< HCA PcieWriteLatency
    Time aggregation; ///< AggregationLatency
    DataRate alu;     ///< AluRate

    /**
     * Unloaded time of one fragment of @p payload bytes on a two-level fat tree whose
     * leaves have @p leafChildren hosts and whose root has @p rootChildren leaves: posted
     * at 0, it crosses host -> leaf -> root -> leaf -> host; each switch hands it to its
     * aggregation node ForwardingLatency after the LRH arrived, which takes it when its
     * last byte has arrived; each aggregation node's ALU takes every child's fragment in
     * turn and sends AggregationLatency later; the root turns it down at once, the leaf
     * copies it out once it has arrived whole; the completion is seen PcieWriteLatency
     * after the last byte reached the host.
     * @param payload fragment bytes
     * @param leafChildren hosts per leaf
     * @param rootChildren leaves under the root
     * @return the time
     */
    Time Fragment(uint32_t payload, uint32_t leafChildren, uint32_t rootChildren) const
    {
        const uint32_t wire = IbPacket::WireSize(payload, 12, false);
        const Time hop = rate.CalculateBytesTxTime(wire) + delay;
        const Time take = alu.CalculateBytesTxTime(payload);
        return doorbell + hop + forwarding + leafChildren * take + aggregation // up to leaf
               + hop + forwarding + rootChildren * take + aggregation          // up to root
               + hop + forwarding                                              // down to leaf
               + hop + pcie;                                                   // to host
    }
};

/**
 * @param s a built setup
 * @return its timing parameters
 */
TripModel
Model(const SharpSetup& s)
{
    TripModel m;
    Ptr<IbNetDevice> port = s.fabric.HostPort(0);
    m.rate = port->GetDataRate();
    m.delay = DynamicCast<IbChannel>(port->GetChannel())->GetDelay();
    for (const auto& sw : s.fabric.switchOf)
    {
        if (sw)
        {
            m.forwarding = sw->GetForwardingLatency();
        }
    }
    Ptr<IbHca> hca = s.fabric.hosts.Get(0)->GetObject<IbHca>();
    m.doorbell = hca->GetDoorbellLatency();
    m.pcie = hca->GetPcieWriteLatency();
    Ptr<SharpAggregationNode> an = s.fabric.switches.Get(0)->GetObject<SharpAggregationNode>();
    TimeValue tv;
    an->GetAttribute("AggregationLatency", tv);
    m.aggregation = tv.Get();
    DataRateValue dv;
    an->GetAttribute("AluRate", dv);
    m.alu = dv.Get();
    return m;
}

} // namespace

TEST_F(SharpTest, TreeFollowsTheRoutesAndSpreadsRoots)
{
    SharpSetup s;
    BuildSharp(s, 4, 8); // 4 leaves of 2 hosts, 2 spines
    Ptr<CollectiveCommunicator> a = s.helper.InstallIb(s.fabric);
    Ptr<CollectiveCommunicator> b = s.helper.InstallIb(s.fabric);
    Ptr<SharpTree> ta = Sharp(a)->GetTree();
    Ptr<SharpTree> tb = Sharp(b)->GetTree();
    ASSERT_TRUE(ta && tb) << Sharp(a)->GetRefusal() << Sharp(b)->GetRefusal();
    EXPECT_EQ(s.am->GetNTrees(), 2u);
    for (Ptr<SharpTree> t : {ta, tb})
    {
        EXPECT_EQ(t->depth, 1u);
        EXPECT_EQ(t->ans.size(), 5u); // every leaf and one spine
        // the root is a spine: all its ports lead to switches
        Ptr<IbSwitch> root = t->ans[t->rootIndex]->GetSwitch();
        for (uint8_t p = 1; p <= root->GetNPorts(); ++p)
        {
            Ptr<IbNetDevice> peer =
                DynamicCast<IbChannel>(root->GetPort(p)->GetChannel())->GetPeer(root->GetPort(p));
            EXPECT_TRUE(peer->GetNode()->GetObject<IbSwitch>());
        }
        // each rank's leaf is the switch its cable goes to
        for (uint32_t r = 0; r < 8; ++r)
        {
            Ptr<IbNetDevice> port = s.fabric.HostPort(r);
            Ptr<IbNetDevice> peer = DynamicCast<IbChannel>(port->GetChannel())->GetPeer(port);
            EXPECT_EQ(t->leafLid[r], peer->GetNode()->GetObject<IbSwitch>()->GetLid());
        }
        // windows: MaxOutstandingOps 16; 256 KiB / 2 flows / 4096-byte fragments = 32
        EXPECT_EQ(t->window[SharpTree::LLT], 16u);
        EXPECT_EQ(t->window[SharpTree::SAT], 32u);
    }
    // the second communicator's tree is rooted at the other spine
    EXPECT_NE(ta->ans[ta->rootIndex], tb->ans[tb->rootIndex]);
}

/// SHARP allreduce, every operator and type, both channels, on 8 and 6 hosts.
class SharpAllReduceTest : public SharpTest,
                           public ::testing::WithParamInterface<std::tuple<uint32_t, bool>>
{
};

TEST_P(SharpAllReduceTest, MatchesReferenceForEveryOpAndType)
{
    const auto [hosts, streaming] = GetParam();
    SharpSetup s;
    BuildSharp(s, 4, hosts);
    // 1237 elements: several fragments on either channel (on SAT, for the 4- and 8-byte
    // types), the last one short
    s.helper.SetAlgorithmAttribute("SatThreshold", UintegerValue(streaming ? 0 : 1u << 20));
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    ASSERT_TRUE(Sharp(comm)->GetTree()) << Sharp(comm)->GetRefusal();
    AllOpsAllTypes(comm,
                   1237,
                   std::string(streaming ? "sat" : "llt") + " n=" + std::to_string(hosts));
    EXPECT_EQ(Sharp(comm)->GetFallbackOps(), 0u);
    // 8 types x (sum, min, max) + 4 integer types x 3 bitwise operators in the network;
    // products, which SHARP's ALUs do not compute, host-based (before, in the network)
    EXPECT_EQ(Sharp(comm)->GetInNetworkOps(), 36u);
    EXPECT_EQ(Sharp(comm)->GetProdOps(), 8u);
    // one and three elements: fewer elements than ranks, one fragment
    CollectiveOpSpec spec;
    spec.type = CollectiveDataType::INT64;
    for (uint64_t count : {1, 3})
    {
        spec.count = count;
        const Buffers in = MakeInputs(spec.type, spec.op, hosts, count * 8, 42);
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
        EXPECT_EQ(CheckReduce(spec.type, spec.op, in, Ptrs(out), 0, count * 8, "tiny"), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(HostsAndChannels,
                         SharpAllReduceTest,
                         ::testing::Combine(::testing::Values(8u, 6u), ::testing::Bool()),
                         [](const auto& info) {
                             return std::to_string(std::get<0>(info.param)) + "hosts_" +
                                    (std::get<1>(info.param) ? "sat" : "llt");
                         });

TEST_F(SharpTest, ReduceReachesTheRootOnlyAndBarrierCompletes)
{
    SharpSetup s;
    BuildSharp(s, 4, 8);
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    const uint32_t n = 8;
    for (uint64_t count : {100, 5000})
    {
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::REDUCE;
        spec.root = 5;
        spec.count = count;
        spec.type = CollectiveDataType::INT32;
        const Buffers in = MakeInputs(spec.type, spec.op, n, count * 4, 3);
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
        EXPECT_EQ(CheckReduce(spec.type,
                              spec.op,
                              in,
                              std::vector<const uint8_t*>(n, out[5].data()),
                              0,
                              count * 4,
                              "root"),
                  0u);
        // the other ranks got empty completions: their buffers are untouched
        for (uint32_t r = 0; r < n; ++r)
        {
            if (r != 5)
            {
                EXPECT_EQ(out[r], in[r]) << "rank " << r;
            }
        }
    }
    CollectiveOpSpec barrier;
    barrier.kind = CollectiveKind::BARRIER;
    const Time t = CollectiveHelper::Run(comm, barrier);
    // a barrier is one empty fragment up and down the tree
    EXPECT_EQ(t, Model(s).Fragment(0, 2, 4));
    EXPECT_EQ(Sharp(comm)->GetInNetworkOps(), 3u);
    // host-based reduce (binomial tree) gives the same root result
    SharpSetup h;
    BuildSharp(h, 4, 8);
    h.helper.SetAlgorithm("ring");
    Ptr<CollectiveCommunicator> ring = h.helper.InstallIb(h.fabric);
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::REDUCE;
    spec.root = 2;
    spec.count = 777;
    spec.type = CollectiveDataType::INT16;
    spec.op = CollectiveRedOp::BXOR;
    const Buffers in = MakeInputs(spec.type, spec.op, n, 777 * 2, 8);
    Buffers out = in;
    ASSERT_NE(CollectiveHelper::Run(ring, spec, &out), Time::Max());
    EXPECT_EQ(CheckReduce(spec.type,
                          spec.op,
                          in,
                          std::vector<const uint8_t*>(n, out[2].data()),
                          0,
                          777 * 2,
                          "host"),
              0u);
}

TEST_F(SharpTest, SmallAllReduceLatencyMatchesTheModel)
{
    for (uint32_t hosts : {8u, 6u})
    {
        IbHelper::ResetLidAllocation();
        SharpSetup s;
        BuildSharp(s, 4, hosts, false);
        Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
        CollectiveOpSpec spec;
        spec.count = 2; // 8 bytes of float32
        const Time t = CollectiveHelper::Run(comm, spec);
        // 6 hosts: the leaves of ranks 0-3 and 4-5 hold 2 hosts each, 3 leaves under the root
        const uint32_t leaves = (hosts + 1) / 2;
        EXPECT_EQ(t, Model(s).Fragment(8, 2, leaves)) << hosts << " hosts";
        Simulator::Destroy();
    }
}

TEST_F(SharpTest, CreditWindowOfOneSerializesFragments)
{
    // With one LLT slot a rank sends fragment k + 1 only once the result of k is back, so
    // an allreduce of k fragments takes exactly k unloaded fragment trips.
    SharpHelper sh;
    sh.SetAggregationNodeAttribute("MaxOutstandingOps", UintegerValue(1));
    SharpSetup s;
    BuildSharp(s, 4, 8, false, sh);
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    CollectiveOpSpec spec;
    spec.count = 1024; // 4096 bytes: 16 fragments of 256
    const Time t = CollectiveHelper::Run(comm, spec);
    EXPECT_EQ(t, 16 * Model(s).Fragment(256, 2, 4));
}

TEST_F(SharpTest, LowLatencyFragmentsKeepTheirSizeWhenStreamingOnesAreSmaller)
{
    // SatFragmentSize 128 used to cap the LLT fragments at 128 bytes too: the 4 KiB
    // allreduce of CreditWindowOfOneSerializesFragments took 32 trips instead of 16.
    SharpHelper sh;
    sh.SetAggregationNodeAttribute("MaxOutstandingOps", UintegerValue(1));
    SharpSetup s;
    BuildSharp(s, 4, 8, true, sh);
    s.helper.SetAlgorithmAttribute("SatFragmentSize", UintegerValue(128));
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    ASSERT_TRUE(Sharp(comm)->GetTree()) << Sharp(comm)->GetRefusal();
    EXPECT_EQ(Sharp(comm)->GetTree()->fragmentBytes[SharpTree::LLT], 256u);
    EXPECT_EQ(Sharp(comm)->GetTree()->fragmentBytes[SharpTree::SAT], 128u);
    CollectiveOpSpec spec;
    spec.count = 1024; // 4096 bytes: 16 fragments of 256, received whole
    const Buffers in = MakeInputs(spec.type, spec.op, 8, 4096, 11);
    Buffers out = in;
    EXPECT_EQ(CollectiveHelper::Run(comm, spec, &out), 16 * Model(s).Fragment(256, 2, 4));
    EXPECT_EQ(CheckReduce(spec.type, spec.op, in, Ptrs(out), 0, 4096, "llt"), 0u);
}

TEST_F(SharpTest, WindowsLargerThanARankCanPostAreRefusedNamingTheAttributes)
{
    // MaxOutstandingOps 65536 (legal for an AN) and the default SAT window (256 KiB / 2
    // flows / 4096 = 32) need 65568 receive buffers per rank; the queue pair holds 65536.
    // Before, the run stopped in PostRecv ("receive queue full"), naming neither.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    SharpHelper sh;
    sh.SetAggregationNodeAttribute("MaxOutstandingOps", UintegerValue(65536));
    SharpSetup s;
    BuildSharp(s, 4, 8, false, sh);
    EXPECT_DEATH(s.helper.InstallIb(s.fabric),
                 "65536 LLT slots \\(SharpAggregationNode MaxOutstandingOps\\) and 32 SAT "
                 "slots .* need 65568 receive buffers per rank");
}

TEST_F(SharpTest, StreamingAllReduceRunsAtLinkRate)
{
    SharpSetup s;
    BuildSharp(s, 4, 8, false, SharpHelper(), IbLinkRate::HDR);
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    CollectiveOpSpec spec;
    spec.count = 1 << 20; // 4 MiB of float32: 1024 fragments of 4096 bytes
    const Time t = CollectiveHelper::Run(comm, spec);
    const TripModel m = Model(s);
    // Pipelined: the first fragment's trip, then one fragment per serialization time on
    // the busiest link (each link direction carries every fragment once). The 6-byte
    // flow-control packets that return credits go between the data packets on the same
    // links (0.29 % here): at most 0.5 % more.
    const Time ideal = m.Fragment(4096, 2, 4) +
                       1023 * m.rate.CalculateBytesTxTime(IbPacket::WireSize(4096, 12, false));
    EXPECT_GE(t, ideal);
    EXPECT_LE(t.GetSeconds(), ideal.GetSeconds() * 1.005)
        << t.As(Time::US) << " vs " << ideal.As(Time::US);
}

TEST_F(SharpTest, ExhaustedTreesFallBackOrRefuse)
{
    SharpSetup s;
    BuildSharpOneTreePerSwitch(s);
    Ptr<CollectiveCommunicator> first = s.helper.InstallIb(s.fabric);
    ASSERT_TRUE(Sharp(first)->GetTree());
    // every leaf is taken: the second tree is refused, the communicator runs host-based,
    // and says so on stderr whatever the log level
    testing::internal::CaptureStderr();
    Ptr<CollectiveCommunicator> second = s.helper.InstallIb(s.fabric);
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("SharpCollectiveAlgorithm: the aggregation manager refused a tree for 8 "
                        "hosts ("),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("its operations run host-based with ring (set FallbackAlgorithm to none "
                        "to stop here instead)"),
              std::string::npos)
        << said;
    EXPECT_FALSE(Sharp(second)->GetTree());
    EXPECT_NE(Sharp(second)->GetRefusal().find("MaxTrees"), std::string::npos)
        << Sharp(second)->GetRefusal();
    CollectiveOpSpec spec;
    spec.count = 300;
    spec.type = CollectiveDataType::INT32;
    const Buffers in = MakeInputs(spec.type, spec.op, 8, 1200, 11);
    Buffers out = in;
    ASSERT_NE(CollectiveHelper::Run(second, spec, &out), Time::Max());
    EXPECT_EQ(CheckReduce(spec.type, spec.op, in, Ptrs(out), 0, 1200, "fallback"), 0u);
    EXPECT_EQ(Sharp(second)->GetFallbackOps(), 1u);
    EXPECT_EQ(Sharp(second)->GetInNetworkOps(), 0u);
    // with no fallback the refusal is an error naming the limit
    s.helper.SetAlgorithmAttribute("FallbackAlgorithm", StringValue("none"));
    EXPECT_DEATH(s.helper.InstallIb(s.fabric), "MaxTrees");
}

TEST_F(SharpTest, SwitchWithoutAggregationNodeIsNamed)
{
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(4, 8));
    // SHARP in every switch but the first leaf
    NodeContainer some;
    Ptr<Node> bare;
    for (uint32_t i = 0; i < fabric.switches.GetN(); ++i)
    {
        Ptr<Node> sw = fabric.switches.Get(i);
        Ptr<IbNetDevice> p1 = sw->GetObject<IbSwitch>()->GetPort(1);
        const bool leafOfHost0 = DynamicCast<IbChannel>(fabric.HostPort(0)->GetChannel())
                                     ->GetPeer(fabric.HostPort(0))
                                     ->GetNode() == sw;
        if (leafOfHost0)
        {
            bare = sw;
        }
        else
        {
            some.Add(sw);
        }
    }
    ASSERT_TRUE(bare);
    Ptr<SharpAggregationManager> am = SharpHelper().Install(some);
    CollectiveHelper ch;
    ch.SetAlgorithm("sharp");
    ch.SetSharpManager(am);
    ch.SetHcaAttribute("DataMode", BooleanValue(true));
    Ptr<CollectiveCommunicator> comm = ch.InstallIb(fabric);
    EXPECT_FALSE(Sharp(comm)->GetTree());
    const std::string why = Sharp(comm)->GetRefusal();
    EXPECT_NE(why.find("(node " + std::to_string(bare->GetId()) + ")"), std::string::npos) << why;
    EXPECT_NE(why.find("has no SHARP aggregation node"), std::string::npos) << why;
    // hosts 2..7 avoid that leaf: their tree is built
    Ptr<CollectiveCommunicator> rest = ch.InstallIb(fabric, {2, 3, 4, 5, 6, 7});
    EXPECT_TRUE(Sharp(rest)->GetTree()) << Sharp(rest)->GetRefusal();
}

TEST_F(SharpTest, ASpineWithoutAggregationNodeIsNamed)
{
    // SHARP on the leaves only: the route up leaves every leaf towards a spine without an
    // AN, and the refusal names that spine (before, "a node without ...").
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(4, 8));
    std::set<uint32_t> leafIds;
    for (uint32_t h = 0; h < fabric.hosts.GetN(); ++h)
    {
        leafIds.insert(DynamicCast<IbChannel>(fabric.HostPort(h)->GetChannel())
                           ->GetPeer(fabric.HostPort(h))
                           ->GetNode()
                           ->GetId());
    }
    NodeContainer leaves;
    std::set<uint32_t> spineIds;
    for (uint32_t i = 0; i < fabric.switches.GetN(); ++i)
    {
        Ptr<Node> sw = fabric.switches.Get(i);
        if (leafIds.count(sw->GetId()))
        {
            leaves.Add(sw);
        }
        else
        {
            spineIds.insert(sw->GetId());
        }
    }
    ASSERT_FALSE(spineIds.empty());
    CollectiveHelper ch;
    ch.SetAlgorithm("sharp");
    ch.SetSharpManager(SharpHelper().Install(leaves));
    Ptr<CollectiveCommunicator> comm = ch.InstallIb(fabric);
    ASSERT_FALSE(Sharp(comm)->GetTree());
    const std::string why = Sharp(comm)->GetRefusal();
    bool named = false;
    for (uint32_t id : spineIds)
    {
        named = named || why.find("(node " + std::to_string(id) +
                                  "), which has no SHARP aggregation node") != std::string::npos;
    }
    EXPECT_TRUE(named) << why;
}

TEST_F(SharpTest, ADroppedCommunicatorGivesItsTreeBack)
{
    // One tree per switch (MaxTrees 1): a dropped SHARP communicator's tree stayed with the
    // aggregation nodes for the rest of the run, so the next communicator on those hosts
    // was refused its tree; its queue pairs stayed with the HCAs.
    SharpSetup s;
    BuildSharpOneTreePerSwitch(s);
    CollectiveOpSpec spec;
    spec.count = 64;
    uint32_t qpn = 0;
    {
        Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
        ASSERT_TRUE(Sharp(comm)->GetTree()) << Sharp(comm)->GetRefusal();
        ASSERT_NE(CollectiveHelper::Run(comm, spec), Time::Max());
        qpn = s.fabric.hosts.Get(0)->GetObject<IbHca>()->GetNextQpn() - 1;
        ASSERT_TRUE(s.fabric.hosts.Get(0)->GetObject<IbHca>()->GetQp(qpn));
    }
    EXPECT_FALSE(s.fabric.hosts.Get(0)->GetObject<IbHca>()->GetQp(qpn));
    Ptr<CollectiveCommunicator> again = s.helper.InstallIb(s.fabric);
    ASSERT_TRUE(Sharp(again)->GetTree()) << Sharp(again)->GetRefusal();
    const Buffers in = MakeInputs(spec.type, spec.op, 8, 256, 4);
    Buffers out = in;
    ASSERT_NE(CollectiveHelper::Run(again, spec, &out), Time::Max());
    EXPECT_EQ(CheckReduce(spec.type, spec.op, in, Ptrs(out), 0, 256, "again"), 0u);
    EXPECT_EQ(Sharp(again)->GetInNetworkOps(), 1u);
}

TEST_F(SharpTest, PacketsForATreeDroppedMidOperationDoNotReachTheNextTreeWithItsId)
{
    // A communicator dropped while its allreduce streams: its hosts' packets still on
    // the wire arrive after the next communicator's tree took the same id (MaxTrees 1:
    // the lowest free one). They carry the old tree's QPN and are dropped; before, they
    // were reduced into the new tree's slots.
    SharpSetup s;
    BuildSharpOneTreePerSwitch(s);
    CollectiveOpSpec spec;
    spec.count = 64 * 1024;
    const Buffers firstIn = MakeInputs(spec.type, spec.op, 8, spec.count * 4, 7);
    Buffers firstOut = firstIn;
    Ptr<CollectiveCommunicator> first = s.helper.InstallIb(s.fabric);
    ASSERT_TRUE(Sharp(first)->GetTree()) << Sharp(first)->GetRefusal();
    const uint16_t id = Sharp(first)->GetTree()->id;
    const uint32_t firstQpn = Sharp(first)->GetTree()->qpn;
    first->Start(spec, &firstOut, CollectiveCommunicator::DoneCallback());
    const Buffers in = MakeInputs(spec.type, spec.op, 8, spec.count * 4, 8);
    Buffers out = in;
    Ptr<CollectiveCommunicator> again;
    uint32_t op = 0;
    Simulator::Schedule(MicroSeconds(5), [&]() {
        first = nullptr;
        again = s.helper.InstallIb(s.fabric);
        ASSERT_TRUE(Sharp(again)->GetTree()) << Sharp(again)->GetRefusal();
        op = again->Start(spec, &out, CollectiveCommunicator::DoneCallback());
    });
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    ASSERT_TRUE(again && Sharp(again)->GetTree());
    EXPECT_EQ(Sharp(again)->GetTree()->id, id);
    EXPECT_NE(Sharp(again)->GetTree()->qpn, firstQpn);
    ASSERT_TRUE(again->IsDone(op));
    EXPECT_EQ(CheckReduce(spec.type, spec.op, in, Ptrs(out), 0, spec.count * 4, "again"), 0u);
    uint64_t stale = 0;
    for (uint32_t i = 0; i < s.fabric.switches.GetN(); ++i)
    {
        stale += s.fabric.switches.Get(i)->GetObject<SharpAggregationNode>()->GetUnknownDrops();
    }
    EXPECT_GT(stale, 0u);
}

TEST_F(SharpTest, DestroyingADestroyedTreeAgainLeavesTheTreeNowHoldingItsId)
{
    SharpSetup s;
    BuildSharp(s, 4, 8);
    Ptr<SharpTree> old;
    {
        Ptr<CollectiveCommunicator> first = s.helper.InstallIb(s.fabric);
        old = Sharp(first)->GetTree();
        ASSERT_TRUE(old) << Sharp(first)->GetRefusal();
    }
    EXPECT_EQ(s.am->GetNTrees(), 0u);
    Ptr<CollectiveCommunicator> now = s.helper.InstallIb(s.fabric);
    ASSERT_TRUE(Sharp(now)->GetTree()) << Sharp(now)->GetRefusal();
    ASSERT_EQ(Sharp(now)->GetTree()->id, old->id);
    EXPECT_NE(Sharp(now)->GetTree()->qpn, old->qpn);
    // A second destroy through a stale pointer freed the new tree's id: the next tree took
    // it too, and its nodes aborted on a tree added twice.
    s.am->DestroyTree(old);
    EXPECT_EQ(s.am->GetNTrees(), 1u);
    Ptr<CollectiveCommunicator> third = s.helper.InstallIb(s.fabric);
    ASSERT_TRUE(Sharp(third)->GetTree()) << Sharp(third)->GetRefusal();
    EXPECT_NE(Sharp(third)->GetTree()->id, old->id);
    CollectiveOpSpec spec;
    spec.count = 256;
    const Buffers in = MakeInputs(spec.type, spec.op, 8, spec.count * 4, 9);
    Buffers out = in;
    ASSERT_NE(CollectiveHelper::Run(now, spec, &out), Time::Max());
    EXPECT_EQ(CheckReduce(spec.type, spec.op, in, Ptrs(out), 0, spec.count * 4, "now"), 0u);
    EXPECT_EQ(Sharp(now)->GetInNetworkOps(), 1u);
}

TEST_F(SharpTest, ATreeWhoseQpnDoesNotNameItsIdIsRefusedByTheNode)
{
    // A tree made by hand with id 3 and the default QPN (id 0's): every packet for it
    // would be dropped as for no tree.
    SharpSetup s;
    BuildSharp(s, 4, 8);
    Ptr<SharpTree> tree = Create<SharpTree>();
    tree->id = 3;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(s.fabric.switches.Get(0)->GetObject<SharpAggregationNode>()->AddTree(
                     tree,
                     SharpAggregationNode::Role(),
                     0),
                 "SharpAggregationNode: tree 3 has QPN 0xa00000, not QPN_BASE \\+ "
                 "\\(generation << 16\\) \\+ id");
}

TEST_F(SharpTest, ATreeWhoseSlMapsToVl15OnASwitchIsRefusedNamingIt)
{
    // SL15 is an ordinary SL (ServiceLevel took 0..14); a table that sends it to the
    // management lane VL15 refuses the tree, naming the switch and the port, on a hop up
    // (a leaf), on a hop down (the spines) and at a host (the node sent its packets on
    // VL15, and a host aborted in PostSend).
    std::array<uint8_t, 16> table{};
    table[15] = IbNetDevice::VL15;
    const auto refusal = [&table](const std::vector<uint32_t>& switches, bool host) {
        SharpSetup s;
        BuildSharp(s, 4, 8);
        for (uint32_t i : switches)
        {
            Ptr<IbSwitch> sw = s.fabric.switches.Get(i)->GetObject<IbSwitch>();
            for (uint8_t p = 1; p <= sw->GetNPorts(); ++p)
            {
                sw->SetSl2Vl(0, p, table);
            }
        }
        if (host)
        {
            Ptr<Node> h = s.fabric.hosts.Get(3);
            for (uint32_t d = 0; d < h->GetNDevices(); ++d)
            {
                if (Ptr<IbNetDevice> port = DynamicCast<IbNetDevice>(h->GetDevice(d)))
                {
                    port->SetAttribute("SlToVlTable",
                                       StringValue("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,15"));
                }
            }
        }
        s.helper.SetAlgorithmAttribute("ServiceLevel", UintegerValue(15));
        Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
        EXPECT_FALSE(Sharp(comm)->GetTree());
        std::vector<uint16_t> lids;
        for (uint32_t i : switches)
        {
            lids.push_back(s.fabric.switches.Get(i)->GetObject<IbSwitch>()->GetLid());
        }
        return std::make_pair(Sharp(comm)->GetRefusal(), lids);
    };
    // Leaf 0 (the switches are leaves 0-3, then spines 4 and 5): its hop up.
    auto [leafWhy, leafLid] = refusal({0}, false);
    EXPECT_TRUE(std::regex_search(leafWhy,
                                  std::regex("switch LID " + std::to_string(leafLid[0]) +
                                             " maps SHARP's SL 15 to VL15 from port 0 to port "
                                             "[34] ")))
        << leafWhy;
    // Both spines: whichever is the root, its hops down to the leaves.
    auto [spineWhy, spineLids] = refusal({4, 5}, false);
    EXPECT_TRUE(std::regex_search(spineWhy,
                                  std::regex("switch LID (" + std::to_string(spineLids[0]) + "|" +
                                             std::to_string(spineLids[1]) +
                                             ") maps SHARP's SL 15 to VL15 from port 0 to port "
                                             "[1-4] ")))
        << spineWhy;
    auto [hostWhy, none] = refusal({}, true);
    EXPECT_NE(hostWhy.find("rank 3 (host"), std::string::npos) << hostWhy;
    EXPECT_NE(hostWhy.find("maps SHARP's SL 15 to VL15 (its port's SlToVlTable)"),
              std::string::npos)
        << hostWhy;
    // SL15 with the default tables (SL mod data VLs): the tree is made.
    SharpSetup t;
    BuildSharp(t, 4, 8);
    t.helper.SetAlgorithmAttribute("ServiceLevel", UintegerValue(15));
    Ptr<CollectiveCommunicator> ok = t.helper.InstallIb(t.fabric);
    EXPECT_TRUE(Sharp(ok)->GetTree()) << Sharp(ok)->GetRefusal();
}

TEST_F(SharpTest, StreamingFlowsAreOnePerCommunicatorAndRunOutAcrossThem)
{
    // One streaming flow per switch. Two large allreduces of one communicator share its
    // tree's flow (they run one after the other in its sequence numbers); a second
    // communicator over the same switches finds the flow taken and falls back (or, with
    // FallbackAlgorithm none, runs on the low-latency channel). Before, the first
    // communicator's second operation took a flow of its own and fell back itself.
    SharpHelper sh;
    sh.SetAggregationNodeAttribute("MaxStreamingFlows", UintegerValue(1));
    sh.SetAggregationNodeAttribute("BufferSize", UintegerValue(64 * 1024));
    for (const std::string fallback : {"ring", "none"})
    {
        IbHelper::ResetLidAllocation();
        SharpSetup s;
        BuildSharp(s, 4, 8, true, sh);
        s.helper.SetAlgorithmAttribute("FallbackAlgorithm", StringValue(fallback));
        Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
        Ptr<CollectiveCommunicator> other = s.helper.InstallIb(s.fabric);
        ASSERT_TRUE(Sharp(comm)->GetTree());
        ASSERT_TRUE(Sharp(other)->GetTree());
        EXPECT_EQ(Sharp(comm)->GetTree()->window[SharpTree::SAT], 16u); // 64 KiB / 4 KiB
        CollectiveOpSpec spec;
        spec.count = 20000;
        spec.type = CollectiveDataType::INT32;
        std::vector<Buffers> in;
        std::vector<Buffers> out;
        for (uint32_t k = 0; k < 3; ++k)
        {
            in.push_back(MakeInputs(spec.type, spec.op, 8, 80000, k + 1));
        }
        out = in;
        const uint32_t a = comm->Start(spec, &out[0], CollectiveCommunicator::DoneCallback());
        const uint32_t b = comm->Start(spec, &out[1], CollectiveCommunicator::DoneCallback());
        const uint32_t c = other->Start(spec, &out[2], CollectiveCommunicator::DoneCallback());
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        ASSERT_TRUE(comm->IsDone(a) && comm->IsDone(b) && other->IsDone(c)) << fallback;
        for (uint32_t k = 0; k < 3; ++k)
        {
            EXPECT_EQ(CheckReduce(spec.type,
                                  spec.op,
                                  in[k],
                                  Ptrs(out[k]),
                                  0,
                                  80000,
                                  fallback + " " + std::to_string(k)),
                      0u);
        }
        EXPECT_EQ(Sharp(comm)->GetInNetworkOps(), 2u) << fallback;
        EXPECT_EQ(Sharp(comm)->GetFallbackOps(), 0u) << fallback;
        EXPECT_EQ(Sharp(comm)->GetLltInsteadOfSatOps(), 0u) << fallback;
        if (fallback == "ring")
        {
            EXPECT_EQ(Sharp(other)->GetInNetworkOps(), 0u);
            EXPECT_EQ(Sharp(other)->GetFallbackOps(), 1u);
        }
        else
        {
            EXPECT_EQ(Sharp(other)->GetInNetworkOps(), 1u);
            EXPECT_EQ(Sharp(other)->GetLltInsteadOfSatOps(), 1u);
        }
        // the flow is given back: every switch is idle again
        for (const auto& an : Sharp(comm)->GetTree()->ans)
        {
            EXPECT_EQ(an->GetActiveStreamingFlows(), 0u);
        }
        Simulator::Destroy();
    }
}

TEST_F(SharpTest, AOneRankCommunicatorCompletesAtOnceWithoutATree)
{
    // Before, the aggregation manager refused a one-host tree, which with
    // FallbackAlgorithm none aborted the run, and otherwise printed a refusal notice.
    for (const std::string fallback : {"ring", "none"})
    {
        IbHelper::ResetLidAllocation();
        SharpSetup s;
        BuildSharp(s, 4, 8, true);
        s.helper.SetAlgorithmAttribute("FallbackAlgorithm", StringValue(fallback));
        Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric, {3});
        EXPECT_FALSE(Sharp(comm)->GetTree());
        CollectiveOpSpec spec;
        spec.count = 1000;
        spec.type = CollectiveDataType::FLOAT32;
        const Buffers in = MakeInputs(spec.type, spec.op, 1, 4000, 5);
        Buffers out = in;
        EXPECT_EQ(CollectiveHelper::Run(comm, spec, &out), Time(0)) << fallback;
        EXPECT_EQ(out, in) << fallback;
        EXPECT_EQ(Sharp(comm)->GetFallbackOps(), 0u) << fallback;
        Simulator::Destroy();
    }
}

TEST_F(SharpTest, BufferSmallerThanAFragmentIsRefused)
{
    SharpHelper sh;
    sh.SetAggregationNodeAttribute("BufferSize", UintegerValue(4096)); // 2048 per flow
    SharpSetup s;
    BuildSharp(s, 4, 8, true, sh);
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    EXPECT_FALSE(Sharp(comm)->GetTree());
    EXPECT_NE(Sharp(comm)->GetRefusal().find("BufferSize"), std::string::npos)
        << Sharp(comm)->GetRefusal();
}

TEST_F(SharpTest, ATreeOverCablesWithASmallerMtuIsRefusedNamingTheCable)
{
    // Hosts at MTU 4096, leaf-spine cables at 2048: 4096-byte streaming fragments would
    // wait at the first such port for ever (before, the operation never finished and Run
    // returned without a word).
    SharpSetup s;
    BuildSharp(s, 4, 8, true);
    const NetDeviceContainer ports = s.fabric.SwitchPorts();
    for (uint32_t i = 0; i < ports.GetN(); ++i)
    {
        Ptr<IbNetDevice> port = DynamicCast<IbNetDevice>(ports.Get(i));
        Ptr<Channel> cable = port->GetChannel();
        if (cable && cable->GetDevice(0)->GetNode()->GetObject<IbSwitch>() &&
            cable->GetDevice(1)->GetNode()->GetObject<IbSwitch>())
        {
            port->SetAttribute("Mtu", UintegerValue(2048));
        }
    }
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    EXPECT_FALSE(Sharp(comm)->GetTree());
    EXPECT_NE(Sharp(comm)->GetRefusal().find("whose MTU 2048 is smaller than the 4096-byte "
                                             "fragments; set SharpCollectiveAlgorithm's "
                                             "SatFragmentSize"),
              std::string::npos)
        << Sharp(comm)->GetRefusal();
}

TEST_F(SharpTest, AnAlgorithmThatWasNotSetUpSaysSo)
{
    // Before, it ran every operation host-based and counted fallbacks, without a word.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    Ptr<SharpCollectiveAlgorithm> a = CreateObject<SharpCollectiveAlgorithm>();
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::ALLREDUCE;
    spec.count = 4;
    EXPECT_DEATH(a->StartInNetwork(spec,
                                   4,
                                   nullptr,
                                   CollectiveAlgorithm::RankDoneCallback(),
                                   CollectiveAlgorithm::RestartCallback()),
                 "SharpCollectiveAlgorithm: not set up; call Setup\\(manager, hcas\\)");
}

TEST_F(SharpTest, SharpOverIbAndRingOverTcpGiveIdenticalResults)
{
    const uint32_t n = 8;
    CollectiveOpSpec spec;
    spec.count = 4099;
    spec.type = CollectiveDataType::INT64;
    const Buffers in = MakeInputs(spec.type, spec.op, n, 4099 * 8, 21);
    Buffers ib = in;
    {
        SharpSetup s;
        BuildSharp(s, 4, n);
        ASSERT_NE(CollectiveHelper::Run(s.helper.InstallIb(s.fabric), spec, &ib), Time::Max());
    }
    Simulator::Destroy();
    Buffers tcp = in;
    {
        NodeContainer hosts =
            CollectiveHelper::BuildIpFabric(IbTopologyBuilder::FatTree2Level(4, n),
                                            DataRate("100Gbps"),
                                            NanoSeconds(10));
        CollectiveHelper ch;
        ch.SetAlgorithm("ring");
        ASSERT_NE(CollectiveHelper::Run(ch.InstallTcp(hosts), spec, &tcp), Time::Max());
    }
    EXPECT_EQ(ib, tcp);
    EXPECT_EQ(CheckReduce(spec.type, spec.op, in, Ptrs(ib), 0, 4099 * 8, "sharp"), 0u);
}

TEST_F(SharpTest, OverlappingCommunicatorsRunAtOnce)
{
    // Two communicators on overlapping hosts, each with its own tree (and root), with
    // small and large operations of both in flight at the same time.
    SharpSetup s;
    BuildSharp(s, 4, 8);
    Ptr<CollectiveCommunicator> a = s.helper.InstallIb(s.fabric, {0, 1, 2, 3, 4, 5});
    Ptr<CollectiveCommunicator> b = s.helper.InstallIb(s.fabric, {2, 3, 4, 5, 6, 7});
    ASSERT_TRUE(Sharp(a)->GetTree() && Sharp(b)->GetTree());
    CollectiveOpSpec small;
    small.count = 700;
    small.type = CollectiveDataType::INT16;
    small.op = CollectiveRedOp::MAX;
    CollectiveOpSpec large = small;
    large.count = 30000;
    large.op = CollectiveRedOp::SUM;
    std::vector<Buffers> in;
    std::vector<Buffers> out;
    std::vector<std::pair<Ptr<CollectiveCommunicator>, uint32_t>> ops;
    std::vector<CollectiveOpSpec> specs;
    uint32_t seed = 30;
    for (Ptr<CollectiveCommunicator> c : {a, b})
    {
        for (const CollectiveOpSpec& sp : {small, large, small})
        {
            in.push_back(MakeInputs(sp.type, sp.op, 6, sp.count * 2, seed++));
            specs.push_back(sp);
        }
    }
    out = in;
    uint32_t k = 0;
    for (Ptr<CollectiveCommunicator> c : {a, b})
    {
        for (uint32_t j = 0; j < 3; ++j, ++k)
        {
            ops.emplace_back(c,
                             c->Start(specs[k], &out[k], CollectiveCommunicator::DoneCallback()));
        }
    }
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    for (k = 0; k < ops.size(); ++k)
    {
        ASSERT_TRUE(ops[k].first->IsDone(ops[k].second)) << "operation " << k;
        EXPECT_EQ(CheckReduce(specs[k].type,
                              specs[k].op,
                              in[k],
                              Ptrs(out[k]),
                              0,
                              specs[k].count * 2,
                              "op " + std::to_string(k)),
                  0u);
    }
    EXPECT_EQ(Sharp(a)->GetInNetworkOps() + Sharp(b)->GetInNetworkOps(), 6u);
}

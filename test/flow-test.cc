/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The flow-level model: max-min fair sharing with exact drain times, and collectives at
 * flow level against the packet-level model on the same fabric.
 */

#include "collective-test-util.h"

#include "ns3/collective-communicator.h"
#include "ns3/collective-flow-transport.h"
#include "ns3/collective-helper.h"
#include "ns3/core-module.h"
#include "ns3/flow-network.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-flow-fabric-helper.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-topology-builder.h"

#include <cmath>
#include <gtest/gtest.h>
#include <iostream>

using namespace ns3;

namespace
{

class FlowTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        IbHelper::ResetLidAllocation();
    }
};

} // namespace

// Three flows on two links (A at 1 GB/s, B at 2 GB/s): f1 on A, f2 on A and B, f3 on B.
// A is the bottleneck: f1 and f2 get 0.5 GB/s each, f3 the 1.5 GB/s B has left; f3's
// 1 MB drains first (666.667 us, rounded up to the nanosecond), and f1 and f2 keep their
// share of A to the end (2 ms). On one link, 1 MB and 3 MB share it until the first ends
// at 2 ms, then the second drains its last 2 MB at the full rate (4 ms).
TEST_F(FlowTest, MaxMinSharesAndExactDrainTimes)
{
    Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
    const uint32_t a = net->AddLink(1e9);
    const uint32_t b = net->AddLink(2e9);
    std::vector<Time> end(5, Time(-1));
    auto at = [&end](uint32_t i) {
        return Callback<void>([&end, i]() { end[i] = Simulator::Now(); });
    };
    net->StartFlow({a}, 1e6, at(0));
    net->StartFlow({a, b}, 1e6, at(1));
    net->StartFlow({b}, 1e6, at(2));
    Simulator::Run();
    EXPECT_EQ(end[2], NanoSeconds(666667));
    EXPECT_EQ(end[0], MilliSeconds(2));
    EXPECT_EQ(end[1], MilliSeconds(2));
    EXPECT_NEAR(net->GetBytesCarried(a), 2e6, 1e-3);
    EXPECT_NEAR(net->GetBytesCarried(b), 2e6, 1e-3);
    Simulator::Destroy();
    Ptr<FlowNetwork> one = CreateObject<FlowNetwork>();
    const uint32_t l = one->AddLink(1e9);
    one->StartFlow({l}, 1e6, at(3));
    one->StartFlow({l}, 3e6, at(4));
    Simulator::Run();
    EXPECT_EQ(end[3], MilliSeconds(2));
    EXPECT_EQ(end[4], MilliSeconds(4));
    // Flows that start at one instant are rated together: one recomputation for both,
    // one at each end.
    EXPECT_EQ(one->GetRecomputations(), 3u);
}

// The flow-level model against the packet-level one, same fat tree (16 EDR hosts, radix
// 8, minhop routes): ring allreduce and the pairwise all-to-all, uncongested (the ring's
// neighbours and each all-to-all step are permutations the routes spread), within 5 %
// of the packets; halving-doubling, whose exchanges share uplinks under minhop's routes,
// within 10 % (the congested case: its error is printed, not hidden).
TEST_F(FlowTest, CollectivesAtFlowLevelAreWithinFivePercentOfPacketLevel)
{
    const IbTopology topo = IbTopologyBuilder::FatTree2Level(8, 16, 1.0, IbLinkRate::EDR);

    struct Case
    {
        const char* algo;
        CollectiveKind kind;
        uint64_t bytes;
        double tolerance;
    };

    const Case cases[] = {{"ring", CollectiveKind::ALLREDUCE, 1 << 20, 0.05},
                          {"ring", CollectiveKind::ALLREDUCE, 16 << 20, 0.05},
                          {"ring", CollectiveKind::ALLTOALL, 256 << 10, 0.05},
                          {"ring", CollectiveKind::ALLTOALL, 4 << 20, 0.05},
                          {"hd", CollectiveKind::ALLREDUCE, 16 << 20, 0.10}};
    for (const Case& c : cases)
    {
        CollectiveOpSpec spec;
        spec.kind = c.kind;
        spec.type = CollectiveDataType::INT8;
        spec.count = c.kind == CollectiveKind::ALLTOALL ? c.bytes / 16 : c.bytes;
        IbHelper::ResetLidAllocation();
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("minhop"));
        IbFabric packets = fh.Build(topo);
        CollectiveHelper ph;
        ph.SetAlgorithm(c.algo);
        Ptr<CollectiveCommunicator> pc = ph.InstallIb(packets);
        CollectiveHelper::Run(pc, spec); // warm-up: connects the queue pairs
        const Time tp = CollectiveHelper::Run(pc, spec);
        Simulator::Destroy();
        IbFlowFabric flows = IbFlowFabricHelper().Build(topo);
        CollectiveHelper fhc;
        fhc.SetAlgorithm(c.algo);
        const Time tf = CollectiveHelper::Run(fhc.InstallFlow(flows), spec);
        Simulator::Destroy();
        ASSERT_NE(tp, Time::Max());
        ASSERT_NE(tf, Time::Max());
        const double err = tf.GetSeconds() / tp.GetSeconds() - 1;
        std::cout << c.algo << " " << CollectiveAlgorithm::KindName(c.kind) << " " << c.bytes
                  << " B: packets " << tp.GetMicroSeconds() << " us, flows " << tf.GetMicroSeconds()
                  << " us (" << err * 100 << " %)\n";
        EXPECT_LT(std::fabs(err), c.tolerance) << c.algo << " " << c.bytes;
    }
}

// GPU servers: the hierarchical allreduce (NVLink phases and a ring per rail) and the
// all-to-all through the rails on 2 servers x 8 GPUs of a rail-optimized HDR fabric, with
// the NVLink domain in front of the flow transport as of the RDMA one: within 5 %.
TEST_F(FlowTest, GpuServerCollectivesAtFlowLevelAreWithinFivePercent)
{
    const IbTopology topo = IbTopologyBuilder::RailOptimized2Level(16, 2, 8, 1.0, IbLinkRate::HDR);
    for (CollectiveKind kind : {CollectiveKind::ALLREDUCE, CollectiveKind::ALLTOALL})
    {
        CollectiveOpSpec spec;
        spec.kind = kind;
        spec.type = CollectiveDataType::INT8;
        spec.count = kind == CollectiveKind::ALLTOALL ? 1 << 20 : 16 << 20;
        IbHelper::ResetLidAllocation();
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
        IbFabric packets = fh.Build(topo);
        CollectiveHelper ph;
        ph.SetGpusPerServer(8);
        ph.SetAlgorithm("hier");
        Ptr<CollectiveCommunicator> pc = ph.InstallIb(packets);
        CollectiveHelper::Run(pc, spec);
        const Time tp = CollectiveHelper::Run(pc, spec);
        Simulator::Destroy();
        IbFlowFabricHelper ffh;
        ffh.SetRoutingEngine("ftree");
        IbFlowFabric flows = ffh.Build(topo);
        CollectiveHelper fc;
        fc.SetGpusPerServer(8);
        fc.SetAlgorithm("hier");
        const Time tf = CollectiveHelper::Run(fc.InstallFlow(flows), spec);
        Simulator::Destroy();
        ASSERT_NE(tp, Time::Max());
        ASSERT_NE(tf, Time::Max());
        const double err = tf.GetSeconds() / tp.GetSeconds() - 1;
        std::cout << "hier " << CollectiveAlgorithm::KindName(kind) << ": packets "
                  << tp.GetMicroSeconds() << " us, flows " << tf.GetMicroSeconds() << " us ("
                  << err * 100 << " %)\n";
        EXPECT_LT(std::fabs(err), 0.05) << CollectiveAlgorithm::KindName(kind);
    }
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Adaptive routing: the subnet manager's AR groups, the switch's choice among them, and RC
 * responders that take early requests in order: a random permutation of RDMA WRITE streams
 * on a non-blocking two-level fat tree, static ftree routes against adaptive ones.
 */

#include "ns3/core-module.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-topology.h"
#include "ns3/ib-traffic-pattern.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <cstring>
#include <gtest/gtest.h>
#include <numeric>
#include <vector>

using namespace ns3;

namespace
{

class IbAdaptiveRoutingTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        RngSeedManager::SetSeed(3);
        RngSeedManager::SetRun(1);
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// Path MTU of the queue pairs.
constexpr double kMtu = 4096;
/// Payload rate of an EDR 4x link for 4096-byte WRITE packets (4122 bytes on the wire).
constexpr double kLink = 100e9 * 4096 / 4122;

/**
 * @param ar adaptive routing on
 * @param dataMode carry real bytes
 * @return a 2-level fat tree of radix 8 (8 leaves of 4 hosts, 4 spines), EDR, ftree
 */
IbFabric
Tree(bool ar, std::vector<Ptr<IbHca>>& hcas, bool dataMode = false, bool voq = false)
{
    IbFabricHelper fh;
    fh.SetSwitchAttribute("InputBuffering", StringValue(voq ? "voq" : "fifo"));
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    fh.SetSubnetManagerAttribute("AdaptiveRouting", BooleanValue(ar));
    fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    IbFabric fab = fh.Build(IbTopologyBuilder::FatTree2Level(8, 32, 1.0, IbLinkRate::EDR, 4));
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(dataMode));
    hcas = hh.Install(fab.hosts);
    return fab;
}

/// An RC connection carrying a stream of WRITEs.
struct Stream
{
    Ptr<IbQueuePair> qp[2];       ///< requester, responder
    Ptr<IbCompletionQueue> cq[2]; ///< their CQs
    Ptr<IbMemoryRegion> src;      ///< source
    Ptr<IbMemoryRegion> dst;      ///< destination
    std::vector<uint64_t> done;   ///< wrIds of the send completions, in the order they came
    std::vector<uint64_t> landed; ///< responder MessageReceived addresses, in order
};

/**
 * Connect @p a to @p b and post @p messages WRITEs of @p bytes each, back to back in the
 * regions.
 * @param fab the fabric
 * @param a sender
 * @param b receiver
 * @param messages how many
 * @param bytes each
 * @return the stream
 */
std::unique_ptr<Stream>
StartStream(const IbFabric& fab, Ptr<IbHca> a, Ptr<IbHca> b, uint32_t messages, uint32_t bytes)
{
    auto s = std::make_unique<Stream>();
    s->cq[0] = a->CreateCq();
    s->cq[1] = b->CreateCq();
    s->qp[0] = a->CreateQp(IbQpType::RC, s->cq[0], s->cq[0]);
    s->qp[1] = b->CreateQp(IbQpType::RC, s->cq[1], s->cq[1]);
    IbQpAttr base;
    base.timeout = 14;
    IbHcaHelper::ConnectRc(s->qp[0], s->qp[1], fab.subnetManager, base);
    const uint64_t total = uint64_t(messages) * bytes;
    s->src = a->RegisterMemory(total, IB_ACCESS_LOCAL_WRITE);
    s->dst = b->RegisterMemory(total, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    Stream* raw = s.get();
    s->cq[0]->TraceConnectWithoutContext(
        "Completion",
        Callback<void, const IbWorkCompletion&>(
            [raw](const IbWorkCompletion& wc) { raw->done.push_back(wc.wrId); }));
    s->qp[1]->TraceConnectWithoutContext(
        "MessageReceived",
        Callback<void, uint32_t, IbWrOpcode, uint32_t, uint64_t>(
            [raw](uint32_t, IbWrOpcode, uint32_t, uint64_t addr) { raw->landed.push_back(addr); }));
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

/**
 * The random permutation (seed 1) of 16 MiB streams, goodput per flow over [100, 1100] us.
 * @param ar adaptive routing on
 * @param [out] held requests the responders kept for order
 * @param [out] ordered whether every stream completed and landed its WRITEs in order
 * @return per-flow goodput, bit/s
 */
std::vector<double>
RunPermutation(bool ar, uint64_t& held, bool& ordered, bool voq = false, uint32_t seed = 1)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(ar, hcas, false, voq);
    std::vector<std::unique_ptr<Stream>> streams;
    for (const auto& [a, b] : IbTrafficPattern::RandomPermutation(32, seed))
    {
        streams.push_back(StartStream(fab, hcas[a], hcas[b], 64, 256 * 1024));
    }
    const Time from = MicroSeconds(100);
    const Time to = MicroSeconds(1100);
    std::vector<double> start(streams.size());
    Simulator::Schedule(from, [&]() {
        for (size_t i = 0; i < streams.size(); ++i)
        {
            start[i] = streams[i]->qp[1]->GetCounters().packetsReceived * kMtu;
        }
    });
    Simulator::Stop(to);
    Simulator::Run();
    std::vector<double> rate;
    held = 0;
    ordered = true;
    for (size_t i = 0; i < streams.size(); ++i)
    {
        const Stream& s = *streams[i];
        rate.push_back((s.qp[1]->GetCounters().packetsReceived * kMtu - start[i]) * 8 /
                       (to - from).GetSeconds());
        held += s.qp[1]->GetCounters().requestsHeld;
        EXPECT_EQ(s.qp[1]->GetCounters().outOfSequenceDropped, 0u) << "flow " << i;
        EXPECT_EQ(s.qp[0]->GetCounters().retransmittedPackets, 0u) << "flow " << i;
        for (size_t k = 0; k < s.done.size(); ++k)
        {
            ordered = ordered && s.done[k] == k;
        }
        for (size_t k = 0; k < s.landed.size(); ++k)
        {
            ordered = ordered && s.landed[k] == s.dst->GetAddr() + k * 256 * 1024;
        }
    }
    Simulator::Destroy();
    return rate;
}

} // namespace

TEST_F(IbAdaptiveRoutingTest, GroupsAreTheUpPortsTowardsEveryRemoteHost)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(true, hcas);
    // FatTree2Level(8, 32): leaves have hosts on ports 1..4 and spines on 5..8.
    const IbTopology& topo = fab.subnetManager->GetTopology();
    uint32_t leaves = 0;
    for (uint32_t idx = 0; idx < fab.switchOf.size(); ++idx)
    {
        Ptr<IbSwitch> sw = fab.switchOf[idx];
        if (!sw)
        {
            continue;
        }
        const auto& ports = topo.GetNode(idx).ports;
        const bool leaf = topo.GetNode(ports[1].peerNode).type == IbTopology::CA;
        for (uint32_t h = 0; h < 32; ++h)
        {
            const uint16_t lid = fab.HostPort(h)->GetLid();
            const std::vector<uint8_t> g = sw->GetArGroup(lid);
            const uint8_t lftPort = sw->GetLftEntry(lid);
            const bool local = topo.GetNode(ports[lftPort].peerNode).type == IbTopology::CA;
            if (!leaf || local)
            {
                EXPECT_TRUE(g.empty()) << "one way down: no group";
            }
            else
            {
                EXPECT_EQ(g, (std::vector<uint8_t>{5, 6, 7, 8}));
            }
        }
        leaves += leaf;
    }
    EXPECT_EQ(leaves, 8u);
}

// A random permutation on a non-blocking tree, static ftree routes against adaptive ones,
// three permutations (seeds 1-3). With virtual output queues in the switches' input buffers
// adaptive routing brings the mean flow goodput within 10 % of the non-blocking ideal
// (every flow at line rate), where static routes lose to their collisions; the responders
// take the requests that came early in order (thousands of them) and nothing is dropped,
// resent or completed out of order. With FIFO input buffers it cannot: spreading every
// packet over the spines gives each spine input FIFO a uniform mix of destinations, and a
// FIFO input buffer saturates near its head-of-line limit (2 - sqrt 2 of the line for
// uniform traffic), below the static routes; that figure is printed, not asserted.
TEST_F(IbAdaptiveRoutingTest, VirtualOutputQueuesLetAdaptiveRoutingReachTheIdealOnPermutations)
{
    for (uint32_t seed = 1; seed <= 3; ++seed)
    {
        uint64_t heldStatic = 0;
        uint64_t held = 0;
        bool orderedStatic = false;
        bool ordered = false;
        const std::vector<double> st = RunPermutation(false, heldStatic, orderedStatic, true, seed);
        const std::vector<double> ar = RunPermutation(true, held, ordered, true, seed);
        const double meanStatic = std::accumulate(st.begin(), st.end(), 0.0) / st.size();
        const double meanAr = std::accumulate(ar.begin(), ar.end(), 0.0) / ar.size();
        std::cout << "permutation " << seed << ", mean flow goodput (Gb/s), VOQ switches: static "
                  << "ftree " << meanStatic / 1e9 << ", adaptive " << meanAr / 1e9 << " (min "
                  << *std::min_element(ar.begin(), ar.end()) / 1e9 << "), ideal " << kLink / 1e9
                  << "; requests held " << held << std::endl;
        EXPECT_GE(meanAr, 0.9 * kLink) << "seed " << seed;
        EXPECT_GT(meanAr, meanStatic) << "seed " << seed;
        EXPECT_EQ(heldStatic, 0u);
        EXPECT_GT(held, 1000u);
        EXPECT_TRUE(orderedStatic);
        EXPECT_TRUE(ordered);
    }
    uint64_t held = 0;
    bool ordered = false;
    const std::vector<double> fifo = RunPermutation(true, held, ordered, false, 1);
    std::cout << "permutation 1, FIFO input buffers: adaptive "
              << std::accumulate(fifo.begin(), fifo.end(), 0.0) / fifo.size() / 1e9 << " Gb/s"
              << std::endl;
    EXPECT_TRUE(ordered);
}

// Data mode: the bytes every WRITE lands are the bytes it sent, reordering or not.
TEST_F(IbAdaptiveRoutingTest, ReorderedWritesLandByteIdentical)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric fab = Tree(true, hcas, true, true);
    std::vector<std::unique_ptr<Stream>> streams;
    uint32_t seed = 11;
    for (const auto& [a, b] : IbTrafficPattern::RandomPermutation(32, 2))
    {
        streams.push_back(StartStream(fab, hcas[a], hcas[b], 4, 64 * 1024));
        uint8_t* d = streams.back()->src->GetData();
        for (uint64_t i = 0; i < streams.back()->src->GetLength(); ++i)
        {
            seed = seed * 1103515245u + 12345u;
            d[i] = static_cast<uint8_t>(seed >> 16);
        }
    }
    Simulator::Run();
    uint64_t held = 0;
    uint64_t placed = 0;
    for (const auto& s : streams)
    {
        held += s->qp[1]->GetCounters().requestsHeld;
        placed += s->qp[1]->GetCounters().placedOnArrival;
        ASSERT_EQ(s->done.size(), 4u);
        EXPECT_EQ(std::memcmp(s->src->GetData(), s->dst->GetData(), s->src->GetLength()), 0);
    }
    EXPECT_GT(held, 0u);
    // Middles and lasts of the WRITE in progress land on arrival, the rest at their turn.
    EXPECT_GT(placed, 0u);
    EXPECT_LE(placed, held);
    std::cout << "early WRITE packets held " << held << ", placed on arrival " << placed
              << std::endl;
}

// The deadlock check follows every port of the AR groups: on a fat tree they stay
// up*-down* and no loop appears; on a ring of four switches routed up*/down*, the groups
// offer both ways round to the opposite switch and close the loops the LFTs avoid.
TEST_F(IbAdaptiveRoutingTest, DeadlockCheckFollowsTheGroups)
{
    std::vector<Ptr<IbHca>> hcas;
    IbFabric tree = Tree(true, hcas);
    EXPECT_TRUE(tree.subnetManager->CheckDeadlocks().empty());
    Simulator::Destroy();

    auto ring = [](bool ar) {
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("updn"));
        fh.SetSubnetManagerAttribute("AdaptiveRouting", BooleanValue(ar));
        fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
        return fh.Build(IbTopologyBuilder::Ring(4, 2));
    };
    IbFabric plain = ring(false);
    EXPECT_TRUE(plain.subnetManager->CheckDeadlocks().empty()) << "up*/down* alone";
    Simulator::Destroy();
    IbFabric adaptive = ring(true);
    uint32_t groups = 0;
    for (const auto& sw : adaptive.switchOf)
    {
        for (uint32_t h = 0; sw && h < adaptive.hosts.GetN(); ++h)
        {
            groups += sw->GetArGroup(adaptive.HostPort(h)->GetLid()).size() > 1;
        }
    }
    EXPECT_GT(groups, 0u) << "the opposite switch is two hops away both ways";
    const std::vector<std::string> cycles = adaptive.subnetManager->CheckDeadlocks();
    ASSERT_FALSE(cycles.empty());
    EXPECT_NE(cycles.front().find("VL0"), std::string::npos) << cycles.front();
}

// READ streams on a permutation: their data comes back as READ responses, which adaptive
// routing spreads too. The requesters take the early responses in PSN order: every READ
// completes in order with the bytes it read, nothing is resent, and the data direction
// gets the adaptive gain (at least 90 % of the ideal with VOQ switches).
TEST_F(IbAdaptiveRoutingTest, ReadResponsesAreSpreadAndTakenInOrder)
{
    auto run = [](bool ar,
                  uint64_t& held,
                  uint64_t& placed,
                  bool& ordered,
                  bool data,
                  uint32_t messages,
                  uint32_t bytes) {
        std::vector<Ptr<IbHca>> hcas;
        IbFabric fab = Tree(ar, hcas, data, true);
        struct Reader
        {
            Ptr<IbQueuePair> qp;
            Ptr<IbMemoryRegion> local;
            Ptr<IbMemoryRegion> remote;
            std::vector<IbWorkCompletion> done;
        };
        std::vector<std::unique_ptr<Reader>> readers;
        uint32_t seed = 5;
        for (const auto& [a, b] : IbTrafficPattern::RandomPermutation(32, 1))
        {
            auto r = std::make_unique<Reader>();
            Ptr<IbCompletionQueue> ca = hcas[a]->CreateCq();
            Ptr<IbCompletionQueue> cb = hcas[b]->CreateCq();
            r->qp = hcas[a]->CreateQp(IbQpType::RC, ca, ca);
            Ptr<IbQueuePair> peer = hcas[b]->CreateQp(IbQpType::RC, cb, cb);
            IbQpAttr base;
            base.timeout = 14;
            IbHcaHelper::ConnectRc(r->qp, peer, fab.subnetManager, base);
            r->local = hcas[a]->RegisterMemory(uint64_t(messages) * bytes, IB_ACCESS_LOCAL_WRITE);
            r->remote = hcas[b]->RegisterMemory(uint64_t(messages) * bytes,
                                                IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
            for (uint64_t i = 0; data && i < r->remote->GetLength(); ++i)
            {
                seed = seed * 1103515245u + 12345u;
                r->remote->GetData()[i] = static_cast<uint8_t>(seed >> 16);
            }
            Reader* raw = r.get();
            ca->TraceConnectWithoutContext(
                "Completion",
                Callback<void, const IbWorkCompletion&>(
                    [raw](const IbWorkCompletion& wc) { raw->done.push_back(wc); }));
            for (uint32_t m = 0; m < messages; ++m)
            {
                IbSendWr wr;
                wr.wrId = m;
                wr.opcode = IbWrOpcode::RDMA_READ;
                wr.sge.addr = r->local->GetAddr() + uint64_t(m) * bytes;
                wr.sge.length = bytes;
                wr.sge.lkey = r->local->GetLkey();
                wr.remoteAddr = r->remote->GetAddr() + uint64_t(m) * bytes;
                wr.rkey = r->remote->GetRkey();
                std::string err;
                NS_ABORT_MSG_UNLESS(r->qp->PostSend(wr, &err), err);
            }
            readers.push_back(std::move(r));
        }
        const Time from = MicroSeconds(100);
        const Time to = MicroSeconds(900);
        std::vector<double> start(readers.size());
        Simulator::Schedule(from, [&]() {
            for (size_t i = 0; i < readers.size(); ++i)
            {
                start[i] = readers[i]->qp->GetCounters().packetsReceived * kMtu;
            }
        });
        std::vector<double> rate(readers.size());
        Simulator::Schedule(to, [&]() {
            for (size_t i = 0; i < readers.size(); ++i)
            {
                rate[i] = (readers[i]->qp->GetCounters().packetsReceived * kMtu - start[i]) * 8 /
                          (to - from).GetSeconds();
            }
        });
        Simulator::Run();
        held = 0;
        placed = 0;
        ordered = true;
        for (const auto& r : readers)
        {
            held += r->qp->GetCounters().responsesHeld;
            placed += r->qp->GetCounters().placedOnArrival;
            EXPECT_EQ(r->qp->GetCounters().retransmittedPackets, 0u);
            EXPECT_EQ(r->done.size(), messages);
            for (size_t k = 0; k < r->done.size(); ++k)
            {
                ordered =
                    ordered && r->done[k].wrId == k && r->done[k].status == IbWcStatus::SUCCESS;
            }
            if (data)
            {
                EXPECT_EQ(
                    std::memcmp(r->local->GetData(), r->remote->GetData(), r->local->GetLength()),
                    0);
            }
        }
        Simulator::Destroy();
        return std::accumulate(rate.begin(), rate.end(), 0.0) / rate.size();
    };
    uint64_t heldStatic = 0;
    uint64_t held = 0;
    bool orderedStatic = false;
    bool ordered = false;
    uint64_t placed = 0;
    const double st = run(false, heldStatic, placed, orderedStatic, false, 48, 256 * 1024);
    const double ar = run(true, held, placed, ordered, false, 48, 256 * 1024);
    std::cout << "READ permutation, mean flow goodput (Gb/s): static " << st / 1e9 << ", adaptive "
              << ar / 1e9 << ", ideal " << kLink / 1e9 << "; responses held " << held << std::endl;
    EXPECT_EQ(heldStatic, 0u);
    EXPECT_GT(held, 1000u);
    EXPECT_TRUE(orderedStatic);
    EXPECT_TRUE(ordered);
    EXPECT_GE(ar, 0.9 * kLink);
    EXPECT_GT(ar, st);
    // Real bytes: what each READ placed is what it read, reordered or not.
    uint64_t heldData = 0;
    bool orderedData = false;
    run(true, heldData, placed, orderedData, true, 4, 64 * 1024);
    EXPECT_GT(heldData, 0u);
    // Responses of the READ at the head land on arrival, those of later READs at their turn.
    EXPECT_GT(placed, 0u);
    EXPECT_LE(placed, heldData);
    EXPECT_TRUE(orderedData);
}

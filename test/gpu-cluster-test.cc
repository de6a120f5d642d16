/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * GPU servers: the NVLink domain (CollectiveNvlinkTransport), rail-optimized fabrics
 * (IbTopologyBuilder::RailOptimized2Level) and the hierarchical allreduce.
 */

#include "collective-test-util.h"

#include "ns3/background-traffic.h"
#include "ns3/collective-communicator.h"
#include "ns3/collective-helper.h"
#include "ns3/collective-ib-transport.h"
#include "ns3/collective-nvlink-transport.h"
#include "ns3/core-module.h"
#include "ns3/eth-fabric-helper.h"
#include "ns3/eth-switch.h"
#include "ns3/gpu-cluster-scheduler.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <vector>

using namespace ns3;
using namespace ns3::ibtest;

namespace
{

class GpuClusterTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        IbHelper::ResetLidAllocation();
    }
};

/// A fabric transport that only records what it is asked to send.
class RecordingFabric : public CollectiveTransport
{
  public:
    /// @param n ranks
    explicit RecordingFabric(uint32_t n)
        : m_n(n)
    {
    }

    uint32_t GetNRanks() const override
    {
        return m_n;
    }

    bool IsDataMode() const override
    {
        return true;
    }

    void Send(uint32_t src,
              uint32_t dst,
              uint32_t tag,
              uint64_t bytes,
              const uint8_t* data,
              Callback<void> sent) override
    {
        sends.emplace_back(src, dst);
    }

    std::vector<std::pair<uint32_t, uint32_t>> sends; ///< (src, dst) of each send

  private:
    uint32_t m_n; ///< ranks
};

/// An NVLink domain of 2 servers x 4 GPUs in front of a RecordingFabric.
struct NvlinkSetup
{
    Ptr<RecordingFabric> fabric = Create<RecordingFabric>(8); ///< between servers
    Ptr<CollectiveNvlinkTransport> nv;                        ///< the transport
    std::vector<std::pair<uint32_t, Time>> arrivals;          ///< (tag, time)
    std::vector<uint8_t> lastData;                            ///< last message's bytes
    const double bitRate = 3600e9;                            ///< NVLink, per direction
    const Time latency = NanoSeconds(600);                    ///< NvlinkLatency

    NvlinkSetup()
    {
        nv = CreateObject<CollectiveNvlinkTransport>();
        nv->SetAttribute("GpusPerServer", UintegerValue(4));
        nv->SetFabricTransport(fabric);
        nv->SetReceiveCallback(MakeCallback(&NvlinkSetup::Received, this));
    }

    /// Receive callback.
    void Received(uint32_t src, uint32_t dst, uint32_t tag, uint64_t bytes, const uint8_t* data)
    {
        arrivals.emplace_back(tag, Simulator::Now());
        lastData.assign(data, data + bytes);
    }

    /// @param bytes a message length @return its serialisation time
    Time Ser(uint64_t bytes) const
    {
        return Seconds(bytes * 8.0 / bitRate);
    }
};

} // namespace

// One message takes b / B + L; two into one GPU share its ingress and two out of one
// GPU its egress (k b / B + L for the k-th); disjoint pairs do not meet in the
// non-blocking NVSwitch; the send completes when the bytes have left; messages between
// servers go to the fabric transport.
TEST_F(GpuClusterTest, NvlinkMessagesTakeTheirSerialisationAndLatency)
{
    NvlinkSetup s;
    const uint64_t b = 1 << 20;
    std::vector<uint8_t> payload(b, 0x5A);
    Time sentAt = Time::Max();
    s.nv->Send(0, 1, 1, b, payload.data(), Callback<void>([&sentAt]() {
                   sentAt = Simulator::Now();
               }));
    payload.assign(b, 0); // the transport copied it
    Simulator::Run();
    ASSERT_EQ(s.arrivals.size(), 1u);
    EXPECT_EQ(s.arrivals[0].second, s.Ser(b) + s.latency);
    EXPECT_EQ(sentAt, s.Ser(b));
    EXPECT_EQ(s.lastData, std::vector<uint8_t>(b, 0x5A));

    s.arrivals.clear();
    const Time t0 = Simulator::Now() + MilliSeconds(1);
    Simulator::Schedule(MilliSeconds(1), [&]() {
        s.nv->Send(1, 0, 10, b, payload.data(), Callback<void>()); // into GPU 0 ...
        s.nv->Send(2, 0, 11, b, payload.data(), Callback<void>()); // ... twice
        s.nv->Send(3, 2, 12, b, payload.data(), Callback<void>()); // out of GPU 3 ...
        s.nv->Send(3, 1, 13, b, payload.data(), Callback<void>()); // ... twice
        s.nv->Send(4, 5, 14, b, payload.data(), Callback<void>()); // another server
        s.nv->Send(0, 4, 15, b, payload.data(), Callback<void>()); // between servers
    });
    Simulator::Run();
    std::map<uint32_t, Time> at(s.arrivals.begin(), s.arrivals.end());
    ASSERT_EQ(at.size(), 5u);
    EXPECT_EQ(at[10], t0 + s.Ser(b) + s.latency);
    EXPECT_EQ(at[11], t0 + s.Ser(b) + s.Ser(b) + s.latency);
    EXPECT_EQ(at[12], t0 + s.Ser(b) + s.latency);
    EXPECT_EQ(at[13], t0 + s.Ser(b) + s.Ser(b) + s.latency);
    EXPECT_EQ(at[14], t0 + s.Ser(b) + s.latency);
    ASSERT_EQ(s.fabric->sends.size(), 1u);
    EXPECT_EQ(s.fabric->sends[0], std::make_pair(0u, 4u));
    EXPECT_EQ(s.nv->GetNvlinkMessages(), 6u);
    EXPECT_EQ(s.nv->GetNvlinkBytes(), 6 * b);
    EXPECT_EQ(s.nv->GetMessagesSent(), 7u);
}

TEST_F(GpuClusterTest, RanksThatAreNotWholeServersAreRefused)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    Ptr<CollectiveNvlinkTransport> nv = CreateObject<CollectiveNvlinkTransport>();
    EXPECT_DEATH(nv->SetFabricTransport(Create<RecordingFabric>(12)),
                 "12 ranks are not whole servers of 8 GPUs \\(GpusPerServer\\)");
}

// NIC k of server s is host s * G + k on rail k's leaf of group s / down, port
// s % down + 1; every leaf reaches every spine once.
TEST_F(GpuClusterTest, RailOptimizedFabricPutsNicKOfEveryServerOnRailK)
{
    // radix 8: 4 servers per group; 6 servers of 4 GPUs need 2 groups of 4 leaves.
    const IbTopology t = IbTopologyBuilder::RailOptimized2Level(8, 6, 4);
    std::string err;
    ASSERT_TRUE(t.Validate(&err)) << err;
    EXPECT_EQ(t.GetCas().size(), 24u);
    EXPECT_EQ(t.GetSwitches().size(), 8u + 4u);
    for (uint32_t srv = 0; srv < 6; ++srv)
    {
        for (uint32_t k = 0; k < 4; ++k)
        {
            const IbTopology::Node& host = t.GetNode(srv * 4 + k);
            ASSERT_EQ(host.type, IbTopology::CA);
            EXPECT_EQ(host.name, "host-" + std::to_string(srv * 4 + k));
            const IbTopology::Port& p = host.ports.at(1);
            ASSERT_GE(p.peerNode, 0);
            EXPECT_EQ(t.GetNode(p.peerNode).name,
                      "rail-" + std::to_string(k) + "-leaf-" + std::to_string(srv / 4));
            EXPECT_EQ(p.peerPort, srv % 4 + 1);
            EXPECT_EQ(p.speed, IbLinkRate::NDR);
        }
    }
    for (uint32_t sw : t.GetSwitches())
    {
        const IbTopology::Node& node = t.GetNode(sw);
        if (node.level != 0)
        {
            continue;
        }
        std::set<std::string> spines;
        for (uint32_t port = 5; port <= 8; ++port)
        {
            ASSERT_GE(node.ports.at(port).peerNode, 0) << node.name;
            spines.insert(t.GetNode(node.ports.at(port).peerNode).name);
        }
        EXPECT_EQ(spines.size(), 4u) << node.name;
    }
}

TEST_F(GpuClusterTest, ARailOptimizedFabricTooLargeForItsSpinesIsRefusedWithTheLargestThatFits)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(IbTopologyBuilder::RailOptimized2Level(8, 9, 4),
                 "needs 3 groups of 4 servers, 12 leaves, but a spine has only 8 ports; the "
                 "largest server count that fits is 8");
    EXPECT_DEATH(IbTopologyBuilder::RailOptimized2Level(8, 2, 9), "gpusPerServer=9: give 1..8");
}

// Rail-only: each rail is its own network, one switch when the servers fit its radix,
// else a two-level tree of its own; no cable joins two rails, and the fabric is one
// subnet per rail. A rail too large for its spines is refused with the largest that fits.
TEST_F(GpuClusterTest, RailOnlyFabricIsOneNetworkPerRailWithNothingBetween)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const IbTopology flat = IbTopologyBuilder::RailOnly(8, 4, 4);
    std::string err;
    ASSERT_TRUE(flat.Validate(&err)) << err;
    EXPECT_TRUE(flat.HasSeparateSubnets());
    EXPECT_EQ(flat.GetCas().size(), 16u);
    EXPECT_EQ(flat.GetSwitches().size(), 4u);
    uint32_t components = 0;
    std::vector<uint32_t> comp = flat.GetComponents(&components);
    EXPECT_EQ(components, 4u);
    for (uint32_t h = 0; h < 16; ++h)
    {
        const IbTopology::Port& p = flat.GetNode(h).ports.at(1);
        EXPECT_EQ(flat.GetNode(p.peerNode).name, "rail-" + std::to_string(h % 4) + "-switch");
        EXPECT_EQ(p.peerPort, h / 4 + 1);
        EXPECT_EQ(comp[h], comp[h % 4]) << "host " << h << " is on rail " << h % 4;
    }
    // 6 servers on radix 4: leaves of 2 servers, 2 spines per rail.
    const IbTopology tall = IbTopologyBuilder::RailOnly(4, 6, 2);
    ASSERT_TRUE(tall.Validate(&err)) << err;
    EXPECT_EQ(tall.GetSwitches().size(), 2u * (3 + 2));
    comp = tall.GetComponents(&components);
    EXPECT_EQ(components, 2u);
    for (uint32_t sw : tall.GetSwitches())
    {
        const IbTopology::Node& node = tall.GetNode(sw);
        const std::string rail = node.name.substr(0, 6); // "rail-k"
        for (uint32_t port = 1; port < node.ports.size(); ++port)
        {
            const int32_t peer = node.ports[port].peerNode;
            if (peer >= 0 && tall.GetNode(peer).type == IbTopology::SWITCH)
            {
                EXPECT_EQ(tall.GetNode(peer).name.substr(0, 6), rail) << node.name;
            }
        }
    }
    EXPECT_DEATH(IbTopologyBuilder::RailOnly(4, 9, 2),
                 "a rail needs 5 leaves of 2 servers, but a spine has only 4 ports; the "
                 "largest server count that fits is 8");
    // Without the flag, a fabric in pieces is still a cabling mistake.
    IbTopology pieces = flat;
    pieces.SetSeparateSubnets(false);
    EXPECT_FALSE(pieces.Validate(&err));
    EXPECT_NE(err.find("not connected to the rest of the fabric"), std::string::npos) << err;
}

// On 2 servers x 8 GPUs the hierarchical allreduce and the all-to-all through the rails
// keep the fabric traffic on the rails: a rail-only fabric (a switch per rail, each its
// own subnet with its own routes) takes exactly as long as a rail-optimized one whose
// spines they never use, over InfiniBand and over RoCE. A ring, which crosses rails, is
// refused with the ranks, the subnets and what to do.
TEST_F(GpuClusterTest, RailOnlyFabricRunsRailTrafficAsFastAndRefusesCrossRailTraffic)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    CollectiveOpSpec ar;
    ar.count = 4 << 20; // 16 MiB of floats
    ar.type = CollectiveDataType::FLOAT32;
    CollectiveOpSpec a2a;
    a2a.kind = CollectiveKind::ALLTOALL;
    a2a.type = CollectiveDataType::INT8;
    a2a.count = 256 << 10;
    auto run = [&](bool railOnly, bool roce) {
        IbHelper::ResetLidAllocation();
        const IbTopology topo =
            railOnly ? IbTopologyBuilder::RailOnly(16, 2, 8, 1.0, IbLinkRate::HDR)
                     : IbTopologyBuilder::RailOptimized2Level(16, 2, 8, 1.0, IbLinkRate::HDR);
        CollectiveHelper h;
        h.SetGpusPerServer(8);
        h.SetAlgorithm("hier");
        Ptr<CollectiveCommunicator> comm;
        IbFabric ib;
        EthFabric eth;
        if (roce)
        {
            eth = EthFabricHelper().Build(topo);
            comm = h.InstallRoce(eth);
        }
        else
        {
            ib = IbFabricHelper().Build(topo);
            comm = h.InstallIb(ib);
        }
        CollectiveHelper::Run(comm, ar); // warm-up: connects the queue pairs
        const std::pair<Time, Time> t{CollectiveHelper::Run(comm, ar),
                                      CollectiveHelper::Run(comm, a2a)};
        Simulator::Destroy();
        return t;
    };
    for (bool roce : {false, true})
    {
        const auto optimized = run(false, roce);
        const auto only = run(true, roce);
        ASSERT_NE(only.first, Time::Max());
        ASSERT_NE(only.second, Time::Max());
        EXPECT_EQ(only.first, optimized.first) << (roce ? "RoCE" : "IB") << " allreduce";
        EXPECT_EQ(only.second, optimized.second) << (roce ? "RoCE" : "IB") << " all-to-all";
    }
    auto ring = [](bool roce) {
        IbHelper::ResetLidAllocation();
        const IbTopology topo = IbTopologyBuilder::RailOnly(16, 2, 8, 1.0, IbLinkRate::HDR);
        CollectiveHelper h;
        h.SetGpusPerServer(8);
        h.SetAlgorithm("ring");
        CollectiveOpSpec spec;
        spec.count = 1024;
        if (roce)
        {
            EthFabric eth = EthFabricHelper().Build(topo);
            CollectiveHelper::Run(h.InstallRoce(eth), spec);
        }
        else
        {
            IbFabric ib = IbFabricHelper().Build(topo);
            CollectiveHelper::Run(h.InstallIb(ib), spec);
        }
    };
    // The ring's server crossing goes from GPU 7 of server 0 to GPU 0 of server 1.
    EXPECT_DEATH(ring(false),
                 "ranks 7 and 8 \\(nodes [0-9]+ and [0-9]+\\) are in subnets 7 and 0 of the "
                 "fabric, which nothing joins");
    EXPECT_DEATH(ring(true), "for host-8 \\([0-9.]+\\), a host of another subnet");
}

// The hierarchical allreduce gives every operator on every type the reference result,
// over the rail fabric with the NVLink domain, and the same bytes over TCP.
TEST_F(GpuClusterTest, HierarchicalAllReduceMatchesTheReferenceOverRdmaAndTcp)
{
    const IbTopology topo = IbTopologyBuilder::RailOptimized2Level(8, 3, 4, 1.0, IbLinkRate::HDR);
    CollectiveOpSpec spec;
    spec.count = 10007; // not a multiple of the 4 x 3 segments
    spec.type = CollectiveDataType::FLOAT32;
    const Buffers in = MakeInputs(spec.type, spec.op, 12, spec.count * 4, 5);
    Buffers ib = in;
    Buffers tcp = in;
    {
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
        IbFabric fabric = fh.Build(topo);
        CollectiveHelper h;
        h.SetHcaAttribute("DataMode", BooleanValue(true));
        h.SetGpusPerServer(4);
        h.SetAlgorithm("hier");
        h.SetCommunicatorAttribute("ChunkSize", UintegerValue(8192));
        Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
        AllOpsAllTypes(comm, 3001, "hier over RDMA");
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &ib), Time::Max());
        Ptr<CollectiveNvlinkTransport> nv =
            DynamicCast<CollectiveNvlinkTransport>(comm->GetTransport());
        ASSERT_TRUE(nv);
        // Only rail peers use the fabric: GPU k talks to the k-th GPUs of the others.
        EXPECT_GT(nv->GetNvlinkMessages(), 0u);
        EXPECT_GT(nv->GetFabricTransport()->GetMessagesSent(), 0u);
        Simulator::Destroy();
        IbHelper::ResetLidAllocation();
    }
    {
        NodeContainer hosts =
            CollectiveHelper::BuildIpFabric(topo, DataRate("10Gbps"), MicroSeconds(1));
        CollectiveHelper h;
        h.SetGpusPerServer(4);
        h.SetAlgorithm("hier");
        h.SetCommunicatorAttribute("ChunkSize", UintegerValue(8192));
        ASSERT_NE(CollectiveHelper::Run(h.InstallTcp(hosts), spec, &tcp), Time::Max());
    }
    EXPECT_EQ(ib, tcp) << "the same reduction order over either transport";
    std::vector<const uint8_t*> res;
    for (const auto& b : ib)
    {
        res.push_back(b.data());
        EXPECT_EQ(b, ib[0]) << "every GPU holds the same bytes";
    }
    EXPECT_EQ(CheckReduce(spec.type, spec.op, in, res, 0, spec.count * 4, "hier"), 0u);
}

// Hierarchical allreduce on 3 channels (each part through the three phases on its own
// stream, two queue pairs per rail peer pair) gives the reference results for every
// operator and type, and its NVLink and rail bytes are those of one channel.
TEST_F(GpuClusterTest, HierarchicalAllReduceOnChannelsMatchesTheReference)
{
    const IbTopology topo = IbTopologyBuilder::RailOptimized2Level(8, 3, 4, 1.0, IbLinkRate::HDR);
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric fabric = fh.Build(topo);
    uint64_t bytes[2][2];
    for (uint32_t channels : {1u, 3u})
    {
        CollectiveHelper h;
        h.SetHcaAttribute("DataMode", BooleanValue(true));
        h.SetGpusPerServer(4);
        h.SetAlgorithm("hier");
        h.SetAlgorithmAttribute("Channels", UintegerValue(channels));
        h.SetIbTransportAttribute("QueuePairsPerPeer", UintegerValue(2));
        h.SetCommunicatorAttribute("ChunkSize", UintegerValue(4096));
        Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
        if (channels > 1)
        {
            AllOpsAllTypes(comm, 3001, "hier on 3 channels");
        }
        CollectiveOpSpec spec;
        spec.count = 24000;
        spec.type = CollectiveDataType::FLOAT32;
        Ptr<CollectiveNvlinkTransport> nv =
            DynamicCast<CollectiveNvlinkTransport>(comm->GetTransport());
        const uint64_t nvBefore = nv->GetNvlinkBytes();
        const uint64_t fabricBefore = nv->GetFabricTransport()->GetBytesSent();
        ASSERT_NE(CollectiveHelper::Run(comm, spec), Time::Max());
        bytes[channels > 1][0] = nv->GetNvlinkBytes() - nvBefore;
        bytes[channels > 1][1] = nv->GetFabricTransport()->GetBytesSent() - fabricBefore;
    }
    EXPECT_EQ(bytes[1][0], bytes[0][0]);
    EXPECT_EQ(bytes[1][1], bytes[0][1]);
}

// 2 servers x 8 GPUs on a rail-optimized HDR fabric, one message per step (ChunkSize of
// a whole segment): 7 NVLink steps of S/8, then per rail a ring of 2 ranks (one step of
// S/16 each way for the reduce-scatter and one for the allgather, the eight rails at
// once, one leaf switch between the two GPUs), then 7 NVLink steps again. Each NVLink
// step takes S/8 / B_nvl + L_nvl; each fabric step S/16 over the link's payload rate plus
// one message latency alpha (doorbell, two cables, one switch, one packet, PCIe write).
TEST_F(GpuClusterTest, HierarchicalAllReduceTimeIsTheNvlinkPhasesPlusThePerRailRing)
{
    const uint32_t g = 8;
    const uint32_t servers = 2;
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric fabric =
        fh.Build(IbTopologyBuilder::RailOptimized2Level(16, servers, g, 1.0, IbLinkRate::HDR));
    const uint64_t S = 16ull << 20;
    CollectiveHelper h;
    h.SetGpusPerServer(g);
    h.SetAlgorithm("hier");
    h.SetCommunicatorAttribute("ChunkSize", UintegerValue(S / g));
    Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
    CollectiveOpSpec spec;
    spec.count = S / 4;
    CollectiveHelper::Run(comm, spec); // warm-up: connects the queue pairs
    const Time t = CollectiveHelper::Run(comm, spec);
    ASSERT_NE(t, Time::Max());

    Ptr<CollectiveNvlinkTransport> nv =
        DynamicCast<CollectiveNvlinkTransport>(comm->GetTransport());
    UintegerValue slot;
    nv->GetFabricTransport()->GetAttribute("SlotSize", slot);
    Ptr<IbHca> hca = fabric.hosts.Get(0)->GetObject<IbHca>();
    const double rate = fabric.HostPort(0)->GetDataRate().GetBitRate() / 8.0;
    const uint32_t mtu = 4096;
    const double eff = IbPayloadShare(slot.Get(), mtu);
    const double alpha = hca->GetDoorbellLatency().GetSeconds() + 2 * 10e-9 + 90e-9 +
                         IbPacket::WireSize(mtu, 0, false) / rate +
                         hca->GetPcieWriteLatency().GetSeconds();
    const double nvStep = double(S / g) * 8 / 3600e9 + 600e-9;
    const double railStep = double(S / g / servers) / (rate * eff) + alpha;
    const double model = 2 * (g - 1) * nvStep + 2 * (servers - 1) * railStep;
    std::cout << "hierarchical allreduce of " << S << " B on " << servers << " x " << g
              << " GPUs: " << t.GetMicroSeconds() << " us; model " << model * 1e6 << " us (NVLink "
              << 2 * (g - 1) * nvStep * 1e6 << " us, rails " << 2 * (servers - 1) * railStep * 1e6
              << " us)\n";
    EXPECT_NEAR(t.GetSeconds() / model, 1.0, 0.02);

    // The flat ring over the same GPUs crosses between the servers on one NIC each way:
    // 2 (n - 1) steps of S / n, each as slow as that crossing.
    h.SetAlgorithm("ring");
    Ptr<CollectiveCommunicator> ring = h.InstallIb(fabric);
    CollectiveHelper::Run(ring, spec);
    const Time tr = CollectiveHelper::Run(ring, spec);
    std::cout << "flat ring: " << tr.GetMicroSeconds() << " us\n";
    const uint32_t n = g * servers;
    EXPECT_GE(tr.GetSeconds(), 2.0 * (n - 1) * (double(S) / n) / (rate * eff) * 0.999);
}

namespace
{
/**
 * All-to-all inputs: segment j of rank r's send half holds bytes derived from (r, j).
 * @param n ranks
 * @param seg bytes per segment
 * @return the buffers (receive halves zero)
 */
Buffers
AllToAllInputs(uint32_t n, uint64_t seg)
{
    Buffers b(n, std::vector<uint8_t>(2 * n * seg, 0));
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint32_t j = 0; j < n; ++j)
        {
            for (uint64_t i = 0; i < seg; ++i)
            {
                b[r][j * seg + i] = static_cast<uint8_t>(r * 31 + j * 7 + i * 13);
            }
        }
    }
    return b;
}

/**
 * @param b the buffers after the all-to-all
 * @param n ranks
 * @param seg bytes per segment
 * @return receive-half segments that are not the sender's segment for the receiver
 */
uint32_t
AllToAllWrong(const Buffers& b, uint32_t n, uint64_t seg)
{
    uint32_t wrong = 0;
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint32_t j = 0; j < n; ++j)
        {
            // rank r's segment j of the receive half is rank j's send segment r
            if (!std::equal(b[r].begin() + (n + j) * seg,
                            b[r].begin() + (n + j + 1) * seg,
                            b[j].begin() + r * seg))
            {
                ++wrong;
            }
        }
    }
    return wrong;
}
} // namespace

// Every algorithm's all-to-all delivers each segment to its rank, over RDMA with the NVLink
// domain (pairwise exchange; hier straight and through the rails) and over TCP.
TEST_F(GpuClusterTest, AllToAllDeliversEverySegmentWhateverTheAlgorithmAndTransport)
{
    const IbTopology topo = IbTopologyBuilder::RailOptimized2Level(8, 3, 4, 1.0, IbLinkRate::HDR);
    const uint32_t n = 12;
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::ALLTOALL;
    spec.type = CollectiveDataType::INT8;
    spec.count = 5000; // bytes per segment, not a multiple of the chunk
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(topo);
    for (const char* algo : {"ring", "tree", "hd", "hier", "hier-straight"})
    {
        CollectiveHelper h;
        h.SetHcaAttribute("DataMode", BooleanValue(true));
        h.SetGpusPerServer(4);
        h.SetCommunicatorAttribute("ChunkSize", UintegerValue(2048));
        const bool straight = std::string(algo) == "hier-straight";
        h.SetAlgorithm(straight ? "hier" : algo);
        if (straight)
        {
            h.SetAlgorithmAttribute("RailAwareAllToAll", BooleanValue(false));
        }
        Buffers b = AllToAllInputs(n, spec.count);
        Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &b), Time::Max()) << algo;
        EXPECT_EQ(AllToAllWrong(b, n, spec.count), 0u) << algo;
        Ptr<CollectiveNvlinkTransport> nv =
            DynamicCast<CollectiveNvlinkTransport>(comm->GetTransport());
        // Each GPU sends n - 1 segments; through the rails, those for another server's GPU
        // k' cross NVLink first: (G - 1) (1 + (N - 1)) segments per GPU over NVLink.
        const uint64_t nvSegments = std::string(algo) == "hier" ? 3 * (1 + 2) : 3;
        EXPECT_EQ(nv->GetNvlinkBytes(), n * nvSegments * spec.count) << algo;
    }
    Simulator::Destroy();
    IbHelper::ResetLidAllocation();
    NodeContainer hosts =
        CollectiveHelper::BuildIpFabric(topo, DataRate("10Gbps"), MicroSeconds(1));
    CollectiveHelper h;
    h.SetGpusPerServer(4);
    h.SetAlgorithm("hier");
    Buffers b = AllToAllInputs(n, spec.count);
    ASSERT_NE(CollectiveHelper::Run(h.InstallTcp(hosts), spec, &b), Time::Max());
    EXPECT_EQ(AllToAllWrong(b, n, spec.count), 0u) << "hier over TCP";
}

// All-to-all on 2 servers x 8 GPUs, rail-optimized, 1 MiB per pair: every NIC sends and
// receives the (N - 1) G segments of the other server, and each step of either schedule
// is a permutation of the NICs, so the time is that many bytes at the link's payload
// rate plus one message latency and the last chunk's acknowledgement; the NVLink traffic
// (at most 2 (G - 1) segments per GPU) overlaps it.
TEST_F(GpuClusterTest, AllToAllTimeOnARailOptimizedFabricIsItsNicBound)
{
    const uint32_t g = 8;
    const uint32_t servers = 2;
    const uint32_t n = g * servers;
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric fabric =
        fh.Build(IbTopologyBuilder::RailOptimized2Level(16, servers, g, 1.0, IbLinkRate::HDR));
    const uint64_t seg = 1 << 20;
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::ALLTOALL;
    spec.type = CollectiveDataType::INT8;
    spec.count = seg;
    const double rate = fabric.HostPort(0)->GetDataRate().GetBitRate() / 8.0;
    Ptr<IbHca> hca;
    for (bool railAware : {true, false})
    {
        CollectiveHelper h;
        h.SetGpusPerServer(g);
        h.SetAlgorithm("hier");
        h.SetAlgorithmAttribute("RailAwareAllToAll", BooleanValue(railAware));
        Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
        CollectiveHelper::Run(comm, spec); // warm-up: connects the queue pairs
        const Time t = CollectiveHelper::Run(comm, spec);
        ASSERT_NE(t, Time::Max());
        Ptr<CollectiveNvlinkTransport> nv =
            DynamicCast<CollectiveNvlinkTransport>(comm->GetTransport());
        UintegerValue slot;
        nv->GetFabricTransport()->GetAttribute("SlotSize", slot);
        hca = fabric.hosts.Get(0)->GetObject<IbHca>();
        const uint32_t mtu = 4096;
        const double eff = IbPayloadShare(slot.Get(), mtu);
        const double bound = double(servers - 1) * g * seg / (rate * eff);
        std::cout << "all-to-all, 1 MiB per pair, " << servers << " x " << g
                  << (railAware ? " GPUs through the rails: " : " GPUs straight: ")
                  << t.GetMicroSeconds() << " us, NIC bound " << bound * 1e6 << " us\n";
        EXPECT_GE(t.GetSeconds(), bound);
        EXPECT_LT(t.GetSeconds(), bound * 1.03);
    }
}

namespace
{
/**
 * All-to-allv inputs: the piece for rank j in rank r's send part holds bytes derived
 * from (r, j).
 * @param v the sizes (INT8 elements)
 * @return the buffers (receive parts zero)
 */
Buffers
AllToAllVInputs(const CollectiveAllToAllVCounts& v)
{
    const uint32_t n = v.GetN();
    Buffers b(n, std::vector<uint8_t>(v.MaxBufferCount(), 0));
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint32_t j = 0; j < n; ++j)
        {
            for (uint64_t i = 0; i < v.Count(r, j); ++i)
            {
                b[r][v.SendOffset(r, j) + i] = static_cast<uint8_t>(r * 31 + j * 7 + i * 13);
            }
        }
    }
    return b;
}

/**
 * @param b the buffers after the all-to-allv
 * @param v the sizes
 * @return received pieces that are not what their sender had for the receiver
 */
uint32_t
AllToAllVWrong(const Buffers& b, const CollectiveAllToAllVCounts& v)
{
    uint32_t wrong = 0;
    for (uint32_t r = 0; r < v.GetN(); ++r)
    {
        for (uint32_t j = 0; j < v.GetN(); ++j)
        {
            for (uint64_t i = 0; i < v.Count(j, r); ++i)
            {
                if (b[r][v.RecvOffset(r, j) + i] != static_cast<uint8_t>(j * 31 + r * 7 + i * 13))
                {
                    ++wrong;
                    break;
                }
            }
        }
    }
    return wrong;
}
} // namespace

// All-to-allv with uneven sizes and empty pairs delivers every piece, with every
// algorithm over RDMA with the NVLink domain and over TCP; NVLink carries exactly the
// pairs in one server (straight) or every pair between different GPU indices (through
// the rails).
TEST_F(GpuClusterTest, AllToAllVDeliversEveryPieceWhateverTheAlgorithmAndTransport)
{
    const IbTopology topo = IbTopologyBuilder::RailOptimized2Level(8, 3, 4, 1.0, IbLinkRate::HDR);
    const uint32_t n = 12;
    const uint32_t g = 4;
    std::vector<uint64_t> counts(n * n);
    uint64_t sameServer = 0;
    uint64_t otherGpu = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        for (uint32_t j = 0; j < n; ++j)
        {
            const uint64_t c = (i * 7 + j * 3) % 5 * 997; // a fifth of the pairs empty
            counts[i * n + j] = c;
            sameServer += i != j && i / g == j / g ? c : 0;
            otherGpu += i % g != j % g ? c : 0;
        }
    }
    Ptr<const CollectiveAllToAllVCounts> v = Create<CollectiveAllToAllVCounts>(n, counts);
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::ALLTOALLV;
    spec.type = CollectiveDataType::INT8;
    spec.counts = v;
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(topo);
    for (const char* algo : {"ring", "dbtree", "hier", "hier-straight"})
    {
        CollectiveHelper h;
        h.SetHcaAttribute("DataMode", BooleanValue(true));
        h.SetGpusPerServer(g);
        h.SetCommunicatorAttribute("ChunkSize", UintegerValue(2048));
        const bool straight = std::string(algo) == "hier-straight";
        h.SetAlgorithm(straight ? "hier" : algo);
        if (straight)
        {
            h.SetAlgorithmAttribute("RailAwareAllToAll", BooleanValue(false));
        }
        Buffers b = AllToAllVInputs(*v);
        Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &b), Time::Max()) << algo;
        EXPECT_EQ(AllToAllVWrong(b, *v), 0u) << algo;
        Ptr<CollectiveNvlinkTransport> nv =
            DynamicCast<CollectiveNvlinkTransport>(comm->GetTransport());
        EXPECT_EQ(nv->GetNvlinkBytes(), std::string(algo) == "hier" ? otherGpu : sameServer)
            << algo;
    }
    Simulator::Destroy();
    IbHelper::ResetLidAllocation();
    NodeContainer hosts =
        CollectiveHelper::BuildIpFabric(topo, DataRate("10Gbps"), MicroSeconds(1));
    CollectiveHelper h;
    h.SetGpusPerServer(g);
    h.SetAlgorithm("hier");
    Buffers b = AllToAllVInputs(*v);
    ASSERT_NE(CollectiveHelper::Run(h.InstallTcp(hosts), spec, &b), Time::Max());
    EXPECT_EQ(AllToAllVWrong(b, *v), 0u) << "hier over TCP";
}

// Skewed all-to-allv through the rails on 2 servers x 8 GPUs: every GPU of server 1 sends
// GPU 0 of server 0 twice as much (2 MiB) as any other GPU (1 MiB), so the rail-0 NICs
// carry G x 2 MiB and the others G x 1 MiB; the time is the busiest NIC's bytes at the
// link's payload rate plus latency terms, as for the even all-to-all.
TEST_F(GpuClusterTest, SkewedAllToAllVTimeIsTheBusiestNicsBound)
{
    const uint32_t g = 8;
    const uint32_t servers = 2;
    const uint32_t n = g * servers;
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric fabric =
        fh.Build(IbTopologyBuilder::RailOptimized2Level(16, servers, g, 1.0, IbLinkRate::HDR));
    const uint64_t mib = 1 << 20;
    std::vector<uint64_t> counts(n * n, mib);
    for (uint32_t i = g; i < n; ++i)
    {
        counts[i * n + 0] = 2 * mib;
    }
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::ALLTOALLV;
    spec.type = CollectiveDataType::INT8;
    spec.counts = Create<CollectiveAllToAllVCounts>(n, counts);
    const double rate = fabric.HostPort(0)->GetDataRate().GetBitRate() / 8.0;
    CollectiveHelper h;
    h.SetGpusPerServer(g);
    h.SetAlgorithm("hier");
    Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
    CollectiveHelper::Run(comm, spec); // warm-up: connects the queue pairs
    const Time t = CollectiveHelper::Run(comm, spec);
    ASSERT_NE(t, Time::Max());
    Ptr<CollectiveNvlinkTransport> nv =
        DynamicCast<CollectiveNvlinkTransport>(comm->GetTransport());
    UintegerValue slot;
    nv->GetFabricTransport()->GetAttribute("SlotSize", slot);
    const double eff = IbPayloadShare(slot.Get(), 4096);
    const double bound = double(g) * 2 * mib / (rate * eff);
    std::cout << "skewed all-to-allv, 2 x 8 GPUs through the rails: " << t.GetMicroSeconds()
              << " us, busiest NIC bound " << bound * 1e6 << " us\n";
    EXPECT_GE(t.GetSeconds(), bound);
    EXPECT_LT(t.GetSeconds(), bound * 1.03);
}

// Placement: packed takes consecutive servers, fragmented deals them round-robin,
// random is a permutation, explicit takes what it is given; the hosts are each server's
// GPUs in order, and a job's description names its servers and rail groups.
TEST(GpuClusterSchedulerTest, PoliciesPlaceWholeServersAsTheySay)
{
    auto place = [](GpuClusterScheduler::Policy p) {
        GpuClusterScheduler s(12, 8, 4);
        s.AddJob("a", 32);
        s.AddJob("b", 16);
        s.AddJob("c", 16);
        s.Place(p);
        return s;
    };
    const GpuClusterScheduler packed = place(GpuClusterScheduler::PACKED);
    EXPECT_EQ(packed.GetServers(0), (std::vector<uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(packed.GetServers(1), (std::vector<uint32_t>{4, 5}));
    EXPECT_EQ(packed.GetServers(2), (std::vector<uint32_t>{6, 7}));
    EXPECT_EQ(packed.Describe(0), "servers 0-3 (group 0)");
    EXPECT_EQ(packed.GetFreeServers(), (std::vector<uint32_t>{8, 9, 10, 11}));
    const std::vector<uint32_t> hosts = packed.GetHosts(1);
    ASSERT_EQ(hosts.size(), 16u);
    EXPECT_EQ(hosts.front(), 32u);
    EXPECT_EQ(hosts.back(), 47u);
    const GpuClusterScheduler frag = place(GpuClusterScheduler::FRAGMENTED);
    EXPECT_EQ(frag.GetServers(0), (std::vector<uint32_t>{0, 3, 6, 7}));
    EXPECT_EQ(frag.GetServers(1), (std::vector<uint32_t>{1, 4}));
    EXPECT_EQ(frag.GetServers(2), (std::vector<uint32_t>{2, 5}));
    EXPECT_EQ(frag.Describe(0), "servers 0,3,6-7 (groups 0,1)");
    const GpuClusterScheduler rnd = place(GpuClusterScheduler::RANDOM);
    std::set<uint32_t> seen;
    for (uint32_t j = 0; j < 3; ++j)
    {
        for (uint32_t s : rnd.GetServers(j))
        {
            EXPECT_LT(s, 12u);
            EXPECT_TRUE(seen.insert(s).second) << "server " << s << " placed twice";
        }
    }
    EXPECT_EQ(seen.size(), 8u);
    GpuClusterScheduler ex(4, 8, 2);
    ex.AddJob("x", 16, {3, 1});
    ex.Place(GpuClusterScheduler::EXPLICIT);
    EXPECT_EQ(ex.GetHosts(0).front(), 24u);
    EXPECT_EQ(ex.Describe(0), "servers 3,1 (groups 0,1)");
}

TEST(GpuClusterSchedulerTest, JobsThatDoNotFitAreRefusedByName)
{
    EXPECT_DEATH(
        {
            GpuClusterScheduler s(4, 8, 2);
            s.AddJob("big", 24);
            s.AddJob("second", 16);
            s.Place(GpuClusterScheduler::PACKED);
        },
        "need 5 servers \\(40 GPUs\\) and the cluster has 4");
    EXPECT_DEATH(
        {
            GpuClusterScheduler s(4, 8, 2);
            s.AddJob("odd", 12);
        },
        "job odd asks for 12 GPUs; jobs get whole servers of 8");
    EXPECT_DEATH(
        {
            GpuClusterScheduler s(4, 8, 2);
            s.AddJob("a", 8, {1});
            s.AddJob("b", 8, {1});
            s.Place(GpuClusterScheduler::EXPLICIT);
        },
        "job b: server 1 is given to two jobs");
}

// A background flow offers its load: MessageBytes every MessageBytes / (Load x LineRate),
// so over a run of T it delivers T x Load x LineRate, give or take a message; a flow
// that offers more than its path carries skips messages instead of queueing without
// bound.
TEST(BackgroundTrafficTest, AFlowDeliversItsLoad)
{
    IbHelper::ResetLidAllocation();
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(4, 4));
    CollectiveHelper ch;
    Ptr<BackgroundTraffic> bg = CreateObject<BackgroundTraffic>();
    bg->SetAttribute("MessageBytes", UintegerValue(65536));
    bg->SetAttribute("Load", DoubleValue(0.5));
    bg->SetAttribute("LineRate", DataRateValue(DataRate("100Gbps")));
    bg->AddFlow(ch.InstallIb(fabric, {0, 3}));
    bg->Start();
    const Time T = MilliSeconds(1);
    Simulator::Schedule(T, &BackgroundTraffic::Stop, bg);
    Simulator::Run();
    const double messages = T.GetSeconds() * 0.5 * 100e9 / (65536 * 8.0);
    EXPECT_NEAR(bg->GetBytesDelivered() / 65536.0, messages, 1.0);
    EXPECT_EQ(bg->GetSkipped(), 0u);
    Simulator::Destroy();

    IbHelper::ResetLidAllocation();
    IbFabric fabric2 = fh.Build(IbTopologyBuilder::FatTree2Level(4, 4));
    Ptr<BackgroundTraffic> over = CreateObject<BackgroundTraffic>();
    over->SetAttribute("MessageBytes", UintegerValue(65536));
    over->SetAttribute("Load", DoubleValue(1.0));
    over->SetAttribute("LineRate", DataRateValue(DataRate("400Gbps"))); // 4x the EDR link
    Ptr<CollectiveCommunicator> pair = ch.InstallIb(fabric2, {0, 3});
    over->AddFlow(pair);
    over->Start();
    Simulator::Schedule(T, &BackgroundTraffic::Stop, over);
    Simulator::Run();
    EXPECT_GT(over->GetSkipped(), 0u);
    // What arrived (until the last message in flight did) is what the EDR link carries of
    // payload in the transport's SEND fragments, not what was offered.
    UintegerValue slot;
    pair->GetTransport()->GetAttribute("SlotSize", slot);
    const double payload =
        fabric2.HostPort(0)->GetDataRate().GetBitRate() * IbPayloadShare(slot.Get(), 4096);
    EXPECT_NEAR(over->GetBytesDelivered() * 8.0 / over->GetLastDelivery().GetSeconds() / payload,
                1.0,
                0.02);
    Simulator::Destroy();
}

// The smallest rail-optimized radix: a rail leaf per group of radix/2 servers (non-blocking)
// and every leaf on every spine, so G x groups <= radix.
TEST(GpuClusterRadixTest, TheSmallestRadixHoldsTheServers)
{
    EXPECT_EQ(IbTopologyBuilder::SmallestRailRadix(4, 8), 8u);    // 1 group of 4
    EXPECT_EQ(IbTopologyBuilder::SmallestRailRadix(8, 4), 8u);    // 2 groups: 8 leaves
    EXPECT_EQ(IbTopologyBuilder::SmallestRailRadix(16, 8), 16u);  // 2 groups: 16 leaves
    EXPECT_EQ(IbTopologyBuilder::SmallestRailRadix(128, 8), 48u); // 6 groups of 24: 48 leaves
    EXPECT_EQ(IbTopologyBuilder::SmallestRailRadix(128, 8, 3.0), 40u);
    EXPECT_EQ(IbTopologyBuilder::SmallestRailRadix(100000, 8), 0u);
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The host interface: PcieLink's rates and TLP accounting, and each stage it adds to the
 * HCA (doorbell, WQE fetch, payload fetch, received-data and CQE writes, credits held
 * until the data is written), each checked against its attribute in a controlled case,
 * and the bandwidth ceilings the TLP overheads give.
 */

#include "ns3/core-module.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-perftest-application.h"
#include "ns3/ib-perftest-helper.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/network-module.h"
#include "ns3/pcie-link.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

class PcieLinkTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        IbHelper::ResetLidAllocation();
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

TEST_F(PcieLinkTest, RatesAndTlpBytesFollowTheGenerationWidthAndSizes)
{
    Ptr<PcieLink> l = CreateObject<PcieLink>(); // Gen4 x16, MPS 256, MRRS 512, RCB 256
    // 16 GT/s x 16 lanes, 128b/130b, 8 bits a byte.
    EXPECT_DOUBLE_EQ(l->GetDirectionRate(), 16e9 * 16 * 128 / 130 / 8);
    // 4096 bytes read: 16 completions of 256 bytes, 20 bytes of overhead each; 8 requests
    // of 512 bytes, 24 bytes each, the other way. Written: 16 posted writes, 24 each.
    EXPECT_EQ(l->ReadCompletionBytes(4096), 4096u + 16 * 20);
    EXPECT_EQ(l->ReadRequestBytes(4096), 8u * 24);
    EXPECT_EQ(l->WriteBytes(4096), 4096u + 16 * 24);
    EXPECT_EQ(l->ReadCompletionBytes(1), 1u + 20);
    EXPECT_EQ(l->WriteBytes(257), 257u + 2 * 24);
    EXPECT_DOUBLE_EQ(l->GetReadCeiling(), l->GetDirectionRate() * 256 / 276);
    EXPECT_DOUBLE_EQ(l->GetWriteCeiling(), l->GetDirectionRate() * 256 / 280);
    // Generation 2 uses 8b/10b: x8 carries 4 GB/s a direction.
    Ptr<PcieLink> g2 = CreateObject<PcieLink>();
    g2->SetAttribute("Generation", UintegerValue(2));
    g2->SetAttribute("Lanes", UintegerValue(8));
    EXPECT_DOUBLE_EQ(g2->GetDirectionRate(), 4e9);
    // 1 MB at 4 GB/s is 262.144 us.
    EXPECT_EQ(g2->TransferTime(1 << 20), NanoSeconds(262144));
    EXPECT_EQ(l->Describe(), "PCIe Gen4 x16, MPS 256, MRRS 512, read completions 256 B");
}

TEST_F(PcieLinkTest, SizesThatNoLinkNegotiatesAreRefusedNamingTheAttribute)
{
    Ptr<PcieLink> l = CreateObject<PcieLink>();
    l->SetAttribute("Lanes", UintegerValue(3));
    EXPECT_DEATH(l->GetDirectionRate(), "Lanes=3 is not a PCIe link width");
    Ptr<PcieLink> m = CreateObject<PcieLink>();
    m->SetAttribute("MaxPayloadSize", UintegerValue(300));
    EXPECT_DEATH(m->GetDirectionRate(), "MaxPayloadSize=300 is not a power of two");
    Ptr<PcieLink> c = CreateObject<PcieLink>();
    c->SetAttribute("ReadCompletionSize", UintegerValue(512)); // above MPS 256
    EXPECT_DEATH(c->GetDirectionRate(), "ReadCompletionSize=512 must be a power of two");
    Ptr<PcieLink> g = CreateObject<PcieLink>();
    EXPECT_FALSE(g->SetAttributeFailSafe("Generation", UintegerValue(6)));
}

TEST_F(PcieLinkTest, WqeSizesFollowTheMlx5Layout)
{
    IbSendWr w;
    w.opcode = IbWrOpcode::RDMA_WRITE;
    w.sge.length = 8;
    EXPECT_EQ(IbHca::WqeBytes(w, false), 64u); // ctrl 16 + raddr 16 + data 16
    w.inlineData = true;
    w.sge.length = 220; // ctrl + raddr + 4 + 220 -> 256
    EXPECT_EQ(IbHca::WqeBytes(w, false), 256u);
    w.sge.length = 221;
    EXPECT_EQ(IbHca::WqeBytes(w, false), 320u);
    IbSendWr ud;
    ud.opcode = IbWrOpcode::SEND;
    EXPECT_EQ(IbHca::WqeBytes(ud, true), 128u); // ctrl 16 + av 48 + data 16 = 80
}

/// The write_lat pair of a test: two hosts back to back on HDR.
struct Pair
{
    IbFabric fabric;                   ///< the fabric
    std::vector<Ptr<IbHca>> hcas;      ///< the two HCAs
    Ptr<IbPerftestApplication> client; ///< host-0's side
};

/**
 * @param test perftest test
 * @param size message size
 * @param link the PCIe link of both HCAs (nullptr: none)
 * @param blueFlame BlueFlameSize
 * @param maxInline MaxInlineData
 * @param iters iterations
 * @return the pair, run
 */
Pair
RunPair(const std::string& test,
        uint64_t size,
        Ptr<PcieLink> link,
        uint32_t blueFlame = 0,
        uint32_t maxInline = 0,
        uint32_t iters = 100,
        IbLinkRate::Speed speed = IbLinkRate::HDR,
        Ptr<PcieLink> serverLink = nullptr)
{
    IbHelper::ResetLidAllocation();
    Pair p;
    IbFabricHelper fh;
    p.fabric = fh.Build(IbTopologyBuilder::Chain(0, speed, 4));
    IbHcaHelper hh;
    hh.SetHcaAttribute("BlueFlameSize", UintegerValue(blueFlame));
    hh.SetHcaAttribute("MaxInlineData", UintegerValue(maxInline));
    p.hcas = hh.Install(p.fabric.hosts);
    // (ns-3's pointer attribute refuses a null value: no link is the default.)
    if (link)
    {
        p.hcas[0]->SetAttribute("PcieLink", PointerValue(link));
    }
    if (serverLink || link)
    {
        p.hcas[1]->SetAttribute("PcieLink", PointerValue(serverLink ? serverLink : link));
    }
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue(test));
    perf.SetAttribute("Size", UintegerValue(size));
    perf.SetAttribute("Iterations", UintegerValue(iters));
    ApplicationContainer apps =
        perf.Install(p.fabric.hosts.Get(0), p.fabric.hosts.Get(1), p.fabric.subnetManager);
    apps.Start(MicroSeconds(1));
    p.client = DynamicCast<IbPerftestApplication>(apps.Get(0));
    Simulator::Run();
    EXPECT_TRUE(p.client->IsFinished());
    return p;
}

/**
 * @param attrs attributes of the link (name, value)
 * @return a Gen4 x16 link with them
 */
Ptr<PcieLink>
Link(const std::vector<std::pair<std::string, Time>>& attrs = {})
{
    Ptr<PcieLink> l = CreateObject<PcieLink>();
    for (const auto& [name, value] : attrs)
    {
        l->SetAttribute(name, TimeValue(value));
    }
    return l;
}

/// @return write_lat's typical latency in ns for that run
double
WriteLatNs(Ptr<PcieLink> link, uint32_t blueFlame = 0, uint32_t maxInline = 0, uint64_t size = 8)
{
    Pair p = RunPair("write_lat", size, link, blueFlame, maxInline);
    const double ns = p.client->GetResults().tTypicalUs * 1e3;
    Simulator::Destroy();
    return ns;
}

TEST_F(PcieLinkTest, EachLatencyStageAddsExactlyItsAttribute)
{
    const Time x = NanoSeconds(1000);
    const double base = WriteLatNs(Link());
    // write_lat reports half the round trip: each one-way stage shows once.
    // Not inline: the WQE fetch and the payload fetch each take a read round trip.
    EXPECT_NEAR(WriteLatNs(Link({{"ReadLatency", x}})) - base, 2000, 1.0);
    EXPECT_NEAR(WriteLatNs(Link({{"MmioLatency", x}})) - base, 1000, 1.0);
    EXPECT_NEAR(WriteLatNs(Link({{"WriteLatency", x}})) - base, 1000, 1.0);
    // Inline (perftest's 220 bytes): the payload comes with the WQE, one read round trip.
    const double inl = WriteLatNs(Link(), 0, 220);
    EXPECT_NEAR(WriteLatNs(Link({{"ReadLatency", x}}), 0, 220) - inl, 1000, 1.0);
    // BlueFlame as well: the doorbell carries the WQE, no read at all.
    const double bf = WriteLatNs(Link(), 256, 220);
    EXPECT_NEAR(WriteLatNs(Link({{"ReadLatency", x}}), 256, 220) - bf, 0, 1.0);
    // A WQE of 320 bytes (221 inline) no longer fits BlueFlame's 256.
    const double big = WriteLatNs(Link(), 256, 236, 221);
    EXPECT_NEAR(WriteLatNs(Link({{"ReadLatency", x}}), 256, 236, 221) - big, 1000, 1.0);
}

TEST_F(PcieLinkTest, WithoutALinkAndWithAnIdealOneTheFiguresAreTheIdealizedModels)
{
    // A PcieLink with zero latencies adds only transfer times: a few ns at Gen4 x16.
    const double none = WriteLatNs(nullptr);
    const double zero = WriteLatNs(Link());
    EXPECT_GT(zero, none);
    EXPECT_LT(zero - none, 20.0);
    // Without a link, inline and BlueFlame change nothing.
    EXPECT_DOUBLE_EQ(WriteLatNs(nullptr, 256, 220), none);
}

TEST_F(PcieLinkTest, ReadLatAndAtomicLatWaitOneHostMemoryReadAtTheResponder)
{
    const Time x = NanoSeconds(1000);
    Pair a = RunPair("read_lat", 8, Link());
    const double base = a.client->GetResults().tTypicalUs * 1e3;
    Simulator::Destroy();
    Pair b = RunPair("read_lat", 8, Link({{"ReadLatency", x}}));
    // Requester: WQE fetch (a READ fetches no payload); responder: the data read.
    EXPECT_NEAR(b.client->GetResults().tTypicalUs * 1e3 - base, 2000, 1.0);
    Simulator::Destroy();
    Pair c = RunPair("atomic_lat", 8, Link());
    const double abase = c.client->GetResults().tTypicalUs * 1e3;
    Simulator::Destroy();
    Pair d = RunPair("atomic_lat", 8, Link({{"ReadLatency", x}}));
    EXPECT_NEAR(d.client->GetResults().tTypicalUs * 1e3 - abase, 2000, 1.0);
}

TEST_F(PcieLinkTest, LargeWritesRunAtTheReadCeilingWhenPcieIsSlowerThanTheLink)
{
    // NDR (4 x 106.25 Gb/s) on PCIe Gen4 x16: the link could carry ~49 GB/s, the read
    // completions ~29.2 GB/s. Each 4096-byte packet needs 16 completions of 256 bytes.
    // (The receiver's posted writes of MPS 256 would be slower still, 24 bytes of
    // overhead each: it gets MPS 512.)
    Ptr<PcieLink> l = Link();
    Ptr<PcieLink> rx = Link();
    rx->SetAttribute("MaxPayloadSize", UintegerValue(512));
    Pair p = RunPair("write_bw", 1 << 20, l, 0, 0, 40, IbLinkRate::NDR, rx);
    const IbPerftestResult r = p.client->GetResults();
    const double ceilingGbps = l->GetDirectionRate() * 4096 / (4096 + 16 * 20) * 8 / 1e9;
    EXPECT_NEAR(r.bwAvgGbps / ceilingGbps, 1.0, 0.001)
        << r.bwAvgGbps << " Gb/s against the ceiling " << ceilingGbps;
    EXPECT_LE(r.bwPeakGbps, ceilingGbps * 1.0001);
}

TEST_F(PcieLinkTest, ASlowReceiverWriteDirectionHoldsCreditsAndSetsTheRate)
{
    // The sender reads at 256-byte completions (29.2 GB/s); the receiver writes 128-byte
    // posted writes (MPS 128: 32 of 24 bytes overhead per packet, 26.5 GB/s). The
    // receive buffer's credits come back as the writes finish, so the link slows to
    // the receiver's ceiling, losing nothing.
    Ptr<PcieLink> tx = Link();
    Ptr<PcieLink> rx = Link();
    rx->SetAttribute("MaxPayloadSize", UintegerValue(128));
    rx->SetAttribute("ReadCompletionSize", UintegerValue(128));
    Pair p = RunPair("write_bw", 1 << 20, tx, 0, 0, 40, IbLinkRate::NDR, rx);
    const IbPerftestResult r = p.client->GetResults();
    const double ceilingGbps = rx->GetDirectionRate() * 4096 / (4096 + 32 * 24) * 8 / 1e9;
    EXPECT_NEAR(r.bwAvgGbps / ceilingGbps, 1.0, 0.002)
        << r.bwAvgGbps << " Gb/s against the receiver's ceiling " << ceilingGbps;
}

TEST_F(PcieLinkTest, FastPcieLeavesTheLinkRateAlone)
{
    // HDR (200 Gb/s) on Gen5 x16 (63 GB/s): write_bw is the wire's, as without PCIe.
    Ptr<PcieLink> l = Link();
    l->SetAttribute("Generation", UintegerValue(5));
    Pair a = RunPair("write_bw", 1 << 20, nullptr, 0, 0, 40);
    const double ideal = a.client->GetResults().bwAvgGbps;
    Simulator::Destroy();
    Pair b = RunPair("write_bw", 1 << 20, l, 0, 0, 40);
    EXPECT_NEAR(b.client->GetResults().bwAvgGbps / ideal, 1.0, 0.001);
}

TEST_F(PcieLinkTest, InlineBeyondTheHcasLimitIsRefusedWithAMessage)
{
    IbFabricHelper fh;
    IbFabric f = fh.Build(IbTopologyBuilder::Chain(0, IbLinkRate::HDR, 4));
    IbHcaHelper hh;
    hh.SetHcaAttribute("MaxInlineData", UintegerValue(64));
    std::vector<Ptr<IbHca>> hcas = hh.Install(f.hosts);
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue("write_lat"));
    perf.SetAttribute("InlineSize", IntegerValue(128));
    ApplicationContainer apps = perf.Install(f.hosts.Get(0), f.hosts.Get(1), f.subnetManager);
    apps.Start(MicroSeconds(1));
    EXPECT_DEATH(Simulator::Run(), "InlineSize=128 is above the HCA's MaxInlineData of 64");
}

} // namespace

namespace
{

TEST_F(PcieLinkTest, QueuePairsSharingTheHostReadDirectionShareItEvenly)
{
    // Two write_bw pairs between the same two hosts (two QPs on each HCA) on NDR with
    // Gen4 x16 and 256-byte completions: the host's read direction is the bottleneck,
    // and the queue pairs take turns on it.
    IbHelper::ResetLidAllocation();
    IbFabricHelper fh;
    IbFabric f = fh.Build(IbTopologyBuilder::Chain(0, IbLinkRate::NDR, 4));
    IbHcaHelper hh;
    std::vector<Ptr<IbHca>> hcas = hh.Install(f.hosts);
    Ptr<PcieLink> tx = CreateObject<PcieLink>();
    Ptr<PcieLink> rx = CreateObject<PcieLink>();
    rx->SetAttribute("MaxPayloadSize", UintegerValue(512));
    hcas[0]->SetAttribute("PcieLink", PointerValue(tx));
    hcas[1]->SetAttribute("PcieLink", PointerValue(rx));
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue("write_bw"));
    perf.SetAttribute("Size", UintegerValue(1 << 20));
    perf.SetAttribute("Iterations", UintegerValue(20));
    std::vector<Ptr<IbPerftestApplication>> clients;
    for (int k = 0; k < 2; ++k)
    {
        ApplicationContainer apps = perf.Install(f.hosts.Get(0), f.hosts.Get(1), f.subnetManager);
        apps.Start(MicroSeconds(1));
        clients.push_back(DynamicCast<IbPerftestApplication>(apps.Get(0)));
    }
    Simulator::Run();
    const double ceilingGbps = tx->GetDirectionRate() * 4096 / (4096 + 16 * 20) * 8 / 1e9;
    const double a = clients[0]->GetResults().bwAvgGbps;
    const double b = clients[1]->GetResults().bwAvgGbps;
    EXPECT_NEAR(a / b, 1.0, 0.05) << a << " and " << b << " Gb/s";
    EXPECT_NEAR((a + b) / ceilingGbps, 1.0, 0.05) << a + b << " against " << ceilingGbps;
}

} // namespace

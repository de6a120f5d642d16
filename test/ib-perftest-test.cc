/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * perftest applications (IbPerftestApplication, IbPerftestHelper) on the RDMA transport:
 * bandwidth against the link rate and the wire efficiency, latencies against the values
 * derived from the link, cable, switch and HCA timing attributes, every test's report,
 * perftest's statistics on known samples, and the user errors.
 */

#include "ns3/core-module.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-perftest-application.h"
#include "ns3/ib-perftest-helper.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/network-module.h"

#include <cmath>
#include <gtest/gtest.h>
#include <sstream>
#include <vector>

using namespace ns3;

namespace
{

class IbPerftestTest : public ::testing::Test
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

/// A perftest pair on host-0 - k switches - host-1.
struct Bench
{
    IbFabric fabric;                   ///< the fabric
    std::vector<Ptr<IbHca>> hcas;      ///< HCAs of host-0 and host-1
    Ptr<IbPerftestApplication> client; ///< on host-0
    Ptr<IbPerftestApplication> server; ///< on host-1
};

/**
 * @param perf the helper, attributes set
 * @param switches switches in the chain
 * @param speed link speed
 * @param sizes sizes to sweep (empty: the Size attribute)
 * @return the bench, applications started at 1 us (not run yet)
 */
Bench
Build(const IbPerftestHelper& perf,
      uint32_t switches,
      IbLinkRate::Speed speed = IbLinkRate::EDR,
      const std::vector<uint64_t>& sizes = {})
{
    Bench b;
    IbFabricHelper fh;
    b.fabric = fh.Build(IbTopologyBuilder::Chain(switches, speed, 4));
    IbHcaHelper hh;
    b.hcas = hh.Install(b.fabric.hosts);
    ApplicationContainer apps =
        sizes.empty()
            ? perf.Install(b.fabric.hosts.Get(0), b.fabric.hosts.Get(1), b.fabric.subnetManager)
            : perf.InstallSweep(b.fabric.hosts.Get(0),
                                b.fabric.hosts.Get(1),
                                sizes,
                                b.fabric.subnetManager);
    apps.Start(MicroSeconds(1));
    b.client = DynamicCast<IbPerftestApplication>(apps.Get(0));
    b.server = DynamicCast<IbPerftestApplication>(apps.Get(1));
    return b;
}

/**
 * Serialization of a packet as a port computes it (rounded to the time resolution).
 * @param port the port
 * @param bytes wire bytes
 * @return its serialization time
 */
Time
Ser(Ptr<IbNetDevice> port, uint32_t bytes)
{
    const double steps = bytes * 8.0 * static_cast<double>(Seconds(1).GetTimeStep()) /
                         static_cast<double>(port->GetDataRate().GetBitRate());
    return TimeStep(std::llround(steps));
}

/**
 * @param b a bench
 * @return the delay of host-0's cable
 */
Time
CableDelay(const Bench& b)
{
    return DynamicCast<IbChannel>(b.fabric.HostPort(0)->GetChannel())->GetDelay();
}

/**
 * Per-switch latency of a cut-through switch: the LRH must arrive, then the forwarding
 * latency, then one more cable.
 * @param b a bench with at least one switch
 * @return the time one switch adds to a packet's one-way latency
 */
Time
PerHop(const Bench& b)
{
    Ptr<IbSwitch> sw;
    for (const Ptr<IbSwitch>& x : b.fabric.switchOf)
    {
        if (x && !sw)
        {
            sw = x;
        }
    }
    EXPECT_TRUE(sw && sw->IsCutThrough());
    const Time lrh = b.fabric.HostPort(0)->GetDataRate().CalculateBytesTxTime(IbPacket::LRH_SIZE);
    return sw->GetForwardingLatency() + CableDelay(b) + lrh;
}

/// Allowed difference to an analytic latency: the time resolution (1 ns by default).
constexpr double kResolutionUs = 0.001;

// ---------------------------------------------------------------- bandwidth

class IbPerftestBandwidthTest : public IbPerftestTest,
                                public ::testing::WithParamInterface<IbLinkRate::Speed>
{
};

TEST_P(IbPerftestBandwidthTest, WriteBwAtOneMegabyteReachesLinkRateTimesWireEfficiency)
{
    const uint64_t size = 1 << 20;
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue("write_bw"));
    perf.SetAttribute("Size", UintegerValue(size));
    perf.SetAttribute("Iterations", UintegerValue(60));
    Bench b = Build(perf, 0, GetParam());
    Simulator::Run();
    ASSERT_TRUE(b.client->IsFinished());
    const IbPerftestResult r = b.client->GetResults();
    ASSERT_TRUE(r.valid);
    // MTU 4096: 256 packets of LRH 8 + BTH 12 + 4096 payload + ICRC 4 + VCRC 2, and the
    // RETH (16) on the first packet only.
    const uint32_t mtu = b.fabric.HostPort(0)->GetIbMtu();
    ASSERT_EQ(mtu, 4096u);
    const uint64_t packets = (size + mtu - 1) / mtu;
    const double wire = packets * (8.0 + 12 + 4 + 2) + 16 + size;
    const double rate = b.fabric.HostPort(0)->GetDataRate().GetBitRate();
    const double expectedGbps = rate * size / wire / 1e9;
    // Below the wire only by the run's fixed start and end (doorbell, PCIe, the last ACK:
    // 0.05 % of the NDR run, the shortest); an extra 8 bytes per packet would be 0.2 %.
    EXPECT_NEAR(r.bwAvgGbps / expectedGbps, 1.0, 0.001)
        << "BW average " << r.bwAvgGbps << " Gb/s, link " << rate / 1e9 << " Gb/s x efficiency "
        << size / wire << " = " << expectedGbps << " Gb/s";
    EXPECT_LE(r.bwAvgGbps, expectedGbps * 1.0001); // never above the wire
    // The peak (best interval between completions) is the wire rate too, and the message
    // rate the wire's messages per second (both from the link, not from the average).
    EXPECT_LE(r.bwPeakGbps, expectedGbps * 1.0001);
    EXPECT_GE(r.bwPeakGbps, expectedGbps * 0.999);
    EXPECT_NEAR(r.msgRateMpps / (expectedGbps * 1e3 / (8.0 * size)), 1.0, 0.001);
    EXPECT_EQ(r.iterations, 60u);
    EXPECT_EQ(r.bytes, size);
}

INSTANTIATE_TEST_SUITE_P(Speeds,
                         IbPerftestBandwidthTest,
                         ::testing::Values(IbLinkRate::EDR, IbLinkRate::HDR, IbLinkRate::NDR),
                         [](const ::testing::TestParamInfo<IbLinkRate::Speed>& info) {
                             return std::string(IbLinkRate::SpeedName(info.param));
                         });

// ---------------------------------------------------------------- latency

/**
 * Run one latency test and return the client's report.
 * @param test the test
 * @param switches switches in the chain
 * @param size message size
 * @param [out] bench the bench (for its parameters)
 * @param pollInterval polling period (0: continuous)
 * @param event completions by callback
 * @return the client's result
 */
IbPerftestResult
RunLatency(const std::string& test,
           uint32_t switches,
           uint64_t size,
           Bench& bench,
           Time pollInterval = Time(0),
           bool event = false)
{
    IbHelper::ResetLidAllocation();
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue(test));
    perf.SetAttribute("Size", UintegerValue(size));
    perf.SetAttribute("Iterations", UintegerValue(200));
    perf.SetAttribute("PollInterval", TimeValue(pollInterval));
    perf.SetAttribute("CqModeEvent", BooleanValue(event));
    bench = Build(perf, switches);
    Simulator::Run();
    EXPECT_TRUE(bench.client->IsFinished());
    return bench.client->GetResults();
}

TEST_F(IbPerftestTest, WriteLatBackToBackIsTheAnalyticOneWayLatency)
{
    Bench b;
    const IbPerftestResult r = RunLatency("write_lat", 0, 2, b);
    ASSERT_TRUE(r.valid);
    Ptr<IbHca> h0 = b.hcas[0];
    Ptr<IbHca> h1 = b.hcas[1];
    Ptr<IbNetDevice> port = b.fabric.HostPort(0);
    // One way: the doorbell (and WQE fetch), the RDMA WRITE Only packet (RETH, 2 bytes
    // padded to 4) on the wire, the cable, and the PCIe write that makes the data
    // visible to the peer polling its buffer. Each side answers as soon as it sees the
    // data: the round trip is twice that, and perftest reports half of it.
    const Time write = Ser(port, IbPacket::WireSize(2, 16, false));
    const Time oneWay =
        h0->GetDoorbellLatency() + write + CableDelay(b) + h1->GetPcieWriteLatency();
    // That holds because a side's own completion (the ACK) is back before the peer's
    // answer: AckDelay + ACK < Doorbell + WRITE + PcieWrite.
    const Time ack = Ser(port, IbPacket::WireSize(0, 4, false));
    ASSERT_LT(h1->GetAckDelay() + ack,
              h0->GetDoorbellLatency() + write + h0->GetPcieWriteLatency());
    const double want = oneWay.GetSeconds() * 1e6;
    EXPECT_NEAR(r.tTypicalUs, want, kResolutionUs);
    EXPECT_NEAR(r.tMinUs, want, kResolutionUs);
    EXPECT_NEAR(r.tMaxUs, want, kResolutionUs);
    EXPECT_NEAR(r.tAvgUs, want, kResolutionUs);
    EXPECT_NEAR(r.t99Us, want, kResolutionUs);
    EXPECT_LT(r.tStdevUs, kResolutionUs);
    // The server measures the same ping-pong from its own posts.
    const IbPerftestResult s = b.server->GetResults();
    ASSERT_TRUE(s.valid);
    EXPECT_NEAR(s.tTypicalUs, want, kResolutionUs);
}

TEST_F(IbPerftestTest, SendLatReadLatAndAtomicLatFollowTheTimingAttributes)
{
    Bench b;
    // send_lat: like write_lat, seen through the receive completion; no RETH.
    IbPerftestResult r = RunLatency("send_lat", 0, 2, b);
    Ptr<IbHca> h = b.hcas[0];
    Ptr<IbNetDevice> port = b.fabric.HostPort(0);
    Time want = h->GetDoorbellLatency() + Ser(port, IbPacket::WireSize(2, 0, false)) +
                CableDelay(b) + h->GetPcieWriteLatency();
    EXPECT_NEAR(r.tTypicalUs, want.GetSeconds() * 1e6, kResolutionUs);
    Simulator::Destroy();

    // read_lat: a whole operation, not halved (perftest's rtt_factor is 1 for READ).
    r = RunLatency("read_lat", 0, 2, b);
    h = b.hcas[0];
    port = b.fabric.HostPort(0);
    want = h->GetDoorbellLatency() + Ser(port, IbPacket::WireSize(0, 16, false)) + CableDelay(b) +
           b.hcas[1]->GetResponseDelay() + Ser(port, IbPacket::WireSize(2, 4, false)) +
           CableDelay(b) + h->GetPcieWriteLatency();
    EXPECT_NEAR(r.tTypicalUs, want.GetSeconds() * 1e6, kResolutionUs);
    Simulator::Destroy();

    // atomic_lat: 8 bytes, AtomicETH (28) out, AETH + AtomicAckETH (4 + 8) back, not
    // halved either.
    r = RunLatency("atomic_lat", 0, 8, b);
    h = b.hcas[0];
    port = b.fabric.HostPort(0);
    EXPECT_EQ(r.bytes, 8u);
    want = h->GetDoorbellLatency() + Ser(port, IbPacket::WireSize(0, 28, false)) + CableDelay(b) +
           b.hcas[1]->GetResponseDelay() + Ser(port, IbPacket::WireSize(0, 12, false)) +
           CableDelay(b) + h->GetPcieWriteLatency();
    EXPECT_NEAR(r.tTypicalUs, want.GetSeconds() * 1e6, kResolutionUs);
}

TEST_F(IbPerftestTest, EachSwitchAddsForwardingLatencyCableAndLrhTime)
{
    Bench b0;
    const double lat0 = RunLatency("write_lat", 0, 2, b0).tTypicalUs;
    Simulator::Destroy();
    Bench b1;
    const double lat1 = RunLatency("write_lat", 1, 2, b1).tTypicalUs;
    const double hop = PerHop(b1).GetSeconds() * 1e6;
    Simulator::Destroy();
    Bench b3;
    const double lat3 = RunLatency("write_lat", 3, 2, b3).tTypicalUs;
    EXPECT_NEAR(PerHop(b3).GetSeconds() * 1e6, hop, 1e-12);
    EXPECT_NEAR(lat1 - lat0, hop, kResolutionUs) << "per hop " << hop << " us";
    EXPECT_NEAR(lat3 - lat0, 3 * hop, kResolutionUs) << "per hop " << hop << " us";
    Simulator::Destroy();

    // read_lat crosses every switch twice (request and response), unhalved.
    Bench r0;
    const double read0 = RunLatency("read_lat", 0, 2, r0).tTypicalUs;
    Simulator::Destroy();
    Bench r3;
    const double read3 = RunLatency("read_lat", 3, 2, r3).tTypicalUs;
    EXPECT_NEAR(read3 - read0, 6 * hop, kResolutionUs);
}

TEST_F(IbPerftestTest, PollingIntervalDelaysEachWaitByLessThanOnePeriod)
{
    Bench b;
    const double exact = RunLatency("write_lat", 0, 2, b).tTypicalUs;
    Simulator::Destroy();
    const double event = RunLatency("write_lat", 0, 2, b, Time(0), true).tTypicalUs;
    EXPECT_NEAR(event, exact, 1e-9); // a callback sees completions when a busy poll does
    Simulator::Destroy();
    const Time period = NanoSeconds(100);
    const double polled = RunLatency("write_lat", 0, 2, b, period).tTypicalUs;
    EXPECT_GE(polled, exact);
    EXPECT_LT(polled, exact + period.GetSeconds() * 1e6);
}

// ---------------------------------------------------------------- every test

class IbPerftestEveryTest : public IbPerftestTest, public ::testing::WithParamInterface<std::string>
{
};

TEST_P(IbPerftestEveryTest, RunsAndPrintsItsReport)
{
    const std::string name = GetParam();
    IbPerftestApplication::Test t;
    ASSERT_TRUE(IbPerftestApplication::ParseTest(name, t));
    const bool bw = IbPerftestApplication::IsBandwidthTest(t);
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue(name));
    perf.SetAttribute("Iterations", UintegerValue(50));
    Bench b = Build(perf, 1);
    Simulator::Run();
    ASSERT_TRUE(b.client->IsFinished());
    ASSERT_TRUE(b.server->IsFinished());
    const IbPerftestResult r = b.client->GetResults();
    ASSERT_TRUE(r.valid);
    EXPECT_EQ(r.test, name);
    EXPECT_EQ(r.bandwidth, bw);
    EXPECT_EQ(r.iterations, 50u);
    EXPECT_EQ(r.bytes, IbPerftestApplication::DefaultSize(t));
    if (bw)
    {
        // (the exact figures are checked per test above; here: moved, and never faster
        // than the link's data rate)
        const double linkGbps = b.fabric.HostPort(0)->GetDataRate().GetBitRate() / 1e9;
        EXPECT_GT(r.bwAvgGbps, 0.0);
        EXPECT_LE(r.bwPeakGbps, linkGbps);
    }
    else
    {
        EXPECT_GT(r.tMinUs, 0.0); // (exact latencies: the per-test checks above)
    }
    // The server has the report too (its own for the ping-pong tests).
    EXPECT_TRUE(b.server->GetResults().valid);
    // No packet was dropped at the HCAs.
    EXPECT_EQ(b.hcas[0]->GetUnknownDrops() + b.hcas[1]->GetUnknownDrops(), 0u);

    std::ostringstream os;
    b.client->PrintTestInfo(os);
    IbPerftestApplication::PrintHeader(os, bw);
    IbPerftestApplication::PrintResult(os, r);
    const std::string out = os.str();
    EXPECT_NE(out.find("Connection type : RC"), std::string::npos) << out;
    EXPECT_NE(out.find(bw ? " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
                            "MsgRate[Mpps]"
                          : " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
                            "    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% "
                            "percentile[usec]"),
              std::string::npos)
        << out;
    std::ostringstream row;
    row << " " << r.bytes << " ";
    EXPECT_NE(out.find(row.str()), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Tests,
                         IbPerftestEveryTest,
                         ::testing::Values("write_bw",
                                           "write_lat",
                                           "read_bw",
                                           "read_lat",
                                           "send_bw",
                                           "send_lat",
                                           "atomic_lat"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             return info.param;
                         });

TEST_F(IbPerftestTest, SweepRunsEachSizeAfterThePreviousOne)
{
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue("send_bw"));
    perf.SetAttribute("Iterations", UintegerValue(40));
    const std::vector<uint64_t> sizes = {2, 4096, 65536, 8192};
    Bench b = Build(perf, 0, IbLinkRate::HDR, sizes);
    Simulator::Run();
    ASSERT_TRUE(b.client->IsFinished());
    const std::vector<IbPerftestResult>& all = b.client->GetAllResults();
    ASSERT_EQ(all.size(), sizes.size());
    for (size_t i = 0; i < all.size(); ++i)
    {
        EXPECT_TRUE(all[i].valid);
        EXPECT_EQ(all[i].bytes, sizes[i]);
        if (i > 0)
        {
            EXPECT_GE(all[i].firstPost, all[i - 1].lastEvent);
        }
    }
    EXPECT_GT(all[2].bwAvgGbps, all[1].bwAvgGbps);
    EXPECT_EQ(b.server->GetAllResults().size(), sizes.size());
    // perftest -a
    const std::vector<uint64_t> a = IbPerftestHelper::AllSizes();
    ASSERT_EQ(a.size(), 23u);
    EXPECT_EQ(a.front(), 2u);
    EXPECT_EQ(a.back(), 1u << 23);
}

// ---------------------------------------------------------------- perftest's statistics

TEST(IbPerftestReport, LatencyStatisticsFollowPerftest)
{
    // 12 iterations: 11 samples 1..11 us (shuffled); the 2 largest are dropped (m = 9).
    const double d[11] = {7, 2, 11, 1, 9, 4, 10, 3, 6, 8, 5};
    std::vector<Time> t(1, MicroSeconds(100));
    for (double x : d)
    {
        t.push_back(t.back() + MicroSeconds(x));
    }
    IbPerftestResult r = IbPerftestApplication::ComputeLatency(2, t, false);
    ASSERT_TRUE(r.valid);
    EXPECT_DOUBLE_EQ(r.tMinUs, 1);
    EXPECT_DOUBLE_EQ(r.tMaxUs, 10);    // sorted[m]: the second largest sample
    EXPECT_DOUBLE_EQ(r.tTypicalUs, 5); // m odd: sorted[m / 2]
    EXPECT_DOUBLE_EQ(r.tAvgUs, 5);     // mean of 1..9
    EXPECT_NEAR(r.tStdevUs, std::sqrt(60.0 / 9), 1e-12);
    EXPECT_DOUBLE_EQ(r.t99Us, 10); // sorted[ceil(9 * 0.99)] = sorted[9]
    EXPECT_DOUBLE_EQ(r.t999Us, 10);
    r = IbPerftestApplication::ComputeLatency(2, t, true); // ping-pong: half
    EXPECT_DOUBLE_EQ(r.tTypicalUs, 2.5);
    // 13 iterations: 12 samples, m = 10 (even): the mean of the two middle ones.
    t.push_back(t.back() + MicroSeconds(12));
    r = IbPerftestApplication::ComputeLatency(2, t, false);
    EXPECT_DOUBLE_EQ(r.tTypicalUs, 5.5);
    EXPECT_DOUBLE_EQ(r.tMaxUs, 11);
}

TEST(IbPerftestReport, BandwidthAverageAndPeakFollowPerftest)
{
    // 4 WRs posted at 0, one signaled WR in 2: completions of WR 1 at 10 us, WR 3 at 12 us.
    const std::vector<Time> posted(4, Time(0));
    const std::vector<Time> completed = {Time(0), MicroSeconds(10), Time(0), MicroSeconds(12)};
    const uint64_t bytes = 1000;
    IbPerftestResult r = IbPerftestApplication::ComputeBandwidth(bytes, posted, completed, 2, true);
    ASSERT_TRUE(r.valid);
    EXPECT_NEAR(r.bwAvgGbps, 4 * bytes * 8 / 12e-6 / 1e9, 1e-9);
    EXPECT_NEAR(r.msgRateMpps, 4 / 12e-6 / 1e6, 1e-9);
    // Peak: min over i <= j (j signaled) of (tcompleted[j] - tposted[i]) / (j - i + 1):
    // i = 0, j = 3 gives 3 us per message.
    EXPECT_NEAR(r.bwPeakGbps, bytes * 8 / 3e-6 / 1e9, 1e-9);
    r = IbPerftestApplication::ComputeBandwidth(bytes, posted, completed, 2, false);
    EXPECT_EQ(r.bwPeakGbps, 0.0);
}

// ---------------------------------------------------------------- user errors

TEST(IbPerftestUserErrors, BadValuesAreRefusedWithTheValidOnes)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        CreateObject<IbPerftestApplication>()->SetAttribute("Test", StringValue("write_bandwidth")),
        "Test='write_bandwidth' is not a perftest test; use one of write_bw, write_lat, "
        "read_bw, read_lat, send_bw, send_lat, atomic_lat");
    EXPECT_DEATH(CreateObject<IbPerftestApplication>()->SetAttribute("Role", StringValue("peer")),
                 "Role='peer'; use client or server");
    for (const uint64_t size : {uint64_t{0}, uint64_t{1} << 32})
    {
        EXPECT_DEATH(CreateObject<IbPerftestApplication>()->SetSizes({64, size}),
                     "SetSizes: size " + std::to_string(size) +
                         " is out of range; give 1 to 2147483648 bytes");
    }
    EXPECT_DEATH(
        {
            Ptr<IbPerftestApplication> a = CreateObject<IbPerftestApplication>();
            a->SetAttribute("Iterations", UintegerValue(3));
            a->GetIterations();
        },
        "Iterations=3 is too small");
    // Valid names, with perftest's program names accepted too.
    IbPerftestApplication::Test t;
    EXPECT_TRUE(IbPerftestApplication::ParseTest("ib_read_bw", t));
    EXPECT_EQ(t, IbPerftestApplication::READ_BW);
    std::vector<uint64_t> sizes;
    EXPECT_TRUE(IbPerftestHelper::ParseSizes("2, 64,4K,1M", sizes));
    EXPECT_EQ(sizes, (std::vector<uint64_t>{2, 64, 4096, 1 << 20}));
    std::string error;
    EXPECT_FALSE(IbPerftestHelper::ParseSizes("2,x", sizes, &error));
    EXPECT_NE(error.find("size 'x'"), std::string::npos) << error;
    // 2^54 K wraps to 0 when multiplied: refused as too large, not run as 0 bytes.
    EXPECT_FALSE(IbPerftestHelper::ParseSizes("18014398509481984K", sizes, &error));
    EXPECT_NE(error.find("from 1 to 2^31"), std::string::npos) << error;
    EXPECT_TRUE(IbPerftestHelper::ParseSizes("2G", sizes));
    EXPECT_EQ(sizes, (std::vector<uint64_t>{1ULL << 31}));
}

TEST(IbPerftestUserErrors, InstallWithoutHcaNamesIbHcaHelper)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            IbHelper::ResetLidAllocation();
            IbFabricHelper fh;
            IbFabric f = fh.Build(IbTopologyBuilder::Chain(0));
            IbPerftestHelper().Install(f.hosts.Get(0), f.hosts.Get(1), f.subnetManager);
        },
        "has no IbHca; install one first with IbHcaHelper::Install");
}

} // namespace

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The collective library's host costs (CollectiveCommunicator SendOverhead, RecvOverhead,
 * ReduceBandwidth, HalfReduceBandwidth, CopyBandwidth, LaunchLatency) over a transport of
 * fixed latency: each adds exactly its value where the schedule says, and a rank's host
 * does one thing at a time.
 */

#include "ns3/collective-algorithm.h"
#include "ns3/collective-communicator.h"
#include "ns3/collective-transport.h"
#include "ns3/collective-tuned-algorithm.h"
#include "ns3/core-module.h"
#include "ns3/data-rate.h"

#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

/// Every message arrives (and is reported sent) a fixed latency after Send.
class FixedLatencyTransport : public CollectiveTransport
{
  public:
    /**
     * @param n ranks
     * @param latency per message
     */
    FixedLatencyTransport(uint32_t n, Time latency)
        : m_n(n),
          m_latency(latency)
    {
    }

    uint32_t GetNRanks() const override
    {
        return m_n;
    }

    bool IsDataMode() const override
    {
        return false;
    }

    void Send(uint32_t src,
              uint32_t dst,
              uint32_t tag,
              uint64_t bytes,
              const uint8_t* data,
              Callback<void> sent) override
    {
        CountSent(bytes);
        Simulator::Schedule(m_latency, [this, src, dst, tag, bytes, sent]() {
            Deliver(src, dst, tag, bytes, nullptr);
            if (!sent.IsNull())
            {
                sent();
            }
        });
    }

  private:
    uint32_t m_n;   ///< ranks
    Time m_latency; ///< per message
};

class CollectiveHostCostTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// A message's latency on the test transport.
const Time kLatency = MicroSeconds(2);

/**
 * @param algorithm short name
 * @param spec the operation
 * @param n ranks
 * @param attrs communicator attributes (name, value)
 * @return the operation's duration
 */
Time
Duration(const std::string& algorithm,
         const CollectiveOpSpec& spec,
         uint32_t n,
         const std::vector<std::pair<std::string, std::string>>& attrs)
{
    Ptr<CollectiveCommunicator> comm = CreateObject<CollectiveCommunicator>();
    for (const auto& [name, value] : attrs)
    {
        comm->SetAttribute(name, StringValue(value));
    }
    comm->SetTransport(Create<FixedLatencyTransport>(n, kLatency));
    comm->SetAlgorithm(CollectiveAlgorithm::CreateByName(algorithm));
    const uint32_t op = comm->Start(spec, nullptr, CollectiveCommunicator::DoneCallback());
    Simulator::Run();
    const Time d = comm->GetDuration(op);
    Simulator::Destroy();
    return d;
}

/// @return an allreduce of @p count elements of @p type
CollectiveOpSpec
AllReduce(uint64_t count, CollectiveDataType type = CollectiveDataType::FLOAT32)
{
    CollectiveOpSpec s;
    s.kind = CollectiveKind::ALLREDUCE;
    s.count = count;
    s.type = type;
    return s;
}

TEST_F(CollectiveHostCostTest, WithoutCostsTheLibraryTakesNoTime)
{
    // Recursive doubling on 4 ranks: two exchanges, each one message latency.
    EXPECT_EQ(Duration("rd", AllReduce(1024), 4, {}), 2 * kLatency);
}

TEST_F(CollectiveHostCostTest, EachCostAddsExactlyItsValuePerStep)
{
    // Recursive doubling on 4 ranks: launch, then two steps of (post, wire, handle,
    // reduce 4096 bytes); each step's send waits for the previous step's reduction.
    const CollectiveOpSpec s = AllReduce(1024);
    const Time base = 2 * kLatency;
    EXPECT_EQ(Duration("rd", s, 4, {{"LaunchLatency", "5us"}}), base + MicroSeconds(5));
    EXPECT_EQ(Duration("rd", s, 4, {{"SendOverhead", "300ns"}}), base + NanoSeconds(600));
    EXPECT_EQ(Duration("rd", s, 4, {{"RecvOverhead", "400ns"}}), base + NanoSeconds(800));
    // 4096 bytes at 8 Gb/s (1 GB/s) take 4.096 us.
    EXPECT_EQ(Duration("rd", s, 4, {{"ReduceBandwidth", "8Gbps"}}), base + NanoSeconds(8192));
    EXPECT_EQ(Duration("rd",
                       s,
                       4,
                       {{"LaunchLatency", "5us"},
                        {"SendOverhead", "300ns"},
                        {"RecvOverhead", "400ns"},
                        {"ReduceBandwidth", "8Gbps"}}),
              base + MicroSeconds(5) + 2 * (NanoSeconds(300 + 400 + 4096)));
    // A copy (allgather's receives) costs CopyBandwidth, not ReduceBandwidth.
    CollectiveOpSpec g;
    g.kind = CollectiveKind::ALLGATHER;
    g.count = 1024;
    g.type = CollectiveDataType::FLOAT32;
    EXPECT_EQ(Duration("rd", g, 4, {{"ReduceBandwidth", "8Gbps"}}), Duration("rd", g, 4, {}));
    // (Allgather is the ring's for every algorithm but hier: three steps of one 4096-byte
    // segment, each forwarded after its copy.)
    EXPECT_EQ(Duration("rd", g, 4, {{"CopyBandwidth", "8Gbps"}}),
              3 * (kLatency + NanoSeconds(4096)));
}

TEST_F(CollectiveHostCostTest, HalfPrecisionUsesItsOwnReductionRate)
{
    const CollectiveOpSpec h = AllReduce(2048, CollectiveDataType::BFLOAT16); // 4096 bytes
    const Time base = 2 * kLatency;
    EXPECT_EQ(Duration("rd", h, 4, {{"ReduceBandwidth", "8Gbps"}}), base + NanoSeconds(8192));
    EXPECT_EQ(
        Duration("rd", h, 4, {{"ReduceBandwidth", "8Gbps"}, {"HalfReduceBandwidth", "4Gbps"}}),
        base + NanoSeconds(16384));
    // Full-precision types ignore HalfReduceBandwidth.
    EXPECT_EQ(Duration("rd",
                       AllReduce(1024),
                       4,
                       {{"ReduceBandwidth", "8Gbps"}, {"HalfReduceBandwidth", "4Gbps"}}),
              base + NanoSeconds(8192));
}

TEST_F(CollectiveHostCostTest, ARanksHostPostsItsMessagesOneAfterAnother)
{
    // Pairwise all-to-all on 4 ranks: three independent sends per rank, posted at S, 2S
    // and 3S; the last arrives L later. The receives cost nothing here.
    CollectiveOpSpec a;
    a.kind = CollectiveKind::ALLTOALL;
    a.count = 256;
    a.type = CollectiveDataType::FLOAT32;
    EXPECT_EQ(Duration("ring", a, 4, {{"SendOverhead", "1us"}}), MicroSeconds(3) + kLatency);
    // With RecvOverhead R as well, the receives that arrive (at S + L, 2S + L, ...) queue
    // on the same host behind the posts: R = 3 us is longer than a post, so the three
    // receives end at S + L + 3R.
    EXPECT_EQ(Duration("ring", a, 4, {{"SendOverhead", "1us"}, {"RecvOverhead", "3us"}}),
              MicroSeconds(1) + kLatency + MicroSeconds(9));
}

} // namespace

namespace
{

TEST_F(CollectiveHostCostTest, TheTunedAlgorithmChoosesBySizeAsMpichDoes)
{
    Ptr<CollectiveTunedAlgorithm> t = CreateObject<CollectiveTunedAlgorithm>();
    EXPECT_EQ(t->Choose(AllReduce(511))->GetName(), "rd"); // 2044 bytes
    EXPECT_EQ(t->Choose(AllReduce(512))->GetName(), "hd"); // 2048 bytes
    CollectiveOpSpec g = AllReduce(1);
    g.kind = CollectiveKind::ALLGATHER;
    EXPECT_EQ(t->Choose(g)->GetName(), "ring");
    t->SetAttribute("AllReduce", StringValue("rd:1024,hd:65536,ring"));
    EXPECT_EQ(t->Choose(AllReduce(200))->GetName(), "rd");
    EXPECT_EQ(t->Choose(AllReduce(1000))->GetName(), "hd");
    EXPECT_EQ(t->Choose(AllReduce(16384))->GetName(), "ring");
    // What the chosen algorithm builds is what runs: 4 ranks, recursive doubling in 2
    // message latencies below 2 KiB, halving-doubling in 4 from 2 KiB.
    EXPECT_EQ(Duration("tuned", AllReduce(256), 4, {}), 2 * kLatency);
    EXPECT_EQ(Duration("tuned", AllReduce(2048), 4, {}), 4 * kLatency);
}

TEST_F(CollectiveHostCostTest, ABadRuleIsRefusedNamingTheAttributeAndTheFix)
{
    Ptr<CollectiveTunedAlgorithm> t = CreateObject<CollectiveTunedAlgorithm>();
    EXPECT_DEATH(t->SetAttribute("AllReduce", StringValue("rd:2048")),
                 "AllReduce=\"rd:2048\": the last entry must be a name alone");
    EXPECT_DEATH(t->SetAttribute("AllReduce", StringValue("rd,hd")),
                 "only the last entry may be a name alone");
    EXPECT_DEATH(t->SetAttribute("AllReduce", StringValue("foo:10,hd")),
                 "unknown algorithm 'foo'; use one of");
    EXPECT_DEATH(t->SetAttribute("Other", StringValue("rd:4k,hd")), "'4k' is not a byte count");
    EXPECT_DEATH(t->SetAttribute("AllGather", StringValue("rd:4096,hd:1024,ring")),
                 "the byte thresholds must increase");
}

} // namespace

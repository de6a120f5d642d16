/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Collective library tests: every allreduce algorithm (ring, tree, halving-doubling), every
 * reduction operator and element type in data mode against a reference computed here
 * (integers exactly, floats within a bound derived from the number of roundings), on 4, 8
 * and non-power-of-two host counts; the other collectives; TCP over point-to-point links
 * and RDMA over IB give identical results; communicators with operations in flight at
 * once; ring allreduce time on a non-blocking fat tree against the analytic model.
 */

#include "collective-test-util.h"

#include "ns3/collective-algorithm.h"
#include "ns3/collective-communicator.h"
#include "ns3/collective-double-tree-algorithm.h"
#include "ns3/collective-helper.h"
#include "ns3/collective-ib-transport.h"
#include "ns3/collective-reduction.h"
#include "ns3/collective-tcp-transport.h"
#include "ns3/core-module.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/internet-module.h"
#include "ns3/ipoib-helper.h"
#include "ns3/network-module.h"
#include "ns3/queue-disc.h"
#include "ns3/traffic-control-layer.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace ns3;
using namespace ns3::ibtest;

namespace
{

class CollectiveTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        IbHelper::ResetLidAllocation();
        RngSeedManager::SetSeed(5);
        RngSeedManager::SetRun(1);
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

} // namespace

TEST_F(CollectiveTest, TwoCommunicatorsCannotShareATransport)
{
    // Both number their operations from 1: on one transport they would take each other's
    // messages. The second is refused.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    Ptr<CollectiveIbTransport> t = CreateObject<CollectiveIbTransport>();
    Ptr<CollectiveCommunicator> first = CreateObject<CollectiveCommunicator>();
    first->SetTransport(t);
    Ptr<CollectiveCommunicator> second = CreateObject<CollectiveCommunicator>();
    EXPECT_DEATH(second->SetTransport(t),
                 "CollectiveTransport: this transport already serves a communicator");
}

TEST_F(CollectiveTest, HalfAndBfloatConversionsRoundToNearestEven)
{
    EXPECT_EQ(CollectiveReduction::FloatToHalf(1.0f), 0x3C00);
    EXPECT_EQ(CollectiveReduction::FloatToHalf(-2.0f), 0xC000);
    EXPECT_EQ(CollectiveReduction::FloatToHalf(65504.0f), 0x7BFF);
    EXPECT_EQ(CollectiveReduction::FloatToHalf(65520.0f), 0x7C00); // rounds to infinity
    EXPECT_EQ(CollectiveReduction::FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);
    EXPECT_EQ(CollectiveReduction::FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00); // tie
    EXPECT_EQ(CollectiveReduction::FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
    for (uint32_t h = 0; h < 0x7C00; ++h)
    {
        ASSERT_EQ(CollectiveReduction::FloatToHalf(CollectiveReduction::HalfToFloat(h)), h);
    }
    EXPECT_EQ(CollectiveReduction::FloatToBf16(1.0f), 0x3F80);
    EXPECT_EQ(CollectiveReduction::FloatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80); // tie
    EXPECT_EQ(CollectiveReduction::FloatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
    EXPECT_EQ(CollectiveReduction::Bf16ToFloat(0x4049), 3.140625f);
    EXPECT_FALSE(CollectiveReduction::IsValid(CollectiveDataType::FLOAT32, CollectiveRedOp::BXOR));
    EXPECT_TRUE(CollectiveReduction::IsValid(CollectiveDataType::INT8, CollectiveRedOp::BXOR));
}

TEST_F(CollectiveTest, BitwiseOperatorOnFloatsIsRefused)
{
    uint8_t a[4] = {};
    uint8_t b[4] = {};
    EXPECT_DEATH(
        CollectiveReduction::Reduce(CollectiveDataType::FLOAT32, CollectiveRedOp::BAND, a, b, 1),
        "not defined on type float");
}

TEST_F(CollectiveTest, MinAndMaxOfSignedZerosDoNotDependOnTheOrder)
{
    // -0 and +0 compare equal; std::min/max return the first operand. Recursive doubling
    // combines (a, b) on one rank and (b, a) on its partner: both must end with the same
    // bits. MIN gives -0 and MAX +0 (before, each gave its first operand).
    for (CollectiveRedOp op : {CollectiveRedOp::MIN, CollectiveRedOp::MAX})
    {
        float dst[2] = {0.0F, -0.0F};
        const float src[2] = {-0.0F, 0.0F};
        CollectiveReduction::Reduce(CollectiveDataType::FLOAT32,
                                    op,
                                    reinterpret_cast<uint8_t*>(dst),
                                    reinterpret_cast<const uint8_t*>(src),
                                    2);
        const bool negative = op == CollectiveRedOp::MIN;
        EXPECT_EQ(std::signbit(dst[0]), negative) << CollectiveReduction::OpName(op);
        EXPECT_EQ(std::signbit(dst[1]), negative) << CollectiveReduction::OpName(op);
        double d[2] = {0.0, -0.0};
        const double e[2] = {-0.0, 0.0};
        CollectiveReduction::Reduce(CollectiveDataType::FLOAT64,
                                    op,
                                    reinterpret_cast<uint8_t*>(d),
                                    reinterpret_cast<const uint8_t*>(e),
                                    2);
        EXPECT_EQ(std::signbit(d[0]), negative);
        EXPECT_EQ(std::signbit(d[1]), negative);
    }
    // INT16 PROD wraps like the hardware, computed without int overflow (65533 * 65533).
    int16_t a[1] = {-3};
    const int16_t b[1] = {-3};
    CollectiveReduction::Reduce(CollectiveDataType::INT16,
                                CollectiveRedOp::PROD,
                                reinterpret_cast<uint8_t*>(a),
                                reinterpret_cast<const uint8_t*>(b),
                                1);
    EXPECT_EQ(a[0], 9);
}

TEST_F(CollectiveTest, MinAndMaxGiveNaNWhicheverOperandHoldsIt)
{
    // std::max(1, NaN) is 1 and std::max(NaN, 1) is NaN: the result would depend on the
    // order contributions are combined in (the algorithm, the rank that reduces an element,
    // the arrival order at a SHARP node). Any NaN gives NaN.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (CollectiveRedOp op : {CollectiveRedOp::MIN, CollectiveRedOp::MAX})
    {
        float dst[3] = {1.0F, nan, nan};
        const float src[3] = {nan, 1.0F, nan};
        CollectiveReduction::Reduce(CollectiveDataType::FLOAT32,
                                    op,
                                    reinterpret_cast<uint8_t*>(dst),
                                    reinterpret_cast<const uint8_t*>(src),
                                    3);
        for (float v : dst)
        {
            EXPECT_TRUE(std::isnan(v)) << CollectiveReduction::OpName(op);
        }
        double d[2] = {2.0, std::numeric_limits<double>::quiet_NaN()};
        const double e[2] = {std::numeric_limits<double>::quiet_NaN(), 3.0};
        CollectiveReduction::Reduce(CollectiveDataType::FLOAT64,
                                    op,
                                    reinterpret_cast<uint8_t*>(d),
                                    reinterpret_cast<const uint8_t*>(e),
                                    2);
        EXPECT_TRUE(std::isnan(d[0]) && std::isnan(d[1]));
        uint16_t h[2] = {CollectiveReduction::FloatToHalf(1.0F),
                         CollectiveReduction::FloatToHalf(nan)};
        const uint16_t g[2] = {CollectiveReduction::FloatToHalf(nan),
                               CollectiveReduction::FloatToHalf(1.0F)};
        CollectiveReduction::Reduce(CollectiveDataType::FLOAT16,
                                    op,
                                    reinterpret_cast<uint8_t*>(h),
                                    reinterpret_cast<const uint8_t*>(g),
                                    2);
        EXPECT_TRUE(std::isnan(CollectiveReduction::HalfToFloat(h[0])));
        EXPECT_TRUE(std::isnan(CollectiveReduction::HalfToFloat(h[1])));
    }
    // Without NaN nothing changes.
    float x[2] = {1.0F, 5.0F};
    const float y[2] = {2.0F, -1.0F};
    CollectiveReduction::Reduce(CollectiveDataType::FLOAT32,
                                CollectiveRedOp::MAX,
                                reinterpret_cast<uint8_t*>(x),
                                reinterpret_cast<const uint8_t*>(y),
                                2);
    EXPECT_EQ(x[0], 2.0F);
    EXPECT_EQ(x[1], 5.0F);
}

TEST_F(CollectiveTest, SumAndProdOfNaNsGiveTheSameBitsInEitherOrder)
{
    // Two NaNs with different payloads and signs: x86 keeps the first operand's, so a + b
    // and b + a differed in their bits (recursive doubling computes both, one per rank).
    uint32_t bitsA = 0x7FC00001u; // quiet NaN, payload 1
    uint32_t bitsB = 0xFFC00002u; // negative quiet NaN, payload 2
    float a;
    float b;
    std::memcpy(&a, &bitsA, 4);
    std::memcpy(&b, &bitsB, 4);
    for (CollectiveRedOp op : {CollectiveRedOp::SUM, CollectiveRedOp::PROD})
    {
        float ab = a;
        float ba = b;
        CollectiveReduction::Reduce(CollectiveDataType::FLOAT32,
                                    op,
                                    reinterpret_cast<uint8_t*>(&ab),
                                    reinterpret_cast<const uint8_t*>(&b),
                                    1);
        CollectiveReduction::Reduce(CollectiveDataType::FLOAT32,
                                    op,
                                    reinterpret_cast<uint8_t*>(&ba),
                                    reinterpret_cast<const uint8_t*>(&a),
                                    1);
        EXPECT_EQ(std::memcmp(&ab, &ba, 4), 0) << CollectiveReduction::OpName(op);
        EXPECT_TRUE(std::isnan(ab));
    }
}

/// Every algorithm, operator and type, on 2 to 8 hosts over IB in data mode (powers of two
/// and not: 3 and 7 give halving-doubling and recursive doubling 1 and 3 extra ranks).
class CollectiveAlgoTest : public CollectiveTest,
                           public ::testing::WithParamInterface<std::tuple<std::string, uint32_t>>
{
};

TEST_P(CollectiveAlgoTest, AllReduceMatchesReferenceForEveryOpAndType)
{
    const auto [algo, hosts] = GetParam();
    IbSetup s;
    BuildIb(s, hosts);
    s.helper.SetAlgorithm(algo);
    // small chunks and an odd count: uneven segments, many chunks per step
    s.helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(1000));
    s.helper.SetIbTransportAttribute("SlotSize", UintegerValue(768));
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    AllOpsAllTypes(comm, 1237, algo + " n=" + std::to_string(hosts));
    // tiny counts: fewer elements than ranks
    CollectiveOpSpec spec;
    spec.type = CollectiveDataType::INT32;
    for (uint64_t count : {1, 3})
    {
        spec.count = count;
        const Buffers in = MakeInputs(spec.type, spec.op, hosts, count * 4, 99);
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
        std::vector<const uint8_t*> res;
        for (const auto& b : out)
        {
            res.push_back(b.data());
        }
        EXPECT_EQ(CheckReduce(spec.type, spec.op, in, res, 0, count * 4, "tiny"), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsAndSizes,
                         CollectiveAlgoTest,
                         ::testing::Combine(::testing::Values("ring", "tree", "hd", "rd", "dbtree"),
                                            ::testing::Values(2u, 3u, 4u, 5u, 6u, 7u, 8u)),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_" +
                                    std::to_string(std::get<1>(info.param)) + "hosts";
                         });

TEST_F(CollectiveTest, AnOperationThatEndsAtOnceDoesNotStopTheNextRun)
{
    // No elements: the allreduce finishes inside Start, and its done event waits in the
    // queue. The next Run must still run its own operation to the end.
    IbSetup s;
    BuildIb(s, 4);
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    CollectiveOpSpec empty;
    empty.kind = CollectiveKind::ALLREDUCE;
    empty.count = 0;
    empty.type = CollectiveDataType::FLOAT32;
    Buffers none(4);
    EXPECT_EQ(CollectiveHelper::Run(comm, empty, &none), Time(0));
    CollectiveOpSpec spec = empty;
    spec.count = 4096;
    const Buffers in = MakeInputs(spec.type, spec.op, 4, spec.count * 4, 3);
    Buffers out = in;
    ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
    for (uint32_t r = 0; r < 4; ++r)
    {
        std::vector<const uint8_t*> res(4, out[r].data());
        EXPECT_EQ(CheckReduce(spec.type, spec.op, in, res, 0, spec.count * 4, "after empty"), 0u);
    }
}

TEST_F(CollectiveTest, FinishedOperationsBoundsWhatTheCommunicatorRemembers)
{
    // A training job starts one operation per bucket per iteration: a communicator that
    // kept every finished one grew without bound. With FinishedOperations=2 the third
    // operation's end forgets the first; IsDone still says it finished.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbSetup s;
    BuildIb(s, 4, false);
    s.helper.SetCommunicatorAttribute("FinishedOperations", UintegerValue(2));
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::ALLREDUCE;
    spec.count = 1024;
    spec.type = CollectiveDataType::FLOAT32;
    std::vector<Time> durations;
    for (uint32_t i = 0; i < 3; ++i)
    {
        durations.push_back(CollectiveHelper::Run(comm, spec, nullptr));
        ASSERT_NE(durations.back(), Time::Max());
    }
    // ids are 1, 2, 3; the ring on 4 ranks sends 2 x 3 messages per rank
    EXPECT_TRUE(comm->IsDone(1));
    EXPECT_TRUE(comm->IsDone(3));
    EXPECT_FALSE(comm->IsDone(4)); // never started
    EXPECT_EQ(comm->GetDuration(2), durations[1]);
    EXPECT_EQ(comm->GetDuration(3), durations[2]);
    EXPECT_EQ(comm->GetMessages(3), 4u * 6u);
    EXPECT_EQ(comm->GetRankFinishTime(4, 0), Time::Max());
    EXPECT_DEATH(comm->GetMessages(1),
                 "GetMessages: operation 1 finished and was forgotten \\(the communicator "
                 "remembers the last 2 finished operations\\)");
    EXPECT_DEATH(comm->GetRankFinishTime(1, 0), "GetRankFinishTime: operation 1 finished and was");
    EXPECT_DEATH(comm->GetDuration(1), "GetDuration: operation 1 finished and was forgotten");
    // Operations that finish at once (one rank: inside Start) are still there when their
    // done callbacks run, however small the history.
    Ptr<CollectiveCommunicator> one = s.helper.InstallIb(s.fabric, {1});
    one->SetAttribute("FinishedOperations", UintegerValue(1));
    std::vector<Time> read;
    CollectiveCommunicator* raw = PeekPointer(one); // (a Ptr in its own callback: a cycle)
    for (uint32_t i = 0; i < 3; ++i)
    {
        one->Start(spec,
                   nullptr,
                   CollectiveCommunicator::DoneCallback(
                       [&read, raw](uint32_t id, Time) { read.push_back(raw->GetDuration(id)); }));
    }
    Simulator::Run();
    EXPECT_EQ(read, std::vector<Time>(3, Time(0)));
}

TEST_F(CollectiveTest, ADroppedCommunicatorGivesItsQueuePairsAndRegionsBack)
{
    // The HCAs kept the queue pairs and the data-mode regions (2 x 64 KiB x 16 per
    // connected pair and direction) of every communicator ever installed. Dropped (or
    // disposed of), a communicator now destroys them; another one runs on the same hosts.
    IbSetup s;
    BuildIb(s, 4);
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::ALLREDUCE;
    spec.count = 1024;
    spec.type = CollectiveDataType::FLOAT32;
    const Buffers in = MakeInputs(spec.type, spec.op, 4, 4096, 3);
    std::vector<std::pair<Ptr<IbHca>, uint32_t>> qps;
    Ptr<IbHca> hca0;
    uint32_t probe = 0;
    {
        Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
        hca0 = s.fabric.hosts.Get(0)->GetObject<IbHca>();
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
        Ptr<CollectiveIbTransport> t = DynamicCast<CollectiveIbTransport>(comm->GetTransport());
        ASSERT_TRUE(t);
        for (uint32_t a = 0; a < 4; ++a)
        {
            for (uint32_t b = 0; b < 4; ++b)
            {
                if (Ptr<IbQueuePair> qp = t->GetQueuePair(a, b))
                {
                    qps.emplace_back(s.fabric.hosts.Get(a)->GetObject<IbHca>(), qp->GetQpNum());
                }
            }
        }
        probe = hca0->RegisterMemory(64, IB_ACCESS_LOCAL_WRITE)->GetLkey() >> 8;
        ASSERT_EQ(qps.size(), t->GetNQueuePairs());
        ASSERT_GE(qps.size(), 8u); // the ring's neighbours, both ways
        for (const auto& [hca, qpn] : qps)
        {
            EXPECT_TRUE(hca->GetQp(qpn));
        }
    }
    for (const auto& [hca, qpn] : qps)
    {
        EXPECT_FALSE(hca->GetQp(qpn)) << "QP " << qpn;
    }
    // Its regions were deregistered: a new region on host 0 takes one of their indices,
    // below the index of the probe registered after them (and still registered).
    EXPECT_LT(hca0->RegisterMemory(64, IB_ACCESS_LOCAL_WRITE)->GetLkey() >> 8, probe);
    Ptr<CollectiveCommunicator> again = s.helper.InstallIb(s.fabric);
    Buffers out = in;
    ASSERT_NE(CollectiveHelper::Run(again, spec, &out), Time::Max());
    for (uint32_t r = 0; r < 4; ++r)
    {
        std::vector<const uint8_t*> res(4, out[r].data());
        EXPECT_EQ(CheckReduce(spec.type, spec.op, in, res, 0, 4096, "again"), 0u);
    }
    // IPoIB on the same hosts finds its group QPN past the destroyed numbers (a first
    // version looked for the first unused number, found a destroyed one and aborted).
    NetDeviceContainer devs = IpoibHelper().Install(s.fabric);
    ASSERT_EQ(devs.GetN(), 4u);
}

TEST_F(CollectiveTest, StartChecksTheRootAndOnlyAReductionsOperator)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // A one-rank communicator builds no program, where the root used to be checked: a
    // broadcast from rank 7 of 1 ran.
    IbSetup s;
    BuildIb(s, 4);
    Ptr<CollectiveCommunicator> one = s.helper.InstallIb(s.fabric, {2});
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::BROADCAST;
    spec.count = 16;
    spec.type = CollectiveDataType::FLOAT32;
    spec.root = 7;
    Buffers buf(1, std::vector<uint8_t>(64));
    EXPECT_DEATH(CollectiveHelper::Run(one, spec, &buf),
                 "broadcast root 7 out of range: the communicator has 1 ranks \\(0\\.\\.0\\)");
    spec.kind = CollectiveKind::REDUCE;
    EXPECT_DEATH(CollectiveHelper::Run(one, spec, &buf), "reduce root 7 out of range");
    // An operator no element is reduced with is not checked (an allgather of floats with
    // BAND left in the spec used to be refused); a reduction with it still is.
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    CollectiveOpSpec gather;
    gather.kind = CollectiveKind::ALLGATHER;
    gather.count = 8;
    gather.type = CollectiveDataType::FLOAT32;
    gather.op = CollectiveRedOp::BAND;
    const Buffers in = MakeInputs(gather.type, CollectiveRedOp::SUM, 4, 4 * 8 * 4, 3);
    Buffers out = in;
    ASSERT_NE(CollectiveHelper::Run(comm, gather, &out), Time::Max());
    for (uint32_t r = 0; r < 4; ++r)
    {
        for (uint32_t q = 0; q < 4; ++q)
        {
            EXPECT_TRUE(std::equal(in[q].begin() + q * 32,
                                   in[q].begin() + (q + 1) * 32,
                                   out[r].begin() + q * 32))
                << "rank " << r << " segment " << q;
        }
    }
    gather.kind = CollectiveKind::REDUCE_SCATTER;
    EXPECT_DEATH(CollectiveHelper::Run(comm, gather, &out),
                 "reducescatter with reduction operator band, which is not defined on float");
    // Buffer errors name the rank and the rule.
    gather.kind = CollectiveKind::ALLGATHER;
    out[2].resize(100);
    EXPECT_DEATH(CollectiveHelper::Run(comm, gather, &out),
                 "allgather of 8 float elements: rank 2's buffer has 100 bytes, 128 needed "
                 "\\(ranks x count x element size\\)");
    out.pop_back();
    EXPECT_DEATH(CollectiveHelper::Run(comm, gather, &out),
                 "3 buffers for 4 ranks: pass one buffer per rank");
}

// NCCL-style channels: the ring cuts each operation into Channels parts on separate
// message streams, which the IB transport carries over QueuePairsPerPeer queue pairs
// (stream k on queue pair k mod that); every operator, reduce-scatter and allgather
// still give the reference results, and the queue pairs are the ring's neighbour pairs
// times the lanes.
TEST_F(CollectiveTest, RingChannelsRunOverTheirOwnQueuePairsAndStillReduce)
{
    for (const auto& [channels, lanes] : {std::pair<uint32_t, uint32_t>{4, 4}, {3, 2}})
    {
        IbSetup s;
        BuildIb(s, 5);
        s.helper.SetAlgorithm("ring");
        s.helper.SetAlgorithmAttribute("Channels", UintegerValue(channels));
        s.helper.SetIbTransportAttribute("QueuePairsPerPeer", UintegerValue(lanes));
        s.helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(1024));
        Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
        const std::string what = std::to_string(channels) + " channels";
        AllOpsAllTypes(comm, 1001, what);
        Ptr<CollectiveIbTransport> tr = DynamicCast<CollectiveIbTransport>(comm->GetTransport());
        // 5 neighbour pairs, each connected once per lane, a queue pair at either end.
        EXPECT_EQ(tr->GetNQueuePairs(), 5u * lanes * 2) << what;
        for (CollectiveKind kind : {CollectiveKind::REDUCE_SCATTER, CollectiveKind::ALLGATHER})
        {
            CollectiveOpSpec spec;
            spec.kind = kind;
            spec.count = 333;
            spec.type = CollectiveDataType::INT32;
            const uint64_t seg = spec.count * 4;
            const Buffers in = MakeInputs(spec.type, spec.op, 5, 5 * seg, 11);
            Buffers out = in;
            ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max()) << what;
            for (uint32_t r = 0; r < 5; ++r)
            {
                if (kind == CollectiveKind::REDUCE_SCATTER)
                {
                    EXPECT_EQ(CheckReduce(spec.type,
                                          spec.op,
                                          in,
                                          {out[r].data()},
                                          r * seg,
                                          seg,
                                          what + " reduce-scatter"),
                              0u);
                    continue;
                }
                for (uint32_t q = 0; q < 5; ++q)
                {
                    EXPECT_TRUE(std::equal(in[q].begin() + q * seg,
                                           in[q].begin() + (q + 1) * seg,
                                           out[r].begin() + q * seg))
                        << what << " allgather: rank " << r << " segment " << q;
                }
            }
        }
        Simulator::Destroy();
        IbHelper::ResetLidAllocation();
    }
}

TEST_F(CollectiveTest, RanksWhoseHcasDifferInDataModeAreRefusedByName)
{
    // An HCA keeps the DataMode it was created with: hosts that already have a virtual
    // HCA ignore the helper's DataMode=true. Before, Start with buffers said to set
    // DataMode, which the user had set.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbSetup s;
    BuildIb(s, 4, false);
    s.helper.InstallIb(s.fabric, {0, 1}); // virtual HCAs on hosts 0 and 1
    CollectiveHelper dataHelper;
    dataHelper.SetHcaAttribute("DataMode", BooleanValue(true));
    EXPECT_DEATH(dataHelper.InstallIb(s.fabric, {2, 0}),
                 "host 0's HCA has DataMode=false and host 2's DataMode=true; an HCA keeps the "
                 "mode it was created with");
}

TEST_F(CollectiveTest, ReduceToTheLastOfSixRanksWithChunksNotAWholeNumberOfElements)
{
    // Six ranks (not a power of two), root 5, and ChunkSize 1002, which no 8-byte element
    // count fills: chunks are rounded down to 125 elements. Every algorithm's reduce must
    // leave the exact sum at the root.
    for (const char* algo : {"ring", "tree", "hd", "rd"})
    {
        SCOPED_TRACE(algo);
        IbHelper::ResetLidAllocation();
        IbSetup s;
        BuildIb(s, 6);
        s.helper.SetAlgorithm(algo);
        s.helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(1002));
        Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::REDUCE;
        spec.root = 5;
        spec.count = 1001;
        spec.type = CollectiveDataType::INT64;
        const Buffers in = MakeInputs(spec.type, spec.op, 6, 1001 * 8, 21);
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
        EXPECT_EQ(CheckReduce(spec.type,
                              spec.op,
                              in,
                              std::vector<const uint8_t*>(6, out[5].data()),
                              0,
                              1001 * 8,
                              "root"),
                  0u);
        Simulator::Destroy();
    }
}

TEST_F(CollectiveTest, ReduceScatterAllGatherBroadcastBarrier)
{
    IbSetup s;
    BuildIb(s, 6);
    s.helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(512));
    Ptr<CollectiveCommunicator> comm = s.helper.InstallIb(s.fabric);
    const uint32_t n = 6;
    const uint64_t count = 333;
    const CollectiveDataType t = CollectiveDataType::FLOAT32;
    // reduce-scatter: rank r gets segment r of the sum
    {
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::REDUCE_SCATTER;
        spec.count = count;
        spec.type = t;
        const Buffers in = MakeInputs(t, spec.op, n, n * count * 4, 7);
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
        for (uint32_t r = 0; r < n; ++r)
        {
            std::vector<const uint8_t*> res(n, out[r].data());
            EXPECT_EQ(CheckReduce(t, spec.op, in, res, r * count * 4, count * 4, "rs"), 0u);
        }
    }
    // allgather: everyone gets every rank's segment
    {
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::ALLGATHER;
        spec.count = count;
        spec.type = t;
        Buffers in = MakeInputs(t, spec.op, n, n * count * 4, 8);
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
        for (uint32_t r = 0; r < n; ++r)
        {
            for (uint32_t q = 0; q < n; ++q)
            {
                EXPECT_TRUE(std::equal(in[q].begin() + q * count * 4,
                                       in[q].begin() + (q + 1) * count * 4,
                                       out[r].begin() + q * count * 4))
                    << "allgather rank " << r << " segment " << q;
            }
        }
    }
    // broadcast from rank 4
    {
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::BROADCAST;
        spec.count = 5000;
        spec.type = CollectiveDataType::INT8;
        spec.root = 4;
        Buffers in = MakeInputs(spec.type, spec.op, n, 5000, 9);
        Buffers out = in;
        ASSERT_NE(CollectiveHelper::Run(comm, spec, &out), Time::Max());
        for (uint32_t r = 0; r < n; ++r)
        {
            EXPECT_EQ(out[r], in[4]) << "broadcast rank " << r;
        }
    }
    // a root the communicator does not have is refused with the rank count
    {
        GTEST_FLAG_SET(death_test_style, "threadsafe");
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::BROADCAST;
        spec.count = 16;
        spec.type = CollectiveDataType::INT8;
        spec.root = n;
        Buffers in = MakeInputs(spec.type, spec.op, n, 16, 9);
        EXPECT_DEATH(CollectiveHelper::Run(comm, spec, &in),
                     "broadcast root 6 out of range: the communicator has 6 ranks \\(0\\.\\.5\\)");
    }
    // barrier: no rank finishes before the last one has entered (all enter at once here,
    // so each finishes after ceil(log2 n) rounds of messages)
    {
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::BARRIER;
        const uint32_t id = comm->Start(spec, nullptr, CollectiveCommunicator::DoneCallback());
        Simulator::Stop(MilliSeconds(1));
        Simulator::Run();
        ASSERT_TRUE(comm->IsDone(id));
        EXPECT_EQ(comm->GetMessages(id), n * 3u); // 3 rounds for 6 ranks
        EXPECT_GT(comm->GetDuration(id), NanoSeconds(3 * 500));
    }
}

// TCP connects a pair when it first talks: a ring of 4 opens its 4 neighbour connections
// (8 ends), not the 6 of the full mesh; a broadcast from the highest rank, which sends
// before any lower rank, still connects (the lower rank dials) and delivers.
TEST_F(CollectiveTest, TcpConnectsOnlyThePairsThatTalk)
{
    const IbTopology topo = IbTopologyBuilder::FatTree2Level(4, 4);
    NodeContainer hosts =
        CollectiveHelper::BuildIpFabric(topo, DataRate("10Gbps"), MicroSeconds(1));
    CollectiveHelper h;
    h.SetAlgorithm("ring");
    Ptr<CollectiveCommunicator> ring = h.InstallTcp(hosts);
    CollectiveOpSpec spec;
    spec.count = 4096;
    ASSERT_NE(CollectiveHelper::Run(ring, spec), Time::Max());
    EXPECT_EQ(DynamicCast<CollectiveTcpTransport>(ring->GetTransport())->GetNConnected(), 8u);
    CollectiveHelper t;
    t.SetAlgorithm("tree");
    Ptr<CollectiveCommunicator> tree = t.InstallTcp(hosts);
    CollectiveOpSpec bcast;
    bcast.kind = CollectiveKind::BROADCAST;
    bcast.count = 4096;
    bcast.root = 3;
    ASSERT_NE(CollectiveHelper::Run(tree, bcast), Time::Max());
    // A binomial tree from rank 3 talks over 3 pairs.
    EXPECT_EQ(DynamicCast<CollectiveTcpTransport>(tree->GetTransport())->GetNConnected(), 6u);
}

TEST_F(CollectiveTest, TcpOverPointToPointAndIbGiveIdenticalResults)
{
    const uint32_t n = 8;
    const IbTopology topo = IbTopologyBuilder::FatTree2Level(4, n);
    for (const char* algo : {"ring", "tree", "hd", "rd"})
    {
        for (CollectiveDataType t : {CollectiveDataType::FLOAT32, CollectiveDataType::INT64})
        {
            CollectiveOpSpec spec;
            spec.count = 20000;
            spec.type = t;
            const Buffers in = MakeInputs(t, spec.op, n, spec.count * 8, 21);
            Buffers ib = in;
            Buffers tcp = in;
            {
                IbHelper::ResetLidAllocation();
                IbSetup s;
                BuildIb(s, n);
                s.helper.SetAlgorithm(algo);
                s.helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(16384));
                ASSERT_NE(CollectiveHelper::Run(s.helper.InstallIb(s.fabric), spec, &ib),
                          Time::Max());
                Simulator::Destroy();
            }
            {
                NodeContainer hosts =
                    CollectiveHelper::BuildIpFabric(topo, DataRate("10Gbps"), MicroSeconds(1));
                CollectiveHelper h;
                h.SetAlgorithm(algo);
                h.SetCommunicatorAttribute("ChunkSize", UintegerValue(16384));
                Ptr<CollectiveCommunicator> comm = h.InstallTcp(hosts);
                const Time d = CollectiveHelper::Run(comm, spec, &tcp);
                ASSERT_NE(d, Time::Max()) << algo << " over TCP did not finish";
                EXPECT_GT(comm->GetTransport()->GetBytesSent(), 0u);
                Simulator::Destroy();
            }
            EXPECT_EQ(ib, tcp) << algo << " " << CollectiveReduction::TypeName(t)
                               << ": IB and TCP results differ";
            std::vector<const uint8_t*> res;
            for (const auto& b : tcp)
            {
                res.push_back(b.data());
            }
            EXPECT_EQ(CheckReduce(t,
                                  spec.op,
                                  in,
                                  res,
                                  0,
                                  spec.count * CollectiveReduction::SizeOf(t),
                                  algo),
                      0u);
        }
    }
}

TEST_F(CollectiveTest, ACommunicatorOverHostsOfTwoRanksIsRefused)
{
    // A communicator keeps every rank's state in one object: in a distributed run its
    // hosts must all be on one MPI rank. (System ids set without MPI: one process.)
    EXPECT_DEATH(
        {
            const IbTopology t = IbTopologyBuilder::FatTree2Level(4, 4);
            IbFabricHelper fh;
            uint32_t cas = 0;
            std::vector<uint32_t> rank(t.GetNNodes(), 0);
            for (uint32_t n = 0; n < t.GetNNodes(); ++n)
            {
                if (t.GetNode(n).type == IbTopology::CA && cas++ == 3)
                {
                    rank[n] = 1;
                }
            }
            fh.SetRankOfNode([rank](uint32_t i) { return rank[i]; });
            IbFabric f = fh.Build(t);
            CollectiveHelper().InstallIb(f);
        },
        "CollectiveHelper::InstallIb: host 3 \\(node [0-9]+\\) is on MPI rank 1, and this is "
        "rank 0; a communicator's hosts must be on the rank that installs it");
}

TEST_F(CollectiveTest, IpFabricRoutersSpreadHostsOverTheUplinksAsTheIbEngineDoes)
{
    // 8 hosts on 4 leaves of 2 uplinks each. ftree sends a leaf's traffic for the 6 hosts
    // of other leaves over both uplinks, and so do the IP fabric's routers, which take
    // its tables; ns-3's global routing alone sends all of it up the first.
    const IbTopology topo = IbTopologyBuilder::FatTree2Level(4, 8);
    for (const std::string routing : {"ftree", "global"})
    {
        const NodeContainer hosts =
            CollectiveHelper::BuildIpFabric(topo, DataRate("10Gbps"), MicroSeconds(1), routing);
        ASSERT_EQ(hosts.GetN(), 8u);
        // No queue disc: a packet waits in the device's drop-tail queue alone.
        Ptr<Node> host = hosts.Get(0);
        ASSERT_EQ(host->GetNDevices(), 2u); // loopback and the link
        EXPECT_EQ(
            host->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(host->GetDevice(1)),
            nullptr);
        // The fabric's nodes are created in topology order: node id = first id + index.
        uint32_t firstCa = 0;
        while (topo.GetNode(firstCa).type != IbTopology::CA)
        {
            ++firstCa;
        }
        const uint32_t firstId = hosts.Get(0)->GetId() - firstCa;
        uint32_t leaves = 0;
        for (uint32_t t = 0; t < topo.GetNNodes(); ++t)
        {
            const IbTopology::Node& node = topo.GetNode(t);
            std::set<int32_t> local;
            uint32_t uplinks = 0;
            for (uint32_t p = 1; p < node.ports.size(); ++p)
            {
                const int32_t peer = node.ports[p].peerNode;
                if (peer < 0)
                {
                    continue;
                }
                if (topo.GetNode(peer).type == IbTopology::CA)
                {
                    local.insert(peer);
                }
                else
                {
                    ++uplinks;
                }
            }
            if (node.type != IbTopology::SWITCH || local.empty())
            {
                continue; // not a leaf
            }
            ++leaves;
            Ptr<Ipv4> router = NodeList::GetNode(firstId + t)->GetObject<Ipv4>();
            std::set<Ptr<NetDevice>> outputs;
            for (uint32_t h = 0; h < hosts.GetN(); ++h)
            {
                if (local.count(hosts.Get(h)->GetId() - firstId) > 0)
                {
                    continue;
                }
                Ipv4Header header;
                header.SetDestination(hosts.Get(h)->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal());
                Socket::SocketErrno err;
                Ptr<Ipv4Route> route = router->GetRoutingProtocol()->RouteOutput(Create<Packet>(),
                                                                                 header,
                                                                                 nullptr,
                                                                                 err);
                ASSERT_NE(route, nullptr) << routing << ": leaf " << t << " to host " << h;
                outputs.insert(route->GetOutputDevice());
            }
            EXPECT_EQ(outputs.size(), routing == "ftree" ? uplinks : 1u)
                << routing << ": leaf " << t << " has " << uplinks << " uplinks";
        }
        EXPECT_EQ(leaves, 4u);
        Simulator::Destroy();
    }
    EXPECT_DEATH(CollectiveHelper::BuildIpFabric(topo, DataRate("10Gbps"), MicroSeconds(1), "ecmp"),
                 "routing='ecmp' is not one of minhop, updn, ftree, dfsssp");
    EXPECT_DEATH(CollectiveHelper::BuildIpFabric(IbTopologyBuilder::Ring(4, 1),
                                                 DataRate("10Gbps"),
                                                 MicroSeconds(1)),
                 "routing engine 'ftree' cannot route this topology: .*ftree routes fat trees "
                 "only");
}

TEST_F(CollectiveTest, CommunicatorsOnDisjointAndOverlappingHostsRunAtOnce)
{
    IbSetup s;
    BuildIb(s, 8);
    s.helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(4096));
    s.helper.SetAlgorithm("ring");
    Ptr<CollectiveCommunicator> a = s.helper.InstallIb(s.fabric, {0, 1, 2, 3});
    s.helper.SetAlgorithm("tree");
    Ptr<CollectiveCommunicator> b = s.helper.InstallIb(s.fabric, {4, 5, 6, 7});
    s.helper.SetAlgorithm("hd");
    Ptr<CollectiveCommunicator> c = s.helper.InstallIb(s.fabric, {6, 2, 7, 3, 5, 1, 0, 4});
    s.helper.SetAlgorithm("ring");
    Ptr<CollectiveCommunicator> d = s.helper.InstallIb(s.fabric, {1, 3, 5});

    struct Job
    {
        Ptr<CollectiveCommunicator> comm;
        CollectiveOpSpec spec;
        Buffers in;
        Buffers out;
        uint32_t id{0};
    };

    std::vector<Job> jobs;
    uint32_t seed = 40;
    for (auto comm : {a, b, c, d, c, a}) // c and a have two operations in flight each
    {
        Job j;
        j.comm = comm;
        j.spec.count = 30001;
        j.spec.type = CollectiveDataType::INT32;
        j.spec.op = seed % 2 ? CollectiveRedOp::SUM : CollectiveRedOp::BXOR;
        j.in = MakeInputs(j.spec.type, j.spec.op, comm->GetNRanks(), j.spec.count * 4, seed++);
        j.out = j.in;
        jobs.push_back(std::move(j));
    }
    for (auto& j : jobs)
    {
        j.id = j.comm->Start(j.spec, &j.out, CollectiveCommunicator::DoneCallback());
    }
    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    for (auto& j : jobs)
    {
        ASSERT_TRUE(j.comm->IsDone(j.id));
        std::vector<const uint8_t*> res;
        for (const auto& buf : j.out)
        {
            res.push_back(buf.data());
        }
        EXPECT_EQ(CheckReduce(j.spec.type, j.spec.op, j.in, res, 0, j.spec.count * 4, "job"), 0u);
    }
    // Operations in flight at once take longer than alone, as they share links: c's first
    // operation against the same operation run by c by itself afterwards.
    const Time together = jobs[2].comm->GetDuration(jobs[2].id);
    Job alone = jobs[2];
    alone.out = alone.in;
    alone.id = alone.comm->Start(alone.spec, &alone.out, CollectiveCommunicator::DoneCallback());
    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    ASSERT_TRUE(alone.comm->IsDone(alone.id));
    EXPECT_GT(together, alone.comm->GetDuration(alone.id));
}

TEST_F(CollectiveTest, RingAllReduceTimeOnNonBlockingFatTreeMatchesModel)
{
    // 16 hosts on a non-blocking two-level fat tree (radix 8: 4 leaves of 4 hosts, 4
    // spines), EDR, virtual payloads. With ftree routing every ring neighbour pair gets its
    // own path, so each host link carries 2 (n - 1) / n * S bytes of data in each
    // direction, back to back: T0 = 2 (n - 1) (S / n) / (B * eff), with eff the payload
    // share of the wire bytes (4 KB packets, the ImmDt of each fragment's last packet, one
    // coalesced ACK per fragment in the same direction for the opposite flow). On top of
    // that come latencies: the first chunk of each of the 2 (n - 1) steps can only leave
    // once the previous step's has arrived, which costs at most one chunk's latency
    // alpha = doorbell + 4 cables + 3 switches + one packet + PCIe write.
    const uint32_t n = 16;
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(8, n));
    CollectiveHelper h;
    h.SetAlgorithm("ring");
    Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
    Ptr<IbHca> hca = fabric.hosts.Get(0)->GetObject<IbHca>();
    UintegerValue slot;
    comm->GetTransport()->GetAttribute("SlotSize", slot);
    UintegerValue chunkV;
    comm->GetAttribute("ChunkSize", chunkV);

    CollectiveOpSpec spec;
    spec.type = CollectiveDataType::FLOAT32;
    const uint64_t S = 16ull << 20;
    spec.count = S / 4;
    CollectiveHelper::Run(comm, spec); // warm-up: creates and connects the queue pairs
    const Time t = CollectiveHelper::Run(comm, spec);
    ASSERT_NE(t, Time::Max());

    const double rate = fabric.HostPort(0)->GetDataRate().GetBitRate() / 8.0; // bytes/s
    const uint32_t mtu = 4096;
    const double eff = IbPayloadShare(slot.Get(), mtu);
    const double t0 = 2.0 * (n - 1) * (double(S) / n) / (rate * eff);
    const double alpha = hca->GetDoorbellLatency().GetSeconds() + 4 * 10e-9 + 3 * 90e-9 +
                         IbPacket::WireSize(mtu, 0, false) / rate +
                         hca->GetPcieWriteLatency().GetSeconds();
    const double model = t0 + 2 * (n - 1) * alpha;
    std::cout << "ring allreduce " << S << " B on " << n << " hosts: " << t.GetMicroSeconds()
              << " us, bandwidth term " << t0 * 1e6 << " us, model with per-step latencies "
              << model * 1e6 << " us, busbw " << 2.0 * (n - 1) / n * S / t.GetSeconds() / 1e9
              << " GB/s\n";
    EXPECT_GE(t.GetSeconds(), t0 * 0.999);
    EXPECT_NEAR(t.GetSeconds() / model, 1.0, 0.03);
    // halving-doubling moves the same bytes per host (2 (n - 1) / n * S) in 2 log2 n
    // exchanges: the same bandwidth term, fewer latencies (with the communicator's send
    // window the earlier exchanges get the link first)
    h.SetAlgorithm("hd");
    Ptr<CollectiveCommunicator> hd = h.InstallIb(fabric);
    CollectiveHelper::Run(hd, spec);
    const Time thd = CollectiveHelper::Run(hd, spec);
    std::cout << "halving-doubling: " << thd.GetMicroSeconds() << " us\n";
    EXPECT_GE(thd.GetSeconds(), t0 * 0.999);
    EXPECT_NEAR(thd.GetSeconds() / (t0 + 2 * 4 * alpha), 1.0, 0.03);
}

TEST_F(CollectiveTest, SmallMessageTimeCountsSequentialMessageLatencies)
{
    // 16 hosts on one switch (all pairs have the same latency). A 64-byte allreduce takes
    // k * alpha + beta: k messages on the critical path, one message latency alpha each,
    // and beta for the last send's acknowledgement (a rank has finished once its sends
    // have completed). alpha and beta come from ring allreduces on 2 and 4 of the hosts
    // (k = 2 and 6); then on all 16: ring k = 2 (n - 1) = 30, tree k = 2 log2 n = 8 (up and
    // down the binomial tree), halving-doubling k = 2 log2 n = 8 (exchanges), recursive
    // doubling k = log2 n = 4.
    const uint32_t n = 16;
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(32, n));
    CollectiveOpSpec spec;
    spec.count = 16;
    CollectiveHelper h;
    auto timeOf = [&spec](Ptr<CollectiveCommunicator> comm) {
        CollectiveHelper::Run(comm, spec); // connects the queue pairs
        return CollectiveHelper::Run(comm, spec).GetSeconds();
    };
    const double t2 = timeOf(h.InstallIb(fabric, {0, 1}));
    const double t4 = timeOf(h.InstallIb(fabric, {0, 1, 2, 3}));
    const double alpha = (t4 - t2) / 4;
    const double beta = t2 - 2 * alpha;
    EXPECT_GT(alpha, 0);
    EXPECT_GE(beta, 0);
    const std::pair<const char*, double> expected[] = {{"ring", 2.0 * (n - 1)},
                                                       {"tree", 2.0 * 4},
                                                       {"hd", 2.0 * 4},
                                                       {"rd", 4.0}};
    for (const auto& [algo, k] : expected)
    {
        h.SetAlgorithm(algo);
        const double t = timeOf(h.InstallIb(fabric));
        std::cout << algo << ": " << t * 1e6 << " us for 64 B on " << n << " ranks; model " << k
                  << " x " << alpha * 1e6 << " + " << beta * 1e6 << " = "
                  << (k * alpha + beta) * 1e6 << " us\n";
        EXPECT_NEAR(t / (k * alpha + beta), 1.0, 0.03) << algo;
    }
}

// The double binary tree: every rank once in each tree, one root per tree, each rank's
// parent names it as a child; tree 1's leaves are inner nodes of tree 2 (every rank but
// at most one is a leaf in at least one tree), and the height is about log2 n.
TEST(CollectiveDoubleTreeTest, TheTwoTreesAreComplementaryBinaryTrees)
{
    for (uint32_t n = 2; n <= 70; ++n)
    {
        uint32_t height[2] = {0, 0};
        uint32_t leafInNeither = 0;
        for (uint32_t t = 0; t < 2; ++t)
        {
            uint32_t roots = 0;
            for (uint32_t r = 0; r < n; ++r)
            {
                const auto nd = CollectiveDoubleTreeAlgorithm::GetNode(r, n, t);
                EXPECT_LE(nd.children.size(), 2u);
                if (nd.parent < 0)
                {
                    ++roots;
                }
                else
                {
                    const auto p = CollectiveDoubleTreeAlgorithm::GetNode(nd.parent, n, t);
                    EXPECT_EQ(std::count(p.children.begin(), p.children.end(), r), 1)
                        << "n " << n << " tree " << t << " rank " << r;
                }
                uint32_t depth = 0;
                for (int64_t x = r; CollectiveDoubleTreeAlgorithm::GetNode(x, n, t).parent >= 0;
                     x = CollectiveDoubleTreeAlgorithm::GetNode(x, n, t).parent)
                {
                    ASSERT_LT(++depth, n) << "a cycle";
                }
                height[t] = std::max(height[t], depth);
            }
            EXPECT_EQ(roots, 1u) << "n " << n;
            EXPECT_LE(height[t], uint32_t(std::ceil(std::log2(n + 1))));
        }
        for (uint32_t r = 0; r < n; ++r)
        {
            if (!CollectiveDoubleTreeAlgorithm::GetNode(r, n, 0).children.empty() &&
                !CollectiveDoubleTreeAlgorithm::GetNode(r, n, 1).children.empty())
            {
                ++leafInNeither;
            }
        }
        EXPECT_LE(leafInNeither, 1u) << "n " << n;
    }
}

// The double binary tree runs its trees on separate channels: a small allreduce takes
// the trees' height in latencies (well under the ring's 2 (n - 1)), and a large one
// stays within 2x of the ring's bandwidth-optimal time. With both trees on one channel
// each chunk of one tree waits behind the other's round trip, and it is several times
// slower (the channel check).
TEST_F(CollectiveTest, TheDoubleTreeIsFastForSmallAndNearTheRingForLarge)
{
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(8, 16));
    CollectiveHelper h;
    auto timeOf = [&](const std::string& algo, uint64_t count) {
        h.SetAlgorithm(algo);
        Ptr<CollectiveCommunicator> comm = h.InstallIb(fabric);
        CollectiveOpSpec spec;
        spec.count = count;
        CollectiveHelper::Run(comm, spec); // connects the queue pairs
        return CollectiveHelper::Run(comm, spec).GetSeconds();
    };
    const double smallRing = timeOf("ring", 2);
    const double smallTree = timeOf("dbtree", 2);
    const double largeRing = timeOf("ring", 4 << 20);
    const double largeTree = timeOf("dbtree", 4 << 20);
    std::cout << "8 B: ring " << smallRing * 1e6 << " us, dbtree " << smallTree * 1e6
              << " us; 16 MiB: ring " << largeRing * 1e6 << " us, dbtree " << largeTree * 1e6
              << " us\n";
    EXPECT_LT(smallTree, smallRing / 2);
    EXPECT_LT(largeTree, 2 * largeRing);
}

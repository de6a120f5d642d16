/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Data-parallel training workload tests (DataParallelTrainingJob and
 * DataParallelTrainingApplication):
 * - communication made free (a transport with infinite bandwidth and no latency, NVLink
 *   not used): every iteration takes exactly its compute time;
 * - compute made zero: an iteration takes exactly the time of the same allreduce run
 *   alone on an identical fabric (InfiniBand RDMA and TCP), plus the two NVLink phases
 *   when a server has several GPUs;
 * - bucketing: three buckets whose overlap with the backward pass is worked out by hand
 *   from the attributes (produce times, NVLink phases, serial reductions), and the same
 *   buckets on an InfiniBand fat tree, whose schedule follows from the allreduce times
 *   measured alone;
 * - compute derived from FLOPs, and user errors stopping with a message.
 */

#include "ns3/collective-helper.h"
#include "ns3/collective-transport.h"
#include "ns3/core-module.h"
#include "ns3/data-parallel-training-application.h"
#include "ns3/data-parallel-training-helper.h"
#include "ns3/data-parallel-training-job.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/network-module.h"

#include <gtest/gtest.h>
#include <tuple>
#include <vector>

using namespace ns3;

namespace
{

/**
 * A transport with infinite bandwidth and zero latency: every message is delivered, and
 * reported sent, at the time it is sent (from an event at the same time, as a real
 * transport's completions come from events).
 */
class InstantTransport : public CollectiveTransport
{
  public:
    /**
     * @param n ranks
     */
    explicit InstantTransport(uint32_t n)
        : m_n(n)
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
        Simulator::ScheduleNow([this, src, dst, tag, bytes, sent]() {
            Deliver(src, dst, tag, bytes, nullptr);
            if (!sent.IsNull())
            {
                sent();
            }
        });
    }

  private:
    uint32_t m_n; ///< ranks
};

class TrainingTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        IbHelper::ResetLidAllocation();
        RngSeedManager::SetSeed(3);
        RngSeedManager::SetRun(1);
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }

    /**
     * @param n ranks
     * @return a ring communicator over an InstantTransport
     */
    static Ptr<CollectiveCommunicator> InstantComm(uint32_t n)
    {
        Ptr<CollectiveCommunicator> comm = CreateObject<CollectiveCommunicator>();
        comm->SetTransport(CreateObject<InstantTransport>(n));
        comm->SetAlgorithm(CollectiveHelper::CreateAlgorithm("ring"));
        return comm;
    }
};

/// One bucket's reduction as the BucketReduced trace reports it.
struct BucketEvent
{
    uint32_t iteration; ///< iteration
    uint32_t bucket;    ///< bucket
    uint64_t bytes;     ///< size
    Time ready;         ///< produced by every server
    Time start;         ///< reduction start
    Time end;           ///< reduction end
};

TEST_F(TrainingTest, FreeCommunicationIterationEqualsCompute)
{
    // 4 servers of 1 GPU; 10 MB of fp32 gradients in 4 MB buckets (3 buckets) really
    // all-reduced by the ring algorithm, over a transport that takes no time.
    const uint32_t n = 4;
    NodeContainer servers;
    servers.Create(n);
    Ptr<CollectiveCommunicator> comm = InstantComm(n);
    DataParallelTrainingHelper h;
    h.SetJobAttribute("GradientBytes", UintegerValue(10000000));
    h.SetJobAttribute("BucketSize", UintegerValue(4000000));
    h.SetJobAttribute("GpusPerServer", UintegerValue(1));
    h.SetJobAttribute("Iterations", UintegerValue(3));
    h.SetApplicationAttribute("ForwardTime", TimeValue(MilliSeconds(10)));
    h.SetApplicationAttribute("BackwardTime", TimeValue(MilliSeconds(20)));
    h.SetApplicationAttribute("OptimizerTime", TimeValue(MilliSeconds(2)));
    Ptr<DataParallelTrainingJob> job = h.Install(comm, servers);
    uint32_t buckets = 0;
    job->TraceConnectWithoutContext(
        "BucketReduced",
        Callback<void, uint32_t, uint32_t, uint64_t, Time, Time, Time>(
            [&buckets](uint32_t, uint32_t, uint64_t, Time, Time, Time) { ++buckets; }));
    Simulator::Run();

    ASSERT_TRUE(job->IsFinished());
    ASSERT_EQ(job->GetRecords().size(), 3u);
    EXPECT_EQ(buckets, 9u);
    // the ring really ran: 2 (n - 1) chunks per rank per bucket at least
    EXPECT_GE(comm->GetTransport()->GetMessagesSent(), 9u * n * 2 * (n - 1));
    const Time compute = MilliSeconds(32);
    for (uint32_t i = 0; i < 3; ++i)
    {
        const DataParallelTrainingRecord& r = job->GetRecords()[i];
        EXPECT_EQ(r.iteration, i);
        EXPECT_EQ(r.start, compute * i);
        EXPECT_EQ(r.GetDuration(), compute) << "iteration " << i;
        EXPECT_EQ(r.compute, compute);
        EXPECT_EQ(r.exposed, Time(0));
        EXPECT_EQ(r.idleFraction, 0.0);
    }
    EXPECT_EQ(job->GetMeanIterationTime(), compute);
}

/*
 * Two jobs on disjoint servers of one simulation: the faster (1 iteration of 32 ms) no
 * longer stops the slower (3 iterations from 5 ms on, the applications' StartTime, which
 * the helper used to overwrite with 0); a BucketSize changed while a job runs does not
 * change its bucket layout (before, the indices of pending buckets ran past the new list).
 */
TEST_F(TrainingTest, JobsShareASimulationAndKeepTheirSettings)
{
    const uint32_t n = 2;
    std::vector<Ptr<DataParallelTrainingJob>> jobs;
    for (uint32_t j = 0; j < 2; ++j)
    {
        NodeContainer servers;
        servers.Create(n);
        DataParallelTrainingHelper h;
        h.SetJobAttribute("GradientBytes", UintegerValue(10000000));
        h.SetJobAttribute("BucketSize", UintegerValue(4000000));
        h.SetJobAttribute("GpusPerServer", UintegerValue(1));
        h.SetJobAttribute("Iterations", UintegerValue(j == 0 ? 1 : 3));
        h.SetApplicationAttribute("ForwardTime", TimeValue(MilliSeconds(10)));
        h.SetApplicationAttribute("BackwardTime", TimeValue(MilliSeconds(20)));
        h.SetApplicationAttribute("OptimizerTime", TimeValue(MilliSeconds(2)));
        if (j == 1)
        {
            h.SetApplicationAttribute("StartTime", TimeValue(MilliSeconds(5)));
        }
        jobs.push_back(h.Install(InstantComm(n), servers));
    }
    uint32_t buckets = 0;
    jobs[1]->TraceConnectWithoutContext(
        "BucketReduced",
        Callback<void, uint32_t, uint32_t, uint64_t, Time, Time, Time>(
            [&buckets](uint32_t, uint32_t, uint64_t, Time, Time, Time) { ++buckets; }));
    // In job 1's first backward pass (5 + 10 + 0..20 ms), after its first bucket: 1 MB
    // buckets would be 10 of them.
    Simulator::Schedule(MilliSeconds(25),
                        [&jobs]() { jobs[1]->SetAttribute("BucketSize", UintegerValue(1000000)); });
    Simulator::Run();

    const Time compute = MilliSeconds(32);
    ASSERT_TRUE(jobs[0]->IsFinished());
    ASSERT_TRUE(jobs[1]->IsFinished());
    ASSERT_EQ(jobs[0]->GetRecords().size(), 1u);
    ASSERT_EQ(jobs[1]->GetRecords().size(), 3u);
    EXPECT_EQ(jobs[0]->GetRecords()[0].start, Time(0));
    EXPECT_EQ(buckets, 9u); // 3 iterations of 3 buckets (4, 4 and 2 MB)
    EXPECT_EQ(jobs[1]->GetNBuckets(), 3u);
    for (uint32_t i = 0; i < 3; ++i)
    {
        const DataParallelTrainingRecord& r = jobs[1]->GetRecords()[i];
        EXPECT_EQ(r.start, MilliSeconds(5) + compute * i) << "iteration " << i;
        EXPECT_EQ(r.GetDuration(), compute) << "iteration " << i;
    }
    EXPECT_EQ(Simulator::Now(), MilliSeconds(5) + compute * 3);
}

/**
 * Zero compute: the iteration is one allreduce of the whole gradient (one bucket), so it
 * must take what the same allreduce takes alone on an identical, fresh fabric.
 * @param fabric "ib" or "tcp"
 * @param gpus GPUs per server (NVLink phases when more than 1)
 */
void
CheckZeroCompute(const std::string& fabric, uint32_t gpus)
{
    const uint32_t n = 4;
    const uint64_t bytes = 1 << 20; // 1 MiB of fp32
    const IbTopology topo = IbTopologyBuilder::FatTree2Level(4, n);
    const DataRate ethRate("100Gbps");
    auto build = [&](NodeContainer& servers) {
        IbHelper::ResetLidAllocation();
        CollectiveHelper ch;
        ch.SetAlgorithm("ring");
        if (fabric == "ib")
        {
            IbFabricHelper fh;
            IbFabric f = fh.Build(topo);
            servers = f.hosts;
            return ch.InstallIb(f);
        }
        servers = CollectiveHelper::BuildIpFabric(topo, ethRate, MicroSeconds(1));
        return ch.InstallTcp(servers);
    };

    // the allreduce alone
    CollectiveOpSpec spec;
    spec.count = bytes / 4;
    Time alone;
    {
        NodeContainer servers;
        Ptr<CollectiveCommunicator> comm = build(servers);
        alone = CollectiveHelper::Run(comm, spec, nullptr, Seconds(10));
        ASSERT_NE(alone, Time::Max());
        Simulator::Destroy();
    }

    // the same in a training iteration with no compute
    NodeContainer servers;
    Ptr<CollectiveCommunicator> comm = build(servers);
    DataParallelTrainingHelper h;
    h.SetJobAttribute("GradientBytes", UintegerValue(bytes));
    h.SetJobAttribute("BucketSize", UintegerValue(25 * 1024 * 1024));
    h.SetJobAttribute("GpusPerServer", UintegerValue(gpus));
    h.SetJobAttribute("IntraServerBandwidth", DataRateValue(DataRate("2400Gbps")));
    Ptr<DataParallelTrainingJob> job = h.Install(comm, servers);
    Simulator::Stop(Seconds(10));
    Simulator::Run();
    ASSERT_TRUE(job->IsFinished()) << fabric;
    const DataParallelTrainingRecord& r = job->GetRecords().at(0);
    // one NVLink phase: (g - 1) / g * 1 MiB / 300 GB/s
    const Time phase =
        gpus == 1 ? Time(0) : NanoSeconds(std::llround((gpus - 1.0) / gpus * bytes * 8 / 2400.0));
    EXPECT_EQ(job->GetIntraServerPhaseTime(bytes), phase);
    EXPECT_EQ(r.compute, Time(0));
    EXPECT_EQ(r.GetDuration(), alone + phase * 2) << fabric << ", " << gpus << " GPUs per server";
    EXPECT_EQ(r.communication, r.GetDuration());
    EXPECT_EQ(r.exposed, r.GetDuration());
    EXPECT_DOUBLE_EQ(r.idleFraction, 1.0);
    Simulator::Destroy();
}

TEST_F(TrainingTest, ZeroComputeIterationEqualsAllReduceAloneIb)
{
    CheckZeroCompute("ib", 1);
    CheckZeroCompute("ib", 8);
}

TEST_F(TrainingTest, ZeroComputeIterationEqualsAllReduceAloneTcp)
{
    CheckZeroCompute("tcp", 1);
}

TEST_F(TrainingTest, BucketsOverlapBackwardAsScheduled)
{
    // Hand-checked schedule. Gradients 10 MB, buckets of 4 MB: 4, 4, 2 MB. Forward 10 ms,
    // backward 20 ms, optimizer 2 ms. The backward pass produces bytes at a constant
    // rate: buckets at 10 + 20 * 0.4 = 18 ms, 10 + 20 * 0.8 = 26 ms, 10 + 20 = 30 ms.
    // 4 GPUs per server, NVLink 8 Gb/s = 1 GB/s; the network takes no time (instant
    // transport). A bucket's reduction: two NVLink phases of 3/4 * B / (1 GB/s):
    // 2 * 3 ms = 6 ms for 4 MB, 2 * 1.5 ms = 3 ms for 2 MB. Reductions run one at a time:
    //   bucket 0: ready 18, start 18, end 24
    //   bucket 1: ready 26, start 26, end 32
    //   bucket 2: ready 30, start 32 (waits for bucket 1), end 35
    // optimizer from 35 to 37 ms: iteration 37 ms, compute 32 ms, exposed 5 ms.
    const uint32_t n = 2;
    NodeContainer servers;
    servers.Create(n);
    DataParallelTrainingHelper h;
    h.SetJobAttribute("GradientBytes", UintegerValue(10000000));
    h.SetJobAttribute("BucketSize", UintegerValue(4000000));
    h.SetJobAttribute("GpusPerServer", UintegerValue(4));
    h.SetJobAttribute("IntraServerBandwidth", DataRateValue(DataRate("8Gbps")));
    h.SetJobAttribute("Iterations", UintegerValue(2));
    h.SetApplicationAttribute("ForwardTime", TimeValue(MilliSeconds(10)));
    h.SetApplicationAttribute("BackwardTime", TimeValue(MilliSeconds(20)));
    h.SetApplicationAttribute("OptimizerTime", TimeValue(MilliSeconds(2)));
    Ptr<DataParallelTrainingJob> job = h.Install(InstantComm(n), servers);
    std::vector<BucketEvent> ev;
    job->TraceConnectWithoutContext(
        "BucketReduced",
        Callback<void, uint32_t, uint32_t, uint64_t, Time, Time, Time>(
            [&ev](uint32_t it, uint32_t b, uint64_t bytes, Time ready, Time start, Time end) {
                ev.push_back({it, b, bytes, ready, start, end});
            }));
    // A GradientBytes set while the job runs does not apply, neither to the buckets nor to
    // when the backward pass produces them (the second iteration below is unchanged).
    Simulator::Schedule(MilliSeconds(1),
                        [job]() { job->SetAttribute("GradientBytes", UintegerValue(20000000)); });
    Simulator::Run();

    ASSERT_TRUE(job->IsFinished());
    EXPECT_EQ(job->GetBucketBytes(), (std::vector<uint64_t>{4000000, 4000000, 2000000}));
    const int64_t expect[3][4] = {{4000000, 18, 18, 24},
                                  {4000000, 26, 26, 32},
                                  {2000000, 30, 32, 35}};
    ASSERT_EQ(ev.size(), 6u);
    for (uint32_t it = 0; it < 2; ++it)
    {
        const Time t0 = MilliSeconds(37) * it;
        for (uint32_t b = 0; b < 3; ++b)
        {
            const BucketEvent& e = ev[it * 3 + b];
            EXPECT_EQ(e.iteration, it);
            EXPECT_EQ(e.bucket, b);
            EXPECT_EQ(e.bytes, static_cast<uint64_t>(expect[b][0]));
            EXPECT_EQ(e.ready, t0 + MilliSeconds(expect[b][1]))
                << "iteration " << it << " bucket " << b;
            EXPECT_EQ(e.start, t0 + MilliSeconds(expect[b][2]))
                << "iteration " << it << " bucket " << b;
            EXPECT_EQ(e.end, t0 + MilliSeconds(expect[b][3]))
                << "iteration " << it << " bucket " << b;
        }
    }
    for (uint32_t it = 0; it < 2; ++it)
    {
        const DataParallelTrainingRecord& r = job->GetRecords()[it];
        EXPECT_EQ(r.start, MilliSeconds(37) * it);
        EXPECT_EQ(r.GetDuration(), MilliSeconds(37));
        EXPECT_EQ(r.compute, MilliSeconds(32));
        EXPECT_EQ(r.communication, MilliSeconds(6 + 6 + 3));
        EXPECT_EQ(r.exposed, MilliSeconds(5));
        EXPECT_DOUBLE_EQ(r.idleFraction, 5.0 / 37.0);
    }
    // 1000 samples per epoch at a global batch of 300: 4 iterations per epoch; 2 epochs
    EXPECT_EQ(
        DataParallelTrainingJob::ProjectTimeToTrain(1000, 2, 300, job->GetMeanIterationTime()),
        MilliSeconds(37 * 8));
}

TEST_F(TrainingTest, ComputeDerivedFromFlops)
{
    // 3 GFLOP per sample, 100 samples per GPU, 1 TFLOP/s: 0.3 s per iteration, split
    // 1 : 2 into forward 0.1 s and backward 0.2 s. One server, one GPU, no gradients.
    NodeContainer servers;
    servers.Create(1);
    DataParallelTrainingHelper h;
    h.SetJobAttribute("GpusPerServer", UintegerValue(1));
    h.SetApplicationAttribute("FlopsPerSample", DoubleValue(3e9));
    h.SetApplicationAttribute("BatchPerGpu", UintegerValue(100));
    h.SetApplicationAttribute("GpuFlops", DoubleValue(1e12));
    ApplicationContainer apps;
    Ptr<DataParallelTrainingJob> job = h.Install(nullptr, servers, &apps);
    Ptr<DataParallelTrainingApplication> app =
        DynamicCast<DataParallelTrainingApplication>(apps.Get(0));
    EXPECT_EQ(app->GetForwardTime(), MilliSeconds(100));
    EXPECT_EQ(app->GetBackwardTime(), MilliSeconds(200));
    Simulator::Run();
    ASSERT_TRUE(job->IsFinished());
    EXPECT_EQ(job->GetRecords().at(0).GetDuration(), MilliSeconds(300));
}

TEST_F(TrainingTest, AOneServerJobStopsWhenItsApplicationStops)
{
    // Nobody waits for a single server: a StopTime ends its job (the two-server case
    // stops the run with a message, UserErrorsNameTheInput).
    NodeContainer servers;
    servers.Create(1);
    DataParallelTrainingHelper h;
    h.SetJobAttribute("GradientBytes", UintegerValue(10000000));
    h.SetJobAttribute("Iterations", UintegerValue(3));
    h.SetApplicationAttribute("ForwardTime", TimeValue(MilliSeconds(10)));
    h.SetApplicationAttribute("BackwardTime", TimeValue(MilliSeconds(20)));
    Ptr<DataParallelTrainingJob> job = h.Install(nullptr, servers);
    servers.Get(0)->GetApplication(0)->SetStopTime(MilliSeconds(45));
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    EXPECT_FALSE(job->IsFinished());
    EXPECT_EQ(job->GetRecords().size(), 1u); // the first iteration, 30 ms
}

TEST_F(TrainingTest, UserErrorsNameTheInput)
{
    auto job = [](uint64_t grad, uint32_t elem, uint64_t bucket) {
        Ptr<DataParallelTrainingJob> j = CreateObject<DataParallelTrainingJob>();
        j->SetAttribute("GradientBytes", UintegerValue(grad));
        j->SetAttribute("BytesPerElement", UintegerValue(elem));
        j->SetAttribute("BucketSize", UintegerValue(bucket));
        return j;
    };
    EXPECT_DEATH(job(10, 4, 100)->GetBucketBytes(), "GradientBytes=10 is not a whole number");
    EXPECT_DEATH(job(16, 3, 100)->GetBucketBytes(), "BytesPerElement=3");
    EXPECT_DEATH(job(16, 4, 2)->GetBucketBytes(), "BucketSize=2 is smaller than one element");
    // two servers and a communicator of three ranks
    EXPECT_DEATH(
        {
            NodeContainer servers;
            servers.Create(2);
            DataParallelTrainingHelper h;
            h.Install(InstantComm(3), servers);
        },
        "the communicator has 3 ranks for 2 servers");
    // compute given twice
    EXPECT_DEATH(
        {
            NodeContainer servers;
            servers.Create(1);
            DataParallelTrainingHelper h;
            h.SetApplicationAttribute("FlopsPerSample", DoubleValue(1e9));
            h.SetApplicationAttribute("GpuFlops", DoubleValue(1e12));
            h.SetApplicationAttribute("ForwardTime", TimeValue(MilliSeconds(1)));
            h.Install(nullptr, servers);
            Simulator::Run();
        },
        "either FlopsPerSample");
    // a server stopped before the job ends: the others would wait for it for ever
    EXPECT_DEATH(
        {
            NodeContainer servers;
            servers.Create(2);
            DataParallelTrainingHelper h;
            h.SetJobAttribute("GradientBytes", UintegerValue(10000000));
            h.SetJobAttribute("Iterations", UintegerValue(3));
            h.SetApplicationAttribute("ForwardTime", TimeValue(MilliSeconds(10)));
            h.SetApplicationAttribute("BackwardTime", TimeValue(MilliSeconds(20)));
            h.Install(InstantComm(2), servers);
            servers.Get(1)->GetApplication(0)->SetStopTime(MilliSeconds(45));
            Simulator::Run();
        },
        "rank 1: stopped at \\+45(\\.0+)?ms in iteration 1 of 3, before the job finished");
}

TEST_F(TrainingTest, BucketsOnInfiniBandFollowTheScheduleOfMeasuredAllReduces)
{
    // The same three buckets (4, 4, 2 MB of fp32) on a 4-server InfiniBand fat tree (EDR,
    // one GPU per server): each bucket's reduction takes what its allreduce takes alone,
    // measured here on a fresh fabric, and the schedule follows from those durations:
    // produced at r = 1 + 2 * (0.4, 0.8, 1.0) ms; end_k = max(r_k, end_(k-1)) + d_k;
    // iteration = max(3 ms, end_2) + 0.5 ms.
    const uint32_t n = 4;
    const IbTopology topo = IbTopologyBuilder::FatTree2Level(4, n);
    auto fabric = [&](NodeContainer& servers) {
        IbHelper::ResetLidAllocation();
        IbFabricHelper fh;
        IbFabric f = fh.Build(topo);
        servers = f.hosts;
        CollectiveHelper ch;
        ch.SetAlgorithm("ring");
        return ch.InstallIb(f);
    };
    auto alone = [&](uint64_t bytes) {
        NodeContainer servers;
        Ptr<CollectiveCommunicator> comm = fabric(servers);
        CollectiveOpSpec spec;
        spec.count = bytes / 4;
        const Time d = CollectiveHelper::Run(comm, spec, nullptr, Seconds(10));
        Simulator::Destroy();
        return d;
    };
    const Time d4 = alone(4000000);
    const Time d2 = alone(2000000);
    ASSERT_NE(d4, Time::Max());
    ASSERT_NE(d2, Time::Max());
    // at least the ring's bandwidth term: 2 (n - 1) / n * 4 MB at 100 Gb/s = 480 us
    EXPECT_GT(d4, MicroSeconds(480));

    const Time r[3] = {MicroSeconds(1800), MicroSeconds(2600), MicroSeconds(3000)};
    const Time d[3] = {d4, d4, d2};
    Time end[3];
    Time prev(0);
    for (uint32_t k = 0; k < 3; ++k)
    {
        end[k] = std::max(r[k], prev) + d[k];
        prev = end[k];
    }
    ASSERT_GT(end[1], r[2]) << "the case is meant to make bucket 2 wait for bucket 1";
    const Time iteration = std::max(MilliSeconds(3), end[2]) + MicroSeconds(500);

    NodeContainer servers;
    Ptr<CollectiveCommunicator> comm = fabric(servers);
    DataParallelTrainingHelper h;
    h.SetJobAttribute("GradientBytes", UintegerValue(10000000));
    h.SetJobAttribute("BucketSize", UintegerValue(4000000));
    h.SetJobAttribute("GpusPerServer", UintegerValue(1));
    h.SetApplicationAttribute("ForwardTime", TimeValue(MilliSeconds(1)));
    h.SetApplicationAttribute("BackwardTime", TimeValue(MilliSeconds(2)));
    h.SetApplicationAttribute("OptimizerTime", TimeValue(MicroSeconds(500)));
    Ptr<DataParallelTrainingJob> job = h.Install(comm, servers);
    std::vector<BucketEvent> ev;
    job->TraceConnectWithoutContext(
        "BucketReduced",
        Callback<void, uint32_t, uint32_t, uint64_t, Time, Time, Time>(
            [&ev](uint32_t it, uint32_t b, uint64_t bytes, Time ready, Time start, Time end) {
                ev.push_back({it, b, bytes, ready, start, end});
            }));
    const Time t0 = Simulator::Now();
    Simulator::Stop(Seconds(10));
    Simulator::Run();
    ASSERT_TRUE(job->IsFinished());
    ASSERT_EQ(ev.size(), 3u);
    for (uint32_t k = 0; k < 3; ++k)
    {
        EXPECT_EQ(ev[k].ready - t0, r[k]) << "bucket " << k;
        EXPECT_EQ(ev[k].end - t0, end[k]) << "bucket " << k;
    }
    EXPECT_EQ(job->GetRecords().at(0).GetDuration(), iteration);
    EXPECT_EQ(job->GetRecords().at(0).exposed, iteration - MicroSeconds(3500));
}

} // namespace

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "data-parallel-training-job.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/collective-algorithm.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DataParallelTrainingJob");

NS_OBJECT_ENSURE_REGISTERED(DataParallelTrainingJob);

TypeId
DataParallelTrainingJob::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::DataParallelTrainingJob")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<DataParallelTrainingJob>()
            .AddAttribute("GradientBytes",
                          "Bytes of gradients each GPU produces per iteration and the job "
                          "all-reduces (parameters * BytesPerElement); 0: no communication.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&DataParallelTrainingJob::m_gradientBytes),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("BytesPerElement",
                          "Bytes per gradient element: 4 (fp32, reduced as float), 2 (fp16, "
                          "reduced as half) or 8 (double).",
                          UintegerValue(4),
                          MakeUintegerAccessor(&DataParallelTrainingJob::m_bytesPerElement),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "BucketSize",
                "Largest gradient bucket in bytes (PyTorch DDP bucket_cap_mb, "
                "25 MiB by default); cut to whole elements.",
                UintegerValue(25 * 1024 * 1024),
                MakeUintegerAccessor(&DataParallelTrainingJob::m_bucketSize),
                MakeIbUintegerChecker<uint64_t>("DataParallelTrainingJob", "BucketSize", 1))
            .AddAttribute(
                "GpusPerServer",
                "GPUs per server; their gradients are reduced over NVLink before "
                "and after the inter-server allreduce.",
                UintegerValue(8),
                MakeUintegerAccessor(&DataParallelTrainingJob::m_gpusPerServer),
                MakeIbUintegerChecker<uint32_t>("DataParallelTrainingJob", "GpusPerServer", 1))
            .AddAttribute("IntraServerBandwidth",
                          "Per-GPU bandwidth of the intra-server reduction (NVLink, one "
                          "direction): each of the two NVLink phases of a bucket of B bytes "
                          "takes (g - 1) / g * B / IntraServerBandwidth.",
                          DataRateValue(DataRate("2400Gbps")),
                          MakeDataRateAccessor(&DataParallelTrainingJob::m_intraBandwidth),
                          MakeDataRateChecker())
            .AddAttribute(
                "Iterations",
                "Training iterations every server runs.",
                UintegerValue(1),
                MakeUintegerAccessor(&DataParallelTrainingJob::m_iterations),
                MakeIbUintegerChecker<uint32_t>("DataParallelTrainingJob", "Iterations", 1))
            .AddAttribute("StopWhenDone",
                          "Stop the simulation when every server has run every iteration "
                          "(the transports may keep timers running) and every other job "
                          "of the simulation that has servers and StopWhenDone has too.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&DataParallelTrainingJob::m_stopWhenDone),
                          MakeBooleanChecker())
            .AddTraceSource("BucketReduced",
                            "A bucket has been reduced on every server: iteration, bucket, "
                            "bytes, produced by the last server, reduction start and end.",
                            MakeTraceSourceAccessor(&DataParallelTrainingJob::m_bucketTrace),
                            "ns3::DataParallelTrainingJob::BucketTracedCallback")
            .AddTraceSource("IterationDone",
                            "Every server has ended an iteration: the job's record (start of "
                            "the earliest server, end of the latest).",
                            MakeTraceSourceAccessor(&DataParallelTrainingJob::m_iterationTrace),
                            "ns3::DataParallelTrainingJob::IterationTracedCallback");
    return tid;
}

std::vector<DataParallelTrainingJob*> DataParallelTrainingJob::s_jobs;

DataParallelTrainingJob::DataParallelTrainingJob()
    : m_gradientBytes(0),
      m_bytesPerElement(4),
      m_bucketSize(25 * 1024 * 1024),
      m_gpusPerServer(8),
      m_intraBandwidth("2400Gbps"),
      m_iterations(1),
      m_stopWhenDone(true),
      m_validated(false),
      m_busy(false)
{
    NS_LOG_FUNCTION(this);
}

DataParallelTrainingJob::~DataParallelTrainingJob()
{
    NS_LOG_FUNCTION(this);
}

void
DataParallelTrainingJob::DoDispose()
{
    NS_LOG_FUNCTION(this);
    s_jobs.erase(std::remove(s_jobs.begin(), s_jobs.end(), this), s_jobs.end());
    m_comm = nullptr;
    m_servers.clear();
    m_produced.clear();
    m_pending.clear();
    m_serverRecords.clear();
    Object::DoDispose();
}

void
DataParallelTrainingJob::SetCommunicator(Ptr<CollectiveCommunicator> comm)
{
    NS_LOG_FUNCTION(this << comm);
    m_comm = comm;
}

Ptr<CollectiveCommunicator>
DataParallelTrainingJob::GetCommunicator() const
{
    return m_comm;
}

uint32_t
DataParallelTrainingJob::AddServer(BucketReducedCallback bucketReduced)
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_validated, "DataParallelTrainingJob: add every server before the job starts");
    if (m_servers.empty())
    {
        // Known to the other jobs of this simulation (StopWhenDone) until it is destroyed.
        s_jobs.push_back(this);
        Simulator::ScheduleDestroy([job = this]() {
            s_jobs.erase(std::remove(s_jobs.begin(), s_jobs.end(), job), s_jobs.end());
        });
    }
    m_servers.push_back(bucketReduced);
    return m_servers.size() - 1;
}

uint32_t
DataParallelTrainingJob::GetNServers() const
{
    return m_servers.size();
}

uint32_t
DataParallelTrainingJob::GetGpusPerServer() const
{
    return m_gpusPerServer;
}

uint32_t
DataParallelTrainingJob::GetIterations() const
{
    return m_iterations;
}

uint64_t
DataParallelTrainingJob::GetGradientBytes() const
{
    return m_gradientBytes;
}

std::vector<uint64_t>
DataParallelTrainingJob::GetBucketBytes() const
{
    return m_validated ? m_buckets : ComputeBucketBytes();
}

uint32_t
DataParallelTrainingJob::GetNBuckets() const
{
    return m_validated ? m_buckets.size() : ComputeBucketBytes().size();
}

std::vector<uint64_t>
DataParallelTrainingJob::ComputeBucketBytes() const
{
    NS_ABORT_MSG_UNLESS(m_bytesPerElement == 2 || m_bytesPerElement == 4 || m_bytesPerElement == 8,
                        "DataParallelTrainingJob: BytesPerElement=" << m_bytesPerElement
                                                                    << "; use 2, 4 or 8");
    NS_ABORT_MSG_UNLESS(m_gradientBytes % m_bytesPerElement == 0,
                        "DataParallelTrainingJob: GradientBytes="
                            << m_gradientBytes << " is not a whole number of " << m_bytesPerElement
                            << "-byte elements (BytesPerElement)");
    const uint64_t cap = m_bucketSize / m_bytesPerElement * m_bytesPerElement;
    NS_ABORT_MSG_IF(cap == 0,
                    "DataParallelTrainingJob: BucketSize=" << m_bucketSize
                                                           << " is smaller than one element ("
                                                           << m_bytesPerElement << " bytes)");
    std::vector<uint64_t> sizes;
    for (uint64_t left = m_gradientBytes; left > 0;)
    {
        const uint64_t b = std::min(cap, left);
        sizes.push_back(b);
        left -= b;
    }
    return sizes;
}

Time
DataParallelTrainingJob::GetIntraServerPhaseTime(uint64_t bytes) const
{
    if (m_gpusPerServer <= 1 || bytes == 0)
    {
        return Time(0);
    }
    const long double bps = m_intraBandwidth.GetBitRate();
    NS_ABORT_MSG_IF(bps <= 0,
                    "DataParallelTrainingJob: IntraServerBandwidth must be positive with "
                    "GpusPerServer="
                        << m_gpusPerServer);
    const long double g = m_gpusPerServer;
    const long double ns = (g - 1) / g * bytes * 8.0L * 1e9L / bps;
    return NanoSeconds(static_cast<int64_t>(std::llround(ns)));
}

void
DataParallelTrainingJob::Prepare()
{
    Validate();
}

void
DataParallelTrainingJob::Validate()
{
    if (m_validated)
    {
        return;
    }
    NS_LOG_FUNCTION(this);
    const uint32_t n = m_servers.size();
    NS_ABORT_MSG_IF(n == 0, "DataParallelTrainingJob: no servers (AddServer)");
    if (n > 1)
    {
        NS_ABORT_MSG_UNLESS(m_comm,
                            "DataParallelTrainingJob: " << n
                                                        << " servers need a communicator "
                                                           "(SetCommunicator)");
        NS_ABORT_MSG_UNLESS(m_comm->GetNRanks() == n,
                            "DataParallelTrainingJob: the communicator has "
                                << m_comm->GetNRanks() << " ranks for " << n
                                << " servers; build it over exactly the job's servers");
    }
    m_buckets = ComputeBucketBytes(); // checks BytesPerElement, GradientBytes and BucketSize
    if (m_gpusPerServer > 1)
    {
        NS_ABORT_MSG_IF(m_intraBandwidth.GetBitRate() == 0,
                        "DataParallelTrainingJob: IntraServerBandwidth must be positive with "
                        "GpusPerServer="
                            << m_gpusPerServer);
    }
    m_validated = true;
}

void
DataParallelTrainingJob::BucketProduced(uint32_t rank, uint32_t iteration, uint32_t bucket)
{
    NS_LOG_FUNCTION(this << rank << iteration << bucket);
    Validate();
    const uint64_t key = (static_cast<uint64_t>(iteration) << 32) | bucket;
    uint32_t& count = m_produced[key];
    if (++count < m_servers.size())
    {
        return;
    }
    m_produced.erase(key);
    Pending p;
    p.iteration = iteration;
    p.bucket = bucket;
    p.ready = Simulator::Now();
    m_pending.push_back(p);
    StartNext();
}

void
DataParallelTrainingJob::StartNext()
{
    if (m_busy || m_pending.empty())
    {
        return;
    }
    m_busy = true;
    Pending& p = m_pending.front();
    p.start = Simulator::Now();
    const uint64_t bytes = m_buckets[p.bucket];
    NS_LOG_LOGIC("iteration " << p.iteration << " bucket " << p.bucket << " (" << bytes
                              << " B) starts");
    const Time phase = GetIntraServerPhaseTime(bytes);
    if (phase.IsZero())
    {
        IntraReduceScatterDone();
    }
    else
    {
        Simulator::Schedule(phase, &DataParallelTrainingJob::IntraReduceScatterDone, this);
    }
}

void
DataParallelTrainingJob::IntraReduceScatterDone()
{
    const Pending& p = m_pending.front();
    if (m_servers.size() > 1)
    {
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::ALLREDUCE;
        spec.type = m_bytesPerElement == 2   ? CollectiveDataType::FLOAT16
                    : m_bytesPerElement == 8 ? CollectiveDataType::FLOAT64
                                             : CollectiveDataType::FLOAT32;
        spec.op = CollectiveRedOp::SUM;
        spec.count = m_buckets[p.bucket] / m_bytesPerElement;
        m_comm->Start(spec, nullptr, MakeCallback(&DataParallelTrainingJob::InterServerDone, this));
    }
    else
    {
        InterServerDone(0, Time(0));
    }
}

void
DataParallelTrainingJob::InterServerDone(uint32_t opId, Time duration)
{
    NS_LOG_FUNCTION(this << opId << duration);
    const Time phase = GetIntraServerPhaseTime(m_buckets[m_pending.front().bucket]);
    if (phase.IsZero())
    {
        BucketDone();
    }
    else
    {
        Simulator::Schedule(phase, &DataParallelTrainingJob::BucketDone, this);
    }
}

void
DataParallelTrainingJob::BucketDone()
{
    const Pending p = m_pending.front();
    m_pending.pop_front();
    m_busy = false;
    const Time now = Simulator::Now();
    m_commTime[p.iteration] += now - p.start;
    const uint64_t bytes = m_buckets[p.bucket];
    NS_LOG_LOGIC("iteration " << p.iteration << " bucket " << p.bucket << " reduced in "
                              << (now - p.start).As(Time::US));
    m_bucketTrace(p.iteration, p.bucket, bytes, p.ready, p.start, now);
    for (const auto& s : m_servers)
    {
        s(p.iteration, p.bucket);
    }
    StartNext();
}

void
DataParallelTrainingJob::ServerIterationDone(uint32_t rank,
                                             const DataParallelTrainingRecord& record)
{
    NS_LOG_FUNCTION(this << rank << record.iteration);
    std::vector<DataParallelTrainingRecord>& v = m_serverRecords[record.iteration];
    v.push_back(record);
    if (v.size() < m_servers.size())
    {
        return;
    }
    DataParallelTrainingRecord r = v.front();
    for (const auto& x : v)
    {
        r.start = std::min(r.start, x.start);
        r.end = std::max(r.end, x.end);
        r.compute = std::max(r.compute, x.compute);
    }
    r.communication = m_commTime[record.iteration];
    r.exposed = r.GetDuration() - r.compute;
    r.idleFraction =
        r.GetDuration().IsZero() ? 0.0 : r.exposed.GetSeconds() / r.GetDuration().GetSeconds();
    m_serverRecords.erase(record.iteration);
    m_commTime.erase(record.iteration);
    m_records.push_back(r);
    NS_LOG_INFO("iteration " << r.iteration << ": " << r.GetDuration().As(Time::MS) << ", compute "
                             << r.compute.As(Time::MS) << ", exposed " << r.exposed.As(Time::MS));
    m_iterationTrace(r);
    if (IsFinished() && m_stopWhenDone && AllStoppingJobsFinished())
    {
        Simulator::Stop();
    }
}

bool
DataParallelTrainingJob::AllStoppingJobsFinished()
{
    return std::all_of(s_jobs.begin(), s_jobs.end(), [](const DataParallelTrainingJob* j) {
        return !j->m_stopWhenDone || j->IsFinished();
    });
}

const std::vector<DataParallelTrainingRecord>&
DataParallelTrainingJob::GetRecords() const
{
    return m_records;
}

bool
DataParallelTrainingJob::IsFinished() const
{
    return m_records.size() >= m_iterations;
}

Time
DataParallelTrainingJob::GetMeanIterationTime(uint32_t skip) const
{
    if (m_records.size() <= skip)
    {
        return Time(0);
    }
    Time sum(0);
    for (size_t i = skip; i < m_records.size(); ++i)
    {
        sum += m_records[i].GetDuration();
    }
    return sum / static_cast<int64_t>(m_records.size() - skip);
}

Time
DataParallelTrainingJob::ProjectTimeToTrain(uint64_t samples,
                                            double epochs,
                                            uint64_t globalBatch,
                                            Time iterationTime)
{
    NS_ABORT_MSG_IF(globalBatch == 0,
                    "DataParallelTrainingJob::ProjectTimeToTrain: global batch of 0 samples");
    NS_ABORT_MSG_IF(epochs < 0, "DataParallelTrainingJob::ProjectTimeToTrain: negative epochs");
    const uint64_t perEpoch = (samples + globalBatch - 1) / globalBatch;
    return Seconds(iterationTime.GetSeconds() * static_cast<double>(perEpoch) * epochs);
}

} // namespace ns3

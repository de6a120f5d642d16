/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "data-parallel-training-application.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DataParallelTrainingApplication");

NS_OBJECT_ENSURE_REGISTERED(DataParallelTrainingApplication);

TypeId
DataParallelTrainingApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::DataParallelTrainingApplication")
            .SetParent<Application>()
            .SetGroupName("Infiniband")
            .AddConstructor<DataParallelTrainingApplication>()
            .AddAttribute(
                "ForwardTime",
                "Forward pass of one iteration (used when FlopsPerSample is 0).",
                TimeValue(Time(0)),
                MakeTimeAccessor(&DataParallelTrainingApplication::m_forward),
                MakeIbTimeChecker("DataParallelTrainingApplication", "ForwardTime", Time(0)))
            .AddAttribute(
                "BackwardTime",
                "Backward pass of one iteration, during which the gradient buckets "
                "are produced (used when FlopsPerSample is 0).",
                TimeValue(Time(0)),
                MakeTimeAccessor(&DataParallelTrainingApplication::m_backward),
                MakeIbTimeChecker("DataParallelTrainingApplication", "BackwardTime", Time(0)))
            .AddAttribute(
                "OptimizerTime",
                "Optimizer step, after the last bucket has been reduced.",
                TimeValue(Time(0)),
                MakeTimeAccessor(&DataParallelTrainingApplication::m_optimizer),
                MakeIbTimeChecker("DataParallelTrainingApplication", "OptimizerTime", Time(0)))
            .AddAttribute(
                "FlopsPerSample",
                "Training FLOPs (forward and backward) per sample; when positive the "
                "forward and backward times are derived from it, BatchPerGpu and "
                "GpuFlops (and ForwardTime and BackwardTime must stay 0).",
                DoubleValue(0),
                MakeDoubleAccessor(&DataParallelTrainingApplication::m_flopsPerSample),
                MakeIbDoubleChecker("DataParallelTrainingApplication", "FlopsPerSample", 0))
            .AddAttribute("BatchPerGpu",
                          "Samples per GPU per iteration.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&DataParallelTrainingApplication::m_batchPerGpu),
                          MakeIbUintegerChecker<uint32_t>("DataParallelTrainingApplication",
                                                          "BatchPerGpu",
                                                          1))
            .AddAttribute("GpuFlops",
                          "Sustained FLOP/s of one GPU on this model (with FlopsPerSample).",
                          DoubleValue(0),
                          MakeDoubleAccessor(&DataParallelTrainingApplication::m_gpuFlops),
                          MakeIbDoubleChecker("DataParallelTrainingApplication", "GpuFlops", 0))
            .AddAttribute(
                "BackwardToForwardRatio",
                "Backward compute over forward compute, to split the derived "
                "compute time (2: the backward pass costs twice the forward).",
                DoubleValue(2.0),
                MakeDoubleAccessor(&DataParallelTrainingApplication::m_bwdRatio),
                MakeIbDoubleChecker("DataParallelTrainingApplication", "BackwardToForwardRatio", 0))
            .AddTraceSource(
                "IterationDone",
                "This server has ended an iteration.",
                MakeTraceSourceAccessor(&DataParallelTrainingApplication::m_iterationTrace),
                "ns3::DataParallelTrainingJob::IterationTracedCallback");
    return tid;
}

DataParallelTrainingApplication::DataParallelTrainingApplication()
    : m_forward(0),
      m_backward(0),
      m_optimizer(0),
      m_flopsPerSample(0),
      m_batchPerGpu(1),
      m_gpuFlops(0),
      m_bwdRatio(2.0),
      m_rank(0),
      m_running(false),
      m_iteration(0),
      m_bucketsReduced(0),
      m_backwardDone(false),
      m_stepping(false)
{
    NS_LOG_FUNCTION(this);
}

DataParallelTrainingApplication::~DataParallelTrainingApplication()
{
    NS_LOG_FUNCTION(this);
}

void
DataParallelTrainingApplication::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& e : m_events)
    {
        e.Cancel();
    }
    m_events.clear();
    m_job = nullptr;
    Application::DoDispose();
}

void
DataParallelTrainingApplication::SetJob(Ptr<DataParallelTrainingJob> job)
{
    NS_LOG_FUNCTION(this << job);
    NS_ABORT_MSG_IF(m_job, "DataParallelTrainingApplication: already part of a job");
    NS_ABORT_MSG_UNLESS(job, "DataParallelTrainingApplication: null job");
    m_job = job;
    m_rank = job->AddServer(MakeCallback(&DataParallelTrainingApplication::BucketReduced, this));
}

Ptr<DataParallelTrainingJob>
DataParallelTrainingApplication::GetJob() const
{
    return m_job;
}

uint32_t
DataParallelTrainingApplication::GetRank() const
{
    return m_rank;
}

double
DataParallelTrainingApplication::FlopsDerivedComputeSeconds() const
{
    NS_ABORT_MSG_IF(m_gpuFlops <= 0,
                    "DataParallelTrainingApplication: FlopsPerSample is set, GpuFlops "
                    "must be positive too");
    return m_flopsPerSample * m_batchPerGpu / m_gpuFlops;
}

Time
DataParallelTrainingApplication::GetForwardTime() const
{
    if (m_flopsPerSample > 0)
    {
        return Seconds(FlopsDerivedComputeSeconds() / (1.0 + m_bwdRatio));
    }
    return m_forward;
}

Time
DataParallelTrainingApplication::GetBackwardTime() const
{
    if (m_flopsPerSample > 0)
    {
        return Seconds(FlopsDerivedComputeSeconds() * m_bwdRatio / (1.0 + m_bwdRatio));
    }
    return m_backward;
}

Time
DataParallelTrainingApplication::GetOptimizerTime() const
{
    return m_optimizer;
}

uint32_t
DataParallelTrainingApplication::GetBatchPerGpu() const
{
    return m_batchPerGpu;
}

const std::vector<DataParallelTrainingRecord>&
DataParallelTrainingApplication::GetRecords() const
{
    return m_records;
}

void
DataParallelTrainingApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_UNLESS(m_job,
                        "DataParallelTrainingApplication: no job (SetJob, or "
                        "DataParallelTrainingHelper::Install)");
    NS_ABORT_MSG_IF(m_flopsPerSample > 0 && (!m_forward.IsZero() || !m_backward.IsZero()),
                    "DataParallelTrainingApplication: give either FlopsPerSample (with "
                    "BatchPerGpu and GpuFlops) or ForwardTime/BackwardTime, not both");
    m_job->Prepare(); // the bucket layout is fixed from here on
    m_running = true;
    m_iteration = 0;
    StartIteration();
}

void
DataParallelTrainingApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    // Every bucket is reduced over all servers: one server stopping mid-job would leave
    // the others waiting for it for ever (and, with a link's periodic flow-control
    // refresh pending, Simulator::Run would never return). A job of one server waits for
    // nobody: it just stops.
    NS_ABORT_MSG_IF(m_running && !m_job->IsFinished() && m_job->GetNServers() > 1,
                    "DataParallelTrainingApplication rank "
                        << m_rank << ": stopped at " << Simulator::Now().As(Time::MS)
                        << " in iteration " << m_iteration << " of " << m_job->GetIterations()
                        << ", before the job finished; every server takes part in each bucket's "
                           "allreduce. Stop the simulation instead (Simulator::Stop), or give "
                           "the job fewer Iterations.");
    m_running = false;
    for (auto& e : m_events)
    {
        e.Cancel();
    }
    m_events.clear();
}

void
DataParallelTrainingApplication::StartIteration()
{
    NS_LOG_FUNCTION(this << m_iteration);
    m_iterStart = Simulator::Now();
    m_bucketsReduced = 0;
    m_backwardDone = false;
    m_stepping = false;
    m_events.clear();
    const Time fwd = GetForwardTime();
    const Time bwd = GetBackwardTime();
    // The layout the job froze when it was validated: GradientBytes set later does not
    // apply, to the bucket sizes nor to when they are produced.
    const std::vector<uint64_t> buckets = m_job->GetBucketBytes();
    uint64_t total = 0;
    for (uint64_t b : buckets)
    {
        total += b;
    }
    uint64_t cum = 0;
    for (uint32_t k = 0; k < buckets.size(); ++k)
    {
        cum += buckets[k];
        // produced when the backward pass has covered this bucket's share of the bytes
        const int64_t at = std::llround(static_cast<long double>(bwd.GetTimeStep()) * cum / total);
        m_events.push_back(Simulator::Schedule(fwd + TimeStep(at),
                                               &DataParallelTrainingApplication::ProduceBucket,
                                               this,
                                               k));
    }
    m_events.push_back(
        Simulator::Schedule(fwd + bwd, &DataParallelTrainingApplication::BackwardDone, this));
}

void
DataParallelTrainingApplication::ProduceBucket(uint32_t bucket)
{
    NS_LOG_FUNCTION(this << m_iteration << bucket);
    m_job->BucketProduced(m_rank, m_iteration, bucket);
}

void
DataParallelTrainingApplication::BackwardDone()
{
    NS_LOG_FUNCTION(this << m_iteration);
    m_backwardDone = true;
    MaybeStep();
}

void
DataParallelTrainingApplication::BucketReduced(uint32_t iteration, uint32_t bucket)
{
    NS_LOG_FUNCTION(this << iteration << bucket);
    NS_ASSERT_MSG(iteration == m_iteration, "bucket of another iteration");
    ++m_bucketsReduced;
    MaybeStep();
}

void
DataParallelTrainingApplication::MaybeStep()
{
    if (!m_running || m_stepping || !m_backwardDone || m_bucketsReduced < m_job->GetNBuckets())
    {
        return;
    }
    m_stepping = true;
    m_events.push_back(
        Simulator::Schedule(m_optimizer, &DataParallelTrainingApplication::EndIteration, this));
}

void
DataParallelTrainingApplication::EndIteration()
{
    NS_LOG_FUNCTION(this << m_iteration);
    DataParallelTrainingRecord r;
    r.iteration = m_iteration;
    r.start = m_iterStart;
    r.end = Simulator::Now();
    r.compute = GetForwardTime() + GetBackwardTime() + m_optimizer;
    r.exposed = r.GetDuration() - r.compute;
    r.idleFraction =
        r.GetDuration().IsZero() ? 0.0 : r.exposed.GetSeconds() / r.GetDuration().GetSeconds();
    m_records.push_back(r);
    m_iterationTrace(r);
    m_job->ServerIterationDone(m_rank, r);
    if (++m_iteration < m_job->GetIterations() && m_running)
    {
        StartIteration();
    }
    else
    {
        m_running = false;
        m_events.clear();
    }
}

} // namespace ns3

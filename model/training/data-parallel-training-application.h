/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef DATA_PARALLEL_TRAINING_APPLICATION_H
#define DATA_PARALLEL_TRAINING_APPLICATION_H

#include "data-parallel-training-job.h"

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief One server (GpusPerServer GPUs working in lockstep) of a data-parallel training
 * job (DataParallelTrainingJob): the compute of each iteration and the wait for the
 * gradients.
 *
 * An iteration is: forward pass (ForwardTime), backward pass (BackwardTime) during which
 * the gradient buckets are produced, the wait for the last bucket's reduction, and the
 * optimizer step (OptimizerTime); the next iteration starts when the step ends.
 * Bucket k (of the job's buckets, in backward order) is produced at
 * forward + backward * (bytes of buckets 0..k) / (all gradient bytes): the backward pass
 * is assumed to produce gradient bytes at a constant rate.
 *
 * The compute times are given directly (ForwardTime, BackwardTime) or derived, when
 * FlopsPerSample is set, from FlopsPerSample * BatchPerGpu / GpuFlops split into forward
 * and backward by BackwardToForwardRatio (2: the backward pass costs twice the forward).
 */
class DataParallelTrainingApplication : public Application
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    DataParallelTrainingApplication();
    ~DataParallelTrainingApplication() override;

    /**
     * Join a job (before the application starts).
     * @param job the job
     */
    void SetJob(Ptr<DataParallelTrainingJob> job);
    /// @return the job
    Ptr<DataParallelTrainingJob> GetJob() const;
    /// @return this server's rank in the job
    uint32_t GetRank() const;

    /// @return the forward time of one iteration (given or derived)
    Time GetForwardTime() const;
    /// @return the backward time of one iteration (given or derived)
    Time GetBackwardTime() const;
    /// @return OptimizerTime
    Time GetOptimizerTime() const;
    /// @return BatchPerGpu
    uint32_t GetBatchPerGpu() const;

    /**
     * Called by the job when a bucket of an iteration has been reduced on every server.
     * @param iteration the iteration
     * @param bucket the bucket
     */
    void BucketReduced(uint32_t iteration, uint32_t bucket);

    /// @return this server's iterations so far
    const std::vector<DataParallelTrainingRecord>& GetRecords() const;

  protected:
    void DoDispose() override;

  private:
    /// @return forward + backward seconds from FlopsPerSample x BatchPerGpu / GpuFlops
    double FlopsDerivedComputeSeconds() const;
    void StartApplication() override;
    void StopApplication() override;

    /// Begin an iteration: schedule the backward pass's buckets.
    void StartIteration();
    /**
     * The backward pass has produced a bucket.
     * @param bucket the bucket
     */
    void ProduceBucket(uint32_t bucket);
    /// The backward pass has ended.
    void BackwardDone();
    /// Start the optimizer step if the backward pass and every bucket are done.
    void MaybeStep();
    /// The optimizer step has ended.
    void EndIteration();

    Time m_forward;          //!< ForwardTime attribute
    Time m_backward;         //!< BackwardTime attribute
    Time m_optimizer;        //!< OptimizerTime attribute
    double m_flopsPerSample; //!< FlopsPerSample attribute
    uint32_t m_batchPerGpu;  //!< BatchPerGpu attribute
    double m_gpuFlops;       //!< GpuFlops attribute
    double m_bwdRatio;       //!< BackwardToForwardRatio attribute

    Ptr<DataParallelTrainingJob> m_job; //!< the job
    uint32_t m_rank;                    //!< rank in the job
    bool m_running;                     //!< started and not stopped
    uint32_t m_iteration;               //!< current iteration
    Time m_iterStart;                   //!< its start
    uint32_t m_bucketsReduced;          //!< of the current iteration
    bool m_backwardDone;                //!< of the current iteration
    bool m_stepping;                    //!< optimizer step of the current iteration started
    std::vector<EventId> m_events;      //!< the current iteration's pending compute events
    std::vector<DataParallelTrainingRecord> m_records; //!< finished iterations

    TracedCallback<const DataParallelTrainingRecord&> m_iterationTrace; //!< IterationDone
};

} // namespace ns3

#endif /* DATA_PARALLEL_TRAINING_APPLICATION_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef DATA_PARALLEL_TRAINING_JOB_H
#define DATA_PARALLEL_TRAINING_JOB_H

#include "ns3/callback.h"
#include "ns3/collective-communicator.h"
#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief What one training iteration took (of one server, or of the whole job).
 */
struct DataParallelTrainingRecord
{
    uint32_t iteration{0};  ///< iteration number, from 0
    Time start;             ///< the iteration's forward pass began
    Time end;               ///< its optimizer step ended
    Time compute;           ///< forward + backward + optimizer step (GPU busy)
    Time communication;     ///< sum of the buckets' allreduce times (busy, overlapped or not)
    Time exposed;           ///< (end - start) - compute: time the GPUs waited for gradients
    double idleFraction{0}; ///< exposed / (end - start)

    /// @return end - start
    Time GetDuration() const
    {
        return end - start;
    }
};

/**
 * @ingroup infiniband-training
 * @brief The shared part of a data-parallel training job (PyTorch DDP style): the
 * gradient buckets, the inter-server communicator and the order in which the buckets are
 * all-reduced; one DataParallelTrainingApplication per server computes and hands its
 * buckets here.
 *
 * Gradients (GradientBytes, elements of BytesPerElement bytes) are cut into buckets of
 * BucketSize bytes, the last one holding the remainder; bucket 0 is the first produced by
 * the backward pass. A bucket's reduction starts when every server has produced it (as
 * NCCL's collective does) and after the previous bucket's reduction has finished: the
 * reductions run one at a time, in bucket order, as on DDP's single NCCL stream.
 *
 * One bucket's reduction is hierarchical (intra-server model):
 * 1. reduce-scatter among the GpusPerServer GPUs of each server over NVLink, modelled as
 *    the time (g - 1) / g * bytes / IntraServerBandwidth (a ring's bus-bandwidth cost);
 * 2. allreduce of the bucket among the servers over the fabric, on the
 *    CollectiveCommunicator (rank i = server i), simulated packet by packet; each server
 *    reaches the fabric through one port (its topology host), which carries the whole
 *    bucket;
 * 3. allgather among the GPUs of each server over NVLink, the same time as step 1.
 *
 * With one GPU per server steps 1 and 3 take no time; with one server step 2 is skipped
 * (no communicator is needed).
 */
class DataParallelTrainingJob : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();
    DataParallelTrainingJob();
    ~DataParallelTrainingJob() override;

    /**
     * @param comm the inter-server communicator: rank i is the i-th server added (may be
     *        null when the job has a single server)
     */
    void SetCommunicator(Ptr<CollectiveCommunicator> comm);
    /// @return the communicator (or null)
    Ptr<CollectiveCommunicator> GetCommunicator() const;

    /**
     * Called on every server when a bucket is all-reduced: iteration, bucket.
     */
    typedef Callback<void, uint32_t, uint32_t> BucketReducedCallback;
    /**
     * Add a server; its rank is the number of servers added before it. Its application
     * (DataParallelTrainingApplication::SetJob) calls this.
     * @param bucketReduced what to tell the server when a bucket is all-reduced
     * @return its rank
     */
    uint32_t AddServer(BucketReducedCallback bucketReduced);
    /// @return the number of servers
    uint32_t GetNServers() const;
    /// @return GpusPerServer
    uint32_t GetGpusPerServer() const;
    /// @return Iterations
    uint32_t GetIterations() const;

    /**
     * Check the attributes and the servers and fix the bucket layout, once: each server's
     * application calls it when it starts. Later changes to GradientBytes,
     * BytesPerElement or BucketSize do not apply.
     */
    void Prepare();
    /**
     * @return the bucket sizes in bytes, in the order the backward pass produces them;
     * once the job started (Prepare), the layout the job runs with (later changes to
     * GradientBytes, BytesPerElement or BucketSize do not apply to a running job)
     */
    std::vector<uint64_t> GetBucketBytes() const;
    /// @return the number of buckets (GetBucketBytes().size(), without building the list)
    uint32_t GetNBuckets() const;
    /// @return GradientBytes
    uint64_t GetGradientBytes() const;
    /**
     * @param bytes a bucket's size
     * @return the time of one NVLink phase (reduce-scatter or allgather) for it:
     *         (g - 1) / g * bytes / IntraServerBandwidth (zero for g = 1)
     */
    Time GetIntraServerPhaseTime(uint64_t bytes) const;

    /**
     * Called by a server when its backward pass has produced a bucket.
     * @param rank the server
     * @param iteration its iteration
     * @param bucket the bucket
     */
    void BucketProduced(uint32_t rank, uint32_t iteration, uint32_t bucket);
    /**
     * Called by a server when it has ended an iteration.
     * @param rank the server
     * @param record what the iteration took on that server
     */
    void ServerIterationDone(uint32_t rank, const DataParallelTrainingRecord& record);

    /// @return the job's iterations finished so far (start: earliest server, end: latest)
    const std::vector<DataParallelTrainingRecord>& GetRecords() const;
    /// @return true when every server has run every iteration
    bool IsFinished() const;
    /**
     * @param skip iterations at the start left out (warm-up: TCP handshakes)
     * @return the mean iteration time of the remaining finished iterations (Time(0) if none)
     */
    Time GetMeanIterationTime(uint32_t skip = 0) const;
    /**
     * Projected time to train: ceil(samples / globalBatch) iterations per epoch, times
     * @p epochs, times @p iterationTime.
     * @param samples training samples per epoch
     * @param epochs epochs
     * @param globalBatch samples per iteration over all GPUs
     * @param iterationTime time of one iteration
     * @return the projected time
     */
    static Time ProjectTimeToTrain(uint64_t samples,
                                   double epochs,
                                   uint64_t globalBatch,
                                   Time iterationTime);

    /**
     * TracedCallback signature of BucketReduced.
     * @param iteration the iteration
     * @param bucket the bucket
     * @param bytes its size
     * @param ready when the last server produced it
     * @param start when its reduction started
     * @param end when its reduction ended
     */
    typedef void (*BucketTracedCallback)(uint32_t iteration,
                                         uint32_t bucket,
                                         uint64_t bytes,
                                         Time ready,
                                         Time start,
                                         Time end);
    /**
     * TracedCallback signature of IterationDone.
     * @param record the job's iteration
     */
    typedef void (*IterationTracedCallback)(const DataParallelTrainingRecord& record);

  protected:
    void DoDispose() override;

  private:
    /// A bucket that every server has produced, waiting for or in its reduction.
    struct Pending
    {
        uint32_t iteration{0}; ///< iteration
        uint32_t bucket{0};    ///< bucket
        Time ready;            ///< produced by the last server
        Time start;            ///< reduction started
    };

    /// Check the attributes and the servers once, before the first bucket, and fix the
    /// bucket layout (m_buckets).
    void Validate();
    /// @return the bucket sizes the attributes give now
    std::vector<uint64_t> ComputeBucketBytes() const;
    /**
     * @return whether no job that stops the simulation when it is done (StopWhenDone) and
     * has servers in this simulation is still running
     */
    static bool AllStoppingJobsFinished();
    /// Start the next pending reduction if none is running.
    void StartNext();
    /// The first NVLink phase of the head bucket has ended: start the inter-server allreduce.
    void IntraReduceScatterDone();
    /**
     * The inter-server allreduce of the head bucket has ended.
     * @param opId the communicator's operation id
     * @param duration its duration
     */
    void InterServerDone(uint32_t opId, Time duration);
    /// The head bucket is fully reduced: tell the servers, go on with the next.
    void BucketDone();

    uint64_t m_gradientBytes;   //!< GradientBytes attribute
    uint32_t m_bytesPerElement; //!< BytesPerElement attribute
    uint64_t m_bucketSize;      //!< BucketSize attribute
    uint32_t m_gpusPerServer;   //!< GpusPerServer attribute
    DataRate m_intraBandwidth;  //!< IntraServerBandwidth attribute
    uint32_t m_iterations;      //!< Iterations attribute
    bool m_stopWhenDone;        //!< StopWhenDone attribute

    Ptr<CollectiveCommunicator> m_comm;           //!< inter-server ranks
    std::vector<BucketReducedCallback> m_servers; //!< by rank
    bool m_validated;                             //!< Validate has run
    std::vector<uint64_t> m_buckets;              //!< bucket sizes, fixed by Validate

    /// Jobs with servers in the current simulation (until Simulator::Destroy)
    static std::vector<DataParallelTrainingJob*> s_jobs;
    std::map<uint64_t, uint32_t>
        m_produced;                //!< (iteration, bucket) key -> servers that produced it
    std::deque<Pending> m_pending; //!< produced by all, in order
    bool m_busy;                   //!< a reduction is running (the head of m_pending)
    std::map<uint32_t, std::vector<DataParallelTrainingRecord>>
        m_serverRecords;                 //!< iteration -> per server
    std::map<uint32_t, Time> m_commTime; //!< iteration -> sum of its buckets' reduction times
    std::vector<DataParallelTrainingRecord> m_records; //!< the job's iterations

    TracedCallback<uint32_t, uint32_t, uint64_t, Time, Time, Time> m_bucketTrace; //!< BucketReduced
    TracedCallback<const DataParallelTrainingRecord&> m_iterationTrace;           //!< IterationDone
};

} // namespace ns3

#endif /* DATA_PARALLEL_TRAINING_JOB_H */

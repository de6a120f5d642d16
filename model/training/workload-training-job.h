/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef WORKLOAD_TRAINING_JOB_H
#define WORKLOAD_TRAINING_JOB_H

#include "training-workload-file.h"

#include "ns3/collective-communicator.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <array>
#include <map>
#include <set>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief What one training iteration of a WorkloadTrainingJob took on one rank.
 */
struct WorkloadIterationRecord
{
    uint32_t iteration{0}; ///< which
    uint32_t rank{0};      ///< whose
    Time start;            ///< the previous iteration's end (the job's start for the first)
    Time end;              ///< its steps were taken and its collectives were done
    Time compute;          ///< compute time of the iteration
    /// time the rank waited for collectives (and their update delays), per group kind: while
    /// it took its steps, and after its last step for its last asynchronous collectives (to
    /// the kind of the last of them to end); PP: waiting for a pipeline transfer that had
    /// started
    std::array<Time, 7> exposed;
    /// pipeline bubble: time the rank waited for a pipeline neighbour that had not yet sent
    /// what it needed (PipelineSchedule 1F1B or GPipe)
    Time bubble;

    /// @return end - start
    Time GetDuration() const
    {
        return end - start;
    }
};

/**
 * @ingroup infiniband-training
 * @brief One interval of a rank's time in a WorkloadTrainingJob: computing, waiting for a
 * collective of a group kind, or in the pipeline bubble (the Activity trace: timelines).
 */
struct WorkloadActivity
{
    static constexpr uint8_t COMPUTE = 254; ///< @c what: computing
    static constexpr uint8_t BUBBLE = 255;  ///< @c what: waiting for a pipeline neighbour

    uint32_t rank{0};      ///< whose
    uint32_t iteration{0}; ///< the iteration it is counted to
    /// COMPUTE, BUBBLE, or the WorkloadTrainingJob::GroupKind whose collective it waited for
    uint8_t what{COMPUTE};
    Time start; ///< from
    Time end;   ///< to
};

/**
 * @ingroup infiniband-training
 * @brief Runs a TrainingWorkloadFile (ASTRA-sim 1.0 / SimAI workload) on GPU ranks whose
 * collectives go through CollectiveCommunicators, one per group of ranks.
 *
 * Every rank walks the same loop, as ASTRA-sim's workload layer does:
 * - HYBRID_TRANSFORMER(_FWD_IN_BCKWD): forward over layers 0..L-1 (each waits for its
 *   weight-gradient collective of the previous iteration, computes, then runs its forward
 *   collective to the end); backward over L-1..0 (input-gradient compute and collective to
 *   the end, then weight-gradient compute and its collective issued without waiting).
 *   Forward and input-gradient collectives run in the rank's tensor-parallel group,
 *   weight-gradient ones in its data-parallel group; the _EP and _DP_EP suffixes name the
 *   expert and data-across-experts groups. FWD_IN_BCKWD recomputes: at an initiator layer
 *   the forward passes from the nearest earlier checkpoint run again first.
 * - DATA: forward computes only; backward computes the weight gradient, issues its
 *   collective among all ranks, then computes the input gradient (not for layer 0).
 * - MODEL: forward collectives among all ranks, to the end; backward computes the input
 *   gradient, issues its collective (not for layer 0), computes the weight gradient and
 *   waits for the input-gradient collective.
 * - MICRO: layer 0's weight-gradient collective among all ranks; DISTRIBUTED_INFERENCE:
 *   forward passes only.
 * A collective starts when every rank of its group has reached it; a rank that waits on
 * it goes on UpdateDelay ticks after it ends. Groups as SimAI builds them: tensor-parallel
 * groups of TP consecutive ranks, data-parallel groups of the ranks TP x PP apart
 * (DP = n / (TP PP)), expert groups of EP consecutive members of a data-parallel group,
 * data-across-experts groups of its members EP apart. Collective sizes are each rank's
 * buffer: the allreduce's, the gathered output of an allgather, the input of a
 * reduce-scatter, the send buffer of an all-to-all. Compute takes its ticks times
 * TickTime. The DLRM, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA and HYBRID_CUSTOMIZED loops
 * are not run (refused).
 *
 * Pipeline parallelism (the file's pp): with PipelineSchedule None it changes only the
 * groups, as in SimAI's packet-level mode. With 1F1B or GPipe the transformer loops run as
 * a pipeline: rank r is stage (r / TP) mod PP of pipeline (r / (TP PP)) TP + r mod TP; the
 * layers are split into PP contiguous stages (the first L mod PP stages one layer more,
 * unless a builder set each layer's stage);
 * an iteration is M micro-batches (MicroBatches, or the file's ga), each a forward and a
 * backward pass of the stage's layers with the file's compute times and tensor-parallel
 * collectives. A forward pass first receives the activations from the previous stage and
 * ends by sending its own to the next; a backward pass receives the gradient from the
 * next stage and sends one to the previous; each transfer is pp_comm bytes (a two-rank
 * broadcast in the PP group of the two stages; no bytes: a dependency that takes no time).
 * A send is posted without waiting (a receive buffer is always posted, as NCCL's
 * batched send/receive does), the receiver waits for the data. Weight-gradient
 * collectives run once per iteration, in the last micro-batch's backward pass. 1F1B:
 * stage s runs min(PP - s - 1, M) forwards, then alternates a forward and a backward, then
 * the remaining backwards. Waiting for a neighbour that has not yet sent is the bubble;
 * waiting for a transfer that has started is exposed PP time.
 */
class WorkloadTrainingJob : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    WorkloadTrainingJob();
    ~WorkloadTrainingJob() override;

    /// Kinds of rank groups.
    enum GroupKind : uint8_t
    {
        TP = 0,    ///< tensor (model) parallel
        DP = 1,    ///< data parallel
        EP = 2,    ///< expert parallel
        DP_EP = 3, ///< data parallel across expert groups
        ALL = 4,   ///< every rank
        PP = 5,    ///< two neighbouring stages of a pipeline (send/receive between them)
        EMB = 6    ///< a pipeline's first and last stage (the tied embedding's gradient)
    };

    /// Number of group kinds.
    static constexpr uint32_t N_GROUP_KINDS = 7;

    /// How the micro-batches of a pipeline-parallel workload are scheduled.
    enum PipelineSchedule : uint8_t
    {
        PIPELINE_NONE,  ///< pp only builds the groups; no stages (SimAI's packet-level mode)
        PIPELINE_1F1B,  ///< one forward, one backward (PipeDream-Flush, Megatron's default)
        PIPELINE_GPIPE, ///< every forward, then every backward (GPipe)
    };

    /**
     * @param k a group kind
     * @return its name ("TP", ...)
     */
    static std::string GroupKindName(GroupKind k);

    /**
     * Set the workload and the number of ranks, and build the groups; aborts naming the
     * file and what to change if they do not fit (TP x PP not dividing the ranks, EP not
     * dividing DP, a loop that is not run).
     * @param workload the workload
     * @param ranks GPUs
     * @param source the workload's name, for messages
     */
    void Setup(const TrainingWorkloadFile& workload, uint32_t ranks, const std::string& source);
    /**
     * @param kind a group kind
     * @return true if some collective of the workload runs in groups of this kind
     */
    bool Uses(GroupKind kind) const;
    /**
     * @param kind a group kind
     * @return its groups, each a list of ranks in communicator-rank order
     */
    const std::vector<std::vector<uint32_t>>& GetGroups(GroupKind kind) const;
    /**
     * @param kind a group kind the workload uses
     * @param index a group of it
     * @param comm the communicator over that group's ranks, in GetGroups order
     */
    void SetCommunicator(GroupKind kind, uint32_t index, Ptr<CollectiveCommunicator> comm);
    /**
     * @param kind a group kind
     * @param index a group of it
     * @return its communicator (null if none was set)
     */
    Ptr<CollectiveCommunicator> GetCommunicator(GroupKind kind, uint32_t index) const;

    /// Start every rank's first iteration now.
    void Start();
    /// @return true once every rank has finished every iteration
    bool IsDone() const;
    /// @return every rank's records, iteration by iteration
    const std::vector<WorkloadIterationRecord>& GetRecords() const;
    /**
     * @param iteration an iteration
     * @return the slowest rank's record of it
     */
    WorkloadIterationRecord GetSlowest(uint32_t iteration) const;
    /// @return the number of ranks
    uint32_t GetNRanks() const;
    /// @return collectives started, over all groups
    uint64_t GetCollectives() const;

    /**
     * TracedCallback signature of IterationDone.
     * @param record the rank's record
     */
    typedef void (*IterationTracedCallback)(const WorkloadIterationRecord& record);
    /**
     * TracedCallback signature of Activity.
     * @param activity the interval
     */
    typedef void (*ActivityTracedCallback)(const WorkloadActivity& activity);

  protected:
    void DoDispose() override;

  private:
    /// One step of the loop every rank walks.
    struct Step
    {
        enum Kind : uint8_t
        {
            COMPUTE,    ///< compute for @c ticks
            COLLECTIVE, ///< a collective
            WAIT        ///< wait for an earlier asynchronous collective
        };

        Kind kind{COMPUTE};                            ///< what
        uint64_t ticks{0};                             ///< COMPUTE
        GroupKind group{ALL};                          ///< COLLECTIVE: among whom
        TrainingWorkloadFile::Collective collective{}; ///< COLLECTIVE: what
        uint64_t bytes{0};                             ///< COLLECTIVE: size
        bool blocking{true};                           ///< COLLECTIVE: wait for it
        uint64_t updateDelay{0};                       ///< COLLECTIVE: ticks after it
        uint32_t waitFor{0};                           ///< WAIT: the asynchronous COLLECTIVE step
        bool previous{false}; ///< WAIT: that step's collective of the previous iteration
        bool down{false};     ///< PP: toward the next stage (activations), else gradients
    };

    /// A collective of one group, while its ranks arrive and run it.
    struct Pending
    {
        uint32_t arrived{0};           ///< ranks that reached it
        std::vector<uint32_t> waiting; ///< ranks blocked on it
        std::vector<uint32_t> async;   ///< ranks that went on (asynchronous)
        uint32_t step{0};              ///< its step (PP: the sender's)
        uint32_t iteration{0};         ///< its iteration (PP: the sender's)
        uint64_t updateDelay{0};       ///< ticks after it ends
        bool started{false};           ///< PP: the sender has sent
    };

    /// A group's communicator and its collectives in flight.
    struct GroupState
    {
        Ptr<CollectiveCommunicator> comm; ///< over its ranks
        std::map<uint64_t, Pending> open; ///< by the group's collective number
        std::set<uint64_t> arrived;       ///< PP: transfers done before their receiver came
    };

    /// A rank's progress.
    struct RankState
    {
        uint32_t step{0};                            ///< next step
        uint32_t iteration{0};                       ///< current iteration
        bool blocked{false};                         ///< waiting
        Time since;                                  ///< blocked since
        GroupKind blockedOn{ALL};                    ///< for the exposed time
        uint32_t blockedIteration{0};                ///< whose exposed time it is
        std::array<uint64_t, N_GROUP_KINDS> count{}; ///< collectives reached per kind
        std::array<uint64_t, 4> p2p{};      ///< PP transfers reached: (down ? 2 : 0) + (sender)
        std::vector<int64_t> doneIteration; ///< per step: last iteration its collective ended
        std::vector<WorkloadIterationRecord> recs; ///< per iteration
        std::vector<uint32_t> asyncOpen;           ///< per iteration: collectives not ended
        std::vector<bool> stepsDone;               ///< per iteration: every step taken
        std::vector<Time> stepsDoneAt;             ///< per iteration: when
        std::vector<GroupKind> lastAsync;          ///< per iteration: last collective to end
        std::vector<bool> ended;                   ///< per iteration: record kept
    };

    /// Build the loop from the workload (one loop for every rank).
    void BuildSteps();
    /**
     * Build a pipeline stage's loop (PipelineSchedule 1F1B or GPipe).
     * @param stage the stage
     */
    void BuildPipelineStage(uint32_t stage);
    /**
     * Append a compute step (nothing for no ticks).
     * @param ticks its time
     */
    void AddCompute(uint64_t ticks);
    /**
     * Append a wait step.
     * @param step the asynchronous collective step waited for
     * @param previous its collective of the previous iteration
     */
    void AddWait(uint32_t step, bool previous);
    /**
     * Append the forward recomputation an initiator layer of a FWD_IN_BCKWD workload does
     * before its backward pass (nothing for other layers).
     * @param l the layer
     * @param first the first layer the rank holds (recomputation starts no earlier)
     */
    void AddRecompute(uint32_t l, uint32_t first);
    /**
     * Append a pipeline transfer step.
     * @param down toward the next stage
     * @param send the rank sends (else receives)
     */
    void AddTransfer(bool down, bool send);
    /**
     * Point the forward passes' waits at their layers' weight-gradient collectives of the
     * previous iteration (and drop those of layers that have none).
     * @param waitSteps per layer: the steps waiting (UINT32_MAX waitFor), in order
     * @param wgStep per layer: its weight-gradient step (UINT32_MAX: none)
     */
    void PatchWaits(const std::vector<std::vector<uint32_t>>& waitSteps,
                    const std::vector<uint32_t>& wgStep);
    /**
     * @param r a rank
     * @return its loop
     */
    const std::vector<Step>& StepsOf(uint32_t r) const;
    /**
     * A rank reaches a pipeline transfer step.
     * @param r the rank
     * @param s the step
     * @return true if the rank may go on at once
     */
    bool ArriveTransfer(uint32_t r, uint32_t s);
    /**
     * Append a collective step (nothing for NONE or no bytes).
     * @param layer the layer
     * @param pass its pass
     * @param group the group kind
     * @param blocking wait for it
     * @return its step index, or UINT32_MAX if none was added
     */
    uint32_t AddCollective(const TrainingWorkloadFile::Layer& layer,
                           TrainingWorkloadFile::Pass pass,
                           GroupKind group,
                           bool blocking);
    /**
     * @param p a pass of the transformer loops
     * @param g its group suffix
     * @return the group kind
     */
    static GroupKind TransformerGroup(TrainingWorkloadFile::Pass p, TrainingWorkloadFile::Group g);
    /**
     * Take a rank's steps until it blocks or ends its iteration.
     * @param r the rank
     */
    void Advance(uint32_t r);
    /**
     * A rank reaches a collective step.
     * @param r the rank
     * @param s the step
     * @return true if the rank may go on at once
     */
    bool Arrive(uint32_t r, uint32_t s);
    /**
     * A group's collective ended.
     * @param kind the group kind
     * @param group the group
     * @param number the group's collective number
     */
    void CollectiveDone(GroupKind kind, uint32_t group, uint64_t number);
    /**
     * End a rank's iteration once its steps and its collectives are done.
     * @param r the rank
     * @param iteration the iteration
     */
    void MaybeEndIteration(uint32_t r, uint32_t iteration);

    Time m_tick;                 //!< TickTime attribute
    uint32_t m_iterations;       //!< Iterations attribute
    PipelineSchedule m_schedule; //!< PipelineSchedule attribute
    uint32_t m_microBatches;     //!< MicroBatches attribute (0: the file's ga)
    uint32_t m_virtualStages;    //!< VirtualStages attribute (0: the file's vpp)
    uint32_t m_vpp{1};           //!< model chunks per stage in use

    TrainingWorkloadFile m_workload;             //!< what runs
    std::string m_source;                        //!< its name
    uint32_t m_ranks{0};                         //!< GPUs
    std::vector<Step> m_steps;                   //!< the loop being built
    std::vector<std::vector<Step>> m_stageSteps; //!< per stage: its loop
    std::vector<uint32_t> m_stageOf;             //!< per rank: its stage
    std::vector<uint32_t> m_pipelineOf;          //!< per rank: its pipeline
    uint32_t m_stages{1};                        //!< pipeline stages (1: none)
    std::vector<uint32_t> m_stageFirst;          //!< per model chunk and one more: its first layer
    uint32_t m_mb{1};                            //!< micro-batches per iteration
    std::array<std::vector<std::vector<uint32_t>>, N_GROUP_KINDS> m_groups; //!< per kind
    std::array<std::vector<uint32_t>, N_GROUP_KINDS> m_groupOf;     //!< per kind: rank's group
    std::array<std::vector<GroupState>, N_GROUP_KINDS> m_state;     //!< per kind, per group
    std::array<bool, N_GROUP_KINDS> m_uses{};                       //!< kinds used
    std::vector<RankState> m_rank;                                  //!< per rank
    std::vector<WorkloadIterationRecord> m_records;                 //!< finished iterations
    uint32_t m_ranksDone{0};                                        //!< ranks finished
    uint64_t m_collectives{0};                                      //!< collectives started
    TracedCallback<const WorkloadIterationRecord&> m_iterationDone; //!< IterationDone
    TracedCallback<const WorkloadActivity&> m_activity;             //!< Activity
    /**
     * Fire Activity (if anything is connected and the interval is not empty).
     * @param r the rank
     * @param iteration its iteration
     * @param what COMPUTE, BUBBLE or a GroupKind
     * @param start from
     * @param end to
     */
    void Report(uint32_t r, uint32_t iteration, uint8_t what, Time start, Time end);
};

} // namespace ns3

#endif /* WORKLOAD_TRAINING_JOB_H */

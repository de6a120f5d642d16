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
    /// the kind of the last of them to end)
    std::array<Time, 5> exposed;

    /// @return end - start
    Time GetDuration() const
    {
        return end - start;
    }
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
 * TickTime. Pipeline parallelism changes only the groups (no send/receive between
 * stages, as in SimAI's packet-level mode); the DLRM, HYBRID_DATA_MODEL,
 * HYBRID_MODEL_DATA and HYBRID_CUSTOMIZED loops are not run (refused).
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
        ALL = 4    ///< every rank
    };

    /// Number of group kinds.
    static constexpr uint32_t N_GROUP_KINDS = 5;
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
    };

    /// A collective of one group, while its ranks arrive and run it.
    struct Pending
    {
        uint32_t arrived{0};           ///< ranks that reached it
        std::vector<uint32_t> waiting; ///< ranks blocked on it
        std::vector<uint32_t> async;   ///< ranks that went on (asynchronous)
        uint32_t step{0};              ///< its step
        uint32_t iteration{0};         ///< its iteration
    };

    /// A group's communicator and its collectives in flight.
    struct GroupState
    {
        Ptr<CollectiveCommunicator> comm; ///< over its ranks
        std::map<uint64_t, Pending> open; ///< by the group's collective number
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
        std::vector<int64_t> doneIteration; ///< per step: last iteration its collective ended
        std::vector<WorkloadIterationRecord> recs; ///< per iteration
        std::vector<uint32_t> asyncOpen;           ///< per iteration: collectives not ended
        std::vector<bool> stepsDone;               ///< per iteration: every step taken
        std::vector<Time> stepsDoneAt;             ///< per iteration: when
        std::vector<GroupKind> lastAsync;          ///< per iteration: last collective to end
        std::vector<bool> ended;                   ///< per iteration: record kept
    };

    /// Build the loop from the workload.
    void BuildSteps();
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

    Time m_tick;           //!< TickTime attribute
    uint32_t m_iterations; //!< Iterations attribute

    TrainingWorkloadFile m_workload;                                        //!< what runs
    std::string m_source;                                                   //!< its name
    uint32_t m_ranks{0};                                                    //!< GPUs
    std::vector<Step> m_steps;                                              //!< the loop
    std::array<std::vector<std::vector<uint32_t>>, N_GROUP_KINDS> m_groups; //!< per kind
    std::array<std::vector<uint32_t>, N_GROUP_KINDS> m_groupOf;     //!< per kind: rank's group
    std::array<std::vector<GroupState>, N_GROUP_KINDS> m_state;     //!< per kind, per group
    std::array<bool, N_GROUP_KINDS> m_uses{};                       //!< kinds used
    std::vector<RankState> m_rank;                                  //!< per rank
    std::vector<WorkloadIterationRecord> m_records;                 //!< finished iterations
    uint32_t m_ranksDone{0};                                        //!< ranks finished
    uint64_t m_collectives{0};                                      //!< collectives started
    TracedCallback<const WorkloadIterationRecord&> m_iterationDone; //!< IterationDone
};

} // namespace ns3

#endif /* WORKLOAD_TRAINING_JOB_H */

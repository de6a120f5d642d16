/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef SHARP_COLLECTIVE_ALGORITHM_H
#define SHARP_COLLECTIVE_ALGORITHM_H

#include "sharp-aggregation-node.h"

#include "ns3/collective-algorithm.h"
#include "ns3/event-id.h"
#include "ns3/ib-verbs.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <array>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

class IbCompletionQueue;
class IbHca;
class IbMemoryRegion;
class IbQueuePair;
class SharpAggregationManager;

/**
 * @ingroup infiniband-sharp
 * @brief SHARP in-network allreduce, reduce and barrier: the hosts' side of SHARP.
 *
 * Setup gives every rank a UD queue pair and asks the SharpAggregationManager for an
 * aggregation tree over the ranks' hosts. An operation is cut into fragments; each rank
 * sends each fragment (SEND with immediate, the immediate carrying channel and sequence
 * number) to the aggregation node of its leaf switch and receives the result from it.
 * Operations of up to SatThreshold bytes use the low-latency channel with fragments of
 * LltFragmentSize bytes; larger ones claim a streaming flow on every switch of the tree
 * and use the streaming channel with fragments of SatFragmentSize bytes. A rank keeps at
 * most a channel's window of fragments in flight (see SharpTree).
 *
 * When SHARP cannot serve an operation the algorithm falls back, as SHARP-enabled
 * libraries do: if the tree was refused (MaxTrees exhausted, a switch without an
 * aggregation node, hosts not on switches) every operation, and if no streaming flow is
 * free a large operation, runs host-based with FallbackAlgorithm (default "ring"). With
 * FallbackAlgorithm "none" a refused tree aborts the simulation with the reason, and a
 * large operation without a streaming flow runs on the low-latency channel instead.
 * Reduce-scatter, allgather and broadcast always run host-based (FallbackAlgorithm).
 *
 * A link change that takes a route of the tree (SharpAggregationManager marks it broken
 * after the subnet manager's reroute) loses the operations in flight on it, as a SHARP
 * job whose tree lost a link is stopped: their fragments are not resent. The algorithm
 * puts every rank's inputs back in its buffer and has the communicator run each lost
 * operation again host-based with FallbackAlgorithm (CollectiveCommunicator
 * InNetworkRestart trace, GetRestarts); the next operation builds another tree. Without
 * rerouting, OperationTimeout declares operations lost that get no result for so long.
 */
class SharpCollectiveAlgorithm : public CollectiveAlgorithm
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    SharpCollectiveAlgorithm();
    ~SharpCollectiveAlgorithm() override;

    std::string GetName() const override;

    /**
     * Create the ranks' queue pairs and the aggregation tree.
     * @param am the fabric's aggregation manager
     * @param hcas the ranks' HCAs, rank order
     * @return true if SHARP serves this group (false: the tree was refused and every
     *         operation falls back; GetRefusal says why)
     */
    bool Setup(Ptr<SharpAggregationManager> am, const std::vector<Ptr<IbHca>>& hcas);

    /// @return the tree (null if refused or not set up)
    Ptr<SharpTree> GetTree() const;
    /// @return why the tree was refused (empty if it was not)
    std::string GetRefusal() const;
    /// @return operations run in the network
    uint64_t GetInNetworkOps() const;
    /// @return operations SHARP could serve in principle that ran host-based
    uint64_t GetFallbackOps() const;
    /// @return allreduce and reduce operations with PROD, which SHARP cannot reduce: they
    ///         ran host-based with FallbackAlgorithm (not counted in GetFallbackOps)
    uint64_t GetProdOps() const;
    /// @return large operations that ran on the low-latency channel for lack of a flow
    uint64_t GetLltInsteadOfSatOps() const;
    /// @return trees built again because a link change broke the one in use
    uint64_t GetTreeRebuilds() const;
    /// @return operations lost in the network (broken tree or OperationTimeout) and run
    ///         again host-based
    uint64_t GetRestartedOps() const;

    void Build(const CollectiveOpSpec& spec,
               uint32_t rank,
               uint32_t n,
               uint64_t chunkBytes,
               std::vector<CollectiveStep>& prog) const override;

    bool StartInNetwork(const CollectiveOpSpec& spec,
                        uint32_t n,
                        std::vector<std::vector<uint8_t>>* buffers,
                        RankDoneCallback rankDone,
                        RestartCallback restart) override;

  protected:
    void DoDispose() override;
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;

  private:
    /// Give back the queue pairs, regions, tree and streaming flow (Dispose, destructor).
    void Release();
    /**
     * The tree is broken (a link change took a route it used) and no operation is on it:
     * ask the manager for another over the same hosts, as the SHARP daemons do. A new tree
     * with other windows than the ranks' buffers were set up for is refused too.
     * @return true if there is a usable tree again (else m_tree is null, m_refusal says why)
     */
    bool RebuildTree();
    /// The manager marked the tree broken: lose what is in flight on it (scheduled).
    void TreeBroken();
    /**
     * Give up the operations in flight: put the ranks' inputs back and have the
     * communicator run them host-based; the tree is not used again.
     * @param why for the message
     */
    void LoseInFlight(const std::string& why);
    /// Arm the OperationTimeout watchdog if it is on and not armed.
    void ArmWatchdog();
    /// The watchdog's event: lose the operations if none made progress for the timeout.
    void Watchdog();

    /// An operation in the network.
    struct Op
    {
        CollectiveOpSpec spec;                               ///< what
        std::vector<std::vector<uint8_t>>* buffers{nullptr}; ///< data or null
        RankDoneCallback rankDone;                           ///< per-rank completion
        RestartCallback restart;                             ///< the network lost it
        std::vector<std::vector<uint8_t>> saved; ///< data mode: per rank, the inputs, kept
                                                 ///< when the first result overwrites them
        uint8_t ch{0};                           ///< channel
        bool streaming{false};                   ///< holds streaming flows
        uint32_t firstSeq{0};                    ///< first fragment
        uint32_t nFrag{0};                       ///< fragments
        uint32_t fragBytes{0};                   ///< bytes per fragment
        uint64_t bytes{0};                       ///< total bytes
        std::vector<uint32_t> remaining;         ///< per rank: results to come
        uint32_t ranksLeft{0};                   ///< ranks not finished
    };

    /// A rank's endpoint.
    struct Rank
    {
        Ptr<IbHca> hca;                                ///< its HCA
        Ptr<IbQueuePair> qp;                           ///< UD queue pair
        Ptr<IbCompletionQueue> scq;                    ///< send CQ
        Ptr<IbCompletionQueue> rcq;                    ///< receive CQ
        Ptr<IbMemoryRegion> sendMr;                    ///< staging
        Ptr<IbMemoryRegion> recvMr;                    ///< results
        std::array<uint32_t, 2> nextSeq{{0, 0}};       ///< next fragment to send
        std::array<std::vector<uint32_t>, 2> slotDone; ///< per slot: last result seq + 1
    };

    /**
     * Send the rank's fragments its windows allow.
     * @param r rank
     * @param ch channel
     */
    void Issue(uint32_t r, uint8_t ch);
    /**
     * A result arrived (receive CQ callback).
     * @param r rank
     * @param wc the completion
     */
    void RecvDone(uint32_t r, const IbWorkCompletion& wc);
    /**
     * @param ch channel
     * @param seq a fragment sequence number
     * @return its operation (null: none, it was lost)
     */
    Op* FindOp(uint8_t ch, uint32_t seq);
    /**
     * Post receive buffer @p k of rank @p r.
     * @param r rank
     * @param k buffer index
     */
    void PostRecvBuffer(uint32_t r, uint32_t k);
    /// @return the fallback algorithm, aborting with a message if there is none
    Ptr<CollectiveAlgorithm> Fallback() const;

    // Attributes
    std::string m_fallbackName; //!< FallbackAlgorithm
    uint64_t m_satThreshold;    //!< SatThreshold
    uint32_t m_lltFragment;     //!< LltFragmentSize
    uint32_t m_satFragment;     //!< SatFragmentSize
    uint8_t m_sl;               //!< ServiceLevel
    Time m_opTimeout;           //!< OperationTimeout

    Ptr<CollectiveAlgorithm> m_fallback;                  //!< host-based algorithm
    Ptr<SharpAggregationManager> m_am;                    //!< the manager
    Ptr<SharpTree> m_tree;                                //!< the tree (or null)
    std::string m_refusal;                                //!< why no tree
    std::vector<Rank> m_ranks;                            //!< endpoints
    std::array<std::deque<std::unique_ptr<Op>>, 2> m_ops; //!< per channel, seq order
    std::array<uint32_t, 2> m_seqAlloc;                   //!< next sequence number per channel
    uint32_t m_recvStride;                                //!< bytes per receive buffer
    uint64_t m_inNetwork;                                 //!< operations run in the network
    uint64_t m_fallbacks;                                 //!< operations that fell back
    uint64_t m_prodOps;                                   //!< PROD operations, run host-based
    uint64_t m_lltInstead;                                //!< large operations on LLT
    uint32_t m_satOps{0};     //!< streaming operations in flight (sharing the tree's one flow)
    bool m_singleRank{false}; //!< set up for one rank: no tree, nothing to aggregate
    std::array<uint32_t, 2> m_treeFragments{{0, 0}}; //!< LLT and SAT fragments asked at Setup
    uint64_t m_rebuilds{0};                          //!< trees built again after a link change
    uint64_t m_restarted{0};                         //!< operations lost and run host-based
    Time m_lastProgress;                             //!< last start or result
    EventId m_watchdog;                              //!< OperationTimeout event
    bool m_watchdogArmed{false};                     //!< m_watchdog is pending
};

} // namespace ns3

#endif /* SHARP_COLLECTIVE_ALGORITHM_H */

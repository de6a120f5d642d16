/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_COMMUNICATOR_H
#define COLLECTIVE_COMMUNICATOR_H

#include "collective-algorithm.h"

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <vector>

namespace ns3
{

class CollectiveTransport;

/**
 * @ingroup infiniband-collectives
 * @brief A communicator: ranks 0..n-1 of a CollectiveTransport, and the engine that runs
 * collective operations on them with a CollectiveAlgorithm.
 *
 * Each operation gets a sequence number that travels as the messages' tag, so several
 * operations (of this communicator, or of others on other transports) may be in flight at
 * once. For each rank the algorithm's program (CollectiveStep items) is turned into a
 * dependency graph (see CollectiveStep); items run as soon as their dependencies are met:
 * a send is handed to the transport, a received message is reduced into (or copied to)
 * the rank's buffer. A rank has finished when every item has run and the transport has
 * reported every send done; the operation has finished when every rank has.
 *
 * With buffers (one per rank, CollectiveAlgorithm::BufferBytes bytes each, real bytes on
 * the wire: the transport must be in data mode) the reduction is computed; without, only
 * the timing is simulated.
 *
 * Host costs (all zero by default: the library then takes no time): each message a rank
 * sends costs SendOverhead of host time before the transport has it, each message it
 * receives RecvOverhead and then its reduction (ReduceBandwidth, HalfReduceBandwidth) or
 * copy (CopyBandwidth); a rank's host does these one at a time, in the order they become
 * possible, across the communicator's operations; an operation starts on a rank
 * LaunchLatency after its host is free. In-network operations (an algorithm's
 * StartInNetwork) pay none of these.
 */
class CollectiveCommunicator : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveCommunicator();
    ~CollectiveCommunicator() override;

    /// Completion callback: (operation id, its duration).
    typedef Callback<void, uint32_t, Time> DoneCallback;

    /**
     * @param transport the transport (its ranks are this communicator's ranks)
     */
    void SetTransport(Ptr<CollectiveTransport> transport);
    /// @return the transport
    Ptr<CollectiveTransport> GetTransport() const;
    /**
     * @param algorithm the algorithm used by the next operations
     */
    void SetAlgorithm(Ptr<CollectiveAlgorithm> algorithm);
    /// @return the algorithm
    Ptr<CollectiveAlgorithm> GetAlgorithm() const;
    /// @return the number of ranks
    uint32_t GetNRanks() const;

    /**
     * Start an operation on every rank now.
     * @param spec what to do
     * @param buffers one buffer per rank (input, and output in place), or null for
     *        timing only; must stay alive until the operation has finished
     * @param done called when every rank has finished (may be null)
     * @return the operation's id
     */
    uint32_t Start(const CollectiveOpSpec& spec,
                   std::vector<std::vector<uint8_t>>* buffers,
                   DoneCallback done);

    /**
     * @param op an operation id
     * @return true once it has finished (also after it was forgotten: FinishedOperations)
     */
    bool IsDone(uint32_t op) const;
    /**
     * Aborts with a message if @p op has not finished or was forgotten (FinishedOperations).
     * @param op an operation id (finished)
     * @return from Start to the last rank finishing
     */
    Time GetDuration(uint32_t op) const;
    /**
     * Aborts with a message if @p op was forgotten (FinishedOperations).
     * @param op an operation id
     * @param rank a rank
     * @return when the rank finished (or Time::Max(): not yet, or @p op was never started)
     */
    Time GetRankFinishTime(uint32_t op, uint32_t rank) const;
    /**
     * Aborts with a message if @p op was forgotten (FinishedOperations).
     * @param op an operation id
     * @return messages the operation sent (0 if it was never started)
     */
    uint64_t GetMessages(uint32_t op) const;
    /**
     * Aborts with a message if @p op was forgotten (FinishedOperations).
     * @param op an operation id
     * @return times the network lost the operation and it started again host-based (an
     *         in-network algorithm's RestartCallback; 0 if it was never started)
     */
    uint32_t GetRestarts(uint32_t op) const;

  protected:
    void DoDispose() override;

  private:
    /// Bits of a transport tag that carry the channel (the rest the operation id).
    static constexpr uint32_t CHANNEL_BITS = 4;
    /// Channels per pair of ranks (CollectiveStep::channel).
    static constexpr uint32_t CHANNELS = 1u << CHANNEL_BITS;

    /**
     * @param peer a rank
     * @param channel a channel
     * @return the key of the message stream
     */
    static uint64_t StreamKey(uint32_t peer, uint32_t channel)
    {
        return (uint64_t(peer) << CHANNEL_BITS) | channel;
    }

    /// A message that arrived before its item could use it.
    struct Arrival
    {
        bool present{false};       ///< arrived
        uint64_t bytes{0};         ///< length
        std::vector<uint8_t> data; ///< bytes (data mode)
    };

    /// One rank's part of an operation.
    struct RankRun
    {
        std::vector<CollectiveStep> prog;              ///< the program
        std::vector<std::vector<uint32_t>> dependents; ///< item -> items waiting for it
        std::vector<uint32_t> unmet;                   ///< unmet dependencies per item
        std::vector<uint32_t> ordinal;                 ///< receive items: index per peer
        /// (peer, channel) -> receive items
        std::map<uint64_t, std::vector<uint32_t>> recvItems;
        std::map<uint64_t, uint32_t> arrivedCount; ///< (peer, channel) -> messages arrived
        std::vector<Arrival> arrivals;             ///< per item (receive items)
        uint32_t itemsDone{0};                     ///< items run
        uint32_t sendsPending{0};                  ///< sends not reported done
        uint64_t bytesInFlight{0};                 ///< their bytes
        std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>>
            readySends;               ///< sends ready, lowest item first
        bool finished{false};         ///< rank done
        Time finishTime{Time::Max()}; ///< when
        bool sendPaid{false};         ///< host costs: the next send's overhead is paid
        Time sendAt;                  ///< ... until then
    };

    /// An operation.
    struct Op
    {
        uint32_t id{0};                                      ///< id (tag)
        CollectiveOpSpec spec;                               ///< what
        std::vector<std::vector<uint8_t>>* buffers{nullptr}; ///< data or null
        std::vector<RankRun> ranks;                          ///< per rank (until the end)
        std::vector<Time> finishTimes;                       ///< per rank, once all finished
        uint32_t ranksFinished{0};                           ///< ranks done
        Time start;                                          ///< Start time
        Time end{Time::Max()};                               ///< last rank done
        uint64_t messages{0};                                ///< messages sent
        uint32_t restarts{0};                                ///< in-network runs lost
        bool hostCosts{false};                               ///< host costs apply
        uint64_t bufferBytes{UINT64_MAX};                    ///< user bytes per rank
        std::vector<std::vector<uint8_t>> scratch;           ///< data mode: per rank
        DoneCallback done;                                   ///< completion
    };

    /**
     * Derive the dependency graph of a rank's program.
     * @param rr the rank's run
     */
    static void Analyze(RankRun& rr);
    /**
     * Run an item whose dependencies are met, and whatever it unblocks; sends are issued
     * in program order while the send window allows.
     * @param op the operation
     * @param rank the rank
     * @param item the item (UINT32_MAX: none, only issue ready sends)
     */
    void Run(Op& op, uint32_t rank, uint32_t item);
    /**
     * Run the items that are ready, whatever they unblock, and the sends the window
     * allows (the items of Run).
     * @param op the operation
     * @param rank the rank
     * @param ready items whose dependencies are met (consumed)
     */
    void RunReady(Op& op, uint32_t rank, std::vector<uint32_t>& ready);
    /**
     * Reduce or copy a received message into the rank's buffer (data mode) and forget it.
     * @param op the operation
     * @param rank the rank
     * @param i the receive item
     */
    void ApplyReceive(Op& op, uint32_t rank, uint32_t i);
    /**
     * @param op the operation
     * @param s a receive item
     * @return the host time it takes: RecvOverhead and its reduction or copy
     */
    Time ReceiveCost(const Op& op, const CollectiveStep& s) const;
    /// @return true if any host cost attribute is set
    bool HasHostCosts() const;
    /**
     * Host costs: a receive's host time is over; apply it and go on.
     * @param opId operation
     * @param rank rank
     * @param item the receive item
     */
    void Applied(uint32_t opId, uint32_t rank, uint32_t item);
    /**
     * Host costs: the overhead of a rank's next send has been paid; issue it.
     * @param opId operation
     * @param rank rank
     */
    void SendTurn(uint32_t opId, uint32_t rank);
    /**
     * An item has run: release its dependents.
     * @param op the operation
     * @param rank the rank
     * @param item the item
     * @param ready items that became ready (appended)
     */
    void Complete(Op& op, uint32_t rank, uint32_t item, std::vector<uint32_t>& ready);
    /**
     * Check whether a rank (and the operation) has finished.
     * @param op the operation
     * @param rank the rank
     */
    void CheckFinished(Op& op, uint32_t rank);
    /**
     * The algorithm finished an in-network operation on a rank.
     * @param opId the operation
     * @param rank the rank
     */
    void InNetworkRankDone(uint32_t opId, uint32_t rank);
    /**
     * The algorithm lost an in-network operation: run it host-based from the start.
     * @param opId the operation
     */
    void InNetworkRestart(uint32_t opId);
    /**
     * Build every rank's program with the algorithm and start what is ready.
     * @param op the operation (no rank has run anything of it)
     */
    void RunHostBased(Op& op);
    /**
     * @param op the operation (data mode)
     * @param rank a rank
     * @param offset a program offset: below the buffer's bytes in the user's buffer, above
     *        in the rank's scratch (CollectiveAlgorithm::ScratchBytes)
     * @return where its bytes are
     */
    static uint8_t* Bytes(Op& op, uint32_t rank, uint64_t offset);
    /**
     * Transport receive callback.
     * @param src sender
     * @param dst receiver
     * @param tag operation id
     * @param bytes length
     * @param data bytes or null
     */
    void Receive(uint32_t src, uint32_t dst, uint32_t tag, uint64_t bytes, const uint8_t* data);
    /**
     * Transport send-done callback.
     * @param opId operation id
     * @param rank sending rank
     * @param bytes the message's length
     */
    void SendDone(uint32_t opId, uint32_t rank, uint64_t bytes);

    /**
     * An operation's done callback has run: add it to the history of finished operations
     * and forget the oldest beyond FinishedOperations.
     * @param id the operation
     */
    void Remember(uint32_t id);
    /**
     * Find a started operation; abort if it finished and was forgotten.
     * @param op an operation id
     * @param what the caller, for the message
     * @return the operation, or null if @p op was never started
     */
    const Op* FindRemembered(uint32_t op, const char* what) const;

    uint64_t m_chunkSize;            //!< ChunkSize attribute
    uint64_t m_sendWindow;           //!< SendWindow attribute
    Time m_sendOverhead;             //!< SendOverhead attribute
    Time m_recvOverhead;             //!< RecvOverhead attribute
    DataRate m_reduceRate;           //!< ReduceBandwidth attribute (0: instantly)
    DataRate m_halfReduceRate;       //!< HalfReduceBandwidth attribute
    DataRate m_copyRate;             //!< CopyBandwidth attribute (0: instantly)
    Time m_launchLatency;            //!< LaunchLatency attribute
    std::vector<Time> m_cpuFree;     //!< per rank: when its host is free
    uint32_t m_finishedKept;         //!< FinishedOperations attribute
    std::deque<uint32_t> m_finished; //!< ids of the finished operations remembered, oldest first

    Ptr<CollectiveTransport> m_transport;          //!< the ranks
    Ptr<CollectiveAlgorithm> m_algorithm;          //!< current algorithm
    std::map<uint32_t, std::unique_ptr<Op>> m_ops; //!< operations by id
    uint32_t m_nextOp;                             //!< next id
    TracedCallback<uint32_t> m_restartTrace;       //!< InNetworkRestart trace
};

} // namespace ns3

#endif /* COLLECTIVE_COMMUNICATOR_H */

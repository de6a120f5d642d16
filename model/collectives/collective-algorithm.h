/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_ALGORITHM_H
#define COLLECTIVE_ALGORITHM_H

#include "collective-alltoallv-counts.h"
#include "collective-reduction.h"

#include "ns3/callback.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief The collective operations.
 */
enum class CollectiveKind : uint8_t
{
    ALLREDUCE,      ///< every rank gets the reduction of all buffers
    REDUCE_SCATTER, ///< rank r gets segment r of the reduction of all buffers
    ALLGATHER,      ///< every rank gets every rank's segment
    BROADCAST,      ///< every rank gets the root's buffer
    BARRIER,        ///< no rank leaves before every rank entered
    REDUCE,         ///< the root gets the reduction of all buffers
    ALLTOALL,       ///< rank r's segment j goes to rank j, which keeps it as segment r
    ALLTOALLV       ///< all-to-all with a size per pair (CollectiveAllToAllVCounts)
};

/**
 * @ingroup infiniband-collectives
 * @brief What a collective operation does. Buffer layout per rank (in place, like
 * nccl-tests' in-place mode): ALLREDUCE, REDUCE and BROADCAST count elements (REDUCE: the
 * root's buffer gets the result, the others' contents are undefined after); REDUCE_SCATTER and
 * ALLGATHER n * count elements, rank r's own segment at element r * count; BARRIER none.
 * ALLTOALL is out of place: 2 n * count elements, segment j of the first half (elements
 * j * count ..) is sent to rank j, and segment j of the second half (elements
 * (n + j) * count ..) receives rank j's segment for this rank (its own segment is copied,
 * taking no time). ALLTOALLV is laid out by its CollectiveAllToAllVCounts (count is not
 * used).
 */
struct CollectiveOpSpec
{
    CollectiveKind kind{CollectiveKind::ALLREDUCE};       ///< operation
    uint64_t count{0};                                    ///< elements (see above)
    CollectiveDataType type{CollectiveDataType::FLOAT32}; ///< element type
    CollectiveRedOp op{CollectiveRedOp::SUM};             ///< reduction operator
    uint32_t root{0};                                     ///< BROADCAST and REDUCE root
    Ptr<const CollectiveAllToAllVCounts> counts;          ///< ALLTOALLV sizes
};

/**
 * @ingroup infiniband-collectives
 * @brief One item of a rank's program: send a byte range of its buffer to a peer, or
 * receive a message from a peer into a byte range (reducing into it or copying).
 *
 * The engine (CollectiveCommunicator) derives the dependencies from the ranges: a send
 * waits for the earlier receives that write bytes it reads (and for the earlier sends:
 * the sends to the same peer leave in program order), a receive is applied only after the earlier
 * sends that read bytes it writes and the earlier receives into the same bytes; @c fence makes an
 * item wait for every earlier receive as well (for zero-byte messages such as a barrier's).
 * Messages from one peer are matched to that peer's receive items in program order.
 */
struct CollectiveStep
{
    /// What the item does.
    enum Kind : uint8_t
    {
        SEND,        ///< send [offset, offset + bytes) to peer
        RECV_REDUCE, ///< receive from peer and reduce into [offset, offset + bytes)
        RECV_COPY    ///< receive from peer and copy into [offset, offset + bytes)
    };

    Kind kind{SEND};    ///< what
    uint32_t peer{0};   ///< the other rank
    uint64_t offset{0}; ///< first byte in the rank's buffer
    uint64_t bytes{0};  ///< length
    bool fence{false};  ///< also wait for every earlier receive
    /// the message stream between the two ranks (0..15): messages of one channel are
    /// ordered and matched separately from other channels' (NCCL's channels), so that
    /// independent pipelines over the same pair of ranks do not wait for each other
    uint8_t channel{0};
};

/**
 * @ingroup infiniband-collectives
 * @brief Base of the collective algorithms: turns a CollectiveOpSpec into each rank's
 * program of CollectiveStep items, which CollectiveCommunicator runs over a
 * CollectiveTransport. Large ranges are cut into pieces of at most the chunk size, so
 * that the steps pipeline.
 *
 * Subclasses provide allreduce (ring, tree, halving-doubling); reduce-scatter and
 * allgather default to the ring, broadcast and reduce to a binomial tree, barrier to the
 * dissemination algorithm. An algorithm that does not map onto point-to-point messages
 * (SHARP aggregation in the switches, SharpCollectiveAlgorithm) overrides
 * StartInNetwork, which the communicator tries first for every operation.
 */
class CollectiveAlgorithm : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveAlgorithm();
    ~CollectiveAlgorithm() override;

    /// @return a short name ("ring", "tree", "hd")
    virtual std::string GetName() const = 0;

    /**
     * Build a rank's program.
     * @param spec the operation
     * @param rank the rank
     * @param n ranks
     * @param chunkBytes largest message (rounded down to whole elements)
     * @param prog the program (appended to)
     */
    virtual void Build(const CollectiveOpSpec& spec,
                       uint32_t rank,
                       uint32_t n,
                       uint64_t chunkBytes,
                       std::vector<CollectiveStep>& prog) const;

    /// Called once per rank when an in-network operation has finished on it: (rank).
    typedef Callback<void, uint32_t> RankDoneCallback;
    /// Called when the network lost an operation it had taken (its aggregation tree broke
    /// under it): the buffers hold the inputs again and the communicator runs the programs
    /// of Build from the start, for every rank.
    typedef Callback<void> RestartCallback;

    /**
     * Bytes per rank that the programs of Build address beyond the user's buffer (offsets
     * from BufferBytes on), for data they relay: the communicator gives every rank that
     * much scratch space in data mode. Default 0.
     * @param spec the operation
     * @param n ranks
     * @return scratch bytes per rank
     */
    virtual uint64_t ScratchBytes(const CollectiveOpSpec& spec, uint32_t n) const;

    /**
     * Run an operation in the network rather than as point-to-point programs. The
     * communicator calls this first for every operation; host-based algorithms decline.
     * @param spec the operation
     * @param n ranks
     * @param buffers one buffer per rank (data mode) or null
     * @param rankDone to call once for each rank when it has finished (never from inside
     *        this call)
     * @param restart to call, instead of the ranks' remaining rankDone, when the network
     *        cannot finish the operation after all (never from inside this call)
     * @return true if the algorithm runs the operation, false to have the communicator
     *         run the programs of Build
     */
    virtual bool StartInNetwork(const CollectiveOpSpec& spec,
                                uint32_t n,
                                std::vector<std::vector<uint8_t>>* buffers,
                                RankDoneCallback rankDone,
                                RestartCallback restart);

    /**
     * Create an algorithm through ns-3's ObjectFactory from its TypeId name, or from a
     * short name that the algorithm's own file registered (CollectiveAlgorithmName): "ring",
     * "tree", "hd" (or "halving-doubling"), "rd" (or "recursive-doubling"), "sharp" when the
     * SHARP algorithm is linked in. The collective core names no algorithm itself.
     * @param name a short name or a TypeId name
     * @return a new algorithm (aborts, listing the short names, for an unknown name)
     */
    static Ptr<CollectiveAlgorithm> CreateByName(const std::string& name);
    /// @return the registered short names, sorted
    static std::vector<std::string> GetShortNames();

    /**
     * @param spec an operation
     * @param n ranks
     * @return the bytes of each rank's buffer
     */
    static uint64_t BufferBytes(const CollectiveOpSpec& spec, uint32_t n);

    /**
     * @param kind an operation
     * @return its name ("allreduce", ...)
     */
    static std::string KindName(CollectiveKind kind);

    /**
     * Abort, saying what to set, unless an ALLTOALLV's sizes are there and fit the
     * communicator.
     * @param spec an ALLTOALLV
     * @param n ranks
     */
    static void CheckCounts(const CollectiveOpSpec& spec, uint32_t n);

  protected:
    /// Parameters the builders share.
    struct Ctx
    {
        uint32_t rank{0};                           ///< this rank
        uint32_t n{1};                              ///< ranks
        uint32_t elem{1};                           ///< element size
        uint64_t chunk{1};                          ///< chunk bytes (whole elements)
        std::vector<CollectiveStep>* prog{nullptr}; ///< output
    };

    /**
     * Allreduce of @p bytes bytes at offset 0.
     * @param c context
     * @param bytes buffer bytes
     */
    virtual void BuildAllReduce(const Ctx& c, uint64_t bytes) const = 0;
    /**
     * Reduce-scatter: segments of @p segBytes, rank r's result in segment r.
     * @param c context
     * @param segBytes bytes per segment
     */
    virtual void BuildReduceScatter(const Ctx& c, uint64_t segBytes) const;
    /**
     * Allgather: segments of @p segBytes, rank r contributes segment r.
     * @param c context
     * @param segBytes bytes per segment
     */
    virtual void BuildAllGather(const Ctx& c, uint64_t segBytes) const;
    /**
     * Broadcast of @p bytes bytes from @p root.
     * @param c context
     * @param bytes buffer bytes
     * @param root the root
     */
    virtual void BuildBroadcast(const Ctx& c, uint64_t bytes, uint32_t root) const;
    /**
     * Barrier.
     * @param c context
     */
    virtual void BuildBarrier(const Ctx& c) const;
    /**
     * All-to-all of segments of @p segBytes (default: pairwise exchange, in step k send to
     * rank + k and receive from rank - k, n - 1 steps).
     * @param c context
     * @param segBytes bytes per segment
     */
    virtual void BuildAllToAll(const Ctx& c, uint64_t segBytes) const;
    /**
     * All-to-allv (default: pairwise exchange in the order of BuildAllToAll; a pair with
     * nothing to send exchanges no message).
     * @param c context
     * @param v the sizes and layout
     */
    virtual void BuildAllToAllV(const Ctx& c, const CollectiveAllToAllVCounts& v) const;
    /**
     * Reduce of @p bytes bytes to @p root (default: binomial tree, chunk by chunk).
     * @param c context
     * @param bytes buffer bytes
     * @param root the root
     */
    virtual void BuildReduce(const Ctx& c, uint64_t bytes, uint32_t root) const;

    /**
     * Append a transfer cut into chunks (nothing for zero bytes).
     * @param c context
     * @param kind send or receive kind
     * @param peer the other rank
     * @param offset first byte
     * @param bytes length
     * @param channel the message stream (CollectiveStep::channel)
     */
    static void Add(const Ctx& c,
                    CollectiveStep::Kind kind,
                    uint32_t peer,
                    uint64_t offset,
                    uint64_t bytes,
                    uint8_t channel = 0);
    /**
     * Build an operation as @p channels independent parts (NCCL's channels): @p part
     * writes the program of part k (on channel 0) into the context it is given; the parts'
     * items go into the rank's program alternately, part k's on channel k, so that ready
     * sends (issued lowest item first) share the links between the parts.
     * @param c context
     * @param channels parts (1..16)
     * @param part builds part k: (context with its own program, k)
     */
    static void BuildOnChannels(const Ctx& c,
                                uint32_t channels,
                                const std::function<void(const Ctx&, uint32_t)>& part);
    /**
     * Split @p total bytes into @p parts ranges of whole elements, as equal as possible.
     * @param total bytes
     * @param parts ranges
     * @param elem element size
     * @param offsets first byte of each (output)
     * @param sizes bytes of each (output)
     */
    static void Split(uint64_t total,
                      uint32_t parts,
                      uint32_t elem,
                      std::vector<uint64_t>& offsets,
                      std::vector<uint64_t>& sizes);
    /**
     * Ring reduce-scatter or allgather of segments of @p segBytes (rank r's at r x
     * segBytes) on @p channels rings, ring k taking part k of every segment.
     * @param c context
     * @param segBytes bytes per segment
     * @param channels rings (1..16)
     * @param reduce reduce-scatter (else allgather)
     */
    static void RingSegments(const Ctx& c, uint64_t segBytes, uint32_t channels, bool reduce);
    /**
     * Ring reduce-scatter over arbitrary segments: n - 1 steps, rank r ends with the
     * reduction of segment r.
     * @param c context
     * @param off segment offsets
     * @param len segment sizes
     */
    static void RingReduceScatter(const Ctx& c,
                                  const std::vector<uint64_t>& off,
                                  const std::vector<uint64_t>& len);
    /**
     * Ring allgather over arbitrary segments: n - 1 steps, rank r starts with segment r.
     * @param c context
     * @param off segment offsets
     * @param len segment sizes
     */
    static void RingAllGather(const Ctx& c,
                              const std::vector<uint64_t>& off,
                              const std::vector<uint64_t>& len);
    /**
     * Binomial-tree reduce of one piece [off, off + len) towards @p root (not cut).
     * @param c context
     * @param off first byte
     * @param len length
     * @param root the root
     */
    static void BinomialReduce(const Ctx& c, uint64_t off, uint64_t len, uint32_t root);
    /**
     * Binomial-tree broadcast of one piece [off, off + len) from @p root (not cut).
     * @param c context
     * @param off first byte
     * @param len length
     * @param root the root
     */
    static void BinomialBroadcast(const Ctx& c, uint64_t off, uint64_t len, uint32_t root);
};

/**
 * @ingroup infiniband-collectives
 * @brief Registers a short name for a CollectiveAlgorithm's TypeId, for
 * CollectiveAlgorithm::CreateByName. Define one at namespace scope in the algorithm's .cc:
 * `static const CollectiveAlgorithmName g_name("ring", "ns3::CollectiveRingAlgorithm");`
 */
class CollectiveAlgorithmName
{
  public:
    /**
     * @param shortName the short name ("ring")
     * @param typeIdName the algorithm's TypeId name
     */
    CollectiveAlgorithmName(const char* shortName, const char* typeIdName);
};

} // namespace ns3

#endif /* COLLECTIVE_ALGORITHM_H */

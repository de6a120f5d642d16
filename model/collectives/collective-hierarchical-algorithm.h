/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_HIERARCHICAL_ALGORITHM_H
#define COLLECTIVE_HIERARCHICAL_ALGORITHM_H

#include "collective-algorithm.h"

#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Hierarchical allreduce of GPU servers: a ring reduce-scatter among the GPUs of
 * each server (over NVLink with CollectiveNvlinkTransport), then for each GPU index k a
 * ring allreduce of segment k among the k-th GPUs of all servers (rail k: the eight
 * rails run at once, each on its own NIC), then a ring allgather inside each server.
 *
 * Ranks are GPUs, server by server: rank r is GPU r % GpusPerServer of server
 * r / GpusPerServer, as CollectiveNvlinkTransport numbers them. A GPU sends
 * 2 (G - 1) / G * S bytes over NVLink and 2 (N - 1) / (N G) * S over its NIC (G GPUs
 * per server, N servers), against 2 (n - 1) / n * S through the one NIC of a flat ring's
 * server crossing.
 *
 * All-to-all: with RailAwareAllToAll (the default, as NCCL's PXN), GPU k hands what it
 * has for GPU k' of the other servers to its server's GPU k' over NVLink, and each GPU
 * then exchanges with the GPUs of its own rail only: G segments to each of the N - 1
 * others (its own and those relayed), so no message changes rails in the fabric.
 * Without it, GPU k sends each segment straight to its destination, the servers in
 * turn and within a server step the GPUs k, k + 1, ... (so that every step is a
 * permutation of the NICs), and its own server's GPUs over NVLink. All-to-allv runs the
 * same schedules with each pair's size; a relayed piece keeps the size of the pair it
 * belongs to, and a pair with nothing to send exchanges no message.
 *
 * With Channels = C the allreduce's buffer is cut into C parts, each taken through the
 * three phases on its own message stream (NCCL's channels).
 *
 * Other operations run as CollectiveAlgorithm's defaults (ring reduce-scatter and
 * allgather over all ranks, binomial broadcast and reduce).
 */
class CollectiveHierarchicalAlgorithm : public CollectiveAlgorithm
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveHierarchicalAlgorithm();
    ~CollectiveHierarchicalAlgorithm() override;

    std::string GetName() const override;

    uint64_t ScratchBytes(const CollectiveOpSpec& spec, uint32_t n) const override;

  protected:
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;
    void BuildAllToAll(const Ctx& c, uint64_t segBytes) const override;
    void BuildAllToAllV(const Ctx& c, const CollectiveAllToAllVCounts& v) const override;

  private:
    /**
     * Both all-to-alls: equal segments of @p seg bytes when @p v is null, else the sizes
     * of @p v.
     * @param c context
     * @param v all-to-allv sizes or null
     * @param seg all-to-all segment bytes
     * @param relayBase first scratch byte (the operation's BufferBytes)
     */
    void BuildAllToAllSized(const Ctx& c,
                            const CollectiveAllToAllVCounts* v,
                            uint64_t seg,
                            uint64_t relayBase) const;

    /**
     * Append the steps a builder wrote for a group of ranks, its peers (indices into
     * @p members) turned into ranks.
     * @param c the rank's context
     * @param steps the group's steps
     * @param members the group's ranks
     */
    static void AppendMapped(const Ctx& c,
                             const std::vector<CollectiveStep>& steps,
                             const std::vector<uint32_t>& members);

    /**
     * @param n ranks
     * @return GPUs per server for @p n ranks (aborts if they are not whole servers)
     */
    uint32_t Gpus(uint32_t n) const;

    /**
     * The three phases of the allreduce for the bytes [base, base + bytes).
     * @param c context
     * @param base first byte
     * @param bytes length
     */
    void BuildAllReduceRange(const Ctx& c, uint64_t base, uint64_t bytes) const;

    uint32_t m_gpusPerServer; //!< GpusPerServer attribute
    bool m_railAware;         //!< RailAwareAllToAll attribute
    uint32_t m_channels;      //!< Channels attribute
};

} // namespace ns3

#endif /* COLLECTIVE_HIERARCHICAL_ALGORITHM_H */

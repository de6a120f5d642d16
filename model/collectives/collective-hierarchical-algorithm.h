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
 * server crossing. Other operations run as CollectiveAlgorithm's defaults (ring
 * reduce-scatter and allgather over all ranks, binomial broadcast and reduce).
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

  protected:
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;

  private:
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

    uint32_t m_gpusPerServer; //!< GpusPerServer attribute
};

} // namespace ns3

#endif /* COLLECTIVE_HIERARCHICAL_ALGORITHM_H */

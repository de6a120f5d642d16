/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_TREE_ALGORITHM_H
#define COLLECTIVE_TREE_ALGORITHM_H

#include "collective-algorithm.h"

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Tree allreduce: a binomial-tree reduce to rank 0 followed by a binomial-tree
 * broadcast, both pipelined in chunks (a chunk moves on as soon as it has arrived, or has
 * been reduced from all children). 2 ceil(log2 n) message latencies for a small message;
 * for a large one the root receives (and sends) S bytes per child, log2 n times S,
 * so it is slower than the ring.
 * Works for any n.
 */
class CollectiveTreeAlgorithm : public CollectiveAlgorithm
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveTreeAlgorithm();
    ~CollectiveTreeAlgorithm() override;

    std::string GetName() const override;

  protected:
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;
};

} // namespace ns3

#endif /* COLLECTIVE_TREE_ALGORITHM_H */

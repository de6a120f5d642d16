/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_RING_ALGORITHM_H
#define COLLECTIVE_RING_ALGORITHM_H

#include "collective-algorithm.h"

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Ring allreduce: a ring reduce-scatter and a ring allgather over n segments of
 * S/n bytes, 2(n-1) steps; every rank sends and receives 2(n-1)/n * S bytes, the minimum, so
 * it is bandwidth-optimal, with 2(n-1) message latencies. Works for any n.
 */
class CollectiveRingAlgorithm : public CollectiveAlgorithm
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveRingAlgorithm();
    ~CollectiveRingAlgorithm() override;

    std::string GetName() const override;

  protected:
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;
};

} // namespace ns3

#endif /* COLLECTIVE_RING_ALGORITHM_H */

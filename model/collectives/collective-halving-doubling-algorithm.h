/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_HALVING_DOUBLING_ALGORITHM_H
#define COLLECTIVE_HALVING_DOUBLING_ALGORITHM_H

#include "collective-algorithm.h"

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Recursive halving-doubling allreduce (Rabenseifner): a reduce-scatter by
 * recursive halving (log2 n exchanges with partners rank XOR n/2, n/4, ..., 1, exchanging
 * S/2, S/4, ...) and an allgather by recursive doubling in the reverse order: 2(n-1)/n * S
 * bytes per rank like the ring, with only 2 log2 n message latencies.
 *
 * If n is not a power of two, with p the largest power of two below n, ranks p..n-1 first
 * send their whole buffer to rank - p, which reduces it; ranks 0..p-1 run the algorithm;
 * then ranks 0..n-p-1 send the result to rank + p. That costs two extra full-buffer
 * transfers on the critical path.
 */
class CollectiveHalvingDoublingAlgorithm : public CollectiveAlgorithm
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveHalvingDoublingAlgorithm();
    ~CollectiveHalvingDoublingAlgorithm() override;

    std::string GetName() const override;

  protected:
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;
};

} // namespace ns3

#endif /* COLLECTIVE_HALVING_DOUBLING_ALGORITHM_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_RECURSIVE_DOUBLING_ALGORITHM_H
#define COLLECTIVE_RECURSIVE_DOUBLING_ALGORITHM_H

#include "collective-algorithm.h"

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Recursive-doubling allreduce: log2 n rounds; in round k every rank exchanges its
 * whole buffer with rank XOR 2^k and reduces what it receives. log2 n message latencies
 * (half of halving-doubling's 2 log2 n) but log2 n * S bytes per rank, so it is the
 * small-message algorithm of MPI libraries (MPICH, Open MPI) and the one to compare with
 * their small-message allreduce latencies. The reduction operators are commutative, so
 * both partners compute bit-identical results in every type.
 *
 * If n is not a power of two, with p the largest power of two below n, ranks p..n-1 first
 * send their buffer to rank - p, which reduces it, and get the result back at the end.
 */
class CollectiveRecursiveDoublingAlgorithm : public CollectiveAlgorithm
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveRecursiveDoublingAlgorithm();
    ~CollectiveRecursiveDoublingAlgorithm() override;

    std::string GetName() const override;

  protected:
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;
};

} // namespace ns3

#endif /* COLLECTIVE_RECURSIVE_DOUBLING_ALGORITHM_H */

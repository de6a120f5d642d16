/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_DOUBLE_TREE_ALGORITHM_H
#define COLLECTIVE_DOUBLE_TREE_ALGORITHM_H

#include "collective-algorithm.h"

#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Double binary tree allreduce, as NCCL's tree algorithm: two binary trees over
 * the ranks, each carrying half of the buffer, reduced up to its root and broadcast back
 * down, both pipelined in chunks. Every rank is a leaf in at least one tree, so every
 * rank sends and receives about the buffer once per direction (not twice, as an interior
 * node of one tree would), and a small message takes 2 x the trees' height latencies
 * (about 2 log2 n), against 2 (n - 1) for the ring.
 *
 * Tree 1 is the in-order binary tree of the ranks numbered v = 1..n: node v with lowest
 * set bit b has children v - b/2 and v + b/2 (the right one lowered by halving b while
 * it is beyond n), its parent v + b or v - b (whichever has 2b as its lowest bit; lifted
 * while beyond n); the root is the largest power of two up to n. Tree 2 is tree 1 over
 * the ranks shifted by one, so that tree 1's leaves (odd v) are tree 2's inner nodes and
 * the reverse (for odd n one rank is inner in both).
 */
class CollectiveDoubleTreeAlgorithm : public CollectiveAlgorithm
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveDoubleTreeAlgorithm();
    ~CollectiveDoubleTreeAlgorithm() override;

    std::string GetName() const override;

    /// A rank's place in a tree.
    struct Node
    {
        int64_t parent{-1};             ///< its parent rank (-1: the root)
        std::vector<uint32_t> children; ///< its children's ranks
    };

    /**
     * @param rank a rank
     * @param n ranks
     * @param tree 0 or 1
     * @return the rank's parent and children in that tree
     */
    static Node GetNode(uint32_t rank, uint32_t n, uint32_t tree);

  protected:
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;
};

} // namespace ns3

#endif /* COLLECTIVE_DOUBLE_TREE_ALGORITHM_H */

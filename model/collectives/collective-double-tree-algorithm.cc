/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-double-tree-algorithm.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveDoubleTreeAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveDoubleTreeAlgorithm);

/// The short name CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_dbtreeName("dbtree", "ns3::CollectiveDoubleTreeAlgorithm");

TypeId
CollectiveDoubleTreeAlgorithm::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CollectiveDoubleTreeAlgorithm")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<CollectiveDoubleTreeAlgorithm>();
    return tid;
}

CollectiveDoubleTreeAlgorithm::CollectiveDoubleTreeAlgorithm() = default;

CollectiveDoubleTreeAlgorithm::~CollectiveDoubleTreeAlgorithm() = default;

std::string
CollectiveDoubleTreeAlgorithm::GetName() const
{
    return "dbtree";
}

namespace
{
/// @return the largest power of two up to n (n > 0): the in-order tree's root
uint64_t
Root(uint64_t n)
{
    uint64_t root = 1;
    while (root * 2 <= n)
    {
        root *= 2;
    }
    return root;
}

/// @return the lowest set bit of v (v > 0)
uint64_t
Low(uint64_t v)
{
    return v & (~v + 1);
}

/**
 * @param v a node of the in-order tree over 1..n
 * @param n nodes
 * @return its parent (0: v is the root)
 */
uint64_t
InOrderParent(uint64_t v, uint64_t n)
{
    const uint64_t root = Root(n);
    while (v != root)
    {
        const uint64_t b = Low(v);
        v = (v & (2 * b)) ? v - b : v + b;
        if (v <= n)
        {
            return v;
        }
    }
    return 0;
}
} // namespace

CollectiveDoubleTreeAlgorithm::Node
CollectiveDoubleTreeAlgorithm::GetNode(uint32_t rank, uint32_t n, uint32_t tree)
{
    // Tree 2 renumbers the ranks shifted by one, which flips every rank's parity but (n
    // odd) the one that wraps around: tree 1's leaves (odd v) become inner nodes.
    auto toV = [n, tree](uint32_t r) -> uint64_t { return tree == 0 ? r + 1 : (r + 1) % n + 1; };
    auto toRank = [n, tree](uint64_t v) -> uint32_t { return tree == 0 ? v - 1 : (v - 2 + n) % n; };
    Node node;
    const uint64_t v = toV(rank);
    const uint64_t p = InOrderParent(v, n);
    node.parent = p == 0 ? -1 : int64_t(toRank(p));
    // The children are the nodes whose parent is v: v - b/2 (always there) and the
    // right child, v + b/2 lowered while beyond n; only these can name v.
    const uint64_t b = Low(v);
    if (b >= 2)
    {
        node.children.push_back(toRank(v - b / 2));
    }
    for (uint64_t half = b / 2; half >= 1; half /= 2)
    {
        if (v + half <= n && InOrderParent(v + half, n) == v)
        {
            node.children.push_back(toRank(v + half));
            break;
        }
    }
    return node;
}

void
CollectiveDoubleTreeAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    // Halves on whole elements, each reduced up and broadcast down its tree chunk by
    // chunk, each tree on its own channel: a peer that is a parent in one tree and a
    // child in the other would otherwise hold each chunk of one tree behind the other's.
    // The trees' chunks alternate in the program, so that ready sends (issued lowest
    // item first) share the link between the trees.
    const uint64_t elems = bytes / c.elem;
    const uint64_t split = (elems + 1) / 2 * c.elem;
    const Node trees[2] = {GetNode(c.rank, c.n, 0), GetNode(c.rank, c.n, 1)};
    const uint64_t begin[2] = {0, split};
    const uint64_t end[2] = {split, bytes};
    for (uint64_t k = 0;; ++k)
    {
        bool any = false;
        for (uint8_t t = 0; t < 2; ++t)
        {
            const uint64_t off = begin[t] + k * c.chunk;
            if (off >= end[t])
            {
                continue;
            }
            any = true;
            const uint64_t len = std::min(c.chunk, end[t] - off);
            const Node& nd = trees[t];
            for (uint32_t ch : nd.children)
            {
                Add(c, CollectiveStep::RECV_REDUCE, ch, off, len, t);
            }
            if (nd.parent >= 0)
            {
                Add(c, CollectiveStep::SEND, nd.parent, off, len, t);
                Add(c, CollectiveStep::RECV_COPY, nd.parent, off, len, t);
            }
            for (uint32_t ch : nd.children)
            {
                Add(c, CollectiveStep::SEND, ch, off, len, t);
            }
        }
        if (!any)
        {
            break;
        }
    }
}

} // namespace ns3

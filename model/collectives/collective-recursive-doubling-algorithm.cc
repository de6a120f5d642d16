/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-recursive-doubling-algorithm.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveRecursiveDoublingAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveRecursiveDoublingAlgorithm);

/// The short names CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_rdName("rd", "ns3::CollectiveRecursiveDoublingAlgorithm");
static const CollectiveAlgorithmName g_recursiveDoublingName(
    "recursive-doubling",
    "ns3::CollectiveRecursiveDoublingAlgorithm");

TypeId
CollectiveRecursiveDoublingAlgorithm::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CollectiveRecursiveDoublingAlgorithm")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<CollectiveRecursiveDoublingAlgorithm>();
    return tid;
}

CollectiveRecursiveDoublingAlgorithm::CollectiveRecursiveDoublingAlgorithm() = default;

CollectiveRecursiveDoublingAlgorithm::~CollectiveRecursiveDoublingAlgorithm() = default;

std::string
CollectiveRecursiveDoublingAlgorithm::GetName() const
{
    return "rd";
}

void
CollectiveRecursiveDoublingAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    uint32_t p = 1;
    while (p * 2 <= c.n)
    {
        p *= 2;
    }
    if (c.rank >= p)
    {
        // folded rank: hand the buffer to rank - p, get the result back
        Add(c, CollectiveStep::SEND, c.rank - p, 0, bytes);
        Add(c, CollectiveStep::RECV_COPY, c.rank - p, 0, bytes);
        return;
    }
    const bool hasFolded = c.rank + p < c.n;
    if (hasFolded)
    {
        Add(c, CollectiveStep::RECV_REDUCE, c.rank + p, 0, bytes);
    }
    for (uint32_t d = 1; d < p; d <<= 1)
    {
        // The send reads the whole buffer before the receive reduces into it (the
        // communicator orders a receive after earlier sends of the same bytes).
        Add(c, CollectiveStep::SEND, c.rank ^ d, 0, bytes);
        Add(c, CollectiveStep::RECV_REDUCE, c.rank ^ d, 0, bytes);
    }
    if (hasFolded)
    {
        Add(c, CollectiveStep::SEND, c.rank + p, 0, bytes);
    }
}

} // namespace ns3

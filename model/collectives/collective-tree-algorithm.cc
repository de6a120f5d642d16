/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-tree-algorithm.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveTreeAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveTreeAlgorithm);

/// The short name CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_treeName("tree", "ns3::CollectiveTreeAlgorithm");

TypeId
CollectiveTreeAlgorithm::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CollectiveTreeAlgorithm")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<CollectiveTreeAlgorithm>();
    return tid;
}

CollectiveTreeAlgorithm::CollectiveTreeAlgorithm() = default;

CollectiveTreeAlgorithm::~CollectiveTreeAlgorithm() = default;

std::string
CollectiveTreeAlgorithm::GetName() const
{
    return "tree";
}

void
CollectiveTreeAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    // chunk by chunk: reduce it up the tree, then broadcast it down, so that with the
    // communicator's send window (sends issued in program order) early chunks go first
    for (uint64_t off = 0; off < bytes; off += c.chunk)
    {
        const uint64_t len = std::min(c.chunk, bytes - off);
        BinomialReduce(c, off, len, 0);
        BinomialBroadcast(c, off, len, 0);
    }
}

} // namespace ns3

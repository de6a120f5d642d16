/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-ring-algorithm.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveRingAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveRingAlgorithm);

/// The short name CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_ringName("ring", "ns3::CollectiveRingAlgorithm");

TypeId
CollectiveRingAlgorithm::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CollectiveRingAlgorithm")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<CollectiveRingAlgorithm>();
    return tid;
}

CollectiveRingAlgorithm::CollectiveRingAlgorithm() = default;

CollectiveRingAlgorithm::~CollectiveRingAlgorithm() = default;

std::string
CollectiveRingAlgorithm::GetName() const
{
    return "ring";
}

void
CollectiveRingAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    std::vector<uint64_t> off;
    std::vector<uint64_t> len;
    Split(bytes, c.n, c.elem, off, len);
    RingReduceScatter(c, off, len);
    RingAllGather(c, off, len);
}

} // namespace ns3

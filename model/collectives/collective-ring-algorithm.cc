/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-ring-algorithm.h"

#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveRingAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveRingAlgorithm);

/// The short name CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_ringName("ring", "ns3::CollectiveRingAlgorithm");

TypeId
CollectiveRingAlgorithm::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveRingAlgorithm")
            .SetParent<CollectiveAlgorithm>()
            .SetGroupName("Infiniband")
            .AddConstructor<CollectiveRingAlgorithm>()
            .AddAttribute(
                "Channels",
                "Rings each operation is split over, each on its "
                "own message stream (NCCL's channels; a transport "
                "may carry each over its own connection, as "
                "CollectiveIbTransport's QueuePairsPerPeer does).",
                UintegerValue(1),
                MakeUintegerAccessor(&CollectiveRingAlgorithm::m_channels),
                MakeIbUintegerChecker<uint32_t>("CollectiveRingAlgorithm", "Channels", 1, 16));
    return tid;
}

CollectiveRingAlgorithm::CollectiveRingAlgorithm()
    : m_channels(1)
{
}

CollectiveRingAlgorithm::~CollectiveRingAlgorithm() = default;

std::string
CollectiveRingAlgorithm::GetName() const
{
    return "ring";
}

void
CollectiveRingAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    std::vector<uint64_t> chOff;
    std::vector<uint64_t> chLen;
    Split(bytes, m_channels, c.elem, chOff, chLen);
    BuildOnChannels(c, m_channels, [&](const Ctx& sub, uint32_t k) {
        std::vector<uint64_t> off;
        std::vector<uint64_t> len;
        Split(chLen[k], c.n, c.elem, off, len);
        for (uint64_t& o : off)
        {
            o += chOff[k];
        }
        RingReduceScatter(sub, off, len);
        RingAllGather(sub, off, len);
    });
}

void
CollectiveRingAlgorithm::BuildReduceScatter(const Ctx& c, uint64_t segBytes) const
{
    RingSegments(c, segBytes, m_channels, true);
}

void
CollectiveRingAlgorithm::BuildAllGather(const Ctx& c, uint64_t segBytes) const
{
    RingSegments(c, segBytes, m_channels, false);
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-halving-doubling-algorithm.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveHalvingDoublingAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveHalvingDoublingAlgorithm);

/// The short names CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_hdName("hd", "ns3::CollectiveHalvingDoublingAlgorithm");
static const CollectiveAlgorithmName g_halvingDoublingName(
    "halving-doubling",
    "ns3::CollectiveHalvingDoublingAlgorithm");

TypeId
CollectiveHalvingDoublingAlgorithm::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CollectiveHalvingDoublingAlgorithm")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<CollectiveHalvingDoublingAlgorithm>();
    return tid;
}

CollectiveHalvingDoublingAlgorithm::CollectiveHalvingDoublingAlgorithm() = default;

CollectiveHalvingDoublingAlgorithm::~CollectiveHalvingDoublingAlgorithm() = default;

std::string
CollectiveHalvingDoublingAlgorithm::GetName() const
{
    return "hd";
}

void
CollectiveHalvingDoublingAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    uint32_t p = 1;
    while (p * 2 <= c.n)
    {
        p *= 2;
    }
    const uint32_t extra = c.n - p;
    if (c.rank >= p)
    {
        // folded rank: hand the buffer to rank - p, get the result back
        Add(c, CollectiveStep::SEND, c.rank - p, 0, bytes);
        Add(c, CollectiveStep::RECV_COPY, c.rank - p, 0, bytes);
        return;
    }
    if (c.rank < extra)
    {
        Add(c, CollectiveStep::RECV_REDUCE, c.rank + p, 0, bytes);
    }
    const uint64_t count = bytes / c.elem;

    struct Level
    {
        uint32_t partner;
        uint64_t keepLo, keepHi, sendLo, sendHi; // elements
    };

    std::vector<Level> levels;
    uint64_t lo = 0;
    uint64_t hi = count;
    for (uint32_t mask = p / 2; mask >= 1; mask /= 2)
    {
        const uint64_t mid = lo + (hi - lo) / 2;
        Level l;
        l.partner = c.rank ^ mask;
        if ((c.rank & mask) == 0)
        {
            l.keepLo = lo;
            l.keepHi = mid;
            l.sendLo = mid;
            l.sendHi = hi;
        }
        else
        {
            l.keepLo = mid;
            l.keepHi = hi;
            l.sendLo = lo;
            l.sendHi = mid;
        }
        Add(c, CollectiveStep::SEND, l.partner, l.sendLo * c.elem, (l.sendHi - l.sendLo) * c.elem);
        Add(c,
            CollectiveStep::RECV_REDUCE,
            l.partner,
            l.keepLo * c.elem,
            (l.keepHi - l.keepLo) * c.elem);
        levels.push_back(l);
        lo = l.keepLo;
        hi = l.keepHi;
    }
    for (auto it = levels.rbegin(); it != levels.rend(); ++it)
    {
        Add(c,
            CollectiveStep::SEND,
            it->partner,
            it->keepLo * c.elem,
            (it->keepHi - it->keepLo) * c.elem);
        Add(c,
            CollectiveStep::RECV_COPY,
            it->partner,
            it->sendLo * c.elem,
            (it->sendHi - it->sendLo) * c.elem);
    }
    if (c.rank < extra)
    {
        Add(c, CollectiveStep::SEND, c.rank + p, 0, bytes);
    }
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-partition.h"

#include "ib-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-net-device.h"
#include "ns3/log.h"
#include "ns3/node.h"

#include <algorithm>
#include <deque>
#include <iomanip>
#include <limits>
#include <map>
#include <numeric>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbPartition");

namespace
{

/**
 * Call @p f(a, portA, b, portB) once per cable of @p topology.
 * @param topology the fabric
 * @param f the function
 */
template <typename F>
void
ForEachCable(const IbTopology& topology, F f)
{
    for (uint32_t a = 0; a < topology.GetNNodes(); ++a)
    {
        const IbTopology::Node& n = topology.GetNode(a);
        for (uint32_t p = 1; p < n.ports.size(); ++p)
        {
            const IbTopology::Port& port = n.ports[p];
            if (port.peerNode < 0 || std::make_pair(uint32_t(port.peerNode),
                                                    uint32_t(port.peerPort)) < std::make_pair(a, p))
            {
                continue; // no cable, or counted from the other end
            }
            f(a, p, uint32_t(port.peerNode), uint32_t(port.peerPort));
        }
    }
}

/// Union-find root with path halving.
uint32_t
Root(std::vector<uint32_t>& parent, uint32_t x)
{
    while (parent[x] != x)
    {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

} // namespace

std::vector<int32_t>
IbPartition::Levels(const IbTopology& topology)
{
    const uint32_t n = topology.GetNNodes();
    std::vector<int32_t> level(n, -1);
    bool derive = false;
    for (uint32_t i = 0; i < n; ++i)
    {
        const IbTopology::Node& node = topology.GetNode(i);
        if (node.type == IbTopology::SWITCH)
        {
            level[i] = node.level;
            derive = derive || node.level < 0;
        }
    }
    if (!derive)
    {
        return level;
    }
    // Distance to the nearest host, over cables: leaf switches are at distance 1.
    constexpr uint32_t unreached = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> dist(n, unreached);
    std::deque<uint32_t> queue;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (topology.GetNode(i).type == IbTopology::CA)
        {
            dist[i] = 0;
            queue.push_back(i);
        }
    }
    while (!queue.empty())
    {
        const uint32_t u = queue.front();
        queue.pop_front();
        for (const auto& port : topology.GetNode(u).ports)
        {
            if (port.peerNode >= 0 && dist[port.peerNode] == unreached)
            {
                dist[port.peerNode] = dist[u] + 1;
                queue.push_back(port.peerNode);
            }
        }
    }
    int32_t highest = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (level[i] < 0 && topology.GetNode(i).type == IbTopology::SWITCH && dist[i] != unreached)
        {
            level[i] = static_cast<int32_t>(dist[i]) - 1;
        }
        highest = std::max(highest, level[i]);
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        if (level[i] < 0 && topology.GetNode(i).type == IbTopology::SWITCH)
        {
            level[i] = highest + 1; // no host reachable: treat it as above everything
        }
    }
    return level;
}

std::vector<uint32_t>
IbPartition::Partition(const IbTopology& topology, uint32_t ranks, int32_t groupBelow)
{
    NS_ABORT_MSG_IF(ranks == 0, "IbPartition: the number of ranks must be at least 1");
    const uint32_t n = topology.GetNNodes();
    std::vector<uint32_t> rankOf(n, 0);
    if (ranks == 1 || n == 0)
    {
        return rankOf;
    }
    const std::vector<int32_t> level = Levels(topology);
    auto grouped = [&](uint32_t i) { return level[i] < groupBelow; };

    // Groups: grouped nodes joined by cables between different levels (a host and its
    // leaf, a leaf and an aggregation switch; not two leaves cabled to each other).
    std::vector<uint32_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    ForEachCable(topology, [&](uint32_t a, uint32_t, uint32_t b, uint32_t) {
        const bool bothHosts = level[a] < 0 && level[b] < 0;
        if (grouped(a) && grouped(b) && (level[a] != level[b] || bothHosts))
        {
            parent[Root(parent, a)] = Root(parent, b);
        }
    });
    // Groups in the order of their first node; weight = nodes.
    std::map<uint32_t, uint32_t> orderOfRoot; // root -> group number
    std::vector<uint32_t> weight;
    std::vector<uint32_t> groupOf(n, 0);
    uint32_t total = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (!grouped(i))
        {
            continue;
        }
        const uint32_t r = Root(parent, i);
        auto it = orderOfRoot.find(r);
        if (it == orderOfRoot.end())
        {
            it = orderOfRoot.emplace(r, weight.size()).first;
            weight.push_back(0);
        }
        groupOf[i] = it->second;
        ++weight[it->second];
        ++total;
    }
    // Contiguous blocks of groups of about total / ranks nodes: a group goes to the rank
    // in which its middle falls.
    std::vector<uint32_t> rankOfGroup(weight.size(), 0);
    uint64_t before = 0;
    for (uint32_t g = 0; g < weight.size(); ++g)
    {
        const uint64_t middle2 = 2 * before + weight[g]; // twice the middle
        rankOfGroup[g] =
            std::min<uint32_t>(ranks - 1, static_cast<uint32_t>(middle2 * ranks / (2 * total)));
        before += weight[g];
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        if (grouped(i))
        {
            rankOf[i] = rankOfGroup[groupOf[i]];
        }
    }

    // The other switches, level by level upwards: to the rank most of their cables
    // lead to, ties to the rank with the fewest switches of that level so far.
    std::vector<uint32_t> spread;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (!grouped(i))
        {
            spread.push_back(i);
        }
    }
    std::stable_sort(spread.begin(), spread.end(), [&](uint32_t a, uint32_t b) {
        return level[a] < level[b];
    });
    std::vector<bool> assigned(n, false);
    for (uint32_t i = 0; i < n; ++i)
    {
        assigned[i] = grouped(i);
    }
    // Each rank takes at most its share (rounded up) of a level's switches, so that
    // they are spread evenly even when the groups are not.
    std::map<int32_t, uint32_t> sizeOfLevel;
    for (uint32_t s : spread)
    {
        ++sizeOfLevel[level[s]];
    }
    std::map<int32_t, std::vector<uint32_t>> countOfLevel; // level -> switches per rank
    for (uint32_t s : spread)
    {
        std::vector<uint32_t> cables(ranks, 0);
        for (const auto& port : topology.GetNode(s).ports)
        {
            if (port.peerNode >= 0 && assigned[port.peerNode])
            {
                ++cables[rankOf[port.peerNode]];
            }
        }
        const uint32_t share = (sizeOfLevel[level[s]] + ranks - 1) / ranks;
        std::vector<uint32_t>& count = countOfLevel[level[s]];
        count.resize(ranks, 0);
        uint32_t best = ranks;
        for (uint32_t r = 0; r < ranks; ++r)
        {
            if (count[r] >= share)
            {
                continue;
            }
            if (best == ranks || cables[r] > cables[best] ||
                (cables[r] == cables[best] && count[r] < count[best]))
            {
                best = r;
            }
        }
        NS_ASSERT(best < ranks);
        rankOf[s] = best;
        ++count[best];
        assigned[s] = true;
    }
    return rankOf;
}

std::vector<uint32_t>
IbPartition::ByLeafGroups(const IbTopology& topology, uint32_t ranks)
{
    return Partition(topology, ranks, 1);
}

std::vector<uint32_t>
IbPartition::ByPod(const IbTopology& topology, uint32_t ranks)
{
    const std::vector<int32_t> level = Levels(topology);
    const int32_t top = level.empty() ? 0 : *std::max_element(level.begin(), level.end());
    return Partition(topology, ranks, std::max(top, 1));
}

IbPartition::Stats
IbPartition::CutLinks(const IbTopology& topology,
                      const std::vector<uint32_t>& rankOf,
                      Time cableDelay)
{
    NS_ABORT_MSG_UNLESS(rankOf.size() == topology.GetNNodes(),
                        "IbPartition::CutLinks: " << rankOf.size() << " ranks for "
                                                  << topology.GetNNodes() << " nodes");
    Stats s;
    s.ranks = rankOf.empty() ? 0 : *std::max_element(rankOf.begin(), rankOf.end()) + 1;
    s.nodesPerRank.assign(s.ranks, 0);
    s.hostsPerRank.assign(s.ranks, 0);
    s.cutCablesOfRank.assign(s.ranks, 0);
    for (uint32_t i = 0; i < topology.GetNNodes(); ++i)
    {
        ++s.nodesPerRank[rankOf[i]];
        if (topology.GetNode(i).type == IbTopology::CA)
        {
            ++s.hostsPerRank[rankOf[i]];
        }
    }
    ForEachCable(topology, [&](uint32_t a, uint32_t, uint32_t b, uint32_t) {
        ++s.cables;
        if (rankOf[a] != rankOf[b])
        {
            ++s.cutCables;
            ++s.cutCablesOfRank[rankOf[a]];
            ++s.cutCablesOfRank[rankOf[b]];
        }
    });
    s.lookahead = s.cutCables > 0 ? cableDelay : Time(0);
    return s;
}

IbPartition::Stats
IbPartition::CutLinks(const IbFabric& fabric)
{
    Stats s;
    for (const auto& node : fabric.nodeOf)
    {
        s.ranks = std::max(s.ranks, node->GetSystemId() + 1);
    }
    s.nodesPerRank.assign(s.ranks, 0);
    s.hostsPerRank.assign(s.ranks, 0);
    s.cutCablesOfRank.assign(s.ranks, 0);
    bool anyCut = false;
    for (uint32_t i = 0; i < fabric.nodeOf.size(); ++i)
    {
        Ptr<Node> node = fabric.nodeOf[i];
        const uint32_t rank = node->GetSystemId();
        ++s.nodesPerRank[rank];
        if (!fabric.switchOf[i])
        {
            ++s.hostsPerRank[rank];
        }
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            Ptr<IbNetDevice> dev = DynamicCast<IbNetDevice>(node->GetDevice(d));
            Ptr<IbChannel> ch = dev ? DynamicCast<IbChannel>(dev->GetChannel()) : nullptr;
            if (!ch || ch->GetNDevices() != 2 || ch->GetDevice(0) != dev)
            {
                continue; // no cable, or counted from its first port
            }
            ++s.cables;
            const uint32_t peerRank = ch->GetDevice(1)->GetNode()->GetSystemId();
            if (peerRank != rank)
            {
                ++s.cutCables;
                ++s.cutCablesOfRank[rank];
                if (peerRank < s.ranks)
                {
                    ++s.cutCablesOfRank[peerRank];
                }
                // What ns-3's distributed engines take: the Delay attribute, propagation
                // only (FecLatency would allow more, but they do not know of it).
                s.lookahead = anyCut ? std::min(s.lookahead, ch->GetPropagationDelay())
                                     : ch->GetPropagationDelay();
                anyCut = true;
            }
        }
    }
    return s;
}

void
IbPartition::Print(std::ostream& os, const Stats& stats)
{
    const double pct = stats.cables ? 100.0 * stats.cutCables / stats.cables : 0.0;
    const auto flags = os.flags();
    const auto precision = os.precision();
    os << "partition: " << stats.ranks << " rank(s), " << stats.cutCables << " of " << stats.cables
       << " cables cut (" << std::fixed << std::setprecision(1) << pct << "%), lookahead ";
    os.flags(flags);
    os.precision(precision);
    if (stats.cutCables > 0)
    {
        os << stats.lookahead.GetPicoSeconds() / 1000.0 << " ns";
    }
    else
    {
        os << "unbounded (no cable cut)";
    }
    os << "\n";
    for (uint32_t r = 0; r < stats.ranks; ++r)
    {
        os << "  rank " << r << ": " << stats.nodesPerRank[r] << " nodes (" << stats.hostsPerRank[r]
           << " hosts, " << stats.nodesPerRank[r] - stats.hostsPerRank[r] << " switches), "
           << stats.cutCablesOfRank[r] << " cables to other ranks\n";
    }
}

} // namespace ns3

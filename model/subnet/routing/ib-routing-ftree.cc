/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-routing-ftree.h"

#include "ib-routing-minhop.h"

#include "ns3/log.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbFatTreeRouting");

NS_OBJECT_ENSURE_REGISTERED(IbFatTreeRouting);

TypeId
IbFatTreeRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbFatTreeRouting")
                            .SetParent<IbRoutingEngine>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbFatTreeRouting>();
    return tid;
}

IbFatTreeRouting::IbFatTreeRouting()
{
    NS_LOG_FUNCTION(this);
}

IbFatTreeRouting::~IbFatTreeRouting()
{
    NS_LOG_FUNCTION(this);
}

std::string
IbFatTreeRouting::GetName() const
{
    return "ftree";
}

namespace
{

const uint32_t INF = std::numeric_limits<uint32_t>::max();

} // namespace

bool
IbFatTreeRouting::ComputeLevels(const IbTopology& t,
                                std::vector<int32_t>& level,
                                std::string* error)
{
    const auto& nodes = t.GetNodes();
    level.assign(nodes.size(), -1);
    int32_t withLevel = -1;
    int32_t withoutLevel = -1;
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type != IbTopology::SWITCH)
        {
            continue;
        }
        if (nodes[n].level >= 0)
        {
            withLevel = n;
        }
        else
        {
            withoutLevel = n;
        }
    }
    if (withLevel >= 0 && withoutLevel >= 0)
    {
        if (error)
        {
            *error = "ftree: switch '" + nodes[withLevel].name + "' has a level but switch '" +
                     nodes[withoutLevel].name + "' has none; give every switch a level or none";
        }
        return false;
    }
    if (withLevel >= 0)
    {
        for (uint32_t n = 0; n < nodes.size(); ++n)
        {
            if (nodes[n].type == IbTopology::SWITCH)
            {
                level[n] = nodes[n].level;
            }
        }
        return true;
    }
    // Distance from the nearest CA: switches with CAs are leaves.
    std::vector<uint32_t> queue;
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type != IbTopology::SWITCH)
        {
            continue;
        }
        for (const auto& port : nodes[n].ports)
        {
            if (port.peerNode >= 0 && nodes[port.peerNode].type == IbTopology::CA)
            {
                level[n] = 0;
                queue.push_back(n);
                break;
            }
        }
    }
    for (std::size_t head = 0; head < queue.size(); ++head)
    {
        const uint32_t u = queue[head];
        for (const auto& port : nodes[u].ports)
        {
            if (port.peerNode >= 0 && nodes[port.peerNode].type == IbTopology::SWITCH &&
                level[port.peerNode] < 0)
            {
                level[port.peerNode] = level[u] + 1;
                queue.push_back(port.peerNode);
            }
        }
    }
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type == IbTopology::SWITCH && level[n] < 0)
        {
            if (error)
            {
                *error = "ftree: switch '" + nodes[n].name + "' is connected to no channel adapter";
            }
            return false;
        }
    }
    return true;
}

bool
IbFatTreeRouting::Route(const IbRoutingProblem& problem,
                        IbRoutingTables& tables,
                        std::string* error)
{
    NS_LOG_FUNCTION(this);
    const IbTopology& t = *problem.topology;
    const auto& nodes = t.GetNodes();
    auto fail = [error](const std::string& msg) {
        if (error)
        {
            *error = "ftree: " + msg;
        }
        return false;
    };
    std::vector<int32_t> level;
    if (!ComputeLevels(t, level, error))
    {
        return false;
    }
    using Graph = IbMinHopRouting::SwitchGraph;
    const Graph graph = Graph::Build(problem);
    const uint32_t nSw = graph.Size();
    std::vector<int32_t> lv(nSw);
    int32_t top = 0;
    for (uint32_t s = 0; s < nSw; ++s)
    {
        lv[s] = level[graph.switches[s]];
        top = std::max(top, lv[s]);
    }

    // Check the fat-tree rules; count up ports per level.
    std::vector<uint32_t> upPerLevel(top + 1, 0);
    for (uint32_t s = 0; s < nSw; ++s)
    {
        const uint32_t n = graph.switches[s];
        const auto& ports = nodes[n].ports;
        uint32_t up = 0;
        uint32_t down = 0;
        for (uint32_t p = 1; p < ports.size(); ++p)
        {
            const int32_t peer = ports[p].peerNode;
            if (peer < 0)
            {
                continue;
            }
            if (nodes[peer].type == IbTopology::CA)
            {
                if (lv[s] != 0)
                {
                    return fail("switch '" + nodes[n].name + "' (level " + std::to_string(lv[s]) +
                                ") has channel adapter '" + nodes[peer].name + "' on port " +
                                std::to_string(p) +
                                "; in a fat tree hosts hang off leaf (level 0) switches only");
                }
                continue;
            }
            const int32_t pl = level[peer];
            if (pl == lv[s] + 1)
            {
                ++up;
            }
            else if (pl == lv[s] - 1)
            {
                ++down;
            }
            else
            {
                std::string hint;
                if (pl == 0 && lv[s] == 0 && nodes[n].level < 0)
                {
                    // Levels were derived from where hosts hang: two leaves cabled to each
                    // other usually means a host (a management node, a switch's own
                    // aggregation CA) on a switch that is not a leaf.
                    for (uint32_t k : {static_cast<uint32_t>(peer), n})
                    {
                        for (const auto& q : nodes[k].ports)
                        {
                            if (hint.empty() && q.peerNode >= 0 &&
                                nodes[q.peerNode].type == IbTopology::CA)
                            {
                                hint = ". The levels come from where hosts hang (a switch with "
                                       "a host is a leaf): if '" +
                                       nodes[k].name + "' is not a leaf, its channel adapter '" +
                                       nodes[q.peerNode].name +
                                       "' makes it look like one; cable that host to a leaf, "
                                       "route with updn or minhop, or give every switch its "
                                       "level (IbTopology::GetNodeMutable(i).level, 0 = leaf)";
                            }
                        }
                    }
                }
                return fail("switch '" + nodes[n].name + "' (level " + std::to_string(lv[s]) +
                            ") port " + std::to_string(p) + " is cabled to switch '" +
                            nodes[peer].name + "' (level " + std::to_string(pl) +
                            "); a fat tree only cables adjacent levels" + hint);
            }
        }
        if (lv[s] > 0 && down == 0)
        {
            return fail("switch '" + nodes[n].name + "' (level " + std::to_string(lv[s]) +
                        ") has no link down; in a fat tree every non-leaf switch has children");
        }
        upPerLevel[lv[s]] = std::max(upPerLevel[lv[s]], up);
    }
    std::vector<uint64_t> divisor(top + 1, 1);
    for (int32_t l = 1; l <= top; ++l)
    {
        divisor[l] = divisor[l - 1] * std::max<uint32_t>(1, upPerLevel[l - 1]);
    }

    // Destination indices: CA ports in leaf order, then leaf port order.
    const uint32_t nLids = problem.lidOwner.size();
    std::vector<uint32_t> caIndex(nLids, INF);
    std::vector<std::vector<uint32_t>> lidsOfLeaf(nSw);
    {
        uint32_t idx = 0;
        for (uint32_t s = 0; s < nSw; ++s)
        {
            const auto& ports = nodes[graph.switches[s]].ports;
            for (uint32_t p = 1; p < ports.size(); ++p)
            {
                const int32_t peer = ports[p].peerNode;
                if (peer < 0 || nodes[peer].type != IbTopology::CA)
                {
                    continue;
                }
                const uint16_t base = problem.baseLid[peer][ports[p].peerPort];
                if (base == 0)
                {
                    continue;
                }
                for (uint32_t j = 0; j < (1U << problem.lmc); ++j)
                {
                    caIndex[base + j] = idx;
                    lidsOfLeaf[s].push_back(base + j);
                }
                ++idx;
            }
        }
    }

    tables.lft.assign(nodes.size(), {});
    tables.sl.clear();
    tables.vlsUsed = 1;
    for (uint32_t s = 0; s < nSw; ++s)
    {
        tables.lft[graph.switches[s]].assign(nLids, IbRoutingTables::NO_ROUTE);
    }

    // Switches by decreasing level, for the up distances.
    std::vector<uint32_t> byLevel(nSw);
    for (uint32_t s = 0; s < nSw; ++s)
    {
        byLevel[s] = s;
    }
    std::stable_sort(byLevel.begin(), byLevel.end(), [&](uint32_t a, uint32_t b) {
        return lv[a] > lv[b];
    });

    std::vector<uint8_t> anc(nSw);
    std::vector<uint32_t> upDist(nSw);
    std::vector<uint32_t> queue;
    std::vector<uint32_t> candOffset(nSw + 1);
    std::vector<uint8_t> candPorts;
    std::vector<std::pair<uint32_t, uint8_t>> cands; // one switch's, (neighbour, port)
    std::vector<uint32_t> seenBy(nSw, UINT32_MAX);   // neighbour -> last switch it was seen by
    for (uint32_t leaf = 0; leaf < nSw; ++leaf)
    {
        if (lidsOfLeaf[leaf].empty())
        {
            continue;
        }
        // Ancestors: switches with a down path to the leaf.
        std::fill(anc.begin(), anc.end(), 0);
        anc[leaf] = 1;
        queue.assign(1, leaf);
        for (std::size_t head = 0; head < queue.size(); ++head)
        {
            const uint32_t x = queue[head];
            for (uint32_t e = graph.adjOffset[x]; e < graph.adjOffset[x + 1]; ++e)
            {
                const uint32_t y = graph.adj[e].first;
                if (lv[y] == lv[x] + 1 && !anc[y])
                {
                    anc[y] = 1;
                    queue.push_back(y);
                }
            }
        }
        // Up distance to the nearest ancestor, top levels first.
        for (uint32_t s : byLevel)
        {
            if (anc[s])
            {
                upDist[s] = 0;
                continue;
            }
            uint32_t best = INF;
            for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
            {
                const uint32_t y = graph.adj[e].first;
                if (lv[y] == lv[s] + 1 && upDist[y] != INF)
                {
                    best = std::min(best, upDist[y] + 1);
                }
            }
            if (best == INF)
            {
                std::string hint;
                if (nodes[graph.switches[s]].level < 0)
                {
                    hint = ". The levels come from where hosts hang (a switch with a host is a "
                           "leaf, level 0): a leaf that shows no hosts (ibnetdiscover lists "
                           "only active links) looks like a higher level; give every switch "
                           "its level (IbTopology::GetNodeMutable(i).level, 0 = leaf) or route "
                           "with updn or minhop";
                }
                return fail("switch '" + nodes[graph.switches[s]].name + "' (level " +
                            std::to_string(lv[s]) + ") cannot reach leaf switch '" +
                            nodes[graph.switches[leaf]].name +
                            "' by going up and then down; not a fat tree" + hint);
            }
            upDist[s] = best;
        }
        // Candidate ports, in port order; parallel cables to one neighbour next to each
        // other (in the order its first cable comes), so that the digit that picks a
        // cable here is not the one that picked the neighbour: with cables to spines A
        // and B interleaved (A B A B), a leaf sent spine A only the destinations of
        // even index, and A then used only its first cable down to each leaf.
        candPorts.clear();
        candOffset[0] = 0;
        std::fill(seenBy.begin(), seenBy.end(), UINT32_MAX);
        for (uint32_t s = 0; s < nSw; ++s)
        {
            if (s != leaf)
            {
                cands.clear();
                bool parallel = false;
                for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
                {
                    const uint32_t y = graph.adj[e].first;
                    const bool ok = anc[s] ? (lv[y] == lv[s] - 1 && anc[y])
                                           : (lv[y] == lv[s] + 1 && upDist[y] + 1 == upDist[s]);
                    if (ok)
                    {
                        parallel = parallel || seenBy[y] == s;
                        seenBy[y] = s;
                        cands.emplace_back(y, graph.adj[e].second);
                    }
                }
                for (std::size_t i = 0; i < cands.size(); ++i)
                {
                    if (!parallel)
                    {
                        candPorts.push_back(cands[i].second);
                        continue;
                    }
                    const uint32_t y = cands[i].first;
                    if (y == UINT32_MAX)
                    {
                        continue; // taken with an earlier cable to its neighbour
                    }
                    for (std::size_t k = i; k < cands.size(); ++k)
                    {
                        if (cands[k].first == y)
                        {
                            candPorts.push_back(cands[k].second);
                            cands[k].first = UINT32_MAX;
                        }
                    }
                }
            }
            candOffset[s + 1] = candPorts.size();
        }
        for (uint32_t lid : lidsOfLeaf[leaf])
        {
            const uint64_t idx = caIndex[lid];
            const auto& owner = problem.lidOwner[lid];
            const uint32_t j = lid - problem.baseLid[owner.first][owner.second];
            for (uint32_t s = 0; s < nSw; ++s)
            {
                std::vector<uint8_t>& lft = tables.lft[graph.switches[s]];
                if (s == leaf)
                {
                    lft[lid] = graph.lastPort[lid];
                    continue;
                }
                const uint32_t count = candOffset[s + 1] - candOffset[s];
                // A fat tree leaves no switch without candidates (checked above).
                const uint32_t l = anc[s] ? lv[s] - 1 : lv[s];
                const uint64_t pick = (idx / divisor[l] + j) % count;
                lft[lid] = candPorts[candOffset[s] + pick];
            }
        }
    }

    // Switch LIDs: shortest paths, lowest port.
    IbMinHopRouting::RouteSwitchLids(problem, graph, tables);
    return true;
}

} // namespace ns3

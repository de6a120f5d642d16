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

namespace
{

/// The switches and their cables, by switch position.
using SwitchGraph = IbMinHopRouting::SwitchGraph;

/**
 * Report that the fabric is not a fat tree.
 * @param [out] error receives "ftree: " followed by @p msg (may be null)
 * @param msg why
 * @return false
 */
bool
Fail(std::string* error, const std::string& msg)
{
    if (error)
    {
        *error = "ftree: " + msg;
    }
    return false;
}

/**
 * Levels by switch position.
 * @param graph the switch graph
 * @param level level per node index (ComputeLevels)
 * @param [out] lv level per switch position
 * @return the highest level (0 without switches)
 */
int32_t
SwitchLevels(const SwitchGraph& graph, const std::vector<int32_t>& level, std::vector<int32_t>& lv)
{
    const uint32_t nSw = graph.Size();
    lv.assign(nSw, 0);
    int32_t top = 0;
    for (uint32_t s = 0; s < nSw; ++s)
    {
        lv[s] = level[graph.switches[s]];
        top = std::max(top, lv[s]);
    }
    return top;
}

/**
 * The hint for two leaves cabled to each other when the levels were derived from where
 * hosts hang: usually a host (a management node, a switch's own aggregation CA) on a
 * switch that is not a leaf.
 * @param nodes the fabric's nodes
 * @param peer the leaf at the other end of the cable (node index)
 * @param n the leaf whose port is checked (node index)
 * @return the hint naming the first of the two with a channel adapter, or "" if neither has one
 */
std::string
LeafToLeafHint(const std::vector<IbTopology::Node>& nodes, uint32_t peer, uint32_t n)
{
    std::string hint;
    for (uint32_t k : {peer, n})
    {
        for (const auto& q : nodes[k].ports)
        {
            if (hint.empty() && q.peerNode >= 0 && nodes[q.peerNode].type == IbTopology::CA)
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
    return hint;
}

/**
 * Check the fat-tree rules: hosts on leaves only, cables between adjacent levels only,
 * children below every non-leaf switch.
 * @param nodes the fabric's nodes
 * @param graph the switch graph
 * @param level level per node index
 * @param lv level per switch position
 * @param top the highest level
 * @param [out] upPerLevel per level, the most up ports of one of its switches
 * @param [out] error the rule broken, on failure (may be null)
 * @return true if the fabric is a fat tree so far
 */
bool
CheckFatTree(const std::vector<IbTopology::Node>& nodes,
             const SwitchGraph& graph,
             const std::vector<int32_t>& level,
             const std::vector<int32_t>& lv,
             int32_t top,
             std::vector<uint32_t>& upPerLevel,
             std::string* error)
{
    upPerLevel.assign(top + 1, 0);
    for (uint32_t s = 0; s < graph.Size(); ++s)
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
                    return Fail(error,
                                "switch '" + nodes[n].name + "' (level " + std::to_string(lv[s]) +
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
                    hint = LeafToLeafHint(nodes, static_cast<uint32_t>(peer), n);
                }
                return Fail(error,
                            "switch '" + nodes[n].name + "' (level " + std::to_string(lv[s]) +
                                ") port " + std::to_string(p) + " is cabled to switch '" +
                                nodes[peer].name + "' (level " + std::to_string(pl) +
                                "); a fat tree only cables adjacent levels" + hint);
            }
        }
        if (lv[s] > 0 && down == 0)
        {
            return Fail(error,
                        "switch '" + nodes[n].name + "' (level " + std::to_string(lv[s]) +
                            ") has no link down; in a fat tree every non-leaf switch has children");
        }
        upPerLevel[lv[s]] = std::max(upPerLevel[lv[s]], up);
    }
    return true;
}

/**
 * The d-mod-k divisors: D_0 = 1, D_{l+1} = D_l * (up ports of level-l switches, at least 1).
 * @param upPerLevel per level, the most up ports of one of its switches
 * @return D_l per level l
 */
std::vector<uint64_t>
LevelDivisors(const std::vector<uint32_t>& upPerLevel)
{
    const int32_t top = static_cast<int32_t>(upPerLevel.size()) - 1;
    std::vector<uint64_t> divisor(top + 1, 1);
    for (int32_t l = 1; l <= top; ++l)
    {
        divisor[l] = divisor[l - 1] * std::max<uint32_t>(1, upPerLevel[l - 1]);
    }
    return divisor;
}

/// The destinations: CA LIDs, numbered and grouped by the leaf that delivers them.
struct Destinations
{
    /// LID -> destination index (CA ports in leaf order, then leaf port order), INF if none.
    std::vector<uint32_t> caIndex;
    /// Switch position -> the CA LIDs its ports deliver.
    std::vector<std::vector<uint32_t>> lidsOfLeaf;
};

/**
 * Number the destinations: CA ports in leaf order, then leaf port order.
 * @param problem topology and LIDs
 * @param graph the switch graph
 * @return the numbering
 */
Destinations
NumberDestinations(const IbRoutingProblem& problem, const SwitchGraph& graph)
{
    const auto& nodes = problem.topology->GetNodes();
    const uint32_t nSw = graph.Size();
    Destinations dest;
    dest.caIndex.assign(problem.lidOwner.size(), INF);
    dest.lidsOfLeaf.resize(nSw);
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
                dest.caIndex[base + j] = idx;
                dest.lidsOfLeaf[s].push_back(base + j);
            }
            ++idx;
        }
    }
    return dest;
}

/**
 * Start the tables afresh: every switch's LFT with every LID unrouted, no SLs, one VL.
 * @param problem topology and LIDs
 * @param graph the switch graph
 * @param [out] tables the tables
 */
void
ResetTables(const IbRoutingProblem& problem, const SwitchGraph& graph, IbRoutingTables& tables)
{
    tables.lft.assign(problem.topology->GetNodes().size(), {});
    tables.sl.clear();
    tables.vlsUsed = 1;
    for (uint32_t s = 0; s < graph.Size(); ++s)
    {
        tables.lft[graph.switches[s]].assign(problem.lidOwner.size(), IbRoutingTables::NO_ROUTE);
    }
}

/**
 * @param lv level per switch position
 * @return the switch positions by decreasing level (stable: by position within a level)
 */
std::vector<uint32_t>
ByDecreasingLevel(const std::vector<int32_t>& lv)
{
    std::vector<uint32_t> byLevel(lv.size());
    for (uint32_t s = 0; s < lv.size(); ++s)
    {
        byLevel[s] = s;
    }
    std::stable_sort(byLevel.begin(), byLevel.end(), [&](uint32_t a, uint32_t b) {
        return lv[a] > lv[b];
    });
    return byLevel;
}

/// Routing towards one leaf: the working state, reused from leaf to leaf.
struct LeafState
{
    /**
     * @param nSw number of switches
     */
    explicit LeafState(uint32_t nSw)
        : anc(nSw),
          upDist(nSw),
          candOffset(nSw + 1),
          seenBy(nSw, UINT32_MAX)
    {
    }

    std::vector<uint8_t> anc;     ///< per switch: has a down path to the leaf (an ancestor)
    std::vector<uint32_t> upDist; ///< per switch: up hops to the nearest ancestor
    std::vector<uint32_t> queue;  ///< breadth-first search queue
    /// Candidate ports of switch s: candPorts[candOffset[s] .. candOffset[s + 1]).
    std::vector<uint32_t> candOffset;
    std::vector<uint8_t> candPorts;                  ///< see candOffset
    std::vector<std::pair<uint32_t, uint8_t>> cands; ///< one switch's, (neighbour, port)
    std::vector<uint32_t> seenBy;                    ///< neighbour -> last switch it was seen by
};

/**
 * Mark the ancestors of a leaf: the switches with a down path to it.
 * @param graph the switch graph
 * @param lv level per switch position
 * @param leaf the leaf (switch position)
 * @param [in,out] w fills anc (uses queue)
 */
void
MarkAncestors(const SwitchGraph& graph, const std::vector<int32_t>& lv, uint32_t leaf, LeafState& w)
{
    std::fill(w.anc.begin(), w.anc.end(), 0);
    w.anc[leaf] = 1;
    w.queue.assign(1, leaf);
    for (std::size_t head = 0; head < w.queue.size(); ++head)
    {
        const uint32_t x = w.queue[head];
        for (uint32_t e = graph.adjOffset[x]; e < graph.adjOffset[x + 1]; ++e)
        {
            const uint32_t y = graph.adj[e].first;
            if (lv[y] == lv[x] + 1 && !w.anc[y])
            {
                w.anc[y] = 1;
                w.queue.push_back(y);
            }
        }
    }
}

/**
 * The up distance of every switch to the leaf's nearest ancestor, top levels first.
 * @param nodes the fabric's nodes
 * @param graph the switch graph
 * @param lv level per switch position
 * @param byLevel switch positions by decreasing level
 * @param leaf the leaf (switch position)
 * @param [in,out] w fills upDist (from anc)
 * @param [out] error the switch that cannot reach the leaf, on failure (may be null)
 * @return true if every switch reaches the leaf by going up and then down
 */
bool
ComputeUpDistances(const std::vector<IbTopology::Node>& nodes,
                   const SwitchGraph& graph,
                   const std::vector<int32_t>& lv,
                   const std::vector<uint32_t>& byLevel,
                   uint32_t leaf,
                   LeafState& w,
                   std::string* error)
{
    for (uint32_t s : byLevel)
    {
        if (w.anc[s])
        {
            w.upDist[s] = 0;
            continue;
        }
        uint32_t best = INF;
        for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
        {
            const uint32_t y = graph.adj[e].first;
            if (lv[y] == lv[s] + 1 && w.upDist[y] != INF)
            {
                best = std::min(best, w.upDist[y] + 1);
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
            return Fail(error,
                        "switch '" + nodes[graph.switches[s]].name + "' (level " +
                            std::to_string(lv[s]) + ") cannot reach leaf switch '" +
                            nodes[graph.switches[leaf]].name +
                            "' by going up and then down; not a fat tree" + hint);
        }
        w.upDist[s] = best;
    }
    return true;
}

/**
 * The candidate ports of every switch towards the leaf: down to a child that is an
 * ancestor (from an ancestor), else up to a parent on a shortest way to one.
 * @param graph the switch graph
 * @param lv level per switch position
 * @param leaf the leaf (switch position), which gets none
 * @param [in,out] w fills candOffset and candPorts (from anc and upDist; uses cands and
 *        seenBy)
 */
void
CollectCandidates(const SwitchGraph& graph,
                  const std::vector<int32_t>& lv,
                  uint32_t leaf,
                  LeafState& w)
{
    // Candidate ports, in port order; parallel cables to one neighbour next to each
    // other (in the order its first cable comes), so that the digit that picks a
    // cable here is not the one that picked the neighbour: with cables to spines A
    // and B interleaved (A B A B), a leaf sent spine A only the destinations of
    // even index, and A then used only its first cable down to each leaf.
    w.candPorts.clear();
    w.candOffset[0] = 0;
    std::fill(w.seenBy.begin(), w.seenBy.end(), UINT32_MAX);
    for (uint32_t s = 0; s < graph.Size(); ++s)
    {
        if (s != leaf)
        {
            w.cands.clear();
            bool parallel = false;
            for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
            {
                const uint32_t y = graph.adj[e].first;
                const bool ok = w.anc[s] ? (lv[y] == lv[s] - 1 && w.anc[y])
                                         : (lv[y] == lv[s] + 1 && w.upDist[y] + 1 == w.upDist[s]);
                if (ok)
                {
                    parallel = parallel || w.seenBy[y] == s;
                    w.seenBy[y] = s;
                    w.cands.emplace_back(y, graph.adj[e].second);
                }
            }
            for (std::size_t i = 0; i < w.cands.size(); ++i)
            {
                if (!parallel)
                {
                    w.candPorts.push_back(w.cands[i].second);
                    continue;
                }
                const uint32_t y = w.cands[i].first;
                if (y == UINT32_MAX)
                {
                    continue; // taken with an earlier cable to its neighbour
                }
                for (std::size_t k = i; k < w.cands.size(); ++k)
                {
                    if (w.cands[k].first == y)
                    {
                        w.candPorts.push_back(w.cands[k].second);
                        w.cands[k].first = UINT32_MAX;
                    }
                }
            }
        }
        w.candOffset[s + 1] = w.candPorts.size();
    }
}

/**
 * Route the leaf's CA LIDs on every switch: d-mod-k among the candidates.
 * @param problem topology and LIDs
 * @param graph the switch graph
 * @param lv level per switch position
 * @param divisor D_l per level l
 * @param dest the destination numbering
 * @param leaf the leaf (switch position)
 * @param w the candidates (and ancestors) towards the leaf
 * @param [in,out] tables the LFTs written
 */
void
WriteLeafRoutes(const IbRoutingProblem& problem,
                const SwitchGraph& graph,
                const std::vector<int32_t>& lv,
                const std::vector<uint64_t>& divisor,
                const Destinations& dest,
                uint32_t leaf,
                const LeafState& w,
                IbRoutingTables& tables)
{
    for (uint32_t lid : dest.lidsOfLeaf[leaf])
    {
        const uint64_t idx = dest.caIndex[lid];
        const auto& owner = problem.lidOwner[lid];
        const uint32_t j = lid - problem.baseLid[owner.first][owner.second];
        for (uint32_t s = 0; s < graph.Size(); ++s)
        {
            std::vector<uint8_t>& lft = tables.lft[graph.switches[s]];
            if (s == leaf)
            {
                lft[lid] = graph.lastPort[lid];
                continue;
            }
            const uint32_t count = w.candOffset[s + 1] - w.candOffset[s];
            // A fat tree leaves no switch without candidates (checked above).
            const uint32_t l = w.anc[s] ? lv[s] - 1 : lv[s];
            const uint64_t pick = (idx / divisor[l] + j) % count;
            lft[lid] = w.candPorts[w.candOffset[s] + pick];
        }
    }
}

/**
 * Route every CA LID, leaf by leaf.
 * @param problem topology and LIDs
 * @param graph the switch graph
 * @param lv level per switch position
 * @param divisor D_l per level l
 * @param dest the destination numbering
 * @param [in,out] tables the LFTs written (reset before)
 * @param [out] error the switch that cannot reach a leaf, on failure (may be null)
 * @return true on success
 */
bool
RouteCaLids(const IbRoutingProblem& problem,
            const SwitchGraph& graph,
            const std::vector<int32_t>& lv,
            const std::vector<uint64_t>& divisor,
            const Destinations& dest,
            IbRoutingTables& tables,
            std::string* error)
{
    const auto& nodes = problem.topology->GetNodes();
    // Switches by decreasing level, for the up distances.
    const std::vector<uint32_t> byLevel = ByDecreasingLevel(lv);
    LeafState w(graph.Size());
    for (uint32_t leaf = 0; leaf < graph.Size(); ++leaf)
    {
        if (dest.lidsOfLeaf[leaf].empty())
        {
            continue;
        }
        MarkAncestors(graph, lv, leaf, w);
        if (!ComputeUpDistances(nodes, graph, lv, byLevel, leaf, w, error))
        {
            return false;
        }
        CollectCandidates(graph, lv, leaf, w);
        WriteLeafRoutes(problem, graph, lv, divisor, dest, leaf, w, tables);
    }
    return true;
}

} // namespace

bool
IbFatTreeRouting::Route(const IbRoutingProblem& problem,
                        IbRoutingTables& tables,
                        std::string* error)
{
    NS_LOG_FUNCTION(this);
    const IbTopology& t = *problem.topology;
    std::vector<int32_t> level;
    if (!ComputeLevels(t, level, error))
    {
        return false;
    }
    const SwitchGraph graph = SwitchGraph::Build(problem);
    std::vector<int32_t> lv;
    const int32_t top = SwitchLevels(graph, level, lv);
    std::vector<uint32_t> upPerLevel;
    if (!CheckFatTree(t.GetNodes(), graph, level, lv, top, upPerLevel, error))
    {
        return false;
    }
    const std::vector<uint64_t> divisor = LevelDivisors(upPerLevel);
    const Destinations dest = NumberDestinations(problem, graph);
    ResetTables(problem, graph, tables);
    if (!RouteCaLids(problem, graph, lv, divisor, dest, tables, error))
    {
        return false;
    }
    // Switch LIDs: shortest paths, lowest port.
    IbMinHopRouting::RouteSwitchLids(problem, graph, tables);
    return true;
}

} // namespace ns3

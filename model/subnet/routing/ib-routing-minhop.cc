/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-routing-minhop.h"

#include "ns3/log.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbMinHopRouting");

NS_OBJECT_ENSURE_REGISTERED(IbMinHopRouting);

TypeId
IbMinHopRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbMinHopRouting")
                            .SetParent<IbRoutingEngine>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbMinHopRouting>();
    return tid;
}

IbMinHopRouting::IbMinHopRouting()
{
    NS_LOG_FUNCTION(this);
}

IbMinHopRouting::~IbMinHopRouting()
{
    NS_LOG_FUNCTION(this);
}

std::string
IbMinHopRouting::GetName() const
{
    return "minhop";
}

IbMinHopRouting::SwitchGraph
IbMinHopRouting::SwitchGraph::Build(const IbRoutingProblem& problem)
{
    const IbTopology& t = *problem.topology;
    const auto& nodes = t.GetNodes();
    SwitchGraph g;
    g.position.assign(nodes.size(), -1);
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type == IbTopology::SWITCH)
        {
            g.position[n] = static_cast<int32_t>(g.switches.size());
            g.switches.push_back(n);
        }
    }
    g.adjOffset.reserve(g.switches.size() + 1);
    g.adjOffset.push_back(0);
    for (uint32_t n : g.switches)
    {
        const auto& ports = nodes[n].ports;
        for (uint32_t p = 1; p < ports.size(); ++p)
        {
            const int32_t peer = ports[p].peerNode;
            if (peer >= 0 && g.position[peer] >= 0 && static_cast<uint32_t>(peer) != n)
            {
                g.adj.emplace_back(g.position[peer], static_cast<uint8_t>(p));
            }
        }
        g.adjOffset.push_back(g.adj.size());
    }
    const uint32_t nLids = problem.lidOwner.size();
    g.destPos.assign(nLids, -1);
    g.lastPort.assign(nLids, 0);
    for (uint32_t lid = 1; lid < nLids; ++lid)
    {
        const auto& owner = problem.lidOwner[lid];
        if (owner.first < 0)
        {
            continue;
        }
        const IbTopology::Node& node = nodes[owner.first];
        if (node.type == IbTopology::SWITCH)
        {
            g.destPos[lid] = g.position[owner.first];
            g.lastPort[lid] = 0;
            continue;
        }
        if (owner.second == 0 || owner.second >= node.ports.size())
        {
            continue;
        }
        const IbTopology::Port& port = node.ports[owner.second];
        if (port.peerNode >= 0 && g.position[port.peerNode] >= 0)
        {
            g.destPos[lid] = g.position[port.peerNode];
            g.lastPort[lid] = port.peerPort;
        }
    }
    return g;
}

void
IbMinHopRouting::Bfs(const SwitchGraph& graph, uint32_t d, std::vector<uint32_t>& dist)
{
    const uint32_t inf = std::numeric_limits<uint32_t>::max();
    dist.assign(graph.Size(), inf);
    std::vector<uint32_t> queue;
    queue.reserve(graph.Size());
    dist[d] = 0;
    queue.push_back(d);
    for (std::size_t head = 0; head < queue.size(); ++head)
    {
        const uint32_t u = queue[head];
        for (uint32_t e = graph.adjOffset[u]; e < graph.adjOffset[u + 1]; ++e)
        {
            const uint32_t v = graph.adj[e].first;
            if (dist[v] == inf)
            {
                dist[v] = dist[u] + 1;
                queue.push_back(v);
            }
        }
    }
}

namespace
{

/// "0x001f"
std::string
LidString(uint32_t lid)
{
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%04x", lid);
    return buf;
}

} // namespace

bool
IbMinHopRouting::RouteBalanced(const IbRoutingProblem& problem,
                               const SwitchGraph& graph,
                               const CandidateFunction& candidates,
                               const std::string& engine,
                               IbRoutingTables& tables,
                               std::string* error)
{
    const IbTopology& t = *problem.topology;
    const auto& nodes = t.GetNodes();
    const uint32_t nLids = problem.lidOwner.size();
    const uint32_t nSw = graph.Size();

    // Which destination switches are needed at all.
    std::vector<bool> needed(nSw, false);
    for (uint32_t lid = 1; lid < nLids; ++lid)
    {
        if (graph.destPos[lid] >= 0)
        {
            needed[graph.destPos[lid]] = true;
        }
    }
    std::vector<PortCandidates> cand(nSw);
    for (uint32_t d = 0; d < nSw; ++d)
    {
        if (!needed[d])
        {
            continue;
        }
        if (!candidates(d, cand[d], error))
        {
            return false;
        }
    }

    tables.lft.assign(nodes.size(), {});
    tables.sl.clear();
    tables.vlsUsed = 1;
    const bool lmc = problem.lmc > 0;
    // Per LID: 1 = CA LID (counted), 2 = also the first LID of its CA port.
    std::vector<uint8_t> kind(nLids, 0);
    for (uint32_t lid = 1; lid < nLids; ++lid)
    {
        const auto& owner = problem.lidOwner[lid];
        if (owner.first >= 0 && nodes[owner.first].type == IbTopology::CA)
        {
            kind[lid] = lid == problem.baseLid[owner.first][owner.second] ? 2 : 1;
        }
    }
    std::vector<uint32_t> count;
    // LMC spreading: ports and neighbour nodes used by the current CA port's earlier
    // LIDs carry the current group stamp.
    std::vector<uint32_t> portMark;
    std::vector<uint32_t> remoteMark(nodes.size(), 0);
    uint32_t group = 0;
    for (uint32_t s = 0; s < nSw; ++s)
    {
        const uint32_t node = graph.switches[s];
        const auto& ports = nodes[node].ports;
        std::vector<uint8_t>& lft = tables.lft[node];
        lft.assign(nLids, IbRoutingTables::NO_ROUTE);
        count.assign(ports.size(), 0);
        portMark.assign(ports.size(), 0);
        for (uint32_t lid = 1; lid < nLids; ++lid)
        {
            const int32_t d = graph.destPos[lid];
            if (d < 0)
            {
                continue;
            }
            if (kind[lid] == 2)
            {
                ++group;
            }
            if (static_cast<uint32_t>(d) == s)
            {
                lft[lid] = graph.lastPort[lid];
                continue;
            }
            const PortCandidates& c = cand[d];
            const uint32_t begin = c.offset[s];
            const uint32_t end = c.offset[s + 1];
            if (begin == end)
            {
                if (error)
                {
                    const auto& owner = problem.lidOwner[lid];
                    *error = engine + ": switch '" + nodes[node].name + "' has no path to LID " +
                             LidString(lid) + " ('" + nodes[owner.first].name + "' port " +
                             std::to_string(owner.second) + ", behind switch '" +
                             nodes[graph.switches[d]].name + "')";
                }
                return false;
            }
            uint8_t best = c.ports[begin];
            if (end - begin > 1)
            {
                const bool spread = lmc && kind[lid] != 0;
                // Lexicographic (neighbour used, port used, count); ties: lowest port.
                uint64_t bestKey = std::numeric_limits<uint64_t>::max();
                for (uint32_t i = begin; i < end; ++i)
                {
                    const uint8_t p = c.ports[i];
                    uint64_t key = count[p];
                    if (spread)
                    {
                        key |= static_cast<uint64_t>(remoteMark[ports[p].peerNode] == group) << 33;
                        key |= static_cast<uint64_t>(portMark[p] == group) << 32;
                    }
                    if (key < bestKey)
                    {
                        bestKey = key;
                        best = p;
                    }
                }
            }
            lft[lid] = best;
            if (kind[lid] != 0)
            {
                ++count[best];
                portMark[best] = group;
                remoteMark[ports[best].peerNode] = group;
            }
        }
    }
    return true;
}

bool
IbMinHopRouting::Route(const IbRoutingProblem& problem, IbRoutingTables& tables, std::string* error)
{
    NS_LOG_FUNCTION(this);
    const SwitchGraph graph = SwitchGraph::Build(problem);
    const auto& nodes = problem.topology->GetNodes();
    std::vector<uint32_t> dist;
    auto candidates = [&](uint32_t d, PortCandidates& out, std::string* err) {
        Bfs(graph, d, dist);
        out.offset.assign(1, 0);
        out.ports.clear();
        for (uint32_t s = 0; s < graph.Size(); ++s)
        {
            if (dist[s] == std::numeric_limits<uint32_t>::max())
            {
                if (err)
                {
                    *err = "minhop: switch '" + nodes[graph.switches[s]].name +
                           "' cannot reach switch '" + nodes[graph.switches[d]].name +
                           "': the fabric is not connected" + std::string(kSeparateSubnetsHint);
                }
                return false;
            }
            for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
            {
                if (dist[graph.adj[e].first] + 1 == dist[s])
                {
                    out.ports.push_back(graph.adj[e].second);
                }
            }
            out.offset.push_back(out.ports.size());
        }
        return true;
    };
    return RouteBalanced(problem, graph, candidates, "minhop", tables, error);
}

void
IbMinHopRouting::RouteSwitchLids(const IbRoutingProblem& problem,
                                 const SwitchGraph& graph,
                                 IbRoutingTables& tables)
{
    const auto& nodes = problem.topology->GetNodes();
    const uint32_t nSw = graph.Size();
    const uint32_t nLids = problem.lidOwner.size();
    std::vector<uint32_t> dist;
    for (uint32_t lid = 1; lid < nLids; ++lid)
    {
        const auto& owner = problem.lidOwner[lid];
        if (owner.first < 0 || nodes[owner.first].type != IbTopology::SWITCH)
        {
            continue;
        }
        const uint32_t d = graph.position[owner.first];
        Bfs(graph, d, dist);
        for (uint32_t s = 0; s < nSw; ++s)
        {
            std::vector<uint8_t>& lft = tables.lft[graph.switches[s]];
            if (s == d)
            {
                lft[lid] = 0;
                continue;
            }
            for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
            {
                if (dist[graph.adj[e].first] + 1 == dist[s])
                {
                    lft[lid] = graph.adj[e].second;
                    break;
                }
            }
        }
    }
}

} // namespace ns3

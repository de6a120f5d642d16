/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-routing-updn.h"

#include "ib-routing-minhop.h"

#include "ns3/log.h"
#include "ns3/string.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbUpDownRouting");

NS_OBJECT_ENSURE_REGISTERED(IbUpDownRouting);

TypeId
IbUpDownRouting::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbUpDownRouting")
            .SetParent<IbRoutingEngine>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbUpDownRouting>()
            .AddAttribute(
                "RootGuids",
                "Node GUIDs of the root switches, comma-separated hex (for example "
                "\"0x0002c90300000011,0x0002c90300000012\"). Empty: detect the roots "
                "(highest level if levels are known, else the most central switches: those that "
                "reach 90 % of the CA ports in the fewest hops).",
                StringValue(""),
                MakeStringAccessor(&IbUpDownRouting::m_rootGuids),
                MakeStringChecker());
    return tid;
}

IbUpDownRouting::IbUpDownRouting()
{
    NS_LOG_FUNCTION(this);
}

IbUpDownRouting::~IbUpDownRouting()
{
    NS_LOG_FUNCTION(this);
}

std::string
IbUpDownRouting::GetName() const
{
    return "updn";
}

const std::vector<uint32_t>&
IbUpDownRouting::GetRoots() const
{
    return m_roots;
}

namespace
{

const uint32_t INF = std::numeric_limits<uint32_t>::max();

/// "0x0002c90300000001"
std::string
GuidString(uint64_t guid)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(guid));
    return buf;
}

} // namespace

bool
IbUpDownRouting::Route(const IbRoutingProblem& problem, IbRoutingTables& tables, std::string* error)
{
    NS_LOG_FUNCTION(this);
    const IbTopology& t = *problem.topology;
    const auto& nodes = t.GetNodes();
    auto fail = [error](const std::string& msg) {
        if (error)
        {
            *error = msg;
        }
        return false;
    };
    std::vector<uint32_t> roots;
    if (!m_rootGuids.empty())
    {
        std::stringstream ss(m_rootGuids);
        std::string item;
        while (std::getline(ss, item, ','))
        {
            const auto first = item.find_first_not_of(" \t");
            if (first == std::string::npos)
            {
                continue;
            }
            item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
            uint64_t guid = 0;
            std::size_t used = 0;
            try
            {
                guid = std::stoull(item, &used, 16);
            }
            catch (const std::exception&)
            {
                used = 0;
            }
            if (used != item.size())
            {
                return fail("updn: RootGuids entry '" + item +
                            "' is not a hex GUID; expected e.g. 0x0002c90300000011");
            }
            const int32_t n = t.FindByGuid(guid);
            if (n < 0)
            {
                return fail("updn: RootGuids names " + GuidString(guid) +
                            ", which is no node of the fabric");
            }
            if (nodes[n].type != IbTopology::SWITCH)
            {
                return fail("updn: RootGuids names " + GuidString(guid) + " ('" + nodes[n].name +
                            "'), a channel adapter; roots must be switches");
            }
            roots.push_back(n);
        }
        if (roots.empty())
        {
            return fail("updn: RootGuids '" + m_rootGuids + "' names no switch");
        }
        m_roots = roots;
        return RouteWithRoots(problem, roots, tables, error);
    }

    // Detect the roots.
    const auto switches = t.GetSwitches();
    if (switches.empty())
    {
        tables.lft.assign(nodes.size(), {});
        tables.sl.clear();
        tables.vlsUsed = 1;
        m_roots.clear();
        return true;
    }
    const bool levels = std::all_of(switches.begin(), switches.end(), [&](uint32_t s) {
        return nodes[s].level >= 0;
    });
    if (levels)
    {
        int32_t top = -1;
        for (uint32_t s : switches)
        {
            top = std::max(top, nodes[s].level);
        }
        for (uint32_t s : switches)
        {
            if (nodes[s].level == top)
            {
                roots.push_back(s);
            }
        }
    }
    else
    {
        // The most central switches: for each switch, the hop distance within which 90 %
        // of the CA ports lie (a BFS over the switches from it); the roots are the
        // switches where that distance is smallest. A fat tree's spines (top level) see
        // every host at the same, smallest such distance, whatever else is cabled to them:
        // a management node or an aggregation node on a spine (counted as a CA, as
        // ibnetdiscover lists it) does not push it out of the roots, which ranking the
        // switches by their distance from the nearest CA did. (OpenSM asks for one hop
        // count holding over 90 % of the CAs and no other over 5 %, which in a large
        // two-level tree also elects the leaves.)
        std::vector<uint32_t> casAt(nodes.size(), 0); // CA ports cabled to each switch
        uint64_t totalCas = 0;
        for (uint32_t s : switches)
        {
            for (const auto& port : nodes[s].ports)
            {
                if (port.peerNode >= 0 && nodes[port.peerNode].type == IbTopology::CA)
                {
                    ++casAt[s];
                    ++totalCas;
                }
            }
        }
        std::vector<uint32_t> dist(nodes.size(), INF);
        std::vector<uint32_t> queue;
        std::vector<uint32_t> reach(switches.size(), INF);
        uint32_t best = INF;
        for (std::size_t k = 0; k < switches.size(); ++k)
        {
            for (uint32_t v : queue)
            {
                dist[v] = INF;
            }
            queue.assign(1, switches[k]);
            dist[switches[k]] = 0;
            uint64_t seen = 0;
            for (std::size_t head = 0; head < queue.size(); ++head)
            {
                const uint32_t u = queue[head];
                seen += casAt[u];
                if (reach[k] == INF && totalCas > 0 && seen * 10 >= totalCas * 9)
                {
                    reach[k] = dist[u]; // BFS order: the first distance that covers 90 %
                }
                for (const auto& port : nodes[u].ports)
                {
                    if (port.peerNode >= 0 && nodes[port.peerNode].type == IbTopology::SWITCH &&
                        dist[port.peerNode] == INF)
                    {
                        dist[port.peerNode] = dist[u] + 1;
                        queue.push_back(port.peerNode);
                    }
                }
            }
            best = std::min(best, reach[k]);
        }
        for (std::size_t k = 0; k < switches.size(); ++k)
        {
            if (reach[k] == best)
            {
                roots.push_back(switches[k]);
            }
        }
    }
    m_roots = roots;
    std::string firstError;
    if (RouteWithRoots(problem, roots, tables, &firstError))
    {
        return true;
    }
    if (roots.size() > 1)
    {
        NS_LOG_WARN("updn: " << roots.size() << " detected roots leave switches without a "
                             << "legal path (" << firstError << "); using one root, '"
                             << nodes[roots.front()].name << "'");
        m_roots = {roots.front()};
        if (RouteWithRoots(problem, m_roots, tables, error))
        {
            return true;
        }
        return false;
    }
    return fail(firstError);
}

bool
IbUpDownRouting::RouteWithRoots(const IbRoutingProblem& problem,
                                const std::vector<uint32_t>& roots,
                                IbRoutingTables& tables,
                                std::string* error)
{
    const auto& nodes = problem.topology->GetNodes();
    using Graph = IbMinHopRouting::SwitchGraph;
    const Graph graph = Graph::Build(problem);
    const uint32_t nSw = graph.Size();

    // Ranks: BFS distance from the roots.
    std::vector<uint32_t> rank(nSw, INF);
    std::vector<uint32_t> queue;
    for (uint32_t r : roots)
    {
        const int32_t pos = graph.position[r];
        if (rank[pos] == INF)
        {
            rank[pos] = 0;
            queue.push_back(pos);
        }
    }
    for (std::size_t head = 0; head < queue.size(); ++head)
    {
        const uint32_t u = queue[head];
        for (uint32_t e = graph.adjOffset[u]; e < graph.adjOffset[u + 1]; ++e)
        {
            const uint32_t v = graph.adj[e].first;
            if (rank[v] == INF)
            {
                rank[v] = rank[u] + 1;
                queue.push_back(v);
            }
        }
    }
    for (uint32_t s = 0; s < nSw; ++s)
    {
        if (rank[s] == INF)
        {
            if (error)
            {
                *error = "updn: switch '" + nodes[graph.switches[s]].name +
                         "' is not connected to any root switch" +
                         std::string(IbMinHopRouting::kSeparateSubnetsHint);
            }
            return false;
        }
    }
    // Total order (rank, GUID): ord[s] smaller = higher up.
    std::vector<uint32_t> byOrder(nSw);
    std::iota(byOrder.begin(), byOrder.end(), 0);
    std::sort(byOrder.begin(), byOrder.end(), [&](uint32_t a, uint32_t b) {
        if (rank[a] != rank[b])
        {
            return rank[a] < rank[b];
        }
        return nodes[graph.switches[a]].guid < nodes[graph.switches[b]].guid;
    });
    std::vector<uint32_t> ord(nSw);
    for (uint32_t i = 0; i < nSw; ++i)
    {
        ord[byOrder[i]] = i;
    }

    // Destination switches with CA LIDs need legal paths; the others (switch LIDs only,
    // management traffic) fall back to shortest paths where no legal path exists.
    std::vector<bool> hasCaLid(nSw, false);
    for (uint32_t lid = 1; lid < problem.lidOwner.size(); ++lid)
    {
        const auto& owner = problem.lidOwner[lid];
        if (owner.first >= 0 && nodes[owner.first].type == IbTopology::CA &&
            graph.destPos[lid] >= 0)
        {
            hasCaLid[graph.destPos[lid]] = true;
        }
    }
    // Switches where CA traffic starts (a CA is cabled to them). A switch without CAs
    // that has no legal path to a CA LID is never on one of that LID's legal routes
    // (nobody forwards to it: its distance stays infinite), so, like a management-only
    // destination, it gets a plain shortest path that no CA traffic takes. (A second
    // root in a tree, for a CA cabled to the first, is such a switch.)
    std::vector<bool> caSwitch(nSw, false);
    for (uint32_t s = 0; s < nSw; ++s)
    {
        for (const auto& port : nodes[graph.switches[s]].ports)
        {
            if (port.peerNode >= 0 && nodes[port.peerNode].type == IbTopology::CA)
            {
                caSwitch[s] = true;
                break;
            }
        }
    }
    std::vector<uint32_t> dd;
    std::vector<uint32_t> h;
    std::vector<uint32_t> bfs;
    std::vector<std::vector<uint8_t>> upPorts(nSw);
    auto candidates = [&](uint32_t d, IbMinHopRouting::PortCandidates& out, std::string* err) {
        // dd: shortest all-down distance to d (down move x->y: ord[y] > ord[x]).
        dd.assign(nSw, INF);
        queue.clear();
        dd[d] = 0;
        queue.push_back(d);
        for (std::size_t head = 0; head < queue.size(); ++head)
        {
            const uint32_t y = queue[head];
            for (uint32_t e = graph.adjOffset[y]; e < graph.adjOffset[y + 1]; ++e)
            {
                const uint32_t x = graph.adj[e].first;
                if (ord[x] < ord[y] && dd[x] == INF)
                {
                    dd[x] = dd[y] + 1;
                    queue.push_back(x);
                }
            }
        }
        // h: the length of the path the tables will give, switches in order.
        h.assign(nSw, INF);
        for (uint32_t i = 0; i < nSw; ++i)
        {
            const uint32_t s = byOrder[i];
            upPorts[s].clear();
            if (dd[s] != INF)
            {
                h[s] = dd[s];
                continue;
            }
            uint32_t best = INF;
            for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
            {
                const uint32_t y = graph.adj[e].first;
                if (ord[y] < ord[s] && h[y] != INF)
                {
                    if (h[y] < best)
                    {
                        best = h[y];
                        upPorts[s].clear();
                    }
                    if (h[y] == best)
                    {
                        upPorts[s].push_back(graph.adj[e].second);
                    }
                }
            }
            if (best == INF && (!hasCaLid[d] || !caSwitch[s]))
            {
                continue; // no CA traffic from s to d: plain shortest path below
            }
            if (best == INF)
            {
                if (err)
                {
                    *err = "updn: switch '" + nodes[graph.switches[s]].name +
                           "' has no up*/down* path to switch '" + nodes[graph.switches[d]].name +
                           "' with the chosen roots; set RootGuids to one switch";
                }
                return false;
            }
            h[s] = best + 1;
        }
        out.offset.assign(1, 0);
        out.ports.clear();
        bool bfsDone = false;
        for (uint32_t s = 0; s < nSw; ++s)
        {
            if (s != d && h[s] == INF)
            {
                if (!bfsDone)
                {
                    IbMinHopRouting::Bfs(graph, d, bfs);
                    bfsDone = true;
                }
                for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
                {
                    if (bfs[graph.adj[e].first] + 1 == bfs[s])
                    {
                        out.ports.push_back(graph.adj[e].second);
                    }
                }
            }
            else if (s != d && dd[s] != INF)
            {
                for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
                {
                    const uint32_t y = graph.adj[e].first;
                    if (ord[y] > ord[s] && dd[y] + 1 == dd[s])
                    {
                        out.ports.push_back(graph.adj[e].second);
                    }
                }
            }
            else if (s != d)
            {
                out.ports.insert(out.ports.end(), upPorts[s].begin(), upPorts[s].end());
            }
            out.offset.push_back(out.ports.size());
        }
        return true;
    };
    return IbMinHopRouting::RouteBalanced(problem, graph, candidates, "updn", tables, error);
}

} // namespace ns3

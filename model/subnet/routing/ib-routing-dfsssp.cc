/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-routing-dfsssp.h"

#include "ib-routing-minhop.h"

#include "ns3/ib-channel-cycle-finder.h"
#include "ns3/log.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbDfssspRouting");

NS_OBJECT_ENSURE_REGISTERED(IbDfssspRouting);

TypeId
IbDfssspRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbDfssspRouting")
                            .SetParent<IbRoutingEngine>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbDfssspRouting>();
    return tid;
}

IbDfssspRouting::IbDfssspRouting()
{
    NS_LOG_FUNCTION(this);
}

IbDfssspRouting::~IbDfssspRouting()
{
    NS_LOG_FUNCTION(this);
}

std::string
IbDfssspRouting::GetName() const
{
    return "dfsssp";
}

bool
IbDfssspRouting::Route(const IbRoutingProblem& problem, IbRoutingTables& tables, std::string* error)
{
    NS_LOG_FUNCTION(this);
    const auto& nodes = problem.topology->GetNodes();
    auto fail = [error](const std::string& msg) {
        if (error)
        {
            *error = "dfsssp: " + msg;
        }
        return false;
    };
    using Graph = IbMinHopRouting::SwitchGraph;
    const Graph graph = Graph::Build(problem);
    const uint32_t nSw = graph.Size();
    const uint32_t nLids = problem.lidOwner.size();
    const uint32_t nEdges = graph.adj.size();
    const uint64_t inf = std::numeric_limits<uint64_t>::max();

    // Channels between switches are the adjacency entries; index them both ways.
    std::vector<uint32_t> edgeSource(nEdges);
    std::vector<std::vector<int32_t>> portEdge(nSw);
    std::vector<uint32_t> inOffset(nSw + 1, 0);
    std::vector<uint32_t> inEdges(nEdges);
    std::vector<uint32_t> caCount(nSw, 0);
    for (uint32_t s = 0; s < nSw; ++s)
    {
        const auto& ports = nodes[graph.switches[s]].ports;
        portEdge[s].assign(ports.size(), -1);
        for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
        {
            edgeSource[e] = s;
            portEdge[s][graph.adj[e].second] = e;
            ++inOffset[graph.adj[e].first + 1];
        }
        for (const auto& port : ports)
        {
            if (port.peerNode >= 0 && nodes[port.peerNode].type == IbTopology::CA)
            {
                ++caCount[s];
            }
        }
    }

    for (uint32_t s = 0; s < nSw; ++s)
    {
        inOffset[s + 1] += inOffset[s];
    }
    {
        std::vector<uint32_t> fill(inOffset.begin(), inOffset.end() - 1);
        for (uint32_t e = 0; e < nEdges; ++e)
        {
            inEdges[fill[graph.adj[e].first]++] = e;
        }
    }

    tables.lft.assign(nodes.size(), {});
    tables.sl.assign(nodes.size(), {});
    tables.vlsUsed = 1;
    for (uint32_t s = 0; s < nSw; ++s)
    {
        tables.lft[graph.switches[s]].assign(nLids, IbRoutingTables::NO_ROUTE);
    }

    // SSSP over the CA LIDs.
    std::vector<uint64_t> weight(nEdges, 1);
    std::vector<uint64_t> dist(nSw);
    std::vector<uint32_t> hops(nSw);
    std::vector<uint32_t> bfs;
    std::vector<int32_t> nextEdge(nSw);
    std::vector<uint64_t> flow(nSw);
    std::vector<uint32_t> popOrder;
    std::vector<uint32_t> caLids;
    std::vector<uint64_t> heap;
    constexpr uint32_t NODE_BITS = 24;
    constexpr uint64_t NODE_MASK = (uint64_t{1} << NODE_BITS) - 1;
    constexpr uint64_t MAX_DIST = (uint64_t{1} << (64 - NODE_BITS)) - 1;
    if (nSw > NODE_MASK)
    {
        return fail("more than " + std::to_string(NODE_MASK) + " switches");
    }
    for (uint32_t lid = 1; lid < nLids; ++lid)
    {
        const auto& owner = problem.lidOwner[lid];
        const int32_t d = graph.destPos[lid];
        if (owner.first < 0 || d < 0 || nodes[owner.first].type != IbTopology::CA)
        {
            continue;
        }
        caLids.push_back(lid);
        std::fill(dist.begin(), dist.end(), inf);
        popOrder.clear();
        // Dijkstra towards d over the reversed channels. Heap keys pack (distance, switch);
        // raw pointers keep unoptimised builds fast too.
        heap.clear();
        uint64_t* distp = dist.data();
        const uint64_t* w = weight.data();
        const uint32_t* src = edgeSource.data();
        const uint32_t* inOff = inOffset.data();
        const uint32_t* in = inEdges.data();
        auto push = [&heap](uint64_t key) {
            heap.push_back(key);
            uint64_t* h = heap.data();
            std::size_t i = heap.size() - 1;
            while (i > 0 && h[(i - 1) / 2] > key)
            {
                h[i] = h[(i - 1) / 2];
                i = (i - 1) / 2;
            }
            h[i] = key;
        };
        auto pop = [&heap]() {
            uint64_t* h = heap.data();
            const uint64_t top = h[0];
            const uint64_t last = h[heap.size() - 1];
            heap.pop_back();
            const std::size_t n = heap.size();
            std::size_t i = 0;
            while (n > 0)
            {
                std::size_t c = 2 * i + 1;
                if (c >= n)
                {
                    break;
                }
                if (c + 1 < n && h[c + 1] < h[c])
                {
                    ++c;
                }
                if (h[c] >= last)
                {
                    break;
                }
                h[i] = h[c];
                i = c;
            }
            if (n > 0)
            {
                h[i] = last;
            }
            return top;
        };
        // Hop counts towards d first: the weighted search below only follows channels
        // that bring a switch one hop closer, so that the weights choose among the
        // shortest paths and never make a path longer (OpenSM gets nearly the same by
        // starting every weight at P^2).
        std::fill(hops.begin(), hops.end(), UINT32_MAX);
        uint32_t* hopp = hops.data();
        bfs.assign(1, static_cast<uint32_t>(d));
        hopp[d] = 0;
        for (std::size_t k = 0; k < bfs.size(); ++k)
        {
            const uint32_t y = bfs[k];
            for (uint32_t i = inOffset[y]; i < inOffset[y + 1]; ++i)
            {
                const uint32_t x = edgeSource[inEdges[i]];
                if (hopp[x] == UINT32_MAX)
                {
                    hopp[x] = hopp[y] + 1;
                    bfs.push_back(x);
                }
            }
        }
        distp[d] = 0;
        push(static_cast<uint64_t>(d));
        while (!heap.empty())
        {
            const uint64_t key = pop();
            const uint32_t y = static_cast<uint32_t>(key & NODE_MASK);
            const uint64_t dy = key >> NODE_BITS;
            if (dy != distp[y])
            {
                continue;
            }
            popOrder.push_back(y);
            for (uint32_t i = inOff[y]; i < inOff[y + 1]; ++i)
            {
                const uint32_t e = in[i];
                const uint32_t x = src[e];
                if (hopp[x] != hopp[y] + 1)
                {
                    continue;
                }
                const uint64_t nd = dy + w[e];
                if (nd < distp[x])
                {
                    if (nd > MAX_DIST)
                    {
                        return fail("path weights overflow; the fabric is too large for "
                                    "dfsssp");
                    }
                    distp[x] = nd;
                    push((nd << NODE_BITS) | x);
                }
            }
        }
        if (popOrder.size() != nSw)
        {
            for (uint32_t s = 0; s < nSw; ++s)
            {
                if (dist[s] == inf)
                {
                    return fail("switch '" + nodes[graph.switches[s]].name +
                                "' cannot reach switch '" + nodes[graph.switches[d]].name +
                                "': the fabric is not connected" +
                                IbMinHopRouting::kSeparateSubnetsHint);
                }
            }
        }
        for (uint32_t s = 0; s < nSw; ++s)
        {
            std::vector<uint8_t>& lft = tables.lft[graph.switches[s]];
            nextEdge[s] = -1;
            if (static_cast<int32_t>(s) == d)
            {
                lft[lid] = graph.lastPort[lid];
                continue;
            }
            uint64_t best = inf;
            const auto* adj = graph.adj.data();
            for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
            {
                if (hopp[adj[e].first] + 1 != hopp[s])
                {
                    continue;
                }
                const uint64_t c = w[e] + distp[adj[e].first];
                if (c < best)
                {
                    best = c;
                    nextEdge[s] = e;
                }
            }
            lft[lid] = graph.adj[nextEdge[s]].second;
        }
        // Weights grow by the number of CA ports routed over each channel.
        for (uint32_t s = 0; s < nSw; ++s)
        {
            flow[s] = caCount[s];
        }
        for (auto it = popOrder.rbegin(); it != popOrder.rend(); ++it)
        {
            const uint32_t s = *it;
            if (nextEdge[s] < 0)
            {
                continue;
            }
            weight[nextEdge[s]] += flow[s];
            flow[graph.adj[nextEdge[s]].first] += flow[s];
        }
    }

    // Switch LIDs: shortest paths, lowest port.
    IbMinHopRouting::RouteSwitchLids(problem, graph, tables);

    // Sources: a CA's set of attached switches; CAs with the same set share routes.
    std::map<std::vector<uint32_t>, uint32_t> groupIds;
    std::vector<std::vector<uint32_t>> groups;
    std::vector<int32_t> groupOfCa(nodes.size(), -1);
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type != IbTopology::CA)
        {
            continue;
        }
        std::vector<uint32_t> attached;
        for (const auto& port : nodes[n].ports)
        {
            if (port.peerNode >= 0 && graph.position[port.peerNode] >= 0)
            {
                attached.push_back(graph.position[port.peerNode]);
            }
        }
        if (attached.empty())
        {
            continue;
        }
        std::sort(attached.begin(), attached.end());
        attached.erase(std::unique(attached.begin(), attached.end()), attached.end());
        const auto it = groupIds.emplace(attached, groups.size());
        if (it.second)
        {
            groups.push_back(attached);
        }
        groupOfCa[n] = it.first->second;
    }
    const uint32_t nCaLids = caLids.size();
    const uint64_t nUnits = static_cast<uint64_t>(groups.size()) * nCaLids;
    std::vector<uint8_t> layer(nUnits, 0);

    // Dependencies (e1 then e2) are numbered densely: e2 is an output channel of e1's far
    // switch, so dependency = depBase[e1] + (e2 - adjOffset[far switch of e1]).
    std::vector<uint32_t> depBase(nEdges + 1, 0);
    for (uint32_t e = 0; e < nEdges; ++e)
    {
        const uint32_t y = graph.adj[e].first;
        depBase[e + 1] = depBase[e] + (graph.adjOffset[y + 1] - graph.adjOffset[y]);
    }
    auto depIndex = [&](uint32_t e1, uint32_t e2) {
        return depBase[e1] + (e2 - graph.adjOffset[graph.adj[e1].first]);
    };
    // Calls f(dependency) for every dependency of a unit.
    auto forEachDependency = [&](uint64_t unit, auto&& f) {
        const uint32_t lid = caLids[unit % nCaLids];
        const int32_t d = graph.destPos[lid];
        for (uint32_t s : groups[unit / nCaLids])
        {
            int32_t prev = -1;
            uint32_t x = s;
            for (uint32_t hop = 0; static_cast<int32_t>(x) != d && hop <= nSw; ++hop)
            {
                const int32_t e = portEdge[x][tables.lft[graph.switches[x]][lid]];
                if (e < 0)
                {
                    break;
                }
                if (prev >= 0)
                {
                    f(depIndex(prev, e));
                }
                prev = e;
                x = graph.adj[e].first;
            }
        }
    };

    // The graph of all possible dependencies, numbered as depIndex numbers them (by first
    // channel, then by the second's position among its switch's output channels): the
    // search below follows them in that order.
    std::vector<IbChannelCycleFinder::Dependency> allDeps;
    allDeps.reserve(depBase[nEdges]);
    for (uint32_t e = 0; e < nEdges; ++e)
    {
        const uint32_t y = graph.adj[e].first;
        for (uint32_t w = graph.adjOffset[y]; w < graph.adjOffset[y + 1]; ++w)
        {
            allDeps.emplace_back(e, w);
        }
    }
    NS_ASSERT(allDeps.size() == depBase[nEdges]);
    const IbChannelCycleFinder finder(nEdges, allDeps);
    allDeps = {};

    uint32_t layersUsed = 1;
    std::vector<uint32_t> count;
    std::vector<uint32_t> cycle; // dependencies of the cycle found
    for (uint32_t current = 0; current < 16; ++current)
    {
        // The layer's dependency graph: how many units induce each dependency.
        count.assign(depBase[nEdges], 0);
        bool any = false;
        for (uint64_t u = 0; u < nUnits; ++u)
        {
            if (layer[u] == current)
            {
                any = true;
                forEachDependency(u, [&](uint32_t k) { ++count[k]; });
            }
        }
        if (!any)
        {
            break;
        }
        if (current >= problem.numDataVls)
        {
            return fail("breaking the channel dependency cycles needs more than " +
                        std::to_string(problem.numDataVls) +
                        " VL(s); run the ports with more data VLs, or use updn (deadlock-free "
                        "on one VL)");
        }
        layersUsed = current + 1;
        // Remove cycles until there is none: the first cycle of a depth-first search over
        // the dependencies some unit of this layer induces (count > 0).
        while (true)
        {
            cycle = finder.FindFirstCycle(count);
            if (cycle.empty())
            {
                break;
            }
            uint32_t weakest = cycle.front();
            for (uint32_t k : cycle)
            {
                if (count[k] < count[weakest])
                {
                    weakest = k;
                }
            }
            // Find the dependency's channels back from its index.
            const uint32_t e1 =
                std::upper_bound(depBase.begin(), depBase.end(), weakest) - depBase.begin() - 1;
            const uint32_t y = graph.adj[e1].first;
            const uint32_t e2 = graph.adjOffset[y] + (weakest - depBase[e1]);
            const uint32_t x = edgeSource[e1];
            const uint8_t p1 = graph.adj[e1].second;
            const uint8_t p2 = graph.adj[e2].second;
            uint32_t moved = 0;
            for (uint32_t i = 0; i < nCaLids && count[weakest] > 0; ++i)
            {
                const uint32_t lid = caLids[i];
                if (tables.lft[graph.switches[x]][lid] != p1 ||
                    tables.lft[graph.switches[y]][lid] != p2)
                {
                    continue;
                }
                for (uint32_t g = 0; g < groups.size(); ++g)
                {
                    const uint64_t u = static_cast<uint64_t>(g) * nCaLids + i;
                    if (layer[u] != current)
                    {
                        continue;
                    }
                    bool induces = false;
                    forEachDependency(u, [&](uint32_t k) { induces = induces || k == weakest; });
                    if (!induces)
                    {
                        continue;
                    }
                    layer[u] = current + 1;
                    ++moved;
                    forEachDependency(u, [&](uint32_t k) { --count[k]; });
                }
            }
            NS_LOG_LOGIC("layer " << current << ": moved " << moved
                                  << " routes to break a cycle of " << cycle.size() << " channels");
        }
    }

    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (groupOfCa[n] < 0)
        {
            continue;
        }
        tables.sl[n].assign(nLids, 0);
        for (uint32_t i = 0; i < nCaLids; ++i)
        {
            tables.sl[n][caLids[i]] = layer[static_cast<uint64_t>(groupOfCa[n]) * nCaLids + i];
        }
    }
    tables.vlsUsed = layersUsed;
    NS_LOG_INFO("dfsssp: " << nCaLids << " CA LIDs routed on " << layersUsed << " layer(s)");
    return true;
}

} // namespace ns3

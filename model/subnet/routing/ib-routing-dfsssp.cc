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
#include <memory>

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

namespace
{

/// Bits of a heap key that hold the switch (the distance is above them).
constexpr uint32_t NODE_BITS = 24;
/// Mask of the switch in a heap key.
constexpr uint64_t NODE_MASK = (uint64_t{1} << NODE_BITS) - 1;
/// Largest distance a heap key holds.
constexpr uint64_t MAX_DIST = (uint64_t{1} << (64 - NODE_BITS)) - 1;
/// No distance yet.
constexpr uint64_t INF = std::numeric_limits<uint64_t>::max();

/**
 * @param error where to write the message (may be null)
 * @param msg why routing failed
 * @return false
 */
bool
Fail(std::string* error, const std::string& msg)
{
    if (error)
    {
        *error = "dfsssp: " + msg;
    }
    return false;
}

/**
 * Push a key onto a binary min-heap.
 * @param heap the heap
 * @param key the key
 */
void
HeapPush(std::vector<uint64_t>& heap, uint64_t key)
{
    heap.push_back(key);
    uint64_t* h = heap.data();
    std::size_t i = heap.size() - 1;
    while (i > 0 && h[(i - 1) / 2] > key)
    {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = key;
}

/**
 * Pop the smallest key of a binary min-heap.
 * @param heap the heap, not empty
 * @return the key
 */
uint64_t
HeapPop(std::vector<uint64_t>& heap)
{
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
}

} // namespace

struct IbDfssspRouting::Context
{
    /// The switch graph.
    using Graph = IbMinHopRouting::SwitchGraph;

    /**
     * @param p topology and LIDs
     * @param t the tables to fill
     */
    Context(const IbRoutingProblem& p, IbRoutingTables& t)
        : problem(p),
          nodes(p.topology->GetNodes()),
          tables(t),
          graph(Graph::Build(p)),
          nSw(graph.Size()),
          nLids(p.lidOwner.size()),
          nEdges(graph.adj.size())
    {
    }

    const IbRoutingProblem& problem;            //!< topology and LIDs
    const std::vector<IbTopology::Node>& nodes; //!< the topology's nodes
    IbRoutingTables& tables;                    //!< the result
    const Graph graph;                          //!< switches and their channels
    const uint32_t nSw;                         //!< switches
    const uint32_t nLids;                       //!< LIDs (LID 0 included)
    const uint32_t nEdges;                      //!< switch-to-switch channels

    // Channels (IndexChannels).
    std::vector<uint32_t> edgeSource;           //!< channel -> its sending switch
    std::vector<std::vector<int32_t>> portEdge; //!< (switch, port) -> channel, -1 if none
    std::vector<uint32_t> inOffset;             //!< channels into switch y: inEdges[inOffset[y] ..)
    std::vector<uint32_t> inEdges;              //!< channels by receiving switch
    std::vector<uint32_t> caCount;              //!< CA ports of each switch

    // SSSP (RouteCaLids).
    std::vector<uint64_t> weight;   //!< channel weights
    std::vector<uint64_t> dist;     //!< distance of each switch to the destination
    std::vector<uint32_t> hops;     //!< hop count of each switch to the destination
    std::vector<uint32_t> bfs;      //!< BFS queue
    std::vector<int32_t> nextEdge;  //!< channel each switch routes the LID on, -1 if none
    std::vector<uint64_t> flow;     //!< CA ports routed through each switch
    std::vector<uint32_t> popOrder; //!< switches in the order Dijkstra settled them
    std::vector<uint64_t> heap;     //!< Dijkstra's heap of (distance, switch) keys
    std::vector<uint32_t> caLids;   //!< the CA LIDs routed, in increasing order

    // Layering (GroupSources, NumberDependencies, AssignLayers).
    std::vector<std::vector<uint32_t>> groups;    //!< sources: sets of switches
    std::vector<int32_t> groupOfCa;               //!< node -> its group, -1 if none
    uint32_t nCaLids{0};                          //!< caLids.size()
    uint64_t nUnits{0};                           //!< route units: groups x CA LIDs
    std::vector<uint8_t> layer;                   //!< layer of each unit
    std::vector<uint32_t> depBase;                //!< first dependency of each channel
    std::unique_ptr<IbChannelCycleFinder> finder; //!< graph of all dependencies
    uint32_t layersUsed{1};                       //!< layers used

    /**
     * Dependencies (e1 then e2) are numbered densely: e2 is an output channel of e1's far
     * switch, so dependency = depBase[e1] + (e2 - adjOffset[far switch of e1]).
     * @param e1 a channel
     * @param e2 a channel out of e1's far switch
     * @return the dependency's number
     */
    uint32_t DepIndex(uint32_t e1, uint32_t e2) const
    {
        return depBase[e1] + (e2 - graph.adjOffset[graph.adj[e1].first]);
    }

    /**
     * Call f(dependency) for every dependency of a unit.
     * @param unit a route unit (group * nCaLids + CA LID index)
     * @param f the function
     */
    template <class F>
    void ForEachDependency(uint64_t unit, F&& f) const
    {
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
                    f(DepIndex(prev, e));
                }
                prev = e;
                x = graph.adj[e].first;
            }
        }
    }
};

bool
IbDfssspRouting::Route(const IbRoutingProblem& problem, IbRoutingTables& tables, std::string* error)
{
    NS_LOG_FUNCTION(this);
    Context c(problem, tables);
    IndexChannels(c);

    tables.lft.assign(c.nodes.size(), {});
    tables.sl.assign(c.nodes.size(), {});
    tables.vlsUsed = 1;
    for (uint32_t s = 0; s < c.nSw; ++s)
    {
        tables.lft[c.graph.switches[s]].assign(c.nLids, IbRoutingTables::NO_ROUTE);
    }

    if (!RouteCaLids(c, error))
    {
        return false;
    }
    // Switch LIDs: shortest paths, lowest port.
    IbMinHopRouting::RouteSwitchLids(problem, c.graph, tables);

    GroupSources(c);
    NumberDependencies(c);
    if (!AssignLayers(c, error))
    {
        return false;
    }
    WriteSls(c);
    return true;
}

void
IbDfssspRouting::IndexChannels(Context& c) const
{
    const auto& nodes = c.nodes;
    const auto& graph = c.graph;
    const uint32_t nSw = c.nSw;
    const uint32_t nEdges = c.nEdges;
    // Channels between switches are the adjacency entries; index them both ways.
    c.edgeSource.assign(nEdges, 0);
    c.portEdge.assign(nSw, {});
    c.inOffset.assign(nSw + 1, 0);
    c.inEdges.assign(nEdges, 0);
    c.caCount.assign(nSw, 0);
    for (uint32_t s = 0; s < nSw; ++s)
    {
        const auto& ports = nodes[graph.switches[s]].ports;
        c.portEdge[s].assign(ports.size(), -1);
        for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
        {
            c.edgeSource[e] = s;
            c.portEdge[s][graph.adj[e].second] = e;
            ++c.inOffset[graph.adj[e].first + 1];
        }
        for (const auto& port : ports)
        {
            if (port.peerNode >= 0 && nodes[port.peerNode].type == IbTopology::CA)
            {
                ++c.caCount[s];
            }
        }
    }

    for (uint32_t s = 0; s < nSw; ++s)
    {
        c.inOffset[s + 1] += c.inOffset[s];
    }
    std::vector<uint32_t> fill(c.inOffset.begin(), c.inOffset.end() - 1);
    for (uint32_t e = 0; e < nEdges; ++e)
    {
        c.inEdges[fill[graph.adj[e].first]++] = e;
    }
}

bool
IbDfssspRouting::RouteCaLids(Context& c, std::string* error) const
{
    const auto& nodes = c.nodes;
    const uint32_t nSw = c.nSw;
    c.weight.assign(c.nEdges, 1);
    c.dist.assign(nSw, 0);
    c.hops.assign(nSw, 0);
    c.nextEdge.assign(nSw, 0);
    c.flow.assign(nSw, 0);
    if (nSw > NODE_MASK)
    {
        return Fail(error, "more than " + std::to_string(NODE_MASK) + " switches");
    }
    for (uint32_t lid = 1; lid < c.nLids; ++lid)
    {
        const auto& owner = c.problem.lidOwner[lid];
        const int32_t d = c.graph.destPos[lid];
        if (owner.first < 0 || d < 0 || nodes[owner.first].type != IbTopology::CA)
        {
            continue;
        }
        c.caLids.push_back(lid);
        if (!ShortestPathsTo(c, static_cast<uint32_t>(d), error))
        {
            return false;
        }
        WriteLftEntries(c, lid, static_cast<uint32_t>(d));
        Balance(c);
    }
    return true;
}

bool
IbDfssspRouting::ShortestPathsTo(Context& c, uint32_t d, std::string* error) const
{
    const uint32_t nSw = c.nSw;
    std::fill(c.dist.begin(), c.dist.end(), INF);
    c.popOrder.clear();
    // Dijkstra towards d over the reversed channels. Heap keys pack (distance, switch);
    // raw pointers keep unoptimised builds fast too.
    std::vector<uint64_t>& heap = c.heap;
    heap.clear();
    uint64_t* distp = c.dist.data();
    const uint64_t* w = c.weight.data();
    const uint32_t* src = c.edgeSource.data();
    const uint32_t* inOff = c.inOffset.data();
    const uint32_t* in = c.inEdges.data();
    // Hop counts towards d first: the weighted search below only follows channels
    // that bring a switch one hop closer, so that the weights choose among the
    // shortest paths and never make a path longer (OpenSM gets nearly the same by
    // starting every weight at P^2).
    std::fill(c.hops.begin(), c.hops.end(), UINT32_MAX);
    uint32_t* hopp = c.hops.data();
    c.bfs.assign(1, d);
    hopp[d] = 0;
    for (std::size_t k = 0; k < c.bfs.size(); ++k)
    {
        const uint32_t y = c.bfs[k];
        for (uint32_t i = inOff[y]; i < inOff[y + 1]; ++i)
        {
            const uint32_t x = src[in[i]];
            if (hopp[x] == UINT32_MAX)
            {
                hopp[x] = hopp[y] + 1;
                c.bfs.push_back(x);
            }
        }
    }
    distp[d] = 0;
    HeapPush(heap, static_cast<uint64_t>(d));
    while (!heap.empty())
    {
        const uint64_t key = HeapPop(heap);
        const uint32_t y = static_cast<uint32_t>(key & NODE_MASK);
        const uint64_t dy = key >> NODE_BITS;
        if (dy != distp[y])
        {
            continue;
        }
        c.popOrder.push_back(y);
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
                    return Fail(error, "path weights overflow; the fabric is too large for dfsssp");
                }
                distp[x] = nd;
                HeapPush(heap, (nd << NODE_BITS) | x);
            }
        }
    }
    if (c.popOrder.size() != nSw)
    {
        for (uint32_t s = 0; s < nSw; ++s)
        {
            if (c.dist[s] == INF)
            {
                return Fail(error,
                            "switch '" + c.nodes[c.graph.switches[s]].name +
                                "' cannot reach switch '" + c.nodes[c.graph.switches[d]].name +
                                "': the fabric is not connected" +
                                IbMinHopRouting::kSeparateSubnetsHint);
            }
        }
    }
    return true;
}

void
IbDfssspRouting::WriteLftEntries(Context& c, uint32_t lid, uint32_t d) const
{
    const auto& graph = c.graph;
    const uint64_t* w = c.weight.data();
    const uint64_t* distp = c.dist.data();
    const uint32_t* hopp = c.hops.data();
    const auto* adj = graph.adj.data();
    for (uint32_t s = 0; s < c.nSw; ++s)
    {
        std::vector<uint8_t>& lft = c.tables.lft[graph.switches[s]];
        c.nextEdge[s] = -1;
        if (s == d)
        {
            lft[lid] = graph.lastPort[lid];
            continue;
        }
        uint64_t best = INF;
        for (uint32_t e = graph.adjOffset[s]; e < graph.adjOffset[s + 1]; ++e)
        {
            if (hopp[adj[e].first] + 1 != hopp[s])
            {
                continue;
            }
            const uint64_t cost = w[e] + distp[adj[e].first];
            if (cost < best)
            {
                best = cost;
                c.nextEdge[s] = e;
            }
        }
        lft[lid] = graph.adj[c.nextEdge[s]].second;
    }
}

void
IbDfssspRouting::Balance(Context& c) const
{
    // Weights grow by the number of CA ports routed over each channel.
    for (uint32_t s = 0; s < c.nSw; ++s)
    {
        c.flow[s] = c.caCount[s];
    }
    for (auto it = c.popOrder.rbegin(); it != c.popOrder.rend(); ++it)
    {
        const uint32_t s = *it;
        if (c.nextEdge[s] < 0)
        {
            continue;
        }
        c.weight[c.nextEdge[s]] += c.flow[s];
        c.flow[c.graph.adj[c.nextEdge[s]].first] += c.flow[s];
    }
}

void
IbDfssspRouting::GroupSources(Context& c) const
{
    const auto& nodes = c.nodes;
    // Sources: a CA's set of attached switches; CAs with the same set share routes.
    std::map<std::vector<uint32_t>, uint32_t> groupIds;
    c.groups.clear();
    c.groupOfCa.assign(nodes.size(), -1);
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type != IbTopology::CA)
        {
            continue;
        }
        std::vector<uint32_t> attached;
        for (const auto& port : nodes[n].ports)
        {
            if (port.peerNode >= 0 && c.graph.position[port.peerNode] >= 0)
            {
                attached.push_back(c.graph.position[port.peerNode]);
            }
        }
        if (attached.empty())
        {
            continue;
        }
        std::sort(attached.begin(), attached.end());
        attached.erase(std::unique(attached.begin(), attached.end()), attached.end());
        const auto it = groupIds.emplace(attached, c.groups.size());
        if (it.second)
        {
            c.groups.push_back(attached);
        }
        c.groupOfCa[n] = it.first->second;
    }
    c.nCaLids = c.caLids.size();
    c.nUnits = static_cast<uint64_t>(c.groups.size()) * c.nCaLids;
    c.layer.assign(c.nUnits, 0);
}

void
IbDfssspRouting::NumberDependencies(Context& c) const
{
    const auto& graph = c.graph;
    const uint32_t nEdges = c.nEdges;
    c.depBase.assign(nEdges + 1, 0);
    for (uint32_t e = 0; e < nEdges; ++e)
    {
        const uint32_t y = graph.adj[e].first;
        c.depBase[e + 1] = c.depBase[e] + (graph.adjOffset[y + 1] - graph.adjOffset[y]);
    }
    // The graph of all possible dependencies, numbered as DepIndex numbers them (by first
    // channel, then by the second's position among its switch's output channels): the
    // cycle search follows them in that order.
    std::vector<IbChannelCycleFinder::Dependency> allDeps;
    allDeps.reserve(c.depBase[nEdges]);
    for (uint32_t e = 0; e < nEdges; ++e)
    {
        const uint32_t y = graph.adj[e].first;
        for (uint32_t w = graph.adjOffset[y]; w < graph.adjOffset[y + 1]; ++w)
        {
            allDeps.emplace_back(e, w);
        }
    }
    NS_ASSERT(allDeps.size() == c.depBase[nEdges]);
    c.finder = std::make_unique<IbChannelCycleFinder>(nEdges, allDeps);
}

bool
IbDfssspRouting::AssignLayers(Context& c, std::string* error) const
{
    std::vector<uint32_t> count;
    std::vector<uint32_t> cycle; // dependencies of the cycle found
    for (uint32_t current = 0; current < 16; ++current)
    {
        // The layer's dependency graph: how many units induce each dependency.
        count.assign(c.depBase[c.nEdges], 0);
        bool any = false;
        for (uint64_t u = 0; u < c.nUnits; ++u)
        {
            if (c.layer[u] == current)
            {
                any = true;
                c.ForEachDependency(u, [&](uint32_t k) { ++count[k]; });
            }
        }
        if (!any)
        {
            break;
        }
        if (current >= c.problem.numDataVls)
        {
            return Fail(error,
                        "breaking the channel dependency cycles needs more than " +
                            std::to_string(c.problem.numDataVls) +
                            " VL(s); run the ports with more data VLs, or use updn "
                            "(deadlock-free on one VL)");
        }
        c.layersUsed = current + 1;
        // Remove cycles until there is none: the first cycle of a depth-first search over
        // the dependencies some unit of this layer induces (count > 0).
        while (true)
        {
            cycle = c.finder->FindFirstCycle(count);
            if (cycle.empty())
            {
                break;
            }
            BreakCycle(c, cycle, current, count);
        }
    }
    return true;
}

void
IbDfssspRouting::BreakCycle(Context& c,
                            const std::vector<uint32_t>& cycle,
                            uint32_t current,
                            std::vector<uint32_t>& count) const
{
    const auto& graph = c.graph;
    const auto& lft = c.tables.lft;
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
        std::upper_bound(c.depBase.begin(), c.depBase.end(), weakest) - c.depBase.begin() - 1;
    const uint32_t y = graph.adj[e1].first;
    const uint32_t e2 = graph.adjOffset[y] + (weakest - c.depBase[e1]);
    const uint32_t x = c.edgeSource[e1];
    const uint8_t p1 = graph.adj[e1].second;
    const uint8_t p2 = graph.adj[e2].second;
    uint32_t moved = 0;
    for (uint32_t i = 0; i < c.nCaLids && count[weakest] > 0; ++i)
    {
        const uint32_t lid = c.caLids[i];
        if (lft[graph.switches[x]][lid] != p1 || lft[graph.switches[y]][lid] != p2)
        {
            continue;
        }
        for (uint32_t g = 0; g < c.groups.size(); ++g)
        {
            const uint64_t u = static_cast<uint64_t>(g) * c.nCaLids + i;
            if (c.layer[u] != current)
            {
                continue;
            }
            bool induces = false;
            c.ForEachDependency(u, [&](uint32_t k) { induces = induces || k == weakest; });
            if (!induces)
            {
                continue;
            }
            c.layer[u] = current + 1;
            ++moved;
            c.ForEachDependency(u, [&](uint32_t k) { --count[k]; });
        }
    }
    NS_LOG_LOGIC("layer " << current << ": moved " << moved << " routes to break a cycle of "
                          << cycle.size() << " channels");
}

void
IbDfssspRouting::WriteSls(Context& c) const
{
    IbRoutingTables& tables = c.tables;
    for (uint32_t n = 0; n < c.nodes.size(); ++n)
    {
        if (c.groupOfCa[n] < 0)
        {
            continue;
        }
        tables.sl[n].assign(c.nLids, 0);
        for (uint32_t i = 0; i < c.nCaLids; ++i)
        {
            tables.sl[n][c.caLids[i]] =
                c.layer[static_cast<uint64_t>(c.groupOfCa[n]) * c.nCaLids + i];
        }
    }
    tables.vlsUsed = c.layersUsed;
    NS_LOG_INFO("dfsssp: " << c.nCaLids << " CA LIDs routed on " << c.layersUsed << " layer(s)");
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-deadlock-checker.h"

#include "ib-ar-groups.h"
#include "ib-channel-cycle-finder.h"

#include "ns3/log.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbDeadlockChecker");

namespace
{

/// Directed channels of a fabric, numbered: channel = base[node] + port.
struct Channels
{
    std::vector<uint32_t> base;                        ///< first channel of each node
    std::vector<std::pair<uint32_t, uint8_t>> channel; ///< channel -> (node, port)

    explicit Channels(const IbTopology& t)
    {
        const auto& nodes = t.GetNodes();
        base.resize(nodes.size());
        for (uint32_t n = 0; n < nodes.size(); ++n)
        {
            base[n] = channel.size();
            for (uint32_t p = 0; p < nodes[n].ports.size(); ++p)
            {
                channel.emplace_back(n, static_cast<uint8_t>(p));
            }
        }
    }
};

/// "0x0005"
std::string
LidString(uint32_t lid)
{
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%04x", lid);
    return buf;
}

} // namespace

std::array<uint8_t, 16>
IbDeadlockChecker::IdentitySl2Vl()
{
    std::array<uint8_t, 16> m{};
    for (uint8_t i = 0; i < 16; ++i)
    {
        m[i] = i;
    }
    return m;
}

std::vector<IbDeadlockChecker::Cycle>
IbDeadlockChecker::Check(const IbRoutingProblem& problem,
                         const IbRoutingTables& tables,
                         const std::array<uint8_t, 16>& sl2vl,
                         const std::vector<IbArGroups>* ar,
                         uint16_t arSlMask)
{
    const IbTopology& t = *problem.topology;
    const auto& nodes = t.GetNodes();
    const Channels ch(t);
    const uint32_t nCh = ch.channel.size();
    const uint32_t nLids = problem.lidOwner.size();

    std::vector<std::pair<uint32_t, uint8_t>> caPorts;
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type != IbTopology::CA)
        {
            continue;
        }
        for (uint32_t p = 1; p < nodes[n].ports.size(); ++p)
        {
            if (nodes[n].ports[p].peerNode >= 0)
            {
                caPorts.emplace_back(n, static_cast<uint8_t>(p));
            }
        }
    }

    // Without SLs every route is on VL sl2vl[0], and the CAs on one switch share their
    // routes from that switch on: one CA port per switch is enough.
    if (tables.sl.empty())
    {
        std::vector<bool> taken(nodes.size(), false);
        std::vector<std::pair<uint32_t, uint8_t>> reps;
        for (const auto& src : caPorts)
        {
            const int32_t peer = nodes[src.first].ports[src.second].peerNode;
            if (nodes[peer].type == IbTopology::SWITCH && !taken[peer])
            {
                taken[peer] = true;
                reps.push_back(src);
            }
        }
        caPorts.swap(reps);
    }

    // succ[vl][c]: bit q set when channel c is followed by (peer of c, port q).
    using Bits = std::array<uint64_t, 4>;
    std::vector<std::tuple<uint32_t, uint8_t, uint32_t>> stack; // (node, port, channel)
    std::vector<uint8_t> choices;
    std::array<std::vector<Bits>, 16> succ;
    std::array<std::vector<uint32_t>, 16> visited;
    for (uint32_t dlid = 1; dlid < nLids; ++dlid)
    {
        const auto& owner = problem.lidOwner[dlid];
        if (owner.first < 0 || nodes[owner.first].type != IbTopology::CA)
        {
            continue;
        }
        for (const auto& src : caPorts)
        {
            const uint8_t vl = sl2vl[tables.GetSl(src.first, dlid) & 0xF] & 0xF;
            if (succ[vl].empty())
            {
                succ[vl].assign(nCh, Bits{});
                visited[vl].assign(nCh, 0);
            }
            // A CA's own channel has no channel depending on it (CAs do not forward), so
            // it is in no cycle: start at the first switch's output channel. A channel's
            // successors for a LID are the same whichever source reached it: a channel
            // already walked for this LID is not walked again. With adaptive routing on
            // the route's SL, every port of the switch's AR group for the LID is a
            // possible next channel (a superset of what the LFT alone allows).
            const bool adaptive =
                ar != nullptr && (arSlMask >> (tables.GetSl(src.first, dlid) & 0xF) & 1);
            stack.clear();
            stack.emplace_back(src.first, src.second, nCh);
            while (!stack.empty())
            {
                const auto [node, port, cur] = stack.back();
                stack.pop_back();
                const int32_t peer = nodes[node].ports[port].peerNode;
                if (peer < 0 || nodes[peer].type != IbTopology::SWITCH ||
                    static_cast<uint32_t>(peer) >= tables.lft.size() ||
                    dlid >= tables.lft[peer].size())
                {
                    continue;
                }
                choices.clear();
                choices.push_back(tables.lft[peer][dlid]);
                if (adaptive && static_cast<uint32_t>(peer) < ar->size())
                {
                    const IbArGroups& g = (*ar)[peer];
                    if (dlid < g.groupOf.size() && g.groupOf[dlid] != 0)
                    {
                        choices = g.groups[g.groupOf[dlid]];
                    }
                }
                for (const uint8_t out : choices)
                {
                    if (out == 0 || out >= nodes[peer].ports.size() ||
                        nodes[peer].ports[out].peerNode < 0)
                    {
                        continue;
                    }
                    const uint32_t next = ch.base[peer] + out;
                    if (cur != nCh)
                    {
                        succ[vl][cur][out >> 6] |= uint64_t{1} << (out & 63);
                    }
                    if (visited[vl][next] == dlid)
                    {
                        continue;
                    }
                    visited[vl][next] = dlid;
                    stack.emplace_back(static_cast<uint32_t>(peer), out, next);
                }
            }
        }
    }

    std::vector<Cycle> cycles;
    std::vector<IbChannelCycleFinder::Dependency> deps;
    for (uint32_t vl = 0; vl < 16; ++vl)
    {
        if (succ[vl].empty())
        {
            continue;
        }
        deps.clear();
        for (uint32_t c = 0; c < nCh; ++c)
        {
            const auto& bits = succ[vl][c];
            if ((bits[0] | bits[1] | bits[2] | bits[3]) == 0)
            {
                continue;
            }
            const auto& end = nodes[ch.channel[c].first].ports[ch.channel[c].second];
            for (uint32_t q = 0; q < 256; ++q)
            {
                if (bits[q >> 6] & (uint64_t{1} << (q & 63)))
                {
                    deps.emplace_back(c, ch.base[end.peerNode] + q);
                }
            }
        }
        const IbChannelCycleFinder finder(nCh, deps);
        for (const auto& found : finder.FindComponentCycles())
        {
            Cycle cycle;
            cycle.vl = static_cast<uint8_t>(vl);
            for (uint32_t c : found)
            {
                cycle.channels.push_back(ch.channel[c]);
            }
            cycles.push_back(std::move(cycle));
        }
    }
    return cycles;
}

std::string
IbDeadlockChecker::Describe(const IbRoutingProblem& problem, const Cycle& cycle)
{
    const auto& nodes = problem.topology->GetNodes();
    std::string out = "VL" + std::to_string(cycle.vl) + ":";
    auto name = [&](const std::pair<uint32_t, uint8_t>& c) {
        return nodes[c.first].name + " port " + std::to_string(c.second);
    };
    for (std::size_t i = 0; i < cycle.channels.size(); ++i)
    {
        out += (i == 0 ? " " : " -> ") + name(cycle.channels[i]);
    }
    if (!cycle.channels.empty())
    {
        out += " -> " + name(cycle.channels.front());
    }
    return out;
}

bool
IbDeadlockChecker::CheckReachability(const IbRoutingProblem& problem,
                                     const IbRoutingTables& tables,
                                     std::string* firstFailure)
{
    const IbTopology& t = *problem.topology;
    const auto& nodes = t.GetNodes();
    const uint32_t nLids = problem.lidOwner.size();
    const uint32_t nSwitches = t.GetSwitches().size();

    std::vector<std::pair<uint32_t, uint8_t>> caPorts;
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type != IbTopology::CA)
        {
            continue;
        }
        for (uint32_t p = 1; p < nodes[n].ports.size(); ++p)
        {
            if (nodes[n].ports[p].peerNode >= 0)
            {
                caPorts.emplace_back(n, static_cast<uint8_t>(p));
            }
        }
    }
    // Sources grouped by the switch they are cabled to (they share the route from it on);
    // a CA port cabled straight to another CA is a group of its own.
    std::vector<std::vector<std::pair<uint32_t, uint8_t>>> sources;
    {
        std::vector<int32_t> groupOf(nodes.size(), -1);
        for (const auto& src : caPorts)
        {
            const int32_t peer = nodes[src.first].ports[src.second].peerNode;
            if (nodes[peer].type != IbTopology::SWITCH)
            {
                sources.push_back({src});
                continue;
            }
            if (groupOf[peer] < 0)
            {
                groupOf[peer] = sources.size();
                sources.emplace_back();
            }
            sources[groupOf[peer]].push_back(src);
        }
    }
    auto portName = [&](uint32_t n, uint32_t p) {
        return "'" + nodes[n].name + "' port " + std::to_string(p);
    };
    // Follow one route with a hop limit and say why it fails ("" if it does not).
    auto explain = [&](uint32_t node, uint8_t port, uint32_t dlid) -> std::string {
        const auto& owner = problem.lidOwner[dlid];
        for (uint32_t hop = 0; hop <= nSwitches + 1; ++hop)
        {
            const IbTopology::Port& link = nodes[node].ports[port];
            if (link.peerNode < 0)
            {
                return portName(node, port) + " has no cable";
            }
            if (nodes[link.peerNode].type == IbTopology::CA)
            {
                if (link.peerNode == owner.first && link.peerPort == owner.second)
                {
                    return "";
                }
                return "it is delivered to " + portName(link.peerNode, link.peerPort);
            }
            const uint32_t sw = link.peerNode;
            if (sw >= tables.lft.size() || dlid >= tables.lft[sw].size() ||
                tables.lft[sw][dlid] == IbRoutingTables::NO_ROUTE)
            {
                return "switch '" + nodes[sw].name + "' has no LFT entry for it";
            }
            const uint8_t out = tables.lft[sw][dlid];
            if (out == 0)
            {
                return "switch '" + nodes[sw].name + "' sends it to its own port 0";
            }
            if (out >= nodes[sw].ports.size())
            {
                return "switch '" + nodes[sw].name + "' sends it to port " + std::to_string(out) +
                       ", which does not exist";
            }
            node = sw;
            port = out;
        }
        return "it loops (more than " + std::to_string(nSwitches + 1) +
               " switch hops, last through '" + nodes[node].name + "')";
    };

    // Per destination LID, the fate of a packet at each switch: memoised walks.
    enum : uint8_t
    {
        UNKNOWN = 0,
        OK = 1,
        FAIL = 2,
        BUSY = 3
    };

    std::vector<uint8_t> state(nodes.size(), UNKNOWN);
    std::vector<uint32_t> path;
    for (uint32_t dlid = 1; dlid < nLids; ++dlid)
    {
        const auto& owner = problem.lidOwner[dlid];
        if (owner.first < 0 || nodes[owner.first].type != IbTopology::CA)
        {
            continue;
        }
        std::fill(state.begin(), state.end(), UNKNOWN);
        auto walk = [&](uint32_t sw) {
            path.clear();
            uint8_t result = FAIL;
            uint32_t x = sw;
            while (true)
            {
                if (state[x] == OK || state[x] == FAIL)
                {
                    result = state[x];
                    break;
                }
                if (state[x] == BUSY)
                {
                    result = FAIL; // loop
                    break;
                }
                state[x] = BUSY;
                path.push_back(x);
                if (x >= tables.lft.size() || dlid >= tables.lft[x].size())
                {
                    break;
                }
                const uint8_t out = tables.lft[x][dlid];
                if (out == 0 || out >= nodes[x].ports.size())
                {
                    break;
                }
                const IbTopology::Port& link = nodes[x].ports[out];
                if (link.peerNode < 0)
                {
                    break;
                }
                if (nodes[link.peerNode].type == IbTopology::CA)
                {
                    result =
                        (link.peerNode == owner.first && link.peerPort == owner.second) ? OK : FAIL;
                    break;
                }
                x = link.peerNode;
            }
            for (uint32_t y : path)
            {
                state[y] = result;
            }
            return result;
        };
        for (const auto& group : sources)
        {
            const auto& first = group.front();
            const IbTopology::Port& firstLink = nodes[first.first].ports[first.second];
            if (nodes[firstLink.peerNode].type == IbTopology::SWITCH &&
                walk(firstLink.peerNode) == OK)
            {
                continue;
            }
            for (const auto& src : group)
            {
                if (src.first == static_cast<uint32_t>(owner.first) && src.second == owner.second)
                {
                    continue;
                }
                const IbTopology::Port& link = nodes[src.first].ports[src.second];
                if (nodes[link.peerNode].type == IbTopology::CA && link.peerNode == owner.first &&
                    link.peerPort == owner.second)
                {
                    continue;
                }
                if (firstFailure)
                {
                    *firstFailure = "no route from " + portName(src.first, src.second) +
                                    " to LID " + LidString(dlid) + " (" +
                                    portName(owner.first, owner.second) +
                                    "): " + explain(src.first, src.second, dlid);
                }
                return false;
            }
        }
    }
    return true;
}

} // namespace ns3

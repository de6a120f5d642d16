/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-ar-groups.h"

#include "ib-topology.h"

#include "ns3/log.h"

#include <algorithm>
#include <map>
#include <queue>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbArGroups");

std::vector<IbArGroups>
IbArGroups::Compute(const IbRoutingProblem& problem, const IbRoutingTables& tables)
{
    const IbTopology& t = *problem.topology;
    const uint32_t n = t.GetNNodes();
    std::vector<IbArGroups> out(n);
    std::vector<std::map<std::vector<uint8_t>, uint16_t>> ids(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        if (t.GetNode(i).type == IbTopology::SWITCH)
        {
            out[i].groupOf.assign(problem.MaxLid() + 1, 0);
            out[i].groups.emplace_back(); // group 0: none
        }
    }
    const int32_t unreached = -1;
    std::vector<int32_t> dist(n);
    const std::vector<uint32_t> switches = t.GetSwitches();
    for (uint32_t ca : t.GetCas())
    {
        const IbTopology::Node& node = t.GetNode(ca);
        for (uint32_t p = 1; p < node.ports.size(); ++p)
        {
            const int32_t leaf = node.ports[p].peerNode;
            const uint16_t base = p < problem.baseLid[ca].size() ? problem.baseLid[ca][p] : 0;
            if (leaf < 0 || base == 0 || t.GetNode(leaf).type != IbTopology::SWITCH)
            {
                continue;
            }
            // Hops from every switch to the CA's switch.
            std::fill(dist.begin(), dist.end(), unreached);
            std::queue<uint32_t> q;
            dist[leaf] = 0;
            q.push(leaf);
            while (!q.empty())
            {
                const uint32_t s = q.front();
                q.pop();
                for (const IbTopology::Port& port : t.GetNode(s).ports)
                {
                    const int32_t m = port.peerNode;
                    if (m >= 0 && t.GetNode(m).type == IbTopology::SWITCH && dist[m] == unreached)
                    {
                        dist[m] = dist[s] + 1;
                        q.push(m);
                    }
                }
            }
            for (uint32_t s : switches)
            {
                if (dist[s] <= 0)
                {
                    continue; // unreachable, or the CA's own switch (one port leads to it)
                }
                std::vector<uint8_t> ports;
                const std::vector<IbTopology::Port>& sp = t.GetNode(s).ports;
                for (uint32_t k = 1; k < sp.size(); ++k)
                {
                    const int32_t m = sp[k].peerNode;
                    if (m >= 0 && t.GetNode(m).type == IbTopology::SWITCH && dist[m] == dist[s] - 1)
                    {
                        ports.push_back(static_cast<uint8_t>(k));
                    }
                }
                if (ports.size() < 2)
                {
                    continue;
                }
                const uint32_t lids = 1u << problem.lmc;
                for (uint32_t k = 0; k < lids; ++k)
                {
                    const uint16_t lid = static_cast<uint16_t>(base + k);
                    const std::vector<uint8_t>& lft = tables.lft[s];
                    if (lid >= lft.size() ||
                        std::find(ports.begin(), ports.end(), lft[lid]) == ports.end())
                    {
                        continue; // the engine routes it another way: keep that
                    }
                    auto [it, added] =
                        ids[s].emplace(ports, static_cast<uint16_t>(out[s].groups.size()));
                    if (added)
                    {
                        out[s].groups.push_back(ports);
                    }
                    out[s].groupOf[lid] = it->second;
                }
            }
        }
    }
    return out;
}

} // namespace ns3

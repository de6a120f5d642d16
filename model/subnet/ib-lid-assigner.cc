/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-lid-assigner.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <deque>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbLidAssigner");

IbRoutingProblem
IbLidAssigner::Assign(const IbTopology& t, uint8_t lmc, uint8_t numDataVls)
{
    NS_ABORT_MSG_IF(lmc > 7, "IbLidAssigner: LMC " << +lmc << " is out of range (0..7)");
    NS_ABORT_MSG_IF(numDataVls < 1 || numDataVls > 15,
                    "IbLidAssigner: " << +numDataVls << " data VLs is out of range (1..15)");
    IbRoutingProblem p;
    p.topology = &t;
    p.lmc = lmc;
    p.numDataVls = numDataVls;
    const uint32_t lidsPerPort = 1U << lmc;
    const auto& nodes = t.GetNodes();
    p.baseLid.resize(nodes.size());

    uint32_t next = 1;          // lowest LID never handed out
    std::deque<uint32_t> holes; // free LIDs below next, left by alignment (ascending)
    std::vector<std::pair<int32_t, uint8_t>> owner(1, {-1, 0});
    auto claim = [&](uint32_t lid, uint32_t count, uint32_t node, uint8_t port) {
        NS_ABORT_MSG_IF(lid + count - 1 > MAX_UNICAST_LID,
                        "IbLidAssigner: the fabric needs more than "
                            << MAX_UNICAST_LID << " unicast LIDs (ran out at '" << nodes[node].name
                            << "' port " << +port << " with LMC " << +lmc
                            << "); use a smaller LMC or fewer nodes");
        if (owner.size() < lid + count)
        {
            owner.resize(lid + count, {-1, 0});
        }
        for (uint32_t i = 0; i < count; ++i)
        {
            owner[lid + i] = {static_cast<int32_t>(node), port};
        }
    };

    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        const IbTopology::Node& node = nodes[n];
        p.baseLid[n].assign(node.ports.size(), 0);
        if (node.type == IbTopology::SWITCH)
        {
            uint32_t lid;
            if (!holes.empty())
            {
                lid = holes.front();
                holes.pop_front();
            }
            else
            {
                lid = next++;
            }
            claim(lid, 1, n, 0);
            p.baseLid[n][0] = static_cast<uint16_t>(lid);
            continue;
        }
        for (uint32_t port = 1; port < node.ports.size(); ++port)
        {
            if (node.ports[port].peerNode < 0)
            {
                continue;
            }
            const uint32_t base = (next + lidsPerPort - 1) & ~(lidsPerPort - 1);
            for (uint32_t h = next; h < base; ++h)
            {
                holes.push_back(h);
            }
            claim(base, lidsPerPort, n, static_cast<uint8_t>(port));
            p.baseLid[n][port] = static_cast<uint16_t>(base);
            next = base + lidsPerPort;
        }
    }
    p.lidOwner = std::move(owner);
    NS_LOG_INFO("assigned LIDs 1.." << p.MaxLid() << " to " << nodes.size() << " nodes, LMC "
                                    << +lmc);
    return p;
}

} // namespace ns3

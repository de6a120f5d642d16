/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-multicast-group.h"

#include "ib-subnet-manager.h"

#include "ns3/abort.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/node.h"

#include <queue>
#include <set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbMulticastGroup");

std::map<uint32_t, std::vector<uint8_t>>
IbMulticastGroup::Create(Ptr<IbSubnetManager> sm,
                         uint16_t mlid,
                         const std::vector<Ptr<IbNetDevice>>& members)
{
    NS_ABORT_MSG_IF(!sm, "IbMulticastGroup::Create: no subnet manager");
    std::map<uint32_t, std::vector<uint8_t>> out = Program(sm, mlid, members);
    sm->RememberMulticastGroup(mlid, members);
    return out;
}

std::map<uint32_t, std::vector<uint8_t>>
IbMulticastGroup::Program(Ptr<IbSubnetManager> sm,
                          uint16_t mlid,
                          const std::vector<Ptr<IbNetDevice>>& allMembers)
{
    NS_LOG_FUNCTION(sm << mlid << allMembers.size());
    NS_ABORT_MSG_IF(!sm, "IbMulticastGroup::Create: no subnet manager");
    const std::vector<Ptr<IbNetDevice>>& members = allMembers;
    NS_ABORT_MSG_IF(mlid < IbSwitch::MULTICAST_LID_BASE || mlid == 0xFFFF,
                    "IbMulticastGroup::Create: 0x" << std::hex << mlid
                                                   << " is not a multicast LID (0xC000..0xFFFE)");
    NS_ABORT_MSG_IF(members.empty(),
                    "IbMulticastGroup::Create: group 0x" << std::hex << mlid << std::dec
                                                         << " has no members; pass the CA "
                                                            "ports that are to receive it");
    const IbTopology& topo = sm->GetTopology();
    const uint32_t n = topo.GetNNodes();
    // Member CA ports -> (topology index, port).
    std::vector<std::pair<uint32_t, uint8_t>> memberPorts;
    for (const auto& dev : members)
    {
        bool found = false;
        for (uint32_t ca : topo.GetCas())
        {
            for (uint8_t p = 1; p < topo.GetNode(ca).ports.size() && !found; ++p)
            {
                if (sm->GetCaPort(ca, p) == dev)
                {
                    memberPorts.emplace_back(ca, p);
                    found = true;
                }
            }
        }
        NS_ABORT_MSG_UNLESS(found,
                            "IbMulticastGroup::Create: member "
                                << memberPorts.size() << " (a port of node "
                                << (dev && dev->GetNode() ? dev->GetNode()->GetId() : 0)
                                << ") is not a CA port of the subnet manager's fabric; pass "
                                   "host ports of the fabric the subnet manager brought up");
    }
    std::map<uint32_t, std::set<uint8_t>> entry; // switch -> ports
    // Member ports attached to switches.
    std::set<uint32_t> memberSwitches;
    for (const auto& [ca, p] : memberPorts)
    {
        if (sm->GetCaPort(ca, p)->IsFailed())
        {
            continue; // its cable is down: it rejoins when the SM sweeps after its repair
        }
        const IbTopology::Port& port = topo.GetNode(ca).ports[p];
        NS_ABORT_MSG_UNLESS(port.peerNode >= 0 &&
                                topo.GetNode(port.peerNode).type == IbTopology::SWITCH,
                            "IbMulticastGroup::Create: member port "
                                << unsigned(p) << " of \"" << topo.GetNode(ca).name
                                << "\" is not cabled to a switch; multicast is forwarded by "
                                   "switches: pass ports that are");
        entry[port.peerNode].insert(port.peerPort);
        memberSwitches.insert(port.peerNode);
    }
    if (!memberSwitches.empty())
    {
        // BFS spanning tree over switches from the member switch first in topology order.
        const uint32_t root = *memberSwitches.begin();
        std::vector<int32_t> parent(n, -1);
        std::vector<uint8_t> parentPort(n, 0); // port of the child towards its parent
        std::vector<uint8_t> childPort(n, 0);  // port of the parent towards the child
        std::vector<bool> seen(n, false);
        std::vector<uint32_t> order;
        std::queue<uint32_t> q;
        q.push(root);
        seen[root] = true;
        while (!q.empty())
        {
            const uint32_t s = q.front();
            q.pop();
            order.push_back(s);
            const auto& ports = topo.GetNode(s).ports;
            for (uint8_t p = 1; p < ports.size(); ++p)
            {
                const int32_t peer = ports[p].peerNode;
                if (peer < 0 || seen[peer] || topo.GetNode(peer).type != IbTopology::SWITCH)
                {
                    continue;
                }
                seen[peer] = true;
                parent[peer] = s;
                childPort[peer] = p;
                parentPort[peer] = ports[p].peerPort;
                q.push(peer);
            }
        }
        for (uint32_t s : memberSwitches)
        {
            NS_ABORT_MSG_UNLESS(seen[s],
                                "IbMulticastGroup::Create: group 0x"
                                    << std::hex << mlid << std::dec << ": the switch of a member ("
                                    << topo.GetNode(s).name << ") cannot be reached from that of "
                                    << "another (" << topo.GetNode(root).name
                                    << "); the fabric is split, so no tree spans the members");
        }
        // Prune: keep a switch if it or a descendant has members (reverse BFS order).
        std::vector<bool> keep(n, false);
        for (uint32_t s : memberSwitches)
        {
            keep[s] = true;
        }
        for (auto it = order.rbegin(); it != order.rend(); ++it)
        {
            const uint32_t s = *it;
            if (keep[s] && parent[s] >= 0)
            {
                keep[parent[s]] = true;
                entry[s].insert(parentPort[s]);
                entry[parent[s]].insert(childPort[s]);
            }
        }
    }
    // The group's previous entries go (a rebuild after a link change).
    for (uint32_t s = 0; s < n; ++s)
    {
        if (topo.GetNode(s).type != IbTopology::SWITCH)
        {
            continue;
        }
        Ptr<IbSwitch> sw = sm->GetNode(s)->GetObject<IbSwitch>();
        if (sw && !sw->GetMftEntry(mlid).empty() && entry.count(s) == 0)
        {
            sw->SetMftEntry(mlid, {});
        }
    }
    std::map<uint32_t, std::vector<uint8_t>> out;
    for (const auto& [s, ports] : entry)
    {
        Ptr<IbSwitch> sw = sm->GetNode(s)->GetObject<IbSwitch>();
        NS_ABORT_MSG_UNLESS(sw, "IbMulticastGroup::Create: node " << s << " has no IbSwitch");
        std::vector<uint8_t> v(ports.begin(), ports.end());
        sw->SetMftEntry(mlid, v);
        out[s] = v;
        NS_LOG_LOGIC("switch " << s << " mlid 0x" << std::hex << mlid << std::dec << ": "
                               << v.size() << " ports");
    }
    return out;
}

} // namespace ns3

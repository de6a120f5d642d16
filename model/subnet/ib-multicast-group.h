/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_MULTICAST_GROUP_H
#define IB_MULTICAST_GROUP_H

#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <vector>

namespace ns3
{

class IbNetDevice;
class IbSubnetManager;

/**
 * @ingroup infiniband-subnet
 * @brief Builds an InfiniBand multicast group the way a subnet manager does (IBA
 * 14.2.5.x, OpenSM's multicast manager in spirit): one spanning tree of the switches,
 * pruned to the branches that lead to members, programmed into every switch's multicast
 * forwarding table (IbSwitch::SetMftEntry) for the group's MLID.
 *
 * The tree is a breadth-first tree over switch-to-switch cables rooted at the member
 * switch (a switch a member is cabled to) that comes first in the topology's node order
 * (ties broken by port number, so it is deterministic). Every member port must be cabled
 * to a switch (a CA cabled straight to another CA is refused). A switch's
 * entry lists its tree ports (towards its parent and its kept children) and its ports
 * to member channel adapters; a switch replicates a packet to every listed port except
 * the one it came in on, so each member except the sender receives exactly one copy.
 * Switches outside the pruned tree get no entry (they drop the MLID).
 */
class IbMulticastGroup
{
  public:
    /**
     * Compute and program a multicast group.
     * @param sm a configured subnet manager (its topology and nodes are used)
     * @param mlid the multicast LID (0xC000..0xFFFE)
     * @param members the member CA ports (of the SM's fabric)
     * @return the MFT entry programmed per switch: topology index -> ports
     */
    static std::map<uint32_t, std::vector<uint8_t>> Create(
        Ptr<IbSubnetManager> sm,
        uint16_t mlid,
        const std::vector<Ptr<IbNetDevice>>& members);

    /**
     * Compute and program a group's tree over the subnet manager's topology as it is now,
     * replacing the group's entries in every switch: what Create does, without the subnet
     * manager remembering the group (it calls this to rebuild its groups after a link
     * change). Members whose port is down are left out; with none left, the group's
     * entries are only cleared.
     * @param sm a configured subnet manager
     * @param mlid the multicast LID
     * @param members the member CA ports
     * @return the MFT entry programmed per switch
     */
    static std::map<uint32_t, std::vector<uint8_t>> Program(
        Ptr<IbSubnetManager> sm,
        uint16_t mlid,
        const std::vector<Ptr<IbNetDevice>>& members);
};

} // namespace ns3

#endif /* IB_MULTICAST_GROUP_H */

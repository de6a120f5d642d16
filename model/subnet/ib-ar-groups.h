/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_AR_GROUPS_H
#define IB_AR_GROUPS_H

#include "ns3/ib-routing-engine.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief The adaptive-routing groups of one switch: for each destination LID, the set of
 * equal-cost output ports a packet may take besides the LFT's.
 *
 * Compute() derives them from the topology and the routes, whatever the engine: the group
 * of (switch s, LID l) is every port of s whose neighbour is a switch one hop closer to l's
 * channel adapter (by hop count over the switches), provided the LFT's own port for l is
 * one of them and there are at least two; otherwise l has no group and keeps the LFT's
 * port. On a fat tree these are the up ports towards any spine that reaches l, and the
 * paths stay up*-down* (deadlock-free); on other topologies shortest paths may close
 * credit loops that the LFT alone avoids.
 */
class IbArGroups
{
  public:
    std::vector<uint16_t> groupOf;            ///< [lid] -> group (0: none)
    std::vector<std::vector<uint8_t>> groups; ///< [group] -> ports; [0] is empty

    /**
     * @param problem the LIDs and topology
     * @param tables the routes
     * @return one entry per topology node (empty for channel adapters)
     */
    static std::vector<IbArGroups> Compute(const IbRoutingProblem& problem,
                                           const IbRoutingTables& tables);
};

} // namespace ns3

#endif /* IB_AR_GROUPS_H */

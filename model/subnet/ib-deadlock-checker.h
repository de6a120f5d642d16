/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_DEADLOCK_CHECKER_H
#define IB_DEADLOCK_CHECKER_H

#include "ns3/ib-routing-engine.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

class IbArGroups;

/**
 * @ingroup infiniband-subnet
 * @brief Checks routing tables for credit deadlocks and unreachable destinations.
 *
 * A channel is a directed link, named by its sending end (node, output port). The routes
 * are all (source CA port, destination CA LID) pairs following the LFTs; a route on VL v
 * (its SL, tables.GetSl(), through the SL-to-VL map) that uses channel c1 and then c2
 * makes c2 a dependency of c1 in VL v's channel dependency graph. With credit-based flow
 * control a cycle in that graph is a possible deadlock (Dally and Seitz); an acyclic graph
 * on every VL means there is none. CA output channels are left out of the graph: no
 * channel depends on them, so they are in no cycle. Each strongly connected component
 * with more than one channel is reported as one cycle through it
 * (IbChannelCycleFinder::FindComponentCycles(), on Boost.Graph).
 */
class IbDeadlockChecker
{
  public:
    /**
     * @ingroup infiniband-subnet
     * @brief A cycle of channel dependencies.
     */
    struct Cycle
    {
        uint8_t vl{0}; ///< the VL whose dependency graph holds the cycle
        /// the channels, as (node, output port), each depending on the previous one and
        /// the first on the last
        std::vector<std::pair<uint32_t, uint8_t>> channels;
    };

    /// @return the identity SL-to-VL map
    static std::array<uint8_t, 16> IdentitySl2Vl();

    /**
     * Find the dependency cycles.
     * @param problem topology and LIDs
     * @param tables the routes (and SLs)
     * @param sl2vl VL of each SL (identity by default)
     * @param ar the switches' adaptive-routing groups (one per topology node), or null:
     *        routes on an SL of @p arSlMask may take any port of a group
     * @param arSlMask the SLs adaptive routing applies to
     * @return one cycle per cyclic strongly connected component, per VL; empty if
     *         deadlock-free
     */
    static std::vector<Cycle> Check(const IbRoutingProblem& problem,
                                    const IbRoutingTables& tables,
                                    const std::array<uint8_t, 16>& sl2vl = IdentitySl2Vl(),
                                    const std::vector<IbArGroups>* ar = nullptr,
                                    uint16_t arSlMask = 0xFFFF);

    /**
     * @param problem topology and LIDs
     * @param cycle a cycle from Check()
     * @return e.g. "VL0: switch-3 port 2 -> switch-4 port 1 -> switch-3 port 2"
     */
    static std::string Describe(const IbRoutingProblem& problem, const Cycle& cycle);

    /**
     * Check that every CA port reaches every CA LID (other than its own) through the
     * LFTs, without loops (a route longer than the number of switches is a loop).
     * @param problem topology and LIDs
     * @param tables the routes
     * @param [out] firstFailure the first failing pair and why, if any
     * @return true if all pairs are reachable
     */
    static bool CheckReachability(const IbRoutingProblem& problem,
                                  const IbRoutingTables& tables,
                                  std::string* firstFailure);
};

} // namespace ns3

#endif /* IB_DEADLOCK_CHECKER_H */

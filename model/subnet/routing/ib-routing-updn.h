/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ROUTING_UPDN_H
#define IB_ROUTING_UPDN_H

#include "ib-routing-engine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief OpenSM's "updn" engine: up*\/down* routing, deadlock-free on any topology.
 *
 * Switches are ranked by BFS distance from the root switches (rank 0). A move from
 * switch a to switch b is "up" if (rank(b), GUID(b)) < (rank(a), GUID(a)), else "down";
 * this order is total, so up moves form no cycle. A legal path makes no down move
 * followed by an up move, which keeps every VL's channel dependency graph acyclic.
 *
 * Routes are per destination (an LFT cannot look at the input port), so for each
 * destination switch d: a switch with an all-down path to d forwards along a shortest
 * all-down path (so that a packet that went down keeps going down); any other switch
 * forwards up, to a neighbour that is closest to d under the same rule. In fat trees
 * these are exactly the shortest paths. Among equal candidates the port is balanced as
 * in IbMinHopRouting (fewest CA LIDs so far, LMC spreading). A destination switch with no
 * CA (its own LID only: management traffic, not part of the CA-to-CA dependency graph) is
 * reached over a shortest path from the switches that have no legal path to it (with
 * several roots, root to root).
 *
 * Roots: the RootGuids attribute (comma-separated hex switch GUIDs), or, when empty,
 * detected: the switches of the highest level if every switch has a level, otherwise the
 * most central switches: those that reach 90 % of the CA ports in the fewest hops. If detected
 * roots leave a pair of switches without a legal path (possible with several roots on irregular
 * fabrics), the engine falls back to one root, the first detected one, with which every pair always
 * has a path (up to the root, then down).
 */
class IbUpDownRouting : public IbRoutingEngine
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbUpDownRouting();
    ~IbUpDownRouting() override;

    /**
     * Route every LID over up*\/down* paths.
     * @param problem topology and LIDs
     * @param [out] tables the forwarding tables
     * @param [out] error why routing failed
     * @return true on success
     */
    bool Route(const IbRoutingProblem& problem,
               IbRoutingTables& tables,
               std::string* error) override;
    /// @return "updn"
    std::string GetName() const override;

    /// @return node indices of the roots used by the last Route() call
    const std::vector<uint32_t>& GetRoots() const;

  private:
    /**
     * Route with the given roots.
     * @param problem topology and LIDs
     * @param roots root switch node indices
     * @param [out] tables the forwarding tables
     * @param [out] error why routing failed
     * @return true on success
     */
    bool RouteWithRoots(const IbRoutingProblem& problem,
                        const std::vector<uint32_t>& roots,
                        IbRoutingTables& tables,
                        std::string* error);

    std::string m_rootGuids;       //!< RootGuids attribute
    std::vector<uint32_t> m_roots; //!< roots of the last Route()
};

} // namespace ns3

#endif /* IB_ROUTING_UPDN_H */

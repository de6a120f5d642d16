/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ROUTING_FTREE_H
#define IB_ROUTING_FTREE_H

#include "ib-routing-engine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief OpenSM's "ftree" engine: d-mod-k routing for fat trees.
 *
 * Levels come from IbTopology::Node::level (0 = leaves) when every switch has one, else
 * from the hop distance to the nearest CA (switches with CAs are level 0). The fabric must
 * be a fat tree: CAs only on level-0 switches, every switch-to-switch cable between
 * adjacent levels, every non-leaf switch with down links, and every leaf reachable from
 * every switch by going up and then down. Otherwise Route() fails, naming the switch that
 * breaks the rule.
 *
 * Destination index: CA ports numbered 0.. in order of their leaf switch (node order)
 * and leaf port. For a CA LID with index i and LMC offset j, and a switch s at level l:
 * - if s has a down path to the destination's leaf (an ancestor), it forwards down, to a
 *   child that is an ancestor too;
 * - otherwise it forwards up, to a parent from which the destination's leaf is reached in
 *   the fewest hops (in a fat tree: all parents);
 * picking among the (port-ordered) candidates number (floor(i / D_l) + j) mod count, where
 * D_0 = 1 and D_{l+1} = D_l * (number of up ports of level-l switches). On a k-ary
 * n-tree this is the classic d-mod-k: every destination is reached through one top switch
 * and one down channel per level, and shift permutations are congestion-free. Paths are
 * up*\/down*, hence deadlock-free. Switch LIDs are routed over shortest paths (lowest
 * port).
 */
class IbFatTreeRouting : public IbRoutingEngine
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbFatTreeRouting();
    ~IbFatTreeRouting() override;

    /**
     * Route every LID with d-mod-k.
     * @param problem topology and LIDs
     * @param [out] tables the forwarding tables
     * @param [out] error why the fabric is not a fat tree, on failure
     * @return true on success
     */
    bool Route(const IbRoutingProblem& problem,
               IbRoutingTables& tables,
               std::string* error) override;
    /// @return "ftree"
    std::string GetName() const override;

    /**
     * Levels of the switches as the engine sees them.
     * @param t the fabric
     * @param [out] level level per node index (-1 for CAs)
     * @param [out] error why levels cannot be found
     * @return true on success
     */
    static bool ComputeLevels(const IbTopology& t, std::vector<int32_t>& level, std::string* error);
};

} // namespace ns3

#endif /* IB_ROUTING_FTREE_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ROUTING_DFSSSP_H
#define IB_ROUTING_DFSSSP_H

#include "ib-routing-engine.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief OpenSM's "dfsssp" engine: deadlock-free single-source shortest-path routing
 * (Hoefler et al., "Optimized routing for large-scale InfiniBand networks", 2009;
 * Domke et al., "Deadlock-free oblivious routing for arbitrary topologies", 2011).
 *
 * Routing (SSSP): every switch-to-switch channel starts with weight 1. For each CA LID in
 * increasing order, Dijkstra from the LID's switch, restricted to the shortest paths in
 * switch hops, gives every switch its cheapest next hop among them (ties: lowest port); then every
 * channel's weight grows by the number of CA ports whose route to that LID crosses it, so later
 * LIDs avoid loaded channels. Switch LIDs take shortest paths and do not change weights.
 *
 * Deadlock freedom: a route unit is (source, destination LID), the source being a CA (or
 * the set of switches a multi-port CA is cabled to, since the SL is per CA and LID). All
 * units start on layer 0. While a layer's channel dependency graph has a cycle, the
 * dependency of that cycle induced by the fewest units is removed by moving those units
 * to the next layer. The layer of a unit is its SL (tables.sl); tables.vlsUsed is the
 * number of layers. Route() fails if more layers than problem.numDataVls are needed.
 *
 * Cost: one Dijkstra per CA LID, and a cycle search per removed dependency; meant for
 * fabrics of up to a few thousand ports.
 */
class IbDfssspRouting : public IbRoutingEngine
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbDfssspRouting();
    ~IbDfssspRouting() override;

    /**
     * Route with SSSP and layer the routes onto SLs.
     * @param problem topology and LIDs
     * @param [out] tables the forwarding tables and SLs
     * @param [out] error why routing failed
     * @return true on success
     */
    bool Route(const IbRoutingProblem& problem,
               IbRoutingTables& tables,
               std::string* error) override;
    /// @return "dfsssp"
    std::string GetName() const override;
};

} // namespace ns3

#endif /* IB_ROUTING_DFSSSP_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ROUTING_DFSSSP_H
#define IB_ROUTING_DFSSSP_H

#include "ib-routing-engine.h"

#include <cstdint>
#include <string>
#include <vector>

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

  private:
    /// What the phases of Route() share: the switch graph, its channels, the routes and
    /// their layers (defined in ib-routing-dfsssp.cc).
    struct Context;

    /**
     * Index the switch-to-switch channels (the switch graph's adjacency entries) by
     * source, by input switch and by port, and count each switch's CA ports.
     * @param c the context
     */
    void IndexChannels(Context& c) const;
    /**
     * SSSP: route every CA LID, in increasing order, over the cheapest shortest paths, and
     * make its paths' channels dearer for the LIDs after it.
     * @param c the context (fills tables.lft for the CA LIDs and c.caLids)
     * @param [out] error why routing failed
     * @return true on success
     */
    bool RouteCaLids(Context& c, std::string* error) const;
    /**
     * Hop counts to the switch @p d, then Dijkstra towards it over the channel weights,
     * restricted to channels that bring a switch one hop closer.
     * @param c the context (fills c.hops, c.dist, c.popOrder)
     * @param d the destination switch (position)
     * @param [out] error why routing failed (weights overflow, fabric not connected)
     * @return true on success
     */
    bool ShortestPathsTo(Context& c, uint32_t d, std::string* error) const;
    /**
     * Every switch's LFT entry for @p lid: the channel to the cheapest next hop one hop
     * closer to @p d (the lowest port among equals), the delivering port at @p d.
     * @param c the context (fills c.nextEdge and the LFTs)
     * @param lid a CA LID
     * @param d the switch (position) that delivers it
     */
    void WriteLftEntries(Context& c, uint32_t lid, uint32_t d) const;
    /**
     * Balancing: every channel's weight grows by the number of CA ports whose route to
     * the LID just routed crosses it.
     * @param c the context (c.weight)
     */
    void Balance(Context& c) const;
    /**
     * The route units' sources: a CA's set of attached switches; CAs with the same set
     * share routes (and SLs).
     * @param c the context (fills c.groups, c.groupOfCa, c.layer)
     */
    void GroupSources(Context& c) const;
    /**
     * Number the possible channel dependencies densely and build the cycle finder's graph
     * of them.
     * @param c the context (fills c.depBase, c.finder)
     */
    void NumberDependencies(Context& c) const;
    /**
     * Layering: move units to higher layers until no layer's dependency graph has a cycle.
     * @param c the context (c.layer, c.layersUsed)
     * @param [out] error why routing failed (too few VLs)
     * @return true on success
     */
    bool AssignLayers(Context& c, std::string* error) const;
    /**
     * Break one cycle of layer @p current: move the units inducing its weakest dependency
     * (the one the fewest units induce) to the next layer.
     * @param c the context (c.layer)
     * @param cycle the dependencies of the cycle
     * @param current the layer
     * @param [in,out] count per dependency, the units of layer @p current inducing it
     */
    void BreakCycle(Context& c,
                    const std::vector<uint32_t>& cycle,
                    uint32_t current,
                    std::vector<uint32_t>& count) const;
    /**
     * Write the SLs (each unit's layer) and the number of layers used into the tables.
     * @param c the context
     */
    void WriteSls(Context& c) const;
};

} // namespace ns3

#endif /* IB_ROUTING_DFSSSP_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ROUTING_MINHOP_H
#define IB_ROUTING_MINHOP_H

#include "ib-routing-engine.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief OpenSM's default engine "minhop": shortest paths in switch hops, balanced.
 *
 * For every destination switch a BFS over the switch graph gives every switch its hop
 * distance; a switch's candidate output ports towards a LID are the ports to neighbour
 * switches one hop closer to the switch the LID's port is cabled to. LIDs are then
 * assigned in increasing order, independently per switch: each takes the candidate port
 * with the fewest CA LIDs routed through it so far on that switch (ties: lowest port
 * number). As with OpenSM's default port_profile_switch_nodes = FALSE, only CA LIDs are
 * counted; switch LIDs are routed but not counted. With LMC > 0, the LIDs of one CA port
 * prefer ports leading to a neighbour switch, then a port, not yet used by an earlier LID
 * of the same CA port, so that the 2^lmc paths differ as much as the fabric allows.
 *
 * The balanced assignment is shared with IbUpDownRouting, which only differs in which
 * ports are candidates (RouteBalanced()).
 */
class IbMinHopRouting : public IbRoutingEngine
{
  public:
    /// Appended to "not connected" routing errors: switches joined only through a
    /// multi-port channel adapter are separate subnets.
    static constexpr const char* kSeparateSubnetsHint =
        " (if they are joined only through channel adapters with ports in both, as in a "
        "multi-rail cluster, they are separate subnets, each with its own subnet manager: "
        "build one fabric per rail)";
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbMinHopRouting();
    ~IbMinHopRouting() override;

    /**
     * @ingroup infiniband-subnet
     * @brief The switches of a fabric as a graph, for the engines.
     */
    struct SwitchGraph
    {
        std::vector<uint32_t> switches; ///< position -> node index
        std::vector<int32_t> position;  ///< node index -> position, -1 for CAs
        /// Neighbours of the switch at position i: adj[adjOffset[i] .. adjOffset[i+1]),
        /// as (neighbour position, output port), in ascending port order.
        std::vector<uint32_t> adjOffset;
        /// See adjOffset.
        std::vector<std::pair<uint32_t, uint8_t>> adj;
        /// destPos[lid] = position of the switch a LID is delivered by, -1 if none.
        std::vector<int32_t> destPos;
        /// lastPort[lid] = port of destPos[lid] that delivers the LID (0 for its own LID).
        std::vector<uint8_t> lastPort;

        /**
         * @param problem topology and LIDs
         * @return the graph
         */
        static SwitchGraph Build(const IbRoutingProblem& problem);

        /// @return the number of switches
        uint32_t Size() const
        {
            return switches.size();
        }
    };

    /**
     * @ingroup infiniband-subnet
     * @brief Candidate output ports of every switch towards one destination switch.
     */
    struct PortCandidates
    {
        /// Ports of the switch at position i: ports[offset[i] .. offset[i+1]).
        std::vector<uint32_t> offset;
        /// See offset.
        std::vector<uint8_t> ports;
    };

    /**
     * Fills the candidates of every switch towards destination switch (position) d.
     * Returns false with an error if some switch cannot reach d.
     */
    using CandidateFunction =
        std::function<bool(uint32_t d, PortCandidates& out, std::string* error)>;

    /**
     * Fill every switch's LFT from per-destination-switch candidate ports, balancing as
     * described in the class documentation.
     * @param problem topology and LIDs
     * @param graph the switch graph of the problem
     * @param candidates gives the candidate ports towards each destination switch
     * @param engine engine name for messages
     * @param [out] tables the forwarding tables
     * @param [out] error why routing failed
     * @return true on success
     */
    static bool RouteBalanced(const IbRoutingProblem& problem,
                              const SwitchGraph& graph,
                              const CandidateFunction& candidates,
                              const std::string& engine,
                              IbRoutingTables& tables,
                              std::string* error);

    /**
     * Hop distances (in switch-to-switch cables) from every switch to switch d.
     * @param graph the switch graph
     * @param d destination position
     * @param [out] dist distance per position, UINT32_MAX if unreachable
     */
    static void Bfs(const SwitchGraph& graph, uint32_t d, std::vector<uint32_t>& dist);

    /**
     * Route the switches' own LIDs (management traffic) over shortest paths, taking the
     * lowest-numbered port among equal choices. Engines whose data routes follow their
     * own rules (ftree, dfsssp) share this for the switch LIDs.
     * @param problem the routing problem
     * @param graph its switch graph
     * @param [in,out] tables LFTs already sized; switch-LID entries are filled
     */
    static void RouteSwitchLids(const IbRoutingProblem& problem,
                                const SwitchGraph& graph,
                                IbRoutingTables& tables);

    /**
     * Route every LID over shortest paths, balanced.
     * @param problem topology and LIDs
     * @param [out] tables the forwarding tables
     * @param [out] error why routing failed
     * @return true on success
     */
    bool Route(const IbRoutingProblem& problem,
               IbRoutingTables& tables,
               std::string* error) override;
    /// @return "minhop"
    std::string GetName() const override;
};

} // namespace ns3

#endif /* IB_ROUTING_MINHOP_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ROUTING_ENGINE_H
#define IB_ROUTING_ENGINE_H

#include "ns3/ib-topology.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief What a routing engine is asked to route: a topology and the subnet manager's
 * LID assignment.
 */
struct IbRoutingProblem
{
    /// The fabric.
    const IbTopology* topology{nullptr};
    /// LID mask control: each CA port owns 2^lmc consecutive LIDs from its base LID.
    uint8_t lmc{0};
    /// baseLid[node][port]: base LID of a CA port (port >= 1); of a switch at [node][0].
    /// 0 where a port has no LID (switch external ports, uncabled CA ports).
    std::vector<std::vector<uint16_t>> baseLid;
    /// lidOwner[lid] = (node, port) owning that LID; (-1, 0) if unassigned. Size maxLid+1.
    std::vector<std::pair<int32_t, uint8_t>> lidOwner;
    /// Number of data VLs the ports run (engines that layer routes on VLs use it).
    uint8_t numDataVls{1};

    /// @return the highest assigned LID
    uint16_t MaxLid() const
    {
        return lidOwner.empty() ? 0 : static_cast<uint16_t>(lidOwner.size() - 1);
    }
};

/**
 * @ingroup infiniband-subnet
 * @brief The result of routing: a linear forwarding table per switch, and optionally a
 * service level per (source CA, destination LID) for engines that avoid deadlock by
 * spreading routes over VLs.
 */
struct IbRoutingTables
{
    /// Port value for "no route" (OpenSM's 255: drop).
    static constexpr uint8_t NO_ROUTE = 255;
    /// lft[node][lid] = output port; empty for CA nodes; size maxLid+1 for switches.
    /// A switch's own LID maps to port 0.
    std::vector<std::vector<uint8_t>> lft;
    /// sl[node][dlid] = SL for traffic from CA node to dlid; empty = SL 0 for all.
    std::vector<std::vector<uint8_t>> sl;
    /// Number of VLs (layers) the routes need; 1 unless the engine layers routes.
    uint8_t vlsUsed{1};

    /**
     * @param srcNode a CA node
     * @param dlid a destination LID
     * @return the SL for that path
     */
    uint8_t GetSl(uint32_t srcNode, uint16_t dlid) const
    {
        if (srcNode < sl.size() && dlid < sl[srcNode].size())
        {
            return sl[srcNode][dlid];
        }
        return 0;
    }
};

/**
 * @ingroup infiniband-subnet
 * @brief Base class of the routing engines (named as OpenSM names them).
 *
 * An engine fills an LFT for every switch so that every CA LID is reachable from every
 * CA port, or explains why it cannot. It does not touch ns-3 objects: the subnet
 * manager programs the switches from the tables.
 */
class IbRoutingEngine : public Object
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    /**
     * Compute the routes.
     * @param problem topology and LIDs
     * @param [out] tables the forwarding tables
     * @param [out] error why routing is impossible (names nodes or ports and what to
     *        change), on failure
     * @return true on success
     */
    virtual bool Route(const IbRoutingProblem& problem,
                       IbRoutingTables& tables,
                       std::string* error) = 0;

    /// @return the engine's OpenSM name, e.g. "minhop"
    virtual std::string GetName() const = 0;
};

} // namespace ns3

#endif /* IB_ROUTING_ENGINE_H */

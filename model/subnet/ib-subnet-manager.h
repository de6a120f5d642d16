/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_SUBNET_MANAGER_H
#define IB_SUBNET_MANAGER_H

#include "ib-topology.h"

#include "ns3/event-id.h"
#include "ns3/ib-routing-engine.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <array>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace ns3
{

class IbNetDevice;
class IbSwitch;

/**
 * @ingroup infiniband-subnet
 * @brief The path record a subnet manager answers for a (source, destination) pair.
 */
struct IbPathRecord
{
    uint16_t slid{0};    ///< source LID
    uint16_t dlid{0};    ///< destination LID
    uint8_t sl{0};       ///< service level to use
    uint32_t mtu{0};     ///< smallest IBA MTU on the path
    uint64_t rateBps{0}; ///< slowest link data rate on the path
    uint32_t hops{0};    ///< switches crossed
    bool valid{false};   ///< false if the destination is unreachable
};

/**
 * @ingroup infiniband-subnet
 * @brief A subnet manager: discovers the fabric from the ns-3 nodes and IB cables,
 * assigns LIDs, computes routes with an OpenSM-named routing engine, programs every
 * switch's LFT and SL-to-VL tables, checks for credit deadlocks and answers path
 * records. Bring the fabric up once, before Simulator::Run(), with Configure().
 *
 * Discovery: a node with an IbSwitch aggregated is a switch (its ports numbered as the
 * IbSwitch numbers them); any other node with IbNetDevices is a channel adapter (its
 * ports numbered 1.. in the order the node holds them). Only what is reachable from the
 * given nodes over IB cables is part of the subnet.
 */
class IbSubnetManager : public Object
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbSubnetManager();
    ~IbSubnetManager() override;

    /**
     * Discover, assign LIDs, route and program the fabric that the IB ports of @p nodes
     * belong to. Aborts with a message that names the problem and what to change if
     * the fabric cannot be routed (the engine refuses it, or a LID is unreachable).
     * @param nodes nodes of the fabric (hosts and switches; others are ignored)
     */
    void Configure(NodeContainer nodes);
    /// Configure() on all nodes of the simulation.
    void Configure();
    /**
     * Configure() a fabric built from @p topology (by IbFabricHelper): nodeOf[i] is the
     * ns-3 node of topology node i. Node names, GUIDs and tree levels are taken from the
     * description, so LFT dumps show them and engines can use the levels.
     * @param topology the description the fabric was built from
     * @param nodeOf the nodes, in topology order
     */
    void Configure(const IbTopology& topology, const std::vector<Ptr<Node>>& nodeOf);

    /**
     * Use an engine object instead of the RoutingEngine attribute (for engines with
     * attributes of their own).
     * @param engine the engine
     */
    void SetRoutingEngine(Ptr<IbRoutingEngine> engine);

    /**
     * @param name a name
     * @return true if @p name is a RoutingEngine attribute value (an engine of CreateRoutingEngine)
     */
    static bool IsRoutingEngine(const std::string& name);

    /**
     * @param name a RoutingEngine attribute value: minhop, updn, ftree, dfsssp or file
     * @param what who asks, for the message if @p name is not an engine
     * @return a new engine of that kind, with its default attributes
     */
    static Ptr<IbRoutingEngine> CreateRoutingEngine(const std::string& name,
                                                    const std::string& what);

    /// @return the discovered topology; after a link change, as the last sweep found it
    ///         (the cables that were down then are missing)
    const IbTopology& GetTopology() const;

    /**
     * Remember a multicast group (IbMulticastGroup::Create calls it), so that the sweep
     * after a link change rebuilds its tree.
     * @param mlid its MLID
     * @param members its member CA ports
     */
    void RememberMulticastGroup(uint16_t mlid, const std::vector<Ptr<IbNetDevice>>& members);

    /// @return heavy sweeps run after port state changes
    uint32_t GetSweeps() const;
    /// @return when the last such sweep had programmed its last table (0 if none)
    Time GetLastRerouteTime() const;
    /// @return the LID assignment and topology handed to the engine
    const IbRoutingProblem& GetRoutingProblem() const;
    /// @return the computed tables
    const IbRoutingTables& GetRoutingTables() const;

    /**
     * @param src a host port
     * @param dst another host port
     * @return the path record from src to dst
     */
    IbPathRecord GetPathRecord(Ptr<IbNetDevice> src, Ptr<IbNetDevice> dst) const;
    /**
     * @param slid a source LID (a CA port)
     * @param dlid a destination LID
     * @return the path record
     */
    IbPathRecord GetPathRecord(uint16_t slid, uint16_t dlid) const;

    /**
     * Check the routes for credit deadlocks: the channel dependency graph of each VL
     * must be acyclic.
     * @return one line per cycle, naming its links; empty if deadlock-free
     */
    std::vector<std::string> CheckDeadlocks() const;

    /**
     * Write the forwarding tables in OpenSM's opensm-lfts.dump format.
     * @param os where to write
     */
    void WriteLfts(std::ostream& os) const;

    /**
     * @param topologyIndex index of a node in GetTopology()
     * @return the ns-3 node
     */
    Ptr<Node> GetNode(uint32_t topologyIndex) const;
    /**
     * @param node a node of the fabric
     * @return its subnet: the connected component it is in when the fabric is one subnet
     *         per component (IbTopology::SetSeparateSubnets), else 0; UINT32_MAX for a
     *         node this subnet manager does not know
     */
    uint32_t GetSubnet(Ptr<Node> node) const;
    /**
     * @param topologyIndex index of a CA in GetTopology()
     * @param port its port number (1..)
     * @return the port device
     */
    Ptr<IbNetDevice> GetCaPort(uint32_t topologyIndex, uint8_t port) const;

  protected:
    void DoDispose() override;

  private:
    /**
     * Build the topology from the nodes' devices and cables.
     * @param nodes where to start
     */
    void Discover(NodeContainer nodes);
    /// Assign LIDs, route, check and program the discovered topology.
    void BringUp();
    /// Create the engine named by m_engineName.
    Ptr<IbRoutingEngine> CreateEngine() const;
    /**
     * Route m_problem with the routing engine (RerouteFallbackEngine with @p fallback);
     * when the topology is one subnet per connected component
     * (IbTopology::SetSeparateSubnets), each component on its own, the tables merged (no
     * switch routes another subnet's LIDs).
     * @param fallback use RerouteFallbackEngine
     * @param [out] tables the routes
     * @param [out] error why the engine refused (when false is returned)
     * @param [out] unreachable the first destination left unreachable within a subnet,
     *        or empty
     * @return true if every subnet was routed
     */
    bool RouteSubnets(bool fallback,
                      IbRoutingTables& tables,
                      std::string* error,
                      std::string* unreachable) const;
    /// Push LIDs, LFTs and SL-to-VL tables into the devices and switches.
    void Program();
    /// Learn of every port's state changes (once, at the first Configure).
    void WatchPorts();
    /**
     * A port went down or came up: sweep after TrapDelay or at the next periodic sweep.
     * @param idx the port's node (topology index)
     * @param port its port number
     */
    void PortStateChanged(uint32_t idx, uint32_t port);
    /// @return the SMPs of a heavy sweep's discovery of the cabled fabric
    uint32_t DiscoverySmps() const;
    /**
     * @param smps SMPs to send
     * @return the time they take, MaxWireSmps at a time, SmpTime per round
     */
    Time SmpBatches(uint32_t smps) const;
    /// The heavy sweep: discover (SMPs), compute (RouteComputeTime), then Reroute.
    void Sweep();
    /// Route the fabric as found without the cables that are down and program the LFT
    /// blocks that changed, one SMP each.
    void Reroute();

    std::string m_engineName;                                 //!< RoutingEngine attribute
    uint8_t m_lmc;                                            //!< Lmc attribute
    bool m_checkDeadlock;                                     //!< CheckDeadlock attribute
    bool m_ar{false};                                         //!< AdaptiveRouting attribute
    uint16_t m_arSlMask{0xFFFF};                              //!< ArSlMask attribute
    bool m_cc{false};                                         //!< CongestionControl attribute
    uint8_t m_ccThreshold{15};                                //!< CcThreshold attribute
    uint16_t m_ccMarkingRate{10};                             //!< CcMarkingRate attribute
    uint16_t m_ccPacketSize{512};                             //!< CcPacketSize attribute
    bool m_ccVictimMask{false};                               //!< CcVictimMask attribute
    uint8_t m_ccPortControl{0};                               //!< CcPortControl attribute
    uint16_t m_ccCctiTimer{50};                               //!< CcCctiTimer attribute
    uint8_t m_ccCctiIncrease{1};                              //!< CcCctiIncrease attribute
    uint16_t m_ccCctiMin{0};                                  //!< CcCctiMin attribute
    uint16_t m_ccTriggerThreshold{2};                         //!< CcTriggerThreshold attribute
    std::string m_ccCct{"default"};                           //!< CcCct attribute
    Ptr<IbRoutingEngine> m_engine;                            //!< engine set by SetRoutingEngine
    IbTopology m_topology;                                    //!< discovered fabric
    IbRoutingProblem m_problem;                               //!< topology + LIDs
    IbRoutingTables m_tables;                                 //!< routes
    std::vector<Ptr<Node>> m_nodes;                           //!< topology index -> ns-3 node
    std::map<uint32_t, uint32_t> m_indexOfNode;               //!< ns-3 node id -> index
    std::vector<uint32_t> m_subnetOf;                         //!< index -> subnet (BringUp)
    std::vector<std::vector<Ptr<IbNetDevice>>> m_portDevices; //!< [index][port] -> device
    bool m_configured;                                        //!< Configure() ran
    IbTopology m_cabled;              //!< the fabric as cabled at Configure (all links up)
    bool m_reroute{true};             //!< RerouteOnLinkChange attribute
    bool m_traps{true};               //!< LinkTraps attribute
    Time m_trapDelay;                 //!< TrapDelay attribute
    Time m_sweepInterval;             //!< SweepInterval attribute
    Time m_smpTime;                   //!< SmpTime attribute
    uint32_t m_maxWireSmps{4};        //!< MaxWireSmps attribute
    Time m_routeComputeTime;          //!< RouteComputeTime attribute
    std::string m_fallbackEngineName; //!< RerouteFallbackEngine attribute
    EventId m_sweepEvent;             //!< the sweep a port state change scheduled
    bool m_sweepPending{false};       //!< m_sweepEvent is scheduled and has not run
    std::vector<std::vector<bool>> m_seenFailed; //!< [index][port]: down when last told
    std::vector<EventId> m_programEvents;        //!< SMPs of the last sweep still on their way
    uint32_t m_sweeps{0};                        //!< heavy sweeps after port state changes
    Time m_lastReroute;                          //!< when the last one finished programming
    TracedCallback<uint32_t> m_reroutedTrace;    //!< Rerouted
    std::map<uint16_t, std::vector<Ptr<IbNetDevice>>> m_mcastGroups; //!< MLID -> members
};

} // namespace ns3

#endif /* IB_SUBNET_MANAGER_H */

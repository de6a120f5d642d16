/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_FLOW_FABRIC_HELPER_H
#define IB_FLOW_FABRIC_HELPER_H

#include "ns3/collective-flow-transport.h"
#include "ns3/flow-network.h"
#include "ns3/ib-routing-engine.h"
#include "ns3/ib-topology.h"
#include "ns3/nstime.h"

#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-helper
 * @brief An InfiniBand fabric at flow level: the topology's cables as FlowNetwork links
 * (one per direction, at the cable's data rate), the routing engine's forwarding tables,
 * and no ns-3 nodes or devices. CollectiveHelper::InstallFlow runs collectives on it.
 * Copies share one fabric.
 */
class IbFlowFabric
{
  public:
    /// @return the links
    Ptr<FlowNetwork> GetNetwork() const;
    /// @return the number of hosts (the topology's channel adapters, in topology order)
    uint32_t GetNHosts() const;
    /**
     * The way from one host to another: the links its LFT path crosses and its latency
     * (the HCA's doorbell and PCIe write, every cable's delay, every switch's forwarding
     * latency, as the packet model's defaults give them).
     * @param src a host
     * @param dst another host
     * @return the route (aborts with the switch and LID if the tables do not lead there)
     */
    CollectiveFlowTransport::Route GetRoute(uint32_t src, uint32_t dst) const;
    /// @return the topology
    const IbTopology& GetTopology() const;

  private:
    friend class IbFlowFabricHelper;

    /// What copies of the fabric share.
    struct State
    {
        IbTopology topology;                    ///< the fabric
        IbRoutingProblem problem;               ///< LIDs
        IbRoutingTables tables;                 ///< forwarding tables
        Ptr<FlowNetwork> network;               ///< links
        std::vector<std::vector<int32_t>> link; ///< [node][port]: link out of it, -1 none
        std::vector<uint32_t> hosts;            ///< host -> topology node
        Time cableDelay;                        ///< per cable
        Time switchLatency;                     ///< per switch
        Time hostLatency;                       ///< doorbell and PCIe write
    };

    std::shared_ptr<State> m_s; //!< shared by copies
};

/**
 * @ingroup infiniband-helper
 * @brief Builds an IbFlowFabric from an IbTopology: routes it with a routing engine and
 * makes each cable two FlowNetwork links. Latencies come from the packet model's
 * attribute defaults (IbChannel Delay, IbSwitch ForwardingLatency, IbHca
 * DoorbellLatency and PcieWriteLatency), so Config::SetDefault moves both models alike.
 */
class IbFlowFabricHelper
{
  public:
    IbFlowFabricHelper();

    /**
     * @param name the routing engine (minhop, updn, ftree, dfsssp)
     */
    void SetRoutingEngine(const std::string& name);

    /**
     * @param topology the fabric
     * @return it at flow level (aborts, naming the engine, if it cannot be routed)
     */
    IbFlowFabric Build(const IbTopology& topology) const;

  private:
    std::string m_engine; //!< routing engine
};

} // namespace ns3

#endif /* IB_FLOW_FABRIC_HELPER_H */

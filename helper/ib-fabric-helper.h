/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_FABRIC_HELPER_H
#define IB_FABRIC_HELPER_H

#include "ib-helper.h"

#include "ns3/ib-topology.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"

#include <functional>
#include <string>
#include <vector>

namespace ns3
{

class IbNetDevice;
class IbSubnetManager;
class IbSwitch;

/**
 * @ingroup infiniband-helper
 * @brief An InfiniBand fabric built in ns-3: its nodes, ports and the subnet manager
 * that brought it up.
 */
struct IbFabric
{
    NodeContainer hosts;                 ///< one node per channel adapter, topology order
    NodeContainer switches;              ///< one node per switch, topology order
    NetDeviceContainer hostPorts;        ///< each host's first cabled port (port 1 unless only a
                                         ///< higher one has a cable), in hosts' order
    std::vector<Ptr<Node>> nodeOf;       ///< topology index -> node
    std::vector<Ptr<IbSwitch>> switchOf; ///< topology index -> switch (null for hosts)
    Ptr<IbSubnetManager> subnetManager;  ///< the SM (null until brought up)

    /**
     * @param i host index
     * @return host i's first cabled port (hostPorts[i]; port 1 unless only a higher one
     *         has a cable); aborts with a message if there is no host i
     */
    Ptr<IbNetDevice> HostPort(uint32_t i) const;
    /// @return all switch ports, in switch and port order
    NetDeviceContainer SwitchPorts() const;
};

/**
 * @ingroup infiniband-helper
 * @brief Turns an IbTopology (from IbTopologyBuilder, an ibnetdiscover file, or built
 * by hand) into ns-3 nodes, IbNetDevice ports, IbSwitch objects and IbChannel cables,
 * then brings the subnet up with an IbSubnetManager.
 *
 * Device, channel, switch and subnet-manager attributes are set on the helper and apply
 * to everything it builds; each cable takes its speed and width from the topology.
 * Nodes are named in ns3::Names after the topology's node descriptions when those are
 * unique.
 */
class IbFabricHelper
{
  public:
    IbFabricHelper();

    /**
     * @param name attribute of ns3::IbNetDevice (LinkSpeed and LinkWidth come from the
     *        topology and are ignored here)
     * @param value its value
     */
    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::IbChannel
     * @param value its value
     */
    void SetChannelAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::IbSwitch
     * @param value its value
     */
    void SetSwitchAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::IbSubnetManager (RoutingEngine, Lmc, ...)
     * @param value its value
     */
    void SetSubnetManagerAttribute(std::string name, const AttributeValue& value);

    /**
     * Distributed simulation: Build() creates topology node i with system id (MPI rank)
     * @p rankOf(i); cables between nodes of different ranks become IbRemoteChannels
     * (see IbHelper::Connect). Every rank must build the same fabric with the same
     * function (IbPartition computes one). Without it every node has system id 0.
     * @param rankOf topology index -> rank; an empty function restores the default
     */
    void SetRankOfNode(std::function<uint32_t(uint32_t)> rankOf);

    /**
     * Create the nodes, ports, switches and cables of @p topology, and bring the subnet
     * up (LIDs, routes) unless @p bringUp is false.
     * @param topology the fabric
     * @param bringUp run the subnet manager now
     * @return the fabric
     */
    IbFabric Build(const IbTopology& topology, bool bringUp = true);

    /**
     * Make @p node a switch with @p numPorts unattached ports (for building by hand;
     * cable them with IbHelper::Connect).
     * @param node the node
     * @param numPorts number of ports
     * @return the switch
     */
    Ptr<IbSwitch> InstallSwitch(Ptr<Node> node, uint32_t numPorts);

    /// @return the IbHelper used for ports and cables (for pcap and ascii tracing)
    IbHelper& GetIbHelper();

  private:
    IbHelper m_ib;                              //!< ports and cables
    ObjectFactory m_switchFactory;              //!< switches
    ObjectFactory m_smFactory;                  //!< subnet manager
    std::function<uint32_t(uint32_t)> m_rankOf; //!< topology index -> system id (if set)
};

} // namespace ns3

#endif /* IB_FABRIC_HELPER_H */

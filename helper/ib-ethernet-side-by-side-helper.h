/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ETHERNET_SIDE_BY_SIDE_HELPER_H
#define IB_ETHERNET_SIDE_BY_SIDE_HELPER_H

#include "ib-fabric-helper.h"
#include "ipoib-helper.h"

#include "ns3/data-rate.h"
#include "ns3/ib-switch.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-interface-container.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/point-to-point-helper.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class IbTopology;

/**
 * @ingroup infiniband-helper
 * @brief The two fabrics of an IbEthernetSideBySideHelper scenario.
 */
struct IbEthernetSideBySide
{
    IbFabric ib;                          ///< the InfiniBand fabric (its hosts are the hosts)
    NetDeviceContainer ipoibDevices;      ///< one IpoibNetDevice per host
    Ipv4InterfaceContainer ibInterfaces;  ///< their IPv4 interfaces (IbNetwork, one subnet)
    NodeContainer routers;                ///< one IPv4 router per IB switch, same order
    NetDeviceContainer ethHostDevices;    ///< each host's Ethernet (point-to-point) NIC
    Ipv4InterfaceContainer ethInterfaces; ///< their IPv4 interfaces, in host order
    NetDeviceContainer ethDevices;        ///< every point-to-point device (hosts, routers)

    /// @return the number of hosts
    uint32_t GetNHosts() const;
    /**
     * @param i host index
     * @return the host's IPoIB address: flows to it use the IB fabric
     */
    Ipv4Address IbAddress(uint32_t i) const;
    /**
     * @param i host index
     * @return the host's Ethernet address: flows to it use the Ethernet fabric
     */
    Ipv4Address EthAddress(uint32_t i) const;
};

/**
 * @ingroup infiniband-helper
 * @brief Builds one scenario with an InfiniBand fabric and an Ethernet fabric of the same
 * shape side by side, shared by the same hosts, in one Simulator.
 *
 * From one IbTopology: the IB fabric (IbFabricHelper, subnet manager, IPoIB on every
 * host via IpoibHelper), and an IPv4-routed Ethernet fabric built from ns-3's own
 * models: every IB switch becomes an IPv4 router node and every IB cable a
 * point-to-point link (ns3::PointToPointNetDevice, its own /30 subnet) between the same
 * two nodes, so the Ethernet fabric has the IB fabric's (e.g. fat-tree) shape. Each router
 * sends to each host out of the port its IB switch uses for that host's LID (static host
 * routes), so both fabrics use the same paths; ns-3's global routing
 * (Ipv4GlobalRoutingHelper) routes the rest. SetMirrorIbRoutes(false) leaves all routing
 * to global routing, which takes the first of several equal-cost routes to each
 * destination and loads the links unevenly (ib-vs-ethernet's all-to-all took 1.046 ms on
 * Ethernet with it, 0.608 ms with the mirrored routes) unless
 * ns3::Ipv4GlobalRouting::RandomEcmpRouting sprays packets over them. Each link runs at the data
 * rate of the IB cable it mirrors (EthernetDataRate overrides it) with the IB cable's delay
 * (propagation plus FecLatency: IbChannel::GetDelay).
 *
 * Addresses: IPoIB interfaces in IbNetwork (default 10.1.0.0/16, one subnet as Linux
 * ib0), Ethernet links in EthNetwork (default 10.2.0.0/16, /30 per link). A flow picks its
 * fabric by its destination address: IbAddress(i) or EthAddress(i).
 */
class IbEthernetSideBySideHelper
{
  public:
    IbEthernetSideBySideHelper();

    /// @return the helper that builds the IB fabric (attributes, pcap)
    IbFabricHelper& GetIbFabricHelper();
    /// @return the IPoIB helper (device and HCA attributes)
    IpoibHelper& GetIpoibHelper();
    /// @return the point-to-point helper of the Ethernet links (attributes, pcap; Build
    ///         sets each link's DataRate and Delay from the IB cable it mirrors, or from
    ///         SetEthernetDataRate, over what is set here)
    PointToPointHelper& GetEthernetHelper();
    /**
     * @param rate data rate of every Ethernet link; 0 (default) = the mirrored IB cable's
     */
    void SetEthernetDataRate(DataRate rate);
    /**
     * @param base network of the IPoIB subnet
     * @param mask its mask
     */
    void SetIbNetwork(Ipv4Address base, Ipv4Mask mask);
    /**
     * @param base network the Ethernet /30 link subnets are taken from
     */
    void SetEthNetwork(Ipv4Address base);
    /**
     * @param mirror true (default): the routers follow the IB switches' forwarding tables
     *        to each host; false: ns-3's global routing alone
     */
    void SetMirrorIbRoutes(bool mirror);

    /**
     * Build both fabrics, install the Internet stack on hosts and routers, assign the
     * addresses and populate the global routing tables.
     * @param topology the fabric shape
     * @return the scenario
     */
    IbEthernetSideBySide Build(const IbTopology& topology);

  private:
    IbFabricHelper m_fabricHelper; //!< IB fabric
    IpoibHelper m_ipoib;           //!< IPoIB
    PointToPointHelper m_p2p;      //!< Ethernet links
    DataRate m_ethRate;            //!< Ethernet link rate (0 = as IB)
    Ipv4Address m_ibBase;          //!< IPoIB network
    Ipv4Mask m_ibMask;             //!< IPoIB mask
    Ipv4Address m_ethBase;         //!< Ethernet networks
    bool m_mirrorIbRoutes{true};   //!< routers follow the IB forwarding tables
};

} // namespace ns3

#endif /* IB_ETHERNET_SIDE_BY_SIDE_HELPER_H */

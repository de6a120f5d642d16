/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_FABRIC_HELPER_H
#define ETH_FABRIC_HELPER_H

#include "ns3/data-rate.h"
#include "ns3/ipv4-address.h"
#include "ns3/ipv4-interface-container.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

class EthNetDevice;
class EthSwitch;
class IbHca;
class IbTopology;

/**
 * @ingroup infiniband-helper
 * @brief An Ethernet fabric built by EthFabricHelper: RoCEv2 NICs on the hosts, or the
 * ns-3 Internet stack (EthFabricHelper::SetHostStack).
 */
struct EthFabric
{
    NodeContainer hosts;                     ///< one node per channel adapter of the topology
    NodeContainer switches;                  ///< one node per switch of the topology
    std::vector<Ptr<IbHca>> hcas;            ///< each host's NIC (RoCE only; empty with TCP)
    Ipv4InterfaceContainer interfaces;       ///< TCP only: each host's port-1 IPv4 interface
    std::vector<Ptr<EthSwitch>> ethSwitches; ///< each switch
    std::vector<Ipv4Address> addresses;      ///< each host's port-1 IPv4 address
    NetDeviceContainer hostDevices;          ///< each host's port-1 EthNetDevice
    NetDeviceContainer devices;              ///< every EthNetDevice (hosts and switches)
    std::vector<uint32_t> topologyIndex;     ///< host i's node index in the IbTopology

    /// @return the number of hosts
    uint32_t GetNHosts() const
    {
        return hosts.GetN();
    }

    /**
     * @param i a host
     * @return its port-1 address
     */
    Ipv4Address Address(uint32_t i) const
    {
        return addresses.at(i);
    }
};

/**
 * @ingroup infiniband-helper
 * @brief Builds the Ethernet fabric of an IbTopology's shape: the same switches, radix,
 * cables and link rates, with EthSwitch L3 switches, EthNetDevice ports and RoCEv2 NICs
 * (IbHca with Ethernet ports), addresses and ECMP routes.
 *
 * Every switch of the topology becomes an EthSwitch node, every channel adapter a host node
 * with an IbHca whose ports are RoCE ports (one per cabled CA port), every cable an
 * EthChannel between two EthNetDevices at the IB cable's data rate (SetDataRate overrides it)
 * with the cable delay of the channel attributes. Host port addresses are consecutive from
 * the network base (default 10.3.0.1 for host 0 port 1; ports 2.. of a host get the
 * addresses after all hosts' first ports). Routes: each switch gets a /32 route to every host
 * port whose port set is every port on a shortest path to it (hop count over the cables): an
 * ECMP group wherever the topology offers several (the up-ports of a fat tree's leaves and
 * aggregation switches), a single port toward the destination's own leaf on the way down.
 * Each switch gets its own hash seed (HashSeed = base + switch index) unless
 * SetSameHashSeed(true), which reproduces hash polarization.
 *
 * Host stack (SetHostStack). ROCE, the default: each host gets an IbHca that owns its
 * ports (AddRocePort) and runs the RDMA transport on them. TCP: no IbHca; each host gets
 * the ns-3 Internet stack (InternetStackHelper) and its ports, owned by no one, become
 * its IPv4 interfaces (EthNetDevice with no owner serves the ns-3 stack), so ns-3's TCP
 * (NewReno, DCTCP, ...) and UDP run over the same switches, with the same addresses and
 * the same ECMP routes as RoCE. Each port's interface has its address as a /32 and a
 * static ARP entry (ArpCache entry marked permanent) that maps the gateway address
 * (GetGatewayAddress, 169.254.0.1: link-local, no host's) to the MAC address of the switch
 * port it is cabled to; the host's routing table (Ipv4StaticRouting) has a default route
 * via that gateway out of port 1, the other ports only receive. The switch is an L3
 * router that does not answer ARP (it drops every frame that is not IPv4, NO_ROUTE), and
 * every packet a host sends goes to its first-hop switch whatever its destination, so one
 * ARP entry per port, a router's MAC as a real host would have learnt it, is all a host
 * needs: no per-destination entries (n^2 for n hosts), no ARP traffic. ns-3's
 * NeighborCacheHelper would not do: it fills caches with the IPv4 neighbours on a
 * channel, and a host's neighbour here is a switch port without IPv4. The switches
 * rewrite the MAC addresses per hop, so the last one delivers to the host's own MAC.
 * Neither Ipv4AddressHelper nor a queue disc is used: a host's packets go from IPv4
 * straight to its port's queue of their priority (EthNetDevice::Send, which drops beyond
 * TxQueueMaxBytes, 256 KiB by default; one ns-3 TCP socket's default send buffer,
 * 128 KiB, stays below it). Do not call Ipv4GlobalRoutingHelper::PopulateRoutingTables:
 * the switches are not ns-3 IPv4 nodes.
 *
 * Priorities with TCP. The ns-3 stack sends with the socket's IP TOS, 0 by default: DSCP
 * 0, priority 0 with the default DscpToPriority map (DSCP >> 3), which is lossy with the
 * default PfcEnabled (0x08: priority 3, RoCE's class). So TCP sees drops at a full buffer
 * (LOSSY_BUFFER_FULL) and ECN marks (EcnEnabled, EcnKmin, EcnKmax, EcnPmax: the same
 * profile as RoCE's unless set) as on any TCP fabric; the ECN bits are not part of the
 * DSCP, so ECT packets keep their priority. A socket's IpTos (e.g. DSCP 26) would put it
 * on the lossless priority, with PFC instead of drops.
 */
class EthFabricHelper
{
  public:
    /// What runs on the hosts (SetHostStack).
    enum HostStack
    {
        ROCE, ///< an IbHca with RoCE ports: the RDMA transport (the default)
        TCP,  ///< the ns-3 Internet stack on the ports: TCP, UDP, any ns-3 application
    };

    EthFabricHelper();

    /**
     * @param name an attribute of ns3::EthNetDevice (every port: hosts and switches)
     * @param value its value
     */
    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name an attribute of ns3::EthChannel
     * @param value its value
     */
    void SetChannelAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name an attribute of ns3::EthSwitch
     * @param value its value
     */
    void SetSwitchAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name an attribute of ns3::IbHca (the hosts' NICs)
     * @param value its value
     */
    void SetHcaAttribute(std::string name, const AttributeValue& value);
    /// @param rate every link's rate (0, the default: each cable's IB data rate)
    void SetDataRate(DataRate rate);
    /// @param base the first host address (the others follow it)
    void SetNetworkBase(Ipv4Address base);
    /// @param same true: every switch hashes with the same seed (HashSeed attribute)
    void SetSameHashSeed(bool same);
    /**
     * Choose what the hosts run (see the class description for TCP's addresses, routes,
     * ARP and priorities). SetHcaAttribute applies to ROCE only.
     * @param stack ROCE (the default) or TCP
     */
    void SetHostStack(HostStack stack);
    /// @return the next hop of the hosts' default route with TCP (169.254.0.1)
    static Ipv4Address GetGatewayAddress();

    /**
     * Build the fabric (aborts with a message naming the problem if the topology is invalid
     * or a host cannot reach another).
     * @param topology the shape
     * @return the fabric
     */
    EthFabric Build(const IbTopology& topology) const;

    /**
     * For a distributed (MPI) simulation: the node of topology index i gets system id
     * @p rankOf(i); cables between nodes of different ranks become EthRemoteChannels
     * (EthHelper::Cable). Every rank must build the same fabric with the same function
     * (IbPartition computes one). Without it every node has system id 0.
     * @param rankOf topology index -> rank; an empty function restores the default
     */
    void SetRankOfNode(std::function<uint32_t(uint32_t)> rankOf);

    /**
     * Fix the random streams of a fabric's switches (the ECN marking draws), as ns-3 helpers'
     * AssignStreams do, so that runs in one process repeat exactly.
     * @param fabric a fabric Build() returned
     * @param stream the first stream index
     * @return the number of streams used
     */
    static int64_t AssignStreams(const EthFabric& fabric, int64_t stream);

  private:
    ObjectFactory m_deviceFactory;              //!< EthNetDevice
    std::function<uint32_t(uint32_t)> m_rankOf; //!< topology index -> system id (if set)
    ObjectFactory m_channelFactory;             //!< EthChannel
    ObjectFactory m_switchFactory;              //!< EthSwitch
    ObjectFactory m_hcaFactory;                 //!< IbHca
    DataRate m_rate;                            //!< 0: as the IB cables
    Ipv4Address m_base;                         //!< first host address
    bool m_sameSeed;                            //!< one hash seed for all switches
    HostStack m_stack;                          //!< what the hosts run

    /**
     * Give the hosts the ns-3 Internet stack on their ports (HostStack TCP).
     * @param f the fabric so far (hosts, addresses); gets interfaces, hostDevices
     * @param ports each topology node's ports
     * @param hostAddr each host's address per port (0.0.0.0: none)
     */
    void InstallInternet(EthFabric& f,
                         const std::vector<std::vector<Ptr<EthNetDevice>>>& ports,
                         const std::vector<std::vector<Ipv4Address>>& hostAddr) const;
};

} // namespace ns3

#endif /* ETH_FABRIC_HELPER_H */

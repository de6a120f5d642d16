/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_FABRIC_HELPER_H
#define ETH_FABRIC_HELPER_H

#include "ns3/data-rate.h"
#include "ns3/ipv4-address.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"

#include <cstdint>
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
 * @brief An Ethernet (RoCEv2) fabric built by EthFabricHelper.
 */
struct EthFabric
{
    NodeContainer hosts;                     ///< one node per channel adapter of the topology
    NodeContainer switches;                  ///< one node per switch of the topology
    std::vector<Ptr<IbHca>> hcas;            ///< each host's NIC (RDMA transport, RoCE ports)
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
 */
class EthFabricHelper
{
  public:
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
     * Build the fabric (aborts with a message naming the problem if the topology is invalid
     * or a host cannot reach another).
     * @param topology the shape
     * @return the fabric
     */
    EthFabric Build(const IbTopology& topology) const;

  private:
    ObjectFactory m_deviceFactory;  //!< EthNetDevice
    ObjectFactory m_channelFactory; //!< EthChannel
    ObjectFactory m_switchFactory;  //!< EthSwitch
    ObjectFactory m_hcaFactory;     //!< IbHca
    DataRate m_rate;                //!< 0: as the IB cables
    Ipv4Address m_base;             //!< first host address
    bool m_sameSeed;                //!< one hash seed for all switches
};

} // namespace ns3

#endif /* ETH_FABRIC_HELPER_H */

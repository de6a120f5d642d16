/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_HELPER_H
#define COLLECTIVE_HELPER_H

#include "eth-fabric-helper.h"
#include "ib-fabric-helper.h"
#include "ib-flow-fabric-helper.h"
#include "ib-hca-helper.h"

#include "ns3/collective-algorithm.h"
#include "ns3/collective-communicator.h"
#include "ns3/data-rate.h"
#include "ns3/ib-topology.h"
#include "ns3/ipv4-interface-container.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"
#include "ns3/sharp-aggregation-manager.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-helper
 * @brief Builds communicators (CollectiveCommunicator) over hosts of an IbFabric (RDMA,
 * CollectiveIbTransport) or over nodes with IPv4 and TCP (CollectiveTcpTransport), and
 * runs collective operations to completion.
 */
class CollectiveHelper
{
  public:
    CollectiveHelper();

    /**
     * @param name "ring", "tree", "hd" (halving-doubling), "rd" (recursive doubling), "hier"
     *        (hierarchical, with SetGpusPerServer) or
     *        "sharp" (in-network, IB only: needs SetSharpManager)
     */
    void SetAlgorithm(const std::string& name);
    /**
     * Set an attribute of the algorithm objects created from now on (for example
     * SharpCollectiveAlgorithm's FallbackAlgorithm or SatThreshold).
     * @param name attribute name
     * @param value its value
     */
    void SetAlgorithmAttribute(const std::string& name, const AttributeValue& value);
    /**
     * @param am the aggregation manager that "sharp" communicators get their trees from
     *        (SharpHelper::Install)
     */
    void SetSharpManager(Ptr<SharpAggregationManager> am);
    /**
     * @param name attribute of ns3::CollectiveCommunicator (ChunkSize)
     * @param value its value
     */
    void SetCommunicatorAttribute(const std::string& name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::CollectiveIbTransport (SlotSize, RecvSlots, ...)
     * @param value its value
     */
    void SetIbTransportAttribute(const std::string& name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::CollectiveTcpTransport (SegmentSize, BufferSize)
     * @param value its value
     */
    void SetTcpTransportAttribute(const std::string& name, const AttributeValue& value);
    /**
     * Make the ranks GPUs of servers: every communicator installed from now on carries
     * the messages between GPUs of one server over NVLink (CollectiveNvlinkTransport, in
     * front of the fabric transport), and an algorithm with a GpusPerServer attribute
     * (hier) gets @p gpusPerServer. Rank r is GPU r % gpusPerServer of server
     * r / gpusPerServer: give the hosts in that order (IbTopologyBuilder::RailOptimized2Level
     * numbers them so). A communicator over some of the hosts (InstallIb(fabric, hosts))
     * puts host h on server h / gpusPerServer, and hier then counts the GPUs of each
     * server among its ranks (1 for a group of one GPU per server). 0 or 1 turns it off
     * (the default: one rank per server). InstallTcp takes the nodes' order for the hosts'.
     * @param gpusPerServer GPUs per server
     */
    void SetGpusPerServer(uint32_t gpusPerServer);
    /**
     * @param name attribute of ns3::CollectiveNvlinkTransport (NvlinkBandwidth,
     *        NvlinkLatency)
     * @param value its value
     */
    void SetNvlinkAttribute(const std::string& name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::IbHca, for hosts that have no HCA yet (DataMode, ...)
     * @param value its value
     */
    void SetHcaAttribute(const std::string& name, const AttributeValue& value);

    /**
     * A communicator over RDMA: rank i is host @p hosts[i] of the fabric (an IbHca is
     * installed on hosts that have none).
     * @param fabric the fabric (brought up)
     * @param hosts host indices in fabric.hosts, in rank order (empty: all hosts)
     * @return the communicator
     */
    Ptr<CollectiveCommunicator> InstallIb(const IbFabric& fabric, std::vector<uint32_t> hosts = {});
    /**
     * A communicator at flow level (CollectiveFlowTransport): rank i is host @p hosts[i]
     * of the flow fabric, its messages flows over the routing engine's paths. Timing only
     * (no data mode); the NVLink domain as with InstallIb. Algorithm sharp is refused.
     * @param fabric the fabric (IbFlowFabricHelper::Build)
     * @param hosts host indices, in rank order (empty: all hosts)
     * @return the communicator
     */
    Ptr<CollectiveCommunicator> InstallFlow(const IbFlowFabric& fabric,
                                            std::vector<uint32_t> hosts = {});
    /**
     * @param name an attribute of ns3::CollectiveFlowTransport
     * @param value its value
     */
    void SetFlowTransportAttribute(const std::string& name, const AttributeValue& value);

    /**
     * A communicator over RoCEv2: the same RDMA transport (CollectiveIbTransport, RC queue
     * pairs) on the hosts' RoCE ports; rank i is host @p hosts[i] of the Ethernet fabric.
     * Algorithm sharp needs InfiniBand switches and is refused.
     * @param fabric the fabric (EthFabricHelper::Build)
     * @param hosts host indices in fabric.hosts, in rank order (empty: all hosts)
     * @return the communicator
     */
    Ptr<CollectiveCommunicator> InstallRoce(const EthFabric& fabric,
                                            std::vector<uint32_t> hosts = {});
    /**
     * A communicator over TCP: rank i is @p nodes.Get(i), reached at its one IPv4 address
     * that is not loopback. A node with more than one (a side-by-side host has an IPoIB
     * and an Ethernet address) is refused: name the addresses with the other overload.
     * Each communicator gets its own port. The hosts of an EthFabric built with
     * EthFabricHelper::SetHostStack(TCP) qualify as they are (InstallTcp(fabric.hosts)):
     * TCP then runs on the EthSwitch fabric.
     * @param nodes nodes with an Internet stack and routes between them
     * @return the communicator
     */
    Ptr<CollectiveCommunicator> InstallTcp(NodeContainer nodes);
    /**
     * A communicator over TCP among some of the nodes: rank i is @p all.Get(hosts[i]), at
     * its one IPv4 address that is not loopback; with SetGpusPerServer, host h is on server
     * h / gpusPerServer.
     * @param all the nodes
     * @param hosts indices into @p all, in rank order
     * @return the communicator
     */
    Ptr<CollectiveCommunicator> InstallTcp(NodeContainer all, const std::vector<uint32_t>& hosts);
    /**
     * A communicator over TCP: rank i is @p nodes.Get(i), reached at
     * @p interfaces.GetAddress(i), which must be one of its own addresses; e.g. the
     * ethInterfaces (or ibInterfaces, for TCP over IPoIB) of an IbEthernetSideBySide.
     * @param nodes nodes with an Internet stack and routes between them
     * @param interfaces one interface per node, in the same order
     * @return the communicator
     */
    Ptr<CollectiveCommunicator> InstallTcp(NodeContainer nodes,
                                           const Ipv4InterfaceContainer& interfaces);

    /**
     * @param name "ring", "tree", "hd" (or "halving-doubling"), "rd", "hier", "sharp"
     * @return a new algorithm (aborts for an unknown name)
     */
    static Ptr<CollectiveAlgorithm> CreateAlgorithm(const std::string& name);

    /**
     * Start an operation now and run the simulation until it has finished (at most
     * @p limit of simulated time).
     * @param comm the communicator
     * @param spec the operation
     * @param buffers one buffer per rank, or null for timing only
     * @param limit give up after this long
     * @return its duration, or Time::Max() if it did not finish
     */
    static Time Run(Ptr<CollectiveCommunicator> comm,
                    const CollectiveOpSpec& spec,
                    std::vector<std::vector<uint8_t>>* buffers = nullptr,
                    Time limit = Seconds(10));

    /**
     * Build an IPv4 network of the same shape as an InfiniBand topology from ns-3
     * point-to-point links: one node per topology node (switches become IPv4 routers), one
     * link with its own /30 subnet per cable, each end a drop-tail queue of 1000 packets
     * (no queue disc).
     *
     * Routes: each router sends to each host address out of the port that the IB routing
     * engine @p routing gives that host port's LID on the same topology (static host
     * routes), so that TCP over this network and RDMA over the IB fabric routed by that
     * engine take the same paths; ns-3's global routing covers the rest (the link
     * subnets). "global" leaves global routing alone, which takes the first of several
     * equal-cost routes to each destination and so loads one uplink of a leaf with what
     * the others would share.
     * @param topology the shape
     * @param rate data rate of every link
     * @param delay propagation delay of every link
     * @param routing minhop, updn, ftree, dfsssp (the IbSubnetManager RoutingEngine names),
     *        or global
     * @return the channel-adapter nodes (the hosts), in topology order
     */
    static NodeContainer BuildIpFabric(const IbTopology& topology,
                                       DataRate rate,
                                       Time delay,
                                       const std::string& routing = "ftree");

  private:
    std::string m_algorithm;     //!< algorithm name
    ObjectFactory m_comm;        //!< communicator factory
    ObjectFactory m_ib;          //!< IB transport factory
    ObjectFactory m_tcp;         //!< TCP transport factory
    ObjectFactory m_flow;        //!< flow-level transport factory
    ObjectFactory m_nvlink;      //!< NVLink transport factory
    uint32_t m_gpusPerServer{0}; //!< SetGpusPerServer (0: no NVLink domain)
    IbHcaHelper m_hcaHelper;     //!< HCAs for hosts without one
    std::vector<std::pair<std::string, Ptr<AttributeValue>>> m_algAttrs; //!< algorithm attrs
    Ptr<SharpAggregationManager> m_sharp;                                //!< for "sharp"

    /// @return a new algorithm of the configured name with the configured attributes
    Ptr<CollectiveAlgorithm> NewAlgorithm() const;
    /**
     * Give a new communicator its transport and algorithm: the transport behind an
     * NVLink domain if SetGpusPerServer asked for one.
     * @param comm the communicator
     * @param fabric the fabric transport, set up
     * @param algo its algorithm
     * @param hosts the ranks' host numbers (server h / G with SetGpusPerServer(G))
     */
    void Attach(Ptr<CollectiveCommunicator> comm,
                Ptr<CollectiveTransport> fabric,
                Ptr<CollectiveAlgorithm> algo,
                const std::vector<uint32_t>& hosts) const;
    /**
     * The TCP communicator of both InstallTcp overloads.
     * @param nodes the ranks' nodes
     * @param addrs each node's address, checked by the caller
     * @param hosts the ranks' host numbers (servers with SetGpusPerServer)
     * @return the communicator
     */
    Ptr<CollectiveCommunicator> InstallTcpAt(NodeContainer nodes,
                                             const std::vector<Ipv4Address>& addrs,
                                             const std::vector<uint32_t>& hosts);
};

} // namespace ns3

#endif /* COLLECTIVE_HELPER_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-helper.h"

#include "ns3/abort.h"
#include "ns3/collective-flow-transport.h"
#include "ns3/collective-halving-doubling-algorithm.h"
#include "ns3/collective-ib-transport.h"
#include "ns3/collective-nvlink-transport.h"
#include "ns3/collective-ring-algorithm.h"
#include "ns3/collective-tcp-transport.h"
#include "ns3/collective-tree-algorithm.h"
#include "ns3/ib-deadlock-checker.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-lid-assigner.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-routing-engine.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/sharp-collective-algorithm.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"

#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveHelper");

namespace
{
/// Next TCP port handed to a communicator (one per communicator in the process).
uint16_t g_nextTcpPort = 0;
} // namespace

CollectiveHelper::CollectiveHelper()
    : m_algorithm("ring")
{
    m_comm.SetTypeId("ns3::CollectiveCommunicator");
    m_ib.SetTypeId("ns3::CollectiveIbTransport");
    m_tcp.SetTypeId("ns3::CollectiveTcpTransport");
    m_flow.SetTypeId("ns3::CollectiveFlowTransport");
    m_nvlink.SetTypeId("ns3::CollectiveNvlinkTransport");
}

void
CollectiveHelper::SetGpusPerServer(uint32_t gpusPerServer)
{
    m_gpusPerServer = gpusPerServer > 1 ? gpusPerServer : 0;
    if (m_gpusPerServer > 0)
    {
        m_nvlink.Set("GpusPerServer", UintegerValue(m_gpusPerServer));
    }
}

void
CollectiveHelper::SetNvlinkAttribute(const std::string& name, const AttributeValue& value)
{
    NS_ABORT_MSG_IF(name == "GpusPerServer",
                    "CollectiveHelper::SetNvlinkAttribute: set GpusPerServer with "
                    "SetGpusPerServer, which gives the algorithm the same value");
    m_nvlink.Set(name, value);
}

void
CollectiveHelper::Attach(Ptr<CollectiveCommunicator> comm,
                         Ptr<CollectiveTransport> fabric,
                         Ptr<CollectiveAlgorithm> algo,
                         const std::vector<uint32_t>& hosts) const
{
    if (m_gpusPerServer > 0)
    {
        // Host h is GPU h % G of server h / G (hosts numbered server by server, as
        // IbTopologyBuilder::RailOptimized2Level numbers them).
        std::vector<uint32_t> servers;
        for (uint32_t h : hosts)
        {
            servers.push_back(h / m_gpusPerServer);
        }
        // The hierarchical algorithm needs the ranks of each server next to each other and
        // as many on every server; a group that is not so (one GPU per server, as a
        // data-parallel group) is one GPU per server to it.
        uint32_t perServer = 0;
        bool regular = true;
        std::set<uint32_t> seen;
        for (uint32_t i = 0; i < servers.size();)
        {
            uint32_t j = i;
            while (j < servers.size() && servers[j] == servers[i])
            {
                ++j;
            }
            perServer = perServer == 0 ? j - i : perServer;
            regular = regular && j - i == perServer && seen.insert(servers[i]).second;
            i = j;
        }
        Ptr<CollectiveNvlinkTransport> nv = m_nvlink.Create<CollectiveNvlinkTransport>();
        nv->SetFabricTransport(fabric, servers);
        comm->SetTransport(nv);
        algo->SetAttributeFailSafe("GpusPerServer", UintegerValue(regular ? perServer : 1));
    }
    else
    {
        comm->SetTransport(fabric);
    }
    comm->SetAlgorithm(algo);
}

void
CollectiveHelper::SetAlgorithm(const std::string& name)
{
    CreateAlgorithm(name); // validates
    m_algorithm = name;
}

void
CollectiveHelper::SetCommunicatorAttribute(const std::string& name, const AttributeValue& value)
{
    m_comm.Set(name, value);
}

void
CollectiveHelper::SetIbTransportAttribute(const std::string& name, const AttributeValue& value)
{
    m_ib.Set(name, value);
}

void
CollectiveHelper::SetTcpTransportAttribute(const std::string& name, const AttributeValue& value)
{
    m_tcp.Set(name, value);
}

void
CollectiveHelper::SetHcaAttribute(const std::string& name, const AttributeValue& value)
{
    m_hcaHelper.SetHcaAttribute(name, value);
}

Ptr<CollectiveAlgorithm>
CollectiveHelper::CreateAlgorithm(const std::string& name)
{
    return CollectiveAlgorithm::CreateByName(name);
}

void
CollectiveHelper::SetAlgorithmAttribute(const std::string& name, const AttributeValue& value)
{
    m_algAttrs.emplace_back(name, value.Copy());
}

void
CollectiveHelper::SetSharpManager(Ptr<SharpAggregationManager> am)
{
    m_sharp = am;
}

Ptr<CollectiveAlgorithm>
CollectiveHelper::NewAlgorithm() const
{
    Ptr<CollectiveAlgorithm> a = CreateAlgorithm(m_algorithm);
    for (const auto& [name, value] : m_algAttrs)
    {
        a->SetAttribute(name, *value);
    }
    return a;
}

Ptr<CollectiveCommunicator>
CollectiveHelper::InstallIb(const IbFabric& fabric, std::vector<uint32_t> hosts)
{
    if (hosts.empty())
    {
        for (uint32_t i = 0; i < fabric.hosts.GetN(); ++i)
        {
            hosts.push_back(i);
        }
    }
    std::vector<Ptr<IbHca>> hcas;
    for (uint32_t h : hosts)
    {
        NS_ABORT_MSG_UNLESS(h < fabric.hosts.GetN(), "CollectiveHelper: no host " << h);
        Ptr<Node> node = fabric.hosts.Get(h);
        // A communicator keeps every rank's state in one object: its hosts must be run by
        // this process. (In a distributed run, the others' are copies that send nothing.)
        NS_ABORT_MSG_IF(node->GetSystemId() != Simulator::GetSystemId(),
                        "CollectiveHelper::InstallIb: host "
                            << h << " (node " << node->GetId() << ") is on MPI rank "
                            << node->GetSystemId() << ", and this is rank "
                            << Simulator::GetSystemId()
                            << "; a communicator's hosts must be on the rank that installs it "
                               "(partition the fabric so that they are on one rank and install "
                               "it there, or run it as one process)");
        Ptr<IbHca> hca = node->GetObject<IbHca>();
        if (!hca)
        {
            hca = m_hcaHelper.Install(node);
        }
        NS_ABORT_MSG_IF(!hcas.empty() && hca->IsDataMode() != hcas[0]->IsDataMode(),
                        "CollectiveHelper::InstallIb: host "
                            << h << "'s HCA has DataMode=" << (hca->IsDataMode() ? "true" : "false")
                            << " and host " << hosts[0]
                            << "'s DataMode=" << (hcas[0]->IsDataMode() ? "true" : "false")
                            << "; an HCA keeps the mode it was created with, so create every "
                               "rank's HCA with the same DataMode (SetHcaAttribute applies only "
                               "to hosts that have no HCA yet)");
        hcas.push_back(hca);
    }
    Ptr<CollectiveIbTransport> t = m_ib.Create<CollectiveIbTransport>();
    t->Setup(hcas, fabric.subnetManager);
    Ptr<CollectiveCommunicator> comm = m_comm.Create<CollectiveCommunicator>();
    Ptr<CollectiveAlgorithm> algo = NewAlgorithm();
    if (Ptr<SharpCollectiveAlgorithm> sharp = DynamicCast<SharpCollectiveAlgorithm>(algo))
    {
        NS_ABORT_MSG_UNLESS(m_sharp,
                            "CollectiveHelper: algorithm sharp needs the fabric's aggregation "
                            "manager: SetSharpManager(SharpHelper().Install(fabric))");
        sharp->Setup(m_sharp, hcas);
    }
    Attach(comm, t, algo, hosts);
    return comm;
}

void
CollectiveHelper::SetFlowTransportAttribute(const std::string& name, const AttributeValue& value)
{
    m_flow.Set(name, value);
}

Ptr<CollectiveCommunicator>
CollectiveHelper::InstallFlow(const IbFlowFabric& fabric, std::vector<uint32_t> hosts)
{
    if (hosts.empty())
    {
        for (uint32_t i = 0; i < fabric.GetNHosts(); ++i)
        {
            hosts.push_back(i);
        }
    }
    for (uint32_t h : hosts)
    {
        NS_ABORT_MSG_UNLESS(h < fabric.GetNHosts(),
                            "CollectiveHelper::InstallFlow: no host " << h << " (the fabric has "
                                                                      << fabric.GetNHosts() << ")");
    }
    Ptr<CollectiveFlowTransport> t = m_flow.Create<CollectiveFlowTransport>();
    t->Setup(
        hosts.size(),
        fabric.GetNetwork(),
        CollectiveFlowTransport::RouteCallback([fabric, hosts](uint32_t a, uint32_t b, uint32_t) {
            return fabric.GetRoute(hosts[a], hosts[b]);
        }));
    Ptr<CollectiveCommunicator> comm = m_comm.Create<CollectiveCommunicator>();
    NS_ABORT_MSG_IF(m_algorithm == "sharp",
                    "CollectiveHelper::InstallFlow: sharp aggregates in the switches, which the "
                    "flow-level model does not have; choose ring, tree, hd, rd, dbtree or hier");
    Attach(comm, t, NewAlgorithm(), hosts);
    return comm;
}

Ptr<CollectiveCommunicator>
CollectiveHelper::InstallRoce(const EthFabric& fabric, std::vector<uint32_t> hosts)
{
    if (hosts.empty())
    {
        for (uint32_t i = 0; i < fabric.hosts.GetN(); ++i)
        {
            hosts.push_back(i);
        }
    }
    std::vector<Ptr<IbHca>> hcas;
    for (uint32_t h : hosts)
    {
        NS_ABORT_MSG_UNLESS(h < fabric.hcas.size(),
                            "CollectiveHelper::InstallRoce: no host " << h << " (the fabric has "
                                                                      << fabric.hcas.size() << ")");
        hcas.push_back(fabric.hcas[h]);
    }
    Ptr<CollectiveIbTransport> t = m_ib.Create<CollectiveIbTransport>();
    t->Setup(hcas, nullptr);
    Ptr<CollectiveCommunicator> comm = m_comm.Create<CollectiveCommunicator>();
    Ptr<CollectiveAlgorithm> algo = NewAlgorithm();
    NS_ABORT_MSG_IF(DynamicCast<SharpCollectiveAlgorithm>(algo),
                    "CollectiveHelper::InstallRoce: algorithm sharp aggregates in InfiniBand "
                    "switches, which an Ethernet fabric does not have; choose ring, tree, "
                    "halving-doubling or recursive-doubling");
    Attach(comm, t, algo, hosts);
    return comm;
}

Ptr<CollectiveCommunicator>
CollectiveHelper::InstallTcp(NodeContainer nodes)
{
    std::vector<uint32_t> hosts(nodes.GetN());
    for (uint32_t i = 0; i < hosts.size(); ++i)
    {
        hosts[i] = i;
    }
    return InstallTcp(nodes, hosts);
}

Ptr<CollectiveCommunicator>
CollectiveHelper::InstallTcp(NodeContainer all, const std::vector<uint32_t>& hosts)
{
    NodeContainer nodes;
    for (uint32_t h : hosts)
    {
        NS_ABORT_MSG_UNLESS(h < all.GetN(),
                            "CollectiveHelper::InstallTcp: no host " << h << " (there are "
                                                                     << all.GetN() << ")");
        nodes.Add(all.Get(h));
    }
    std::vector<Ipv4Address> addrs;
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        Ptr<Node> node = nodes.Get(i);
        Ptr<Ipv4> ip = node->GetObject<Ipv4>();
        NS_ABORT_MSG_UNLESS(ip, "CollectiveHelper: node " << node->GetId() << " has no IPv4");
        std::vector<Ipv4Address> own;
        for (uint32_t k = 0; k < ip->GetNInterfaces(); ++k)
        {
            for (uint32_t j = 0; j < ip->GetNAddresses(k); ++j)
            {
                const Ipv4Address l = ip->GetAddress(k, j).GetLocal();
                if (l != Ipv4Address::GetLoopback())
                {
                    own.push_back(l);
                }
            }
        }
        NS_ABORT_MSG_IF(own.empty(),
                        "CollectiveHelper::InstallTcp: node " << node->GetId()
                                                              << " has no IPv4 address");
        if (own.size() > 1)
        {
            std::ostringstream list;
            for (const Ipv4Address& a : own)
            {
                list << " " << a;
            }
            NS_ABORT_MSG("CollectiveHelper::InstallTcp: node "
                         << node->GetId() << " (rank " << i << ") has " << own.size()
                         << " IPv4 addresses (" << list.str().substr(1)
                         << "): which network should the collective use? Pass the "
                            "interfaces, InstallTcp(nodes, interfaces), e.g. an "
                            "IbEthernetSideBySide's ethInterfaces or ibInterfaces");
        }
        addrs.push_back(own.front());
    }
    return InstallTcpAt(nodes, addrs, hosts);
}

Ptr<CollectiveCommunicator>
CollectiveHelper::InstallTcp(NodeContainer nodes, const Ipv4InterfaceContainer& interfaces)
{
    NS_ABORT_MSG_IF(interfaces.GetN() != nodes.GetN(),
                    "CollectiveHelper::InstallTcp: " << nodes.GetN() << " nodes but "
                                                     << interfaces.GetN()
                                                     << " interfaces; give one per node");
    std::vector<Ipv4Address> addrs;
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        const Ipv4Address a = interfaces.GetAddress(i);
        Ptr<Ipv4> ip = nodes.Get(i)->GetObject<Ipv4>();
        NS_ABORT_MSG_UNLESS(ip && ip->GetInterfaceForAddress(a) >= 0,
                            "CollectiveHelper::InstallTcp: interface "
                                << i << " (" << a << ") is not an address of node "
                                << nodes.Get(i)->GetId() << " (rank " << i
                                << "); give the interfaces in the nodes' order");
        addrs.push_back(a);
    }
    std::vector<uint32_t> order(nodes.GetN());
    for (uint32_t i = 0; i < order.size(); ++i)
    {
        order[i] = i;
    }
    return InstallTcpAt(nodes, addrs, order);
}

Ptr<CollectiveCommunicator>
CollectiveHelper::InstallTcpAt(NodeContainer nodes,
                               const std::vector<Ipv4Address>& addrs,
                               const std::vector<uint32_t>& hosts)
{
    std::vector<Ptr<Node>> ns;
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        ns.push_back(nodes.Get(i));
    }
    Ptr<CollectiveTcpTransport> t = m_tcp.Create<CollectiveTcpTransport>();
    UintegerValue base;
    t->GetAttribute("Port", base);
    t->SetAttribute("Port", UintegerValue(base.Get() + g_nextTcpPort++));
    t->Setup(ns, addrs);
    Ptr<CollectiveCommunicator> comm = m_comm.Create<CollectiveCommunicator>();
    NS_ABORT_MSG_IF(m_algorithm == "sharp",
                    "CollectiveHelper: sharp aggregates in InfiniBand switches; over TCP use "
                    "ring, tree or hd");
    Attach(comm, t, NewAlgorithm(), hosts);
    return comm;
}

Time
CollectiveHelper::Run(Ptr<CollectiveCommunicator> comm,
                      const CollectiveOpSpec& spec,
                      std::vector<std::vector<uint8_t>>* buffers,
                      Time limit)
{
    // The done callback runs as an event of its own. An operation that finishes inside
    // Start (no elements, one rank) leaves it pending with no Run to stop: it must not stop
    // whatever Run comes next, so it stops only the Run below.
    auto running = std::make_shared<bool>(false);
    const uint32_t id =
        comm->Start(spec, buffers, CollectiveCommunicator::DoneCallback([running](uint32_t, Time) {
                        if (*running)
                        {
                            Simulator::Stop();
                        }
                    }));
    EventId guard = Simulator::Schedule(limit, []() { Simulator::Stop(); });
    if (!comm->IsDone(id))
    {
        *running = true;
        Simulator::Run();
        *running = false;
    }
    guard.Cancel();
    return comm->IsDone(id) ? comm->GetDuration(id) : Time::Max();
}

NodeContainer
CollectiveHelper::BuildIpFabric(const IbTopology& topology,
                                DataRate rate,
                                Time delay,
                                const std::string& routing)
{
    // Route first: a topology or engine that cannot be routed stops before any node exists.
    IbRoutingProblem problem;
    IbRoutingTables tables;
    if (routing != "global")
    {
        NS_ABORT_MSG_UNLESS(routing == "minhop" || routing == "updn" || routing == "ftree" ||
                                routing == "dfsssp",
                            "CollectiveHelper::BuildIpFabric routing='"
                                << routing
                                << "' is not one of minhop, updn, ftree, dfsssp (the IB routing "
                                   "engine whose paths the routers take) or global (ns-3's "
                                   "global routing alone).");
        Ptr<IbRoutingEngine> engine =
            IbSubnetManager::CreateRoutingEngine(routing,
                                                 "CollectiveHelper::BuildIpFabric routing");
        std::string error;
        NS_ABORT_MSG_UNLESS(
            topology.Validate(&error),
            "CollectiveHelper::BuildIpFabric: the topology is not a fabric: " << error);
        problem = IbLidAssigner::Assign(topology, 0, IbNetDevice::MAX_DATA_VLS);
        NS_ABORT_MSG_UNLESS(engine->Route(problem, tables, &error) &&
                                IbDeadlockChecker::CheckReachability(problem, tables, &error),
                            "CollectiveHelper::BuildIpFabric: routing engine '"
                                << routing << "' cannot route this topology: " << error
                                << "; choose another engine (ftree routes fat trees only), or "
                                   "routing='global'.");
    }
    const uint32_t n = topology.GetNNodes();
    NodeContainer all;
    all.Create(n);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(rate));
    p2p.SetChannelAttribute("Delay", TimeValue(delay));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    NodeContainer hosts;

    struct Cable
    {
        uint32_t node[2];
        uint8_t port[2];
        NetDeviceContainer devices;
    };

    std::vector<Cable> cables;
    for (uint32_t a = 0; a < n; ++a)
    {
        const IbTopology::Node& node = topology.GetNode(a);
        if (node.type == IbTopology::CA)
        {
            hosts.Add(all.Get(a));
        }
        for (uint32_t p = 1; p < node.ports.size(); ++p)
        {
            const int32_t b = node.ports[p].peerNode;
            if (b < 0 || static_cast<uint32_t>(b) < a ||
                (static_cast<uint32_t>(b) == a && node.ports[p].peerPort < p))
            {
                continue; // each cable once
            }
            cables.push_back(Cable{{a, static_cast<uint32_t>(b)},
                                   {static_cast<uint8_t>(p), node.ports[p].peerPort},
                                   p2p.Install(all.Get(a), all.Get(b))});
        }
    }
    InternetStackHelper stack;
    stack.Install(all);
    TrafficControlHelper tch;
    // (node, port) -> the interface there and the address at the cable's other end
    std::map<std::pair<uint32_t, uint8_t>, std::pair<uint32_t, Ipv4Address>> hop;
    // (CA node, port) -> its address
    std::map<std::pair<uint32_t, uint8_t>, Ipv4Address> hostAddress;
    for (const Cable& c : cables)
    {
        const Ipv4InterfaceContainer ifs = addr.Assign(c.devices);
        addr.NewNetwork();
        tch.Uninstall(c.devices); // the device's drop-tail queue alone, as in a switch
        for (uint32_t side = 0; side < 2; ++side)
        {
            hop[{c.node[side], c.port[side]}] = {ifs.Get(side).second, ifs.GetAddress(1 - side)};
            if (topology.GetNode(c.node[side]).type == IbTopology::CA)
            {
                hostAddress[{c.node[side], c.port[side]}] = ifs.GetAddress(side);
            }
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    if (routing == "global")
    {
        return hosts;
    }
    // Static routes come first in ns-3's routing list: they override global routing's
    // choice for host addresses and leave it the link subnets.
    Ipv4StaticRoutingHelper staticHelper;
    for (const auto& [caPort, address] : hostAddress)
    {
        const uint16_t lid = problem.baseLid[caPort.first][caPort.second];
        for (uint32_t t = 0; t < n; ++t)
        {
            if (topology.GetNode(t).type != IbTopology::SWITCH || lid >= tables.lft[t].size())
            {
                continue;
            }
            auto it = hop.find({t, tables.lft[t][lid]});
            if (it != hop.end())
            {
                staticHelper.GetStaticRouting(all.Get(t)->GetObject<Ipv4>())
                    ->AddHostRouteTo(address, it->second.second, it->second.first);
            }
        }
    }
    return hosts;
}

} // namespace ns3

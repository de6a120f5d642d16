/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-fabric-helper.h"

#include "eth-helper.h"

#include "ns3/abort.h"
#include "ns3/arp-cache.h"
#include "ns3/eth-channel.h"
#include "ns3/eth-net-device.h"
#include "ns3/eth-switch.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-link-rate.h"
#include "ns3/ib-topology.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-interface.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/ipv4-static-routing.h"
#include "ns3/log.h"
#include "ns3/mac48-address.h"
#include "ns3/uinteger.h"

#ifdef NS3_MPI
#include "ns3/mpi-interface.h"
#endif

#include <deque>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthFabricHelper");

EthFabricHelper::EthFabricHelper()
    : m_rate(0),
      m_base("10.3.0.1"),
      m_sameSeed(false),
      m_stack(ROCE)
{
    m_deviceFactory.SetTypeId("ns3::EthNetDevice");
    m_channelFactory.SetTypeId("ns3::EthChannel");
    m_switchFactory.SetTypeId("ns3::EthSwitch");
    m_hcaFactory.SetTypeId("ns3::IbHca");
}

void
EthFabricHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
EthFabricHelper::SetChannelAttribute(std::string name, const AttributeValue& value)
{
    m_channelFactory.Set(name, value);
}

void
EthFabricHelper::SetSwitchAttribute(std::string name, const AttributeValue& value)
{
    m_switchFactory.Set(name, value);
}

void
EthFabricHelper::SetHcaAttribute(std::string name, const AttributeValue& value)
{
    m_hcaFactory.Set(name, value);
}

void
EthFabricHelper::SetDataRate(DataRate rate)
{
    m_rate = rate;
}

void
EthFabricHelper::SetNetworkBase(Ipv4Address base)
{
    m_base = base;
}

void
EthFabricHelper::SetSameHashSeed(bool same)
{
    m_sameSeed = same;
}

void
EthFabricHelper::SetHostStack(HostStack stack)
{
    NS_ABORT_MSG_UNLESS(stack == ROCE || stack == TCP,
                        "EthFabricHelper::SetHostStack(" << static_cast<int>(stack)
                                                         << "): use EthFabricHelper::ROCE or "
                                                            "EthFabricHelper::TCP");
    m_stack = stack;
}

Ipv4Address
EthFabricHelper::GetGatewayAddress()
{
    return Ipv4Address("169.254.0.1");
}

void
EthFabricHelper::InstallInternet(EthFabric& f,
                                 const std::vector<std::vector<Ptr<EthNetDevice>>>& ports,
                                 const std::vector<std::vector<Ipv4Address>>& hostAddr) const
{
    InternetStackHelper stack;
    stack.Install(f.hosts);
    Ipv4StaticRoutingHelper staticHelper;
    const Ipv4Address gateway = GetGatewayAddress();
    for (uint32_t h = 0; h < f.hosts.GetN(); ++h)
    {
        Ptr<Node> node = f.hosts.Get(h);
        Ptr<Ipv4L3Protocol> ip = node->GetObject<Ipv4L3Protocol>();
        const uint32_t i = f.topologyIndex[h];
        int32_t first = -1;
        for (uint32_t p = 1; p < ports[i].size(); ++p)
        {
            if (!ports[i][p])
            {
                continue;
            }
            NS_ABORT_MSG_IF(hostAddr[h][p] == gateway,
                            "EthFabricHelper::Build: host port address "
                                << gateway
                                << " is the gateway address of the TCP hosts; choose another "
                                   "SetNetworkBase");
            const uint32_t k = ip->AddInterface(ports[i][p]);
            ip->AddAddress(k, Ipv4InterfaceAddress(hostAddr[h][p], Ipv4Mask::GetOnes()));
            ip->SetUp(k);
            // The switch does not answer ARP: the gateway's entry is its port's MAC.
            Ptr<ArpCache> cache = ip->GetInterface(k)->GetArpCache();
            NS_ASSERT(cache);
            ArpCache::Entry* e = cache->Lookup(gateway);
            if (e == nullptr)
            {
                e = cache->Add(gateway);
            }
            e->SetMacAddress(ports[i][p]->GetPeer()->GetMacAddress());
            e->MarkPermanent();
            if (first < 0)
            {
                first = static_cast<int32_t>(k);
                f.interfaces.Add(ip, k);
                f.addresses.push_back(hostAddr[h][p]);
                f.hostDevices.Add(ports[i][p]);
            }
        }
        NS_ABORT_MSG_IF(first < 0,
                        "EthFabricHelper::Build: host " << h << " (node " << i
                                                        << " of the topology) has no cable");
        staticHelper.GetStaticRouting(ip)->SetDefaultRoute(gateway, static_cast<uint32_t>(first));
    }
}

void
EthFabricHelper::SetRankOfNode(std::function<uint32_t(uint32_t)> rankOf)
{
    m_rankOf = std::move(rankOf);
}

int64_t
EthFabricHelper::AssignStreams(const EthFabric& fabric, int64_t stream)
{
    int64_t used = 0;
    for (const Ptr<EthSwitch>& sw : fabric.ethSwitches)
    {
        used += sw->AssignStreams(stream + used);
    }
    return used;
}

EthFabric
EthFabricHelper::Build(const IbTopology& topology) const
{
    std::string error;
    NS_ABORT_MSG_UNLESS(topology.Validate(&error),
                        "EthFabricHelper::Build: the topology is invalid: " << error);
    const uint32_t n = topology.GetNNodes();
    EthFabric f;
    // One ns-3 node per topology node; ports in topology port order.
    std::vector<Ptr<Node>> nodes(n);
    std::vector<std::vector<Ptr<EthNetDevice>>> ports(n);
    std::vector<int32_t> hostOf(n, -1);
    std::vector<int32_t> switchOf(n, -1);
    for (uint32_t i = 0; i < n; ++i)
    {
        const IbTopology::Node& tn = topology.GetNode(i);
        const uint32_t rank = m_rankOf ? m_rankOf(i) : 0;
#ifdef NS3_MPI
        NS_ABORT_MSG_IF(MpiInterface::IsEnabled() && rank >= MpiInterface::GetSize(),
                        "EthFabricHelper::Build: topology node "
                            << i << " is given rank " << rank << " but the simulation has "
                            << MpiInterface::GetSize() << " ranks");
#endif
        nodes[i] = CreateObject<Node>(rank);
        ports[i].resize(tn.ports.size());
        if (tn.type == IbTopology::SWITCH)
        {
            switchOf[i] = static_cast<int32_t>(f.switches.GetN());
            f.switches.Add(nodes[i]);
        }
        else
        {
            hostOf[i] = static_cast<int32_t>(f.hosts.GetN());
            f.hosts.Add(nodes[i]);
            f.topologyIndex.push_back(i);
        }
    }
    // Cables: each once, from the end with the lower (node, port).
    for (uint32_t i = 0; i < n; ++i)
    {
        const IbTopology::Node& tn = topology.GetNode(i);
        for (uint32_t p = 1; p < tn.ports.size(); ++p)
        {
            const IbTopology::Port& tp = tn.ports[p];
            if (tp.peerNode < 0)
            {
                continue;
            }
            const auto j = static_cast<uint32_t>(tp.peerNode);
            if (j < i || (j == i && tp.peerPort < p))
            {
                continue;
            }
            const DataRate rate =
                m_rate.GetBitRate() != 0 ? m_rate : IbLinkRate::GetDataRate(tp.speed, tp.width);
            Ptr<EthNetDevice> ends[2];
            uint32_t k = 0;
            for (auto [node, port] : {std::pair<uint32_t, uint32_t>{i, p}, {j, tp.peerPort}})
            {
                Ptr<EthNetDevice> dev = m_deviceFactory.Create<EthNetDevice>();
                dev->SetAddress(Mac48Address::Allocate());
                dev->SetAttribute("DataRate", DataRateValue(rate));
                nodes[node]->AddDevice(dev);
                ports[node][port] = dev;
                f.devices.Add(dev);
                ends[k++] = dev;
            }
            EthHelper::Cable(m_channelFactory, ends[0], ends[1]);
        }
    }
    // Host NICs: every cabled CA port is a RoCE port; port 1 addresses first.
    const uint32_t nHosts = f.hosts.GetN();
    std::vector<std::vector<Ipv4Address>> hostAddr(nHosts);
    uint32_t next = m_base.Get();
    for (uint8_t round = 1; round < 255; ++round)
    {
        bool any = false;
        for (uint32_t h = 0; h < nHosts; ++h)
        {
            const uint32_t i = f.topologyIndex[h];
            if (round < ports[i].size())
            {
                any = true;
                if (ports[i][round])
                {
                    hostAddr[h].resize(round + 1);
                    hostAddr[h][round] = Ipv4Address(next++);
                }
            }
        }
        if (!any)
        {
            break;
        }
    }
    for (uint32_t h = 0; h < nHosts && m_stack == ROCE; ++h)
    {
        const uint32_t i = f.topologyIndex[h];
        Ptr<IbHca> hca = m_hcaFactory.Create<IbHca>();
        nodes[i]->AggregateObject(hca);
        for (uint32_t p = 1; p < ports[i].size(); ++p)
        {
            if (ports[i][p])
            {
                hca->AddRocePort(ports[i][p], hostAddr[h][p]);
            }
        }
        NS_ABORT_MSG_IF(hca->GetNPorts() == 0,
                        "EthFabricHelper::Build: host " << topology.GetNode(i).name << " (node "
                                                        << i << ") has no cable");
        f.hcas.push_back(hca);
        f.addresses.push_back(hca->GetIpAddress(1));
        f.hostDevices.Add(hca->GetEthPort(1));
    }
    if (m_stack == TCP)
    {
        InstallInternet(f, ports, hostAddr);
    }
    // Switches.
    for (uint32_t i = 0; i < n; ++i)
    {
        if (switchOf[i] < 0)
        {
            continue;
        }
        Ptr<EthSwitch> sw = m_switchFactory.Create<EthSwitch>();
        if (!m_sameSeed)
        {
            UintegerValue seed;
            sw->GetAttribute("HashSeed", seed);
            sw->SetAttribute("HashSeed", UintegerValue(seed.Get() + switchOf[i]));
        }
        nodes[i]->AggregateObject(sw);
        for (uint32_t p = 1; p < ports[i].size(); ++p)
        {
            // Every topology port is a switch port, cabled or not, so that port numbers match.
            if (!ports[i][p])
            {
                Ptr<EthNetDevice> dev = m_deviceFactory.Create<EthNetDevice>();
                dev->SetAddress(Mac48Address::Allocate());
                nodes[i]->AddDevice(dev);
                ports[i][p] = dev;
            }
            const uint8_t k = sw->AddPort(ports[i][p]);
            NS_ASSERT(k == p);
        }
        f.ethSwitches.push_back(sw);
    }
    // Routes: for each host port, a breadth-first search from it over the cables gives every
    // switch's hop distance; a switch's ECMP group is its ports to neighbours one hop closer.
    std::vector<uint32_t> dist(n);
    for (uint32_t h = 0; h < nHosts; ++h)
    {
        const uint32_t src = f.topologyIndex[h];
        for (uint32_t hp = 1; hp < hostAddr[h].size(); ++hp)
        {
            if (hostAddr[h][hp] == Ipv4Address())
            {
                continue;
            }
            const IbTopology::Port& att = topology.GetNode(src).ports[hp];
            std::fill(dist.begin(), dist.end(), UINT32_MAX);
            std::deque<uint32_t> queue;
            const auto first = static_cast<uint32_t>(att.peerNode);
            if (switchOf[first] < 0)
            {
                continue; // back-to-back hosts: no switch to route
            }
            dist[first] = 1;
            queue.push_back(first);
            while (!queue.empty())
            {
                const uint32_t u = queue.front();
                queue.pop_front();
                const IbTopology::Node& un = topology.GetNode(u);
                for (uint32_t p = 1; p < un.ports.size(); ++p)
                {
                    const int32_t v = un.ports[p].peerNode;
                    if (v < 0 || switchOf[v] < 0 || dist[v] != UINT32_MAX)
                    {
                        continue;
                    }
                    dist[v] = dist[u] + 1;
                    queue.push_back(static_cast<uint32_t>(v));
                }
            }
            for (uint32_t u = 0; u < n; ++u)
            {
                if (switchOf[u] < 0)
                {
                    continue;
                }
                if (dist[u] == UINT32_MAX && topology.HasSeparateSubnets())
                {
                    // another subnet (rail): no route, and a frame for it says so
                    f.ethSwitches[switchOf[u]]->AddForeignHost(hostAddr[h][hp],
                                                               topology.GetNode(src).name);
                    continue;
                }
                NS_ABORT_MSG_IF(dist[u] == UINT32_MAX,
                                "EthFabricHelper::Build: switch "
                                    << topology.GetNode(u).name << " (node " << u
                                    << ") cannot reach host " << topology.GetNode(src).name
                                    << "; the topology is not connected");
                std::vector<uint8_t> group;
                const IbTopology::Node& un = topology.GetNode(u);
                for (uint32_t p = 1; p < un.ports.size(); ++p)
                {
                    const IbTopology::Port& tp = un.ports[p];
                    if (tp.peerNode < 0)
                    {
                        continue;
                    }
                    const bool toHost =
                        static_cast<uint32_t>(tp.peerNode) == src && tp.peerPort == hp;
                    const bool closer =
                        switchOf[tp.peerNode] >= 0 && dist[tp.peerNode] + 1 == dist[u];
                    if (dist[u] == 1 ? toHost : closer)
                    {
                        group.push_back(static_cast<uint8_t>(p));
                    }
                }
                f.ethSwitches[switchOf[u]]->AddRoute(hostAddr[h][hp],
                                                     Ipv4Mask("255.255.255.255"),
                                                     group);
            }
        }
    }
    return f;
}

} // namespace ns3

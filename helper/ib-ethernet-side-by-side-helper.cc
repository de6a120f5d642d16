/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-ethernet-side-by-side-helper.h"

#include "ns3/abort.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-link-rate.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/string.h"

#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbEthernetSideBySideHelper");

uint32_t
IbEthernetSideBySide::GetNHosts() const
{
    return ib.hosts.GetN();
}

Ipv4Address
IbEthernetSideBySide::IbAddress(uint32_t i) const
{
    return ibInterfaces.GetAddress(i);
}

Ipv4Address
IbEthernetSideBySide::EthAddress(uint32_t i) const
{
    return ethInterfaces.GetAddress(i);
}

IbEthernetSideBySideHelper::IbEthernetSideBySideHelper()
    : m_ethRate(0),
      m_ibBase("10.1.0.0"),
      m_ibMask("255.255.0.0"),
      m_ethBase("10.2.0.0")
{
}

IbFabricHelper&
IbEthernetSideBySideHelper::GetIbFabricHelper()
{
    return m_fabricHelper;
}

IpoibHelper&
IbEthernetSideBySideHelper::GetIpoibHelper()
{
    return m_ipoib;
}

PointToPointHelper&
IbEthernetSideBySideHelper::GetEthernetHelper()
{
    return m_p2p;
}

void
IbEthernetSideBySideHelper::SetEthernetDataRate(DataRate rate)
{
    m_ethRate = rate;
}

void
IbEthernetSideBySideHelper::SetIbNetwork(Ipv4Address base, Ipv4Mask mask)
{
    m_ibBase = base;
    m_ibMask = mask;
}

void
IbEthernetSideBySideHelper::SetEthNetwork(Ipv4Address base)
{
    m_ethBase = base;
}

void
IbEthernetSideBySideHelper::SetMirrorIbRoutes(bool mirror)
{
    m_mirrorIbRoutes = mirror;
}

IbEthernetSideBySide
IbEthernetSideBySideHelper::Build(const IbTopology& topology)
{
    NS_LOG_FUNCTION(this);
    IbEthernetSideBySide s;
    s.ib = m_fabricHelper.Build(topology);
    s.ipoibDevices = m_ipoib.Install(s.ib);

    // One router per switch, in topology order.
    const uint32_t n = topology.GetNNodes();
    std::vector<Ptr<Node>> ethNode(n);
    std::map<uint32_t, uint32_t> hostIndex; // topology index -> host index
    for (uint32_t h = 0; h < s.ib.hosts.GetN(); ++h)
    {
        for (uint32_t t = 0; t < n; ++t)
        {
            if (s.ib.nodeOf[t] == s.ib.hosts.Get(h))
            {
                hostIndex[t] = h;
                ethNode[t] = s.ib.hosts.Get(h);
            }
        }
    }
    for (uint32_t t = 0; t < n; ++t)
    {
        if (topology.GetNode(t).type == IbTopology::SWITCH)
        {
            Ptr<Node> r = CreateObject<Node>();
            s.routers.Add(r);
            ethNode[t] = r;
        }
    }
    InternetStackHelper stack;
    stack.Install(s.ib.hosts);
    stack.Install(s.routers);

    Ipv4AddressHelper ibAddr(m_ibBase, m_ibMask);
    s.ibInterfaces = ibAddr.Assign(s.ipoibDevices);

    // One point-to-point link per IB cable, each its own /30.
    Ipv4AddressHelper ethAddr(m_ethBase, "255.255.255.252");
    std::vector<Ipv4Address> hostEth(s.ib.hosts.GetN());
    std::vector<Ptr<NetDevice>> hostDev(s.ib.hosts.GetN());
    std::vector<uint32_t> hostIf(s.ib.hosts.GetN(), 0);
    std::vector<uint8_t> hostPortNum(s.ib.hosts.GetN(), 0); // topology port of the NIC's link

    // (switch, port) -> the router's interface on that link and the address across it.
    struct Hop
    {
        uint32_t ifIndex;
        Ipv4Address next;
    };

    std::map<std::pair<uint32_t, uint8_t>, Hop> hopOf;
    // The IB port at (topology node, port): its cable's delay is the Ethernet link's.
    auto ibPortAt = [&s](uint32_t t, uint8_t port) -> Ptr<IbNetDevice> {
        if (s.ib.switchOf[t])
        {
            return s.ib.switchOf[t]->GetPort(port);
        }
        Ptr<Node> node = s.ib.nodeOf[t];
        return port - 1u < node->GetNDevices() ? DynamicCast<IbNetDevice>(node->GetDevice(port - 1))
                                               : nullptr;
    };
    for (uint32_t a = 0; a < n; ++a)
    {
        const auto& ports = topology.GetNode(a).ports;
        for (uint8_t p = 1; p < ports.size(); ++p)
        {
            const int32_t b = ports[p].peerNode;
            if (b < 0 || uint32_t(b) < a || (uint32_t(b) == a && ports[p].peerPort < p))
            {
                continue; // uncabled, or seen from the other end
            }
            const DataRate rate = m_ethRate.GetBitRate() > 0
                                      ? m_ethRate
                                      : IbLinkRate::GetDataRate(ports[p].speed, ports[p].width);
            m_p2p.SetDeviceAttribute("DataRate", DataRateValue(rate));
            Time delay = NanoSeconds(10);
            Ptr<IbNetDevice> ibPort = ibPortAt(a, p);
            if (Ptr<IbChannel> cable =
                    ibPort ? DynamicCast<IbChannel>(ibPort->GetChannel()) : nullptr)
            {
                // the first bit's delay: propagation plus the cable's FecLatency (Ethernet
                // links at these rates correct errors too; the Delay attribute leaves it out)
                delay = cable->GetDelay();
            }
            m_p2p.SetChannelAttribute("Delay", TimeValue(delay));
            NetDeviceContainer d = m_p2p.Install(ethNode[a], ethNode[b]);
            s.ethDevices.Add(d);
            Ipv4InterfaceContainer ifs = ethAddr.Assign(d);
            ethAddr.NewNetwork();
            for (uint32_t side = 0; side < 2; ++side)
            {
                const uint32_t t = side == 0 ? a : uint32_t(b);
                const uint8_t port = side == 0 ? p : ports[p].peerPort;
                auto it = hostIndex.find(t);
                if (it != hostIndex.end() && !hostDev[it->second])
                {
                    hostDev[it->second] = d.Get(side);
                    hostEth[it->second] = ifs.GetAddress(side);
                    hostIf[it->second] = ifs.Get(side).second;
                    hostPortNum[it->second] = port;
                }
                if (topology.GetNode(t).type == IbTopology::SWITCH)
                {
                    hopOf[{t, port}] = Hop{ifs.Get(side).second, ifs.GetAddress(1 - side)};
                }
            }
        }
    }
    for (uint32_t h = 0; h < s.ib.hosts.GetN(); ++h)
    {
        NS_ABORT_MSG_UNLESS(hostDev[h], "IbEthernetSideBySideHelper: host " << h << " has no link");
        s.ethHostDevices.Add(hostDev[h]);
        s.ethInterfaces.Add(s.ib.hosts.Get(h)->GetObject<Ipv4>(), hostIf[h]);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    if (m_mirrorIbRoutes)
    {
        // Each router sends to each host's Ethernet address out of the port its IB switch
        // uses for that host's LID: the same paths on both fabrics. (Global routing, which
        // stays for the link subnets, takes the first of several equal-cost routes to each
        // destination, which loads the links unevenly.) Static routes come first in
        // ns-3's routing list.
        Ipv4StaticRoutingHelper staticHelper;
        for (uint32_t h = 0; h < s.ib.hosts.GetN(); ++h)
        {
            Ptr<Node> host = s.ib.hosts.Get(h);
            const uint32_t dev = hostPortNum[h] - 1u;
            Ptr<IbNetDevice> ibPort = dev < host->GetNDevices()
                                          ? DynamicCast<IbNetDevice>(host->GetDevice(dev))
                                          : nullptr;
            if (!ibPort || ibPort->GetLid() == 0)
            {
                continue; // no IB route to mirror: global routing's stays
            }
            for (uint32_t t = 0; t < n; ++t)
            {
                const Ptr<IbSwitch>& sw = s.ib.switchOf[t];
                if (!sw)
                {
                    continue;
                }
                auto hop = hopOf.find({t, sw->GetLftEntry(ibPort->GetLid())});
                if (hop != hopOf.end())
                {
                    staticHelper.GetStaticRouting(ethNode[t]->GetObject<Ipv4>())
                        ->AddHostRouteTo(hostEth[h], hop->second.next, hop->second.ifIndex);
                }
            }
        }
    }
    return s;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-test-util.h"

#include "ns3/abort.h"
#include "ns3/eth-channel.h"
#include "ns3/eth-frame.h"
#include "ns3/ipv4-header.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/udp-header.h"

#include <cmath>

namespace ns3
{
namespace ethtest
{

namespace
{
/// IPv4 + UDP headers.
constexpr uint32_t kIpUdp = 20 + 8;
} // namespace

uint32_t
UdpFrameBytes(uint32_t payload)
{
    return std::max<uint32_t>(payload + kIpUdp + EthFrame::HEADER_SIZE + EthFrame::FCS_SIZE,
                              EthFrame::MIN_FRAME);
}

Ptr<Packet>
MakeUdpFrame(Mac48Address src, Mac48Address dst, const UdpFlow& flow, uint32_t payload)
{
    Ptr<Packet> p = Create<Packet>(payload);
    UdpHeader udp;
    udp.SetSourcePort(flow.srcPort);
    udp.SetDestinationPort(flow.dstPort);
    p->AddHeader(udp);
    Ipv4Header ip;
    ip.SetSource(flow.srcIp);
    ip.SetDestination(flow.dstIp);
    ip.SetProtocol(17);
    ip.SetPayloadSize(payload + 8);
    ip.SetTtl(flow.ttl);
    ip.SetTos(static_cast<uint8_t>((flow.dscp << 2) | (flow.ecn & 3)));
    ip.SetIdentification(0);
    ip.SetDontFragment();
    ip.EnableChecksum();
    p->AddHeader(ip);
    EthFrame::Frame(p, src, dst, EthFrame::ETHERTYPE_IPV4, payload);
    return p;
}

NS_OBJECT_ENSURE_REGISTERED(EthTestHost);

TypeId
EthTestHost::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ethtest::EthTestHost")
                            .SetParent<Object>()
                            .SetGroupName("InfinibandTests")
                            .AddConstructor<EthTestHost>();
    return tid;
}

void
EthTestHost::Setup(Ptr<EthNetDevice> dev, Ipv4Address ip)
{
    m_dev = dev;
    m_ip = ip;
    dev->SetOwner(this, 1);
}

Ptr<EthNetDevice>
EthTestHost::GetDevice() const
{
    return m_dev;
}

Ipv4Address
EthTestHost::GetIp() const
{
    return m_ip;
}

void
EthTestHost::SetCheckFcs(bool on)
{
    m_checkFcs = on;
}

void
EthTestHost::Send(UdpFlow flow, uint32_t payload, uint32_t count, int prio)
{
    Ptr<EthNetDevice> peer = m_dev->GetPeer();
    NS_ABORT_MSG_UNLESS(peer, "EthTestHost " << m_ip << ": its port has no cable");
    flow.srcIp = m_ip;
    for (uint32_t i = 0; i < count; ++i)
    {
        Ptr<Packet> f = MakeUdpFrame(m_dev->GetMacAddress(), peer->GetMacAddress(), flow, payload);
        uint8_t head[64];
        const uint32_t n = EthFrame::CopyHead(*f, head, sizeof(head));
        const uint8_t q = prio >= 0 ? static_cast<uint8_t>(prio) : m_dev->Classify(head, n);
        m_dev->Enqueue(f, q, 0);
    }
}

void
EthTestHost::SendAt(Time at, UdpFlow flow, uint32_t payload, uint32_t count)
{
    Simulator::Schedule(at - Simulator::Now(),
                        [this, flow, payload, count]() { Send(flow, payload, count); });
}

const std::vector<EthTestHost::Rx>&
EthTestHost::GetReceived() const
{
    return m_rx;
}

uint64_t
EthTestHost::GetTxStarted() const
{
    return m_txStarts.size();
}

const std::vector<Time>&
EthTestHost::GetTxStartTimes() const
{
    return m_txStarts;
}

void
EthTestHost::PortReceive(uint8_t port, EthNetDevice* dev, Ptr<Packet> frame, uint8_t prio)
{
    uint8_t head[64];
    const uint32_t n = EthFrame::CopyHead(*frame, head, sizeof(head));
    Rx r;
    r.time = Simulator::Now();
    r.bytes = frame->GetSize();
    r.prio = prio;
    r.dstMac.CopyFrom(head);
    r.srcMac.CopyFrom(head + 6);
    EthFrame::FlowKey k;
    if (n >= 38 && EthFrame::PeekFlow(head, n, k))
    {
        r.srcIp = k.srcIp;
        r.srcPort = k.srcPort;
        r.ecn = EthFrame::PeekEcn(head);
        r.ttl = head[EthFrame::HEADER_SIZE + 8];
    }
    if (m_checkFcs)
    {
        r.fcsGood = EthFrame::CheckFcs(*frame);
    }
    m_rx.push_back(r);
}

void
EthTestHost::PortTxReady(uint8_t port, EthNetDevice* dev, uint8_t prio)
{
}

void
EthTestHost::PortTxStarted(uint8_t port,
                           EthNetDevice* dev,
                           uint8_t prio,
                           uint32_t bytes,
                           uint32_t cookie)
{
    m_txStarts.push_back(Simulator::Now());
}

void
EthTestHost::DoDispose()
{
    if (m_dev)
    {
        m_dev->SetOwner(nullptr, 0);
    }
    m_dev = nullptr;
    Object::DoDispose();
}

EthTestFabric::EthTestFabric()
{
    m_device.SetTypeId("ns3::EthNetDevice");
    m_channel.SetTypeId("ns3::EthChannel");
    m_switch.SetTypeId("ns3::EthSwitch");
}

void
EthTestFabric::SetDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    m_device.Set(name, value);
}

void
EthTestFabric::SetChannelAttribute(const std::string& name, const AttributeValue& value)
{
    m_channel.Set(name, value);
}

void
EthTestFabric::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_switch.Set(name, value);
}

Ptr<EthNetDevice>
EthTestFabric::NewDevice(Ptr<Node> node)
{
    Ptr<EthNetDevice> dev = m_device.Create<EthNetDevice>();
    dev->SetAddress(Mac48Address::Allocate());
    node->AddDevice(dev);
    return dev;
}

Ptr<EthChannel>
EthTestFabric::Cable(Ptr<EthNetDevice> a, Ptr<EthNetDevice> b)
{
    Ptr<EthChannel> ch = m_channel.Create<EthChannel>();
    a->Attach(ch);
    b->Attach(ch);
    return ch;
}

Ptr<EthTestHost>
EthTestFabric::AddHost(Ipv4Address ip)
{
    Ptr<Node> node = CreateObject<Node>();
    Ptr<EthTestHost> host = CreateObject<EthTestHost>();
    node->AggregateObject(host);
    host->Setup(NewDevice(node), ip);
    m_hosts.push_back(host);
    return host;
}

Ptr<EthSwitch>
EthTestFabric::AddSwitch()
{
    Ptr<Node> node = CreateObject<Node>();
    Ptr<EthSwitch> sw = m_switch.Create<EthSwitch>();
    node->AggregateObject(sw);
    m_switches.push_back(sw);
    return sw;
}

uint8_t
EthTestFabric::Connect(Ptr<EthSwitch> sw, Ptr<EthTestHost> host)
{
    Ptr<EthNetDevice> port = NewDevice(sw->GetObject<Node>());
    const uint8_t n = sw->AddPort(port);
    Cable(port, host->GetDevice());
    return n;
}

uint8_t
EthTestFabric::Connect(Ptr<EthSwitch> a, Ptr<EthSwitch> b)
{
    Ptr<EthNetDevice> pa = NewDevice(a->GetObject<Node>());
    Ptr<EthNetDevice> pb = NewDevice(b->GetObject<Node>());
    const uint8_t na = a->AddPort(pa);
    m_lastPeerPort = b->AddPort(pb);
    Cable(pa, pb);
    return na;
}

uint8_t
EthTestFabric::GetLastPeerPort() const
{
    return m_lastPeerPort;
}

const std::vector<Ptr<EthTestHost>>&
EthTestFabric::Hosts() const
{
    return m_hosts;
}

const std::vector<Ptr<EthSwitch>>&
EthTestFabric::Switches() const
{
    return m_switches;
}

LeafSpine
BuildLeafSpine(EthTestFabric& f, uint32_t leaves, uint32_t spines, uint32_t hostsPerLeaf)
{
    NS_ABORT_MSG_IF(leaves > 254 || hostsPerLeaf > 254 || hostsPerLeaf + spines > 254,
                    "BuildLeafSpine: too many leaves, hosts or spines for the address plan");
    LeafSpine ls;
    for (uint32_t l = 0; l < leaves; ++l)
    {
        ls.leaves.push_back(f.AddSwitch());
        ls.hosts.emplace_back();
        for (uint32_t h = 0; h < hostsPerLeaf; ++h)
        {
            Ptr<EthTestHost> host = f.AddHost(Ipv4Address((10u << 24) | (l << 8) | (h + 1)));
            const uint8_t port = f.Connect(ls.leaves[l], host);
            ls.leaves[l]->AddRoute(host->GetIp(), Ipv4Mask("255.255.255.255"), {port});
            ls.hosts[l].push_back(host);
        }
    }
    for (uint32_t s = 0; s < spines; ++s)
    {
        ls.spines.push_back(f.AddSwitch());
    }
    std::vector<std::vector<uint8_t>> up(leaves);
    for (uint32_t s = 0; s < spines; ++s)
    {
        for (uint32_t l = 0; l < leaves; ++l)
        {
            up[l].push_back(f.Connect(ls.leaves[l], ls.spines[s]));
            ls.spines[s]->AddRoute(Ipv4Address((10u << 24) | (l << 8)),
                                   Ipv4Mask("255.255.255.0"),
                                   {f.GetLastPeerPort()});
        }
    }
    for (uint32_t l = 0; l < leaves; ++l)
    {
        ls.leaves[l]->AddRoute(Ipv4Address("10.0.0.0"), Ipv4Mask("255.255.0.0"), up[l]);
    }
    return ls;
}

std::vector<double>
MaxLoadCdf(uint32_t n, uint32_t k)
{
    // The number of ways to put n labelled balls into k labelled bins with at most t in
    // each is n! [x^n] (sum_{j<=t} x^j / j!)^k; each of the k^n ways is equally likely.
    std::vector<double> cdf(n + 1, 0.0);
    for (uint32_t t = 0; t <= n; ++t)
    {
        std::vector<double> term(n + 1, 0.0); // sum_{j<=t} x^j / j!
        double f = 1.0;
        for (uint32_t j = 0; j <= std::min(t, n); ++j)
        {
            term[j] = 1.0 / f;
            f *= j + 1;
        }
        std::vector<double> poly(n + 1, 0.0);
        poly[0] = 1.0;
        for (uint32_t b = 0; b < k; ++b)
        {
            std::vector<double> next(n + 1, 0.0);
            for (uint32_t i = 0; i <= n; ++i)
            {
                if (poly[i] == 0.0)
                {
                    continue;
                }
                for (uint32_t j = 0; i + j <= n; ++j)
                {
                    next[i + j] += poly[i] * term[j];
                }
            }
            poly = std::move(next);
        }
        // n! / k^n, in logs to stay in range.
        const double logScale = std::lgamma(n + 1.0) - n * std::log(double(k));
        cdf[t] = poly[n] * std::exp(logScale);
    }
    return cdf;
}

} // namespace ethtest
} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-flow-transport.h"

#include "ns3/abort.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveFlowTransport");

NS_OBJECT_ENSURE_REGISTERED(CollectiveFlowTransport);

TypeId
CollectiveFlowTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveFlowTransport")
            .SetParent<CollectiveTransport>()
            .SetGroupName("Infiniband")
            .AddConstructor<CollectiveFlowTransport>()
            .AddAttribute(
                "Mtu",
                "Payload bytes per packet (the path MTU: 4096 on InfiniBand, the "
                "RoCE MTU on Ethernet).",
                UintegerValue(4096),
                MakeUintegerAccessor(&CollectiveFlowTransport::m_mtu),
                MakeIbUintegerChecker<uint32_t>("CollectiveFlowTransport", "Mtu", 64, 1u << 20))
            .AddAttribute("PacketOverhead",
                          "Wire bytes a packet adds to its payload: 26 on InfiniBand (LRH 8, "
                          "BTH 12, ICRC 4, VCRC 2).",
                          UintegerValue(26),
                          MakeUintegerAccessor(&CollectiveFlowTransport::m_overhead),
                          MakeIbUintegerChecker<uint32_t>("CollectiveFlowTransport",
                                                          "PacketOverhead",
                                                          0,
                                                          4096))
            .AddAttribute("QueuePairsPerPeer",
                          "Connections between two ranks that talk: stream k (the tag's low "
                          "4 bits) goes over connection k mod this.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&CollectiveFlowTransport::m_lanes),
                          MakeIbUintegerChecker<uint32_t>("CollectiveFlowTransport",
                                                          "QueuePairsPerPeer",
                                                          1,
                                                          16));
    return tid;
}

CollectiveFlowTransport::CollectiveFlowTransport()
    : m_mtu(4096),
      m_overhead(26),
      m_lanes(1)
{
}

CollectiveFlowTransport::~CollectiveFlowTransport() = default;

void
CollectiveFlowTransport::DoDispose()
{
    m_conns.clear();
    m_network = nullptr;
    m_route = RouteCallback();
    CollectiveTransport::DoDispose();
}

void
CollectiveFlowTransport::Setup(uint32_t ranks, Ptr<FlowNetwork> network, RouteCallback route)
{
    NS_ABORT_MSG_IF(ranks == 0 || ranks >= (1u << 28),
                    "CollectiveFlowTransport: " << ranks << " ranks; give 1 to 2^28 - 1");
    NS_ABORT_MSG_UNLESS(network && !route.IsNull(),
                        "CollectiveFlowTransport: give a flow network and routes");
    m_ranks = ranks;
    m_network = network;
    m_route = route;
}

uint32_t
CollectiveFlowTransport::GetNRanks() const
{
    return m_ranks;
}

bool
CollectiveFlowTransport::IsDataMode() const
{
    return false;
}

Ptr<FlowNetwork>
CollectiveFlowTransport::GetNetwork() const
{
    return m_network;
}

void
CollectiveFlowTransport::Send(uint32_t src,
                              uint32_t dst,
                              uint32_t tag,
                              uint64_t bytes,
                              const uint8_t* data,
                              Callback<void> sent)
{
    NS_LOG_FUNCTION(this << src << dst << tag << bytes);
    NS_ABORT_MSG_IF(src == dst || src >= m_ranks || dst >= m_ranks,
                    "CollectiveFlowTransport: bad ranks " << src << " -> " << dst);
    const uint32_t lane = StreamOf(tag) % m_lanes;
    const uint64_t key = (uint64_t(src) << 36) | (uint64_t(dst) << 4) | lane;
    auto it = m_conns.find(key);
    if (it == m_conns.end())
    {
        Connection c;
        c.src = src;
        c.dst = dst;
        c.route = m_route(src, dst, lane);
        it = m_conns.emplace(key, std::move(c)).first;
        // (map nodes do not move: the callback can hold the connection's address)
        it->second.drained = MakeCallback(&CollectiveFlowTransport::Drained, this, &it->second);
    }
    Connection& c = it->second;
    CountSent(bytes);
    c.queue.push_back({tag, bytes, sent});
    if (!c.busy)
    {
        StartNext(&c);
    }
}

void
CollectiveFlowTransport::StartNext(Connection* c)
{
    c->busy = true;
    const Message& m = c->queue.front();
    const uint64_t packets = m.bytes == 0 ? 1 : (m.bytes + m_mtu - 1) / m_mtu;
    const double wire = double(m.bytes) + double(packets) * m_overhead;
    m_network->StartFlow(c->route.links, wire, c->drained);
}

void
CollectiveFlowTransport::Drained(Connection* c)
{
    Message m = c->queue.front();
    c->queue.pop_front();
    c->busy = false;
    const uint32_t src = c->src;
    const uint32_t dst = c->dst;
    Simulator::Schedule(c->route.latency,
                        [this, src, dst, m]() { Deliver(src, dst, m.tag, m.bytes, nullptr); });
    if (!c->queue.empty())
    {
        StartNext(c);
    }
    if (!m.sent.IsNull())
    {
        m.sent();
    }
}

} // namespace ns3

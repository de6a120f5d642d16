/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-flow-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/ib-deadlock-checker.h"
#include "ns3/ib-lid-assigner.h"
#include "ns3/ib-link-rate.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbFlowFabricHelper");

namespace
{
/**
 * @param type a TypeId name
 * @param attribute one of its Time attributes
 * @return the attribute's default (as Config::SetDefault left it)
 */
Time
DefaultTime(const std::string& type, const std::string& attribute)
{
    TypeId::AttributeInformation info;
    NS_ABORT_MSG_UNLESS(TypeId::LookupByName(type).LookupAttributeByName(attribute, &info),
                        "IbFlowFabricHelper: " << type << " has no attribute " << attribute);
    TimeValue v;
    v.DeserializeFromString(info.initialValue->SerializeToString(info.checker), info.checker);
    return v.Get();
}
} // namespace

Ptr<FlowNetwork>
IbFlowFabric::GetNetwork() const
{
    return m_s->network;
}

uint32_t
IbFlowFabric::GetNHosts() const
{
    return m_s->hosts.size();
}

const IbTopology&
IbFlowFabric::GetTopology() const
{
    return m_s->topology;
}

CollectiveFlowTransport::Route
IbFlowFabric::GetRoute(uint32_t src, uint32_t dst) const
{
    const State& st = *m_s;
    NS_ABORT_MSG_UNLESS(src < st.hosts.size() && dst < st.hosts.size() && src != dst,
                        "IbFlowFabric::GetRoute: hosts " << src << " and " << dst << " (there are "
                                                         << st.hosts.size() << ")");
    const uint32_t from = st.hosts[src];
    const uint32_t to = st.hosts[dst];
    auto firstPort = [&st](uint32_t node) {
        const auto& ports = st.topology.GetNode(node).ports;
        for (uint32_t p = 1; p < ports.size(); ++p)
        {
            if (ports[p].peerNode >= 0)
            {
                return p;
            }
        }
        return 0u;
    };
    const uint32_t dstPort = firstPort(to);
    const uint16_t dlid = st.problem.baseLid[to][dstPort];
    CollectiveFlowTransport::Route r;
    uint32_t node = from;
    uint32_t port = firstPort(from);
    uint32_t switches = 0;
    while (true)
    {
        NS_ABORT_MSG_IF(port == 0 || st.link[node][port] < 0,
                        "IbFlowFabric: no way on from '" << st.topology.GetNode(node).name
                                                         << "' towards LID " << dlid);
        r.links.push_back(st.link[node][port]);
        const IbTopology::Port& out = st.topology.GetNode(node).ports[port];
        node = out.peerNode;
        if (node == to)
        {
            break;
        }
        NS_ABORT_MSG_UNLESS(st.topology.GetNode(node).type == IbTopology::SWITCH &&
                                dlid < st.tables.lft[node].size() && ++switches < 64,
                            "IbFlowFabric: the route from host "
                                << src << " to host " << dst << " does not reach it (at '"
                                << st.topology.GetNode(node).name << "')");
        port = st.tables.lft[node][dlid];
        NS_ABORT_MSG_IF(port == IbRoutingTables::NO_ROUTE,
                        "IbFlowFabric: switch '" << st.topology.GetNode(node).name
                                                 << "' has no route to LID " << dlid << " (host "
                                                 << dst << ")");
    }
    r.latency = st.hostLatency + st.cableDelay * static_cast<int64_t>(r.links.size()) +
                st.switchLatency * static_cast<int64_t>(switches);
    return r;
}

IbFlowFabricHelper::IbFlowFabricHelper()
    : m_engine("minhop")
{
}

void
IbFlowFabricHelper::SetRoutingEngine(const std::string& name)
{
    m_engine = name;
}

IbFlowFabric
IbFlowFabricHelper::Build(const IbTopology& topology) const
{
    std::string error;
    NS_ABORT_MSG_UNLESS(topology.Validate(&error), "IbFlowFabricHelper::Build: " << error);
    NS_ABORT_MSG_IF(topology.HasSeparateSubnets(),
                    "IbFlowFabricHelper::Build: the topology is several subnets (a rail-only "
                    "fabric), which the flow-level model does not route yet; run it at "
                    "packet level");
    IbFlowFabric fabric;
    fabric.m_s = std::make_shared<IbFlowFabric::State>();
    IbFlowFabric::State& f = *fabric.m_s;
    f.topology = topology;
    f.problem = IbLidAssigner::Assign(f.topology, 0, 8);
    Ptr<IbRoutingEngine> engine =
        IbSubnetManager::CreateRoutingEngine(m_engine, "IbFlowFabricHelper::SetRoutingEngine");
    NS_ABORT_MSG_UNLESS(engine->Route(f.problem, f.tables, &error) &&
                            IbDeadlockChecker::CheckReachability(f.problem, f.tables, &error),
                        "IbFlowFabricHelper: routing engine '"
                            << m_engine << "' cannot route this fabric: " << error);
    f.network = CreateObject<FlowNetwork>();
    const uint32_t n = f.topology.GetNNodes();
    f.link.assign(n, {});
    for (uint32_t i = 0; i < n; ++i)
    {
        const IbTopology::Node& node = f.topology.GetNode(i);
        f.link[i].assign(node.ports.size(), -1);
        for (uint32_t p = 1; p < node.ports.size(); ++p)
        {
            const IbTopology::Port& port = node.ports[p];
            if (port.peerNode >= 0)
            {
                const double rate =
                    IbLinkRate::GetDataRate(port.speed, port.width).GetBitRate() / 8.0;
                f.link[i][p] = static_cast<int32_t>(f.network->AddLink(rate));
            }
        }
        if (node.type == IbTopology::CA)
        {
            f.hosts.push_back(i);
        }
    }
    f.cableDelay = DefaultTime("ns3::IbChannel", "Delay");
    f.switchLatency = DefaultTime("ns3::IbSwitch", "ForwardingLatency");
    f.hostLatency = DefaultTime("ns3::IbHca", "DoorbellLatency") +
                    DefaultTime("ns3::IbHca", "PcieWriteLatency");
    NS_LOG_INFO("flow fabric: " << f.hosts.size() << " hosts, " << f.network->GetNLinks()
                                << " links, engine " << m_engine);
    return fabric;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-subnet-manager.h"

#include "ib-ar-groups.h"
#include "ib-deadlock-checker.h"
#include "ib-lft-dump.h"
#include "ib-lid-assigner.h"
#include "ib-multicast-group.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-range-checker.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/node-list.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <map>
#include <memory>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbSubnetManager");

NS_OBJECT_ENSURE_REGISTERED(IbSubnetManager);

TypeId
IbSubnetManager::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbSubnetManager")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbSubnetManager>()
            .AddAttribute("RoutingEngine",
                          "Routing engine, as OpenSM names them: minhop, updn, ftree, "
                          "dfsssp or file (set the file with SetRoutingEngine and an "
                          "ns3::IbFileRouting whose FileName is set).",
                          StringValue("minhop"),
                          MakeStringAccessor(&IbSubnetManager::m_engineName),
                          MakeStringChecker())
            .AddAttribute("Lmc",
                          "LID mask control: each host port gets 2^Lmc LIDs (0..7).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbSubnetManager::m_lmc),
                          MakeIbUintegerChecker<uint8_t>("IbSubnetManager", "Lmc", 0, 7))
            .AddAttribute("CheckDeadlock",
                          "Check the routes for credit-loop deadlocks after routing and "
                          "abort, naming the links of a cycle, if there is one.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&IbSubnetManager::m_checkDeadlock),
                          MakeBooleanChecker())
            // IBA congestion control (annex A10), as OpenSM's congestion_control and cc_*
            // options program it. Defaults: the Mellanox Congestion Control Manager's
            // (MLNX_OFED user manual) and the LLNL study's table; doc/validation-sources.md.
            .AddAttribute("AdaptiveRouting",
                          "Program adaptive-routing groups (equal-cost output ports per "
                          "destination, see IbArGroups) into every switch, and tell the "
                          "channel adapters that requests may arrive out of order (off by "
                          "default).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&IbSubnetManager::m_ar),
                          MakeBooleanChecker())
            .AddAttribute("ArSlMask",
                          "SLs whose RC requests are adaptively routed (bit s = SL s).",
                          UintegerValue(0xFFFF),
                          MakeUintegerAccessor(&IbSubnetManager::m_arSlMask),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("CongestionControl",
                          "Program IBA congestion control into every switch and channel "
                          "adapter port (off by default, as in OpenSM).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&IbSubnetManager::m_cc),
                          MakeBooleanChecker())
            .AddAttribute("CcThreshold",
                          "Switch congestion setting Threshold: 0 (no marking) to 15 (the "
                          "most sensitive); see IbSwitchCongestionSetting for the scale.",
                          UintegerValue(15),
                          MakeUintegerAccessor(&IbSubnetManager::m_ccThreshold),
                          MakeIbUintegerChecker<uint8_t>("IbSubnetManager", "CcThreshold", 0, 15))
            .AddAttribute("CcMarkingRate",
                          "Switch congestion setting Marking_Rate: eligible packets left "
                          "unmarked between two FECN marks.",
                          UintegerValue(10),
                          MakeUintegerAccessor(&IbSubnetManager::m_ccMarkingRate),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute(
                "CcPacketSize",
                "Switch congestion setting Packet_Size, bytes (a multiple of 64): "
                "shorter packets are never marked.",
                UintegerValue(512),
                MakeUintegerAccessor(&IbSubnetManager::m_ccPacketSize),
                MakeIbUintegerChecker<uint16_t>("IbSubnetManager", "CcPacketSize", 0, 255 * 64))
            .AddAttribute("CcVictimMask",
                          "Switch congestion setting Victim_Mask on all ports: mark packets "
                          "also at outputs that wait for credits (victims of congestion "
                          "further on).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&IbSubnetManager::m_ccVictimMask),
                          MakeBooleanChecker())
            .AddAttribute("CcPortControl",
                          "CA congestion setting Port_Control: 0 keeps a CCTI per queue pair, "
                          "1 one per SL of each port (RC queue pairs; UD ones keep their own).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbSubnetManager::m_ccPortControl),
                          MakeIbUintegerChecker<uint8_t>("IbSubnetManager", "CcPortControl", 0, 1))
            .AddAttribute("CcCctiTimer",
                          "CA congestion setting CCTI_Timer, in IBA units of 1.024 us: the "
                          "CCTI falls by one each period (0: never).",
                          UintegerValue(50),
                          MakeUintegerAccessor(&IbSubnetManager::m_ccCctiTimer),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("CcCctiIncrease",
                          "CA congestion setting CCTI_Increase: added to the CCTI per BECN.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&IbSubnetManager::m_ccCctiIncrease),
                          MakeUintegerChecker<uint8_t>())
            .AddAttribute("CcCctiMin",
                          "CA congestion setting CCTI_Min: the lowest CCTI (and the start).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbSubnetManager::m_ccCctiMin),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("CcTriggerThreshold",
                          "CA congestion setting Trigger_Threshold: a CCTI at or above it is "
                          "a congestion event (logged).",
                          UintegerValue(2),
                          MakeUintegerAccessor(&IbSubnetManager::m_ccTriggerThreshold),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute("CcCct",
                          "Congestion Control Table, OpenSM cc_cct syntax: comma-separated "
                          "shift:multiplier entries (entry (s, m) sends at line rate / (1 + "
                          "m / 2^s)); \"default\" is the fine 128-entry table of the LLNL "
                          "study (steps of 1/8 packet time), \"mellanox\" its coarse one.",
                          StringValue("default"),
                          MakeStringAccessor(&IbSubnetManager::m_ccCct),
                          MakeStringChecker())
            // Link failures: how the SM learns of a port state change and how long its
            // heavy sweep takes (doc/validation-sources.md section 5c).
            .AddAttribute("RerouteOnLinkChange",
                          "Sweep and route again when a port goes down or comes up (as "
                          "OpenSM does); false keeps the tables programmed at Configure.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&IbSubnetManager::m_reroute),
                          MakeBooleanChecker())
            .AddAttribute("LinkTraps",
                          "Switches report a port state change with a trap (IBA trap 128) "
                          "and the SM sweeps after TrapDelay; false: the SM sees it at its "
                          "next periodic sweep (SweepInterval).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&IbSubnetManager::m_traps),
                          MakeBooleanChecker())
            .AddAttribute("TrapDelay",
                          "From a port state change to the start of the SM's heavy sweep "
                          "when traps are on (the trap's way to the SM and its handling).",
                          TimeValue(MicroSeconds(100)),
                          MakeTimeAccessor(&IbSubnetManager::m_trapDelay),
                          MakeIbTimeChecker("IbSubnetManager", "TrapDelay", Time(0)))
            .AddAttribute("SweepInterval",
                          "Period of the SM's light sweeps, from time 0 (OpenSM's "
                          "sweep_interval, 10 s by default); used when LinkTraps is false.",
                          TimeValue(Seconds(10)),
                          MakeTimeAccessor(&IbSubnetManager::m_sweepInterval),
                          MakeIbTimeChecker("IbSubnetManager", "SweepInterval", NanoSeconds(1)))
            .AddAttribute("SmpTime",
                          "Round trip of one subnet management packet (a Get during "
                          "discovery, a Set of one 64-entry LFT block while programming).",
                          TimeValue(MicroSeconds(10)),
                          MakeTimeAccessor(&IbSubnetManager::m_smpTime),
                          MakeIbTimeChecker("IbSubnetManager", "SmpTime", Time(0)))
            .AddAttribute(
                "MaxWireSmps",
                "SMPs the SM keeps outstanding at once (OpenSM's max_wire_smps, "
                "4 by default).",
                UintegerValue(4),
                MakeUintegerAccessor(&IbSubnetManager::m_maxWireSmps),
                MakeIbUintegerChecker<uint32_t>("IbSubnetManager", "MaxWireSmps", 1, 65535))
            .AddAttribute("RouteComputeTime",
                          "Time the SM's host takes to compute the new routes during a "
                          "heavy sweep (not modelled unless set: it depends on the host).",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&IbSubnetManager::m_routeComputeTime),
                          MakeIbTimeChecker("IbSubnetManager", "RouteComputeTime", Time(0)))
            .AddAttribute("RerouteFallbackEngine",
                          "Engine used when the configured one refuses the fabric with a "
                          "link missing (ftree refuses a fat tree that lost a cable): updn "
                          "is deadlock-free on any topology. OpenSM falls back to minhop.",
                          StringValue("updn"),
                          MakeStringAccessor(&IbSubnetManager::m_fallbackEngineName),
                          MakeStringChecker())
            .AddTraceSource("Rerouted",
                            "A heavy sweep after a port state change programmed its last "
                            "table; the argument is the number of LFT blocks it wrote.",
                            MakeTraceSourceAccessor(&IbSubnetManager::m_reroutedTrace),
                            "ns3::TracedValueCallback::Uint32");
    return tid;
}

IbSubnetManager::IbSubnetManager()
    : m_lmc(0),
      m_checkDeadlock(false),
      m_configured(false)
{
    NS_LOG_FUNCTION(this);
}

IbSubnetManager::~IbSubnetManager()
{
    NS_LOG_FUNCTION(this);
}

void
IbSubnetManager::DoDispose()
{
    m_sweepEvent.Cancel();
    for (EventId& e : m_programEvents)
    {
        e.Cancel();
    }
    m_programEvents.clear();
    m_engine = nullptr;
    m_mcastGroups.clear();
    m_nodes.clear();
    m_portDevices.clear();
    Object::DoDispose();
}

void
IbSubnetManager::SetRoutingEngine(Ptr<IbRoutingEngine> engine)
{
    m_engine = engine;
}

Ptr<IbRoutingEngine>
IbSubnetManager::CreateEngine() const
{
    if (m_engine)
    {
        return m_engine;
    }
    return CreateRoutingEngine(m_engineName, "IbSubnetManager attribute RoutingEngine");
}

namespace
{

/// @return the RoutingEngine names and their engines' TypeId names
const std::map<std::string, std::string>&
RoutingEngines()
{
    static const std::map<std::string, std::string> engines = {
        {"minhop", "ns3::IbMinHopRouting"},
        {"updn", "ns3::IbUpDownRouting"},
        {"ftree", "ns3::IbFatTreeRouting"},
        {"dfsssp", "ns3::IbDfssspRouting"},
        {"file", "ns3::IbFileRouting"},
    };
    return engines;
}

} // namespace

bool
IbSubnetManager::IsRoutingEngine(const std::string& name)
{
    return RoutingEngines().count(name) > 0;
}

Ptr<IbRoutingEngine>
IbSubnetManager::CreateRoutingEngine(const std::string& name, const std::string& what)
{
    const std::map<std::string, std::string>& engines = RoutingEngines();
    auto it = engines.find(name);
    TypeId tid;
    NS_ABORT_MSG_UNLESS(it != engines.end() && TypeId::LookupByNameFailSafe(it->second, &tid),
                        what << "='" << name
                             << "' is not a routing engine of this module; use minhop, updn, "
                                "ftree, dfsssp or file.");
    ObjectFactory f;
    f.SetTypeId(tid);
    return f.Create<IbRoutingEngine>();
}

void
IbSubnetManager::Discover(NodeContainer nodes)
{
    m_topology = IbTopology();
    m_nodes.clear();
    m_indexOfNode.clear();
    m_portDevices.clear();
    std::map<uint32_t, uint32_t> indexOfNode; // ns-3 node id -> topology index
    auto portsOf = [](Ptr<Node> node) {
        std::vector<Ptr<IbNetDevice>> ports;
        if (Ptr<IbSwitch> sw = node->GetObject<IbSwitch>())
        {
            for (uint8_t p = 1; p <= sw->GetNPorts(); ++p)
            {
                ports.push_back(sw->GetPort(p));
            }
            return ports;
        }
        for (uint32_t i = 0; i < node->GetNDevices(); ++i)
        {
            if (Ptr<IbNetDevice> d = node->GetDevice(i)->GetObject<IbNetDevice>())
            {
                ports.push_back(d);
            }
        }
        return ports;
    };
    auto add = [&](Ptr<Node> node) {
        if (indexOfNode.count(node->GetId()))
        {
            return;
        }
        const std::vector<Ptr<IbNetDevice>> ports = portsOf(node);
        if (ports.empty())
        {
            return;
        }
        std::string name = Names::FindName(node);
        const bool isSwitch = node->GetObject<IbSwitch>() != nullptr;
        if (name.empty())
        {
            name = (isSwitch ? "switch-" : "host-") + std::to_string(node->GetId());
        }
        const uint32_t idx = isSwitch ? m_topology.AddSwitch(ports.size(), name)
                                      : m_topology.AddCa(ports.size(), name);
        indexOfNode[node->GetId()] = idx;
        m_nodes.push_back(node);
        m_indexOfNode[node->GetId()] = idx;
        std::vector<Ptr<IbNetDevice>> byPort(1);
        byPort.insert(byPort.end(), ports.begin(), ports.end());
        m_portDevices.push_back(byPort);
    };
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        add(nodes.Get(i));
    }
    // Follow cables to nodes not given explicitly, so the whole subnet is routed.
    for (uint32_t idx = 0; idx < m_nodes.size(); ++idx)
    {
        for (uint32_t p = 1; p < m_portDevices[idx].size(); ++p)
        {
            Ptr<IbChannel> ch = DynamicCast<IbChannel>(m_portDevices[idx][p]->GetChannel());
            if (ch && ch->GetPeer(m_portDevices[idx][p]))
            {
                add(ch->GetPeer(m_portDevices[idx][p])->GetNode());
            }
        }
    }
    // Cables.
    for (uint32_t idx = 0; idx < m_nodes.size(); ++idx)
    {
        for (uint32_t p = 1; p < m_portDevices[idx].size(); ++p)
        {
            Ptr<IbNetDevice> dev = m_portDevices[idx][p];
            Ptr<IbChannel> ch = DynamicCast<IbChannel>(dev->GetChannel());
            Ptr<IbNetDevice> peer = ch ? ch->GetPeer(dev) : nullptr;
            if (!peer)
            {
                continue;
            }
            // A switch node whose ports were never added (IbSwitch::AddPort) has no index.
            const auto found = indexOfNode.find(peer->GetNode()->GetId());
            const uint32_t pidx = found != indexOfNode.end() ? found->second : 0;
            uint8_t pport = 0;
            for (uint32_t q = 1; found != indexOfNode.end() && q < m_portDevices[pidx].size(); ++q)
            {
                if (m_portDevices[pidx][q] == peer)
                {
                    pport = static_cast<uint8_t>(q);
                }
            }
            NS_ABORT_MSG_IF(pport == 0,
                            "IbSubnetManager: the port on node "
                                << peer->GetNode()->GetId()
                                << " is cabled but not a port of its switch; add it with "
                                   "IbSwitch::AddPort");
            if (std::make_pair(idx, p) < std::make_pair(pidx, uint32_t(pport)))
            {
                std::string error;
                NS_ABORT_MSG_UNLESS(m_topology.Connect(idx,
                                                       static_cast<uint8_t>(p),
                                                       pidx,
                                                       pport,
                                                       dev->GetLinkSpeedValue(),
                                                       dev->GetLinkWidthValue(),
                                                       &error),
                                    "IbSubnetManager discovery: " << error);
            }
        }
    }
}

void
IbSubnetManager::Configure()
{
    Configure(NodeContainer::GetGlobal());
}

void
IbSubnetManager::Configure(NodeContainer nodes)
{
    NS_LOG_FUNCTION(this);
    Discover(nodes);
    BringUp();
}

void
IbSubnetManager::Configure(const IbTopology& topology, const std::vector<Ptr<Node>>& nodeOf)
{
    NS_LOG_FUNCTION(this);
    NodeContainer nodes;
    for (const auto& n : nodeOf)
    {
        nodes.Add(n);
    }
    Discover(nodes);
    NS_ABORT_MSG_UNLESS(m_topology.GetNNodes() == topology.GetNNodes(),
                        "IbSubnetManager::Configure: the nodes given are not those of the "
                        "topology (found "
                            << m_topology.GetNNodes() << " fabric nodes, the topology has "
                            << topology.GetNNodes() << ")");
    for (uint32_t i = 0; i < topology.GetNNodes(); ++i)
    {
        IbTopology::Node& mine = m_topology.GetNodeMutable(i);
        const IbTopology::Node& theirs = topology.GetNode(i);
        NS_ABORT_MSG_UNLESS(mine.type == theirs.type && mine.ports.size() == theirs.ports.size(),
                            "IbSubnetManager::Configure: node " << i << " ('" << theirs.name
                                                                << "') does not match");
        mine.name = theirs.name;
        mine.guid = theirs.guid;
        mine.level = theirs.level;
    }
    m_topology.SetSeparateSubnets(topology.HasSeparateSubnets());
    BringUp();
}

void
IbSubnetManager::BringUp()
{
    std::string error;
    NS_ABORT_MSG_UNLESS(m_topology.Validate(&error),
                        "IbSubnetManager: the fabric cannot be brought up: " << error);
    uint8_t numVls = IbNetDevice::MAX_DATA_VLS;
    for (const auto& ports : m_portDevices)
    {
        for (uint32_t p = 1; p < ports.size(); ++p)
        {
            numVls = std::min(numVls, ports[p]->GetNumDataVls());
        }
    }
    m_problem = IbLidAssigner::Assign(m_topology, m_lmc, numVls);
    // The subnets as cabled (a failure later does not make a rail of its own).
    m_subnetOf = m_topology.HasSeparateSubnets() ? m_topology.GetComponents()
                                                 : std::vector<uint32_t>(m_nodes.size(), 0);
    Ptr<IbRoutingEngine> engine = CreateEngine();
    m_tables = IbRoutingTables();
    std::string unreachable;
    NS_ABORT_MSG_UNLESS(RouteSubnets(false, m_tables, &error, &unreachable),
                        "IbSubnetManager: routing engine '"
                            << engine->GetName() << "' cannot route this fabric: " << error);
    NS_ABORT_MSG_UNLESS(unreachable.empty(),
                        "IbSubnetManager: routing engine '"
                            << engine->GetName()
                            << "' left a destination unreachable: " << unreachable);
    NS_ABORT_MSG_IF(m_tables.vlsUsed > numVls,
                    "IbSubnetManager: routing engine '"
                        << engine->GetName() << "' needs " << unsigned(m_tables.vlsUsed)
                        << " VLs to be deadlock-free but the ports run " << unsigned(numVls)
                        << "; raise the IbNetDevice attribute NumDataVls.");
    if (m_checkDeadlock)
    {
        const std::vector<std::string> cycles = CheckDeadlocks();
        NS_ABORT_MSG_UNLESS(cycles.empty(),
                            "IbSubnetManager: routing engine '"
                                << engine->GetName()
                                << "' produced a credit loop (deadlock): " << cycles.front()
                                << ". Use a deadlock-free engine (updn, ftree, dfsssp)"
                                << (m_ar ? ", or turn AdaptiveRouting off or narrow ArSlMask "
                                           "(the check follows every port of the AR groups)"
                                         : "")
                                << ".");
    }
    Program();
    m_cabled = m_topology;
    if (!m_configured)
    {
        WatchPorts();
    }
    m_configured = true;
    NS_LOG_INFO("subnet up: " << m_topology.GetNNodes() << " nodes, " << m_problem.MaxLid()
                              << " LIDs, engine " << engine->GetName());
}

uint32_t
IbSubnetManager::GetSubnet(Ptr<Node> node) const
{
    const auto it = m_indexOfNode.find(node->GetId());
    if (it == m_indexOfNode.end())
    {
        return UINT32_MAX;
    }
    return it->second < m_subnetOf.size() ? m_subnetOf[it->second] : 0;
}

bool
IbSubnetManager::RouteSubnets(bool fallback,
                              IbRoutingTables& tables,
                              std::string* error,
                              std::string* unreachable) const
{
    auto make = [this, fallback]() {
        return fallback ? CreateRoutingEngine(m_fallbackEngineName,
                                              "IbSubnetManager attribute RerouteFallbackEngine")
                        : CreateEngine();
    };
    // The subnets as cabled (BringUp): after a failure a cut-off host stays in its own
    // rail's sub-fabric, unreachable there as in a single subnet, not a subnet of its own.
    const std::vector<uint32_t>& comp = m_subnetOf;
    const uint32_t count = comp.empty() ? 1 : *std::max_element(comp.begin(), comp.end()) + 1;
    unreachable->clear();
    if (count <= 1)
    {
        if (!make()->Route(m_problem, tables, error))
        {
            return false;
        }
        IbDeadlockChecker::CheckReachability(m_problem, tables, unreachable);
        return true;
    }
    // One subnet per component, as if each had a subnet manager of its own (with LIDs
    // that do not overlap): a sub-fabric of the component's nodes, its LIDs, routed alone.
    const uint32_t n = m_topology.GetNNodes();
    tables = IbRoutingTables();
    tables.lft.assign(n, {});
    for (uint32_t c = 0; c < count; ++c)
    {
        std::vector<uint32_t> members;
        std::vector<int32_t> local(n, -1);
        for (uint32_t i = 0; i < n; ++i)
        {
            if (comp[i] == c)
            {
                local[i] = static_cast<int32_t>(members.size());
                members.push_back(i);
            }
        }
        IbTopology sub;
        for (uint32_t i : members)
        {
            const IbTopology::Node& node = m_topology.GetNode(i);
            const uint32_t ports = static_cast<uint32_t>(node.ports.size()) - 1;
            const uint32_t j = node.type == IbTopology::SWITCH
                                   ? sub.AddSwitch(ports, node.name, node.guid)
                                   : sub.AddCa(ports, node.name, node.guid);
            sub.GetNodeMutable(j).level = node.level;
        }
        for (uint32_t i : members)
        {
            const IbTopology::Node& node = m_topology.GetNode(i);
            for (uint32_t p = 1; p < node.ports.size(); ++p)
            {
                const IbTopology::Port& port = node.ports[p];
                const auto peer = static_cast<uint32_t>(port.peerNode);
                if (port.peerNode >= 0 && (peer > i || (peer == i && port.peerPort > p)))
                {
                    sub.Connect(local[i],
                                static_cast<uint8_t>(p),
                                local[peer],
                                port.peerPort,
                                port.speed,
                                port.width);
                }
            }
        }
        IbRoutingProblem sp;
        sp.topology = &sub;
        sp.lmc = m_problem.lmc;
        sp.numDataVls = m_problem.numDataVls;
        sp.baseLid.resize(members.size());
        for (uint32_t j = 0; j < members.size(); ++j)
        {
            sp.baseLid[j] = m_problem.baseLid[members[j]];
        }
        sp.lidOwner.assign(m_problem.lidOwner.size(), {-1, 0});
        for (uint32_t lid = 0; lid < m_problem.lidOwner.size(); ++lid)
        {
            const auto& [node, port] = m_problem.lidOwner[lid];
            if (node >= 0 && comp[node] == c)
            {
                sp.lidOwner[lid] = {local[node], port};
            }
        }
        IbRoutingTables st;
        std::string why;
        if (!make()->Route(sp, st, &why))
        {
            *error = "the subnet of '" + m_topology.GetNode(members.front()).name + "': " + why;
            return false;
        }
        if (unreachable->empty())
        {
            IbDeadlockChecker::CheckReachability(sp, st, unreachable);
        }
        for (uint32_t j = 0; j < members.size(); ++j)
        {
            if (j < st.lft.size())
            {
                tables.lft[members[j]] = std::move(st.lft[j]);
                if (m_topology.GetNode(members[j]).type == IbTopology::SWITCH)
                {
                    tables.lft[members[j]].resize(m_problem.lidOwner.size(),
                                                  IbRoutingTables::NO_ROUTE);
                }
            }
            if (j < st.sl.size() && !st.sl[j].empty())
            {
                tables.sl.resize(n);
                tables.sl[members[j]] = std::move(st.sl[j]);
            }
        }
        tables.vlsUsed = std::max(tables.vlsUsed, st.vlsUsed);
    }
    return true;
}

void
IbSubnetManager::Program()
{
    std::vector<IbArGroups> ar;
    if (m_ar)
    {
        ar = IbArGroups::Compute(m_problem, m_tables);
    }
    IbSwitchCongestionSetting sws;
    std::shared_ptr<const IbCaCongestionSetting> cas;
    if (m_cc)
    {
        NS_ABORT_MSG_IF(m_ccPacketSize % 64 != 0,
                        "IbSubnetManager: CcPacketSize " << m_ccPacketSize
                                                         << " bytes is not a multiple of 64; IBA "
                                                            "counts Packet_Size in 64-byte units");
        sws.threshold = m_ccThreshold;
        sws.markingRate = m_ccMarkingRate;
        sws.packetSize = m_ccPacketSize;
        sws.victimMask = m_ccVictimMask;
        auto ca = std::make_shared<IbCaCongestionSetting>();
        ca->perQp = m_ccPortControl == 0;
        ca->cctiTimer = NanoSeconds(1024) * static_cast<int64_t>(m_ccCctiTimer);
        ca->cctiIncrease = m_ccCctiIncrease;
        ca->cctiMin = m_ccCctiMin;
        ca->triggerThreshold = m_ccTriggerThreshold;
        ca->cct = IbCaCongestionSetting::ParseCct(m_ccCct, "IbSubnetManager CcCct");
        NS_ABORT_MSG_IF(m_ccCctiMin > ca->GetCctiLimit(),
                        "IbSubnetManager: CcCctiMin "
                            << m_ccCctiMin << " is beyond the table's last index "
                            << ca->GetCctiLimit() << "; lower it or give CcCct more entries");
        cas = ca;
    }
    for (uint32_t idx = 0; idx < m_nodes.size(); ++idx)
    {
        const IbTopology::Node& n = m_topology.GetNode(idx);
        if (n.type == IbTopology::CA)
        {
            for (uint32_t p = 1; p < m_portDevices[idx].size(); ++p)
            {
                m_portDevices[idx][p]->SetLid(m_problem.baseLid[idx][p]);
                m_portDevices[idx][p]->SetLmc(m_lmc);
                m_portDevices[idx][p]->SetCongestionSetting(cas);
                m_portDevices[idx][p]->SetAdaptiveRouting(m_ar);
            }
            continue;
        }
        Ptr<IbSwitch> sw = m_nodes[idx]->GetObject<IbSwitch>();
        sw->SetLid(m_problem.baseLid[idx][0]);
        sw->SetLft(m_tables.lft[idx]);
        if (m_cc)
        {
            sw->SetCongestionSetting(sws);
        }
        if (m_ar)
        {
            sw->SetAdaptiveRouting(std::move(ar[idx].groupOf),
                                   std::move(ar[idx].groups),
                                   m_arSlMask);
        }
        if (m_tables.vlsUsed > 1)
        {
            // Layered routes: the SL a source picks is the VL on every hop.
            std::array<uint8_t, 16> identity;
            for (uint8_t sl = 0; sl < 16; ++sl)
            {
                identity[sl] = sl < m_tables.vlsUsed ? sl : 0;
            }
            for (uint8_t in = 0; in <= sw->GetNPorts(); ++in)
            {
                for (uint8_t out = 1; out <= sw->GetNPorts(); ++out)
                {
                    sw->SetSl2Vl(in, out, identity);
                }
            }
        }
    }
}

void
IbSubnetManager::WatchPorts()
{
    m_seenFailed.assign(m_portDevices.size(), {});
    for (uint32_t idx = 0; idx < m_portDevices.size(); ++idx)
    {
        m_seenFailed[idx].assign(m_portDevices[idx].size(), false);
    }
    for (uint32_t idx = 0; idx < m_portDevices.size(); ++idx)
    {
        for (uint32_t p = 1; p < m_portDevices[idx].size(); ++p)
        {
            m_portDevices[idx][p]->AddLinkChangeCallback(
                Callback<void>([this, idx, p]() { PortStateChanged(idx, p); }));
        }
    }
}

void
IbSubnetManager::PortStateChanged(uint32_t idx, uint32_t port)
{
    const bool failed = m_portDevices[idx][port]->IsFailed();
    if (failed == m_seenFailed[idx][port])
    {
        return; // the first link up, which Configure took as given
    }
    m_seenFailed[idx][port] = failed;
    if (!m_reroute || !m_configured || m_sweepPending)
    {
        return; // a sweep is on its way: it sees this change too
    }
    Time delay = m_trapDelay;
    if (!m_traps)
    {
        // The next periodic sweep, counted from time 0.
        const int64_t period = m_sweepInterval.GetTimeStep();
        const int64_t now = Simulator::Now().GetTimeStep();
        delay = TimeStep((now / period + 1) * period - now);
    }
    NS_LOG_INFO("port state change; the SM sweeps in " << delay.As(Time::US));
    m_sweepPending = true;
    m_sweepEvent = Simulator::Schedule(delay, &IbSubnetManager::Sweep, this);
}

uint32_t
IbSubnetManager::DiscoverySmps() const
{
    // A heavy sweep asks every node for NodeInfo and NodeDescription (and a switch for
    // SwitchInfo), and every port for PortInfo.
    uint32_t smps = 0;
    for (const auto& n : m_cabled.GetNodes())
    {
        smps += (n.type == IbTopology::SWITCH ? 3 : 2) + static_cast<uint32_t>(n.ports.size()) - 1;
    }
    return smps;
}

Time
IbSubnetManager::SmpBatches(uint32_t smps) const
{
    const uint32_t batches = (smps + m_maxWireSmps - 1) / m_maxWireSmps;
    return m_smpTime * static_cast<int64_t>(batches);
}

void
IbSubnetManager::Sweep()
{
    m_sweepPending = false; // changes from now on need another sweep
    ++m_sweeps;
    const Time discovery = SmpBatches(DiscoverySmps());
    NS_LOG_INFO("heavy sweep " << m_sweeps << ": discovery takes " << discovery.As(Time::US)
                               << ", routing " << m_routeComputeTime.As(Time::US));
    Simulator::Schedule(discovery + m_routeComputeTime, &IbSubnetManager::Reroute, this);
}

void
IbSubnetManager::Reroute()
{
    // The fabric as the sweep found it: the cabling without the cables that are down.
    IbTopology live = m_cabled;
    for (uint32_t idx = 0; idx < m_portDevices.size(); ++idx)
    {
        for (uint32_t p = 1; p < m_portDevices[idx].size(); ++p)
        {
            IbTopology::Port& port = live.GetNodeMutable(idx).ports[p];
            if (port.peerNode >= 0 && m_portDevices[idx][p]->IsFailed())
            {
                live.GetNodeMutable(port.peerNode).ports[port.peerPort].peerNode = -1;
                port.peerNode = -1;
            }
        }
    }
    m_topology = live; // m_problem points at it
    IbRoutingTables tables;
    std::string error;
    std::string unreachable;
    Ptr<IbRoutingEngine> engine = CreateEngine();
    if (!RouteSubnets(false, tables, &error, &unreachable))
    {
        NS_LOG_WARN("sweep " << m_sweeps << ": engine " << engine->GetName()
                             << " refuses the fabric (" << error << "); falling back to "
                             << m_fallbackEngineName);
        engine = CreateRoutingEngine(m_fallbackEngineName,
                                     "IbSubnetManager attribute RerouteFallbackEngine");
        tables = IbRoutingTables();
        std::string again;
        NS_ABORT_MSG_UNLESS(RouteSubnets(true, tables, &again, &unreachable),
                            "IbSubnetManager: after a link change, routing engine '"
                                << m_engineName << "' refuses the fabric (" << error
                                << ") and the fallback '" << engine->GetName() << "' too (" << again
                                << "); choose another RerouteFallbackEngine");
    }
    if (!unreachable.empty())
    {
        NS_LOG_WARN("sweep " << m_sweeps << ": " << unreachable
                             << " (a port cut off by the failure stays unreachable)");
    }
    NS_ABORT_MSG_IF(tables.vlsUsed > m_problem.numDataVls,
                    "IbSubnetManager: after a link change, engine '"
                        << engine->GetName() << "' needs " << unsigned(tables.vlsUsed)
                        << " VLs but the ports run " << unsigned(m_problem.numDataVls));
    std::swap(m_tables, tables); // tables: what the switches hold now
    if (m_checkDeadlock)
    {
        const std::vector<std::string> cycles = CheckDeadlocks();
        NS_ABORT_MSG_UNLESS(cycles.empty(),
                            "IbSubnetManager: after a link change, engine '"
                                << engine->GetName()
                                << "' produced a credit loop (deadlock): " << cycles.front()
                                << ". Use a deadlock-free RoutingEngine or "
                                   "RerouteFallbackEngine (updn, ftree, dfsssp).");
    }
    // Program as OpenSM does: only the LFT blocks that changed, MaxWireSmps at a time, in
    // switch order; a switch's AR groups follow its last block.
    std::vector<IbArGroups> ar;
    if (m_ar)
    {
        ar = IbArGroups::Compute(m_problem, m_tables);
    }
    uint32_t written = 0;
    const Time start = Simulator::Now();
    for (EventId& e : m_programEvents)
    {
        e.Cancel(); // a sweep still programming is superseded: this one writes what differs
    }
    m_programEvents.clear();
    for (uint32_t idx = 0; idx < m_nodes.size(); ++idx)
    {
        if (m_topology.GetNode(idx).type != IbTopology::SWITCH)
        {
            continue;
        }
        Ptr<IbSwitch> sw = m_nodes[idx]->GetObject<IbSwitch>();
        const std::vector<uint8_t>& now = sw->GetLft();
        const std::vector<uint8_t>& next = m_tables.lft[idx];
        const auto shared = std::make_shared<const std::vector<uint8_t>>(next);
        const size_t size = std::max(now.size(), next.size());
        Time last = start;
        for (size_t block = 0; block * 64 < size; ++block)
        {
            bool differs = false;
            for (size_t l = block * 64; l < std::min(size, block * 64 + 64) && !differs; ++l)
            {
                const uint8_t a = l < now.size() ? now[l] : IbSwitch::NO_ROUTE;
                const uint8_t b = l < next.size() ? next[l] : IbSwitch::NO_ROUTE;
                differs = a != b;
            }
            if (!differs)
            {
                continue;
            }
            ++written;
            last = start + SmpBatches(written);
            m_programEvents.push_back(Simulator::Schedule(last - start, [sw, shared, block]() {
                const std::vector<uint8_t>& lft = *shared;
                for (size_t l = block * 64; l < std::min(lft.size(), block * 64 + 64); ++l)
                {
                    sw->SetLftEntry(static_cast<uint16_t>(l), lft[l]);
                }
            }));
        }
        if (m_ar)
        {
            auto groupOf = std::make_shared<std::vector<uint16_t>>(std::move(ar[idx].groupOf));
            auto groups =
                std::make_shared<std::vector<std::vector<uint8_t>>>(std::move(ar[idx].groups));
            const uint16_t mask = m_arSlMask;
            m_programEvents.push_back(
                Simulator::Schedule(last - start, [sw, groupOf, groups, mask]() {
                    sw->SetAdaptiveRouting(std::move(*groupOf), std::move(*groups), mask);
                }));
        }
    }
    const Time done = start + SmpBatches(written);
    NS_LOG_INFO("sweep " << m_sweeps << " with engine " << engine->GetName() << ": " << written
                         << " LFT blocks to write, done at " << done.As(Time::US));
    m_programEvents.push_back(Simulator::Schedule(done - start, [this, written]() {
        // Multicast trees over the fabric as it is now (their MFT blocks are not timed).
        for (const auto& [mlid, members] : m_mcastGroups)
        {
            IbMulticastGroup::Program(this, mlid, members);
        }
        m_lastReroute = Simulator::Now();
        m_reroutedTrace(written);
    }));
}

void
IbSubnetManager::RememberMulticastGroup(uint16_t mlid, const std::vector<Ptr<IbNetDevice>>& members)
{
    m_mcastGroups[mlid] = members;
}

uint32_t
IbSubnetManager::GetSweeps() const
{
    return m_sweeps;
}

Time
IbSubnetManager::GetLastRerouteTime() const
{
    return m_lastReroute;
}

const IbTopology&
IbSubnetManager::GetTopology() const
{
    return m_topology;
}

const IbRoutingProblem&
IbSubnetManager::GetRoutingProblem() const
{
    return m_problem;
}

const IbRoutingTables&
IbSubnetManager::GetRoutingTables() const
{
    return m_tables;
}

Ptr<Node>
IbSubnetManager::GetNode(uint32_t topologyIndex) const
{
    NS_ASSERT(topologyIndex < m_nodes.size());
    return m_nodes[topologyIndex];
}

Ptr<IbNetDevice>
IbSubnetManager::GetCaPort(uint32_t topologyIndex, uint8_t port) const
{
    NS_ASSERT(topologyIndex < m_portDevices.size() && port < m_portDevices[topologyIndex].size());
    return m_portDevices[topologyIndex][port];
}

IbPathRecord
IbSubnetManager::GetPathRecord(Ptr<IbNetDevice> src, Ptr<IbNetDevice> dst) const
{
    return GetPathRecord(src->GetLid(), dst->GetLid());
}

IbPathRecord
IbSubnetManager::GetPathRecord(uint16_t slid, uint16_t dlid) const
{
    NS_ABORT_MSG_UNLESS(m_configured, "IbSubnetManager::GetPathRecord: call Configure() first");
    IbPathRecord rec;
    rec.slid = slid;
    rec.dlid = dlid;
    NS_ABORT_MSG_UNLESS(slid < m_problem.lidOwner.size() && m_problem.lidOwner[slid].first >= 0,
                        "IbSubnetManager::GetPathRecord: source LID " << slid
                                                                      << " is not assigned");
    if (dlid >= m_problem.lidOwner.size() || m_problem.lidOwner[dlid].first < 0)
    {
        return rec; // unknown destination: invalid record
    }
    const auto [srcNode, srcPort] = m_problem.lidOwner[slid];
    NS_ABORT_MSG_IF(m_topology.GetNode(srcNode).type != IbTopology::CA,
                    "IbSubnetManager::GetPathRecord: source LID "
                        << slid << " is switch '" << m_topology.GetNode(srcNode).name
                        << "' (its management port 0); path records start at a channel "
                           "adapter port: give a host port's LID as the source");
    Ptr<IbNetDevice> dev = m_portDevices[srcNode][srcPort];
    rec.sl = m_tables.GetSl(srcNode, dlid);
    rec.mtu = dev->GetIbMtu();
    rec.rateBps = dev->GetDataRate().GetBitRate();
    // Follow the LFTs.
    IbTopology::Port hop = m_topology.GetNode(srcNode).ports[srcPort];
    const uint32_t limit = m_topology.GetNNodes() + 1;
    while (rec.hops <= limit)
    {
        if (hop.peerNode < 0)
        {
            return rec;
        }
        const uint32_t n = hop.peerNode;
        Ptr<IbNetDevice> in = m_portDevices[n][hop.peerPort];
        rec.mtu = std::min(rec.mtu, in->GetIbMtu());
        rec.rateBps = std::min<uint64_t>(rec.rateBps, in->GetDataRate().GetBitRate());
        if (m_topology.GetNode(n).type == IbTopology::CA)
        {
            // The port the LID belongs to, not only its CA (a multi-port CA).
            rec.valid = m_problem.lidOwner[dlid].first == static_cast<int32_t>(n) &&
                        m_problem.lidOwner[dlid].second == hop.peerPort;
            return rec;
        }
        ++rec.hops;
        const uint8_t out = dlid < m_tables.lft[n].size() ? m_tables.lft[n][dlid] : 255;
        if (out == 0)
        {
            // Port 0: the switch's own LID (its management port) is the destination.
            rec.valid = m_problem.lidOwner[dlid].first == static_cast<int32_t>(n);
            return rec;
        }
        if (out >= m_topology.GetNode(n).ports.size())
        {
            return rec;
        }
        hop = m_topology.GetNode(n).ports[out];
    }
    return rec;
}

std::vector<std::string>
IbSubnetManager::CheckDeadlocks() const
{
    std::array<uint8_t, 16> sl2vl;
    for (uint8_t sl = 0; sl < 16; ++sl)
    {
        sl2vl[sl] = m_tables.vlsUsed > 1 ? (sl < m_tables.vlsUsed ? sl : 0)
                                         : sl % std::max<uint8_t>(1, m_problem.numDataVls);
    }
    std::vector<std::string> out;
    // With adaptive routing every port of an AR group is a route the checker follows.
    std::vector<IbArGroups> ar;
    if (m_ar)
    {
        ar = IbArGroups::Compute(m_problem, m_tables);
    }
    for (const auto& cycle :
         IbDeadlockChecker::Check(m_problem, m_tables, sl2vl, m_ar ? &ar : nullptr, m_arSlMask))
    {
        out.push_back(IbDeadlockChecker::Describe(m_problem, cycle));
    }
    return out;
}

void
IbSubnetManager::WriteLfts(std::ostream& os) const
{
    IbLftDump::Write(os, m_problem, m_tables);
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/node.h"
#include "ns3/string.h"

#include <set>

#ifdef NS3_MPI
#include "ns3/mpi-interface.h"
#endif

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbFabricHelper");

Ptr<IbNetDevice>
IbFabric::HostPort(uint32_t i) const
{
    NS_ABORT_MSG_IF(i >= hostPorts.GetN(),
                    "IbFabric::HostPort: host "
                        << i << " does not exist; the fabric has " << hostPorts.GetN()
                        << " hosts (0.." << (hostPorts.GetN() == 0 ? 0 : hostPorts.GetN() - 1)
                        << ")");
    return DynamicCast<IbNetDevice>(hostPorts.Get(i));
}

NetDeviceContainer
IbFabric::SwitchPorts() const
{
    NetDeviceContainer c;
    for (const auto& sw : switchOf)
    {
        if (sw)
        {
            for (uint8_t p = 1; p <= sw->GetNPorts(); ++p)
            {
                c.Add(sw->GetPort(p));
            }
        }
    }
    return c;
}

IbFabricHelper::IbFabricHelper()
{
    m_switchFactory.SetTypeId("ns3::IbSwitch");
    m_smFactory.SetTypeId("ns3::IbSubnetManager");
}

void
IbFabricHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_ib.SetDeviceAttribute(name, value);
}

void
IbFabricHelper::SetChannelAttribute(std::string name, const AttributeValue& value)
{
    m_ib.SetChannelAttribute(name, value);
}

void
IbFabricHelper::SetSwitchAttribute(std::string name, const AttributeValue& value)
{
    m_switchFactory.Set(name, value);
}

void
IbFabricHelper::SetSubnetManagerAttribute(std::string name, const AttributeValue& value)
{
    m_smFactory.Set(name, value);
}

void
IbFabricHelper::SetRankOfNode(std::function<uint32_t(uint32_t)> rankOf)
{
    m_rankOf = std::move(rankOf);
}

IbHelper&
IbFabricHelper::GetIbHelper()
{
    return m_ib;
}

Ptr<IbSwitch>
IbFabricHelper::InstallSwitch(Ptr<Node> node, uint32_t numPorts)
{
    NS_ABORT_MSG_IF(node->GetObject<IbSwitch>(),
                    "IbFabricHelper::InstallSwitch: node " << node->GetId()
                                                           << " is already a switch");
    Ptr<IbSwitch> sw = m_switchFactory.Create<IbSwitch>();
    node->AggregateObject(sw);
    for (uint32_t p = 0; p < numPorts; ++p)
    {
        sw->AddPort(m_ib.InstallPort(node, false)); // a switch port has no LID
    }
    return sw;
}

IbFabric
IbFabricHelper::Build(const IbTopology& topology, bool bringUp)
{
    std::string error;
    NS_ABORT_MSG_UNLESS(topology.Validate(&error), "IbFabricHelper::Build: " << error);
    IbFabric f;
    const uint32_t n = topology.GetNNodes();
    f.nodeOf.resize(n);
    f.switchOf.resize(n);
    std::vector<std::vector<Ptr<IbNetDevice>>> ports(n);
    // Names only when they are unique and usable as ns-3 names.
    std::set<std::string> seen;
    bool useNames = true;
    for (const auto& node : topology.GetNodes())
    {
        if (node.name.empty() || node.name.find('/') != std::string::npos ||
            !seen.insert(node.name).second || Names::Find<Node>(node.name))
        {
            useNames = false;
        }
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        const IbTopology::Node& tn = topology.GetNode(i);
        const uint32_t rank = m_rankOf ? m_rankOf(i) : 0;
#ifdef NS3_MPI
        NS_ABORT_MSG_IF(MpiInterface::IsEnabled() && rank >= MpiInterface::GetSize(),
                        "IbFabricHelper::Build: topology node "
                            << i << " is given rank " << rank << " but the simulation has "
                            << MpiInterface::GetSize() << " ranks");
#endif
        Ptr<Node> node = CreateObject<Node>(rank);
        f.nodeOf[i] = node;
        if (useNames)
        {
            Names::Add(tn.name, node);
        }
        ports[i].resize(tn.ports.size());
        if (tn.type == IbTopology::SWITCH)
        {
            Ptr<IbSwitch> sw = InstallSwitch(node, tn.ports.size() - 1);
            f.switchOf[i] = sw;
            f.switches.Add(node);
            for (uint8_t p = 1; p < tn.ports.size(); ++p)
            {
                ports[i][p] = sw->GetPort(p);
            }
        }
        else
        {
            f.hosts.Add(node);
            uint8_t cabled = 0; // the host's port: its first cabled one (port 1 if none is)
            for (uint8_t p = 1; p < tn.ports.size(); ++p)
            {
                ports[i][p] = m_ib.InstallPort(node, false); // the subnet manager's
                if (cabled == 0 && tn.ports[p].peerNode >= 0)
                {
                    cabled = p;
                }
            }
            f.hostPorts.Add(ports[i][cabled == 0 ? 1 : cabled]);
        }
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        const IbTopology::Node& tn = topology.GetNode(i);
        for (uint8_t p = 1; p < tn.ports.size(); ++p)
        {
            const IbTopology::Port& port = tn.ports[p];
            if (port.peerNode < 0 ||
                std::make_pair(uint32_t(port.peerNode), port.peerPort) < std::make_pair(i, p))
            {
                continue; // no cable, or cabled from the other end
            }
            Ptr<IbNetDevice> a = ports[i][p];
            Ptr<IbNetDevice> b = ports[port.peerNode][port.peerPort];
            for (const auto& d : {a, b})
            {
                d->SetAttribute("LinkSpeed", StringValue(IbLinkRate::SpeedName(port.speed)));
                d->SetAttribute("LinkWidth", StringValue(std::to_string(port.width) + "x"));
            }
            m_ib.Connect(a, b);
        }
    }
    if (bringUp)
    {
        f.subnetManager = m_smFactory.Create<IbSubnetManager>();
        f.subnetManager->Configure(topology, f.nodeOf);
    }
    return f;
}

} // namespace ns3

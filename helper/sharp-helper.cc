/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sharp-helper.h"

#include "ns3/abort.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/node.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SharpHelper");

SharpHelper::SharpHelper()
{
    m_an.SetTypeId("ns3::SharpAggregationNode");
}

void
SharpHelper::SetAggregationNodeAttribute(const std::string& name, const AttributeValue& value)
{
    m_an.Set(name, value);
}

Ptr<SharpAggregationManager>
SharpHelper::Install(const IbFabric& fabric) const
{
    NS_ABORT_MSG_UNLESS(fabric.subnetManager,
                        "SharpHelper: bring the fabric's subnet up before installing SHARP");
    Ptr<SharpAggregationManager> am = Install(fabric.switches);
    am->WatchSubnetManager(fabric.subnetManager);
    return am;
}

Ptr<SharpAggregationManager>
SharpHelper::Install(NodeContainer switches) const
{
    Ptr<SharpAggregationManager> am = CreateObject<SharpAggregationManager>();
    for (uint32_t i = 0; i < switches.GetN(); ++i)
    {
        Install(switches.Get(i), am);
    }
    return am;
}

Ptr<SharpAggregationNode>
SharpHelper::Install(Ptr<Node> switchNode, Ptr<SharpAggregationManager> am) const
{
    Ptr<IbSwitch> sw = switchNode->GetObject<IbSwitch>();
    NS_ABORT_MSG_UNLESS(sw, "SharpHelper: node " << switchNode->GetId() << " is not a switch");
    NS_ABORT_MSG_IF(switchNode->GetObject<SharpAggregationNode>(),
                    "SharpHelper: switch node " << switchNode->GetId()
                                                << " already has an aggregation node");
    Ptr<SharpAggregationNode> an = m_an.Create<SharpAggregationNode>();
    switchNode->AggregateObject(an);
    an->Attach(sw);
    am->AddAggregationNode(an);
    return an;
}

} // namespace ns3

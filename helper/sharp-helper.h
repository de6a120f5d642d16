/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef SHARP_HELPER_H
#define SHARP_HELPER_H

#include "ib-fabric-helper.h"

#include "ns3/node-container.h"
#include "ns3/object-factory.h"
#include "ns3/sharp-aggregation-manager.h"
#include "ns3/sharp-aggregation-node.h"

#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-helper
 * @brief Puts SHARP aggregation nodes into the switches of a fabric and creates the
 * aggregation manager that builds trees over them.
 *
 * @code
 *   IbFabric fabric = IbFabricHelper().Build(IbTopologyBuilder::FatTree2Level(8, 16));
 *   SharpHelper sh;
 *   sh.SetAggregationNodeAttribute("AggregationLatency", TimeValue(NanoSeconds(200)));
 *   Ptr<SharpAggregationManager> am = sh.Install(fabric);
 *   CollectiveHelper ch;
 *   ch.SetAlgorithm("sharp");
 *   ch.SetSharpManager(am);
 *   Ptr<CollectiveCommunicator> comm = ch.InstallIb(fabric);
 * @endcode
 */
class SharpHelper
{
  public:
    SharpHelper();

    /**
     * Set an attribute of the aggregation nodes installed from now on.
     * @param name attribute name
     * @param value its value
     */
    void SetAggregationNodeAttribute(const std::string& name, const AttributeValue& value);

    /**
     * An aggregation node in every switch of the fabric, and the manager.
     * @param fabric the fabric (its subnet brought up)
     * @return the aggregation manager
     */
    Ptr<SharpAggregationManager> Install(const IbFabric& fabric) const;
    /**
     * An aggregation node in some switches only (the others cannot be on a tree).
     * @param switches switch nodes (each with an IbSwitch)
     * @return the aggregation manager
     */
    Ptr<SharpAggregationManager> Install(NodeContainer switches) const;
    /**
     * One more aggregation node, made known to @p am.
     * @param switchNode a node with an IbSwitch
     * @param am the manager
     * @return the node's aggregation node
     */
    Ptr<SharpAggregationNode> Install(Ptr<Node> switchNode, Ptr<SharpAggregationManager> am) const;

  private:
    ObjectFactory m_an; //!< aggregation node factory
};

} // namespace ns3

#endif /* SHARP_HELPER_H */

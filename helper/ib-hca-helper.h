/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_HCA_HELPER_H
#define IB_HCA_HELPER_H

#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-verbs.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"

#include <string>
#include <vector>

namespace ns3
{

class IbHca;
class IbQueuePair;

/**
 * @ingroup infiniband-helper
 * @brief Installs IbHca objects on host nodes and connects queue pairs, the way an
 * application would with libibverbs and an out-of-band exchange of QP numbers, LIDs and
 * PSNs (or with rdma_cm).
 */
class IbHcaHelper
{
  public:
    IbHcaHelper();

    /**
     * @param name attribute of ns3::IbHca (DataMode, DoorbellLatency, ...)
     * @param value its value
     */
    void SetHcaAttribute(std::string name, const AttributeValue& value);

    /**
     * Create an IbHca on @p node, aggregate it to the node and give it every
     * IbNetDevice of the node as a port (in device order: port 1 is the first).
     * @param node a host node (not a switch, not already holding an HCA)
     * @return the HCA
     */
    Ptr<IbHca> Install(Ptr<Node> node) const;
    /**
     * @param nodes host nodes
     * @return their HCAs, in the same order
     */
    std::vector<Ptr<IbHca>> Install(NodeContainer nodes) const;

    /**
     * Connect two RC queue pairs (both in RESET) to each other (IbConnectionManager::ConnectRc).
     * @param a a queue pair
     * @param b another queue pair (usually on another HCA)
     * @param sm the subnet manager, or null
     * @param base the attributes
     */
    static void ConnectRc(Ptr<IbQueuePair> a,
                          Ptr<IbQueuePair> b,
                          Ptr<IbSubnetManager> sm = nullptr,
                          IbQpAttr base = IbQpAttr());

    /**
     * Move a UD queue pair (in RESET) through INIT, RTR and RTS
     * (IbConnectionManager::ConnectUd).
     * @param qp the queue pair
     * @param qkey its Q_Key
     */
    static void ConnectUd(Ptr<IbQueuePair> qp, uint32_t qkey);

  private:
    ObjectFactory m_factory; //!< HCA factory
};

} // namespace ns3

#endif /* IB_HCA_HELPER_H */

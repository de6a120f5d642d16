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
 * @ingroup infiniband
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
     * Connect two RC queue pairs (both in RESET) to each other: each goes through
     * INIT, RTR and RTS with the other's LID, QP number and start PSN.
     *
     * From @p base: portNum, accessFlags (0 means all remote rights: write, read,
     * atomic), timeout, retryCnt, rnrRetry, minRnrTimer, maxRdAtomic, maxDestRdAtomic
     * (each side's maxRdAtomic is capped at the other's maxDestRdAtomic, as the RDMA CM's
     * initiator depth is at the peer's responder resources, so that a lost atomic response
     * can still be answered from the responder's history);
     * @p a sends from base.sqPsn and @p b from base.rqPsn. SL and path MTU come from the
     * subnet manager's path record of each direction when @p sm is given (the MTU capped
     * by base.pathMtu); otherwise SL base.sl (0 by default) and the smaller of the two
     * ports' MTUs (also capped by base.pathMtu).
     * Aborts with the reason if a transition is refused.
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
     * Move a UD queue pair (in RESET) through INIT (port 1, @p qkey), RTR and RTS.
     * @param qp the queue pair
     * @param qkey its Q_Key
     */
    static void ConnectUd(Ptr<IbQueuePair> qp, uint32_t qkey);

  private:
    ObjectFactory m_factory; //!< HCA factory
};

} // namespace ns3

#endif /* IB_HCA_HELPER_H */

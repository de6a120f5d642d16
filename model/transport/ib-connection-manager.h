/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_CONNECTION_MANAGER_H
#define IB_CONNECTION_MANAGER_H

#include "ib-verbs.h"

#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

class IbQueuePair;
class IbSubnetManager;

/**
 * @ingroup infiniband-transport
 * @brief Connects queue pairs the way an application does with libibverbs and an
 * out-of-band exchange of QP numbers, LIDs and PSNs (or with rdma_cm): the path comes from
 * the subnet manager's path record, each QP goes through INIT, RTR and RTS.
 */
class IbConnectionManager
{
  public:
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
};

} // namespace ns3

#endif /* IB_CONNECTION_MANAGER_H */

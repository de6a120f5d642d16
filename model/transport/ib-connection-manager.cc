/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-connection-manager.h"

#include "ib-hca.h"
#include "ib-queue-pair.h"
#include "rdma-port.h"

#include "ns3/abort.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/log.h"
#include "ns3/node.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbConnectionManager");

namespace
{

/**
 * Apply one transition or abort with the reason.
 * @param qp the queue pair
 * @param attr the attributes
 */
void
MustModify(Ptr<IbQueuePair> qp, const IbQpAttr& attr)
{
    std::string error;
    NS_ABORT_MSG_UNLESS(qp->Modify(attr, &error), "IbConnectionManager: " << error);
}

} // namespace

void
IbConnectionManager::ConnectRc(Ptr<IbQueuePair> a,
                               Ptr<IbQueuePair> b,
                               Ptr<IbSubnetManager> sm,
                               IbQpAttr base)
{
    NS_ABORT_MSG_UNLESS(a->GetType() == IbQpType::RC && b->GetType() == IbQpType::RC,
                        "IbConnectionManager::ConnectRc: both queue pairs must be RC");
    RdmaPort* pa = a->GetHca()->GetRdmaPort(base.portNum);
    RdmaPort* pb = b->GetHca()->GetRdmaPort(base.portNum);
    const uint32_t nodeA = pa->GetDevice()->GetNode()->GetId();
    const uint32_t nodeB = pb->GetDevice()->GetNode()->GetId();
    NS_ABORT_MSG_UNLESS(pa->IsRoce() == pb->IsRoce(),
                        "IbConnectionManager::ConnectRc: port "
                            << unsigned(base.portNum) << " of node " << nodeA << " is "
                            << (pa->IsRoce() ? "an Ethernet (RoCE)" : "an InfiniBand")
                            << " port and that of node " << nodeB << " is not; a connection "
                            << "runs over one link layer: choose ports of the same fabric");
    NS_ABORT_MSG_IF(pa->IsRoce() && sm,
                    "IbConnectionManager::ConnectRc: a subnet manager routes InfiniBand "
                    "fabrics; RoCE ports (nodes "
                        << nodeA << " and " << nodeB << ") are routed by IP: pass no subnet "
                        << "manager");
    // One side carrying real bytes and the other not would move zeros as data (a READ
    // from a virtual-memory HCA completes with zeros) or drop the bytes (a WRITE into one).
    NS_ABORT_MSG_UNLESS(a->GetHca()->IsDataMode() == b->GetHca()->IsDataMode(),
                        "IbConnectionManager::ConnectRc: the HCA of node "
                            << nodeA
                            << " has DataMode=" << (a->GetHca()->IsDataMode() ? "true" : "false")
                            << " and that of node " << nodeB
                            << " DataMode=" << (b->GetHca()->IsDataMode() ? "true" : "false")
                            << "; set the same DataMode on both (before RegisterMemory)");
    const uint32_t access =
        base.accessFlags != 0
            ? base.accessFlags
            : (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC);
    uint8_t slAb = base.sl;
    uint8_t slBa = base.sl;
    uint32_t mtuAb = std::min({pa->GetActiveMtu(), pb->GetActiveMtu(), base.pathMtu});
    uint32_t mtuBa = mtuAb;
    if (sm)
    {
        Ptr<IbNetDevice> da = a->GetHca()->GetPort(base.portNum);
        Ptr<IbNetDevice> db = b->GetHca()->GetPort(base.portNum);
        const IbPathRecord ab = sm->GetPathRecord(da, db);
        const IbPathRecord ba = sm->GetPathRecord(db, da);
        NS_ABORT_MSG_UNLESS(ab.valid && ba.valid,
                            "IbConnectionManager::ConnectRc: the subnet manager has no path "
                                << "between node " << nodeA << " (LID " << da->GetLid()
                                << ") and node " << nodeB << " (LID " << db->GetLid()
                                << "); check that both HCAs' ports are cabled into the fabric "
                                   "the subnet manager brought up, and that its routing "
                                   "reached every LID");
        slAb = ab.sl;
        slBa = ba.sl;
        mtuAb = std::min(ab.mtu, base.pathMtu);
        mtuBa = std::min(ba.mtu, base.pathMtu);
    }
    // Both ends must cut messages the same way (READ responses use the responder's
    // MTU): use the smaller of the two directions.
    const uint32_t mtu = std::min(mtuAb, mtuBa);

    IbQpAttr init = base;
    init.state = IbQpState::INIT;
    init.accessFlags = access;
    MustModify(a, init);
    MustModify(b, init);

    IbQpAttr rtrA = base;
    rtrA.state = IbQpState::RTR;
    rtrA.pathMtu = mtu;
    rtrA.destQpNum = b->GetQpNum();
    rtrA.sl = slAb;
    rtrA.rqPsn = base.rqPsn;
    IbQpAttr rtrB = base;
    rtrB.state = IbQpState::RTR;
    rtrB.pathMtu = mtu;
    rtrB.destQpNum = a->GetQpNum();
    rtrB.sl = slBa;
    rtrB.rqPsn = base.sqPsn;
    if (pa->IsRoce())
    {
        rtrA.remoteIp = Ipv4Address(pb->GetLocalAddress());
        rtrB.remoteIp = Ipv4Address(pa->GetLocalAddress());
    }
    else
    {
        rtrA.dlid = static_cast<uint16_t>(pb->GetLocalAddress());
        rtrB.dlid = static_cast<uint16_t>(pa->GetLocalAddress());
    }
    MustModify(a, rtrA);
    MustModify(b, rtrB);

    // Initiator depth at most the peer's responder resources (both ends get base's).
    const uint8_t depth = std::min(base.maxRdAtomic, base.maxDestRdAtomic);
    IbQpAttr rtsA = base;
    rtsA.state = IbQpState::RTS;
    rtsA.sqPsn = base.sqPsn;
    rtsA.maxRdAtomic = depth;
    IbQpAttr rtsB = base;
    rtsB.state = IbQpState::RTS;
    rtsB.sqPsn = base.rqPsn;
    rtsB.maxRdAtomic = depth;
    MustModify(a, rtsA);
    MustModify(b, rtsB);
}

void
IbConnectionManager::ConnectUd(Ptr<IbQueuePair> qp, uint32_t qkey)
{
    NS_ABORT_MSG_UNLESS(qp->GetType() == IbQpType::UD,
                        "IbConnectionManager::ConnectUd: the queue pair must be UD");
    IbQpAttr attr;
    attr.state = IbQpState::INIT;
    attr.portNum = 1;
    attr.qkey = qkey;
    MustModify(qp, attr);
    attr.state = IbQpState::RTR;
    MustModify(qp, attr);
    attr.state = IbQpState::RTS;
    MustModify(qp, attr);
}

} // namespace ns3

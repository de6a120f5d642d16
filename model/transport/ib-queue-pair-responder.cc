/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// IbQueuePair, the RC responder: executing requests, acknowledging, READ responses and atomics (the
// state machine, posting, scheduling, packet building, receive dispatch and completions are in
// ib-queue-pair.cc).

#include "ib-completion-queue.h"
#include "ib-hca.h"
#include "ib-memory-region.h"
#include "ib-queue-pair-internal.h"
#include "ib-queue-pair.h"
#include "rdma-port.h"

#include "ns3/ib-aeth-header.h"
#include "ns3/ib-atomic-ack-eth-header.h"
#include "ns3/ib-atomic-eth-header.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-deth-header.h"
#include "ns3/ib-immdt-header.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-reth-header.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbQueuePairResponder");

using namespace ib_qp_detail;

// ---------------------------------------------------------------- responder

void
IbQueuePair::QueueAck()
{
    m_ackCount = 0;
    const uint32_t psn = PsnAdd(m_ePsn, kPsnMask); // ePSN - 1: the last executed
    if (!m_resp.empty() && m_resp.back().kind == RESP_ACK)
    {
        m_resp.back().psn = psn; // ACKs are cumulative: update the one not yet sent
        m_resp.back().msn = m_msn;
        return;
    }
    Response r;
    r.kind = RESP_ACK;
    r.syndrome = IbAethHeader::AckSyndrome(IbAethHeader::CREDIT_COUNT_UNLIMITED);
    r.psn = psn;
    r.msn = m_msn;
    r.readyAt = Simulator::Now() + m_hca->m_ackDelay;
    m_resp.push_back(r);
    Kick();
}

void
IbQueuePair::QueueNak(uint8_t syndrome, uint32_t psn, bool fatal)
{
    Response r;
    r.kind = RESP_NAK;
    r.syndrome = syndrome;
    r.psn = psn;
    r.msn = m_msn;
    r.fatal = fatal;
    r.readyAt = Simulator::Now() + m_hca->m_ackDelay;
    m_resp.push_back(r);
    if (fatal)
    {
        m_responderFailed = true;
    }
    if (IbAethHeader::IsRnrNakSyndrome(syndrome))
    {
        ++m_counters.rnrNaksSent;
    }
    else
    {
        ++m_counters.naksSent;
    }
    NS_LOG_LOGIC("QP " << m_qpn << ": NAK 0x" << std::hex << unsigned(syndrome) << std::dec
                       << " for PSN " << psn);
    m_nakSentTrace(psn, syndrome);
    Kick();
}

void
IbQueuePair::Place(Ptr<Packet> packet, const Rx& rx, IbMemoryRegion* mr, uint64_t addr)
{
    if (m_skipPlace)
    {
        m_skipPlace = false; // placed on arrival already (adaptive routing)
        return;
    }
    m_hca->DmaWrite(rx.payload);
    if (rx.payload == 0 || mr == nullptr || !m_hca->m_dataMode || mr->GetData() == nullptr)
    {
        return;
    }
    const uint32_t need = rx.hdrBytes + rx.payload;
    uint8_t* buf = m_hca->Scratch(need);
    packet->CopyData(buf, need);
    std::memcpy(mr->GetPointer(addr), buf + rx.hdrBytes, rx.payload);
}

void
IbQueuePair::MessageDone(IbWrOpcode kind,
                         uint32_t length,
                         uint64_t addr,
                         const RecvWqe* recv,
                         uint32_t imm,
                         bool hasImm)
{
    // The data is visible before the CQE written behind it.
    const Time dataVisible = m_hca->VisibleDelay(false);
    if (recv != nullptr)
    {
        IbWorkCompletion wc;
        wc.wrId = recv->wr.wrId;
        wc.status = IbWcStatus::SUCCESS;
        wc.opcode = kind == IbWrOpcode::RDMA_WRITE_WITH_IMM ? IbWcOpcode::RECV_RDMA_WITH_IMM
                                                            : IbWcOpcode::RECV;
        wc.byteLen = length;
        wc.withImm = hasImm;
        wc.immData = imm;
        wc.qpNum = m_qpn;
        wc.srcQp = m_attr.destQpNum;
        wc.slid = m_attr.dlid;
        m_hca->DeliverCompletion(m_recvCq, wc);
    }
    if (!m_msgTrace.IsEmpty())
    {
        Ptr<IbQueuePair> self = this;
        Simulator::Schedule(dataVisible, [self, kind, length, addr]() {
            self->m_msgTrace(self->m_qpn, kind, length, addr);
        });
    }
}

// The phases of ReceiveRequest (always inlined into it: see ib-queue-pair.h).

inline bool
IbQueuePair::CheckRequestPsn(const Rx& rx)
{
    if (m_responderFailed)
    {
        ++m_counters.stateDrops;
        return false;
    }
    const int32_t d = PsnDiff(rx.psn, m_ePsn);
    if (d > 0)
    {
        ++m_counters.outOfSequenceDropped;
        if (!m_nakSent)
        {
            m_nakSent = true;
            QueueNak(IbAethHeader::NAK_PSN_SEQUENCE_ERROR, m_ePsn, false);
        }
        return false;
    }
    if (d < 0)
    {
        ++m_counters.duplicatesReceived;
        ReceiveDuplicate(rx);
        return false;
    }
    m_nakSent = false;
    return true;
}

inline void
IbQueuePair::EndMessageInProgress(IbWcStatus status)
{
    // A fatal NAK ends the message in progress. A SEND's receive WR was taken off the
    // queue at its First packet: it completes in error now, ahead of the WRs the QP's
    // error state will flush (before, it was dropped without a completion).
    // A SEND cut short by the NAK completes its receive WR with the NAK's status, as rxe
    // does, so that the receiver's completions say why (later ones are flushed).
    if (m_inKind == IN_SEND)
    {
        Complete(m_recvCq, m_inRecv.wr.wrId, status, IbWcOpcode::RECV, 0);
    }
    m_inKind = IN_NONE;
}

inline void
IbQueuePair::NakInvalidRequest(const Rx& rx)
{
    EndMessageInProgress(IbWcStatus::REM_INV_REQ_ERR);
    QueueNak(IbAethHeader::NAK_INVALID_REQUEST, rx.psn, true);
}

inline void
IbQueuePair::NakRemoteAccess(const Rx& rx)
{
    EndMessageInProgress(IbWcStatus::REM_ACCESS_ERR);
    QueueNak(IbAethHeader::NAK_REMOTE_ACCESS_ERROR, rx.psn, true);
}

inline void
IbQueuePair::NakNotReady(const Rx& rx)
{
    m_nakSent = true; // drop what follows silently until the retry arrives
    QueueNak(IbAethHeader::RnrNakSyndrome(m_attr.minRnrTimer), rx.psn, false);
}

inline bool
IbQueuePair::ReceiveSend(const Rx& rx, const Ptr<Packet>& packet)
{
    const uint8_t op = rx.opcode;
    const uint32_t n = rx.payload;
    const bool first = op == IbOpcode::RC_SEND_FIRST || op == IbOpcode::RC_SEND_ONLY ||
                       op == IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE;
    const bool last = op != IbOpcode::RC_SEND_FIRST && op != IbOpcode::RC_SEND_MIDDLE;
    const bool full = !last; // First and Middle carry exactly one MTU
    if ((first ? m_inKind != IN_NONE : m_inKind != IN_SEND) || (full ? n != m_pmtu : n > m_pmtu) ||
        (last && !first && n == 0))
    {
        NakInvalidRequest(rx);
        return false;
    }
    if (first)
    {
        if (m_rq.Empty())
        {
            NakNotReady(rx);
            return false;
        }
        m_inRecv = m_rq.Pop();
        m_inKind = IN_SEND;
        m_inOffset = 0;
    }
    if (static_cast<uint64_t>(m_inOffset) + n > m_inRecv.wr.sge.length)
    {
        Complete(m_recvCq, m_inRecv.wr.wrId, IbWcStatus::LOC_LEN_ERR, IbWcOpcode::RECV, 0);
        m_inKind = IN_NONE; // completed: not again as flushed
        NakInvalidRequest(rx);
        return false;
    }
    Place(packet, rx, m_inRecv.mr, m_inRecv.wr.sge.addr + m_inOffset);
    m_inOffset += n;
    if (last)
    {
        m_msn = PsnAdd(m_msn, 1);
        m_inKind = IN_NONE;
        MessageDone(rx.hasImm ? IbWrOpcode::SEND_WITH_IMM : IbWrOpcode::SEND,
                    m_inOffset,
                    m_inRecv.wr.sge.addr,
                    &m_inRecv,
                    rx.imm,
                    rx.hasImm);
    }
    return true;
}

inline bool
IbQueuePair::ReceiveWrite(const Rx& rx, const Ptr<Packet>& packet)
{
    const uint8_t op = rx.opcode;
    const uint32_t n = rx.payload;
    const bool first = op == IbOpcode::RC_RDMA_WRITE_FIRST || op == IbOpcode::RC_RDMA_WRITE_ONLY ||
                       op == IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
    const bool last = op != IbOpcode::RC_RDMA_WRITE_FIRST && op != IbOpcode::RC_RDMA_WRITE_MIDDLE;
    if (first ? m_inKind != IN_NONE : m_inKind != IN_WRITE)
    {
        NakInvalidRequest(rx);
        return false;
    }
    if (first)
    {
        const bool shapeOk =
            last ? (n == rx.dmaLen && n <= m_pmtu) : (n == m_pmtu && rx.dmaLen > m_pmtu);
        if (!shapeOk)
        {
            NakInvalidRequest(rx);
            return false;
        }
        IbMemoryRegion* mr = nullptr;
        if (!(m_attr.accessFlags & IB_ACCESS_REMOTE_WRITE))
        {
            NakInvalidRequest(rx); // the QP does not take WRITEs: invalid request, as rxe and hfi1
            return false;
        }
        if (rx.dmaLen > 0 &&
            !(mr = RemoteRegion(rx.rkey, rx.va, rx.dmaLen, IB_ACCESS_REMOTE_WRITE)))
        {
            NakRemoteAccess(rx);
            return false;
        }
        if (rx.hasImm && m_rq.Empty())
        {
            NakNotReady(rx);
            return false;
        }
        m_inKind = IN_WRITE;
        m_inVa = rx.va;
        m_inMr = mr;
        m_inLen = rx.dmaLen;
        m_inOffset = 0;
    }
    else
    {
        const uint64_t after = static_cast<uint64_t>(m_inOffset) + n;
        const bool shapeOk =
            last ? (n >= 1 && n <= m_pmtu && after == m_inLen) : (n == m_pmtu && after < m_inLen);
        if (!shapeOk)
        {
            NakInvalidRequest(rx);
            return false;
        }
        if (rx.hasImm && m_rq.Empty())
        {
            NakNotReady(rx);
            return false;
        }
    }
    Place(packet, rx, m_inMr, m_inVa + m_inOffset);
    m_inOffset += n;
    if (last)
    {
        m_msn = PsnAdd(m_msn, 1);
        m_inKind = IN_NONE;
        if (rx.hasImm)
        {
            const RecvWqe r = m_rq.Pop();
            MessageDone(IbWrOpcode::RDMA_WRITE_WITH_IMM, m_inLen, m_inVa, &r, rx.imm, true);
        }
        else
        {
            MessageDone(IbWrOpcode::RDMA_WRITE, m_inLen, m_inVa, nullptr, 0, false);
        }
    }
    return true;
}

inline void
IbQueuePair::ReceiveReadRequest(const Rx& rx)
{
    if (m_inKind != IN_NONE)
    {
        NakInvalidRequest(rx);
        return;
    }
    IbMemoryRegion* mr = nullptr;
    if (!(m_attr.accessFlags & IB_ACCESS_REMOTE_READ) || m_attr.maxDestRdAtomic == 0)
    {
        NakInvalidRequest(rx); // the QP does not take READs (or has no responder resources)
        return;
    }
    if (rx.dmaLen > 0 && !(mr = RemoteRegion(rx.rkey, rx.va, rx.dmaLen, IB_ACCESS_REMOTE_READ)))
    {
        NakRemoteAccess(rx);
        return;
    }
    m_msn = PsnAdd(m_msn, 1);
    const uint32_t npkts = QueueReadResponse(rx, mr);
    m_ePsn = PsnAdd(m_ePsn, npkts);
    m_ackCount = 0;
    Kick();
}

inline void
IbQueuePair::ReceiveAtomic(const Rx& rx)
{
    if (m_inKind != IN_NONE || rx.va % 8 != 0 || !(m_attr.accessFlags & IB_ACCESS_REMOTE_ATOMIC) ||
        m_attr.maxDestRdAtomic == 0)
    {
        NakInvalidRequest(rx); // also when the QP does not take atomics or has no resources
        return;
    }
    IbMemoryRegion* mr = RemoteRegion(rx.rkey, rx.va, 8, IB_ACCESS_REMOTE_ATOMIC);
    if (mr == nullptr)
    {
        NakRemoteAccess(rx);
        return;
    }
    const uint64_t orig = mr->ReadU64(rx.va);
    if (rx.opcode == IbOpcode::RC_FETCH_ADD)
    {
        mr->WriteU64(rx.va, orig + rx.swapAdd);
    }
    else if (orig == rx.compare)
    {
        mr->WriteU64(rx.va, rx.swapAdd);
    }
    for (AtomicRecord& a : m_atomicLog)
    {
        // A record of the same PSN is from before the PSN space wrapped: a duplicate
        // of this atomic must get this one's value, not that one's.
        a.valid = a.valid && a.psn != rx.psn;
    }
    m_atomicLog[m_atomicNext] = AtomicRecord{rx.psn, orig, true};
    m_atomicNext = (m_atomicNext + 1) % m_atomicLog.size();
    m_msn = PsnAdd(m_msn, 1);
    Response r;
    r.kind = RESP_ATOMIC_ACK;
    r.psn = rx.psn;
    r.msn = m_msn;
    r.orig = orig;
    r.readyAt = Simulator::Now() + m_hca->m_responseDelay + m_hca->MemoryReadLatency();
    m_resp.push_back(r);
    ++m_rdAtomicQueued;
    m_ePsn = PsnAdd(m_ePsn, 1);
    m_ackCount = 0;
    Kick();
}

void
IbQueuePair::ReceiveRequest(const Rx& rx, Ptr<Packet> packet)
{
    if (!CheckRequestPsn(rx))
    {
        return;
    }
    switch (rx.opcode)
    {
    case IbOpcode::RC_SEND_FIRST:
    case IbOpcode::RC_SEND_ONLY:
    case IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE:
    case IbOpcode::RC_SEND_MIDDLE:
    case IbOpcode::RC_SEND_LAST:
    case IbOpcode::RC_SEND_LAST_WITH_IMMEDIATE:
        if (!ReceiveSend(rx, packet))
        {
            return;
        }
        break;
    case IbOpcode::RC_RDMA_WRITE_FIRST:
    case IbOpcode::RC_RDMA_WRITE_ONLY:
    case IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
    case IbOpcode::RC_RDMA_WRITE_MIDDLE:
    case IbOpcode::RC_RDMA_WRITE_LAST:
    case IbOpcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE:
        if (!ReceiveWrite(rx, packet))
        {
            return;
        }
        break;
    case IbOpcode::RC_RDMA_READ_REQUEST:
        ReceiveReadRequest(rx);
        return;
    case IbOpcode::RC_COMPARE_SWAP:
    case IbOpcode::RC_FETCH_ADD:
        ReceiveAtomic(rx);
        return;
    default:
        NakInvalidRequest(rx);
        return;
    }
    // A SEND or WRITE packet executed: ACK it on AckReq or every AckCoalescing packets.
    m_ePsn = PsnAdd(m_ePsn, 1);
    ++m_ackCount;
    if (rx.ackReq || m_ackCount >= m_hca->m_ackCoalescing)
    {
        QueueAck();
    }
}

void
IbQueuePair::ReceiveDuplicate(const Rx& rx)
{
    switch (rx.opcode)
    {
    case IbOpcode::RC_RDMA_READ_REQUEST: {
        // Executed again (from the PSN the requester resumes at), checked as a new one is:
        // access taken away since (RTS -> RTS, deregistration) is NAKed, not ignored.
        IbMemoryRegion* mr = nullptr;
        if (!(m_attr.accessFlags & IB_ACCESS_REMOTE_READ))
        {
            QueueNak(IbAethHeader::NAK_INVALID_REQUEST, rx.psn, true);
            Kick();
            return;
        }
        if (rx.dmaLen > 0 && !(mr = RemoteRegion(rx.rkey, rx.va, rx.dmaLen, IB_ACCESS_REMOTE_READ)))
        {
            QueueNak(IbAethHeader::NAK_REMOTE_ACCESS_ERROR, rx.psn, true);
            Kick();
            return;
        }
        // If the responses of that READ are still being sent, restart them where the
        // requester resumes instead of queueing a second train behind the first, whose
        // packets the requester would all drop as out of sequence.
        // Only if nothing queued behind it answers an earlier PSN (the replay of an
        // earlier READ or atomic queued after it): responses leave in PSN order.
        for (auto it = m_resp.begin(); it != m_resp.end(); ++it)
        {
            Response& r = *it;
            if (r.kind == RESP_READ && ((rx.psn - r.psn) & kPsnMask) < r.npkts &&
                std::none_of(std::next(it), m_resp.end(), [&rx](const Response& later) {
                    return ((rx.psn - later.psn) & kPsnMask) - 1 < (kPsnMask >> 1);
                }))
            {
                r.psn = rx.psn;
                r.va = rx.va;
                r.mr = mr;
                r.length = rx.dmaLen;
                r.npkts = PacketsFor(rx.dmaLen, m_pmtu);
                r.sent = 0;
                r.readyAt = Simulator::Now() + m_hca->m_responseDelay + m_hca->MemoryReadLatency();
                ++m_counters.readRestarts;
                Kick();
                return;
            }
        }
        QueueReadResponse(rx, mr);
        Kick();
        return;
    }
    case IbOpcode::RC_COMPARE_SWAP:
    case IbOpcode::RC_FETCH_ADD:
        // Not executed again: answered with the value it returned the first time.
        for (const AtomicRecord& a : m_atomicLog)
        {
            if (a.valid && a.psn == rx.psn)
            {
                Response r;
                r.kind = RESP_ATOMIC_ACK;
                r.psn = rx.psn;
                r.msn = m_msn;
                r.orig = a.orig;
                r.readyAt = Simulator::Now() + m_hca->m_responseDelay + m_hca->MemoryReadLatency();
                m_resp.push_back(r);
                ++m_rdAtomicQueued;
                Kick();
                return;
            }
        }
        NS_LOG_WARN("QP " << m_qpn << ": duplicate atomic PSN " << rx.psn
                          << " is older than the atomic history; dropped");
        return;
    default:
        if (rx.ackReq)
        {
            QueueAck();
        }
        return;
    }
}

void
IbQueuePair::ReceiveUd(const Rx& rx, Ptr<Packet> packet)
{
    if (rx.opcode != IbOpcode::UD_SEND_ONLY && rx.opcode != IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE)
    {
        ++m_counters.stateDrops;
        return;
    }
    if (rx.qkey != m_attr.qkey)
    {
        ++m_counters.qkeyDrops;
        return;
    }
    if (m_rq.Empty())
    {
        ++m_counters.noRecvDrops;
        return;
    }
    const RecvWqe r = m_rq.Pop();
    const uint32_t byteLen = rx.payload + kUdGrhBytes;
    IbWorkCompletion wc;
    wc.wrId = r.wr.wrId;
    wc.opcode = IbWcOpcode::RECV;
    wc.qpNum = m_qpn;
    wc.srcQp = rx.srcQp;
    if (m_dev->IsRoce())
    {
        wc.srcIp = Ipv4Address(rx.src);
    }
    else
    {
        wc.slid = static_cast<uint16_t>(rx.src);
    }
    if (byteLen > r.wr.sge.length)
    {
        wc.status = IbWcStatus::LOC_LEN_ERR;
        m_hca->DeliverCompletion(m_recvCq, wc);
        return;
    }
    Place(packet, rx, r.mr, r.wr.sge.addr + kUdGrhBytes);
    const Time dataVisible = m_hca->VisibleDelay(false);
    wc.status = IbWcStatus::SUCCESS;
    wc.byteLen = byteLen;
    wc.withImm = rx.hasImm;
    wc.immData = rx.imm;
    m_hca->DeliverCompletion(m_recvCq, wc);
    if (!m_msgTrace.IsEmpty())
    {
        Ptr<IbQueuePair> self = this;
        const IbWrOpcode kind = rx.hasImm ? IbWrOpcode::SEND_WITH_IMM : IbWrOpcode::SEND;
        const uint32_t len = rx.payload;
        const uint64_t addr = r.wr.sge.addr + kUdGrhBytes; // where the data went
        Simulator::Schedule(dataVisible, [self, kind, len, addr]() {
            self->m_msgTrace(self->m_qpn, kind, len, addr);
        });
    }
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// IbQueuePair, the RC and UD requester: sending work requests, acknowledgements, retransmission
// (the state machine, posting, scheduling, packet building, receive dispatch and completions are in
// ib-queue-pair.cc).

#include "ib-completion-queue.h"
#include "ib-hca.h"
#include "ib-memory-region.h"
#include "ib-queue-pair-internal.h"
#include "ib-queue-pair.h"

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

NS_LOG_COMPONENT_DEFINE("IbQueuePairRequester");

using namespace ib_qp_detail;

// ---------------------------------------------------------------- requester

void
IbQueuePair::ArmRetryTimer()
{
    // A flag, not m_retryTimer.IsExpired(): that looks the event up, a cache miss per
    // packet sent on a large fabric.
    if (m_type != IbQpType::RC || m_attr.timeout == 0 || m_retryArmed)
    {
        return;
    }
    m_retryArmed = true;
    m_retryTimer = Simulator::Schedule(IbAckTimeoutValue(m_attr.timeout),
                                       &IbQueuePair::RetryTimerExpired,
                                       this);
}

void
IbQueuePair::RetryTimerExpired()
{
    m_retryArmed = false;
    if (m_state != IbQpState::RTS || m_sq.empty() || m_nextNewPsn == m_unackedPsn)
    {
        return; // nothing outstanding: the timer stops until the next packet
    }
    const Time period = IbAckTimeoutValue(m_attr.timeout);
    const Time now = Simulator::Now();
    const Time due = std::max(m_lastProgress, m_rnrUntil) + period;
    if (now < due)
    {
        m_retryArmed = true;
        m_retryTimer = Simulator::Schedule(due - now, &IbQueuePair::RetryTimerExpired, this);
        return;
    }
    NS_LOG_LOGIC("QP " << m_qpn << ": local ACK timeout at PSN " << m_unackedPsn);
    ++m_counters.timeouts;
    RetryOrFail("timeout");
    if (m_state == IbQpState::RTS)
    {
        m_retryArmed = true;
        m_retryTimer = Simulator::Schedule(period, &IbQueuePair::RetryTimerExpired, this);
    }
}

void
IbQueuePair::RetryOrFail(const char* reason)
{
    if (m_retriesLeft == 0)
    {
        NS_LOG_LOGIC("QP " << m_qpn << ": transport retries exhausted");
        FailFront(IbWcStatus::RETRY_EXC_ERR);
        return;
    }
    --m_retriesLeft;
    Rewind(reason);
}

void
IbQueuePair::GoBackForMissingResponse(bool byAck, uint32_t ackPsn)
{
    // After a go-back the responder answers the duplicates before the READ or atomic at
    // the head with an ACK of its newest PSN, which covers the head, and replays the
    // head's responses after it: an ACK that finds the head, requested again since the
    // last go-back, without its responses does not show them lost if its PSN was sent
    // before that request (a duplicate's). The retry timer covers them if they are.
    // (Going back again made the responder read and send the data once more, which the
    // requester then dropped as duplicates.) An ACK for a request first sent after it
    // comes after the replay: a loss, as without a go-back.
    NS_ASSERT(!m_sq.empty());
    const SendWqe& head = m_sq.front();
    if (byAck && m_rewinds > 0 && head.readAtomic && head.requestedAt == m_rewinds &&
        PsnLess(ackPsn, head.replayBefore))
    {
        return;
    }
    if (!m_gapRewound)
    {
        m_gapRewound = true;
        RetryOrFail("missing-response");
    }
}

void
IbQueuePair::Rewind(const char* reason)
{
    if (m_sq.empty())
    {
        return;
    }
    NS_LOG_LOGIC("QP " << m_qpn << ": go back to PSN " << m_unackedPsn << " (" << reason << ")");
    m_heldResp.Drop(); // what comes again is taken as it comes
    ++m_counters.retransmitEpisodes;
    ++m_rewinds;
    m_retransmitTrace(m_unackedPsn, reason);
    m_txIdx = 0;
    m_txPsn = m_unackedPsn;
    m_rdAtomicOut = 0;
    m_lastProgress = Simulator::Now();
    SkipAcknowledged();
    Kick();
}

void
IbQueuePair::SkipAcknowledged()
{
    if (m_txIdx == 0 && !m_sq.empty() && PsnLess(m_txPsn, m_unackedPsn))
    {
        m_txPsn = m_unackedPsn;
    }
    // SEND and WRITE packets the responder has acknowledged need not be sent again, even
    // while an earlier READ or atomic waits for its responses.
    while (m_txIdx < m_sq.size() && PsnLess(m_txPsn, m_ackedPsn))
    {
        const SendWqe& w = m_sq[m_txIdx];
        if (w.readAtomic)
        {
            break;
        }
        const uint32_t end = PsnAdd(w.firstPsn, w.npkts);
        if (PsnLess(m_ackedPsn, end))
        {
            m_txPsn = m_ackedPsn;
            break;
        }
        m_txPsn = end;
        ++m_txIdx;
    }
}

void
IbQueuePair::Progress()
{
    m_retriesLeft = m_attr.retryCnt;
    m_rnrRetriesLeft = m_attr.rnrRetry;
    m_lastProgress = Simulator::Now();
    m_gapRewound = false;
}

void
IbQueuePair::RetireFront(IbWcStatus status)
{
    SendWqe w = m_sq.front();
    m_sq.pop_front();
    if (m_txIdx > 0)
    {
        --m_txIdx;
        if (w.readAtomic)
        {
            --m_rdAtomicOut;
        }
    }
    else
    {
        // The transmit position was inside this WR (it was being sent again).
        m_txPsn = m_unackedPsn;
    }
    if (status != IbWcStatus::SUCCESS || w.wr.signaled)
    {
        const uint32_t bytes = status == IbWcStatus::SUCCESS ? w.wr.sge.length : 0;
        Complete(m_sendCq, w.wr.wrId, status, WcOpcodeFor(w.wr.opcode), bytes);
    }
}

bool
IbQueuePair::AckUpTo(uint32_t target)
{
    if (PsnLess(m_ackedPsn, target))
    {
        // The responder has executed everything before target: forward progress, even if
        // an earlier READ still waits for its data.
        m_ackedPsn = target;
        m_retriesLeft = m_attr.retryCnt;
        m_rnrRetriesLeft = m_attr.rnrRetry;
    }
    return RetireAcknowledged();
}

bool
IbQueuePair::RetireAcknowledged()
{
    bool missing = false;
    while (!m_sq.empty() && PsnLess(m_unackedPsn, m_ackedPsn))
    {
        const SendWqe& w = m_sq.front();
        if (w.readAtomic)
        {
            missing = true; // executed, but its responses did not all arrive
            break;
        }
        const uint32_t end = PsnAdd(w.firstPsn, w.npkts);
        if (PsnLess(m_ackedPsn, end))
        {
            m_unackedPsn = m_ackedPsn;
            Progress();
            break;
        }
        m_unackedPsn = end;
        Progress();
        RetireFront(IbWcStatus::SUCCESS);
    }
    SkipAcknowledged();
    return missing;
}

void
IbQueuePair::FailFront(IbWcStatus status)
{
    if (!m_sq.empty())
    {
        SendWqe w = m_sq.front();
        m_sq.pop_front();
        Complete(m_sendCq, w.wr.wrId, status, WcOpcodeFor(w.wr.opcode), 0);
    }
    EnterError();
}

void
IbQueuePair::ReceiveResponse(const Rx& rx, Ptr<Packet> packet)
{
    if (m_state != IbQpState::RTS)
    {
        ++m_counters.stateDrops;
        return;
    }
    // A response may only concern PSNs that were sent and not yet acknowledged (an ACK
    // names the last PSN it acknowledges, a NAK the first one it does not).
    if (PsnLess(rx.psn, m_unackedPsn) || !PsnLess(rx.psn, m_nextNewPsn))
    {
        ++m_counters.duplicateResponses;
        return;
    }
    switch (rx.opcode)
    {
    case IbOpcode::RC_ACKNOWLEDGE: {
        const uint8_t s = rx.syndrome;
        if (IbAethHeader::IsAckSyndrome(s))
        {
            if (AckUpTo(PsnAdd(rx.psn, 1)) && !m_reorder)
            {
                // The ACK covers a READ or atomic whose responses did not all arrive. (With
                // adaptive routing its READ responses may still be on their way, taking
                // other paths than the ACK: the local ACK timeout covers a real loss.)
                GoBackForMissingResponse(true, rx.psn);
            }
        }
        else if (IbAethHeader::IsRnrNakSyndrome(s))
        {
            ++m_counters.rnrNaksReceived;
            m_rnrNakReceivedTrace(rx.psn, s);
            if (AckUpTo(rx.psn))
            {
                // An earlier READ or atomic, executed, lost its response: the RNR NAK is
                // not that request's. Go back for it; the SEND comes again after it.
                GoBackForMissingResponse();
                break;
            }
            if (m_attr.rnrRetry != 7)
            {
                if (m_rnrRetriesLeft == 0)
                {
                    FailFront(IbWcStatus::RNR_RETRY_EXC_ERR);
                    return;
                }
                --m_rnrRetriesLeft;
            }
            m_rnrUntil = Simulator::Now() + IbRnrTimerValue(s & 0x1F);
            Rewind("rnr");
        }
        else
        {
            if (s == IbAethHeader::NAK_PSN_SEQUENCE_ERROR && PsnLess(rx.psn, m_ackedPsn))
            {
                ++m_counters.duplicateResponses; // older than what was acknowledged since
                break;
            }
            ++m_counters.naksReceived;
            m_nakReceivedTrace(rx.psn, s);
            bool missing = AckUpTo(rx.psn);
            if (missing && s == IbAethHeader::NAK_PSN_SEQUENCE_ERROR)
            {
                // An earlier READ or atomic lost its response: going back for it covers
                // the gap the NAK reports too.
                GoBackForMissingResponse();
                break;
            }
            while (missing)
            {
                // A fatal NAK for a later request, while an earlier READ or atomic, executed,
                // lost its response: the QP goes to the error state, so that one cannot
                // complete. It is flushed; the NAK's status goes to the request it names.
                const SendWqe& w = m_sq.front();
                m_unackedPsn = PsnAdd(w.firstPsn, w.npkts);
                RetireFront(IbWcStatus::WR_FLUSH_ERR);
                missing = RetireAcknowledged();
            }
            switch (s)
            {
            case IbAethHeader::NAK_PSN_SEQUENCE_ERROR:
                if (!m_gapRewound)
                {
                    // Not when the requester already went back for a missing response
                    // and has made no progress since: that rewind covers this gap too.
                    RetryOrFail("nak-sequence");
                }
                break;
            case IbAethHeader::NAK_REMOTE_ACCESS_ERROR:
                FailFront(IbWcStatus::REM_ACCESS_ERR);
                return;
            case IbAethHeader::NAK_INVALID_REQUEST:
                FailFront(IbWcStatus::REM_INV_REQ_ERR);
                return;
            default:
                FailFront(IbWcStatus::REM_OP_ERR);
                return;
            }
        }
        break;
    }
    case IbOpcode::RC_RDMA_READ_RESPONSE_FIRST:
    case IbOpcode::RC_RDMA_READ_RESPONSE_MIDDLE:
    case IbOpcode::RC_RDMA_READ_RESPONSE_LAST:
    case IbOpcode::RC_RDMA_READ_RESPONSE_ONLY:
    case IbOpcode::RC_ATOMIC_ACKNOWLEDGE: {
        const bool atomicAck = rx.opcode == IbOpcode::RC_ATOMIC_ACKNOWLEDGE;
        AckUpTo(rx.psn); // a response acknowledges every request before it
        if (m_sq.empty())
        {
            break;
        }
        SendWqe& w = m_sq.front();
        const bool expected = rx.psn == m_unackedPsn &&
                              (atomicAck ? (w.readAtomic && w.wr.opcode != IbWrOpcode::RDMA_READ)
                                         : w.wr.opcode == IbWrOpcode::RDMA_READ);
        if (!expected)
        {
            // A response before this one was lost.
            GoBackForMissingResponse();
            break;
        }
        const uint32_t k = (rx.psn - w.firstPsn) & kPsnMask;
        if (atomicAck)
        {
            if (w.mr != nullptr)
            {
                w.mr->WriteU64(w.wr.sge.addr, rx.orig);
            }
        }
        else
        {
            const uint64_t off = static_cast<uint64_t>(k) * m_pmtu;
            const uint32_t want =
                static_cast<uint32_t>(std::min<uint64_t>(m_pmtu, w.wr.sge.length - off));
            if (rx.payload != want)
            {
                // The responder cuts at another path MTU than this QP's (the two ends were
                // given different pathMtu values): each retry would be cut the same way.
                // A local length error, as rxe's completer reports it.
                NS_LOG_WARN("QP " << m_qpn << ": READ response of " << rx.payload << " bytes where "
                                  << want << " were expected");
                FailFront(IbWcStatus::LOC_LEN_ERR);
                return;
            }
            Place(packet, rx, w.mr, w.wr.sge.addr + off);
        }
        m_unackedPsn = PsnAdd(rx.psn, 1);
        if (PsnLess(m_ackedPsn, m_unackedPsn))
        {
            m_ackedPsn = m_unackedPsn;
        }
        Progress();
        if (k + 1 == w.npkts)
        {
            RetireFront(IbWcStatus::SUCCESS);
        }
        RetireAcknowledged(); // SENDs and WRITEs acknowledged behind it complete now
        break;
    }
    default:
        break;
    }
    Kick();
}

} // namespace ns3

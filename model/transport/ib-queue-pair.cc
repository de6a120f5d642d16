/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-queue-pair.h"

#include "ib-completion-queue.h"
#include "ib-hca.h"
#include "ib-memory-region.h"
#include "ib-queue-pair-internal.h"
#include "rdma-port.h"

#include "ns3/ib-aeth-header.h"
#include "ns3/ib-atomic-ack-eth-header.h"
#include "ns3/ib-atomic-eth-header.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-deth-header.h"
#include "ns3/ib-header-view.h"
#include "ns3/ib-immdt-header.h"
#include "ns3/ib-lrh-header.h"
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

NS_LOG_COMPONENT_DEFINE("IbQueuePair");

NS_OBJECT_ENSURE_REGISTERED(IbQueuePair);

using namespace ib_qp_detail;

TypeId
IbQueuePair::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbQueuePair")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbQueuePair>()
            .AddTraceSource("Retransmit",
                            "The requester goes back to an unacknowledged PSN (go-back-N): "
                            "the PSN and the reason (timeout, nak-sequence, rnr, "
                            "missing-response).",
                            MakeTraceSourceAccessor(&IbQueuePair::m_retransmitTrace),
                            "ns3::IbQueuePair::RetransmitTracedCallback")
            .AddTraceSource("NakSent",
                            "The responder queued a NAK or RNR NAK: PSN and AETH syndrome.",
                            MakeTraceSourceAccessor(&IbQueuePair::m_nakSentTrace),
                            "ns3::IbQueuePair::NakTracedCallback")
            .AddTraceSource("NakReceived",
                            "The requester received a NAK (not RNR): PSN and AETH syndrome.",
                            MakeTraceSourceAccessor(&IbQueuePair::m_nakReceivedTrace),
                            "ns3::IbQueuePair::NakTracedCallback")
            .AddTraceSource("RnrNakReceived",
                            "The requester received an RNR NAK: PSN and AETH syndrome.",
                            MakeTraceSourceAccessor(&IbQueuePair::m_rnrNakReceivedTrace),
                            "ns3::IbQueuePair::NakTracedCallback")
            .AddTraceSource("MessageReceived",
                            "A received SEND or RDMA WRITE has been placed in memory "
                            "(PcieWriteLatency after its last packet, and with a PcieLink "
                            "after its writes and WriteLatency): QP number, kind, length, "
                            "address.",
                            MakeTraceSourceAccessor(&IbQueuePair::m_msgTrace),
                            "ns3::IbQueuePair::MessageTracedCallback");
    return tid;
}

IbQueuePair::IbQueuePair()
    : m_hca(nullptr),
      m_qpn(0),
      m_type(IbQpType::RC),
      m_state(IbQpState::RESET),
      m_maxSendWr(0),
      m_maxRecvWr(0),
      m_dev(nullptr),
      m_vl(0),
      m_pmtu(4096),
      m_inReadyList(false),
      m_lastWasResponse(false),
      m_nextPostPsn(0),
      m_unackedPsn(0),
      m_ackedPsn(0),
      m_txIdx(0),
      m_txPsn(0),
      m_nextNewPsn(0),
      m_rdAtomicOut(0),
      m_retriesLeft(7),
      m_rnrRetriesLeft(7),
      m_gapRewound(false),
      m_ePsn(0),
      m_msn(0),
      m_nakSent(false),
      m_responderFailed(false),
      m_ackCount(0),
      m_rdAtomicQueued(0),
      m_atomicNext(0),
      m_inKind(IN_NONE),
      m_inVa(0),
      m_inMr(nullptr),
      m_inLen(0),
      m_inOffset(0)
{
    NS_LOG_FUNCTION(this);
}

IbQueuePair::~IbQueuePair()
{
    NS_LOG_FUNCTION(this);
}

void
IbQueuePair::DoDispose()
{
    m_retryTimer.Cancel();
    m_retryArmed = false;
    m_wakeEvent.Cancel();
    m_wakeAt = Time::Max();
    m_dcqcn.Stop();
    m_ownCc.Stop();
    m_cc = nullptr;
    m_sq.clear();
    m_rq.Clear();
    m_resp.clear();
    m_held = HeldPackets();
    m_heldResp = HeldPackets();
    m_sendCq = nullptr;
    m_recvCq = nullptr;
    m_hca = nullptr;
    m_dev = nullptr;
    Object::DoDispose();
}

void
IbQueuePair::Setup(IbHca* hca,
                   uint32_t qpn,
                   IbQpType type,
                   Ptr<IbCompletionQueue> sendCq,
                   Ptr<IbCompletionQueue> recvCq,
                   uint32_t maxSendWr,
                   uint32_t maxRecvWr)
{
    m_hca = hca;
    m_qpn = qpn;
    m_type = type;
    m_sendCq = sendCq;
    m_recvCq = recvCq;
    m_maxSendWr = maxSendWr;
    m_maxRecvWr = maxRecvWr;
    m_atomicLog.assign(kMinAtomicLog, AtomicRecord());
}

uint32_t
IbQueuePair::GetQpNum() const
{
    return m_qpn;
}

IbQpType
IbQueuePair::GetType() const
{
    return m_type;
}

IbQpState
IbQueuePair::GetState() const
{
    return m_state;
}

const IbQpAttr&
IbQueuePair::GetAttr() const
{
    return m_attr;
}

std::string
IbQueuePair::DescribeCompletion(const IbWorkCompletion& wc) const
{
    std::ostringstream os;
    os << "QP " << m_qpn << " (";
    if (m_type == IbQpType::RC)
    {
        os << "RC, to LID " << LidText(m_attr.dlid) << " QP " << m_attr.destQpNum;
    }
    else
    {
        os << "UD";
    }
    os << "): WR " << wc.wrId << " completed with " << IbWcStatusName(wc.status);
    switch (wc.status)
    {
    case IbWcStatus::RETRY_EXC_ERR:
        os << ": no acknowledgement in " << unsigned(m_attr.retryCnt) + 1
           << " tries of the local ACK timeout (4.096 us * 2^" << unsigned(m_attr.timeout)
           << "); either nothing answers at that LID and QP number (see the switches' "
              "GetUnknownDlidDrops, the far IbHca's GetUnknownDrops and its QPs' sourceDrops "
              "and stateDrops counters), or the path loses or delays more than timeout and "
              "retryCnt allow";
        break;
    case IbWcStatus::RNR_RETRY_EXC_ERR:
        os << ": the far QP had no receive WQE posted through rnrRetry="
           << unsigned(m_attr.rnrRetry)
           << " RNR NAKs; post receives before the SENDs arrive or set rnrRetry to 7 (infinite)";
        break;
    case IbWcStatus::REM_ACCESS_ERR:
        os << ": the far side refused the rkey, the address range or the region's access "
              "right; use the far region's GetRkey() and GetAddr() and register it with the "
              "remote right";
        break;
    case IbWcStatus::REM_INV_REQ_ERR:
        os << ": the far QP found the request invalid (for example a message larger than its "
              "receive WQE, an opcode it does not accept, or a WRITE, READ or atomic that its "
              "accessFlags (IbQpAttr::accessFlags at INIT, ConnectRc's base.accessFlags) do "
              "not allow, or packets cut to another size than its pathMtu: both ends of an RC "
              "connection must have the same pathMtu, which ConnectRc gives them); on a "
              "receive completion, this QP found the sender's request invalid and NAKed it "
              "(see the NakSent trace)";
        break;
    case IbWcStatus::LOC_LEN_ERR:
        os << ": the message is larger than the receive WQE's buffer (post larger receives), "
              "or, for a READ, a response came cut to another size than this QP's pathMtu "
              "(both ends of an RC connection must have the same pathMtu; ConnectRc gives "
              "them that)";
        break;
    case IbWcStatus::WR_FLUSH_ERR:
        os << ": the QP went to the error state first (an earlier completion says why)";
        break;
    default:
        break;
    }
    return os.str();
}

Ptr<IbHca>
IbQueuePair::GetHca() const
{
    return m_hca;
}

Ptr<IbCompletionQueue>
IbQueuePair::GetSendCq() const
{
    return m_sendCq;
}

Ptr<IbCompletionQueue>
IbQueuePair::GetRecvCq() const
{
    return m_recvCq;
}

const IbQpCounters&
IbQueuePair::GetCounters() const
{
    return m_counters;
}

const char*
IbQueuePair::GetUseOf(const IbMemoryRegion* mr) const
{
    for (const SendWqe& w : m_sq)
    {
        if (w.mr == mr)
        {
            return "a send WR not yet completed";
        }
    }
    for (std::size_t i = 0; i < m_rq.Size(); ++i)
    {
        if (m_rq.At(i).mr == mr)
        {
            return "a posted receive WR";
        }
    }
    if (m_inKind == IN_SEND && m_inRecv.mr == mr)
    {
        return "the receive WR of the SEND being received";
    }
    if (m_inKind == IN_WRITE && m_inMr == mr)
    {
        return "the RDMA WRITE being received";
    }
    for (const Response& r : m_resp)
    {
        if (r.kind == RESP_READ && r.mr == mr)
        {
            return "an RDMA READ being answered";
        }
    }
    return nullptr;
}

uint32_t
IbQueuePair::GetSendQueueLength() const
{
    return static_cast<uint32_t>(m_sq.size());
}

uint32_t
IbQueuePair::GetRecvQueueLength() const
{
    return static_cast<uint32_t>(m_rq.Size());
}

const char*
IbQueuePair::StateName(IbQpState s)
{
    switch (s)
    {
    case IbQpState::RESET:
        return "RESET";
    case IbQpState::INIT:
        return "INIT";
    case IbQpState::RTR:
        return "RTR";
    case IbQpState::RTS:
        return "RTS";
    case IbQpState::SQE:
        return "SQE";
    case IbQpState::ERR:
        return "ERR";
    }
    return "?";
}

bool
IbQueuePair::Refuse(std::string* error, const std::string& msg) const
{
    const std::string full = "IbQueuePair " + std::to_string(m_qpn) + ": " + msg;
    NS_LOG_WARN(full);
    if (error != nullptr)
    {
        *error = full;
    }
    return false;
}

uint8_t
IbQueuePair::GetPortNum() const
{
    return m_attr.portNum;
}

// ---------------------------------------------------------------- state machine

bool
IbQueuePair::Modify(const IbQpAttr& a, std::string* error)
{
    NS_LOG_FUNCTION(this << StateName(m_state) << StateName(a.state));
    const IbQpState from = m_state;
    const IbQpState to = a.state;
    const bool rc = m_type == IbQpType::RC;
    if (to == IbQpState::ERR)
    {
        EnterError();
        return true;
    }
    if (to == IbQpState::RESET)
    {
        ResetState();
        return true;
    }
    if (to == IbQpState::INIT && (from == IbQpState::RESET || from == IbQpState::INIT))
    {
        if (a.portNum < 1 || a.portNum > m_hca->GetNPorts())
        {
            return Refuse(error,
                          "INIT: port " + std::to_string(a.portNum) +
                              " does not exist (the HCA has " + std::to_string(m_hca->GetNPorts()) +
                              " ports)");
        }
        m_attr.portNum = a.portNum;
        m_attr.qkey = a.qkey;
        m_attr.accessFlags = a.accessFlags;
        m_dev = m_hca->GetRdmaPort(a.portNum);
        m_udCheckedDlid = 0; // checked on the port the QP used before, if any
        if (!rc)
        {
            m_pmtu = m_dev->GetActiveMtu();
            StartRateControl();
        }
        m_state = IbQpState::INIT;
        return true;
    }
    if (to == IbQpState::RTR && from == IbQpState::INIT)
    {
        if (rc)
        {
            if (!IsIbaMtu(a.pathMtu) || a.pathMtu > m_dev->GetActiveMtu())
            {
                return Refuse(error,
                              "RTR: pathMtu " + std::to_string(a.pathMtu) +
                                  " is not an IBA MTU (256, 512, 1024, 2048, 4096) up to the "
                                  "port's MTU " +
                                  std::to_string(m_dev->GetActiveMtu()));
            }
            uint32_t remote = a.dlid;
            if (m_dev->IsRoce())
            {
                remote = a.remoteIp.Get();
                if (remote == 0 || a.remoteIp.IsBroadcast() || a.remoteIp.IsMulticast())
                {
                    return Refuse(error,
                                  "RTR: remoteIp " + m_dev->AddressText(remote) +
                                      " is not a unicast IPv4 address; a QP on a RoCE port "
                                      "is addressed by the remote port's IP address "
                                      "(IbHca::GetIpAddress), not by a LID");
                }
            }
            else if (a.dlid == 0 || a.dlid >= 0xC000)
            {
                return Refuse(error,
                              "RTR: dlid " + std::to_string(a.dlid) +
                                  " is not a unicast LID (1..0xBFFF)" +
                                  (a.dlid == 0 ? "; bring the subnet up (IbFabricHelper, "
                                                 "IbSubnetManager) and use the remote port's "
                                                 "GetLid()"
                                               : ""));
            }
            const std::string problem = m_dev->FirstHopProblem(remote);
            if (!problem.empty())
            {
                return Refuse(error,
                              std::string("RTR: ") + (m_dev->IsRoce() ? "remoteIp " : "dlid ") +
                                  m_dev->AddressText(remote) + " " + problem);
            }
            if (a.destQpNum > kPsnMask || a.minRnrTimer > 31)
            {
                return Refuse(error, "RTR: destQpNum must be 24 bits and minRnrTimer 0..31");
            }
            const std::string slProblem = m_dev->SlProblem(a.sl);
            if (!slProblem.empty())
            {
                return Refuse(error, "RTR: SL " + std::to_string(a.sl) + " " + slProblem);
            }
            const uint8_t vl = m_dev->GetClassForSl(a.sl);
            m_attr.pathMtu = a.pathMtu;
            m_attr.destQpNum = a.destQpNum;
            m_attr.dlid = a.dlid;
            m_attr.remoteIp = a.remoteIp;
            m_attr.udpSrcPort = a.udpSrcPort;
            m_attr.sl = a.sl;
            m_remote = remote;
            m_entropy = a.udpSrcPort != 0 ? a.udpSrcPort : RoceUdpSourcePort(m_qpn, a.destQpNum);
            StartRateControl();
            m_attr.rqPsn = a.rqPsn & kPsnMask;
            m_attr.maxDestRdAtomic = a.maxDestRdAtomic;
            m_attr.minRnrTimer = a.minRnrTimer;
            m_pmtu = a.pathMtu;
            m_vl = vl;
            m_ePsn = m_attr.rqPsn;
            m_msn = 0;
            m_atomicLog.assign(std::max<uint32_t>(kMinAtomicLog, a.maxDestRdAtomic),
                               AtomicRecord());
            m_atomicNext = 0;
        }
        m_state = IbQpState::RTR;
        return true;
    }
    if (to == IbQpState::RTS &&
        (from == IbQpState::RTR || from == IbQpState::RTS || from == IbQpState::SQE))
    {
        if (rc && (a.retryCnt > 7 || a.rnrRetry > 7 || a.timeout > 31))
        {
            return Refuse(error, "RTS: retryCnt and rnrRetry must be 0..7 and timeout 0..31");
        }
        if (from == IbQpState::RTR)
        {
            m_attr.sqPsn = a.sqPsn & kPsnMask;
            m_nextPostPsn = m_attr.sqPsn;
            m_unackedPsn = m_attr.sqPsn;
            m_txPsn = m_attr.sqPsn;
            m_nextNewPsn = m_attr.sqPsn;
            m_ackedPsn = m_attr.sqPsn;
        }
        // As in verbs, timeout, retryCnt, rnrRetry and maxRdAtomic are set on RTR->RTS
        // only: RTS->RTS (and SQE->RTS) keeps them, and the retries left, as they are
        // (before, it overwrote them: an RTS->RTS call with a default IbQpAttr put the
        // timeout back to 14 and undid ConnectRc's initiator-depth cap).
        if (from == IbQpState::RTS && a.mask != 0)
        {
            const uint32_t allowed = rc ? (IB_QP_ACCESS_FLAGS | IB_QP_MIN_RNR_TIMER) : IB_QP_QKEY;
            if ((a.mask & ~allowed) != 0 || (rc && a.minRnrTimer > 31))
            {
                return Refuse(error,
                              std::string("RTS->RTS: mask ") + std::to_string(a.mask) + " on a" +
                                  (rc ? "n RC QP; it may change IB_QP_ACCESS_FLAGS and "
                                        "IB_QP_MIN_RNR_TIMER (0..31)"
                                      : " UD QP; it may change IB_QP_QKEY") +
                                  ", as in verbs");
            }
            if (a.mask & IB_QP_ACCESS_FLAGS)
            {
                m_attr.accessFlags = a.accessFlags;
            }
            if (a.mask & IB_QP_MIN_RNR_TIMER)
            {
                m_attr.minRnrTimer = a.minRnrTimer;
            }
            if (a.mask & IB_QP_QKEY)
            {
                m_attr.qkey = a.qkey;
            }
        }
        if (rc && from == IbQpState::RTR)
        {
            m_attr.timeout = a.timeout;
            m_attr.retryCnt = a.retryCnt;
            m_attr.rnrRetry = a.rnrRetry;
            m_attr.maxRdAtomic = a.maxRdAtomic;
            m_retriesLeft = a.retryCnt;
            m_rnrRetriesLeft = a.rnrRetry;
        }
        m_state = IbQpState::RTS;
        Kick();
        return true;
    }
    return Refuse(error,
                  std::string("cannot go from ") + StateName(from) + " to " + StateName(to) +
                      "; allowed: RESET->INIT, INIT->INIT, INIT->RTR, RTR->RTS, RTS->RTS, "
                      "SQE->RTS, any->ERR, any->RESET");
}

void
IbQueuePair::ResetState()
{
    if (m_hca != nullptr)
    {
        m_hca->Deactivate(this); // it may come back on another port or VL
    }
    m_state = IbQpState::RESET;
    m_retryTimer.Cancel();
    m_retryArmed = false;
    m_wakeEvent.Cancel();
    m_wakeAt = Time::Max();
    m_sq.clear();
    m_rq.Clear();
    m_resp.clear();
    m_held = HeldPackets();
    m_heldResp = HeldPackets();
    m_reorder = false;
    m_attr = IbQpAttr();
    m_dev = nullptr;
    m_udCheckedDlid = 0;
    m_nextPostPsn = m_unackedPsn = m_txPsn = m_nextNewPsn = m_ackedPsn = 0;
    m_txIdx = 0;
    m_rdAtomicOut = 0;
    m_gapRewound = false;
    m_rewinds = 0;
    m_rnrUntil = Time(0);
    m_ePsn = 0;
    m_msn = 0;
    m_nakSent = false;
    m_responderFailed = false;
    m_ackCount = 0;
    m_rdAtomicQueued = 0;
    m_atomicLog.assign(kMinAtomicLog, AtomicRecord());
    m_atomicNext = 0;
    m_inKind = IN_NONE;
    m_inMr = nullptr;
}

void
IbQueuePair::EnterError()
{
    if (m_state == IbQpState::ERR)
    {
        return;
    }
    NS_LOG_FUNCTION(this);
    m_state = IbQpState::ERR;
    m_retryTimer.Cancel();
    m_retryArmed = false;
    m_wakeEvent.Cancel();
    m_wakeAt = Time::Max();
    for (const SendWqe& w : m_sq)
    {
        Complete(m_sendCq, w.wr.wrId, IbWcStatus::WR_FLUSH_ERR, WcOpcodeFor(w.wr.opcode), 0);
    }
    m_sq.clear();
    m_txIdx = 0;
    m_rdAtomicOut = 0;
    if (m_inKind == IN_SEND)
    {
        Complete(m_recvCq, m_inRecv.wr.wrId, IbWcStatus::WR_FLUSH_ERR, IbWcOpcode::RECV, 0);
    }
    m_inKind = IN_NONE;
    while (!m_rq.Empty())
    {
        RecvWqe r = m_rq.Pop();
        Complete(m_recvCq, r.wr.wrId, IbWcStatus::WR_FLUSH_ERR, IbWcOpcode::RECV, 0);
    }
    m_resp.clear();
    m_held = HeldPackets();
    m_heldResp = HeldPackets();
    m_rdAtomicQueued = 0;
    m_responderFailed = false;
}

// ---------------------------------------------------------------- posting

bool
IbQueuePair::PostSend(const IbSendWr& wr, std::string* error)
{
    NS_LOG_FUNCTION(this << wr.wrId << static_cast<int>(wr.opcode) << wr.sge.length);
    if (m_state == IbQpState::ERR)
    {
        Complete(m_sendCq, wr.wrId, IbWcStatus::WR_FLUSH_ERR, WcOpcodeFor(wr.opcode), 0);
        return true;
    }
    if (m_state != IbQpState::RTS)
    {
        return Refuse(error,
                      std::string("PostSend needs the RTS state; the QP is in ") +
                          StateName(m_state));
    }
    if (m_sq.size() >= m_maxSendWr)
    {
        return Refuse(error,
                      "PostSend: send queue full (" + std::to_string(m_sq.size()) +
                          " WRs outstanding, maxSendWr " + std::to_string(m_maxSendWr) + ")");
    }
    const bool atomic = wr.opcode == IbWrOpcode::ATOMIC_CMP_AND_SWP ||
                        wr.opcode == IbWrOpcode::ATOMIC_FETCH_AND_ADD;
    const bool readAtomic = atomic || wr.opcode == IbWrOpcode::RDMA_READ;
    if (m_type == IbQpType::UD)
    {
        if (wr.opcode != IbWrOpcode::SEND && wr.opcode != IbWrOpcode::SEND_WITH_IMM)
        {
            return Refuse(error, "PostSend: a UD QP only supports SEND and SEND_WITH_IMM");
        }
        if (wr.sge.length > m_pmtu)
        {
            return Refuse(error,
                          "PostSend: UD message of " + std::to_string(wr.sge.length) +
                              " bytes exceeds the MTU " + std::to_string(m_pmtu));
        }
        const bool roce = m_dev != nullptr && m_dev->IsRoce();
        if (!roce && (wr.udDlid == 0 || wr.udDlid == 0xFFFF))
        {
            return Refuse(error,
                          "PostSend: udDlid " + LidText(wr.udDlid) +
                              " is no destination; set it to the destination port's LID "
                              "(1..0xBFFF) or a multicast LID (0xC000..0xFFFE)");
        }
        if (roce && (wr.udRemoteIp.Get() == 0 || wr.udRemoteIp.IsBroadcast() ||
                     wr.udRemoteIp.IsMulticast()))
        {
            return Refuse(error,
                          "PostSend: udRemoteIp " + m_dev->AddressText(wr.udRemoteIp.Get()) +
                              " is no destination; on a RoCE port set it to the destination "
                              "port's IPv4 address");
        }
        if ((!roce && wr.udSl > 15) || wr.udRemoteQpn > kPsnMask)
        {
            return Refuse(error,
                          "PostSend: udSl " + std::to_string(wr.udSl) + " and udRemoteQpn " +
                              std::to_string(wr.udRemoteQpn) +
                              ": the SL must be 0..15 and the QP number 24 bits");
        }
        if (!roce && wr.udDlid >= 0xC000 && wr.udRemoteQpn == kPsnMask)
        {
            return Refuse(error,
                          "PostSend: udRemoteQpn 0xFFFFFF (multicast) to udDlid " +
                              LidText(wr.udDlid) +
                              ": attaching QPs to multicast groups is not modelled, HCAs "
                              "deliver by QP number; send to a QPN the members share (as "
                              "IpoibHelper's devices do)");
        }
        const std::string slProblem = m_dev->SlProblem(wr.udSl);
        if (!slProblem.empty())
        {
            return Refuse(error, "PostSend: udSl " + std::to_string(wr.udSl) + " " + slProblem);
        }
        const uint32_t remote = roce ? wr.udRemoteIp.Get() : wr.udDlid;
        if ((roce || wr.udDlid < 0xC000) && remote != m_udCheckedDlid)
        {
            // Once per destination in a row: a datagram stream to one LID (SHARP, a bulk
            // IPoIB flow) does not read the first switch's table for every packet.
            const std::string problem = m_dev->FirstHopProblem(remote);
            if (!problem.empty())
            {
                return Refuse(error,
                              std::string("PostSend: ") + (roce ? "udRemoteIp " : "udDlid ") +
                                  m_dev->AddressText(remote) + " " + problem);
            }
            m_udCheckedDlid = remote;
        }
    }
    if (atomic && (wr.sge.length != 8 || wr.remoteAddr % 8 != 0))
    {
        return Refuse(error,
                      "PostSend: an atomic needs an 8-byte SGE and an 8-byte aligned remote "
                      "address");
    }
    if (readAtomic && m_type == IbQpType::RC && m_attr.maxRdAtomic == 0)
    {
        return Refuse(error,
                      "PostSend: the QP was brought to RTS with maxRdAtomic 0 (initiator "
                      "depth), so it may not issue READs or atomics; give it 1 or more");
    }
    if (wr.sge.length > kMaxMessage)
    {
        return Refuse(error, "PostSend: messages are limited to 2^31 bytes");
    }
    if (m_type == IbQpType::RC && wr.opcode == IbWrOpcode::RDMA_READ &&
        PacketsFor(wr.sge.length, m_pmtu) >= kPsnHalf)
    {
        return Refuse(error,
                      "PostSend: an RDMA READ of " + std::to_string(wr.sge.length) +
                          " bytes at path MTU " + std::to_string(m_pmtu) + " takes " +
                          std::to_string(PacketsFor(wr.sge.length, m_pmtu)) +
                          " response PSNs, half the 24-bit PSN space or more, beyond which "
                          "PSNs cannot be ordered; split it into READs under " +
                          std::to_string(uint64_t{kPsnHalf - 1} * m_pmtu) +
                          " bytes or use a larger pathMtu");
    }
    if (wr.inlineData && (readAtomic || wr.sge.length > m_hca->m_maxInline))
    {
        return Refuse(error,
                      readAtomic ? std::string("PostSend: only SEND and RDMA WRITE data may be "
                                               "inline, not a READ's or an atomic's")
                                 : "PostSend: " + std::to_string(wr.sge.length) +
                                       " bytes of inline data, beyond the HCA's "
                                       "MaxInlineData of " +
                                       std::to_string(m_hca->m_maxInline) +
                                       "; post it without inlineData or raise MaxInlineData");
    }
    IbMemoryRegion* mr = nullptr;
    if (!LocalRegion(wr.sge, readAtomic, "PostSend", &mr, error))
    {
        return false;
    }
    SendWqe w;
    w.wr = wr;
    w.mr = mr;
    w.readAtomic = readAtomic;
    w.readyAt = Simulator::Now() + m_hca->PostDelay(wr, m_type == IbQpType::UD);
    if (m_type == IbQpType::RC)
    {
        w.npkts = atomic ? 1 : PacketsFor(wr.sge.length, m_pmtu);
        w.firstPsn = m_nextPostPsn;
        m_nextPostPsn = PsnAdd(m_nextPostPsn, w.npkts);
    }
    m_sq.push_back(w);
    if (m_txIdx + 1 == m_sq.size())
    {
        WakeAt(w.readyAt);
    }
    return true;
}

bool
IbQueuePair::PostRecv(const IbRecvWr& wr, std::string* error)
{
    NS_LOG_FUNCTION(this << wr.wrId << wr.sge.length);
    if (m_state == IbQpState::ERR)
    {
        Complete(m_recvCq, wr.wrId, IbWcStatus::WR_FLUSH_ERR, IbWcOpcode::RECV, 0);
        return true;
    }
    if (m_state == IbQpState::RESET)
    {
        return Refuse(error, "PostRecv needs the INIT, RTR or RTS state; the QP is in RESET");
    }
    // The WR of a SEND being received still occupies its slot until it completes.
    if (m_rq.Size() + (m_inKind == IN_SEND ? 1 : 0) >= m_maxRecvWr)
    {
        return Refuse(error,
                      "PostRecv: receive queue full (maxRecvWr " + std::to_string(m_maxRecvWr) +
                          ")");
    }
    IbMemoryRegion* mr = nullptr;
    if (!LocalRegion(wr.sge, true, "PostRecv", &mr, error))
    {
        return false;
    }
    m_rq.Push(RecvWqe{wr, mr});
    return true;
}

// ---------------------------------------------------------------- scheduling

void
IbQueuePair::Kick()
{
    if (m_inReadyList || m_hca == nullptr || m_dev == nullptr)
    {
        return;
    }
    const Time t = NextSendTime();
    if (t <= Simulator::Now())
    {
        m_hca->Activate(this);
    }
    else if (t != Time::Max())
    {
        WakeAt(t);
    }
}

void
IbQueuePair::WakeAt(Time t)
{
    const Time now = Simulator::Now();
    if (t <= now)
    {
        Kick();
        return;
    }
    if (m_wakeAt != Time::Max())
    {
        // A wake-up is pending (a time, not m_wakeEvent.IsExpired(): that looks the event
        // up, a cache miss per packet on a large fabric).
        if (m_wakeAt <= t)
        {
            return;
        }
        m_wakeEvent.Cancel();
    }
    m_wakeAt = t;
    m_wakeEvent = Simulator::Schedule(t - now, &IbQueuePair::Wake, this);
}

void
IbQueuePair::Wake()
{
    m_wakeAt = Time::Max();
    Kick();
}

Time
IbQueuePair::ResponderReadyAt() const
{
    if (m_resp.empty() || (m_state != IbQpState::RTR && m_state != IbQpState::RTS))
    {
        return Time::Max();
    }
    const Response& r = m_resp.front();
    if (r.kind == RESP_READ && m_hca->m_pcie != nullptr)
    {
        return m_hca->DmaReadGate(r.readyAt, NextResponsePayload(), this);
    }
    return r.readyAt;
}

uint32_t
IbQueuePair::NextResponsePayload() const
{
    const Response& r = m_resp.front();
    return std::min(m_pmtu, r.length - r.sent * m_pmtu);
}

uint32_t
IbQueuePair::NextRequestPayload() const
{
    const SendWqe& w = m_sq[m_txIdx];
    const IbSendWr& wr = w.wr;
    if (wr.inlineData || wr.opcode == IbWrOpcode::RDMA_READ || w.readAtomic)
    {
        return 0;
    }
    if (m_type == IbQpType::UD)
    {
        return wr.sge.length;
    }
    const uint64_t off = static_cast<uint64_t>((m_txPsn - w.firstPsn) & kPsnMask) * m_pmtu;
    return static_cast<uint32_t>(std::min<uint64_t>(m_pmtu, wr.sge.length - off));
}

uint32_t
IbQueuePair::WindowUse(uint32_t outstanding) const
{
    if (m_rdAtomicOut == 0)
    {
        return outstanding;
    }
    // A READ in flight spans the PSNs of its responses, but this side sent one packet
    // for it: the window counts the request, not the responses (before, a WRITE behind a
    // 4 MiB READ waited for 769 of its 1024 responses).
    uint32_t use = outstanding;
    for (uint32_t k = 0; k < m_txIdx && k < m_sq.size(); ++k)
    {
        const SendWqe& r = m_sq[k];
        if (r.wr.opcode != IbWrOpcode::RDMA_READ || r.npkts < 2)
        {
            continue;
        }
        const uint32_t end = PsnAdd(r.firstPsn, r.npkts);
        const uint32_t from = PsnLess(r.firstPsn, m_ackedPsn) ? m_ackedPsn : r.firstPsn;
        if (!PsnLess(from, end))
        {
            continue;
        }
        const uint32_t responses = ((end - from) & kPsnMask) - 1;
        use -= std::min(use, responses);
    }
    return use;
}

Time
IbQueuePair::RequesterReadyAt() const
{
    if (m_state != IbQpState::RTS || m_txIdx >= m_sq.size())
    {
        return Time::Max();
    }
    const SendWqe& w = m_sq[m_txIdx];
    // With a PCIe link, a packet leaves once its payload has come from host memory.
    const Time from = m_hca->m_pcie == nullptr
                          ? w.readyAt
                          : m_hca->DmaReadGate(w.readyAt, NextRequestPayload(), this);
    if (m_type == IbQpType::UD)
    {
        return std::max(from, PacedUntil());
    }
    const uint32_t outstanding =
        PsnLess(m_ackedPsn, m_txPsn) ? ((m_txPsn - m_ackedPsn) & kPsnMask) : 0;
    // The window bounds the data a requester puts on the wire ahead of ACKs. A READ
    // request carries no data and is bounded by maxRdAtomic, as on hardware, so a READ
    // larger than the window still overlaps with the next one.
    const bool isRead = w.wr.opcode == IbWrOpcode::RDMA_READ;
    if (!isRead && outstanding > 0 && WindowUse(outstanding) + 1 > m_hca->m_maxOutstanding)
    {
        return Time::Max(); // window full: an ACK will reopen it
    }
    // PSNs compare modulo 2^24: a response is taken only if it lies within half the space
    // from the oldest PSN still wanted (m_unackedPsn) to the newest sent. A packet that
    // extends the PSNs in use (a READ request claims all its response PSNs; the window
    // leaves those out) waits while it would take them to half the space or more; a
    // response or a go-back makes room. Measured from m_unackedPsn, not the last PSN
    // acknowledged: READ responses acknowledge past a lost one of the same READ.
    const uint32_t k = (m_txPsn - w.firstPsn) & kPsnMask;
    const uint32_t end = PsnAdd(m_txPsn, isRead ? w.npkts - k : 1);
    if (PsnDiff(end, m_nextNewPsn) > 0 && ((end - m_unackedPsn) & kPsnMask) >= kPsnHalf)
    {
        return Time::Max();
    }
    if (w.readAtomic && m_rdAtomicOut >= m_attr.maxRdAtomic)
    {
        return Time::Max(); // a READ/atomic response will free a slot
    }
    return std::max({from, m_rnrUntil, PacedUntil()});
}

Time
IbQueuePair::NextSendTime()
{
    return std::min(ResponderReadyAt(), RequesterReadyAt());
}

uint8_t
IbQueuePair::CurrentVl() const
{
    if (m_type == IbQpType::UD)
    {
        return m_sq.empty() ? 0 : m_dev->GetClassForSl(m_sq.front().wr.udSl & 0xF);
    }
    return m_vl;
}

Ptr<Packet>
IbQueuePair::PullPacket()
{
    const Time now = Simulator::Now();
    const bool resp = ResponderReadyAt() <= now;
    const bool req = RequesterReadyAt() <= now;
    // Alternate between the two sides when both have something, so that neither starves.
    if (resp && (!req || !m_lastWasResponse))
    {
        m_lastWasResponse = true;
        const bool data = m_resp.front().kind == RESP_READ;
        if (data && m_hca->m_pcie != nullptr)
        {
            m_hca->DmaRead(m_resp.front().readyAt, NextResponsePayload(), this);
        }
        Ptr<Packet> p = BuildResponse();
        if (data && m_cc != nullptr && p)
        {
            m_cc->NotifySent(p->GetSize());
        }
        return p;
    }
    if (req)
    {
        m_lastWasResponse = false;
        if (m_hca->m_pcie != nullptr)
        {
            m_hca->DmaRead(m_sq[m_txIdx].readyAt, NextRequestPayload(), this);
        }
        Ptr<Packet> p = m_type == IbQpType::RC ? BuildRcRequest() : BuildUdSend();
        if (p)
        {
            m_dcqcn.NotifySent(p->GetSize() + m_dev->GetWireOverhead());
            if (m_cc != nullptr)
            {
                m_cc->NotifySent(p->GetSize());
            }
        }
        return p;
    }
    return nullptr;
}

void
IbQueuePair::StartRateControl()
{
    m_cnpSentOnce = false;
    if (m_dev->IsRoce() && m_hca->m_dcqcnEnabled)
    {
        m_dcqcn.Init(&m_hca->m_dcqcn, static_cast<double>(m_dev->GetDataRate().GetBitRate()));
    }
    else
    {
        m_dcqcn.Stop();
    }
    m_ownCc.Stop();
    m_cc = nullptr;
    m_reorder = m_type == IbQpType::RC && m_dev->IsAdaptiveRouting();
    const IbCaCongestionSetting* cc = m_dev->GetCongestionSetting();
    if (cc == nullptr)
    {
        return;
    }
    if (cc->perQp || m_type == IbQpType::UD)
    {
        m_ownCc.Init(cc, static_cast<double>(m_dev->GetDataRate().GetBitRate()));
        m_ownCc.SetCctiCallback(
            MakeCallback(&IbHca::NotifyCctiChange, m_hca).Bind(m_qpn, m_attr.sl));
        m_cc = &m_ownCc;
    }
    else
    {
        m_cc = m_hca->SlRateControl(m_attr.portNum, m_attr.sl);
    }
}

void
IbQueuePair::ReceiveCnp()
{
    ++m_counters.cnpsReceived;
    m_dcqcn.ReceiveCnp();
}

void
IbQueuePair::ReceiveBecn()
{
    ++m_counters.becnsReceived;
    if (m_cc != nullptr)
    {
        m_cc->ReceiveBecn();
    }
}

// ---------------------------------------------------------------- packet building

Ptr<Packet>
IbQueuePair::Seal(uint8_t opcode,
                  uint32_t psn,
                  bool ackReq,
                  bool solicited,
                  uint32_t remote,
                  uint8_t sl,
                  uint32_t destQp,
                  Ptr<Packet> p,
                  uint32_t zeroTail)
{
    IbBthHeader bth;
    bth.SetOpcode(opcode);
    bth.SetSolicitedEvent(solicited);
    bth.SetDestQp(destQp);
    bth.SetAckReq(ackReq);
    bth.SetPsn(psn);
    const uint16_t entropy = m_type == IbQpType::RC ? m_entropy : RoceUdpSourcePort(m_qpn, destQp);
    m_dev->Seal(p, remote, sl, entropy, bth, zeroTail);
    ++m_counters.packetsSent;
    return p;
}

Ptr<Packet>
IbQueuePair::MakePayload(IbMemoryRegion* mr, uint64_t addr, uint32_t len, uint32_t& zeroTail)
{
    if (len == 0)
    {
        zeroTail = 0;
        return Create<Packet>();
    }
    if (m_hca->m_dataMode && mr != nullptr && mr->GetData() != nullptr)
    {
        zeroTail = 0;
        return Create<Packet>(mr->GetPointer(addr), len);
    }
    zeroTail = len;
    return Create<Packet>(len);
}

Ptr<Packet>
IbQueuePair::BuildResponse()
{
    Response& r = m_resp.front();
    IbAethHeader aeth;
    aeth.SetMsn(r.msn);
    aeth.SetSyndrome(IbAethHeader::AckSyndrome(IbAethHeader::CREDIT_COUNT_UNLIMITED));
    Ptr<Packet> p;
    uint8_t opcode = IbOpcode::RC_ACKNOWLEDGE;
    uint32_t psn = r.psn;
    uint32_t zeroTail = 0;
    bool done = true;
    switch (r.kind)
    {
    case RESP_ACK:
    case RESP_NAK:
        p = Create<Packet>();
        aeth.SetSyndrome(r.syndrome);
        p->AddHeader(aeth);
        if (r.kind == RESP_ACK)
        {
            ++m_counters.acksSent;
        }
        break;
    case RESP_ATOMIC_ACK: {
        p = Create<Packet>();
        IbAtomicAckEthHeader ack;
        ack.SetOriginalData(r.orig);
        p->AddHeader(ack);
        p->AddHeader(aeth);
        opcode = IbOpcode::RC_ATOMIC_ACKNOWLEDGE;
        break;
    }
    case RESP_READ: {
        const uint32_t j = r.sent;
        const uint32_t off = j * m_pmtu;
        const uint32_t len = std::min(m_pmtu, r.length - off);
        p = MakePayload(r.mr, r.va + off, len, zeroTail);
        if (r.npkts == 1)
        {
            opcode = IbOpcode::RC_RDMA_READ_RESPONSE_ONLY;
        }
        else if (j == 0)
        {
            opcode = IbOpcode::RC_RDMA_READ_RESPONSE_FIRST;
        }
        else if (j + 1 == r.npkts)
        {
            opcode = IbOpcode::RC_RDMA_READ_RESPONSE_LAST;
        }
        else
        {
            opcode = IbOpcode::RC_RDMA_READ_RESPONSE_MIDDLE;
        }
        if (opcode != IbOpcode::RC_RDMA_READ_RESPONSE_MIDDLE)
        {
            p->AddHeader(aeth);
        }
        psn = PsnAdd(r.psn, j);
        ++r.sent;
        done = r.sent == r.npkts;
        break;
    }
    }
    const bool fatal = r.fatal;
    if (done)
    {
        if (r.kind == RESP_READ || r.kind == RESP_ATOMIC_ACK)
        {
            --m_rdAtomicQueued;
        }
        m_resp.pop_front();
    }
    Ptr<Packet> out =
        Seal(opcode, psn, false, false, m_remote, m_attr.sl, m_attr.destQpNum, p, zeroTail);
    if (fatal)
    {
        // The NAK of a responder error is on its way: the responder QP goes to ERR.
        EnterError();
    }
    return out;
}

Ptr<Packet>
IbQueuePair::BuildRcRequest()
{
    SendWqe& w = m_sq[m_txIdx];
    const IbSendWr& wr = w.wr;
    const uint32_t k = (m_txPsn - w.firstPsn) & kPsnMask;
    const uint32_t psn = m_txPsn;
    const uint64_t off = static_cast<uint64_t>(k) * m_pmtu;
    Ptr<Packet> p;
    uint8_t opcode = 0;
    uint32_t zeroTail = 0;
    uint32_t span = 1;
    bool last = true;
    bool solicited = false;
    switch (wr.opcode)
    {
    case IbWrOpcode::SEND:
    case IbWrOpcode::SEND_WITH_IMM: {
        const bool imm = wr.opcode == IbWrOpcode::SEND_WITH_IMM;
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(m_pmtu, wr.sge.length - off));
        p = MakePayload(w.mr, wr.sge.addr + off, len, zeroTail);
        last = k + 1 == w.npkts;
        if (w.npkts == 1)
        {
            opcode = imm ? IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE : IbOpcode::RC_SEND_ONLY;
        }
        else if (k == 0)
        {
            opcode = IbOpcode::RC_SEND_FIRST;
        }
        else if (last)
        {
            opcode = imm ? IbOpcode::RC_SEND_LAST_WITH_IMMEDIATE : IbOpcode::RC_SEND_LAST;
        }
        else
        {
            opcode = IbOpcode::RC_SEND_MIDDLE;
        }
        if (last && imm)
        {
            IbImmDtHeader h;
            h.SetImmediateData(wr.immData);
            p->AddHeader(h);
        }
        solicited = last && wr.solicited;
        break;
    }
    case IbWrOpcode::RDMA_WRITE:
    case IbWrOpcode::RDMA_WRITE_WITH_IMM: {
        const bool imm = wr.opcode == IbWrOpcode::RDMA_WRITE_WITH_IMM;
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(m_pmtu, wr.sge.length - off));
        p = MakePayload(w.mr, wr.sge.addr + off, len, zeroTail);
        last = k + 1 == w.npkts;
        if (w.npkts == 1)
        {
            opcode =
                imm ? IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE : IbOpcode::RC_RDMA_WRITE_ONLY;
        }
        else if (k == 0)
        {
            opcode = IbOpcode::RC_RDMA_WRITE_FIRST;
        }
        else if (last)
        {
            opcode =
                imm ? IbOpcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE : IbOpcode::RC_RDMA_WRITE_LAST;
        }
        else
        {
            opcode = IbOpcode::RC_RDMA_WRITE_MIDDLE;
        }
        if (last && imm)
        {
            IbImmDtHeader h;
            h.SetImmediateData(wr.immData);
            p->AddHeader(h);
        }
        if (k == 0)
        {
            IbRethHeader reth;
            reth.SetVirtualAddress(wr.remoteAddr);
            reth.SetRKey(wr.rkey);
            reth.SetDmaLength(wr.sge.length);
            p->AddHeader(reth);
        }
        solicited = last && imm && wr.solicited;
        break;
    }
    case IbWrOpcode::RDMA_READ: {
        // A READ resumed at packet k asks for the rest of the data only.
        IbRethHeader reth;
        reth.SetVirtualAddress(wr.remoteAddr + off);
        reth.SetRKey(wr.rkey);
        reth.SetDmaLength(
            static_cast<uint32_t>(wr.sge.length - std::min<uint64_t>(off, wr.sge.length)));
        p = Create<Packet>();
        p->AddHeader(reth);
        opcode = IbOpcode::RC_RDMA_READ_REQUEST;
        span = w.npkts - k;
        break;
    }
    case IbWrOpcode::ATOMIC_CMP_AND_SWP:
    case IbWrOpcode::ATOMIC_FETCH_AND_ADD: {
        const bool cas = wr.opcode == IbWrOpcode::ATOMIC_CMP_AND_SWP;
        IbAtomicEthHeader a;
        a.SetVirtualAddress(wr.remoteAddr);
        a.SetRKey(wr.rkey);
        a.SetSwapOrAdd(cas ? wr.swap : wr.compareAdd);
        a.SetCompare(cas ? wr.compareAdd : 0);
        p = Create<Packet>();
        p->AddHeader(a);
        opcode = cas ? IbOpcode::RC_COMPARE_SWAP : IbOpcode::RC_FETCH_ADD;
        break;
    }
    }
    const uint32_t end = PsnAdd(psn, span);
    const uint32_t outstandingAfter =
        PsnLess(m_ackedPsn, end) ? ((end - m_ackedPsn) & kPsnMask) : 0;
    const bool ackReq = last || (k + 1) % m_hca->m_ackCoalescing == 0 ||
                        outstandingAfter >= m_hca->m_maxOutstanding;
    const bool resent = PsnDiff(end, m_nextNewPsn) <= 0;
    if (!resent)
    {
        if (m_nextNewPsn == m_unackedPsn)
        {
            m_lastProgress = Simulator::Now(); // nothing was outstanding: the timer starts now
        }
        m_nextNewPsn = end;
    }
    else
    {
        ++m_counters.retransmittedPackets;
    }
    m_txPsn = end;
    if (last)
    {
        ++m_txIdx;
        if (w.readAtomic)
        {
            ++m_rdAtomicOut;
            w.requestedAt = resent ? m_rewinds : 0;
            w.replayBefore = m_nextNewPsn;
        }
        SkipAcknowledged();
    }
    ArmRetryTimer();
    return Seal(opcode, psn, ackReq, solicited, m_remote, m_attr.sl, m_attr.destQpNum, p, zeroTail);
}

Ptr<Packet>
IbQueuePair::BuildUdSend()
{
    SendWqe w = m_sq.front();
    m_sq.pop_front();
    const IbSendWr& wr = w.wr;
    uint32_t zeroTail = 0;
    Ptr<Packet> p = MakePayload(w.mr, wr.sge.addr, wr.sge.length, zeroTail);
    const bool imm = wr.opcode == IbWrOpcode::SEND_WITH_IMM;
    if (imm)
    {
        IbImmDtHeader h;
        h.SetImmediateData(wr.immData);
        p->AddHeader(h);
    }
    IbDethHeader deth;
    // As in verbs, a Q_Key with the high bit set means "use the QP's own Q_Key".
    deth.SetQKey((wr.udRemoteQkey & 0x80000000u) ? m_attr.qkey : wr.udRemoteQkey);
    deth.SetSrcQp(m_qpn);
    p->AddHeader(deth);
    const uint32_t psn = m_txPsn;
    m_txPsn = PsnAdd(m_txPsn, 1);
    Ptr<Packet> out = Seal(imm ? IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE : IbOpcode::UD_SEND_ONLY,
                           psn,
                           false,
                           wr.solicited,
                           m_dev->IsRoce() ? wr.udRemoteIp.Get() : wr.udDlid,
                           wr.udSl & 0xF,
                           wr.udRemoteQpn & kPsnMask,
                           p,
                           zeroTail);
    if (wr.signaled)
    {
        Complete(m_sendCq, wr.wrId, IbWcStatus::SUCCESS, IbWcOpcode::SEND, wr.sge.length);
    }
    return out;
}

// ---------------------------------------------------------------- receive

bool
IbQueuePair::Parse(Ptr<Packet> packet, const RdmaRxInfo& info, Rx& rx) const
{
    const uint32_t size = packet->GetSize();
    if (size < info.bthOffset + IbPacket::BTH_SIZE + info.trailer)
    {
        return false;
    }
    uint8_t h[kMaxHeaders];
    const uint32_t copied = std::min(size, kMaxHeaders);
    packet->CopyData(h, copied);
    // kMaxHeaders holds the headers of every opcode behind either link layer's headers: if
    // the packet has them, so has h.
    IbHeaderView view = IbHeaderView::AtBth(h, copied, info.bthOffset);
    if (!view.DecodeExtensionHeaders())
    {
        return false;
    }
    rx.sl = info.sl;
    rx.src = info.source;
    rx.congested = info.congested;
    rx.opcode = view.GetOpcode();
    const uint32_t pad = view.GetPadCnt();
    rx.ackReq = view.GetAckReq();
    rx.psn = view.GetPsn();
    rx.hdrBytes = view.GetHeadersSize();
    if (size < rx.hdrBytes + pad + info.trailer)
    {
        return false;
    }
    const uint8_t ext = view.GetExtensionHeaders();
    if (ext & IbBthHeader::EXT_DETH)
    {
        rx.qkey = view.GetQKey();
        rx.srcQp = view.GetSrcQp();
    }
    if (ext & IbBthHeader::EXT_RETH)
    {
        rx.va = view.GetRethVirtualAddress();
        rx.rkey = view.GetRethRKey();
        rx.dmaLen = view.GetDmaLength();
    }
    if (ext & IbBthHeader::EXT_ATOMIC_ETH)
    {
        rx.va = view.GetAtomicVirtualAddress();
        rx.rkey = view.GetAtomicRKey();
        rx.swapAdd = view.GetSwapOrAdd();
        rx.compare = view.GetCompare();
    }
    if (ext & IbBthHeader::EXT_AETH)
    {
        rx.syndrome = view.GetSyndrome();
        rx.msn = view.GetMsn();
    }
    if (ext & IbBthHeader::EXT_ATOMIC_ACK_ETH)
    {
        rx.orig = view.GetOriginalData();
    }
    if (ext & IbBthHeader::EXT_IMMDT)
    {
        rx.imm = view.GetImmediateData();
        rx.hasImm = true;
    }
    rx.payload = size - rx.hdrBytes - pad - info.trailer;
    return true;
}

void
IbQueuePair::Receive(Ptr<Packet> packet, const RdmaRxInfo& info)
{
    Rx rx;
    if (!Parse(packet, info, rx))
    {
        ++m_counters.stateDrops;
        return;
    }
    ++m_counters.packetsReceived;
    if (m_state != IbQpState::RTR && m_state != IbQpState::RTS)
    {
        ++m_counters.stateDrops;
        return;
    }
    if (m_type == IbQpType::UD)
    {
        ReceiveUd(rx, packet);
        return;
    }
    if (rx.src != m_remote)
    {
        // A connected QP takes packets from its peer only (the header validation IBA
        // requires of connected services): another source, such as a raw flow that names
        // this QP number, is dropped and counted, not taken for the peer's next PSN.
        ++m_counters.sourceDrops;
        return;
    }
    if (rx.opcode >= IbOpcode::RC_RDMA_READ_RESPONSE_FIRST &&
        rx.opcode <= IbOpcode::RC_ATOMIC_ACKNOWLEDGE)
    {
        if (m_reorder && HoldEarlyResponse(rx, packet, info))
        {
            return;
        }
        ReceiveResponse(rx, packet);
        if (m_heldResp.count != 0)
        {
            ReleaseHeldResponses();
        }
    }
    else if (rx.opcode <= IbOpcode::RC_FETCH_ADD)
    {
        if (m_reorder && HoldEarlyRequest(rx, packet, info))
        {
            return;
        }
        ReceiveRequest(rx, packet);
        if (m_held.count != 0)
        {
            ReleaseHeldRequests();
        }
    }
    else
    {
        ++m_counters.stateDrops;
    }
}

IbQueuePair::HeldPacket*
IbQueuePair::HeldPackets::Keep(uint32_t psn,
                               Ptr<Packet> packet,
                               const RdmaRxInfo& info,
                               uint32_t window)
{
    if (slots.empty())
    {
        uint32_t size = 1;
        while (size < window)
        {
            size *= 2;
        }
        slots.resize(size);
    }
    HeldPacket& slot = slots[psn & (slots.size() - 1)];
    if (slot.packet && slot.psn == psn)
    {
        return nullptr;
    }
    if (!slot.packet)
    {
        ++count;
    }
    slot.packet = packet;
    slot.info = info;
    slot.psn = psn;
    slot.placed = false;
    return &slot;
}

IbQueuePair::HeldPacket
IbQueuePair::HeldPackets::Take(uint32_t psn)
{
    HeldPacket& slot = slots[psn & (slots.size() - 1)];
    if (!slot.packet || slot.psn != psn)
    {
        return HeldPacket();
    }
    --count;
    HeldPacket taken = std::move(slot);
    slot.packet = nullptr;
    return taken;
}

void
IbQueuePair::HeldPackets::Drop()
{
    for (HeldPacket& slot : slots)
    {
        slot.packet = nullptr;
    }
    count = 0;
}

bool
IbQueuePair::HoldEarlyRequest(const Rx& rx, Ptr<Packet> packet, const RdmaRxInfo& info)
{
    const int32_t d = PsnDiff(rx.psn, m_ePsn);
    if (d <= 0 || static_cast<uint32_t>(d) >= m_hca->m_maxOutstanding || m_responderFailed)
    {
        return false; // in order, a duplicate, or beyond the window: as without AR
    }
    HeldPacket* slot = m_held.Keep(rx.psn, packet, info, m_hca->m_maxOutstanding);
    if (slot == nullptr)
    {
        return true; // kept already (a resent copy)
    }
    ++m_counters.requestsHeld;
    // Out-of-order placement: a middle or last packet of the WRITE in progress lands at
    // once; its place follows from its PSN (every packet before its message's last is a
    // full path MTU). The rest (a later message's packets) is placed at its turn.
    const uint8_t op = rx.opcode;
    if (m_inKind == IN_WRITE && m_inMr != nullptr &&
        (op == IbOpcode::RC_RDMA_WRITE_MIDDLE || op == IbOpcode::RC_RDMA_WRITE_LAST ||
         op == IbOpcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE))
    {
        const uint64_t offset = m_inOffset + static_cast<uint64_t>(d) * m_pmtu;
        const bool middle = op == IbOpcode::RC_RDMA_WRITE_MIDDLE;
        const bool fits = middle ? (rx.payload == m_pmtu && offset + rx.payload < m_inLen)
                                 : (rx.payload >= 1 && offset + rx.payload == m_inLen);
        if (fits)
        {
            Place(packet, rx, m_inMr, m_inVa + offset);
            slot->placed = true;
            ++m_counters.placedOnArrival;
        }
    }
    return true;
}

void
IbQueuePair::ReleaseHeldRequests()
{
    while (m_held.count != 0)
    {
        const HeldPacket slot = m_held.Take(m_ePsn);
        if (!slot.packet)
        {
            return; // its turn has not come
        }
        const Ptr<Packet>& p = slot.packet;
        const RdmaRxInfo& info = slot.info;
        Rx rx;
        if (!Parse(p, info, rx) || (m_state != IbQpState::RTR && m_state != IbQpState::RTS))
        {
            return;
        }
        const uint32_t before = m_ePsn;
        m_skipPlace = slot.placed;
        ReceiveRequest(rx, p);
        m_skipPlace = false;
        if (m_ePsn == before)
        {
            return; // not taken (RNR, a NAK): the rest waits for the requester to resend
        }
    }
}

bool
IbQueuePair::HoldEarlyResponse(const Rx& rx, Ptr<Packet> packet, const RdmaRxInfo& info)
{
    if (rx.opcode > IbOpcode::RC_RDMA_READ_RESPONSE_ONLY || m_state != IbQpState::RTS)
    {
        return false; // ACKs and atomic ACKs keep the LFT's path: they come in order
    }
    const int32_t d = PsnDiff(rx.psn, m_unackedPsn);
    if (d <= 0 || static_cast<uint32_t>(d) >= m_hca->m_maxOutstanding ||
        !PsnLess(rx.psn, m_nextNewPsn))
    {
        return false; // in order, a duplicate, or not a PSN this QP sent: as without AR
    }
    HeldPacket* slot = m_heldResp.Keep(rx.psn, packet, info, m_hca->m_maxOutstanding);
    if (slot == nullptr)
    {
        return true; // kept already (a copy of a resent response)
    }
    ++m_counters.responsesHeld;
    // Out-of-order placement: a response of the READ at the head lands at once, at the
    // place its PSN gives.
    if (!m_sq.empty())
    {
        const SendWqe& w = m_sq.front();
        const uint32_t k = (rx.psn - w.firstPsn) & kPsnMask;
        if (w.wr.opcode == IbWrOpcode::RDMA_READ && k < w.npkts)
        {
            const uint64_t off = static_cast<uint64_t>(k) * m_pmtu;
            const uint64_t want = std::min<uint64_t>(m_pmtu, w.wr.sge.length - off);
            if (rx.payload == want)
            {
                Place(packet, rx, w.mr, w.wr.sge.addr + off);
                slot->placed = true;
                ++m_counters.placedOnArrival;
            }
        }
    }
    return true;
}

void
IbQueuePair::ReleaseHeldResponses()
{
    while (m_heldResp.count != 0 && m_state == IbQpState::RTS)
    {
        const HeldPacket slot = m_heldResp.Take(m_unackedPsn);
        if (!slot.packet)
        {
            return; // its turn has not come
        }
        const Ptr<Packet>& p = slot.packet;
        const RdmaRxInfo& info = slot.info;
        Rx rx;
        if (!Parse(p, info, rx))
        {
            return;
        }
        const uint32_t before = m_unackedPsn;
        m_skipPlace = slot.placed;
        ReceiveResponse(rx, p);
        m_skipPlace = false;
        if (m_unackedPsn == before)
        {
            return;
        }
    }
}

// ---------------------------------------------------------------- completions

void
IbQueuePair::Complete(const Ptr<IbCompletionQueue>& cq,
                      uint64_t wrId,
                      IbWcStatus status,
                      IbWcOpcode opcode,
                      uint32_t byteLen)
{
    IbWorkCompletion wc;
    wc.wrId = wrId;
    wc.status = status;
    wc.opcode = opcode;
    wc.byteLen = byteLen;
    wc.qpNum = m_qpn;
    if (m_type == IbQpType::RC)
    {
        wc.srcQp = m_attr.destQpNum;
        wc.slid = m_attr.dlid;
        wc.srcIp = m_attr.remoteIp;
    }
    m_hca->DeliverCompletion(cq, wc);
}

IbMemoryRegion*
IbQueuePair::RemoteRegion(uint32_t rkey, uint64_t va, uint64_t len, uint32_t access) const
{
    IbMemoryRegion* mr = m_hca->LookupMr(rkey);
    if (mr == nullptr || !mr->CheckRemote(va, len, rkey, access) || !(m_attr.accessFlags & access))
    {
        return nullptr;
    }
    return mr;
}

uint32_t
IbQueuePair::QueueReadResponse(const Rx& rx, IbMemoryRegion* mr)
{
    Response r;
    r.kind = RESP_READ;
    r.psn = rx.psn;
    r.msn = m_msn;
    r.va = rx.va;
    r.mr = mr;
    r.length = rx.dmaLen;
    r.npkts = PacketsFor(rx.dmaLen, m_pmtu);
    r.readyAt = Simulator::Now() + m_hca->m_responseDelay + m_hca->MemoryReadLatency();
    m_resp.push_back(r);
    ++m_rdAtomicQueued;
    return r.npkts;
}

bool
IbQueuePair::LocalRegion(const IbSge& sge,
                         bool write,
                         const char* verb,
                         IbMemoryRegion** mr,
                         std::string* error) const
{
    *mr = nullptr;
    if (sge.length == 0)
    {
        return true;
    }
    *mr = m_hca->LookupMr(sge.lkey);
    if (*mr == nullptr || !(*mr)->CheckLocal(sge.addr, sge.length, sge.lkey, write))
    {
        std::ostringstream os;
        os << verb << ": SGE [0x" << std::hex << sge.addr << ", +0x" << sge.length
           << ") with lkey 0x" << sge.lkey << " is not inside a region registered on this HCA"
           << (write ? " with IB_ACCESS_LOCAL_WRITE" : "");
        return Refuse(error, os.str());
    }
    return true;
}

} // namespace ns3

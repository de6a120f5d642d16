/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-queue-pair.h"

#include "ib-completion-queue.h"
#include "ib-hca.h"
#include "ib-memory-region.h"

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

NS_LOG_COMPONENT_DEFINE("IbQueuePair");

NS_OBJECT_ENSURE_REGISTERED(IbQueuePair);

namespace
{

/// PSNs are 24 bits.
constexpr uint32_t kPsnMask = 0xFFFFFF;
/// Half the PSN space: PSNs at least this far apart cannot be ordered.
constexpr uint32_t kPsnHalf = 0x800000;
/// Bytes of a UD receive buffer reserved for the GRH.
constexpr uint32_t kUdGrhBytes = 40;
/// Smallest number of atomics a responder remembers.
constexpr uint32_t kMinAtomicLog = 16;
/// Largest RC message (IBA: 2^31 bytes).
constexpr uint64_t kMaxMessage = 0x80000000ULL;
/// Bytes of LRH + BTH.
constexpr uint32_t kBaseHeaders = IbPacket::LRH_SIZE + IbPacket::BTH_SIZE;
/// Largest LRH + BTH + extension headers of the opcodes used (AtomicETH).
constexpr uint32_t kMaxHeaders = kBaseHeaders + 28;

/**
 * @param lid a LID
 * @return "N (0xN)", as messages name a LID
 */
std::string
LidText(uint16_t lid)
{
    std::ostringstream os;
    os << lid << " (0x" << std::hex << lid << ")";
    return os.str();
}

/// Inbound message in progress at the responder.
enum InKind : uint8_t
{
    IN_NONE = 0,
    IN_SEND = 1,
    IN_WRITE = 2
};

/**
 * @param a a PSN
 * @param n an increment
 * @return a + n modulo 2^24
 */
inline uint32_t
PsnAdd(uint32_t a, uint32_t n)
{
    return (a + n) & kPsnMask;
}

/**
 * @param a a PSN
 * @param b a PSN
 * @return a - b as a signed 24-bit distance
 */
inline int32_t
PsnDiff(uint32_t a, uint32_t b)
{
    return static_cast<int32_t>(((a - b) & kPsnMask) << 8) >> 8;
}

/**
 * @param a a PSN
 * @param b a PSN
 * @return true if a comes before b
 */
inline bool
PsnLess(uint32_t a, uint32_t b)
{
    return PsnDiff(a, b) < 0;
}

/**
 * @param p bytes
 * @return the big-endian 16-bit value there
 */
inline uint16_t
Be16(const uint8_t* p)
{
    return static_cast<uint16_t>((p[0] << 8) | p[1]);
}

/**
 * @param p bytes
 * @return the big-endian 24-bit value there
 */
inline uint32_t
Be24(const uint8_t* p)
{
    return (static_cast<uint32_t>(p[0]) << 16) | (static_cast<uint32_t>(p[1]) << 8) | p[2];
}

/**
 * @param p bytes
 * @return the big-endian 32-bit value there
 */
inline uint32_t
Be32(const uint8_t* p)
{
    return (static_cast<uint32_t>(p[0]) << 24) | Be24(p + 1);
}

/**
 * @param p bytes
 * @return the big-endian 64-bit value there
 */
inline uint64_t
Be64(const uint8_t* p)
{
    return (static_cast<uint64_t>(Be32(p)) << 32) | Be32(p + 4);
}

/**
 * @param op a send WR opcode
 * @return the completion opcode it produces
 */
IbWcOpcode
WcOpcodeFor(IbWrOpcode op)
{
    switch (op)
    {
    case IbWrOpcode::SEND:
    case IbWrOpcode::SEND_WITH_IMM:
        return IbWcOpcode::SEND;
    case IbWrOpcode::RDMA_WRITE:
    case IbWrOpcode::RDMA_WRITE_WITH_IMM:
        return IbWcOpcode::RDMA_WRITE;
    case IbWrOpcode::RDMA_READ:
        return IbWcOpcode::RDMA_READ;
    case IbWrOpcode::ATOMIC_CMP_AND_SWP:
        return IbWcOpcode::COMP_SWAP;
    case IbWrOpcode::ATOMIC_FETCH_AND_ADD:
        return IbWcOpcode::FETCH_ADD;
    }
    return IbWcOpcode::SEND;
}

/**
 * @param len message bytes
 * @param mtu path MTU
 * @return packets (at least 1)
 */
inline uint32_t
PacketsFor(uint64_t len, uint32_t mtu)
{
    return len == 0 ? 1 : static_cast<uint32_t>((len + mtu - 1) / mtu);
}

/**
 * @param mtu a value
 * @return true if it is an IBA MTU
 */
inline bool
IsIbaMtu(uint32_t mtu)
{
    return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

} // namespace

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
                            "(PcieWriteLatency after its last packet): QP number, kind, "
                            "length, address.",
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
    m_sq.clear();
    m_rq.Clear();
    m_resp.clear();
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
        m_dev = PeekPointer(m_hca->GetPort(a.portNum));
        m_udCheckedDlid = 0; // checked on the port the QP used before, if any
        if (!rc)
        {
            m_pmtu = m_dev->GetIbMtu();
        }
        m_state = IbQpState::INIT;
        return true;
    }
    if (to == IbQpState::RTR && from == IbQpState::INIT)
    {
        if (rc)
        {
            if (!IsIbaMtu(a.pathMtu) || a.pathMtu > m_dev->GetIbMtu())
            {
                return Refuse(error,
                              "RTR: pathMtu " + std::to_string(a.pathMtu) +
                                  " is not an IBA MTU (256, 512, 1024, 2048, 4096) up to the "
                                  "port's MTU " +
                                  std::to_string(m_dev->GetIbMtu()));
            }
            if (a.dlid == 0 || a.dlid >= 0xC000)
            {
                return Refuse(error,
                              "RTR: dlid " + std::to_string(a.dlid) +
                                  " is not a unicast LID (1..0xBFFF)" +
                                  (a.dlid == 0 ? "; bring the subnet up (IbFabricHelper, "
                                                 "IbSubnetManager) and use the remote port's "
                                                 "GetLid()"
                                               : ""));
            }
            const std::string problem = m_dev->FirstHopProblem(a.dlid);
            if (!problem.empty())
            {
                return Refuse(error, "RTR: dlid " + LidText(a.dlid) + " " + problem);
            }
            if (a.destQpNum > kPsnMask || a.sl > 15 || a.minRnrTimer > 31)
            {
                return Refuse(error,
                              "RTR: destQpNum must be 24 bits, sl 0..15 and minRnrTimer 0..31");
            }
            const uint8_t vl = m_dev->GetVlForSl(a.sl);
            if (vl == IbNetDevice::VL15)
            {
                return Refuse(error,
                              "RTR: SL" + std::to_string(a.sl) +
                                  " maps to VL15 (drop) on the port; choose another SL");
            }
            m_attr.pathMtu = a.pathMtu;
            m_attr.destQpNum = a.destQpNum;
            m_attr.dlid = a.dlid;
            m_attr.sl = a.sl;
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
        if (wr.udDlid == 0 || wr.udDlid == 0xFFFF)
        {
            return Refuse(error,
                          "PostSend: udDlid " + LidText(wr.udDlid) +
                              " is no destination; set it to the destination port's LID "
                              "(1..0xBFFF) or a multicast LID (0xC000..0xFFFE)");
        }
        if (wr.udSl > 15 || wr.udRemoteQpn > kPsnMask)
        {
            return Refuse(error,
                          "PostSend: udSl " + std::to_string(wr.udSl) + " and udRemoteQpn " +
                              std::to_string(wr.udRemoteQpn) +
                              ": the SL must be 0..15 and the QP number 24 bits");
        }
        if (wr.udDlid >= 0xC000 && wr.udRemoteQpn == kPsnMask)
        {
            return Refuse(error,
                          "PostSend: udRemoteQpn 0xFFFFFF (multicast) to udDlid " +
                              LidText(wr.udDlid) +
                              ": attaching QPs to multicast groups is not modelled, HCAs "
                              "deliver by QP number; send to a QPN the members share (as "
                              "IpoibHelper's devices do)");
        }
        if (m_dev->GetVlForSl(wr.udSl) == IbNetDevice::VL15)
        {
            return Refuse(error,
                          "PostSend: udSl " + std::to_string(wr.udSl) +
                              " maps to VL15 (drop) on the port; choose another SL");
        }
        if (wr.udDlid < 0xC000 && wr.udDlid != m_udCheckedDlid)
        {
            // Once per destination in a row: a datagram stream to one LID (SHARP, a bulk
            // IPoIB flow) does not read the first switch's table for every packet.
            const std::string problem = m_dev->FirstHopProblem(wr.udDlid);
            if (!problem.empty())
            {
                return Refuse(error, "PostSend: udDlid " + LidText(wr.udDlid) + " " + problem);
            }
            m_udCheckedDlid = wr.udDlid;
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
    IbMemoryRegion* mr = nullptr;
    if (!LocalRegion(wr.sge, readAtomic, "PostSend", &mr, error))
    {
        return false;
    }
    SendWqe w;
    w.wr = wr;
    w.mr = mr;
    w.readAtomic = readAtomic;
    w.readyAt = Simulator::Now() + m_hca->m_doorbellLatency;
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
    return m_resp.front().readyAt;
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
    if (m_type == IbQpType::UD)
    {
        return w.readyAt;
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
    return std::max(w.readyAt, m_rnrUntil);
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
        return m_sq.empty() ? 0 : m_dev->GetVlForSl(m_sq.front().wr.udSl & 0xF);
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
        return BuildResponse();
    }
    if (req)
    {
        m_lastWasResponse = false;
        return m_type == IbQpType::RC ? BuildRcRequest() : BuildUdSend();
    }
    return nullptr;
}

// ---------------------------------------------------------------- packet building

Ptr<Packet>
IbQueuePair::Seal(uint8_t opcode,
                  uint32_t psn,
                  bool ackReq,
                  bool solicited,
                  uint16_t dlid,
                  uint8_t sl,
                  uint32_t destQp,
                  Ptr<Packet> p,
                  uint32_t zeroTail)
{
    IbLrhHeader lrh;
    lrh.SetVl(m_dev->GetVlForSl(sl));
    lrh.SetSl(sl);
    lrh.SetDlid(dlid);
    lrh.SetSlid(m_dev->GetLid());
    IbBthHeader bth;
    bth.SetOpcode(opcode);
    bth.SetSolicitedEvent(solicited);
    bth.SetDestQp(destQp);
    bth.SetAckReq(ackReq);
    bth.SetPsn(psn);
    IbPacket::Seal(p, lrh, nullptr, bth, zeroTail);
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
        Seal(opcode, psn, false, false, m_attr.dlid, m_attr.sl, m_attr.destQpNum, p, zeroTail);
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
    return Seal(opcode,
                psn,
                ackReq,
                solicited,
                m_attr.dlid,
                m_attr.sl,
                m_attr.destQpNum,
                p,
                zeroTail);
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
                           wr.udDlid,
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
            if (AckUpTo(PsnAdd(rx.psn, 1)))
            {
                // The ACK covers a READ or atomic whose responses did not all arrive.
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
        Simulator::Schedule(m_hca->m_pcieWriteLatency, [self, kind, length, addr]() {
            self->m_msgTrace(self->m_qpn, kind, length, addr);
        });
    }
}

void
IbQueuePair::ReceiveRequest(const Rx& rx, Ptr<Packet> packet)
{
    if (m_responderFailed)
    {
        ++m_counters.stateDrops;
        return;
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
        return;
    }
    if (d < 0)
    {
        ++m_counters.duplicatesReceived;
        ReceiveDuplicate(rx);
        return;
    }
    m_nakSent = false;
    const uint8_t op = rx.opcode;
    const uint32_t n = rx.payload;
    const uint8_t rnr = IbAethHeader::RnrNakSyndrome(m_attr.minRnrTimer);
    // A fatal NAK ends the message in progress. A SEND's receive WR was taken off the
    // queue at its First packet: it completes in error now, ahead of the WRs the QP's
    // error state will flush (before, it was dropped without a completion).
    // A SEND cut short by the NAK completes its receive WR with the NAK's status, as rxe
    // does, so that the receiver's completions say why (later ones are flushed).
    auto endInProgress = [this](IbWcStatus status) {
        if (m_inKind == IN_SEND)
        {
            Complete(m_recvCq, m_inRecv.wr.wrId, status, IbWcOpcode::RECV, 0);
        }
        m_inKind = IN_NONE;
    };
    auto invalid = [this, &rx, &endInProgress]() {
        endInProgress(IbWcStatus::REM_INV_REQ_ERR);
        QueueNak(IbAethHeader::NAK_INVALID_REQUEST, rx.psn, true);
    };
    auto accessError = [this, &rx, &endInProgress]() {
        endInProgress(IbWcStatus::REM_ACCESS_ERR);
        QueueNak(IbAethHeader::NAK_REMOTE_ACCESS_ERROR, rx.psn, true);
    };
    auto notReady = [this, &rx, rnr]() {
        m_nakSent = true; // drop what follows silently until the retry arrives
        QueueNak(rnr, rx.psn, false);
    };
    switch (op)
    {
    case IbOpcode::RC_SEND_FIRST:
    case IbOpcode::RC_SEND_ONLY:
    case IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE:
    case IbOpcode::RC_SEND_MIDDLE:
    case IbOpcode::RC_SEND_LAST:
    case IbOpcode::RC_SEND_LAST_WITH_IMMEDIATE: {
        const bool first = op == IbOpcode::RC_SEND_FIRST || op == IbOpcode::RC_SEND_ONLY ||
                           op == IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE;
        const bool last = op != IbOpcode::RC_SEND_FIRST && op != IbOpcode::RC_SEND_MIDDLE;
        const bool full = !last; // First and Middle carry exactly one MTU
        if ((first ? m_inKind != IN_NONE : m_inKind != IN_SEND) ||
            (full ? n != m_pmtu : n > m_pmtu) || (last && !first && n == 0))
        {
            invalid();
            return;
        }
        if (first)
        {
            if (m_rq.Empty())
            {
                notReady();
                return;
            }
            m_inRecv = m_rq.Pop();
            m_inKind = IN_SEND;
            m_inOffset = 0;
        }
        if (static_cast<uint64_t>(m_inOffset) + n > m_inRecv.wr.sge.length)
        {
            Complete(m_recvCq, m_inRecv.wr.wrId, IbWcStatus::LOC_LEN_ERR, IbWcOpcode::RECV, 0);
            m_inKind = IN_NONE; // completed: not again as flushed
            invalid();
            return;
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
        break;
    }
    case IbOpcode::RC_RDMA_WRITE_FIRST:
    case IbOpcode::RC_RDMA_WRITE_ONLY:
    case IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
    case IbOpcode::RC_RDMA_WRITE_MIDDLE:
    case IbOpcode::RC_RDMA_WRITE_LAST:
    case IbOpcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE: {
        const bool first = op == IbOpcode::RC_RDMA_WRITE_FIRST ||
                           op == IbOpcode::RC_RDMA_WRITE_ONLY ||
                           op == IbOpcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
        const bool last =
            op != IbOpcode::RC_RDMA_WRITE_FIRST && op != IbOpcode::RC_RDMA_WRITE_MIDDLE;
        if (first ? m_inKind != IN_NONE : m_inKind != IN_WRITE)
        {
            invalid();
            return;
        }
        if (first)
        {
            const bool shapeOk =
                last ? (n == rx.dmaLen && n <= m_pmtu) : (n == m_pmtu && rx.dmaLen > m_pmtu);
            if (!shapeOk)
            {
                invalid();
                return;
            }
            IbMemoryRegion* mr = nullptr;
            if (!(m_attr.accessFlags & IB_ACCESS_REMOTE_WRITE))
            {
                invalid(); // the QP does not take WRITEs: invalid request, as rxe and hfi1
                return;
            }
            if (rx.dmaLen > 0 &&
                !(mr = RemoteRegion(rx.rkey, rx.va, rx.dmaLen, IB_ACCESS_REMOTE_WRITE)))
            {
                accessError();
                return;
            }
            if (rx.hasImm && m_rq.Empty())
            {
                notReady();
                return;
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
            const bool shapeOk = last ? (n >= 1 && n <= m_pmtu && after == m_inLen)
                                      : (n == m_pmtu && after < m_inLen);
            if (!shapeOk)
            {
                invalid();
                return;
            }
            if (rx.hasImm && m_rq.Empty())
            {
                notReady();
                return;
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
        break;
    }
    case IbOpcode::RC_RDMA_READ_REQUEST: {
        if (m_inKind != IN_NONE)
        {
            invalid();
            return;
        }
        IbMemoryRegion* mr = nullptr;
        if (!(m_attr.accessFlags & IB_ACCESS_REMOTE_READ) || m_attr.maxDestRdAtomic == 0)
        {
            invalid(); // the QP does not take READs (or has no responder resources)
            return;
        }
        if (rx.dmaLen > 0 && !(mr = RemoteRegion(rx.rkey, rx.va, rx.dmaLen, IB_ACCESS_REMOTE_READ)))
        {
            accessError();
            return;
        }
        m_msn = PsnAdd(m_msn, 1);
        const uint32_t npkts = QueueReadResponse(rx, mr);
        m_ePsn = PsnAdd(m_ePsn, npkts);
        m_ackCount = 0;
        Kick();
        return;
    }
    case IbOpcode::RC_COMPARE_SWAP:
    case IbOpcode::RC_FETCH_ADD: {
        if (m_inKind != IN_NONE || rx.va % 8 != 0 ||
            !(m_attr.accessFlags & IB_ACCESS_REMOTE_ATOMIC) || m_attr.maxDestRdAtomic == 0)
        {
            invalid(); // also when the QP does not take atomics or has no resources
            return;
        }
        IbMemoryRegion* mr = RemoteRegion(rx.rkey, rx.va, 8, IB_ACCESS_REMOTE_ATOMIC);
        if (mr == nullptr)
        {
            accessError();
            return;
        }
        const uint64_t orig = mr->ReadU64(rx.va);
        if (op == IbOpcode::RC_FETCH_ADD)
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
        r.readyAt = Simulator::Now() + m_hca->m_responseDelay;
        m_resp.push_back(r);
        ++m_rdAtomicQueued;
        m_ePsn = PsnAdd(m_ePsn, 1);
        m_ackCount = 0;
        Kick();
        return;
    }
    default:
        invalid();
        return;
    }
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
                r.readyAt = Simulator::Now() + m_hca->m_responseDelay;
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
                r.readyAt = Simulator::Now() + m_hca->m_responseDelay;
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
    wc.slid = rx.slid;
    if (byteLen > r.wr.sge.length)
    {
        wc.status = IbWcStatus::LOC_LEN_ERR;
        m_hca->DeliverCompletion(m_recvCq, wc);
        return;
    }
    Place(packet, rx, r.mr, r.wr.sge.addr + kUdGrhBytes);
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
        Simulator::Schedule(m_hca->m_pcieWriteLatency, [self, kind, len, addr]() {
            self->m_msgTrace(self->m_qpn, kind, len, addr);
        });
    }
}

// ---------------------------------------------------------------- receive

bool
IbQueuePair::Parse(Ptr<Packet> packet, Rx& rx) const
{
    const uint32_t size = packet->GetSize();
    if (size < kBaseHeaders + IbPacket::CRC_SIZE)
    {
        return false;
    }
    uint8_t h[kMaxHeaders];
    packet->CopyData(h, std::min(size, kMaxHeaders));
    if ((h[1] & 3) != IbLrhHeader::LNH_IBA_LOCAL)
    {
        return false;
    }
    rx.sl = h[1] >> 4;
    rx.slid = Be16(h + 6);
    rx.opcode = h[8];
    const uint32_t pad = (h[9] >> 4) & 3;
    rx.ackReq = (h[16] & 0x80) != 0;
    rx.psn = Be24(h + 17);
    if (!IbBthHeader::IsKnownOpcode(rx.opcode))
    {
        return false;
    }
    const uint8_t ext = IbBthHeader::ExtensionHeaders(rx.opcode);
    const uint32_t extBytes = IbBthHeader::ExtensionHeaderSize(rx.opcode);
    if (size < kBaseHeaders + extBytes + pad + IbPacket::CRC_SIZE)
    {
        return false;
    }
    const uint8_t* e = h + kBaseHeaders;
    if (ext & IbBthHeader::EXT_DETH)
    {
        rx.qkey = Be32(e);
        rx.srcQp = Be24(e + 5);
        e += 8;
    }
    if (ext & IbBthHeader::EXT_RETH)
    {
        rx.va = Be64(e);
        rx.rkey = Be32(e + 8);
        rx.dmaLen = Be32(e + 12);
        e += 16;
    }
    if (ext & IbBthHeader::EXT_ATOMIC_ETH)
    {
        rx.va = Be64(e);
        rx.rkey = Be32(e + 8);
        rx.swapAdd = Be64(e + 12);
        rx.compare = Be64(e + 20);
        e += 28;
    }
    if (ext & IbBthHeader::EXT_AETH)
    {
        rx.syndrome = e[0];
        rx.msn = Be24(e + 1);
        e += 4;
    }
    if (ext & IbBthHeader::EXT_ATOMIC_ACK_ETH)
    {
        rx.orig = Be64(e);
        e += 8;
    }
    if (ext & IbBthHeader::EXT_IMMDT)
    {
        rx.imm = Be32(e);
        rx.hasImm = true;
    }
    rx.hdrBytes = kBaseHeaders + extBytes;
    rx.payload = size - rx.hdrBytes - pad - IbPacket::CRC_SIZE;
    return true;
}

void
IbQueuePair::Receive(Ptr<Packet> packet)
{
    Rx rx;
    if (!Parse(packet, rx))
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
    if (rx.slid != m_attr.dlid)
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
        ReceiveResponse(rx, packet);
    }
    else if (rx.opcode <= IbOpcode::RC_FETCH_ADD)
    {
        ReceiveRequest(rx, packet);
    }
    else
    {
        ++m_counters.stateDrops;
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
    r.readyAt = Simulator::Now() + m_hca->m_responseDelay;
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

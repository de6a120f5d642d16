/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-perftest-application.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-range-checker.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbPerftestApplication");

NS_OBJECT_ENSURE_REGISTERED(IbPerftestApplication);

namespace
{

/// Test names, in the order of IbPerftestApplication::Test.
const char* const kTestNames[IbPerftestApplication::TEST_COUNT] =
    {"write_bw", "write_lat", "read_bw", "read_lat", "send_bw", "send_lat", "atomic_lat"};

/// perftest's MIN_ITER.
constexpr uint32_t kMinIterations = 5;
/// Largest samples dropped from the latency statistics (perftest's LAT_MEASURE_TAIL).
constexpr uint32_t kLatencyTail = 2;
/// perftest computes BW peak by default up to this many iterations.
constexpr uint32_t kPeakMaxIterations = 20000;
/// The atomic operand size.
constexpr uint64_t kAtomicBytes = 8;

/**
 * @param s a string
 * @return it in lower case
 */
std::string
Lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return s;
}

/**
 * @param t a time
 * @return it in microseconds, as a double
 */
double
Us(Time t)
{
    return static_cast<double>(t.GetTimeStep()) /
           static_cast<double>(MicroSeconds(1).GetTimeStep());
}

} // namespace

TypeId
IbPerftestApplication::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbPerftestApplication")
            .SetParent<Application>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbPerftestApplication>()
            .AddAttribute("Test",
                          "The perftest program: write_bw, write_lat, read_bw, read_lat, "
                          "send_bw, send_lat or atomic_lat.",
                          StringValue("write_lat"),
                          MakeStringAccessor(&IbPerftestApplication::SetTestName,
                                             &IbPerftestApplication::GetTestName),
                          MakeStringChecker())
            .AddAttribute("Role",
                          "client (drives the test, as perftest started with a server name) "
                          "or server.",
                          StringValue("client"),
                          MakeStringAccessor(&IbPerftestApplication::SetRoleName,
                                             &IbPerftestApplication::GetRoleName),
                          MakeStringChecker())
            .AddAttribute(
                "Size",
                "Message size in bytes (perftest -s); 0 = perftest's default for "
                "the test (65536 for bandwidth tests, 2 for latency tests). "
                "atomic_lat always uses 8.",
                UintegerValue(0),
                MakeUintegerAccessor(&IbPerftestApplication::m_size),
                MakeIbUintegerChecker<uint64_t>("IbPerftestApplication", "Size", 0, 0x80000000ULL))
            .AddAttribute("Iterations",
                          "Iterations per size (perftest -n, at least 5, at most 100,000,000: "
                          "each keeps its timestamps); 0 = perftest's default (5000 for "
                          "write_bw, 1000 for the other tests).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&IbPerftestApplication::m_iterations),
                          MakeIbUintegerChecker<uint32_t>("IbPerftestApplication",
                                                          "Iterations",
                                                          0,
                                                          MAX_ITERATIONS))
            .AddAttribute(
                "TxDepth",
                "Bandwidth tests: work requests kept outstanding (perftest -t).",
                UintegerValue(128),
                MakeUintegerAccessor(&IbPerftestApplication::m_txDepthAttr),
                MakeIbUintegerChecker<uint32_t>("IbPerftestApplication", "TxDepth", 1, 15000))
            .AddAttribute(
                "CqModeration",
                "Bandwidth tests: one work request in N is signaled (perftest -Q); "
                "at most TxDepth.",
                UintegerValue(100),
                MakeUintegerAccessor(&IbPerftestApplication::m_cqModAttr),
                MakeIbUintegerChecker<uint32_t>("IbPerftestApplication", "CqModeration", 1, 1024))
            .AddAttribute(
                "RxDepth",
                "Send tests: receive work requests kept posted (perftest -r).",
                UintegerValue(512),
                MakeUintegerAccessor(&IbPerftestApplication::m_rxDepthAttr),
                MakeIbUintegerChecker<uint32_t>("IbPerftestApplication", "RxDepth", 1, 16384))
            .AddAttribute("CqModeEvent",
                          "If true, completions are taken from the completion queues' "
                          "callbacks as they become visible (perftest -e, without an "
                          "interrupt cost); otherwise the CQs are polled every "
                          "PollInterval.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&IbPerftestApplication::m_cqModeEvent),
                          MakeBooleanChecker())
            .AddAttribute("PollInterval",
                          "Polling mode: period of the polling loop (CQs, and the buffer in "
                          "write_lat); 0 = continuous polling, completions are seen as soon "
                          "as they are visible.",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&IbPerftestApplication::m_pollInterval),
                          MakeIbTimeChecker("IbPerftestApplication", "PollInterval", Time(0)))
            .AddAttribute(
                "InlineSize",
                "WRITE and SEND messages of at most this many bytes are posted inline "
                "(perftest -I); -1 = perftest's default: 220 for write_lat, 236 for "
                "send_lat, 0 for the other tests, each limited to the HCA's MaxInlineData. "
                "A value above MaxInlineData is refused.",
                IntegerValue(-1),
                MakeIntegerAccessor(&IbPerftestApplication::m_inlineAttr),
                MakeIntegerChecker<int64_t>(-1, 4096))
            .AddAttribute("AtomicType",
                          "atomic_lat: FETCH_AND_ADD (perftest's default) or CMP_AND_SWAP.",
                          StringValue("FETCH_AND_ADD"),
                          MakeStringAccessor(&IbPerftestApplication::SetAtomicTypeName,
                                             &IbPerftestApplication::GetAtomicTypeName),
                          MakeStringChecker())
            .AddTraceSource("Result",
                            "A message size has been measured: its report line.",
                            MakeTraceSourceAccessor(&IbPerftestApplication::m_resultTrace),
                            "ns3::IbPerftestApplication::ResultTracedCallback")
            .AddTraceSource("Post",
                            "A work request of the test was posted: iteration and size.",
                            MakeTraceSourceAccessor(&IbPerftestApplication::m_postTrace),
                            "ns3::IbPerftestApplication::PostTracedCallback");
    return tid;
}

IbPerftestApplication::IbPerftestApplication()
    : m_test(WRITE_LAT),
      m_role(CLIENT),
      m_size(0),
      m_iterations(0),
      m_txDepthAttr(128),
      m_cqModAttr(100),
      m_rxDepthAttr(512),
      m_cqModeEvent(false),
      m_compareSwap(false),
      m_half(0),
      m_attached(false),
      m_started(false),
      m_begun(false),
      m_finished(false),
      m_active(false),
      m_sideDone(false),
      m_sizeIndex(0),
      m_scnt(0),
      m_ccnt(0),
      m_rcnt(0),
      m_landedPending(0),
      m_rposted(0)
{
    NS_LOG_FUNCTION(this);
}

IbPerftestApplication::~IbPerftestApplication()
{
    NS_LOG_FUNCTION(this);
}

void
IbPerftestApplication::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_pollEvent.Cancel();
    Detach();
    m_qp = nullptr;
    m_sendCq = nullptr;
    m_recvCq = nullptr;
    m_mr = nullptr;
    m_peer = nullptr;
    Application::DoDispose();
}

// ---------------------------------------------------------------- names and defaults

bool
IbPerftestApplication::ParseTest(const std::string& name, Test& test)
{
    std::string n = Lower(name);
    if (n.rfind("ib_", 0) == 0)
    {
        n = n.substr(3);
    }
    for (uint8_t i = 0; i < TEST_COUNT; ++i)
    {
        if (n == kTestNames[i])
        {
            test = static_cast<Test>(i);
            return true;
        }
    }
    return false;
}

std::string
IbPerftestApplication::TestName(Test test)
{
    return test < TEST_COUNT ? kTestNames[test] : "?";
}

std::string
IbPerftestApplication::ValidTestNames()
{
    std::string out;
    for (uint8_t i = 0; i < TEST_COUNT; ++i)
    {
        out += (i == 0 ? "" : ", ");
        out += kTestNames[i];
    }
    return out;
}

bool
IbPerftestApplication::IsBandwidthTest(Test test)
{
    return test == WRITE_BW || test == READ_BW || test == SEND_BW;
}

uint32_t
IbPerftestApplication::DefaultIterations(Test test)
{
    // perftest: DEF_ITERS_WB (5000) for RDMA WRITE bandwidth, DEF_ITERS (1000) otherwise.
    return test == WRITE_BW ? 5000 : 1000;
}

uint64_t
IbPerftestApplication::DefaultSize(Test test)
{
    if (test == ATOMIC_LAT)
    {
        return kAtomicBytes;
    }
    return IsBandwidthTest(test) ? 65536 : 2;
}

void
IbPerftestApplication::SetTestName(std::string name)
{
    Test t;
    NS_ABORT_MSG_UNLESS(ParseTest(name, t),
                        "IbPerftestApplication attribute Test='"
                            << name << "' is not a perftest test; use one of " << ValidTestNames()
                            << ".");
    m_test = t;
}

std::string
IbPerftestApplication::GetTestName() const
{
    return TestName(m_test);
}

void
IbPerftestApplication::SetRoleName(std::string name)
{
    const std::string n = Lower(name);
    NS_ABORT_MSG_UNLESS(n == "client" || n == "server",
                        "IbPerftestApplication attribute Role='" << name
                                                                 << "'; use client or server.");
    m_role = n == "client" ? CLIENT : SERVER;
}

std::string
IbPerftestApplication::GetRoleName() const
{
    return m_role == CLIENT ? "client" : "server";
}

void
IbPerftestApplication::SetAtomicTypeName(std::string name)
{
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) {
        return static_cast<char>(std::toupper(c));
    });
    NS_ABORT_MSG_UNLESS(n == "FETCH_AND_ADD" || n == "CMP_AND_SWAP",
                        "IbPerftestApplication attribute AtomicType='"
                            << name << "'; use FETCH_AND_ADD or CMP_AND_SWAP.");
    m_compareSwap = n == "CMP_AND_SWAP";
}

std::string
IbPerftestApplication::GetAtomicTypeName() const
{
    return m_compareSwap ? "CMP_AND_SWAP" : "FETCH_AND_ADD";
}

// ---------------------------------------------------------------- configuration

IbPerftestApplication::Test
IbPerftestApplication::GetTest() const
{
    return m_test;
}

IbPerftestApplication::Role
IbPerftestApplication::GetRole() const
{
    return m_role;
}

uint32_t
IbPerftestApplication::GetIterations() const
{
    const uint32_t n = m_iterations == 0 ? DefaultIterations(m_test) : m_iterations;
    NS_ABORT_MSG_IF(n < kMinIterations,
                    "IbPerftestApplication attribute Iterations=" << m_iterations
                                                                  << " is too small; perftest "
                                                                     "needs at least "
                                                                  << kMinIterations
                                                                  << " (0 = its default).");
    return n;
}

uint32_t
IbPerftestApplication::GetTxDepth() const
{
    if (!IsBandwidthTest(m_test))
    {
        return 1; // perftest's DEF_TX_LAT
    }
    return std::min(m_txDepthAttr, GetIterations());
}

uint32_t
IbPerftestApplication::GetRxDepth() const
{
    return std::min(m_rxDepthAttr, GetIterations());
}

void
IbPerftestApplication::SetSizes(const std::vector<uint64_t>& sizes)
{
    for (uint64_t size : sizes)
    {
        // The same range as the Size attribute (a message is at most 2^31 bytes, as in
        // verbs); before, larger sizes were cut to 32 bits and ran as other sizes.
        NS_ABORT_MSG_IF(size == 0 || size > 0x80000000ULL,
                        "IbPerftestApplication::SetSizes: size "
                            << size << " is out of range; give 1 to 2147483648 bytes");
    }
    m_sizes = sizes;
}

std::vector<uint64_t>
IbPerftestApplication::GetSizes() const
{
    if (m_test == ATOMIC_LAT)
    {
        return {kAtomicBytes}; // perftest: the size of atomic tests cannot be changed
    }
    if (!m_sizes.empty())
    {
        return m_sizes;
    }
    return {m_size == 0 ? DefaultSize(m_test) : m_size};
}

void
IbPerftestApplication::Setup(Ptr<IbQueuePair> qp,
                             Ptr<IbMemoryRegion> mr,
                             const IbPerftestEndpoint& remote)
{
    NS_LOG_FUNCTION(this << qp << mr);
    NS_ABORT_MSG_UNLESS(qp && mr, "IbPerftestApplication::Setup: a queue pair and a buffer");
    NS_ABORT_MSG_UNLESS(qp->GetType() == IbQpType::RC,
                        "IbPerftestApplication::Setup: the queue pair must be RC");
    m_qp = qp;
    m_sendCq = qp->GetSendCq();
    m_recvCq = qp->GetRecvCq();
    m_mr = mr;
    m_half = mr->GetLength() / 2;
    m_remote = remote;
    uint64_t largest = 0;
    for (uint64_t s : GetSizes())
    {
        largest = std::max(largest, s);
    }
    NS_ABORT_MSG_IF(largest > m_half,
                    "IbPerftestApplication::Setup: the buffer (" << mr->GetLength()
                                                                 << " bytes) must hold twice "
                                                                    "the largest message ("
                                                                 << largest << " bytes)");
}

IbPerftestEndpoint
IbPerftestApplication::GetLocalEndpoint() const
{
    IbPerftestEndpoint e;
    if (m_qp)
    {
        e.qpn = m_qp->GetQpNum();
        e.psn = m_qp->GetAttr().sqPsn;
        e.lid = m_qp->GetHca()->GetLid(m_qp->GetAttr().portNum);
    }
    if (m_mr)
    {
        e.rkey = m_mr->GetRkey();
        e.addr = m_mr->GetAddr() + m_half;
    }
    return e;
}

void
IbPerftestApplication::SetPeer(Ptr<IbPerftestApplication> peer)
{
    m_peer = peer;
}

bool
IbPerftestApplication::IsFinished() const
{
    return m_finished;
}

IbPerftestResult
IbPerftestApplication::GetResults() const
{
    return m_results.empty() ? IbPerftestResult() : m_results.back();
}

const std::vector<IbPerftestResult>&
IbPerftestApplication::GetAllResults() const
{
    return m_results;
}

// ---------------------------------------------------------------- start and stop

void
IbPerftestApplication::StartApplication()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_UNLESS(m_qp && m_mr && m_peer,
                        "IbPerftestApplication on node "
                            << GetNode()->GetId()
                            << " was not set up: install it with IbPerftestHelper");
    NS_ABORT_MSG_IF(m_peer->m_test != m_test,
                    "IbPerftestApplication: the two sides run different tests ("
                        << TestName(m_test) << ", " << TestName(m_peer->m_test) << ")");
    NS_ABORT_MSG_IF(m_peer->m_role == m_role,
                    "IbPerftestApplication: both sides are " << GetRoleName());
    const uint32_t maxInline = m_qp->GetHca()->GetMaxInlineData();
    if (m_inlineAttr < 0)
    {
        const uint32_t def = m_test == WRITE_LAT ? 220 : m_test == SEND_LAT ? 236 : 0;
        m_inline = std::min(def, maxInline);
    }
    else
    {
        NS_ABORT_MSG_IF(m_inlineAttr > maxInline,
                        "IbPerftestApplication attribute InlineSize="
                            << m_inlineAttr << " is above the HCA's MaxInlineData of " << maxInline
                            << "; use at most " << maxInline << " or raise IbHca::MaxInlineData");
        m_inline = static_cast<uint32_t>(m_inlineAttr);
    }
    m_started = true;
    m_pollOrigin = Simulator::Now();
    Attach();
    TryBegin();
}

void
IbPerftestApplication::StopApplication()
{
    NS_LOG_FUNCTION(this);
    m_started = false;
    m_active = false;
    m_pollEvent.Cancel();
    Detach();
}

void
IbPerftestApplication::Attach()
{
    if (m_attached)
    {
        return;
    }
    m_attached = true;
    if (m_cqModeEvent)
    {
        m_sendCq->SetCompletionCallback(MakeCallback(&IbPerftestApplication::SendCqCallback, this));
        m_recvCq->SetCompletionCallback(MakeCallback(&IbPerftestApplication::RecvCqCallback, this));
    }
    else
    {
        m_sendCq->TraceConnectWithoutContext(
            "Completion",
            MakeCallback(&IbPerftestApplication::CqActivity, this));
        m_recvCq->TraceConnectWithoutContext(
            "Completion",
            MakeCallback(&IbPerftestApplication::CqActivity, this));
    }
    if (m_test == WRITE_LAT)
    {
        m_qp->TraceConnectWithoutContext("MessageReceived",
                                         MakeCallback(&IbPerftestApplication::MessageLanded, this));
    }
}

void
IbPerftestApplication::Detach()
{
    if (!m_attached)
    {
        return;
    }
    m_attached = false;
    if (m_cqModeEvent)
    {
        m_sendCq->SetCompletionCallback(MakeNullCallback<void, const IbWorkCompletion&>());
        m_recvCq->SetCompletionCallback(MakeNullCallback<void, const IbWorkCompletion&>());
    }
    else
    {
        m_sendCq->TraceDisconnectWithoutContext(
            "Completion",
            MakeCallback(&IbPerftestApplication::CqActivity, this));
        m_recvCq->TraceDisconnectWithoutContext(
            "Completion",
            MakeCallback(&IbPerftestApplication::CqActivity, this));
    }
    if (m_test == WRITE_LAT)
    {
        m_qp->TraceDisconnectWithoutContext(
            "MessageReceived",
            MakeCallback(&IbPerftestApplication::MessageLanded, this));
    }
}

void
IbPerftestApplication::TryBegin()
{
    // perftest's client connects to the listening server: the test begins once both
    // processes are up.
    const IbPerftestApplication* client = m_role == CLIENT ? this : PeekPointer(m_peer);
    if (!m_started || !m_peer->m_started || client->m_begun)
    {
        return;
    }
    Ptr<IbPerftestApplication> c = m_role == CLIENT ? Ptr<IbPerftestApplication>(this) : m_peer;
    c->m_begun = true;
    Simulator::ScheduleNow(&IbPerftestApplication::BeginSize, c, 0);
}

// ---------------------------------------------------------------- sizes

void
IbPerftestApplication::BeginSize(uint32_t index)
{
    NS_LOG_FUNCTION(this << index);
    if (!m_started || !m_peer->m_started)
    {
        return;
    }
    const std::vector<uint64_t> sizes = GetSizes();
    SizeRun run;
    run.bytes = sizes[index];
    run.iters = GetIterations();
    run.txDepth = GetTxDepth();
    run.cqMod = IsBandwidthTest(m_test) ? std::min(m_cqModAttr, run.txDepth) : 1;
    run.rxDepth = GetRxDepth();
    m_sizeIndex = index;
    m_peer->m_sizeIndex = index;
    // The server gets ready first (its receives posted), as after perftest's handshake.
    m_peer->PrepareSize(run);
    PrepareSize(run);
    Step();
}

void
IbPerftestApplication::PrepareSize(const SizeRun& run)
{
    NS_LOG_FUNCTION(this << run.bytes << run.iters);
    m_run = run;
    m_active = true;
    m_sideDone = false;
    m_scnt = 0;
    m_ccnt = 0;
    m_rcnt = 0;
    m_landedPending = 0;
    m_rposted = 0;
    m_tposted.assign(run.iters, Time(0));
    m_tcompleted.assign(run.iters, Time(0));
    const bool passive = m_role == SERVER && (m_test == WRITE_BW || m_test == READ_BW ||
                                              m_test == READ_LAT || m_test == ATOMIC_LAT);
    const bool receives = (m_test == SEND_BW && m_role == SERVER) || m_test == SEND_LAT;
    if (receives)
    {
        while (m_rposted < run.rxDepth)
        {
            PostReceive();
        }
    }
    if (passive)
    {
        m_sideDone = true; // nothing to do: the HCA answers without the host
    }
}

void
IbPerftestApplication::SideDone()
{
    if (m_sideDone)
    {
        return;
    }
    NS_LOG_LOGIC("side " << GetRoleName() << " done with " << m_run.bytes << " bytes");
    m_sideDone = true;
    if (m_role == CLIENT)
    {
        MaybeFinishSize();
    }
    else
    {
        m_peer->MaybeFinishSize();
    }
}

void
IbPerftestApplication::MaybeFinishSize()
{
    if (!m_active || !m_sideDone || !m_peer->m_sideDone)
    {
        return;
    }
    m_active = false;
    m_peer->m_active = false;
    const std::string name = TestName(m_test);
    IbPerftestResult r;
    if (IsBandwidthTest(m_test))
    {
        r = ComputeBandwidth(m_run.bytes,
                             m_tposted,
                             m_tcompleted,
                             m_run.cqMod,
                             m_run.iters <= kPeakMaxIterations);
    }
    else
    {
        r = ComputeLatency(m_run.bytes, m_tposted, m_test == WRITE_LAT || m_test == SEND_LAT);
    }
    r.test = name;
    m_results.push_back(r);
    m_resultTrace(r);
    if (m_test == WRITE_LAT || m_test == SEND_LAT)
    {
        // The server measured the ping-pong too, from its own post times.
        IbPerftestResult s = ComputeLatency(m_run.bytes, m_peer->m_tposted, true);
        s.test = name;
        m_peer->ReceivePeerResult(s);
    }
    else
    {
        m_peer->ReceivePeerResult(r);
    }
    if (m_sizeIndex + 1 < GetSizes().size())
    {
        Simulator::ScheduleNow(&IbPerftestApplication::BeginSize, this, m_sizeIndex + 1);
    }
    else
    {
        m_finished = true;
        m_peer->m_finished = true;
    }
}

void
IbPerftestApplication::ReceivePeerResult(const IbPerftestResult& r)
{
    m_results.push_back(r);
    m_resultTrace(r);
}

// ---------------------------------------------------------------- the test loops

void
IbPerftestApplication::Step()
{
    if (!m_active || m_sideDone)
    {
        return;
    }
    const uint32_t n = m_run.iters;
    switch (m_test)
    {
    case WRITE_BW:
    case READ_BW:
    case SEND_BW:
        if (m_role == CLIENT)
        {
            PumpBandwidth();
        }
        else if (m_rcnt >= n)
        {
            SideDone(); // send_bw server: every message received
        }
        return;
    case READ_LAT:
    case ATOMIC_LAT:
        // Post, wait for the completion, post the next one.
        if (m_scnt < n && m_ccnt == m_scnt)
        {
            PostIteration(m_scnt, true);
        }
        else if (m_ccnt == n)
        {
            SideDone();
        }
        return;
    case WRITE_LAT:
    case SEND_LAT: {
        // Ping-pong: message k goes once our message k-1 has completed and the peer's
        // message k-1 (client) or k (server) has arrived.
        const uint32_t need = m_role == CLIENT ? m_scnt : m_scnt + 1;
        if (m_scnt < n && m_ccnt == m_scnt && m_rcnt >= need)
        {
            PostIteration(m_scnt, true);
        }
        else if (m_scnt == n && m_ccnt == n && m_rcnt >= n)
        {
            SideDone();
        }
        return;
    }
    default:
        return;
    }
}

void
IbPerftestApplication::PumpBandwidth()
{
    const uint32_t n = m_run.iters;
    while (m_scnt < n && m_scnt - m_ccnt < m_run.txDepth)
    {
        const uint32_t k = m_scnt;
        const bool signaled = (k % m_run.cqMod == m_run.cqMod - 1) || k == n - 1;
        PostIteration(k, signaled);
    }
}

void
IbPerftestApplication::PostIteration(uint32_t k, bool signaled)
{
    IbSendWr wr;
    wr.wrId = k;
    wr.signaled = signaled;
    wr.rkey = m_remote.rkey;
    wr.remoteAddr = m_remote.addr;
    // Sent from the first half of the buffer; READ data lands in the second half.
    wr.sge.addr = m_mr->GetAddr();
    wr.sge.length = static_cast<uint32_t>(m_run.bytes);
    wr.sge.lkey = m_mr->GetLkey();
    switch (m_test)
    {
    case WRITE_BW:
    case WRITE_LAT:
        wr.opcode = IbWrOpcode::RDMA_WRITE;
        break;
    case READ_BW:
    case READ_LAT:
        wr.opcode = IbWrOpcode::RDMA_READ;
        wr.sge.addr = m_mr->GetAddr() + m_half;
        break;
    case SEND_BW:
    case SEND_LAT:
        wr.opcode = IbWrOpcode::SEND;
        break;
    case ATOMIC_LAT:
        wr.opcode =
            m_compareSwap ? IbWrOpcode::ATOMIC_CMP_AND_SWP : IbWrOpcode::ATOMIC_FETCH_AND_ADD;
        wr.sge.addr = m_mr->GetAddr() + m_half;
        wr.sge.length = kAtomicBytes;
        wr.compareAdd = m_compareSwap ? 0 : 1;
        wr.swap = 0;
        break;
    default:
        break;
    }
    wr.inlineData = (wr.opcode == IbWrOpcode::RDMA_WRITE || wr.opcode == IbWrOpcode::SEND) &&
                    m_run.bytes <= m_inline;
    m_tposted[k] = Simulator::Now();
    ++m_scnt;
    std::string error;
    NS_ABORT_MSG_UNLESS(m_qp->PostSend(wr, &error),
                        "IbPerftestApplication (" << TestName(m_test) << ", " << GetRoleName()
                                                  << "): " << error);
    m_postTrace(k, m_run.bytes);
}

void
IbPerftestApplication::PostReceive()
{
    IbRecvWr wr;
    wr.wrId = m_rposted++;
    wr.sge.addr = m_mr->GetAddr() + m_half;
    wr.sge.length = static_cast<uint32_t>(m_run.bytes);
    wr.sge.lkey = m_mr->GetLkey();
    std::string error;
    NS_ABORT_MSG_UNLESS(m_qp->PostRecv(wr, &error),
                        "IbPerftestApplication (" << TestName(m_test) << ", " << GetRoleName()
                                                  << "): " << error);
}

// ---------------------------------------------------------------- completions

void
IbPerftestApplication::HandleSendCompletion(const IbWorkCompletion& wc)
{
    NS_ABORT_MSG_UNLESS(wc.status == IbWcStatus::SUCCESS,
                        "IbPerftestApplication (" << TestName(m_test) << ", " << GetRoleName()
                                                  << "): " << m_qp->DescribeCompletion(wc));
    if (!m_active || wc.wrId >= m_run.iters)
    {
        return;
    }
    if (IsBandwidthTest(m_test))
    {
        // A signaled WR retires itself and every unsignaled one before it.
        m_tcompleted[wc.wrId] = Simulator::Now();
        m_ccnt = std::max<uint32_t>(m_ccnt, static_cast<uint32_t>(wc.wrId) + 1);
        if (m_ccnt >= m_run.iters)
        {
            SideDone();
            return;
        }
    }
    else
    {
        ++m_ccnt;
    }
    Step();
}

void
IbPerftestApplication::HandleRecvCompletion(const IbWorkCompletion& wc)
{
    NS_ABORT_MSG_UNLESS(wc.status == IbWcStatus::SUCCESS,
                        "IbPerftestApplication (" << TestName(m_test) << ", " << GetRoleName()
                                                  << "): receive " << m_qp->DescribeCompletion(wc));
    if (!m_active)
    {
        return;
    }
    ++m_rcnt;
    // perftest re-posts a receive while enough messages remain to need it.
    if (m_rposted < m_run.iters && m_rcnt + m_run.rxDepth <= m_run.iters)
    {
        PostReceive();
    }
    Step();
}

void
IbPerftestApplication::SendCqCallback(const IbWorkCompletion& wc)
{
    if (m_started)
    {
        HandleSendCompletion(wc);
    }
}

void
IbPerftestApplication::RecvCqCallback(const IbWorkCompletion& wc)
{
    if (m_started)
    {
        HandleRecvCompletion(wc);
    }
}

void
IbPerftestApplication::CqActivity(const IbWorkCompletion& wc)
{
    SchedulePoll();
}

void
IbPerftestApplication::MessageLanded(uint32_t qpn, IbWrOpcode kind, uint32_t length, uint64_t addr)
{
    if (!m_started || !m_active)
    {
        return;
    }
    if (m_cqModeEvent)
    {
        ++m_rcnt;
        Step();
    }
    else
    {
        ++m_landedPending;
        SchedulePoll();
    }
}

void
IbPerftestApplication::SchedulePoll()
{
    if (!m_started || !m_pollEvent.IsExpired())
    {
        return;
    }
    Time delay(0);
    if (m_pollInterval.IsStrictlyPositive())
    {
        // The loop polls at origin + k * interval: the first such instant not before now.
        const int64_t elapsed = (Simulator::Now() - m_pollOrigin).GetTimeStep();
        const int64_t period = m_pollInterval.GetTimeStep();
        const int64_t k = (elapsed + period - 1) / period;
        delay = TimeStep(k * period - elapsed);
    }
    // Always through the scheduler: the Completion trace fires before the CQ holds it.
    m_pollEvent = Simulator::Schedule(delay, &IbPerftestApplication::Poll, this);
}

void
IbPerftestApplication::Poll()
{
    if (!m_started)
    {
        return;
    }
    m_rcnt += m_landedPending;
    m_landedPending = 0;
    for (const IbWorkCompletion& wc : m_sendCq->Poll(std::numeric_limits<uint32_t>::max()))
    {
        HandleSendCompletion(wc);
    }
    for (const IbWorkCompletion& wc : m_recvCq->Poll(std::numeric_limits<uint32_t>::max()))
    {
        HandleRecvCompletion(wc);
    }
    Step();
}

// ---------------------------------------------------------------- reports

IbPerftestResult
IbPerftestApplication::ComputeBandwidth(uint64_t bytes,
                                        const std::vector<Time>& tposted,
                                        const std::vector<Time>& tcompleted,
                                        uint32_t cqMod,
                                        bool peak)
{
    IbPerftestResult r;
    r.bandwidth = true;
    r.bytes = bytes;
    const size_t n = std::min(tposted.size(), tcompleted.size());
    r.iterations = static_cast<uint32_t>(n);
    if (n == 0 || cqMod == 0)
    {
        return r;
    }
    r.firstPost = tposted.front();
    r.lastEvent = tcompleted[n - 1];
    const double secs = (tcompleted[n - 1] - tposted.front()).GetSeconds();
    if (secs <= 0)
    {
        return r;
    }
    r.bwAvgGbps = static_cast<double>(bytes) * n * 8.0 / secs / 1e9;
    r.msgRateMpps = n / secs / 1e6;
    if (peak)
    {
        // The fastest stretch from a post to a later signaled completion, per message.
        double best = std::numeric_limits<double>::infinity();
        auto consider = [&](size_t i, size_t j) {
            const double t = (tcompleted[j] - tposted[i]).GetSeconds() / (j - i + 1);
            best = std::min(best, t);
        };
        for (size_t i = 0; i < n; ++i)
        {
            for (size_t j = (i / cqMod) * cqMod + cqMod - 1; j < n; j += cqMod)
            {
                consider(i, j);
            }
            if (n % cqMod != 0)
            {
                consider(i, n - 1);
            }
        }
        if (best > 0 && std::isfinite(best))
        {
            r.bwPeakGbps = static_cast<double>(bytes) * 8.0 / best / 1e9;
        }
    }
    r.valid = true;
    return r;
}

IbPerftestResult
IbPerftestApplication::ComputeLatency(uint64_t bytes, const std::vector<Time>& tposted, bool halve)
{
    IbPerftestResult r;
    r.bandwidth = false;
    r.bytes = bytes;
    r.iterations = static_cast<uint32_t>(tposted.size());
    if (tposted.size() < kMinIterations)
    {
        return r;
    }
    r.firstPost = tposted.front();
    r.lastEvent = tposted.back();
    const double factor = halve ? 2.0 : 1.0;
    std::vector<double> d;
    d.reserve(tposted.size() - 1);
    for (size_t i = 0; i + 1 < tposted.size(); ++i)
    {
        d.push_back(Us(tposted[i + 1] - tposted[i]) / factor);
    }
    std::sort(d.begin(), d.end());
    const size_t m = d.size() - kLatencyTail; // samples kept
    r.tMinUs = d[0];
    r.tMaxUs = d[m];
    r.tTypicalUs = (m % 2 == 0) ? (d[m / 2] + d[m / 2 - 1]) / 2 : d[m / 2];
    double sum = 0;
    for (size_t i = 0; i < m; ++i)
    {
        sum += d[i];
    }
    r.tAvgUs = sum / m;
    double var = 0;
    for (size_t i = 0; i < m; ++i)
    {
        var += (d[i] - r.tAvgUs) * (d[i] - r.tAvgUs);
    }
    r.tStdevUs = std::sqrt(var / m);
    r.t99Us = d[static_cast<size_t>(std::ceil(m * 0.99))];
    r.t999Us = d[static_cast<size_t>(std::ceil(m * 0.999))];
    r.valid = true;
    return r;
}

void
IbPerftestApplication::PrintTestInfo(std::ostream& os) const
{
    static const char* const kBanner[TEST_COUNT] = {"RDMA_Write BW Test",
                                                    "RDMA_Write Latency Test",
                                                    "RDMA_Read BW Test",
                                                    "RDMA_Read Latency Test",
                                                    "Send BW Test",
                                                    "Send Latency Test",
                                                    "Atomic Latency Test"};
    const std::string line(87, '-');
    os << line << "\n";
    os << "                    " << kBanner[m_test];
    if (m_test == ATOMIC_LAT)
    {
        os << " (" << GetAtomicTypeName() << ")";
    }
    os << "\n";
    os << " Number of qps   : 1\t\tTransport type : IB (ns-3 IbHca model)\n";
    os << " Connection type : RC\t\tRole           : " << GetRoleName() << "\n";
    if (IsBandwidthTest(m_test))
    {
        os << " TX depth        : " << GetTxDepth() << "\n";
        os << " CQ Moderation   : " << std::min(m_cqModAttr, GetTxDepth()) << "\n";
    }
    if (m_test == SEND_BW || m_test == SEND_LAT)
    {
        os << " RX depth        : " << GetRxDepth() << "\n";
    }
    if (m_qp)
    {
        os << " Mtu             : " << m_qp->GetAttr().pathMtu << "[B]\n";
    }
    if (m_test == WRITE_BW || m_test == WRITE_LAT || m_test == SEND_BW || m_test == SEND_LAT)
    {
        os << " Max inline data : " << m_inline << "[B]\n";
    }
    os << " Link type       : IB\n";
    if (m_test == READ_BW || m_test == READ_LAT || m_test == ATOMIC_LAT)
    {
        os << " Outstand reads  : " << (m_qp ? unsigned(m_qp->GetAttr().maxRdAtomic) : 0u) << "\n";
    }
    os << " Iterations      : " << GetIterations() << "\n";
    os << " Completions     : ";
    if (m_cqModeEvent)
    {
        os << "events (CQ callback)\n";
    }
    else if (m_pollInterval.IsStrictlyPositive())
    {
        os << "polling every " << m_pollInterval.GetNanoSeconds() << " ns\n";
    }
    else
    {
        os << "polling (continuous)\n";
    }
    if (m_qp)
    {
        const IbPerftestEndpoint l = GetLocalEndpoint();
        char buf[160];
        std::snprintf(
            buf,
            sizeof(buf),
            " local address:  LID 0x%04x QPN 0x%06x PSN 0x%06x RKey 0x%08x VAddr 0x%016llx\n",
            l.lid,
            l.qpn,
            l.psn,
            l.rkey,
            static_cast<unsigned long long>(l.addr));
        os << buf;
        std::snprintf(
            buf,
            sizeof(buf),
            " remote address: LID 0x%04x QPN 0x%06x PSN 0x%06x RKey 0x%08x VAddr 0x%016llx\n",
            m_remote.lid,
            m_remote.qpn,
            m_remote.psn,
            m_remote.rkey,
            static_cast<unsigned long long>(m_remote.addr));
        os << buf;
    }
    os << line << "\n";
}

void
IbPerftestApplication::PrintHeader(std::ostream& os, bool bandwidth)
{
    if (bandwidth)
    {
        os << " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n";
    }
    else
    {
        os << " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
              "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n";
    }
}

void
IbPerftestApplication::PrintResult(std::ostream& os, const IbPerftestResult& r)
{
    char buf[256];
    if (r.bandwidth)
    {
        std::snprintf(buf,
                      sizeof(buf),
                      " %-10llu %-14u %-18.2f %-20.2f %.6f\n",
                      static_cast<unsigned long long>(r.bytes),
                      r.iterations,
                      r.bwPeakGbps,
                      r.bwAvgGbps,
                      r.msgRateMpps);
    }
    else
    {
        std::snprintf(buf,
                      sizeof(buf),
                      " %-7llu %-11u %-14.2f %-14.2f %-16.2f %-14.2f %-15.2f %-22.2f %.2f\n",
                      static_cast<unsigned long long>(r.bytes),
                      r.iterations,
                      r.tMinUs,
                      r.tMaxUs,
                      r.tTypicalUs,
                      r.tAvgUs,
                      r.tStdevUs,
                      r.t99Us,
                      r.t999Us);
    }
    os << buf;
}

} // namespace ns3

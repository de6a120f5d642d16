/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sharp-collective-algorithm.h"

#include "sharp-aggregation-manager.h"

#include "ns3/abort.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>
#include <iostream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SharpCollectiveAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(SharpCollectiveAlgorithm);

/// The short name CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_sharpName("sharp", "ns3::SharpCollectiveAlgorithm");

namespace
{
/// Bytes a UD receive buffer keeps in front of the payload for the GRH.
constexpr uint32_t kGrhRoom = 40;
} // namespace

TypeId
SharpCollectiveAlgorithm::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SharpCollectiveAlgorithm")
            .SetParent<CollectiveAlgorithm>()
            .SetGroupName("Infiniband")
            .AddConstructor<SharpCollectiveAlgorithm>()
            .AddAttribute("FallbackAlgorithm",
                          "Host-based algorithm for what SHARP does not serve: ring, tree, hd, rd, "
                          "or none (a refused tree then aborts with its reason).",
                          StringValue("ring"),
                          MakeStringAccessor(&SharpCollectiveAlgorithm::m_fallbackName),
                          MakeStringChecker())
            .AddAttribute("SatThreshold",
                          "Operations larger than this many bytes use streaming aggregation "
                          "(SAT); smaller ones the low-latency channel (LLT). Default 4096: "
                          "where the model's SAT overtakes LLT (between 4 and 8 KiB).",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&SharpCollectiveAlgorithm::m_satThreshold),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("LltFragmentSize",
                          "Largest low-latency fragment, bytes (SHARP v1 LLT payload: 256).",
                          UintegerValue(256),
                          MakeUintegerAccessor(&SharpCollectiveAlgorithm::m_lltFragment),
                          MakeIbUintegerChecker<uint32_t>("SharpCollectiveAlgorithm",
                                                          "LltFragmentSize",
                                                          8,
                                                          4096))
            .AddAttribute("SatFragmentSize",
                          "Largest streaming fragment, bytes (one packet: at most the path "
                          "MTU, to which it is lowered).",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&SharpCollectiveAlgorithm::m_satFragment),
                          MakeIbUintegerChecker<uint32_t>("SharpCollectiveAlgorithm",
                                                          "SatFragmentSize",
                                                          64,
                                                          4096))
            .AddAttribute(
                "ServiceLevel",
                "Service level of SHARP packets.",
                UintegerValue(0),
                MakeUintegerAccessor(&SharpCollectiveAlgorithm::m_sl),
                MakeIbUintegerChecker<uint8_t>("SharpCollectiveAlgorithm", "ServiceLevel", 0, 15))
            .AddAttribute(
                "OperationTimeout",
                "An operation in the network that gets no result for this long is taken "
                "as lost and runs again host-based with FallbackAlgorithm (0 = never). A "
                "tree that loses a route at a reroute loses its operations at once; this "
                "covers cables that fail and come back without a reroute "
                "(IbSubnetManager RerouteOnLinkChange false).",
                TimeValue(Time(0)),
                MakeTimeAccessor(&SharpCollectiveAlgorithm::m_opTimeout),
                MakeIbTimeChecker("SharpCollectiveAlgorithm", "OperationTimeout", Time(0)));
    return tid;
}

SharpCollectiveAlgorithm::SharpCollectiveAlgorithm()
    : m_fallbackName("ring"),
      m_satThreshold(4096),
      m_lltFragment(256),
      m_satFragment(4096),
      m_sl(0),
      m_opTimeout(0),
      m_seqAlloc{{0, 0}},
      m_recvStride(0),
      m_inNetwork(0),
      m_fallbacks(0),
      m_prodOps(0),
      m_lltInstead(0)
{
}

SharpCollectiveAlgorithm::~SharpCollectiveAlgorithm()
{
    Release(); // (dropped without Dispose, as a communicator drops its algorithm)
}

void
SharpCollectiveAlgorithm::Release()
{
    // The receive CQs would call this object back; the HCAs keep the queue pairs and
    // regions, and the aggregation manager the tree (and a streaming flow on each of its
    // switches while a streaming operation is in flight), unless they are given back: a
    // dropped communicator's tree counted against MaxTrees for the rest of the run.
    for (auto& r : m_ranks)
    {
        if (r.rcq)
        {
            r.rcq->SetCompletionCallback(MakeNullCallback<void, const IbWorkCompletion&>());
        }
        if (r.hca)
        {
            r.hca->Release(r.qp, {r.sendMr, r.recvMr});
        }
    }
    m_ranks.clear();
    if (m_watchdogArmed)
    {
        Simulator::Cancel(m_watchdog);
        m_watchdogArmed = false;
    }
    if (m_tree)
    {
        m_tree->brokenCallback = Callback<void>();
    }
    if (m_am && m_tree)
    {
        if (m_satOps > 0)
        {
            m_am->ReleaseStreaming(m_tree);
            m_satOps = 0;
        }
        m_am->DestroyTree(m_tree);
    }
    m_tree = nullptr;
    m_am = nullptr;
}

void
SharpCollectiveAlgorithm::DoDispose()
{
    Release();
    m_fallback = nullptr;
    m_ops[0].clear();
    m_ops[1].clear();
    CollectiveAlgorithm::DoDispose();
}

std::string
SharpCollectiveAlgorithm::GetName() const
{
    return "sharp";
}

Ptr<SharpTree>
SharpCollectiveAlgorithm::GetTree() const
{
    return m_tree;
}

std::string
SharpCollectiveAlgorithm::GetRefusal() const
{
    return m_refusal;
}

uint64_t
SharpCollectiveAlgorithm::GetInNetworkOps() const
{
    return m_inNetwork;
}

uint64_t
SharpCollectiveAlgorithm::GetFallbackOps() const
{
    return m_fallbacks;
}

uint64_t
SharpCollectiveAlgorithm::GetProdOps() const
{
    return m_prodOps;
}

uint64_t
SharpCollectiveAlgorithm::GetLltInsteadOfSatOps() const
{
    return m_lltInstead;
}

Ptr<CollectiveAlgorithm>
SharpCollectiveAlgorithm::Fallback() const
{
    if (!m_fallback)
    {
        NS_ABORT_MSG_IF(
            m_fallbackName == "none",
            "SharpCollectiveAlgorithm: SHARP cannot run this operation ("
                << (m_tree && m_tree->broken
                        ? "its aggregation tree lost a link with the operation in flight"
                    : m_tree ? "reduce-scatter, allgather, broadcast and PROD reductions are "
                               "host-based"
                             : "no aggregation tree: " + m_refusal)
                << ") and FallbackAlgorithm is none; set it to ring, tree or hd");
        NS_ABORT_MSG_IF(m_fallbackName == "sharp",
                        "SharpCollectiveAlgorithm: FallbackAlgorithm cannot be sharp");
        const_cast<SharpCollectiveAlgorithm*>(this)->m_fallback =
            CollectiveAlgorithm::CreateByName(m_fallbackName);
    }
    return m_fallback;
}

bool
SharpCollectiveAlgorithm::Setup(Ptr<SharpAggregationManager> am,
                                const std::vector<Ptr<IbHca>>& hcas)
{
    NS_LOG_FUNCTION(this << hcas.size());
    NS_ABORT_MSG_UNLESS(am, "SharpCollectiveAlgorithm: no aggregation manager (SharpHelper)");
    NS_ABORT_MSG_UNLESS(m_ranks.empty(), "SharpCollectiveAlgorithm: Setup called twice");
    NS_ABORT_MSG_UNLESS(m_fallbackName == "none" || m_fallbackName == "ring" ||
                            m_fallbackName == "tree" || m_fallbackName == "hd" ||
                            m_fallbackName == "rd",
                        "SharpCollectiveAlgorithm: FallbackAlgorithm '"
                            << m_fallbackName << "' is not one of ring, tree, hd, rd, none");
    m_am = am;
    if (hcas.size() == 1)
    {
        // One rank: every operation is already complete where it starts (the communicator
        // finishes it inside Start); no tree, no fallback and no notice.
        m_ranks.resize(1);
        m_ranks[0].hca = hcas[0];
        m_singleRank = true;
        return true;
    }
    uint32_t hostMtu = UINT32_MAX;
    for (const auto& h : hcas)
    {
        hostMtu = std::min<uint32_t>(hostMtu, h->GetPort(1)->GetIbMtu());
    }
    // Each channel's fragment is lowered to the hosts' MTU on its own (capping LLT by the
    // SAT size made a small SatFragmentSize shrink the low-latency fragments too).
    const uint32_t satFragment = std::min(m_satFragment, hostMtu);
    const uint32_t lltFragment = std::min(m_lltFragment, hostMtu);
    m_ranks.resize(hcas.size());
    std::vector<uint32_t> qpns(hcas.size());
    for (uint32_t r = 0; r < hcas.size(); ++r)
    {
        Rank& rk = m_ranks[r];
        rk.hca = hcas[r];
        rk.scq = hcas[r]->CreateCq(16);
        rk.rcq = hcas[r]->CreateCq(65536);
        rk.rcq->SetCompletionCallback(
            MakeCallback(&SharpCollectiveAlgorithm::RecvDone, this).Bind(r));
        rk.qp = hcas[r]->CreateQp(IbQpType::UD, rk.scq, rk.rcq, 65536, 65536);
        IbQpAttr attr;
        attr.portNum = 1;
        attr.qkey = SharpTree::QKEY;
        for (IbQpState s : {IbQpState::INIT, IbQpState::RTR, IbQpState::RTS})
        {
            attr.state = s;
            std::string err;
            NS_ABORT_MSG_UNLESS(rk.qp->Modify(attr, &err), "SharpCollectiveAlgorithm: " << err);
        }
        qpns[r] = rk.qp->GetQpNum();
    }
    m_treeFragments = {lltFragment, satFragment};
    m_tree = am->CreateTree(hcas, qpns, lltFragment, satFragment, m_sl, &m_refusal);
    if (!m_tree)
    {
        NS_ABORT_MSG_IF(m_fallbackName == "none",
                        "SharpCollectiveAlgorithm: the aggregation manager refused a tree for "
                            << hcas.size() << " hosts: " << m_refusal
                            << " (FallbackAlgorithm is none; set ring, tree or hd to run "
                               "host-based instead)");
        // Said once per communicator, whatever the log level: results of a run meant to
        // measure SHARP are otherwise host-based without a word.
        std::clog << "SharpCollectiveAlgorithm: the aggregation manager refused a tree for "
                  << hcas.size() << " hosts (" << m_refusal << "); its operations run host-based "
                  << "with " << m_fallbackName
                  << " (set FallbackAlgorithm to none to stop here instead)" << std::endl;
        return false;
    }
    m_tree->brokenCallback = MakeCallback(&SharpCollectiveAlgorithm::TreeBroken, this);
    const uint32_t wl = m_tree->window[SharpTree::LLT];
    const uint32_t ws = m_tree->window[SharpTree::SAT];
    // Each rank posts one receive per slot of both windows on a queue pair of 65536.
    NS_ABORT_MSG_IF(uint64_t(wl) + ws > 65536,
                    "SharpCollectiveAlgorithm: the tree's windows, "
                        << wl << " LLT slots (SharpAggregationNode MaxOutstandingOps) and " << ws
                        << " SAT slots (BufferSize / MaxStreamingFlows / SatFragmentSize), need "
                        << wl + ws
                        << " receive buffers per rank; a rank posts at most 65536: lower "
                           "MaxOutstandingOps or BufferSize");
    m_recvStride = std::max(satFragment, lltFragment) + kGrhRoom;
    const uint32_t access = IB_ACCESS_LOCAL_WRITE;
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        Rank& rk = m_ranks[r];
        rk.sendMr = hcas[r]->RegisterMemory(uint64_t(wl) * lltFragment + uint64_t(ws) * satFragment,
                                            access);
        rk.recvMr = hcas[r]->RegisterMemory(uint64_t(wl + ws) * m_recvStride, access);
        rk.slotDone[SharpTree::LLT].assign(wl, 0);
        rk.slotDone[SharpTree::SAT].assign(ws, 0);
        for (uint32_t k = 0; k < wl + ws; ++k)
        {
            PostRecvBuffer(r, k);
        }
    }
    return true;
}

bool
SharpCollectiveAlgorithm::RebuildTree()
{
    const std::array<uint32_t, 2> window = m_tree->window;
    m_tree->brokenCallback = Callback<void>();
    m_am->DestroyTree(m_tree);
    m_tree = nullptr;
    std::vector<Ptr<IbHca>> hcas;
    std::vector<uint32_t> qpns;
    for (const Rank& rk : m_ranks)
    {
        hcas.push_back(rk.hca);
        qpns.push_back(rk.qp->GetQpNum());
    }
    Ptr<SharpTree> tree = m_am->CreateTree(hcas,
                                           qpns,
                                           m_treeFragments[SharpTree::LLT],
                                           m_treeFragments[SharpTree::SAT],
                                           m_sl,
                                           &m_refusal);
    if (tree && tree->window != window)
    {
        m_am->DestroyTree(tree);
        tree = nullptr;
        m_refusal = "the tree built after a link change has other windows than the ranks' "
                    "buffers";
    }
    if (!tree)
    {
        std::clog << "SharpCollectiveAlgorithm: a link change broke the SHARP tree of "
                  << m_ranks.size() << " hosts and no other could be built (" << m_refusal
                  << "); its operations run host-based with " << m_fallbackName << std::endl;
        return false;
    }
    // A fresh tree: its aggregation nodes count fragments from 0 again.
    m_tree = tree;
    m_tree->brokenCallback = MakeCallback(&SharpCollectiveAlgorithm::TreeBroken, this);
    m_seqAlloc = {0, 0};
    for (Rank& rk : m_ranks)
    {
        rk.nextSeq = {0, 0};
        for (auto& done : rk.slotDone)
        {
            std::fill(done.begin(), done.end(), 0);
        }
    }
    ++m_rebuilds;
    NS_LOG_INFO("SHARP tree rebuilt after a link change: tree " << tree->id);
    return true;
}

uint64_t
SharpCollectiveAlgorithm::GetTreeRebuilds() const
{
    return m_rebuilds;
}

uint64_t
SharpCollectiveAlgorithm::GetRestartedOps() const
{
    return m_restarted;
}

void
SharpCollectiveAlgorithm::TreeBroken()
{
    // Called from inside the manager's route refresh: lose the operations in an event of
    // their own, once the reroute that broke the tree is complete.
    Simulator::ScheduleNow(&SharpCollectiveAlgorithm::LoseInFlight,
                           Ptr<SharpCollectiveAlgorithm>(this),
                           std::string("a link change took a route of its tree"));
}

void
SharpCollectiveAlgorithm::LoseInFlight(const std::string& why)
{
    if (m_ops[SharpTree::LLT].empty() && m_ops[SharpTree::SAT].empty())
    {
        return;
    }
    std::vector<std::unique_ptr<Op>> lost;
    for (auto& q : m_ops)
    {
        for (auto& op : q)
        {
            if (op->ranksLeft > 0) // (one finished behind an unfinished one is not lost)
            {
                lost.push_back(std::move(op));
            }
        }
        q.clear();
    }
    if (m_watchdogArmed)
    {
        Simulator::Cancel(m_watchdog);
        m_watchdogArmed = false;
    }
    if (lost.empty())
    {
        return; // every operation left had finished
    }
    if (m_tree)
    {
        if (m_satOps > 0)
        {
            m_am->ReleaseStreaming(m_tree);
            m_satOps = 0;
        }
        // Its aggregation nodes hold parts of the lost fragments: the next operation
        // builds another tree (RebuildTree), or runs host-based if none can be built.
        m_tree->broken = true;
    }
    std::clog << "SharpCollectiveAlgorithm: " << lost.size() << " SHARP operation"
              << (lost.size() == 1 ? "" : "s") << " of " << m_ranks.size()
              << " hosts lost in the network (" << why << "); run again host-based with "
              << m_fallbackName << " from their inputs" << std::endl;
    for (auto& op : lost)
    {
        if (op->buffers != nullptr)
        {
            for (uint32_t r = 0; r < op->saved.size(); ++r)
            {
                if (!op->saved[r].empty())
                {
                    std::memcpy((*op->buffers)[r].data(), op->saved[r].data(), op->bytes);
                }
            }
        }
        ++m_restarted;
        op->restart();
    }
}

void
SharpCollectiveAlgorithm::ArmWatchdog()
{
    if (m_opTimeout.IsZero() || m_watchdogArmed)
    {
        return;
    }
    m_watchdogArmed = true;
    m_watchdog = Simulator::Schedule(m_lastProgress + m_opTimeout - Simulator::Now(),
                                     &SharpCollectiveAlgorithm::Watchdog,
                                     this);
}

void
SharpCollectiveAlgorithm::Watchdog()
{
    m_watchdogArmed = false;
    if (m_ops[SharpTree::LLT].empty() && m_ops[SharpTree::SAT].empty())
    {
        return;
    }
    if (Simulator::Now() - m_lastProgress >= m_opTimeout)
    {
        LoseInFlight("no result for OperationTimeout, " +
                     std::to_string(m_opTimeout.GetMicroSeconds()) + " us");
        return;
    }
    ArmWatchdog();
}

void
SharpCollectiveAlgorithm::PostRecvBuffer(uint32_t r, uint32_t k)
{
    Rank& rk = m_ranks[r];
    IbRecvWr wr;
    wr.wrId = k;
    wr.sge.addr = rk.recvMr->GetAddr() + uint64_t(k) * m_recvStride;
    wr.sge.length = m_recvStride;
    wr.sge.lkey = rk.recvMr->GetLkey();
    std::string err;
    NS_ABORT_MSG_UNLESS(rk.qp->PostRecv(wr, &err), "SharpCollectiveAlgorithm: " << err);
}

void
SharpCollectiveAlgorithm::Build(const CollectiveOpSpec& spec,
                                uint32_t rank,
                                uint32_t n,
                                uint64_t chunkBytes,
                                std::vector<CollectiveStep>& prog) const
{
    if (m_singleRank)
    {
        return; // one rank: nothing to send, whatever FallbackAlgorithm says
    }
    Fallback()->Build(spec, rank, n, chunkBytes, prog);
}

void
SharpCollectiveAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    // Build() is overridden and hands every host-based operation to the fallback.
    NS_ABORT_MSG("SharpCollectiveAlgorithm::BuildAllReduce is not used");
}

bool
SharpCollectiveAlgorithm::StartInNetwork(const CollectiveOpSpec& spec,
                                         uint32_t n,
                                         std::vector<std::vector<uint8_t>>* buffers,
                                         RankDoneCallback rankDone,
                                         RestartCallback restart)
{
    if (spec.kind != CollectiveKind::ALLREDUCE && spec.kind != CollectiveKind::REDUCE &&
        spec.kind != CollectiveKind::BARRIER)
    {
        return false; // host-based (Build)
    }
    if (!m_tree)
    {
        NS_ABORT_MSG_IF(m_ranks.empty(),
                        "SharpCollectiveAlgorithm: not set up; call Setup(manager, hcas) "
                        "before the first operation, or let CollectiveHelper do it "
                        "(SetSharpManager)");
        ++m_fallbacks;
        return false;
    }
    if (m_tree->broken)
    {
        if (!m_ops[SharpTree::LLT].empty() || !m_ops[SharpTree::SAT].empty())
        {
            ++m_fallbacks; // operations on the old tree (lost at the failure) still wait
            return false;
        }
        if (!RebuildTree())
        {
            ++m_fallbacks;
            return false;
        }
    }
    if (spec.kind != CollectiveKind::BARRIER && spec.op == CollectiveRedOp::PROD)
    {
        // SHARP's ALUs reduce sum, min, max and the bitwise operators, not products.
        ++m_prodOps;
        return false;
    }
    NS_ABORT_MSG_UNLESS(n == m_ranks.size(),
                        "SharpCollectiveAlgorithm: set up for " << m_ranks.size()
                                                                << " ranks, used with " << n);
    NS_ABORT_MSG_IF(spec.kind == CollectiveKind::REDUCE && spec.root >= n,
                    "SharpCollectiveAlgorithm: reduce root " << spec.root << " out of range");
    const uint32_t elem = CollectiveReduction::SizeOf(spec.type);
    const uint64_t bytes = spec.kind == CollectiveKind::BARRIER ? 0 : spec.count * elem;
    uint8_t ch = bytes > m_satThreshold ? SharpTree::SAT : SharpTree::LLT;
    bool streaming = false;
    if (ch == SharpTree::SAT)
    {
        // One streaming flow per tree, held while any of its streaming operations is in
        // flight: they share the tree's SAT window and run one after the other in its
        // sequence numbers, so a second operation needs no second flow (it took one, and
        // kept it from other communicators, before).
        streaming = m_satOps > 0 || m_am->AcquireStreaming(m_tree);
        if (streaming)
        {
            ++m_satOps;
        }
        else
        {
            if (m_fallbackName != "none")
            {
                NS_LOG_INFO("no streaming flow free on the tree: " << bytes << " bytes host-based");
                ++m_fallbacks;
                return false;
            }
            ++m_lltInstead;
            ch = SharpTree::LLT;
        }
    }
    auto op = std::make_unique<Op>();
    op->spec = spec;
    op->buffers = buffers;
    op->rankDone = rankDone;
    op->restart = restart;
    op->ch = ch;
    op->streaming = streaming;
    op->fragBytes = std::max(elem, m_tree->fragmentBytes[ch] / elem * elem);
    op->bytes = bytes;
    const uint64_t nFrag = bytes == 0 ? 1 : (bytes + op->fragBytes - 1) / op->fragBytes;
    NS_ABORT_MSG_IF(uint64_t(m_seqAlloc[ch]) + nFrag > SharpTree::IMM_SEQ_MASK,
                    "SharpCollectiveAlgorithm: out of fragment sequence numbers");
    op->nFrag = static_cast<uint32_t>(nFrag);
    op->firstSeq = m_seqAlloc[ch];
    m_seqAlloc[ch] += op->nFrag;
    op->remaining.assign(n, op->nFrag);
    op->ranksLeft = n;
    ++m_inNetwork;
    NS_LOG_FUNCTION(this << CollectiveAlgorithm::KindName(spec.kind) << bytes << unsigned(ch)
                         << op->nFrag);
    m_ops[ch].push_back(std::move(op));
    m_lastProgress = Simulator::Now();
    ArmWatchdog();
    for (uint32_t r = 0; r < n; ++r)
    {
        Issue(r, ch);
    }
    return true;
}

SharpCollectiveAlgorithm::Op*
SharpCollectiveAlgorithm::FindOp(uint8_t ch, uint32_t seq)
{
    for (auto& op : m_ops[ch])
    {
        if (seq >= op->firstSeq && seq - op->firstSeq < op->nFrag)
        {
            return op.get();
        }
    }
    return nullptr;
}

void
SharpCollectiveAlgorithm::Issue(uint32_t r, uint8_t ch)
{
    Rank& rk = m_ranks[r];
    const uint32_t w = m_tree->window[ch];
    const uint64_t slotBase = ch == SharpTree::LLT ? 0
                                                   : uint64_t(m_tree->window[SharpTree::LLT]) *
                                                         m_tree->fragmentBytes[SharpTree::LLT];
    while (rk.nextSeq[ch] < m_seqAlloc[ch])
    {
        const uint32_t seq = rk.nextSeq[ch];
        const uint32_t slot = seq % w;
        if (seq >= w && rk.slotDone[ch][slot] != seq - w + 1)
        {
            return; // the slot's previous fragment has not come back yet
        }
        const Op* found = FindOp(ch, seq);
        NS_ABORT_MSG_UNLESS(found != nullptr,
                            "SharpCollectiveAlgorithm: fragment " << seq
                                                                  << " belongs to no operation");
        const Op& op = *found;
        const uint64_t off = uint64_t(seq - op.firstSeq) * op.fragBytes;
        const uint32_t len =
            static_cast<uint32_t>(std::min<uint64_t>(op.fragBytes, op.bytes - off));
        SharpFragment& d = m_tree->desc[ch][slot];
        if (d.seq != seq)
        {
            d.seq = seq;
            d.bytes = len;
            d.type = op.spec.type;
            d.op = op.spec.op;
            d.toRootOnly = op.spec.kind == CollectiveKind::REDUCE;
            d.rootRank = op.spec.root;
        }
        const uint64_t addr =
            rk.sendMr->GetAddr() + slotBase + uint64_t(slot) * m_tree->fragmentBytes[ch];
        if (op.buffers != nullptr && len > 0)
        {
            std::memcpy(rk.sendMr->GetPointer(addr), (*op.buffers)[r].data() + off, len);
        }
        IbSendWr wr;
        wr.wrId = seq;
        wr.opcode = IbWrOpcode::SEND_WITH_IMM;
        wr.sge.addr = addr;
        wr.sge.length = len;
        wr.sge.lkey = rk.sendMr->GetLkey();
        wr.signaled = false;
        wr.immData = (ch == SharpTree::SAT ? SharpTree::IMM_SAT : 0) | seq;
        wr.udDlid = m_tree->leafLid[r];
        wr.udSl = m_sl;
        wr.udRemoteQpn = m_tree->qpn;
        wr.udRemoteQkey = SharpTree::QKEY;
        std::string err;
        NS_ABORT_MSG_UNLESS(rk.qp->PostSend(wr, &err), "SharpCollectiveAlgorithm: " << err);
        ++rk.nextSeq[ch];
    }
}

void
SharpCollectiveAlgorithm::RecvDone(uint32_t r, const IbWorkCompletion& wc)
{
    NS_ABORT_MSG_UNLESS(wc.status == IbWcStatus::SUCCESS && wc.withImm,
                        "SharpCollectiveAlgorithm: rank "
                            << r << " receive failed: " << IbWcStatusName(wc.status));
    Rank& rk = m_ranks[r];
    const uint8_t ch = (wc.immData & SharpTree::IMM_SAT) ? SharpTree::SAT : SharpTree::LLT;
    const uint32_t seq = wc.immData & SharpTree::IMM_SEQ_MASK;
    Op* found = m_tree && wc.srcQp == m_tree->qpn ? FindOp(ch, seq) : nullptr;
    if (found == nullptr)
    {
        // A result of an operation lost in the network (LoseInFlight), still on its way
        // from the tree it ran on when the operation was given up.
        NS_LOG_LOGIC("rank " << r << ": result " << seq << " of a lost operation ignored");
        PostRecvBuffer(r, static_cast<uint32_t>(wc.wrId));
        return;
    }
    Op& op = *found;
    m_lastProgress = Simulator::Now();
    const uint32_t len = wc.byteLen - kGrhRoom;
    if (op.buffers != nullptr && len > 0)
    {
        if (op.saved.empty())
        {
            op.saved.resize(m_ranks.size());
        }
        if (op.saved[r].empty())
        {
            // The result overwrites the inputs: keep them, should the network lose the
            // operation and the ranks start it again host-based.
            op.saved[r].assign((*op.buffers)[r].data(), (*op.buffers)[r].data() + op.bytes);
        }
        const uint64_t off = uint64_t(seq - op.firstSeq) * op.fragBytes;
        const uint64_t addr = rk.recvMr->GetAddr() + wc.wrId * m_recvStride + kGrhRoom;
        std::memcpy((*op.buffers)[r].data() + off, rk.recvMr->GetPointer(addr), len);
    }
    rk.slotDone[ch][seq % m_tree->window[ch]] = seq + 1;
    PostRecvBuffer(r, static_cast<uint32_t>(wc.wrId));
    if (--op.remaining[r] == 0)
    {
        op.rankDone(r);
        if (--op.ranksLeft == 0 && op.streaming)
        {
            op.streaming = false;
            if (--m_satOps == 0)
            {
                m_am->ReleaseStreaming(m_tree);
            }
        }
    }
    while (!m_ops[ch].empty() && m_ops[ch].front()->ranksLeft == 0)
    {
        m_ops[ch].pop_front();
    }
    Issue(r, ch);
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-communicator.h"

#include "collective-transport.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveCommunicator");

NS_OBJECT_ENSURE_REGISTERED(CollectiveCommunicator);

TypeId
CollectiveCommunicator::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveCommunicator")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<CollectiveCommunicator>()
            .AddAttribute("ChunkSize",
                          "Largest message of an operation: the algorithms cut their "
                          "transfers into chunks of this many bytes (whole elements), which "
                          "pipeline through the steps.",
                          UintegerValue(256 * 1024),
                          MakeUintegerAccessor(&CollectiveCommunicator::m_chunkSize),
                          MakeIbUintegerChecker<uint64_t>("CollectiveCommunicator", "ChunkSize", 1))
            .AddAttribute("SendWindow",
                          "Bytes a rank keeps handed to the transport and not yet reported "
                          "sent, per operation (0 = no limit). Ready sends wait in program "
                          "order, so that earlier steps get the link before later ones.",
                          UintegerValue(1024 * 1024),
                          MakeUintegerAccessor(&CollectiveCommunicator::m_sendWindow),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("FinishedOperations",
                          "Finished operations remembered for GetDuration, GetRankFinishTime "
                          "and GetMessages (0 = all). Older ones are forgotten once their done "
                          "callback has run, so that a long run (a training job starts "
                          "one operation per bucket per iteration) keeps bounded memory; "
                          "IsDone stays true for them.",
                          UintegerValue(1024),
                          MakeUintegerAccessor(&CollectiveCommunicator::m_finishedKept),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("SendOverhead",
                          "Host software time to post one message (per message, before the "
                          "transport has it): a collective library's per-message cost. A "
                          "rank's host does one thing at a time: sends, receives and "
                          "reductions queue behind each other.",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&CollectiveCommunicator::m_sendOverhead),
                          MakeIbTimeChecker("CollectiveCommunicator", "SendOverhead", Time(0)))
            .AddAttribute("RecvOverhead",
                          "Host software time to handle one received message before its "
                          "reduction or copy (matching, progress, synchronisation of the "
                          "step).",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&CollectiveCommunicator::m_recvOverhead),
                          MakeIbTimeChecker("CollectiveCommunicator", "RecvOverhead", Time(0)))
            .AddAttribute("ReduceBandwidth",
                          "Bytes of received data per second the host reduces into its "
                          "buffer (0 = instantly).",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&CollectiveCommunicator::m_reduceRate),
                          MakeDataRateChecker())
            .AddAttribute("HalfReduceBandwidth",
                          "ReduceBandwidth for 16-bit floating-point elements (FLOAT16, "
                          "BFLOAT16), which a CPU converts; 0 = ReduceBandwidth.",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&CollectiveCommunicator::m_halfReduceRate),
                          MakeDataRateChecker())
            .AddAttribute("CopyBandwidth",
                          "Bytes per second the host copies a received message that is not "
                          "reduced (an eager protocol's copy out of its bounce buffer; 0 = "
                          "instantly).",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&CollectiveCommunicator::m_copyRate),
                          MakeDataRateChecker())
            .AddAttribute("LaunchLatency",
                          "Time from an operation's start on a rank to its first action (a "
                          "GPU collective's kernel launch).",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&CollectiveCommunicator::m_launchLatency),
                          MakeIbTimeChecker("CollectiveCommunicator", "LaunchLatency", Time(0)))
            .AddTraceSource("InNetworkRestart",
                            "The in-network algorithm lost an operation (its aggregation tree "
                            "broke under it) and the operation starts again host-based, from "
                            "its inputs; the argument is the operation id.",
                            MakeTraceSourceAccessor(&CollectiveCommunicator::m_restartTrace),
                            "ns3::TracedValueCallback::Uint32");
    return tid;
}

CollectiveCommunicator::CollectiveCommunicator()
    : m_chunkSize(256 * 1024),
      m_sendWindow(1024 * 1024),
      m_finishedKept(1024),
      m_nextOp(1)
{
}

CollectiveCommunicator::~CollectiveCommunicator() = default;

void
CollectiveCommunicator::SetTransport(Ptr<CollectiveTransport> transport)
{
    m_transport = transport;
    m_transport->SetReceiveCallback(MakeCallback(&CollectiveCommunicator::Receive, this));
}

Ptr<CollectiveTransport>
CollectiveCommunicator::GetTransport() const
{
    return m_transport;
}

void
CollectiveCommunicator::SetAlgorithm(Ptr<CollectiveAlgorithm> algorithm)
{
    m_algorithm = algorithm;
}

Ptr<CollectiveAlgorithm>
CollectiveCommunicator::GetAlgorithm() const
{
    return m_algorithm;
}

uint32_t
CollectiveCommunicator::GetNRanks() const
{
    return m_transport ? m_transport->GetNRanks() : 0;
}

void
CollectiveCommunicator::DoDispose()
{
    m_ops.clear();
    m_finished.clear();
    if (m_transport)
    {
        m_transport->SetReceiveCallback(CollectiveTransport::ReceiveCallback()); // free for another
    }
    m_transport = nullptr;
    m_algorithm = nullptr;
    Object::DoDispose();
}

namespace
{
/// A range of a rank's buffer that no item boundary cuts, and who touched it last.
struct Piece
{
    uint64_t end;                  ///< one past its last byte
    uint32_t writer;               ///< the last receive into it (UINT32_MAX: none yet)
    std::vector<uint32_t> readers; ///< the sends of it since that receive
};
} // namespace

void
CollectiveCommunicator::Analyze(RankRun& rr)
{
    // An item waits for every earlier item it conflicts with: a send for the receives
    // into its bytes, a receive for the receives into and the sends of its bytes, a
    // fenced item for every earlier receive, and a send for the previous send to the same
    // peer. Checking each item against all earlier ones costs items^2 per rank (seconds at
    // 1024 ranks); instead the buffer is cut into pieces that remember their last writer
    // and the readers since, and an item depends on those only. Every earlier conflicting
    // item is an ancestor of one of them (a later receive into the same bytes waited for
    // it), so each item becomes ready at the same moment, and the dependents lists keep
    // program order: the run is the same as with the full check.
    const uint32_t n = rr.prog.size();
    constexpr uint32_t NONE = UINT32_MAX;
    rr.dependents.assign(n, {});
    rr.unmet.assign(n, 0);
    rr.ordinal.assign(n, 0);
    rr.arrivals.assign(n, Arrival());
    std::map<uint64_t, uint32_t> lastSendTo; // (peer, channel) -> its latest send item so far
    std::map<uint64_t, Piece> pieces;        // first byte -> piece (touched bytes only)
    std::vector<uint32_t> receives;          // every receive item so far (fences)
    std::vector<uint32_t> deps;
    auto cut = [&pieces](uint64_t pos) {
        auto it = pieces.upper_bound(pos);
        if (it == pieces.begin())
        {
            return;
        }
        --it;
        if (it->first < pos && pos < it->second.end)
        {
            Piece tail = it->second;
            it->second.end = pos;
            pieces.emplace_hint(std::next(it), pos, std::move(tail));
        }
    };
    for (uint32_t i = 0; i < n; ++i)
    {
        const CollectiveStep& s = rr.prog[i];
        const bool send = s.kind == CollectiveStep::SEND;
        deps.clear();
        if (send)
        {
            NS_ABORT_MSG_IF(s.channel >= CHANNELS,
                            "CollectiveCommunicator: channel "
                                << unsigned(s.channel) << " of a step; 0.." << CHANNELS - 1);
            const uint64_t key = StreamKey(s.peer, s.channel);
            auto last = lastSendTo.find(key);
            if (last != lastSendTo.end())
            {
                deps.push_back(last->second); // a channel's messages leave in program order
            }
            lastSendTo[key] = i;
        }
        if (s.fence)
        {
            deps.insert(deps.end(), receives.begin(), receives.end());
        }
        if (s.bytes > 0)
        {
            const uint64_t a = s.offset;
            const uint64_t b = s.offset + s.bytes;
            cut(a);
            cut(b);
            uint64_t pos = a;
            auto it = pieces.lower_bound(a);
            while (pos < b)
            {
                if (it == pieces.end() || it->first > pos)
                {
                    const uint64_t gapEnd = (it == pieces.end()) ? b : std::min(b, it->first);
                    it = pieces.emplace_hint(it, pos, Piece{gapEnd, NONE, {}});
                }
                Piece& piece = it->second;
                if (piece.writer != NONE)
                {
                    deps.push_back(piece.writer);
                }
                if (send)
                {
                    piece.readers.push_back(i);
                }
                else
                {
                    deps.insert(deps.end(), piece.readers.begin(), piece.readers.end());
                    piece.readers.clear();
                    piece.writer = i;
                }
                pos = piece.end;
                ++it;
            }
        }
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        if (!send)
        {
            auto& items = rr.recvItems[StreamKey(s.peer, s.channel)];
            rr.ordinal[i] = items.size();
            items.push_back(i);
            rr.unmet[i] = 1; // the message
            receives.push_back(i);
        }
        for (uint32_t d : deps)
        {
            rr.dependents[d].push_back(i);
        }
        rr.unmet[i] += deps.size();
    }
}

uint32_t
CollectiveCommunicator::Start(const CollectiveOpSpec& spec,
                              std::vector<std::vector<uint8_t>>* buffers,
                              DoneCallback done)
{
    NS_ABORT_MSG_UNLESS(m_transport && m_algorithm,
                        "CollectiveCommunicator: set a transport and an algorithm first");
    const uint32_t n = GetNRanks();
    const std::string kind = CollectiveAlgorithm::KindName(spec.kind);
    const bool reduces = spec.kind == CollectiveKind::ALLREDUCE ||
                         spec.kind == CollectiveKind::REDUCE_SCATTER ||
                         spec.kind == CollectiveKind::REDUCE;
    NS_ABORT_MSG_UNLESS(!reduces || CollectiveReduction::IsValid(spec.type, spec.op),
                        "CollectiveCommunicator: " << kind << " with reduction operator "
                                                   << CollectiveReduction::OpName(spec.op)
                                                   << ", which is not defined on "
                                                   << CollectiveReduction::TypeName(spec.type)
                                                   << " (bitwise operators need an integer "
                                                      "type)");
    // Checked here too, not only where a program is built: a one-rank communicator and an
    // in-network algorithm build none.
    NS_ABORT_MSG_IF(
        (spec.kind == CollectiveKind::BROADCAST || spec.kind == CollectiveKind::REDUCE) &&
            spec.root >= n,
        kind << " root " << spec.root << " out of range: the communicator has " << n
             << " ranks (0.." << n - 1 << ")");
    if (spec.kind == CollectiveKind::ALLTOALLV)
    {
        CollectiveAlgorithm::CheckCounts(spec, n);
    }
    const uint64_t need = CollectiveAlgorithm::BufferBytes(spec, n);
    if (buffers != nullptr)
    {
        NS_ABORT_MSG_UNLESS(m_transport->IsDataMode(),
                            "CollectiveCommunicator: buffers need a data-mode transport "
                            "(IbHca DataMode=true on every host's HCA when it is created; "
                            "or pass no buffers for a timing-only run)");
        NS_ABORT_MSG_UNLESS(buffers->size() == n,
                            "CollectiveCommunicator: " << buffers->size() << " buffers for " << n
                                                       << " ranks: pass one buffer per rank");
        for (uint32_t r = 0; r < n; ++r)
        {
            NS_ABORT_MSG_UNLESS((*buffers)[r].size() >= need,
                                "CollectiveCommunicator: "
                                    << kind << " of " << spec.count << " "
                                    << CollectiveReduction::TypeName(spec.type)
                                    << " elements: rank " << r << "'s buffer has "
                                    << (*buffers)[r].size() << " bytes, " << need << " needed ("
                                    << (spec.kind == CollectiveKind::ALLTOALL
                                            ? "2 x ranks x count x element size: send and "
                                              "receive halves"
                                        : spec.kind == CollectiveKind::ALLTOALLV
                                            ? "the largest rank's send and receive parts, "
                                              "CollectiveAllToAllVCounts::MaxBufferCount x "
                                              "element size"
                                        : spec.kind == CollectiveKind::REDUCE_SCATTER ||
                                                spec.kind == CollectiveKind::ALLGATHER
                                            ? "ranks x count x element size"
                                            : "count x element size")
                                    << ")");
        }
        if (spec.kind == CollectiveKind::ALLTOALL)
        {
            // A rank's own segment stays where it is: copied at once, like a reduction
            // taking no time.
            const uint64_t seg = spec.count * CollectiveReduction::SizeOf(spec.type);
            for (uint32_t r = 0; r < n; ++r)
            {
                uint8_t* b = (*buffers)[r].data();
                std::memcpy(b + (uint64_t(n) + r) * seg, b + uint64_t(r) * seg, seg);
            }
        }
        if (spec.kind == CollectiveKind::ALLTOALLV)
        {
            const CollectiveAllToAllVCounts& v = *spec.counts;
            const uint64_t elem = CollectiveReduction::SizeOf(spec.type);
            for (uint32_t r = 0; r < n; ++r)
            {
                uint8_t* b = (*buffers)[r].data();
                std::memcpy(b + v.RecvOffset(r, r) * elem,
                            b + v.SendOffset(r, r) * elem,
                            v.Count(r, r) * elem);
            }
        }
    }
    NS_ABORT_MSG_IF(m_nextOp >= (0x7FFFFFFFu >> CHANNEL_BITS),
                    "CollectiveCommunicator: out of operation ids");
    auto op = std::make_unique<Op>();
    op->id = m_nextOp++;
    op->spec = spec;
    op->buffers = buffers;
    op->start = Simulator::Now();
    op->done = done;
    op->ranks.resize(n);
    NS_LOG_FUNCTION(this << op->id << CollectiveAlgorithm::KindName(spec.kind) << spec.count
                         << m_algorithm->GetName());
    Op& o = *op;
    const uint32_t id = op->id;
    m_ops[id] = std::move(op);
    if (n > 1 && m_algorithm->StartInNetwork(
                     spec,
                     n,
                     buffers,
                     MakeCallback(&CollectiveCommunicator::InNetworkRankDone, this).Bind(id),
                     MakeCallback(&CollectiveCommunicator::InNetworkRestart, this).Bind(id)))
    {
        return id; // the algorithm reports each rank through InNetworkRankDone
    }
    RunHostBased(o);
    return id;
}

uint8_t*
CollectiveCommunicator::Bytes(Op& op, uint32_t rank, uint64_t offset)
{
    if (offset < op.bufferBytes)
    {
        return (*op.buffers)[rank].data() + offset;
    }
    return op.scratch[rank].data() + (offset - op.bufferBytes);
}

void
CollectiveCommunicator::RunHostBased(Op& o)
{
    const uint32_t n = o.ranks.size();
    const uint64_t scratch = m_algorithm->ScratchBytes(o.spec, n);
    if (o.buffers != nullptr && scratch > 0)
    {
        // Space the programs use beyond the user's buffer (relayed data), per rank.
        o.bufferBytes = CollectiveAlgorithm::BufferBytes(o.spec, n);
        o.scratch.assign(n, std::vector<uint8_t>(scratch));
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        m_algorithm->Build(o.spec, r, n, m_chunkSize, o.ranks[r].prog);
        Analyze(o.ranks[r]);
    }
    o.hostCosts = HasHostCosts();
    if (o.hostCosts)
    {
        // Each rank's host starts the operation (a GPU collective: its kernel launch)
        // once it is free.
        const Time now = Simulator::Now();
        m_cpuFree.resize(n, Time(0));
        for (uint32_t r = 0; r < n; ++r)
        {
            m_cpuFree[r] = std::max(now, m_cpuFree[r]) + m_launchLatency;
        }
    }
    // (An operation whose every rank finished at once has given its ranks' state back.)
    for (uint32_t r = 0; r < n && o.end == Time::Max(); ++r)
    {
        RankRun& rr = o.ranks[r];
        for (uint32_t i = 0; i < rr.prog.size(); ++i)
        {
            if (rr.unmet[i] == 0)
            {
                rr.unmet[i] = UINT32_MAX; // started
                Run(o, r, i);
            }
        }
        CheckFinished(o, r);
    }
}

void
CollectiveCommunicator::InNetworkRestart(uint32_t opId)
{
    auto it = m_ops.find(opId);
    NS_ABORT_MSG_UNLESS(it != m_ops.end() && it->second->end == Time::Max(),
                        "in-network restart of an unknown or finished operation");
    Op& o = *it->second;
    NS_LOG_INFO("operation " << opId << " lost in the network: restarted host-based with "
                             << m_algorithm->GetName());
    // Every rank starts again, also those the network had finished: the programs exchange
    // every rank's inputs, which the algorithm has put back in the buffers.
    const uint32_t n = o.ranks.size();
    std::vector<RankRun>(n).swap(o.ranks);
    o.ranksFinished = 0;
    ++o.restarts;
    m_restartTrace(opId);
    RunHostBased(o);
}

void
CollectiveCommunicator::Run(Op& op, uint32_t rank, uint32_t item)
{
    std::vector<uint32_t> ready;
    if (item != UINT32_MAX)
    {
        ready.push_back(item);
    }
    RunReady(op, rank, ready);
}

void
CollectiveCommunicator::ApplyReceive(Op& op, uint32_t rank, uint32_t i)
{
    RankRun& rr = op.ranks[rank];
    const CollectiveStep& s = rr.prog[i];
    uint8_t* buf = op.buffers != nullptr ? Bytes(op, rank, s.offset) : nullptr;
    Arrival& a = rr.arrivals[i];
    if (buf != nullptr && s.bytes > 0)
    {
        NS_ABORT_MSG_IF(a.data.size() != s.bytes,
                        "CollectiveCommunicator: message without data in data mode");
        if (s.kind == CollectiveStep::RECV_REDUCE)
        {
            const uint32_t elem = CollectiveReduction::SizeOf(op.spec.type);
            CollectiveReduction::Reduce(op.spec.type,
                                        op.spec.op,
                                        buf,
                                        a.data.data(),
                                        s.bytes / elem);
        }
        else
        {
            std::memcpy(buf, a.data.data(), s.bytes);
        }
    }
    a = Arrival();
}

Time
CollectiveCommunicator::ReceiveCost(const Op& op, const CollectiveStep& s) const
{
    Time t = m_recvOverhead;
    if (s.kind == CollectiveStep::RECV_REDUCE)
    {
        const bool half = op.spec.type == CollectiveDataType::FLOAT16 ||
                          op.spec.type == CollectiveDataType::BFLOAT16;
        const DataRate& r =
            half && m_halfReduceRate.GetBitRate() > 0 ? m_halfReduceRate : m_reduceRate;
        if (r.GetBitRate() > 0)
        {
            t += Seconds(static_cast<double>(s.bytes) * 8.0 / static_cast<double>(r.GetBitRate()));
        }
    }
    else if (m_copyRate.GetBitRate() > 0)
    {
        t += Seconds(static_cast<double>(s.bytes) * 8.0 /
                     static_cast<double>(m_copyRate.GetBitRate()));
    }
    return t;
}

bool
CollectiveCommunicator::HasHostCosts() const
{
    return m_sendOverhead.IsStrictlyPositive() || m_recvOverhead.IsStrictlyPositive() ||
           m_launchLatency.IsStrictlyPositive() || m_reduceRate.GetBitRate() > 0 ||
           m_halfReduceRate.GetBitRate() > 0 || m_copyRate.GetBitRate() > 0;
}

void
CollectiveCommunicator::Applied(uint32_t opId, uint32_t rank, uint32_t item)
{
    auto it = m_ops.find(opId);
    NS_ABORT_MSG_IF(it == m_ops.end() || it->second->end != Time::Max(),
                    "CollectiveCommunicator: a receive of operation "
                        << opId << " was applied after the operation ended");
    Op& op = *it->second;
    ApplyReceive(op, rank, item);
    std::vector<uint32_t> ready;
    Complete(op, rank, item, ready);
    RunReady(op, rank, ready);
}

void
CollectiveCommunicator::SendTurn(uint32_t opId, uint32_t rank)
{
    auto it = m_ops.find(opId);
    if (it == m_ops.end() || it->second->end != Time::Max())
    {
        return;
    }
    std::vector<uint32_t> none;
    RunReady(*it->second, rank, none);
}

void
CollectiveCommunicator::RunReady(Op& op, uint32_t rank, std::vector<uint32_t>& ready)
{
    RankRun& rr = op.ranks[rank];
    const Time now = Simulator::Now();
    while (true)
    {
        while (!ready.empty())
        {
            const uint32_t i = ready.back();
            ready.pop_back();
            const CollectiveStep& s = rr.prog[i];
            if (s.kind == CollectiveStep::SEND)
            {
                rr.readySends.push(i); // issued by program order, within the send window
                continue;
            }
            if (op.hostCosts)
            {
                // The rank's host (CPU or GPU stream) handles one message at a time: the
                // receive's software overhead, then its reduction or copy.
                Time& cpu = m_cpuFree[rank];
                const Time at = std::max(now, cpu) + ReceiveCost(op, s);
                if (at > now)
                {
                    cpu = at;
                    Simulator::Schedule(at - now,
                                        &CollectiveCommunicator::Applied,
                                        this,
                                        op.id,
                                        rank,
                                        i);
                    continue;
                }
            }
            ApplyReceive(op, rank, i);
            Complete(op, rank, i, ready);
        }
        if (rr.readySends.empty() ||
            (m_sendWindow > 0 && rr.bytesInFlight > 0 &&
             rr.bytesInFlight + rr.prog[rr.readySends.top()].bytes > m_sendWindow))
        {
            break;
        }
        if (op.hostCosts)
        {
            // A send is handed to the transport SendOverhead after the host is free.
            if (!rr.sendPaid)
            {
                Time& cpu = m_cpuFree[rank];
                const Time at = std::max(now, cpu) + m_sendOverhead;
                if (at > now)
                {
                    cpu = at;
                    rr.sendPaid = true;
                    rr.sendAt = at;
                    Simulator::Schedule(at - now,
                                        &CollectiveCommunicator::SendTurn,
                                        this,
                                        op.id,
                                        rank);
                    break;
                }
            }
            else if (now < rr.sendAt)
            {
                break; // its overhead is still being paid
            }
            rr.sendPaid = false;
        }
        const uint32_t i = rr.readySends.top();
        rr.readySends.pop();
        const CollectiveStep& s = rr.prog[i];
        uint8_t* buf = op.buffers != nullptr ? Bytes(op, rank, s.offset) : nullptr;
        ++rr.sendsPending;
        ++op.messages;
        rr.bytesInFlight += s.bytes;
        m_transport->Send(
            rank,
            s.peer,
            (op.id << CHANNEL_BITS) | s.channel, // the tag: operation and channel
            s.bytes,
            buf,
            MakeCallback(&CollectiveCommunicator::SendDone, this, op.id, rank, s.bytes));
        Complete(op, rank, i, ready);
    }
    CheckFinished(op, rank);
}

void
CollectiveCommunicator::Complete(Op& op, uint32_t rank, uint32_t item, std::vector<uint32_t>& ready)
{
    RankRun& rr = op.ranks[rank];
    ++rr.itemsDone;
    for (uint32_t d : rr.dependents[item])
    {
        if (--rr.unmet[d] == 0)
        {
            rr.unmet[d] = UINT32_MAX;
            ready.push_back(d);
        }
    }
}

void
CollectiveCommunicator::Receive(uint32_t src,
                                uint32_t dst,
                                uint32_t tag,
                                uint64_t bytes,
                                const uint8_t* data)
{
    const uint32_t opId = tag >> CHANNEL_BITS;
    const uint64_t key = StreamKey(src, tag & (CHANNELS - 1));
    auto it = m_ops.find(opId);
    NS_ABORT_MSG_IF(it == m_ops.end(),
                    "CollectiveCommunicator: message for unknown operation " << opId);
    Op& op = *it->second;
    NS_ABORT_MSG_IF(op.end != Time::Max(),
                    "CollectiveCommunicator: message " << src << " -> " << dst << " for operation "
                                                       << opId << ", which has finished");
    RankRun& rr = op.ranks.at(dst);
    const uint32_t k = rr.arrivedCount[key]++;
    auto items = rr.recvItems.find(key);
    NS_ABORT_MSG_IF(items == rr.recvItems.end() || k >= items->second.size(),
                    "CollectiveCommunicator: unexpected message " << src << " -> " << dst
                                                                  << " in operation " << opId);
    const uint32_t i = items->second[k];
    const CollectiveStep& s = rr.prog[i];
    NS_ABORT_MSG_UNLESS(s.bytes == bytes,
                        "CollectiveCommunicator: message of " << bytes << " bytes, item expects "
                                                              << s.bytes);
    Arrival& a = rr.arrivals[i];
    a.present = true;
    a.bytes = bytes;
    if (data != nullptr && op.buffers != nullptr)
    {
        a.data.assign(data, data + bytes);
    }
    if (--rr.unmet[i] == 0)
    {
        rr.unmet[i] = UINT32_MAX;
        Run(op, dst, i);
    }
}

void
CollectiveCommunicator::SendDone(uint32_t opId, uint32_t rank, uint64_t bytes)
{
    auto it = m_ops.find(opId);
    if (it == m_ops.end() || it->second->end != Time::Max())
    {
        return;
    }
    RankRun& rr = it->second->ranks[rank];
    --rr.sendsPending;
    rr.bytesInFlight -= bytes;
    if (!rr.readySends.empty())
    {
        Run(*it->second, rank, UINT32_MAX);
        return;
    }
    CheckFinished(*it->second, rank);
}

void
CollectiveCommunicator::InNetworkRankDone(uint32_t opId, uint32_t rank)
{
    auto it = m_ops.find(opId);
    NS_ABORT_MSG_UNLESS(it != m_ops.end() && rank < it->second->ranks.size(),
                        "in-network completion for an unknown operation or rank");
    CheckFinished(*it->second, rank); // an in-network rank has no program items
}

void
CollectiveCommunicator::CheckFinished(Op& op, uint32_t rank)
{
    RankRun& rr = op.ranks[rank];
    if (rr.finished || rr.itemsDone < rr.prog.size() || rr.sendsPending > 0)
    {
        return;
    }
    rr.finished = true;
    rr.finishTime = Simulator::Now();
    // Give the program's memory back (clear() would keep the vectors' capacity: a
    // training run starts thousands of operations on one communicator).
    std::vector<CollectiveStep>().swap(rr.prog);
    std::vector<std::vector<uint32_t>>().swap(rr.dependents);
    std::vector<Arrival>().swap(rr.arrivals);
    std::vector<uint32_t>().swap(rr.unmet);
    std::vector<uint32_t>().swap(rr.ordinal);
    rr.recvItems.clear();
    rr.arrivedCount.clear();
    rr.readySends = {};
    rr.itemsDone = 0;
    NS_LOG_LOGIC("operation " << op.id << " rank " << rank << " finished");
    if (++op.ranksFinished == op.ranks.size())
    {
        op.end = Simulator::Now();
        // Keep only what the accessors report: the ranks' finish times.
        op.finishTimes.reserve(op.ranks.size());
        for (const RankRun& r : op.ranks)
        {
            op.finishTimes.push_back(r.finishTime);
        }
        std::vector<RankRun>().swap(op.ranks);
        std::vector<std::vector<uint8_t>>().swap(op.scratch);
        NS_LOG_INFO("operation " << op.id << " finished in " << (op.end - op.start).As(Time::US));
        // The done callback runs as an event of its own; the operation joins the history
        // (and may push the oldest out of it) only after it, so that the callback can
        // always read it.
        Ptr<CollectiveCommunicator> self(this);
        DoneCallback cb = op.done;
        op.done = DoneCallback(); // (the event holds it: no cycle through a Ptr it binds)
        const uint32_t id = op.id;
        const Time d = op.end - op.start;
        Simulator::ScheduleNow([self, cb, id, d]() {
            if (!cb.IsNull())
            {
                cb(id, d);
            }
            self->Remember(id);
        });
    }
}

void
CollectiveCommunicator::Remember(uint32_t id)
{
    if (m_ops.find(id) == m_ops.end())
    {
        return; // disposed of meanwhile
    }
    m_finished.push_back(id);
    while (m_finishedKept != 0 && m_finished.size() > m_finishedKept)
    {
        m_ops.erase(m_finished.front());
        m_finished.pop_front();
    }
}

const CollectiveCommunicator::Op*
CollectiveCommunicator::FindRemembered(uint32_t op, const char* what) const
{
    auto it = m_ops.find(op);
    if (it != m_ops.end())
    {
        return it->second.get();
    }
    // Unfinished operations are never forgotten: a started id that is missing finished.
    NS_ABORT_MSG_IF(m_transport && op != 0 && op < m_nextOp,
                    "CollectiveCommunicator::" << what << ": operation " << op
                                               << " finished and was forgotten (the communicator "
                                                  "remembers the last "
                                               << m_finishedKept
                                               << " finished operations); read it in its done "
                                                  "callback or raise the FinishedOperations "
                                                  "attribute (0 = remember all)");
    return nullptr;
}

bool
CollectiveCommunicator::IsDone(uint32_t op) const
{
    auto it = m_ops.find(op);
    if (it == m_ops.end())
    {
        // forgotten, so finished (unless the communicator was disposed of)
        return m_transport && op != 0 && op < m_nextOp;
    }
    return it->second->end != Time::Max();
}

Time
CollectiveCommunicator::GetDuration(uint32_t op) const
{
    const Op* o = FindRemembered(op, "GetDuration");
    NS_ABORT_MSG_IF(o == nullptr || o->end == Time::Max(),
                    "CollectiveCommunicator: operation " << op << " has not finished");
    return o->end - o->start;
}

Time
CollectiveCommunicator::GetRankFinishTime(uint32_t op, uint32_t rank) const
{
    const Op* found = FindRemembered(op, "GetRankFinishTime");
    if (found == nullptr)
    {
        return Time::Max();
    }
    const Op& o = *found;
    NS_ABORT_MSG_IF(rank >= GetNRanks(),
                    "CollectiveCommunicator::GetRankFinishTime: rank "
                        << rank << " does not exist; the communicator has " << GetNRanks()
                        << " ranks");
    return o.end == Time::Max() ? o.ranks.at(rank).finishTime : o.finishTimes.at(rank);
}

uint64_t
CollectiveCommunicator::GetMessages(uint32_t op) const
{
    const Op* o = FindRemembered(op, "GetMessages");
    return o == nullptr ? 0 : o->messages;
}

uint32_t
CollectiveCommunicator::GetRestarts(uint32_t op) const
{
    const Op* o = FindRemembered(op, "GetRestarts");
    return o == nullptr ? 0 : o->restarts;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-communicator.h"

#include "collective-transport.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
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
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("SendWindow",
                          "Bytes a rank keeps handed to the transport and not yet reported "
                          "sent, per operation (0 = no limit). Ready sends wait in program "
                          "order, so that earlier steps get the link before later ones.",
                          UintegerValue(1024 * 1024),
                          MakeUintegerAccessor(&CollectiveCommunicator::m_sendWindow),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

CollectiveCommunicator::CollectiveCommunicator()
    : m_chunkSize(256 * 1024),
      m_sendWindow(1024 * 1024),
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
    m_transport = nullptr;
    m_algorithm = nullptr;
    Object::DoDispose();
}

namespace
{
/**
 * @param a an item
 * @param b another item
 * @return true if their byte ranges share a byte
 */
bool
Overlap(const CollectiveStep& a, const CollectiveStep& b)
{
    return a.bytes > 0 && b.bytes > 0 && a.offset < b.offset + b.bytes &&
           b.offset < a.offset + a.bytes;
}
} // namespace

void
CollectiveCommunicator::Analyze(RankRun& rr)
{
    const uint32_t n = rr.prog.size();
    rr.dependents.assign(n, {});
    rr.unmet.assign(n, 0);
    rr.ordinal.assign(n, 0);
    rr.arrivals.assign(n, Arrival());
    std::map<uint32_t, uint32_t> lastSendTo; // peer -> its latest send item so far
    std::vector<uint32_t> deps;
    for (uint32_t i = 0; i < n; ++i)
    {
        const CollectiveStep& s = rr.prog[i];
        deps.clear();
        if (s.kind == CollectiveStep::SEND)
        {
            auto last = lastSendTo.find(s.peer);
            if (last != lastSendTo.end())
            {
                deps.push_back(last->second); // messages to a peer leave in program order
            }
            for (uint32_t j = 0; j < i; ++j)
            {
                const CollectiveStep& e = rr.prog[j];
                if (e.kind != CollectiveStep::SEND && (s.fence || Overlap(s, e)))
                {
                    deps.push_back(j);
                }
            }
            lastSendTo[s.peer] = i;
        }
        else
        {
            for (uint32_t j = 0; j < i; ++j)
            {
                const CollectiveStep& e = rr.prog[j];
                if (e.kind == CollectiveStep::SEND ? Overlap(s, e) : (s.fence || Overlap(s, e)))
                {
                    deps.push_back(j);
                }
            }
            auto& items = rr.recvItems[s.peer];
            rr.ordinal[i] = items.size();
            items.push_back(i);
            rr.unmet[i] = 1; // the message
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
    NS_ABORT_MSG_UNLESS(spec.kind == CollectiveKind::BARRIER ||
                            CollectiveReduction::IsValid(spec.type, spec.op),
                        "CollectiveCommunicator: reduction operator "
                            << CollectiveReduction::OpName(spec.op) << " is not defined on "
                            << CollectiveReduction::TypeName(spec.type)
                            << " (bitwise operators need an integer type)");
    const uint64_t need = CollectiveAlgorithm::BufferBytes(spec, n);
    if (buffers != nullptr)
    {
        NS_ABORT_MSG_UNLESS(m_transport->IsDataMode(),
                            "CollectiveCommunicator: buffers need a data-mode transport "
                            "(IbHca DataMode=true)");
        NS_ABORT_MSG_UNLESS(buffers->size() == n, "CollectiveCommunicator: one buffer per rank");
        for (const auto& b : *buffers)
        {
            NS_ABORT_MSG_UNLESS(b.size() >= need,
                                "CollectiveCommunicator: buffer of " << b.size() << " bytes, "
                                                                     << need << " needed");
        }
    }
    NS_ABORT_MSG_IF(m_nextOp >= 0x7FFFFFFFu, "CollectiveCommunicator: out of operation ids");
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
                     MakeCallback(&CollectiveCommunicator::InNetworkRankDone, this).Bind(id)))
    {
        return id; // the algorithm reports each rank through InNetworkRankDone
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        m_algorithm->Build(spec, r, n, m_chunkSize, o.ranks[r].prog);
        Analyze(o.ranks[r]);
    }
    for (uint32_t r = 0; r < n; ++r)
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
    return id;
}

void
CollectiveCommunicator::Run(Op& op, uint32_t rank, uint32_t item)
{
    RankRun& rr = op.ranks[rank];
    std::vector<uint32_t> ready;
    if (item != UINT32_MAX)
    {
        ready.push_back(item);
    }
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
            uint8_t* buf = op.buffers != nullptr ? (*op.buffers)[rank].data() : nullptr;
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
                                                buf + s.offset,
                                                a.data.data(),
                                                s.bytes / elem);
                }
                else
                {
                    std::memcpy(buf + s.offset, a.data.data(), s.bytes);
                }
            }
            a = Arrival();
            Complete(op, rank, i, ready);
        }
        if (rr.readySends.empty() ||
            (m_sendWindow > 0 && rr.bytesInFlight > 0 &&
             rr.bytesInFlight + rr.prog[rr.readySends.top()].bytes > m_sendWindow))
        {
            break;
        }
        const uint32_t i = rr.readySends.top();
        rr.readySends.pop();
        const CollectiveStep& s = rr.prog[i];
        uint8_t* buf = op.buffers != nullptr ? (*op.buffers)[rank].data() : nullptr;
        ++rr.sendsPending;
        ++op.messages;
        rr.bytesInFlight += s.bytes;
        m_transport->Send(
            rank,
            s.peer,
            op.id,
            s.bytes,
            buf != nullptr ? buf + s.offset : nullptr,
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
    auto it = m_ops.find(tag);
    NS_ABORT_MSG_IF(it == m_ops.end(),
                    "CollectiveCommunicator: message for unknown operation " << tag);
    Op& op = *it->second;
    RankRun& rr = op.ranks.at(dst);
    const uint32_t k = rr.arrivedCount[src]++;
    auto items = rr.recvItems.find(src);
    NS_ABORT_MSG_IF(items == rr.recvItems.end() || k >= items->second.size(),
                    "CollectiveCommunicator: unexpected message " << src << " -> " << dst
                                                                  << " in operation " << tag);
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
    if (it == m_ops.end())
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
    NS_ASSERT_MSG(it != m_ops.end() && rank < it->second->ranks.size(),
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
    rr.prog.clear();
    rr.dependents.clear();
    rr.arrivals.clear();
    rr.unmet.clear();
    rr.ordinal.clear();
    rr.recvItems.clear();
    rr.arrivedCount.clear();
    rr.readySends = {};
    rr.itemsDone = 0;
    NS_LOG_LOGIC("operation " << op.id << " rank " << rank << " finished");
    if (++op.ranksFinished == op.ranks.size())
    {
        op.end = Simulator::Now();
        NS_LOG_INFO("operation " << op.id << " finished in " << (op.end - op.start).As(Time::US));
        if (!op.done.IsNull())
        {
            DoneCallback cb = op.done;
            const uint32_t id = op.id;
            const Time d = op.end - op.start;
            Simulator::ScheduleNow([cb, id, d]() { cb(id, d); });
        }
    }
}

bool
CollectiveCommunicator::IsDone(uint32_t op) const
{
    auto it = m_ops.find(op);
    return it != m_ops.end() && it->second->end != Time::Max();
}

Time
CollectiveCommunicator::GetDuration(uint32_t op) const
{
    auto it = m_ops.find(op);
    NS_ABORT_MSG_IF(it == m_ops.end() || it->second->end == Time::Max(),
                    "CollectiveCommunicator: operation " << op << " has not finished");
    return it->second->end - it->second->start;
}

Time
CollectiveCommunicator::GetRankFinishTime(uint32_t op, uint32_t rank) const
{
    auto it = m_ops.find(op);
    return it == m_ops.end() ? Time::Max() : it->second->ranks.at(rank).finishTime;
}

uint64_t
CollectiveCommunicator::GetMessages(uint32_t op) const
{
    auto it = m_ops.find(op);
    return it == m_ops.end() ? 0 : it->second->messages;
}

} // namespace ns3

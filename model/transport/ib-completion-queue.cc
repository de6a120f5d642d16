/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-completion-queue.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbCompletionQueue");

NS_OBJECT_ENSURE_REGISTERED(IbCompletionQueue);

TypeId
IbCompletionQueue::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbCompletionQueue")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbCompletionQueue>()
            .AddAttribute("Depth",
                          "Completions the queue holds for Poll() (IbHca::CreateCq sets it "
                          "from its argument).",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&IbCompletionQueue::m_depth),
                          MakeIbUintegerChecker<uint32_t>("IbCompletionQueue", "Depth", 1))
            .AddAttribute("DropOnOverrun",
                          "What a completion that finds the queue full does: false stops the "
                          "simulation with a message naming the queue, the QP and the WR (a "
                          "real CQ raises an asynchronous error); true drops it and counts it "
                          "(GetOverruns).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&IbCompletionQueue::m_dropOnOverrun),
                          MakeBooleanChecker())
            .AddTraceSource("Completion",
                            "A work completion was generated (visible to the host).",
                            MakeTraceSourceAccessor(&IbCompletionQueue::m_completed),
                            "ns3::IbCompletionQueue::CompletionTracedCallback");
    return tid;
}

IbCompletionQueue::IbCompletionQueue()
    : m_depth(4096),
      m_dropOnOverrun(false),
      m_overruns(0),
      m_total(0)
{
    NS_LOG_FUNCTION(this);
}

IbCompletionQueue::~IbCompletionQueue()
{
    NS_LOG_FUNCTION(this);
}

void
IbCompletionQueue::DoDispose()
{
    m_callback.Nullify();
    m_queue.Clear();
    Object::DoDispose();
}

std::vector<IbWorkCompletion>
IbCompletionQueue::Poll(uint32_t max)
{
    std::vector<IbWorkCompletion> out;
    while (out.size() < max && !m_queue.Empty())
    {
        out.push_back(m_queue.Pop());
    }
    return out;
}

void
IbCompletionQueue::SetCompletionCallback(Callback<void, const IbWorkCompletion&> cb)
{
    m_callback = cb;
}

void
IbCompletionQueue::Deliver(IbWorkCompletion wc)
{
    NS_LOG_FUNCTION(this << wc.wrId << IbWcStatusName(wc.status));
    wc.timestamp = Simulator::Now();
    ++m_total;
    if (!m_callback.IsNull())
    {
        m_completed(wc);
        m_callback(wc);
        return;
    }
    if (m_queue.Size() >= m_depth)
    {
        NS_ABORT_MSG_UNLESS(m_dropOnOverrun,
                            "IbCompletionQueue: the queue is full (Depth "
                                << m_depth << " completions not yet polled) at "
                                << Simulator::Now().As(Time::NS) << " when QP 0x" << std::hex
                                << wc.qpNum << std::dec << " completed WR " << wc.wrId << " ("
                                << IbWcStatusName(wc.status)
                                << "); poll it more often, create it deeper "
                                   "(IbHca::CreateCq(depth)), or set its DropOnOverrun "
                                   "attribute to drop and count such completions");
        ++m_overruns;
        NS_LOG_WARN("completion queue overrun (depth " << m_depth << "): completion of WR "
                                                       << wc.wrId << " dropped");
        m_completed(wc);
        return;
    }
    // Queue first, then tell the trace: a sink that polls from the trace finds the entry.
    m_queue.Push(wc);
    m_completed(wc);
}

uint32_t
IbCompletionQueue::GetDepth() const
{
    return m_depth;
}

uint32_t
IbCompletionQueue::GetNumEntries() const
{
    return static_cast<uint32_t>(m_queue.Size());
}

uint64_t
IbCompletionQueue::GetOverruns() const
{
    return m_overruns;
}

uint64_t
IbCompletionQueue::GetTotalCompletions() const
{
    return m_total;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-heap-scheduler.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/event-impl.h"
#include "ns3/global-value.h"
#include "ns3/log.h"
#include "ns3/string.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbHeapScheduler");

NS_OBJECT_ENSURE_REGISTERED(IbHeapScheduler);

namespace
{
/**
 * @param a an event
 * @param b another event
 * @return true if @p a runs before @p b: earlier, or at the same time and scheduled
 *         first (internal linkage, so that the compiler inlines it into the heap loops)
 */
inline bool
Before(const Scheduler::Event& a, const Scheduler::Event& b)
{
    return a.key.m_ts < b.key.m_ts || (a.key.m_ts == b.key.m_ts && a.key.m_uid < b.key.m_uid);
}
} // namespace

TypeId
IbHeapScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbHeapScheduler")
                            .SetParent<Scheduler>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbHeapScheduler>();
    return tid;
}

IbHeapScheduler::IbHeapScheduler()
{
    NS_LOG_FUNCTION(this);
}

IbHeapScheduler::~IbHeapScheduler()
{
    NS_LOG_FUNCTION(this);
}

void
IbHeapScheduler::SelectSchedulerType(const std::string& typeName, const std::string& option)
{
    TypeId tid;
    NS_ABORT_MSG_UNLESS(TypeId::LookupByNameFailSafe(typeName, &tid) &&
                            tid.IsChildOf(Scheduler::GetTypeId()) &&
                            GlobalValue::BindFailSafe("SchedulerType", StringValue(typeName)),
                        option << "=" << typeName
                               << " is not an ns-3 scheduler type; use ns3::IbHeapScheduler "
                                  "(fastest on large fabrics), ns3::MapScheduler (ns-3's "
                                  "default), ns3::HeapScheduler, ns3::ListScheduler or "
                                  "ns3::CalendarScheduler");
}

void
IbHeapScheduler::SiftUp(std::size_t i, const Event& ev)
{
    while (i > 0)
    {
        const std::size_t parent = (i - 1) / 4;
        if (!Before(ev, m_heap[parent]))
        {
            break;
        }
        m_heap[i] = m_heap[parent];
        i = parent;
    }
    m_heap[i] = ev;
}

void
IbHeapScheduler::SiftDown(std::size_t i, const Event& ev)
{
    const std::size_t n = m_heap.size();
    while (true)
    {
        const std::size_t first = 4 * i + 1;
        if (first >= n)
        {
            break;
        }
        const std::size_t last = first + 4 < n ? first + 4 : n;
        std::size_t best = first;
        for (std::size_t c = first + 1; c < last; ++c)
        {
            if (Before(m_heap[c], m_heap[best]))
            {
                best = c;
            }
        }
        if (!Before(m_heap[best], ev))
        {
            break;
        }
        m_heap[i] = m_heap[best];
        i = best;
    }
    m_heap[i] = ev;
}

void
IbHeapScheduler::Insert(const Event& ev)
{
    m_heap.emplace_back();
    SiftUp(m_heap.size() - 1, ev);
}

bool
IbHeapScheduler::IsEmpty() const
{
    return m_heap.empty();
}

Scheduler::Event
IbHeapScheduler::PeekNext() const
{
    NS_ASSERT(!m_heap.empty());
    return m_heap.front();
}

Scheduler::Event
IbHeapScheduler::RemoveNext()
{
    NS_ASSERT(!m_heap.empty());
    const Event first = m_heap.front();
    const Event last = m_heap.back();
    m_heap.pop_back();
    if (!m_heap.empty())
    {
        SiftDown(0, last);
    }
    return first;
}

void
IbHeapScheduler::Remove(const Event& ev)
{
    for (std::size_t i = 0; i < m_heap.size(); ++i)
    {
        if (m_heap[i].key.m_uid == ev.key.m_uid && m_heap[i].key.m_ts == ev.key.m_ts)
        {
            const Event last = m_heap.back();
            m_heap.pop_back();
            if (i < m_heap.size())
            {
                if (i > 0 && Before(last, m_heap[(i - 1) / 4]))
                {
                    SiftUp(i, last);
                }
                else
                {
                    SiftDown(i, last);
                }
            }
            return;
        }
    }
    NS_ABORT_MSG("IbHeapScheduler::Remove: event " << ev.key.m_uid << " at " << ev.key.m_ts
                                                   << " is not scheduled");
}

} // namespace ns3

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

/// The position of the root. Its children are at 4 .. 7, and every group of siblings
/// starts at a multiple of four: one Group.
constexpr std::size_t kRoot = 3;

/// The time and order of the entries past the last one: after every event.
constexpr uint64_t kNever = UINT64_MAX;

/**
 * @param ats time of entry a
 * @param aorder uid and context of entry a
 * @param bts time of entry b
 * @param border uid and context of entry b
 * @return true if a runs before b: earlier, or at the same time and scheduled first
 */
inline bool
Before(uint64_t ats, uint64_t aorder, uint64_t bts, uint64_t border)
{
#ifdef __SIZEOF_INT128__
    // One 128-bit comparison (compare and subtract-with-borrow): no branch.
    __extension__ typedef unsigned __int128 U128; // GCC and Clang; __extension__: not ISO C++
    return ((static_cast<U128>(ats) << 64) | aorder) < ((static_cast<U128>(bts) << 64) | border);
#else
    return (ats < bts) | ((ats == bts) & (aorder < border));
#endif
}

/**
 * @param ts an entry's time
 * @param order its uid and context
 * @param impl its event
 * @return the event the entry holds
 */
inline Scheduler::Event
EventOf(uint64_t ts, uint64_t order, EventImpl* impl)
{
    Scheduler::Event ev;
    ev.impl = impl;
    ev.key.m_ts = ts;
    ev.key.m_uid = static_cast<uint32_t>(order >> 32);
    ev.key.m_context = static_cast<uint32_t>(order);
    return ev;
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
                               << " is not an ns-3 scheduler type; use "
                                  "ns3::IbTimingWheelScheduler (fastest for fabrics), "
                                  "ns3::IbHeapScheduler, ns3::MapScheduler (ns-3's "
                                  "default), ns3::HeapScheduler, ns3::ListScheduler or "
                                  "ns3::CalendarScheduler");
}

void
IbHeapScheduler::SiftUp(std::size_t p, const Entry& e)
{
    while (p > kRoot)
    {
        const std::size_t parent = p / 4 + 2;
        const Entry& up = At(parent);
        if (!Before(e.ts, e.order, up.ts, up.order))
        {
            break;
        }
        At(p) = up;
        p = parent;
    }
    At(p) = e;
}

void
IbHeapScheduler::SiftDown(std::size_t p, const Entry& e)
{
    while (true)
    {
        const std::size_t first = 4 * p - 8;
        if (first >= m_end)
        {
            break;
        }
        // The smallest of the four siblings (past m_end: kNever entries), with masks
        // rather than branches: which child wins is what a predictor cannot guess.
        const Entry* g = m_groups[first >> 2].e;
        const std::size_t a = Before(g[1].ts, g[1].order, g[0].ts, g[0].order);
        const std::size_t b = 2 + Before(g[3].ts, g[3].order, g[2].ts, g[2].order);
        const std::size_t bWins =
            -static_cast<std::size_t>(Before(g[b].ts, g[b].order, g[a].ts, g[a].order));
        const std::size_t best = a ^ ((a ^ b) & bWins);
        if (!Before(g[best].ts, g[best].order, e.ts, e.order))
        {
            break;
        }
        At(p) = g[best];
        p = first + best;
    }
    At(p) = e;
}

void
IbHeapScheduler::Insert(const Event& ev)
{
    // Room for the new entry and for the whole group of its children.
    if (m_end / 4 + 1 >= m_groups.size())
    {
        const Entry never{kNever, kNever, nullptr, 0};
        m_groups.resize(m_groups.empty() ? 16 : 2 * m_groups.size(),
                        Group{{never, never, never, never}});
    }
    const uint64_t order = (static_cast<uint64_t>(ev.key.m_uid) << 32) | ev.key.m_context;
    SiftUp(m_end++, Entry{ev.key.m_ts, order, ev.impl, 0});
}

bool
IbHeapScheduler::IsEmpty() const
{
    return m_end == kRoot;
}

Scheduler::Event
IbHeapScheduler::PeekNext() const
{
    NS_ASSERT(!IsEmpty());
    const Entry& root = At(kRoot);
    return EventOf(root.ts, root.order, root.impl);
}

void
IbHeapScheduler::Take(std::size_t p)
{
    --m_end;
    const Entry last = At(m_end);
    At(m_end) = Entry{kNever, kNever, nullptr, 0};
    if (p == m_end)
    {
        return;
    }
    if (p > kRoot)
    {
        const Entry& up = At(p / 4 + 2);
        if (Before(last.ts, last.order, up.ts, up.order))
        {
            SiftUp(p, last);
            return;
        }
    }
    SiftDown(p, last);
}

Scheduler::Event
IbHeapScheduler::RemoveNext()
{
    NS_ASSERT(!IsEmpty());
    const Entry& root = At(kRoot);
    const Event first = EventOf(root.ts, root.order, root.impl);
    Take(kRoot);
    return first;
}

void
IbHeapScheduler::Remove(const Event& ev)
{
    for (std::size_t p = kRoot; p < m_end; ++p)
    {
        const Entry& e = At(p);
        if (e.ts == ev.key.m_ts && static_cast<uint32_t>(e.order >> 32) == ev.key.m_uid)
        {
            Take(p);
            return;
        }
    }
    NS_ABORT_MSG("IbHeapScheduler::Remove: event " << ev.key.m_uid << " at " << ev.key.m_ts
                                                   << " is not scheduled");
}

} // namespace ns3

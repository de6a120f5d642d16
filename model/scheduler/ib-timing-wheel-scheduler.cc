/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-timing-wheel-scheduler.h"

#include "ib-heap-scheduler.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/log.h"
#include "ns3/nstime.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbTimingWheelScheduler");

NS_OBJECT_ENSURE_REGISTERED(IbTimingWheelScheduler);

namespace
{

/// No chunk: an empty bucket's head, the end of the free list.
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/// The heap's first time when it is empty: after every event.
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

/**
 * @param x a word that is not zero
 * @return the index of its lowest set bit
 */
inline uint32_t
LowestBit(uint64_t x)
{
    return static_cast<uint32_t>(__builtin_ctzll(x));
}

} // namespace

TypeId
IbTimingWheelScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbTimingWheelScheduler")
                            .SetParent<Scheduler>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbTimingWheelScheduler>();
    return tid;
}

IbTimingWheelScheduler::IbTimingWheelScheduler()
    : m_wheelFirst(kNever),
      m_heapFirst(kNever),
      m_free(kNone),
      m_far(CreateObject<IbHeapScheduler>())
{
    NS_LOG_FUNCTION(this);
    static_assert(WORDS == 64, "one summary word covers the bitmap");
    static_assert((SPAN & (SPAN - 1)) == 0, "the span is a power of two");
    for (Bucket& b : m_buckets)
    {
        b = Bucket{kNone, kNone, 0, 0};
    }
}

IbTimingWheelScheduler::~IbTimingWheelScheduler()
{
    NS_LOG_FUNCTION(this);
}

uint32_t
IbTimingWheelScheduler::AllocChunk()
{
    if (m_free == kNone)
    {
        const auto n = static_cast<uint32_t>(m_pool.size());
        NS_ABORT_MSG_IF(n >= (1u << 30),
                        "IbTimingWheelScheduler: more than 2^30 chunks of pending events");
        const uint32_t grown = n == 0 ? 256 : 2 * n;
        m_pool.resize(grown);
        for (uint32_t c = n; c < grown; ++c)
        {
            m_pool[c].next = c + 1 < grown ? c + 1 : kNone;
        }
        m_free = n;
    }
    const uint32_t c = m_free;
    m_free = m_pool[c].next;
    return c;
}

void
IbTimingWheelScheduler::FreeChunk(uint32_t c)
{
    // Last freed, first reused: the chunk is still in the cache when the next bucket fills.
    m_pool[c].next = m_free;
    m_free = c;
}

void
IbTimingWheelScheduler::Append(uint64_t ts, const Slot& s)
{
    // s is a copy the caller holds, never a slot of m_pool, which AllocChunk may move.
    Bucket& b = BucketOf(ts);
    if (b.head == kNone)
    {
        const uint32_t c = AllocChunk();
        b = Bucket{c, c, 0, 0};
        const uint32_t i = ts & (SPAN - 1);
        m_used[i / 64] |= uint64_t{1} << (i % 64);
        m_summary |= uint64_t{1} << (i / 64);
    }
    else if (b.end == CHUNK_SLOTS)
    {
        const uint32_t c = AllocChunk();
        m_pool[b.tail].next = c;
        b.tail = c;
        b.end = 0;
    }
    NS_ASSERT_MSG(b.end == 0 || m_pool[b.tail].slot[b.end - 1].uid < s.uid,
                  "events of one time step must come in uid order");
    m_pool[b.tail].slot[b.end++] = s;
    ++m_inWheel;
    m_wheelFirst = std::min(m_wheelFirst, ts);
}

void
IbTimingWheelScheduler::MarkEmpty(uint64_t ts)
{
    const uint32_t i = ts & (SPAN - 1);
    m_buckets[i].head = kNone;
    m_used[i / 64] &= ~(uint64_t{1} << (i % 64));
    if (m_used[i / 64] == 0)
    {
        m_summary &= ~(uint64_t{1} << (i / 64));
    }
}

Scheduler::Event
IbTimingWheelScheduler::EventOf(uint64_t ts, const Slot& s)
{
    Event ev;
    ev.impl = s.impl;
    ev.key.m_ts = ts;
    ev.key.m_uid = s.uid;
    ev.key.m_context = s.context;
    return ev;
}

uint64_t
IbTimingWheelScheduler::FirstTimeInWheel() const
{
    NS_ASSERT(m_inWheel > 0);
    const uint32_t start = m_base & (SPAN - 1);
    const uint32_t w = start / 64;
    uint32_t i;
    const uint64_t here = m_used[w] & (~uint64_t{0} << (start % 64));
    if (here != 0)
    {
        i = w * 64 + LowestBit(here);
    }
    else
    {
        // A later word, or else (the wheel wraps) the lowest word: which may be word w
        // again, its buckets before start.
        const uint64_t later = w == WORDS - 1 ? 0 : m_summary & (~uint64_t{0} << (w + 1));
        const uint32_t v = LowestBit(later != 0 ? later : m_summary);
        i = v * 64 + LowestBit(m_used[v]);
    }
    return m_base + ((i - start) & (SPAN - 1));
}

void
IbTimingWheelScheduler::UpdateHeapFirst()
{
    m_heapFirst = m_far->IsEmpty() ? kNever : m_far->PeekNext().key.m_ts;
}

void
IbTimingWheelScheduler::Refill()
{
    const uint64_t limit = m_base + SPAN;
    while (m_heapFirst < limit)
    {
        const Event ev = m_far->RemoveNext();
        Append(ev.key.m_ts, Slot{ev.impl, 0, 0, ev.key.m_uid, ev.key.m_context});
        UpdateHeapFirst();
    }
}

void
IbTimingWheelScheduler::PrefetchFirst()
{
    if (m_inWheel == 0)
    {
        return;
    }
    const Bucket& b = BucketOf(m_wheelFirst);
    NS_ASSERT(b.head != kNone && b.first < (b.head == b.tail ? b.end : CHUNK_SLOTS));
    const Slot& next = m_pool[b.head].slot[b.first];
    // The event object, and the line holding its 40th byte: ns-3's member-function events
    // keep the object and the function in bytes 16 to 39, which cross a line half the time.
    __builtin_prefetch(next.impl);
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(next.impl) + 39));
    IbPrefetch::Fetch(next.hint);
    IbPrefetch::Fetch(next.hint2);
}

void
IbTimingWheelScheduler::Insert(const Event& ev)
{
    // (Checked in every build: such an event would wait in the far heap until the wheel
    // empties, where MapScheduler runs it next. ns-3 checks negative delays only with
    // asserts, and the real-time simulator can round "now" below the current event.)
    NS_ABORT_MSG_IF(ev.key.m_ts < m_base,
                    "IbTimingWheelScheduler: an event at "
                        << TimeStep(ev.key.m_ts).As(Time::NS) << ", before the event that ran at "
                        << TimeStep(m_base).As(Time::NS)
                        << " (a negative delay, or the real-time simulator's clock rounded "
                           "down); schedule no event in the past, or use "
                           "SchedulerType=ns3::MapScheduler");
    // ns-3 numbers events with a 32-bit uid that grows with each one scheduled, and orders
    // and cancels events by it. A fall of more than half the range is its wrap (moving
    // events between schedulers re-inserts them in time order: smaller falls).
    NS_ABORT_MSG_IF(ev.key.m_uid < m_lastUid && m_lastUid - ev.key.m_uid > 0x80000000u,
                    "IbTimingWheelScheduler: ns-3's 32-bit event uid wrapped at "
                        << TimeStep(ev.key.m_ts).As(Time::US) << ", after 2^32 events in this "
                        << "simulation (a large fabric runs some 2.7 million a second, so about "
                           "26 minutes of Simulator::Run); ns-3 would order and cancel events "
                           "wrongly from here on. Split the run into shorter simulations");
    m_lastUid = ev.key.m_uid;
    uint64_t hint;
    uint64_t hint2;
    IbPrefetch::TakeHints(hint, hint2);
    if (ev.key.m_ts - m_base < SPAN)
    {
        Append(ev.key.m_ts, Slot{ev.impl, hint, hint2, ev.key.m_uid, ev.key.m_context});
    }
    else
    {
        m_far->Insert(ev);
        if (ev.key.m_ts < m_heapFirst)
        {
            m_heapFirst = ev.key.m_ts;
        }
    }
}

bool
IbTimingWheelScheduler::IsEmpty() const
{
    return m_inWheel == 0 && m_heapFirst == kNever;
}

Scheduler::Event
IbTimingWheelScheduler::PeekNext() const
{
    NS_ASSERT(!IsEmpty());
    if (m_inWheel == 0)
    {
        return m_far->PeekNext();
    }
    NS_ASSERT(m_wheelFirst == FirstTimeInWheel());
    const Bucket& b = m_buckets[m_wheelFirst & (SPAN - 1)];
    const Slot& s = m_pool[b.head].slot[b.first];
    return EventOf(m_wheelFirst, s);
}

Scheduler::Event
IbTimingWheelScheduler::RemoveNext()
{
    NS_ASSERT(!IsEmpty());
    if (m_inWheel == 0)
    {
        // Nothing due within the span: the heap's first event is next, and the wheel
        // moves on to its time.
        const Event first = m_far->RemoveNext();
        m_base = first.key.m_ts;
        UpdateHeapFirst();
        if (m_heapFirst - m_base < SPAN)
        {
            Refill();
            PrefetchFirst();
        }
        return first;
    }
    const uint64_t ts = m_wheelFirst;
    NS_ASSERT(ts == FirstTimeInWheel());
    Bucket& b = BucketOf(ts);
    Chunk& c = m_pool[b.head];
    const Slot s = c.slot[b.first++];
    --m_inWheel;
    const bool moved = ts != m_base;
    m_base = ts;
    if (b.head == b.tail)
    {
        if (b.first == b.end)
        {
            FreeChunk(b.head);
            MarkEmpty(ts);
            m_wheelFirst = m_inWheel > 0 ? FirstTimeInWheel() : kNever;
        }
    }
    else if (b.first == CHUNK_SLOTS)
    {
        const uint32_t next = c.next;
        FreeChunk(b.head);
        b.head = next;
        b.first = 0;
    }
    if (moved && m_heapFirst - m_base < SPAN)
    {
        Refill();
    }
    PrefetchFirst();
    return EventOf(ts, s);
}

void
IbTimingWheelScheduler::Remove(const Event& ev)
{
    const uint64_t ts = ev.key.m_ts;
    if (ts < m_base || ts - m_base >= SPAN)
    {
        m_far->Remove(ev); // aborts, naming the event, if it is not there either
        UpdateHeapFirst();
        return;
    }
    // Rare (Simulator::Remove): rebuild the bucket without the event.
    Bucket& b = BucketOf(ts);
    std::vector<Slot> keep;
    bool found = false;
    for (uint32_t c = b.head, i = b.first; c != kNone;)
    {
        const uint32_t end = c == b.tail ? b.end : CHUNK_SLOTS;
        for (; i < end; ++i)
        {
            const Slot& s = m_pool[c].slot[i];
            if (s.uid == ev.key.m_uid)
            {
                found = true;
            }
            else
            {
                keep.push_back(s);
            }
        }
        const uint32_t next = c == b.tail ? kNone : m_pool[c].next;
        FreeChunk(c);
        c = next;
        i = 0;
    }
    NS_ABORT_MSG_UNLESS(found,
                        "IbTimingWheelScheduler::Remove: event " << ev.key.m_uid << " at " << ts
                                                                 << " is not scheduled");
    MarkEmpty(ts);
    m_inWheel -= keep.size() + 1;
    for (const Slot& s : keep)
    {
        Append(ts, s);
    }
    m_wheelFirst = m_inWheel > 0 ? FirstTimeInWheel() : kNever;
}

} // namespace ns3

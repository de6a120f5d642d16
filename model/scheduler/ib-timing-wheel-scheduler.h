/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_TIMING_WHEEL_SCHEDULER_H
#define IB_TIMING_WHEEL_SCHEDULER_H

#include "ns3/abort.h"
#include "ns3/ptr.h"
#include "ns3/scheduler.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace ns3
{

class IbHeapScheduler;

/**
 * @ingroup infiniband-scheduler
 * @brief An event scheduler for fabrics: a timing wheel of one-tick buckets for the near
 * future, a heap for the rest.
 *
 * A fabric's events are almost all due within a few hundred nanoseconds of the event that
 * schedules them (a transmission's end, a cable's arrival, a credit return), and many
 * fall on the same time step. The wheel has 4096 buckets, one per time step (a
 * nanosecond at ns-3's default resolution): an event due within 4096 steps of the current
 * time is appended to the bucket of its time step, and the next event is the head of the
 * first bucket that is not empty (found with a two-level bitmap). Events due later wait
 * in an ns3::IbHeapScheduler and move into the wheel, in order, as the time comes within
 * reach. Both operations are a few instructions on memory that is already in the cache,
 * whatever the number of pending events; a heap reads log4(n) levels per event.
 *
 * Order: time, then insertion (uid), as in every ns-3 scheduler, so results are
 * identical to ns3::MapScheduler's. A bucket holds one time step, and the events of a
 * time step are inserted in uid order: directly, or from the heap (in its order) at the
 * moment the wheel first reaches the step, before any direct insertion for it. This
 * relies on what ns-3's simulator implementations do: uids grow with each insertion and no
 * event is scheduled before the last one removed.
 *
 * With a finer time resolution (Time::SetResolution(Time::PS)) the same events are
 * further away in steps, more of them go through the heap, and the scheduler costs about
 * what ns3::IbHeapScheduler does; the order is the same.
 *
 * Events run one after another, each waiting for the memory it reads; on a large fabric
 * most of that memory (the receiving port, the input port whose buffer a transmission
 * releases) is no longer in the cache. Whoever schedules an event can name, with PrefetchHint
 * and PrefetchAlso, the cache lines its handler will read first (in up to two objects); when
 * that event becomes the next one, RemoveNext prefetches them (and the event object itself),
 * so that they load while the current event runs.
 * Hints change no result: they are not read otherwise, and other schedulers ignore them.
 *
 * Select it before the simulation starts:
 * `GlobalValue::Bind("SchedulerType", StringValue("ns3::IbTimingWheelScheduler"))` or
 * `--SchedulerType=ns3::IbTimingWheelScheduler`. Remove (Simulator::Remove) scans the
 * event's bucket (or the heap); Cancel, what models normally use, costs nothing here.
 */
class IbTimingWheelScheduler : public Scheduler
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    /// An empty scheduler; the wheel starts at time step 0.
    IbTimingWheelScheduler();
    /// Frees the chunks and the heap (pending events are the simulator's to release).
    ~IbTimingWheelScheduler() override;

    /// Time steps the wheel covers: events due at least this far ahead go to the heap.
    static constexpr uint64_t SPAN = 4096;

    // Scheduler
    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

    /**
     * Name the memory the handler of the next event inserted (by the next Schedule call,
     * whatever its scheduler) reads first. This scheduler prefetches it when that event
     * becomes the next one to run; other schedulers never read it, and a hint for an
     * event that goes to the heap (due SPAN steps or more ahead) is dropped. A prefetch
     * never faults: a stale or wrong hint costs memory bandwidth, never a result. It also
     * drops a PrefetchAlso made before it.
     * @param address the first byte
     * @param lines how many cache lines from the one holding @p address (at most 63)
     * @param also one more line to fetch, in the same object further on (a per-VL member,
     *        say), or null; dropped unless it is 1 to 65,535 lines after the line holding
     *        @p address (so within 4 MB)
     */
    static void PrefetchHint(const void* address, uint32_t lines, const void* also = nullptr)
    {
        m_hint.store(EncodeHint(address, lines, also), std::memory_order_relaxed);
        m_hint2.store(0, std::memory_order_relaxed);
    }

    /**
     * Name a second piece of memory for the same event, after PrefetchHint: one the handler
     * reaches through the first (the input port whose buffer a transmission releases).
     * @param address the first byte
     * @param lines how many cache lines from the one holding @p address (at most 63)
     * @param also one more line, as for PrefetchHint, or null
     */
    static void PrefetchAlso(const void* address, uint32_t lines, const void* also = nullptr)
    {
        m_hint2.store(EncodeHint(address, lines, also), std::memory_order_relaxed);
    }

    /**
     * A hint as stored with an event: the line address in bits 6 to 47 (higher bits of
     * @p address are dropped: user-space addresses on today's x86-64 and AArch64 systems
     * are below 2^48 unless a program asks for more, and a wrong hint costs a useless
     * prefetch at worst), the line count in bits 0 to 5 and the extra line's distance in
     * lines from the first in bits 48 to 63 (0: none). Public for tests.
     * @param address the first byte
     * @param lines cache lines from the one holding it (at most 63)
     * @param also the extra line, or null
     * @return the encoded hint
     */
    static uint64_t EncodeHint(const void* address, uint32_t lines, const void* also)
    {
        NS_ABORT_MSG_IF(
            lines > 63,
            "IbTimingWheelScheduler::PrefetchHint/PrefetchAlso: " << lines << " lines; at most 63");
        const uint64_t line = reinterpret_cast<uintptr_t>(address) & kLineBits;
        if (also == nullptr)
        {
            return line | lines;
        }
        // Before the first line or 4 MB or more after it: a distance of 2^16 lines or more
        // (unsigned), left out.
        const uint64_t far = (reinterpret_cast<uintptr_t>(also) - line) / 64;
        return line | lines | (far < 0x10000 ? far << 48 : 0);
    }

    /**
     * @param hint a hint (EncodeHint)
     * @return the address of its first line
     */
    static uint64_t HintFirstLine(uint64_t hint)
    {
        return hint & kLineBits;
    }

    /**
     * @param hint a hint (EncodeHint)
     * @return the number of lines from its first
     */
    static uint32_t HintLineCount(uint64_t hint)
    {
        return static_cast<uint32_t>(hint & 63);
    }

    /**
     * @param hint a hint (EncodeHint)
     * @return the address of its extra line, or 0 if it has none
     */
    static uint64_t HintExtraLine(uint64_t hint)
    {
        return (hint >> 48) != 0 ? HintFirstLine(hint) + 64 * (hint >> 48) : 0;
    }

  private:
    /// The bits of a hint that hold the line address.
    static constexpr uint64_t kLineBits = 0x0000FFFFFFFFFFC0;

    /**
     * Prefetch what a stored hint names.
     * @param hint the hint (EncodeHint), or 0
     */
    static void Prefetch(uint64_t hint)
    {
        const uint64_t line = HintFirstLine(hint);
        for (uint64_t i = 0; i < HintLineCount(hint); ++i)
        {
            __builtin_prefetch(reinterpret_cast<const void*>(line + 64 * i));
        }
        if (const uint64_t extra = HintExtraLine(hint); extra != 0)
        {
            __builtin_prefetch(reinterpret_cast<const void*>(extra));
        }
    }

    /// An event in a bucket; its time is the bucket's.
    struct Slot
    {
        EventImpl* impl;  //!< the event
        uint64_t hint;    //!< PrefetchHint (EncodeHint), or 0
        uint64_t hint2;   //!< PrefetchAlso (EncodeHint), or 0
        uint32_t uid;     //!< its uid
        uint32_t context; //!< its context
    };

    /// Slots per chunk: a chunk is four cache lines.
    static constexpr uint32_t CHUNK_SLOTS = 7;

    /// A bucket's events are a list of chunks, from a pool shared by all buckets.
    struct alignas(64) Chunk
    {
        uint32_t next;          //!< the next chunk of the bucket, or of the free list
        Slot slot[CHUNK_SLOTS]; //!< the events, oldest first
    };

    static_assert(sizeof(Slot) == 32 && sizeof(Chunk) == 256, "a chunk is four cache lines");

    /// The events of one time step: chunks head .. tail, none when the bucket is empty.
    struct Bucket
    {
        uint32_t head;  //!< first chunk
        uint32_t tail;  //!< last chunk
        uint32_t first; //!< position of the first event in the first chunk
        uint32_t end;   //!< slots used in the last chunk
    };

    /// Words of the bitmap of buckets that hold events.
    static constexpr uint32_t WORDS = SPAN / 64;

    /**
     * @param ts a time step in [m_base, m_base + SPAN)
     * @param s the event at that time: the last so far
     */
    void Append(uint64_t ts, const Slot& s);
    /**
     * @return a free chunk's index (the pool grows when none is free)
     */
    uint32_t AllocChunk();
    /**
     * Put a chunk back in the pool.
     * @param c the chunk's index
     */
    void FreeChunk(uint32_t c);
    /**
     * Mark the bucket of @p ts empty (its chunks are already back in the pool).
     * @param ts a time step in the wheel's span
     */
    void MarkEmpty(uint64_t ts);
    /**
     * @param ts a bucket's time step
     * @param s one of its events
     * @return the event as the simulator takes it
     */
    static Event EventOf(uint64_t ts, const Slot& s);
    /**
     * @return the time step of the earliest event in the wheel, which is not empty
     */
    uint64_t FirstTimeInWheel() const;
    /// Set m_heapFirst from the heap, after the heap changed.
    void UpdateHeapFirst();
    /**
     * Move the heap's events due before m_base + SPAN into the wheel.
     */
    void Refill();
    /// Prefetch the wheel's first event (the next to run): the event object's first two
    /// lines (where ns-3's member-function events keep the object and the function) and
    /// what its hints name.
    void PrefetchFirst();

    /**
     * @param ts a time step
     * @return the bucket of @p ts
     */
    Bucket& BucketOf(uint64_t ts)
    {
        return m_buckets[ts & (SPAN - 1)];
    }

    /// The hint for the next Insert (PrefetchHint). Atomic because the real-time simulator
    /// inserts from other threads too; relaxed: a hint on the wrong event changes no result.
    static inline std::atomic<uint64_t> m_hint{0};
    /// The second hint for the next Insert, or 0.
    static inline std::atomic<uint64_t> m_hint2{0};

    uint64_t m_base{0};                   //!< the wheel holds events due in [m_base, m_base + SPAN)
    uint64_t m_wheelFirst;                //!< the time of the wheel's first event; max if empty
    uint64_t m_heapFirst;                 //!< the time of the heap's first event; max if empty
    uint64_t m_summary{0};                //!< bit w: m_used[w] is not zero
    uint64_t m_inWheel{0};                //!< events in the wheel
    uint32_t m_lastUid{0};                //!< uid of the last event inserted (wrap check)
    uint32_t m_free;                      //!< the first free chunk
    std::vector<Chunk> m_pool;            //!< the chunks
    Ptr<IbHeapScheduler> m_far;           //!< events due at m_base + SPAN or later
    std::array<uint64_t, WORDS> m_used{}; //!< bit b of word w: bucket 64w + b holds events
    std::array<Bucket, SPAN> m_buckets{}; //!< the wheel
};

} // namespace ns3

#endif /* IB_TIMING_WHEEL_SCHEDULER_H */

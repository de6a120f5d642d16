/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_TIMING_WHEEL_SCHEDULER_H
#define IB_TIMING_WHEEL_SCHEDULER_H

#include "ib-prefetch.h"

#include "ns3/abort.h"
#include "ns3/ptr.h"
#include "ns3/scheduler.h"

#include <array>
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
 * releases) is no longer in the cache. Whoever schedules an event can name, through
 * IbPrefetch, the cache lines its handler will read first (in up to two objects); Insert
 * keeps them with the event, and when that event becomes the next one RemoveNext prefetches
 * them (and the event object itself), so that they load while the current event runs. A
 * hint for an event that goes to the heap (due SPAN steps or more ahead) is dropped.
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

  private:
    /// An event in a bucket; its time is the bucket's.
    struct Slot
    {
        EventImpl* impl;  //!< the event
        uint64_t hint;    //!< IbPrefetch::Hint (IbPrefetch::Encode), or 0
        uint64_t hint2;   //!< IbPrefetch::Also, or 0
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

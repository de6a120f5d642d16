/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_HEAP_SCHEDULER_H
#define IB_HEAP_SCHEDULER_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-scheduler
 * @brief An event scheduler for large fabrics: a 4-ary heap of events in one array.
 *
 * Same order as every ns-3 scheduler (time, then insertion), so a simulation gives the
 * same results with it as with ns3::MapScheduler, ns-3's default. What differs is the
 * memory it touches: MapScheduler allocates a red-black tree node per event and
 * rebalances the tree when the first event leaves it, a few cache misses per event once
 * a fabric has tens of thousands of events pending. This heap keeps the events in one
 * array, 32 bytes each, a node's four children in one 128-byte aligned block (the pair
 * of cache lines x86 processors fetch together). A new event, usually later than most
 * pending ones, rarely climbs; removing the first walks log4(n) levels with no branch
 * to mispredict inside a level (the smallest of four children is found with three
 * 128-bit comparisons and masks).
 *
 * For a fabric, whose events are almost all due within nanoseconds,
 * ns3::IbTimingWheelScheduler is faster (it keeps its later events in one of these); this
 * heap is the better choice when events are microseconds apart.
 *
 * Select it before the simulation starts:
 * `GlobalValue::Bind("SchedulerType", StringValue("ns3::IbHeapScheduler"))` or
 * `--SchedulerType=ns3::IbHeapScheduler`. Remove (Simulator::Remove) is O(n); Cancel,
 * what models normally use, costs nothing here.
 */
class IbHeapScheduler : public Scheduler
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    IbHeapScheduler();
    ~IbHeapScheduler() override;

    /**
     * Make @p typeName the scheduler of simulations created from now on (the SchedulerType
     * global value), or abort naming the input and the choices if it is not a scheduler.
     * Programs call it with a command-line value.
     * @param typeName ns3::IbTimingWheelScheduler, ns3::IbHeapScheduler,
     *        ns3::MapScheduler (ns-3's default),
     *        ns3::HeapScheduler, ns3::ListScheduler, ns3::CalendarScheduler, ...
     * @param option the command-line option it came from, for the message
     */
    static void SelectSchedulerType(const std::string& typeName, const std::string& option);

    // Scheduler
    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

  private:
    /// A pending event as the heap keeps it: ordered by time, then uid (the upper half of
    /// order; uids are unique, so the context in the lower half never decides).
    struct Entry
    {
        uint64_t ts;     //!< time stamp
        uint64_t order;  //!< uid << 32 | context
        EventImpl* impl; //!< the event
        uint64_t unused; //!< pads the entry to 32 bytes
    };

    /// The four children of one node: one 128-byte block.
    struct alignas(128) Group
    {
        Entry e[4]; //!< the children
    };

    /**
     * @param p a position: the root is at position 3, the children of position p at
     *        4p - 8 .. 4p - 5, one Group
     * @return the entry at position @p p
     */
    Entry& At(std::size_t p)
    {
        return m_groups[p >> 2].e[p & 3];
    }

    /**
     * @param p a position
     * @return the entry at position @p p
     */
    const Entry& At(std::size_t p) const
    {
        return m_groups[p >> 2].e[p & 3];
    }

    /**
     * Move @p e up from position @p p to its place.
     * @param p a position
     * @param e the entry that belongs in it or higher
     */
    void SiftUp(std::size_t p, const Entry& e);
    /**
     * Move @p e down from position @p p to its place.
     * @param p a position
     * @param e the entry that belongs in it or lower
     */
    void SiftDown(std::size_t p, const Entry& e);
    /**
     * Take the entry at position @p p out of the heap.
     * @param p a position holding an entry
     */
    void Take(std::size_t p);

    std::vector<Group> m_groups; //!< the heap; positions past the last entry hold entries
                                 //!< later than any event, so a group compares whole
    std::size_t m_end{3};        //!< one past the last entry's position
};

} // namespace ns3

#endif /* IB_HEAP_SCHEDULER_H */

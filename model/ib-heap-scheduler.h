/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_HEAP_SCHEDULER_H
#define IB_HEAP_SCHEDULER_H

#include "ns3/scheduler.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband
 * @brief An event scheduler for large fabrics: a 4-ary heap of events in one array.
 *
 * Same order as every ns-3 scheduler (time, then insertion), so a simulation gives the
 * same results with it as with ns3::MapScheduler, ns-3's default. What differs is the
 * memory it touches: MapScheduler allocates a red-black tree node per event and
 * rebalances the tree when the first event leaves it, a few cache misses per event once
 * a fabric has tens of thousands of events pending; this heap keeps the events (24 bytes
 * each) in one array, a node's four children side by side. A new event, usually later
 * than most pending ones, rarely climbs; removing the first walks log4(n) levels.
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
     * @param typeName ns3::IbHeapScheduler, ns3::MapScheduler (ns-3's default),
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
    /**
     * Move @p ev up from slot @p i to its place.
     * @param i a slot
     * @param ev the event that belongs in it or higher
     */
    void SiftUp(std::size_t i, const Event& ev);
    /**
     * Move @p ev down from slot @p i to its place.
     * @param i a slot
     * @param ev the event that belongs in it or lower
     */
    void SiftDown(std::size_t i, const Event& ev);

    std::vector<Event> m_heap; //!< the heap; m_heap[0] runs first
};

} // namespace ns3

#endif /* IB_HEAP_SCHEDULER_H */

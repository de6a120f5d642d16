/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_FIFO_H
#define IB_FIFO_H

#include "ns3/abort.h"
#include "ns3/assert.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ns3
{

/**
 * @ingroup infiniband-common
 * @brief A first-in first-out queue in a ring buffer.
 *
 * Unlike std::deque (which allocates a map and a node on construction in libstdc++),
 * an empty IbFifo holds no memory: fabrics have tens of thousands of ports with 16 VL
 * queues each, most of them empty. The storage is a power-of-two ring that doubles when
 * full and never shrinks (Clear releases it), so a queue that holds a few elements at a
 * time, as most of a fabric's queues do, keeps using the same one or two cache lines
 * instead of sliding along a growing array.
 *
 * @tparam T the element type (default-constructible and movable)
 */
template <typename T>
class IbFifo
{
  public:
    /// @return true if the queue holds nothing
    bool Empty() const
    {
        return m_size == 0;
    }

    /// @return the number of elements
    std::size_t Size() const
    {
        return m_size;
    }

    /// @return the oldest element
    T& Front()
    {
        NS_ASSERT(!Empty());
        return m_items[m_head];
    }

    /// @return the oldest element
    const T& Front() const
    {
        NS_ASSERT(!Empty());
        return m_items[m_head];
    }

    /**
     * @param i a position, 0 for the oldest
     * @return the element at @p i
     */
    const T& At(std::size_t i) const
    {
        NS_ASSERT(i < m_size);
        return m_items[(m_head + i) & (m_capacity - 1)];
    }

    /**
     * Append an element.
     * @param item the element
     */
    void Push(T item)
    {
        if (m_size == m_capacity)
        {
            Grow();
        }
        m_items[(m_head + m_size) & (m_capacity - 1)] = std::move(item);
        ++m_size;
    }

    /// @return the oldest element, removed from the queue
    T Pop()
    {
        NS_ASSERT(!Empty());
        T item = std::move(m_items[m_head]);
        m_items[m_head] = T(); // drop what the moved-from element may still hold
        m_head = (m_head + 1) & (m_capacity - 1);
        --m_size;
        return item;
    }

    /// Remove everything and release the storage.
    void Clear()
    {
        m_items.reset();
        m_capacity = 0;
        m_head = 0;
        m_size = 0;
    }

  private:
    /// Double the ring (2 slots at first), oldest element first.
    void Grow()
    {
        const uint32_t capacity = m_capacity == 0 ? 2 : 2 * m_capacity;
        NS_ABORT_MSG_IF(capacity == 0, "IbFifo: more than 2^31 elements");
        std::unique_ptr<T[]> bigger(new T[capacity]);
        for (uint32_t i = 0; i < m_size; ++i)
        {
            bigger[i] = std::move(m_items[(m_head + i) & (m_capacity - 1)]);
        }
        m_items = std::move(bigger);
        m_capacity = capacity;
        m_head = 0;
    }

    // 24 bytes, not the 32 of a std::vector and two indices: a port's per-VL state
    // (IbNetDevice) fits one cache line with its queue.
    std::unique_ptr<T[]> m_items; //!< the ring of m_capacity slots
    uint32_t m_capacity{0};       //!< 0 or a power of two
    uint32_t m_head{0};           //!< index of the oldest element
    uint32_t m_size{0};           //!< number of elements
};

} // namespace ns3

#endif /* IB_FIFO_H */

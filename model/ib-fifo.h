/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_FIFO_H
#define IB_FIFO_H

#include "ns3/assert.h"

#include <cstddef>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband
 * @brief A first-in first-out queue on a std::vector.
 *
 * Unlike std::deque (which allocates a map and a node on construction in libstdc++),
 * an empty IbFifo holds no memory: fabrics have tens of thousands of ports with 16 VL
 * queues each, most of them empty. Pop advances a head index; the storage is reused
 * once the queue empties, and compacted when the dead prefix dominates.
 *
 * @tparam T the element type
 */
template <typename T>
class IbFifo
{
  public:
    /// @return true if the queue holds nothing
    bool Empty() const
    {
        return m_head == m_items.size();
    }

    /// @return the number of elements
    std::size_t Size() const
    {
        return m_items.size() - m_head;
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
     * Append an element.
     * @param item the element
     */
    void Push(T item)
    {
        if (m_head == m_items.size())
        {
            m_items.clear();
            m_head = 0;
        }
        else if (m_head >= 32 && m_head * 2 >= m_items.size())
        {
            m_items.erase(m_items.begin(), m_items.begin() + m_head);
            m_head = 0;
        }
        m_items.push_back(std::move(item));
    }

    /// @return the oldest element, removed from the queue
    T Pop()
    {
        NS_ASSERT(!Empty());
        T item = std::move(m_items[m_head]);
        m_items[m_head] = T();
        ++m_head;
        return item;
    }

    /// Remove everything and release the storage.
    void Clear()
    {
        std::vector<T>().swap(m_items);
        m_head = 0;
    }

  private:
    std::vector<T> m_items; //!< storage; live elements are [m_head, end)
    std::size_t m_head{0};  //!< index of the oldest live element
};

} // namespace ns3

#endif /* IB_FIFO_H */

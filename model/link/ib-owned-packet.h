/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_OWNED_PACKET_H
#define IB_OWNED_PACKET_H

#include "ns3/packet.h"
#include "ns3/ptr.h"

namespace ns3
{

/**
 * @ingroup infiniband-link
 * @brief One reference to a packet, handed from queue to queue without touching the packet.
 *
 * What a Ptr<Packet> holds (one count of the packet's reference count), but movable:
 * ns-3 3.37's Ptr has no move constructor, so every hand-over of a Ptr writes the packet's
 * reference count twice (the copy's increment, the source's decrement). On a large fabric a
 * packet waiting in a switch's input buffer or a port's transmit queue has left the cache
 * by the time it moves on, and those writes are a cache miss per hand-over. The port,
 * switch and cable queues keep their packets in IbOwnedPacket: the count is written where
 * the packet enters the fabric's queues and where it leaves them (when it is read anyway),
 * not in between.
 */
class IbOwnedPacket
{
  public:
    /// No packet.
    IbOwnedPacket() = default;

    /**
     * Take a reference to @p packet (an increment of its count).
     * @param packet the packet, or null
     */
    explicit IbOwnedPacket(const Ptr<Packet>& packet)
        : m_packet(PeekPointer(packet))
    {
        if (m_packet != nullptr)
        {
            m_packet->Ref();
        }
    }

    /**
     * Take over @p other's reference; @p other is empty afterwards.
     * @param other the reference to take over
     */
    IbOwnedPacket(IbOwnedPacket&& other) noexcept
        : m_packet(other.m_packet)
    {
        other.m_packet = nullptr;
    }

    /**
     * Drop the reference held and take over @p other's.
     * @param other the reference to take over
     * @return this
     */
    IbOwnedPacket& operator=(IbOwnedPacket&& other) noexcept
    {
        if (this != &other)
        {
            Reset();
            m_packet = other.m_packet;
            other.m_packet = nullptr;
        }
        return *this;
    }

    /// Not copyable: one reference, one owner (Share() gives a Ptr).
    IbOwnedPacket(const IbOwnedPacket&) = delete;
    /// Not copyable.
    /// @return this
    IbOwnedPacket& operator=(const IbOwnedPacket&) = delete;

    /// Drops the reference held, if any.
    ~IbOwnedPacket()
    {
        Reset();
    }

    /// Drop the reference held, if any.
    void Reset()
    {
        if (m_packet != nullptr)
        {
            m_packet->Unref();
            m_packet = nullptr;
        }
    }

    /**
     * Hand the reference over to a Ptr without writing the count; empty afterwards.
     * @return the packet
     */
    Ptr<Packet> Release()
    {
        Packet* p = m_packet;
        m_packet = nullptr;
        return Ptr<Packet>(p, false);
    }

    /**
     * @return a new Ptr to the packet (an increment of its count); this keeps its own
     */
    Ptr<Packet> Share() const
    {
        return Ptr<Packet>(m_packet);
    }

    /// @return the packet, or null; this keeps the reference
    Packet* Get() const
    {
        return m_packet;
    }

    /// @return true if a packet is held
    explicit operator bool() const
    {
        return m_packet != nullptr;
    }

  private:
    Packet* m_packet{nullptr}; //!< the packet, one count of its reference count held
};

} // namespace ns3

#endif /* IB_OWNED_PACKET_H */

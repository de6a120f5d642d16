/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PORT_OWNER_H
#define IB_PORT_OWNER_H

#include "ib-owned-packet.h"

#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

class IbNetDevice;
class Packet;

/**
 * @ingroup infiniband-link
 * @brief What owns a port and is called by it directly, without a Callback object: a
 * switch (an IbPacketForwarder) or a channel adapter (an IbPacketConsumer).
 *
 * The link layer defines these interfaces and the layers above implement them, so that a
 * port hands packets and transmit-ready notices up without knowing its owner's class. A
 * Callback per port would cost two more cache misses per packet on a large fabric; one
 * virtual call through a pointer the port keeps in its hot state costs none.
 * IbNetDevice::SetForwarder and IbNetDevice::SetConsumer register an owner;
 * SetIbReceiveCallback and SetTxReadyCallback clear it.
 */
class IbPortOwner
{
  public:
    /**
     * A VL of one of the owner's ports can take a packet again.
     * @param port the port's number on its owner
     * @param dev the port
     * @param vl the VL
     */
    virtual void PortTxReady(uint8_t port, IbNetDevice* dev, uint8_t vl) = 0;

  protected:
    /// Owners are destroyed as what they are (ns-3 Objects), never through this interface.
    ~IbPortOwner() = default;
};

/**
 * @ingroup infiniband-link
 * @brief A port owner that forwards packets as they arrive, reading only their first word
 * (the switch).
 */
class IbPacketForwarder : public IbPortOwner
{
  public:
    /**
     * A packet arrived on one of the owner's ports. Its receive-buffer blocks stay taken
     * until the owner releases them (IbNetDevice::ReleaseRxBuffer).
     * @param port the port's number on its owner
     * @param dev the port
     * @param packet the packet, its reference handed over
     * @param head its first four bytes, big-endian (IbPacket::PeekHead)
     * @param bytes its size
     * @param vl the VL it arrived on
     * @param blocks its size in credit blocks
     */
    virtual void PortForward(uint8_t port,
                             IbNetDevice* dev,
                             IbOwnedPacket packet,
                             uint32_t head,
                             uint32_t bytes,
                             uint8_t vl,
                             uint32_t blocks) = 0;
    /**
     * @param dlid a destination LID
     * @return whether the owner has a route for @p dlid (a port checks a first hop with it)
     */
    virtual bool HasRoute(uint16_t dlid) const = 0;
    /// A port's SL-to-VL table or its number of data VLs changed.
    virtual void PortSlToVlChanged() = 0;

  protected:
    /// See IbPortOwner.
    ~IbPacketForwarder() = default;
};

/**
 * @ingroup infiniband-link
 * @brief A port owner that consumes the packets its ports receive (the channel adapter).
 */
class IbPacketConsumer : public IbPortOwner
{
  public:
    /**
     * A packet arrived on one of the owner's ports; its blocks are released at once.
     * @param port the port's number on its owner
     * @param dev the port
     * @param packet the packet
     * @param vl the VL it arrived on
     * @param blocks its size in credit blocks
     */
    virtual void PortReceive(uint8_t port,
                             IbNetDevice* dev,
                             Ptr<Packet> packet,
                             uint8_t vl,
                             uint32_t blocks) = 0;

  protected:
    /// See IbPortOwner.
    ~IbPacketConsumer() = default;
};

} // namespace ns3

#endif // IB_PORT_OWNER_H

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_PORT_OWNER_H
#define ETH_PORT_OWNER_H

#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

class EthNetDevice;
class Packet;

/**
 * @ingroup infiniband-link
 * @brief What owns an Ethernet port and is called by it directly, without a Callback
 * object: an Ethernet switch or a RoCE NIC.
 *
 * The link layer defines the interface and the layers above implement it, so that a port
 * hands frames and transmit notices up without knowing its owner's class; one virtual call
 * through a pointer in the port's hot state costs no cache miss a Callback would.
 * EthNetDevice::SetOwner registers an owner (nullptr: frames go to the ns-3 stack).
 */
class EthPortOwner
{
  public:
    /**
     * A data frame arrived on one of the owner's ports: store-and-forward, at its last
     * bit; cut-through (EthNetDevice::SetCutThrough), once its first 64 bytes are in; plus
     * the port's rxDelay either way. Frames with an FCS error were dropped and counted by
     * the port; PFC frames were consumed by it.
     * @param port the port's number on its owner (SetOwner)
     * @param dev the port
     * @param frame the frame, destination MAC through FCS; the owner takes it
     * @param prio the port's classification of it: its DSCP through the port's
     *        DscpToPriority map for IPv4, 0 for anything else
     */
    virtual void PortReceive(uint8_t port, EthNetDevice* dev, Ptr<Packet> frame, uint8_t prio) = 0;

    /**
     * Priority @p prio's transmit queue fell to the port's TxReadyThreshold bytes or
     * below (by default 0: it emptied), as a frame left it: it can take frames again.
     * @param port the port's number on its owner
     * @param dev the port
     * @param prio the priority
     */
    virtual void PortTxReady(uint8_t port, EthNetDevice* dev, uint8_t prio) = 0;

    /**
     * A data frame of queue @p prio left the queue and starts transmission (now, or when
     * the frame in flight ends; see EthNetDevice::Enqueue). A switch releases the buffer
     * the frame held here.
     * @param port the port's number on its owner
     * @param dev the port
     * @param prio the priority queue it left
     * @param bytes its size (destination MAC through FCS)
     * @param cookie what EthNetDevice::Enqueue was given with it
     *        (EthNetDevice::STACK_COOKIE for a frame of NetDevice::Send)
     */
    virtual void PortTxStarted(uint8_t port,
                               EthNetDevice* dev,
                               uint8_t prio,
                               uint32_t bytes,
                               uint32_t cookie) = 0;

  protected:
    /// Owners are destroyed as what they are (ns-3 Objects), never through this interface.
    ~EthPortOwner() = default;
};

} // namespace ns3

#endif // ETH_PORT_OWNER_H

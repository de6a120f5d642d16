/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_TX_START_LISTENER_H
#define IB_TX_START_LISTENER_H

#include <cstdint>

namespace ns3
{

class IbNetDevice;

/**
 * @ingroup infiniband-link
 * @brief Told by an IbNetDevice each time it starts to transmit a data packet: how a source
 * that keeps one of the port's VL queues filled learns that there is room again.
 *
 * The PhyTxBegin trace source tells the same, through ns-3's TracedCallback: a list node,
 * a callback object and its bound function, each a separate allocation. On a large fabric
 * every one of them is a cache miss per packet, which a saturating source pays for every
 * packet it sends. A listener is called through one pointer the port keeps, on an object
 * the source reads anyway (IbRawTrafficApplication).
 *
 * Register with IbNetDevice::AddTxStartListener; IbNetDevice::RemoveTxStartListener, or the
 * listener's destruction, or the port's, ends it. A listener is on one port at a time: the
 * port keeps its listeners in a list threaded through them.
 */
class IbTxStartListener
{
  public:
    IbTxStartListener() = default;
    /// Leaves the port's list, if it is on one.
    virtual ~IbTxStartListener();

    IbTxStartListener(const IbTxStartListener&) = delete;
    IbTxStartListener& operator=(const IbTxStartListener&) = delete;

    /// @return the port this listener is registered on, or null
    IbNetDevice* GetTxStartPort() const
    {
        return m_txStartPort;
    }

    /**
     * The port has taken a data packet off a VL's transmit queue and starts sending it
     * (at the point where it fires PhyTxBegin). The listener may queue packets on the port,
     * and remove itself, but not another listener.
     * @param vl the VL of the packet
     * @return true if it queued a packet: the port then calls it after the others the
     *         next time, so that listeners keeping one queue topped up take turns
     */
    virtual bool TxStarted(uint8_t vl) = 0;

  private:
    friend class IbNetDevice; // keeps the list

    IbNetDevice* m_txStartPort{nullptr};      //!< the port it is registered on
    IbTxStartListener* m_nextOnPort{nullptr}; //!< the port's next listener
};

} // namespace ns3

#endif /* IB_TX_START_LISTENER_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_CHANNEL_H
#define IB_CHANNEL_H

#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

namespace ns3
{

class IbNetDevice;
class Packet;

/**
 * @ingroup infiniband
 * @brief A full-duplex InfiniBand cable between exactly two ports.
 *
 * Each direction is an independent serial link; the channel only adds the propagation
 * delay. Data packets and link-level flow-control packets both cross it as ns3::Packet
 * objects, so a remote (MPI) variant can ship them across ranks unchanged.
 *
 * The delay is either given directly (`Delay`) or derived from a cable length
 * (`Length`, metres, at `DelayPerMetre`, about 5 ns/m in copper and fibre). A non-zero
 * Length takes precedence over Delay.
 */
class IbChannel : public Channel
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbChannel();
    ~IbChannel() override;

    /**
     * Attach a port. The third attach is refused with a fatal error.
     * When the second port attaches, both are told that the link is up (at the current
     * simulation time, so at time zero for a scenario built before Simulator::Run).
     * @param device the port
     */
    void Attach(Ptr<IbNetDevice> device);

    /**
     * Start delivery of a packet to the port at the other end. The packet reaches the
     * other port one propagation delay after its last bit leaves (or, if that port is a
     * cut-through switch port, after its LRH leaves), plus the receiving port's own
     * processing delay (a switch's forwarding latency).
     * @param packet the packet (not copied: the sender gives it up)
     * @param src the sending port
     * @param headerEnd time from now at which the packet's LRH is on the wire
     * @param txEnd time from now at which the sender puts the packet's last bit on the wire
     * @param linkPacket true for a link-level flow-control packet
     */
    virtual void Transmit(Ptr<Packet> packet,
                          Ptr<IbNetDevice> src,
                          Time headerEnd,
                          Time txEnd,
                          bool linkPacket);

    /**
     * @param device one end
     * @return the other end (null if none is attached yet)
     */
    Ptr<IbNetDevice> GetPeer(Ptr<const IbNetDevice> device) const;

    /// @return the one-way propagation delay
    Time GetDelay() const;

    // Channel
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

    /**
     * @param i 0 or 1
     * @return the attached port i
     */
    Ptr<IbNetDevice> GetIbDevice(std::size_t i) const;

  private:
    Ptr<IbNetDevice> m_devices[2]; //!< the two ends
    uint32_t m_nodeIds[2];         //!< their nodes' ids (event contexts)
    std::size_t m_nDevices;        //!< how many are attached
    Time m_delay;                  //!< Delay attribute
    double m_length;               //!< Length attribute, metres (0 = use Delay)
    Time m_delayPerMetre;          //!< DelayPerMetre attribute
};

} // namespace ns3

#endif /* IB_CHANNEL_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_CHANNEL_H
#define ETH_CHANNEL_H

#include "ib-owned-packet.h"

#include "ns3/channel.h"
#include "ns3/event-impl.h"
#include "ns3/ib-fifo.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

class EthNetDevice;
class Packet;

/**
 * @ingroup infiniband-link
 * @brief A full-duplex Ethernet cable between exactly two EthNetDevice ports.
 *
 * Each direction is an independent serial link; the cable adds the propagation delay
 * (attribute Delay, default 10 ns: 2 m at about 5 ns/m, a rack's copper or fibre run).
 * A data frame reaches the port at the other end one Delay after its last byte leaves
 * the sender (its wire time counts preamble, SFD and inter-frame gap: see
 * EthNetDevice::GetFrameTime), or, if that port is cut-through, one Delay after its
 * first 64 bytes leave; plus the receiving port's rxDelay. A PFC frame reaches it one
 * Delay after its last byte leaves, without rxDelay: the MAC handles it.
 *
 * Data frames of a direction arrive in the order they were sent, so each direction keeps
 * them in a FIFO and schedules one reusable event object per frame instead of allocating
 * an event holding the frame: a frame costs one event and no allocation on the cable.
 *
 * A cable whose ports are on different MPI ranks is an EthRemoteChannel (MPI builds
 * only): its directions hand their frames to it instead of to the FIFO.
 */
class EthChannel : public Channel
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    EthChannel();
    ~EthChannel() override;

    /**
     * Attach a port; the third is refused with a fatal error. When the second attaches,
     * both ports are up.
     * @param device the port
     */
    void Attach(Ptr<EthNetDevice> device);

    /**
     * @param device one end
     * @return the other end (null if none is attached yet)
     */
    Ptr<EthNetDevice> GetPeer(const EthNetDevice* device) const;

    /// @return the one-way propagation delay (the Delay attribute)
    Time GetDelay() const;

    /**
     * Whether this cable's frames leave the process: true for a cable between MPI ranks.
     * Read when a port attaches; the directions then call ShipData() and ShipControl()
     * instead of delivering.
     * @return false: both ends are simulated here
     */
    virtual bool IsBetweenRanks() const;

    // Channel
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

    /**
     * A data frame on a cable between ranks (IsBetweenRanks()).
     * @param frame the frame, its reference handed over
     * @param dst the receiving port
     * @param rxTime its absolute arrival time, as this cable would deliver it
     */
    virtual void ShipData(IbOwnedPacket frame, EthNetDevice* dst, Time rxTime);

    /**
     * A PFC frame on a cable between ranks (IsBetweenRanks()).
     * @param frame the frame
     * @param dst the receiving port
     * @param rxTime its absolute arrival time
     */
    virtual void ShipControl(Ptr<Packet> frame, EthNetDevice* dst, Time rxTime);

  private:
    friend class EthNetDevice; // sends on a Direction, tells its cut-through mode

    /// A data frame on its way along one direction.
    struct InFlight
    {
        IbOwnedPacket frame; ///< the frame
        uint32_t bytes{0};   ///< its size (destination MAC through FCS)
    };

    /**
     * One direction of the cable, towards port dst: the frames in flight and the event
     * that delivers them. It is scheduled once per frame in flight and never cancelled;
     * every firing delivers the oldest frame (the arrival times of one direction never
     * decrease), so the frame need not travel in the event.
     */
    class Direction : public EventImpl
    {
      public:
        /**
         * Put a data frame on this direction.
         * @param frame the frame, its reference handed over
         * @param bytes its size
         * @param headerEnd time from now at which its first 64 bytes have left the sender
         * @param txEnd time from now at which its last byte (and gap) has left the sender
         */
        void SendData(IbOwnedPacket frame, uint32_t bytes, Time headerEnd, Time txEnd);
        /**
         * Put a PFC frame on this direction; it arrives @p txEnd plus the propagation
         * delay from now. PFC frames are few: each takes an event of its own.
         * @param frame the frame
         * @param txEnd time from now at which its last byte has left the sender
         */
        void SendControl(Ptr<Packet> frame, Time txEnd);
        /// Drop everything in flight.
        void Clear();

        EthNetDevice* dst{nullptr};   ///< receiving port (raw: the cable holds it)
        uint32_t context{0};          ///< its node's id (event context)
        bool dstCutThrough{false};    ///< it takes frames at their first 64 bytes
        Time propagation;             ///< the cable's delay
        Time arrivalDelay;            ///< propagation plus the receiver's rxDelay
        Time lastArrival;             ///< arrival time of the newest data frame in flight
        IbFifo<InFlight> inFlight;    ///< data frames in flight, oldest first
        EthChannel* channel{nullptr}; ///< the cable (raw: the cable holds its directions)
        bool betweenRanks{false};     ///< frames go to the channel's Ship*() functions

      protected:
        void Notify() override;
    };

    /// Re-read the ports' cut-through modes and rxDelays and the delay; tell each port
    /// the direction it sends on.
    void UpdatePortModes();
    /**
     * @param delay the Delay attribute
     */
    void SetDelay(Time delay);

    Ptr<Direction> m_dir[2];        //!< the two directions, by receiving port
    Ptr<EthNetDevice> m_devices[2]; //!< the two ends
    std::size_t m_nDevices{0};      //!< how many are attached
    Time m_delay;                   //!< Delay attribute
};

} // namespace ns3

#endif /* ETH_CHANNEL_H */

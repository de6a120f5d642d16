/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_CHANNEL_H
#define IB_CHANNEL_H

#include "ib-owned-packet.h"

#include "ns3/channel.h"
#include "ns3/event-impl.h"
#include "ns3/ib-fifo.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <array>

namespace ns3
{

class IbFlowControlHeader;
class IbNetDevice;
class Packet;

/**
 * @ingroup infiniband-link
 * @brief A full-duplex InfiniBand cable between exactly two ports.
 *
 * Each direction is an independent serial link; the channel only adds the propagation
 * delay. Data packets cross it as ns3::Packet objects, with their first four bytes and
 * size beside them so that the receiving port and switch need not read the packet. A
 * link-level flow-control packet crosses it as an ns3::Packet when the sender's
 * FlowControlTx trace is connected or the cable is an IbRemoteChannel that ships it to
 * another MPI rank; otherwise only its fields (Op, FCTBS, VL, FCCL) cross, at the same
 * times, and the receiving end builds the packet only if its FlowControlRx trace is
 * connected when it arrives. That spares a packet allocation, a serialization and a
 * parse per flow-control packet.
 *
 * A direction's packets arrive in the order they were sent (a later packet's header
 * cannot pass an earlier packet's tail), so each direction keeps its packets in flight
 * in a FIFO and schedules one reusable event object per arrival instead of allocating
 * an event holding the packet.
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
     *
     * A plain IbChannel's ports bypass this and launch onto the direction themselves; a
     * subclass's ports call it (see m_portsLaunch).
     */
    virtual void Transmit(IbOwnedPacket packet,
                          Ptr<IbNetDevice> src,
                          Time headerEnd,
                          Time txEnd,
                          bool linkPacket);

    /**
     * Send a flow-control packet to the port at the other end; it arrives one propagation
     * delay after its last bit leaves. The base class sends the fields; the receiving end
     * builds an ns3::Packet only if its FlowControlRx trace is connected then.
     * @param fc the flow-control packet's fields (LPCRC computed or not)
     * @param src the sending port
     * @param txEnd time from now at which the sender puts its last bit on the wire
     */
    virtual void TransmitFlowControl(const IbFlowControlHeader& fc,
                                     Ptr<IbNetDevice> src,
                                     Time txEnd);

    /**
     * @param device one end
     * @return the other end (null if none is attached yet)
     */
    Ptr<IbNetDevice> GetPeer(Ptr<const IbNetDevice> device) const;

    /// @return true if the two ends are simulated by different MPI ranks (IbRemoteChannel)
    virtual bool IsBetweenRanks() const;

    /**
     * The cable fails now (or a port at either end: IBA has no half-up link): both ports
     * go down at once. What is on the wire in either direction is lost when it would
     * have arrived; each port drops what it holds queued and, at a switch, what the
     * switch forwards to it until the subnet manager routes around it. Upper layers
     * are told through the ports' link-change callbacks. Refused on a cable between MPI
     * ranks. Nothing happens if the cable is down already.
     */
    void SetLinkDown();
    /**
     * The cable is up again now: once what was on the wire when it failed has drained,
     * both ports train again and come up as at the first link up (initial flow-control
     * packets, credits from zero). Nothing happens if the cable is up.
     */
    void SetLinkUp();
    /// @return true while SetLinkDown holds (until SetLinkUp)
    bool IsLinkDown() const;

    /**
     * TracedCallback signature for LinkState.
     * @param up true when the cable comes up again, false when it fails
     */
    typedef void (*LinkStateTracedCallback)(bool up);

    /// @return the one-way delay of a packet's first bit: propagation plus FecLatency
    Time GetDelay() const;
    /// @return the propagation delay in effect (Delay, or Length x DelayPerMetre), without
    ///         FecLatency: what the Delay attribute reads
    Time GetPropagationDelay() const;

    // Channel
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

    /// The ports launch their packets onto a Direction themselves instead of calling
    /// Transmit and TransmitFlowControl. Always so for a plain IbChannel; a subclass
    /// (whose TypeId differs) gets it only if it sets this, which it may do only if it
    /// overrides neither (IbRemoteChannel overrides both: it must see every packet).
    bool m_portsLaunch{false};

    /**
     * @param i 0 or 1
     * @return the attached port i
     */
    Ptr<IbNetDevice> GetIbDevice(std::size_t i) const;

    /**
     * @param fc flow-control fields
     * @return a packet holding them as the 6-byte IBA flow-control packet
     */
    static Ptr<Packet> MakeFlowControlPacket(const IbFlowControlHeader& fc);

  private:
    friend class IbNetDevice; // told its switch mode changes; the port sends on a Direction

    /// One packet on its way along one direction.
    struct InFlight
    {
        IbOwnedPacket packet; ///< the packet (none for a flow-control packet sent as fields)
        /// A data packet's first four bytes, big-endian (IbPacket::PeekHead: LRH VL, SL and
        /// DLID), or the Op, FCTBS, VL and FCCL of a flow-control packet sent as fields;
        /// 0 for a flow-control packet that crosses as a packet
        uint32_t head{0};
        uint16_t bytes{0};      ///< a data packet's size (0 for flow control)
        bool linkPacket{false}; ///< a flow-control packet (with or without packet)
    };

    /**
     * One direction of the cable, from port 1 - d to port d: the packets in flight and
     * the event that delivers them, in one cache-line aligned object. It is scheduled
     * once per packet in flight (possibly several times at once: every firing delivers
     * the oldest packet, so which one fires first does not matter) and never
     * cancelled. What a packet-hop reads of it (reference count, receiving port, the
     * delay, the oldest packets) is in its first lines, not in three separate
     * allocations, and the sending port launches packets onto it directly (see
     * IbNetDevice), without touching the IbChannel object.
     */
    class alignas(64) Direction : public EventImpl
    {
      public:
        /**
         * Put a data packet on this direction (what IbChannel::Transmit does for a
         * plain cable).
         * @param packet the packet
         * @param head its first four bytes (IbPacket::PeekHead), carried beside it
         * @param bytes its size
         * @param headerEnd time from now at which its LRH is on the wire
         * @param txEnd time from now at which its last bit is on the wire
         */
        void SendData(IbOwnedPacket packet,
                      uint32_t head,
                      uint32_t bytes,
                      Time headerEnd,
                      Time txEnd);
        /**
         * Put flow-control fields on this direction (what IbChannel::TransmitFlowControl
         * does for a plain cable).
         * @param word the fields: the packet's first word (IbFlowControlHeader::FirstWordOf)
         * @param txEnd time from now at which its last bit is on the wire
         */
        void SendFlowControl(uint32_t word, Time txEnd);
        /**
         * Put @p item on this direction; it arrives @p delay from now.
         * @param delay time from now
         * @param item what arrives
         */
        void Launch(Time delay, InFlight&& item);
        /**
         * Append a packet (or flow-control fields) behind those in flight.
         * @param item what arrives after the others
         */
        void Push(InFlight&& item);
        /**
         * @return the oldest item in flight, removed
         */
        InFlight Pop();
        /// Drop everything in flight.
        void Clear();
        /// The cable failed: the receiver counts every data packet in flight as lost now
        /// (they stay queued, and Arrive drops them unseen at their arrival times).
        void LoseInFlight();
        /// The oldest packet in flight arrives at dst.
        void Arrive();

        // What a packet sent or delivered reads, in the first line (the EventImpl base
        // takes 16 bytes): the receiver, the timing and the oldest item in flight when it
        // was sent onto an empty direction (usual on a link: a 4 KB packet at HDR takes
        // 164 ns, about as long as it is on the cable and in the next switch).
        IbNetDevice* dst{nullptr}; ///< receiving port
        uint32_t context{0};       ///< its node's id (event context)
        bool dstCutThrough{false}; ///< it is a cut-through switch port
        bool firstFull{false};     ///< first holds the oldest item in flight
        uint8_t head{0};           ///< index of the oldest item in ring
        uint8_t size{0};           ///< items in ring
        Time arrivalDelay;         ///< propagation delay plus the receiver's processing delay
        Time lastArrival;          ///< arrival time of the newest item in flight
        InFlight first;            ///< the oldest item, if it found the direction empty
        // then the rest
        std::array<InFlight, 8> ring; ///< the oldest items in flight (after first), in order
        IbFifo<InFlight> overflow;    ///< newer ones, while the ring is full
        IbChannel* channel{nullptr};  ///< the cable (raw: the cable holds its directions)

      protected:
        void Notify() override;
    };

    /// Re-read the receiving ports' switch modes (cut-through, processing delay) and the
    /// delay; tell each port which direction it sends on.
    void UpdatePortModes();
    /**
     * Set the Delay attribute.
     * @param delay the one-way propagation delay
     */
    void SetDelay(Time delay);
    /// @return the Delay attribute as read: the propagation delay in effect
    ///         (GetPropagationDelay())
    Time GetDelayAttribute() const;
    /**
     * Set the Length attribute.
     * @param length metres
     */
    void SetLength(double length);
    /// @return the Length attribute
    double GetLength() const;
    /**
     * Set the DelayPerMetre attribute.
     * @param delay propagation delay per metre
     */
    void SetDelayPerMetre(Time delay);
    /// @return the DelayPerMetre attribute
    Time GetDelayPerMetre() const;
    /**
     * Set the FecLatency attribute.
     * @param latency one-way FEC latency
     */
    void SetFecLatency(Time latency);
    /// @return the FecLatency attribute
    Time GetFecLatency() const;

    Ptr<Direction> m_dir[2];               //!< the two directions, by receiving port
    Ptr<IbNetDevice> m_devices[2];         //!< the two ends
    std::size_t m_nDevices;                //!< how many are attached
    Time m_delay;                          //!< Delay attribute
    double m_length;                       //!< Length attribute, metres (0 = use Delay)
    Time m_delayPerMetre;                  //!< DelayPerMetre attribute
    Time m_fecLatency;                     //!< FecLatency attribute
    bool m_down{false};                    //!< SetLinkDown holds
    TracedCallback<bool> m_linkStateTrace; //!< LinkState
};

} // namespace ns3

#endif /* IB_CHANNEL_H */

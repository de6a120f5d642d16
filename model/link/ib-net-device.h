/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_NET_DEVICE_H
#define IB_NET_DEVICE_H

#include "ib-ca-congestion-setting.h"
#include "ib-channel.h"
#include "ib-link-rate.h"
#include "ib-owned-packet.h"
#include "ib-port-owner.h"
#include "ib-shared-release.h"
#include "ib-tx-start-listener.h"
#include "ib-vl-arbiter.h"

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/ib-fifo.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-prefetch.h"
#include "ns3/ib-traced-callback.h"
#include "ns3/mac16-address.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstddef>
#include <memory>
#include <string>

namespace ns3
{

class IbChannel;
class ErrorModel;
class Packet;

/**
 * @ingroup infiniband-link
 * @brief One InfiniBand port (of an HCA or a switch): per-VL transmit queues, a VL
 * arbiter, and credit-based link-level flow control.
 *
 * Transmit side: a sealed IBA packet given to SendIbPacket() is put on the VL its SL
 * maps to (SL-to-VL table; VL15 packets stay on VL15), queued, and sent when the VL
 * arbiter picks that VL and the receiver has advertised enough credits. Credits are
 * counted in 64-byte blocks as IBA does: the port keeps FCTBS (blocks sent) per VL and
 * the last FCCL (credit limit) received from the peer, and sends a packet of n blocks
 * only if (FCCL - (FCTBS + n)) mod 4096 <= 2048. A packet is therefore never sent
 * without buffer space at the other end, and the link is lossless by construction.
 * VL15 is not flow-controlled and is sent ahead of all data VLs.
 *
 * Receive side: each data VL has a receive buffer of VlBufferSize bytes. A packet holds
 * its blocks until the consumer releases them: a host port releases them when its
 * upper layer has taken the packet (at once, or at RxDrainRate); a switch (which
 * installs an IbReceiveCallback) releases them when the packet leaves the switch.
 * Released blocks return to the sender in flow-control packets (6 bytes, taking wire
 * time on the reverse direction of the cable, sent between data packets) whenever
 * CreditUpdateThreshold bytes have been freed or the buffer empties, at link up
 * (initial credits), and at least every FlowControlRefresh while the VL is active.
 *
 * One event per packet per stage: the end of serialization at the sender, the arrival
 * at the receiver; flow-control packets cost one arrival event each and no sender event.
 */
class IbNetDevice : public NetDevice
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbNetDevice();
    ~IbNetDevice() override;

    /// Highest number of data VLs (VL0..VL14).
    static constexpr uint8_t MAX_DATA_VLS = 15;
    /// The management VL.
    static constexpr uint8_t VL15 = 15;

    /**
     * Callback that takes over received data packets (a switch installs one).
     * Arguments: this port, the packet, the VL it arrived on, its size in credit blocks.
     * The consumer must later call ReleaseRxBuffer(vl, blocks).
     */
    typedef Callback<void, Ptr<IbNetDevice>, Ptr<Packet>, uint8_t, uint32_t> IbReceiveCallback;

    /**
     * TracedCallback signature for per-VL events with a count.
     * @param vl the virtual lane
     * @param value packets or bytes
     */
    typedef void (*VlValueTracedCallback)(uint8_t vl, uint32_t value);
    /**
     * TracedCallback signature for the end of a credit stall.
     * @param vl the virtual lane
     * @param duration how long the head packet of that VL waited for credits
     */
    typedef void (*CreditStallTracedCallback)(uint8_t vl, Time duration);

    /**
     * Attach the port to a cable.
     * @param channel the cable
     * @return true
     */
    bool Attach(Ptr<IbChannel> channel);

    /**
     * Queue a sealed IBA packet (LRH ... VCRC, see IbPacket::Seal) for transmission.
     * Its VL is set from its SL through the SL-to-VL table (unless it is on VL15).
     * @param packet the packet
     * @return false if it was dropped (its SL maps to VL15, i.e. "drop", or its VL
     *         queue is full); the drop is traced by MacTxDrop
     */
    bool SendIbPacket(Ptr<Packet> packet);

    /**
     * Give back receive-buffer blocks held by a packet that a consumer installed with
     * SetIbReceiveCallback has finished with.
     * @param vl the VL the packet arrived on
     * @param blocks its size in blocks, as passed to the callback
     */
    void ReleaseRxBuffer(uint8_t vl, uint32_t blocks);

    /**
     * Hand received data packets to @p cb instead of delivering them to the node.
     * @param cb the consumer
     */
    void SetIbReceiveCallback(IbReceiveCallback cb);

    /**
     * Callback with which a switch learns that an output VL can take its next packet:
     * the VL's transmit queue has just emptied, or credits arrived while it was empty.
     * Arguments: this port, the VL.
     */
    typedef Callback<void, Ptr<IbNetDevice>, uint8_t> TxReadyCallback;
    /**
     * @param cb the switch's callback
     */
    void SetTxReadyCallback(TxReadyCallback cb);

    /**
     * Make @p owner (a switch) this port's owner: arrivals and transmit-ready notices go to
     * it by a direct call instead of through the two callbacks (fewer cache misses per
     * packet on a large fabric). SetIbReceiveCallback and SetTxReadyCallback clear it.
     * @param owner the switch
     * @param port this port's number on it
     */
    void SetForwarder(IbPacketForwarder* owner, uint8_t port);
    /**
     * As SetForwarder, for an owner that consumes packets (a channel adapter).
     * @param owner the channel adapter
     * @param port this port's number on it
     */
    void SetConsumer(IbPacketConsumer* owner, uint8_t port);
    /// @return the RxDrainRate attribute (0 bps: packets leave the buffer at once)
    DataRate GetRxDrainRate() const;
    /// @return the VlArbitrationHigh attribute value
    std::string GetVlArbHigh() const;
    /// @return the VlArbitrationLow attribute value
    std::string GetVlArbLow() const;
    /// @return the SlToVlTable attribute value
    std::string GetSlToVl() const;

    /**
     * Prefetch what sending a packet on @p vl reads of this port: its first three lines
     * and the VL's. For a switch that has just chosen this port as a packet's output: on a
     * large fabric they are long out of the cache, and asked for together they load
     * together rather than one after another as the code reaches them.
     * @param vl the VL the packet is likely to leave on
     */
    void PrefetchForSend(uint8_t vl) const
    {
        IbPrefetch::Now(&m_hot.txBusy);
        IbPrefetch::Now(&m_hot.fcSent);
        IbPrefetch::Now(&m_hot.txBytes);
        IbPrefetch::Now(&m_vl[vl & 15]);
    }

    /**
     * Name, for the arrival being scheduled on this port (IbChannel), what it reads first:
     * the port's first lines and the VL's (IbPrefetch::Hint).
     * @param vl the VL the packet arrives on
     */
    void HintArrival(uint8_t vl) const
    {
        IbPrefetch::Hint(this, ARRIVAL_LINES, &m_vl[vl & 15]);
    }

    /**
     * Tell @p listener each time this port starts a data packet (see IbTxStartListener:
     * what PhyTxBegin tells, without a trace source's per-packet cost). The listeners are
     * called in turn, and the one called first moves to the end of the list after each
     * packet, so that listeners filling one queue share it evenly.
     * @param listener the listener, registered on no port
     */
    void AddTxStartListener(IbTxStartListener* listener);
    /**
     * Stop telling @p listener; nothing if it is not registered on this port.
     * @param listener the listener
     */
    void RemoveTxStartListener(IbTxStartListener* listener);

    /**
     * Queue a packet a switch forwards out of this port. The packet's LRH VL must already
     * be @p vl; no SL-to-VL mapping is applied. When its transmission ends, the port
     * releases @p blocks of @p inVl's buffer at @p inPort (credits go back upstream only
     * then). Used by IbSwitch.
     * @param packet the packet
     * @param vl the output VL
     * @param inPort the input port whose buffer holds it
     * @param inVl the VL of that buffer
     * @param earliestStart do not start serializing before this time (cut-through onto a
     *        faster link must not overtake the packet's own tail)
     * @param bytes the packet's size if the caller knows it (0: read it from the packet,
     *        which on a large fabric may have left the cache while it waited)
     */
    void EnqueueForwarded(Ptr<Packet> packet,
                          uint8_t vl,
                          IbNetDevice* inPort,
                          uint8_t inVl,
                          Time earliestStart,
                          uint32_t bytes = 0);
    /**
     * EnqueueForwarded for a packet whose reference the caller hands over without
     * writing its reference count (IbSwitch's input buffers hold IbOwnedPacket), and
     * whose size and first four bytes the caller knows: the port, the cable and the next
     * switch do not read the packet itself.
     * @param packet the packet
     * @param vl the output VL
     * @param inPort the input port whose buffer holds it
     * @param inVl the VL of that buffer
     * @param earliestStart do not start serializing before this time
     * @param bytes the packet's size (not 0)
     * @param head the packet's first four bytes (LRH: VL, LVer, SL, LNH, DLID), as a
     *        big-endian number; its VL is @p vl
     */
    void EnqueueForwarded(IbOwnedPacket packet,
                          uint8_t vl,
                          IbNetDevice* inPort,
                          uint8_t inVl,
                          Time earliestStart,
                          uint32_t bytes,
                          uint32_t head);

    /**
     * EnqueueForwarded for one copy of a packet: its input buffer is released through
     * @p release, when the last copy has left.
     * @param packet the copy
     * @param vl the output VL
     * @param release the shared release (remaining counts this copy)
     * @param earliestStart do not start serializing before this time
     */
    void EnqueueForwardedCopy(Ptr<Packet> packet,
                              uint8_t vl,
                              IbSharedRelease* release,
                              Time earliestStart);

    /**
     * @param vl a data VL
     * @param blocks a packet size in blocks
     * @return true if the peer has advertised room for such a packet on that VL
     */
    bool HasCreditsFor(uint8_t vl, uint32_t blocks) const;

    /// @return the TxQueueMaxPackets attribute: packets a VL's transmit queue holds
    uint32_t GetTxQueueMaxPackets() const
    {
        return m_txQueueMaxPackets;
    }

    /**
     * The owner (a switch) holds a packet for @p vl that HasCreditsFor refused, with this
     * port's transmit queue for @p vl empty: the VL stalls on credits as if the packet
     * were at the head of its queue, from when the wire is free, until a flow-control
     * packet makes room for it (CreditStall, GetCreditStallTime).
     * @param vl a data VL
     * @param blocks the packet's size in blocks
     */
    void NoteCreditStall(uint8_t vl, uint32_t blocks);

    /**
     * Make the port a switch port: arriving packets (data and flow control) are handed
     * on @p rxDelay after their arrival (the switch's forwarding latency), and with
     * @p cutThrough as soon as the LRH has arrived rather than the whole packet.
     * @param rxDelay processing delay added to every arrival
     * @param cutThrough forward once the header is in
     */
    void SetSwitchPortMode(Time rxDelay, bool cutThrough);
    /// @return the delay added to every arrival at this port
    Time GetRxDelay() const;
    /// @return true if packets are handed on once their LRH has arrived
    bool IsCutThrough() const;

    /// @param lid the port's LID (0 = unassigned)
    void SetLid(uint16_t lid);
    /// @return the port's LID
    uint16_t GetLid() const;
    /**
     * Set the LID mask control: the port answers to the 2^lmc LIDs from its (aligned) LID
     * (the subnet manager sets it with the LID).
     * @param lmc 0..7
     */
    void SetLmc(uint8_t lmc);
    /// @return the LID mask control
    uint8_t GetLmc() const;
    /**
     * Program the port's IBA congestion control (a channel adapter's port; the subnet
     * manager does it when its CongestionControl attribute is on).
     * @param setting the CA congestion setting and table; null turns it off
     */
    void SetCongestionSetting(std::shared_ptr<const IbCaCongestionSetting> setting);

    /**
     * Mark a channel adapter port as reached through adaptive routing (the subnet manager
     * does it when its AdaptiveRouting attribute is on): its RC queue pairs then take
     * requests that arrive ahead of their turn and process them in order.
     * @param on adaptive routing on
     */
    void SetAdaptiveRouting(bool on)
    {
        m_adaptiveRouting = on;
    }

    /// @return whether the port's RC queue pairs expect reordered requests
    bool IsAdaptiveRouting() const
    {
        return m_adaptiveRouting;
    }

    /// @return the port's congestion control setting, null when it is off
    const IbCaCongestionSetting* GetCongestionSetting() const
    {
        return m_ccSetting.get();
    }

    /**
     * Look one hop ahead for a packet to @p dlid: the switch this port's cable leads to
     * must have a route for it, or, back to back, the port at the other end must have that
     * LID. Applications and queue pairs call it when they are given a destination, so that
     * a mistyped or unrouted LID stops with a message rather than every packet being dropped.
     * @param dlid a unicast LID
     * @return empty if the first hop delivers (or nothing can be said: no cable, or no port
     *         at its other end), otherwise what is wrong and what to use, to follow
     *         "dlid N (0xN) "
     */
    std::string FirstHopProblem(uint16_t dlid) const;
    /// @return the data rate given by LinkSpeed and LinkWidth
    DataRate GetDataRate() const;
    /// @return the LinkSpeed attribute as an enum value
    IbLinkRate::Speed GetLinkSpeedValue() const;
    /// @return the LinkWidth attribute as a number of lanes
    uint8_t GetLinkWidthValue() const;
    /// @return the number of data VLs
    uint8_t GetNumDataVls() const;
    /**
     * @param sl a service level
     * @return the VL it maps to (15 means "drop")
     */
    uint8_t GetVlForSl(uint8_t sl) const;
    /**
     * @param vl a data VL
     * @return whether an entry of weight > 0 in VlArbitrationHigh or VlArbitrationLow
     * names it (else the port can never send a packet queued on it)
     */
    bool IsVlArbitrated(uint8_t vl) const;
    /// @return the IBA MTU (payload bytes per packet)
    uint32_t GetIbMtu() const;
    /// @return the per-VL receive buffer in bytes
    uint32_t GetVlBufferSize() const;
    /**
     * Set the VlBufferSize attribute (refused once the link is up).
     * @param bytes receive buffer per data VL
     */
    void SetVlBufferSize(uint32_t bytes);
    /**
     * Set the CreditUpdateThreshold attribute (refused once the link is up).
     * @param bytes freed bytes that make the port send a flow-control packet
     */
    void SetCreditUpdateThreshold(uint32_t bytes);
    /// @return the CreditUpdateThreshold attribute
    uint32_t GetCreditUpdateThreshold() const;
    /**
     * Set the LimitOfHighPriority attribute (refused once the link is up).
     * @param limit 4 KB units (0 = one packet, 255 = unbounded)
     */
    void SetLimitOfHighPriority(uint8_t limit);
    /// @return the LimitOfHighPriority attribute
    uint8_t GetLimitOfHighPriority() const;
    /// @param em the receive error model (corrupted packets fail the VCRC and are dropped)
    void SetReceiveErrorModel(Ptr<ErrorModel> em);
    /// @return the receive error model (null if none)
    Ptr<ErrorModel> GetReceiveErrorModel() const;
    /**
     * @param vl a VL
     * @return packets waiting in its transmit queue
     */
    uint32_t GetTxQueueLength(uint8_t vl) const;
    /**
     * @param vl a data VL
     * @return total time its head packet has waited for credits so far
     */
    Time GetCreditStallTime(uint8_t vl) const;
    /**
     * @param vl a data VL
     * @return bytes of its receive buffer in use (whole blocks)
     */
    uint32_t GetRxBufferUsed(uint8_t vl) const;
    /**
     * @param vl a data VL
     * @return the credits (64-byte blocks) the peer has granted and this port not used
     */
    uint32_t GetAvailableCredits(uint8_t vl) const;
    /// @return data packets dropped on receive because they failed their CRC
    uint64_t GetRxCrcErrors() const;
    /// @return flow-control packets sent
    uint64_t GetFlowControlPacketsSent() const;
    /// @return data packets this port has started transmitting
    uint64_t GetTxPackets() const;
    /// @return wire bytes of the data packets this port has started transmitting
    uint64_t GetTxBytes() const;
    /**
     * What a measurement over a window of time needs: GetTxBytes() counts a packet whole
     * from its first bit, so bytes counted between two instants can exceed what the link
     * carried between them by up to a packet.
     * @return wire bytes of data packets this port has put on the wire by now: GetTxBytes()
     * less what is still to go of the packet being sent
     */
    double GetTxBytesOnWire() const;
    /**
     * What a utilisation needs when the link may train to another rate during a run:
     * the data rate integrated over time.
     * @param at a time not before the last rate change (normally now or later)
     * @return the bits the port's wire could have carried from time 0 to @p at, at the
     *         rates it ran at
     */
    double GetWireCapacityBits(Time at) const;

    /**
     * Called by the channel when both ends are attached: exchange initial credits.
     */
    void NotifyLinkUp();

    /**
     * @return true while the cable or this port is down (IbChannel::SetLinkDown): the
     *         port sends nothing, drops what a switch forwards to it and what was queued,
     *         and loses what arrives from the wire
     */
    bool IsFailed() const;
    /// @return packets lost to a failed link: queued, forwarded to it or on the wire
    uint64_t GetLinkDownDrops() const;
    /**
     * TracedCallback signature for LinkDownDrop.
     * @param packet the packet lost
     * @param onWire true if it was on the cable (arriving here), false if it was queued
     *        here or forwarded here by a switch
     */
    typedef void (*LinkDownDropTracedCallback)(Ptr<const Packet> packet, bool onWire);

    /**
     * Called by the channel when a packet's last bit has arrived.
     * @param packet the packet
     * @param linkPacket true for a flow-control packet
     */
    void ReceiveFromChannel(Ptr<Packet> packet, bool linkPacket);

    // NetDevice
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    /**
     * @return true only if the port's cable leads to a node with another system id (an
     *         MPI rank): ns-3's distributed engines take their lookahead from such
     *         point-to-point devices. Otherwise false (always when nodes are not given
     *         system ids, as in sequential runs): a port of a switched fabric.
     */
    bool IsPointToPoint() const override;
    bool IsBridge() const override;
    /**
     * Send a packet of an ns-3 protocol as an IBA raw datagram (LRH LNH=0, RWH with the
     * EtherType, payload, VCRC) to the LID in @p dest (a Mac16Address), on SL
     * RawDatagramSl.
     * @param packet the payload
     * @param dest the destination LID as Mac16Address
     * @param protocolNumber the EtherType
     * @return false if the packet was dropped
     */
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;
    void DoInitialize() override;

  private:
    /**
     * Stop with a message if an attribute that credits or the link's agreement depend on
     * changes once the link is up.
     * @param attribute its name
     * @param changed whether the new value differs from the current one
     */
    void RefuseOnceUp(const char* attribute, bool changed) const;
    friend class IbChannel;            // sets m_hot.txDir
    friend class IbChannel::Direction; // delivers packets and flow-control fields

    /// A packet waiting in a transmit queue.
    struct TxItem
    {
        IbOwnedPacket packet; ///< the packet
        uint32_t head{0};     ///< its first four bytes (the LRH's), big-endian
        uint16_t bytes{0};    ///< wire size (IBA: at most 4 KB plus headers)
        uint8_t releaseVl{0}; ///< VL of the input buffer holding it (switch)
        /// input port to release at TX end (switch); with the lowest bit set, a
        /// IbSharedRelease (a multicast copy)
        IbNetDevice* releasePort{nullptr};
        Time earliestStart; ///< cut-through: do not start before this

        /// @return the credit blocks it occupies
        uint16_t Blocks() const
        {
            return static_cast<uint16_t>(IbPacket::Blocks(bytes));
        }
    };

    static_assert(sizeof(TxItem) == 32, "two transmit queue entries per cache line");

    /// Transmit-side state of one VL.
    struct TxVl
    {
        IbFifo<TxItem> queue;    ///< packets waiting
        uint16_t fctbs{0};       ///< flow-control total blocks sent, mod 4096
        uint16_t fccl{0};        ///< credit limit last advertised by the peer
        bool stalled{false};     ///< head packet is waiting for credits
        uint16_t stallBlocks{0}; ///< blocks of the packet an owner waits to hand over while
                                 ///< the queue is empty (NoteCreditStall; 0: none)
        Time stallStart;         ///< when the current stall began
    };

    /// Receive-side state of one VL.
    struct RxVl
    {
        uint32_t usedBlocks{0};  ///< blocks held by packets not yet released
        uint32_t freedBlocks{0}; ///< blocks released since the last flow-control packet
        uint16_t abr{0};         ///< adjusted blocks received, mod 4096
        bool active{false};      ///< data arrived since the last refresh check
        Time lastFcSent;         ///< when the last flow-control packet for it left
    };

    /// Transmit and receive state of one VL, side by side in one cache line (a packet
    /// touches one line per VL and port; the stall totals are kept apart, m_stallTotal).
    /// Its alignment makes the port's 64. Do not raise the port's to 128: the 1024-host
    /// benchmark ran 1.37 times slower so (doc/infiniband.rst, "Eighth round").
    struct alignas(64) VlState
    {
        TxVl tx; ///< transmit side
        RxVl rx; ///< receive side
    };

    static_assert(sizeof(VlState) == 64, "a VL's state fills one cache line");

    /**
     * A data packet's last bit (or, on a cut-through switch port, its LRH) has arrived.
     * @param packet the packet
     * @param head its first four bytes, big-endian (the cable carries them beside it)
     * @param bytes its size
     */
    void ReceiveData(IbOwnedPacket packet, uint32_t head, uint32_t bytes);
    /**
     * Abort, naming this port, if a packet is too large for the 16-bit sizes the cable
     * and the transmit queues carry (IBA packets are at most 4 KB plus headers).
     * @param bytes the packet's size
     * @param what what the port is doing with it ("received", ...)
     */
    void CheckWireSize(uint32_t bytes, const char* what) const;
    /**
     * Start the next transmission if the transmitter is free: first any pending
     * flow-control packets, then VL15, then the data VL the arbiter picks.
     */
    void TrySend();
    /**
     * Put m_hot.txCurrent, just taken from @p vl's queue (or handed over directly by
     * EnqueueForwarded), on the wire: credits, timing, traces, the end-of-transmission
     * event, the cable, and the owner's TX-ready notice if the queue is now empty.
     * @param vl its VL
     * @param emptied true if @p vl's queue is empty now
     */
    void StartTransmission(uint8_t vl, bool emptied);
    /**
     * Tell the owner (switch, HCA, or the TxReady callback) that @p vl's transmit queue
     * can take another packet.
     * @param vl the VL
     */
    void NotifyTxReady(uint8_t vl);
    /// The transmitter finished the current data packet.
    void TransmitComplete();
    /**
     * Put a flow-control packet for @p vl on the wire now (transmitter free).
     * @param vl the VL
     * @param op IbFlowControlHeader::OP_NORMAL or OP_INIT
     */
    void SendFlowControl(uint8_t vl, uint8_t op);
    /**
     * Ask for a flow-control packet for @p vl at the next gap between packets.
     * @param vl the VL
     */
    void RequestFlowControl(uint8_t vl);
    /**
     * @param vl a data VL
     * @return the FCCL this port advertises for it as a receiver
     */
    uint16_t ComputeFccl(uint8_t vl) const;
    /**
     * @param vl a data VL
     * @param blocks a packet size in blocks
     * @return true if the peer's credits allow sending it
     */
    bool HasCredits(uint8_t vl, uint32_t blocks) const;
    /**
     * A flow-control packet arrived.
     * @param packet the packet
     */
    void ReceiveFlowControl(Ptr<Packet> packet);
    /**
     * Apply a flow-control packet's fields (from a packet, or from the channel when no
     * packet was built for it).
     * @param vl its VL
     * @param fctbs its FCTBS: blocks the sender has sent on @p vl, mod 4096
     * @param fccl its FCCL: the credit limit the sender advertises for @p vl
     */
    void ApplyFlowControl(uint8_t vl, uint16_t fctbs, uint16_t fccl);
    /**
     * Hand a received data packet to the upper layer (host port).
     * @param packet the packet
     * @param head its first four bytes (IbPacket::PeekHead)
     */
    void DeliverUp(Ptr<Packet> packet, uint32_t head);
    /// Unregister every IbTxStartListener (the port goes away).
    void ForgetTxStartListeners();
    /// The drain of the head of the host receive queue finished (RxDrainRate).
    void DrainComplete();
    /// Periodic flow-control refresh while VLs are active.
    void RefreshFlowControl();
    /**
     * Fire PhyTxBegin, Sniffer and PromiscSniffer for a packet whose first bit is on the
     * wire now.
     * @param p the packet
     */
    void FireTxBeginTraces(Ptr<Packet> p);
    /// Validate attribute combinations and build derived state (tables, rates).
    void Configure();
    /**
     * Stop with a message: a packet waits on a VL that the arbitration tables never pick.
     * @param vls the waiting VLs (bit v for VL v); the lowest is named
     */
    [[noreturn]] void AbortUnarbitrated(uint16_t vls) const;
    /// Recompute the per-byte serialization time after the data rate changed.
    void UpdateRate();
    /**
     * Serialization time of @p bytes on this port's wire. Back-to-back transmissions
     * carry the sub-resolution remainder from one packet to the next, so a long train
     * of packets takes exactly bytes x 8 / rate in total whatever the time resolution.
     * @param bytes wire bytes
     * @param backToBack true if the wire was busy until now
     * @return the time the bytes occupy the wire
     */
    Time SerializationTime(uint32_t bytes, bool backToBack);

    /**
     * @param speed the LinkSpeed attribute value
     */
    void SetLinkSpeed(std::string speed);
    /// @return the LinkSpeed attribute value
    std::string GetLinkSpeed() const;
    /**
     * @param width the LinkWidth attribute value
     */
    void SetLinkWidth(std::string width);
    /**
     * Apply a LinkSpeed or LinkWidth change: before link up, the port's own rate (training
     * happens at link up); with the link up and the trained rate changing, the link goes
     * down at both ends (no packet starts; upper layers are not told), and FinishRetrain
     * brings it up once what is on the wire has arrived. Aborts on a cable between MPI
     * ranks, whose other end cannot follow, unless the rate stays.
     * @param attribute the attribute that changed, for the message
     */
    void Retrain(const char* attribute);
    /// Both ends train to the common speed and width, come up and exchange credits.
    void FinishRetrain();
    /**
     * The cable or the port went down (IbChannel::SetLinkDown, on both ends): drop the
     * queued packets, forget the credit state of both directions (link initialisation
     * starts it over), tell the upper layers and wake the owner so that what waits for
     * this port is dropped.
     */
    void LinkFailed();
    /// The link trained again (IbChannel): come up as at the first link up.
    void LinkRestored();
    /**
     * Lose a packet to the failed link.
     * @param packet the packet
     * @param onWire it was arriving from the cable
     */
    void LoseToFailedLink(Ptr<const Packet> packet, bool onWire);
    /**
     * Free the switch input buffer a forwarded packet held (no-op for the port's own).
     * @param item the packet that has left or was dropped
     */
    void ReleaseForwarded(const TxItem& item);
    /**
     * Change the data rate, closing the interval GetWireCapacityBits integrates.
     * @param rate the new rate
     */
    void SetRate(DataRate rate);
    /**
     * @param peer the port at the other end
     * @return the rate of the highest speed and widest width this port and @p peer both
     *         support
     */
    DataRate TrainedRate(const IbNetDevice& peer) const;
    /**
     * Set the active speed and the data rate to TrainedRate(@p peer).
     * @param peer the port at the other end
     */
    void TrainWith(const IbNetDevice& peer);
    /// @return the LinkWidth attribute value
    std::string GetLinkWidth() const;
    /**
     * @param mtu the Mtu attribute value
     */
    void SetIbMtu(uint32_t mtu);
    /**
     * @param table the VlArbitrationHigh attribute value
     */
    void SetVlArbHigh(std::string table);
    /**
     * @param table the VlArbitrationLow attribute value
     */
    void SetVlArbLow(std::string table);
    /**
     * @param table the SlToVlTable attribute value
     */
    void SetSlToVl(std::string table);
    /**
     * @param n the NumDataVls attribute value
     */
    void SetNumDataVls(uint32_t n);

    /// Bits of m_hot.watched: which per-packet trace sources have something connected.
    enum Watch : uint16_t
    {
        WATCH_PHY_RX_END = 1u << 0,      //!< m_phyRxEndTrace
        WATCH_RX_BUFFER = 1u << 1,       //!< m_rxBufferTrace
        WATCH_SNIFFER = 1u << 2,         //!< m_snifferTrace
        WATCH_PROMISC_SNIFFER = 1u << 3, //!< m_promiscSnifferTrace
        WATCH_TX_QUEUE_DEPTH = 1u << 4,  //!< m_txQueueDepthTrace
        WATCH_PHY_TX_BEGIN = 1u << 5,    //!< m_phyTxBeginTrace
        WATCH_PHY_TX_END = 1u << 6,      //!< m_phyTxEndTrace
        WATCH_FC_TX = 1u << 7,           //!< m_fcTxTrace
        WATCH_FC_RX = 1u << 8,           //!< m_fcRxTrace
        WATCH_MAC_TX = 1u << 9,          //!< m_macTxTrace
        WATCH_MAC_RX = 1u << 10,         //!< m_macRxTrace
        WATCH_RX_ERROR_MODEL = 1u << 11, //!< m_receiveErrorModel is set
        WATCH_TX_START = 1u << 12,       //!< m_txStartListeners is not empty
    };

    /**
     * The members every packet touches, first in the object, so that a packet costs as few
     * cache lines per port as possible (on a large fabric each of them is a miss), in three
     * groups: what receiving and sending read of the port's state and owner; what a
     * flow-control packet sent needs; the packet being sent. Each VL's state has a line of
     * its own (m_vl).
     * The object is line-aligned (its VL states are); the lines the prefetch hints name
     * (HOT_LINES, ARRIVAL_LINES) are computed from this layout, which starts after ns-3's
     * Object (32 bytes in ns-3 3.37-3.43, 56 in 3.48), and bounded by static_asserts.
     */
    struct HotState
    {
        // what receiving and sending read of the port's state and owner
        bool txBusy{false};         //!< a data packet is being serialized
        bool linkUp{false};         //!< link state
        bool cutThrough{false};     //!< hand on at header arrival
        bool refreshPending{false}; //!< m_refreshEvent is scheduled
        bool failed{false};         //!< the cable or port is down (LinkFailed)
        uint8_t numDataVls{8};      //!< data VLs in use
        uint8_t ownerPort{0};       //!< this port's number on its owner (forwarder or m_hca)
        uint16_t txNonEmpty{0};     //!< bit v set when VL v's queue is not empty
        uint16_t fcPending{0};      //!< bit v set when a flow-control packet for v is due
        uint16_t watched{0};        //!< per-packet trace sources connected (Watch bits)
        uint32_t capacityBlocks{0}; //!< m_vlBufferSize in blocks
        uint32_t updateBlocks{1};   //!< m_creditUpdateBytes in blocks
        DataRate rate;              //!< data rate derived from speed and width
        IbPacketForwarder* forwarder{nullptr}; //!< owning switch, called directly (SetForwarder)
        // what a flow-control packet sent needs
        uint64_t fcSent{0};                   //!< flow-control packets sent
        IbChannel::Direction* txDir{nullptr}; //!< where packets go (null: m_channel->Transmit)
        double stepsPerByte{0.0};             //!< time steps one byte takes at rate
        double txCarry{0.0};                  //!< sub-step remainder of back-to-back serialization
        Time txFreeAt;                  //!< the wire is busy (flow-control packets) until then
        Time lrhTime;                   //!< time the LRH takes on the wire (cut-through delivery)
        Ptr<EventImpl> txCompleteEvent; //!< calls TransmitComplete; reused for every packet
        uint64_t txPackets{0};          //!< data packets transmitted
        // the packet being sent, then (m_arbiter, right after this struct) the VL
        // arbiter, whose walks (what Select reads) come first in it
        uint64_t txBytes{0}; //!< wire bytes of data packets transmitted
        TxItem txCurrent;    //!< the data packet being serialized
    };

    /// Where HotState starts in the object: right after the NetDevice (Object) base, as
    /// the constructor checks.
    static constexpr size_t HOT_START = sizeof(NetDevice);
    /// The object's lines a transmission's end reads first: the hot state, and the start
    /// of the VL arbiter that follows it.
    static constexpr uint32_t HOT_LINES = IbPrefetch::LinesFor(HOT_START + sizeof(HotState));
    /// The object's lines an arrival reads first: the hot state up to the transmit
    /// counters (the flags, the owner, the flow-control and wire-timing members).
    static constexpr uint32_t ARRIVAL_LINES =
        IbPrefetch::LinesFor(HOT_START + offsetof(HotState, txPackets));
    // 2 and 3 lines where ns-3's Object is 32 bytes (3.37 to 3.43), 3 and 4 where it is
    // 56 (3.48): the hints follow the layout. The bounds catch a hot state that grows.
    static_assert(ARRIVAL_LINES <= 3,
                  "an arrival's members (the hot state up to txPackets) fit in the object's "
                  "first three lines: keep members added before txPackets few");
    static_assert(HOT_LINES <= 4 && HOT_START + sizeof(HotState) < HOT_LINES * IbPrefetch::LINE,
                  "the hot state and the start of the VL arbiter fit in the object's first "
                  "four lines: keep members added to HotState few");

    HotState m_hot;        //!< the hot state
    IbVlArbiter m_arbiter; //!< VL arbiter
    // then what a port reads when a packet starts and it has listeners, or an HCA
    IbTxStartListener* m_txStartListeners{nullptr}; //!< the first; each names the next
    IbPacketConsumer* m_hca{nullptr};               //!< owning HCA, called directly (SetConsumer)
    // per VL
    std::array<VlState, 16> m_vl; //!< per-VL state (VL15: transmit queue only)

    // What a host port reads for each packet it sends or receives, in the line after m_vl:
    // on a large fabric, one cache miss rather than three.
    Time m_rxDelay;                    //!< delay added to arrivals (switch)
    IbReceiveCallback m_ibRxCallback;  //!< switch-style consumer
    TxReadyCallback m_txReadyCallback; //!< switch notification
    DataRate m_rxDrainRate;            //!< host receive drain rate (0 = immediate)
    uint32_t m_txQueueMaxPackets{256}; //!< transmit queue limit per VL
    uint32_t m_mtu{4096};              //!< IBA MTU, payload bytes
    std::array<uint8_t, 16> m_sl2vl{}; //!< SL-to-VL table
    uint16_t m_arbitratedMask{0};      //!< VLs named by an arbitration entry of weight > 0
    bool m_configured{false};          //!< Configure() has run

    Ptr<ErrorModel> m_receiveErrorModel; //!< receive error model (WATCH_RX_ERROR_MODEL)
    Ptr<IbChannel> m_channel;            //!< attached cable
    std::array<Time, 16> m_stallTotal;   //!< per VL: sum of all credit stalls ended so far

    // Traces, the per-packet ones first, in the order a packet fires them
    IbTracedCallback<Ptr<const Packet>> m_phyRxEndTrace;       //!< PhyRxEnd
    IbTracedCallback<uint8_t, uint32_t> m_rxBufferTrace;       //!< RxBufferOccupancy
    IbTracedCallback<Ptr<const Packet>> m_snifferTrace;        //!< Sniffer
    IbTracedCallback<Ptr<const Packet>> m_promiscSnifferTrace; //!< PromiscSniffer
    IbTracedCallback<uint8_t, uint32_t> m_txQueueDepthTrace;   //!< TxQueueDepth
    IbTracedCallback<Ptr<const Packet>> m_phyTxBeginTrace;     //!< PhyTxBegin
    IbTracedCallback<Ptr<const Packet>> m_phyTxEndTrace;       //!< PhyTxEnd
    IbTracedCallback<Ptr<const Packet>> m_fcTxTrace;           //!< FlowControlTx
    IbTracedCallback<Ptr<const Packet>> m_fcRxTrace;           //!< FlowControlRx
    IbTracedCallback<Ptr<const Packet>> m_macTxTrace;          //!< MacTx
    IbTracedCallback<Ptr<const Packet>> m_macRxTrace;          //!< MacRx

    // Configuration (attributes)
    IbLinkRate::Speed m_speed{IbLinkRate::EDR};       //!< link speed
    IbLinkRate::Speed m_activeSpeed{IbLinkRate::EDR}; //!< speed the link trained to
    uint8_t m_width{4};                               //!< link width (lanes)
    uint32_t m_vlBufferSize{65536};                   //!< receive buffer per data VL, bytes
    uint32_t m_creditUpdateBytes{8192}; //!< freed bytes that trigger a flow-control packet
    Time m_fcRefresh;                   //!< flow-control refresh period (0 = 65,536 symbols)
    uint8_t m_rawSl{0};                 //!< SL used by Send()
    uint8_t m_arbiterLimit{0};          //!< LimitOfHighPriority attribute
    bool m_retraining{false};           //!< down to train again (Retrain, FinishRetrain)
    double m_capacityBits{0.0};         //!< GetWireCapacityBits at m_rateSince
    Time m_rateSince;                   //!< when m_hot.rate last changed
    std::string m_sl2vlText;            //!< SlToVlTable as given ("" = default)

    // Identity
    Ptr<Node> m_node;                                         //!< owning node
    uint32_t m_ifIndex{0};                                    //!< interface index
    uint16_t m_lid{0};                                        //!< LID (the base LID with LMC)
    uint8_t m_lmc{0};                                         //!< LID mask control
    std::shared_ptr<const IbCaCongestionSetting> m_ccSetting; //!< CA congestion control, or null
    bool m_adaptiveRouting{false}; //!< requests may arrive out of order (adaptive routing)

    // Other transmit and receive state
    EventId m_txWakeEvent;         //!< restart after flow-control packets
    uint32_t m_maxPacketBlocks{0}; //!< blocks of the largest packet the MTU allows
    EventId m_refreshEvent;        //!< periodic flow-control refresh
    IbFifo<std::pair<Ptr<Packet>, uint8_t>> m_drainQueue; //!< host receive queue
    EventId m_drainEvent;                                 //!< drain of the head of m_drainQueue
    uint64_t m_rxCrcErrors{0};                            //!< CRC failures
    uint64_t m_linkDownDrops{0};                          //!< lost to a failed link

    // Callbacks
    NetDevice::ReceiveCallback m_rxCallback;             //!< upper layer
    NetDevice::PromiscReceiveCallback m_promiscCallback; //!< promiscuous upper layer
    TracedCallback<> m_linkChangeCallbacks;              //!< link change notification

    // Rare traces
    TracedCallback<Ptr<const Packet>> m_macTxDropTrace;          //!< MacTxDrop
    TracedCallback<Ptr<const Packet>> m_phyRxDropTrace;          //!< PhyRxDrop
    TracedCallback<uint8_t, Time> m_creditStallTrace;            //!< CreditStall
    TracedCallback<Ptr<const Packet>, bool> m_linkDownDropTrace; //!< LinkDownDrop
};

static_assert(alignof(IbNetDevice) == IbPrefetch::LINE,
              "an IbNetDevice starts on a cache line, as the hot-state lines assume");

// The port's per-packet getters, inline: a switch calls them for every packet it forwards.

inline uint8_t
IbNetDevice::GetNumDataVls() const
{
    return m_hot.numDataVls;
}

inline bool
IbNetDevice::HasCredits(uint8_t vl, uint32_t blocks) const
{
    const TxVl& t = m_vl[vl].tx;
    return ((t.fccl - (t.fctbs + blocks)) & 0xFFF) <= 2048;
}

inline bool
IbNetDevice::IsFailed() const
{
    return m_hot.failed;
}

inline bool
IbNetDevice::HasCreditsFor(uint8_t vl, uint32_t blocks) const
{
    return vl == VL15 || HasCredits(vl, blocks);
}

inline DataRate
IbNetDevice::GetDataRate() const
{
    return m_hot.rate;
}

inline uint32_t
IbNetDevice::GetTxQueueLength(uint8_t vl) const
{
    NS_ASSERT(vl < 16);
    return m_vl[vl].tx.queue.Size();
}

} // namespace ns3

#endif /* IB_NET_DEVICE_H */

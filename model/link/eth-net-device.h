/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_NET_DEVICE_H
#define ETH_NET_DEVICE_H

#include "eth-channel.h"
#include "eth-port-owner.h"
#include "ib-owned-packet.h"

#include "ns3/assert.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/ib-fifo.h"
#include "ns3/ib-traced-callback.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstdint>
#include <string>

namespace ns3
{

class ErrorModel;
class Packet;

/**
 * @ingroup infiniband-link
 * @brief A full-duplex Ethernet port with Data Center Bridging: eight priority queues,
 * strict priority and ETS (802.1Qaz) scheduling between them, and priority flow control
 * (PFC, 802.1Qbb).
 *
 * Frames. The port carries Ethernet II frames as ns3::Packet objects holding the bytes
 * from the destination MAC through the FCS (EthFrame). A frame occupies the wire for
 * EthFrame::WireBytes(size) = max(size, 64) + 8 (preamble, SFD) + 12 (inter-frame gap)
 * byte times at DataRate (GetFrameTime); it reaches the peer one cable delay after that
 * time has passed (store-and-forward) or after its first 64 bytes have (cut-through,
 * SetCutThrough). A frame counts as arrived when its whole wire time, gap included, has
 * passed at the sender plus the delay, so one frame's latency is GetFrameTime(size) plus
 * the cable's delay. Back-to-back frames carry the sub-resolution remainder from one to
 * the next, so a train of frames takes exactly its wire bytes x 8 / rate whatever the
 * time resolution.
 *
 * Transmit queues. Each priority 0..7 has a FIFO of frames, each with a cookie that the
 * owner gets back when the frame leaves (EthPortOwner::PortTxStarted). Enqueue (owner)
 * never drops; Send (the ns-3 stack) classifies by DSCP and drops at TxQueueMaxBytes.
 *
 * Scheduler. Priorities whose EtsWeights entry is 0 are strict: they go first, the
 * highest priority number first (802.1Q: 7 is the highest). The others share what the
 * strict ones leave by deficit round robin over wire bytes, in proportion to their
 * weights (only the ratios matter; 802.1Qaz writes them as percentages): each visit adds
 * weight x unit bytes to a priority's deficit, with the unit chosen so that the smallest
 * weight's quantum holds one frame of the MTU, and a queue that empties loses its
 * deficit. A priority paused by the peer is skipped and keeps its deficit.
 *
 * PFC, receiving. A PFC frame (EtherType 0x8808, opcode 0x0101) stops each priority of
 * its class-enable vector that is in PfcEnabled for quanta x 512 bit times at this
 * port's DataRate from its arrival (its last byte); quanta 0 resumes the priority at
 * once; a later frame replaces the time left. A frame already on the wire finishes.
 * Priorities not in PfcEnabled ignore PFC frames.
 *
 * PFC, sending. SetPfcXoff(prio, true), called by the owner's ingress accounting, sends
 * an XOFF (PauseQuanta) for prio and repeats it every ceil(PauseQuanta / 2) quanta while
 * the XOFF holds; SetPfcXoff(prio, false) sends an XON (quanta 0). A PFC frame (64 bytes)
 * goes on the wire next, after the frame in flight and ahead of every queued data frame;
 * requests that wait together share one frame. A PFC frame an owner Enqueues (a NIC's
 * own flow control) is sent as data and honoured by the peer all the same.
 *
 * Receiving. A data frame that the ReceiveErrorModel marks corrupt fails its FCS: it is
 * counted (GetFcsErrors), traced (PhyRxDrop) and dropped. The error model only decides;
 * the frame's bytes are not checked unless VerifyFcs is set (EthFrame::CheckFcs reads the
 * whole frame). A cut-through port drops a corrupt frame too, at its head (the model has
 * no stomped-CRC forwarding). Good frames go to the owner (SetOwner) with their priority
 * or, without an owner, lose their Ethernet header and FCS and go to the ns-3 stack.
 *
 * One event per frame per stage: the end of transmission at the sender, the arrival at
 * the receiver. The per-frame path allocates nothing but the Packet itself and touches
 * no string or map.
 *
 * Not modelled: VLAN tags (priorities come from DSCP), 802.3x link PAUSE (MAC control
 * frames other than PFC are dropped), PFC frames lost to bit errors (the error model
 * sees data frames only), a PFC response delay at the receiver, links between MPI ranks.
 */
class EthNetDevice : public NetDevice
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    EthNetDevice();
    ~EthNetDevice() override;

    /// Priorities (traffic classes) of a port.
    static constexpr uint8_t NUM_PRIORITIES = 8;
    /// The cookie of the frames NetDevice::Send queues (PortTxStarted tells it).
    static constexpr uint32_t STACK_COOKIE = 0xFFFFFFFF;
    /// Bit times in a PFC pause quantum (802.1Qbb).
    static constexpr uint32_t PAUSE_QUANTUM_BITS = 512;

    /**
     * TracedCallback signature for a PFC class sent or received.
     * @param prio the priority
     * @param quanta its pause time, in quanta (0: XON)
     */
    typedef void (*PfcTracedCallback)(uint8_t prio, uint16_t quanta);
    /**
     * TracedCallback signature for a priority queue's size.
     * @param prio the priority
     * @param bytes the bytes it holds
     */
    typedef void (*QueueBytesTracedCallback)(uint8_t prio, uint32_t bytes);

    /**
     * Attach the port to a cable.
     * @param channel the cable
     * @return true
     */
    bool Attach(Ptr<EthChannel> channel);

    /**
     * Make @p owner (a switch or a RoCE NIC) this port's owner: received data frames go
     * to it (EthPortOwner::PortReceive) instead of the ns-3 stack, and it hears when
     * frames leave the queues.
     * @param owner the owner, or nullptr for the ns-3 stack
     * @param port this port's number on it
     */
    void SetOwner(EthPortOwner* owner, uint8_t port);
    /// @return the owner (nullptr: the ns-3 stack)
    EthPortOwner* GetOwner() const;

    /**
     * Queue a complete frame (destination MAC through FCS) on priority @p prio. Never
     * drops: the owner keeps its own buffer accounting.
     * @param frame the frame
     * @param prio its priority queue, 0..7
     * @param cookie given back by PortTxStarted when the frame leaves the queue
     * @return true
     */
    bool Enqueue(Ptr<Packet> frame, uint8_t prio, uint32_t cookie);
    /**
     * Enqueue for a frame that may not start before @p earliestStart: a cut-through
     * switch forwarding onto a faster link must not send a frame's end before it has it.
     * @param frame the frame
     * @param prio its priority queue, 0..7
     * @param cookie given back by PortTxStarted
     * @param earliestStart the frame's first byte does not leave before this time
     * @return true
     */
    bool Enqueue(Ptr<Packet> frame, uint8_t prio, uint32_t cookie, Time earliestStart);

    /**
     * @param prio a priority
     * @return bytes of the frames waiting in its queue (not the one on the wire)
     */
    uint32_t GetQueueBytes(uint8_t prio) const;
    /**
     * @param prio a priority
     * @return frames waiting in its queue
     */
    uint32_t GetQueueLength(uint8_t prio) const;

    /**
     * The owner's ingress accounting asks the peer to stop (true) or resume (false)
     * sending priority @p prio. true sends an XOFF of PauseQuanta now and repeats it every
     * ceil(PauseQuanta / 2) quanta while it holds; false sends an XON (quanta 0). Setting
     * the state it is in does nothing. The PFC frame goes next on the wire, after the
     * frame in flight, ahead of data.
     * @param prio a priority in PfcEnabled
     * @param xoff true to pause the peer, false to resume it
     */
    void SetPfcXoff(uint8_t prio, bool xoff);
    /**
     * @param prio a priority
     * @return true while this port holds the peer's @p prio paused (SetPfcXoff)
     */
    bool IsPfcXoff(uint8_t prio) const;
    /**
     * @param prio a priority
     * @return true while a PFC frame received holds this port's @p prio
     */
    bool IsPausedByPeer(uint8_t prio) const;
    /// @return the PfcEnabled attribute: bit i set for lossless priority i
    uint8_t GetPfcEnabled() const;

    /**
     * The port's classification of a frame: the DSCP of an IPv4 frame through the
     * DscpToPriority map; 0 for any other frame.
     * @param frame the frame's first bytes (from its destination MAC)
     * @param len how many there are (16 suffice)
     * @return its priority
     */
    uint8_t Classify(const uint8_t* frame, uint32_t len) const;

    /**
     * @param frameBytes a frame's size, destination MAC through FCS
     * @return the time it occupies the wire: EthFrame::WireBytes(frameBytes) x 8 / rate
     *         (to the nearest time step)
     */
    Time GetFrameTime(uint32_t frameBytes) const;
    /**
     * @param quanta a PFC pause time
     * @return quanta x 512 bit times at DataRate (to the nearest time step)
     */
    Time GetPauseTime(uint16_t quanta) const;
    /// @return the DataRate attribute
    DataRate GetDataRate() const;
    /// @return the port's MAC address
    Mac48Address GetMacAddress() const;
    /// @return the port at the other end of the cable (null without one)
    Ptr<EthNetDevice> GetPeer() const;

    /**
     * Choose when frames reach the owner: once their first 64 bytes have arrived
     * (cut-through) or their last byte (store-and-forward, the default), plus @p rxDelay
     * (a switch's forwarding latency) either way. PFC frames are handled at their last
     * byte, without rxDelay.
     * @param on cut-through
     * @param rxDelay delay added to every data frame's arrival
     */
    void SetCutThrough(bool on, Time rxDelay);
    /// @return true if frames reach the owner at their first 64 bytes
    bool IsCutThrough() const;
    /// @return the delay added to every data frame's arrival
    Time GetRxDelay() const;

    /// @param em the receive error model (corrupted frames fail their FCS and are dropped)
    void SetReceiveErrorModel(Ptr<ErrorModel> em);
    /// @return the receive error model (null if none)
    Ptr<ErrorModel> GetReceiveErrorModel() const;

    /// @return data frames that started transmission
    uint64_t GetTxFrames() const;
    /// @return bytes (destination MAC through FCS) of the data frames that started
    uint64_t GetTxBytes() const;
    /// @return data frames received with a good FCS (PFC frames not counted)
    uint64_t GetRxFrames() const;
    /// @return bytes of the data frames GetRxFrames counts
    uint64_t GetRxBytes() const;
    /// @return frames NetDevice::Send refused (too large, queue full, bad address)
    uint64_t GetTxDrops() const;
    /**
     * @param prio a priority
     * @return PFC frames sent with @p prio in their class-enable vector
     */
    uint64_t GetPfcFramesSent(uint8_t prio) const;
    /**
     * @param prio a priority
     * @return PFC frames received with @p prio in their class-enable vector (honoured or
     *         not)
     */
    uint64_t GetPfcFramesReceived(uint8_t prio) const;
    /**
     * @param prio a priority
     * @return the total time PFC frames received have held @p prio so far
     */
    Time GetPausedTime(uint8_t prio) const;
    /// @return data frames dropped for a bad FCS
    uint64_t GetFcsErrors() const;

    // NetDevice
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    /**
     * @param mtu the IP MTU: the largest payload Send takes
     * @return true
     */
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsPointToPoint() const override;
    bool IsBridge() const override;
    /**
     * Frame a packet of an ns-3 protocol (EthFrame::Frame, EtherType @p protocolNumber,
     * to the Mac48Address @p dest), classify it by DSCP and queue it, unless the packet
     * is larger than the MTU or its priority queue would exceed TxQueueMaxBytes (then
     * MacTxDrop and false).
     * @param packet the payload
     * @param dest the destination MAC
     * @param protocolNumber the EtherType
     * @return false if the packet was dropped
     */
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    /**
     * Send with another source MAC.
     * @param packet the payload
     * @param source the source MAC
     * @param dest the destination MAC
     * @param protocolNumber the EtherType
     * @return false if the packet was dropped
     */
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
    friend class EthChannel;            // tells the port its direction and link state
    friend class EthChannel::Direction; // delivers frames
    friend class EthRemoteChannel;      // delivers frames from other MPI ranks

    /// A frame waiting in a transmit queue.
    struct TxItem
    {
        IbOwnedPacket frame; ///< the frame
        uint32_t bytes{0};   ///< its size
        uint32_t cookie{0};  ///< the owner's cookie
        Time earliestStart;  ///< do not start before this (cut-through onto a faster link)
    };

    /// One priority's transmit state.
    struct Prio
    {
        IbFifo<TxItem> queue;    ///< frames waiting
        uint32_t bytes{0};       ///< their bytes
        uint32_t quantum{0};     ///< DRR quantum, wire bytes (0: strict)
        uint32_t deficit{0};     ///< DRR deficit, wire bytes
        Time pausedUntil;        ///< a received PFC frame holds it until then
        Time pauseStart;         ///< when the current pause began
        Time pausedTotal;        ///< pauses ended so far
        uint64_t pfcSent{0};     ///< PFC frames sent naming it
        uint64_t pfcReceived{0}; ///< PFC frames received naming it
    };

    /// Bits of m_watched: which per-frame trace sources have something connected.
    enum Watch : uint16_t
    {
        WATCH_PHY_TX_BEGIN = 1u << 0,    //!< m_phyTxBeginTrace
        WATCH_PHY_TX_END = 1u << 1,      //!< m_phyTxEndTrace
        WATCH_PHY_RX_END = 1u << 2,      //!< m_phyRxEndTrace
        WATCH_SNIFFER = 1u << 3,         //!< m_snifferTrace
        WATCH_PROMISC_SNIFFER = 1u << 4, //!< m_promiscSnifferTrace
        WATCH_MAC_TX = 1u << 5,          //!< m_macTxTrace
        WATCH_MAC_RX = 1u << 6,          //!< m_macRxTrace
        WATCH_QUEUE_BYTES = 1u << 7,     //!< m_queueBytesTrace
        WATCH_RX_ERROR_MODEL = 1u << 8,  //!< m_receiveErrorModel is set
        WATCH_VERIFY_FCS = 1u << 9,      //!< VerifyFcs attribute
    };

    /**
     * Queue a frame (both Enqueue forms and Send).
     * @param frame the frame
     * @param bytes its size
     * @param prio its priority
     * @param cookie the owner's cookie
     * @param earliestStart do not start before this
     */
    void DoEnqueue(IbOwnedPacket frame,
                   uint32_t bytes,
                   uint8_t prio,
                   uint32_t cookie,
                   Time earliestStart);
    /// Start the next transmission if the transmitter is free: a PFC frame first, then
    /// the strict priorities, then ETS.
    void TrySend();
    /**
     * Deficit round robin between the ETS priorities.
     * @param eligible ETS priorities with frames and not paused (not 0)
     * @return the one to send from (its deficit already charged)
     */
    uint8_t SelectEts(uint8_t eligible);
    /**
     * Put m_txCurrent, just taken from @p prio's queue, on the wire.
     * @param prio its priority
     * @param bytesBefore the queue's bytes before it left
     */
    void StartTransmission(uint8_t prio, uint32_t bytesBefore);
    /// Put a PFC frame for the priorities of m_pfcPending on the wire now.
    void SendPfcFrame();
    /// The transmitter finished the current frame (data or PFC).
    void TransmitComplete();
    /// Time to repeat the XOFFs that still hold.
    void RefreshXoff();
    /**
     * Fire PhyTxBegin, Sniffer and PromiscSniffer for a frame whose first byte is on the
     * wire now.
     * @param p the frame
     */
    void FireTxBeginTraces(Ptr<Packet> p);
    /**
     * A data frame arrived (its last byte, or its first 64 on a cut-through port, plus
     * rxDelay).
     * @param frame the frame
     * @param bytes its size
     */
    void ReceiveData(IbOwnedPacket frame, uint32_t bytes);
    /**
     * A PFC (or other MAC control) frame's last byte arrived.
     * @param frame the frame
     */
    void ReceiveControl(Ptr<Packet> frame);
    /**
     * Apply a received PFC frame.
     * @param classEnable its class-enable vector
     * @param quanta its pause times
     */
    void ApplyPfc(uint8_t classEnable, const std::array<uint16_t, 8>& quanta);
    /// End the pauses that have run out and wait for the next one to end.
    void PauseExpired();
    /// (Re)schedule m_pauseEvent for the earliest end of a pause in force.
    void SchedulePauseExpiry();
    /**
     * Hand a received data frame to the ns-3 stack.
     * @param frame the frame
     */
    void DeliverUp(Ptr<Packet> frame);
    /// The cable's two ends are attached: the link is up.
    void NotifyLinkUp();
    /**
     * Serialization time of @p wireBytes, carrying the sub-resolution remainder between
     * back-to-back frames.
     * @param wireBytes wire bytes
     * @param backToBack true if the wire was busy until now
     * @return the time they occupy the wire
     */
    Time SerializationTime(uint32_t wireBytes, bool backToBack);
    /// Recompute what depends on DataRate, Mtu and EtsWeights.
    void Configure();
    /**
     * @param rate the DataRate attribute
     */
    void SetDataRate(DataRate rate);
    /**
     * @param mtu the Mtu attribute
     */
    void SetMtuAttribute(uint16_t mtu);
    /**
     * @param weights the EtsWeights attribute
     */
    void SetEtsWeights(std::string weights);
    /// @return the EtsWeights attribute
    std::string GetEtsWeights() const;
    /**
     * @param map the DscpToPriority attribute
     */
    void SetDscpToPriority(std::string map);
    /// @return the DscpToPriority attribute
    std::string GetDscpToPriority() const;
    /**
     * @param mask the PfcEnabled attribute
     */
    void SetPfcEnabled(uint8_t mask);
    /**
     * @param on the VerifyFcs attribute
     */
    void SetVerifyFcs(bool on);
    /// @return the VerifyFcs attribute
    bool GetVerifyFcs() const;
    /**
     * @param address the Address attribute
     */
    void SetMacAddress(Mac48Address address);
    /// @return a name for messages: "EthNetDevice on node N port I"
    std::string Where() const;

    // What every frame touches, first.
    bool m_txBusy{false};                    //!< a frame (data or PFC) is being sent
    bool m_txIsPfc{false};                   //!< the frame being sent is a PFC frame
    bool m_linkUp{false};                    //!< both ends of the cable are attached
    bool m_cutThrough{false};                //!< hand frames on at their first 64 bytes
    uint8_t m_nonEmpty{0};                   //!< bit p: priority p's queue holds frames
    uint8_t m_pausedByPeer{0};               //!< bit p: a received PFC frame holds priority p
    uint8_t m_strictMask{0xFF};              //!< bit p: priority p is strict (ETS weight 0)
    uint8_t m_pfcPending{0};                 //!< bit p: a PFC frame for p is due
    uint8_t m_pfcEnabled{0x08};              //!< PfcEnabled attribute
    uint8_t m_xoff{0};                       //!< bit p: this port holds the peer's p paused
    uint8_t m_ownerPort{0};                  //!< this port's number on its owner
    uint8_t m_txPrio{0};                     //!< priority of the data frame being sent
    uint16_t m_watched{0};                   //!< Watch bits
    EthPortOwner* m_owner{nullptr};          //!< owner, called directly
    EthChannel::Direction* m_txDir{nullptr}; //!< where frames go
    double m_stepsPerByte{0.0};              //!< time steps one byte takes at the rate
    double m_txCarry{0.0};                   //!< sub-step remainder of back-to-back frames
    Time m_txFreeAt;                         //!< end of the last frame put on the wire
    Time m_headerTime;                       //!< preamble, SFD and 64 bytes on the wire
    Ptr<EventImpl> m_txCompleteEvent;        //!< calls TransmitComplete; reused for every frame
    TxItem m_txCurrent;                      //!< the data frame being sent
    uint64_t m_txFrames{0};                  //!< data frames started
    uint64_t m_txBytes{0};                   //!< their bytes
    uint64_t m_rxFrames{0};                  //!< data frames received
    uint64_t m_rxBytes{0};                   //!< their bytes
    uint8_t m_etsMask{0};                    //!< bit p: priority p is an ETS one (weight > 0)
    uint8_t m_drrCurrent{0};                 //!< the ETS priority the round robin is at
    bool m_drrCharged{false};                //!< it got its quantum for this visit
    uint32_t m_txReadyThreshold{0};          //!< TxReadyThreshold attribute
    std::array<uint8_t, 64> m_dscpToPrio{};  //!< DSCP to priority
    std::array<Prio, NUM_PRIORITIES> m_prio; //!< per priority

    // Configuration (attributes)
    DataRate m_rate;                                    //!< DataRate attribute
    uint16_t m_mtu{9000};                               //!< IP MTU
    uint16_t m_pauseQuanta{0xFFFF};                     //!< PauseQuanta attribute
    uint32_t m_txQueueMaxBytes{0};                      //!< TxQueueMaxBytes attribute
    std::array<uint8_t, NUM_PRIORITIES> m_etsWeights{}; //!< EtsWeights attribute
    std::string m_dscpText;              //!< DscpToPriority as given ("" = dscp >> 3)
    Ptr<ErrorModel> m_receiveErrorModel; //!< ReceiveErrorModel attribute
    Mac48Address m_address;              //!< Address attribute

    // Identity, other state
    Ptr<EthChannel> m_channel;    //!< attached cable
    Ptr<Node> m_node;             //!< owning node
    uint32_t m_ifIndex{0};        //!< interface index
    Time m_rxDelay;               //!< delay added to data frame arrivals
    EventId m_pauseEvent;         //!< the end of the earliest pause in force
    EventId m_refreshEvent;       //!< the next repetition of the XOFFs in force
    bool m_refreshPending{false}; //!< m_refreshEvent is scheduled
    uint64_t m_fcsErrors{0};      //!< frames dropped for a bad FCS
    uint64_t m_txDrops{0};        //!< frames Send refused

    // Callbacks
    NetDevice::ReceiveCallback m_rxCallback;             //!< ns-3 stack
    NetDevice::PromiscReceiveCallback m_promiscCallback; //!< promiscuous ns-3 stack
    TracedCallback<> m_linkChangeCallbacks;              //!< link change notification

    // Traces
    IbTracedCallback<Ptr<const Packet>> m_macTxTrace;          //!< MacTx
    IbTracedCallback<Ptr<const Packet>> m_macRxTrace;          //!< MacRx
    IbTracedCallback<Ptr<const Packet>> m_phyTxBeginTrace;     //!< PhyTxBegin
    IbTracedCallback<Ptr<const Packet>> m_phyTxEndTrace;       //!< PhyTxEnd
    IbTracedCallback<Ptr<const Packet>> m_phyRxEndTrace;       //!< PhyRxEnd
    IbTracedCallback<Ptr<const Packet>> m_snifferTrace;        //!< Sniffer
    IbTracedCallback<Ptr<const Packet>> m_promiscSnifferTrace; //!< PromiscSniffer
    IbTracedCallback<uint8_t, uint32_t> m_queueBytesTrace;     //!< TxQueueBytes
    TracedCallback<Ptr<const Packet>> m_macTxDropTrace;        //!< MacTxDrop
    TracedCallback<Ptr<const Packet>> m_phyRxDropTrace;        //!< PhyRxDrop
    TracedCallback<uint8_t, uint16_t> m_pfcSentTrace;          //!< PfcSent
    TracedCallback<uint8_t, uint16_t> m_pfcReceivedTrace;      //!< PfcReceived
};

// The per-frame getters a switch calls, inline.

inline uint32_t
EthNetDevice::GetQueueBytes(uint8_t prio) const
{
    NS_ASSERT_MSG(prio < NUM_PRIORITIES, "priority " << unsigned(prio) << "; use 0..7");
    return m_prio[prio & 7].bytes;
}

inline uint32_t
EthNetDevice::GetQueueLength(uint8_t prio) const
{
    NS_ASSERT_MSG(prio < NUM_PRIORITIES, "priority " << unsigned(prio) << "; use 0..7");
    return static_cast<uint32_t>(m_prio[prio & 7].queue.Size());
}

inline bool
EthNetDevice::IsPausedByPeer(uint8_t prio) const
{
    NS_ASSERT_MSG(prio < NUM_PRIORITIES, "priority " << unsigned(prio) << "; use 0..7");
    return (m_pausedByPeer >> (prio & 7)) & 1;
}

inline DataRate
EthNetDevice::GetDataRate() const
{
    return m_rate;
}

inline Mac48Address
EthNetDevice::GetMacAddress() const
{
    return m_address;
}

} // namespace ns3

#endif /* ETH_NET_DEVICE_H */

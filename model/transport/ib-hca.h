/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_HCA_H
#define IB_HCA_H

#include "dcqcn-rate-control.h"
#include "ib-cc-rate-control.h"
#include "ib-verbs.h"

#include "ns3/data-rate.h"
#include "ns3/eth-port-owner.h"
#include "ns3/ib-fifo.h"
#include "ns3/ib-port-owner.h"
#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/pcie-link.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace ns3
{

class EthNetDevice;
class IbCompletionQueue;
class IbHeaderView;
class IbMemoryRegion;
class IbNetDevice;
class IbQueuePair;
class Packet;
class RdmaPort;
struct RdmaRxInfo;

/**
 * @ingroup infiniband-transport
 * @brief A host channel adapter: the RDMA transport (IBA chapter 9, RC and UD) behind
 * one or more IbNetDevice ports, with a verbs-like API (queue pairs, completion queues,
 * memory regions). Aggregated to the host's Node (see IbHcaHelper).
 *
 * The HCA takes over its ports: it consumes every packet that arrives (and releases its
 * receive-buffer credits at once), and it feeds each port's transmit queues itself.
 * Packets are generated just in time: whenever the transmit queue of a VL drops below
 * PortQueueDepth packets, the HCA asks the queue pairs that have something to send on
 * that port and VL (new data, retransmissions, READ responses, ACKs), round-robin, for
 * their next packet. Several queue pairs on one port therefore share it packet by
 * packet, and no queue pair runs ahead of the link. Every packet still waits for the
 * link-level credits of its VL in the port.
 *
 * Timing: DoorbellLatency after PostSend the WR's first packet may go on the wire;
 * completions become visible (and MessageReceived fires) PcieWriteLatency after the
 * event that causes them (ACK, last READ response, last packet of a received message);
 * a responder's ACKs and NAKs may leave AckDelay after the request arrived, READ
 * responses and atomic acknowledgements ResponseDelay after it.
 *
 * With a PcieLink (attribute PcieLink; none by default, the idealized adapter above) the
 * host side adds its stages, each on top of those:
 * - PostSend: the doorbell (a PCIe MMIO write of 8 bytes, or of the whole WQE if it fits
 *   BlueFlameSize), then the WQE fetch (a DMA read: ReadLatency and its transfer) unless
 *   the doorbell carried it, then the payload fetch's ReadLatency unless the data is
 *   inline (IbSendWr::inlineData, at most MaxInlineData bytes);
 * - every packet with payload from host memory (SEND and WRITE data, READ responses)
 *   waits until its payload has come across the link: one downstream direction per HCA,
 *   shared by its queue pairs in the order their packets leave, at the link's read
 *   ceiling (completions of ReadCompletionSize bytes, 20 bytes of overhead each);
 *   READ responses and atomics also wait ReadLatency;
 * - every received payload is written to host memory upstream, MaxPayloadSize bytes per
 *   posted write, 24 bytes of overhead each, behind the writes before it; on InfiniBand
 *   ports the packet's receive-buffer credits return when its write is done, so a link
 *   faster than PCIe is slowed by credits as on hardware;
 * - a completion is a 64-byte CQE written behind the data: visible WriteLatency after
 *   its write, plus PcieWriteLatency.
 * With the PCIe stages zero (ReadLatency, WriteLatency, MmioLatency) only the bandwidth
 * terms remain; with no PcieLink every figure is the idealized model's.
 */
class IbHca : public Object, public IbPacketConsumer, public EthPortOwner
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    IbHca();
    ~IbHca() override;

    /// First QP number handed out (QP0 and QP1 are the management QPs).
    static constexpr uint32_t FIRST_QPN = 2;

    /**
     * Take over a port: the HCA installs its receive and transmit-ready callbacks.
     * @param port the port (its node must be this HCA's node)
     * @return its port number, 1 for the first
     */
    uint8_t AddPort(Ptr<IbNetDevice> port);
    /**
     * Take over an Ethernet port as a RoCEv2 port: the transport's packets go out as
     * Ethernet/IPv4/UDP frames to the device at the other end of its cable, and the port's
     * frames come to the HCA.
     * @param port the port (its node must be this HCA's node; cabled before traffic starts)
     * @param address its IPv4 address (the RoCEv2 GID queue pairs are addressed by)
     * @return its port number
     */
    uint8_t AddRocePort(Ptr<EthNetDevice> port, Ipv4Address address);
    /**
     * @param n a port number of a RoCE port
     * @return its device
     */
    Ptr<EthNetDevice> GetEthPort(uint8_t n) const;
    /**
     * @param n a port number of a RoCE port
     * @return its IPv4 address
     */
    Ipv4Address GetIpAddress(uint8_t n = 1) const;
    /// @return the number of ports
    uint8_t GetNPorts() const;
    /**
     * @param n a port number, 1..GetNPorts()
     * @return the port
     */
    Ptr<IbNetDevice> GetPort(uint8_t n) const;
    /**
     * @param n a port number, 1..GetNPorts()
     * @return the port as the transport sees it, whichever its link layer
     */
    RdmaPort* GetRdmaPort(uint8_t n) const;
    /**
     * @param port a port number
     * @return the port's LID (0 for a RoCE port, which has none: see GetIpAddress)
     */
    uint16_t GetLid(uint8_t port = 1) const;

    /**
     * @param depth completions the queue holds for Poll()
     * @return a new completion queue
     */
    Ptr<IbCompletionQueue> CreateCq(uint32_t depth = 4096);
    /**
     * Create a queue pair in the RESET state.
     * @param type RC or UD
     * @param sendCq completion queue of its send queue
     * @param recvCq completion queue of its receive queue
     * @param maxSendWr most send WRs outstanding (posted and not completed)
     * @param maxRecvWr most receive WRs posted
     * @return the queue pair
     */
    Ptr<IbQueuePair> CreateQp(IbQpType type,
                              Ptr<IbCompletionQueue> sendCq,
                              Ptr<IbCompletionQueue> recvCq,
                              uint32_t maxSendWr = 1024,
                              uint32_t maxRecvWr = 1024);
    /**
     * Destroy a queue pair (ibv_destroy_qp): its outstanding work goes without completions
     * (completions already on their way to a CQ still arrive), packets for its number are
     * dropped as for an unknown QP (GetUnknownDrops), and the number is not given to
     * another QP. Aborts if @p qp is not a live QP of this HCA.
     * @param qp the queue pair
     */
    void DestroyQp(Ptr<IbQueuePair> qp);
    /**
     * Give back what a user of the HCA holds: destroy @p qp if it is still a live QP of
     * this HCA, and deregister each of @p regions still registered here. What is gone
     * already (destroyed, deregistered, or let go when the HCA was disposed of at
     * Simulator::Destroy) is skipped, so that destructors may call it at any time.
     * @param qp a queue pair (may be null)
     * @param regions memory regions (entries may be null)
     */
    void Release(Ptr<IbQueuePair> qp, std::initializer_list<Ptr<IbMemoryRegion>> regions);
    /// @return the number the next CreateQp gives (QP numbers are consecutive and never
    ///         reused, destroyed ones included)
    uint32_t GetNextQpn() const;
    /**
     * @param qpn a QP number
     * @return the queue pair, or nullptr (none, or destroyed)
     */
    Ptr<IbQueuePair> GetQp(uint32_t qpn) const;

    /**
     * Register memory at a given virtual address.
     * @param addr first address
     * @param length bytes
     * @param access IbAccess flags
     * @return the region (its lkey and rkey are equal)
     */
    Ptr<IbMemoryRegion> RegisterMemory(uint64_t addr, uint64_t length, uint32_t access);
    /**
     * Register memory at an address the HCA chooses (4 KB aligned, distinct from every
     * other region it chose).
     * @param length bytes
     * @param access IbAccess flags
     * @return the region
     */
    Ptr<IbMemoryRegion> RegisterMemory(uint64_t length, uint32_t access);
    /**
     * Deregister a region: its key stops working.
     * @param mr the region
     */
    void DeregisterMemory(Ptr<IbMemoryRegion> mr);
    /**
     * @param key an lkey or rkey
     * @return the region with that key, or nullptr
     */
    Ptr<IbMemoryRegion> GetMemoryRegion(uint32_t key) const;

    /// @return the DataMode attribute
    bool IsDataMode() const;
    /// @return the DoorbellLatency attribute
    Time GetDoorbellLatency() const;
    /// @return the PcieWriteLatency attribute
    Time GetPcieWriteLatency() const;
    /// @return the AckDelay attribute
    Time GetAckDelay() const;
    /// @return the ResponseDelay attribute
    Time GetResponseDelay() const;
    /// @return the AckCoalescing attribute
    uint32_t GetAckCoalescing() const;
    /// @return the MaxOutstandingPackets attribute
    uint32_t GetMaxOutstandingPackets() const;
    /// @return the PcieLink attribute (nullptr: the idealized host interface)
    Ptr<PcieLink> GetPcieLink() const;
    /// @return the MaxInlineData attribute
    uint32_t GetMaxInlineData() const;
    /**
     * @param wr a send work request
     * @param ud true for a UD queue pair (its WQE carries the address vector)
     * @return the bytes of its WQE in the layout of ConnectX adapters (mlx5): a 16-byte
     *         control segment, 16 bytes of remote address for RDMA and atomics, 16 of
     *         atomic operands, 48 of address vector for UD, then a 16-byte data segment
     *         or the inline data behind a 4-byte header, rounded up to 16 bytes; the
     *         whole in 64-byte basic blocks
     */
    static uint32_t WqeBytes(const IbSendWr& wr, bool ud);
    /// Bytes of a completion-queue entry.
    static constexpr uint32_t CQE_BYTES = 64;

    /// @return packets handed to the ports
    uint64_t GetPacketsSent() const;
    /// @return packets received on the ports
    uint64_t GetPacketsReceived() const;
    /// @return packets dropped on arrival: no such QP, GRH or raw packets, too short for
    ///         LRH and BTH (a packet for a QP that it cannot parse counts in that QP's
    ///         IbQpCounters::stateDrops)
    uint64_t GetUnknownDrops() const;

    // IbPacketConsumer: what the HCA's own ports call
    void PortReceive(uint8_t port,
                     IbNetDevice* dev,
                     Ptr<Packet> packet,
                     uint8_t vl,
                     uint32_t blocks) override;
    void PortTxReady(uint8_t port, IbNetDevice* dev, uint8_t vl) override;

    // EthPortOwner: what the HCA's RoCE ports call
    void PortReceive(uint8_t port, EthNetDevice* dev, Ptr<Packet> frame, uint8_t prio) override;
    void PortTxReady(uint8_t port, EthNetDevice* dev, uint8_t prio) override;
    void PortTxStarted(uint8_t port,
                       EthNetDevice* dev,
                       uint8_t prio,
                       uint32_t bytes,
                       uint32_t cookie) override;

  private:
    /// @param v the DCQCN g (attribute DcqcnGain)
    void SetDcqcnGain(double v);
    /// @return the DCQCN g
    double GetDcqcnGain() const;
    /// @param v the DCQCN initial alpha (attribute DcqcnInitialAlpha)
    void SetDcqcnInitialAlpha(double v);
    /// @return the DCQCN initial alpha
    double GetDcqcnInitialAlpha() const;
    /// @param v the DCQCN alpha period (attribute DcqcnAlphaPeriod)
    void SetDcqcnAlphaPeriod(Time v);
    /// @return the DCQCN alpha period
    Time GetDcqcnAlphaPeriod() const;
    /// @param v the DCQCN rate-increase timer (attribute DcqcnIncreaseTimer)
    void SetDcqcnIncreaseTimer(Time v);
    /// @return the DCQCN rate-increase timer
    Time GetDcqcnIncreaseTimer() const;
    /// @param v the DCQCN byte counter (attribute DcqcnByteCounter)
    void SetDcqcnByteCounter(uint64_t v);
    /// @return the DCQCN byte counter
    uint64_t GetDcqcnByteCounter() const;
    /// @param v the DCQCN fast-recovery threshold F (attribute DcqcnThreshold)
    void SetDcqcnThreshold(uint32_t v);
    /// @return the DCQCN fast-recovery threshold F
    uint32_t GetDcqcnThreshold() const;
    /// @param v the DCQCN additive increase (attribute DcqcnAdditiveIncrease)
    void SetDcqcnAdditiveIncrease(DataRate v);
    /// @return the DCQCN additive increase
    DataRate GetDcqcnAdditiveIncrease() const;
    /// @param v the DCQCN hyper increase (attribute DcqcnHyperIncrease)
    void SetDcqcnHyperIncrease(DataRate v);
    /// @return the DCQCN hyper increase
    DataRate GetDcqcnHyperIncrease() const;
    /// @param v the DCQCN minimum rate (attribute DcqcnMinRate)
    void SetDcqcnMinRate(DataRate v);
    /// @return the DCQCN minimum rate
    DataRate GetDcqcnMinRate() const;
    /// @param v the DCQCN largest cut (attribute DcqcnMaxDecrease)
    void SetDcqcnMaxDecrease(double v);
    /// @return the DCQCN largest cut
    double GetDcqcnMaxDecrease() const;
    /// @param v the DCQCN least time between cuts (attribute DcqcnRateReducePeriod)
    void SetDcqcnRateReducePeriod(Time v);
    /// @return the DCQCN least time between cuts
    Time GetDcqcnRateReducePeriod() const;

  public:
    /// @return CNPs the HCA's ports sent (DCQCN or IBA CC notification point)
    uint64_t GetCnpsSent() const;
    /// @return CNPs the HCA's ports received (DCQCN or IBA CC reaction point)
    uint64_t GetCnpsReceived() const;
    /// @return InfiniBand packets that arrived with FECN set
    uint64_t GetFecnsReceived() const;
    /// @return BECNs the HCA's InfiniBand ports received (in CNPs or other packets)
    uint64_t GetBecnsReceived() const;
    /**
     * The reaction point an InfiniBand port keeps for one SL when its congestion setting
     * has PortControl SL (shared by the port's RC queue pairs of that SL).
     * @param port the port (1..)
     * @param sl the SL
     * @return the reaction point, started with the port's setting on first use
     */
    IbCcRateControl* SlRateControl(uint8_t port, uint8_t sl);

    /**
     * TracedCallback signature for CCTI changes.
     * @param qpn the queue pair (0 for a port's per-SL reaction point)
     * @param sl its SL
     * @param oldCcti the index before
     * @param newCcti the index now
     */
    typedef void (*CctiTracedCallback)(uint32_t qpn,
                                       uint8_t sl,
                                       uint16_t oldCcti,
                                       uint16_t newCcti);
    /**
     * TracedCallback signature for BECNs.
     * @param qpn the queue pair the BECN is for
     * @param slid the LID it came from
     */
    typedef void (*BecnTracedCallback)(uint32_t qpn, uint16_t slid);

  protected:
    void DoDispose() override;

  private:
    friend class IbQueuePair;

    /// Transmit scheduling state of one port.
    struct alignas(64) PortState
    {
        // What Pump reads first, and VL0's list, in one cache line.
        RdmaPort* link{nullptr};                    ///< the port, as the transport sees it
        bool pumping{false};                        ///< inside Pump (re-entrancy guard)
        uint16_t pending{0};                        ///< VLs to serve again
        std::array<IbFifo<IbQueuePair*>, 16> ready; ///< QPs waiting for a turn, per VL
        std::shared_ptr<RdmaPort> owned;            ///< owns link
        Ptr<IbNetDevice> dev;                       ///< an InfiniBand port's device, or null
        Ptr<EthNetDevice> eth;                      ///< a RoCE port's device, or null
        /// InfiniBand, PortControl SL: a reaction point per SL (created on first use)
        std::array<std::unique_ptr<IbCcRateControl>, 16> slCc;
    };

    /**
     * Port receive callback.
     * @param port port number
     * @param dev the port
     * @param packet the packet
     * @param vl its VL
     * @param blocks its credit blocks
     */
    void Receive(uint8_t port,
                 Ptr<IbNetDevice> dev,
                 Ptr<Packet> packet,
                 uint8_t vl,
                 uint32_t blocks);
    /**
     * Hand a received packet to its queue pair, or drop and count it if there is none.
     * @param qpn the BTH destination QP
     * @param packet the packet
     * @param info what its link layer told
     */
    void DeliverToQp(uint32_t qpn, Ptr<Packet> packet, const RdmaRxInfo& info);
    /**
     * DCQCN notification point: a CE-marked packet arrived for @p qp; send its sender a CNP
     * unless this QP sent one less than CnpInterval ago.
     * @param port the RoCE port it arrived on
     * @param qp the queue pair
     * @param source the sender's IPv4 address
     * @param view the packet's headers (BTH at least)
     */
    void NotifyCongestion(uint8_t port, IbQueuePair* qp, uint32_t source, IbHeaderView& view);
    /**
     * @param qpn a QP number
     * @return the queue pair, or nullptr (none, or destroyed)
     */
    IbQueuePair* FindQp(uint32_t qpn) const;
    /**
     * Where a CNP for a marked packet of @p qp goes: an RC QP's peer, or the QP a
     * datagram's DETH names.
     * @param qp the receiving queue pair
     * @param view the marked packet's headers (BTH at least; DETH for UD)
     * @param [out] destQp the CNP's destination QP
     * @return false if a UD packet's DETH is missing
     */
    static bool CnpDestQp(IbQueuePair* qp, IbHeaderView& view, uint32_t& destQp);
    /**
     * InfiniBand congestion control: a FECN-marked packet arrived for @p qp; answer its
     * source with a CNP (IBA annex A10: a BECN for every FECN).
     * @param port the port it arrived on
     * @param qp the queue pair
     * @param packet the packet (for a UD packet's DETH)
     * @param slid its source LID
     * @param sl its SL
     */
    void AnswerFecn(uint8_t port, IbQueuePair* qp, const Packet& packet, uint16_t slid, uint8_t sl);
    /**
     * A reaction point's CCTI changed (fires CctiChanged).
     * @param qpn the queue pair, 0 for a per-SL reaction point
     * @param sl its SL
     * @param oldCcti the index before
     * @param newCcti the index now
     */
    void NotifyCctiChange(uint32_t qpn, uint8_t sl, uint16_t oldCcti, uint16_t newCcti);
    /**
     * Port transmit-ready callback.
     * @param port port number
     * @param dev the port
     * @param vl the VL whose queue emptied
     */
    void TxReady(uint8_t port, Ptr<IbNetDevice> dev, uint8_t vl);
    /**
     * A queue pair has (or may have) a packet to send: give it a turn.
     * @param qp the queue pair
     */
    void Activate(IbQueuePair* qp);
    /**
     * A queue pair was reset: take it out of the list it waits in, so that it is not served
     * on the port (or VL) it had before.
     * @param qp the queue pair
     */
    void Deactivate(IbQueuePair* qp);
    /**
     * Fill the transmit queue of (port, VL) from the QPs waiting for it.
     * @param port port number
     * @param vl the VL
     */
    void Pump(uint8_t port, uint8_t vl);
    /**
     * @param key an lkey or rkey
     * @return the region, or nullptr (a vector look-up)
     */
    IbMemoryRegion* LookupMr(uint32_t key) const;
    /**
     * Make a completion visible PcieWriteLatency from now.
     * @param cq the completion queue
     * @param wc the completion
     */
    void DeliverCompletion(const Ptr<IbCompletionQueue>& cq, const IbWorkCompletion& wc);
    /**
     * An IBA packet from an InfiniBand port, its receive buffer dealt with: to its QP.
     * @param port the port it came in on
     * @param packet the packet
     */
    void ReceiveIbPacket(uint8_t port, Ptr<Packet> packet);
    /**
     * @param wr a send work request being posted
     * @param ud true for a UD queue pair
     * @return from PostSend to the WR's first packet being ready to leave, payload
     *         transfer aside (DoorbellLatency and, with a PcieLink, doorbell, WQE fetch
     *         and the payload read's latency)
     */
    Time PostDelay(const IbSendWr& wr, bool ud) const;
    /// @return the extra latency of reading host memory for a READ response or an atomic
    ///         (the PcieLink's ReadLatency, or zero)
    Time MemoryReadLatency() const;
    /**
     * @param from when the payload may start to come (its read was issued a ReadLatency
     *        before)
     * @param bytes payload of the next packet (0: none from host memory)
     * @param qp the queue pair asking
     * @return when that payload is in the adapter, on the shared downstream direction
     *         (@p from without a PcieLink)
     */
    Time DmaReadGate(Time from, uint32_t bytes, const IbQueuePair* qp) const;
    /**
     * @param from when the payload may start to come
     * @param steps its transfer, time steps
     * @return when its transfer starts on the downstream direction, time steps
     */
    double DmaReadStart(Time from, double steps) const;
    /**
     * The packet whose payload DmaReadGate(from, bytes) timed is leaving: take its
     * transfer on the downstream direction (and its read requests upstream).
     * @param from as given to DmaReadGate
     * @param bytes as given to DmaReadGate
     * @param qp the queue pair whose packet it is
     */
    void DmaRead(Time from, uint32_t bytes, const IbQueuePair* qp);
    /**
     * A received payload goes to host memory: a posted write behind those before it.
     * @param bytes payload
     */
    void DmaWrite(uint32_t bytes);
    /**
     * @param cqe true to write a CQE (a completion), false for data visibility only
     * @return from now to the completion (or the data written so far) being visible to
     *         the host: PcieWriteLatency and, with a PcieLink, the writes ahead, the CQE's
     *         own and WriteLatency
     */
    Time VisibleDelay(bool cqe);
    /**
     * @param bytes size needed
     * @return a scratch buffer of at least @p bytes bytes
     */
    uint8_t* Scratch(uint32_t bytes);

    // Attributes
    bool m_dataMode;                         //!< MRs hold real bytes
    Time m_doorbellLatency;                  //!< PostSend to first packet on the wire
    Time m_pcieWriteLatency;                 //!< arrival to data and CQE visible in host memory
    Time m_ackDelay;                         //!< responder ACK/NAK generation
    Time m_responseDelay;                    //!< responder READ/atomic processing
    Ptr<PcieLink> m_pcie;                    //!< host interface (nullptr: idealized)
    uint32_t m_maxInline;                    //!< MaxInlineData
    uint32_t m_blueFlame;                    //!< BlueFlameSize
    double m_downFree{0};                    //!< PCIe host-to-adapter direction free, time steps
    double m_upFree{0};                      //!< PCIe adapter-to-host direction free, time steps
    const IbQueuePair* m_lastDmaQp{nullptr}; //!< the queue pair of the last DmaRead
    uint32_t m_ackCoalescing;                //!< ACK at least every N packets
    uint32_t m_maxOutstanding;               //!< send window per QP, packets
    uint32_t m_portQueueDepth;               //!< packets kept in a port's VL queue
    bool m_dcqcnEnabled;                     //!< RoCE: DCQCN on
    DcqcnRateControl::Config m_dcqcn;        //!< RoCE: DCQCN reaction-point parameters
    Time m_cnpInterval;                      //!< RoCE: least time between two CNPs of one QP
    uint8_t m_cnpDscp;                       //!< RoCE: DSCP of CNPs
    uint8_t m_rocePriority;                  //!< RoCE: the priority of SL 0
    uint64_t m_cnpsSent;                     //!< RoCE: CNPs sent
    uint64_t m_cnpsReceived;                 //!< RoCE: CNPs received
    uint64_t m_fecnsReceived{0};             //!< InfiniBand: FECN-marked packets received
    uint64_t m_becnsReceived{0};             //!< InfiniBand: BECNs received
    TracedCallback<uint32_t, uint8_t, uint16_t, uint16_t> m_cctiTrace; //!< CctiChanged
    TracedCallback<uint32_t, uint16_t> m_becnTrace;                    //!< BecnReceived

    std::vector<PortState> m_ports;         //!< index 0 unused
    std::vector<Ptr<IbQueuePair>> m_qps;    //!< by QPN - FIRST_QPN
    std::vector<Ptr<IbMemoryRegion>> m_mrs; //!< by key >> 8 (index 0 unused)
    std::vector<uint32_t> m_freeMrs;        //!< keys of deregistered regions (index reused)
    uint32_t m_keyTag;                      //!< low byte of the next key
    uint64_t m_nextAddr;                    //!< next address RegisterMemory(len) uses
    std::vector<uint8_t> m_scratch;         //!< receive copy buffer (data mode)
    uint64_t m_txPackets;                   //!< packets sent
    uint64_t m_rxPackets;                   //!< packets received
    uint64_t m_unknownDrops;                //!< packets dropped on arrival
};

} // namespace ns3

#endif /* IB_HCA_H */

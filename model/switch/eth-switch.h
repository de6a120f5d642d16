/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_SWITCH_H
#define ETH_SWITCH_H

#include "ns3/data-rate.h"
#include "ns3/eth-port-owner.h"
#include "ns3/ipv4-address.h"
#include "ns3/mac48-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

class EthNetDevice;
class Packet;
class UniformRandomVariable;

/**
 * @ingroup infiniband-switch
 * @brief An L3 Ethernet switch of a Clos fabric (leaf, spine or core): EthNetDevice
 * ports, IPv4 forwarding with ECMP, a shared-buffer MMU with PFC and ECN marking.
 *
 * Aggregated to a Node (node->GetObject<EthSwitch>()); its ports are EthNetDevices of
 * that node added with AddPort(), numbered 1..N. A frame reaches the switch (PortReceive)
 * when its first 64 bytes have arrived (CutThrough, the default) or its last byte
 * (store-and-forward), plus ForwardingLatency: the ports do that timing. The switch then
 * handles the frame at once, in this order:
 *
 * 1. Route: the longest prefix of the destination IPv4 address among the routes
 *    (AddRoute) gives a group of output ports. Host routes and prefixes of /16 or longer
 *    are compiled into one table indexed by address (one vector index per frame); only an
 *    address outside their span is looked up by a scan of the routes, longest first. A
 *    frame that is not IPv4 without options (ARP is not modelled: the hosts' next hop is
 *    configured), or has no route, is dropped (NO_ROUTE); one whose TTL would expire
 *    (TTL <= 1) is dropped (TTL_EXPIRED).
 * 2. Path: a port of the group by LoadBalancing: Ecmp (hash of the 5-tuple with the
 *    switch's HashSeed, modulo the group size; a port listed k times in a group gets k
 *    shares), Spray (round robin over the group, per frame), Flowlet (a table indexed by
 *    the flow hash: a frame more than FlowletTimeout after the last one of its entry
 *    starts a new flowlet on the group's least-loaded port, others follow their
 *    flowlet) or Adaptive (per frame, the group port with the fewest bytes queued at the
 *    frame's priority; ties rotate).
 * 3. Admission (the MMU). The buffer (BufferSize) is split into a reserved part
 *    (ReservedBytes per ingress port and lossless priority), a headroom part (per
 *    ingress port and lossless priority) and a shared pool, the rest. Lossless priorities
 *    are those of the ingress port's PfcEnabled mask. A lossless frame is charged to its
 *    (ingress port, priority): reserved bytes first, then the shared pool while the
 *    pair's shared use is below the dynamic threshold PfcAlpha x (free shared pool)
 *    (Choudhury and Hahne, IEEE/ACM ToN 6(2), 1998: a queue at or above alpha times the
 *    unused buffer accepts no more). When the pair's shared use reaches the threshold
 *    the switch asks the ingress port to send XOFF for the priority
 *    (EthNetDevice::SetPfcXoff) and charges what still arrives to the pair's headroom;
 *    beyond the headroom the frame is dropped (HEADROOM_OVERFLOW, which a correct
 *    configuration never shows). As bytes leave (headroom first, then shared, then
 *    reserved), XON is sent once the headroom is empty and the shared use is XonOffset
 *    below the threshold (or zero). A lossy frame is admitted to the shared pool only
 *    while its egress queue (port, priority) holds less than LossyAlpha x (free shared
 *    pool), else dropped (LOSSY_BUFFER_FULL).
 * 4. ECN: an ECN-capable (ECT) frame is marked CE (EthFrame::SetCe) with probability 0
 *    while its egress queue (port, priority) holds at most EcnKmin bytes before it,
 *    EcnPmax x (q - Kmin) / (Kmax - Kmin) between, and 1 above EcnKmax (RED on the
 *    instantaneous queue, as DCQCN's switches do).
 * 5. The frame is rewritten for the hop (EthFrame::RewriteHop: source MAC of the output
 *    port, destination MAC of its peer, TTL - 1, IPv4 checksum and FCS updated) and
 *    queued on the output port at its priority (EthNetDevice::Enqueue, which never
 *    drops). The buffer is released when it leaves the queue (PortTxStarted, whose
 *    cookie names the (ingress port, priority) that was charged).
 *
 * Cut-through from a slower ingress onto a faster egress port: the frame is queued with
 * an earliest start (EthNetDevice::Enqueue) so that it does not overtake its own tail.
 *
 * Each frame costs no event of the switch's own, one read of its first 64 bytes, and
 * vector lookups. The switch keeps no copy of a frame.
 */
class EthSwitch : public Object, public EthPortOwner
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    EthSwitch();
    ~EthSwitch() override;

    /// Path selection among the ports of an ECMP group (LoadBalancing attribute).
    enum LoadBalancing
    {
        ECMP,     ///< hash of the 5-tuple
        SPRAY,    ///< round robin, per frame
        FLOWLET,  ///< per flowlet, least-loaded port for a new one
        ADAPTIVE, ///< per frame, least-loaded port
    };

    /// Hash function for Ecmp and Flowlet (HashFunction attribute), see EthFlowHash.
    enum HashFunction
    {
        CRC32,    ///< CRC-32 of the 5-tuple, seed, non-linear finalizer
        XOR_FOLD, ///< XOR of the tuple's words and the seed, folded to 16 bits
    };

    /// Why a frame was dropped.
    enum DropReason : uint8_t
    {
        NO_ROUTE = 0,          ///< not IPv4, or no route for its destination
        TTL_EXPIRED = 1,       ///< TTL <= 1 on arrival
        LOSSY_BUFFER_FULL = 2, ///< lossy priority, egress queue at its dynamic threshold
        HEADROOM_OVERFLOW = 3, ///< lossless priority, headroom full (misconfiguration)
        N_DROP_REASONS = 4,    ///< number of reasons
    };

    /**
     * @param reason a drop reason
     * @return its name, as in the documentation ("NoRoute", "TtlExpired",
     *         "LossyBufferFull", "HeadroomOverflow")
     */
    static const char* DropReasonName(DropReason reason);

    /**
     * Make @p port the switch's next port (numbered from 1). The port must already be
     * added to the switch's node; the switch becomes its owner (EthNetDevice::SetOwner) and
     * sets its timing (EthNetDevice::SetCutThrough).
     * @param port the port
     * @return its port number
     */
    uint8_t AddPort(Ptr<EthNetDevice> port);
    /// @return the number of ports
    uint8_t GetNPorts() const;
    /**
     * @param n a port number 1..GetNPorts()
     * @return that port
     */
    Ptr<EthNetDevice> GetPort(uint8_t n) const;

    /**
     * Add a route (or replace the one with the same prefix and mask). The lookup is by
     * longest prefix; host bits of @p dest are ignored.
     * @param dest the destination network
     * @param mask its mask (contiguous: /0 to /32)
     * @param ports the output ports (1..N); more than one make an ECMP group, and a port
     *        given k times takes k shares of it (weighted ECMP)
     */
    void AddRoute(Ipv4Address dest, Ipv4Mask mask, std::vector<uint8_t> ports);
    /// Remove every route.
    void ClearRoutes();
    /**
     * Name a host of another subnet, which nothing joins to this switch's (the other rails
     * of a rail-only fabric): a frame for it has no route here and stops the simulation
     * with a message naming it, rather than vanishing as a NoRoute drop.
     * @param address the host's address
     * @param name the host's name
     */
    void AddForeignHost(Ipv4Address address, const std::string& name);
    /**
     * @param dest a destination address
     * @return the ports of its longest-prefix route (empty if none)
     */
    std::vector<uint8_t> GetRoute(Ipv4Address dest) const;
    /// @return the number of routes
    uint32_t GetNRoutes() const;

    /**
     * The headroom a (port, lossless priority) needs so that nothing is lost after XOFF:
     * what the peer still sends until it stops, plus what is on the cable and inside the
     * switch. With rate r, one-way cable delay d, forwarding latency L, the peer's PFC
     * response time R and an MTU-sized frame of w wire bytes (EthFrame::WireBytes):
     * r x (2 d + L + R) + 3 w + (wire bytes of a PFC frame). The classic rule is
     * 2 x (cable delay x rate) + 2 x MTU plus the peer's response time: the switch
     * waits for the frame it is sending before its PFC frame goes (one MTU), the peer
     * finishes the frame it is sending (one MTU), and both directions of the cable are
     * full (2 d r); this model also counts its forwarding latency and a store-and-forward
     * frame that was partly received (one more MTU). The Linux mlx5 NIC driver sizes its
     * own receive headroom as (301 + 2.16 x cable metres) x Gb/s + 2.72 x MTU bytes.
     * @param rate the link rate
     * @param cableDelay the one-way cable delay
     * @param latency the switch's forwarding latency
     * @param peerResponse the peer's PFC response time
     * @param mtuFrameBytes the largest frame (IP MTU + 18)
     * @return the headroom in bytes
     */
    static uint32_t ComputeHeadroom(DataRate rate,
                                    Time cableDelay,
                                    Time latency,
                                    Time peerResponse,
                                    uint32_t mtuFrameBytes);

    // EthPortOwner: what the switch's ports call.
    void PortReceive(uint8_t port, EthNetDevice* dev, Ptr<Packet> frame, uint8_t prio) override;
    void PortTxReady(uint8_t port, EthNetDevice* dev, uint8_t prio) override;
    void PortTxStarted(uint8_t port,
                       EthNetDevice* dev,
                       uint8_t prio,
                       uint32_t bytes,
                       uint32_t cookie) override;

    /// @return frames forwarded (queued on an output port) so far
    uint64_t GetForwardedFrames() const;
    /**
     * @param reason a drop reason
     * @return frames dropped for it, on all ports
     */
    uint64_t GetDropCount(DropReason reason) const;
    /**
     * @param reason a drop reason
     * @param inPort an ingress port
     * @return frames that arrived on @p inPort and were dropped for @p reason
     */
    uint64_t GetDropCount(DropReason reason, uint8_t inPort) const;
    /// @return frames marked CE so far
    uint64_t GetEcnMarks() const;
    /// @return XOFF requests made to the ports (transitions to XOFF of any pair)
    uint64_t GetXoffCount() const;
    /// @return XON requests made to the ports
    uint64_t GetXonCount() const;

    /**
     * @param port an ingress port
     * @param prio a priority
     * @return bytes charged to the pair (reserved + shared + headroom; lossless only)
     */
    uint32_t GetIngressBytes(uint8_t port, uint8_t prio) const;
    /**
     * @param port an ingress port
     * @param prio a priority
     * @return the pair's bytes in the shared pool
     */
    uint32_t GetIngressSharedBytes(uint8_t port, uint8_t prio) const;
    /**
     * @param port an ingress port
     * @param prio a priority
     * @return the pair's bytes in its headroom
     */
    uint32_t GetIngressHeadroomBytes(uint8_t port, uint8_t prio) const;
    /**
     * @param port an ingress port
     * @param prio a priority
     * @return whether the switch holds XOFF for the pair
     */
    bool IsXoff(uint8_t port, uint8_t prio) const;
    /**
     * @param port an egress port
     * @param prio a priority
     * @return bytes queued there (frames not yet started)
     */
    uint32_t GetEgressBytes(uint8_t port, uint8_t prio) const;
    /**
     * @param port a port
     * @return the headroom of each of its lossless priorities (HeadroomBytes, or computed
     *         by ComputeHeadroom from the port's rate, cable and MTU)
     */
    uint32_t GetHeadroomSize(uint8_t port) const;
    /// @return the shared pool: BufferSize less all reserved and headroom parts
    uint64_t GetSharedPoolSize() const;
    /// @return bytes of the shared pool in use
    uint64_t GetSharedPoolUsed() const;
    /// @return the lossless dynamic threshold now: PfcAlpha x (free shared pool)
    double GetPfcThreshold() const;
    /// @return the forwarding latency
    Time GetForwardingLatency() const;
    /// @return true in cut-through mode
    bool IsCutThrough() const;
    /**
     * Use fixed random streams for ECN marking.
     * @param stream the first stream
     * @return the number of streams used (1)
     */
    int64_t AssignStreams(int64_t stream);

    /**
     * TracedCallback signature for dropped frames.
     * @param reason why
     * @param inPort the port it arrived on
     * @param frame the frame
     */
    typedef void (*DropTracedCallback)(DropReason reason, uint8_t inPort, Ptr<const Packet> frame);
    /**
     * TracedCallback signature for a CE mark.
     * @param outPort the egress port
     * @param prio the priority
     * @param queueBytes bytes queued ahead of the frame
     * @param frame the frame (already marked)
     */
    typedef void (*EcnTracedCallback)(uint8_t outPort,
                                      uint8_t prio,
                                      uint32_t queueBytes,
                                      Ptr<const Packet> frame);
    /**
     * TracedCallback signature for XOFF and XON.
     * @param inPort the ingress port
     * @param prio the priority
     */
    typedef void (*PfcTracedCallback)(uint8_t inPort, uint8_t prio);
    /**
     * TracedCallback signature for a queue's occupancy.
     * @param port the port
     * @param prio the priority
     * @param bytes the bytes now
     */
    typedef void (*QueueTracedCallback)(uint8_t port, uint8_t prio, uint32_t bytes);
    /**
     * TracedCallback signature for an ingress pair's occupancy.
     * @param port the ingress port
     * @param prio the priority
     * @param bytes bytes charged (reserved + shared + headroom)
     * @param shared of which in the shared pool
     * @param headroom of which in headroom
     */
    typedef void (*IngressTracedCallback)(uint8_t port,
                                          uint8_t prio,
                                          uint32_t bytes,
                                          uint32_t shared,
                                          uint32_t headroom);

  protected:
    void DoInitialize() override;
    void DoDispose() override;

  private:
    /// A route as given.
    struct Route
    {
        uint32_t prefix{0}; ///< network (host bits cleared)
        uint32_t mask{0};   ///< mask
        uint8_t length{0};  ///< prefix length
        uint16_t group{0};  ///< index into m_groups
    };

    /// An ECMP group: ports m_groupPorts[offset .. offset + size).
    struct Group
    {
        uint32_t offset{0}; ///< first port in m_groupPorts
        uint16_t size{0};   ///< number of ports
        uint16_t next{0};   ///< Spray: next index; Adaptive: where the tie rotation starts
    };

    /// Per ingress (port, priority) pair: the MMU's ingress accounting.
    struct IngressPg
    {
        uint32_t reserved{0}; ///< bytes in the reserved part
        uint32_t shared{0};   ///< bytes in the shared pool
        uint32_t headroom{0}; ///< bytes in headroom
        bool xoff{false};     ///< XOFF asked of the port
    };

    /// A flowlet table entry.
    struct Flowlet
    {
        int64_t last{0};        ///< time of the entry's last frame (time steps)
        uint16_t group{0xFFFF}; ///< the group it was for (0xFFFF: none yet)
        uint8_t port{0};        ///< its port
    };

    /// Per-port data the frame path reads, filled in by Compile().
    struct PortInfo
    {
        EthNetDevice* dev{nullptr}; ///< the port
        Mac48Address mac;           ///< its address (new source MAC)
        Mac48Address peerMac;       ///< its peer's (new destination MAC)
        uint8_t lossless{0};        ///< PfcEnabled mask of the port
        uint32_t headroom{0};       ///< headroom per lossless priority
        uint32_t xonOffset{0};      ///< XON hysteresis
        DataRate rate;              ///< link rate
    };

    /// Cookie given with a frame to Enqueue: the ingress pair charged and how.
    static constexpr uint32_t COOKIE_LOSSLESS = 1u << 11;

    /// Rebuild the forwarding table and the per-port MMU data when something changed.
    void Compile();
    /// Compile the routes into m_direct / m_sorted.
    void CompileRoutes();
    /// Fill in m_info and the MMU sizes.
    void CompilePorts();
    /**
     * @param dst a destination address
     * @return the group of its longest-prefix route, or -1
     */
    int32_t Lookup(uint32_t dst) const;
    /**
     * @param dst a destination address
     * @return the group of its longest-prefix route by scanning the routes, or -1
     */
    int32_t LookupScan(uint32_t dst) const;
    /**
     * @param g a group
     * @param prio the frame's priority
     * @return the group port with the fewest queued bytes at @p prio (ties rotate)
     */
    uint8_t LeastLoaded(Group& g, uint8_t prio);
    /**
     * @param header the frame's first bytes
     * @param len their number
     * @return the flow hash by HashFunction and HashSeed
     */
    uint32_t FlowHash(const uint8_t* header, uint32_t len) const;
    /**
     * Drop a frame.
     * @param reason why
     * @param inPort where it came from
     * @param frame the frame
     */
    void Drop(DropReason reason, uint8_t inPort, Ptr<Packet> frame);
    /**
     * Admit a lossless frame into the buffer of its ingress pair.
     * @param inPort ingress port
     * @param prio priority
     * @param bytes its size
     * @return false if it overflows the headroom
     */
    bool AdmitLossless(uint8_t inPort, uint8_t prio, uint32_t bytes);
    /**
     * Release bytes of a lossless ingress pair; XON if due.
     * @param inPort ingress port
     * @param prio priority
     * @param bytes the bytes
     */
    void ReleaseLossless(uint8_t inPort, uint8_t prio, uint32_t bytes);
    /**
     * The RED-style marking decision for an ECN-capable frame (called only above Kmin).
     * @param queued bytes ahead of it in its egress queue
     * @return true to mark it CE
     */
    bool DecideEcn(uint32_t queued);
    /**
     * Forward a frame that has arrived (PortReceive, or DrainArrivals).
     * @param inPort its input port
     * @param frame the frame
     * @param prio its priority
     */
    void Forward(uint8_t inPort, Ptr<Packet> frame, uint8_t prio);
    /// OrderSimultaneousArrivals: forward this instant's arrivals, in input-port order.
    void DrainArrivals();

    /// A frame waiting for the end of its arrival instant (OrderSimultaneousArrivals).
    struct Arrival
    {
        uint8_t inPort;    ///< input port
        uint8_t prio;      ///< priority
        Ptr<Packet> frame; ///< the frame
    };

    /**
     * Set the ForwardingLatency attribute, on the ports already added too.
     * @param latency the latency
     */
    void SetForwardingLatency(Time latency);
    /**
     * Set the CutThrough attribute, on the ports already added too.
     * @param cutThrough true for cut-through
     */
    void SetCutThrough(bool cutThrough);
    /// Give every port the switch's timing.
    void UpdatePortModes();
    /// @param n FlowletTableSize attribute
    void SetFlowletTableSize(uint32_t n);
    /// @return FlowletTableSize attribute
    uint32_t GetFlowletTableSize() const;
    /// @param bytes BufferSize attribute
    void SetBufferSize(uint64_t bytes);
    /// @return BufferSize attribute
    uint64_t GetBufferSize() const;
    /// @param bytes ReservedBytes attribute
    void SetReservedBytes(uint32_t bytes);
    /// @return ReservedBytes attribute
    uint32_t GetReservedBytes() const;
    /// @param bytes HeadroomBytes attribute
    void SetHeadroomBytes(uint32_t bytes);
    /// @return HeadroomBytes attribute
    uint32_t GetHeadroomBytes() const;
    /// @param bytes XonOffset attribute
    void SetXonOffset(uint32_t bytes);
    /// @return XonOffset attribute
    uint32_t GetXonOffset() const;
    /// @param t PeerResponseTime attribute
    void SetPeerResponseTime(Time t);
    /// @return PeerResponseTime attribute
    Time GetPeerResponseTime() const;
    /// Mark the compiled tables stale (an attribute changed).
    void Invalidate();
    /**
     * Abort with a message if @p port is not one of the switch's ports.
     * @param port a port number
     * @param what the caller, for the message
     */
    void CheckPort(uint8_t port, const char* what) const;
    /// @return "EthSwitch on node N" for messages
    std::string Name() const;

    // The frame path's data first.
    bool m_dirty{true};                   //!< Compile() before the next frame
    bool m_cutThrough{true};              //!< CutThrough attribute
    LoadBalancing m_lb{ECMP};             //!< LoadBalancing attribute
    HashFunction m_hash{CRC32};           //!< HashFunction attribute
    uint32_t m_seed{0};                   //!< HashSeed attribute
    uint32_t m_directBase{0};             //!< first address of m_direct
    std::vector<uint16_t> m_direct;       //!< [dst - base] -> group, 0xFFFF none
    std::vector<Group> m_groups;          //!< ECMP groups
    std::vector<uint8_t> m_groupPorts;    //!< their ports
    std::vector<PortInfo> m_info;         //!< [port]
    std::vector<IngressPg> m_ingress;     //!< [port * 8 + prio]
    std::vector<uint32_t> m_egress;       //!< [port * 8 + prio] queued bytes
    std::vector<uint32_t> m_egressLossy;  //!< [port * 8 + prio] lossy bytes (shared pool)
    uint64_t m_sharedUsed{0};             //!< bytes in the shared pool
    uint64_t m_sharedSize{0};             //!< the shared pool
    double m_pfcAlpha{1.0};               //!< PfcAlpha attribute
    double m_lossyAlpha{1.0};             //!< LossyAlpha attribute
    uint32_t m_reserved{0};               //!< ReservedBytes attribute
    bool m_ecn{true};                     //!< EcnEnabled attribute
    bool m_orderArrivals{false};          //!< OrderSimultaneousArrivals attribute
    std::vector<Arrival> m_arrivals;      //!< this instant's arrivals, when ordered
    std::vector<Arrival> m_draining;      //!< the arrivals DrainArrivals is forwarding
    uint32_t m_kmin{0};                   //!< EcnKmin attribute
    uint32_t m_kmax{0};                   //!< EcnKmax attribute
    double m_pmax{0};                     //!< EcnPmax attribute
    Ptr<UniformRandomVariable> m_uniform; //!< ECN marking
    std::vector<Flowlet> m_flowlets;      //!< flowlet table
    Time m_flowletTimeout;                //!< FlowletTimeout attribute
    uint32_t m_flowletTableSize{0};       //!< FlowletTableSize attribute
    uint64_t m_forwarded{0};              //!< frames forwarded
    uint64_t m_ecnMarks{0};               //!< CE marks
    uint64_t m_xoffs{0};                  //!< XOFF requests
    uint64_t m_xons{0};                   //!< XON requests
    std::vector<std::array<uint64_t, N_DROP_REASONS>> m_drops; //!< [port][reason]

    std::vector<Ptr<EthNetDevice>> m_ports; //!< index = port number; [0] unused
    std::vector<Route> m_routes;            //!< as given
    std::vector<uint32_t> m_sorted;         //!< route indices, longest prefix first
    Time m_latency;                         //!< ForwardingLatency attribute
    uint64_t m_bufferSize{0};               //!< BufferSize attribute
    uint32_t m_headroomBytes{0};            //!< HeadroomBytes attribute (0: computed)
    uint32_t m_xonOffset{0};                //!< XonOffset attribute (0: one MTU frame)
    Time m_peerResponse;                    //!< PeerResponseTime attribute

    TracedCallback<DropReason, uint8_t, Ptr<const Packet>> m_dropTrace;            //!< Drop
    TracedCallback<uint8_t, uint8_t, uint32_t, Ptr<const Packet>> m_ecnTrace;      //!< EcnMark
    TracedCallback<uint8_t, uint8_t> m_xoffTrace;                                  //!< PfcXoff
    TracedCallback<uint8_t, uint8_t> m_xonTrace;                                   //!< PfcXon
    TracedCallback<uint8_t, uint8_t, uint32_t> m_egressTrace;                      //!< EgressQueue
    TracedCallback<uint8_t, uint8_t, uint32_t, uint32_t, uint32_t> m_ingressTrace; //!< Ingress
    std::map<uint32_t, std::string> m_foreign; //!< AddForeignHost: address -> name (cold)
};

} // namespace ns3

#endif /* ETH_SWITCH_H */

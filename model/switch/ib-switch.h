/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_SWITCH_H
#define IB_SWITCH_H

#include "ns3/callback.h"
#include "ns3/ib-fifo.h"
#include "ns3/ib-owned-packet.h"
#include "ns3/ib-port-owner.h"
#include "ns3/ib-shared-release.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace ns3
{

class IbNetDevice;
class Node;
class Packet;

/**
 * @ingroup infiniband-switch
 * @brief The Switch Congestion Setting of IBA congestion control (annex A10) as the subnet
 * manager programs it into every port of a switch.
 *
 * An output port's VL is congested while the bytes waiting for it in the switch's input
 * buffers exceed (16 - threshold) / 16 of the port's VlBufferSize: threshold 15 marks once a
 * sixteenth of a VL buffer waits, 1 once fifteen sixteenths do (IBA leaves the scale to the
 * implementation; 0 turns marking off). A packet waits for an output when every packet ahead
 * of it in its input FIFO goes to that output too; one behind a packet for another output is
 * held back by that packet (head-of-line blocking), not by its own output. A packet leaving a
 * congested output is eligible for a FECN mark unless it is shorter than packetSize bytes or
 * the output waited for credits within the time it takes to send a VL buffer (a victim of
 * congestion further on, not its root: marked only with victimMask). Of the eligible packets,
 * one in markingRate + 1 is marked.
 */
struct IbSwitchCongestionSetting
{
    uint8_t threshold{0};    ///< Threshold: 0 = off, 1..15 (15 the most sensitive)
    uint16_t markingRate{0}; ///< Marking_Rate: eligible packets left unmarked between marks
    uint16_t packetSize{0};  ///< Packet_Size, bytes (IBA: 64-byte units): shorter ones unmarked
    bool victimMask{false};  ///< Victim_Mask: mark at outputs stalled for credits too
};

/**
 * @ingroup infiniband-switch
 * @brief An InfiniBand switch: IbNetDevice ports, a linear forwarding table, a
 * multicast forwarding table, per-input-port per-VL buffers and a crossbar.
 *
 * Aggregated to a Node (node->GetObject<IbSwitch>()). Its ports are the node's
 * IbNetDevices added with AddPort(), numbered 1..N as in IBA.
 *
 * A packet arriving on input port i, VL v is looked up in the LFT by DLID (a vector
 * indexed by LID), given its output VL by the SL-to-VL table of the pair (i, o), and
 * queued in the FIFO of (i, v): it keeps occupying i's receive buffer, and so the
 * credits upstream, until it has been transmitted on o. Only the head of each input
 * FIFO competes for the crossbar, so a packet whose output is blocked holds back the
 * packets behind it (head-of-line blocking, as in hardware). Each output port serves
 * the heads that want it in the order they became heads (fair among inputs), takes at
 * most one packet per VL into its transmitter stage and only if the next hop has
 * credits for it, and chooses between its VLs with its own VL arbiter.
 *
 * Timing: a packet is handed to the crossbar ForwardingLatency after its LRH arrived
 * (CutThrough, the default) or after its last byte arrived (store-and-forward). A
 * cut-through packet onto a faster output link starts late enough not to overtake its
 * own tail.
 *
 * A switch drops, counts and traces (UnknownDlidDrop) a packet whose LFT entry is 255 (no
 * route) or names a port it does not have, whose DLID is beyond the table or a multicast
 * LID without an MFT entry, whose SL maps to VL15 on its output (for multicast, each
 * such copy), or that is for the switch's own LID, which has no local agent; credits keep
 * it from dropping anything else.
 */
class IbSwitch : public Object, public IbPacketForwarder
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbSwitch();
    ~IbSwitch() override;

    /// LFT value meaning "no route".
    static constexpr uint8_t NO_ROUTE = 255;
    /// First multicast LID.
    static constexpr uint16_t MULTICAST_LID_BASE = 0xC000;

    /**
     * Make @p port the switch's next port (numbered from 1). The port must already be
     * added to the switch's node.
     * @param port the port
     * @return its port number
     */
    uint8_t AddPort(Ptr<IbNetDevice> port);
    /// @return the number of ports
    uint8_t GetNPorts() const;
    /**
     * @param n a port number 1..GetNPorts()
     * @return that port
     */
    Ptr<IbNetDevice> GetPort(uint8_t n) const;

    /// @param lid the switch's own LID (that of its management port 0)
    void SetLid(uint16_t lid);
    /// @return the switch's own LID
    uint16_t GetLid() const;

    /**
     * Install a whole linear forwarding table.
     * @param lft lft[dlid] = output port, NO_ROUTE for none
     */
    void SetLft(std::vector<uint8_t> lft);
    /**
     * @param dlid a unicast LID
     * @param port its output port (NO_ROUTE to remove)
     */
    void SetLftEntry(uint16_t dlid, uint8_t port);
    /**
     * @param dlid a LID
     * @return its output port, NO_ROUTE if none
     */
    uint8_t GetLftEntry(uint16_t dlid) const;
    /// @return the linear forwarding table
    const std::vector<uint8_t>& GetLft() const;

    /**
     * Set the ports a multicast LID is replicated to.
     * @param mlid a multicast LID (0xC000..0xFFFE)
     * @param ports the output ports
     */
    void SetMftEntry(uint16_t mlid, const std::vector<uint8_t>& ports);
    /**
     * @param mlid a multicast LID
     * @return its output ports
     */
    std::vector<uint8_t> GetMftEntry(uint16_t mlid) const;

    /**
     * Program the SL-to-VL table of one (input, output) port pair.
     * @param inPort input port (1..N)
     * @param outPort output port (1..N)
     * @param sl2vl VL for each SL (15 = drop)
     */
    void SetSl2Vl(uint8_t inPort, uint8_t outPort, const std::array<uint8_t, 16>& sl2vl);
    /**
     * @param inPort input port
     * @param outPort output port
     * @param sl a service level
     * @return the VL a packet of that SL takes from inPort to outPort: as programmed with
     * SetSl2Vl, or else as the output port's SlToVlTable maps it
     */
    uint8_t GetSl2Vl(uint8_t inPort, uint8_t outPort, uint8_t sl) const;
    /**
     * A port's SlToVlTable or NumDataVls changed (IbNetDevice calls this): pairs not
     * programmed with SetSl2Vl follow the output port's table, so they are rebuilt.
     */
    void PortSlToVlChanged() override;
    /**
     * @param dlid a LID
     * @return whether the LFT has an output port for it
     */
    bool HasRoute(uint16_t dlid) const override;

    // IbPacketForwarder: what the switch's own ports call. PortForward is also what
    // Receive (the callback path) ends in: forwarding reads the LFT and the packet's first
    // four bytes (IbPacket::PeekHead), not the packet.
    void PortForward(uint8_t port,
                     IbNetDevice* dev,
                     IbOwnedPacket packet,
                     uint32_t head,
                     uint32_t bytes,
                     uint8_t vl,
                     uint32_t blocks) override;
    void PortTxReady(uint8_t port, IbNetDevice* dev, uint8_t vl) override;

    /**
     * Program IBA congestion control marking on all the switch's ports (the subnet manager
     * does it when its CongestionControl attribute is on). Threshold 0 turns it off.
     * @param setting the switch congestion setting
     */
    void SetCongestionSetting(const IbSwitchCongestionSetting& setting);
    /// @return the switch congestion setting (threshold 0: off)
    const IbSwitchCongestionSetting& GetCongestionSetting() const;
    /// @return packets this switch marked with FECN
    uint64_t GetFecnMarks() const;
    /**
     * @param port an output port
     * @param vl a VL
     * @return the bytes waiting in the input buffers for that output VL (counted only while
     *         congestion control is on)
     */
    uint32_t GetCongestionBacklog(uint8_t port, uint8_t vl) const;

    /**
     * Program adaptive routing (the subnet manager does it when its AdaptiveRouting
     * attribute is on): for each DLID an AR group, a set of equal-cost output ports besides
     * the LFT entry. RC requests on an SL of @p slMask then take the port the
     * AdaptiveRoutingPolicy picks among the group; everything else keeps the LFT's port.
     * @param groupOf groupOf[dlid] = its group (0: none, the LFT's port alone)
     * @param groups groups[g] = its ports (groups[0] unused)
     * @param slMask bit s set: SL s is adaptively routed
     */
    void SetAdaptiveRouting(std::vector<uint16_t> groupOf,
                            std::vector<std::vector<uint8_t>> groups,
                            uint16_t slMask);
    /**
     * @param dlid a LID
     * @return its AR group's ports (empty: none)
     */
    std::vector<uint8_t> GetArGroup(uint16_t dlid) const;
    /// @return packets that went through an adaptive choice
    uint64_t GetAdaptivePackets() const;
    /// @return of those, the packets that left by another port than the LFT's
    uint64_t GetAdaptiveDeviations() const;
    /**
     * Assign a fixed random stream to the random AR policy.
     * @param stream first stream index
     * @return the number of streams used (1)
     */
    int64_t AssignStreams(int64_t stream);

    /// @return packets forwarded so far
    uint64_t GetForwardedPackets() const;
    /// @return packets (and multicast copies) dropped: see UnknownDlidDrop
    uint64_t GetUnknownDlidDrops() const;
    /// @return the forwarding latency
    Time GetForwardingLatency() const;
    /// @return true in cut-through mode
    bool IsCutThrough() const;

    /**
     * Callback for packets addressed to the switch itself (DLID = its LID, LFT port 0):
     * (packet, input port, time its last byte has arrived). The input buffer has been
     * released when it is called.
     */
    typedef Callback<void, Ptr<Packet>, uint8_t, Time> LocalReceiveCallback;

    /**
     * Hand packets addressed to the switch's own LID to a local agent (an aggregation
     * node) instead of dropping them. A null callback restores the default (dropped and
     * counted as unknown DLID: subnet management packets are not modelled).
     * @param cb the agent
     */
    void SetLocalReceiveCallback(LocalReceiveCallback cb);

    /**
     * Send a packet generated inside the switch (by its management port 0 or an
     * aggregation node) out of a port. It waits in the port's VL queue for credits like
     * any forwarded packet; the caller bounds how many it injects.
     * @param packet a sealed IBA packet whose VL is already @p vl
     * @param outPort the output port (1..N)
     * @param vl the output VL
     * @param earliestStart do not start transmitting before this time
     */
    void InjectLocal(Ptr<Packet> packet, uint8_t outPort, uint8_t vl, Time earliestStart);

    /**
     * TracedCallback signature for dropped packets.
     * @param packet the packet
     * @param inPort the port it arrived on
     */
    typedef void (*DropTracedCallback)(Ptr<const Packet> packet, uint8_t inPort);

    /**
     * TracedCallback signature for FECN marks.
     * @param packet the packet, now marked
     * @param outPort the congested output port
     * @param vl its VL
     * @param backlog bytes still waiting for that output VL
     */
    typedef void (*FecnTracedCallback)(Ptr<const Packet> packet,
                                       uint8_t outPort,
                                       uint8_t vl,
                                       uint32_t backlog);

  protected:
    void DoDispose() override;

  private:
    /**
     * Abort with a message if @p port is neither NO_ROUTE nor one of the switch's ports.
     * @param dlid the entry's LID
     * @param port its port
     * @param what the caller, for the message
     */
    void CheckLftPort(uint16_t dlid, uint8_t port, const char* what) const;

    /// A packet waiting in an input buffer.
    struct InEntry
    {
        IbOwnedPacket packet; ///< the packet (VL already rewritten)
        uint32_t bytes{0};    ///< its size
        uint32_t blocks{0};   ///< credit blocks it occupies
        uint32_t head{0};     ///< its first four bytes, big-endian (VL already outVl)
        uint8_t outPort{0};   ///< where it goes
        uint8_t outVl{0};     ///< on which VL
        Time earliestStart;   ///< cut-through onto a faster link: not before this
    };

    /**
     * A port delivered a packet (IbNetDevice::IbReceiveCallback, bound to the port).
     * @param inPort the port number
     * @param dev the port
     * @param packet the packet
     * @param vl its VL
     * @param blocks its size in blocks
     */
    void Receive(uint8_t inPort,
                 Ptr<IbNetDevice> dev,
                 Ptr<Packet> packet,
                 uint8_t vl,
                 uint32_t blocks);
    /**
     * An output VL can take a packet (IbNetDevice::TxReadyCallback, bound to the port).
     * @param outPort the port number
     * @param dev the port
     * @param vl the VL
     */
    void TxReady(uint8_t outPort, Ptr<IbNetDevice> dev, uint8_t vl);
    /**
     * Serve the requests for one output VL while it can take packets.
     * @param outPort the port
     * @param outVl the VL
     */
    void Grant(uint8_t outPort, uint8_t outVl);

    /**
     * @param inPort input port
     * @param vl input VL
     * @param out output port
     * @return the input queue a packet from (inPort, vl) to @p out waits in: the
     *         (inPort, vl) FIFO, or with virtual output queues its queue for @p out
     */
    uint32_t InputQueue(uint8_t inPort, uint8_t vl, uint8_t out) const
    {
        const uint32_t fifo = inPort * 16u + vl;
        return m_voq ? fifo * m_voqStride + out : fifo;
    }

    /**
     * @param q an input queue
     * @return its input buffer, inPort * 16 + vl
     */
    uint32_t InputBuffer(uint32_t q) const
    {
        return m_voq ? q / m_voqStride : q;
    }

    /**
     * The head of an input queue asks for its output.
     * @param q the queue (InputQueue)
     */
    void RequestHead(uint32_t q);
    /**
     * If an input queue's head may not start yet (cut-through onto a faster output), have
     * it ask for its output at its earliest start.
     * @param head the head
     * @param q its queue
     * @return true if it was deferred
     */
    bool DeferredUntilEligible(const InEntry& head, uint32_t q);
    /**
     * RequestHead for a head that was waiting for its earliest start.
     * @param q its queue
     */
    void RequestEligibleHead(uint32_t q);
    /// Size the input queues for the ports and the InputBuffering mode.
    void ResizeInputs();
    /**
     * Set the InputBuffering attribute.
     * @param mode fifo or voq
     */
    void SetInputBuffering(std::string mode);
    /// @return the InputBuffering attribute
    std::string GetInputBuffering() const;
    /// Serve the (port, VL) pairs in m_grantPending until none is left (m_granting set).
    void ServePending();
    /**
     * Replicate a multicast packet.
     * @param inPort input port
     * @param packet the packet
     * @param vl its input VL
     * @param blocks its size in blocks
     * @param dlid its multicast LID
     * @param sl its SL
     */
    void Multicast(uint8_t inPort,
                   Ptr<Packet> packet,
                   uint8_t vl,
                   uint32_t blocks,
                   uint16_t dlid,
                   uint8_t sl);
    /**
     * Drop a packet that has nowhere to go, releasing its buffer.
     * @param inPort input port
     * @param packet the packet
     * @param vl its VL
     * @param blocks its size
     */
    void Drop(uint8_t inPort, Ptr<Packet> packet, uint8_t vl, uint32_t blocks);
    /**
     * Set the ForwardingLatency attribute, on the ports already added too.
     * @param latency port-to-port latency
     */
    void SetForwardingLatency(Time latency);
    /**
     * Set the CutThrough attribute, on the ports already added too.
     * @param cutThrough forward at LRH arrival (true) or at the last byte (false)
     */
    void SetCutThrough(bool cutThrough);
    /**
     * Cut-through from a slower input to a faster output: the packet may not finish
     * leaving before its tail has arrived.
     * @param in the input port
     * @param out the output port
     * @param bytes the packet's size
     * @return the earliest time its transmission on @p out may start (0: at once)
     */
    Time EarliestStart(const IbNetDevice& in, const IbNetDevice& out, uint32_t bytes) const;
    /**
     * Congestion control: a packet joins input FIFO @p q (before it is pushed). It waits for
     * its output, and counts in that output's backlog, if every packet ahead of it goes there
     * too (the FIFO's leading run); behind a packet for another output it is held back by
     * that one (head-of-line blocked), not by its own output.
     * @param q the FIFO (inPort * 16 + vl)
     * @param e the packet
     */
    void CongestionArrival(uint32_t q, const InEntry& e);
    /**
     * Count the leading run of FIFO @p q (the packets from its head on that share the head's
     * output) into that output's backlog.
     * @param q the FIFO
     */
    void CongestionRunFromHead(uint32_t q);
    /**
     * Congestion control: a packet left input FIFO @p q for (outPort, outVl); count it out of
     * the backlog and mark it with FECN if the output is congested and not a victim.
     * @param key outPort * 16 + outVl
     * @param q the FIFO it left
     * @param e the packet
     */
    void CongestionDeparture(uint16_t key, uint32_t q, InEntry& e);
    /**
     * The VL a packet of @p sl arriving on VL @p vl of @p inPort takes out of @p out.
     * @param inPort input port
     * @param out output port
     * @param sl its SL
     * @param vl its input VL
     * @return the output VL
     */
    uint8_t OutputVl(uint8_t inPort, uint8_t out, uint8_t sl, uint8_t vl);
    /**
     * Adaptive routing: the output of a packet whose DLID has an AR group.
     * @param inPort input port
     * @param packet the packet (its BTH opcode is read)
     * @param head its first four bytes
     * @param group its DLID's group
     * @param vl its input VL
     * @param blocks its size in credit blocks
     * @return the output port
     */
    uint8_t AdaptiveOutput(uint8_t inPort,
                           const Packet& packet,
                           uint32_t head,
                           uint16_t group,
                           uint8_t vl,
                           uint32_t blocks);
    /// @param policy AdaptiveRoutingPolicy attribute value
    void SetArPolicy(std::string policy);
    /// @return AdaptiveRoutingPolicy
    std::string GetArPolicy() const;
    /// Give every port the switch's forwarding latency and mode.
    void UpdatePortModes();
    /// Fill in default SL-to-VL tables for pairs never programmed: the output port's.
    void BuildDefaultSl2Vl();
    /**
     * Abort with a message if an SL of @p sl2vl maps to a VL that the output port's
     * arbitration tables never pick (such a packet could never leave the switch).
     * @param inPort input port
     * @param outPort output port
     * @param sl2vl the VL of each SL from @p inPort to @p outPort
     */
    void CheckArbitrated(uint8_t inPort,
                         uint8_t outPort,
                         const std::array<uint8_t, 16>& sl2vl) const;

    // What a packet reads comes first (each line of the object a packet touches is a
    // cache miss on a large fabric).
    bool m_granting;                       //!< inside Grant (re-entrancy guard)
    bool m_cutThrough;                     //!< CutThrough attribute
    bool m_sl2vlProgrammed{false};         //!< SetSl2Vl was called (else SL mod VLs)
    uint64_t m_forwarded;                  //!< packets forwarded
    std::vector<uint8_t> m_lft;            //!< linear forwarding table
    std::vector<Ptr<IbNetDevice>> m_ports; //!< index = port number; [0] unused
    /// [port]: bit vl set while m_input[port * 16 + vl] holds packets, bit 16 + vl while
    /// m_requests[port * 16 + vl] holds requests. A packet that finds its input FIFO and
    /// its output's requests empty, and the output port ready, goes straight to the port
    /// without touching either queue; a port that is ready again finds out here whether
    /// anything waits for it.
    std::vector<uint32_t> m_waiting;
    std::vector<uint16_t> m_grantPending; //!< (port * 16 + vl) to serve after the guard
    LocalReceiveCallback m_localReceive;  //!< port-0 agent (or null)
    /// input queues: [port * 16 + vl] FIFOs, or with virtual output queues
    /// [(port * 16 + vl) * m_voqStride + output port]
    std::vector<IbFifo<InEntry>> m_input;
    std::vector<IbFifo<uint32_t>> m_requests; //!< [port * 16 + vl] -> input queues' heads
    bool m_voq{false};                        //!< InputBuffering is voq
    uint32_t m_voqStride{1};                  //!< ports + 1 (virtual output queues)
    uint16_t m_lid;                           //!< own LID
    std::vector<std::vector<uint8_t>> m_mft;  //!< multicast table, [mlid - 0xC000] -> ports
    /// every multicast release record made (kept until the switch goes)
    std::vector<std::unique_ptr<IbSharedRelease>> m_shared;
    IbSharedRelease* m_sharedFree{nullptr};       //!< the records not in use
    std::vector<std::array<uint8_t, 16>> m_sl2vl; //!< [in * stride + out] -> VL per SL
    std::vector<bool> m_sl2vlSet;                 //!< pair programmed explicitly
    uint32_t m_sl2vlStride;    //!< ports + 1 when the tables are valid (0: rebuild them)
    uint32_t m_sl2vlLayout{0}; //!< ports + 1 when the tables were laid out
    Time m_latency;            //!< ForwardingLatency attribute
    uint64_t m_unknownDlid;    //!< packets dropped for lack of a route
    TracedCallback<Ptr<const Packet>, uint8_t> m_dropTrace; //!< UnknownDlidDrop

    // Adaptive routing
    /// AdaptiveRoutingPolicy values
    enum ArPolicy : uint8_t
    {
        AR_LEAST_LOADED,
        AR_RANDOM,
        AR_HASH
    };

    bool m_arOn{false};                               //!< AR groups programmed
    uint16_t m_arSlMask{0};                           //!< SLs adaptively routed
    ArPolicy m_arPolicy{AR_LEAST_LOADED};             //!< AdaptiveRoutingPolicy
    Time m_arHold;                                    //!< AdaptiveRoutingHold
    uint32_t m_arRotor{0};                            //!< where ties start
    std::vector<uint16_t> m_arGroupOf;                //!< [dlid] -> group (0: none)
    std::vector<std::vector<uint8_t>> m_arGroups;     //!< [group] -> ports
    std::vector<std::pair<Time, uint8_t>> m_arChoice; //!< [dlid] -> (kept until, port)
    Ptr<UniformRandomVariable> m_arRandom;            //!< random policy
    uint64_t m_arPackets{0};                          //!< packets routed adaptively
    uint64_t m_arDeviations{0};                       //!< ... not by the LFT's port

    // Congestion control (IBA annex A10), all indexed [port * 16 + vl] but the threshold
    bool m_ccOn{false};                  //!< marking on (threshold > 0)
    IbSwitchCongestionSetting m_cc;      //!< the setting
    std::vector<uint32_t> m_ccBacklog;   //!< bytes waiting in input buffers for it
    std::vector<uint16_t> m_ccSkipped;   //!< eligible packets since the last mark
    std::vector<Time> m_ccStallAt;       //!< last time it waited for credits (-1: never)
    std::vector<uint32_t> m_ccRun;       //!< [input FIFO]: packets of its leading run
    std::vector<uint8_t> m_ccRunOpen;    //!< [input FIFO]: the run reaches its tail
    std::vector<uint32_t> m_ccThreshold; //!< [port]: backlog bytes that make it congested
    std::vector<Time> m_ccVictimWindow;  //!< [port]: a stall this recent makes it a victim
    uint64_t m_fecnMarks{0};             //!< packets marked
    TracedCallback<Ptr<const Packet>, uint8_t, uint8_t, uint32_t> m_fecnTrace; //!< FecnMark
};

} // namespace ns3

#endif /* IB_SWITCH_H */

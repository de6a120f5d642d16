/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef SHARP_AGGREGATION_NODE_H
#define SHARP_AGGREGATION_NODE_H

#include "ns3/collective-reduction.h"
#include "ns3/data-rate.h"
#include "ns3/ib-switch.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/simple-ref-count.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace ns3
{

class IbSwitch;
class Packet;
class SharpAggregationNode;

/**
 * @ingroup infiniband-sharp
 * @brief What one fragment sequence number of a SHARP tree carries (see SharpTree).
 */
struct SharpFragment
{
    uint32_t seq{0xFFFFFFFF};                             ///< sequence number it describes
    uint32_t bytes{0};                                    ///< payload bytes
    CollectiveDataType type{CollectiveDataType::FLOAT32}; ///< element type
    CollectiveRedOp op{CollectiveRedOp::SUM};             ///< reduction
    bool toRootOnly{false};                               ///< REDUCE: result to one rank
    uint32_t rootRank{0};                                 ///< that rank
};

/**
 * @ingroup infiniband-sharp
 * @brief A SHARP aggregation tree: built by SharpAggregationManager over the subnet
 * manager's routes for one group of hosts (a communicator), shared by the aggregation
 * nodes on it and by the hosts' SharpCollectiveAlgorithm.
 *
 * A tree has two channels of fragment sequence numbers: the low-latency channel (LLT)
 * and the streaming channel (SAT). A channel with window W has W slots; fragment seq of a
 * channel occupies slot seq % W at every aggregation node of the tree until its result
 * has passed back down. A host sends fragment seq only after it has received the result
 * of seq - W, which every aggregation node on its path forwarded (and so freed the slot)
 * first: this credit rule is the flow control at every hop.
 *
 * The SHARP data header is represented by the IBA immediate data of each packet
 * (direction, channel, sequence number); the fields that real SHARP carries next to it
 * (data type, operation, length) are kept per slot in @c desc, written by the first
 * host that sends a sequence number and read by each aggregation node when a slot is
 * first used.
 */
class SharpTree : public SimpleRefCount<SharpTree>
{
  public:
    /// Channel indexes.
    enum Channel : uint8_t
    {
        LLT = 0, ///< low-latency aggregation (small messages)
        SAT = 1  ///< streaming aggregation (large messages)
    };

    /// QPNs of the aggregation nodes' endpoints: QPN_BASE + (generation << 16) + id (qpn).
    static constexpr uint32_t QPN_BASE = 0xA00000;
    /// Q_Key of SHARP traffic.
    static constexpr uint32_t QKEY = 0x53485250; // "SHRP"
    /// Immediate data: result travelling down.
    static constexpr uint32_t IMM_DOWN = 0x80000000u;
    /// Immediate data: streaming channel.
    static constexpr uint32_t IMM_SAT = 0x40000000u;
    /// Immediate data: sequence-number bits.
    static constexpr uint32_t IMM_SEQ_MASK = 0x3FFFFFFFu;

    uint16_t id{0}; ///< tree id, the lowest free one
    /// The aggregation nodes' QPN for this tree: QPN_BASE + (generation << 16) + id, the
    /// generation (0 to 15) counting, modulo 16, the trees made with this id before (so a
    /// packet for an old tree is taken for the new one only if it stayed in flight while
    /// the id was given 16 times)
    uint32_t qpn{QPN_BASE};
    bool dataMode{false}; ///< fragments carry real bytes
    /// a link change left a route it uses missing (SharpAggregationNode::RefreshRoutes):
    /// its hosts build another tree before their next operation
    bool broken{false};
    /// called once when the tree is marked broken, as the aggregation manager tells the
    /// job whose tree lost a link (its operations in flight are lost)
    Callback<void> brokenCallback;
    std::array<uint32_t, 2> window{{1, 1}};          ///< slots per channel
    std::array<uint32_t, 2> fragmentBytes{{256, 0}}; ///< largest fragment per channel
    std::array<std::vector<SharpFragment>, 2> desc;  ///< per channel, per slot
    std::vector<uint16_t> leafLid;                   ///< per rank: LID of its leaf switch
    std::vector<Ptr<SharpAggregationNode>> ans;      ///< the tree's aggregation nodes
    uint32_t rootIndex{0};                           ///< position of the root in ans
    uint32_t depth{0};                               ///< switch levels below the root
};

/**
 * @ingroup infiniband-sharp
 * @brief A SHARP aggregation node (AN): the reduction engine of one switch ASIC.
 *
 * Aggregated to a switch's Node and attached to its IbSwitch, it receives the packets
 * addressed to the switch's own LID with a SHARP tree's QPN. For each slot of a tree it
 * reduces the contributions of its children (hosts and child aggregation nodes), in
 * data mode on the real bytes with CollectiveReduction, and sends the partial result to
 * its parent; the root sends the result down, and every node copies it to each of its
 * children (for a REDUCE, only towards the root rank; the other children get an empty
 * completion that returns their credit). Packets it sends wait in the switch's output
 * queues for link credits like forwarded ones.
 *
 * Timing: the ALU takes each arriving contribution in turn at AluRate (input bytes per
 * second) once it has arrived whole; the partial result leaves AggregationLatency after
 * the last contribution has been taken. Results going down are copied out as soon as
 * they have arrived whole (no ALU work).
 *
 * Resources (per switch, as the hardware limits them): MaxTrees trees, MaxOutstandingOps
 * low-latency slots per tree, MaxStreamingFlows streaming (SAT) flows at a time, and
 * BufferSize bytes of aggregation buffer, shared by the streaming flows.
 */
class SharpAggregationNode : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    SharpAggregationNode();
    ~SharpAggregationNode() override;

    /**
     * Attach to a switch: packets for the switch's LID now reach this node.
     * @param sw the switch
     */
    void Attach(Ptr<IbSwitch> sw);
    /// @return the switch
    Ptr<IbSwitch> GetSwitch() const;

    /// One child of this node in a tree.
    struct Child
    {
        uint16_t lid{0};    ///< its LID (host port, or child switch)
        uint32_t qpn{0};    ///< its QPN (host's UD QP, or the tree's SharpTree::qpn)
        uint8_t outPort{0}; ///< the port the LFT routes its LID to
        uint8_t outVl{0};   ///< the VL of SHARP's SL on that port
        bool host{false};   ///< a host (true) or an aggregation node
    };

    /// This node's place in a tree.
    struct Role
    {
        uint16_t parentLid{0};                 ///< parent switch (0 at the root)
        uint8_t parentPort{0};                 ///< port towards it
        uint8_t parentVl{0};                   ///< VL towards it
        std::vector<Child> children;           ///< children
        std::vector<int32_t> childOfLid;       ///< by SLID: child index or -1
        std::vector<uint32_t> childTowardRank; ///< by rank: child leading to it
    };

    /**
     * Take a place in a tree (called by SharpAggregationManager).
     * @param tree the tree
     * @param role this node's parent and children
     * @param sl the service level of SHARP packets
     */
    void AddTree(Ptr<SharpTree> tree, Role role, uint8_t sl);
    /**
     * Leave a tree.
     * @param id the tree id
     */
    void RemoveTree(uint16_t id);
    /**
     * Look the routes of every tree this node is part of up again in its switch's LFT, as
     * after the subnet manager rerouted: the port (and VL) towards the parent and towards
     * each child. A tree with a route gone, or onto VL15, is marked broken.
     * @return the trees marked broken by this call
     */
    uint32_t RefreshRoutes();
    /// @return trees this node is part of
    uint32_t GetNTrees() const;
    /// @return MaxTrees
    uint32_t GetMaxTrees() const;
    /// @return MaxOutstandingOps
    uint32_t GetMaxOutstandingOps() const;
    /// @return MaxStreamingFlows
    uint32_t GetMaxStreamingFlows() const;
    /// @return BufferSize in bytes
    uint32_t GetBufferSize() const;

    /**
     * Claim a streaming flow.
     * @return false if MaxStreamingFlows are in use
     */
    bool AcquireStreamingFlow();
    /// Give a streaming flow back.
    void ReleaseStreamingFlow();
    /// @return streaming flows in use
    uint32_t GetActiveStreamingFlows() const;

    /// @return contributions reduced so far
    uint64_t GetContributions() const;
    /// @return partial or final results sent up or turned down at the root
    uint64_t GetAggregations() const;
    /// @return packets sent (up and down)
    uint64_t GetPacketsSent() const;
    /// @return packets for the switch's LID dropped because they name no tree of this
    ///         node: other traffic to the switch, or packets still on their way to a
    ///         tree destroyed before they arrived (its QPN's generation is not the
    ///         current tree's)
    uint64_t GetUnknownDrops() const;

    /**
     * TracedCallback signature of the Aggregated trace.
     * @param tree tree id
     * @param seq fragment sequence number
     * @param bytes fragment bytes
     */
    typedef void (*AggregatedTracedCallback)(uint16_t tree, uint32_t seq, uint32_t bytes);

  protected:
    void DoDispose() override;

  private:
    /// A slot's state.
    struct Slot
    {
        bool busy{false};         ///< in use
        uint32_t seq{0};          ///< fragment in it
        uint32_t arrived{0};      ///< contributions so far
        SharpFragment frag;       ///< its descriptor (copied on first use)
        std::vector<uint8_t> acc; ///< partial result (data mode)
    };

    /// A tree this node is part of.
    struct TreeState
    {
        Ptr<SharpTree> tree;                    ///< shared description
        Role role;                              ///< place in it
        uint8_t sl{0};                          ///< SHARP's service level
        std::array<std::vector<Slot>, 2> slots; ///< per channel
    };

    /**
     * A packet for the switch's own LID (IbSwitch::LocalReceiveCallback).
     * @param packet the packet
     * @param inPort its input port
     * @param tail when its last byte arrived
     */
    void Receive(Ptr<Packet> packet, uint8_t inPort, Time tail);
    /**
     * All contributions of a slot are in and reduced: send it up (or down at the root).
     * @param qpn the tree's QPN (SharpTree::qpn: its id and generation)
     * @param ch channel
     * @param slot slot index
     */
    void Aggregated(uint32_t qpn, uint8_t ch, uint32_t slot);
    /**
     * Copy a result to every child and free its slot.
     * @param ts the tree
     * @param ch channel
     * @param slot slot index
     * @param data result bytes (data mode) or null
     * @param bytes result length
     * @param earliest not before this time
     */
    void SendDown(TreeState& ts,
                  uint8_t ch,
                  uint32_t slot,
                  const uint8_t* data,
                  uint32_t bytes,
                  Time earliest);
    /**
     * Build and inject one SHARP packet.
     * @param ts the tree
     * @param dlid destination LID
     * @param destQp destination QPN
     * @param imm immediate data
     * @param data payload (data mode) or null
     * @param bytes payload length
     * @param outPort output port
     * @param vl output VL
     * @param earliest not before this time
     */
    void Emit(const TreeState& ts,
              uint16_t dlid,
              uint32_t destQp,
              uint32_t imm,
              const uint8_t* data,
              uint32_t bytes,
              uint8_t outPort,
              uint8_t vl,
              Time earliest);

    // Attributes
    uint32_t m_maxTrees;          //!< MaxTrees
    uint32_t m_maxOutstandingOps; //!< MaxOutstandingOps (LLT slots per tree)
    uint32_t m_maxStreamingFlows; //!< MaxStreamingFlows
    uint32_t m_bufferSize;        //!< BufferSize
    Time m_latency;               //!< AggregationLatency
    DataRate m_aluRate;           //!< AluRate

    Ptr<IbSwitch> m_switch;                          //!< the switch
    std::vector<std::unique_ptr<TreeState>> m_trees; //!< by tree id (null: not on it)
    uint32_t m_nTrees;                               //!< trees
    uint32_t m_activeFlows;                          //!< streaming flows in use
    Time m_aluFree;                                  //!< ALU busy until
    std::vector<uint8_t> m_scratch;                  //!< packet copy (data mode)
    uint64_t m_contributions;                        //!< contributions taken
    uint64_t m_aggregations;                         //!< slots completed
    uint64_t m_packetsSent;                          //!< packets emitted
    uint64_t m_unknownDrops;                         //!< packets for no tree of this node
    TracedCallback<uint16_t, uint32_t, uint32_t> m_aggregatedTrace; //!< Aggregated
};

} // namespace ns3

#endif /* SHARP_AGGREGATION_NODE_H */

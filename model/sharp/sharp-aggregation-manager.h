/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef SHARP_AGGREGATION_MANAGER_H
#define SHARP_AGGREGATION_MANAGER_H

#include "sharp-aggregation-node.h"

#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class IbHca;

/**
 * @ingroup infiniband-sharp
 * @brief The SHARP aggregation manager (AM): knows the fabric's aggregation nodes and
 * builds one aggregation tree per group of hosts on the subnet manager's routes.
 *
 * Tree construction (CreateTree): every host's leaf switch is the switch its port 1 is
 * cabled to. For each candidate root (a switch with an aggregation node), the tree is the
 * union of the LFT paths from the leaf switches to the root's LID: routes towards one
 * destination LID form an in-tree, so each switch on them has exactly one parent. The
 * root chosen is the one with the shallowest tree, then the fewest trees already rooted
 * there (spreading communicators over the spines), then the fewest switches, then the
 * lowest index. Every switch on the tree must have an aggregation node with a free tree
 * entry; a host not cabled to a switch, a switch without an aggregation node on the way,
 * or exhausted MaxTrees makes CreateTree refuse with a message naming the switch.
 *
 * Windows: the low-latency channel gets the smallest MaxOutstandingOps of the tree's
 * nodes; the streaming channel the smallest BufferSize / MaxStreamingFlows, divided by the
 * streaming fragment size (the tree is refused if that is less than one fragment).
 *
 * Streaming flows are claimed per operation on every node of a tree
 * (AcquireStreaming); when one node has MaxStreamingFlows in use the claim fails and
 * the caller falls back.
 */
class SharpAggregationManager : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    SharpAggregationManager();
    ~SharpAggregationManager() override;

    /**
     * Make an aggregation node (attached to its switch) available for trees.
     * @param an the node
     */
    void AddAggregationNode(Ptr<SharpAggregationNode> an);
    /// @return the aggregation nodes known
    uint32_t GetNAggregationNodes() const;

    /**
     * Build an aggregation tree for a group of hosts.
     * @param hcas the hosts, rank order (port 1 of each is used)
     * @param qpns each host's SHARP UD queue pair number
     * @param lltFragmentBytes largest low-latency fragment
     * @param satFragmentBytes largest streaming fragment
     * @param sl service level of SHARP packets
     * @param error why the tree was refused (when null is returned)
     * @return the tree, or null if the fabric cannot host it
     */
    Ptr<SharpTree> CreateTree(const std::vector<Ptr<IbHca>>& hcas,
                              const std::vector<uint32_t>& qpns,
                              uint32_t lltFragmentBytes,
                              uint32_t satFragmentBytes,
                              uint8_t sl,
                              std::string* error);
    /**
     * Free a tree's entries on its aggregation nodes. A tree destroyed before (whose id
     * another tree may hold now) is left alone.
     * @param tree the tree
     */
    void DestroyTree(Ptr<SharpTree> tree);

    /**
     * Claim a streaming flow on every aggregation node of a tree.
     * @param tree the tree
     * @return false (nothing claimed) if a node has no free flow
     */
    bool AcquireStreaming(Ptr<SharpTree> tree);
    /**
     * Give back the flows of AcquireStreaming.
     * @param tree the tree
     */
    void ReleaseStreaming(Ptr<SharpTree> tree);

    /// @return trees alive
    uint32_t GetNTrees() const;

  protected:
    void DoDispose() override;

  private:
    std::vector<Ptr<SharpAggregationNode>> m_ans; //!< known nodes
    std::vector<uint32_t> m_rootedTrees;          //!< per node: trees rooted there
    std::vector<uint32_t> m_liveQpn;              //!< per id: the live tree's QPN, or 0
    std::vector<uint8_t> m_idGeneration;          //!< per id: the next tree's QPN generation
    uint32_t m_nTrees;                            //!< trees alive

    /// Tree ids are 0 .. kMaxTrees - 1 (SharpTree::qpn).
    static constexpr uint32_t kMaxTrees = 0xFFFF;
};

} // namespace ns3

#endif /* SHARP_AGGREGATION_MANAGER_H */

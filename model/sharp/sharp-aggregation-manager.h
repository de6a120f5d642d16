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
class IbSubnetManager;

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
     * Follow the subnet manager's reroutes after link changes: each one makes every
     * aggregation node look its trees' routes up again (SharpAggregationNode::RefreshRoutes),
     * and a tree that lost one is marked broken (its hosts build another before their next
     * operation, or run it host-based). SharpHelper::Install(IbFabric) calls it.
     * @param sm the subnet manager
     */
    void WatchSubnetManager(Ptr<IbSubnetManager> sm);
    /// @return trees marked broken by link changes so far
    uint32_t GetBrokenTrees() const;

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
    /// A tree taking shape in CreateTree, phase by phase; nodes are aggregation node
    /// indices.
    struct TreeShape
    {
        std::vector<int32_t> anOfNode;   ///< node id -> aggregation node, -1 if none
        std::vector<int32_t> leaf;       ///< per rank: the aggregation node of its leaf switch
        int32_t root{-1};                ///< the root chosen, -1 until then
        int32_t depth{0};                ///< switch levels below the root
        std::vector<int32_t> parent;     ///< per node: its parent towards the root
        std::vector<uint8_t> parentPort; ///< per node: its port towards the parent
        std::vector<bool> inTree;        ///< per node: part of the tree
        std::vector<uint32_t> childIndexAtParent; ///< per node: its child index at its parent
        std::vector<uint32_t> hostChildIndex;     ///< per rank: its child index at its leaf
    };

    /**
     * Map every switch node to its aggregation node (CreateTree's first step).
     * @param [out] anOfNode node id -> aggregation node index, -1 if none
     * @param [out] why the switch without a LID, on failure
     * @return true if every aggregation node's switch has a LID
     */
    bool IndexAggregationNodes(std::vector<int32_t>& anOfNode, std::string& why) const;
    /**
     * Follow the LFT routes from every leaf switch to a candidate root's LID: the in-tree
     * they form.
     * @param root the candidate root
     * @param anOfNode node id -> aggregation node index, -1 if none
     * @param isLeaf per node: the leaf switch of a rank
     * @param [in,out] parent per node: its parent, -1 off the tree (reset first)
     * @param [in,out] parentPort per node: its port towards the parent (only written)
     * @param [in,out] depth per node: hops to the root, -1 off the tree (reset first)
     * @param [out] maxDepth the depth of the deepest leaf switch
     * @param [in,out] why empty on entry; the route that misses the root or an aggregation
     *        node, on failure
     * @return true if every leaf switch reaches the root through aggregation nodes
     */
    bool TraceRoutesToRoot(uint32_t root,
                           const std::vector<int32_t>& anOfNode,
                           const std::vector<bool>& isLeaf,
                           std::vector<int32_t>& parent,
                           std::vector<uint8_t>& parentPort,
                           std::vector<int32_t>& depth,
                           int32_t& maxDepth,
                           std::string& why) const;
    /**
     * Count the switches of a candidate tree and check each has a free tree entry.
     * @param depth per node: hops to the root, -1 off the tree
     * @param [out] nSwitches the switches on the tree
     * @param [in,out] why empty on entry; the node out of tree entries, on failure
     * @return true if every node on the tree can take one more
     */
    bool CountTreeSwitches(const std::vector<int32_t>& depth,
                           uint32_t& nSwitches,
                           std::string& why) const;
    /**
     * Try every aggregation node as the root and keep the best tree (see the class
     * description for the order).
     * @param [in,out] shape from anOfNode and leaf, fills root, depth, parent and parentPort
     * @param [out] why the first root's reason, when none can root the tree
     * @return true if a root was found
     */
    bool ChooseRoot(TreeShape& shape, std::string& why) const;
    /**
     * Check that the tree's switch-to-switch cables take whole fragments.
     * @param shape the tree chosen
     * @param lltFragmentBytes largest low-latency fragment
     * @param satFragmentBytes largest streaming fragment
     * @param [out] why the port whose MTU is too small, on failure
     * @return true if every port the tree crosses has an MTU of a fragment or more
     */
    bool CheckFragmentMtus(const TreeShape& shape,
                           uint32_t lltFragmentBytes,
                           uint32_t satFragmentBytes,
                           std::string& why) const;
    /**
     * Give a new tree the lowest free id and its QPN.
     * @param [in,out] tree receives id and qpn
     * @param [out] why out of ids, on failure
     * @return true if an id was free
     */
    bool AllocateTreeId(SharpTree& tree, std::string& why);
    /**
     * Put the tree's aggregation nodes in it and size its windows.
     * @param [in,out] shape the tree chosen; fills inTree
     * @param satFragmentBytes largest streaming fragment
     * @param [in,out] tree receives ans, rootIndex, window, depth, desc and leafLid
     * @param [out] why the streaming buffer share is below a fragment, on failure
     * @return true if the windows hold at least one fragment
     */
    bool SizeTree(TreeShape& shape,
                  uint32_t satFragmentBytes,
                  SharpTree& tree,
                  std::string& why) const;
    /**
     * Give every node on the tree its children (aggregation nodes in index order, then
     * hosts in rank order) and its parent.
     * @param [in,out] shape the tree; fills childIndexAtParent and hostChildIndex
     * @param hcas the hosts, rank order
     * @param qpns each host's SHARP UD queue pair number
     * @param treeQpn the tree's QPN
     * @param [in,out] roles per node: the roles filled
     */
    void AssignChildren(TreeShape& shape,
                        const std::vector<Ptr<IbHca>>& hcas,
                        const std::vector<uint32_t>& qpns,
                        uint32_t treeQpn,
                        std::vector<SharpAggregationNode::Role>& roles) const;
    /**
     * Check the routes and VLs the roles send on and index the children by LID.
     * @param shape the tree
     * @param sl service level of SHARP packets
     * @param [in,out] roles per node: fills parentVl, the children's outVl, childOfLid,
     *        and sizes childTowardRank
     * @param [out] why the missing route or the VL15 mapping, on failure
     * @return true if every node can reach its parent and children on a data VL
     */
    bool ResolveRolePorts(const TreeShape& shape,
                          uint8_t sl,
                          std::vector<SharpAggregationNode::Role>& roles,
                          std::string& why) const;
    /**
     * Fill every node's child towards each rank.
     * @param shape the tree, with its child indices
     * @param [in,out] roles per node: fills childTowardRank
     */
    static void MapRanksToChildren(const TreeShape& shape,
                                   std::vector<SharpAggregationNode::Role>& roles);
    /**
     * Hand the roles to the tree's aggregation nodes and count the tree as alive.
     * @param shape the tree
     * @param tree the tree made
     * @param [in,out] roles per node: moved to the aggregation nodes
     * @param sl service level of SHARP packets
     */
    void InstallTree(const TreeShape& shape,
                     Ptr<SharpTree> tree,
                     std::vector<SharpAggregationNode::Role>& roles,
                     uint8_t sl);

    std::vector<Ptr<SharpAggregationNode>> m_ans; //!< known nodes
    std::vector<uint32_t> m_rootedTrees;          //!< per node: trees rooted there
    std::vector<uint32_t> m_liveQpn;              //!< per id: the live tree's QPN, or 0
    std::vector<uint8_t> m_idGeneration;          //!< per id: the next tree's QPN generation
    uint32_t m_nTrees;                            //!< trees alive

    /// Tree ids are 0 .. kMaxTrees - 1 (SharpTree::qpn).
    static constexpr uint32_t kMaxTrees = 0xFFFF;
    uint32_t m_brokenTrees{0}; //!< trees marked broken by link changes
};

} // namespace ns3

#endif /* SHARP_AGGREGATION_MANAGER_H */

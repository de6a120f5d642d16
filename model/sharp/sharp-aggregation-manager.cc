/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sharp-aggregation-manager.h"

#include "ns3/abort.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/node.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <tuple>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SharpAggregationManager");

NS_OBJECT_ENSURE_REGISTERED(SharpAggregationManager);

namespace
{
/**
 * @param node a node
 * @return "name (node id)" for messages
 */
std::string
NodeLabel(Ptr<Node> node)
{
    std::ostringstream os;
    const std::string name = Names::FindName(node);
    if (!name.empty())
    {
        os << "'" << name << "' ";
    }
    os << "(node " << node->GetId() << ")";
    return os.str();
}

/**
 * @param port a port
 * @return the port at the other end of its cable, or null
 */
Ptr<IbNetDevice>
PeerOf(Ptr<IbNetDevice> port)
{
    Ptr<IbChannel> ch = DynamicCast<IbChannel>(port->GetChannel());
    return ch ? ch->GetPeer(port) : nullptr;
}
} // namespace

TypeId
SharpAggregationManager::GetTypeId()
{
    static TypeId tid = TypeId("ns3::SharpAggregationManager")
                            .SetParent<Object>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<SharpAggregationManager>();
    return tid;
}

SharpAggregationManager::SharpAggregationManager()
    : m_nTrees(0)
{
}

SharpAggregationManager::~SharpAggregationManager() = default;

void
SharpAggregationManager::DoDispose()
{
    m_ans.clear();
    Object::DoDispose();
}

void
SharpAggregationManager::AddAggregationNode(Ptr<SharpAggregationNode> an)
{
    NS_ABORT_MSG_UNLESS(an && an->GetSwitch(),
                        "SharpAggregationManager: the aggregation node is not attached to a "
                        "switch (SharpAggregationNode::Attach)");
    m_ans.push_back(an);
    m_rootedTrees.push_back(0);
}

uint32_t
SharpAggregationManager::GetNAggregationNodes() const
{
    return m_ans.size();
}

void
SharpAggregationManager::WatchSubnetManager(Ptr<IbSubnetManager> sm)
{
    NS_ABORT_MSG_UNLESS(sm, "SharpAggregationManager::WatchSubnetManager: no subnet manager");
    sm->TraceConnectWithoutContext("Rerouted", Callback<void, uint32_t>([this](uint32_t) {
                                       for (const auto& an : m_ans)
                                       {
                                           m_brokenTrees += an->RefreshRoutes();
                                       }
                                   }));
}

uint32_t
SharpAggregationManager::GetBrokenTrees() const
{
    return m_brokenTrees;
}

uint32_t
SharpAggregationManager::GetNTrees() const
{
    return m_nTrees;
}

namespace
{
/**
 * @param anOfNode node id -> aggregation node index, -1 if none
 * @param node a node
 * @return the index of the node's aggregation node, or -1 if it has none
 */
int32_t
AnOf(const std::vector<int32_t>& anOfNode, Ptr<Node> node)
{
    return node->GetId() < anOfNode.size() ? anOfNode[node->GetId()] : -1;
}

/**
 * Find the leaf switch of every rank: the switch its port 1 is cabled to.
 * @param hcas the hosts, rank order
 * @param sl service level of SHARP packets
 * @param anOfNode node id -> aggregation node index, -1 if none
 * @param [out] leaf per rank: the aggregation node of its leaf switch
 * @param [out] why why a rank cannot take part, on failure
 * @return true if every rank hangs off a switch with an aggregation node
 */
bool
FindLeafSwitches(const std::vector<Ptr<IbHca>>& hcas,
                 uint8_t sl,
                 const std::vector<int32_t>& anOfNode,
                 std::vector<int32_t>& leaf,
                 std::string& why)
{
    const uint32_t n = hcas.size();
    leaf.assign(n, 0);
    for (uint32_t r = 0; r < n; ++r)
    {
        Ptr<IbNetDevice> port = hcas[r]->GetPort(1);
        Ptr<IbNetDevice> peer = PeerOf(port);
        if (!peer || !peer->GetNode()->GetObject<IbSwitch>())
        {
            why = "rank " + std::to_string(r) + " (host " + NodeLabel(port->GetNode()) +
                  ") is not cabled to a switch; SHARP aggregates in switches";
            return false;
        }
        leaf[r] = AnOf(anOfNode, peer->GetNode());
        if (leaf[r] < 0)
        {
            why = "the leaf switch " + NodeLabel(peer->GetNode()) + " of rank " +
                  std::to_string(r) + " has no SHARP aggregation node";
            return false;
        }
        if (port->GetVlForSl(sl) == IbNetDevice::VL15)
        {
            why = "rank " + std::to_string(r) + " (host " + NodeLabel(port->GetNode()) +
                  ") maps SHARP's SL " + std::to_string(sl) +
                  " to VL15 (its port's SlToVlTable); map it to a data VL or give "
                  "SharpCollectiveAlgorithm::ServiceLevel another SL";
            return false;
        }
    }
    return true;
}

/**
 * Why a switch cannot send SHARP packets to a port: it maps SHARP's SL to VL15.
 * @param lid the switch's LID
 * @param sl service level of SHARP packets
 * @param port the output port
 * @return the reason
 */
std::string
Vl15Why(uint16_t lid, uint8_t sl, uint8_t port)
{
    return "switch LID " + std::to_string(lid) + " maps SHARP's SL " + std::to_string(sl) +
           " to VL15 from port 0 to port " + std::to_string(port) +
           " (IbSwitch::SetSl2Vl or the port's SlToVlTable); map it to a data "
           "VL or give SharpCollectiveAlgorithm::ServiceLevel another SL";
}
} // namespace

bool
SharpAggregationManager::IndexAggregationNodes(std::vector<int32_t>& anOfNode,
                                               std::string& why) const
{
    for (uint32_t i = 0; i < m_ans.size(); ++i)
    {
        Ptr<IbSwitch> sw = m_ans[i]->GetSwitch();
        if (sw->GetNPorts() == 0)
        {
            continue;
        }
        const uint32_t id = sw->GetPort(1)->GetNode()->GetId();
        if (id >= anOfNode.size())
        {
            anOfNode.resize(id + 1, -1);
        }
        anOfNode[id] = i;
        if (m_ans[i]->GetSwitch()->GetLid() == 0)
        {
            why = "switch " + NodeLabel(m_ans[i]->GetSwitch()->GetPort(1)->GetNode()) +
                  " has no LID: bring the subnet up before creating SHARP trees";
            return false;
        }
    }
    return true;
}

bool
SharpAggregationManager::TraceRoutesToRoot(uint32_t root,
                                           const std::vector<int32_t>& anOfNode,
                                           const std::vector<bool>& isLeaf,
                                           std::vector<int32_t>& parent,
                                           std::vector<uint8_t>& parentPort,
                                           std::vector<int32_t>& depth,
                                           int32_t& maxDepth,
                                           std::string& why) const
{
    const uint32_t nAn = m_ans.size();
    const uint16_t rootLid = m_ans[root]->GetSwitch()->GetLid();
    std::fill(parent.begin(), parent.end(), -1);
    std::fill(depth.begin(), depth.end(), -1);
    depth[root] = 0;
    maxDepth = 0;
    std::vector<uint32_t> path;
    for (uint32_t l = 0; l < nAn && why.empty(); ++l)
    {
        if (!isLeaf[l])
        {
            continue;
        }
        path.clear();
        uint32_t cur = l;
        while (depth[cur] < 0 && why.empty())
        {
            Ptr<IbSwitch> sw = m_ans[cur]->GetSwitch();
            const uint8_t p = sw->GetLftEntry(rootLid);
            if (p == 0 || p == IbSwitch::NO_ROUTE || p > sw->GetNPorts())
            {
                why = "switch LID " + std::to_string(sw->GetLid()) + " has no route to LID " +
                      std::to_string(rootLid);
                break;
            }
            Ptr<IbNetDevice> peer = PeerOf(sw->GetPort(p));
            const int32_t next = peer ? AnOf(anOfNode, peer->GetNode()) : -1;
            if (next < 0)
            {
                why = "the route from switch LID " + std::to_string(sw->GetLid()) + " to LID " +
                      std::to_string(rootLid) + " leaves port " + std::to_string(p) + " towards " +
                      (peer ? NodeLabel(peer->GetNode()) : "no cable") +
                      ", which has no SHARP aggregation node (install one there, "
                      "SharpHelper::Install, or leave the hosts below it out)";
                break;
            }
            parent[cur] = next;
            parentPort[cur] = p;
            path.push_back(cur);
            cur = next;
        }
        if (!why.empty())
        {
            break;
        }
        for (auto it = path.rbegin(); it != path.rend(); ++it)
        {
            depth[*it] = depth[parent[*it]] + 1;
            maxDepth = std::max(maxDepth, depth[*it]);
        }
    }
    return why.empty();
}

bool
SharpAggregationManager::CountTreeSwitches(const std::vector<int32_t>& depth,
                                           uint32_t& nSwitches,
                                           std::string& why) const
{
    nSwitches = 0;
    for (uint32_t i = 0; i < m_ans.size() && why.empty(); ++i)
    {
        if (depth[i] >= 0)
        {
            ++nSwitches;
            if (m_ans[i]->GetNTrees() >= m_ans[i]->GetMaxTrees())
            {
                why = "switch LID " + std::to_string(m_ans[i]->GetSwitch()->GetLid()) +
                      " already has " + std::to_string(m_ans[i]->GetMaxTrees()) +
                      " trees (SharpAggregationNode::MaxTrees)";
            }
        }
    }
    return why.empty();
}

bool
SharpAggregationManager::ChooseRoot(TreeShape& shape, std::string& why) const
{
    std::vector<bool> isLeaf(m_ans.size(), false);
    for (int32_t l : shape.leaf)
    {
        isLeaf[l] = true;
    }

    // Try every root; keep the best.
    const uint32_t nAn = m_ans.size();
    std::vector<int32_t> parent(nAn);
    std::vector<uint8_t> parentPort(nAn);
    std::vector<int32_t> depth(nAn);
    std::tuple<int32_t, uint32_t, uint32_t> bestScore{INT32_MAX, 0, 0};
    std::string firstWhy;
    for (uint32_t root = 0; root < nAn; ++root)
    {
        std::string rootWhy;
        int32_t maxDepth = 0;
        uint32_t nSwitches = 0;
        if (!TraceRoutesToRoot(root,
                               shape.anOfNode,
                               isLeaf,
                               parent,
                               parentPort,
                               depth,
                               maxDepth,
                               rootWhy) ||
            !CountTreeSwitches(depth, nSwitches, rootWhy))
        {
            if (firstWhy.empty())
            {
                firstWhy = rootWhy;
            }
            continue;
        }
        const std::tuple<int32_t, uint32_t, uint32_t> score{maxDepth,
                                                            m_rootedTrees[root],
                                                            nSwitches};
        if (shape.root < 0 || score < bestScore)
        {
            bestScore = score;
            shape.root = root;
            shape.parent = parent;
            shape.parentPort = parentPort;
        }
    }
    if (shape.root < 0)
    {
        why = "no switch can root a SHARP tree for these " + std::to_string(shape.leaf.size()) +
              " hosts; for example: " + firstWhy;
        return false;
    }
    shape.depth = std::get<0>(bestScore);
    return true;
}

bool
SharpAggregationManager::CheckFragmentMtus(const TreeShape& shape,
                                           uint32_t lltFragmentBytes,
                                           uint32_t satFragmentBytes,
                                           std::string& why) const
{
    // Fragments cross the tree's switch-to-switch cables whole: an MTU there smaller than
    // a fragment would hold it at that port for ever (a port sends no packet above its MTU).
    std::vector<bool> used(m_ans.size(), false);
    for (int32_t l : shape.leaf)
    {
        for (int32_t cur = l; cur >= 0 && !used[cur];
             cur = cur == shape.root ? -1 : shape.parent[cur])
        {
            used[cur] = true;
            if (cur == shape.root)
            {
                break;
            }
            // Up from the child, and down from the parent (the parent's route to the
            // child's LID, which may take another of several parallel cables).
            Ptr<IbSwitch> sw = m_ans[cur]->GetSwitch();
            Ptr<IbSwitch> psw = m_ans[shape.parent[cur]]->GetSwitch();
            const std::pair<Ptr<IbSwitch>, uint8_t> hops[2] = {
                {sw, shape.parentPort[cur]},
                {psw, psw->GetLftEntry(sw->GetLid())}};
            for (const auto& [hsw, hp] : hops)
            {
                if (hp == 0 || hp > hsw->GetNPorts())
                {
                    continue; // no cable to check
                }
                const uint32_t mtu = hsw->GetPort(hp)->GetIbMtu();
                if (mtu < std::max(lltFragmentBytes, satFragmentBytes))
                {
                    why = "the tree crosses switch LID " + std::to_string(hsw->GetLid()) +
                          " port " + std::to_string(hp) + ", whose MTU " + std::to_string(mtu) +
                          " is smaller than the " +
                          std::to_string(std::max(lltFragmentBytes, satFragmentBytes)) +
                          "-byte fragments; set SharpCollectiveAlgorithm's " +
                          std::string(satFragmentBytes > mtu && lltFragmentBytes > mtu
                                          ? "SatFragmentSize and LltFragmentSize"
                                          : (satFragmentBytes > mtu ? "SatFragmentSize"
                                                                    : "LltFragmentSize")) +
                          " to " + std::to_string(mtu) + " or less";
                    return false;
                }
            }
        }
    }
    return true;
}

bool
SharpAggregationManager::AllocateTreeId(SharpTree& tree, std::string& why)
{
    uint32_t id = 0;
    while (id < m_liveQpn.size() && m_liveQpn[id] != 0)
    {
        ++id;
    }
    if (id >= kMaxTrees)
    {
        why = "out of SHARP tree ids (" + std::to_string(kMaxTrees) +
              " trees alive); destroy trees that are no longer used";
        return false;
    }
    if (id >= m_liveQpn.size())
    {
        m_liveQpn.resize(id + 1, 0);
        m_idGeneration.resize(id + 1, 0);
    }
    tree.id = static_cast<uint16_t>(id);
    // The lowest free id, with the next of 16 generations in the QPN: packets still on their
    // way to a destroyed tree with this id (a communicator dropped in the middle of an
    // operation) carry the old QPN, which names no tree, rather than reaching the new one.
    // (The generation moves on once the tree is made, in InstallTree.)
    tree.qpn = SharpTree::QPN_BASE + (uint32_t{m_idGeneration[id]} << 16) + id;
    return true;
}

bool
SharpAggregationManager::SizeTree(TreeShape& shape,
                                  uint32_t satFragmentBytes,
                                  SharpTree& tree,
                                  std::string& why) const
{
    const uint32_t nAn = m_ans.size();
    const uint32_t n = shape.leaf.size();
    std::vector<int32_t> pos(nAn, -1); // AN index -> position in tree.ans
    shape.inTree.assign(nAn, false);
    for (uint32_t r = 0; r < n; ++r)
    {
        for (int32_t cur = shape.leaf[r]; cur >= 0 && !shape.inTree[cur];
             cur = cur == shape.root ? -1 : shape.parent[cur])
        {
            shape.inTree[cur] = true;
        }
    }
    uint32_t llt = UINT32_MAX;
    uint32_t satBytes = UINT32_MAX;
    for (uint32_t i = 0; i < nAn; ++i)
    {
        if (shape.inTree[i])
        {
            pos[i] = tree.ans.size();
            if (static_cast<int32_t>(i) == shape.root)
            {
                tree.rootIndex = pos[i];
            }
            tree.ans.push_back(m_ans[i]);
            llt = std::min(llt, m_ans[i]->GetMaxOutstandingOps());
            satBytes =
                std::min(satBytes, m_ans[i]->GetBufferSize() / m_ans[i]->GetMaxStreamingFlows());
        }
    }
    if (satFragmentBytes > 0 && satBytes < satFragmentBytes)
    {
        why = "the aggregation buffer share of a streaming flow (" + std::to_string(satBytes) +
              " bytes) is smaller than one fragment (" + std::to_string(satFragmentBytes) +
              " bytes): raise SharpAggregationNode::BufferSize";
        return false;
    }
    tree.window = {llt, satFragmentBytes > 0 ? satBytes / satFragmentBytes : 1};
    tree.depth = shape.depth;
    for (uint8_t ch = 0; ch < 2; ++ch)
    {
        tree.desc[ch].assign(tree.window[ch], SharpFragment());
    }
    tree.leafLid.resize(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        tree.leafLid[r] = m_ans[shape.leaf[r]]->GetSwitch()->GetLid();
    }
    return true;
}

void
SharpAggregationManager::AssignChildren(TreeShape& shape,
                                        const std::vector<Ptr<IbHca>>& hcas,
                                        const std::vector<uint32_t>& qpns,
                                        uint32_t treeQpn,
                                        std::vector<SharpAggregationNode::Role>& roles) const
{
    const uint32_t nAn = m_ans.size();
    const uint32_t n = hcas.size();
    shape.childIndexAtParent.assign(nAn, 0);
    for (uint32_t i = 0; i < nAn; ++i)
    {
        if (!shape.inTree[i] || static_cast<int32_t>(i) == shape.root)
        {
            continue;
        }
        const int32_t p = shape.parent[i];
        Ptr<IbSwitch> psw = m_ans[p]->GetSwitch();
        SharpAggregationNode::Child c;
        c.lid = m_ans[i]->GetSwitch()->GetLid();
        c.qpn = treeQpn;
        c.outPort = psw->GetLftEntry(c.lid);
        c.host = false;
        shape.childIndexAtParent[i] = roles[p].children.size();
        roles[p].children.push_back(c);
        roles[i].parentLid = psw->GetLid();
        roles[i].parentPort = shape.parentPort[i];
    }
    shape.hostChildIndex.assign(n, 0);
    for (uint32_t r = 0; r < n; ++r)
    {
        Ptr<IbSwitch> sw = m_ans[shape.leaf[r]]->GetSwitch();
        SharpAggregationNode::Child c;
        c.lid = hcas[r]->GetLid(1);
        c.qpn = qpns[r];
        c.outPort = sw->GetLftEntry(c.lid);
        c.host = true;
        shape.hostChildIndex[r] = roles[shape.leaf[r]].children.size();
        roles[shape.leaf[r]].children.push_back(c);
    }
}

bool
SharpAggregationManager::ResolveRolePorts(const TreeShape& shape,
                                          uint8_t sl,
                                          std::vector<SharpAggregationNode::Role>& roles,
                                          std::string& why) const
{
    for (uint32_t i = 0; i < m_ans.size(); ++i)
    {
        if (!shape.inTree[i])
        {
            continue;
        }
        Ptr<IbSwitch> sw = m_ans[i]->GetSwitch();
        SharpAggregationNode::Role& role = roles[i];
        // The node injects its packets as from port 0; VL15 is the management lane, which
        // carries no SHARP traffic (hosts refuse such an SL for their own packets).
        if (role.parentLid != 0)
        {
            role.parentVl = sw->GetSl2Vl(0, role.parentPort, sl);
            if (role.parentVl == IbNetDevice::VL15)
            {
                why = Vl15Why(sw->GetLid(), sl, role.parentPort);
                return false;
            }
        }
        uint16_t maxLid = 0;
        for (auto& c : role.children)
        {
            if (c.outPort == 0 || c.outPort == IbSwitch::NO_ROUTE || c.outPort > sw->GetNPorts())
            {
                why = "switch LID " + std::to_string(sw->GetLid()) +
                      " has no route to its SHARP child LID " + std::to_string(c.lid);
                return false;
            }
            c.outVl = sw->GetSl2Vl(0, c.outPort, sl);
            if (c.outVl == IbNetDevice::VL15)
            {
                why = Vl15Why(sw->GetLid(), sl, c.outPort);
                return false;
            }
            maxLid = std::max(maxLid, c.lid);
        }
        role.childOfLid.assign(maxLid + 1, -1);
        for (uint32_t k = 0; k < role.children.size(); ++k)
        {
            role.childOfLid[role.children[k].lid] = k;
        }
        role.childTowardRank.assign(shape.leaf.size(), 0);
    }
    return true;
}

void
SharpAggregationManager::MapRanksToChildren(const TreeShape& shape,
                                            std::vector<SharpAggregationNode::Role>& roles)
{
    for (uint32_t r = 0; r < shape.leaf.size(); ++r)
    {
        roles[shape.leaf[r]].childTowardRank[r] = shape.hostChildIndex[r];
        for (int32_t cur = shape.leaf[r]; cur != shape.root; cur = shape.parent[cur])
        {
            roles[shape.parent[cur]].childTowardRank[r] = shape.childIndexAtParent[cur];
        }
    }
}

void
SharpAggregationManager::InstallTree(const TreeShape& shape,
                                     Ptr<SharpTree> tree,
                                     std::vector<SharpAggregationNode::Role>& roles,
                                     uint8_t sl)
{
    for (uint32_t i = 0; i < m_ans.size(); ++i)
    {
        if (shape.inTree[i])
        {
            m_ans[i]->AddTree(tree, std::move(roles[i]), sl);
        }
    }
    m_liveQpn[tree->id] = tree->qpn;
    m_idGeneration[tree->id] = (m_idGeneration[tree->id] + 1) & 0xF;
    ++m_rootedTrees[shape.root];
    ++m_nTrees;
}

Ptr<SharpTree>
SharpAggregationManager::CreateTree(const std::vector<Ptr<IbHca>>& hcas,
                                    const std::vector<uint32_t>& qpns,
                                    uint32_t lltFragmentBytes,
                                    uint32_t satFragmentBytes,
                                    uint8_t sl,
                                    std::string* error)
{
    NS_LOG_FUNCTION(this << hcas.size());
    auto refuse = [error](const std::string& why) -> Ptr<SharpTree> {
        NS_LOG_INFO("SHARP tree refused: " << why);
        if (error != nullptr)
        {
            *error = why;
        }
        return nullptr;
    };
    NS_ABORT_MSG_UNLESS(hcas.size() == qpns.size(), "SharpAggregationManager: one QPN per host");
    if (hcas.size() < 2)
    {
        return refuse("a SHARP group needs at least two hosts");
    }
    if (m_ans.empty())
    {
        return refuse("the fabric has no SHARP aggregation nodes (SharpHelper::Install)");
    }
    // Where the hosts hang, and the tree on the routes to the best root.
    TreeShape shape;
    std::string why;
    if (!IndexAggregationNodes(shape.anOfNode, why) ||
        !FindLeafSwitches(hcas, sl, shape.anOfNode, shape.leaf, why) || !ChooseRoot(shape, why) ||
        !CheckFragmentMtus(shape, lltFragmentBytes, satFragmentBytes, why))
    {
        return refuse(why);
    }

    // The tree.
    Ptr<SharpTree> tree = Create<SharpTree>();
    if (!AllocateTreeId(*tree, why))
    {
        return refuse(why);
    }
    tree->dataMode = hcas[0]->IsDataMode();
    tree->fragmentBytes = {lltFragmentBytes, satFragmentBytes};
    if (!SizeTree(shape, satFragmentBytes, *tree, why))
    {
        return refuse(why);
    }

    // Roles: children (aggregation nodes in index order, then hosts in rank order).
    std::vector<SharpAggregationNode::Role> roles(m_ans.size());
    AssignChildren(shape, hcas, qpns, tree->qpn, roles);
    if (!ResolveRolePorts(shape, sl, roles, why))
    {
        return refuse(why);
    }
    MapRanksToChildren(shape, roles);
    InstallTree(shape, tree, roles, sl);
    NS_LOG_INFO("SHARP tree " << tree->id << ": " << hcas.size() << " hosts, " << tree->ans.size()
                              << " switches, depth " << tree->depth << ", root LID "
                              << m_ans[shape.root]->GetSwitch()->GetLid() << ", windows LLT "
                              << tree->window[0] << " SAT " << tree->window[1]);
    return tree;
}

void
SharpAggregationManager::DestroyTree(Ptr<SharpTree> tree)
{
    // (Not the tree now holding its id: this one was destroyed before.)
    if (!tree || tree->id >= m_liveQpn.size() || m_liveQpn[tree->id] != tree->qpn)
    {
        return;
    }
    for (uint32_t k = 0; k < tree->ans.size(); ++k)
    {
        tree->ans[k]->RemoveTree(tree->id);
        if (k == tree->rootIndex)
        {
            for (uint32_t i = 0; i < m_ans.size(); ++i)
            {
                if (m_ans[i] == tree->ans[k] && m_rootedTrees[i] > 0)
                {
                    --m_rootedTrees[i];
                }
            }
        }
    }
    m_liveQpn[tree->id] = 0;
    --m_nTrees;
    tree->ans.clear();
}

bool
SharpAggregationManager::AcquireStreaming(Ptr<SharpTree> tree)
{
    for (uint32_t k = 0; k < tree->ans.size(); ++k)
    {
        if (!tree->ans[k]->AcquireStreamingFlow())
        {
            for (uint32_t j = 0; j < k; ++j)
            {
                tree->ans[j]->ReleaseStreamingFlow();
            }
            return false;
        }
    }
    return true;
}

void
SharpAggregationManager::ReleaseStreaming(Ptr<SharpTree> tree)
{
    for (auto& an : tree->ans)
    {
        an->ReleaseStreamingFlow();
    }
}

} // namespace ns3

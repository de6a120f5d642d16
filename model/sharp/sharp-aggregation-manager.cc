/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sharp-aggregation-manager.h"

#include "ns3/abort.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-net-device.h"
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

uint32_t
SharpAggregationManager::GetNTrees() const
{
    return m_nTrees;
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
    // Aggregation node index of each switch node.
    std::vector<int32_t> anOfNode;
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
            return refuse("switch " + NodeLabel(m_ans[i]->GetSwitch()->GetPort(1)->GetNode()) +
                          " has no LID: bring the subnet up before creating SHARP trees");
        }
    }
    auto anOf = [&anOfNode](Ptr<Node> node) -> int32_t {
        return node->GetId() < anOfNode.size() ? anOfNode[node->GetId()] : -1;
    };
    // Leaf switch of every rank.
    const uint32_t n = hcas.size();
    std::vector<int32_t> leaf(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        Ptr<IbNetDevice> port = hcas[r]->GetPort(1);
        Ptr<IbNetDevice> peer = PeerOf(port);
        if (!peer || !peer->GetNode()->GetObject<IbSwitch>())
        {
            return refuse("rank " + std::to_string(r) + " (host " + NodeLabel(port->GetNode()) +
                          ") is not cabled to a switch; SHARP aggregates in switches");
        }
        leaf[r] = anOf(peer->GetNode());
        if (leaf[r] < 0)
        {
            return refuse("the leaf switch " + NodeLabel(peer->GetNode()) + " of rank " +
                          std::to_string(r) + " has no SHARP aggregation node");
        }
        if (port->GetVlForSl(sl) == IbNetDevice::VL15)
        {
            return refuse("rank " + std::to_string(r) + " (host " + NodeLabel(port->GetNode()) +
                          ") maps SHARP's SL " + std::to_string(sl) +
                          " to VL15 (its port's SlToVlTable); map it to a data VL or give "
                          "SharpCollectiveAlgorithm::ServiceLevel another SL");
        }
    }
    std::vector<bool> isLeaf(m_ans.size(), false);
    for (int32_t l : leaf)
    {
        isLeaf[l] = true;
    }

    // Try every root; keep the best.
    const uint32_t nAn = m_ans.size();
    std::vector<int32_t> parent(nAn);
    std::vector<uint8_t> parentPort(nAn);
    std::vector<int32_t> depth(nAn);
    std::vector<int32_t> bestParent;
    std::vector<uint8_t> bestParentPort;
    std::tuple<int32_t, uint32_t, uint32_t> bestScore{INT32_MAX, 0, 0};
    int32_t bestRoot = -1;
    std::string firstWhy;
    for (uint32_t root = 0; root < nAn; ++root)
    {
        const uint16_t rootLid = m_ans[root]->GetSwitch()->GetLid();
        std::fill(parent.begin(), parent.end(), -1);
        std::fill(depth.begin(), depth.end(), -1);
        depth[root] = 0;
        std::string why;
        int32_t maxDepth = 0;
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
                const int32_t next = peer ? anOf(peer->GetNode()) : -1;
                if (next < 0)
                {
                    why = "the route from switch LID " + std::to_string(sw->GetLid()) + " to LID " +
                          std::to_string(rootLid) + " leaves port " + std::to_string(p) +
                          " towards " + (peer ? NodeLabel(peer->GetNode()) : "no cable") +
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
        uint32_t nSwitches = 0;
        for (uint32_t i = 0; i < nAn && why.empty(); ++i)
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
        if (!why.empty())
        {
            if (firstWhy.empty())
            {
                firstWhy = why;
            }
            continue;
        }
        const std::tuple<int32_t, uint32_t, uint32_t> score{maxDepth,
                                                            m_rootedTrees[root],
                                                            nSwitches};
        if (bestRoot < 0 || score < bestScore)
        {
            bestScore = score;
            bestRoot = root;
            bestParent = parent;
            bestParentPort = parentPort;
        }
    }
    if (bestRoot < 0)
    {
        return refuse("no switch can root a SHARP tree for these " + std::to_string(n) +
                      " hosts; for example: " + firstWhy);
    }
    // Fragments cross the tree's switch-to-switch cables whole: an MTU there smaller than
    // a fragment would hold it at that port for ever (a port sends no packet above its MTU).
    {
        std::vector<bool> used(nAn, false);
        for (uint32_t r = 0; r < n; ++r)
        {
            for (int32_t cur = leaf[r]; cur >= 0 && !used[cur];
                 cur = cur == bestRoot ? -1 : bestParent[cur])
            {
                used[cur] = true;
                if (cur == bestRoot)
                {
                    break;
                }
                // Up from the child, and down from the parent (the parent's route to the
                // child's LID, which may take another of several parallel cables).
                Ptr<IbSwitch> sw = m_ans[cur]->GetSwitch();
                Ptr<IbSwitch> psw = m_ans[bestParent[cur]]->GetSwitch();
                const std::pair<Ptr<IbSwitch>, uint8_t> hops[2] = {
                    {sw, bestParentPort[cur]},
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
                        return refuse(
                            "the tree crosses switch LID " + std::to_string(hsw->GetLid()) +
                            " port " + std::to_string(hp) + ", whose MTU " + std::to_string(mtu) +
                            " is smaller than the " +
                            std::to_string(std::max(lltFragmentBytes, satFragmentBytes)) +
                            "-byte fragments; set SharpCollectiveAlgorithm's " +
                            std::string(satFragmentBytes > mtu && lltFragmentBytes > mtu
                                            ? "SatFragmentSize and LltFragmentSize"
                                            : (satFragmentBytes > mtu ? "SatFragmentSize"
                                                                      : "LltFragmentSize")) +
                            " to " + std::to_string(mtu) + " or less");
                    }
                }
            }
        }
    }

    // The tree.
    Ptr<SharpTree> tree = Create<SharpTree>();
    uint32_t id = 0;
    while (id < m_liveQpn.size() && m_liveQpn[id] != 0)
    {
        ++id;
    }
    if (id >= kMaxTrees)
    {
        return refuse("out of SHARP tree ids (" + std::to_string(kMaxTrees) +
                      " trees alive); destroy trees that are no longer used");
    }
    if (id >= m_liveQpn.size())
    {
        m_liveQpn.resize(id + 1, 0);
        m_idGeneration.resize(id + 1, 0);
    }
    tree->id = static_cast<uint16_t>(id);
    // The lowest free id, with the next of 16 generations in the QPN: packets still on their
    // way to a destroyed tree with this id (a communicator dropped in the middle of an
    // operation) carry the old QPN, which names no tree, rather than reaching the new one.
    // (The generation moves on once the tree is made, below.)
    tree->qpn = SharpTree::QPN_BASE + (uint32_t{m_idGeneration[id]} << 16) + id;
    tree->dataMode = hcas[0]->IsDataMode();
    tree->fragmentBytes = {lltFragmentBytes, satFragmentBytes};
    std::vector<int32_t> pos(nAn, -1); // AN index -> position in tree->ans
    std::vector<bool> inTree(nAn, false);
    for (uint32_t r = 0; r < n; ++r)
    {
        for (int32_t cur = leaf[r]; cur >= 0 && !inTree[cur];
             cur = cur == bestRoot ? -1 : bestParent[cur])
        {
            inTree[cur] = true;
        }
    }
    uint32_t llt = UINT32_MAX;
    uint32_t satBytes = UINT32_MAX;
    for (uint32_t i = 0; i < nAn; ++i)
    {
        if (inTree[i])
        {
            pos[i] = tree->ans.size();
            if (static_cast<int32_t>(i) == bestRoot)
            {
                tree->rootIndex = pos[i];
            }
            tree->ans.push_back(m_ans[i]);
            llt = std::min(llt, m_ans[i]->GetMaxOutstandingOps());
            satBytes =
                std::min(satBytes, m_ans[i]->GetBufferSize() / m_ans[i]->GetMaxStreamingFlows());
        }
    }
    if (satFragmentBytes > 0 && satBytes < satFragmentBytes)
    {
        return refuse("the aggregation buffer share of a streaming flow (" +
                      std::to_string(satBytes) + " bytes) is smaller than one fragment (" +
                      std::to_string(satFragmentBytes) +
                      " bytes): raise SharpAggregationNode::BufferSize");
    }
    tree->window = {llt, satFragmentBytes > 0 ? satBytes / satFragmentBytes : 1};
    tree->depth = std::get<0>(bestScore);
    for (uint8_t ch = 0; ch < 2; ++ch)
    {
        tree->desc[ch].assign(tree->window[ch], SharpFragment());
    }
    tree->leafLid.resize(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        tree->leafLid[r] = m_ans[leaf[r]]->GetSwitch()->GetLid();
    }

    // Roles: children (aggregation nodes in index order, then hosts in rank order).
    std::vector<SharpAggregationNode::Role> roles(nAn);
    std::vector<uint32_t> childIndexAtParent(nAn, 0);
    for (uint32_t i = 0; i < nAn; ++i)
    {
        if (!inTree[i] || static_cast<int32_t>(i) == bestRoot)
        {
            continue;
        }
        const int32_t p = bestParent[i];
        Ptr<IbSwitch> psw = m_ans[p]->GetSwitch();
        SharpAggregationNode::Child c;
        c.lid = m_ans[i]->GetSwitch()->GetLid();
        c.qpn = tree->qpn;
        c.outPort = psw->GetLftEntry(c.lid);
        c.host = false;
        childIndexAtParent[i] = roles[p].children.size();
        roles[p].children.push_back(c);
        roles[i].parentLid = psw->GetLid();
        roles[i].parentPort = bestParentPort[i];
    }
    std::vector<uint32_t> hostChildIndex(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        Ptr<IbSwitch> sw = m_ans[leaf[r]]->GetSwitch();
        SharpAggregationNode::Child c;
        c.lid = hcas[r]->GetLid(1);
        c.qpn = qpns[r];
        c.outPort = sw->GetLftEntry(c.lid);
        c.host = true;
        hostChildIndex[r] = roles[leaf[r]].children.size();
        roles[leaf[r]].children.push_back(c);
    }
    for (uint32_t i = 0; i < nAn; ++i)
    {
        if (!inTree[i])
        {
            continue;
        }
        Ptr<IbSwitch> sw = m_ans[i]->GetSwitch();
        SharpAggregationNode::Role& role = roles[i];
        // The node injects its packets as from port 0; VL15 is the management lane, which
        // carries no SHARP traffic (hosts refuse such an SL for their own packets).
        const auto vl15 = [&](uint8_t port) {
            return refuse("switch LID " + std::to_string(sw->GetLid()) + " maps SHARP's SL " +
                          std::to_string(sl) + " to VL15 from port 0 to port " +
                          std::to_string(port) +
                          " (IbSwitch::SetSl2Vl or the port's SlToVlTable); map it to a data "
                          "VL or give SharpCollectiveAlgorithm::ServiceLevel another SL");
        };
        if (role.parentLid != 0)
        {
            role.parentVl = sw->GetSl2Vl(0, role.parentPort, sl);
            if (role.parentVl == IbNetDevice::VL15)
            {
                return vl15(role.parentPort);
            }
        }
        uint16_t maxLid = 0;
        for (auto& c : role.children)
        {
            if (c.outPort == 0 || c.outPort == IbSwitch::NO_ROUTE || c.outPort > sw->GetNPorts())
            {
                return refuse("switch LID " + std::to_string(sw->GetLid()) +
                              " has no route to its SHARP child LID " + std::to_string(c.lid));
            }
            c.outVl = sw->GetSl2Vl(0, c.outPort, sl);
            if (c.outVl == IbNetDevice::VL15)
            {
                return vl15(c.outPort);
            }
            maxLid = std::max(maxLid, c.lid);
        }
        role.childOfLid.assign(maxLid + 1, -1);
        for (uint32_t k = 0; k < role.children.size(); ++k)
        {
            role.childOfLid[role.children[k].lid] = k;
        }
        role.childTowardRank.assign(n, 0);
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        roles[leaf[r]].childTowardRank[r] = hostChildIndex[r];
        for (int32_t cur = leaf[r]; cur != bestRoot; cur = bestParent[cur])
        {
            roles[bestParent[cur]].childTowardRank[r] = childIndexAtParent[cur];
        }
    }
    for (uint32_t i = 0; i < nAn; ++i)
    {
        if (inTree[i])
        {
            m_ans[i]->AddTree(tree, std::move(roles[i]), sl);
        }
    }
    m_liveQpn[id] = tree->qpn;
    m_idGeneration[id] = (m_idGeneration[id] + 1) & 0xF;
    ++m_rootedTrees[bestRoot];
    ++m_nTrees;
    NS_LOG_INFO("SHARP tree " << id << ": " << n << " hosts, " << tree->ans.size()
                              << " switches, depth " << tree->depth << ", root LID "
                              << m_ans[bestRoot]->GetSwitch()->GetLid() << ", windows LLT "
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

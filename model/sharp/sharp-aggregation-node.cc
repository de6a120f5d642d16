/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sharp-aggregation-node.h"

#include "ns3/abort.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-deth-header.h"
#include "ns3/ib-header-view.h"
#include "ns3/ib-immdt-header.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-range-checker.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SharpAggregationNode");

NS_OBJECT_ENSURE_REGISTERED(SharpAggregationNode);

namespace
{
/// LRH + BTH + DETH + ImmDt: the headers in front of a SHARP payload.
constexpr uint32_t kHeaders =
    IbLrhHeader::SIZE + IbBthHeader::SIZE +
    IbBthHeader::ExtensionHeaderSize(IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE);
static_assert(kHeaders == 32, "LRH 8 + BTH 12 + DETH 8 + ImmDt 4");
} // namespace

TypeId
SharpAggregationNode::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SharpAggregationNode")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<SharpAggregationNode>()
            .AddAttribute(
                "MaxTrees",
                "Aggregation trees this switch can be part of. Default 63: NVIDIA "
                "Quantum (HDR) supports up to 63 low-latency and 63 streaming "
                "trees; Quantum-2 511.",
                UintegerValue(63),
                MakeUintegerAccessor(&SharpAggregationNode::m_maxTrees),
                MakeIbUintegerChecker<uint32_t>("SharpAggregationNode", "MaxTrees", 1, 4096))
            .AddAttribute("MaxOutstandingOps",
                          "Low-latency (LLT) fragments a tree may have in flight at this "
                          "switch (its slots per tree); a host waits for a result before "
                          "reusing a slot. Model assumption (not published): 16.",
                          UintegerValue(16),
                          MakeUintegerAccessor(&SharpAggregationNode::m_maxOutstandingOps),
                          MakeIbUintegerChecker<uint32_t>("SharpAggregationNode",
                                                          "MaxOutstandingOps",
                                                          1,
                                                          65536))
            .AddAttribute("MaxStreamingFlows",
                          "Streaming-aggregation (SAT) flows active at once on this switch. "
                          "Default 2: NVIDIA HPC-X documentation and Quantum firmware "
                          "27.2000.2708 ('SHARP now supports running 2 flows in parallel').",
                          UintegerValue(2),
                          MakeUintegerAccessor(&SharpAggregationNode::m_maxStreamingFlows),
                          MakeIbUintegerChecker<uint32_t>("SharpAggregationNode",
                                                          "MaxStreamingFlows",
                                                          1,
                                                          1024))
            .AddAttribute(
                "BufferSize",
                "Aggregation buffer for streaming flows, bytes, split evenly "
                "between MaxStreamingFlows; a flow's window is its share divided "
                "by the fragment size. Model assumption (not published): 256 KiB, "
                "which covers the bandwidth-delay product of a 3-level NDR tree.",
                UintegerValue(256 * 1024),
                MakeUintegerAccessor(&SharpAggregationNode::m_bufferSize),
                MakeIbUintegerChecker<uint32_t>("SharpAggregationNode", "BufferSize", 256))
            .AddAttribute("AggregationLatency",
                          "From the last contribution of a fragment being taken by the ALU "
                          "to the partial result leaving towards the parent.",
                          TimeValue(NanoSeconds(200)),
                          MakeTimeAccessor(&SharpAggregationNode::m_latency),
                          MakeIbTimeChecker("SharpAggregationNode", "AggregationLatency", Time(0)))
            .AddAttribute("AluRate",
                          "Input bytes per second the reduction unit takes. Default 8 Tb/s: "
                          "all 40 ports of a Quantum switch at 200 Gb/s, so that streaming "
                          "aggregation runs at line rate (Graham et al., ISC 2020: about 95 % "
                          "of the network bandwidth).",
                          DataRateValue(DataRate("8000Gbps")),
                          MakeDataRateAccessor(&SharpAggregationNode::m_aluRate),
                          MakeDataRateChecker())
            .AddTraceSource("Aggregated",
                            "All contributions of a fragment have been reduced.",
                            MakeTraceSourceAccessor(&SharpAggregationNode::m_aggregatedTrace),
                            "ns3::SharpAggregationNode::AggregatedTracedCallback");
    return tid;
}

SharpAggregationNode::SharpAggregationNode()
    : m_maxTrees(63),
      m_maxOutstandingOps(16),
      m_maxStreamingFlows(2),
      m_bufferSize(256 * 1024),
      m_nTrees(0),
      m_activeFlows(0),
      m_contributions(0),
      m_aggregations(0),
      m_packetsSent(0),
      m_unknownDrops(0)
{
    NS_LOG_FUNCTION(this);
}

SharpAggregationNode::~SharpAggregationNode()
{
    NS_LOG_FUNCTION(this);
}

void
SharpAggregationNode::DoDispose()
{
    NS_LOG_FUNCTION(this);
    if (m_switch)
    {
        m_switch->SetLocalReceiveCallback(IbSwitch::LocalReceiveCallback());
    }
    m_switch = nullptr;
    m_trees.clear();
    Object::DoDispose();
}

void
SharpAggregationNode::Attach(Ptr<IbSwitch> sw)
{
    NS_LOG_FUNCTION(this << sw);
    m_switch = sw;
    sw->SetLocalReceiveCallback(MakeCallback(&SharpAggregationNode::Receive, this));
}

Ptr<IbSwitch>
SharpAggregationNode::GetSwitch() const
{
    return m_switch;
}

void
SharpAggregationNode::AddTree(Ptr<SharpTree> tree, Role role, uint8_t sl)
{
    NS_LOG_FUNCTION(this << tree->id << role.children.size());
    NS_ABORT_MSG_UNLESS(m_switch, "SharpAggregationNode: not attached to a switch");
    NS_ABORT_MSG_IF(m_nTrees >= m_maxTrees,
                    "SharpAggregationNode: switch LID " << m_switch->GetLid() << " already has "
                                                        << m_maxTrees << " trees (MaxTrees)");
    NS_ABORT_MSG_UNLESS(tree->qpn >= SharpTree::QPN_BASE &&
                            tree->qpn < SharpTree::QPN_BASE + 0x100000 &&
                            ((tree->qpn - SharpTree::QPN_BASE) & 0xFFFF) == tree->id,
                        "SharpAggregationNode: tree " << tree->id << " has QPN 0x" << std::hex
                                                      << tree->qpn << std::dec
                                                      << ", not QPN_BASE + (generation << 16) + "
                                                         "id; SharpAggregationManager sets it");
    if (tree->id >= m_trees.size())
    {
        m_trees.resize(tree->id + 1);
    }
    NS_ABORT_MSG_IF(m_trees[tree->id], "SharpAggregationNode: tree " << tree->id << " added twice");
    auto ts = std::make_unique<TreeState>();
    ts->tree = tree;
    ts->role = std::move(role);
    ts->sl = sl;
    for (uint8_t ch = 0; ch < 2; ++ch)
    {
        ts->slots[ch].resize(tree->window[ch]);
    }
    m_trees[tree->id] = std::move(ts);
    ++m_nTrees;
}

void
SharpAggregationNode::RemoveTree(uint16_t id)
{
    if (id < m_trees.size() && m_trees[id])
    {
        m_trees[id].reset();
        --m_nTrees;
    }
}

uint32_t
SharpAggregationNode::RefreshRoutes()
{
    uint32_t broken = 0;
    // A tree's edges are cables (every switch on its routes has an aggregation node, or it
    // was refused): a route that now leaves by a port whose cable does not lead straight
    // to the parent or child is a detour the tree was not built on.
    const auto usable = [this](uint8_t port, uint16_t lid) {
        if (port == 0 || port == IbSwitch::NO_ROUTE || port > m_switch->GetNPorts())
        {
            return false;
        }
        Ptr<IbNetDevice> dev = m_switch->GetPort(port);
        Ptr<IbChannel> cable = DynamicCast<IbChannel>(dev->GetChannel());
        Ptr<IbNetDevice> peer = cable ? cable->GetPeer(dev) : nullptr;
        if (!peer || dev->IsFailed())
        {
            return false;
        }
        Ptr<IbSwitch> next = peer->GetNode()->GetObject<IbSwitch>();
        return next ? next->GetLid() == lid : peer->GetLid() == lid;
    };
    for (auto& ts : m_trees)
    {
        if (!ts || ts->tree->broken)
        {
            continue;
        }
        Role& role = ts->role;
        bool ok = true;
        if (role.parentLid != 0)
        {
            role.parentPort = m_switch->GetLftEntry(role.parentLid);
            ok = usable(role.parentPort, role.parentLid);
            if (ok)
            {
                role.parentVl = m_switch->GetSl2Vl(0, role.parentPort, ts->sl);
                ok = role.parentVl != IbNetDevice::VL15;
            }
        }
        for (auto& c : role.children)
        {
            if (!ok)
            {
                break;
            }
            c.outPort = m_switch->GetLftEntry(c.lid);
            ok = usable(c.outPort, c.lid);
            if (ok)
            {
                c.outVl = m_switch->GetSl2Vl(0, c.outPort, ts->sl);
                ok = c.outVl != IbNetDevice::VL15;
            }
        }
        if (!ok)
        {
            NS_LOG_INFO("switch LID " << m_switch->GetLid() << ": SHARP tree " << ts->tree->id
                                      << " lost a route after a link change");
            ts->tree->broken = true;
            ++broken;
            if (!ts->tree->brokenCallback.IsNull())
            {
                ts->tree->brokenCallback();
            }
        }
    }
    return broken;
}

uint32_t
SharpAggregationNode::GetNTrees() const
{
    return m_nTrees;
}

uint32_t
SharpAggregationNode::GetMaxTrees() const
{
    return m_maxTrees;
}

uint32_t
SharpAggregationNode::GetMaxOutstandingOps() const
{
    return m_maxOutstandingOps;
}

uint32_t
SharpAggregationNode::GetMaxStreamingFlows() const
{
    return m_maxStreamingFlows;
}

uint32_t
SharpAggregationNode::GetBufferSize() const
{
    return m_bufferSize;
}

bool
SharpAggregationNode::AcquireStreamingFlow()
{
    if (m_activeFlows >= m_maxStreamingFlows)
    {
        return false;
    }
    ++m_activeFlows;
    return true;
}

void
SharpAggregationNode::ReleaseStreamingFlow()
{
    NS_ASSERT(m_activeFlows > 0);
    --m_activeFlows;
}

uint32_t
SharpAggregationNode::GetActiveStreamingFlows() const
{
    return m_activeFlows;
}

uint64_t
SharpAggregationNode::GetContributions() const
{
    return m_contributions;
}

uint64_t
SharpAggregationNode::GetAggregations() const
{
    return m_aggregations;
}

uint64_t
SharpAggregationNode::GetPacketsSent() const
{
    return m_packetsSent;
}

uint64_t
SharpAggregationNode::GetUnknownDrops() const
{
    return m_unknownDrops;
}

void
SharpAggregationNode::Receive(Ptr<Packet> packet, uint8_t inPort, Time tail)
{
    const uint32_t size = packet->GetSize();
    if (size < kHeaders + IbPacket::CRC_SIZE)
    {
        NS_LOG_LOGIC("runt packet for the switch: dropped");
        return;
    }
    uint8_t h[kHeaders];
    packet->CopyData(h, kHeaders);
    IbHeaderView view(h, kHeaders);
    if (view.GetLnh() != IbLrhHeader::LNH_IBA_LOCAL)
    {
        NS_LOG_LOGIC("not a local IBA transport packet (raw or global): dropped");
        ++m_unknownDrops;
        return;
    }
    const uint32_t destQp = view.GetDestQp();
    const uint32_t id = (destQp - SharpTree::QPN_BASE) & 0xFFFF;
    if (view.GetOpcode() != IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE || destQp < SharpTree::QPN_BASE ||
        id >= m_trees.size() || !m_trees[id] || m_trees[id]->tree->qpn != destQp ||
        !view.DecodeExtensionHeaders())
    {
        // (A QPN of an earlier tree with this id: its packets were on their way when that
        // tree was destroyed.)
        NS_LOG_LOGIC("not SHARP traffic of a tree on this switch (QPN " << destQp << "): dropped");
        ++m_unknownDrops;
        return;
    }
    TreeState& ts = *m_trees[id];
    const uint32_t pad = view.GetPadCnt();
    const uint32_t bytes = size - view.GetHeadersSize() - pad - IbPacket::CRC_SIZE;
    const uint32_t imm = view.GetImmediateData();
    const uint8_t ch = (imm & SharpTree::IMM_SAT) ? SharpTree::SAT : SharpTree::LLT;
    const uint32_t seq = imm & SharpTree::IMM_SEQ_MASK;
    const uint32_t slotIdx = seq % ts.tree->window[ch];
    Slot& slot = ts.slots[ch][slotIdx];
    const uint8_t* data = nullptr;
    if (ts.tree->dataMode && bytes > 0)
    {
        if (m_scratch.size() < size)
        {
            m_scratch.resize(size);
        }
        packet->CopyData(m_scratch.data(), size);
        data = m_scratch.data() + view.GetHeadersSize();
    }
    if (imm & SharpTree::IMM_DOWN)
    {
        NS_ASSERT_MSG(slot.busy && slot.seq == seq,
                      "SHARP tree " << id << ": result " << seq << " for a slot not in use");
        SendDown(ts, ch, slotIdx, data, bytes, tail);
        return;
    }
    // A contribution from a child.
    const uint16_t slid = view.GetSlid();
    NS_ASSERT_MSG(slid < ts.role.childOfLid.size() && ts.role.childOfLid[slid] >= 0,
                  "SHARP tree " << id << ": contribution from LID " << slid
                                << ", not a child of switch " << m_switch->GetLid());
    if (!slot.busy)
    {
        const SharpFragment& f = ts.tree->desc[ch][slotIdx];
        NS_ASSERT_MSG(f.seq == seq,
                      "SHARP tree " << id << ": no descriptor for fragment " << seq
                                    << " (slot holds " << f.seq << ")");
        slot.busy = true;
        slot.seq = seq;
        slot.arrived = 0;
        slot.frag = f;
        if (data != nullptr)
        {
            slot.acc.assign(data, data + bytes);
        }
    }
    else
    {
        NS_ASSERT_MSG(slot.seq == seq,
                      "SHARP tree " << id << ": fragment " << seq << " arrived while slot "
                                    << slotIdx << " holds " << slot.seq
                                    << " (flow control violated)");
        if (data != nullptr)
        {
            const uint32_t elem = CollectiveReduction::SizeOf(slot.frag.type);
            CollectiveReduction::Reduce(slot.frag.type,
                                        slot.frag.op,
                                        slot.acc.data(),
                                        data,
                                        bytes / elem);
        }
    }
    ++m_contributions;
    // The ALU takes this contribution once it has arrived whole and the ALU is free.
    m_aluFree = std::max(m_aluFree, tail) + m_aluRate.CalculateBytesTxTime(bytes);
    if (++slot.arrived == ts.role.children.size())
    {
        Simulator::Schedule(m_aluFree + m_latency - Simulator::Now(),
                            &SharpAggregationNode::Aggregated,
                            this,
                            destQp,
                            ch,
                            slotIdx);
    }
}

void
SharpAggregationNode::Aggregated(uint32_t qpn, uint8_t ch, uint32_t slotIdx)
{
    const uint32_t id = (qpn - SharpTree::QPN_BASE) & 0xFFFF;
    if (id >= m_trees.size() || !m_trees[id] || m_trees[id]->tree->qpn != qpn)
    {
        return; // the tree was destroyed meanwhile (and its id perhaps given to another)
    }
    TreeState& ts = *m_trees[id];
    Slot& slot = ts.slots[ch][slotIdx];
    ++m_aggregations;
    m_aggregatedTrace(static_cast<uint16_t>(id), slot.seq, slot.frag.bytes);
    const uint8_t* data = ts.tree->dataMode && slot.frag.bytes > 0 ? slot.acc.data() : nullptr;
    if (ts.role.parentLid == 0)
    {
        // The root: the result turns here.
        SendDown(ts, ch, slotIdx, data, slot.frag.bytes, Simulator::Now());
        return;
    }
    const uint32_t imm = (ch == SharpTree::SAT ? SharpTree::IMM_SAT : 0) | slot.seq;
    Emit(ts,
         ts.role.parentLid,
         ts.tree->qpn,
         imm,
         data,
         slot.frag.bytes,
         ts.role.parentPort,
         ts.role.parentVl,
         Simulator::Now());
}

void
SharpAggregationNode::SendDown(TreeState& ts,
                               uint8_t ch,
                               uint32_t slotIdx,
                               const uint8_t* data,
                               uint32_t bytes,
                               Time earliest)
{
    Slot& slot = ts.slots[ch][slotIdx];
    const uint32_t imm =
        SharpTree::IMM_DOWN | (ch == SharpTree::SAT ? SharpTree::IMM_SAT : 0) | slot.seq;
    const int64_t toward =
        slot.frag.toRootOnly ? int64_t(ts.role.childTowardRank[slot.frag.rootRank]) : -1;
    for (uint32_t i = 0; i < ts.role.children.size(); ++i)
    {
        const Child& c = ts.role.children[i];
        // REDUCE: the result only on the branch of the root rank; the others get an
        // empty completion that returns their slot.
        const bool full = toward < 0 || toward == int64_t(i);
        Emit(ts,
             c.lid,
             c.qpn,
             imm,
             full ? data : nullptr,
             full ? bytes : 0,
             c.outPort,
             c.outVl,
             earliest);
    }
    slot.busy = false;
    slot.acc.clear();
}

void
SharpAggregationNode::Emit(const TreeState& ts,
                           uint16_t dlid,
                           uint32_t destQp,
                           uint32_t imm,
                           const uint8_t* data,
                           uint32_t bytes,
                           uint8_t outPort,
                           uint8_t vl,
                           Time earliest)
{
    Ptr<Packet> p;
    uint32_t zeroTail = 0;
    if (data != nullptr)
    {
        p = Create<Packet>(data, bytes);
    }
    else
    {
        p = Create<Packet>(bytes);
        zeroTail = bytes;
    }
    IbImmDtHeader immh;
    immh.SetImmediateData(imm);
    p->AddHeader(immh);
    IbDethHeader deth;
    deth.SetQKey(SharpTree::QKEY);
    deth.SetSrcQp(ts.tree->qpn);
    p->AddHeader(deth);
    IbLrhHeader lrh;
    lrh.SetVl(vl);
    lrh.SetSl(ts.sl);
    lrh.SetDlid(dlid);
    lrh.SetSlid(m_switch->GetLid());
    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE);
    bth.SetDestQp(destQp);
    bth.SetPsn(0);
    IbPacket::Seal(p, lrh, nullptr, bth, zeroTail);
    ++m_packetsSent;
    m_switch->InjectLocal(p, outPort, vl, earliest);
}

} // namespace ns3

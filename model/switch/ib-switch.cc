/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-switch.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <array>
#include <utility>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbSwitch");

NS_OBJECT_ENSURE_REGISTERED(IbSwitch);

TypeId
IbSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbSwitch")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbSwitch>()
            .AddAttribute(
                "ForwardingLatency",
                "Port-to-port latency: from the arrival of a packet's LRH (cut-"
                "through) or last byte (store-and-forward) to the start of its "
                "transmission on an idle output. Default: NVIDIA Quantum QM8700 "
                "(HDR) datasheet, 90 ns.",
                TimeValue(NanoSeconds(90)),
                MakeTimeAccessor(&IbSwitch::SetForwardingLatency, &IbSwitch::GetForwardingLatency),
                MakeIbTimeChecker("IbSwitch", "ForwardingLatency", Time(0)))
            .AddAttribute("CutThrough",
                          "Forward once the LRH has arrived (true) or once the whole packet "
                          "has (false, store-and-forward).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&IbSwitch::SetCutThrough, &IbSwitch::IsCutThrough),
                          MakeBooleanChecker())
            .AddAttribute("AdaptiveRoutingPolicy",
                          "How a switch with AR groups (programmed by the subnet manager) "
                          "picks an RC request's or READ response's output among its group: "
                          "least-loaded (the "
                          "fewest packets waiting for it and in its transmitter, then one with "
                          "credits; ties in turn), random (uniformly among the idle ones, else "
                          "least-loaded) or hash (by SLID and DLID: static spreading).",
                          StringValue("least-loaded"),
                          MakeStringAccessor(&IbSwitch::SetArPolicy, &IbSwitch::GetArPolicy),
                          MakeStringChecker())
            .AddAttribute(
                "InputBuffering",
                "How each input port's VL buffer queues its packets: fifo (one "
                "queue per VL: a packet waits behind the head for another output, "
                "head-of-line blocking) or voq (virtual output queues: one queue "
                "per VL and output port, so a packet waits only behind packets for "
                "its own output; the buffer's space and credits stay per VL). voq "
                "costs ports x ports x 16 queue headers per switch. Set it before "
                "traffic.",
                StringValue("fifo"),
                MakeStringAccessor(&IbSwitch::SetInputBuffering, &IbSwitch::GetInputBuffering),
                MakeStringChecker())
            .AddAttribute("AdaptiveRoutingHold",
                          "Re-evaluation granularity: a choice for a DLID is kept this long "
                          "(0: every packet chooses afresh).",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&IbSwitch::m_arHold),
                          MakeIbTimeChecker("IbSwitch", "AdaptiveRoutingHold", Time(0)))
            .AddTraceSource("UnknownDlidDrop",
                            "A packet was dropped: its DLID has no route (or no multicast "
                            "entry), its SL maps to VL15 on the output, or it is for the "
                            "switch's own LID, which has no local agent.",
                            MakeTraceSourceAccessor(&IbSwitch::m_dropTrace),
                            "ns3::IbSwitch::DropTracedCallback")
            .AddTraceSource("FecnMark",
                            "Congestion control marked a packet with FECN as it left a "
                            "congested output port.",
                            MakeTraceSourceAccessor(&IbSwitch::m_fecnTrace),
                            "ns3::IbSwitch::FecnTracedCallback");
    return tid;
}

IbSwitch::IbSwitch()
    : m_granting(false),
      m_cutThrough(true),
      m_forwarded(0),
      m_ports(1),
      m_waiting(1, 0),
      m_lid(0),
      m_sl2vlStride(0),
      m_unknownDlid(0)
{
    NS_LOG_FUNCTION(this);
    m_arRandom = CreateObject<UniformRandomVariable>();
}

IbSwitch::~IbSwitch()
{
    NS_LOG_FUNCTION(this);
}

void
IbSwitch::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& p : m_ports)
    {
        if (p)
        {
            p->SetIbReceiveCallback(
                MakeNullCallback<void, Ptr<IbNetDevice>, Ptr<Packet>, uint8_t, uint32_t>());
            p->SetTxReadyCallback(MakeNullCallback<void, Ptr<IbNetDevice>, uint8_t>());
        }
    }
    m_ports.clear();
    m_input.clear();
    m_requests.clear();
    m_waiting.clear();
    m_localReceive = LocalReceiveCallback();
    Object::DoDispose();
}

bool
IbSwitch::HasRoute(uint16_t dlid) const
{
    return GetLftEntry(dlid) != NO_ROUTE;
}

void
IbSwitch::PortTxReady(uint8_t port, IbNetDevice* dev, uint8_t vl)
{
    Grant(port, vl);
}

uint8_t
IbSwitch::AddPort(Ptr<IbNetDevice> port)
{
    NS_LOG_FUNCTION(this << port);
    NS_ABORT_MSG_IF(m_ports.size() > 254, "IbSwitch: a switch has at most 254 ports");
    const uint8_t n = static_cast<uint8_t>(m_ports.size());
    m_ports.push_back(port);
    port->SetSwitchPortMode(m_latency, m_cutThrough);
    port->SetIbReceiveCallback(MakeCallback(&IbSwitch::Receive, this).Bind(n));
    port->SetTxReadyCallback(MakeCallback(&IbSwitch::TxReady, this).Bind(n));
    port->SetForwarder(this, n); // the same calls, without the Callback indirection
    if (!port->GetSlToVl().empty())
    {
        PortSlToVlChanged();
    }
    ResizeInputs();
    m_requests.resize(m_ports.size() * 16);
    m_waiting.resize(m_ports.size(), 0);
    if (m_ccOn)
    {
        SetCongestionSetting(m_cc); // size its tables for the new port
    }
    return n;
}

void
IbSwitch::ResizeInputs()
{
    for (const auto& q : m_input)
    {
        NS_ABORT_MSG_UNLESS(q.Empty(),
                            "IbSwitch: ports added or InputBuffering changed while packets "
                            "wait in the input buffers; build the switch and set InputBuffering "
                            "before traffic starts");
    }
    m_voqStride = static_cast<uint32_t>(m_ports.size());
    m_input.clear();
    m_input.resize(m_ports.size() * 16 * (m_voq ? m_voqStride : 1));
}

void
IbSwitch::SetInputBuffering(std::string mode)
{
    NS_ABORT_MSG_UNLESS(mode == "fifo" || mode == "voq",
                        "IbSwitch attribute InputBuffering=" << mode << ": use fifo or voq");
    const bool voq = mode == "voq";
    if (voq == m_voq)
    {
        return;
    }
    m_voq = voq;
    ResizeInputs();
    if (m_ccOn)
    {
        SetCongestionSetting(m_cc); // its per-queue state follows the queues
    }
}

std::string
IbSwitch::GetInputBuffering() const
{
    return m_voq ? "voq" : "fifo";
}

uint8_t
IbSwitch::GetNPorts() const
{
    return static_cast<uint8_t>(m_ports.size() - 1);
}

Ptr<IbNetDevice>
IbSwitch::GetPort(uint8_t n) const
{
    NS_ASSERT_MSG(n >= 1 && n < m_ports.size(), "no port " << unsigned(n));
    return m_ports[n];
}

void
IbSwitch::SetLid(uint16_t lid)
{
    m_lid = lid;
}

uint16_t
IbSwitch::GetLid() const
{
    return m_lid;
}

void
IbSwitch::SetLft(std::vector<uint8_t> lft)
{
    for (std::size_t dlid = 0; dlid < lft.size(); ++dlid)
    {
        CheckLftPort(static_cast<uint16_t>(dlid), lft[dlid], "SetLft");
    }
    m_lft = std::move(lft);
}

void
IbSwitch::CheckLftPort(uint16_t dlid, uint8_t port, const char* what) const
{
    // (A packet sent to a port the switch does not have would be dropped as if it had no
    // route, with no word about the table entry.)
    NS_ABORT_MSG_IF(port != NO_ROUTE && port >= m_ports.size(),
                    "IbSwitch::" << what << ": LID " << dlid << " goes to port " << unsigned(port)
                                 << ", but the switch (LID " << m_lid << ") has ports 1.."
                                 << m_ports.size() - 1
                                 << " (0 = itself, 255 = no route); add its ports first "
                                    "(AddPort) or fix the entry");
}

void
IbSwitch::SetLftEntry(uint16_t dlid, uint8_t port)
{
    NS_ABORT_MSG_IF(dlid >= MULTICAST_LID_BASE,
                    "IbSwitch::SetLftEntry: LID 0x" << std::hex << dlid
                                                    << " is multicast; use SetMftEntry");
    CheckLftPort(dlid, port, "SetLftEntry");
    if (dlid >= m_lft.size())
    {
        m_lft.resize(dlid + 1, NO_ROUTE);
    }
    m_lft[dlid] = port;
}

uint8_t
IbSwitch::GetLftEntry(uint16_t dlid) const
{
    return dlid < m_lft.size() ? m_lft[dlid] : NO_ROUTE;
}

const std::vector<uint8_t>&
IbSwitch::GetLft() const
{
    return m_lft;
}

void
IbSwitch::SetMftEntry(uint16_t mlid, const std::vector<uint8_t>& ports)
{
    NS_ABORT_MSG_UNLESS(mlid >= MULTICAST_LID_BASE && mlid < 0xFFFF,
                        "IbSwitch::SetMftEntry: 0x" << std::hex << mlid
                                                    << " is not a multicast LID "
                                                       "(0xC000..0xFFFE)");
    std::array<bool, 256> seen{};
    for (uint8_t p : ports)
    {
        NS_ABORT_MSG_UNLESS(p >= 1 && p < m_ports.size(),
                            "IbSwitch::SetMftEntry: port " << unsigned(p)
                                                           << " does not exist on this switch");
        NS_ABORT_MSG_IF(seen[p],
                        "IbSwitch::SetMftEntry: MLID 0x"
                            << std::hex << mlid << std::dec << " names port " << unsigned(p)
                            << " twice; list each member port once (it would get two copies)");
        seen[p] = true;
    }
    const uint32_t idx = mlid - MULTICAST_LID_BASE;
    if (idx >= m_mft.size())
    {
        m_mft.resize(idx + 1);
    }
    m_mft[idx] = ports;
}

std::vector<uint8_t>
IbSwitch::GetMftEntry(uint16_t mlid) const
{
    const uint32_t idx = mlid - MULTICAST_LID_BASE;
    return (mlid >= MULTICAST_LID_BASE && idx < m_mft.size()) ? m_mft[idx] : std::vector<uint8_t>();
}

void
IbSwitch::PortSlToVlChanged()
{
    // Unprogrammed pairs follow the output port's SlToVlTable. While every port keeps the
    // default (SL mod NumDataVls), Forward computes that without the tables; once one
    // has a table of its own, Forward reads the tables, rebuilt before the next packet.
    for (std::size_t i = 1; i < m_ports.size() && !m_sl2vlProgrammed; ++i)
    {
        m_sl2vlProgrammed = !m_ports[i]->GetSlToVl().empty();
    }
    m_sl2vlStride = 0;
}

void
IbSwitch::BuildDefaultSl2Vl()
{
    const uint32_t stride = m_ports.size();
    if (stride == m_sl2vlStride)
    {
        return;
    }
    // Re-lay the tables for the new port count, keeping programmed pairs.
    std::vector<std::array<uint8_t, 16>> old = std::move(m_sl2vl);
    std::vector<bool> oldSet = std::move(m_sl2vlSet);
    const uint32_t oldStride = m_sl2vlLayout;
    m_sl2vl.assign(stride * stride, std::array<uint8_t, 16>{});
    m_sl2vlSet.assign(stride * stride, false);
    for (uint32_t in = 0; in < stride; ++in)
    {
        for (uint32_t out = 1; out < stride; ++out)
        {
            const uint32_t k = in * stride + out;
            if (in < oldStride && out < oldStride && oldSet[in * oldStride + out])
            {
                m_sl2vl[k] = old[in * oldStride + out];
                m_sl2vlSet[k] = true;
                continue;
            }
            // A pair the subnet manager did not program maps as the output port does
            // (its SlToVlTable; by default SL mod NumDataVls).
            for (uint8_t sl = 0; sl < 16; ++sl)
            {
                m_sl2vl[k][sl] = m_ports[out]->GetVlForSl(sl);
            }
            // Not checked against the output's arbitration here: an SL nobody sends on
            // may map anywhere, as at a host port; a packet that does reach a VL the
            // output never arbitrates stops the run with the port's message.
        }
    }
    m_sl2vlStride = stride;
    m_sl2vlLayout = stride;
}

void
IbSwitch::CheckArbitrated(uint8_t inPort,
                          uint8_t outPort,
                          const std::array<uint8_t, 16>& sl2vl) const
{
    const Ptr<IbNetDevice> port = m_ports[outPort];
    for (uint8_t sl = 0; sl < 16; ++sl)
    {
        const uint8_t vl = sl2vl[sl];
        NS_ABORT_MSG_UNLESS(vl == IbNetDevice::VL15 || port->IsVlArbitrated(vl),
                            "IbSwitch on node "
                                << (GetObject<Node>() ? GetObject<Node>()->GetId() : 0) << ": SL"
                                << unsigned(sl) << " from port " << unsigned(inPort) << " to port "
                                << unsigned(outPort) << " maps to VL" << unsigned(vl)
                                << ", but no entry of weight > 0 names VL" << unsigned(vl)
                                << " in that port's VlArbitrationHigh='" << port->GetVlArbHigh()
                                << "' or VlArbitrationLow='" << port->GetVlArbLow()
                                << "', so such a packet could never leave it. Add an entry such "
                                   "as "
                                << unsigned(vl)
                                << ":4 to the port's arbitration tables, or map the SL to "
                                   "another VL (SlToVlTable, IbSwitch::SetSl2Vl).");
    }
}

void
IbSwitch::SetSl2Vl(uint8_t inPort, uint8_t outPort, const std::array<uint8_t, 16>& sl2vl)
{
    NS_ABORT_MSG_UNLESS(inPort < m_ports.size() && outPort >= 1 && outPort < m_ports.size(),
                        "IbSwitch::SetSl2Vl: no port pair (" << unsigned(inPort) << ", "
                                                             << unsigned(outPort) << ")");
    BuildDefaultSl2Vl();
    for (uint8_t sl = 0; sl < 16; ++sl)
    {
        NS_ABORT_MSG_UNLESS(sl2vl[sl] == 15 || sl2vl[sl] < m_ports[outPort]->GetNumDataVls(),
                            "IbSwitch::SetSl2Vl: SL"
                                << unsigned(sl) << " -> VL" << unsigned(sl2vl[sl])
                                << " but output port " << unsigned(outPort) << " has "
                                << unsigned(m_ports[outPort]->GetNumDataVls()) << " data VLs");
    }
    CheckArbitrated(inPort, outPort, sl2vl);
    const uint32_t k = inPort * m_sl2vlStride + outPort;
    m_sl2vl[k] = sl2vl;
    m_sl2vlSet[k] = true;
    m_sl2vlProgrammed = true;
}

uint8_t
IbSwitch::GetSl2Vl(uint8_t inPort, uint8_t outPort, uint8_t sl) const
{
    const_cast<IbSwitch*>(this)->BuildDefaultSl2Vl();
    return m_sl2vl[inPort * m_sl2vlStride + outPort][sl & 0xF];
}

uint64_t
IbSwitch::GetForwardedPackets() const
{
    return m_forwarded;
}

uint64_t
IbSwitch::GetUnknownDlidDrops() const
{
    return m_unknownDlid;
}

void
IbSwitch::SetForwardingLatency(Time latency)
{
    m_latency = latency;
    UpdatePortModes();
}

void
IbSwitch::SetCutThrough(bool cutThrough)
{
    m_cutThrough = cutThrough;
    UpdatePortModes();
}

void
IbSwitch::UpdatePortModes()
{
    // Ports added before the change take it too (their cables re-read it).
    for (std::size_t i = 1; i < m_ports.size(); ++i)
    {
        m_ports[i]->SetSwitchPortMode(m_latency, m_cutThrough);
    }
}

Time
IbSwitch::GetForwardingLatency() const
{
    return m_latency;
}

bool
IbSwitch::IsCutThrough() const
{
    return m_cutThrough;
}

void
IbSwitch::Drop(uint8_t inPort, Ptr<Packet> packet, uint8_t vl, uint32_t blocks)
{
    ++m_unknownDlid;
    m_dropTrace(packet, inPort);
    if (vl != IbNetDevice::VL15)
    {
        m_ports[inPort]->ReleaseRxBuffer(vl, blocks);
    }
}

void
IbSwitch::Receive(uint8_t inPort,
                  Ptr<IbNetDevice> dev,
                  Ptr<Packet> packet,
                  uint8_t vl,
                  uint32_t blocks)
{
    NS_LOG_FUNCTION(this << unsigned(inPort) << packet << unsigned(vl));
    const uint32_t head = IbPacket::PeekHead(*packet);
    const uint32_t bytes = packet->GetSize();
    PortForward(inPort, PeekPointer(dev), IbOwnedPacket(packet), head, bytes, vl, blocks);
}

void
IbSwitch::PortForward(uint8_t inPort,
                      IbNetDevice* dev,
                      IbOwnedPacket owned,
                      uint32_t head,
                      uint32_t bytes,
                      uint8_t vl,
                      uint32_t blocks)
{
    NS_LOG_FUNCTION(this << unsigned(inPort) << owned.Get() << unsigned(vl));
    const uint8_t sl = (head >> 20) & 0xF;
    const uint16_t dlid = head & 0xFFFF;
    if (dlid >= MULTICAST_LID_BASE && dlid != 0xFFFF)
    {
        Multicast(inPort, owned.Release(), vl, blocks, dlid, sl);
        return;
    }
    uint8_t out = dlid < m_lft.size() ? m_lft[dlid] : NO_ROUTE;
    if (m_arOn && dlid < m_arGroupOf.size() && m_arGroupOf[dlid] != 0)
    {
        out = AdaptiveOutput(inPort, *owned.Get(), head, m_arGroupOf[dlid], vl, blocks);
    }
    if (out == 0 && !m_localReceive.IsNull())
    {
        // For the switch itself: the local agent takes the packet off the input buffer
        // once it has arrived whole.
        Time tail = Simulator::Now();
        if (m_cutThrough)
        {
            tail += dev->GetDataRate().CalculateBytesTxTime(bytes - IbPacket::LRH_SIZE);
        }
        dev->ReleaseRxBuffer(vl, blocks);
        m_localReceive(owned.Release(), inPort, tail);
        return;
    }
    if (out == 0 || out >= m_ports.size())
    {
        // No route (255), or the switch's own management port (0): SMPs are not modelled.
        NS_LOG_LOGIC("no route for DLID " << dlid << "; dropped");
        Drop(inPort, owned.Release(), vl, blocks);
        return;
    }
    m_ports[out]->PrefetchForSend(vl);
    const uint8_t outVl = OutputVl(inPort, out, sl, vl);
    if (outVl == IbNetDevice::VL15 && vl != IbNetDevice::VL15)
    {
        NS_LOG_LOGIC("SL" << unsigned(sl) << " maps to VL15 from port " << unsigned(inPort)
                          << " to " << unsigned(out) << ": dropped");
        Drop(inPort, owned.Release(), vl, blocks);
        return;
    }
    if (outVl != vl)
    {
        IbPacket::SetVl(owned.Share(), outVl);
        head = IbPacket::HeadWithVl(head, outVl);
    }
    InEntry e;
    e.bytes = bytes;
    e.packet = std::move(owned);
    e.head = head;
    e.blocks = blocks;
    e.outPort = out;
    e.outVl = outVl;
    if (m_cutThrough && m_ports[out]->GetDataRate() > dev->GetDataRate())
    {
        e.earliestStart = EarliestStart(*dev, *m_ports[out], bytes);
    }
    IbNetDevice* port = PeekPointer(m_ports[out]);
    const uint32_t q = InputQueue(inPort, vl, out);
    // Nothing ahead of it: its FIFO is empty (the bit spares reading it), or with virtual
    // output queues its queue for this output.
    const bool nothingAhead = m_voq ? m_input[q].Empty() : !(m_waiting[inPort] & (1u << vl));
    if (!m_granting && e.earliestStart.IsZero() && nothingAhead &&
        !(m_waiting[out] & (1u << (16 + outVl))) && port->GetTxQueueLength(outVl) == 0 &&
        port->HasCreditsFor(outVl, blocks))
    {
        // Nothing ahead of it in its input FIFO or for its output, which can take it:
        // what the queues would do at once, without them.
        m_granting = true;
        ++m_forwarded;
        port->EnqueueForwarded(std::move(e.packet),
                               outVl,
                               dev,
                               vl,
                               e.earliestStart,
                               e.bytes,
                               e.head);
        ServePending();
        m_granting = false;
        return;
    }
    IbFifo<InEntry>& fifo = m_input[q];
    if (m_ccOn)
    {
        CongestionArrival(q, e);
    }
    fifo.Push(std::move(e));
    if (!m_voq)
    {
        m_waiting[inPort] |= 1u << vl;
    }
    if (fifo.Size() == 1)
    {
        RequestHead(q);
    }
}

Time
IbSwitch::EarliestStart(const IbNetDevice& in, const IbNetDevice& out, uint32_t bytes) const
{
    const DataRate inRate = in.GetDataRate();
    const DataRate outRate = out.GetDataRate();
    if (outRate > inRate)
    {
        // The tail is still arriving: finish no earlier than it does.
        const Time tail = inRate.CalculateBytesTxTime(bytes - IbPacket::LRH_SIZE);
        const Time outTime = outRate.CalculateBytesTxTime(bytes);
        if (tail > outTime)
        {
            return Simulator::Now() + tail - outTime;
        }
    }
    return Time(0);
}

void
IbSwitch::RequestHead(uint32_t q)
{
    const InEntry& head = m_input[q].Front();
    if (DeferredUntilEligible(head, q))
    {
        return;
    }
    m_requests[head.outPort * 16 + head.outVl].Push(q);
    m_waiting[head.outPort] |= 1u << (16 + head.outVl);
    Grant(head.outPort, head.outVl);
}

bool
IbSwitch::DeferredUntilEligible(const InEntry& head, uint32_t q)
{
    if (head.earliestStart.IsZero() || head.earliestStart <= Simulator::Now())
    {
        return false;
    }
    // Cut-through onto a faster output: the packet may not start before its tail is
    // close enough. It asks for the output only then, so that meanwhile the output serves
    // other inputs rather than waiting for it.
    Simulator::Schedule(head.earliestStart - Simulator::Now(),
                        &IbSwitch::RequestEligibleHead,
                        this,
                        q);
    return true;
}

void
IbSwitch::RequestEligibleHead(uint32_t q)
{
    if (q < m_input.size() && !m_input[q].Empty()) // not disposed of meanwhile
    {
        RequestHead(q);
    }
}

void
IbSwitch::TxReady(uint8_t outPort, Ptr<IbNetDevice> dev, uint8_t vl)
{
    Grant(outPort, vl);
}

void
IbSwitch::Grant(uint8_t outPort, uint8_t outVl)
{
    if (m_granting)
    {
        // Called back from inside a grant (the port became ready again at once):
        // serve it when the current grant returns.
        m_grantPending.push_back(static_cast<uint16_t>(outPort * 16 + outVl));
        return;
    }
    if (!(m_waiting[outPort] & (1u << (16 + outVl))))
    {
        return; // no input waits for it
    }
    m_granting = true;
    m_grantPending.push_back(static_cast<uint16_t>(outPort * 16 + outVl));
    ServePending();
    m_granting = false;
}

void
IbSwitch::ServePending()
{
    while (!m_grantPending.empty())
    {
        const uint16_t key = m_grantPending.back();
        m_grantPending.pop_back();
        const uint8_t o = key / 16;
        const uint8_t ov = key % 16;
        if (!(m_waiting[o] & (1u << (16 + ov))))
        {
            continue; // nothing waits for it: spare the request queue's lines
        }
        IbFifo<uint32_t>& reqs = m_requests[key];
        IbNetDevice* port = PeekPointer(m_ports[o]);
        while (!reqs.Empty() && port->GetTxQueueLength(ov) == 0)
        {
            const uint32_t in = reqs.Front();
            IbFifo<InEntry>& fifo = m_input[in];
            if (!port->HasCreditsFor(ov, fifo.Front().blocks) && !port->IsFailed())
            {
                port->NoteCreditStall(ov, fifo.Front().blocks);
                if (m_ccOn)
                {
                    m_ccStallAt[key] = Simulator::Now();
                }
                break; // TxReady comes back when credits arrive
            }
            reqs.Pop();
            if (reqs.Empty())
            {
                m_waiting[o] &= ~(1u << (16 + ov));
            }
            InEntry e = fifo.Pop();
            const uint32_t buffer = InputBuffer(in);
            const uint8_t inPort = buffer / 16;
            const uint8_t inVl = buffer % 16;
            if (fifo.Empty() && !m_voq)
            {
                m_waiting[inPort] &= ~(1u << inVl); // (read only in FIFO mode)
            }
            ++m_forwarded;
            if (m_ccOn)
            {
                CongestionDeparture(key, in, e);
            }
            port->EnqueueForwarded(std::move(e.packet),
                                   ov,
                                   PeekPointer(m_ports[inPort]),
                                   inVl,
                                   e.earliestStart,
                                   e.bytes,
                                   e.head);
            if (!fifo.Empty())
            {
                const InEntry& next = fifo.Front();
                if (DeferredUntilEligible(next, in))
                {
                    continue;
                }
                m_requests[next.outPort * 16 + next.outVl].Push(in);
                m_waiting[next.outPort] |= 1u << (16 + next.outVl);
                if (next.outPort != o || next.outVl != ov)
                {
                    m_grantPending.push_back(static_cast<uint16_t>(next.outPort * 16 + next.outVl));
                }
            }
        }
    }
}

void
IbSwitch::CongestionArrival(uint32_t q, const InEntry& e)
{
    IbFifo<InEntry>& fifo = m_input[q];
    const uint16_t key = static_cast<uint16_t>(e.outPort * 16 + e.outVl);
    if (fifo.Empty())
    {
        m_ccRun[q] = 1;
        m_ccRunOpen[q] = 1;
        m_ccBacklog[key] += e.bytes;
        return;
    }
    const InEntry& head = fifo.Front();
    if (m_ccRunOpen[q] && head.outPort == e.outPort && head.outVl == e.outVl)
    {
        ++m_ccRun[q]; // every packet so far goes the same way: the run grows
        m_ccBacklog[key] += e.bytes;
        return;
    }
    m_ccRunOpen[q] = 0; // behind a packet for another output: not waiting for its own yet
}

void
IbSwitch::CongestionRunFromHead(uint32_t q)
{
    IbFifo<InEntry>& fifo = m_input[q];
    if (fifo.Empty())
    {
        m_ccRun[q] = 0;
        m_ccRunOpen[q] = 1;
        return;
    }
    const InEntry& head = fifo.Front();
    const uint16_t key = static_cast<uint16_t>(head.outPort * 16 + head.outVl);
    uint32_t n = 0;
    uint32_t bytes = 0;
    for (; n < fifo.Size(); ++n)
    {
        const InEntry& x = fifo.At(n);
        if (x.outPort != head.outPort || x.outVl != head.outVl)
        {
            break;
        }
        bytes += x.bytes;
    }
    m_ccRun[q] = n;
    m_ccRunOpen[q] = n == fifo.Size() ? 1 : 0;
    m_ccBacklog[key] += bytes;
}

void
IbSwitch::CongestionDeparture(uint16_t key, uint32_t q, InEntry& e)
{
    uint32_t& backlog = m_ccBacklog[key];
    backlog -= std::min(backlog, e.bytes);
    if (m_ccRun[q] > 0 && --m_ccRun[q] == 0)
    {
        CongestionRunFromHead(q); // the next packets of that input wait for their output now
    }
    const uint8_t o = key / 16;
    const bool victim = !m_ccStallAt[key].IsStrictlyNegative() &&
                        Simulator::Now() - m_ccStallAt[key] < m_ccVictimWindow[o];
    if (backlog < m_ccThreshold[o] || (victim && !m_cc.victimMask) || e.bytes < m_cc.packetSize)
    {
        return;
    }
    if (m_ccSkipped[key] < m_cc.markingRate)
    {
        ++m_ccSkipped[key];
        return;
    }
    m_ccSkipped[key] = 0;
    Ptr<Packet> p = e.packet.Share();
    if (IbPacket::SetFecn(p, e.head))
    {
        ++m_fecnMarks;
        NS_LOG_LOGIC("FECN on a packet for port " << unsigned(o) << " VL " << key % 16 << ", "
                                                  << backlog << " bytes waiting");
        m_fecnTrace(p, o, static_cast<uint8_t>(key % 16), backlog);
    }
}

inline uint8_t
IbSwitch::OutputVl(uint8_t inPort, uint8_t out, uint8_t sl, uint8_t vl)
{
    if (vl == IbNetDevice::VL15)
    {
        return vl;
    }
    // Unprogrammed tables hold SL mod NumDataVls: compute it rather than touch the
    // (ports x ports) table, a cache miss per packet on a large fabric.
    if (!m_sl2vlProgrammed)
    {
        return sl % m_ports[out]->GetNumDataVls();
    }
    if (m_sl2vlStride != m_ports.size())
    {
        BuildDefaultSl2Vl();
    }
    return m_sl2vl[inPort * m_sl2vlStride + out][sl];
}

uint8_t
IbSwitch::AdaptiveOutput(uint8_t inPort,
                         const Packet& packet,
                         uint32_t head,
                         uint16_t group,
                         uint8_t vl,
                         uint32_t blocks)
{
    const uint16_t dlid = head & 0xFFFF;
    const uint8_t lftPort = dlid < m_lft.size() ? m_lft[dlid] : NO_ROUTE;
    // RC requests only: responses, UD, raw datagrams and CNPs keep the LFT's path (their
    // receivers take them in order only).
    if (IbPacket::LnhOfHead(head) != IbLrhHeader::LNH_IBA_LOCAL ||
        !(m_arSlMask >> ((head >> 20) & 0xF) & 1))
    {
        return lftPort;
    }
    uint8_t lrhBth[IbPacket::LRH_SIZE + 1];
    if (packet.CopyData(lrhBth, sizeof(lrhBth)) != sizeof(lrhBth))
    {
        return lftPort;
    }
    const uint8_t opcode = lrhBth[IbPacket::LRH_SIZE];
    // RC requests and READ responses: their receivers take early ones in PSN order.
    const bool request = opcode <= IbOpcode::RC_RDMA_READ_RESPONSE_ONLY ||
                         opcode == IbOpcode::RC_COMPARE_SWAP || opcode == IbOpcode::RC_FETCH_ADD;
    if (!request)
    {
        return lftPort;
    }
    const Time now = Simulator::Now();
    if (m_arHold.IsStrictlyPositive() && dlid < m_arChoice.size() && m_arChoice[dlid].first > now &&
        !m_ports[m_arChoice[dlid].second]->IsFailed())
    {
        ++m_arPackets;
        return m_arChoice[dlid].second; // still within the re-evaluation period
    }
    const std::vector<uint8_t>& ports = m_arGroups[group];
    const uint8_t sl = (head >> 20) & 0xF;
    uint8_t chosen = lftPort;
    if (m_arPolicy == AR_HASH)
    {
        // Static spreading by (SLID, DLID), as a hash-based fallback would do.
        const uint32_t slid = (uint32_t(lrhBth[6]) << 8) | lrhBth[7];
        const uint32_t n = static_cast<uint32_t>(ports.size());
        const uint32_t first = ((slid * 0x9E3779B1u) ^ dlid) % n;
        chosen = ports[first];
        for (uint32_t k = 1; k < n && m_ports[chosen]->IsFailed(); ++k)
        {
            chosen = ports[(first + k) % n]; // the next live member, as the group shrinks
        }
    }
    else
    {
        // Load of a candidate: the heads waiting for it, the packets in its transmitter, and
        // one more if it has no credits for this packet now.
        uint32_t best = UINT32_MAX;
        uint32_t ties = 0;
        const uint32_t n = static_cast<uint32_t>(ports.size());
        const uint32_t start = m_arRotor++ % n; // ties go round the group
        for (uint32_t k = 0; k < n; ++k)
        {
            const uint8_t o = ports[(start + k) % n];
            IbNetDevice* port = PeekPointer(m_ports[o]);
            if (port->IsFailed())
            {
                continue; // a member whose link is down leaves the group at once
            }
            const uint8_t ov = OutputVl(inPort, o, sl, vl);
            const uint32_t load = static_cast<uint32_t>(m_requests[o * 16 + ov].Size()) +
                                  port->GetTxQueueLength(ov) +
                                  (port->HasCreditsFor(ov, blocks) ? 0 : 1);
            if (m_arPolicy == AR_RANDOM && load == 0)
            {
                // Random among the idle ones: reservoir sampling over the ties at zero.
                ++ties;
                if (best != 0 || m_arRandom->GetInteger(0, ties - 1) == 0)
                {
                    chosen = o;
                }
                best = 0;
                continue;
            }
            if (load < best)
            {
                best = load;
                chosen = o;
            }
        }
    }
    ++m_arPackets;
    if (chosen != lftPort)
    {
        ++m_arDeviations;
    }
    if (m_arHold.IsStrictlyPositive())
    {
        if (m_arChoice.size() <= dlid)
        {
            m_arChoice.resize(std::max<size_t>(m_lft.size(), dlid + 1u), {Time(0), NO_ROUTE});
        }
        m_arChoice[dlid] = {now + m_arHold, chosen};
    }
    return chosen;
}

void
IbSwitch::SetAdaptiveRouting(std::vector<uint16_t> groupOf,
                             std::vector<std::vector<uint8_t>> groups,
                             uint16_t slMask)
{
    for (size_t g = 1; g < groups.size(); ++g)
    {
        NS_ABORT_MSG_IF(groups[g].empty(),
                        "IbSwitch::SetAdaptiveRouting: AR group " << g << " is empty");
        for (uint8_t p : groups[g])
        {
            NS_ABORT_MSG_IF(p == 0 || p >= m_ports.size(),
                            "IbSwitch::SetAdaptiveRouting: AR group " << g << " names port "
                                                                      << unsigned(p)
                                                                      << ", which the switch does "
                                                                         "not have");
        }
    }
    for (size_t lid = 0; lid < groupOf.size(); ++lid)
    {
        NS_ABORT_MSG_IF(groupOf[lid] >= std::max<size_t>(groups.size(), 1),
                        "IbSwitch::SetAdaptiveRouting: LID " << lid << " names AR group "
                                                             << groupOf[lid] << " of "
                                                             << groups.size());
    }
    m_arGroupOf = std::move(groupOf);
    m_arGroups = std::move(groups);
    if (m_arGroups.empty())
    {
        m_arGroups.emplace_back(); // group 0: none
    }
    m_arSlMask = slMask;
    m_arOn = m_arGroups.size() > 1 && slMask != 0;
    m_arChoice.clear();
}

std::vector<uint8_t>
IbSwitch::GetArGroup(uint16_t dlid) const
{
    if (dlid < m_arGroupOf.size() && m_arGroupOf[dlid] != 0)
    {
        return m_arGroups[m_arGroupOf[dlid]];
    }
    return {};
}

uint64_t
IbSwitch::GetAdaptivePackets() const
{
    return m_arPackets;
}

uint64_t
IbSwitch::GetAdaptiveDeviations() const
{
    return m_arDeviations;
}

void
IbSwitch::SetCongestionSetting(const IbSwitchCongestionSetting& setting)
{
    NS_ABORT_MSG_IF(setting.threshold > 15,
                    "IbSwitch::SetCongestionSetting: threshold " << unsigned(setting.threshold)
                                                                 << "; IBA allows 0 (off) to 15");
    NS_ABORT_MSG_IF(setting.packetSize % 64 != 0 || setting.packetSize > 255 * 64,
                    "IbSwitch::SetCongestionSetting: packet size "
                        << setting.packetSize
                        << " bytes; IBA counts it in 64-byte units, 0 to 16320 bytes");
    m_cc = setting;
    m_ccOn = setting.threshold > 0;
    const size_t n = m_ports.size() * 16;
    m_ccBacklog.assign(n, 0);
    m_ccSkipped.assign(n, 0);
    m_ccStallAt.assign(n, Time(-1));
    m_ccRun.assign(m_input.size(), 0);
    m_ccRunOpen.assign(m_input.size(), 1);
    m_ccThreshold.assign(m_ports.size(), 0);
    m_ccVictimWindow.assign(m_ports.size(), Time(0));
    for (size_t p = 1; p < m_ports.size(); ++p)
    {
        const uint32_t buffer = m_ports[p]->GetVlBufferSize();
        m_ccThreshold[p] =
            static_cast<uint32_t>(static_cast<uint64_t>(16 - setting.threshold) * buffer / 16);
        m_ccVictimWindow[p] = m_ports[p]->GetDataRate().CalculateBytesTxTime(buffer);
    }
    // Packets already waiting are counted in, so that the backlog is right from now on.
    for (size_t q = 0; q < m_input.size(); ++q)
    {
        CongestionRunFromHead(static_cast<uint32_t>(q));
    }
}

void
IbSwitch::SetArPolicy(std::string policy)
{
    if (policy == "least-loaded")
    {
        m_arPolicy = AR_LEAST_LOADED;
    }
    else if (policy == "random")
    {
        m_arPolicy = AR_RANDOM;
    }
    else if (policy == "hash")
    {
        m_arPolicy = AR_HASH;
    }
    else
    {
        NS_ABORT_MSG("IbSwitch attribute AdaptiveRoutingPolicy="
                     << policy << ": use least-loaded, random or hash");
    }
}

std::string
IbSwitch::GetArPolicy() const
{
    return m_arPolicy == AR_RANDOM ? "random" : m_arPolicy == AR_HASH ? "hash" : "least-loaded";
}

int64_t
IbSwitch::AssignStreams(int64_t stream)
{
    m_arRandom->SetStream(stream);
    return 1;
}

const IbSwitchCongestionSetting&
IbSwitch::GetCongestionSetting() const
{
    return m_cc;
}

uint64_t
IbSwitch::GetFecnMarks() const
{
    return m_fecnMarks;
}

uint32_t
IbSwitch::GetCongestionBacklog(uint8_t port, uint8_t vl) const
{
    const size_t k = static_cast<size_t>(port) * 16 + (vl & 0xF);
    return k < m_ccBacklog.size() ? m_ccBacklog[k] : 0;
}

void
IbSwitch::SetLocalReceiveCallback(LocalReceiveCallback cb)
{
    m_localReceive = cb;
}

void
IbSwitch::InjectLocal(Ptr<Packet> packet, uint8_t outPort, uint8_t vl, Time earliestStart)
{
    NS_ASSERT_MSG(outPort >= 1 && outPort < m_ports.size(), "no port " << unsigned(outPort));
    ++m_forwarded;
    m_ports[outPort]->EnqueueForwarded(packet, vl, nullptr, 0, earliestStart);
}

void
IbSwitch::Multicast(uint8_t inPort,
                    Ptr<Packet> packet,
                    uint8_t vl,
                    uint32_t blocks,
                    uint16_t dlid,
                    uint8_t sl)
{
    const uint32_t idx = dlid - MULTICAST_LID_BASE;
    if (idx >= m_mft.size() || m_mft[idx].empty())
    {
        Drop(inPort, packet, vl, blocks);
        return;
    }
    BuildDefaultSl2Vl();
    // Copies go straight to the output queues (each still waits there for credits, so
    // nothing is lost). The input buffer is released when the last copy has been sent:
    // the slowest member's output pushes back on the source.
    // The outputs that take a copy, and their VLs, chosen once.
    std::array<std::pair<uint8_t, uint8_t>, 256> outs;
    uint32_t copies = 0;
    for (uint8_t out : m_mft[idx])
    {
        const uint8_t outVl = m_sl2vl[inPort * m_sl2vlStride + out][sl];
        if (out == inPort)
        {
            continue;
        }
        if (outVl == IbNetDevice::VL15)
        {
            ++m_unknownDlid; // this copy is dropped, as a unicast packet would be
            m_dropTrace(packet, inPort);
            continue;
        }
        outs[copies++] = {out, outVl};
    }
    if (copies == 0)
    {
        m_ports[inPort]->ReleaseRxBuffer(vl, blocks);
        return;
    }
    IbSharedRelease* shared = nullptr;
    if (copies > 1)
    {
        if (m_sharedFree == nullptr)
        {
            m_shared.push_back(std::make_unique<IbSharedRelease>());
            m_sharedFree = m_shared.back().get();
        }
        shared = m_sharedFree;
        m_sharedFree = shared->nextFree;
        shared->port = PeekPointer(m_ports[inPort]);
        shared->vl = vl;
        shared->blocks = blocks;
        shared->remaining = copies;
        shared->nextFree = nullptr;
        shared->freeHead = &m_sharedFree;
    }
    for (uint32_t k = 0; k < copies; ++k)
    {
        const auto [out, outVl] = outs[k];
        Ptr<Packet> copy = packet->Copy();
        IbPacket::SetVl(copy, outVl);
        ++m_forwarded;
        const Time earliest =
            m_cutThrough ? EarliestStart(*m_ports[inPort], *m_ports[out], packet->GetSize())
                         : Time(0);
        if (shared != nullptr)
        {
            m_ports[out]->EnqueueForwardedCopy(copy, outVl, shared, earliest);
        }
        else
        {
            m_ports[out]->EnqueueForwarded(copy, outVl, PeekPointer(m_ports[inPort]), vl, earliest);
        }
    }
}

} // namespace ns3

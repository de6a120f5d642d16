/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-ib-transport.h"

#include "ns3/abort.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-connection-manager.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-range-checker.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveIbTransport");

NS_OBJECT_ENSURE_REGISTERED(CollectiveIbTransport);

namespace
{
/// Immediate-data bit marking the last fragment of a message.
constexpr uint32_t LAST_FRAGMENT = 0x80000000u;

/**
 * @param self local rank
 * @param peer remote rank
 * @param lane queue pair index towards the peer
 * @return the endpoint's key
 */
uint64_t
Key(uint32_t self, uint32_t peer, uint32_t lane)
{
    return (uint64_t(self) << 36) | (uint64_t(peer) << 4) | lane;
}

/**
 * @param peer remote rank
 * @param lane queue pair index
 * @param slot buffer slot
 * @return the work request id of a slot's send or receive
 */
uint64_t
WrId(uint32_t peer, uint32_t lane, uint32_t slot)
{
    return (uint64_t(peer) << 32) | (uint64_t(lane) << 16) | slot;
}
} // namespace

TypeId
CollectiveIbTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveIbTransport")
            .SetParent<CollectiveTransport>()
            .SetGroupName("Infiniband")
            .AddConstructor<CollectiveIbTransport>()
            .AddAttribute("SlotSize",
                          "Bytes of each send and receive buffer: messages are cut into "
                          "fragments of at most this size, one SEND_WITH_IMM each.",
                          UintegerValue(65536),
                          MakeUintegerAccessor(&CollectiveIbTransport::m_slotSize),
                          MakeIbUintegerChecker<uint32_t>("CollectiveIbTransport", "SlotSize", 64))
            .AddAttribute(
                "RecvSlots",
                "Receive buffers each queue pair keeps posted (and fragments a "
                "sender keeps outstanding per peer).",
                UintegerValue(16),
                MakeUintegerAccessor(&CollectiveIbTransport::m_recvSlots),
                MakeIbUintegerChecker<uint32_t>("CollectiveIbTransport", "RecvSlots", 1, 4096))
            .AddAttribute(
                "ServiceLevel",
                "SL of the queue pairs when no subnet manager is given.",
                UintegerValue(0),
                MakeUintegerAccessor(&CollectiveIbTransport::m_sl),
                MakeIbUintegerChecker<uint8_t>("CollectiveIbTransport", "ServiceLevel", 0, 15))
            .AddAttribute("Timeout",
                          "Local ACK timeout exponent of the queue pairs: 4.096 us x 2^Timeout "
                          "(14, about 67 ms, as perftest sets it; 0 = never).",
                          UintegerValue(14),
                          MakeUintegerAccessor(&CollectiveIbTransport::m_timeout),
                          MakeIbUintegerChecker<uint8_t>("CollectiveIbTransport", "Timeout", 0, 31))
            .AddAttribute(
                "RetryCount",
                "Transport retries of the queue pairs before a send fails with "
                "RETRY_EXC_ERR (verbs retry_cnt, 7 at most).",
                UintegerValue(7),
                MakeUintegerAccessor(&CollectiveIbTransport::m_retryCnt),
                MakeIbUintegerChecker<uint8_t>("CollectiveIbTransport", "RetryCount", 0, 7))
            .AddAttribute("QueuePairsPerPeer",
                          "RC queue pairs between two ranks that talk: a message of stream k (the "
                          "tag's low 4 bits, the communicator's channel) goes over queue pair "
                          "k mod this, so that channels are separate connections, as NCCL's are "
                          "(on RoCE each has its own UDP source port, a flow of its own for ECMP). "
                          "Each queue pair has its own RecvSlots buffers.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&CollectiveIbTransport::m_lanes),
                          MakeIbUintegerChecker<uint32_t>("CollectiveIbTransport",
                                                          "QueuePairsPerPeer",
                                                          1,
                                                          16));
    return tid;
}

CollectiveIbTransport::CollectiveIbTransport()
    : m_slotSize(65536),
      m_recvSlots(16),
      m_sl(0),
      m_lanes(1),
      m_dataMode(false)
{
}

CollectiveIbTransport::~CollectiveIbTransport()
{
    ReleaseEndpoints(); // (a transport dropped without Dispose)
    // the completion queues live on with their HCAs: make them forget this object
    for (auto& cq : m_scq)
    {
        cq->SetCompletionCallback(MakeNullCallback<void, const IbWorkCompletion&>());
    }
    for (auto& cq : m_rcq)
    {
        cq->SetCompletionCallback(MakeNullCallback<void, const IbWorkCompletion&>());
    }
}

void
CollectiveIbTransport::Setup(const std::vector<Ptr<IbHca>>& hcas, Ptr<IbSubnetManager> sm)
{
    NS_LOG_FUNCTION(this << hcas.size());
    NS_ABORT_MSG_IF(hcas.empty(), "CollectiveIbTransport: no ranks");
    NS_ABORT_MSG_IF(hcas.size() >= (1u << 28),
                    "CollectiveIbTransport: " << hcas.size() << " ranks; at most 2^28 - 1");
    m_hcas = hcas;
    m_sm = sm;
    m_dataMode = hcas[0]->IsDataMode();
    for (uint32_t r = 0; r < hcas.size(); ++r)
    {
        NS_ABORT_MSG_UNLESS(hcas[r]->IsDataMode() == m_dataMode,
                            "CollectiveIbTransport: mixed data-mode and virtual HCAs");
        Ptr<IbCompletionQueue> s = hcas[r]->CreateCq(65536);
        Ptr<IbCompletionQueue> q = hcas[r]->CreateCq(65536);
        s->SetCompletionCallback(MakeCallback(&CollectiveIbTransport::SendDone, this).Bind(r));
        q->SetCompletionCallback(MakeCallback(&CollectiveIbTransport::RecvDone, this).Bind(r));
        m_scq.push_back(s);
        m_rcq.push_back(q);
    }
}

uint32_t
CollectiveIbTransport::GetNRanks() const
{
    return m_hcas.size();
}

bool
CollectiveIbTransport::IsDataMode() const
{
    return m_dataMode;
}

Ptr<IbQueuePair>
CollectiveIbTransport::GetQueuePair(uint32_t a, uint32_t b) const
{
    for (uint32_t lane = 0; lane < m_lanes; ++lane)
    {
        auto it = m_endpoints.find(Key(a, b, lane));
        if (it != m_endpoints.end())
        {
            return it->second.qp;
        }
    }
    return nullptr;
}

uint32_t
CollectiveIbTransport::GetNQueuePairs() const
{
    return m_endpoints.size();
}

CollectiveIbTransport::Endpoint&
CollectiveIbTransport::GetEndpoint(uint32_t a, uint32_t b, uint32_t lane)
{
    const uint64_t key = Key(a, b, lane);
    auto it = m_endpoints.find(key);
    if (it != m_endpoints.end())
    {
        return it->second;
    }
    NS_LOG_LOGIC("connecting ranks " << a << " and " << b << " (queue pair " << lane << ")");
    if (m_sm && m_sm->GetTopology().HasSeparateSubnets())
    {
        const uint32_t sa = m_sm->GetSubnet(m_hcas[a]->GetPort(1)->GetNode());
        const uint32_t sb = m_sm->GetSubnet(m_hcas[b]->GetPort(1)->GetNode());
        NS_ABORT_MSG_IF(sa != sb,
                        "CollectiveIbTransport: ranks "
                            << a << " and " << b << " (nodes "
                            << m_hcas[a]->GetPort(1)->GetNode()->GetId() << " and "
                            << m_hcas[b]->GetPort(1)->GetNode()->GetId() << ") are in subnets "
                            << sa << " and " << sb
                            << " of the fabric, which nothing joins (the rails of a rail-only "
                               "fabric). Keep fabric traffic on a rail (collectives \"hier\", "
                               "with RailAwareAllToAll for all-to-all) or build the fabric "
                               "with spines (RailOptimized2Level)");
    }
    const uint32_t access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
    const uint64_t region = uint64_t(m_slotSize) * m_recvSlots;
    for (uint32_t side = 0; side < 2; ++side)
    {
        const uint32_t self = side == 0 ? a : b;
        const uint32_t peer = side == 0 ? b : a;
        Endpoint& ep = m_endpoints[Key(self, peer, lane)];
        ep.self = self;
        ep.peer = peer;
        ep.lane = lane;
        ep.qp = m_hcas[self]->CreateQp(IbQpType::RC,
                                       m_scq[self],
                                       m_rcq[self],
                                       m_recvSlots + 1,
                                       m_recvSlots + 1);
        ep.sendMr = m_hcas[self]->RegisterMemory(region, access);
        ep.recvMr = m_hcas[self]->RegisterMemory(region, access);
        ep.slotMsg.resize(m_recvSlots);
        for (uint32_t s = m_recvSlots; s > 0; --s)
        {
            ep.freeSlots.push_back(s - 1);
        }
    }
    Endpoint& ea = m_endpoints[key];
    Endpoint& eb = m_endpoints[Key(b, a, lane)];
    IbQpAttr base;
    base.sl = m_sl;
    base.timeout = m_timeout;
    base.retryCnt = m_retryCnt;
    IbConnectionManager::ConnectRc(ea.qp, eb.qp, m_sm, base);
    for (uint32_t s = 0; s < m_recvSlots; ++s)
    {
        PostRecvSlot(ea, s);
        PostRecvSlot(eb, s);
    }
    return ea;
}

void
CollectiveIbTransport::PostRecvSlot(Endpoint& ep, uint32_t slot)
{
    IbRecvWr wr;
    wr.wrId = WrId(ep.peer, ep.lane, slot);
    wr.sge.addr = ep.recvMr->GetAddr() + uint64_t(slot) * m_slotSize;
    wr.sge.length = m_slotSize;
    wr.sge.lkey = ep.recvMr->GetLkey();
    std::string err;
    NS_ABORT_MSG_UNLESS(ep.qp->PostRecv(wr, &err), "CollectiveIbTransport: PostRecv: " << err);
}

void
CollectiveIbTransport::Send(uint32_t src,
                            uint32_t dst,
                            uint32_t tag,
                            uint64_t bytes,
                            const uint8_t* data,
                            Callback<void> sent)
{
    NS_LOG_FUNCTION(this << src << dst << tag << bytes);
    NS_ABORT_MSG_IF(src == dst || src >= m_hcas.size() || dst >= m_hcas.size(),
                    "CollectiveIbTransport: bad ranks " << src << " -> " << dst);
    NS_ABORT_MSG_IF(tag & LAST_FRAGMENT, "CollectiveIbTransport: tag uses bit 31");
    auto m = std::make_shared<OutMsg>();
    m->tag = tag;
    m->bytes = bytes;
    m->sent = sent;
    if (data != nullptr && m_dataMode)
    {
        m->data.assign(data, data + bytes);
        m->hasData = true;
    }
    CountSent(bytes);
    Endpoint& ep = GetEndpoint(src, dst, StreamOf(tag) % m_lanes);
    ep.queue.push_back(m);
    Pump(ep);
}

void
CollectiveIbTransport::Pump(Endpoint& ep)
{
    while (!ep.queue.empty() && !ep.freeSlots.empty())
    {
        std::shared_ptr<OutMsg> m = ep.queue.front();
        const uint32_t slot = ep.freeSlots.back();
        ep.freeSlots.pop_back();
        const uint64_t off = m->nextOffset;
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(m->bytes - off, m_slotSize));
        m->nextOffset += len;
        const bool last = m->nextOffset >= m->bytes;
        const uint64_t addr = ep.sendMr->GetAddr() + uint64_t(slot) * m_slotSize;
        if (m->hasData && len > 0)
        {
            std::memcpy(ep.sendMr->GetPointer(addr), m->data.data() + off, len);
        }
        IbSendWr wr;
        wr.wrId = WrId(ep.peer, ep.lane, slot);
        wr.opcode = IbWrOpcode::SEND_WITH_IMM;
        wr.sge.addr = addr;
        wr.sge.length = len;
        wr.sge.lkey = ep.sendMr->GetLkey();
        wr.signaled = true;
        // Small fragments go inline, as UCX and MPI libraries post them (up to the HCA's
        // MaxInlineData; without a PcieLink this changes no timing).
        wr.inlineData = len <= ep.qp->GetHca()->GetMaxInlineData();
        wr.immData = m->tag | (last ? LAST_FRAGMENT : 0);
        ep.slotMsg[slot] = m;
        ++m->fragsOutstanding;
        if (last)
        {
            m->allPosted = true;
            ep.queue.pop_front();
        }
        std::string err;
        NS_ABORT_MSG_UNLESS(ep.qp->PostSend(wr, &err), "CollectiveIbTransport: PostSend: " << err);
    }
}

void
CollectiveIbTransport::SendDone(uint32_t rank, const IbWorkCompletion& wc)
{
    const uint32_t peer = static_cast<uint32_t>(wc.wrId >> 32);
    const uint32_t lane = static_cast<uint32_t>((wc.wrId >> 16) & 0xFFFFu);
    const uint32_t slot = static_cast<uint32_t>(wc.wrId & 0xFFFFu);
    Endpoint& ep = m_endpoints.at(Key(rank, peer, lane));
    NS_ABORT_MSG_UNLESS(wc.status == IbWcStatus::SUCCESS,
                        "CollectiveIbTransport: a send from rank "
                            << rank << " to rank " << peer
                            << " failed: " << ep.qp->DescribeCompletion(wc));
    std::shared_ptr<OutMsg> m = ep.slotMsg[slot];
    ep.slotMsg[slot] = nullptr;
    ep.freeSlots.push_back(slot);
    --m->fragsOutstanding;
    Pump(ep);
    if (m->allPosted && m->fragsOutstanding == 0 && !m->sent.IsNull())
    {
        Callback<void> cb = m->sent;
        m->sent = Callback<void>();
        cb();
    }
}

void
CollectiveIbTransport::RecvDone(uint32_t rank, const IbWorkCompletion& wc)
{
    if (wc.status == IbWcStatus::WR_FLUSH_ERR)
    {
        return;
    }
    NS_ABORT_MSG_UNLESS(wc.status == IbWcStatus::SUCCESS,
                        "CollectiveIbTransport: receive failed on rank "
                            << rank << ": " << IbWcStatusName(wc.status));
    NS_ABORT_MSG_UNLESS(wc.withImm, "CollectiveIbTransport: message without immediate data");
    const uint32_t peer = static_cast<uint32_t>(wc.wrId >> 32);
    const uint32_t lane = static_cast<uint32_t>((wc.wrId >> 16) & 0xFFFFu);
    const uint32_t slot = static_cast<uint32_t>(wc.wrId & 0xFFFFu);
    Endpoint& ep = m_endpoints.at(Key(rank, peer, lane));
    if (m_dataMode && wc.byteLen > 0)
    {
        const uint64_t addr = ep.recvMr->GetAddr() + uint64_t(slot) * m_slotSize;
        const uint8_t* p = ep.recvMr->GetPointer(addr);
        ep.rxData.insert(ep.rxData.end(), p, p + wc.byteLen);
        ep.rxHasData = true;
    }
    ep.rxBytes += wc.byteLen;
    PostRecvSlot(ep, slot);
    if (wc.immData & LAST_FRAGMENT)
    {
        const uint32_t tag = wc.immData & ~LAST_FRAGMENT;
        const uint64_t bytes = ep.rxBytes;
        std::vector<uint8_t> data;
        data.swap(ep.rxData);
        const bool hasData = ep.rxHasData;
        ep.rxBytes = 0;
        ep.rxHasData = false;
        Deliver(peer, rank, tag, bytes, hasData ? data.data() : nullptr);
    }
}

void
CollectiveIbTransport::ReleaseEndpoints()
{
    // The HCAs keep what they handed out: give the queue pairs and the regions (in data
    // mode, 2 x SlotSize x RecvSlots bytes per connected pair and direction) back, so that
    // communicators built and dropped one after another on a fabric do not pile them up.
    // (After Simulator::Destroy the HCAs have already let them go.)
    for (auto& [key, ep] : m_endpoints)
    {
        Ptr<IbHca> hca = ep.self < m_hcas.size() ? m_hcas[ep.self] : nullptr;
        if (hca)
        {
            hca->Release(ep.qp, {ep.sendMr, ep.recvMr});
        }
    }
    m_endpoints.clear();
}

void
CollectiveIbTransport::DoDispose()
{
    ReleaseEndpoints();
    for (auto& cq : m_scq)
    {
        cq->SetCompletionCallback(MakeNullCallback<void, const IbWorkCompletion&>());
    }
    for (auto& cq : m_rcq)
    {
        cq->SetCompletionCallback(MakeNullCallback<void, const IbWorkCompletion&>());
    }
    m_scq.clear();
    m_rcq.clear();
    m_hcas.clear();
    m_sm = nullptr;
    CollectiveTransport::DoDispose();
}

} // namespace ns3

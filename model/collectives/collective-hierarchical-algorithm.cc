/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-hierarchical-algorithm.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveHierarchicalAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveHierarchicalAlgorithm);

/// The short names CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_hierName("hier", "ns3::CollectiveHierarchicalAlgorithm");
/// (long form)
static const CollectiveAlgorithmName g_hierLongName("hierarchical",
                                                    "ns3::CollectiveHierarchicalAlgorithm");

TypeId
CollectiveHierarchicalAlgorithm::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveHierarchicalAlgorithm")
            .SetParent<CollectiveAlgorithm>()
            .SetGroupName("Infiniband")
            .AddConstructor<CollectiveHierarchicalAlgorithm>()
            .AddAttribute("GpusPerServer",
                          "GPUs per server (CollectiveNvlinkTransport's GpusPerServer; "
                          "CollectiveHelper::SetGpusPerServer sets both). 1: a plain ring.",
                          UintegerValue(8),
                          MakeUintegerAccessor(&CollectiveHierarchicalAlgorithm::m_gpusPerServer),
                          MakeIbUintegerChecker<uint32_t>("CollectiveHierarchicalAlgorithm",
                                                          "GpusPerServer",
                                                          1,
                                                          1024))
            .AddAttribute("RailAwareAllToAll",
                          "All-to-all through the rails: what GPU k has for GPU k' of another "
                          "server goes first over NVLink to its own server's GPU k', which "
                          "sends it on its rail (NCCL's PXN); false: straight to the "
                          "destination, across rails in the fabric.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&CollectiveHierarchicalAlgorithm::m_railAware),
                          MakeBooleanChecker())
            .AddAttribute("Channels",
                          "Parts each allreduce is split over, each run through all three "
                          "phases on its own message stream (NCCL's channels; "
                          "CollectiveIbTransport's QueuePairsPerPeer gives each a queue pair).",
                          UintegerValue(1),
                          MakeUintegerAccessor(&CollectiveHierarchicalAlgorithm::m_channels),
                          MakeIbUintegerChecker<uint32_t>("CollectiveHierarchicalAlgorithm",
                                                          "Channels",
                                                          1,
                                                          16));
    return tid;
}

CollectiveHierarchicalAlgorithm::CollectiveHierarchicalAlgorithm()
    : m_gpusPerServer(8),
      m_railAware(true),
      m_channels(1)
{
}

CollectiveHierarchicalAlgorithm::~CollectiveHierarchicalAlgorithm() = default;

std::string
CollectiveHierarchicalAlgorithm::GetName() const
{
    return "hier";
}

void
CollectiveHierarchicalAlgorithm::AppendMapped(const Ctx& c,
                                              const std::vector<CollectiveStep>& steps,
                                              const std::vector<uint32_t>& members)
{
    for (CollectiveStep s : steps)
    {
        s.peer = members[s.peer];
        c.prog->push_back(s);
    }
}

uint32_t
CollectiveHierarchicalAlgorithm::Gpus(uint32_t n) const
{
    const uint32_t g = std::min(m_gpusPerServer, n);
    NS_ABORT_MSG_UNLESS(n % g == 0,
                        "CollectiveHierarchicalAlgorithm: " << n
                                                            << " ranks are not whole servers of "
                                                            << g << " GPUs (GpusPerServer)");
    return g;
}

uint64_t
CollectiveHierarchicalAlgorithm::ScratchBytes(const CollectiveOpSpec& spec, uint32_t n) const
{
    const bool v = spec.kind == CollectiveKind::ALLTOALLV;
    if ((spec.kind != CollectiveKind::ALLTOALL && !v) || !m_railAware || n < 2)
    {
        return 0;
    }
    // Relay slots: [from local GPU][to server], one segment each.
    const uint32_t g = Gpus(n);
    const uint32_t servers = n / g;
    const uint64_t elem = CollectiveReduction::SizeOf(spec.type);
    if (!v)
    {
        return uint64_t(g) * servers * spec.count * elem;
    }
    CheckCounts(spec, n);
    uint64_t most = 0;
    for (uint32_t r = 0; r < n; ++r)
    {
        const uint32_t s = r / g;
        const uint32_t k = r % g;
        uint64_t sum = 0;
        for (uint32_t kk = 0; kk < g; ++kk)
        {
            for (uint32_t dst = 0; dst < servers; ++dst)
            {
                sum += spec.counts->Count(s * g + kk, dst * g + k);
            }
        }
        most = std::max(most, sum);
    }
    return most * elem;
}

void
CollectiveHierarchicalAlgorithm::BuildAllToAll(const Ctx& c, uint64_t seg) const
{
    BuildAllToAllSized(c, nullptr, seg, 2 * uint64_t(c.n) * seg);
}

void
CollectiveHierarchicalAlgorithm::BuildAllToAllV(const Ctx& c,
                                                const CollectiveAllToAllVCounts& v) const
{
    BuildAllToAllSized(c, &v, 0, v.MaxBufferCount() * c.elem);
}

void
CollectiveHierarchicalAlgorithm::BuildAllToAllSized(const Ctx& c,
                                                    const CollectiveAllToAllVCounts* v,
                                                    uint64_t seg,
                                                    uint64_t relayBase) const
{
    const uint32_t g = Gpus(c.n);
    const uint32_t servers = c.n / g;
    const uint32_t s = c.rank / g;
    const uint32_t k = c.rank % g;
    const uint32_t me = c.rank;
    const uint64_t n = c.n;
    const uint32_t elem = c.elem;
    auto rank = [g](uint32_t server, uint32_t gpu) { return server * g + gpu; };
    // Bytes from one rank to another, and where this rank's pieces are.
    auto len = [v, seg, elem](uint32_t from, uint32_t to) {
        return v != nullptr ? v->Count(from, to) * elem : seg;
    };
    auto sendOff = [v, seg, elem, me](uint32_t to) {
        return v != nullptr ? v->SendOffset(me, to) * elem : to * seg;
    };
    auto recvOff = [v, seg, elem, me, n](uint32_t from) {
        return v != nullptr ? v->RecvOffset(me, from) * elem : (n + from) * seg;
    };
    auto send = [&](uint32_t to, uint64_t off, uint64_t bytes) {
        Add(c, CollectiveStep::SEND, to, off, bytes);
    };
    auto recv = [&](uint32_t from, uint64_t off, uint64_t bytes) {
        Add(c, CollectiveStep::RECV_COPY, from, off, bytes);
    };
    if (!m_railAware || servers == 1)
    {
        // Straight: server steps j = 1..N-1, each G permutations of the NICs, then (after
        // the first) the server's own GPUs over NVLink.
        auto local = [&]() {
            for (uint32_t m = 1; m < g; ++m)
            {
                const uint32_t to = rank(s, (k + m) % g);
                const uint32_t from = rank(s, (k + g - m) % g);
                send(to, sendOff(to), len(me, to));
                recv(from, recvOff(from), len(from, me));
            }
        };
        for (uint32_t j = 1; j < servers; ++j)
        {
            for (uint32_t m = 0; m < g; ++m)
            {
                const uint32_t to = rank((s + j) % servers, (k + m) % g);
                const uint32_t from = rank((s + servers - j) % servers, (k + g - m) % g);
                send(to, sendOff(to), len(me, to));
                recv(from, recvOff(from), len(from, me));
            }
            if (j == 1)
            {
                local();
            }
        }
        if (servers == 1)
        {
            local();
        }
        return;
    }
    // Relay slots [from local GPU kk][to server dst]: what GPU kk of this server has for
    // GPU k of server dst, in that order from relayBase.
    std::vector<uint64_t> slotOff(uint64_t(g) * servers);
    uint64_t next = relayBase;
    for (uint32_t kk = 0; kk < g; ++kk)
    {
        for (uint32_t dst = 0; dst < servers; ++dst)
        {
            slotOff[uint64_t(kk) * servers + dst] = next;
            next += len(rank(s, kk), rank(dst, k));
        }
    }
    auto slot = [&](uint32_t kk, uint32_t dst) { return slotOff[uint64_t(kk) * servers + dst]; };
    // Program order matters where a rank's sends share its send window: the rail sends of
    // its own segments come first, then for m = 1 .. G-1 the NVLink exchange that brings
    // GPU k + m's segments for this rail (GPU k + m sends them in its m-th exchange, to
    // k + m - m = k) and at once their rail sends.
    auto railSends = [&](uint32_t m) {
        const uint32_t kk = (k + m) % g; // whose segments: GPU kk of this server
        for (uint32_t j = 1; j < servers; ++j)
        {
            const uint32_t dst = (s + j) % servers;
            const uint32_t src = (s + servers - j) % servers;
            const uint32_t to = rank(dst, k);
            send(to, kk == k ? sendOff(to) : slot(kk, dst), len(rank(s, kk), to));
            recv(rank(src, k), recvOff(rank(src, kk)), len(rank(src, kk), me));
        }
    };
    railSends(0);
    for (uint32_t m = 1; m < g; ++m)
    {
        // Over NVLink to GPU k - m: its own segment, then what it relays to GPU k - m of
        // every other server; from GPU k + m the same the other way.
        const uint32_t kTo = (k + g - m) % g;
        const uint32_t kFrom = (k + m) % g;
        const uint32_t to = rank(s, kTo);
        const uint32_t from = rank(s, kFrom);
        send(to, sendOff(to), len(me, to));
        recv(from, recvOff(from), len(from, me));
        for (uint32_t j = 1; j < servers; ++j)
        {
            const uint32_t dst = (s + j) % servers;
            send(to, sendOff(rank(dst, kTo)), len(me, rank(dst, kTo)));
            recv(from, slot(kFrom, dst), len(from, rank(dst, k)));
        }
        railSends(m);
    }
}

void
CollectiveHierarchicalAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    std::vector<uint64_t> chOff;
    std::vector<uint64_t> chLen;
    Split(bytes, m_channels, c.elem, chOff, chLen);
    BuildOnChannels(c, m_channels, [&](const Ctx& sub, uint32_t k) {
        BuildAllReduceRange(sub, chOff[k], chLen[k]);
    });
}

void
CollectiveHierarchicalAlgorithm::BuildAllReduceRange(const Ctx& c,
                                                     uint64_t base,
                                                     uint64_t bytes) const
{
    const uint32_t g = Gpus(c.n);
    const uint32_t servers = c.n / g;
    const uint32_t server = c.rank / g;
    const uint32_t gpu = c.rank % g;
    std::vector<uint32_t> local(g);
    for (uint32_t k = 0; k < g; ++k)
    {
        local[k] = server * g + k;
    }
    std::vector<uint32_t> rail(servers);
    for (uint32_t s = 0; s < servers; ++s)
    {
        rail[s] = s * g + gpu;
    }
    std::vector<uint64_t> segOff;
    std::vector<uint64_t> segLen;
    Split(bytes, g, c.elem, segOff, segLen);
    for (uint64_t& o : segOff)
    {
        o += base;
    }
    std::vector<CollectiveStep> steps;
    Ctx in = c;
    in.rank = gpu;
    in.n = g;
    in.prog = &steps;
    Ctx across = c;
    across.rank = server;
    across.n = servers;
    across.prog = &steps;
    // 1. Reduce-scatter in the server: GPU k ends with segment k reduced over the server.
    RingReduceScatter(in, segOff, segLen);
    AppendMapped(c, steps, local);
    steps.clear();
    // 2. Segment k reduced over the servers by the k-th GPUs, one ring per rail.
    std::vector<uint64_t> subOff;
    std::vector<uint64_t> subLen;
    Split(segLen[gpu], servers, c.elem, subOff, subLen);
    for (uint64_t& o : subOff)
    {
        o += segOff[gpu];
    }
    RingReduceScatter(across, subOff, subLen);
    RingAllGather(across, subOff, subLen);
    AppendMapped(c, steps, rail);
    steps.clear();
    // 3. Allgather in the server: every GPU gets every segment.
    RingAllGather(in, segOff, segLen);
    AppendMapped(c, steps, local);
}

} // namespace ns3

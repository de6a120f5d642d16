/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-algorithm.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/object-factory.h"

#include <algorithm>
#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveAlgorithm);

TypeId
CollectiveAlgorithm::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveAlgorithm").SetParent<Object>().SetGroupName("Infiniband");
    return tid;
}

CollectiveAlgorithm::CollectiveAlgorithm() = default;

CollectiveAlgorithm::~CollectiveAlgorithm() = default;

namespace
{
/// @return short name -> TypeId name of every algorithm that registered one
std::map<std::string, std::string>&
ShortNames()
{
    static std::map<std::string, std::string> names;
    return names;
}
} // namespace

CollectiveAlgorithmName::CollectiveAlgorithmName(const char* shortName, const char* typeIdName)
{
    ShortNames()[shortName] = typeIdName;
}

std::vector<std::string>
CollectiveAlgorithm::GetShortNames()
{
    std::vector<std::string> out;
    for (const auto& [shortName, typeIdName] : ShortNames())
    {
        out.push_back(shortName);
    }
    return out;
}

Ptr<CollectiveAlgorithm>
CollectiveAlgorithm::CreateByName(const std::string& name)
{
    const auto alias = ShortNames().find(name);
    const std::string typeIdName = alias != ShortNames().end() ? alias->second : name;
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeIdName, &tid) ||
        !tid.IsChildOf(CollectiveAlgorithm::GetTypeId()) || !tid.HasConstructor())
    {
        std::string known;
        for (const auto& shortName : GetShortNames())
        {
            known += (known.empty() ? "" : ", ") + shortName;
        }
        NS_ABORT_MSG("unknown collective algorithm '"
                     << name << "': use one of " << known
                     << ", or the TypeId name of a CollectiveAlgorithm subclass (e.g. "
                        "ns3::CollectiveRingAlgorithm)");
    }
    ObjectFactory factory;
    factory.SetTypeId(tid);
    return factory.Create<CollectiveAlgorithm>();
}

std::string
CollectiveAlgorithm::KindName(CollectiveKind kind)
{
    switch (kind)
    {
    case CollectiveKind::ALLREDUCE:
        return "allreduce";
    case CollectiveKind::REDUCE_SCATTER:
        return "reducescatter";
    case CollectiveKind::ALLGATHER:
        return "allgather";
    case CollectiveKind::BROADCAST:
        return "broadcast";
    case CollectiveKind::BARRIER:
        return "barrier";
    case CollectiveKind::REDUCE:
        return "reduce";
    case CollectiveKind::ALLTOALL:
        return "alltoall";
    case CollectiveKind::ALLTOALLV:
        return "alltoallv";
    }
    return "?";
}

uint64_t
CollectiveAlgorithm::BufferBytes(const CollectiveOpSpec& spec, uint32_t n)
{
    const uint64_t elem = CollectiveReduction::SizeOf(spec.type);
    switch (spec.kind)
    {
    case CollectiveKind::ALLREDUCE:
    case CollectiveKind::BROADCAST:
    case CollectiveKind::REDUCE:
        return spec.count * elem;
    case CollectiveKind::REDUCE_SCATTER:
    case CollectiveKind::ALLGATHER:
        return uint64_t(n) * spec.count * elem;
    case CollectiveKind::BARRIER:
        return 0;
    case CollectiveKind::ALLTOALL:
        return 2 * uint64_t(n) * spec.count * elem;
    case CollectiveKind::ALLTOALLV:
        CheckCounts(spec, n);
        return spec.counts->MaxBufferCount() * elem;
    }
    return 0;
}

void
CollectiveAlgorithm::Build(const CollectiveOpSpec& spec,
                           uint32_t rank,
                           uint32_t n,
                           uint64_t chunkBytes,
                           std::vector<CollectiveStep>& prog) const
{
    Ctx c;
    c.rank = rank;
    c.n = n;
    c.elem = CollectiveReduction::SizeOf(spec.type);
    c.chunk = std::max<uint64_t>(c.elem, chunkBytes / c.elem * c.elem);
    c.prog = &prog;
    if (n < 2)
    {
        return;
    }
    const uint64_t bytes = spec.count * c.elem;
    switch (spec.kind)
    {
    case CollectiveKind::ALLREDUCE:
        BuildAllReduce(c, bytes);
        break;
    case CollectiveKind::REDUCE_SCATTER:
        BuildReduceScatter(c, bytes);
        break;
    case CollectiveKind::ALLGATHER:
        BuildAllGather(c, bytes);
        break;
    case CollectiveKind::BROADCAST:
        NS_ABORT_MSG_UNLESS(spec.root < n,
                            "broadcast root " << spec.root << " out of range: the communicator has "
                                              << n << " ranks (0.." << n - 1 << ")");
        BuildBroadcast(c, bytes, spec.root);
        break;
    case CollectiveKind::BARRIER:
        BuildBarrier(c);
        break;
    case CollectiveKind::REDUCE:
        NS_ABORT_MSG_UNLESS(spec.root < n,
                            "reduce root " << spec.root << " out of range: the communicator has "
                                           << n << " ranks (0.." << n - 1 << ")");
        BuildReduce(c, bytes, spec.root);
        break;
    case CollectiveKind::ALLTOALL:
        BuildAllToAll(c, bytes);
        break;
    case CollectiveKind::ALLTOALLV:
        CheckCounts(spec, n);
        BuildAllToAllV(c, *spec.counts);
        break;
    }
}

void
CollectiveAlgorithm::CheckCounts(const CollectiveOpSpec& spec, uint32_t n)
{
    NS_ABORT_MSG_IF(spec.counts == nullptr,
                    "alltoallv without sizes: set CollectiveOpSpec::counts to a "
                    "CollectiveAllToAllVCounts of the communicator's "
                        << n << " ranks");
    NS_ABORT_MSG_UNLESS(spec.counts->GetN() == n,
                        "alltoallv sizes for " << spec.counts->GetN()
                                               << " ranks on a communicator of " << n
                                               << " ranks: give an n x n matrix for n = " << n);
}

void
CollectiveAlgorithm::BuildAllToAllV(const Ctx& c, const CollectiveAllToAllVCounts& v) const
{
    for (uint32_t k = 1; k < c.n; ++k)
    {
        const uint32_t to = (c.rank + k) % c.n;
        const uint32_t from = (c.rank + c.n - k) % c.n;
        Add(c,
            CollectiveStep::SEND,
            to,
            v.SendOffset(c.rank, to) * c.elem,
            v.Count(c.rank, to) * c.elem);
        Add(c,
            CollectiveStep::RECV_COPY,
            from,
            v.RecvOffset(c.rank, from) * c.elem,
            v.Count(from, c.rank) * c.elem);
    }
}

void
CollectiveAlgorithm::BuildAllToAll(const Ctx& c, uint64_t segBytes) const
{
    const uint64_t recvBase = uint64_t(c.n) * segBytes;
    for (uint32_t k = 1; k < c.n; ++k)
    {
        const uint32_t to = (c.rank + k) % c.n;
        const uint32_t from = (c.rank + c.n - k) % c.n;
        Add(c, CollectiveStep::SEND, to, to * segBytes, segBytes);
        Add(c, CollectiveStep::RECV_COPY, from, recvBase + from * segBytes, segBytes);
    }
}

uint64_t
CollectiveAlgorithm::ScratchBytes(const CollectiveOpSpec& spec, uint32_t n) const
{
    return 0;
}

bool
CollectiveAlgorithm::StartInNetwork(const CollectiveOpSpec& spec,
                                    uint32_t n,
                                    std::vector<std::vector<uint8_t>>* buffers,
                                    RankDoneCallback rankDone,
                                    RestartCallback restart)
{
    return false;
}

void
CollectiveAlgorithm::Add(const Ctx& c,
                         CollectiveStep::Kind kind,
                         uint32_t peer,
                         uint64_t offset,
                         uint64_t bytes,
                         uint8_t channel)
{
    for (uint64_t done = 0; done < bytes; done += c.chunk)
    {
        CollectiveStep s;
        s.kind = kind;
        s.peer = peer;
        s.channel = channel;
        s.offset = offset + done;
        s.bytes = std::min(c.chunk, bytes - done);
        c.prog->push_back(s);
    }
}

void
CollectiveAlgorithm::BuildOnChannels(const Ctx& c,
                                     uint32_t channels,
                                     const std::function<void(const Ctx&, uint32_t)>& part)
{
    NS_ASSERT(channels >= 1 && channels <= 16);
    if (channels == 1)
    {
        part(c, 0);
        return;
    }
    std::vector<std::vector<CollectiveStep>> parts(channels);
    for (uint32_t k = 0; k < channels; ++k)
    {
        Ctx sub = c;
        sub.prog = &parts[k];
        part(sub, k);
    }
    for (std::size_t i = 0;; ++i)
    {
        bool any = false;
        for (uint32_t k = 0; k < channels; ++k)
        {
            if (i < parts[k].size())
            {
                CollectiveStep s = parts[k][i];
                NS_ASSERT(s.channel == 0);
                s.channel = static_cast<uint8_t>(k);
                c.prog->push_back(s);
                any = true;
            }
        }
        if (!any)
        {
            break;
        }
    }
}

void
CollectiveAlgorithm::Split(uint64_t total,
                           uint32_t parts,
                           uint32_t elem,
                           std::vector<uint64_t>& offsets,
                           std::vector<uint64_t>& sizes)
{
    const uint64_t count = total / elem;
    offsets.assign(parts, 0);
    sizes.assign(parts, 0);
    uint64_t off = 0;
    for (uint32_t i = 0; i < parts; ++i)
    {
        const uint64_t k = count / parts + (i < count % parts ? 1 : 0);
        offsets[i] = off;
        sizes[i] = k * elem;
        off += k * elem;
    }
}

void
CollectiveAlgorithm::RingReduceScatter(const Ctx& c,
                                       const std::vector<uint64_t>& off,
                                       const std::vector<uint64_t>& len)
{
    const uint32_t n = c.n;
    const uint32_t right = (c.rank + 1) % n;
    const uint32_t left = (c.rank + n - 1) % n;
    for (uint32_t k = 0; k + 1 < n; ++k)
    {
        const uint32_t s = (c.rank + 2 * n - k - 1) % n;
        const uint32_t r = (c.rank + 2 * n - k - 2) % n;
        Add(c, CollectiveStep::SEND, right, off[s], len[s]);
        Add(c, CollectiveStep::RECV_REDUCE, left, off[r], len[r]);
    }
}

void
CollectiveAlgorithm::RingAllGather(const Ctx& c,
                                   const std::vector<uint64_t>& off,
                                   const std::vector<uint64_t>& len)
{
    const uint32_t n = c.n;
    const uint32_t right = (c.rank + 1) % n;
    const uint32_t left = (c.rank + n - 1) % n;
    for (uint32_t k = 0; k + 1 < n; ++k)
    {
        const uint32_t s = (c.rank + n - k) % n;
        const uint32_t r = (c.rank + 2 * n - k - 1) % n;
        Add(c, CollectiveStep::SEND, right, off[s], len[s]);
        Add(c, CollectiveStep::RECV_COPY, left, off[r], len[r]);
    }
}

void
CollectiveAlgorithm::BuildReduceScatter(const Ctx& c, uint64_t segBytes) const
{
    RingSegments(c, segBytes, 1, true);
}

void
CollectiveAlgorithm::BuildAllGather(const Ctx& c, uint64_t segBytes) const
{
    RingSegments(c, segBytes, 1, false);
}

void
CollectiveAlgorithm::RingSegments(const Ctx& c, uint64_t segBytes, uint32_t channels, bool reduce)
{
    // Channel k takes part k of every rank's segment.
    std::vector<uint64_t> chOff;
    std::vector<uint64_t> chLen;
    Split(segBytes, channels, c.elem, chOff, chLen);
    BuildOnChannels(c, channels, [&](const Ctx& sub, uint32_t k) {
        std::vector<uint64_t> off(c.n);
        std::vector<uint64_t> len(c.n, chLen[k]);
        for (uint32_t r = 0; r < c.n; ++r)
        {
            off[r] = uint64_t(r) * segBytes + chOff[k];
        }
        if (reduce)
        {
            RingReduceScatter(sub, off, len);
        }
        else
        {
            RingAllGather(sub, off, len);
        }
    });
}

namespace
{
/**
 * @param v a positive integer
 * @return its lowest set bit
 */
uint32_t
LowBit(uint32_t v)
{
    return v & (~v + 1);
}
} // namespace

void
CollectiveAlgorithm::BinomialReduce(const Ctx& c, uint64_t off, uint64_t len, uint32_t root)
{
    const uint32_t n = c.n;
    const uint32_t vr = (c.rank + n - root) % n;
    // children vr + m for m = 1, 2, 4, ... below the lowest set bit of vr (all m for root)
    std::vector<uint32_t> children;
    const uint32_t limit = vr == 0 ? n : LowBit(vr);
    for (uint32_t m = 1; m < limit && vr + m < n; m <<= 1)
    {
        children.push_back((vr + m + root) % n);
    }
    const bool hasParent = vr != 0;
    const uint32_t parent = (vr - (hasParent ? LowBit(vr) : 0) + root) % n;
    for (uint32_t ch : children)
    {
        c.prog->push_back({CollectiveStep::RECV_REDUCE, ch, off, len, false});
    }
    if (hasParent)
    {
        c.prog->push_back({CollectiveStep::SEND, parent, off, len, false});
    }
}

void
CollectiveAlgorithm::BinomialBroadcast(const Ctx& c, uint64_t off, uint64_t len, uint32_t root)
{
    const uint32_t n = c.n;
    const uint32_t vr = (c.rank + n - root) % n;
    std::vector<uint32_t> children; // largest subtree first
    const uint32_t limit = vr == 0 ? n : LowBit(vr);
    for (uint32_t m = 1; m < limit && vr + m < n; m <<= 1)
    {
        children.insert(children.begin(), (vr + m + root) % n);
    }
    const bool hasParent = vr != 0;
    const uint32_t parent = (vr - (hasParent ? LowBit(vr) : 0) + root) % n;
    if (hasParent)
    {
        c.prog->push_back({CollectiveStep::RECV_COPY, parent, off, len, false});
    }
    for (uint32_t ch : children)
    {
        c.prog->push_back({CollectiveStep::SEND, ch, off, len, false});
    }
}

void
CollectiveAlgorithm::BuildBroadcast(const Ctx& c, uint64_t bytes, uint32_t root) const
{
    for (uint64_t off = 0; off < bytes; off += c.chunk)
    {
        BinomialBroadcast(c, off, std::min(c.chunk, bytes - off), root);
    }
}

void
CollectiveAlgorithm::BuildReduce(const Ctx& c, uint64_t bytes, uint32_t root) const
{
    for (uint64_t off = 0; off < bytes; off += c.chunk)
    {
        BinomialReduce(c, off, std::min(c.chunk, bytes - off), root);
    }
}

void
CollectiveAlgorithm::BuildBarrier(const Ctx& c) const
{
    // dissemination: in round k send to rank + 2^k, receive from rank - 2^k
    for (uint32_t d = 1; d < c.n; d <<= 1)
    {
        c.prog->push_back({CollectiveStep::SEND, (c.rank + d) % c.n, 0, 0, true});
        c.prog->push_back({CollectiveStep::RECV_COPY, (c.rank + c.n - d) % c.n, 0, 0, true});
    }
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-hierarchical-algorithm.h"

#include "ns3/abort.h"
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
                                                          1024));
    return tid;
}

CollectiveHierarchicalAlgorithm::CollectiveHierarchicalAlgorithm()
    : m_gpusPerServer(8)
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

void
CollectiveHierarchicalAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    const uint32_t g = std::min(m_gpusPerServer, c.n);
    NS_ABORT_MSG_UNLESS(c.n % g == 0,
                        "CollectiveHierarchicalAlgorithm: " << c.n
                                                            << " ranks are not whole servers of "
                                                            << g << " GPUs (GpusPerServer)");
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

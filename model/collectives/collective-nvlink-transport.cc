/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-nvlink-transport.h"

#include "ns3/abort.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveNvlinkTransport");

NS_OBJECT_ENSURE_REGISTERED(CollectiveNvlinkTransport);

TypeId
CollectiveNvlinkTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveNvlinkTransport")
            .SetParent<CollectiveTransport>()
            .SetGroupName("Infiniband")
            .AddConstructor<CollectiveNvlinkTransport>()
            .AddAttribute("GpusPerServer",
                          "GPUs per server: ranks s * GpusPerServer .. (s + 1) * GpusPerServer "
                          "- 1 are the GPUs of server s and talk over its NVLink domain (8 on "
                          "HGX/DGX servers).",
                          UintegerValue(8),
                          MakeUintegerAccessor(&CollectiveNvlinkTransport::m_gpusPerServer),
                          MakeIbUintegerChecker<uint32_t>("CollectiveNvlinkTransport",
                                                          "GpusPerServer",
                                                          1,
                                                          1024))
            .AddAttribute("NvlinkBandwidth",
                          "NVLink bandwidth of one GPU in each direction (H100 SXM: 18 "
                          "NVLink 4 links, 450 GB/s; A100 SXM: 12 NVLink 3 links, 300 GB/s).",
                          DataRateValue(DataRate("3600Gbps")),
                          MakeDataRateAccessor(&CollectiveNvlinkTransport::m_bandwidth),
                          MakeDataRateChecker())
            .AddAttribute("NvlinkLatency",
                          "From a message's last byte leaving the NVLink domain's links to "
                          "its delivery (0.6 us: NCCL's per-hop NVLink latency of its "
                          "low-latency protocol).",
                          TimeValue(NanoSeconds(600)),
                          MakeTimeAccessor(&CollectiveNvlinkTransport::m_latency),
                          MakeIbTimeChecker("CollectiveNvlinkTransport", "NvlinkLatency", Time(0)));
    return tid;
}

CollectiveNvlinkTransport::CollectiveNvlinkTransport()
    : m_gpusPerServer(8),
      m_bandwidth("3600Gbps"),
      m_latency(NanoSeconds(600))
{
}

CollectiveNvlinkTransport::~CollectiveNvlinkTransport() = default;

void
CollectiveNvlinkTransport::DoDispose()
{
    if (m_fabric)
    {
        m_fabric->SetReceiveCallback(CollectiveTransport::ReceiveCallback());
    }
    m_fabric = nullptr;
    CollectiveTransport::DoDispose();
}

void
CollectiveNvlinkTransport::SetFabricTransport(Ptr<CollectiveTransport> fabric,
                                              std::vector<uint32_t> servers)
{
    NS_ABORT_MSG_UNLESS(fabric, "CollectiveNvlinkTransport: no fabric transport");
    NS_ABORT_MSG_IF(m_fabric, "CollectiveNvlinkTransport: the fabric transport is set already");
    NS_ABORT_MSG_UNLESS(m_bandwidth.GetBitRate() > 0,
                        "CollectiveNvlinkTransport: NvlinkBandwidth must be above 0");
    const uint32_t n = fabric->GetNRanks();
    if (servers.empty())
    {
        NS_ABORT_MSG_UNLESS(n % m_gpusPerServer == 0,
                            "CollectiveNvlinkTransport: "
                                << n << " ranks are not whole servers of " << m_gpusPerServer
                                << " GPUs (GpusPerServer); give a multiple of it, GPU k of "
                                   "each server in turn, or each rank's server");
        for (uint32_t r = 0; r < n; ++r)
        {
            servers.push_back(r / m_gpusPerServer);
        }
    }
    NS_ABORT_MSG_UNLESS(servers.size() == n,
                        "CollectiveNvlinkTransport: " << servers.size() << " servers given for "
                                                      << n << " ranks; give one per rank");
    m_server = std::move(servers);
    m_fabric = fabric;
    m_fabric->SetReceiveCallback(MakeCallback(&CollectiveNvlinkTransport::FromFabric, this));
    m_egressFree.assign(n, Time(0));
    m_ingressFree.assign(n, Time(0));
}

Ptr<CollectiveTransport>
CollectiveNvlinkTransport::GetFabricTransport() const
{
    return m_fabric;
}

uint32_t
CollectiveNvlinkTransport::GetNRanks() const
{
    NS_ABORT_MSG_UNLESS(m_fabric, "CollectiveNvlinkTransport: SetFabricTransport first");
    return m_fabric->GetNRanks();
}

bool
CollectiveNvlinkTransport::IsDataMode() const
{
    NS_ABORT_MSG_UNLESS(m_fabric, "CollectiveNvlinkTransport: SetFabricTransport first");
    return m_fabric->IsDataMode();
}

uint32_t
CollectiveNvlinkTransport::GetGpusPerServer() const
{
    return m_gpusPerServer;
}

uint32_t
CollectiveNvlinkTransport::GetServer(uint32_t rank) const
{
    return m_server.at(rank);
}

uint64_t
CollectiveNvlinkTransport::GetNvlinkMessages() const
{
    return m_nvlinkMessages;
}

uint64_t
CollectiveNvlinkTransport::GetNvlinkBytes() const
{
    return m_nvlinkBytes;
}

void
CollectiveNvlinkTransport::Send(uint32_t src,
                                uint32_t dst,
                                uint32_t tag,
                                uint64_t bytes,
                                const uint8_t* data,
                                Callback<void> sent)
{
    NS_ABORT_MSG_UNLESS(m_fabric, "CollectiveNvlinkTransport: SetFabricTransport first");
    NS_ABORT_MSG_IF(src == dst || src >= m_egressFree.size() || dst >= m_egressFree.size(),
                    "CollectiveNvlinkTransport: bad ranks " << src << " -> " << dst);
    if (GetServer(src) != GetServer(dst))
    {
        CountSent(bytes);
        m_fabric->Send(src, dst, tag, bytes, data, sent);
        return;
    }
    CountSent(bytes);
    ++m_nvlinkMessages;
    m_nvlinkBytes += bytes;
    const Time now = Simulator::Now();
    const Time ser = Seconds(static_cast<double>(bytes) * 8.0 / m_bandwidth.GetBitRate());
    const Time egressStart = std::max(now, m_egressFree[src]);
    const Time egressEnd = egressStart + ser;
    const Time ingressEnd = std::max(egressEnd, m_ingressFree[dst] + ser);
    m_egressFree[src] = egressEnd;
    m_ingressFree[dst] = ingressEnd;
    std::vector<uint8_t> copy;
    if (data != nullptr && bytes > 0)
    {
        copy.assign(data, data + bytes); // (the caller may change its buffer at once)
    }
    Simulator::Schedule(ingressEnd + m_latency - now,
                        &CollectiveNvlinkTransport::Arrived,
                        this,
                        src,
                        dst,
                        tag,
                        bytes,
                        std::move(copy));
    if (!sent.IsNull())
    {
        Simulator::Schedule(egressEnd - now, sent);
    }
}

void
CollectiveNvlinkTransport::Arrived(uint32_t src,
                                   uint32_t dst,
                                   uint32_t tag,
                                   uint64_t bytes,
                                   std::vector<uint8_t> data)
{
    Deliver(src, dst, tag, bytes, data.empty() ? nullptr : data.data());
}

void
CollectiveNvlinkTransport::FromFabric(uint32_t src,
                                      uint32_t dst,
                                      uint32_t tag,
                                      uint64_t bytes,
                                      const uint8_t* data)
{
    Deliver(src, dst, tag, bytes, data);
}

} // namespace ns3

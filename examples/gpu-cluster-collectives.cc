/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * GPU servers on a rail-optimized fabric: each GPU has its own NIC (NIC k of every server
 * on rail k's leaves), the GPUs of a server share an NVLink/NVSwitch domain. Runs an
 * allreduce (flat ring against the hierarchical NVLink + per-rail ring) or an all-to-all
 * (pairwise, hierarchical straight, hierarchical through the rails) over a sweep of sizes
 * and prints the times and bus bandwidths side by side, as nccl-tests does. An all-to-allv
 * gives the receivers uneven shares, as a mixture-of-experts dispatch with popular
 * experts does: rank j gets a share of every sender's bytes proportional to
 * 1 / (j + 1)^skew.
 *
 *   ./gpu-cluster-collectives                                 4 servers x 8 GPUs, IB NDR
 *   ./gpu-cluster-collectives --coll=alltoall --servers=12 --oversubscription=3 --b=4M --e=4M
 *                                  spines at a third of the NICs: through the rails wins
 *   ./gpu-cluster-collectives --fabric=all --e=16M            IB, RoCE and TCP
 *   ./gpu-cluster-collectives --check=true --e=1M             real bytes, results verified
 *   ./gpu-cluster-collectives --coll=alltoallv --skew=1 --b=16M --e=16M
 *                                  uneven all-to-all: the busiest NIC sets the time
 *
 * Columns: size (bytes per rank: the buffer of an allreduce, the send half of an
 * all-to-all), then per variant the time (us, mean of --iters after a warm-up) and the
 * bus bandwidth (GB/s): algbw x 2 (n - 1) / n for allreduce, algbw x (n - 1) / n for
 * all-to-all (nccl-tests' definitions; for all-to-allv the same with the mean bytes per
 * rank, so that skew shows as lost bandwidth).
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>

using namespace ns3;

namespace
{

/**
 * @param name the option
 * @param v a size with an optional K, M or G suffix
 * @return bytes
 */
uint64_t
ParseSize(const std::string& name, const std::string& v)
{
    std::size_t used = 0;
    uint64_t n = 0;
    try
    {
        n = std::stoull(v, &used);
    }
    catch (const std::exception&)
    {
        IB_REQUIRE(false, "--" << name << "=" << v << ": not a size; give bytes, e.g. 64K or 16M");
    }
    const std::string suffix = v.substr(used);
    if (suffix == "K" || suffix == "k")
    {
        return n << 10;
    }
    if (suffix == "M" || suffix == "m")
    {
        return n << 20;
    }
    if (suffix == "G" || suffix == "g")
    {
        return n << 30;
    }
    IB_REQUIRE(suffix.empty(),
               "--" << name << "=" << v << ": unknown suffix '" << suffix << "'; use K, M or G");
    return n;
}

/// One way to run the collective.
struct Variant
{
    std::string label;     ///< column heading
    std::string algorithm; ///< CollectiveAlgorithm short name
    bool railAware;        ///< hier's RailAwareAllToAll
};

/**
 * All-to-allv sizes: every rank sends @p total elements, receiver j's share going as
 * 1 / (j + 1)^skew (rounded down; the remainder to receiver 0).
 * @param n ranks
 * @param total elements each rank sends
 * @param skew the exponent
 * @return the sizes
 */
Ptr<const CollectiveAllToAllVCounts>
SkewedCounts(uint32_t n, uint64_t total, double skew)
{
    std::vector<double> w(n);
    double sum = 0;
    for (uint32_t j = 0; j < n; ++j)
    {
        w[j] = std::pow(j + 1.0, -skew);
        sum += w[j];
    }
    std::vector<uint64_t> row(n);
    uint64_t given = 0;
    for (uint32_t j = 0; j < n; ++j)
    {
        row[j] = static_cast<uint64_t>(total * w[j] / sum);
        given += row[j];
    }
    row[0] += total - given;
    std::vector<uint64_t> counts;
    counts.reserve(uint64_t(n) * n);
    for (uint32_t i = 0; i < n; ++i)
    {
        counts.insert(counts.end(), row.begin(), row.end());
    }
    return Create<CollectiveAllToAllVCounts>(n, std::move(counts));
}

/**
 * @param spec the operation
 * @param n ranks
 * @param r a rank
 * @return elements of rank @p r's input (its send part for an all-to-all)
 */
uint64_t
SendCount(const CollectiveOpSpec& spec, uint32_t n, uint32_t r)
{
    if (spec.kind == CollectiveKind::ALLTOALLV)
    {
        return spec.counts->SendOffset(r, n - 1) + spec.counts->Count(r, n - 1);
    }
    return spec.kind == CollectiveKind::ALLTOALL ? uint64_t(n) * spec.count : spec.count;
}

/**
 * @param spec an all-to-allv whose inputs were element e of rank q = q * 1000003 + e
 * @param buffers the buffers after it
 * @param r a rank
 * @return received elements of rank @p r that are not what their sender had for it
 */
uint64_t
AllToAllVWrong(const CollectiveOpSpec& spec,
               const std::vector<std::vector<uint8_t>>& buffers,
               uint32_t r)
{
    const CollectiveAllToAllVCounts& v = *spec.counts;
    uint64_t wrong = 0;
    for (uint32_t j = 0; j < v.GetN(); ++j)
    {
        for (uint64_t i = 0; i < v.Count(j, r); ++i)
        {
            int32_t got;
            std::memcpy(&got, buffers[r].data() + (v.RecvOffset(r, j) + i) * 4, 4);
            wrong += got != static_cast<int32_t>(j * 1000003 + v.SendOffset(j, r) + i) ? 1 : 0;
        }
    }
    return wrong;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t servers = 4;
    uint32_t gpus = 8;
    uint32_t radix = 16;
    double oversubscription = 1.0;
    std::string speed = "NDR";
    std::string fabricArg = "ib";
    std::string coll = "allreduce";
    std::string minBytes = "64K";
    std::string maxBytes = "64M";
    uint32_t factor = 4;
    uint32_t iters = 1;
    std::string nvlink = "3600Gbps";
    bool check = false;
    double skew = 1.0;
    std::string topologyKind = "rail-optimized";

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "servers", "GPU servers", servers);
    IbOptions::Add(cmd, "gpus", "GPUs (and NICs) per server", gpus);
    IbOptions::Add(cmd, "radix", "switch radix of the rail-optimized fat tree", radix);
    IbOptions::Add(cmd,
                   "oversubscription",
                   "leaf host ports : uplinks (1 = non-blocking; 2 halves the spine bandwidth)",
                   oversubscription);
    IbOptions::Add(cmd,
                   "speed",
                   "link speed (4x): SDR..NDR; RoCE and TCP get the same data rate",
                   speed);
    IbOptions::Add(cmd, "fabric", "ib, roce, tcp-eth, or all (each in turn)", fabricArg);
    IbOptions::Add(cmd, "coll", "allreduce, alltoall or alltoallv", coll);
    IbOptions::Add(cmd, "b", "smallest size in bytes per rank (K, M, G suffixes)", minBytes);
    IbOptions::Add(cmd, "e", "largest size in bytes per rank", maxBytes);
    IbOptions::Add(cmd, "f", "size multiplication factor", factor);
    IbOptions::Add(cmd, "iters", "timed operations per size", iters);
    IbOptions::Add(cmd,
                   "nvlink",
                   "NVLink bandwidth per GPU and direction (450 GB/s: H100)",
                   nvlink);
    IbOptions::Add(cmd, "check", "carry real bytes and verify the results (slower)", check);
    IbOptions::Add(cmd,
                   "topology",
                   "rail-optimized (spines join the rails) or rail-only (one network per rail, "
                   "nothing between them: the hierarchical variants only)",
                   topologyKind);
    IbOptions::Add(cmd,
                   "skew",
                   "alltoallv: receiver j's share of every sender's bytes goes as 1 / (j + 1)^skew "
                   "(0: even)",
                   skew);
    cmd.Parse(argc, argv);

    IB_REQUIRE(coll == "allreduce" || coll == "alltoall" || coll == "alltoallv",
               "--coll=" << coll << ": use allreduce, alltoall or alltoallv");
    IB_REQUIRE(topologyKind == "rail-optimized" || topologyKind == "rail-only",
               "--topology=" << topologyKind << ": use rail-optimized or rail-only");
    IB_REQUIRE(skew >= 0 && skew <= 10,
               "--skew=" << skew << ": give an exponent from 0 (even) to 10");
    IB_REQUIRE(fabricArg == "ib" || fabricArg == "roce" || fabricArg == "tcp-eth" ||
                   fabricArg == "all",
               "--fabric=" << fabricArg << ": use ib, roce, tcp-eth or all");
    IB_REFUSE(servers < 1 || gpus < 1 || servers * gpus < 2,
              "--servers=" << servers << " --gpus=" << gpus << ": need at least 2 GPUs");
    IB_REQUIRE(factor >= 2, "--f=" << factor << ": give at least 2");
    IB_REQUIRE(iters >= 1, "--iters=" << iters << ": give at least 1");
    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << " is unknown; use one of " << IbLinkRate::ValidSpeedNames());
    DataRateValue nvValue;
    IB_REQUIRE(nvValue.DeserializeFromString(nvlink, MakeDataRateChecker()),
               "--nvlink=" << nvlink << ": not a data rate; e.g. 3600Gbps or 450GBps");
    const DataRate nvRate = nvValue.Get();
    const uint64_t smallest = ParseSize("b", minBytes);
    const uint64_t largest = ParseSize("e", maxBytes);
    IB_REFUSE(smallest > largest, "-b=" << minBytes << " is larger than -e=" << maxBytes);
    const bool railOnly = topologyKind == "rail-only";
    const IbTopology topology =
        railOnly
            ? IbTopologyBuilder::RailOnly(radix, servers, gpus, oversubscription, s, 4)
            : IbTopologyBuilder::RailOptimized2Level(radix, servers, gpus, oversubscription, s, 4);
    const uint32_t n = servers * gpus;

    std::vector<Variant> variants;
    if (coll == "allreduce")
    {
        variants = {{"flat ring", "ring", true}, {"hierarchical", "hier", true}};
    }
    else
    {
        variants = {{"pairwise", "ring", true},
                    {"hier straight", "hier", false},
                    {"hier rails", "hier", true}};
    }
    if (railOnly)
    {
        // Only what keeps the fabric traffic on the rails: the others cross them.
        variants = {variants.back()};
    }
    const std::vector<std::string> kinds = fabricArg == "all"
                                               ? std::vector<std::string>{"ib", "roce", "tcp-eth"}
                                               : std::vector<std::string>{fabricArg};
    const auto wallStart = std::chrono::steady_clock::now();
    for (const std::string& kind : kinds)
    {
        IbHelper::ResetLidAllocation();
        std::vector<Ptr<CollectiveCommunicator>> comms;
        IbFabric ibFabric;
        EthFabric ethFabric;
        NodeContainer tcpHosts;
        if (kind == "ib")
        {
            IbFabricHelper fh;
            fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
            ibFabric = fh.Build(topology);
        }
        else
        {
            EthFabricHelper fh;
            fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
            fh.SetHcaAttribute("DataMode", BooleanValue(check));
            if (kind == "tcp-eth")
            {
                fh.SetHostStack(EthFabricHelper::TCP);
            }
            ethFabric = fh.Build(topology);
        }
        for (const Variant& v : variants)
        {
            CollectiveHelper h;
            h.SetGpusPerServer(gpus);
            h.SetNvlinkAttribute("NvlinkBandwidth", DataRateValue(nvRate));
            h.SetAlgorithm(v.algorithm);
            if (v.algorithm == "hier")
            {
                h.SetAlgorithmAttribute("RailAwareAllToAll", BooleanValue(v.railAware));
            }
            h.SetHcaAttribute("DataMode", BooleanValue(check));
            comms.push_back(kind == "ib"     ? h.InstallIb(ibFabric)
                            : kind == "roce" ? h.InstallRoce(ethFabric)
                                             : h.InstallTcp(ethFabric.hosts));
        }
        std::cout << "# " << coll << ", " << servers << " servers x " << gpus << " GPUs ("
                  << nvRate.GetBitRate() / 8e9 << " GB/s NVLink each), " << topologyKind
                  << " fabric "
                  << "radix " << radix << " oversubscription " << oversubscription << ", "
                  << (kind == "ib"     ? "InfiniBand RDMA"
                      : kind == "roce" ? "RoCEv2 RDMA on Ethernet switches"
                                       : "TCP on Ethernet switches")
                  << " at " << speed << (check ? ", data checked" : "") << "\n";
        std::printf("#%11s", "size (B)");
        for (const Variant& v : variants)
        {
            std::printf(" %14s %8s", (v.label + " us").c_str(), "busbw");
        }
        std::printf(" %6s\n", check ? "#wrong" : "");
        const uint32_t es = 4;
        for (uint64_t size = smallest; size <= largest; size *= factor)
        {
            CollectiveOpSpec spec;
            spec.kind = coll == "allreduce"  ? CollectiveKind::ALLREDUCE
                        : coll == "alltoall" ? CollectiveKind::ALLTOALL
                                             : CollectiveKind::ALLTOALLV;
            spec.type = CollectiveDataType::INT32;
            // an all-to-all's size is its send half: n segments
            spec.count = std::max<uint64_t>(1, size / es / (coll == "alltoall" ? n : 1));
            uint64_t bytes = spec.count * es * (coll == "alltoall" ? n : 1);
            if (spec.kind == CollectiveKind::ALLTOALLV)
            {
                spec.counts = SkewedCounts(n, std::max<uint64_t>(n, size / es), skew);
                bytes = 0; // the mean send part
                for (uint32_t j = 0; j < n; ++j)
                {
                    bytes += spec.counts->Count(0, j) * es;
                }
            }
            std::printf("%12llu", static_cast<unsigned long long>(bytes));
            uint64_t wrong = 0;
            for (std::size_t i = 0; i < comms.size(); ++i)
            {
                CollectiveHelper::Run(comms[i], spec); // warm-up: connects the queue pairs
                std::vector<std::vector<uint8_t>> buffers;
                double sum = 0;
                for (uint32_t it = 0; it < iters; ++it)
                {
                    std::vector<std::vector<uint8_t>>* bufs = nullptr;
                    if (check)
                    {
                        buffers.assign(
                            n,
                            std::vector<uint8_t>(CollectiveAlgorithm::BufferBytes(spec, n)));
                        for (uint32_t r = 0; r < n; ++r)
                        {
                            for (uint64_t e = 0; e < SendCount(spec, n, r); ++e)
                            {
                                const int32_t x = static_cast<int32_t>(r * 1000003 + e);
                                std::memcpy(buffers[r].data() + e * es, &x, es);
                            }
                        }
                        bufs = &buffers;
                    }
                    const Time t = CollectiveHelper::Run(comms[i], spec, bufs);
                    IB_REFUSE(t == Time::Max(), "the operation did not finish");
                    sum += t.GetSeconds();
                    if (!check)
                    {
                        continue;
                    }
                    for (uint32_t r = 0; r < n; ++r)
                    {
                        if (spec.kind == CollectiveKind::ALLTOALLV)
                        {
                            wrong += AllToAllVWrong(spec, buffers, r);
                            continue;
                        }
                        for (uint64_t e = 0; e < bytes / es; ++e)
                        {
                            int32_t got;
                            int64_t want = 0;
                            if (coll == "allreduce")
                            {
                                std::memcpy(&got, buffers[r].data() + e * es, es);
                                for (uint32_t q = 0; q < n; ++q)
                                {
                                    want += static_cast<int32_t>(q * 1000003 + e);
                                }
                                want = static_cast<int32_t>(static_cast<uint32_t>(want));
                            }
                            else
                            {
                                // receive segment j holds rank j's send segment r
                                const uint64_t j = e / spec.count;
                                const uint64_t inSeg = e % spec.count;
                                std::memcpy(&got, buffers[r].data() + bytes + e * es, es);
                                want = static_cast<int32_t>(j * 1000003 + r * spec.count + inSeg);
                            }
                            wrong += got != want ? 1 : 0;
                        }
                    }
                }
                const double sec = sum / iters;
                const double algbw = bytes / sec / 1e9;
                const double busbw =
                    algbw * (coll == "allreduce" ? 2.0 * (n - 1) / n : double(n - 1) / n);
                std::printf(" %14.2f %8.2f", sec * 1e6, busbw);
            }
            std::printf(" %6s\n", check ? std::to_string(wrong).c_str() : "");
        }
        std::cout << "# NIC data rate " << IbLinkRate::GetDataRate(s, 4).GetBitRate() / 8e9
                  << " GB/s per GPU\n";
        Simulator::Destroy();
    }
    std::cout << "# wall time "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count()
              << " s\n";
    return 0;
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * An nccl-tests-style allreduce sweep (all_reduce_perf) over the collective library: a
 * fat tree of InfiniBand switches with RDMA (CollectiveIbTransport), or the same fat-tree
 * shape built from ns-3 point-to-point links with IPv4 global routing and TCP
 * (CollectiveTcpTransport), and one of the algorithms ring, tree, hd or rd, or SHARP in-network
 * aggregation in the IB switches (sharp).
 *
 *   ./ib-allreduce                                   16 hosts, ring, IB HDR, 8 B .. 64 MB
 *   ./ib-allreduce --hosts=1024 --radix=16 --levels=3 -b=64M -e=64M \
 *       --scheduler=ns3::IbTimingWheelScheduler     a large fabric (see the doc's Performance)
 *   ./ib-allreduce --algo=hd --hosts=32 --radix=8 -b=1K -e=16M -f=4
 *   ./ib-allreduce --fabric=tcp                     TCP over 200 Gb/s point-to-point links
 *   ./ib-allreduce --fabric=tcp-eth                 TCP on the Ethernet switches of --fabric=roce
 *   ./ib-allreduce --fabric=all                     ib, roce, tcp-eth, tcp in turn, then side by
 * side
 *   ./ib-allreduce --check=true --e=1M              real bytes, results verified
 *   ./ib-allreduce --algo=sharp --hosts=128 --radix=16 --speed=EDR   SHARP (LLT, then SAT)
 *   ./ib-allreduce -b=16M -e=16M --iters=4 --check=true --timeout=8 --failLink=leaf-0:5@1ms
 *                                                    a cable fails under the sweep
 *
 * Columns as nccl-tests prints them: size (bytes), count (elements), type, redop, time
 * (us, mean of --iters operations after one small warm-up that opens the connections),
 * algbw = size / time, busbw = algbw * 2 (n - 1) / n (GB/s = 1e9 bytes/s).
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <chrono>
#include <cstdio>
#include <iostream>

using namespace ns3;

namespace
{

/**
 * @param option the option's name, for the message
 * @param s a size such as 8, 64K, 64M, 1G (K, M, G: powers of 1024)
 * @return bytes; aborts with a message naming the option if @p s is not a size of at
 *         least one byte
 */
uint64_t
ParseSize(const std::string& option, const std::string& s)
{
    uint64_t mult = 1;
    std::string digits = s;
    const char last = s.empty() ? '\0' : s.back();
    if (last == 'K' || last == 'k')
    {
        mult = 1ull << 10;
    }
    else if (last == 'M' || last == 'm')
    {
        mult = 1ull << 20;
    }
    else if (last == 'G' || last == 'g')
    {
        mult = 1ull << 30;
    }
    if (mult != 1)
    {
        digits.pop_back();
    }
    const bool allDigits = !digits.empty() && digits.size() <= 12 &&
                           digits.find_first_not_of("0123456789") == std::string::npos;
    const uint64_t number = allDigits ? std::stoull(digits) : 0;
    const uint64_t value = number <= (uint64_t{1} << 40) / mult ? number * mult : 0;
    IB_REQUIRE(value > 0,
               "-" << option << "=" << s
                   << " is not a size; give whole bytes from 1 to 1 TiB, optionally "
                      "with K, M or G (powers of 1024), e.g. 8, 64K, 64M");
    return value;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string algo; // ring, or the profile's
    std::string profile;
    std::string fabricArg = "ib";
    uint32_t hosts = 16;
    uint32_t radix = 8;
    uint32_t levels = 2;
    std::string speed = "HDR";
    std::string minBytes = "8";
    std::string maxBytes; // 64M for ib and roce, 4M with tcp (TCP costs many more events)
    uint32_t factor = 2;
    std::string typeName = "float";
    std::string opName = "sum";
    uint32_t iters = 1;
    uint64_t chunk = 256 * 1024;
    bool check = false;
    bool ibCc = false;
    std::string scheduler; // empty: ns-3's --SchedulerType (MapScheduler by default)

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd,
                   "algo",
                   "allreduce algorithm: ring, tree, dbtree, hd, rd, tuned (by size), sharp (IB "
                   "only); default ring, or the profile's",
                   algo);
    IbOptions::Add(
        cmd,
        "fabric",
        "ib (RDMA on an IB fat tree), roce (RDMA on an Ethernet fat tree of EthSwitches), "
        "tcp-eth (TCP on those Ethernet switches), tcp (TCP on point-to-point links "
        "and IPv4 routers), or all: each in turn, then their bus bandwidths side by side",
        fabricArg);
    IbOptions::Add(cmd, "hosts", "number of hosts (ranks)", hosts);
    IbOptions::Add(cmd, "radix", "switch radix of the fat tree", radix);
    IbOptions::Add(cmd, "levels", "fat-tree levels: 2 or 3", levels);
    IbOptions::Add(cmd,
                   "speed",
                   "link speed (4x): SDR..NDR; the TCP links get the same data rate",
                   speed);
    IbOptions::Add(cmd, "b", "smallest size in bytes (K, M, G suffixes)", minBytes);
    IbOptions::Add(cmd,
                   "e",
                   "largest size in bytes (default 64M for ib and roce, 4M for tcp and all)",
                   maxBytes);
    IbOptions::Add(cmd, "f", "size multiplication factor", factor);
    IbOptions::Add(cmd, "type", "int8 int16 int32 int64 half bfloat16 float double", typeName);
    IbOptions::Add(cmd, "op", "sum prod min max band bor bxor", opName);
    IbOptions::Add(cmd, "iters", "timed operations per size", iters);
    IbOptions::Add(cmd, "chunk", "ChunkSize of the communicator, bytes", chunk);
    IbOptions::Add(cmd,
                   "scheduler",
                   "ns-3 event scheduler (same results, different speed; the same as "
                   "--SchedulerType, which it overrides when given): ns3::MapScheduler "
                   "(ns-3's default), ns3::IbTimingWheelScheduler (this module's, for "
                   "fabrics: events due within 4096 ns in one-ns buckets), "
                   "ns3::IbHeapScheduler (this module's 4-ary heap) or ns3::HeapScheduler",
                   scheduler);
    IbOptions::Add(cmd, "check", "carry real bytes and verify the sum (slower)", check);
    IbOptions::Add(cmd,
                   "ibCc",
                   "IB fabric: IBA congestion control on (subnet manager defaults; the "
                   "ns3::IbSubnetManager::Cc* attributes tune it)",
                   ibCc);
    std::string failLink;
    IbOptions::Add(cmd,
                   "failLink",
                   "IB fabric: cables to fail, NODE:PORT@DOWN[-UP],... in simulated time (e.g. "
                   "leaf-0:5@1ms-20ms); the subnet manager routes around them and the "
                   "per-flow outages are printed",
                   failLink);
    uint32_t timeout = 14;
    IbOptions::Add(cmd,
                   "timeout",
                   "IB fabric: local ACK timeout exponent of the transport's queue pairs, "
                   "4.096 us x 2^timeout (14: 67 ms)",
                   timeout);
    uint64_t satThreshold = 4096;
    IbOptions::Add(cmd,
                   "satThreshold",
                   "sharp: larger operations use streaming aggregation (bytes)",
                   satThreshold);
    IbOptions::Add(cmd,
                   "profile",
                   "a hardware and library profile (IbProfileHelper): ideal, edr-cx4-mpi, "
                   "hdr-cx6-mpi, ndr-cx7-nccl; it also chooses the algorithm unless --algo is "
                   "given; empty = the idealized model",
                   profile);
    // The profile first, so that --ns3::... settings of the same command line override it.
    profile = IbProfileHelper::FindInArguments(argc, argv);
    if (!profile.empty())
    {
        std::string error;
        IB_REQUIRE(IbProfileHelper::Apply(profile, &error), "--profile: " << error);
    }
    cmd.Parse(argc, argv);
    if (!profile.empty())
    {
        std::cout << IbProfileHelper::Describe(profile);
        if (algo.empty())
        {
            algo = IbProfileHelper::Find(profile)->algorithm;
        }
    }
    if (algo.empty())
    {
        algo = "ring";
    }
    if (!scheduler.empty())
    {
        IbHeapScheduler::SelectSchedulerType(scheduler, "--scheduler");
    }

    if (maxBytes.empty())
    {
        maxBytes = fabricArg == "ib" || fabricArg == "roce" ? "64M" : "4M";
    }
    const uint64_t smallest = ParseSize("b", minBytes);
    const uint64_t largest = ParseSize("e", maxBytes);
    IB_REFUSE(smallest > largest,
              "-b=" << minBytes << " is larger than -e=" << maxBytes
                    << ": nothing to run; give -b no larger than -e");
    CollectiveDataType type;
    CollectiveRedOp op;
    IB_REQUIRE(CollectiveReduction::ParseType(typeName, type),
               "--type=" << typeName
                         << " is unknown; use int8 int16 int32 int64 half bfloat16 "
                            "float or double");
    IB_REQUIRE(CollectiveReduction::ParseOp(opName, op),
               "--op=" << opName << " is unknown; use sum prod min max band bor or bxor");
    IB_REFUSE(hosts < 2, "--hosts=" << hosts << ": an allreduce needs at least 2 ranks (hosts)");
    IB_REQUIRE(CollectiveReduction::IsValid(type, op),
               "--op=" << opName << " is not defined on --type=" << typeName);
    IB_REQUIRE(fabricArg == "ib" || fabricArg == "roce" || fabricArg == "tcp-eth" ||
                   fabricArg == "tcp" || fabricArg == "all",
               "--fabric=" << fabricArg << ": use ib, roce, tcp-eth, tcp or all");
    IB_REFUSE(algo == "sharp" && fabricArg != "ib",
              "--algo=sharp aggregates in InfiniBand switches: use --fabric=ib");
    IB_REFUSE(!failLink.empty() && fabricArg != "ib",
              "--failLink fails InfiniBand cables: use --fabric=ib");
    IB_REFUSE(timeout > 31, "--timeout=" << timeout << ": use 0..31 (IBA 5-bit field)");
    const auto wallStart = std::chrono::steady_clock::now();
    IB_REQUIRE(factor >= 2, "--f must be at least 2");
    IB_REQUIRE(chunk >= 1, "--chunk=" << chunk << ": a chunk is at least 1 byte");
    IB_REQUIRE(iters >= 1, "--iters must be at least 1 (timed operations per size)");
    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << " is unknown; use one of " << IbLinkRate::ValidSpeedNames());
    IB_REQUIRE(levels == 2 || levels == 3, "--levels must be 2 or 3");
    const IbTopology topology = levels == 2
                                    ? IbTopologyBuilder::FatTree2Level(radix, hosts, 1.0, s, 4)
                                    : IbTopologyBuilder::FatTree3Level(radix, hosts, 1.0, s, 4);
    const DataRate rate = IbLinkRate::GetDataRate(s, 4);

    /// One size of a sweep: bytes, mean time, bus bandwidth.
    struct Row
    {
        uint64_t bytes;
        double seconds;
        double busbw;
    };

    const std::vector<std::string> kinds =
        fabricArg == "all" ? std::vector<std::string>{"ib", "roce", "tcp-eth", "tcp"}
                           : std::vector<std::string>{fabricArg};
    std::vector<std::vector<Row>> rows(kinds.size());
    for (std::size_t kind = 0; kind < kinds.size(); ++kind)
    {
        const std::string& fabricKind = kinds[kind];
        CollectiveHelper helper;
        helper.SetAlgorithm(algo);
        helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(chunk));
        helper.SetHcaAttribute("DataMode", BooleanValue(check));
        Ptr<CollectiveCommunicator> comm;
        IbFabric fabric;
        IbOutageMonitor outages;
        if (fabricKind == "ib")
        {
            IbFabricHelper fh;
            fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
            fh.SetSubnetManagerAttribute("CongestionControl", BooleanValue(ibCc));
            fabric = fh.Build(topology);
            helper.SetIbTransportAttribute("Timeout", UintegerValue(timeout));
            if (!failLink.empty())
            {
                IbLinkFailureHelper().ScheduleFromSpec(fabric, failLink, "--failLink");
                outages.Install(fabric);
            }
            if (algo == "sharp")
            {
                helper.SetSharpManager(SharpHelper().Install(fabric));
                helper.SetAlgorithmAttribute("SatThreshold", UintegerValue(satThreshold));
            }
            comm = helper.InstallIb(fabric);
        }
        else if (fabricKind == "roce")
        {
            EthFabricHelper fh;
            fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
            fh.SetHcaAttribute("DataMode", BooleanValue(check));
            comm = helper.InstallRoce(fh.Build(topology));
        }
        else if (fabricKind == "tcp-eth")
        {
            EthFabricHelper fh;
            fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
            fh.SetHostStack(EthFabricHelper::TCP);
            comm = helper.InstallTcp(fh.Build(topology).hosts);
        }
        else
        {
            comm =
                helper.InstallTcp(CollectiveHelper::BuildIpFabric(topology, rate, NanoSeconds(10)));
        }
        const uint32_t n = comm->GetNRanks();
        const uint32_t es = CollectiveReduction::SizeOf(type);

        std::cout << "# allreduce, algorithm " << algo << ", " << n << " ranks, " << levels
                  << "-level fat tree radix " << radix << ", "
                  << (fabricKind == "ib" ? "InfiniBand RDMA"
                      : fabricKind == "roce"
                          ? "RoCEv2 RDMA on Ethernet switches (PFC, ECN, DCQCN, ECMP)"
                      : fabricKind == "tcp-eth"
                          ? "TCP/IPv4 on the same Ethernet switches (ECMP, lossy class)"
                          : "TCP/IPv4 point-to-point, routers without forwarding latency")
                  << " at " << rate.GetBitRate() / 1e9 << " Gb/s per link, chunk " << chunk << " B"
                  << (check ? ", data checked" : "") << "\n";
        if (Ptr<SharpCollectiveAlgorithm> sharp =
                DynamicCast<SharpCollectiveAlgorithm>(comm->GetAlgorithm()))
        {
            Ptr<SharpTree> tree = sharp->GetTree();
            if (tree)
            {
                std::cout << "# SHARP tree: " << tree->ans.size() << " switches, depth "
                          << tree->depth << ", low-latency window " << tree->window[SharpTree::LLT]
                          << " x " << tree->fragmentBytes[SharpTree::LLT] << " B, streaming window "
                          << tree->window[SharpTree::SAT] << " x "
                          << tree->fragmentBytes[SharpTree::SAT] << " B above " << satThreshold
                          << " B\n";
            }
            else
            {
                std::cout << "# SHARP refused (" << sharp->GetRefusal()
                          << "): host-based fallback\n";
            }
        }
        std::printf("#%11s %12s %8s %6s %12s %8s %8s %6s\n",
                    "size",
                    "count",
                    "type",
                    "redop",
                    "time",
                    "algbw",
                    "busbw",
                    "#wrong");
        std::printf("#%11s %12s %8s %6s %12s %8s %8s %6s\n",
                    "(B)",
                    "(elements)",
                    "",
                    "",
                    "(us)",
                    "(GB/s)",
                    "(GB/s)",
                    "");

        // The check compares every element with a sum computed in one order, so it needs
        // inputs whose partial sums are exact in the type whatever the order: rank r holds
        // r + 1 while n (n + 1) / 2 is exact, else 1 while n is, else nothing is checked.
        // Integers wrap alike in any order.
        double exactUpTo = 9007199254740992.0; // 2^53: double
        if (type == CollectiveDataType::BFLOAT16)
        {
            exactUpTo = 256;
        }
        else if (type == CollectiveDataType::FLOAT16)
        {
            exactUpTo = 2048;
        }
        else if (type == CollectiveDataType::FLOAT32)
        {
            exactUpTo = 16777216;
        }
        const bool integer = CollectiveReduction::IsInteger(type);
        const bool rising = integer || double(n) * (n + 1) / 2 <= exactUpTo;
        const bool verifiable = check && op == CollectiveRedOp::SUM && (rising || n <= exactUpTo);
        auto inputOf = [rising](uint32_t r) { return rising ? r + 1 : 1; };
        if (check && !verifiable)
        {
            std::cout << "# #wrong n/a: the data are carried but only a sum is checked, and only "
                         "while the sums of the inputs are exact in the type\n";
        }

        CollectiveOpSpec spec;
        spec.type = type;
        spec.op = op;
        bool warm = false;
        for (uint64_t size = smallest; size <= largest;
             size = size > largest / factor ? largest + 1 : size * factor)
        {
            spec.count = std::max<uint64_t>(1, size / es);
            const uint64_t bytes = spec.count * es;
            std::vector<std::vector<uint8_t>> buffers;
            if (!warm)
            {
                // opens the connections: 16 elements per rank reach every peer an algorithm
                // talks to, without paying a large first size twice
                CollectiveOpSpec w = spec;
                w.count = std::min<uint64_t>(spec.count, uint64_t(n) * 16);
                CollectiveHelper::Run(comm, w, nullptr, Seconds(100));
                warm = true;
            }
            double total = 0;
            uint64_t wrong = 0;
            for (uint32_t it = 0; it < iters; ++it)
            {
                std::vector<std::vector<uint8_t>>* bufs = nullptr;
                if (check)
                {
                    // rank r holds inputOf(r) in every element (as an integer or a float)
                    buffers.assign(n, std::vector<uint8_t>(bytes));
                    for (uint32_t r = 0; r < n; ++r)
                    {
                        for (uint64_t i = 0; i < spec.count; ++i)
                        {
                            uint8_t* p = buffers[r].data() + i * es;
                            const double v = inputOf(r);
                            if (CollectiveReduction::IsInteger(type))
                            {
                                const int64_t x = inputOf(r);
                                std::memcpy(p, &x, es);
                            }
                            else if (type == CollectiveDataType::FLOAT16)
                            {
                                const uint16_t h = CollectiveReduction::FloatToHalf(v);
                                std::memcpy(p, &h, 2);
                            }
                            else if (type == CollectiveDataType::BFLOAT16)
                            {
                                const uint16_t h = CollectiveReduction::FloatToBf16(v);
                                std::memcpy(p, &h, 2);
                            }
                            else if (type == CollectiveDataType::FLOAT32)
                            {
                                const float f = v;
                                std::memcpy(p, &f, 4);
                            }
                            else
                            {
                                std::memcpy(p, &v, 8);
                            }
                        }
                    }
                    bufs = &buffers;
                }
                const Time t = CollectiveHelper::Run(comm, spec, bufs, Seconds(100));
                IB_REFUSE(t == Time::Max(), "allreduce of " << bytes << " B did not finish");
                total += t.GetSeconds();
                if (verifiable)
                {
                    // compare with rank 0's own reduction of the inputs, element 0 pattern
                    std::vector<uint8_t> ref(es);
                    std::vector<uint8_t> one(es);
                    for (uint32_t r = 0; r < n; ++r)
                    {
                        const int64_t x = inputOf(r);
                        const double v = inputOf(r);
                        if (CollectiveReduction::IsInteger(type))
                        {
                            std::memcpy(one.data(), &x, es);
                        }
                        else if (type == CollectiveDataType::FLOAT16)
                        {
                            const uint16_t h = CollectiveReduction::FloatToHalf(v);
                            std::memcpy(one.data(), &h, 2);
                        }
                        else if (type == CollectiveDataType::BFLOAT16)
                        {
                            const uint16_t h = CollectiveReduction::FloatToBf16(v);
                            std::memcpy(one.data(), &h, 2);
                        }
                        else if (type == CollectiveDataType::FLOAT32)
                        {
                            const float f = v;
                            std::memcpy(one.data(), &f, 4);
                        }
                        else
                        {
                            std::memcpy(one.data(), &v, 8);
                        }
                        if (r == 0)
                        {
                            ref = one;
                        }
                        else
                        {
                            CollectiveReduction::Reduce(type, op, ref.data(), one.data(), 1);
                        }
                    }
                    for (uint32_t r = 0; r < n; ++r)
                    {
                        for (uint64_t i = 0; i < spec.count; ++i)
                        {
                            if (std::memcmp(buffers[r].data() + i * es, ref.data(), es) != 0)
                            {
                                ++wrong;
                            }
                        }
                    }
                }
            }
            const double sec = total / iters;
            const double algbw = bytes / sec / 1e9;
            const double busbw = algbw * 2.0 * (n - 1) / n;
            std::printf("%12llu %12llu %8s %6s %12.2f %8.2f %8.2f %6s\n",
                        static_cast<unsigned long long>(bytes),
                        static_cast<unsigned long long>(spec.count),
                        CollectiveReduction::TypeName(type).c_str(),
                        CollectiveReduction::OpName(op).c_str(),
                        sec * 1e6,
                        algbw,
                        busbw,
                        verifiable ? std::to_string(wrong).c_str() : "n/a");
            rows[kind].push_back({bytes, sec, busbw});
        }
        std::cout << "# bus bandwidth bound: " << rate.GetBitRate() / 8e9
                  << " GB/s link data rate, times "
                  << (fabricKind == "ib" ? "about 0.99 (4 KB IB packets)"
                      : fabricKind == "roce"
                          ? "about 0.98 (4 KB RoCEv2 frames: 82 bytes of framing)"
                      : fabricKind == "tcp-eth"
                          ? "about 0.94 (1448-byte TCP segments in 1538 bytes of Ethernet wire)"
                          : "about 0.96 (1448-byte TCP segments on PPP)")
                  << "\n";
        if (fabricKind == "ib" && !failLink.empty())
        {
            std::cout << "# link failures " << failLink << ": " << fabric.subnetManager->GetSweeps()
                      << " subnet manager sweep(s)\n";
            if (Ptr<SharpCollectiveAlgorithm> sharp =
                    DynamicCast<SharpCollectiveAlgorithm>(comm->GetAlgorithm()))
            {
                std::cout << "# SHARP: " << sharp->GetRestartedOps()
                          << " operation(s) lost in the network and run again host-based, "
                          << sharp->GetTreeRebuilds() << " tree(s) rebuilt, "
                          << sharp->GetFallbackOps() << " host-based for want of a tree\n";
            }
            outages.Print(std::cout, 16);
        }
        Simulator::Destroy();
    }
    if (kinds.size() > 1)
    {
        // The same sizes on every fabric: where RoCE and TCP fall behind InfiniBand.
        std::cout << "# side by side, " << hosts << " ranks, " << algo
                  << ", busbw (GB/s) and its ratio to ib\n";
        std::printf("#%11s", "size (B)");
        for (const std::string& k : kinds)
        {
            std::printf(" %9s", k.c_str());
        }
        for (std::size_t k = 1; k < kinds.size(); ++k)
        {
            std::printf(" %9s", (kinds[k] + "/ib").c_str());
        }
        std::printf("\n");
        for (std::size_t i = 0; i < rows[0].size(); ++i)
        {
            std::printf("%12llu", static_cast<unsigned long long>(rows[0][i].bytes));
            for (std::size_t k = 0; k < kinds.size(); ++k)
            {
                std::printf(" %9.2f", rows[k][i].busbw);
            }
            for (std::size_t k = 1; k < kinds.size(); ++k)
            {
                std::printf(" %9.3f", rows[k][i].busbw / rows[0][i].busbw);
            }
            std::printf("\n");
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    std::cout << "# wall time " << wall << " s\n";
    return 0;
}

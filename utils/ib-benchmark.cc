/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * ns-3-infiniband benchmark: how fast the IB model simulates, next to ns-3's own
 * point-to-point + IPv4 model and the bare scheduler, measured in the same run.
 *
 * Scenarios (--scenario=NAME, or all):
 *   scheduler   the bare scheduler: a chain of no-op events; events per wall second
 *   link-chain  a chain of K switches between two hosts, one saturating stream of
 *               4 KB packets; the same chain built from ns-3 PointToPointNetDevices,
 *               IPv4 routers and a UDP stream of the same packet size and rate
 *   scaling     3-level fat trees (radix 16) of 16, 64, 256, 512 and 1024 hosts, ftree
 *               routing, a shift permutation (congestion-free, so every size carries the
 *               same load per host); the wall time per packet-hop should stay flat as the
 *               fabric grows.
 *               The sweep runs --scalingRounds times (default 3); each round's spread is
 *               printed and, with more than one round, the spread of the fastest run of
 *               each size. Each run is also timed in 32 equal slices of simulated time
 *               (the first, which fills the fabric, left out); the lower decile, fastest
 *               and median slice of each size are printed, with a memory probe before
 *               and after each round's largest run: the machine's other tenants can take
 *               the shared L3 during part of a run
 *   build       a 4096-host 3-level fat tree (radix 32): build, assign LIDs and route;
 *               wall time and resident memory
 *   allreduce   a ring allreduce (float sum, RDMA, 256 KiB chunks) on a 3-level fat tree
 *               (radix 16, HDR, ftree) of --hosts ranks (default 1024) of --allreduceBytes
 *               (default 64 MiB) after an 8-byte warm-up that opens the connections; wall
 *               time, packets, packet-hops and peak resident memory
 *   rdma-tree   the same 2-level fat tree (128 hosts, HDR rates) with a random permutation
 *               of RC RDMA WRITE streams (1 MiB messages, two in flight): on InfiniBand
 *               (IbSwitch, ftree) and on RoCEv2 (EthSwitch, ECMP, PFC, ECN, DCQCN), the same
 *               transport; the ratio of their packet-hops per second
 *   fat-tree    a 2-level fat tree (radix 16, 128 hosts, HDR) with ftree routing and a
 *               random permutation of saturating flows; the same topology built from
 *               point-to-point links and IPv4 routers with UDP flows of the same packet
 *               size at the same link rate, routed along the IB side's paths (static host
 *               routes from the ftree forwarding tables)
 *
 * Figures: packet-hops (a packet crossing one link) per wall-clock second, scheduler
 * events per packet-hop, and the ratio IB / point-to-point. Run it from a Release build
 * (utils/benchmark.sh does). --csv=FILE appends one row per measurement (for a scaling
 * run also its fastest, lower-decile and median slice, CPU ns per packet-hop).
 *
 * The program gives glibc's heap transparent huge pages (it restarts itself with
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1; --hugePages=false keeps 4 KB pages) and prints
 * which it runs with, and the scheduler of each scenario (--scheduler; by default ns-3's
 * own MapScheduler where the IB model is compared with ns-3's models or the bare
 * scheduler, so that both sides run on ns-3's default, and this module's
 * IbTimingWheelScheduler, the one it recommends for fabrics, where only the IB model
 * runs: scaling, build, allreduce).
 */

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <new>
#include <numeric>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

/// Heap allocations through operator new (ns-3's packets, buffers and events use it), in
/// the whole process: the rdma-tree scenario reports them per packet-hop. The replacements
/// below are not inlined: GCC would then see free() called on what operator new returned
/// (-Wmismatched-new-delete), not knowing that this operator new is malloc.
std::atomic<uint64_t> g_allocations{0};

} // namespace

/**
 * Count an allocation and make it.
 * @param size bytes
 * @return the memory
 */
[[gnu::noinline]] void*
operator new(std::size_t size)
{
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size != 0 ? size : 1))
    {
        return p;
    }
    throw std::bad_alloc();
}

/**
 * Count an array allocation and make it.
 * @param size bytes
 * @return the memory
 */
[[gnu::noinline]] void*
operator new[](std::size_t size)
{
    return operator new(size);
}

/**
 * Free what operator new made.
 * @param p the memory
 */
[[gnu::noinline]] void
operator delete(void* p) noexcept
{
    std::free(p);
}

/**
 * Free what operator new made.
 * @param p the memory
 */
[[gnu::noinline]] void
operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}

/**
 * Free what operator new[] made.
 * @param p the memory
 */
[[gnu::noinline]] void
operator delete[](void* p) noexcept
{
    std::free(p);
}

/**
 * Free what operator new[] made.
 * @param p the memory
 */
[[gnu::noinline]] void
operator delete[](void* p, std::size_t) noexcept
{
    std::free(p);
}

namespace
{

/**
 * @param v values (copied: sorted here)
 * @param fraction 0 for the smallest, 0.1 for the lower decile, 0.5 for the median
 * @return that value of @p v, or 0 if it is empty
 */
double
Quantile(std::vector<double> v, double fraction)
{
    if (v.empty())
    {
        return 0.0;
    }
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(fraction * (v.size() - 1))];
}

/// One measured figure.
struct Result
{
    std::string scenario;
    std::string model;
    uint64_t packetHops{0};
    uint64_t events{0};
    uint64_t allocations{0}; ///< operator new calls during the run
    double wallSeconds{0};
    double cpuSeconds{0}; ///< CPU time of the run (wall time counts other processes too)
    double simSeconds{0};
    long maxRssKb{0};
    uint64_t drops{0};   ///< point-to-point: packets the queue discs and device queues dropped
    uint64_t backlog{0}; ///< point-to-point: packets left in the queue discs at the end
    /// scaling: CPU ns per packet-hop of each slice of the run after the first (see
    /// BenchScaling)
    std::vector<double> sliceNsPerHop;

    double HopsPerSecond() const
    {
        return packetHops / wallSeconds;
    }

    double EventsPerHop() const
    {
        return packetHops ? double(events) / packetHops : 0.0;
    }

    /**
     * @param fraction 0 for the fastest slice, 0.1 for the lower decile, 0.5 for the median
     * @return that slice's CPU ns per packet-hop, or 0 if the run was not sliced
     */
    double SliceNsPerHop(double fraction) const
    {
        return Quantile(sliceNsPerHop, fraction);
    }
};

/// @return the resident set size now, in kB (peak RSS only grows across scenarios)
long
CurrentRssKb()
{
    std::ifstream statm("/proc/self/statm");
    long pages = 0;
    long resident = 0;
    statm >> pages >> resident;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/// @return user + system CPU seconds of this process so far
double
CpuSeconds()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

/**
 * Count a point-to-point run's packet-hops (packets its device queues took), and the
 * packets dropped or still waiting in the queue discs and device queues.
 * @param devs every device
 * @param r the result to add them to
 */
void
CountP2p(const std::vector<Ptr<PointToPointNetDevice>>& devs, Result& r)
{
    for (auto& d : devs)
    {
        r.packetHops += d->GetQueue()->GetTotalReceivedPackets();
        r.drops += d->GetQueue()->GetTotalDroppedPackets();
        // ns-3 installs its default queue disc (FqCoDel) on every device: packets a link
        // cannot take wait or are dropped there, before the device queue.
        Ptr<TrafficControlLayer> tc = d->GetNode()->GetObject<TrafficControlLayer>();
        Ptr<QueueDisc> qd = tc ? tc->GetRootQueueDiscOnDevice(d) : nullptr;
        if (qd)
        {
            r.drops += qd->GetStats().nTotalDroppedPackets;
            r.backlog += qd->GetNPackets();
        }
    }
}

/**
 * What the machine's other tenants leave of its memory system right now: the time per load
 * of a random walk through 8 MB, about the 1024-host fabric's hot state (a single cycle;
 * each load's address comes from the one before, like a chain of cache misses in a
 * fabric's events). About 15 ns when 8 MB fit in this process's share of the L3, 100 ns
 * and more when they do not: the neighbours' load on the shared L3 decides which.
 * @return nanoseconds per load
 */
double
MemoryProbeNs()
{
    constexpr uint32_t entries = (8u << 20) / sizeof(uint32_t);
    std::vector<uint32_t> next(entries);
    std::iota(next.begin(), next.end(), 0u);
    std::mt19937 rng(7);
    for (uint32_t i = entries - 1; i > 0; --i) // Sattolo: one cycle through every entry
    {
        std::swap(next[i], next[rng() % i]);
    }
    uint32_t at = 0;
    for (uint32_t k = 0; k < entries / 4; ++k) // warm up: pages mapped, caches filled
    {
        at = next[at];
    }
    constexpr uint32_t loads = 4000000;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint32_t k = 0; k < loads; ++k)
    {
        at = next[at];
    }
    const auto t1 = std::chrono::steady_clock::now();
    volatile uint32_t sink = at; // keep the walk
    (void)sink;
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / loads;
}

long
MaxRssKb()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/// @return CPU seconds of this thread so far (cheap enough to read between events)
double
ThreadCpuSeconds()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/// Run the simulator until @p stop and time it.
void
TimedRun(Time stop, Result& r)
{
    Simulator::Stop(stop);
    const uint64_t events0 = Simulator::GetEventCount();
    const uint64_t allocations0 = g_allocations.load(std::memory_order_relaxed);
    const double cpu0 = CpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const auto t1 = std::chrono::steady_clock::now();
    r.cpuSeconds = CpuSeconds() - cpu0;
    r.events = Simulator::GetEventCount() - events0;
    r.allocations = g_allocations.load(std::memory_order_relaxed) - allocations0;
    r.wallSeconds = std::chrono::duration<double>(t1 - t0).count();
    r.simSeconds = stop.GetSeconds();
    r.maxRssKb = MaxRssKb();
}

void
Print(const Result& r)
{
    std::cout << std::left << std::setw(12) << r.scenario << std::setw(22) << r.model << std::right
              << std::setw(12) << r.packetHops << std::setw(10) << std::fixed
              << std::setprecision(3) << r.wallSeconds << std::setw(14) << std::setprecision(0)
              << r.HopsPerSecond() << std::setw(10) << std::setprecision(2) << r.EventsPerHop()
              << std::setw(10) << r.maxRssKb / 1024 << std::setw(10) << std::setprecision(3)
              << r.cpuSeconds << "\n";
}

void
AppendCsv(const std::string& file, const Result& r)
{
    if (file.empty())
    {
        return;
    }
    std::ifstream probe(file);
    const bool header = !probe.good() || probe.peek() == std::ifstream::traits_type::eof();
    std::ofstream out(file, std::ios::app);
    IB_REQUIRE(out, "--csv=" << file << ": cannot write the file");
    if (header)
    {
        out << "scenario,model,packet_hops,wall_s,sim_s,hops_per_s,events_per_hop,max_rss_mb,"
               "cpu_s,slice_fastest_ns,slice_decile_ns,slice_median_ns\n";
    }
    out << r.scenario << "," << r.model << "," << r.packetHops << "," << r.wallSeconds << ","
        << r.simSeconds << "," << r.HopsPerSecond() << "," << r.EventsPerHop() << ","
        << r.maxRssKb / 1024 << "," << r.cpuSeconds;
    if (r.sliceNsPerHop.empty())
    {
        out << ",,,\n";
    }
    else
    {
        out << "," << r.SliceNsPerHop(0) << "," << r.SliceNsPerHop(0.1) << ","
            << r.SliceNsPerHop(0.5) << "\n";
    }
}

// ------------------------------------------------------------------------- scheduler

void
NoOp(uint64_t* remaining)
{
    if (--*remaining > 0)
    {
        Simulator::Schedule(NanoSeconds(1), &NoOp, remaining);
    }
}

Result
BenchScheduler(uint64_t events)
{
    Result r;
    r.scenario = "scheduler";
    r.model = "bare-events";
    uint64_t remaining = events;
    Simulator::Schedule(NanoSeconds(1), &NoOp, &remaining);
    TimedRun(Seconds(1), r);
    r.packetHops = r.events; // one "hop" per event: events per second
    Simulator::Destroy();
    return r;
}

// ------------------------------------------------------------------------- link chain

Result
BenchIbChain(uint32_t switches, Time duration, uint32_t payload)
{
    Result r;
    r.scenario = "link-chain";
    r.model = "infiniband";
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    ib.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    Ptr<Node> h0 = CreateObject<Node>();
    Ptr<Node> h1 = CreateObject<Node>();
    Ptr<IbNetDevice> src = ib.InstallPort(h0);
    Ptr<IbNetDevice> dst = ib.InstallPort(h1);
    std::vector<Ptr<IbNetDevice>> all{src, dst};
    Ptr<IbNetDevice> prev = src;
    std::vector<Ptr<IbSwitch>> sws;
    for (uint32_t i = 0; i < switches; ++i)
    {
        Ptr<Node> n = CreateObject<Node>();
        Ptr<IbSwitch> sw = CreateObject<IbSwitch>();
        n->AggregateObject(sw);
        Ptr<IbNetDevice> a = ib.InstallPort(n);
        Ptr<IbNetDevice> b = ib.InstallPort(n);
        sw->AddPort(a);
        sw->AddPort(b);
        ib.Connect(prev, a);
        prev = b;
        all.push_back(a);
        all.push_back(b);
        sws.push_back(sw);
    }
    ib.Connect(prev, dst);
    for (auto& sw : sws)
    {
        sw->SetLftEntry(dst->GetLid(), 2);
    }
    IbRawTrafficHelper traffic(dst->GetLid());
    traffic.SetAttribute("PayloadSize", UintegerValue(payload));
    traffic.Install(src).Start(NanoSeconds(100));
    TimedRun(duration, r);
    for (auto& d : all)
    {
        r.packetHops += d->GetTxPackets();
    }
    Simulator::Destroy();
    return r;
}

Result
BenchP2pChain(uint32_t routers, Time duration, uint32_t payload)
{
    Result r;
    r.scenario = "link-chain";
    r.model = "p2p+ipv4";
    NodeContainer nodes;
    nodes.Create(routers + 2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("100Gbps"));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(payload + 100));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    std::vector<Ptr<PointToPointNetDevice>> devs;
    Ipv4Address sinkAddr;
    for (uint32_t i = 0; i + 1 < nodes.GetN(); ++i)
    {
        NetDeviceContainer d = p2p.Install(nodes.Get(i), nodes.Get(i + 1));
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        addr.NewNetwork();
        sinkAddr = ifs.GetAddress(1);
        devs.push_back(DynamicCast<PointToPointNetDevice>(d.Get(0)));
        devs.push_back(DynamicCast<PointToPointNetDevice>(d.Get(1)));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    // The same offered load as the IB source: back-to-back packets at the link rate.
    const uint32_t wire = payload + 20 + 8 + 2; // IPv4 + UDP + PPP headers
    const Time interval = DataRate("100Gbps").CalculateBytesTxTime(wire);
    UdpClientHelper client(sinkAddr, 9);
    client.SetAttribute("MaxPackets", UintegerValue(0xFFFFFFFF));
    client.SetAttribute("Interval", TimeValue(interval));
    client.SetAttribute("PacketSize", UintegerValue(payload));
    client.Install(nodes.Get(0)).Start(NanoSeconds(100));
    PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    sink.Install(nodes.Get(nodes.GetN() - 1)).Start(Seconds(0));
    TimedRun(duration, r);
    CountP2p(devs, r);
    Simulator::Destroy();
    return r;
}

/**
 * @param ib the IB run
 * @param p2p the point-to-point run of the same scenario
 * @return the ratio of their packet-hops per CPU second (less sensitive than wall time to
 *         the machine's other tenants)
 */
double
CpuRatio(const Result& ib, const Result& p2p)
{
    return (double(ib.packetHops) / ib.cpuSeconds) / (double(p2p.packetHops) / p2p.cpuSeconds);
}

// ------------------------------------------------------------------------- RDMA fat tree

/// A saturating stream of RDMA WRITEs on one RC connection: two messages in flight, each
/// completion posts the next.
struct WriteStream
{
    Ptr<IbQueuePair> qp;     ///< the sender's QP
    Ptr<IbMemoryRegion> src; ///< local region
    Ptr<IbMemoryRegion> dst; ///< remote region
    uint32_t bytes{0};       ///< message size
    uint64_t next{0};        ///< next wrId

    /// Post one more WRITE.
    void Post()
    {
        qp->PostSend(src->WriteTo(*dst, bytes, next++));
    }

    /// A completion: post the next message.
    void Done(const IbWorkCompletion&)
    {
        Post();
    }
};

/// rdma-tree: IBA congestion control on in the InfiniBand fabric (--ibCc)
bool g_ibCongestionControl = false;
/// rdma-tree: adaptive routing on in the InfiniBand fabric (--ibAr)
bool g_ibAdaptiveRouting = false;
/// rdma-tree: virtual output queues in the InfiniBand switches (--ibVoq)
bool g_ibVoq = false;

/**
 * RDMA WRITE streams on a random permutation of a fat tree: InfiniBand (IbFabricHelper, ftree)
 * or RoCEv2 (EthFabricHelper: EthSwitch, ECMP, PFC, DCQCN), the same transport on both.
 * @param topology the fabric
 * @param roce true for the Ethernet fabric
 * @param duration simulated time
 * @param seed permutation seed
 * @return the measurement
 */
Result
BenchRdmaFatTree(const IbTopology& topology, bool roce, Time duration, uint32_t seed)
{
    Result r;
    r.scenario = "rdma-tree";
    r.model = roce ? "roce+eth-switch" : "infiniband-rdma";
    std::vector<Ptr<IbHca>> hcas;
    Ptr<IbSubnetManager> sm;
    NetDeviceContainer devices;
    IbFabric ib;
    EthFabric eth;
    if (roce)
    {
        EthFabricHelper fh;
        fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
        eth = fh.Build(topology);
        EthFabricHelper::AssignStreams(eth, 1); // every round marks the same frames
        hcas = eth.hcas;
        devices = eth.devices;
    }
    else
    {
        IbFabricHelper fh;
        fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
        fh.SetSubnetManagerAttribute("CongestionControl", BooleanValue(g_ibCongestionControl));
        fh.SetSubnetManagerAttribute("AdaptiveRouting", BooleanValue(g_ibAdaptiveRouting));
        fh.SetSwitchAttribute("InputBuffering", StringValue(g_ibVoq ? "voq" : "fifo"));
        ib = fh.Build(topology);
        sm = ib.subnetManager;
        IbHcaHelper hh;
        for (uint32_t i = 0; i < ib.hosts.GetN(); ++i)
        {
            hcas.push_back(hh.Install(ib.hosts.Get(i)));
            devices.Add(ib.HostPort(i));
        }
        devices.Add(ib.SwitchPorts());
    }
    const auto pairs =
        IbTrafficPattern::RandomPermutation(static_cast<uint32_t>(hcas.size()), seed);
    std::vector<std::unique_ptr<WriteStream>> streams;
    for (const auto& [i, j] : pairs)
    {
        if (i == j)
        {
            continue;
        }
        Ptr<IbCompletionQueue> cqa = hcas[i]->CreateCq();
        Ptr<IbCompletionQueue> cqb = hcas[j]->CreateCq();
        auto s = std::make_unique<WriteStream>();
        s->qp = hcas[i]->CreateQp(IbQpType::RC, cqa, cqa);
        Ptr<IbQueuePair> b = hcas[j]->CreateQp(IbQpType::RC, cqb, cqb);
        IbConnectionManager::ConnectRc(s->qp, b, sm, IbQpAttr());
        s->bytes = 1 << 20;
        s->src = hcas[i]->RegisterMemory(s->bytes, IB_ACCESS_LOCAL_WRITE);
        s->dst = hcas[j]->RegisterMemory(s->bytes, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
        cqa->SetCompletionCallback(MakeCallback(&WriteStream::Done, s.get()));
        s->Post();
        s->Post();
        streams.push_back(std::move(s));
    }
    TimedRun(duration, r);
    for (uint32_t k = 0; k < devices.GetN(); ++k)
    {
        if (auto d = DynamicCast<IbNetDevice>(devices.Get(k)))
        {
            r.packetHops += d->GetTxPackets();
        }
        else if (auto e = DynamicCast<EthNetDevice>(devices.Get(k)))
        {
            r.packetHops += e->GetTxFrames();
        }
    }
    streams.clear();
    Simulator::Destroy();
    return r;
}

// ------------------------------------------------------------------------- fat tree

Result
BenchIbFatTree(const IbTopology& topology, Time duration, uint32_t payload, uint32_t seed)
{
    Result r;
    r.scenario = "fat-tree";
    r.model = "infiniband";
    IbFabricHelper fh;
    fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric f = fh.Build(topology);
    ObjectFactory attrs;
    attrs.SetTypeId("ns3::IbRawTrafficApplication");
    attrs.Set("PayloadSize", UintegerValue(payload));
    IbTrafficPattern::InstallRawFlows(f,
                                      IbTrafficPattern::RandomPermutation(f.hosts.GetN(), seed),
                                      attrs)
        .Start(NanoSeconds(100));
    TimedRun(duration, r);
    for (uint32_t i = 0; i < f.hostPorts.GetN(); ++i)
    {
        r.packetHops += f.HostPort(i)->GetTxPackets();
    }
    const NetDeviceContainer sp = f.SwitchPorts();
    for (uint32_t i = 0; i < sp.GetN(); ++i)
    {
        r.packetHops += DynamicCast<IbNetDevice>(sp.Get(i))->GetTxPackets();
    }
    Simulator::Destroy();
    return r;
}

Result
BenchP2pFatTree(const IbTopology& topology,
                const std::string& rate,
                Time duration,
                uint32_t payload,
                uint32_t seed)
{
    Result r;
    r.scenario = "fat-tree";
    r.model = "p2p+ipv4";
    NodeContainer nodes;
    nodes.Create(topology.GetNNodes());
    InternetStackHelper stack;
    stack.Install(nodes);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(payload + 100));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    std::vector<Ptr<PointToPointNetDevice>> devs;
    std::vector<Ipv4Address> hostAddr(topology.GetNNodes());

    // (node, topology port) -> the node's interface on that link and the address across it
    struct Hop
    {
        uint32_t ifIndex;
        Ipv4Address next;
    };

    std::map<std::pair<uint32_t, uint32_t>, Hop> hopOf;
    for (uint32_t i = 0; i < topology.GetNNodes(); ++i)
    {
        const auto& node = topology.GetNode(i);
        for (uint32_t p = 1; p < node.ports.size(); ++p)
        {
            const auto& port = node.ports[p];
            if (port.peerNode <= static_cast<int32_t>(i))
            {
                continue;
            }
            NetDeviceContainer d = p2p.Install(nodes.Get(i), nodes.Get(port.peerNode));
            Ipv4InterfaceContainer ifs = addr.Assign(d);
            addr.NewNetwork();
            if (node.type == IbTopology::CA)
            {
                hostAddr[i] = ifs.GetAddress(0);
            }
            if (topology.GetNode(port.peerNode).type == IbTopology::CA)
            {
                hostAddr[port.peerNode] = ifs.GetAddress(1);
            }
            devs.push_back(DynamicCast<PointToPointNetDevice>(d.Get(0)));
            devs.push_back(DynamicCast<PointToPointNetDevice>(d.Get(1)));
            hopOf[{i, p}] = Hop{ifs.Get(0).second, ifs.GetAddress(1)};
            hopOf[{uint32_t(port.peerNode), port.peerPort}] =
                Hop{ifs.Get(1).second, ifs.GetAddress(0)};
        }
    }
    // The IB side's paths: the routers forward each host's address out of the port the
    // IB switch uses for that host's LID (ftree, LIDs as the subnet manager assigns
    // them), and hosts send everything to their leaf. ns-3's global routing would take
    // one of several equal-cost routes, the same for every destination, and a leaf would
    // push all its traffic up one spine and drop most of it.
    const IbRoutingProblem problem = IbLidAssigner::Assign(topology, 0, 1);
    IbRoutingTables tables;
    std::string error;
    IB_REQUIRE(CreateObject<IbFatTreeRouting>()->Route(problem, tables, &error), error);
    Ipv4StaticRoutingHelper staticRouting;
    const std::vector<uint32_t> cas = topology.GetCas();
    for (uint32_t i = 0; i < topology.GetNNodes(); ++i)
    {
        Ptr<Ipv4StaticRouting> routes =
            staticRouting.GetStaticRouting(nodes.Get(i)->GetObject<Ipv4>());
        if (topology.GetNode(i).type == IbTopology::CA)
        {
            const Hop& up = hopOf.at({i, 1});
            routes->SetDefaultRoute(up.next, up.ifIndex);
            continue;
        }
        for (uint32_t c : cas)
        {
            const Hop& out = hopOf.at({i, tables.lft[i][problem.baseLid[c][1]]});
            routes->AddHostRouteTo(hostAddr[c], out.next, out.ifIndex);
        }
    }
    const uint32_t wire = payload + 20 + 8 + 2;
    const Time interval = DataRate(rate).CalculateBytesTxTime(wire);
    PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    for (uint32_t c : cas)
    {
        sink.Install(nodes.Get(c));
    }
    for (const auto& [s, d] : IbTrafficPattern::RandomPermutation(cas.size(), seed))
    {
        UdpClientHelper client(hostAddr[cas[d]], 9);
        client.SetAttribute("MaxPackets", UintegerValue(0xFFFFFFFF));
        client.SetAttribute("Interval", TimeValue(interval));
        client.SetAttribute("PacketSize", UintegerValue(payload));
        client.Install(nodes.Get(cas[s])).Start(NanoSeconds(100));
    }
    TimedRun(duration, r);
    CountP2p(devs, r);
    Simulator::Destroy();
    return r;
}

// ------------------------------------------------------------------------- scaling

/// Packet-hops so far: data packets started by every port of the fabric.
uint64_t
FabricPacketHops(const IbFabric& f, uint64_t* hostPackets)
{
    uint64_t hops = 0;
    uint64_t fromHosts = 0;
    for (uint32_t i = 0; i < f.hostPorts.GetN(); ++i)
    {
        fromHosts += f.HostPort(i)->GetTxPackets();
    }
    const NetDeviceContainer sp = f.SwitchPorts();
    for (uint32_t i = 0; i < sp.GetN(); ++i)
    {
        hops += DynamicCast<IbNetDevice>(sp.Get(i))->GetTxPackets();
    }
    if (hostPackets != nullptr)
    {
        *hostPackets = fromHosts;
    }
    return hops + fromHosts;
}

Result
BenchScaling(uint32_t hosts, uint64_t targetHops, uint32_t payload)
{
    const IbTopology t = IbTopologyBuilder::FatTree3Level(16, hosts, 1.0, IbLinkRate::HDR, 4);
    Result r;
    r.scenario = "scaling";
    r.model = "ib-" + std::to_string(hosts) + "-hosts";
    IbFabricHelper fh;
    fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric f = fh.Build(t);
    ObjectFactory attrs;
    attrs.SetTypeId("ns3::IbRawTrafficApplication");
    attrs.Set("PayloadSize", UintegerValue(payload));
    IbTrafficPattern::InstallRawFlows(f, IbTrafficPattern::Shift(hosts, hosts / 2), attrs)
        .Start(NanoSeconds(100));
    // Each host sends targetHops / (5 x hosts) packet times: targetHops if every packet
    // crossed 5 links. The shift by hosts / 2 stays in one pod at 16 and 64 hosts (4
    // links: 0.8 x targetHops) and crosses the core from 256 hosts on (6 links: 1.2 x);
    // the cost compared is per packet-hop.
    const double wire = IbPacket::WireSize(payload, 0, false);
    const double packetTime = wire * 8 / 200e9;
    const Time duration = Seconds(targetHops / (hosts * 5.0) * packetTime);
    // The run in SLICES equal parts of simulated time (the same number of packet-hops
    // each, the fabric being full after the first), each timed in CPU time. The machine's
    // other tenants take the shared L3 for seconds at a time, now here, now there; a
    // slice's time says what a packet-hop cost while they left it alone. An event at
    // each boundary reads the clock, counts the packet-hops (not timed) and reads it again.
    constexpr uint32_t SLICES = 32;
    double sliceStart = 0;
    uint64_t hopsAtStart = 0;
    double bookkeeping = 0; // CPU seconds spent counting during the run, taken out of its time
    // Ends a slice (none before the first boundary: the first, filling the fabric, is not
    // reported) and starts the next.
    auto boundary = [&](bool first) {
        const double t0 = ThreadCpuSeconds();
        const uint64_t hops = FabricPacketHops(f, nullptr);
        if (!first && hops > hopsAtStart) // a very short run can have empty slices
        {
            r.sliceNsPerHop.push_back((t0 - sliceStart) / (hops - hopsAtStart) * 1e9);
        }
        hopsAtStart = hops;
        sliceStart = ThreadCpuSeconds();
        return sliceStart - t0;
    };
    for (uint32_t k = 1; k < SLICES; ++k)
    {
        Simulator::Schedule(duration * k / SLICES, [&, k]() { bookkeeping += boundary(k == 1); });
    }
    TimedRun(duration, r);
    boundary(false); // the last slice ends with the run
    r.packetHops = hopsAtStart;
    IB_REFUSE(r.packetHops == 0,
              "--scalingHops=" << targetHops << ": the " << hosts
                               << "-host run ended before its first packet-hop; ask for "
                                  "at least "
                               << hosts * 20 << " packet-hops");
    r.cpuSeconds -= bookkeeping;
    r.events -= SLICES - 1;
    r.maxRssKb = CurrentRssKb();
    Simulator::Destroy();
    Names::Clear();
    return r;
}

// ------------------------------------------------------------------------- allreduce

void
BenchAllreduce(uint32_t hosts, uint64_t bytes, const std::string& csv)
{
    IB_REFUSE(hosts < 2, "--hosts=" << hosts << ": the allreduce needs at least 2 hosts");
    IB_REFUSE(bytes < 4, "--allreduceBytes=" << bytes << ": at least one float (4 bytes)");
    const auto t0 = std::chrono::steady_clock::now();
    const IbTopology t = IbTopologyBuilder::FatTree3Level(16, hosts, 1.0, IbLinkRate::HDR, 4);
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric f = fh.Build(t);
    CollectiveHelper helper;
    helper.SetAlgorithm("ring");
    helper.SetCommunicatorAttribute("ChunkSize", UintegerValue(256 * 1024));
    Ptr<CollectiveCommunicator> comm = helper.InstallIb(f);
    CollectiveOpSpec spec;
    spec.type = CollectiveDataType::FLOAT32;
    spec.op = CollectiveRedOp::SUM;
    spec.count = 2;
    IB_REFUSE(CollectiveHelper::Run(comm, spec, nullptr, Seconds(100)) == Time::Max(),
              "the warm-up allreduce did not finish");
    const auto t1 = std::chrono::steady_clock::now();
    uint64_t hostPackets0 = 0;
    const uint64_t hops0 = FabricPacketHops(f, &hostPackets0);
    const uint64_t events0 = Simulator::GetEventCount();
    spec.count = bytes / 4;
    const double cpu0 = CpuSeconds();
    const Time sim = CollectiveHelper::Run(comm, spec, nullptr, Seconds(100));
    IB_REFUSE(sim == Time::Max(), "the allreduce of " << bytes << " B did not finish");
    const auto t2 = std::chrono::steady_clock::now();
    const double cpu = CpuSeconds() - cpu0;
    uint64_t hostPackets = 0;
    Result r;
    r.cpuSeconds = cpu;
    r.scenario = "allreduce";
    r.model = "ib-" + std::to_string(hosts) + "-hosts";
    r.packetHops = FabricPacketHops(f, &hostPackets) - hops0;
    hostPackets -= hostPackets0;
    r.events = Simulator::GetEventCount() - events0;
    r.wallSeconds = std::chrono::duration<double>(t2 - t1).count();
    r.simSeconds = sim.GetSeconds();
    r.maxRssKb = MaxRssKb();
    Print(r);
    AppendCsv(csv, r);
    const double setup = std::chrono::duration<double>(t1 - t0).count();
    std::cout << "allreduce: ring, " << hosts << " hosts, " << bytes
              << " B float sum: " << hostPackets << " packets (data and ACKs) sent by hosts, "
              << r.packetHops << " packet-hops, simulated " << std::fixed << std::setprecision(1)
              << sim.GetMicroSeconds() << " us in " << std::setprecision(2) << r.wallSeconds
              << " s wall, " << cpu << " s CPU (" << std::setprecision(0)
              << hostPackets / r.wallSeconds << " packets/s, " << r.wallSeconds / r.packetHops * 1e9
              << " ns per packet-hop); build, route and warm-up " << std::setprecision(2) << setup
              << " s; total " << setup + r.wallSeconds << " s; peak resident memory "
              << r.maxRssKb / 1024 << " MB\n";
    Simulator::Destroy();
    Names::Clear();
}

// ------------------------------------------------------------------------- build

void
BenchBuild(uint32_t hosts, uint32_t radix, const std::string& csv)
{
    const long before = CurrentRssKb();
    const auto t0 = std::chrono::steady_clock::now();
    const IbTopology t = IbTopologyBuilder::FatTree3Level(radix, hosts, 1.0, IbLinkRate::NDR, 4);
    IbFabricHelper fh;
    fh.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric f = fh.Build(t);
    const auto t1 = std::chrono::steady_clock::now();
    Result r;
    r.scenario = "build";
    r.model = "ib-" + std::to_string(hosts) + "-hosts";
    r.wallSeconds = std::chrono::duration<double>(t1 - t0).count();
    r.maxRssKb = CurrentRssKb();
    std::cout << "build: " << hosts << " hosts, " << f.switches.GetN() << " switches, "
              << t.GetNLinks() << " cables, " << f.subnetManager->GetRoutingProblem().MaxLid()
              << " LIDs: built and routed (ftree) in " << std::fixed << std::setprecision(2)
              << r.wallSeconds << " s, resident memory " << r.maxRssKb / 1024 << " MB ("
              << (r.maxRssKb - before) / 1024 << " MB more than before the build; the process's "
              << "peak so far " << MaxRssKb() / 1024
              << " MB; in a full run the heap is already grown: --scenario=build alone is "
              << "the fresh-process figure)\n";
    AppendCsv(csv, r);
    Simulator::Destroy();
    Names::Clear();
}

/**
 * Run this program with transparent huge pages for glibc's heap (the glibc.malloc.hugetlb
 * tunable, glibc 2.35 and later), unless --hugePages=false is given or GLIBC_TUNABLES is
 * already set. A 1024-host fabric spreads tens of megabytes of ports, switches, packets
 * and events over the heap, and with 4 KB pages nearly every packet-hop misses the TLB
 * several times. Tunables are read at start-up only, so the program starts itself again
 * with the variable set (after parsing its arguments, before building anything); if that
 * fails it goes on as it is.
 * @param wanted the --hugePages value
 * @param argv the program's arguments
 * @return what the heap uses, for the output
 */
std::string
UseHugePages(bool wanted, char* argv[])
{
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables != nullptr)
    {
        return std::string("GLIBC_TUNABLES=") + tunables;
    }
    if (!wanted)
    {
        return "4 KB pages (--hugePages=false)";
    }
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    execv("/proc/self/exe", argv);
    unsetenv("GLIBC_TUNABLES"); // exec failed: run as we are
    return "4 KB pages (could not restart with GLIBC_TUNABLES)";
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string scenario = "all";
    std::string csv;
    uint32_t hops = 4;
    double simMs = 20;
    uint32_t payload = 4096;
    double fatTreeUs = 500;
    bool p2pToo = true;
    std::string scheduler;
    uint32_t hostsOverride = 0;
    uint64_t scalingHops = 8000000;
    uint32_t scalingRounds = 3;
    uint64_t allreduceBytes = 64ull << 20;
    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd,
                   "scenario",
                   "scheduler, link-chain, fat-tree, scaling, build, allreduce or all (all "
                   "leaves out allreduce, which takes minutes)",
                   scenario);
    IbOptions::Add(cmd, "switches", "switches (IB) / routers (p2p) in the link chain", hops);
    IbOptions::Add(cmd, "simMs", "simulated milliseconds per chain run", simMs);
    IbOptions::Add(cmd, "payload", "payload bytes per packet", payload);
    IbOptions::Add(cmd, "fatTreeUs", "simulated microseconds of the fat-tree runs", fatTreeUs);
    IbOptions::Add(cmd, "csv", "append results to this CSV file", csv);
    IbOptions::Add(cmd,
                   "hosts",
                   "scaling: run only this many hosts (at most 1024: radix-16 3-level fat tree) "
                   "instead of 16, 64, 256, 512 and 1024; allreduce: ranks (default 1024)",
                   hostsOverride);
    IbOptions::Add(cmd, "scalingHops", "scaling: target packet-hops per fabric size", scalingHops);
    IbOptions::Add(cmd,
                   "scalingRounds",
                   "scaling: run the sweep this many times and also report the fastest run of "
                   "each size",
                   scalingRounds);
    IbOptions::Add(cmd, "allreduceBytes", "allreduce: bytes per rank", allreduceBytes);
    IbOptions::Add(cmd,
                   "scheduler",
                   "ns-3 scheduler for every run (default: ns3::MapScheduler, ns-3's default, "
                   "for the scenarios that compare with ns-3's models and the bare scheduler; "
                   "ns3::IbTimingWheelScheduler, this module's scheduler for fabrics, for "
                   "scaling, build and allreduce; ns3::IbHeapScheduler, ns3::HeapScheduler, "
                   "ns3::CalendarScheduler, ... give the same results)",
                   scheduler);
    bool hugePages = true;
    IbOptions::Add(cmd,
                   "hugePages",
                   "give glibc's heap transparent huge pages (glibc.malloc.hugetlb=1; the "
                   "program restarts itself with GLIBC_TUNABLES set): fewer TLB misses on "
                   "large fabrics, for the IB and the point-to-point runs alike",
                   hugePages);
    IbOptions::Add(cmd,
                   "p2p",
                   "also run the point-to-point + IPv4 model (false: IB only, to profile)",
                   p2pToo);
    std::string rdmaFabric = "both";
    uint32_t rdmaRounds = 3;
    IbOptions::Add(cmd,
                   "rdmaRounds",
                   "rdma-tree: alternating IB and RoCE runs; the ratio takes each one's fastest",
                   rdmaRounds);
    IbOptions::Add(cmd,
                   "ibCc",
                   "rdma-tree: IBA congestion control on in the InfiniBand fabric (subnet manager "
                   "defaults)",
                   g_ibCongestionControl);
    IbOptions::Add(cmd,
                   "ibAr",
                   "rdma-tree: adaptive routing on in the InfiniBand fabric (subnet manager AR "
                   "groups, least-loaded)",
                   g_ibAdaptiveRouting);
    IbOptions::Add(cmd,
                   "ibVoq",
                   "rdma-tree: virtual output queues in the InfiniBand switches' input buffers "
                   "(IbSwitch InputBuffering=voq)",
                   g_ibVoq);
    IbOptions::Add(cmd,
                   "rdmaFabric",
                   "rdma-tree: run both fabrics and their ratio (both), or only ib or roce, to "
                   "profile one",
                   rdmaFabric);
    cmd.Parse(argc, argv);
    IB_REQUIRE(simMs > 0, "--simMs=" << simMs << ": give a simulated time above 0 ms");
    IB_REQUIRE(fatTreeUs > 0, "--fatTreeUs=" << fatTreeUs << ": give a simulated time above 0 us");
    if (!csv.empty())
    {
        // Checked before the runs, so that a wrong path does not cost a benchmark.
        std::ofstream probe(csv, std::ios::app);
        IB_REQUIRE(probe, "--csv=" << csv << ": cannot write the file");
    }
    IB_REQUIRE(rdmaRounds >= 1, "--rdmaRounds=" << rdmaRounds << ": use 1 or more");
    IB_REQUIRE(rdmaFabric == "both" || rdmaFabric == "ib" || rdmaFabric == "roce",
               "--rdmaFabric=" << rdmaFabric << ": use both, ib or roce");
    const std::vector<std::string> scenarios{"all",
                                             "scheduler",
                                             "link-chain",
                                             "fat-tree",
                                             "rdma-tree",
                                             "scaling",
                                             "build",
                                             "allreduce"};
    IB_REFUSE(std::find(scenarios.begin(), scenarios.end(), scenario) == scenarios.end(),
              "--scenario=" << scenario
                            << " is not a scenario; use all, scheduler, link-chain, "
                               "fat-tree, scaling, build or allreduce");
    IB_REFUSE(scalingRounds == 0 && (scenario == "all" || scenario == "scaling"),
              "--scalingRounds=0: run the sweep at least once");
    const std::string heapPages = UseHugePages(hugePages, argv);
    // The scheduler for the scenarios that follow (the next simulator created uses it).
    auto useScheduler = [&](const std::string& byDefault) {
        const std::string type = scheduler.empty() ? byDefault : scheduler;
        IbHeapScheduler::SelectSchedulerType(type, "--scheduler");
        std::cout << "scheduler " << type << "\n";
    };
    std::cout << "heap: " << heapPages << "\n";
    const std::string kCompared = "ns3::MapScheduler";
    const std::string kIbOnly = "ns3::IbTimingWheelScheduler";

    std::cout << std::left << std::setw(12) << "scenario" << std::setw(22) << "model" << std::right
              << std::setw(12) << "pkt-hops" << std::setw(10) << "wall s" << std::setw(14)
              << "hops/s" << std::setw(10) << "ev/hop" << std::setw(10) << "rss MB" << std::setw(10)
              << "cpu s"
              << "\n";
    std::vector<Result> results;
    auto run = [&](const Result& r) {
        Print(r);
        AppendCsv(csv, r);
        results.push_back(r);
    };
    if (scenario == "all" || scenario == "scheduler")
    {
        useScheduler(kCompared);
        run(BenchScheduler(5000000));
    }
    if (scenario == "all" || scenario == "link-chain")
    {
        useScheduler(kCompared);
        const Result ibr = BenchIbChain(hops, MilliSeconds(simMs), payload);
        run(ibr);
        if (p2pToo)
        {
            const Result p2p = BenchP2pChain(hops, MilliSeconds(simMs), payload);
            run(p2p);
            std::cout << "link-chain: " << hops + 1 << " links, " << payload
                      << " B payload; IB / p2p+IPv4 packet-hops per wall second = " << std::fixed
                      << std::setprecision(2) << ibr.HopsPerSecond() / p2p.HopsPerSecond()
                      << "x, per CPU second = " << CpuRatio(ibr, p2p) << "x\n";
        }
        if (scenario == "all")
        {
            std::cout << "bare scheduler events per second / IB packet-hops per second = "
                      << results.front().HopsPerSecond() / ibr.HopsPerSecond() << "\n";
        }
    }
    if (scenario == "all" || scenario == "scaling")
    {
        useScheduler(kIbOnly);
        // 512 hosts too: its hot state (2-4 MB) lies between that of the flat sizes (under
        // 2 MB) and the 1024-host one (4-8 MB), so every sweep shows where the cost per
        // packet-hop starts to follow the hot state's size (doc/infiniband.rst, "Eleventh
        // round").
        std::vector<uint32_t> sizes{16, 64, 256, 512, 1024};
        if (hostsOverride != 0)
        {
            sizes = {hostsOverride};
        }
        // Rounds of the whole sweep, one after another: the machine's other tenants slow the
        // large fabrics (their hot state, megabytes, lives in the shared L3) by different
        // amounts from one minute to the next, never speed them up, so the fastest round of
        // each size is the best estimate of what the model costs. Every run is printed.
        std::vector<std::vector<Result>> rounds(scalingRounds);
        // The memory probe before and after each round's largest run: the neighbours can
        // start or stop during a run, so a run had the L3 to itself only if both were quiet.
        std::vector<std::pair<double, double>> probes;
        for (auto& sweep : rounds)
        {
            for (uint32_t hosts : sizes)
            {
                const double before = hosts == sizes.back() ? MemoryProbeNs() : 0;
                sweep.push_back(BenchScaling(hosts, scalingHops, payload));
                if (hosts == sizes.back())
                {
                    probes.emplace_back(before, MemoryProbeNs());
                }
                run(sweep.back());
            }
        }
        auto probeText = [&](std::size_t k) {
            std::ostringstream os;
            os << std::fixed << std::setprecision(1) << probes[k].first << " ns per load before, "
               << probes[k].second << " after";
            return os.str();
        };
        auto nsPerHop = [](const Result& r, bool cpu) {
            return (cpu ? r.cpuSeconds : r.wallSeconds) / r.packetHops * 1e9;
        };
        auto spread = [&](const std::vector<Result>& sweep, bool cpu) {
            double lo = 1e300;
            double hi = 0;
            for (const auto& r : sweep)
            {
                lo = std::min(lo, nsPerHop(r, cpu));
                hi = std::max(hi, nsPerHop(r, cpu));
            }
            std::ostringstream os;
            os << std::fixed << std::setprecision(0) << lo << " to " << hi << " ns ("
               << std::setprecision(1) << (hi / lo - 1) * 100 << " % spread)";
            return os.str();
        };
        for (std::size_t k = 0; k < rounds.size(); ++k)
        {
            std::cout << "scaling, round " << k + 1 << ": wall time per packet-hop from "
                      << spread(rounds[k], false) << ", CPU time per packet-hop from "
                      << spread(rounds[k], true) << "; memory probe (8 MB random walk) around the "
                      << sizes.back() << "-host run " << probeText(k) << "\n";
        }
        if (rounds.size() > 1)
        {
            std::vector<Result> fastest = rounds.front();
            std::size_t lastFrom = 0; // round of the fastest run of the largest size
            for (std::size_t k = 0; k < rounds.size(); ++k)
            {
                const auto& sweep = rounds[k];
                for (std::size_t i = 0; i < sweep.size(); ++i)
                {
                    if (nsPerHop(sweep[i], true) < nsPerHop(fastest[i], true))
                    {
                        fastest[i] = sweep[i];
                        if (i + 1 == sweep.size())
                        {
                            lastFrom = k;
                        }
                    }
                }
            }
            std::cout << "scaling, fastest of " << rounds.size()
                      << " rounds per size: CPU time per packet-hop from " << spread(fastest, true)
                      << " (sizes";
            for (const auto& r : fastest)
            {
                std::cout << " " << std::fixed << std::setprecision(0) << nsPerHop(r, true);
            }
            // Under about 30 ns per load the 8 MB walk stayed in the L3: the largest size's
            // run had the cache to itself, or nearly, when it started and when it ended.
            std::cout << " ns); the fastest " << sizes.back() << "-host run is round "
                      << lastFrom + 1 << "'s, memory probe " << probeText(lastFrom) << "\n";
        }
        // Every slice of every round, per size: the lower decile, the fastest and the
        // median. The slices of a size do the same work and interference only slows them:
        // the lower decile is what a packet-hop costs while the neighbours leave the L3
        // alone, if they did for a tenth of the time; the median, what it costs on this
        // machine as shared as it was.
        std::vector<std::vector<double>> slices(sizes.size());
        for (const auto& sweep : rounds)
        {
            for (std::size_t i = 0; i < sweep.size(); ++i)
            {
                slices[i].insert(slices[i].end(),
                                 sweep[i].sliceNsPerHop.begin(),
                                 sweep[i].sliceNsPerHop.end());
            }
        }
        auto sliceLine = [&](const char* what, double fraction) {
            std::vector<double> v;
            for (const auto& seg : slices)
            {
                v.push_back(Quantile(seg, fraction));
            }
            const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
            std::cout << "scaling, " << what << " of " << slices.front().size()
                      << " slices per size: " << std::fixed << std::setprecision(0) << *lo << " to "
                      << *hi << " ns per packet-hop (" << std::setprecision(1)
                      << (*hi / *lo - 1) * 100 << " % spread) (sizes";
            for (double x : v)
            {
                std::cout << " " << std::setprecision(0) << x;
            }
            std::cout << " ns)\n";
        };
        if (std::none_of(slices.begin(), slices.end(), [](const auto& seg) { return seg.empty(); }))
        {
            sliceLine("lower decile", 0.1);
            sliceLine("fastest", 0.0);
            sliceLine("median", 0.5);
        }
    }
    if (scenario == "all" || scenario == "build")
    {
        useScheduler(kIbOnly);
        BenchBuild(4096, 32, csv);
    }
    if (scenario == "allreduce")
    {
        useScheduler(kIbOnly);
        BenchAllreduce(hostsOverride != 0 ? hostsOverride : 1024, allreduceBytes, csv);
    }
    if (scenario == "all" || scenario == "rdma-tree")
    {
        useScheduler(kCompared);
        const IbTopology t = IbTopologyBuilder::FatTree2Level(16, 128, 1.0, IbLinkRate::HDR, 4);
        const Time d = MicroSeconds(fatTreeUs);
        if (rdmaFabric != "both")
        {
            run(BenchRdmaFatTree(t, rdmaFabric == "roce", d, 1));
        }
        else
        {
            // The two fabrics alternate, rdmaRounds times, and each keeps its fastest run: a
            // tenant that takes the machine's caches for a while slows one run, not the ratio.
            Result ibr;
            Result roce;
            for (uint32_t k = 0; k < rdmaRounds; ++k)
            {
                const Result a = BenchRdmaFatTree(t, false, d, 1);
                run(a);
                const Result b = BenchRdmaFatTree(t, true, d, 1);
                run(b);
                if (k == 0 || a.cpuSeconds < ibr.cpuSeconds)
                {
                    ibr = a;
                }
                if (k == 0 || b.cpuSeconds < roce.cpuSeconds)
                {
                    roce = b;
                }
            }
            std::cout << "rdma-tree: 128 hosts, 24 switches, permutation of RC WRITE streams; "
                         "fastest of "
                      << rdmaRounds << " alternating runs: IB " << std::fixed
                      << std::setprecision(0) << ibr.packetHops / ibr.cpuSeconds
                      << " packet-hops per CPU second, RoCE " << roce.packetHops / roce.cpuSeconds
                      << "; RoCE (EthSwitch) / IB = " << std::setprecision(2) << CpuRatio(roce, ibr)
                      << "x (target 0.67x: within 1.5x); heap allocations per packet-hop: IB "
                      << std::setprecision(3) << double(ibr.allocations) / ibr.packetHops
                      << ", RoCE " << double(roce.allocations) / roce.packetHops << "\n";
        }
    }
    if (scenario == "all" || scenario == "fat-tree")
    {
        useScheduler(kCompared);
        const IbTopology t = IbTopologyBuilder::FatTree2Level(16, 128, 1.0, IbLinkRate::HDR, 4);
        const Time d = MicroSeconds(fatTreeUs);
        const Result ibr = BenchIbFatTree(t, d, payload, 1);
        run(ibr);
        if (p2pToo)
        {
            const Result p2p = BenchP2pFatTree(t, "200Gbps", d, payload, 1);
            run(p2p);
            std::cout << "fat-tree p2p+IPv4: " << p2p.drops << " packets dropped and "
                      << p2p.backlog
                      << " waiting in the queue discs and device queues at the end (counted "
                         "packet-hops are the packets the device queues took)\n";
            std::cout << "fat-tree: 128 hosts, 24 switches, 256 cables, permutation; IB / "
                         "p2p+IPv4 packet-hops per wall second = "
                      << std::fixed << std::setprecision(2)
                      << ibr.HopsPerSecond() / p2p.HopsPerSecond()
                      << "x, per CPU second = " << CpuRatio(ibr, p2p) << "x\n";
        }
    }
    return 0;
}

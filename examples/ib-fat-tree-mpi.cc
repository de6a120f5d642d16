/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A fat tree split over the ranks of a distributed (MPI) simulation: every rank builds
 * the whole fabric and runs the subnet manager (same LIDs and routes everywhere), but
 * simulates only its own part, chosen with IbPartition; cables between ranks are
 * IbRemoteChannels. Each host sends a fixed number of packets to another host (a random
 * permutation by default); flows start at 1 us plus a per-flow offset of up to --jitter
 * ns drawn from --seed.
 *
 *   mpirun -np 2 ./ib-fat-tree-mpi                      granted-time-window engine
 *   mpirun -np 2 ./ib-fat-tree-mpi --nullmsg=true       null-message engine
 *   ./ib-fat-tree-mpi --mpi=false                       one process, no MPI at all
 *   ./ib-fat-tree-mpi --levels=3 --radix=8 --hosts=128 --partition=pod --packets=500
 *   mpirun -np 2 ./ib-fat-tree-mpi --fabric=roce        the Ethernet/RoCE fabric of that shape
 *
 * With --fabric=roce the tree is built by EthFabricHelper (EthSwitch with ECMP, PFC and ECN,
 * RoCE NICs with DCQCN) and cables between ranks are EthRemoteChannels; each flow is an RC
 * connection writing --packets messages of --payload bytes, 64 in flight. Its result lines
 * are per host and source (frames, bytes, first and last arrival), per flow (messages
 * completed, time of the last), per port (frames, bytes and PFC frames sent, time paused)
 * and per switch (frames forwarded, ECN marks, XOFFs, drops).
 *
 * Without ns-3's mpi module (Debian's binary ns-3) it always runs as one process.
 *
 * Prints the fabric, the partition (cables cut, lookahead), per-rank totals and wall
 * times. With --results=PREFIX each rank writes PREFIX.rank<r>.txt: one sorted line per
 * flow that ends on the rank (packets, bytes, first and last arrival), per port of its
 * nodes (packets, bytes and flow-control packets sent, credit stall time) and per
 * switch (packets forwarded). The lines do not depend on the number of ranks: the
 * union over ranks of a distributed run must equal the file of a one-process run
 * (utils/test-mpi.sh checks that). With --jitter=0 the flows of a symmetric tree make
 * events coincide to the picosecond; ns-3 runs simultaneous events in the order they
 * were scheduled, which a distributed run does not reproduce for events from other
 * ranks, so results can then differ (in the runs tried: a few ports' flow-control
 * packet counts, by one). The jitter keeps permutation and shift traffic apart; heavily
 * contended patterns (all-to-all with tens of packets per flow) can still differ per flow
 * between a distributed and a one-process run (doc/infiniband.rst, "Building with MPI,
 * and identical results").
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#ifdef NS3_MPI
#include "ns3/eth-remote-channel.h"
#include "ns3/mpi-interface.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

/// What a destination host saw of one flow.
struct FlowRx
{
    uint64_t packets{0}; ///< data packets received
    uint64_t bytes{0};   ///< their wire bytes
    Time first;          ///< arrival of the first
    Time last;           ///< arrival of the last
};

/// Flows ending on this rank: (destination host, source LID) -> what arrived.
std::map<std::pair<uint32_t, uint16_t>, FlowRx> g_rx;

/**
 * MacRx of a host port.
 * @param dstHost the receiving host's index
 * @param packet the packet (LRH first)
 */
void
OnHostRx(uint32_t dstHost, Ptr<const Packet> packet)
{
    IbLrhHeader lrh;
    packet->PeekHeader(lrh);
    FlowRx& f = g_rx[{dstHost, lrh.GetSlid()}];
    if (f.packets == 0)
    {
        f.first = Simulator::Now();
    }
    ++f.packets;
    f.bytes += packet->GetSize();
    f.last = Simulator::Now();
}

/// @return seconds since @p t0
double
Since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A RoCE flow: RC RDMA WRITEs of one message size, IN_FLIGHT at a time, until all are done.
struct RoceFlow
{
    uint32_t src{0};            ///< sending host
    uint32_t dst{0};            ///< receiving host
    Ptr<IbQueuePair> qp;        ///< the sender's QP
    Ptr<IbMemoryRegion> local;  ///< source buffer
    Ptr<IbMemoryRegion> remote; ///< destination buffer
    uint32_t bytes{0};          ///< message size
    uint32_t messages{0};       ///< messages to send
    uint32_t posted{0};         ///< messages posted
    uint32_t completed{0};      ///< messages completed
    Time done;                  ///< completion of the last

    /// Post the next message, if any is left.
    void Post()
    {
        if (posted == messages)
        {
            return;
        }
        qp->PostSend(local->WriteTo(*remote, bytes, posted++));
    }

    /// Messages in flight: enough to cover the bandwidth-delay product of a 3-level tree at
    /// 400 Gb/s (about 5 us of round trip through five switches) with 4 KiB messages.
    static constexpr uint32_t IN_FLIGHT = 64;

    /// Start: IN_FLIGHT messages in flight.
    void Start()
    {
        for (uint32_t k = 0; k < IN_FLIGHT; ++k)
        {
            Post();
        }
    }

    /**
     * A send completion: post the next message.
     * @param wc the completion
     */
    void Completed(const IbWorkCompletion& wc)
    {
        IB_REQUIRE(wc.status == IbWcStatus::SUCCESS,
                   "flow " << src << " -> " << dst << ": WRITE " << wc.wrId
                           << " completed with an error");
        if (++completed == messages)
        {
            done = Simulator::Now();
        }
        Post();
    }
};

/// Frames a RoCE host received from one source address: (host, source IP) -> counts.
std::map<std::pair<uint32_t, uint32_t>, FlowRx> g_ethRx;

/**
 * MacRx of a RoCE host port.
 * @param dstHost the receiving host's index
 * @param frame the frame
 */
void
OnEthHostRx(uint32_t dstHost, Ptr<const Packet> frame)
{
    uint8_t head[64];
    const uint32_t len = EthFrame::CopyHead(*frame, head, sizeof(head));
    EthFrame::FlowKey key{};
    if (!EthFrame::PeekFlow(head, len, key))
    {
        return;
    }
    FlowRx& f = g_ethRx[{dstHost, key.srcIp}];
    if (f.packets == 0)
    {
        f.first = Simulator::Now();
    }
    ++f.packets;
    f.bytes += frame->GetSize();
    f.last = Simulator::Now();
}

/**
 * Run the simulation.
 * @param stop when to stop it
 * @return the wall seconds of Simulator::Run and the events it ran
 */
std::pair<double, uint64_t>
RunUntil(Time stop)
{
    Simulator::Stop(stop);
    const auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    return {Since(runStart), Simulator::GetEventCount()};
}

/**
 * Start times: @p start plus a per-flow offset below @p jitterNs drawn from @p seed, the same
 * on every rank (drawn for all flows in flow order, not only for this rank's). Without it,
 * flows of a symmetric fabric reach switches at the very same picosecond; ns-3 runs
 * simultaneous events in the order they were scheduled, and events from another rank are
 * scheduled when their message is received, so such ties can be broken differently by a
 * distributed run (see utils/test-mpi.sh).
 * @param flows the flows
 * @param start the earliest start
 * @param jitterNs the range of the offsets
 * @param seed their seed
 * @return each flow's start
 */
std::map<IbTrafficPattern::Flow, Time>
StartTimes(const std::vector<IbTrafficPattern::Flow>& flows,
           Time start,
           double jitterNs,
           uint32_t seed)
{
    std::mt19937_64 rng(IbTrafficPattern::ReplicationSeed(seed));
    const int64_t jitterPs = static_cast<int64_t>(jitterNs * 1000);
    std::map<IbTrafficPattern::Flow, Time> startOf;
    for (const auto& f : flows)
    {
        const int64_t ps = jitterPs > 0 ? static_cast<int64_t>(rng() % uint64_t(jitterPs)) : 0;
        startOf[f] = start + PicoSeconds(ps);
    }
    return startOf;
}

/**
 * @param flows the flows
 * @param packetTime one packet's time on a link
 * @param packets packets per flow
 * @return the time the busiest host (as sender or receiver) needs at full link rate
 */
Time
IdealTime(const std::vector<IbTrafficPattern::Flow>& flows, Time packetTime, uint32_t packets)
{
    std::map<uint32_t, uint32_t> flowsAtHost;
    uint32_t busiest = 1;
    for (const auto& [src, dst] : flows)
    {
        busiest = std::max({busiest, ++flowsAtHost[src << 1], ++flowsAtHost[(dst << 1) | 1]});
    }
    return packetTime * int64_t(packets) * int64_t(busiest);
}

/**
 * The end of a run: write this rank's result lines (sorted) to PREFIX.rank<r>.txt if asked,
 * print its summary, destroy the simulation and leave MPI.
 * @param lines the result lines
 * @param summary the rank's summary line
 * @param results the file prefix ("" for none)
 * @param rank this rank
 * @param root true on rank 0
 * @param useMpi true if MPI was enabled
 * @param wallStart the program's start
 * @return the exit status
 */
int
Finish(std::vector<std::string> lines,
       const std::string& summary,
       const std::string& results,
       uint32_t rank,
       bool root,
       bool useMpi,
       std::chrono::steady_clock::time_point wallStart)
{
    std::sort(lines.begin(), lines.end());
    if (!results.empty())
    {
        const std::string file = results + ".rank" + std::to_string(rank) + ".txt";
        std::ofstream out(file);
        IB_REQUIRE(out, "cannot write " << file);
        for (const auto& l : lines)
        {
            out << l << "\n";
        }
    }
    std::cout << summary << std::flush;
    Simulator::Destroy();
#ifdef NS3_MPI
    if (useMpi)
    {
        MpiInterface::Disable();
    }
#endif
    if (root)
    {
        std::cout << "total: " << Since(wallStart) << " s wall\n";
    }
    return 0;
}

} // namespace

int
main(int argc, char* argv[])
{
    const auto wallStart = std::chrono::steady_clock::now();
    uint32_t levels = 2;
    uint32_t radix = 8;
    uint32_t hosts = 32;
    std::string speed = "HDR";
    std::string routing = "ftree";
    std::string pattern = "permutation";
    std::string partition = "pod";
    uint32_t payload = 4096;
    uint32_t packets = 200;
    uint32_t seed = 1;
    double delayNs = 20;
    double stopUs = 0;
    double jitterNs = 100;
    std::string resolution = "ps";
    std::string results;
    bool nullmsg = false;
    bool useMpi = true;
    uint32_t plan = 0;
    std::string fabricType = "ib";

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd,
                   "fabric",
                   "ib (IbSwitch, raw IB packets) or roce (EthSwitch with ECMP, PFC and ECN; "
                   "RoCE NICs with DCQCN; each flow an RC connection of RDMA WRITEs)",
                   fabricType);
    IbOptions::Add(cmd, "levels", "fat-tree levels: 2 or 3", levels);
    IbOptions::Add(cmd, "radix", "switch radix (ports per switch)", radix);
    IbOptions::Add(cmd, "hosts", "number of hosts", hosts);
    IbOptions::Add(cmd, "speed", "link speed of every cable (SDR..XDR), 4x width", speed);
    IbOptions::Add(cmd, "routing", "routing engine: minhop, updn, ftree, dfsssp", routing);
    IbOptions::Add(cmd, "pattern", "permutation, shift, all-to-all or incast", pattern);
    IbOptions::Add(cmd, "partition", "pod (IbPartition::ByPod) or leaf (ByLeafGroups)", partition);
    IbOptions::Add(cmd, "payload", "payload bytes per packet", payload);
    IbOptions::Add(cmd, "packets", "packets each flow sends", packets);
    IbOptions::Add(cmd, "seed", "seed of the random permutation", seed);
    IbOptions::Add(cmd, "delay", "cable delay in ns (the lookahead between ranks)", delayNs);
    IbOptions::Add(cmd,
                   "stop",
                   "simulated microseconds after which the run stops (0: ten times the time "
                   "the busiest host needs at full link rate, plus 10 us)",
                   stopUs);
    IbOptions::Add(cmd,
                   "jitter",
                   "flows start at 1 us plus up to this many ns (0: all at once)",
                   jitterNs);
    IbOptions::Add(cmd, "resolution", "time resolution: ns or ps", resolution);
    IbOptions::Add(cmd,
                   "results",
                   "write PREFIX.rank<r>.txt with sorted per-flow/port lines",
                   results);
    IbOptions::Add(cmd,
                   "nullmsg",
                   "use the null-message engine instead of granted time windows",
                   nullmsg);
    IbOptions::Add(cmd, "mpi", "run distributed with MPI (false: one process, no MPI)", useMpi);
    IbOptions::Add(cmd, "plan", "also print the partition this fabric would get on N ranks", plan);
    cmd.Parse(argc, argv);

    IB_REQUIRE(resolution == "ns" || resolution == "ps", "--resolution: ns or ps");
    Time::SetResolution(resolution == "ps" ? Time::PS : Time::NS);
    IB_REFUSE(stopUs < 0 || !std::isfinite(stopUs),
              "--stop=" << stopUs << ": simulated microseconds, 0 (automatic) or more");
    IB_REFUSE(jitterNs < 0 || !std::isfinite(jitterNs),
              "--jitter=" << jitterNs << ": nanoseconds, 0 (all flows at once) or more");
#ifdef NS3_MPI
    IB_REFUSE(nullmsg && !useMpi,
              "--nullmsg=true with --mpi=false: the null-message engine is MPI's; drop "
              "--mpi=false or --nullmsg");
#endif

    uint32_t rank = 0;
    uint32_t ranks = 1;
    std::string engine = "sequential (DefaultSimulatorImpl, no MPI)";
#ifdef NS3_MPI
    if (useMpi)
    {
        // The engine must be chosen before MpiInterface::Enable.
        engine = nullmsg ? "ns3::NullMessageSimulatorImpl" : "ns3::DistributedSimulatorImpl";
        GlobalValue::Bind("SimulatorImplementationType", StringValue(engine));
        MpiInterface::Enable(&argc, &argv);
        rank = MpiInterface::GetSystemId();
        ranks = MpiInterface::GetSize();
    }
#else
    if (useMpi || nullmsg)
    {
        std::cout << "ns-3 was built without MPI: running as one process\n";
    }
#endif
    // Distributed, the cable delay is the lookahead between ranks: it must be a positive
    // number of time steps at the resolution chosen.
    IB_REQUIRE(ranks == 1 || (delayNs > 0 && NanoSeconds(delayNs).IsStrictlyPositive()),
               "--delay=" << delayNs << " with --resolution=" << resolution
                          << ": the cable delay is the lookahead between ranks and "
                             "must be positive at that resolution (at least "
                          << (resolution == "ps" ? "0.001" : "1") << " ns)");
    const bool root = rank == 0;

    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << ": use one of " << IbLinkRate::ValidSpeedNames());
    IB_REQUIRE(levels == 2 || levels == 3, "--levels must be 2 or 3");
    IB_REQUIRE(partition == "pod" || partition == "leaf", "--partition: pod or leaf");
    IB_REQUIRE(fabricType == "ib" || fabricType == "roce",
               "--fabric=" << fabricType << ": use ib or roce");
    IB_REFUSE(packets == 0, "--packets must be at least 1 (packets each flow sends)");
    const IbTopology topology = levels == 2
                                    ? IbTopologyBuilder::FatTree2Level(radix, hosts, 1.0, s, 4)
                                    : IbTopologyBuilder::FatTree3Level(radix, hosts, 1.0, s, 4);
    auto partitionFor = [&](uint32_t n) {
        return partition == "pod" ? IbPartition::ByPod(topology, n)
                                  : IbPartition::ByLeafGroups(topology, n);
    };
    const std::vector<uint32_t> rankOf = partitionFor(ranks);
    const Time start = MicroSeconds(1);
    if (fabricType == "roce")
    {
        // The same tree as an Ethernet fabric (EthSwitch: ECMP, PFC, ECN) with RoCE NICs
        // (DCQCN); each flow is an RC connection writing `packets` messages of `payload`
        // bytes, RoceFlow::IN_FLIGHT at a time.
        EthFabricHelper ethHelper;
        ethHelper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(delayNs)));
        ethHelper.SetRankOfNode([&rankOf](uint32_t i) { return rankOf.at(i); });
        EthFabric eth = ethHelper.Build(topology);
        EthFabricHelper::AssignStreams(eth, 1); // the same ECN draws on every rank
        auto local = [rank](Ptr<Node> node) { return node->GetSystemId() == rank; };
        const auto flows = IbTrafficPattern::ByName(pattern,
                                                    eth.hosts.GetN(),
                                                    IbTrafficPattern::ReplicationSeed(seed));
        const std::map<IbTrafficPattern::Flow, Time> startOf =
            StartTimes(flows, start, jitterNs, seed);
        const DataRate rate = IbLinkRate::GetDataRate(s, 4);
        const Time stop = stopUs > 0
                              ? MicroSeconds(stopUs)
                              : start + NanoSeconds(jitterNs) +
                                    10 * IdealTime(flows,
                                                   rate.CalculateBytesTxTime(EthFrame::WireBytes(
                                                       RocePacket::FrameSize(payload, 16))),
                                                   packets) +
                                    MicroSeconds(10);
        // Every rank connects every flow (the QPs exist everywhere); each starts its own.
        std::vector<std::unique_ptr<RoceFlow>> roceFlows;
        for (const auto& [a, b] : flows)
        {
            auto f = std::make_unique<RoceFlow>();
            f->src = a;
            f->dst = b;
            f->bytes = payload;
            f->messages = packets;
            Ptr<IbCompletionQueue> cqa = eth.hcas[a]->CreateCq();
            Ptr<IbCompletionQueue> cqb = eth.hcas[b]->CreateCq();
            f->qp = eth.hcas[a]->CreateQp(IbQpType::RC, cqa, cqa);
            Ptr<IbQueuePair> peer = eth.hcas[b]->CreateQp(IbQpType::RC, cqb, cqb);
            IbConnectionManager::ConnectRc(f->qp, peer);
            f->local = eth.hcas[a]->RegisterMemory(payload, IB_ACCESS_LOCAL_WRITE);
            f->remote = eth.hcas[b]->RegisterMemory(payload,
                                                    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
            if (local(eth.hosts.Get(a)))
            {
                cqa->SetCompletionCallback(MakeCallback(&RoceFlow::Completed, f.get()));
                Simulator::Schedule(startOf.at({a, b}), &RoceFlow::Start, f.get());
            }
            roceFlows.push_back(std::move(f));
        }
        std::map<uint32_t, uint32_t> hostOfIp;
        for (uint32_t h = 0; h < eth.hosts.GetN(); ++h)
        {
            hostOfIp[eth.addresses[h].Get()] = h;
            if (local(eth.hosts.Get(h)))
            {
                eth.hostDevices.Get(h)->TraceConnectWithoutContext(
                    "MacRx",
                    MakeBoundCallback(&OnEthHostRx, h));
            }
        }
        const IbPartition::Stats cut =
            IbPartition::CutLinks(topology, rankOf, NanoSeconds(delayNs));
        if (root)
        {
            std::cout << levels << "-level fat tree as an Ethernet/RoCE fabric: radix " << radix
                      << ", " << eth.hosts.GetN() << " hosts, " << eth.switches.GetN()
                      << " switches, " << topology.GetNLinks() << " cables at "
                      << rate.GetBitRate() / 1e9 << " Gb/s, " << delayNs << " ns cables\n"
                      << "ECMP, PFC, ECN and DCQCN at their defaults, pattern " << pattern << " ("
                      << flows.size() << " RC flows of " << packets << " x " << payload
                      << " B WRITEs), resolution " << resolution << ", stop at "
                      << stop.GetMicroSeconds() << " us\n"
                      << "engine " << engine << ", " << ranks << " rank(s), partition " << partition
                      << "\n";
            IbPartition::Print(std::cout, cut);
            std::cout << "build: " << Since(wallStart) << " s wall\n" << std::flush;
        }

        const auto [runWall, events] = RunUntil(stop);

        std::vector<std::string> lines;
        uint64_t rxFrames = 0;
        for (const auto& [key, f] : g_ethRx)
        {
            const auto src = hostOfIp.find(key.second);
            std::ostringstream l;
            l << "rx " << key.first << " from "
              << (src == hostOfIp.end() ? -1 : int64_t(src->second)) << " frames " << f.packets
              << " bytes " << f.bytes << " first_ps " << f.first.GetPicoSeconds() << " last_ps "
              << f.last.GetPicoSeconds();
            lines.push_back(l.str());
            rxFrames += f.packets;
        }
        uint32_t sent = 0;
        uint32_t completed = 0;
        Time lastDone;
        for (const auto& f : roceFlows)
        {
            if (!local(eth.hosts.Get(f->src)))
            {
                continue;
            }
            ++sent;
            std::ostringstream l;
            l << "flow " << f->src << " -> " << f->dst << " completed " << f->completed
              << " done_ps " << f->done.GetPicoSeconds();
            lines.push_back(l.str());
            if (f->completed == f->messages)
            {
                ++completed;
                lastDone = std::max(lastDone, f->done);
            }
        }
        uint64_t txFrames = 0;
        uint64_t pfcFrames = 0;
        uint64_t shipped = 0;
        uint32_t nodes = 0;
        auto portLines = [&](const std::string& name, Ptr<Node> node) {
            ++nodes;
            for (uint32_t d = 0, p = 0; d < node->GetNDevices(); ++d)
            {
                Ptr<EthNetDevice> dev = DynamicCast<EthNetDevice>(node->GetDevice(d));
                if (!dev)
                {
                    continue;
                }
                uint64_t pfc = 0;
                Time paused;
                for (uint8_t prio = 0; prio < EthNetDevice::NUM_PRIORITIES; ++prio)
                {
                    pfc += dev->GetPfcFramesSent(prio);
                    paused += dev->GetPausedTime(prio);
                }
                std::ostringstream l;
                l << "port " << name << " " << ++p << " tx_frames " << dev->GetTxFrames()
                  << " tx_bytes " << dev->GetTxBytes() << " pfc_sent " << pfc << " paused_ps "
                  << paused.GetPicoSeconds();
                lines.push_back(l.str());
                txFrames += dev->GetTxFrames();
                pfcFrames += pfc;
#ifdef NS3_MPI
                if (auto ch = DynamicCast<EthRemoteChannel>(dev->GetChannel()))
                {
                    shipped += ch->GetRemoteTxFrames();
                }
#endif
            }
        };
        for (uint32_t h = 0; h < eth.hosts.GetN(); ++h)
        {
            if (local(eth.hosts.Get(h)))
            {
                portLines(topology.GetNode(eth.topologyIndex[h]).name, eth.hosts.Get(h));
            }
        }
        for (uint32_t i = 0, k = 0; i < topology.GetNNodes(); ++i)
        {
            if (topology.GetNode(i).type != IbTopology::SWITCH)
            {
                continue;
            }
            Ptr<EthSwitch> sw = eth.ethSwitches[k];
            Ptr<Node> node = eth.switches.Get(k++);
            if (!local(node))
            {
                continue;
            }
            portLines(topology.GetNode(i).name, node);
            uint64_t drops = 0;
            for (uint32_t r = 0; r < EthSwitch::N_DROP_REASONS; ++r)
            {
                drops += sw->GetDropCount(static_cast<EthSwitch::DropReason>(r));
            }
            std::ostringstream l;
            l << "switch " << topology.GetNode(i).name << " forwarded " << sw->GetForwardedFrames()
              << " ecn_marks " << sw->GetEcnMarks() << " xoff " << sw->GetXoffCount() << " drops "
              << drops;
            lines.push_back(l.str());
        }
        std::ostringstream summary;
        summary << "rank " << rank << ": " << nodes << " nodes, " << sent << " flows sent, "
                << completed << " complete (last at " << lastDone.GetNanoSeconds() << " ns), "
                << rxFrames << " frames received by its hosts, " << txFrames
                << " frames sent by its ports, " << pfcFrames << " of them PFC (" << shipped
                << " frames to other ranks), " << events << " events, run " << runWall
                << " s wall\n";
        return Finish(lines, summary.str(), results, rank, root, useMpi, wallStart);
    }

    // Every rank builds the same fabric; nodes get their rank as system id.
    IbFabricHelper fabricHelper;
    fabricHelper.SetDeviceAttribute("NumDataVls", UintegerValue(routing == "dfsssp" ? 8 : 1));
    fabricHelper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(delayNs)));
    fabricHelper.SetSubnetManagerAttribute("RoutingEngine", StringValue(routing));
    fabricHelper.SetRankOfNode([&rankOf](uint32_t i) { return rankOf.at(i); });
    IbFabric fabric = fabricHelper.Build(topology);
    auto local = [rank](Ptr<Node> node) { return node->GetSystemId() == rank; };

    // Flows: every rank knows them all, and starts those whose source is its own.
    const auto flows = IbTrafficPattern::ByName(pattern,
                                                fabric.hosts.GetN(),
                                                IbTrafficPattern::ReplicationSeed(seed));
    std::vector<IbTrafficPattern::Flow> localFlows;
    std::copy_if(flows.begin(),
                 flows.end(),
                 std::back_inserter(localFlows),
                 [&](const IbTrafficPattern::Flow& f) { return local(fabric.hosts.Get(f.first)); });
    ObjectFactory flowAttributes;
    flowAttributes.SetTypeId("ns3::IbRawTrafficApplication");
    flowAttributes.Set("PayloadSize", UintegerValue(payload));
    flowAttributes.Set("MaxPackets", UintegerValue(packets));
    ApplicationContainer apps =
        IbTrafficPattern::InstallRawFlows(fabric, localFlows, flowAttributes);
    // The null-message engine never runs out of events (null messages): the run needs an
    // end, which should not be far beyond the traffic's.
    const Time ideal = IdealTime(
        flows,
        IbLinkRate::GetDataRate(s, 4).CalculateBytesTxTime(IbPacket::WireSize(payload, 0, false)),
        packets);
    const Time stop = stopUs > 0 ? MicroSeconds(stopUs)
                                 : start + NanoSeconds(jitterNs) + 10 * ideal + MicroSeconds(10);
    const std::map<IbTrafficPattern::Flow, Time> startOf = StartTimes(flows, start, jitterNs, seed);
    for (uint32_t k = 0; k < localFlows.size(); ++k)
    {
        apps.Get(k)->SetStartTime(startOf.at(localFlows[k]));
    }
    apps.Stop(stop);

    std::map<uint16_t, uint32_t> hostOfLid;
    for (uint32_t h = 0; h < fabric.hosts.GetN(); ++h)
    {
        hostOfLid[fabric.HostPort(h)->GetLid()] = h;
        if (local(fabric.hosts.Get(h)))
        {
            fabric.HostPort(h)->TraceConnectWithoutContext("MacRx",
                                                           MakeBoundCallback(&OnHostRx, h));
        }
    }

    const IbPartition::Stats cut = IbPartition::CutLinks(fabric);
    if (root)
    {
        std::cout << levels << "-level fat tree: radix " << radix << ", " << fabric.hosts.GetN()
                  << " hosts, " << fabric.switches.GetN() << " switches, " << topology.GetNLinks()
                  << " cables, 4x" << speed << ", " << delayNs << " ns cables\n"
                  << "routing " << routing << ", pattern " << pattern << " (" << flows.size()
                  << " flows of " << packets << " x " << payload << " B), resolution " << resolution
                  << ", stop at " << stop.GetMicroSeconds() << " us\n"
                  << "engine " << engine << ", " << ranks << " rank(s), partition " << partition
                  << "\n";
        IbPartition::Print(std::cout, cut);
        if (plan > 1)
        {
            std::cout << "(planned for " << plan << " ranks) ";
            IbPartition::Print(
                std::cout,
                IbPartition::CutLinks(topology, partitionFor(plan), NanoSeconds(delayNs)));
        }
        std::cout << "build: " << Since(wallStart) << " s wall\n" << std::flush;
    }

    const auto [runWall, events] = RunUntil(stop);

    // Results of this rank's nodes, as sorted lines that do not depend on the partition.
    std::vector<std::string> lines;
    uint64_t rxPackets = 0;
    uint32_t completed = 0;
    Time lastDone;
    for (const auto& [key, f] : g_rx)
    {
        const auto src = hostOfLid.find(key.second);
        std::ostringstream l;
        l << "flow " << (src == hostOfLid.end() ? -1 : int64_t(src->second)) << " -> " << key.first
          << " packets " << f.packets << " bytes " << f.bytes << " first_ps "
          << f.first.GetPicoSeconds() << " last_ps " << f.last.GetPicoSeconds();
        lines.push_back(l.str());
        rxPackets += f.packets;
        if (f.packets == packets)
        {
            ++completed;
            lastDone = std::max(lastDone, f.last);
        }
    }
    uint64_t txPackets = 0;
    uint64_t fcPackets = 0;
    uint64_t shipped = 0; // packets sent over MPI to other ranks
    for (uint32_t i = 0; i < fabric.nodeOf.size(); ++i)
    {
        Ptr<Node> node = fabric.nodeOf[i];
        if (!local(node))
        {
            continue;
        }
        std::vector<Ptr<IbNetDevice>> ports;
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            if (Ptr<IbNetDevice> dev = DynamicCast<IbNetDevice>(node->GetDevice(d)))
            {
                ports.push_back(dev);
            }
        }
        for (uint32_t p = 0; p < ports.size(); ++p)
        {
            Time stall;
            for (uint8_t vl = 0; vl < ports[p]->GetNumDataVls(); ++vl)
            {
                stall += ports[p]->GetCreditStallTime(vl);
            }
            std::ostringstream l;
            l << "port " << topology.GetNode(i).name << " " << p + 1 << " tx_packets "
              << ports[p]->GetTxPackets() << " tx_bytes " << ports[p]->GetTxBytes() << " fc_sent "
              << ports[p]->GetFlowControlPacketsSent() << " stall_ps " << stall.GetPicoSeconds();
            lines.push_back(l.str());
            txPackets += ports[p]->GetTxPackets();
            fcPackets += ports[p]->GetFlowControlPacketsSent();
#ifdef NS3_MPI
            if (auto ch = DynamicCast<IbRemoteChannel>(ports[p]->GetChannel()))
            {
                shipped += ch->GetRemoteTxPackets();
            }
#endif
        }
        if (Ptr<IbSwitch> sw = fabric.switchOf[i])
        {
            std::ostringstream l;
            l << "switch " << topology.GetNode(i).name << " forwarded " << sw->GetForwardedPackets()
              << " no_route_drops " << sw->GetUnknownDlidDrops();
            lines.push_back(l.str());
        }
    }
    std::ostringstream summary;
    summary << "rank " << rank << ": "
            << std::count_if(fabric.nodeOf.begin(), fabric.nodeOf.end(), local) << " nodes, "
            << localFlows.size() << " flows sent, " << completed << " of " << g_rx.size()
            << " flows received complete (last at " << lastDone.GetNanoSeconds() << " ns), "
            << rxPackets << " data packets received, " << txPackets << " data packets and "
            << fcPackets << " flow-control packets sent by its ports (" << shipped
            << " packets to other ranks), " << events << " events, run " << runWall << " s wall\n";
    return Finish(lines, summary.str(), results, rank, root, useMpi, wallStart);
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A fat tree of InfiniBand switches, brought up by the subnet manager with a chosen
 * routing engine, carrying a chosen traffic pattern of saturating raw IB flows, or of RC
 * RDMA WRITE streams (--transport=rc) with IBA congestion control (--cc) and adaptive
 * routing (--adaptive) if asked.
 *
 *   ./ib-fat-tree                                   2-level, radix 8, 32 hosts, ftree, shift
 *   ./ib-fat-tree --levels=3 --radix=8 --hosts=128 --routing=updn --pattern=permutation
 *   ./ib-fat-tree --oversubscription=2 --pattern=all-to-all --pcap=true
 *   ./ib-fat-tree --transport=rc --pattern=permutation --adaptive --cc
 *   ./ib-fat-tree --transport=rc --timeout=8 --duration=3000 --failLink=leaf-0:5@100us
 *
 * Prints the fabric, per-flow throughput (or a summary with Jain's fairness for many
 * flows) and the busiest ports. With a non-blocking tree, ftree routing and the shift
 * pattern every flow should get the full link rate (times the wire efficiency of its
 * packet size): that is what ftree is designed for. minhop and random permutations show
 * the congestion that static routing causes.
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t levels = 2;
    uint32_t radix = 8;
    uint32_t hosts = 32;
    double oversubscription = 1.0;
    std::string speed = "HDR";
    std::string routing = "ftree";
    std::string pattern = "shift";
    uint32_t payload = 4096;
    double durationUs = 200;
    double warmupUs = 20;
    uint32_t seed = 1;
    bool pcap = false;
    std::string lftDump;
    std::string transport = "raw";
    bool cc = false;
    bool adaptive = false;
    std::string failLink;
    uint32_t timeout = 14;
    std::string buffering;

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "levels", "fat-tree levels: 2 or 3", levels);
    IbOptions::Add(cmd, "radix", "switch radix (ports per switch)", radix);
    IbOptions::Add(cmd, "hosts", "number of hosts", hosts);
    IbOptions::Add(cmd,
                   "oversubscription",
                   "leaf down:up ratio (1 = non-blocking)",
                   oversubscription);
    IbOptions::Add(cmd, "speed", "link speed for every cable (SDR..XDR), 4x width", speed);
    IbOptions::Add(cmd, "routing", "routing engine: minhop, updn, ftree, dfsssp", routing);
    IbOptions::Add(cmd, "pattern", "permutation, shift, all-to-all or incast", pattern);
    IbOptions::Add(cmd, "payload", "payload bytes per packet", payload);
    IbOptions::Add(cmd, "duration", "simulated microseconds of traffic", durationUs);
    IbOptions::Add(cmd, "warmup", "microseconds excluded from the statistics", warmupUs);
    IbOptions::Add(cmd, "seed", "seed of the random permutation", seed);
    IbOptions::Add(cmd,
                   "pcap",
                   "write a pcap per host port (ib-fat-tree-<node name>-<device index>.pcap, e.g. "
                   "ib-fat-tree-host-0-0.pcap)",
                   pcap);
    IbOptions::Add(cmd,
                   "lftDump",
                   "write the forwarding tables (opensm-lfts.dump format) here",
                   lftDump);
    IbOptions::Add(cmd,
                   "transport",
                   "raw (saturating raw IB packets of --payload bytes) or rc (RDMA WRITE "
                   "streams over RC queue pairs, 4096-byte MTU)",
                   transport);
    IbOptions::Add(cmd, "cc", "IBA congestion control on (subnet manager defaults)", cc);
    IbOptions::Add(cmd,
                   "adaptive",
                   "adaptive routing on (subnet manager AR groups; RC requests only, so "
                   "it needs --transport=rc)",
                   adaptive);
    IbOptions::Add(cmd,
                   "failLink",
                   "cables to fail, NODE:PORT@DOWN[-UP],... (e.g. leaf-0:5@100us-2ms): the "
                   "subnet manager routes around them; per-flow outages are printed",
                   failLink);
    IbOptions::Add(cmd,
                   "timeout",
                   "RC local ACK timeout exponent, 4.096 us x 2^timeout (14: 67 ms); a flow "
                   "that lost packets waits for it after the reroute",
                   timeout);
    IbOptions::Add(cmd,
                   "buffering",
                   "switch input buffers: fifo or voq (virtual output queues); default voq "
                   "with --adaptive (FIFO input buffers cap adaptive routing below static "
                   "routes), fifo otherwise",
                   buffering);
    cmd.Parse(argc, argv);
    if (buffering.empty())
    {
        buffering = adaptive ? "voq" : "fifo";
    }
    IB_REQUIRE(buffering == "fifo" || buffering == "voq",
               "--buffering=" << buffering << ": use fifo or voq");
    IB_REFUSE(timeout > 31, "--timeout=" << timeout << ": use 0..31 (IBA 5-bit field)");
    IB_REFUSE(!(durationUs > 0) || !(warmupUs >= 0) || warmupUs >= durationUs,
              "--duration=" << durationUs << " --warmup=" << warmupUs
                            << ": the statistics need a window, 0 <= warmup < duration");
    IB_REFUSE(MicroSeconds(durationUs) <= MicroSeconds(warmupUs),
              "--duration=" << durationUs << " --warmup=" << warmupUs
                            << ": the statistics window is shorter than the simulator's time "
                               "step ("
                            << TimeStep(1).GetNanoSeconds() << " ns); lengthen --duration");
    IB_REQUIRE(IbSubnetManager::IsRoutingEngine(routing) && routing != "file",
               "--routing=" << routing << ": use minhop, updn, ftree or dfsssp");
    IB_REFUSE(payload > 4096,
              "--payload=" << payload << ": a packet carries at most 4096 bytes (the MTU)");

    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << ": use one of " << IbLinkRate::ValidSpeedNames());
    IB_REQUIRE(levels == 2 || levels == 3, "--levels must be 2 or 3");
    IB_REFUSE(payload == 0, "--payload must be at least 1 byte (up to the MTU, 4096)");
    IB_REQUIRE(transport == "raw" || transport == "rc",
               "--transport=" << transport << ": use raw or rc");
    IB_REFUSE(adaptive && transport != "rc",
              "--adaptive: adaptive routing moves RC requests only; add --transport=rc");
    IB_REFUSE(cc && transport != "rc",
              "--cc: congestion control throttles queue pairs, not raw flows; add "
              "--transport=rc");
    const IbTopology topology =
        levels == 2 ? IbTopologyBuilder::FatTree2Level(radix, hosts, oversubscription, s, 4)
                    : IbTopologyBuilder::FatTree3Level(radix, hosts, oversubscription, s, 4);

    IbFabricHelper fabricHelper;
    fabricHelper.SetDeviceAttribute("NumDataVls", UintegerValue(routing == "dfsssp" ? 8 : 1));
    fabricHelper.SetSubnetManagerAttribute("RoutingEngine", StringValue(routing));
    fabricHelper.SetSubnetManagerAttribute("CongestionControl", BooleanValue(cc));
    fabricHelper.SetSubnetManagerAttribute("AdaptiveRouting", BooleanValue(adaptive));
    fabricHelper.SetSwitchAttribute("InputBuffering", StringValue(buffering));
    IbFabric fabric = fabricHelper.Build(topology);

    const Time start = MicroSeconds(1);
    const Time stop = start + MicroSeconds(durationUs);
    const auto flows = IbTrafficPattern::ByName(pattern,
                                                fabric.hosts.GetN(),
                                                IbTrafficPattern::ReplicationSeed(seed));
    // RC mode: one queue pair per flow, one WRITE longer than any run.
    std::vector<Ptr<IbQueuePair>> responders;
    std::vector<uint64_t> atWarmup(flows.size(), 0);
    if (transport == "rc")
    {
        std::vector<Ptr<IbHca>> hcas = IbHcaHelper().Install(fabric.hosts);
        for (const auto& [a, b] : flows)
        {
            Ptr<IbCompletionQueue> ca = hcas[a]->CreateCq();
            Ptr<IbCompletionQueue> cb = hcas[b]->CreateCq();
            Ptr<IbQueuePair> qa = hcas[a]->CreateQp(IbQpType::RC, ca, ca);
            Ptr<IbQueuePair> qb = hcas[b]->CreateQp(IbQpType::RC, cb, cb);
            IbQpAttr base;
            base.timeout = static_cast<uint8_t>(timeout);
            IbHcaHelper::ConnectRc(qa, qb, fabric.subnetManager, base);
            const uint64_t bytes = 1ULL << 31;
            Ptr<IbMemoryRegion> src = hcas[a]->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE);
            Ptr<IbMemoryRegion> dst =
                hcas[b]->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
            IbSendWr wr = src->WriteTo(*dst, static_cast<uint32_t>(bytes), 1);
            Simulator::Schedule(start, [qa, wr]() { NS_ABORT_UNLESS(qa->PostSend(wr)); });
            responders.push_back(qb);
        }
        Simulator::Schedule(start + MicroSeconds(warmupUs), [&responders, &atWarmup]() {
            for (size_t i = 0; i < responders.size(); ++i)
            {
                atWarmup[i] = responders[i]->GetCounters().packetsReceived;
            }
        });
    }
    else
    {
        ObjectFactory flowAttributes;
        flowAttributes.SetTypeId("ns3::IbRawTrafficApplication");
        flowAttributes.Set("PayloadSize", UintegerValue(payload));
        ApplicationContainer apps =
            IbTrafficPattern::InstallRawFlows(fabric, flows, flowAttributes);
        apps.Start(start);
        apps.Stop(stop);
    }

    IbFabricStats stats;
    stats.Install(fabric, start + MicroSeconds(warmupUs));
    IbOutageMonitor outages;
    if (!failLink.empty())
    {
        IbLinkFailureHelper().ScheduleFromSpec(fabric, failLink, "--failLink");
        outages.Install(fabric);
    }
    auto printOutages = [&]() {
        if (failLink.empty())
        {
            return;
        }
        const Ptr<IbSubnetManager> sm = fabric.subnetManager;
        std::cout << "link failures " << failLink << ": " << sm->GetSweeps()
                  << " subnet manager sweep(s)";
        if (sm->GetSweeps() > 0)
        {
            std::cout << ", last tables written at " << sm->GetLastRerouteTime().As(Time::US);
        }
        std::cout << "\n";
        outages.Print(std::cout, 16);
    };
    if (pcap)
    {
        fabricHelper.GetIbHelper().EnablePcap("ib-fat-tree", fabric.hostPorts);
    }
    if (!lftDump.empty())
    {
        std::ofstream out(lftDump);
        fabric.subnetManager->WriteLfts(out);
        IB_REQUIRE(out, "--lftDump=" << lftDump << ": cannot write the file");
    }
    uint32_t down = 0;
    uint32_t up = 0;
    IbTopologyBuilder::SplitLeafPorts(radix, oversubscription, down, up);

    std::cout << levels << "-level fat tree: radix " << radix << ", " << fabric.hosts.GetN()
              << " hosts, " << fabric.switches.GetN() << " switches, " << topology.GetNLinks()
              << " cables, 4x" << speed << " (" << IbLinkRate::GetDataRate(s, 4).GetBitRate() / 1e9
              << " Gb/s), oversubscription " << oversubscription << ":1 asked, leaves with " << down
              << " host and " << up << " up ports (" << double(down) / up << ":1)\n"
              << "routing " << routing << (adaptive ? " + adaptive" : "") << ", " << buffering
              << " input buffers, pattern " << pattern << " (" << flows.size() << " flows), "
              << payload << " B payload, " << durationUs << " us (" << warmupUs << " us warm-up)\n";
    const auto cycles = fabric.subnetManager->CheckDeadlocks();
    std::cout << "credit loops in the routes: "
              << (cycles.empty() ? "none (deadlock-free)" : cycles.front()) << "\n";

    // Progress on standard error every tenth of a run that takes more than 2 s of wall time,
    // so that a long one shows it moves.
    const auto wallStart = std::chrono::steady_clock::now();
    for (int k = 1; k < 10; ++k)
    {
        Simulator::Schedule(start + MicroSeconds(durationUs * k / 10), [k, wallStart]() {
            const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wallStart;
            if (wall.count() < 2)
            {
                return; // a short run needs no progress report
            }
            std::cerr << "progress: " << k * 10 << " % of the traffic simulated, " << wall.count()
                      << " s wall\n";
        });
    }
    Ptr<IbDeadlockWatchdog> watchdog = CreateObject<IbDeadlockWatchdog>();
    watchdog->Install(fabric);
    Simulator::Stop(stop);
    Simulator::Run();
    IB_REFUSE(watchdog->IsDeadlocked(), watchdog->GetReport());

    if (transport == "rc")
    {
        // Goodput of each WRITE stream over the window: 4096-byte packets at the responder.
        const double window = durationUs - warmupUs;
        std::vector<double> rate;
        for (size_t i = 0; i < responders.size(); ++i)
        {
            const uint64_t pkts = responders[i]->GetCounters().packetsReceived - atWarmup[i];
            rate.push_back(pkts * 4096.0 * 8 / (window * 1e-6) / 1e9);
        }
        double sum = 0;
        double sq = 0;
        for (double r : rate)
        {
            sum += r;
            sq += r * r;
        }
        uint64_t arPackets = 0;
        uint64_t arMoved = 0;
        uint64_t marks = 0;
        for (Ptr<IbSwitch> sw : fabric.switchOf)
        {
            if (sw)
            {
                arPackets += sw->GetAdaptivePackets();
                arMoved += sw->GetAdaptiveDeviations();
                marks += sw->GetFecnMarks();
            }
        }
        const double ideal = IbLinkRate::GetDataRate(s, 4).GetBitRate() * 4096.0 /
                             IbPacket::WireSize(4096, 0, false);
        std::cout << "RC WRITE streams: mean " << sum / rate.size() << " Gb/s (ideal "
                  << ideal / 1e9 << "), min " << *std::min_element(rate.begin(), rate.end())
                  << ", max " << *std::max_element(rate.begin(), rate.end()) << ", Jain "
                  << (sum * sum) / (rate.size() * sq) << "\n"
                  << "adaptive routing: " << arPackets << " requests chose among a group, "
                  << arMoved << " left by another port than the LFT's; FECN marks: " << marks
                  << "\n";
        printOutages();
        Simulator::Destroy();
        return 0;
    }
    const double efficiency = double(payload) / IbPacket::WireSize(payload, 0, false);
    std::cout << "ideal per-flow payload rate at full link rate: "
              << IbLinkRate::GetDataRate(s, 4).GetBitRate() * efficiency / 1e9 << " Gb/s\n";
    stats.Print(std::cout, stop);
    printOutages();
    Simulator::Destroy();
    return 0;
}

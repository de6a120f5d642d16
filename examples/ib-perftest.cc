/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * perftest (ib_write_bw, ib_write_lat, ib_read_bw, ib_read_lat, ib_send_bw, ib_send_lat,
 * ib_atomic_lat) on the RDMA transport model: two hosts, back to back or through a
 * chain of switches, one RC queue pair, perftest's measurement definitions and report.
 *
 *   ./ib-perftest                                  write_lat, 2 B, 4xEDR, back to back
 *   ./ib-perftest --test=write_bw --speed=HDR --sizes=64K,1M
 *   ./ib-perftest --test=read_lat --switches=1 --sizes=2,64,4096
 *   ./ib-perftest --test=send_bw --sweep=true --iters=100     perftest -a: 2 B .. 8 MB
 *   ./ib-perftest --test=write_lat --switches=3 --pollInterval=20
 *
 * Prints the setup (fabric, the HCA's timing attributes), perftest's banner and its
 * report table. perftest's default iteration counts (5000 for write_bw, 1000 otherwise)
 * make large messages slow to simulate: reduce --iters for sweeps.
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <iostream>

using namespace ns3;

/**
 * The same perftest on a RoCEv2 fabric of the same shape: host-0 - EthSwitches - host-1,
 * links at the InfiniBand speed's data rate, PFC and DCQCN at their defaults.
 * @return the program's exit status
 */
int
RunRoce(uint32_t switches,
        IbLinkRate::Speed s,
        uint8_t w,
        uint32_t mtu,
        double cableDelayNs,
        double switchLatencyNs,
        const std::string& test,
        uint32_t iters,
        uint32_t txDepth,
        uint32_t cqMod,
        bool event,
        double pollIntervalNs,
        const std::vector<uint64_t>& sizes)
{
    EthFabricHelper fh;
    // The Ethernet IP MTU that carries the same IBA MTU (RoCE adds IPv4, UDP and ICRC)
    fh.SetDeviceAttribute("Mtu", UintegerValue(std::max<uint32_t>(mtu + 72, 1500)));
    if (cableDelayNs >= 0)
    {
        fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(cableDelayNs)));
    }
    if (switchLatencyNs >= 0)
    {
        fh.SetSwitchAttribute("ForwardingLatency", TimeValue(NanoSeconds(switchLatencyNs)));
    }
    EthFabric f = fh.Build(IbTopologyBuilder::Chain(switches, s, w));
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue(test));
    perf.SetAttribute("Iterations", UintegerValue(iters));
    perf.SetAttribute("TxDepth", UintegerValue(txDepth));
    perf.SetAttribute("CqModeration", UintegerValue(cqMod));
    perf.SetAttribute("CqModeEvent", BooleanValue(event));
    perf.SetAttribute("PollInterval", TimeValue(NanoSeconds(pollIntervalNs)));
    ApplicationContainer apps =
        sizes.empty() ? perf.Install(f.hosts.Get(0), f.hosts.Get(1), nullptr)
                      : perf.InstallSweep(f.hosts.Get(0), f.hosts.Get(1), sizes, nullptr);
    apps.Start(MicroSeconds(1));
    Ptr<IbPerftestApplication> client = DynamicCast<IbPerftestApplication>(apps.Get(0));
    Ptr<EthNetDevice> port = f.hcas[0]->GetEthPort(1);
    std::cout << "ns-3 perftest over RoCEv2: host-0 (client) - " << switches << " EthSwitch"
              << (switches == 1 ? "" : "es") << " - host-1 (server), "
              << port->GetDataRate().GetBitRate() / 1e9 << " Gb/s Ethernet, IP MTU "
              << port->GetMtu() << " (RoCE MTU " << f.hcas[0]->GetRdmaPort(1)->GetActiveMtu()
              << ")\n";
    client->PrintTestInfo(std::cout);
    const bool bw = IbPerftestApplication::IsBandwidthTest(client->GetTest());
    IbPerftestApplication::PrintHeader(std::cout, bw);
    client->TraceConnectWithoutContext("Result", MakeCallback(+[](const IbPerftestResult& r) {
                                           IbPerftestApplication::PrintResult(std::cout, r);
                                           std::cout.flush();
                                       }));
    Simulator::Run();
    std::cout << std::string(87, '-') << "\n";
    IB_REQUIRE(client->IsFinished(), "the test did not finish");
    Simulator::Destroy();
    return 0;
}

int
main(int argc, char* argv[])
{
    std::string test = "write_lat";
    std::string speed = "EDR";
    std::string width = "4x";
    uint32_t switches = 0;
    std::string sizesArg;
    bool sweep = false;
    uint32_t iters = 0;
    uint32_t txDepth = 128;
    uint32_t cqMod = 100;
    bool event = false;
    bool roce = false;
    double pollIntervalNs = 0;
    uint32_t mtu = 4096;
    double cableDelayNs = -1;
    double switchLatencyNs = -1;
    std::string profile;

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "test", IbPerftestApplication::ValidTestNames(), test);
    IbOptions::Add(cmd, "speed", "link speed (SDR..XDR)", speed);
    IbOptions::Add(cmd, "width", "link width (1x, 2x, 4x, 8x, 12x)", width);
    IbOptions::Add(cmd, "switches", "switches between the two hosts (0 = back to back)", switches);
    IbOptions::Add(cmd,
                   "sizes",
                   "message sizes, e.g. 2,64,4K,1M (default: perftest's -s default)",
                   sizesArg);
    IbOptions::Add(cmd, "sweep", "all sizes 2 B .. 8 MB, powers of two (perftest -a)", sweep);
    IbOptions::Add(cmd,
                   "iters",
                   "iterations per size (perftest -n); 0 = perftest's default",
                   iters);
    IbOptions::Add(cmd,
                   "txDepth",
                   "bandwidth tests: outstanding work requests (perftest -t)",
                   txDepth);
    IbOptions::Add(cmd, "cqMod", "bandwidth tests: one signaled WR in N (perftest -Q)", cqMod);
    IbOptions::Add(cmd,
                   "event",
                   "completions by CQ callback (perftest -e) instead of polling",
                   event);
    IbOptions::Add(cmd,
                   "roce",
                   "RoCEv2: Ethernet ports and EthSwitches at the same data rate (the same "
                   "transport and perftest) instead of InfiniBand",
                   roce);
    IbOptions::Add(cmd,
                   "pollInterval",
                   "polling period in ns (0 = continuous polling)",
                   pollIntervalNs);
    IbOptions::Add(cmd, "mtu", "port MTU (256..4096)", mtu);
    IbOptions::Add(cmd,
                   "cableDelay",
                   "cable delay in ns (default: IbChannel's Delay)",
                   cableDelayNs);
    IbOptions::Add(cmd,
                   "switchLatency",
                   "switch ForwardingLatency in ns (default: IbSwitch's)",
                   switchLatencyNs);
    IbOptions::Add(cmd,
                   "profile",
                   "a hardware profile (IbProfileHelper): ideal, edr-cx4-mpi, hdr-cx6-mpi, "
                   "ndr-cx7-nccl; empty = the idealized model",
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
    }

    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << ": use one of " << IbLinkRate::ValidSpeedNames());
    uint8_t w;
    IB_REQUIRE(IbLinkRate::ParseWidth(width, w),
               "--width=" << width << ": use one of 1x, 2x, 4x, 8x, 12x");
    IbPerftestApplication::Test t;
    IB_REQUIRE(IbPerftestApplication::ParseTest(test, t),
               "--test=" << test << ": use one of " << IbPerftestApplication::ValidTestNames());
    IB_REFUSE(iters != 0 && (iters < 5 || iters > IbPerftestApplication::MAX_ITERATIONS),
              "--iters=" << iters << ": 0 (perftest's default) or 5 to "
                         << IbPerftestApplication::MAX_ITERATIONS
                         << " (perftest -n; each iteration keeps its timestamps)");
    IB_REFUSE(txDepth < 1 || txDepth > 15000,
              "--txDepth=" << txDepth << ": use 1 to 15000 (perftest -t)");
    IB_REFUSE(cqMod < 1 || cqMod > 1024, "--cqMod=" << cqMod << ": use 1 to 1024 (perftest -Q)");
    IB_REQUIRE(mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096,
               "--mtu=" << mtu << ": use 256, 512, 1024, 2048 or 4096");
    IB_REFUSE(!(cableDelayNs >= 0) && cableDelayNs != -1,
              "--cableDelay=" << cableDelayNs << ": a delay is 0 ns or more");
    IB_REFUSE(!(switchLatencyNs >= 0) && switchLatencyNs != -1,
              "--switchLatency=" << switchLatencyNs << ": a latency is 0 ns or more");
    IB_REFUSE(!(pollIntervalNs >= 0),
              "--pollInterval=" << pollIntervalNs << ": 0 (continuous) or more ns");
    IB_REFUSE(sweep && !sizesArg.empty(),
              "--sweep=true runs every size (perftest -a): leave out --sizes=" << sizesArg
                                                                               << ", or --sweep");
    IB_REFUSE(event && pollIntervalNs > 0,
              "--event=true takes completions by callback: --pollInterval="
                  << pollIntervalNs << " would be ignored; give one of the two");
    std::vector<uint64_t> sizes;
    if (sweep)
    {
        sizes = IbPerftestHelper::AllSizes();
    }
    else if (!sizesArg.empty())
    {
        std::string error;
        IB_REQUIRE(IbPerftestHelper::ParseSizes(sizesArg, sizes, &error), "--sizes: " << error);
    }

    IB_REFUSE(
        t == IbPerftestApplication::ATOMIC_LAT &&
            (sweep || std::any_of(sizes.begin(), sizes.end(), [](uint64_t x) { return x != 8; })),
        "--test=atomic_lat always moves 8 bytes (an atomic's operand): leave out "
        "--sizes and --sweep, or give --sizes=8");
    if (roce)
    {
        return RunRoce(switches,
                       s,
                       w,
                       mtu,
                       cableDelayNs,
                       switchLatencyNs,
                       test,
                       iters,
                       txDepth,
                       cqMod,
                       event,
                       pollIntervalNs,
                       sizes);
    }
    // The fabric: host-0 - switches - host-1.
    IbFabricHelper fabricHelper;
    fabricHelper.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    fabricHelper.SetDeviceAttribute("NumDataVls", UintegerValue(1));
    if (cableDelayNs >= 0)
    {
        fabricHelper.SetChannelAttribute("Delay", TimeValue(NanoSeconds(cableDelayNs)));
    }
    if (switchLatencyNs >= 0)
    {
        fabricHelper.SetSwitchAttribute("ForwardingLatency",
                                        TimeValue(NanoSeconds(switchLatencyNs)));
    }
    IbFabric fabric = fabricHelper.Build(IbTopologyBuilder::Chain(switches, s, w));
    IbHcaHelper hcaHelper;
    std::vector<Ptr<IbHca>> hcas = hcaHelper.Install(fabric.hosts);

    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue(test));
    perf.SetAttribute("Iterations", UintegerValue(iters));
    perf.SetAttribute("TxDepth", UintegerValue(txDepth));
    perf.SetAttribute("CqModeration", UintegerValue(cqMod));
    perf.SetAttribute("CqModeEvent", BooleanValue(event));
    IB_REFUSE(pollIntervalNs < 0,
              "--pollInterval=" << pollIntervalNs
                                << ": a polling period is 0 (continuous) or more ns");
    perf.SetAttribute("PollInterval", TimeValue(NanoSeconds(pollIntervalNs)));
    ApplicationContainer apps =
        sizes.empty() ? perf.Install(fabric.hosts.Get(0), fabric.hosts.Get(1), fabric.subnetManager)
                      : perf.InstallSweep(fabric.hosts.Get(0),
                                          fabric.hosts.Get(1),
                                          sizes,
                                          fabric.subnetManager);
    apps.Start(MicroSeconds(1));
    Ptr<IbPerftestApplication> client = DynamicCast<IbPerftestApplication>(apps.Get(0));

    // The setup, then perftest's banner and report.
    Ptr<IbNetDevice> port = fabric.HostPort(0);
    Ptr<IbChannel> cable = DynamicCast<IbChannel>(port->GetChannel());
    std::cout << "ns-3 perftest: host-0 (client) - " << switches << " switch"
              << (switches == 1 ? "" : "es") << " - host-1 (server), " << width << speed << " ("
              << port->GetDataRate().GetBitRate() / 1e9 << " Gb/s), MTU " << mtu << ", cable delay "
              << cable->GetDelay().GetNanoSeconds() << " ns";
    if (switches > 0)
    {
        Ptr<IbSwitch> sw;
        for (Ptr<IbSwitch> x : fabric.switchOf)
        {
            if (x && !sw)
            {
                sw = x;
            }
        }
        std::cout << ", switch ForwardingLatency " << sw->GetForwardingLatency().GetNanoSeconds()
                  << " ns " << (sw->IsCutThrough() ? "cut-through" : "store-and-forward");
    }
    std::cout << "\nHCA: DoorbellLatency " << hcas[0]->GetDoorbellLatency().GetNanoSeconds()
              << " ns, PcieWriteLatency " << hcas[0]->GetPcieWriteLatency().GetNanoSeconds()
              << " ns, AckDelay " << hcas[0]->GetAckDelay().GetNanoSeconds()
              << " ns, ResponseDelay " << hcas[0]->GetResponseDelay().GetNanoSeconds() << " ns\n";
    if (Ptr<PcieLink> pcie = hcas[0]->GetPcieLink())
    {
        std::cout << "Host: " << pcie->Describe() << ", ReadLatency "
                  << pcie->GetReadLatency().GetNanoSeconds() << " ns, WriteLatency "
                  << pcie->GetWriteLatency().GetNanoSeconds() << " ns, MmioLatency "
                  << pcie->GetMmioLatency().GetNanoSeconds() << " ns; read ceiling "
                  << pcie->GetReadCeiling() * 8 / 1e9 << " Gb/s, write ceiling "
                  << pcie->GetWriteCeiling() * 8 / 1e9 << " Gb/s\n";
    }
    client->PrintTestInfo(std::cout);
    IbPerftestApplication::PrintHeader(std::cout, IbPerftestApplication::IsBandwidthTest(t));
    client->TraceConnectWithoutContext("Result", MakeCallback(+[](const IbPerftestResult& r) {
                                           IbPerftestApplication::PrintResult(std::cout, r);
                                           std::cout.flush();
                                       }));

    Simulator::Run();
    std::cout << std::string(87, '-') << "\n";
    IB_REQUIRE(client->IsFinished(), "the test did not finish");
    if (!IbPerftestApplication::IsBandwidthTest(t))
    {
        // perftest rounds to 10 ns; the model's value to its time resolution.
        for (const IbPerftestResult& r : client->GetAllResults())
        {
            std::cout << " t_typical of " << r.bytes << " B: " << r.tTypicalUs * 1e3
                      << " ns (not rounded)\n";
        }
    }
    std::cout << "test ended at " << client->GetResults().lastEvent.GetMicroSeconds()
              << " us (simulated)\n";
    Simulator::Destroy();
    return 0;
}

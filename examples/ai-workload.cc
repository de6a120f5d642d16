/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Runs a training workload file in the text format of ASTRA-sim 1.0 and SimAI (what AICB
 * writes) on GPU servers over a rail-optimized fabric: every GPU its own NIC, the GPUs of a
 * server on NVLink, the workload's tensor-, data- and expert-parallel collectives on their
 * own communicators. Prints, per fabric, the iteration time of the slowest GPU, its compute
 * and the communication it waited for, per group.
 *
 *   ./ai-workload                                     the shipped 4-layer GPT slice,
 *                                                     32 GPUs, InfiniBand NDR
 *   ./ai-workload --workload=my-aicb-output.txt --fabric=all
 *   ./ai-workload --fabric=roce --speed=HDR --algo=ring
 *
 * Compute times in the file are ticks (--tick: SimAI's are nanoseconds; ASTRA-sim 1.0's
 * are cycles, give one clock period).
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

using namespace ns3;

int
main(int argc, char* argv[])
{
    std::string workload;
    std::string fabricArg = "ib";
    std::string speed = "NDR";
    uint32_t gpus = 0;
    uint32_t gpusPerServer = 8;
    uint32_t radix = 0;
    std::string algo = "hier";
    std::string tick = "1ns";
    uint32_t iterations = 1;
    std::string nvlink = "3600Gbps";

    CommandLine cmd(__FILE__);
    cmd.AddValue("workload",
                 "workload file (ASTRA-sim 1.0 / SimAI text format); default: "
                 "examples/workloads/gpt-4layer-tp8.txt of the source tree",
                 workload);
    cmd.AddValue("fabric", "ib, roce, tcp-eth, or all (each in turn)", fabricArg);
    cmd.AddValue("speed", "link speed (4x): SDR..NDR; RoCE and TCP get the same data rate", speed);
    cmd.AddValue("gpus", "GPUs (0: the file's all_gpus)", gpus);
    cmd.AddValue("gpus-per-server", "GPUs (and NICs) per server", gpusPerServer);
    cmd.AddValue("radix", "switch radix (0: the smallest that fits)", radix);
    cmd.AddValue("algo", "collective algorithm of every group: hier, ring, tree, hd, rd", algo);
    cmd.AddValue("tick", "simulated time of one tick of the file", tick);
    cmd.AddValue("iterations", "training iterations", iterations);
    cmd.AddValue("nvlink", "NVLink bandwidth per GPU and direction", nvlink);
    cmd.Parse(argc, argv);

    if (workload.empty())
    {
        // The shipped file, wherever the program runs from: beside this source file as the
        // compiler saw it, or from the module's, the build's or an ns-3 tree's top.
        const std::string here = __FILE__;
        const std::string name = "workloads/gpt-4layer-tp8.txt";
        for (const std::string& c : {here.substr(0, here.find_last_of('/') + 1) + name,
                                     "examples/" + name,
                                     "../examples/" + name,
                                     "contrib/infiniband/examples/" + name})
        {
            if (std::ifstream(c))
            {
                workload = c;
                break;
            }
        }
        NS_ABORT_MSG_IF(workload.empty(),
                        "the shipped " << name << " is not found from here; give --workload");
    }
    const TrainingWorkloadFile w = TrainingWorkloadFile::Read(workload);
    const uint32_t n = gpus != 0 ? gpus : w.allGpus;
    NS_ABORT_MSG_IF(n == 0,
                    "--gpus: " << workload << " gives no all_gpus; say how many GPUs to run on");
    NS_ABORT_MSG_UNLESS(
        gpusPerServer >= 1 && n % gpusPerServer == 0,
        "--gpus=" << n << " is not whole servers of --gpus-per-server=" << gpusPerServer);
    NS_ABORT_MSG_UNLESS(fabricArg == "ib" || fabricArg == "roce" || fabricArg == "tcp-eth" ||
                            fabricArg == "all",
                        "--fabric=" << fabricArg << ": use ib, roce, tcp-eth or all");
    IbLinkRate::Speed s;
    NS_ABORT_MSG_UNLESS(IbLinkRate::ParseSpeed(speed, s),
                        "--speed=" << speed << " is unknown; use one of "
                                   << IbLinkRate::ValidSpeedNames());
    TimeValue tickValue;
    NS_ABORT_MSG_UNLESS(tickValue.DeserializeFromString(tick, MakeTimeChecker()),
                        "--tick=" << tick << ": not a time; e.g. 1ns or 0.5ns");
    DataRateValue nvValue;
    NS_ABORT_MSG_UNLESS(nvValue.DeserializeFromString(nvlink, MakeDataRateChecker()),
                        "--nvlink=" << nvlink << ": not a data rate; e.g. 3600Gbps");
    const uint32_t servers = n / gpusPerServer;
    if (radix == 0)
    {
        // The smallest even radix whose leaves and spines hold the servers.
        for (radix = 4; radix < 254; radix += 2)
        {
            const uint32_t down = radix / 2;
            const uint32_t groups = (servers + down - 1) / down;
            if (gpusPerServer <= radix && groups * gpusPerServer <= radix)
            {
                break;
            }
        }
    }
    const IbTopology topology =
        IbTopologyBuilder::RailOptimized2Level(radix, servers, gpusPerServer, 1.0, s, 4);
    std::cout << "# " << workload << ": " << TrainingWorkloadFile::ParallelismName(w.parallelism)
              << ", " << w.layers.size() << " layers, tensor parallel " << w.tp << ", ep " << w.ep
              << ", pp " << w.pp << "; " << servers << " servers x " << gpusPerServer
              << " GPUs, rail-optimized fat tree radix " << radix << ", " << speed
              << ", collectives " << algo << "\n";
    std::printf("# %-8s %14s %12s %12s %12s %12s %12s %11s %8s\n",
                "fabric",
                "iteration us",
                "compute us",
                "TP wait us",
                "DP wait us",
                "EP wait us",
                "DP_EP us",
                "collectives",
                "wall s");
    const std::vector<std::string> kinds = fabricArg == "all"
                                               ? std::vector<std::string>{"ib", "roce", "tcp-eth"}
                                               : std::vector<std::string>{fabricArg};
    for (const std::string& kind : kinds)
    {
        const auto wallStart = std::chrono::steady_clock::now();
        IbHelper::ResetLidAllocation();
        CollectiveHelper ch;
        ch.SetGpusPerServer(gpusPerServer);
        ch.SetNvlinkAttribute("NvlinkBandwidth", nvValue);
        ch.SetAlgorithm(algo);
        WorkloadTrainingHelper wh(ch);
        wh.SetJobAttribute("TickTime", tickValue);
        wh.SetJobAttribute("Iterations", UintegerValue(iterations));
        Ptr<WorkloadTrainingJob> job;
        IbFabric ibFabric;
        EthFabric ethFabric;
        if (kind == "ib")
        {
            IbFabricHelper fh;
            fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
            ibFabric = fh.Build(topology);
            job = wh.InstallIb(w, workload, ibFabric);
        }
        else
        {
            EthFabricHelper fh;
            fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
            if (kind == "tcp-eth")
            {
                fh.SetHostStack(EthFabricHelper::TCP);
            }
            ethFabric = fh.Build(topology);
            job = kind == "roce" ? wh.InstallRoce(w, workload, ethFabric)
                                 : wh.InstallTcp(w, workload, ethFabric.hosts);
        }
        job->Start();
        Simulator::Run();
        NS_ABORT_MSG_UNLESS(job->IsDone(), "the workload did not finish");
        for (uint32_t it = 0; it < iterations; ++it)
        {
            const WorkloadIterationRecord r = job->GetSlowest(it);
            std::printf("  %-8s %14.1f %12.1f %12.1f %12.1f %12.1f %12.1f %11llu %8.2f\n",
                        (kind + (iterations > 1 ? "#" + std::to_string(it) : "")).c_str(),
                        r.GetDuration().GetSeconds() * 1e6,
                        r.compute.GetSeconds() * 1e6,
                        r.exposed[WorkloadTrainingJob::TP].GetSeconds() * 1e6,
                        r.exposed[WorkloadTrainingJob::DP].GetSeconds() * 1e6,
                        r.exposed[WorkloadTrainingJob::EP].GetSeconds() * 1e6,
                        r.exposed[WorkloadTrainingJob::DP_EP].GetSeconds() * 1e6,
                        static_cast<unsigned long long>(job->GetCollectives()),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart)
                            .count());
        }
        Simulator::Destroy();
    }
    std::cout << "# wait: time the slowest GPU stood still for collectives of that group "
                 "(and their update delays); iteration = compute + waits\n";
    return 0;
}

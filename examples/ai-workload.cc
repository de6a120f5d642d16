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
 *   ./ai-workload --model=moe --gpus=32 --layers=2       a workload built from the model
 *                                                     (LlmWorkloadBuilder) instead of a file
 *   ./ai-workload --model=resnet50 --gpus=16          ai-training-fabrics' models as workloads:
 *   ./ai-workload --model=bert-large --gpus=16        ResNetWorkloadBuilder (DDP buckets) and
 *                                                     LlmWorkloadBuilder (BERT-Large, seq 128)
 *
 * Compute times in the file are ticks (--tick: SimAI's are nanoseconds; ASTRA-sim 1.0's
 * are cycles, give one clock period).
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
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
    std::string model;
    uint32_t layers = 4;
    uint32_t hidden = 4096;
    uint32_t seq = 2048;
    uint32_t tp = 8;
    uint32_t experts = 8;
    uint32_t topK = 2;
    uint32_t ep = 2;
    uint32_t pp = 1;
    uint32_t vpp = 1;
    uint32_t zero = 0;
    uint32_t microBatches = 0;
    std::string schedule = "None";
    std::string topologyKind = "rail-optimized";

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd,
                   "workload",
                   "workload file (ASTRA-sim 1.0 / SimAI text format); default: "
                   "examples/workloads/gpt-4layer-tp8.txt of the source tree",
                   workload);
    IbOptions::Add(cmd,
                   "fabric",
                   "ib, roce, tcp-eth, ib-flow (the IB fabric at flow level: no packets), or all "
                   "(ib, roce and tcp-eth in turn)",
                   fabricArg);
    IbOptions::Add(cmd,
                   "speed",
                   "link speed (4x): SDR..NDR; RoCE and TCP get the same data rate",
                   speed);
    IbOptions::Add(cmd, "gpus", "GPUs (0: the file's all_gpus)", gpus);
    IbOptions::Add(cmd, "gpus-per-server", "GPUs (and NICs) per server", gpusPerServer);
    IbOptions::Add(cmd, "radix", "switch radix (0: the smallest that fits)", radix);
    IbOptions::Add(cmd,
                   "algo",
                   "collective algorithm of every group: hier, ring, tree, dbtree, hd, rd",
                   algo);
    IbOptions::Add(cmd, "tick", "simulated time of one tick of the file", tick);
    IbOptions::Add(cmd,
                   "topology",
                   "rail-optimized (spines join the rails) or rail-only (one network per rail, "
                   "nothing between them: --algo=hier only)",
                   topologyKind);
    IbOptions::Add(cmd, "iterations", "training iterations", iterations);
    IbOptions::Add(cmd, "nvlink", "NVLink bandwidth per GPU and direction", nvlink);
    IbOptions::Add(cmd,
                   "model",
                   "instead of a file, build the workload of a GPT-style model: dense or moe "
                   "(LlmWorkloadBuilder; --layers --hidden --seq --tp, and for moe --experts "
                   "--topk --ep); or resnet50 or bert-large, data parallel, with "
                   "ai-training-fabrics' recipes (batch 256 and 64 per GPU, one A100's measured "
                   "2470 images/s and 580 sequences/s)",
                   model);
    IbOptions::Add(cmd, "layers", "--model: transformer layers", layers);
    IbOptions::Add(cmd, "hidden", "--model: hidden size (heads: hidden / 128)", hidden);
    IbOptions::Add(cmd, "seq", "--model: sequence length", seq);
    IbOptions::Add(cmd, "tp", "--model: tensor-parallel size", tp);
    IbOptions::Add(cmd, "experts", "--model=moe: experts per layer", experts);
    IbOptions::Add(cmd, "topk", "--model=moe: experts per token", topK);
    IbOptions::Add(cmd, "ep", "--model=moe: expert-parallel size", ep);
    IbOptions::Add(cmd,
                   "zero",
                   "ZeRO stage of the data parallelism: 0 (allreduce), 1, 2 or 3",
                   zero);
    IbOptions::Add(cmd,
                   "pp",
                   "--model: pipeline stages (runs them with --schedule, default 1F1B)",
                   pp);
    IbOptions::Add(cmd,
                   "vpp",
                   "--model: model chunks per pipeline stage (interleaved 1F1B; --layers a "
                   "multiple of pp x vpp, --microbatches of pp)",
                   vpp);
    IbOptions::Add(cmd,
                   "microbatches",
                   "micro-batches per iteration with a pipeline schedule (0: the file's ga)",
                   microBatches);
    IbOptions::Add(cmd,
                   "schedule",
                   "pipeline schedule: None (pp only builds the groups, as SimAI), 1F1B or GPipe",
                   schedule);
    cmd.Parse(argc, argv);

    IB_REQUIRE(model.empty() || model == "dense" || model == "moe" || model == "resnet50" ||
                   model == "bert-large",
               "--model=" << model << ": use dense, moe, resnet50 or bert-large");
    IB_REFUSE((model == "resnet50" || model == "bert-large") && (pp > 1 || zero > 0),
              "--model=" << model << " is data parallel: no --pp or --zero");
    IB_REFUSE((model == "resnet50" || model == "bert-large") &&
                  (layers != 4 || hidden != 4096 || seq != 2048 || tp != 8 || vpp != 1),
              "--model=" << model
                         << " has its own shape and recipe (ai-training-fabrics'): "
                            "--layers, --hidden, --seq, --tp and --vpp are for dense and "
                            "moe; leave them out");
    IB_REFUSE(!model.empty() && !workload.empty(), "--model and --workload: give one of them");
    IB_REFUSE(!model.empty() && gpus == 0, "--model: say how many GPUs (--gpus)");
    IB_REQUIRE(schedule == "None" || schedule == "1F1B" || schedule == "GPipe",
               "--schedule=" << schedule << ": use None, 1F1B or GPipe");
    IB_REQUIRE(pp >= 1 && pp <= 1024, "--pp=" << pp << ": use 1 to 1024 stages");
    IB_REFUSE(pp > 1 && model.empty(), "--pp is for --model; a file says its pp on its first line");
    if (pp > 1 && schedule == "None")
    {
        schedule = "1F1B";
    }
    if (workload.empty() && model.empty())
    {
        // The shipped file, wherever the program runs from: beside this source file as the
        // compiler saw it, or in the examples folder of a source tree above the program
        // (standalone builds put it in <module>/build, ns-3 trees in
        // build/contrib/infiniband/examples).
        const std::string here = __FILE__;
        const std::string name = "workloads/gpt-4layer-tp8.txt";
        std::vector<std::string> candidates{here.substr(0, here.find_last_of('/') + 1) + name};
        std::error_code ec;
        std::filesystem::path dir = std::filesystem::canonical("/proc/self/exe", ec).parent_path();
        for (int up = 0; up < 6 && !ec && !dir.empty(); ++up, dir = dir.parent_path())
        {
            candidates.push_back((dir / "examples" / name).string());
            candidates.push_back((dir / "contrib" / "infiniband" / "examples" / name).string());
        }
        for (const std::string& c : candidates)
        {
            if (std::ifstream(c))
            {
                workload = c;
                break;
            }
        }
        IB_REFUSE(workload.empty(),
                  "the shipped " << name << " is not found from here; give --workload");
    }
    TrainingWorkloadFile w;
    if (model.empty())
    {
        w = TrainingWorkloadFile::Read(workload);
    }
    else if (model == "resnet50")
    {
        Ptr<ResNetWorkloadBuilder> b = CreateObject<ResNetWorkloadBuilder>();
        w = b->Build(gpus);
        workload = "ResNet-50 (" + std::to_string(b->GetParameters()) + " parameters)";
    }
    else if (model == "bert-large")
    {
        // BERT-Large pre-training phase 1 (sequence 128, 64 per GPU, fp16 gradients), its
        // FLOPs counted by the builder and run at the rate that gives one A100 its measured
        // 580 sequences/s.
        Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
        b->SetAttribute("Layers", UintegerValue(24));
        b->SetAttribute("HiddenSize", UintegerValue(1024));
        b->SetAttribute("Heads", UintegerValue(16));
        b->SetAttribute("SequenceLength", UintegerValue(128));
        b->SetAttribute("VocabularySize", UintegerValue(30522));
        b->SetAttribute("MicroBatch", UintegerValue(64));
        b->SetAttribute("BytesPerElement", UintegerValue(2));
        b->SetAttribute("TensorParallel", UintegerValue(1));
        b->SetAttribute("GpuFlops", DoubleValue(312e12)); // A100 dense fp16 tensor cores
        b->SetAttribute("Efficiency", DoubleValue(1.0));
        uint64_t atPeak = 0; // ns of one iteration's compute at the peak rate
        for (const TrainingWorkloadFile::Layer& l : b->Build(gpus).layers)
        {
            for (const TrainingWorkloadFile::PassSpec& p : l.pass)
            {
                atPeak += p.compute;
            }
        }
        b->SetAttribute("Efficiency", DoubleValue(atPeak / (64 / 580.0 * 1e9)));
        w = b->Build(gpus);
        workload = "BERT-Large (24 layers, hidden 1024, seq 128)";
    }
    else
    {
        Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
        b->SetAttribute("Layers", UintegerValue(layers));
        b->SetAttribute("HiddenSize", UintegerValue(hidden));
        b->SetAttribute("Heads", UintegerValue(std::max(1u, hidden / 128)));
        b->SetAttribute("SequenceLength", UintegerValue(seq));
        b->SetAttribute("TensorParallel", UintegerValue(tp));
        b->SetAttribute("PipelineParallel", UintegerValue(pp));
        b->SetAttribute("VirtualStages", UintegerValue(vpp));
        b->SetAttribute("ZeroStage", UintegerValue(zero));
        b->SetAttribute("MicroBatches", UintegerValue(std::max(1u, microBatches)));
        if (model == "moe")
        {
            b->SetAttribute("Experts", UintegerValue(experts));
            b->SetAttribute("TopK", UintegerValue(topK));
            b->SetAttribute("ExpertParallel", UintegerValue(ep));
        }
        w = b->Build(gpus);
        workload = model + " model (" + std::to_string(layers) + " layers, hidden " +
                   std::to_string(hidden) + ")";
    }
    const uint32_t n = gpus != 0 ? gpus : w.allGpus;
    IB_REFUSE(n == 0, "--gpus: " << workload << " gives no all_gpus; say how many GPUs to run on");
    IB_REQUIRE(gpusPerServer >= 1 && n % gpusPerServer == 0,
               "--gpus=" << n << " is not whole servers of --gpus-per-server=" << gpusPerServer);
    IB_REQUIRE(fabricArg == "ib" || fabricArg == "roce" || fabricArg == "tcp-eth" ||
                   fabricArg == "ib-flow" || fabricArg == "all",
               "--fabric=" << fabricArg << ": use ib, roce, tcp-eth, ib-flow or all");
    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << " is unknown; use one of " << IbLinkRate::ValidSpeedNames());
    TimeValue tickValue;
    IB_REQUIRE(tickValue.DeserializeFromString(tick, MakeTimeChecker()),
               "--tick=" << tick << ": not a time; e.g. 1ns or 0.5ns");
    DataRateValue nvValue;
    IB_REQUIRE(nvValue.DeserializeFromString(nvlink, MakeDataRateChecker()),
               "--nvlink=" << nvlink << ": not a data rate; e.g. 3600Gbps");
    const uint32_t servers = n / gpusPerServer;
    if (radix == 0)
    {
        radix = IbTopologyBuilder::SmallestRailRadix(servers, gpusPerServer);
        IB_REFUSE(radix == 0,
                  "--gpus=" << n << ": no radix up to 254 holds " << servers << " servers of "
                            << gpusPerServer << " GPUs in two levels");
    }
    IB_REQUIRE(topologyKind == "rail-optimized" || topologyKind == "rail-only",
               "--topology=" << topologyKind << ": use rail-optimized or rail-only");
    IB_REFUSE(topologyKind == "rail-only" && pp > 1 && tp % gpusPerServer != 0,
              "--topology=rail-only with --pp=" << pp << " and --tp=" << tp
                                                << ": pipeline neighbours (GPU k and "
                                                   "k + tp) would sit on different rails "
                                                   "of different servers; give --tp a "
                                                   "multiple of the GPUs per server");
    IB_REFUSE(topologyKind == "rail-only" && algo != "hier",
              "--topology=rail-only with --algo=" << algo
                                                  << ": only hier keeps the fabric traffic "
                                                     "on the rails; use --algo=hier");
    const IbTopology topology =
        topologyKind == "rail-only"
            ? IbTopologyBuilder::RailOnly(radix, servers, gpusPerServer, 1.0, s, 4)
            : IbTopologyBuilder::RailOptimized2Level(radix, servers, gpusPerServer, 1.0, s, 4);
    std::cout << "# " << workload << ": " << TrainingWorkloadFile::ParallelismName(w.parallelism)
              << ", " << w.layers.size() << " layers, tensor parallel " << w.tp << ", ep " << w.ep
              << ", pp " << w.pp << "; " << servers << " servers x " << gpusPerServer << " GPUs, "
              << topologyKind << " fabric radix " << radix << ", " << speed << ", collectives "
              << algo << ", pipeline schedule " << schedule << "\n";
    std::printf("# %-8s %14s %12s %11s %11s %11s %11s %11s %11s %11s %8s\n",
                "fabric",
                "iteration us",
                "compute us",
                "TP wait us",
                "DP wait us",
                "EP wait us",
                "DP_EP us",
                "PP wait us",
                "bubble us",
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
        wh.SetJobAttribute("PipelineSchedule", StringValue(schedule));
        wh.SetJobAttribute("MicroBatches", UintegerValue(microBatches));
        Ptr<WorkloadTrainingJob> job;
        IbFabric ibFabric;
        EthFabric ethFabric;
        IbFlowFabric flowFabric;
        if (kind == "ib")
        {
            IbFabricHelper fh;
            fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
            ibFabric = fh.Build(topology);
            job = wh.InstallIb(w, workload, ibFabric);
        }
        else if (kind == "ib-flow")
        {
            IbFlowFabricHelper fh;
            fh.SetRoutingEngine("ftree");
            flowFabric = fh.Build(topology);
            job = wh.InstallFlow(w, workload, flowFabric);
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
        IB_REQUIRE(job->IsDone(), "the workload did not finish");
        for (uint32_t it = 0; it < iterations; ++it)
        {
            const WorkloadIterationRecord r = job->GetSlowest(it);
            std::printf("  %-8s %14.1f %12.1f %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f %11llu "
                        "%8.2f\n",
                        (kind + (iterations > 1 ? "#" + std::to_string(it) : "")).c_str(),
                        r.GetDuration().GetSeconds() * 1e6,
                        r.compute.GetSeconds() * 1e6,
                        r.exposed[WorkloadTrainingJob::TP].GetSeconds() * 1e6,
                        (r.exposed[WorkloadTrainingJob::DP] + r.exposed[WorkloadTrainingJob::ALL] +
                         r.exposed[WorkloadTrainingJob::EMB])
                                .GetSeconds() *
                            1e6,
                        r.exposed[WorkloadTrainingJob::EP].GetSeconds() * 1e6,
                        r.exposed[WorkloadTrainingJob::DP_EP].GetSeconds() * 1e6,
                        r.exposed[WorkloadTrainingJob::PP].GetSeconds() * 1e6,
                        r.bubble.GetSeconds() * 1e6,
                        static_cast<unsigned long long>(job->GetCollectives()),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart)
                            .count());
        }
        Simulator::Destroy();
    }
    std::cout << "# wait: time the slowest GPU stood still for collectives of that group "
                 "(and their update delays; DP: also a DATA workload's collectives among all "
                 "ranks and the tied embedding's between first and last stage), PP: for pipeline "
                 "transfers under way, bubble: for a pipeline "
                 "neighbour; iteration = compute + waits + bubble\n";
    return 0;
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Data-parallel training (PyTorch DDP style) of ResNet-50 and BERT-Large, or of any model
 * given by its parameters, on standard Ethernet (TCP over ns-3 point-to-point links at 100,
 * 200 and 400 Gb/s, eth-*), on Ethernet switches (EthSwitch leaf-spine: ns-3's TCP,
 * tcp-eth-*, and RoCEv2 with PFC and DCQCN, roce-*, on the same switch model) against
 * InfiniBand (HDR and NDR fat trees, RDMA),
 * with DataParallelTrainingJob / DataParallelTrainingApplication over the collective
 * library. Every server has 8 GPUs (NVLink reduction inside the server, see
 * DataParallelTrainingJob) and one fabric port; the gradient buckets are all-reduced among
 * the servers packet by packet.
 *
 *   ./ai-training-fabrics --quick                  2 servers (16 GPUs) per model, 2 iterations
 *   ./ai-training-fabrics                          full scale: ResNet-50 on 256 GPUs and
 *                                                  BERT-Large on 1024 GPUs (slow, see doc)
 *   ./ai-training-fabrics --models=resnet50 --fabrics=eth-100,ib-hdr --iterations=3
 *   ./ai-training-fabrics --models=custom --custom-params=1.3e9 --custom-flops=2e12 ...
 *   ./ai-training-fabrics --servers=4 --models=resnet50 --fabrics=ib-hdr --ib-timeout=8 \
 *       --ib-fail-link=leaf-0:3@104ms              a cable fails in the first iteration's
 *                                                  allreduce (it takes 1.05 ms longer)
 *
 * Output: a table per model (Markdown on stdout and in <out>.md, CSV in <out>.csv) and a
 * plot of the speedup over 100 Gb/s Ethernet (<out>.plt, rendered to <out>.png when
 * gnuplot is installed).
 *
 * The fabrics are a data-driven list (FabricScenario): a new fabric is one more entry in
 * MakeFabrics(). ib-hdr-sharp and ib-ndr-sharp are the IB fat trees with SHARP in-network
 * aggregation in every switch (algorithm "sharp", its setup hook installs the aggregation
 * nodes); the others run --algo among the servers.
 */

#include "ns3/core-module.h"
#include "ns3/gnuplot.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>

using namespace ns3;

namespace
{

/**
 * A model and its training recipe. Sources: doc/validation-sources.md section 5.3
 * ([P] primary, [D] vendor documentation, [S] secondary); "derived" values are computed
 * here from the cited ones, "assumption" values are choices of this example.
 */
struct ModelRow
{
    std::string name;         ///< short name
    double params;            ///< parameters
    uint32_t bytesPerGrad;    ///< bytes per gradient element as all-reduced
    double flopsPerSample;    ///< training FLOPs (forward + backward) per sample
    uint32_t batchPerGpu;     ///< samples per GPU per iteration
    double gpuSamplesPerSec;  ///< one GPU's measured training throughput (samples/s)
    uint64_t samplesPerEpoch; ///< dataset size
    double epochs;            ///< epochs to train
    uint32_t gpus;            ///< GPUs of the full-scale scenario
    std::string sources;      ///< where each number comes from
};

/// The parameter table (also in doc/infiniband.rst, "Data-parallel training workload").
std::vector<ModelRow>
ModelTable()
{
    return {
        // ResNet-50 v1.5 on ImageNet-1k, NVIDIA DeepLearningExamples recipe, A100-80GB AMP
        {"resnet50",
         25557032,                // torchvision count [S]
         4,                       // fp32 gradients (AMP keeps fp32 master gradients) [assumption]
         1e18 / (90.0 * 1281167), // 1e18 ops for 90 epochs (LARS paper) [derived]: 8.67e9
         256,                     // NVIDIA recipe default batch per GPU [D]
         2470,                    // 1x A100-80GB AMP, 2,470 img/s [D]
         1281167,                 // ImageNet-1k training images [P]
         90,                      // standard recipe [D]
         256,                     // 32 DGX A100-class servers (issue)
         "params 25,557,032 [S torchvision]; fp32 gradients [assumption]; "
         "FLOPs/sample = 1e18 / (90 x 1,281,167) [derived from LARS paper, P]; batch 256/GPU "
         "[D NVIDIA DeepLearningExamples]; 2,470 img/s per A100 AMP [D same]; 1,281,167 "
         "images [P TF-slim]; 90 epochs [D]"},
        // BERT-Large pre-training phase 1 (sequence 128), NVIDIA LAMB recipe, A100-80GB AMP
        {"bert-large",
         340e6,             // Devlin et al. [P]
         2,                 // fp16 gradient allreduce under AMP [assumption]
         6.0 * 340e6 * 128, // 6 x params x tokens [derived]: 2.61e11
         64,                // NVIDIA global batch 65,536 [D] / 1024 GPUs [derived]
         580,               // 1x A100-80GB AMP, seq 128: 580 seq/s [D]
         25781250,          // 3.3e9 words / 128 tokens per sequence [derived, 1 word ~ 1 token]
         40,                // "approximately 40 epochs" [P Devlin et al.]
         1024,              // 128 servers (issue)
         "params 340M [P Devlin et al.]; fp16 gradients [assumption]; FLOPs/sample = 6 x "
         "params x 128 tokens [derived]; batch 64/GPU = 65,536 global [D NVIDIA BERT] / 1024 "
         "[derived]; 580 seq/s per A100 AMP seq 128 [D NVIDIA BERT]; 25,781,250 sequences = "
         "3.3e9 words / 128 [derived]; 40 epochs [P Devlin et al.]"},
    };
}

/// One fabric of the comparison.
struct FabricScenario
{
    std::string name;      ///< label ("eth-100", "ib-hdr", ...)
    std::string kind;      ///< "tcp" (IPv4 point-to-point), "tcp-eth" (TCP on EthSwitch),
                           ///< "roce" (RoCEv2 on EthSwitch) or "ib" (InfiniBand RDMA)
    std::string speed;     ///< tcp: a data rate ("100Gbps"); ib: an IB speed ("HDR")
    std::string algorithm; ///< collective algorithm name for CollectiveHelper
    /// Optional hook run on an IB fabric before the communicator is installed (for
    /// example to install in-network aggregation nodes); may be empty.
    std::function<void(IbFabric&, CollectiveHelper&)> ibSetup;
};

/**
 * @param algo allreduce algorithm of the fabrics without SHARP
 * @return the fabrics compared, in table order (Ethernet first: the baseline)
 */
std::vector<FabricScenario>
MakeFabrics(const std::string& algo)
{
    // SHARP: an aggregation node in every switch, one aggregation tree for the job's
    // communicator; buckets above SatThreshold stream through the switches
    auto sharp = [](IbFabric& fabric, CollectiveHelper& ch) {
        ch.SetSharpManager(SharpHelper().Install(fabric));
    };
    return {
        {"eth-100", "tcp", "100Gbps", algo, nullptr},
        {"eth-200", "tcp", "200Gbps", algo, nullptr},
        {"eth-400", "tcp", "400Gbps", algo, nullptr},
        {"tcp-eth-100", "tcp-eth", "100Gbps", algo, nullptr},
        {"tcp-eth-200", "tcp-eth", "200Gbps", algo, nullptr},
        {"tcp-eth-400", "tcp-eth", "400Gbps", algo, nullptr},
        {"roce-100", "roce", "100Gbps", algo, nullptr},
        {"roce-200", "roce", "200Gbps", algo, nullptr},
        {"roce-400", "roce", "400Gbps", algo, nullptr},
        {"ib-hdr", "ib", "HDR", algo, nullptr},
        {"ib-ndr", "ib", "NDR", algo, nullptr},
        {"ib-hdr-sharp", "ib", "HDR", "sharp", sharp},
        {"ib-ndr-sharp", "ib", "NDR", "sharp", sharp},
    };
}

/// Settings shared by all runs.
struct Options
{
    uint32_t iterations{2};         ///< iterations requested per run
    uint32_t gpusPerServer{8};      ///< GPUs per server
    uint64_t bucketBytes{25 << 20}; ///< DDP bucket
    DataRate nvlink{"2400Gbps"};    ///< NVLink per GPU, one direction (300 GB/s)
    uint64_t chunk{256 * 1024};     ///< communicator chunk
    double wallBudget{600};         ///< seconds of wall time after which no new iteration
    double maxWall{0};              ///< hard wall-time cap per run, mid-iteration (0: none)
    uint32_t ethMtu{9000};          ///< IP MTU of the Ethernet links
    uint32_t servers{0};            ///< override of the server count (0: full scale)
    bool ibCc{false};               ///< IB fabrics: IBA congestion control on
    std::string ibFailLink;         ///< IB fabrics: cables to fail (IbLinkFailureHelper spec)
    uint32_t ibTimeout{14};         ///< IB fabrics: local ACK timeout exponent of the QPs
};

/// What one model on one fabric gave.
struct Result
{
    std::string model;     ///< model
    std::string fabric;    ///< fabric
    uint32_t servers{0};   ///< servers
    uint32_t gpus{0};      ///< GPUs
    uint32_t simulated{0}; ///< iterations simulated
    uint32_t requested{0}; ///< iterations requested
    Time iteration;        ///< steady-state iteration time
    Time compute;          ///< compute per iteration
    Time exposed;          ///< exposed communication per iteration
    double idle{0};        ///< GPU idle fraction
    double hours{0};       ///< projected time to train
    double wall{0};        ///< wall-clock seconds of the run
    double rateGbps{0};    ///< link data rate
    uint32_t buckets{0};   ///< buckets per iteration
    uint32_t reduced{0};   ///< buckets reduced in all (progress of an unfinished run)
};

/**
 * @param servers hosts
 * @return the smallest even radix whose two-level fat tree holds them without blocking
 */
uint32_t
RadixFor(uint32_t servers)
{
    uint32_t r = 4;
    while (r * r / 2 < servers)
    {
        r += 2;
    }
    return r;
}

/**
 * Simulate one model on one fabric.
 * @param m the model
 * @param f the fabric
 * @param o the options
 * @return the result
 */
Result
RunOne(const ModelRow& m, const FabricScenario& f, const Options& o)
{
    const auto wall0 = std::chrono::steady_clock::now();
    IbHelper::ResetLidAllocation();
    const uint32_t gpus = o.servers > 0 ? o.servers * o.gpusPerServer : m.gpus;
    IB_REFUSE(gpus % o.gpusPerServer != 0,
              m.name << ": " << gpus << " GPUs are not a whole number of servers of "
                     << o.gpusPerServer << " GPUs (--gpus-per-server)");
    const uint32_t servers = gpus / o.gpusPerServer;
    IB_REFUSE(servers < 2, m.name << ": at least 2 servers are needed, got " << servers);

    CollectiveHelper ch;
    ch.SetAlgorithm(f.algorithm);
    ch.SetCommunicatorAttribute("ChunkSize", UintegerValue(o.chunk));
    Ptr<CollectiveCommunicator> comm;
    NodeContainer nodes;
    double rate = 0;
    IbOutageMonitor outages;
    Ptr<IbSubnetManager> sm;
    if (f.kind == "ib")
    {
        IbLinkRate::Speed s;
        IB_REQUIRE(IbLinkRate::ParseSpeed(f.speed, s),
                   "fabric " << f.name << ": unknown IB speed " << f.speed);
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
        fh.SetSubnetManagerAttribute("CongestionControl", BooleanValue(o.ibCc));
        IbFabric fabric =
            fh.Build(IbTopologyBuilder::FatTree2Level(RadixFor(servers), servers, 1.0, s, 4));
        if (f.ibSetup)
        {
            f.ibSetup(fabric, ch);
        }
        ch.SetIbTransportAttribute("Timeout", UintegerValue(o.ibTimeout));
        if (!o.ibFailLink.empty())
        {
            IbLinkFailureHelper().ScheduleFromSpec(fabric, o.ibFailLink, "--ib-fail-link");
            outages.Install(fabric);
            sm = fabric.subnetManager;
        }
        comm = ch.InstallIb(fabric);
        nodes = fabric.hosts;
        rate = IbLinkRate::GetDataRate(s, 4).GetBitRate();
    }
    else if (f.kind == "roce")
    {
        // RoCEv2 on EthSwitch leaf-spine of the same shape: PFC on the RoCE priority, ECN
        // and DCQCN at their defaults, ECMP on the 5-tuple (each QP its own UDP source port)
        const DataRate dr(f.speed);
        EthFabricHelper fh;
        fh.SetDataRate(dr);
        fh.SetDeviceAttribute("Mtu", UintegerValue(o.ethMtu));
        fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
        EthFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(RadixFor(servers), servers));
        comm = ch.InstallRoce(fabric);
        nodes = fabric.hosts;
        rate = dr.GetBitRate();
    }
    else if (f.kind == "tcp-eth")
    {
        // ns-3's TCP on the same EthSwitch leaf-spine as roce-*: lossy priority 0, ECMP on
        // the 5-tuple, ECN marks that the default congestion control ignores. The hosts'
        // port queues hold 1000 MTU frames, as the point-to-point eth-* queues.
        const DataRate dr(f.speed);
        EthFabricHelper fh;
        fh.SetHostStack(EthFabricHelper::TCP);
        fh.SetDataRate(dr);
        fh.SetDeviceAttribute("Mtu", UintegerValue(o.ethMtu));
        fh.SetDeviceAttribute("TxQueueMaxBytes", UintegerValue(1000 * (o.ethMtu + 18)));
        fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
        ch.SetTcpTransportAttribute("SegmentSize", UintegerValue(o.ethMtu - 52));
        EthFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(RadixFor(servers), servers));
        comm = ch.InstallTcp(fabric.hosts);
        nodes = fabric.hosts;
        rate = dr.GetBitRate();
    }
    else
    {
        IB_REQUIRE(f.kind == "tcp", "fabric " << f.name << ": kind ib, roce, tcp-eth or tcp");
        const DataRate dr(f.speed);
        // TCP MSS = MTU - 20 (IPv4) - 32 (TCP with timestamps): 1448 for 1500
        Config::SetDefault("ns3::PointToPointNetDevice::Mtu", UintegerValue(o.ethMtu));
        ch.SetTcpTransportAttribute("SegmentSize", UintegerValue(o.ethMtu - 52));
        // same shape as the IB fat tree, 10 ns cables as the IB model's default
        nodes = CollectiveHelper::BuildIpFabric(
            IbTopologyBuilder::FatTree2Level(RadixFor(servers), servers),
            dr,
            NanoSeconds(10));
        comm = ch.InstallTcp(nodes);
        rate = dr.GetBitRate();
    }

    const double gpuFlops = m.flopsPerSample * m.gpuSamplesPerSec;
    DataParallelTrainingHelper th;
    th.SetJobAttribute(
        "GradientBytes",
        UintegerValue(static_cast<uint64_t>(std::llround(m.params)) * m.bytesPerGrad));
    th.SetJobAttribute("BytesPerElement", UintegerValue(m.bytesPerGrad));
    th.SetJobAttribute("BucketSize", UintegerValue(o.bucketBytes));
    th.SetJobAttribute("GpusPerServer", UintegerValue(o.gpusPerServer));
    th.SetJobAttribute("IntraServerBandwidth", DataRateValue(o.nvlink));
    th.SetJobAttribute("Iterations", UintegerValue(o.iterations));
    th.SetApplicationAttribute("FlopsPerSample", DoubleValue(m.flopsPerSample));
    th.SetApplicationAttribute("BatchPerGpu", UintegerValue(m.batchPerGpu));
    th.SetApplicationAttribute("GpuFlops", DoubleValue(gpuFlops));
    Ptr<DataParallelTrainingJob> job = th.Install(comm, nodes);

    // stop after the iteration during which the wall budget ran out
    const double budget = o.wallBudget;
    job->TraceConnectWithoutContext(
        "IterationDone",
        Callback<void, const DataParallelTrainingRecord&>(
            [wall0, budget, &m, &f](const DataParallelTrainingRecord& r) {
                const double w =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
                std::cerr << "  " << m.name << " " << f.name << ": iteration " << r.iteration << " "
                          << r.GetDuration().As(Time::MS) << " (wall " << std::fixed
                          << std::setprecision(1) << w << " s)\n";
                if (w > budget)
                {
                    Simulator::Stop();
                }
            }));
    uint32_t reduced = 0;
    job->TraceConnectWithoutContext(
        "BucketReduced",
        Callback<void, uint32_t, uint32_t, uint64_t, Time, Time, Time>(
            [&reduced](uint32_t, uint32_t, uint64_t, Time, Time, Time) { ++reduced; }));
    // hard cap: look at the wall clock every 100 us of simulated time
    std::function<void()> check;
    const double maxWall = o.maxWall;
    check = [&check, wall0, maxWall]() {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count() >
            maxWall)
        {
            Simulator::Stop();
            return;
        }
        Simulator::Schedule(MicroSeconds(100), check);
    };
    if (maxWall > 0)
    {
        Simulator::Schedule(MicroSeconds(100), check);
    }
    Simulator::Run();
    if (sm)
    {
        std::cout << m.name << " on " << f.name << ", link failures " << o.ibFailLink << ": "
                  << sm->GetSweeps() << " subnet manager sweep(s)\n";
        outages.Print(std::cout, 8);
    }

    Result res;
    res.model = m.name;
    res.fabric = f.name;
    res.servers = servers;
    res.gpus = gpus;
    res.requested = o.iterations;
    res.simulated = job->GetRecords().size();
    res.rateGbps = rate / 1e9;
    res.buckets = job->GetBucketBytes().size();
    res.reduced = reduced;
    if (res.simulated == 0)
    {
        // stopped by --max-wall inside the first iteration: report the progress only
        res.compute = Seconds(m.flopsPerSample * m.batchPerGpu / gpuFlops);
        Simulator::Destroy();
        res.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        return res;
    }
    // the first iteration is a warm-up (TCP's congestion windows start small): left out when
    // there are more
    const uint32_t skip = res.simulated > 1 ? 1 : 0;
    res.iteration = job->GetMeanIterationTime(skip);
    res.compute = job->GetRecords().back().compute;
    res.exposed = res.iteration - res.compute;
    res.idle = res.exposed.GetSeconds() / res.iteration.GetSeconds();
    const uint64_t globalBatch = static_cast<uint64_t>(gpus) * m.batchPerGpu;
    res.hours = DataParallelTrainingJob::ProjectTimeToTrain(m.samplesPerEpoch,
                                                            m.epochs,
                                                            globalBatch,
                                                            res.iteration)
                    .GetSeconds() /
                3600.0;
    Simulator::Destroy();
    res.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return res;
}

/**
 * @param v a list "a,b,c"
 * @return its items
 */
std::vector<std::string>
SplitList(const std::string& v)
{
    std::vector<std::string> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (!item.empty())
        {
            out.push_back(item);
        }
    }
    return out;
}

} // namespace

int
main(int argc, char* argv[])
{
    Options o;
    bool quick = false;
    std::string models = "resnet50,bert-large";
    std::string fabrics = "eth-100,eth-200,eth-400,tcp-eth-100,roce-100,roce-200,roce-400,"
                          "ib-hdr,ib-ndr,ib-hdr-sharp,ib-ndr-sharp";
    std::string algo; // ring, or the profile's
    std::string profile;
    std::string out = "ai-training";
    double bucketMb = 25;
    std::string nvlink = "2400Gbps";
    ModelRow custom{"custom", 0, 4, 0, 32, 0, 0, 1, 64, "command line"};
    double customTflops = 0;

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "quick", "2 servers (16 GPUs) per model instead of full scale", quick);
    IbOptions::Add(cmd, "servers", "servers per model (0: full scale, 32 and 128)", o.servers);
    IbOptions::Add(cmd,
                   "iterations",
                   "iterations per run (the first, a warm-up, is left out of the mean when "
                   "there are more)",
                   o.iterations);
    IbOptions::Add(cmd, "models", "comma-separated: resnet50, bert-large, custom", models);
    IbOptions::Add(cmd,
                   "fabrics",
                   "comma-separated: eth-100, eth-200, eth-400 (TCP, point-to-point), "
                   "tcp-eth-100, tcp-eth-200, tcp-eth-400 (TCP on EthSwitch), roce-100, "
                   "roce-200, roce-400 (RoCEv2 on EthSwitch), ib-hdr, ib-ndr, ib-hdr-sharp, "
                   "ib-ndr-sharp",
                   fabrics);
    IbOptions::Add(cmd,
                   "algo",
                   "allreduce algorithm among servers (not on the -sharp fabrics): ring, tree, "
                   "hd, rd, tuned (by size); default ring, or the profile's",
                   algo);
    IbOptions::Add(cmd,
                   "profile",
                   "a hardware and library profile (IbProfileHelper): ideal, edr-cx4-mpi, "
                   "hdr-cx6-mpi, ndr-cx7-nccl (HCAs, links, switches and collective costs; "
                   "the TCP fabrics keep ns-3's models); empty = the idealized model",
                   profile);
    IbOptions::Add(cmd, "bucket-mb", "DDP bucket size in MiB", bucketMb);
    IbOptions::Add(cmd, "gpus-per-server", "GPUs per server", o.gpusPerServer);
    IbOptions::Add(cmd, "nvlink", "intra-server bandwidth per GPU, one direction", nvlink);
    IbOptions::Add(cmd, "chunk", "collective chunk size, bytes", o.chunk);
    IbOptions::Add(cmd,
                   "ib-cc",
                   "IB fabrics: IBA congestion control on (subnet manager defaults; the "
                   "ns3::IbSubnetManager::Cc* attributes tune it)",
                   o.ibCc);
    IbOptions::Add(cmd,
                   "ib-fail-link",
                   "IB fabrics: cables to fail, NODE:PORT@DOWN[-UP],... in simulated time (e.g. "
                   "leaf-0:5@5ms); the subnet manager routes around them, outages are printed",
                   o.ibFailLink);
    IbOptions::Add(cmd,
                   "ib-timeout",
                   "IB fabrics: local ACK timeout exponent of the collective's queue pairs, "
                   "4.096 us x 2^value (14: 67 ms)",
                   o.ibTimeout);
    IbOptions::Add(cmd,
                   "wall-budget",
                   "seconds of wall time per run after which no further iteration starts (at "
                   "least one always completes)",
                   o.wallBudget);
    IbOptions::Add(cmd,
                   "max-wall",
                   "hard wall-time cap per run in seconds, also inside an iteration (0: none); "
                   "a run stopped before its first iteration ends is reported with its progress",
                   o.maxWall);
    IbOptions::Add(cmd,
                   "eth-mtu",
                   "IP MTU of the Ethernet links (9000: jumbo frames; 1500 gave iteration times "
                   "within 0.1% but 40x the wall time on 4 servers, ResNet-50 at 100 Gb/s)",
                   o.ethMtu);
    IbOptions::Add(cmd, "out", "output prefix: <out>.md, <out>.csv, <out>.plt, <out>.png", out);
    IbOptions::Add(cmd, "custom-params", "custom model: parameters", custom.params);
    IbOptions::Add(cmd,
                   "custom-bytes",
                   "custom model: bytes per gradient element (2, 4)",
                   custom.bytesPerGrad);
    IbOptions::Add(cmd,
                   "custom-flops",
                   "custom model: training FLOPs per sample",
                   custom.flopsPerSample);
    IbOptions::Add(cmd,
                   "custom-batch",
                   "custom model: samples per GPU per iteration",
                   custom.batchPerGpu);
    IbOptions::Add(cmd,
                   "custom-gpu-tflops",
                   "custom model: sustained TFLOP/s per GPU",
                   customTflops);
    IbOptions::Add(cmd,
                   "custom-samples",
                   "custom model: samples per epoch",
                   custom.samplesPerEpoch);
    IbOptions::Add(cmd, "custom-epochs", "custom model: epochs", custom.epochs);
    IbOptions::Add(cmd, "custom-gpus", "custom model: GPUs", custom.gpus);
    const ModelRow customDefault = custom;
    const uint32_t serversDefault = o.servers;
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

    IB_REFUSE(bucketMb <= 0, "--bucket-mb must be positive");
    IB_REQUIRE(o.chunk >= 1, "--chunk=" << o.chunk << ": a chunk is at least 1 byte");
    IB_REFUSE(quick && o.servers != serversDefault,
              "--quick and --servers both set the number of servers; give one of them");
    {
        // The --custom-* options describe the custom model; without it they would be
        // ignored and the full-scale default run would start.
        const bool customGiven = customTflops != 0 || custom.params != customDefault.params ||
                                 custom.bytesPerGrad != customDefault.bytesPerGrad ||
                                 custom.flopsPerSample != customDefault.flopsPerSample ||
                                 custom.batchPerGpu != customDefault.batchPerGpu ||
                                 custom.samplesPerEpoch != customDefault.samplesPerEpoch ||
                                 custom.epochs != customDefault.epochs ||
                                 custom.gpus != customDefault.gpus;
        bool customChosen = false;
        for (const auto& name : SplitList(models))
        {
            customChosen = customChosen || name == "custom";
        }
        IB_REFUSE(customGiven && !customChosen,
                  "--custom-* options describe the custom model, which --models="
                      << models << " does not include; add custom to --models (for "
                      << "example --models=custom)");
    }
    o.bucketBytes = static_cast<uint64_t>(bucketMb * 1024 * 1024);
    {
        DataRateValue nvValue;
        IB_REQUIRE(nvValue.DeserializeFromString(nvlink, MakeDataRateChecker()),
                   "--nvlink=" << nvlink << ": not a data rate; e.g. 2400Gbps or 300GBps");
        o.nvlink = nvValue.Get();
    }
    if (quick && o.servers == 0)
    {
        o.servers = 2;
    }
    IB_REFUSE(o.ethMtu < 576 || o.ethMtu > 65535, "--eth-mtu must be in 576..65535");
    IB_REFUSE(o.iterations == 0, "--iterations must be at least 1");

    IB_REFUSE(o.gpusPerServer == 0, "--gpus-per-server=0: a server has at least 1 GPU");
    IB_REFUSE(SplitList(models).empty(),
              "--models=" << models << ": name at least one (resnet50, bert-large, custom)");
    IB_REFUSE(SplitList(fabrics).empty(),
              "--fabrics=" << fabrics
                           << ": name at least one (eth-100, eth-200, eth-400, ib-hdr, "
                              "ib-ndr, ib-hdr-sharp, ib-ndr-sharp)");
    std::vector<ModelRow> table = ModelTable();
    std::vector<ModelRow> chosen;
    for (const auto& name : SplitList(models))
    {
        if (name == "custom")
        {
            IB_REFUSE(custom.params <= 0 || custom.flopsPerSample <= 0 || customTflops <= 0 ||
                          custom.samplesPerEpoch == 0,
                      "--models=custom needs --custom-params, --custom-flops, "
                      "--custom-gpu-tflops and --custom-samples (all positive)");
            // Checked here, not when the run has ended (which may take hours).
            IB_REQUIRE(custom.bytesPerGrad == 2 || custom.bytesPerGrad == 4,
                       "--custom-bytes=" << custom.bytesPerGrad
                                         << ": bytes per gradient element, 2 (fp16, "
                                            "bf16) or 4 (fp32)");
            IB_REQUIRE(custom.epochs > 0 && std::isfinite(custom.epochs),
                       "--custom-epochs=" << custom.epochs << ": a positive number of epochs");
            custom.gpuSamplesPerSec = customTflops * 1e12 / custom.flopsPerSample;
            chosen.push_back(custom);
            continue;
        }
        bool found = false;
        for (const auto& m : table)
        {
            if (m.name == name)
            {
                chosen.push_back(m);
                found = true;
            }
        }
        IB_REQUIRE(found,
                   "--models: unknown model '" << name << "' (resnet50, bert-large, custom)");
    }
    IB_REQUIRE(algo == "ring" || algo == "tree" || algo == "hd" || algo == "rd" ||
                   algo == "halving-doubling" || algo == "recursive-doubling" || algo == "tuned",
               "--algo=" << algo
                         << ": use ring, tree, hd, rd or tuned (SHARP runs on the "
                            "ib-hdr-sharp and ib-ndr-sharp fabrics, chosen with "
                            "--fabrics)");
    std::vector<FabricScenario> all = MakeFabrics(algo);
    std::vector<FabricScenario> fab;
    for (const auto& name : SplitList(fabrics))
    {
        bool found = false;
        for (const auto& f : all)
        {
            if (f.name == name)
            {
                fab.push_back(f);
                found = true;
            }
        }
        if (!found)
        {
            std::string known;
            for (const auto& f : all)
            {
                known += (known.empty() ? "" : ", ") + f.name;
            }
            IB_REQUIRE(false, "--fabrics: unknown fabric '" << name << "' (" << known << ")");
        }
    }

    std::ostringstream md;
    std::ofstream csv(out + ".csv");
    IB_REQUIRE(csv, "--out=" << out << ": cannot write " << out << ".csv");
    csv << "model,fabric,servers,gpus,link_gbps,iterations_simulated,iterations_requested,"
           "iteration_ms,compute_ms,exposed_comm_ms,gpu_idle_fraction,projected_hours,"
           "speedup_vs_eth100,speedup_vs_eth_same_rate,wall_s\n";
    std::vector<std::vector<Result>> results;
    for (const auto& m : chosen)
    {
        std::vector<Result> rs;
        for (const auto& f : fab)
        {
            rs.push_back(RunOne(m, f, o));
        }
        const Result* base = nullptr;
        for (const auto& r : rs)
        {
            if (r.fabric == "eth-100" && r.simulated > 0)
            {
                base = &r;
            }
        }
        const uint32_t gpus = rs.front().gpus;
        md << "\n### " << m.name << ", " << gpus << " GPUs (" << rs.front().servers << " servers x "
           << o.gpusPerServer << "), " << m.params / 1e6 << " M parameters, " << m.bytesPerGrad
           << "-byte gradients, batch " << m.batchPerGpu << " per GPU\n\n";
        md << "| fabric | link (Gb/s) | iteration (ms) | compute (ms) | exposed comm (ms) | GPU "
              "idle "
              "| projected training (h) | speedup vs eth-100 | vs Ethernet same rate | "
              "iterations simulated | wall (s) |\n";
        md << "|---|---|---|---|---|---|---|---|---|---|---|\n";
        for (const auto& r : rs)
        {
            if (r.simulated == 0)
            {
                char row[256];
                std::snprintf(row,
                              sizeof(row),
                              "| %s | %.0f | not finished | | | | | | | 0 of %u (%u of %u buckets "
                              "of iteration 0 reduced) | %.1f |\n",
                              r.fabric.c_str(),
                              r.rateGbps,
                              r.requested,
                              r.reduced,
                              r.buckets,
                              r.wall);
                md << row;
                csv << r.model << "," << r.fabric << "," << r.servers << "," << r.gpus << ","
                    << r.rateGbps << ",0," << r.requested << ",,,,,,,," << r.wall << "\n";
                continue;
            }
            const Result* same = nullptr;
            for (const auto& x : rs)
            {
                if (x.fabric.rfind("eth", 0) == 0 && x.rateGbps == r.rateGbps && x.simulated > 0)
                {
                    same = &x;
                }
            }
            const double sp = base ? base->iteration.GetSeconds() / r.iteration.GetSeconds() : 0;
            const double sps = same ? same->iteration.GetSeconds() / r.iteration.GetSeconds() : 0;
            char line[512];
            std::snprintf(line,
                          sizeof(line),
                          "| %s | %.0f | %.3f | %.3f | %.3f | %.1f%% | %.3f | %s | %s | %u of %u | "
                          "%.1f |\n",
                          r.fabric.c_str(),
                          r.rateGbps,
                          r.iteration.GetSeconds() * 1e3,
                          r.compute.GetSeconds() * 1e3,
                          r.exposed.GetSeconds() * 1e3,
                          r.idle * 100,
                          r.hours,
                          base ? (std::to_string(sp).substr(0, 5) + "x").c_str() : "-",
                          same ? (std::to_string(sps).substr(0, 5) + "x").c_str() : "-",
                          r.simulated,
                          r.requested,
                          r.wall);
            md << line;
            csv << r.model << "," << r.fabric << "," << r.servers << "," << r.gpus << ","
                << r.rateGbps << "," << r.simulated << "," << r.requested << ","
                << r.iteration.GetSeconds() * 1e3 << "," << r.compute.GetSeconds() * 1e3 << ","
                << r.exposed.GetSeconds() * 1e3 << "," << r.idle << "," << r.hours << ","
                << (base ? std::to_string(sp) : "") << "," << (same ? std::to_string(sps) : "")
                << "," << r.wall << "\n";
        }
        md << "\nSources: " << m.sources << ".\n";
        results.push_back(rs);
    }

    std::ostringstream head;
    head << "# Data-parallel training, " << algo
         << " allreduce among servers (SHARP in the switches on the -sharp fabrics), "
         << o.gpusPerServer << " GPUs per server (NVLink " << o.nvlink.GetBitRate() / 8e9
         << " GB/s per GPU), DDP buckets of " << bucketMb << " MiB; eth-* = TCP over "
         << "point-to-point links, tcp-eth-* = TCP and roce-* = RoCEv2 on EthSwitch "
         << "leaf-spines (ECMP), IP MTU " << o.ethMtu << "; InfiniBand = RDMA (RC), "
         << "two-level fat trees, ftree routing\n\n"
         << (o.servers > 0 ? "Reduced scale (--quick or --servers): " + std::to_string(o.servers) +
                                 " servers per model, not the full-scale GPU counts.\n"
                           : "Full scale: every model at its GPU count of the table.\n")
         << "Iteration time: mean of the simulated iterations after the first (a warm-up: "
            "TCP's congestion windows start small), or the first when only one was "
            "simulated; every simulated iteration is a full iteration at the stated scale.\n";
    bool cut = false;
    for (const std::vector<Result>& model : results)
    {
        for (const Result& r : model)
        {
            cut = cut || r.simulated < r.requested;
        }
    }
    if (cut)
    {
        // The wall clock decided how many iterations ran: say so, since another machine
        // (or a busier one) runs a different number and gets a different mean.
        head << "\nSome runs simulated fewer iterations than --iterations asked for: "
                "--wall-budget or --max-wall stopped them, so their means depend on this "
                "machine's speed. For results that do not, raise --wall-budget and "
                "--max-wall or lower --iterations.\n";
    }
    const std::string text = head.str() + md.str();
    std::cout << text;
    {
        std::ofstream md(out + ".md");
        md << text;
        IB_REQUIRE(md, "--out=" << out << ": cannot write " << out << ".md");
    }

    // plot: speedup over 100 Gb/s Ethernet per fabric (or over the first fabric run when
    // eth-100 is not among them), one line per model
    std::string baseName = fab.front().name;
    for (const auto& f : fab)
    {
        if (f.name == "eth-100")
        {
            baseName = f.name;
        }
    }
    Gnuplot plot(out + ".png");
    plot.SetTerminal("png size 900,500");
    plot.SetTitle("Data-parallel training: speedup of iteration time over " + baseName);
    plot.SetLegend("fabric", "speedup over " + baseName + " (x)");
    std::ostringstream xt;
    xt << "set xtics (";
    for (uint32_t i = 0; i < fab.size(); ++i)
    {
        xt << (i ? ", " : "") << "\"" << fab[i].name << "\" " << i;
    }
    xt << ")\nset xrange [-0.5:" << fab.size() - 0.5 << "]\nset yrange [0:*]\nset grid y";
    plot.AppendExtra(xt.str());
    uint32_t points = 0;
    for (uint32_t mi = 0; mi < results.size(); ++mi)
    {
        Gnuplot2dDataset ds(results[mi].front().model + " (" +
                            std::to_string(results[mi].front().gpus) + " GPUs)");
        ds.SetStyle(Gnuplot2dDataset::LINES_POINTS);
        ds.SetExtra("lw 2 pt 7 ps 1.5");
        const Result* base = nullptr;
        for (const auto& r : results[mi])
        {
            if (r.fabric == baseName && r.simulated > 0)
            {
                base = &r;
            }
        }
        for (uint32_t i = 0; i < results[mi].size(); ++i)
        {
            if (results[mi][i].simulated == 0 || base == nullptr)
            {
                continue;
            }
            ds.Add(i, base->iteration.GetSeconds() / results[mi][i].iteration.GetSeconds());
            ++points;
        }
        plot.AddDataset(ds);
    }
    if (points == 0)
    {
        std::cout << "\nplot: none (no run finished an iteration)\n";
        std::cout << "tables: " << out << ".md, " << out << ".csv\n";
        return 0;
    }
    {
        std::ofstream plt(out + ".plt");
        plot.GenerateOutput(plt);
    }
    if (std::system("command -v gnuplot >/dev/null 2>&1") == 0)
    {
        const int rc = std::system(("gnuplot " + out + ".plt").c_str());
        std::cout << "\nplot: " << out << ".png" << (rc == 0 ? "" : " (gnuplot failed)") << "\n";
    }
    else
    {
        std::cout << "\nplot: " << out << ".plt (gnuplot not installed: apt-get install "
                  << "gnuplot-nox, then gnuplot " << out << ".plt)\n";
    }
    std::cout << "tables: " << out << ".md, " << out << ".csv\n";
    return 0;
}

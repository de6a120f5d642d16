/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Several LLM training jobs on one GPU cluster, placed by a scheduler policy, with
 * optional background traffic, on InfiniBand, RoCE and TCP fabrics of the same shape: a
 * rail-optimized fat tree, one NIC per GPU, NVLink inside each server. Every job runs its
 * own workload (LlmWorkloadBuilder) and collectives; each job is also run alone on the
 * same servers, and its slowdown from sharing is printed per fabric.
 *
 *   ./ai-cluster                                    8 servers x 4 GPUs, 2 rail groups; 3 jobs
 *                                                   (16 + 8 + 8 GPUs), fragmented; IB and
 *                                                   RoCE, NDR
 *   ./ai-cluster --placement=packed --fabric=all
 *   ./ai-cluster --model=moe --background=0.3       the first job a MoE model; every GPU's
 *                                                   NIC also streams at 30 % of its link
 *   ./ai-cluster --pp=2 --microbatches=4 --plot=cluster
 *   ./ai-cluster --iterations=4 --arrivals=0,20ms,40ms   jobs arrive one after another
 *
 * --plot=NAME writes NAME-bars.plt (iteration time per fabric and job, alone and shared)
 * and NAME-timeline.plt (the first job's ranks, one per server and pipeline stage, on the
 * first fabric, shared), and runs gnuplot on them when it is installed.
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"
#include "ns3/stats-module.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace ns3;

namespace
{

/// A job of the scenario.
struct JobSpec
{
    std::string name;       ///< its name
    bool moe{false};        ///< a MoE model (else dense)
    uint32_t gpus{0};       ///< GPUs
    TrainingWorkloadFile w; ///< its workload
    Time arrival;           ///< when it starts in the shared run
};

/// One job's results on one fabric.
struct JobResult
{
    WorkloadIterationRecord alone;  ///< slowest rank, last iteration, alone
    WorkloadIterationRecord shared; ///< the same, sharing the fabric
};

/// What one simulation returns.
struct RunResult
{
    std::vector<WorkloadIterationRecord> slowest; ///< per job run: its slowest, last iteration
    std::vector<WorkloadActivity> timeline;       ///< job 0's traced ranks
    uint64_t backgroundBytes{0};                  ///< delivered by the background flows
    uint64_t ecnMarks{0};                         ///< Ethernet: frames the switches marked
    uint64_t cnps{0};                             ///< RoCE: CNPs the NICs received
    uint64_t pfcFrames{0};                        ///< Ethernet: PFC frames sent
    double wall{0};                               ///< seconds
};

/// Everything a simulation needs.
struct Scenario
{
    IbTopology topology;          ///< the cluster
    uint32_t gpusPerServer{8};    ///< GPUs per server
    std::string algo;             ///< collective algorithm
    std::string schedule;         ///< pipeline schedule
    uint32_t iterations{1};       ///< iterations per job
    double background{0};         ///< background load per NIC (0: none)
    DataRate lineRate;            ///< the hosts' link rate
    std::vector<uint32_t> traced; ///< job 0's ranks whose timeline is kept
    std::string ethLb;            ///< Ethernet switches' LoadBalancing
    uint32_t channels{1};         ///< ring/hier channels, one queue pair each
};

/**
 * Run some jobs together on a fresh fabric.
 * @param sc the scenario
 * @param kind ib, roce or tcp-eth
 * @param jobs the jobs
 * @param hosts each job's hosts
 * @param which the jobs to run (indices)
 * @param background with the background flows
 * @param timeline keep job which[0]'s timeline
 * @return the results, per job of @p which
 */
RunResult
RunJobs(const Scenario& sc,
        const std::string& kind,
        const std::vector<JobSpec>& jobs,
        const std::vector<std::vector<uint32_t>>& hosts,
        const std::vector<uint32_t>& which,
        bool background,
        bool timeline)
{
    const auto wallStart = std::chrono::steady_clock::now();
    IbHelper::ResetLidAllocation();
    CollectiveHelper ch;
    ch.SetGpusPerServer(sc.gpusPerServer);
    ch.SetAlgorithm(sc.algo);
    if (sc.channels > 1)
    {
        ch.SetAlgorithmAttribute("Channels", UintegerValue(sc.channels));
    }
    ch.SetIbTransportAttribute("QueuePairsPerPeer", UintegerValue(sc.channels));
    ch.SetFlowTransportAttribute("QueuePairsPerPeer", UintegerValue(sc.channels));
    WorkloadTrainingHelper wh(ch);
    wh.SetJobAttribute("Iterations", UintegerValue(sc.iterations));
    wh.SetJobAttribute("PipelineSchedule", StringValue(sc.schedule));
    IbFabric ibFabric;
    EthFabric ethFabric;
    IbFlowFabric flowFabric;
    const bool ib = kind == "ib" || kind == "ib-sharp";
    const bool flow = kind == "ib-flow";
    if (flow)
    {
        IbFlowFabricHelper fh;
        fh.SetRoutingEngine("ftree");
        flowFabric = fh.Build(sc.topology);
    }
    else if (ib)
    {
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
        ibFabric = fh.Build(sc.topology);
        if (kind == "ib-sharp")
        {
            // The data-parallel groups (one GPU per server, on a rail) aggregate in the
            // switches; tensor-parallel groups stay on NVLink.
            CollectiveHelper sharp;
            sharp.SetAlgorithm("sharp");
            sharp.SetSharpManager(SharpHelper().Install(ibFabric));
            wh.SetGroupCollectives(WorkloadTrainingJob::DP, sharp);
            wh.SetGroupCollectives(WorkloadTrainingJob::DP_EP, sharp);
        }
    }
    else
    {
        EthFabricHelper fh;
        fh.SetChannelAttribute("Delay", TimeValue(NanoSeconds(10)));
        fh.SetSwitchAttribute("LoadBalancing", StringValue(sc.ethLb));
        if (kind == "tcp-eth")
        {
            fh.SetHostStack(EthFabricHelper::TCP);
        }
        ethFabric = fh.Build(sc.topology);
    }
    auto install = [&](const JobSpec& j, const std::vector<uint32_t>& h) {
        if (flow)
        {
            return wh.InstallFlow(j.w, j.name, flowFabric, h);
        }
        if (ib)
        {
            return wh.InstallIb(j.w, j.name, ibFabric, h);
        }
        if (kind == "roce")
        {
            return wh.InstallRoce(j.w, j.name, ethFabric, h);
        }
        NodeContainer nodes;
        for (uint32_t x : h)
        {
            nodes.Add(ethFabric.hosts.Get(x));
        }
        return wh.InstallTcp(j.w, j.name, nodes);
    };
    auto pair = [&](uint32_t a, uint32_t b) {
        if (flow)
        {
            return ch.InstallFlow(flowFabric, {a, b});
        }
        if (ib)
        {
            return ch.InstallIb(ibFabric, {a, b});
        }
        if (kind == "roce")
        {
            return ch.InstallRoce(ethFabric, {a, b});
        }
        return ch.InstallTcp(ethFabric.hosts, std::vector<uint32_t>{a, b});
    };
    RunResult res;
    std::vector<Ptr<WorkloadTrainingJob>> running;
    for (uint32_t j : which)
    {
        running.push_back(install(jobs[j], hosts[j]));
    }
    if (timeline)
    {
        running[0]->TraceConnectWithoutContext(
            "Activity",
            MakeCallback(+[](RunResult* res,
                             const std::vector<uint32_t>* traced,
                             const WorkloadActivity& a) {
                if (std::find(traced->begin(), traced->end(), a.rank) != traced->end())
                {
                    res->timeline.push_back(a);
                }
            }).Bind(&res, &sc.traced));
    }
    Ptr<BackgroundTraffic> bg;
    if (background && sc.background > 0)
    {
        // A rail-aligned permutation: GPU k of server s to GPU k of server s + S/2, through
        // the spines, every NIC sending and receiving one flow.
        bg = CreateObject<BackgroundTraffic>();
        bg->SetAttribute("Load", DoubleValue(sc.background));
        bg->SetAttribute("LineRate", DataRateValue(sc.lineRate));
        const uint32_t n =
            ibFabric.hosts.GetN() + ethFabric.hosts.GetN() + (flow ? flowFabric.GetNHosts() : 0);
        const uint32_t servers = n / sc.gpusPerServer;
        for (uint32_t h = 0; h < n; ++h)
        {
            const uint32_t peer = (h + (servers / 2) * sc.gpusPerServer) % n;
            bg->AddFlow(pair(h, peer));
        }
        bg->Start();
    }
    for (std::size_t i = 0; i < running.size(); ++i)
    {
        // Alone a job starts at once; together each at its arrival.
        const Time at = which.size() > 1 ? jobs[which[i]].arrival : Time(0);
        Simulator::Schedule(at, &WorkloadTrainingJob::Start, running[i]);
    }
    // Stop the background when the last job is done (else the run would not end): checked
    // after each rank's iteration, once the job has counted it.
    if (bg)
    {
        std::function<void()> stopIfDone = [&running, bg]() {
            for (auto& job : running)
            {
                if (!job->IsDone())
                {
                    return;
                }
            }
            bg->Stop();
        };
        for (auto& job : running)
        {
            job->TraceConnectWithoutContext("IterationDone",
                                            Callback<void, const WorkloadIterationRecord&>(
                                                [stopIfDone](const WorkloadIterationRecord&) {
                                                    Simulator::ScheduleNow(stopIfDone);
                                                }));
        }
    }
    Simulator::Run();
    for (auto& job : running)
    {
        IB_REQUIRE(job->IsDone(), "a job did not finish");
        res.slowest.push_back(job->GetSlowest(sc.iterations - 1));
    }
    res.backgroundBytes = bg ? bg->GetBytesDelivered() : 0;
    // What the Ethernet fabric did about congestion, for the slowdowns it shows.
    for (const auto& sw : ethFabric.ethSwitches)
    {
        res.ecnMarks += sw->GetEcnMarks();
    }
    for (const auto& hca : ethFabric.hcas)
    {
        res.cnps += hca->GetCnpsReceived();
    }
    for (uint32_t d = 0; d < ethFabric.devices.GetN(); ++d)
    {
        if (auto dev = DynamicCast<EthNetDevice>(ethFabric.devices.Get(d)))
        {
            for (uint8_t prio = 0; prio < 8; ++prio)
            {
                res.pfcFrames += dev->GetPfcFramesSent(prio);
            }
        }
    }
    Simulator::Destroy();
    res.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    return res;
}

/**
 * Write a gnuplot file and run gnuplot on it when it is installed.
 * @param plot the plot
 * @param name its file name without extension
 */
void
Draw(Gnuplot& plot, const std::string& name)
{
    {
        std::ofstream plt(name + ".plt");
        plot.GenerateOutput(plt);
        IB_REQUIRE(plt, "--plot: cannot write " << name << ".plt");
    }
    if (std::system("command -v gnuplot >/dev/null 2>&1") == 0)
    {
        const int rc = std::system(("gnuplot " + name + ".plt").c_str());
        std::cout << "plot: " << name << ".png" << (rc == 0 ? "" : " (gnuplot failed)") << "\n";
    }
    else
    {
        std::cout << "plot: " << name << ".plt (gnuplot not installed: apt-get install "
                  << "gnuplot-nox, then gnuplot " << name << ".plt)\n";
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t servers = 8;
    uint32_t gpusPerServer = 4;
    uint32_t radixArg = 0;
    double oversub = 1.0;
    std::string speed = "NDR";
    std::string fabricArg = "ib,roce";
    std::string placement = "fragmented";
    std::string model = "dense";
    uint32_t gpus = 16;
    uint32_t others = 2;
    uint32_t otherGpus = 8;
    uint32_t layers = 2;
    uint32_t hidden = 4096;
    uint32_t seq = 2048;
    uint32_t tp = 4;
    uint32_t experts = 8;
    uint32_t ep = 2;
    uint32_t pp = 1;
    uint32_t vpp = 1;
    uint32_t zero = 0;
    uint32_t microBatches = 1;
    std::string schedule = "1F1B";
    uint32_t iterations = 1;
    std::string algo = "hier";
    double background = 0;
    std::string plotName;
    std::string ethLb = "Ecmp";
    uint32_t channels = 1;
    std::string arrivals;
    std::string topologyKind = "rail-optimized";

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "servers", "servers in the cluster", servers);
    IbOptions::Add(cmd, "gpus-per-server", "GPUs (and NICs) per server", gpusPerServer);
    IbOptions::Add(cmd, "radix", "switch radix (0: the smallest that holds the servers)", radixArg);
    IbOptions::Add(cmd, "oversub", "leaf oversubscription (down:up ports)", oversub);
    IbOptions::Add(cmd,
                   "speed",
                   "link speed (4x): SDR..NDR; Ethernet gets the same data rate",
                   speed);
    IbOptions::Add(cmd,
                   "fabric",
                   "comma-separated: ib, ib-sharp (data-parallel groups aggregate in the "
                   "switches), roce, tcp-eth, ib-flow (the IB fabric at flow level); or all "
                   "(the first four)",
                   fabricArg);
    IbOptions::Add(cmd,
                   "placement",
                   "packed, fragmented or random (RngRun picks the order)",
                   placement);
    IbOptions::Add(cmd, "model", "the first job's model: dense or moe", model);
    IbOptions::Add(cmd, "gpus", "the first job's GPUs", gpus);
    IbOptions::Add(cmd, "others", "other jobs (dense models)", others);
    IbOptions::Add(cmd, "other-gpus", "GPUs of each other job", otherGpus);
    IbOptions::Add(cmd, "layers", "transformer layers of every job", layers);
    IbOptions::Add(cmd, "hidden", "hidden size of every job (heads: hidden / 128)", hidden);
    IbOptions::Add(cmd, "seq", "sequence length", seq);
    IbOptions::Add(cmd, "tp", "tensor-parallel size", tp);
    IbOptions::Add(cmd, "experts", "--model=moe: experts per layer", experts);
    IbOptions::Add(cmd, "ep", "--model=moe: expert-parallel size", ep);
    IbOptions::Add(cmd,
                   "zero",
                   "ZeRO stage of the data parallelism: 0 (allreduce), 1, 2 or 3",
                   zero);
    IbOptions::Add(cmd, "pp", "pipeline stages of every job", pp);
    IbOptions::Add(cmd,
                   "vpp",
                   "model chunks per pipeline stage (interleaved 1F1B; --layers a multiple of "
                   "pp x vpp, --microbatches of pp)",
                   vpp);
    IbOptions::Add(cmd, "microbatches", "micro-batches per iteration", microBatches);
    IbOptions::Add(cmd, "schedule", "pipeline schedule: 1F1B or GPipe", schedule);
    IbOptions::Add(cmd, "iterations", "iterations per job (the last one is reported)", iterations);
    IbOptions::Add(cmd,
                   "arrivals",
                   "comma-separated start times of the jobs in the shared run, e.g. 0,2ms,5ms "
                   "(jobs not named start at 0)",
                   arrivals);
    IbOptions::Add(cmd, "algo", "collective algorithm: hier, ring, tree, dbtree, hd, rd", algo);
    IbOptions::Add(cmd,
                   "topology",
                   "rail-optimized (spines join the rails) or rail-only (one network per rail, "
                   "nothing between them: only hier's rail traffic runs)",
                   topologyKind);
    IbOptions::Add(cmd,
                   "channels",
                   "--algo=hier or ring: channels per collective (NCCL's), each over its own "
                   "queue pair (on RoCE a flow of its own for ECMP)",
                   channels);
    IbOptions::Add(cmd,
                   "background",
                   "background load per NIC, a share of the link rate (0: none): a permutation, "
                   "GPU k of server s to GPU k of server s + servers/2",
                   background);
    IbOptions::Add(cmd,
                   "eth-lb",
                   "Ethernet switches' load balancing: Ecmp, Spray, Flowlet or Adaptive",
                   ethLb);
    IbOptions::Add(cmd,
                   "plot",
                   "write NAME-bars.plt and NAME-timeline.plt (and .png with gnuplot)",
                   plotName);
    cmd.Parse(argc, argv);

    GpuClusterScheduler::Policy policy;
    IB_REQUIRE(GpuClusterScheduler::ParsePolicy(placement, policy) &&
                   policy != GpuClusterScheduler::EXPLICIT,
               "--placement=" << placement << ": use packed, fragmented or random");
    IB_REQUIRE(model == "dense" || model == "moe", "--model=" << model << ": use dense or moe");
    IB_REQUIRE(schedule == "1F1B" || schedule == "GPipe",
               "--schedule=" << schedule << ": use 1F1B or GPipe");
    IB_REQUIRE(ethLb == "Ecmp" || ethLb == "Spray" || ethLb == "Flowlet" || ethLb == "Adaptive",
               "--eth-lb=" << ethLb << ": use Ecmp, Spray, Flowlet or Adaptive");
    IB_REQUIRE(background >= 0 && background <= 1,
               "--background=" << background << ": a share of the link rate, 0 to 1");
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
    IB_REQUIRE(channels >= 1 && channels <= 16, "--channels=" << channels << ": use 1 to 16");
    IB_REQUIRE(channels == 1 || algo == "hier" || algo == "ring",
               "--channels=" << channels << " with --algo=" << algo
                             << ": only hier and ring run on channels");
    IB_REQUIRE(iterations >= 1 && iterations <= 1000,
               "--iterations=" << iterations << ": use 1 to 1000");
    IB_REQUIRE(servers >= 2 && servers <= 4096, "--servers=" << servers << ": use 2 to 4096");
    IB_REQUIRE(gpusPerServer >= 1 && gpusPerServer <= 64,
               "--gpus-per-server=" << gpusPerServer << ": use 1 to 64");
    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << " is unknown; use one of " << IbLinkRate::ValidSpeedNames());
    std::vector<std::string> kinds;
    {
        std::string list = fabricArg == "all" ? "ib,ib-sharp,roce,tcp-eth" : fabricArg;
        std::istringstream in(list);
        std::string k;
        while (std::getline(in, k, ','))
        {
            IB_REQUIRE(k == "ib" || k == "ib-sharp" || k == "roce" || k == "tcp-eth" ||
                           k == "ib-flow",
                       "--fabric: " << k << " is not ib, ib-sharp, roce, tcp-eth or ib-flow");
            kinds.push_back(k);
        }
        IB_REFUSE(kinds.empty(), "--fabric: name at least one fabric");
    }

    IB_REQUIRE(oversub >= 1 && oversub <= 64,
               "--oversub=" << oversub << ": use 1 (non-blocking) to 64");
    // The cluster: the smallest even radix whose rail leaves and spines hold the servers.
    const uint32_t radix =
        radixArg > 0 ? radixArg
                     : IbTopologyBuilder::SmallestRailRadix(servers, gpusPerServer, oversub);
    IB_REFUSE(radix == 0,
              "--servers=" << servers << ": no radix up to 254 holds " << servers << " servers of "
                           << gpusPerServer << " GPUs in two levels");
    uint32_t down;
    uint32_t up;
    IbTopologyBuilder::SplitLeafPorts(radix, oversub, down, up);
    Scenario sc;
    sc.topology =
        topologyKind == "rail-only"
            ? IbTopologyBuilder::RailOnly(radix, servers, gpusPerServer, oversub, s, 4)
            : IbTopologyBuilder::RailOptimized2Level(radix, servers, gpusPerServer, oversub, s, 4);
    sc.gpusPerServer = gpusPerServer;
    sc.algo = algo;
    sc.schedule = schedule;
    sc.iterations = iterations;
    sc.background = background;
    sc.ethLb = ethLb;
    sc.channels = channels;
    sc.lineRate = IbLinkRate::GetDataRate(s, 4);

    // The jobs and their workloads.
    std::vector<JobSpec> jobs;
    for (uint32_t j = 0; j <= others; ++j)
    {
        JobSpec js;
        js.moe = j == 0 && model == "moe";
        js.gpus = j == 0 ? gpus : otherGpus;
        js.name = (j == 0 ? "job0-" + model : "job" + std::to_string(j) + "-dense");
        Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
        b->SetAttribute("Layers", UintegerValue(layers));
        b->SetAttribute("HiddenSize", UintegerValue(hidden));
        b->SetAttribute("Heads", UintegerValue(std::max(1u, hidden / 128)));
        b->SetAttribute("SequenceLength", UintegerValue(seq));
        b->SetAttribute("TensorParallel", UintegerValue(tp));
        b->SetAttribute("PipelineParallel", UintegerValue(pp));
        b->SetAttribute("VirtualStages", UintegerValue(vpp));
        b->SetAttribute("ZeroStage", UintegerValue(zero));
        b->SetAttribute("MicroBatches", UintegerValue(microBatches));
        if (js.moe)
        {
            b->SetAttribute("Experts", UintegerValue(experts));
            b->SetAttribute("ExpertParallel", UintegerValue(ep));
        }
        js.w = b->Build(js.gpus);
        jobs.push_back(js);
    }
    {
        std::istringstream in(arrivals);
        std::string t;
        for (uint32_t j = 0; std::getline(in, t, ','); ++j)
        {
            IB_REQUIRE(j < jobs.size(),
                       "--arrivals=" << arrivals << ": " << j + 1 << " times for " << jobs.size()
                                     << " jobs");
            TimeValue v;
            if (t.find_first_not_of("0123456789.") == std::string::npos)
            {
                t += "s"; // a bare number: seconds, as ns-3 reads a Time
            }
            IB_REQUIRE(v.DeserializeFromString(t, MakeTimeChecker()) &&
                           !v.Get().IsStrictlyNegative(),
                       "--arrivals: '" << t << "' (job " << j
                                       << ") is not a time from 0 on; e.g. 0,2ms,5ms");
            jobs[j].arrival = v.Get();
        }
    }
    GpuClusterScheduler scheduler(servers, gpusPerServer, down);
    for (const JobSpec& j : jobs)
    {
        scheduler.AddJob(j.name, j.gpus);
    }
    scheduler.Place(policy);
    std::vector<std::vector<uint32_t>> hosts;
    std::vector<uint32_t> all;
    for (uint32_t j = 0; j < jobs.size(); ++j)
    {
        hosts.push_back(scheduler.GetHosts(j));
        all.push_back(j);
    }
    // Timeline rows: job 0's first GPU of each server.
    for (uint32_t r = 0; r < jobs[0].gpus; r += gpusPerServer)
    {
        sc.traced.push_back(r);
    }

    std::cout << "# cluster: " << servers << " servers x " << gpusPerServer << " GPUs, "
              << topologyKind << " fabric radix " << radix << " (" << down
              << " servers per rail group, oversubscription " << oversub << "), " << speed
              << "; placement " << placement << "; collectives " << algo << " on " << channels
              << (channels == 1 ? " channel" : " channels") << "; Ethernet load balancing " << ethLb
              << "; " << layers << " layers, hidden " << hidden << ", tp " << tp << ", pp " << pp
              << " (" << schedule << ", " << microBatches << " micro-batches)"
              << (background > 0
                      ? "; background " + std::to_string(int(background * 100)) + " % per NIC"
                      : "")
              << "\n";
    for (uint32_t j = 0; j < jobs.size(); ++j)
    {
        std::cout << "#   " << jobs[j].name << ": " << jobs[j].gpus << " GPUs on "
                  << scheduler.Describe(j)
                  << (jobs[j].arrival.IsZero()
                          ? std::string()
                          : ", arrives at " + std::to_string(jobs[j].arrival.GetMicroSeconds()) +
                                " us")
                  << "\n";
    }
    std::printf("# %-8s %-12s %13s %13s %9s %11s %10s %10s %10s %10s %10s %8s\n",
                "fabric",
                "job",
                "alone us",
                "shared us",
                "slowdown",
                "compute us",
                "TP us",
                "DP us",
                "EP+DPEP us",
                "PP us",
                "bubble us",
                "wall s");
    std::vector<std::vector<JobResult>> results(kinds.size(), std::vector<JobResult>(jobs.size()));
    std::vector<WorkloadActivity> timeline;
    for (uint32_t f = 0; f < kinds.size(); ++f)
    {
        double wall = 0;
        for (uint32_t j = 0; j < jobs.size(); ++j)
        {
            const RunResult alone = RunJobs(sc, kinds[f], jobs, hosts, {j}, false, false);
            results[f][j].alone = alone.slowest[0];
            wall += alone.wall;
        }
        const RunResult shared = RunJobs(sc, kinds[f], jobs, hosts, all, true, f == 0);
        wall += shared.wall;
        if (f == 0)
        {
            timeline = shared.timeline;
        }
        for (uint32_t j = 0; j < jobs.size(); ++j)
        {
            JobResult& r = results[f][j];
            r.shared = shared.slowest[j];
            const auto& x = r.shared.exposed;
            std::printf(
                "  %-8s %-12s %13.1f %13.1f %9.3f %11.1f %10.1f %10.1f %10.1f %10.1f "
                "%10.1f %8.1f\n",
                kinds[f].c_str(),
                jobs[j].name.c_str(),
                r.alone.GetDuration().GetSeconds() * 1e6,
                r.shared.GetDuration().GetSeconds() * 1e6,
                r.shared.GetDuration().GetSeconds() / r.alone.GetDuration().GetSeconds(),
                r.shared.compute.GetSeconds() * 1e6,
                x[WorkloadTrainingJob::TP].GetSeconds() * 1e6,
                (x[WorkloadTrainingJob::DP] + x[WorkloadTrainingJob::EMB]).GetSeconds() * 1e6,
                (x[WorkloadTrainingJob::EP] + x[WorkloadTrainingJob::DP_EP]).GetSeconds() * 1e6,
                x[WorkloadTrainingJob::PP].GetSeconds() * 1e6,
                r.shared.bubble.GetSeconds() * 1e6,
                j + 1 == jobs.size() ? wall : 0.0);
        }
        if (kinds[f] == "roce" || kinds[f] == "tcp-eth")
        {
            std::printf("  %-8s shared run: %llu ECN marks, %llu CNPs, %llu PFC frames\n",
                        kinds[f].c_str(),
                        static_cast<unsigned long long>(shared.ecnMarks),
                        static_cast<unsigned long long>(shared.cnps),
                        static_cast<unsigned long long>(shared.pfcFrames));
        }
        if (background > 0)
        {
            std::printf("  %-8s background: %.1f MB delivered while the jobs ran\n",
                        kinds[f].c_str(),
                        shared.backgroundBytes / 1e6);
        }
    }
    std::cout << "# each job's slowest GPU in its last iteration; alone: the job by itself on "
                 "the same servers; the columns after slowdown are the shared run's (waits "
                 "per group, DP with the tied embedding's, PP: pipeline transfers under way, "
                 "bubble: waiting for a pipeline neighbour)\n";

    if (plotName.empty())
    {
        return 0;
    }
    // Bars: per fabric a group of bars, per job alone and shared.
    Gnuplot bars(plotName + "-bars.png");
    bars.SetTerminal("png size 1000,500 butt"); // square ends: bars stop at their value
    bars.SetTitle("Iteration time per job: alone and sharing the cluster (" + placement + ")");
    bars.SetLegend("fabric", "iteration time (us)");
    std::ostringstream xt;
    xt << "set xtics (";
    for (uint32_t f = 0; f < kinds.size(); ++f)
    {
        xt << (f ? ", " : "") << "\"" << kinds[f] << "\" " << f;
    }
    const double width = 0.8 / (2 * jobs.size());
    xt << ")\nset xrange [-0.6:" << kinds.size() - 0.4 << "]\nset yrange [0:*]\nset grid y\n"
       << "set key outside right samplen 1 spacing 1.5";
    bars.AppendExtra(xt.str());
    for (uint32_t j = 0; j < jobs.size(); ++j)
    {
        for (int sh = 0; sh < 2; ++sh)
        {
            Gnuplot2dDataset ds(jobs[j].name + (sh ? " shared" : " alone"));
            ds.SetStyle(Gnuplot2dDataset::IMPULSES);
            // A bar: an impulse as wide as its slot (the plot area is about 750 pixels).
            ds.SetExtra("lw " + std::to_string(std::max(2, int(600 * width / kinds.size()))));
            for (uint32_t f = 0; f < kinds.size(); ++f)
            {
                const auto& r = sh ? results[f][j].shared : results[f][j].alone;
                ds.Add(f - 0.4 + width * (2 * j + sh + 0.5), r.GetDuration().GetSeconds() * 1e6);
            }
            bars.AddDataset(ds);
        }
    }
    Draw(bars, plotName + "-bars");
    // Timeline: a row per traced rank, a thick line per interval, a colour per kind.
    Gnuplot gantt(plotName + "-timeline.png");
    gantt.SetTerminal("png size 1200,500 butt");
    gantt.SetTitle(jobs[0].name + " on " + kinds[0] +
                   ", sharing the cluster: first GPU of each "
                   "server");
    gantt.SetLegend("time (us)", "the job's server (rank / gpus-per-server)");
    gantt.AppendExtra("set yrange [-1:" + std::to_string(sc.traced.size()) +
                      "]\nset key outside right\nset ytics 1");
    const std::vector<std::pair<uint8_t, std::string>> kindsShown{
        {WorkloadActivity::COMPUTE, "compute"},
        {WorkloadTrainingJob::TP, "TP wait"},
        {WorkloadTrainingJob::DP, "DP wait"},
        {WorkloadTrainingJob::EP, "EP wait"},
        {WorkloadTrainingJob::DP_EP, "DP_EP wait"},
        {WorkloadTrainingJob::PP, "PP wait"},
        {WorkloadActivity::BUBBLE, "bubble"}};
    for (const auto& [what, label] : kindsShown)
    {
        Gnuplot2dDataset ds(label);
        ds.SetStyle(Gnuplot2dDataset::LINES);
        ds.SetExtra("lw 12");
        bool any = false;
        for (const WorkloadActivity& a : timeline)
        {
            if (a.what != what)
            {
                continue;
            }
            const double row = a.rank / gpusPerServer;
            ds.Add(a.start.GetSeconds() * 1e6, row);
            ds.Add(a.end.GetSeconds() * 1e6, row);
            ds.AddEmptyLine();
            any = true;
        }
        if (any)
        {
            gantt.AddDataset(ds);
        }
    }
    Draw(gantt, plotName + "-timeline");
    return 0;
}

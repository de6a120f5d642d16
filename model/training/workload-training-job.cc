/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "workload-training-job.h"

#include "ns3/abort.h"
#include "ns3/enum.h"
#include "ns3/ib-ns3-compat.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <iostream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadTrainingJob");

NS_OBJECT_ENSURE_REGISTERED(WorkloadTrainingJob);

TypeId
WorkloadTrainingJob::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::WorkloadTrainingJob")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<WorkloadTrainingJob>()
            .AddAttribute("TickTime",
                          "Simulated time of one tick of the workload file's compute times and "
                          "update delays (SimAI: 1 ns; ASTRA-sim 1.0 counts cycles: one clock "
                          "period).",
                          TimeValue(NanoSeconds(1)),
                          MakeTimeAccessor(&WorkloadTrainingJob::m_tick),
                          MakeIbTimeChecker("WorkloadTrainingJob", "TickTime", Time(0)))
            .AddAttribute(
                "Iterations",
                "Training iterations (passes over the file) every rank runs.",
                UintegerValue(1),
                MakeUintegerAccessor(&WorkloadTrainingJob::m_iterations),
                MakeIbUintegerChecker<uint32_t>("WorkloadTrainingJob", "Iterations", 1, 1000000))
            .AddAttribute(
                "PipelineSchedule",
                "How the transformer loops run pipeline parallelism: None (the file's "
                "pp only builds the groups, as SimAI's packet-level mode), 1F1B or "
                "GPipe (stages with send/receive between them and MicroBatches "
                "micro-batches per iteration).",
                EnumValue(PIPELINE_NONE),
                ib_compat::MakeEnumAccessor<PipelineSchedule>(&WorkloadTrainingJob::m_schedule),
                MakeEnumChecker(PIPELINE_NONE,
                                "None",
                                PIPELINE_1F1B,
                                "1F1B",
                                PIPELINE_GPIPE,
                                "GPipe"))
            .AddAttribute(
                "MicroBatches",
                "Micro-batches per iteration with a PipelineSchedule (0: the file's "
                "ga).",
                UintegerValue(0),
                MakeUintegerAccessor(&WorkloadTrainingJob::m_microBatches),
                MakeIbUintegerChecker<uint32_t>("WorkloadTrainingJob", "MicroBatches", 0, 1000000))
            .AddAttribute(
                "VirtualStages",
                "Model chunks per pipeline stage under 1F1B (0: the file's vpp): with v > 1 "
                "the layers are cut into pp x v chunks, stage s holds chunks s, s + pp, ..., "
                "and the stages run Megatron-LM's interleaved 1F1B schedule (micro-batches "
                "a multiple of pp), which cuts the bubble by v.",
                UintegerValue(0),
                MakeUintegerAccessor(&WorkloadTrainingJob::m_virtualStages),
                MakeIbUintegerChecker<uint32_t>("WorkloadTrainingJob", "VirtualStages", 0, 1024))
            .AddTraceSource("IterationDone",
                            "A rank finished an iteration: its WorkloadIterationRecord.",
                            MakeTraceSourceAccessor(&WorkloadTrainingJob::m_iterationDone),
                            "ns3::WorkloadTrainingJob::IterationTracedCallback")
            .AddTraceSource("Activity",
                            "A rank's interval of compute, of waiting for a collective of a "
                            "group kind, or of pipeline bubble: its WorkloadActivity (reported "
                            "when it begins for compute, when it ends for waits).",
                            MakeTraceSourceAccessor(&WorkloadTrainingJob::m_activity),
                            "ns3::WorkloadTrainingJob::ActivityTracedCallback");
    return tid;
}

WorkloadTrainingJob::WorkloadTrainingJob()
    : m_tick(NanoSeconds(1)),
      m_iterations(1),
      m_schedule(PIPELINE_NONE),
      m_microBatches(0),
      m_virtualStages(0)
{
}

WorkloadTrainingJob::~WorkloadTrainingJob() = default;

void
WorkloadTrainingJob::DoDispose()
{
    for (auto& kind : m_state)
    {
        kind.clear();
    }
    Object::DoDispose();
}

std::string
WorkloadTrainingJob::GroupKindName(GroupKind k)
{
    static const char* const names[] = {"TP", "DP", "EP", "DP_EP", "ALL", "PP", "EMB"};
    return names[k];
}

void
WorkloadTrainingJob::Setup(const TrainingWorkloadFile& workload,
                           uint32_t ranks,
                           const std::string& source)
{
    using P = TrainingWorkloadFile::Parallelism;
    NS_ABORT_MSG_UNLESS(m_ranks == 0, "WorkloadTrainingJob: Setup called twice");
    NS_ABORT_MSG_UNLESS(ranks >= 1, "WorkloadTrainingJob: no ranks");
    const P p = workload.parallelism;
    NS_ABORT_MSG_IF(
        p == P::HYBRID_DLRM || p == P::HYBRID_DLRM_ENHANCED || p == P::HYBRID_DATA_MODEL ||
            p == P::HYBRID_MODEL_DATA || p == P::HYBRID_CUSTOMIZED,
        "WorkloadTrainingJob: " << source << ": the " << TrainingWorkloadFile::ParallelismName(p)
                                << " training loop is not run by this model; it "
                                   "runs DATA, HYBRID_TRANSFORMER, "
                                   "HYBRID_TRANSFORMER_FWD_IN_BCKWD, MODEL, MICRO "
                                   "and DISTRIBUTED_INFERENCE");
    m_workload = workload;
    m_source = source;
    m_ranks = ranks;
    const bool transformer = p == P::HYBRID_TRANSFORMER || p == P::HYBRID_TRANSFORMER_FWD_IN_BCKWD;
    const uint32_t tp = !transformer || workload.tp == 0 ? (transformer ? ranks : 1) : workload.tp;
    const uint32_t pp = workload.pp;
    NS_ABORT_MSG_UNLESS(uint64_t(tp) * pp <= ranks && ranks % (tp * pp) == 0,
                        "WorkloadTrainingJob: "
                            << source << ": model_parallel_NPU_group " << tp << " x pp " << pp
                            << " does not divide the " << ranks << " GPUs; run on a multiple of "
                            << tp * pp << " GPUs or change the file's first line");
    const uint32_t dp = ranks / (tp * pp);
    const uint32_t ep = workload.ep;
    NS_ABORT_MSG_UNLESS(dp % ep == 0,
                        "WorkloadTrainingJob: "
                            << source << ": ep " << ep << " does not divide the data-parallel size "
                            << dp << " (" << ranks << " GPUs / (tp " << tp << " x pp " << pp
                            << ")); run on GPUs that "
                               "make it a multiple of ep");
    if (workload.allGpus != 0 && workload.allGpus != ranks)
    {
        std::clog << "WorkloadTrainingJob: " << source << " was written for all_gpus "
                  << workload.allGpus << " and runs on " << ranks << " GPUs (groups are built for "
                  << ranks << ", as SimAI does)" << std::endl;
    }
    // Groups, as SimAI builds them.
    auto& tpg = m_groups[TP];
    for (uint32_t i = 0; i < ranks / tp; ++i)
    {
        tpg.emplace_back();
        for (uint32_t j = 0; j < tp; ++j)
        {
            tpg.back().push_back(i * tp + j);
        }
    }
    auto& dpg = m_groups[DP];
    for (uint32_t i = 0; i < tp * pp; ++i)
    {
        dpg.emplace_back();
        for (uint32_t j = 0; j < dp; ++j)
        {
            dpg.back().push_back(i + j * tp * pp);
        }
    }
    for (const auto& d : dpg)
    {
        for (uint32_t b = 0; b < dp / ep; ++b)
        {
            m_groups[EP].emplace_back(d.begin() + b * ep, d.begin() + (b + 1) * ep);
        }
        for (uint32_t e = 0; e < ep; ++e)
        {
            m_groups[DP_EP].emplace_back();
            for (uint32_t m = 0; m < dp / ep; ++m)
            {
                m_groups[DP_EP].back().push_back(d[e + m * ep]);
            }
        }
    }
    m_groups[ALL].emplace_back();
    for (uint32_t r = 0; r < ranks; ++r)
    {
        m_groups[ALL].back().push_back(r);
    }
    // Pipelines: stage (r / tp) mod pp of pipeline (r / (tp pp)) tp + r mod tp; a PP group
    // per pair of neighbouring stages.
    m_stageOf.assign(ranks, 0);
    m_pipelineOf.assign(ranks, 0);
    if (m_schedule != PIPELINE_NONE)
    {
        NS_ABORT_MSG_UNLESS(transformer,
                            "WorkloadTrainingJob: "
                                << source << ": PipelineSchedule runs the transformer loops "
                                << "(HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD), not "
                                << TrainingWorkloadFile::ParallelismName(p)
                                << "; set PipelineSchedule to None");
        NS_ABORT_MSG_UNLESS(workload.layers.size() >= pp,
                            "WorkloadTrainingJob: " << source << ": " << workload.layers.size()
                                                    << " layers cannot be split into pp " << pp
                                                    << " pipeline stages; lower pp in the file");
        m_stages = pp;
        m_vpp = m_virtualStages > 0 ? m_virtualStages : std::max<uint32_t>(1, workload.vpp);
        NS_ABORT_MSG_IF(m_vpp > 1 && pp < 2,
                        "WorkloadTrainingJob: " << source << ": " << m_vpp
                                                << " virtual stages with pp " << pp
                                                << ": interleaving needs at least 2 stages; set "
                                                   "VirtualStages (or the file's vpp) to 1");
        NS_ABORT_MSG_IF(m_vpp > 1 && m_schedule != PIPELINE_1F1B,
                        "WorkloadTrainingJob: " << source << ": " << m_vpp
                                                << " virtual stages need PipelineSchedule "
                                                   "1F1B (the interleaved schedule); set "
                                                   "VirtualStages to 1 for GPipe");
        NS_ABORT_MSG_UNLESS(workload.layers.size() >= pp * m_vpp,
                            "WorkloadTrainingJob: "
                                << source << ": " << workload.layers.size()
                                << " layers cannot be cut into pp x vpp = " << pp * m_vpp
                                << " model chunks; lower vpp (VirtualStages) or pp");
        // Model chunks: chunk c is on stage c mod pp (one chunk per stage without vpp).
        const uint32_t chunks = pp * m_vpp;
        const auto& layers = workload.layers;
        const uint32_t n = layers.size();
        m_stageFirst.assign(chunks + 1, n);
        const bool given = std::all_of(layers.begin(), layers.end(), [](const auto& l) {
            return l.stage != UINT32_MAX;
        });
        for (uint32_t st = 0; st < chunks; ++st)
        {
            m_stageFirst[st] = st * (n / chunks) + std::min(st, n % chunks);
        }
        if (given)
        {
            for (uint32_t l = 0; l < n; ++l)
            {
                NS_ABORT_MSG_UNLESS(
                    layers[l].stage < chunks &&
                        (l == 0 ? layers[l].stage == 0 : layers[l].stage >= layers[l - 1].stage),
                    "WorkloadTrainingJob: " << source << ": layer " << l << " has stage "
                                            << layers[l].stage
                                            << "; stages must start at 0, not "
                                               "decrease and stay below pp x vpp "
                                            << chunks);
            }
            NS_ABORT_MSG_UNLESS(layers.back().stage + 1 == chunks,
                                "WorkloadTrainingJob: "
                                    << source << ": the layers' stages end at "
                                    << layers.back().stage << " but pp x vpp is " << chunks
                                    << " model chunks (0.." << chunks - 1
                                    << "); build the workload with the same vpp "
                                       "(LlmWorkloadBuilder VirtualStages) as the job's "
                                       "VirtualStages");
            for (uint32_t st = chunks; st-- > 0;)
            {
                m_stageFirst[st] = m_stageFirst[st + 1];
                for (uint32_t l = 0; l < n; ++l)
                {
                    if (layers[l].stage == st)
                    {
                        m_stageFirst[st] = l;
                        break;
                    }
                }
            }
            for (uint32_t st = 0; st < chunks; ++st)
            {
                NS_ABORT_MSG_UNLESS(m_stageFirst[st] < m_stageFirst[st + 1],
                                    "WorkloadTrainingJob: " << source << ": no layer has stage "
                                                            << st << " of the " << chunks
                                                            << " model chunks (pp x vpp); "
                                                               "give every chunk a layer");
            }
        }
        m_mb = m_microBatches > 0 ? m_microBatches : workload.ga;
        NS_ABORT_MSG_UNLESS(m_mb >= 1,
                            "WorkloadTrainingJob: " << source
                                                    << ": ga is 0 and MicroBatches is 0; set "
                                                       "MicroBatches to the micro-batches per "
                                                       "iteration");
        NS_ABORT_MSG_IF(m_vpp > 1 && m_mb % pp != 0,
                        "WorkloadTrainingJob: " << source << ": " << m_mb << " micro-batches with "
                                                << m_vpp
                                                << " virtual stages: the interleaved schedule "
                                                   "needs a multiple of pp "
                                                << pp << " (MicroBatches or the file's ga)");
        for (uint32_t r = 0; r < ranks; ++r)
        {
            m_stageOf[r] = (r / tp) % pp;
            m_pipelineOf[r] = (r / (tp * pp)) * tp + r % tp;
        }
        // Pairs of neighbouring stages; with virtual stages also the last and the first
        // (the last stage's chunk j hands over to the first stage's chunk j + 1).
        for (uint32_t pi = 0; pi < ranks / pp; ++pi)
        {
            const uint32_t base = (pi / tp) * tp * pp + pi % tp;
            for (uint32_t st = 0; st + 1 < pp; ++st)
            {
                m_groups[PP].push_back({base + st * tp, base + (st + 1) * tp});
            }
            if (m_vpp > 1)
            {
                m_groups[PP].push_back({base + (pp - 1) * tp, base});
            }
            if (pp > 1)
            {
                m_groups[EMB].push_back({base, base + (pp - 1) * tp});
            }
        }
        m_uses[PP] = pp > 1 && workload.ppComm > 0;
    }
    for (uint32_t k = 0; k < N_GROUP_KINDS; ++k)
    {
        m_groupOf[k].assign(ranks, 0);
        m_state[k].resize(m_groups[k].size());
        if (k == PP)
        {
            continue; // a rank is in two of them: ArriveTransfer finds the pair
        }
        for (uint32_t g = 0; g < m_groups[k].size(); ++g)
        {
            for (uint32_t r : m_groups[k][g])
            {
                m_groupOf[k][r] = g;
            }
        }
    }
    BuildSteps();
}

WorkloadTrainingJob::GroupKind
WorkloadTrainingJob::TransformerGroup(TrainingWorkloadFile::Pass p, TrainingWorkloadFile::Group g)
{
    switch (g)
    {
    case TrainingWorkloadFile::Group::EP:
        return EP;
    case TrainingWorkloadFile::Group::DP_EP:
        return DP_EP;
    case TrainingWorkloadFile::Group::DP:
        return DP;
    case TrainingWorkloadFile::Group::EMB:
        return EMB;
    default:
        return p == TrainingWorkloadFile::WEIGHT_GRAD ? DP : TP;
    }
}

uint32_t
WorkloadTrainingJob::AddCollective(const TrainingWorkloadFile::Layer& layer,
                                   TrainingWorkloadFile::Pass pass,
                                   GroupKind group,
                                   bool blocking)
{
    const TrainingWorkloadFile::PassSpec& ps = layer.pass[pass];
    // Nothing to do among one rank (SimAI drops a collective whose group is one GPU).
    // (Without pipeline stages there are no EMB groups: first and last stage are one.)
    if (ps.collective == TrainingWorkloadFile::Collective::NONE || ps.bytes == 0 ||
        m_groups[group].empty() || m_groups[group].front().size() < 2)
    {
        return UINT32_MAX;
    }
    Step s;
    s.kind = Step::COLLECTIVE;
    s.group = group;
    s.collective = ps.collective;
    s.bytes = ps.bytes;
    s.blocking = blocking;
    s.updateDelay = layer.updateDelay;
    m_steps.push_back(s);
    m_uses[group] = true;
    return m_steps.size() - 1;
}

void
WorkloadTrainingJob::AddCompute(uint64_t ticks)
{
    if (ticks > 0)
    {
        Step s;
        s.kind = Step::COMPUTE;
        s.ticks = ticks;
        m_steps.push_back(s);
    }
}

void
WorkloadTrainingJob::AddWait(uint32_t step, bool previous)
{
    Step s;
    s.kind = Step::WAIT;
    s.waitFor = step;
    s.previous = previous;
    m_steps.push_back(s);
}

void
WorkloadTrainingJob::AddTransfer(bool down, bool send)
{
    Step s;
    s.kind = Step::COLLECTIVE;
    s.group = PP;
    s.down = down;
    s.blocking = !send;
    s.bytes = m_workload.ppComm;
    m_steps.push_back(s);
}

void
WorkloadTrainingJob::AddRecompute(uint32_t l, uint32_t first)
{
    using W = TrainingWorkloadFile;
    const auto& init = m_workload.initiates;
    if (m_workload.parallelism != W::Parallelism::HYBRID_TRANSFORMER_FWD_IN_BCKWD ||
        std::find(init.begin(), init.end(), l) == init.end())
    {
        return;
    }
    // Recompute the forward passes from the nearest checkpoint before it.
    int64_t from = -1;
    for (uint32_t c : m_workload.checkpoints)
    {
        if (c < l && int64_t(c) > from)
        {
            from = c;
        }
    }
    for (int64_t j = std::max<int64_t>(from, first); from >= 0 && j < int64_t(l); ++j)
    {
        const W::Layer& layer = m_workload.layers[j];
        AddCompute(layer.pass[W::FORWARD].compute);
        AddCollective(layer,
                      W::FORWARD,
                      TransformerGroup(W::FORWARD, layer.pass[W::FORWARD].group),
                      true);
    }
}

void
WorkloadTrainingJob::BuildSteps()
{
    using P = TrainingWorkloadFile::Parallelism;
    using W = TrainingWorkloadFile;
    const P p = m_workload.parallelism;
    const auto& layers = m_workload.layers;
    const uint32_t n = layers.size();
    const bool transformer = p == P::HYBRID_TRANSFORMER || p == P::HYBRID_TRANSFORMER_FWD_IN_BCKWD;
    if (m_schedule != PIPELINE_NONE)
    {
        for (uint32_t st = 0; st < m_stages; ++st)
        {
            BuildPipelineStage(st);
        }
        return;
    }
    auto forwardGroup = [&](const W::Layer& l) {
        return transformer ? TransformerGroup(W::FORWARD, l.pass[W::FORWARD].group) : ALL;
    };
    if (p == P::MICRO)
    {
        AddCollective(layers[0], W::WEIGHT_GRAD, ALL, true);
        m_stageSteps.push_back(std::move(m_steps));
        return;
    }
    // Forward. Each layer first waits for its weight-gradient collective of the previous
    // iteration (patched in below, once the backward steps exist).
    std::vector<std::vector<uint32_t>> waitSteps(n);
    for (uint32_t l = 0; l < n; ++l)
    {
        if (p == P::DATA || transformer)
        {
            waitSteps[l].push_back(m_steps.size());
            AddWait(UINT32_MAX, true);
        }
        AddCompute(layers[l].pass[W::FORWARD].compute);
        if (p != P::DATA)
        {
            AddCollective(layers[l], W::FORWARD, forwardGroup(layers[l]), true);
        }
    }
    std::vector<uint32_t> wgStep(n, UINT32_MAX);
    if (p != P::DISTRIBUTED_INFERENCE)
    {
        for (uint32_t l = n; l-- > 0;)
        {
            const W::Layer& layer = layers[l];
            if (p == P::DATA)
            {
                AddCompute(layer.pass[W::WEIGHT_GRAD].compute);
                wgStep[l] = AddCollective(layer, W::WEIGHT_GRAD, ALL, false);
                if (l > 0)
                {
                    AddCompute(layer.pass[W::INPUT_GRAD].compute);
                }
                continue;
            }
            if (p == P::MODEL)
            {
                AddCompute(layer.pass[W::INPUT_GRAD].compute);
                const uint32_t ig =
                    l > 0 ? AddCollective(layer, W::INPUT_GRAD, ALL, false) : UINT32_MAX;
                AddCompute(layer.pass[W::WEIGHT_GRAD].compute);
                if (ig != UINT32_MAX)
                {
                    AddWait(ig, false);
                }
                continue;
            }
            // transformer
            AddRecompute(l, 0);
            AddCompute(layer.pass[W::INPUT_GRAD].compute);
            AddCollective(layer,
                          W::INPUT_GRAD,
                          TransformerGroup(W::INPUT_GRAD, layer.pass[W::INPUT_GRAD].group),
                          true);
            AddCompute(layer.pass[W::WEIGHT_GRAD].compute);
            wgStep[l] =
                AddCollective(layer,
                              W::WEIGHT_GRAD,
                              TransformerGroup(W::WEIGHT_GRAD, layer.pass[W::WEIGHT_GRAD].group),
                              false);
        }
    }
    PatchWaits(waitSteps, wgStep);
    NS_LOG_INFO(m_source << ": " << m_steps.size() << " steps per iteration");
    m_stageSteps.push_back(std::move(m_steps));
}

void
WorkloadTrainingJob::BuildPipelineStage(uint32_t stage)
{
    using W = TrainingWorkloadFile;
    const auto& layers = m_workload.layers;
    const uint32_t n = layers.size();
    const uint32_t P = m_stages;
    const uint32_t v = m_vpp;
    m_steps.clear();
    std::vector<std::vector<uint32_t>> waitSteps(n);
    std::vector<uint32_t> wgStep(n, UINT32_MAX);
    // Model chunk j of this stage is chunk stage + j P of the pipeline: its layers, and
    // whether it is the pipeline's first or last.
    auto lo = [&](uint32_t j) { return m_stageFirst[stage + j * P]; };
    auto hi = [&](uint32_t j) { return m_stageFirst[stage + j * P + 1]; };
    auto isFirst = [&](uint32_t j) { return stage == 0 && j == 0; };
    auto isLast = [&](uint32_t j) { return stage + 1 == P && j + 1 == v; };
    auto forward = [&](uint32_t j, uint32_t m) {
        if (!isFirst(j))
        {
            AddTransfer(true, false);
        }
        for (uint32_t l = lo(j); l < hi(j); ++l)
        {
            if (m == 0)
            {
                waitSteps[l].push_back(m_steps.size());
                AddWait(UINT32_MAX, true);
            }
            const W::Layer& layer = layers[l];
            AddCompute(layer.pass[W::FORWARD].compute);
            AddCollective(layer,
                          W::FORWARD,
                          TransformerGroup(W::FORWARD, layer.pass[W::FORWARD].group),
                          true);
        }
        if (!isLast(j))
        {
            AddTransfer(true, true);
        }
    };
    auto backward = [&](uint32_t j, uint32_t m) {
        if (!isLast(j))
        {
            AddTransfer(false, false);
        }
        for (uint32_t l = hi(j); l-- > lo(j);)
        {
            const W::Layer& layer = layers[l];
            AddRecompute(l, lo(j));
            AddCompute(layer.pass[W::INPUT_GRAD].compute);
            AddCollective(layer,
                          W::INPUT_GRAD,
                          TransformerGroup(W::INPUT_GRAD, layer.pass[W::INPUT_GRAD].group),
                          true);
            AddCompute(layer.pass[W::WEIGHT_GRAD].compute);
            if (m + 1 == m_mb)
            {
                wgStep[l] = AddCollective(
                    layer,
                    W::WEIGHT_GRAD,
                    TransformerGroup(W::WEIGHT_GRAD, layer.pass[W::WEIGHT_GRAD].group),
                    false);
            }
        }
        if (!isFirst(j))
        {
            AddTransfer(false, true);
        }
    };
    if (m_schedule == PIPELINE_GPIPE)
    {
        for (uint32_t m = 0; m < m_mb; ++m)
        {
            forward(0, m);
        }
        for (uint32_t m = 0; m < m_mb; ++m)
        {
            backward(0, m);
        }
    }
    else if (v == 1)
    {
        const uint32_t warm = std::min(P - stage - 1, m_mb);
        for (uint32_t m = 0; m < warm; ++m)
        {
            forward(0, m);
        }
        for (uint32_t i = 0; i + warm < m_mb; ++i)
        {
            forward(0, warm + i);
            backward(0, i);
        }
        for (uint32_t i = m_mb - warm; i < m_mb; ++i)
        {
            backward(0, i);
        }
    }
    else
    {
        // Megatron-LM's interleaved 1F1B: the k-th forward of a stage is micro-batch
        // (k / (P v)) P + k mod P of chunk (k / P) mod v (backward: of chunk
        // v - 1 - (k / P) mod v), after 2 (P - stage - 1) + (v - 1) P warm-up forwards.
        const uint32_t total = m_mb * v;
        const uint32_t warm = std::min(2 * (P - stage - 1) + (v - 1) * P, total);
        auto mb = [P, v](uint32_t k) { return (k / (P * v)) * P + k % P; };
        auto fwd = [&](uint32_t k) { forward((k / P) % v, mb(k)); };
        auto bwd = [&](uint32_t k) { backward(v - 1 - (k / P) % v, mb(k)); };
        for (uint32_t k = 0; k < warm; ++k)
        {
            fwd(k);
        }
        for (uint32_t i = 0; i + warm < total; ++i)
        {
            fwd(warm + i);
            bwd(i);
        }
        for (uint32_t i = total - warm; i < total; ++i)
        {
            bwd(i);
        }
    }
    PatchWaits(waitSteps, wgStep);
    NS_LOG_INFO(m_source << ": stage " << stage << " (" << v << " model chunks, layers from "
                         << lo(0) << "): " << m_steps.size() << " steps per iteration");
    m_stageSteps.push_back(std::move(m_steps));
}

void
WorkloadTrainingJob::PatchWaits(const std::vector<std::vector<uint32_t>>& waitSteps,
                                const std::vector<uint32_t>& wgStep)
{
    // Each layer's forward wait points at its weight-gradient collective; layers without
    // one drop their waits, and the steps after them are renumbered.
    std::vector<uint32_t> layerOf(m_steps.size(), UINT32_MAX);
    for (uint32_t l = 0; l < waitSteps.size(); ++l)
    {
        for (uint32_t i : waitSteps[l])
        {
            layerOf[i] = l;
        }
    }
    std::vector<uint32_t> renumber(m_steps.size(), UINT32_MAX);
    std::vector<Step> kept;
    for (uint32_t i = 0; i < m_steps.size(); ++i)
    {
        Step s = m_steps[i];
        if (s.kind == Step::WAIT && s.waitFor == UINT32_MAX)
        {
            const uint32_t l = layerOf[i];
            if (wgStep[l] == UINT32_MAX)
            {
                continue;
            }
            s.waitFor = wgStep[l];
        }
        renumber[i] = kept.size();
        kept.push_back(s);
    }
    for (Step& s : kept)
    {
        if (s.kind == Step::WAIT)
        {
            s.waitFor = renumber[s.waitFor];
        }
    }
    m_steps = std::move(kept);
}

const std::vector<WorkloadTrainingJob::Step>&
WorkloadTrainingJob::StepsOf(uint32_t r) const
{
    return m_stageSteps[m_stageOf[r]];
}

bool
WorkloadTrainingJob::Uses(GroupKind kind) const
{
    return m_uses[kind];
}

const std::vector<std::vector<uint32_t>>&
WorkloadTrainingJob::GetGroups(GroupKind kind) const
{
    return m_groups[kind];
}

void
WorkloadTrainingJob::SetCommunicator(GroupKind kind,
                                     uint32_t index,
                                     Ptr<CollectiveCommunicator> comm)
{
    NS_ABORT_MSG_UNLESS(index < m_state[kind].size(),
                        "WorkloadTrainingJob: no " << GroupKindName(kind) << " group " << index);
    NS_ABORT_MSG_UNLESS(comm && comm->GetNRanks() == m_groups[kind][index].size(),
                        "WorkloadTrainingJob: the communicator of "
                            << GroupKindName(kind) << " group " << index << " has "
                            << (comm ? comm->GetNRanks() : 0) << " ranks, the group "
                            << m_groups[kind][index].size());
    m_state[kind][index].comm = comm;
}

Ptr<CollectiveCommunicator>
WorkloadTrainingJob::GetCommunicator(GroupKind kind, uint32_t index) const
{
    NS_ABORT_MSG_UNLESS(index < m_state[kind].size(),
                        "WorkloadTrainingJob: no " << GroupKindName(kind) << " group " << index);
    return m_state[kind][index].comm;
}

void
WorkloadTrainingJob::Start()
{
    NS_ABORT_MSG_UNLESS(m_ranks > 0, "WorkloadTrainingJob: Setup first");
    for (uint32_t k = 0; k < N_GROUP_KINDS; ++k)
    {
        for (uint32_t g = 0; m_uses[k] && g < m_state[k].size(); ++g)
        {
            NS_ABORT_MSG_UNLESS(m_state[k][g].comm,
                                "WorkloadTrainingJob: " << GroupKindName(GroupKind(k)) << " group "
                                                        << g
                                                        << " has no communicator "
                                                           "(WorkloadTrainingHelper sets them)");
        }
    }
    m_rank.assign(m_ranks, RankState());
    for (uint32_t r = 0; r < m_ranks; ++r)
    {
        RankState& rs = m_rank[r];
        rs.doneIteration.assign(StepsOf(r).size(), -1);
        rs.ended.assign(m_iterations, false);
        rs.recs.assign(m_iterations, WorkloadIterationRecord());
        rs.asyncOpen.assign(m_iterations, 0);
        rs.stepsDone.assign(m_iterations, false);
        rs.stepsDoneAt.assign(m_iterations, Time(0));
        rs.lastAsync.assign(m_iterations, ALL);
        for (uint32_t i = 0; i < m_iterations; ++i)
        {
            rs.recs[i].rank = r;
            rs.recs[i].iteration = i;
        }
        rs.recs[0].start = Simulator::Now();
    }
    for (uint32_t r = 0; r < m_ranks; ++r)
    {
        Advance(r);
    }
}

void
WorkloadTrainingJob::Advance(uint32_t r)
{
    RankState& rs = m_rank[r];
    const std::vector<Step>& steps = StepsOf(r);
    while (rs.iteration < m_iterations)
    {
        if (rs.step == steps.size())
        {
            const uint32_t it = rs.iteration;
            rs.stepsDone[it] = true;
            rs.stepsDoneAt[it] = Simulator::Now();
            rs.recs[it].end = std::max(rs.recs[it].end, Simulator::Now());
            ++rs.iteration;
            rs.step = 0;
            MaybeEndIteration(r, it);
            continue;
        }
        const Step& s = steps[rs.step];
        if (s.kind == Step::COMPUTE)
        {
            ++rs.step;
            const Time t = m_tick * static_cast<int64_t>(s.ticks);
            rs.recs[rs.iteration].compute += t;
            Report(r,
                   rs.iteration,
                   WorkloadActivity::COMPUTE,
                   Simulator::Now(),
                   Simulator::Now() + t);
            Simulator::Schedule(t, &WorkloadTrainingJob::Advance, this, r);
            return;
        }
        if (s.kind == Step::COLLECTIVE)
        {
            const uint32_t step = rs.step++;
            if (!Arrive(r, step))
            {
                rs.blocked = true;
                rs.since = Simulator::Now();
                rs.blockedOn = s.group;
                rs.blockedIteration = rs.iteration;
                return;
            }
            continue;
        }
        // WAIT
        const int64_t need = int64_t(rs.iteration) - (s.previous ? 1 : 0);
        if (need < 0 || rs.doneIteration[s.waitFor] >= need)
        {
            ++rs.step;
            continue;
        }
        rs.blocked = true;
        rs.since = Simulator::Now();
        rs.blockedOn = steps[s.waitFor].group;
        // Waiting for the previous iteration's collective: that iteration's end, whose time
        // after its last step is counted there (MaybeEndIteration), not here.
        rs.blockedIteration = UINT32_MAX;
        return;
    }
}

bool
WorkloadTrainingJob::Arrive(uint32_t r, uint32_t step)
{
    RankState& rs = m_rank[r];
    const Step& s = StepsOf(r)[step];
    if (s.group == PP)
    {
        return ArriveTransfer(r, step);
    }
    const uint32_t g = m_groupOf[s.group][r];
    const uint64_t number = rs.count[s.group]++;
    GroupState& gs = m_state[s.group][g];
    Pending& p = gs.open[number];
    ++p.arrived;
    p.step = step;
    p.iteration = rs.iteration;
    p.updateDelay = s.updateDelay;
    if (s.blocking)
    {
        p.waiting.push_back(r);
    }
    else
    {
        p.async.push_back(r);
        ++rs.asyncOpen[rs.iteration];
    }
    const uint32_t size = m_groups[s.group][g].size();
    if (p.arrived == size)
    {
        CollectiveOpSpec spec;
        spec.type = CollectiveDataType::INT8; // sizes are bytes; reductions take no time
        switch (s.collective)
        {
        case TrainingWorkloadFile::Collective::ALLREDUCE:
            spec.kind = CollectiveKind::ALLREDUCE;
            spec.count = s.bytes;
            break;
        case TrainingWorkloadFile::Collective::ALLGATHER:
            spec.kind = CollectiveKind::ALLGATHER;
            spec.count = std::max<uint64_t>(1, s.bytes / size);
            break;
        case TrainingWorkloadFile::Collective::REDUCESCATTER:
            spec.kind = CollectiveKind::REDUCE_SCATTER;
            spec.count = std::max<uint64_t>(1, s.bytes / size);
            break;
        default:
            spec.kind = CollectiveKind::ALLTOALL;
            spec.count = std::max<uint64_t>(1, s.bytes / size);
            break;
        }
        ++m_collectives;
        const GroupKind kind = s.group;
        gs.comm->Start(
            spec,
            nullptr,
            CollectiveCommunicator::DoneCallback(
                [this, kind, g, number](uint32_t, Time) { CollectiveDone(kind, g, number); }));
    }
    return !s.blocking;
}

bool
WorkloadTrainingJob::ArriveTransfer(uint32_t r, uint32_t step)
{
    RankState& rs = m_rank[r];
    const Step& s = StepsOf(r)[step];
    const bool send = !s.blocking;
    const uint32_t stage = m_stageOf[r];
    // The pair of stages: (stage, stage + 1) for a send down or a receive from below (with
    // virtual stages, (last, first) is a pair too).
    const uint32_t pairs = m_vpp > 1 ? m_stages : m_stages - 1;
    const uint32_t low = s.down == send ? stage : (stage + m_stages - 1) % m_stages;
    const uint32_t g = m_pipelineOf[r] * pairs + low;
    // The n-th transfer in a direction between two stages is the sender's n-th send and the
    // receiver's n-th receive in that direction.
    const uint64_t number = rs.p2p[(s.down ? 2 : 0) + (send ? 1 : 0)]++ * 2 + (s.down ? 1 : 0);
    GroupState& gs = m_state[PP][g];
    if (!send)
    {
        if (gs.arrived.erase(number) > 0)
        {
            return true;
        }
        gs.open[number].waiting.push_back(r);
        return false;
    }
    Pending& p = gs.open[number];
    p.started = true;
    p.step = step;
    p.iteration = rs.iteration;
    p.async.push_back(r);
    ++rs.asyncOpen[rs.iteration];
    // A receiver waiting so far waited for its neighbour (bubble); from now on for the data.
    for (uint32_t w : p.waiting)
    {
        RankState& ws = m_rank[w];
        ws.recs[ws.blockedIteration].bubble += Simulator::Now() - ws.since;
        Report(w, ws.blockedIteration, WorkloadActivity::BUBBLE, ws.since, Simulator::Now());
        ws.since = Simulator::Now();
    }
    ++m_collectives;
    if (s.bytes == 0)
    {
        CollectiveDone(PP, g, number);
        return true;
    }
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::BROADCAST;
    spec.type = CollectiveDataType::INT8;
    spec.count = s.bytes;
    spec.root = s.down ? 0 : 1;
    gs.comm->Start(spec,
                   nullptr,
                   CollectiveCommunicator::DoneCallback(
                       [this, g, number](uint32_t, Time) { CollectiveDone(PP, g, number); }));
    return true;
}

void
WorkloadTrainingJob::CollectiveDone(GroupKind kind, uint32_t group, uint64_t number)
{
    GroupState& gs = m_state[kind][group];
    auto it = gs.open.find(number);
    NS_ASSERT(it != gs.open.end());
    const Pending p = it->second;
    gs.open.erase(it);
    if (kind == PP && p.waiting.empty())
    {
        gs.arrived.insert(number); // the receiver has not come yet
    }
    const Time delay = m_tick * static_cast<int64_t>(p.updateDelay);
    for (uint32_t r : p.waiting)
    {
        Simulator::Schedule(delay, [this, r]() {
            RankState& rs = m_rank[r];
            rs.recs[rs.blockedIteration].exposed[rs.blockedOn] += Simulator::Now() - rs.since;
            Report(r, rs.blockedIteration, rs.blockedOn, rs.since, Simulator::Now());
            rs.blocked = false;
            Advance(r);
        });
    }
    for (uint32_t r : p.async)
    {
        const uint32_t step = p.step;
        const uint32_t iteration = p.iteration;
        Simulator::Schedule(delay, [this, r, step, iteration]() {
            RankState& rs = m_rank[r];
            rs.doneIteration[step] = std::max<int64_t>(rs.doneIteration[step], iteration);
            --rs.asyncOpen[iteration];
            const std::vector<Step>& steps = StepsOf(r);
            rs.lastAsync[iteration] = steps[step].group;
            rs.recs[iteration].end = std::max(rs.recs[iteration].end, Simulator::Now());
            if (rs.blocked && rs.iteration < m_iterations && rs.step < steps.size() &&
                steps[rs.step].kind == Step::WAIT && steps[rs.step].waitFor == step)
            {
                const Step& w = steps[rs.step];
                const int64_t need = int64_t(rs.iteration) - (w.previous ? 1 : 0);
                if (rs.doneIteration[step] >= need)
                {
                    if (rs.blockedIteration != UINT32_MAX)
                    {
                        rs.recs[rs.blockedIteration].exposed[rs.blockedOn] +=
                            Simulator::Now() - rs.since;
                        Report(r, rs.blockedIteration, rs.blockedOn, rs.since, Simulator::Now());
                    }
                    rs.blocked = false;
                    ++rs.step;
                    Advance(r);
                }
            }
            MaybeEndIteration(r, iteration);
        });
    }
}

void
WorkloadTrainingJob::MaybeEndIteration(uint32_t r, uint32_t iteration)
{
    RankState& rs = m_rank[r];
    // Iterations end in order, each once its steps are taken and its collectives are done;
    // the next one is counted from there (its first steps may have started earlier, where
    // they did not wait for this one's collectives).
    while (iteration < m_iterations && rs.stepsDone[iteration] && rs.asyncOpen[iteration] == 0 &&
           !rs.ended[iteration] && (iteration == 0 || rs.ended[iteration - 1]))
    {
        rs.ended[iteration] = true;
        WorkloadIterationRecord& rec = rs.recs[iteration];
        rec.end = std::max(rec.end, Simulator::Now());
        // After its last step the iteration waited for its last asynchronous collectives.
        rec.exposed[rs.lastAsync[iteration]] += rec.end - rs.stepsDoneAt[iteration];
        Report(r, iteration, rs.lastAsync[iteration], rs.stepsDoneAt[iteration], rec.end);
        m_records.push_back(rec);
        m_iterationDone(rec);
        if (iteration + 1 == m_iterations)
        {
            ++m_ranksDone;
            return;
        }
        rs.recs[iteration + 1].start = rec.end;
        ++iteration;
    }
}

void
WorkloadTrainingJob::Report(uint32_t r, uint32_t iteration, uint8_t what, Time start, Time end)
{
    if (end > start && !m_activity.IsEmpty())
    {
        WorkloadActivity a;
        a.rank = r;
        a.iteration = iteration;
        a.what = what;
        a.start = start;
        a.end = end;
        m_activity(a);
    }
}

bool
WorkloadTrainingJob::IsDone() const
{
    return m_ranks > 0 && m_ranksDone == m_ranks;
}

const std::vector<WorkloadIterationRecord>&
WorkloadTrainingJob::GetRecords() const
{
    return m_records;
}

WorkloadIterationRecord
WorkloadTrainingJob::GetSlowest(uint32_t iteration) const
{
    WorkloadIterationRecord best;
    bool found = false;
    for (const auto& r : m_records)
    {
        if (r.iteration == iteration && (!found || r.GetDuration() > best.GetDuration()))
        {
            best = r;
            found = true;
        }
    }
    NS_ABORT_MSG_UNLESS(found,
                        "WorkloadTrainingJob::GetSlowest: iteration " << iteration
                                                                      << " has not finished");
    return best;
}

uint32_t
WorkloadTrainingJob::GetNRanks() const
{
    return m_ranks;
}

uint64_t
WorkloadTrainingJob::GetCollectives() const
{
    return m_collectives;
}

} // namespace ns3

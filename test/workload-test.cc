/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Workload files of ASTRA-sim 1.0 and SimAI: the reader (TrainingWorkloadFile) and the
 * job that runs them (WorkloadTrainingJob, WorkloadTrainingHelper).
 */

#include "ns3/collective-helper.h"
#include "ns3/core-module.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/llm-workload-builder.h"
#include "ns3/resnet-workload-builder.h"
#include "ns3/sharp-helper.h"
#include "ns3/training-workload-file.h"
#include "ns3/workload-training-helper.h"
#include "ns3/workload-training-job.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace ns3;
using W = TrainingWorkloadFile;

namespace
{

class WorkloadTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
        IbHelper::ResetLidAllocation();
    }
};

/**
 * @param text a workload
 * @param [out] error the reader's message
 * @return whether it was read
 */
bool
ParseText(const std::string& text, W& w, std::string& error)
{
    std::istringstream in(text);
    return w.Parse(in, "test.txt", &error);
}

} // namespace

// A SimAI header (keys in any order, the colon optional, pp_comm written as a float) and
// three tab-separated layers with group-qualified collectives: every field arrives.
TEST_F(WorkloadTest, TheReaderPassesEveryFieldThrough)
{
    const std::string text =
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 ep: 2 pp: 2 vpp: 3 "
        "ga: 5 all_gpus: 32 checkpoints: 2 0 1 checkpoint_initiates: 1 2 pp_comm 8388608.0\n"
        "3\n"
        "embedding_layer\t-1\t556000\tALLREDUCE\t536870912\t7\tNONE\t0\t8\tNONE\t0\t1\n"
        "mlp_moelayer\t-1\t10\tALLTOALL_EP\t25165824\t11\tALLTOALL_EP\t25165824\t12\tNONE\t0\t"
        "100\n"
        "\n"
        "moe_grad_norm\t3\t1\tNONE\t0\t2\tREDUCESCATTER\t4096\t3\tALLGATHER_DP_EP\t4718592\t"
        "99\n";
    W w;
    std::string error;
    ASSERT_TRUE(ParseText(text, w, error)) << error;
    EXPECT_EQ(w.parallelism, W::Parallelism::HYBRID_TRANSFORMER_FWD_IN_BCKWD);
    EXPECT_EQ(w.tp, 4u);
    EXPECT_EQ(w.ep, 2u);
    EXPECT_EQ(w.pp, 2u);
    EXPECT_EQ(w.vpp, 3u);
    EXPECT_EQ(w.ga, 5u);
    EXPECT_EQ(w.allGpus, 32u);
    EXPECT_EQ(w.ppComm, 8388608u);
    EXPECT_EQ(w.checkpoints, (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(w.initiates, (std::vector<uint32_t>{2}));
    ASSERT_EQ(w.layers.size(), 3u);
    const W::Layer& a = w.layers[0];
    EXPECT_EQ(a.name, "embedding_layer");
    EXPECT_EQ(a.reserved, -1);
    EXPECT_EQ(a.pass[W::FORWARD].compute, 556000u);
    EXPECT_EQ(a.pass[W::FORWARD].collective, W::Collective::ALLREDUCE);
    EXPECT_EQ(a.pass[W::FORWARD].group, W::Group::DEFAULT);
    EXPECT_EQ(a.pass[W::FORWARD].bytes, 536870912u);
    EXPECT_EQ(a.pass[W::INPUT_GRAD].compute, 7u);
    EXPECT_EQ(a.pass[W::INPUT_GRAD].collective, W::Collective::NONE);
    EXPECT_EQ(a.pass[W::WEIGHT_GRAD].compute, 8u);
    EXPECT_EQ(a.updateDelay, 1u);
    EXPECT_EQ(a.line, 3u);
    const W::Layer& b = w.layers[1];
    EXPECT_EQ(b.pass[W::FORWARD].collective, W::Collective::ALLTOALL);
    EXPECT_EQ(b.pass[W::FORWARD].group, W::Group::EP);
    EXPECT_EQ(b.pass[W::INPUT_GRAD].collective, W::Collective::ALLTOALL);
    EXPECT_EQ(b.pass[W::INPUT_GRAD].group, W::Group::EP);
    EXPECT_EQ(b.pass[W::INPUT_GRAD].bytes, 25165824u);
    EXPECT_EQ(b.updateDelay, 100u);
    const W::Layer& c = w.layers[2];
    EXPECT_EQ(c.reserved, 3);
    EXPECT_EQ(c.pass[W::INPUT_GRAD].collective, W::Collective::REDUCESCATTER);
    EXPECT_EQ(c.pass[W::INPUT_GRAD].bytes, 4096u);
    EXPECT_EQ(c.pass[W::WEIGHT_GRAD].collective, W::Collective::ALLGATHER);
    EXPECT_EQ(c.pass[W::WEIGHT_GRAD].group, W::Group::DP_EP);
    EXPECT_EQ(c.pass[W::WEIGHT_GRAD].bytes, 4718592u);
    EXPECT_EQ(c.updateDelay, 99u);
    EXPECT_EQ(c.line, 6u) << "blank lines count in the line numbers";

    // ASTRA-sim 1.0: DATA with no parameters; DLRM with a bare last-bottom-layer number.
    ASSERT_TRUE(ParseText("DATA\n1\nconv1 -1 5 NONE 0 6 NONE 0 7 ALLREDUCE 1024 10\n", w, error))
        << error;
    EXPECT_EQ(w.parallelism, W::Parallelism::DATA);
    EXPECT_EQ(w.tp, 1u);
    EXPECT_EQ(w.layers[0].pass[W::WEIGHT_GRAD].bytes, 1024u);
    ASSERT_TRUE(ParseText("HYBRID_DLRM 4\n1\nl -1 1 ALLTOALL 8 1 NONE 0 1 NONE 0 1\n", w, error))
        << error;
    EXPECT_EQ(w.dlrmLastBottomLayer, 4);
}

// Every malformed file is refused with the file, the line, the field and what to change.
TEST_F(WorkloadTest, MalformedFilesAreRefusedWithFileLineAndField)
{
    const std::string head = "DATA\n2\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 64 1\n";
    const std::pair<std::string, std::string> cases[] = {
        {head + "l1 -1 1 NONE 0 1 NONE 0 1\n",
         "test.txt:4: layer 'l1' has 9 fields, 12 expected: the weight-gradient collective and "
         "what follows are missing"},
        {head + "l1 -1 1 ALLREDUX 0 1 NONE 0 1 NONE 0 1\n",
         "test.txt:4: layer 'l1', field 4 (forward collective): 'ALLREDUX' is not a "
         "collective; use NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER or ALLTOALL"},
        {head + "l1 -1 1 NONE 0 1 NONE 0 1 ALLGATHER -5 1\n",
         "test.txt:4: layer 'l1', field 11 (weight-gradient size): '-5' is negative; give 0 or "
         "more"},
        {head + "l1 -1 -3 NONE 0 1 NONE 0 1 NONE 0 1\n",
         "test.txt:4: layer 'l1', field 3 (forward compute time): '-3' is negative"},
        {head + "l1 -1 1 ALLTOALLV 8 1 NONE 0 1 NONE 0 1\n",
         "(all-to-allv, with sizes per pair, is not modelled)"},
        {head, "test.txt:3: the file ends after 1 of the 2 layers the second line announces"},
        {head + "l1 -1 1 NONE 0 1 NONE 0 1 NONE 0 1\nl2 -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n",
         "test.txt:5: more layers than the 2 the second line announces"},
        {"HYBRID_TRANSFORMERS model_parallel_NPU_group: 8\n",
         "test.txt:1: parallelism 'HYBRID_TRANSFORMERS' is unknown"},
        {"HYBRID_TRANSFORMER tp: 8\n", "test.txt:1: parameter 'tp:' is unknown"},
        {"HYBRID_TRANSFORMER model_parallel_NPU_group:\n",
         "test.txt:1: parameter 'model_parallel_NPU_group:' has no value after it"},
        {"DATA\nmany\n", "test.txt:2: the second line gives the number of layers"},
        {"HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 2 0\n1\n",
         "test.txt:1: 'checkpoints: 2' announces 2 layer numbers, 1 follow"},
        {"", "test.txt:0: empty file"},
    };
    for (const auto& [text, want] : cases)
    {
        W w;
        std::string error;
        EXPECT_FALSE(ParseText(text, w, error)) << text;
        EXPECT_NE(error.find(want), std::string::npos) << "got: " << error << "\nwant: " << want;
    }
}

// SimAI's groups: 32 GPUs, tensor-parallel 4, expert-parallel 4 (DP 8).
TEST_F(WorkloadTest, GroupsAreBuiltAsSimAiBuildsThem)
{
    W w;
    std::string error;
    ASSERT_TRUE(ParseText("HYBRID_TRANSFORMER model_parallel_NPU_group: 4 ep: 4 pp: 1\n1\n"
                          "moe -1 1 ALLTOALL_EP 64 1 NONE 0 1 ALLGATHER_DP_EP 64 1\n",
                          w,
                          error))
        << error;
    Ptr<WorkloadTrainingJob> job = CreateObject<WorkloadTrainingJob>();
    job->Setup(w, 32, "test.txt");
    using J = WorkloadTrainingJob;
    ASSERT_EQ(job->GetGroups(J::TP).size(), 8u);
    EXPECT_EQ(job->GetGroups(J::TP)[1], (std::vector<uint32_t>{4, 5, 6, 7}));
    ASSERT_EQ(job->GetGroups(J::DP).size(), 4u);
    EXPECT_EQ(job->GetGroups(J::DP)[1], (std::vector<uint32_t>{1, 5, 9, 13, 17, 21, 25, 29}));
    EXPECT_EQ(job->GetGroups(J::EP)[0], (std::vector<uint32_t>{0, 4, 8, 12}));
    EXPECT_EQ(job->GetGroups(J::EP)[1], (std::vector<uint32_t>{16, 20, 24, 28}));
    EXPECT_EQ(job->GetGroups(J::DP_EP)[0], (std::vector<uint32_t>{0, 16}));
    EXPECT_EQ(job->GetGroups(J::DP_EP)[1], (std::vector<uint32_t>{4, 20}));
    EXPECT_TRUE(job->Uses(J::EP));
    EXPECT_TRUE(job->Uses(J::DP_EP));
    EXPECT_FALSE(job->Uses(J::TP));
    EXPECT_FALSE(job->Uses(J::DP));

    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(CreateObject<WorkloadTrainingJob>()->Setup(w, 24, "test.txt"),
                 "test.txt: ep 4 does not divide the data-parallel size 6");
    EXPECT_DEATH(CreateObject<WorkloadTrainingJob>()->Setup(w, 30, "test.txt"),
                 "model_parallel_NPU_group 4 x pp 1 does not divide the 30 GPUs");
    W dlrm;
    ASSERT_TRUE(
        ParseText("HYBRID_DLRM 0\n1\nl -1 1 ALLTOALL 8 1 NONE 0 1 NONE 0 1\n", dlrm, error));
    EXPECT_DEATH(CreateObject<WorkloadTrainingJob>()->Setup(dlrm, 4, "d.txt"),
                 "d.txt: the HYBRID_DLRM training loop is not run by this model");
}

// Compute only: the loops take exactly their compute ticks. DATA skips layer 0's input
// gradient; FWD_IN_BCKWD recomputes layers 0..1 before layer 2's input gradient.
TEST_F(WorkloadTest, ComputeTicksAddUpAsTheLoopsWalkThem)
{
    const std::string layers = "3\n"
                               "l0 -1 100 NONE 0 10 NONE 0 1000 NONE 0 1\n"
                               "l1 -1 200 NONE 0 20 NONE 0 2000 NONE 0 1\n"
                               "l2 -1 400 NONE 0 40 NONE 0 4000 NONE 0 1\n";
    const std::pair<std::string, int64_t> cases[] = {
        {"DATA\n", 700 + 7000 + 60},
        {"HYBRID_TRANSFORMER model_parallel_NPU_group: 1\n", 700 + 7000 + 70},
        {"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 checkpoints: 1 0 "
         "checkpoint_initiates: 1 2\n",
         700 + 300 + 7000 + 70},
        {"MODEL\n", 700 + 7000 + 70},
        {"DISTRIBUTED_INFERENCE\n", 700},
    };
    for (const auto& [head, ns] : cases)
    {
        W w;
        std::string error;
        ASSERT_TRUE(ParseText(head + layers, w, error)) << error;
        Ptr<WorkloadTrainingJob> job = CreateObject<WorkloadTrainingJob>();
        job->SetAttribute("TickTime", TimeValue(NanoSeconds(2)));
        job->Setup(w, 1, "test.txt");
        job->Start();
        Simulator::Run();
        ASSERT_TRUE(job->IsDone()) << head;
        const WorkloadIterationRecord r = job->GetSlowest(0);
        EXPECT_EQ(r.GetDuration(), NanoSeconds(2 * ns)) << head;
        EXPECT_EQ(r.compute, NanoSeconds(2 * ns)) << head;
        Simulator::Destroy();
    }
}

// A hybrid-parallel layer on 4 GPUs (tensor-parallel pairs, data-parallel pairs) over an
// InfiniBand fabric: the iteration is the compute, the forward and input-gradient
// collectives in the TP group and the weight-gradient allreduce in the DP group, each
// taking as long as the same collective alone on its group, plus an update delay after
// each; the TP collectives are exposed, and a second iteration waits for nothing more.
TEST_F(WorkloadTest, AHybridLayerTakesItsComputeItsCollectivesAndTheirDelays)
{
    W w;
    std::string error;
    ASSERT_TRUE(ParseText("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1\n1\n"
                          "layer -1 1000 ALLREDUCE 1048576 500 ALLGATHER 262144 2000 ALLREDUCE "
                          "4194304 100\n",
                          w,
                          error))
        << error;
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(4, 4));
    CollectiveHelper ch;
    WorkloadTrainingHelper wh(ch);
    wh.SetJobAttribute("Iterations", UintegerValue(2));
    Ptr<WorkloadTrainingJob> job = wh.InstallIb(w, "test.txt", fabric);
    job->Start();
    Simulator::Run();
    ASSERT_TRUE(job->IsDone());
    EXPECT_EQ(job->GetCollectives(), 2u * (2 + 2 + 2)); // per iteration: 2 groups x 3 passes
    // The same collectives alone, on communicators over the same hosts.
    auto alone = [&](std::vector<uint32_t> hosts, CollectiveKind kind, uint64_t count) {
        Ptr<CollectiveCommunicator> c = ch.InstallIb(fabric, hosts);
        CollectiveOpSpec spec;
        spec.kind = kind;
        spec.type = CollectiveDataType::INT8;
        spec.count = count;
        return CollectiveHelper::Run(c, spec);
    };
    const Time fwd = alone({0, 1}, CollectiveKind::ALLREDUCE, 1048576);
    const Time ig = alone({0, 1}, CollectiveKind::ALLGATHER, 262144 / 2);
    const Time wg = alone({0, 2}, CollectiveKind::ALLREDUCE, 4194304);
    const Time delay = NanoSeconds(100);
    const Time model = NanoSeconds(1000 + 500 + 2000) + fwd + ig + wg + 3 * delay;
    for (uint32_t it = 0; it < 2; ++it)
    {
        const WorkloadIterationRecord r = job->GetSlowest(it);
        std::cout << "iteration " << it << ": " << r.GetDuration().GetMicroSeconds()
                  << " us, model " << model.GetMicroSeconds() << " us (TP "
                  << (fwd + ig).GetMicroSeconds() << ", DP " << wg.GetMicroSeconds() << ")\n";
        EXPECT_NEAR(r.GetDuration().GetSeconds() / model.GetSeconds(), 1.0, 0.01);
        EXPECT_EQ(r.compute, NanoSeconds(3500));
        EXPECT_NEAR(r.exposed[WorkloadTrainingJob::TP].GetSeconds() /
                        (fwd + ig + 2 * delay).GetSeconds(),
                    1.0,
                    0.01);
        // The weight-gradient allreduce is waited for after the last step.
        EXPECT_NEAR(r.exposed[WorkloadTrainingJob::DP].GetSeconds() / (wg + delay).GetSeconds(),
                    1.0,
                    0.01);
        Time sum = r.compute;
        for (const Time& e : r.exposed)
        {
            sum += e;
        }
        EXPECT_EQ(sum, r.GetDuration()) << "compute and waits tile the iteration";
    }
}

// The LLM builder's layers carry the FLOPs and bytes of its formulas: a dense layer's
// attention and MLP halves, sequence-parallel allgather / reduce-scatter of the
// activations, weight gradients of the parameters over t; a MoE layer's all-to-alls of the
// routed tokens and its experts' gradients in the data-parallel group across expert groups.
TEST_F(WorkloadTest, TheLlmBuilderWritesItsFormulasIntoTheLayers)
{
    Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
    b->SetAttribute("Layers", UintegerValue(2));
    b->SetAttribute("HiddenSize", UintegerValue(1024));
    b->SetAttribute("SequenceLength", UintegerValue(512));
    b->SetAttribute("Heads", UintegerValue(16));
    b->SetAttribute("VocabularySize", UintegerValue(32000));
    b->SetAttribute("TensorParallel", UintegerValue(4));
    b->SetAttribute("GpuFlops", DoubleValue(1e15));
    b->SetAttribute("Efficiency", DoubleValue(0.5));
    const W w = b->Build(16);
    EXPECT_EQ(w.parallelism, W::Parallelism::HYBRID_TRANSFORMER);
    EXPECT_EQ(w.tp, 4u);
    ASSERT_EQ(w.layers.size(), 1u + 2 * 4 + 1);
    const double h = 1024;
    const double s = 512;
    const double attn = (8 * s * h * h + 4 * s * s * h) / 4; // per GPU
    const W::Layer& col = w.layers[1];
    EXPECT_EQ(col.name, "attention_column_0");
    EXPECT_EQ(col.pass[W::FORWARD].compute, std::llround(attn / 2 / 5e14 * 1e9));
    EXPECT_EQ(col.pass[W::FORWARD].collective, W::Collective::ALLGATHER);
    EXPECT_EQ(col.pass[W::FORWARD].bytes, 512u * 1024 * 2);
    EXPECT_EQ(col.pass[W::INPUT_GRAD].collective, W::Collective::REDUCESCATTER);
    EXPECT_EQ(col.pass[W::WEIGHT_GRAD].bytes, 4u * 1024 * 1024 / 4 * 2 / 2);
    const W::Layer& mlpRow = w.layers[4];
    EXPECT_EQ(mlpRow.name, "mlp_row_0");
    EXPECT_EQ(mlpRow.pass[W::FORWARD].collective, W::Collective::REDUCESCATTER);
    EXPECT_EQ(mlpRow.pass[W::FORWARD].compute,
              std::llround(4 * s * h * 4 * h / 4 / 2 / 5e14 * 1e9));
    EXPECT_EQ(mlpRow.pass[W::WEIGHT_GRAD].bytes, 2u * 1024 * 4096 / 4 * 2 / 2);
    EXPECT_EQ(w.layers[0].pass[W::WEIGHT_GRAD].bytes, 32000u * 1024 / 4 * 2);
    EXPECT_NEAR(b->GetLayerForwardFlops(), attn + 4 * s * h * 4 * h / 4, 1);

    b->SetAttribute("Experts", UintegerValue(8));
    b->SetAttribute("TopK", UintegerValue(2));
    b->SetAttribute("ExpertParallel", UintegerValue(2));
    const W m = b->Build(16);
    EXPECT_EQ(m.ep, 2u);
    const W::Layer& dispatch = m.layers[3];
    EXPECT_EQ(dispatch.name, "moe_dispatch_0");
    EXPECT_EQ(dispatch.pass[W::FORWARD].collective, W::Collective::ALLTOALL);
    EXPECT_EQ(dispatch.pass[W::FORWARD].group, W::Group::EP);
    EXPECT_EQ(dispatch.pass[W::FORWARD].bytes, 512u * 1024 * 2 * 2 / 4);
    const W::Layer& experts = m.layers[4];
    EXPECT_EQ(experts.pass[W::WEIGHT_GRAD].group, W::Group::DP_EP);
    EXPECT_EQ(experts.pass[W::WEIGHT_GRAD].bytes, 2u * 1024 * 4096 / 4 * 2 * (8 / 2));
    EXPECT_EQ(experts.pass[W::FORWARD].compute,
              std::llround(4 * s * h * 4 * h * 2 / 4 / 5e14 * 1e9));

    GTEST_FLAG_SET(death_test_style, "threadsafe");
    b->SetAttribute("ExpertParallel", UintegerValue(3));
    EXPECT_DEATH(b->Build(16), "Experts 8 is not a multiple of ExpertParallel 3");
}

// A dense and a MoE model built for 16 GPUs (2 servers x 8, tensor parallel 8, expert
// parallel 2) run on a rail-optimized InfiniBand fabric with NVLink: every rank finishes,
// compute is the layers' ticks, and compute and waits add up to the iteration.
TEST_F(WorkloadTest, BuiltDenseAndMoeModelsRunOnGpuServers)
{
    for (uint32_t experts : {0u, 4u})
    {
        Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
        b->SetAttribute("Layers", UintegerValue(2));
        b->SetAttribute("HiddenSize", UintegerValue(1024));
        b->SetAttribute("SequenceLength", UintegerValue(256));
        b->SetAttribute("Heads", UintegerValue(16));
        b->SetAttribute("VocabularySize", UintegerValue(8192));
        b->SetAttribute("Experts", UintegerValue(experts));
        b->SetAttribute("ExpertParallel", UintegerValue(experts > 0 ? 2 : 1));
        const W w = b->Build(16);
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
        IbFabric fabric = fh.Build(IbTopologyBuilder::RailOptimized2Level(16, 2, 8));
        CollectiveHelper ch;
        ch.SetGpusPerServer(8);
        ch.SetAlgorithm("hier");
        Ptr<WorkloadTrainingJob> job = WorkloadTrainingHelper(ch).InstallIb(w, "built", fabric);
        EXPECT_EQ(job->Uses(WorkloadTrainingJob::EP), experts > 0);
        job->Start();
        Simulator::Run();
        ASSERT_TRUE(job->IsDone()) << experts;
        uint64_t ticks = 0;
        for (const auto& l : w.layers)
        {
            for (const auto& p : l.pass)
            {
                ticks += p.compute;
            }
        }
        for (const auto& r : job->GetRecords())
        {
            EXPECT_EQ(r.compute, NanoSeconds(ticks)) << r.rank;
            Time sum = r.compute;
            for (const Time& e : r.exposed)
            {
                sum += e;
            }
            EXPECT_EQ(sum, r.GetDuration()) << r.rank;
        }
        const WorkloadIterationRecord slow = job->GetSlowest(0);
        std::cout << (experts > 0 ? "MoE" : "dense") << ": " << slow.GetDuration().GetMicroSeconds()
                  << " us, compute " << slow.compute.GetMicroSeconds() << " us, TP "
                  << slow.exposed[WorkloadTrainingJob::TP].GetMicroSeconds() << ", DP "
                  << slow.exposed[WorkloadTrainingJob::DP].GetMicroSeconds() << ", EP "
                  << slow.exposed[WorkloadTrainingJob::EP].GetMicroSeconds() << ", DP_EP "
                  << slow.exposed[WorkloadTrainingJob::DP_EP].GetMicroSeconds() << " us\n";
        Simulator::Destroy();
        IbHelper::ResetLidAllocation();
    }
}

namespace
{
/**
 * @param pp stages
 * @param ga micro-batches
 * @param ppComm bytes sent between stages
 * @param layers layers (0: pp)
 * @return a workload of equal layers: forward 100 ticks, input gradient 120, weight
 *         gradient 80, no collectives
 */
W
PipelineWorkload(uint32_t pp, uint32_t ga, uint64_t ppComm, uint32_t layers = 0)
{
    layers = layers > 0 ? layers : pp;
    std::ostringstream text;
    text << "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 pp: " << pp << " ga: " << ga
         << " pp_comm: " << ppComm << "\n"
         << layers << "\n";
    for (uint32_t l = 0; l < layers; ++l)
    {
        text << "layer" << l << " -1 100 NONE 0 120 NONE 0 80 NONE 0 0\n";
    }
    W w;
    std::string error;
    std::istringstream in(text.str());
    NS_ABORT_MSG_UNLESS(w.Parse(in, "pipeline.txt", &error), error);
    return w;
}
} // namespace

// A pipeline of P equal stages and M micro-batches whose transfers take no time has the
// textbook bubble, under 1F1B and GPipe alike: the iteration takes (M + P - 1)(tf + tb),
// stage s ends s tb before stage 0 in the first iteration (it started s tf late and its
// last backward is s hops before stage 0's), and every stage's later iterations take the
// whole (M + P - 1)(tf + tb), of which M (tf + tb) compute and the rest bubble.
TEST_F(WorkloadTest, APipelineOfEqualStagesHasTheTextbookBubble)
{
    const uint32_t P = 4;
    const uint32_t M = 8;
    const Time tf = MicroSeconds(100);
    const Time tb = MicroSeconds(200);
    const Time T = (M + P - 1) * (tf + tb);
    for (const char* schedule : {"1F1B", "GPipe"})
    {
        Ptr<WorkloadTrainingJob> job = CreateObject<WorkloadTrainingJob>();
        job->SetAttribute("TickTime", TimeValue(MicroSeconds(1)));
        job->SetAttribute("Iterations", UintegerValue(2));
        job->SetAttribute("PipelineSchedule", StringValue(schedule));
        job->Setup(PipelineWorkload(P, M, 0), P, "pipeline.txt");
        // The Activity trace tiles each rank's time: intervals in order, without overlap.
        std::vector<Time> busy(P);
        std::vector<Time> bubble(P);
        std::vector<Time> last(P);
        job->TraceConnectWithoutContext(
            "Activity",
            MakeCallback(+[](std::vector<Time>* busy,
                             std::vector<Time>* bubble,
                             std::vector<Time>* last,
                             const WorkloadActivity& a) {
                EXPECT_GE(a.start, (*last)[a.rank]);
                (*last)[a.rank] = a.end;
                (a.what == WorkloadActivity::COMPUTE ? *busy : *bubble)[a.rank] += a.end - a.start;
                EXPECT_TRUE(a.what == WorkloadActivity::COMPUTE ||
                            a.what == WorkloadActivity::BUBBLE);
            }).Bind(&busy, &bubble, &last));
        job->Start();
        Simulator::Run();
        ASSERT_TRUE(job->IsDone()) << schedule;
        ASSERT_EQ(job->GetRecords().size(), 2u * P);
        EXPECT_EQ(job->GetCollectives(), 2u * 2 * M * (P - 1)) << "a send each way per hop";
        for (const WorkloadIterationRecord& r : job->GetRecords())
        {
            const Time duration = r.iteration == 0 ? T - r.rank * tb : T;
            EXPECT_EQ(r.GetDuration(), duration)
                << schedule << " iteration " << r.iteration << " stage " << r.rank;
            EXPECT_EQ(r.compute, M * (tf + tb));
            EXPECT_EQ(r.bubble, duration - M * (tf + tb));
            EXPECT_EQ(r.exposed[WorkloadTrainingJob::PP], Time(0));
        }
        EXPECT_EQ(job->GetSlowest(0).GetDuration(), T);
        for (uint32_t r = 0; r < P; ++r)
        {
            EXPECT_EQ(busy[r], 2 * M * (tf + tb));
            EXPECT_EQ(busy[r] + bubble[r], last[r]) << "stage " << r;
        }
        // The bubble fraction of the slowest stage is (P - 1) / (M + P - 1).
        EXPECT_DOUBLE_EQ(job->GetSlowest(1).bubble.GetSeconds() / T.GetSeconds(),
                         double(P - 1) / (M + P - 1));
        Simulator::Destroy();
    }
}

// Interleaved 1F1B (Megatron-LM): P stages of v model chunks each, one layer per chunk
// (tf = 100 us, tb = 200 us), M a multiple of P, transfers that take no time. Every
// later iteration takes M v (tf + tb) of compute plus the bubble (P - 1)(tf + tb), the
// textbook (P - 1)(Tf + Tb) / v of stages that hold v chunks; the last chunk hands over
// to the first stage, so there are 2 M (P v - 1) transfers per iteration.
TEST_F(WorkloadTest, InterleavedStagesCutTheBubbleByTheirChunks)
{
    const uint32_t P = 4;
    const uint32_t M = 8;
    const Time tf = MicroSeconds(100);
    const Time tb = MicroSeconds(200);
    for (uint32_t v : {2u, 3u})
    {
        Ptr<WorkloadTrainingJob> job = CreateObject<WorkloadTrainingJob>();
        job->SetAttribute("TickTime", TimeValue(MicroSeconds(1)));
        job->SetAttribute("Iterations", UintegerValue(2));
        job->SetAttribute("PipelineSchedule", StringValue("1F1B"));
        job->SetAttribute("VirtualStages", UintegerValue(v));
        job->Setup(PipelineWorkload(P, M, 0, P * v), P, "pipeline.txt");
        job->Start();
        Simulator::Run();
        ASSERT_TRUE(job->IsDone()) << v;
        EXPECT_EQ(job->GetCollectives(), 2u * 2 * M * (P * v - 1)) << v;
        const Time T = M * v * (tf + tb) + (P - 1) * (tf + tb);
        for (const WorkloadIterationRecord& r : job->GetRecords())
        {
            EXPECT_EQ(r.compute, M * v * (tf + tb));
            if (r.iteration == 1)
            {
                EXPECT_EQ(r.GetDuration(), T) << "v " << v << " stage " << r.rank;
                EXPECT_EQ(r.bubble, (P - 1) * (tf + tb)) << "v " << v << " stage " << r.rank;
            }
        }
        Simulator::Destroy();
    }
    // The interleaved schedule needs whole rounds of P micro-batches, and 1F1B.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    Ptr<WorkloadTrainingJob> odd = CreateObject<WorkloadTrainingJob>();
    odd->SetAttribute("PipelineSchedule", StringValue("1F1B"));
    odd->SetAttribute("VirtualStages", UintegerValue(2));
    EXPECT_DEATH(odd->Setup(PipelineWorkload(P, 6, 0, 8), P, "pipeline.txt"),
                 "6 micro-batches with 2 virtual stages: the interleaved schedule needs a "
                 "multiple of pp 4");
    odd->SetAttribute("PipelineSchedule", StringValue("GPipe"));
    EXPECT_DEATH(odd->Setup(PipelineWorkload(P, 8, 0, 8), P, "pipeline.txt"),
                 "2 virtual stages need PipelineSchedule 1F1B");
    odd->SetAttribute("PipelineSchedule", StringValue("1F1B"));
    EXPECT_DEATH(odd->Setup(PipelineWorkload(P, 8, 0, 6), P, "pipeline.txt"),
                 "6 layers cannot be cut into pp x vpp = 8 model chunks");
    EXPECT_DEATH(odd->Setup(PipelineWorkload(1, 8, 0, 8), 1, "pipeline.txt"),
                 "2 virtual stages with pp 1: interleaving needs at least 2 stages");
    // A builder's stages are its chunks: built for one chunk per stage, run with two.
    Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
    b->SetAttribute("Layers", UintegerValue(4));
    b->SetAttribute("TensorParallel", UintegerValue(1));
    b->SetAttribute("Heads", UintegerValue(8));
    b->SetAttribute("PipelineParallel", UintegerValue(2));
    b->SetAttribute("MicroBatches", UintegerValue(2));
    EXPECT_DEATH(odd->Setup(b->Build(2), 2, "built"),
                 "the layers' stages end at 1 but pp x vpp is 4 model chunks");
}

// Interleaved stages over a fabric: 2 stages of 2 chunks, 2 micro-batches, 1 MiB between
// chunks. Every hand-over is a broadcast on its pair's communicator, the last stage's
// chunk 0 to the first stage's chunk 1 on the pair (stage 1, stage 0); each stage's
// time is its compute, bubble and waits, to the nanosecond.
TEST_F(WorkloadTest, InterleavedHandOversCrossTheFabricIncludingLastToFirst)
{
    const uint32_t P = 2;
    const uint32_t M = 2;
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(4, 4));
    CollectiveHelper ch;
    WorkloadTrainingHelper wh(ch);
    wh.SetJobAttribute("TickTime", TimeValue(MicroSeconds(1)));
    wh.SetJobAttribute("PipelineSchedule", StringValue("1F1B"));
    wh.SetJobAttribute("VirtualStages", UintegerValue(2));
    Ptr<WorkloadTrainingJob> job =
        wh.InstallIb(PipelineWorkload(P, M, 1 << 20, 4), "vpp", fabric, {0, 2});
    ASSERT_EQ(job->GetGroups(WorkloadTrainingJob::PP),
              (std::vector<std::vector<uint32_t>>{{0, 1}, {1, 0}}));
    job->Start();
    Simulator::Run();
    ASSERT_TRUE(job->IsDone());
    EXPECT_EQ(job->GetCollectives(), 2u * M * (P * 2 - 1));
    // The wrap pair carried the hand-overs from the last chunk of stage 1 to stage 0.
    const uint64_t wrapped =
        job->GetCommunicator(WorkloadTrainingJob::PP, 1)->GetTransport()->GetBytesSent();
    EXPECT_EQ(wrapped, 2u * M * (1 << 20)) << "M forward and M backward hand-overs";
    for (const WorkloadIterationRecord& r : job->GetRecords())
    {
        Time sum = r.compute + r.bubble;
        for (const Time& e : r.exposed)
        {
            sum += e;
        }
        EXPECT_EQ(sum, r.GetDuration()) << "stage " << r.rank;
        EXPECT_GT(r.exposed[WorkloadTrainingJob::PP], Time(0)) << "stage " << r.rank;
    }
}

// With one micro-batch the pipeline is a chain: P forward and P backward passes and
// 2 (P - 1) transfers one after the other, each taking what a two-rank broadcast of
// pp_comm bytes takes alone on the same fabric; the receivers' wait for a transfer
// that has started is exposed PP time, the rest of their wait is bubble.
TEST_F(WorkloadTest, PipelineTransfersCrossTheFabricBetweenStages)
{
    const uint32_t P = 4;
    const uint64_t bytes = 1 << 20;
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::FatTree2Level(8, 8));
    CollectiveHelper ch;
    WorkloadTrainingHelper wh(ch);
    wh.SetJobAttribute("TickTime", TimeValue(MicroSeconds(1)));
    wh.SetJobAttribute("PipelineSchedule", StringValue("1F1B"));
    Ptr<WorkloadTrainingJob> job =
        wh.InstallIb(PipelineWorkload(P, 1, bytes), "p", fabric, {0, 1, 2, 3});
    ASSERT_TRUE(job->Uses(WorkloadTrainingJob::PP));
    ASSERT_EQ(job->GetGroups(WorkloadTrainingJob::PP).size(), P - 1);
    job->Start();
    Simulator::Run();
    ASSERT_TRUE(job->IsDone());
    Ptr<CollectiveCommunicator> pair = ch.InstallIb(fabric, {4, 5});
    CollectiveOpSpec spec;
    spec.kind = CollectiveKind::BROADCAST;
    spec.type = CollectiveDataType::INT8;
    spec.count = bytes;
    const Time t1 = CollectiveHelper::Run(pair, spec);
    const Time tf = MicroSeconds(100);
    const Time tb = MicroSeconds(200);
    const Time model = P * (tf + tb) + 2 * (P - 1) * t1;
    const WorkloadIterationRecord slow = job->GetSlowest(0);
    std::cout << "1 MiB between stages: " << t1.GetMicroSeconds() << " us; chain "
              << slow.GetDuration().GetMicroSeconds() << " us, model " << model.GetMicroSeconds()
              << " us\n";
    EXPECT_NEAR(slow.GetDuration().GetSeconds() / model.GetSeconds(), 1.0, 0.002);
    for (const WorkloadIterationRecord& r : job->GetRecords())
    {
        Time sum = r.compute + r.bubble;
        for (const Time& e : r.exposed)
        {
            sum += e;
        }
        EXPECT_EQ(sum, r.GetDuration()) << "stage " << r.rank;
        // Exposed: each transfer a stage receives (activations unless first, gradients
        // unless last), and the gradient it sends last, which its iteration waits for
        // (not stage 0: it sends none); the rest of the waiting is bubble.
        const uint32_t exposed = (r.rank > 0 ? 2 : 0) + (r.rank + 1 < P ? 1 : 0);
        EXPECT_NEAR(r.exposed[WorkloadTrainingJob::PP].GetSeconds(),
                    exposed * t1.GetSeconds(),
                    0.002 * t1.GetSeconds())
            << "stage " << r.rank;
        EXPECT_NEAR(r.bubble.GetSeconds(),
                    (r.GetDuration() - r.compute).GetSeconds() - exposed * t1.GetSeconds(),
                    0.002 * t1.GetSeconds());
    }
}

// The builder's pipeline: Layers / PipelineParallel transformer layers per stage (the
// embedding on the first, the logits on the last), the sequence-parallel activations of
// a micro-batch between stages, the micro-batches as ga; the job splits there.
TEST_F(WorkloadTest, TheLlmBuilderSplitsTheModelIntoEqualStages)
{
    Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
    b->SetAttribute("Layers", UintegerValue(4));
    b->SetAttribute("PipelineParallel", UintegerValue(2));
    b->SetAttribute("MicroBatches", UintegerValue(6));
    const W w = b->Build(32);
    EXPECT_EQ(w.pp, 2u);
    EXPECT_EQ(w.ga, 6u);
    EXPECT_EQ(w.ppComm, 2048ull * 4096 * 2 / 8);
    // embedding, its tie, 4 x 4 layer entries, the logits' tie, the logits
    ASSERT_EQ(w.layers.size(), 2u + 4 * 4 + 2);
    for (uint32_t i = 0; i < w.layers.size(); ++i)
    {
        const uint32_t expect = i < 2 ? 0 : (i + 2 >= w.layers.size() ? 1 : (i - 2) / 8);
        EXPECT_EQ(w.layers[i].stage, expect) << w.layers[i].name;
    }
    // The tied embedding: V h / t bf16 between first and last stage, and the last stage's
    // copy in its data-parallel group.
    const uint64_t emb = 50257ull * 4096 / 8 * 2;
    for (uint32_t i : {1u, 18u})
    {
        const W::PassSpec& wg = w.layers[i].pass[W::WEIGHT_GRAD];
        EXPECT_EQ(wg.collective, W::Collective::ALLREDUCE) << w.layers[i].name;
        EXPECT_EQ(wg.group, W::Group::EMB) << w.layers[i].name;
        EXPECT_EQ(wg.bytes, emb) << w.layers[i].name;
    }
    EXPECT_EQ(w.layers[1].name, "embedding_tied_0");
    EXPECT_EQ(w.layers[18].name, "logits_tied_3");
    EXPECT_EQ(w.layers[19].pass[W::WEIGHT_GRAD].bytes, emb);
    EXPECT_EQ(w.layers[19].pass[W::WEIGHT_GRAD].group, W::Group::DEFAULT);
    Ptr<WorkloadTrainingJob> job = CreateObject<WorkloadTrainingJob>();
    job->SetAttribute("PipelineSchedule", StringValue("1F1B"));
    job->Setup(w, 32, "built");
    EXPECT_TRUE(job->Uses(WorkloadTrainingJob::PP));
    EXPECT_TRUE(job->Uses(WorkloadTrainingJob::EMB));
    // 2 data-parallel replicas x 8 tensor-parallel ranks: 16 pipelines of one hop each,
    // and the same 16 first-and-last pairs for the embedding.
    const auto& pairs = job->GetGroups(WorkloadTrainingJob::PP);
    ASSERT_EQ(pairs.size(), 16u);
    EXPECT_EQ(pairs[0], (std::vector<uint32_t>{0, 8}));
    EXPECT_EQ(pairs[9], (std::vector<uint32_t>{17, 25}));
    EXPECT_EQ(job->GetGroups(WorkloadTrainingJob::EMB), pairs);
    // Without stages (SimAI's mode) the ties have no group and do nothing.
    Ptr<WorkloadTrainingJob> flat = CreateObject<WorkloadTrainingJob>();
    flat->Setup(w, 32, "built");
    EXPECT_FALSE(flat->Uses(WorkloadTrainingJob::EMB));
}

// ZeRO: stage 1 moves each layer's gradient reduction into a zero_shard entry before the
// layer (an allgather of its parameters in the forward pass, a reduce-scatter of its
// gradients in the weight-gradient pass, both in the data-parallel group); stage 3 adds
// a zero3_gather entry after the layer that allgathers them again for the backward pass.
TEST_F(WorkloadTest, TheLlmBuilderShardsParametersForZero)
{
    const uint64_t h = 1024;
    auto build = [h](uint32_t stage) {
        Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
        b->SetAttribute("Layers", UintegerValue(2));
        b->SetAttribute("HiddenSize", UintegerValue(h));
        b->SetAttribute("Heads", UintegerValue(8));
        b->SetAttribute("SequenceLength", UintegerValue(256));
        b->SetAttribute("TensorParallel", UintegerValue(8));
        b->SetAttribute("ZeroStage", UintegerValue(stage));
        return b->Build(16);
    };
    const W plain = build(0);
    const W z1 = build(1);
    const W z3 = build(3);
    // Parameters of a layer per tensor-parallel rank, bf16: (4 h^2 + 2 h 4h) / 8 x 2.
    const uint64_t params = (4 * h * h + 8 * h * h) / 8 * 2;
    ASSERT_EQ(z1.layers.size(), plain.layers.size() + 2);
    ASSERT_EQ(z3.layers.size(), plain.layers.size() + 4);
    for (const W* w : {&z1, &z3})
    {
        uint32_t shards = 0;
        uint32_t gathers = 0;
        for (const W::Layer& l : w->layers)
        {
            const auto& wg = l.pass[W::WEIGHT_GRAD];
            if (l.name.rfind("zero_shard_", 0) == 0)
            {
                ++shards;
                EXPECT_EQ(l.pass[W::FORWARD].collective, W::Collective::ALLGATHER);
                EXPECT_EQ(l.pass[W::FORWARD].group, W::Group::DP);
                EXPECT_EQ(l.pass[W::FORWARD].bytes, params);
                EXPECT_EQ(wg.collective, W::Collective::REDUCESCATTER);
                EXPECT_EQ(wg.bytes, params);
            }
            else if (l.name.rfind("zero3_gather_", 0) == 0)
            {
                ++gathers;
                EXPECT_EQ(l.pass[W::INPUT_GRAD].collective, W::Collective::ALLGATHER);
                EXPECT_EQ(l.pass[W::INPUT_GRAD].bytes, params);
            }
            else if (l.name != "embedding_layer")
            {
                EXPECT_EQ(wg.collective, W::Collective::NONE) << l.name;
            }
        }
        EXPECT_EQ(shards, 2u);
        EXPECT_EQ(gathers, w == &z3 ? 2u : 0u);
    }
    // Layer 1's entries follow layer 0's: its shard entry, then its four.
    EXPECT_EQ(z3.layers[1].name, "zero_shard_0");
    EXPECT_EQ(z3.layers[6].name, "zero3_gather_0");
    EXPECT_EQ(z3.layers[7].name, "zero_shard_1");
    // It runs: per iteration and data-parallel group, 2 layers x 3 ZeRO collectives and the
    // embedding's allreduce.
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::RailOptimized2Level(16, 2, 8));
    CollectiveHelper ch;
    ch.SetGpusPerServer(8);
    Ptr<WorkloadTrainingJob> job = WorkloadTrainingHelper(ch).InstallIb(z3, "zero3", fabric);
    job->Start();
    Simulator::Run();
    ASSERT_TRUE(job->IsDone());
    const uint64_t tpCollectives = 2 * 4 * 2; // per TP group: 2 layers x 4 entries x 2 passes
    EXPECT_EQ(job->GetCollectives(), 8 * (2 * 3 + 1) + 2 * tpCollectives);
}

// SetGroupCollectives: the data-parallel groups' communicators come from their own helper
// (SHARP in the switches), the tensor-parallel ones from the job's (NVLink, hier); the
// job runs to the end with both.
TEST_F(WorkloadTest, GroupKindsGetTheirOwnCollectiveHelper)
{
    Ptr<LlmWorkloadBuilder> b = CreateObject<LlmWorkloadBuilder>();
    b->SetAttribute("Layers", UintegerValue(1));
    b->SetAttribute("HiddenSize", UintegerValue(1024));
    b->SetAttribute("Heads", UintegerValue(8));
    b->SetAttribute("SequenceLength", UintegerValue(256));
    const W w = b->Build(32);
    IbFabricHelper fh;
    IbFabric fabric = fh.Build(IbTopologyBuilder::RailOptimized2Level(16, 4, 8));
    CollectiveHelper ch;
    ch.SetGpusPerServer(8);
    ch.SetAlgorithm("hier");
    CollectiveHelper sharp;
    sharp.SetAlgorithm("sharp");
    sharp.SetSharpManager(SharpHelper().Install(fabric));
    WorkloadTrainingHelper wh(ch);
    wh.SetGroupCollectives(WorkloadTrainingJob::DP, sharp);
    Ptr<WorkloadTrainingJob> job = wh.InstallIb(w, "built", fabric);
    EXPECT_EQ(job->GetCommunicator(WorkloadTrainingJob::DP, 0)->GetAlgorithm()->GetName(), "sharp");
    EXPECT_EQ(job->GetCommunicator(WorkloadTrainingJob::TP, 0)->GetAlgorithm()->GetName(), "hier");
    job->Start();
    Simulator::Run();
    EXPECT_TRUE(job->IsDone());
}

// The ResNet builder derives its layers from the architecture: torchvision's parameter
// counts (weights and batch norms) and forward multiply-adds at 224 x 224 for every depth.
TEST_F(WorkloadTest, TheResNetBuilderCountsTorchvisionsParametersAndMultiplyAdds)
{
    const struct
    {
        uint32_t depth;
        uint64_t params;
        uint64_t macs;
    } nets[] = {{18, 11689512, 1814073344},
                {34, 21797672, 3663761408},
                {50, 25557032, 4089184256},
                {101, 44549160, 7801405440},
                {152, 60192808, 11513626624}};

    for (const auto& net : nets)
    {
        Ptr<ResNetWorkloadBuilder> b = CreateObject<ResNetWorkloadBuilder>();
        b->SetAttribute("Depth", UintegerValue(net.depth));
        EXPECT_EQ(b->GetParameters(), net.params) << "ResNet-" << net.depth;
        EXPECT_EQ(b->GetForwardMacs(), net.macs) << "ResNet-" << net.depth;
    }
}

// ResNet-50 as a DATA workload: 53 convolutions and fc, compute shared by FLOPs so that
// one GPU's iteration is BatchPerGpu / SamplesPerSecond (less conv1's input gradient,
// which the DATA loop skips, as autograd does for the image), and the gradients in DDP
// buckets of 25 MiB after a first of 1 MiB, every byte allreduced once.
TEST_F(WorkloadTest, TheResNetBuilderWritesDdpBucketsAndTheMeasuredThroughput)
{
    Ptr<ResNetWorkloadBuilder> b = CreateObject<ResNetWorkloadBuilder>();
    const W w = b->Build(8);
    EXPECT_EQ(w.parallelism, W::Parallelism::DATA);
    EXPECT_EQ(w.allGpus, 8u);
    ASSERT_EQ(w.layers.size(), 54u);
    EXPECT_EQ(w.layers.front().name, "conv1");
    EXPECT_EQ(w.layers[4].name, "layer1.0.downsample");
    EXPECT_EQ(w.layers.back().name, "fc");
    uint64_t ticks = 0;
    uint64_t reduced = 0;
    std::vector<uint64_t> buckets; // in backward order
    for (std::size_t i = w.layers.size(); i-- > 0;)
    {
        const W::Layer& l = w.layers[i];
        EXPECT_EQ(l.pass[W::FORWARD].compute, l.pass[W::WEIGHT_GRAD].compute);
        ticks += 3 * l.pass[W::FORWARD].compute;
        if (l.pass[W::WEIGHT_GRAD].collective == W::Collective::ALLREDUCE)
        {
            buckets.push_back(l.pass[W::WEIGHT_GRAD].bytes);
            reduced += l.pass[W::WEIGHT_GRAD].bytes;
        }
    }
    EXPECT_NEAR(double(ticks), 256 / 2470.0 * 1e9, 3 * 54);
    EXPECT_EQ(reduced, 4 * b->GetParameters());
    ASSERT_GE(buckets.size(), 3u);
    EXPECT_GE(buckets.front(), 1u << 20);
    for (std::size_t k = 1; k + 1 < buckets.size(); ++k)
    {
        EXPECT_GE(buckets[k], 25u << 20) << "bucket " << k;
    }
    EXPECT_LE(buckets.size(), 2 + 4 * b->GetParameters() / (25u << 20));
    // On one GPU the iteration is the compute.
    Ptr<WorkloadTrainingJob> job = CreateObject<WorkloadTrainingJob>();
    job->Setup(w, 1, "resnet50");
    job->Start();
    Simulator::Run();
    ASSERT_TRUE(job->IsDone());
    const WorkloadIterationRecord r = job->GetSlowest(0);
    EXPECT_EQ(r.compute, NanoSeconds(ticks - w.layers[0].pass[W::INPUT_GRAD].compute));
    EXPECT_EQ(r.GetDuration(), r.compute);
}

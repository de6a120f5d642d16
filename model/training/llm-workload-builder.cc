/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "llm-workload-builder.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("LlmWorkloadBuilder");

NS_OBJECT_ENSURE_REGISTERED(LlmWorkloadBuilder);

TypeId
LlmWorkloadBuilder::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::LlmWorkloadBuilder")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<LlmWorkloadBuilder>()
            .AddAttribute(
                "Layers",
                "Transformer layers (GPT-3 6.7B: 32).",
                UintegerValue(32),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_layers),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "Layers", 1, 100000))
            .AddAttribute(
                "HiddenSize",
                "Hidden size h (GPT-3 6.7B: 4096).",
                UintegerValue(4096),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_hidden),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "HiddenSize", 1, 1u << 20))
            .AddAttribute("FfnHiddenSize",
                          "FFN hidden size f (0: 4 h, GPT's).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&LlmWorkloadBuilder::m_ffn),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("SequenceLength",
                          "Tokens per sequence s (GPT-3: 2048).",
                          UintegerValue(2048),
                          MakeUintegerAccessor(&LlmWorkloadBuilder::m_seq),
                          MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder",
                                                          "SequenceLength",
                                                          1,
                                                          1u << 24))
            .AddAttribute("Heads",
                          "Attention heads (GPT-3 6.7B: 32); a multiple of TensorParallel.",
                          UintegerValue(32),
                          MakeUintegerAccessor(&LlmWorkloadBuilder::m_heads),
                          MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "Heads", 1, 65536))
            .AddAttribute("VocabularySize",
                          "Vocabulary V (GPT-2/3 tokenizer: 50257).",
                          UintegerValue(50257),
                          MakeUintegerAccessor(&LlmWorkloadBuilder::m_vocab),
                          MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder",
                                                          "VocabularySize",
                                                          1,
                                                          1u << 24))
            .AddAttribute("Experts",
                          "Experts per MoE layer (0: a dense model, every MLP a plain FFN).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&LlmWorkloadBuilder::m_experts),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("TopK",
                          "Experts each token is routed to (MoE).",
                          UintegerValue(2),
                          MakeUintegerAccessor(&LlmWorkloadBuilder::m_topK),
                          MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "TopK", 1, 1024))
            .AddAttribute(
                "MicroBatch",
                "Sequences per micro-batch b.",
                UintegerValue(1),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_microBatch),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "MicroBatch", 1, 1u << 20))
            .AddAttribute(
                "BytesPerElement",
                "Bytes of an activation and of a gradient (bf16: 2).",
                UintegerValue(2),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_bytes),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "BytesPerElement", 1, 8))
            .AddAttribute(
                "TensorParallel",
                "Tensor-parallel size t (Megatron: the GPUs of one server, 8).",
                UintegerValue(8),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_tp),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "TensorParallel", 1, 65536))
            .AddAttribute(
                "ExpertParallel",
                "Expert-parallel size (MoE): the experts spread over this many "
                "data-parallel ranks.",
                UintegerValue(1),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_ep),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "ExpertParallel", 1, 65536))
            .AddAttribute(
                "PipelineParallel",
                "Pipeline stages (written as pp; Layers must be a multiple). Run "
                "with WorkloadTrainingJob::PipelineSchedule 1F1B or GPipe.",
                UintegerValue(1),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_pp),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "PipelineParallel", 1, 65536))
            .AddAttribute(
                "VirtualStages",
                "Model chunks per pipeline stage (written as vpp; Layers must be a "
                "multiple of PipelineParallel x VirtualStages): each layer's stage "
                "is its chunk, for WorkloadTrainingJob's interleaved 1F1B.",
                UintegerValue(1),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_vpp),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "VirtualStages", 1, 1024))
            .AddAttribute("ZeroStage",
                          "ZeRO / distributed-optimizer stage of the data parallelism: 0 "
                          "allreduces the gradients; 1 and 2 reduce-scatter them and "
                          "allgather the updated parameters before the next forward pass; 3 "
                          "(FSDP) also allgathers them before the backward pass.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&LlmWorkloadBuilder::m_zero),
                          MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "ZeroStage", 0, 3))
            .AddAttribute(
                "MicroBatches",
                "Micro-batches per iteration (written as ga).",
                UintegerValue(1),
                MakeUintegerAccessor(&LlmWorkloadBuilder::m_microBatches),
                MakeIbUintegerChecker<uint32_t>("LlmWorkloadBuilder", "MicroBatches", 1, 1000000))
            .AddAttribute("SequenceParallel",
                          "Megatron's sequence parallelism: allgather and reduce-scatter of "
                          "the activations instead of allreduce.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&LlmWorkloadBuilder::m_sequenceParallel),
                          MakeBooleanChecker())
            .AddAttribute("GpuFlops",
                          "Peak dense FLOP/s of a GPU (H100 SXM BF16: 989.4e12; A100: 312e12).",
                          DoubleValue(989.4e12),
                          MakeDoubleAccessor(&LlmWorkloadBuilder::m_flops),
                          MakeIbDoubleChecker("LlmWorkloadBuilder", "GpuFlops", 1.0))
            .AddAttribute("Efficiency",
                          "Share of GpuFlops the layers achieve (Megatron-LM on GPT: 52 % of "
                          "A100 peak, Narayanan et al., SC'21).",
                          DoubleValue(0.5),
                          MakeDoubleAccessor(&LlmWorkloadBuilder::m_efficiency),
                          MakeIbDoubleChecker("LlmWorkloadBuilder", "Efficiency", 1e-6, 1.0));
    return tid;
}

LlmWorkloadBuilder::LlmWorkloadBuilder()
    : m_layers(32),
      m_hidden(4096),
      m_ffn(0),
      m_seq(2048),
      m_heads(32),
      m_vocab(50257),
      m_experts(0),
      m_topK(2),
      m_microBatch(1),
      m_bytes(2),
      m_tp(8),
      m_ep(1),
      m_pp(1),
      m_vpp(1),
      m_microBatches(1),
      m_zero(0),
      m_sequenceParallel(true),
      m_flops(989.4e12),
      m_efficiency(0.5)
{
}

LlmWorkloadBuilder::~LlmWorkloadBuilder() = default;

double
LlmWorkloadBuilder::AttentionFlops() const
{
    const double b = m_microBatch;
    const double s = m_seq;
    const double h = m_hidden;
    return (8 * b * s * h * h + 4 * b * s * s * h) / m_tp;
}

double
LlmWorkloadBuilder::MlpFlops() const
{
    const double f = m_ffn != 0 ? m_ffn : 4.0 * m_hidden;
    return 4.0 * m_microBatch * m_seq * m_hidden * f * (m_experts > 0 ? m_topK : 1) / m_tp;
}

double
LlmWorkloadBuilder::GetLayerForwardFlops() const
{
    return AttentionFlops() + MlpFlops();
}

TrainingWorkloadFile
LlmWorkloadBuilder::Build(uint32_t gpus) const
{
    using W = TrainingWorkloadFile;
    NS_ABORT_MSG_UNLESS(m_heads % m_tp == 0,
                        "LlmWorkloadBuilder: Heads "
                            << m_heads << " is not a multiple of TensorParallel " << m_tp);
    const uint64_t f = m_ffn != 0 ? m_ffn : 4ull * m_hidden;
    NS_ABORT_MSG_UNLESS(f % m_tp == 0 && m_hidden % m_tp == 0,
                        "LlmWorkloadBuilder: HiddenSize " << m_hidden << " and FfnHiddenSize " << f
                                                          << " must be multiples of "
                                                             "TensorParallel "
                                                          << m_tp);
    NS_ABORT_MSG_IF(m_experts > 0 && m_experts % m_ep != 0,
                    "LlmWorkloadBuilder: Experts "
                        << m_experts << " is not a multiple of ExpertParallel " << m_ep);
    NS_ABORT_MSG_IF(m_experts == 0 && m_ep > 1,
                    "LlmWorkloadBuilder: ExpertParallel " << m_ep
                                                          << " needs a MoE model (Experts > 0)");
    NS_ABORT_MSG_IF(m_vpp > 1 && m_layers % (m_pp * m_vpp) != 0,
                    "LlmWorkloadBuilder: Layers " << m_layers << " is not a multiple of "
                                                  << "PipelineParallel x VirtualStages "
                                                  << m_pp * m_vpp << "; the chunks must be equal");
    NS_ABORT_MSG_IF(m_layers % m_pp != 0,
                    "LlmWorkloadBuilder: Layers "
                        << m_layers << " is not a multiple of PipelineParallel " << m_pp
                        << "; the stages must be equal");
    NS_ABORT_MSG_IF(m_experts > 0 && m_topK > m_experts,
                    "LlmWorkloadBuilder: TopK " << m_topK << " is more than the " << m_experts
                                                << " experts");
    const double rate = m_flops * m_efficiency; // FLOP/s
    auto ns = [rate](double flops) {
        return static_cast<uint64_t>(std::llround(flops / rate * 1e9));
    };
    const double b = m_microBatch;
    const double s = m_seq;
    const double h = m_hidden;
    const uint64_t act = uint64_t(m_microBatch) * m_seq * m_hidden * m_bytes;
    const bool moe = m_experts > 0;

    W w;
    w.parallelism = W::Parallelism::HYBRID_TRANSFORMER;
    w.tp = m_tp;
    w.ep = m_ep;
    w.pp = m_pp;
    w.vpp = m_vpp;
    w.ga = m_microBatches;
    // Between stages: a micro-batch's activations (its gradient back), split over the
    // tensor-parallel ranks with sequence parallelism.
    w.ppComm = m_pp > 1 ? (m_sequenceParallel ? act / m_tp : act) : 0;
    w.allGpus = gpus;
    auto pass = [](uint64_t compute, W::Collective c, W::Group g, uint64_t bytes) {
        W::PassSpec p;
        p.compute = compute;
        p.collective = bytes > 0 ? c : W::Collective::NONE;
        p.group = g;
        p.bytes = bytes;
        return p;
    };
    auto add = [&w](const std::string& name, W::PassSpec fwd, W::PassSpec ig, W::PassSpec wg) {
        W::Layer l;
        l.name = name;
        l.pass = {fwd, ig, wg};
        l.updateDelay = 0;
        w.layers.push_back(l);
    };
    const auto D = W::Group::DEFAULT;
    const auto NONE = W::Collective::NONE;
    // A tensor-parallel boundary: forward collective, and the input gradient's reverse.
    const W::Collective fwdIn = m_sequenceParallel ? W::Collective::ALLGATHER : NONE;
    const W::Collective fwdOut =
        m_sequenceParallel ? W::Collective::REDUCESCATTER : W::Collective::ALLREDUCE;
    const W::Collective igIn =
        m_sequenceParallel ? W::Collective::REDUCESCATTER : W::Collective::ALLREDUCE;
    const W::Collective igOut = m_sequenceParallel ? W::Collective::ALLGATHER : NONE;
    const uint64_t tpBytes = m_tp > 1 ? act : 0;

    // The embedding: its gradient (V h / t) is reduced at the end of the backward pass.
    const double logits = 2 * b * s * h * m_vocab / m_tp;
    const uint64_t embBytes = uint64_t(m_vocab) * m_hidden / m_tp * m_bytes;
    add("embedding_layer",
        pass(0, NONE, D, 0),
        pass(0, NONE, D, 0),
        pass(0, W::Collective::ALLREDUCE, D, embBytes));
    // Pipelines tie the output layer to the embedding (Megatron-LM's default): the last
    // stage keeps a copy, whose gradient is reduced in its data-parallel group, and the
    // first and last stage then allreduce the embedding's gradient between them.
    if (m_pp > 1)
    {
        add("embedding_tied_0",
            pass(0, NONE, D, 0),
            pass(0, NONE, D, 0),
            pass(0, W::Collective::ALLREDUCE, W::Group::EMB, embBytes));
    }
    const double attnFlops = AttentionFlops();
    const double mlpFlops = MlpFlops();
    const uint64_t attnParams = 4ull * m_hidden * m_hidden / m_tp * m_bytes;
    const uint64_t mlpParams = 2ull * m_hidden * f / m_tp * m_bytes;
    const uint64_t a2a = moe && m_ep > 1 ? act * m_topK / m_tp : 0;
    // ZeRO: a layer's parameter shards are gathered before its forward pass (and, stage
    // 3, its backward pass) and its gradients reduce-scattered, in entries of their own
    // around the layer's (whose weight-gradient collectives go).
    auto shard = [&](uint32_t first, const std::string& n) {
        if (m_zero == 0)
        {
            return;
        }
        std::array<uint64_t, 2> bytes{}; // dense (DP), experts (DP_EP)
        for (uint32_t i = first; i < w.layers.size(); ++i)
        {
            W::PassSpec& wg = w.layers[i].pass[W::WEIGHT_GRAD];
            if (wg.collective == W::Collective::ALLREDUCE)
            {
                bytes[wg.group == W::Group::DP_EP ? 1 : 0] += wg.bytes;
                wg.collective = NONE;
                wg.bytes = 0;
                wg.group = D;
            }
        }
        std::vector<W::Layer> before;
        std::vector<W::Layer> after;
        for (uint32_t k = 0; k < 2; ++k)
        {
            if (bytes[k] == 0)
            {
                continue;
            }
            const W::Group g = k == 0 ? W::Group::DP : W::Group::DP_EP;
            W::Layer s;
            s.name = std::string(k == 0 ? "zero_shard_" : "zero_expert_shard_") + n;
            s.pass = {pass(0, W::Collective::ALLGATHER, g, bytes[k]),
                      pass(0, NONE, D, 0),
                      pass(0, W::Collective::REDUCESCATTER, g, bytes[k])};
            before.push_back(s);
            if (m_zero == 3)
            {
                W::Layer r;
                r.name = std::string(k == 0 ? "zero3_gather_" : "zero3_expert_gather_") + n;
                r.pass = {pass(0, NONE, D, 0),
                          pass(0, W::Collective::ALLGATHER, g, bytes[k]),
                          pass(0, NONE, D, 0)};
                after.push_back(r);
            }
        }
        w.layers.insert(w.layers.begin() + first, before.begin(), before.end());
        w.layers.insert(w.layers.end(), after.begin(), after.end());
    };
    for (uint32_t l = 0; l < m_layers; ++l)
    {
        const std::string n = std::to_string(l);
        const uint32_t first = w.layers.size();
        // Attention: in (allgather) and out (reduce-scatter), each half of its compute.
        add("attention_column_" + n,
            pass(ns(attnFlops / 2), fwdIn, D, fwdIn == NONE ? 0 : tpBytes),
            pass(ns(attnFlops / 2), igIn, D, tpBytes),
            pass(ns(attnFlops / 2), W::Collective::ALLREDUCE, D, attnParams / 2));
        add("attention_row_" + n,
            pass(ns(attnFlops / 2), fwdOut, D, tpBytes),
            pass(ns(attnFlops / 2), igOut, D, igOut == NONE ? 0 : tpBytes),
            pass(ns(attnFlops / 2), W::Collective::ALLREDUCE, D, attnParams / 2));
        if (!moe)
        {
            add("mlp_column_" + n,
                pass(ns(mlpFlops / 2), fwdIn, D, fwdIn == NONE ? 0 : tpBytes),
                pass(ns(mlpFlops / 2), igIn, D, tpBytes),
                pass(ns(mlpFlops / 2), W::Collective::ALLREDUCE, D, mlpParams / 2));
            add("mlp_row_" + n,
                pass(ns(mlpFlops / 2), fwdOut, D, tpBytes),
                pass(ns(mlpFlops / 2), igOut, D, igOut == NONE ? 0 : tpBytes),
                pass(ns(mlpFlops / 2), W::Collective::ALLREDUCE, D, mlpParams / 2));
            shard(first, n);
            continue;
        }
        // MoE: dispatch, the experts (this GPU's Experts / ExpertParallel), combine.
        const uint64_t expertParams = mlpParams * (m_experts / m_ep);
        add("moe_dispatch_" + n,
            pass(0, W::Collective::ALLTOALL, W::Group::EP, a2a),
            pass(0, W::Collective::ALLTOALL, W::Group::EP, a2a),
            pass(0, NONE, D, 0));
        add("moe_experts_" + n,
            pass(ns(mlpFlops), fwdIn, D, fwdIn == NONE ? 0 : tpBytes),
            pass(ns(mlpFlops), igIn, D, tpBytes),
            pass(ns(mlpFlops), W::Collective::ALLREDUCE, W::Group::DP_EP, expertParams));
        add("moe_combine_" + n,
            pass(0, W::Collective::ALLTOALL, W::Group::EP, a2a),
            pass(0, W::Collective::ALLTOALL, W::Group::EP, a2a),
            pass(0, NONE, D, 0));
        add("moe_out_" + n,
            pass(0, fwdOut, D, tpBytes),
            pass(0, igOut, D, igOut == NONE ? 0 : tpBytes),
            pass(0, NONE, D, 0));
        shard(first, n);
    }
    if (m_pp > 1)
    {
        add("logits_tied_" + std::to_string(m_layers - 1),
            pass(0, NONE, D, 0),
            pass(0, NONE, D, 0),
            pass(0, W::Collective::ALLREDUCE, W::Group::EMB, embBytes));
    }
    add("logits",
        pass(ns(logits), NONE, D, 0),
        pass(ns(logits), NONE, D, 0),
        pass(ns(logits), W::Collective::ALLREDUCE, D, m_pp > 1 ? embBytes : 0));
    // Stages: the embedding with the first layers, the logits with the last; a layer's
    // entries are those whose names end in its number.
    uint32_t layer = 0;
    for (uint32_t i = 0; i < w.layers.size(); ++i)
    {
        w.layers[i].line = i + 3;
        const std::string& name = w.layers[i].name;
        const size_t us = name.find_last_of('_');
        if (i > 0 && i + 1 < w.layers.size() && us != std::string::npos)
        {
            layer = std::stoul(name.substr(us + 1));
        }
        w.layers[i].stage = layer / (m_layers / (m_pp * m_vpp)); // its model chunk
    }
    return w;
}

} // namespace ns3

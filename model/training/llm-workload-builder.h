/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef LLM_WORKLOAD_BUILDER_H
#define LLM_WORKLOAD_BUILDER_H

#include "training-workload-file.h"

#include "ns3/object.h"

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief Builds the workload of a GPT-style decoder (dense or mixture-of-experts) trained
 * with Megatron-style tensor, expert and data parallelism, from the model and the GPUs,
 * as a TrainingWorkloadFile (HYBRID_TRANSFORMER) that WorkloadTrainingJob runs.
 *
 * Per transformer layer and micro-batch of b sequences of s tokens, hidden size h, FFN
 * size f, tensor-parallel size t (FLOPs per GPU, after Narayanan et al., SC'21):
 * - attention: 8 b s h^2 (QKV and output projections) + 4 b s^2 h (scores and values),
 *   over t; the MLP 4 b s h f over t (a MoE layer: times TopK, each token to TopK
 *   experts); the logits 2 b s h V over t (vocabulary V). Backward is twice the forward,
 *   half for the input gradient, half for the weight gradient. Compute time is FLOPs over
 *   GpuFlops x Efficiency.
 * - Tensor-parallel collectives of the activations A = b s h bytes-per-element: with
 *   SequenceParallel an allgather before and a reduce-scatter after the attention and
 *   the MLP (and the reverse in the backward), else an allreduce after each.
 * - MoE: an all-to-all of the routed tokens, A x TopK / t bytes, before and after the
 *   experts (dispatch and combine), in the expert-parallel group, in both passes.
 * - Weight gradients: the layer's parameters over t (attention 4 h^2, MLP 2 h f, each
 *   expert 2 h f, of which a GPU holds Experts / ExpertParallel) allreduced in the
 *   data-parallel group; expert weights in the data-parallel group across expert groups
 *   (_DP_EP); the embedding's V h / t at the end of the backward pass.
 * - Pipeline parallelism: Layers / PipelineParallel transformer layers per stage (the
 *   embedding with the first, the logits with the last), each layer's stage set; between
 *   stages a micro-batch's activations b s h bytes-per-element (over t with
 *   SequenceParallel) as pp_comm, MicroBatches as ga; with VirtualStages v, layer
 *   stages are model chunks of Layers / (PipelineParallel v) layers (interleaved 1F1B).
 *   The output layer is tied to the embedding: the last stage's copy (V h / t) is
 *   allreduced in its data-parallel group, then first and last stage allreduce it
 *   between them (EMB group; entries embedding_tied_0 and logits_tied_N).
 * - ZeroStage 1 or 2: each layer's gradients are reduce-scattered in the data-parallel
 *   group (DP_EP for experts) and its updated parameters allgathered before its next
 *   forward pass (entries zero_shard_N before the layer's); 3 also allgathers them
 *   before its backward pass (zero3_gather_N after). The embedding stays allreduced.
 */
class LlmWorkloadBuilder : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    LlmWorkloadBuilder();
    ~LlmWorkloadBuilder() override;

    /**
     * Build the workload; aborts naming the attribute if the model and the parallelism do
     * not fit (heads, experts or the FFN not divisible, ...).
     * @param gpus GPUs of the job (written as all_gpus)
     * @return the workload (compute times in nanoseconds: WorkloadTrainingJob's default
     *         tick)
     */
    TrainingWorkloadFile Build(uint32_t gpus) const;

    /// @return forward FLOPs of one transformer layer per GPU and micro-batch
    double GetLayerForwardFlops() const;

  private:
    /// @return forward FLOPs of a layer's attention per GPU and micro-batch
    double AttentionFlops() const;
    /// @return forward FLOPs of a layer's MLP (or routed experts) per GPU and micro-batch
    double MlpFlops() const;

    uint32_t m_layers;       //!< Layers
    uint32_t m_hidden;       //!< HiddenSize
    uint32_t m_ffn;          //!< FfnHiddenSize (0 = 4 x hidden)
    uint32_t m_seq;          //!< SequenceLength
    uint32_t m_heads;        //!< Heads
    uint32_t m_vocab;        //!< VocabularySize
    uint32_t m_experts;      //!< Experts (0 = dense)
    uint32_t m_topK;         //!< TopK
    uint32_t m_microBatch;   //!< MicroBatch
    uint32_t m_bytes;        //!< BytesPerElement
    uint32_t m_tp;           //!< TensorParallel
    uint32_t m_ep;           //!< ExpertParallel
    uint32_t m_pp;           //!< PipelineParallel
    uint32_t m_vpp;          //!< VirtualStages
    uint32_t m_microBatches; //!< MicroBatches
    uint32_t m_zero;         //!< ZeroStage
    bool m_sequenceParallel; //!< SequenceParallel
    double m_flops;          //!< GpuFlops
    double m_efficiency;     //!< Efficiency
};

} // namespace ns3

#endif /* LLM_WORKLOAD_BUILDER_H */

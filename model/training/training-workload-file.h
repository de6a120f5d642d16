/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef TRAINING_WORKLOAD_FILE_H
#define TRAINING_WORKLOAD_FILE_H

#include <array>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief A training workload in the text format of ASTRA-sim 1.0 and SimAI (the files
 * AICB writes): what each layer computes and communicates in its forward, input-gradient
 * and weight-gradient passes.
 *
 * - First line: the parallelism kind (DATA, HYBRID_TRANSFORMER,
 *   HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_DLRM, HYBRID_DLRM_ENHANCED, MODEL,
 *   HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_CUSTOMIZED, MICRO,
 *   DISTRIBUTED_INFERENCE), then `key: value` pairs in any order, the colon optional:
 *   model_parallel_NPU_group (tensor-parallel size), ep, pp, vpp, ga, all_gpus, pp_comm,
 *   and for FWD_IN_BCKWD `checkpoints: N id...` and `checkpoint_initiates: M id...`; for
 *   the DLRM kinds the last bottom layer, as `DLRM_LAST_BOTTOM_LAYER: k` (SimAI) or a bare
 *   number (ASTRA-sim 1.0). ASTRA-sim 1.0's positional form (a key token, then the value)
 *   is the same text.
 * - Second line: the number of layers.
 * - One line per layer: name, a reserved integer, then for the forward, input-gradient
 *   and weight-gradient passes a compute time, a collective and a size in bytes, then an
 *   update delay (HYBRID_CUSTOMIZED: then the layer's own parallelism kind). Collectives:
 *   NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, optionally with a group suffix
 *   _EP or _DP_EP (SimAI). Times are ticks: nanoseconds in SimAI, cycles in ASTRA-sim 1.0.
 *
 * Whatever is not so is refused with the file, the line, the field and what to change.
 */
class TrainingWorkloadFile
{
  public:
    /// The training loop of the file (its first word).
    enum class Parallelism : uint8_t
    {
        DATA,                            ///< data parallel: weight-gradient collectives only
        HYBRID_TRANSFORMER,              ///< tensor (model) parallel inside, data across
        HYBRID_TRANSFORMER_FWD_IN_BCKWD, ///< the same with activation recomputation
        HYBRID_DLRM,                     ///< DLRM: all-to-all of the embeddings
        HYBRID_DLRM_ENHANCED,            ///< DLRM, enhanced variant
        MODEL,                           ///< model parallel only
        HYBRID_DATA_MODEL,               ///< data parallel inside, model across
        HYBRID_MODEL_DATA,               ///< model parallel inside, data across
        HYBRID_CUSTOMIZED,               ///< a kind per layer
        MICRO,                           ///< layer 0's weight-gradient collective only
        DISTRIBUTED_INFERENCE            ///< forward passes only
    };

    /// A collective operation.
    enum class Collective : uint8_t
    {
        NONE,          ///< nothing
        ALLREDUCE,     ///< allreduce
        ALLGATHER,     ///< allgather
        REDUCESCATTER, ///< reduce-scatter
        ALLTOALL       ///< all-to-all
    };

    /// Which ranks a collective runs among.
    enum class Group : uint8_t
    {
        DEFAULT, ///< the pass's group for the parallelism kind (no suffix)
        EP,      ///< expert-parallel group (suffix _EP)
        DP_EP,   ///< data-parallel group across expert groups (suffix _DP_EP)
        DP,      ///< data-parallel group in any pass (set by builders: no file suffix)
        EMB      ///< first and last pipeline stage: the tied embedding (set by builders)
    };

    /// The passes of a layer.
    enum Pass : uint8_t
    {
        FORWARD = 0,    ///< forward
        INPUT_GRAD = 1, ///< input gradient (backward)
        WEIGHT_GRAD = 2 ///< weight gradient (backward)
    };

    /// One pass of a layer.
    struct PassSpec
    {
        uint64_t compute{0};                     ///< compute time, ticks
        Collective collective{Collective::NONE}; ///< its collective
        Group group{Group::DEFAULT};             ///< among whom
        uint64_t bytes{0};                       ///< collective size, bytes
    };

    /// One layer.
    struct Layer
    {
        std::string name;                   ///< its name
        int64_t reserved{-1};               ///< the reserved field, as written
        std::array<PassSpec, 3> pass;       ///< forward, input gradient, weight gradient
        uint64_t updateDelay{0};            ///< ticks after a collective before the layer goes on
        Parallelism own{Parallelism::DATA}; ///< HYBRID_CUSTOMIZED: the layer's kind
        uint32_t line{0};                   ///< its line in the file
        /// the pipeline stage it belongs to, set by a builder (not in the file format);
        /// UINT32_MAX: WorkloadTrainingJob splits the layers evenly
        uint32_t stage{UINT32_MAX};
    };

    /**
     * Read a workload from a stream.
     * @param in the text
     * @param source its name for messages (a file name)
     * @param [out] error what is wrong, "source:line: ..." (when false is returned)
     * @return true if it was read
     */
    bool Parse(std::istream& in, const std::string& source, std::string* error);
    /**
     * Read a workload file; aborts with the file, line and field of what is wrong.
     * @param path the file
     * @return the workload
     */
    static TrainingWorkloadFile Read(const std::string& path);

    /**
     * @param name a first-line word
     * @param [out] p its kind
     * @return true if @p name is one
     */
    static bool ParseParallelism(const std::string& name, Parallelism& p);
    /**
     * @param p a kind
     * @return its first-line word
     */
    static std::string ParallelismName(Parallelism p);
    /**
     * @param c a collective
     * @return its name (NONE, ALLREDUCE, ...)
     */
    static std::string CollectiveName(Collective c);

    Parallelism parallelism{Parallelism::DATA}; ///< the first word
    uint32_t tp{1};                             ///< model_parallel_NPU_group (1 if not given)
    uint32_t ep{1};                             ///< ep (1 if not given)
    uint32_t pp{1};                             ///< pp (1 if not given)
    uint32_t vpp{1};                            ///< vpp (1 if not given)
    uint32_t ga{1};                             ///< ga (1 if not given)
    uint32_t allGpus{0};                        ///< all_gpus (0 if not given)
    uint64_t ppComm{0};                         ///< pp_comm, bytes (0 if not given)
    int64_t dlrmLastBottomLayer{-1};            ///< DLRM kinds: last bottom layer
    std::vector<uint32_t> checkpoints;          ///< FWD_IN_BCKWD: checkpoint layers
    std::vector<uint32_t> initiates;            ///< FWD_IN_BCKWD: recomputation initiators
    std::vector<Layer> layers;                  ///< the layers, in file order
};

} // namespace ns3

#endif /* TRAINING_WORKLOAD_FILE_H */

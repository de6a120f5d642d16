/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RESNET_WORKLOAD_BUILDER_H
#define RESNET_WORKLOAD_BUILDER_H

#include "training-workload-file.h"

#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief Builds the data-parallel workload of a ResNet (He et al., torchvision's v1.5:
 * the stride of a bottleneck's downsampling block on its 3x3 convolution) trained with
 * PyTorch DDP, as a TrainingWorkloadFile (DATA) that WorkloadTrainingJob runs.
 *
 * The layers are the network's convolutions in forward order (torchvision's names:
 * "conv1", "layer1.0.conv1", ..., "layer4.2.downsample" where a block has one) and "fc".
 * A convolution of k x k kernels from C_in to C_out channels at an output of H x W does
 * 2 k^2 C_in C_out H W FLOPs per image forward and holds k^2 C_in C_out weights plus its
 * batch norm's 2 C_out (fc: 2 C_in classes FLOPs, C_in classes + classes parameters); so
 * ResNet-50 has 25,557,032 parameters and 4.09 G multiply-adds per 224 x 224 image, as
 * torchvision counts. Batch norm, ReLU and pooling take no time of their own.
 *
 * Compute: a GPU trains SamplesPerSecond images per second (a measured throughput), so an
 * iteration computes BatchPerGpu / SamplesPerSecond, shared among the layers by their
 * FLOPs, backward twice the forward (half input gradient, half weight gradient).
 *
 * Gradients go to DDP buckets in backward order (fc first): a bucket closes at the layer
 * whose gradients bring it to BucketBytes (the first at FirstBucketBytes, as PyTorch
 * does), and that layer's weight-gradient pass allreduces the bucket; what is left closes
 * with conv1. BucketBytes 0: every layer allreduces its own gradients.
 */
class ResNetWorkloadBuilder : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    ResNetWorkloadBuilder();
    ~ResNetWorkloadBuilder() override;

    /**
     * Build the workload.
     * @param gpus GPUs of the job (written as all_gpus)
     * @return the workload (compute times in nanoseconds: WorkloadTrainingJob's default
     *         tick)
     */
    TrainingWorkloadFile Build(uint32_t gpus) const;

    /// @return the network's parameters
    uint64_t GetParameters() const;
    /// @return forward multiply-adds per image
    uint64_t GetForwardMacs() const;

  private:
    /// A layer with weights.
    struct Conv
    {
        std::string name; ///< torchvision's name
        uint64_t params;  ///< weights (and batch norm)
        uint64_t macs;    ///< forward multiply-adds per image
    };

    /// @return the layers in forward order (aborts on a depth or image size it lacks)
    std::vector<Conv> Layers() const;

    uint32_t m_depth;            //!< Depth
    uint32_t m_imageSize;        //!< ImageSize
    uint32_t m_classes;          //!< Classes
    uint32_t m_batch;            //!< BatchPerGpu
    double m_samplesPerSecond;   //!< SamplesPerSecond
    uint32_t m_bytes;            //!< BytesPerGradient
    uint64_t m_bucketBytes;      //!< BucketBytes
    uint64_t m_firstBucketBytes; //!< FirstBucketBytes
};

} // namespace ns3

#endif /* RESNET_WORKLOAD_BUILDER_H */

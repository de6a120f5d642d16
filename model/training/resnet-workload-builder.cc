/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "resnet-workload-builder.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ResNetWorkloadBuilder");

NS_OBJECT_ENSURE_REGISTERED(ResNetWorkloadBuilder);

TypeId
ResNetWorkloadBuilder::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ResNetWorkloadBuilder")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<ResNetWorkloadBuilder>()
            .AddAttribute(
                "Depth",
                "Layers of the network: 18, 34 (basic blocks), 50, 101 or 152 "
                "(bottleneck blocks).",
                UintegerValue(50),
                MakeUintegerAccessor(&ResNetWorkloadBuilder::m_depth),
                MakeIbUintegerChecker<uint32_t>("ResNetWorkloadBuilder", "Depth", 18, 152))
            .AddAttribute(
                "ImageSize",
                "Input images are ImageSize x ImageSize (a multiple of 32; "
                "ImageNet training: 224).",
                UintegerValue(224),
                MakeUintegerAccessor(&ResNetWorkloadBuilder::m_imageSize),
                MakeIbUintegerChecker<uint32_t>("ResNetWorkloadBuilder", "ImageSize", 32, 8192))
            .AddAttribute(
                "Classes",
                "Outputs of the fully connected layer (ImageNet-1k: 1000).",
                UintegerValue(1000),
                MakeUintegerAccessor(&ResNetWorkloadBuilder::m_classes),
                MakeIbUintegerChecker<uint32_t>("ResNetWorkloadBuilder", "Classes", 1, 1u << 24))
            .AddAttribute("BatchPerGpu",
                          "Images per GPU per iteration (NVIDIA's ResNet-50 recipe: 256).",
                          UintegerValue(256),
                          MakeUintegerAccessor(&ResNetWorkloadBuilder::m_batch),
                          MakeIbUintegerChecker<uint32_t>("ResNetWorkloadBuilder",
                                                          "BatchPerGpu",
                                                          1,
                                                          1u << 20))
            .AddAttribute(
                "SamplesPerSecond",
                "Images one GPU trains per second (NVIDIA's ResNet-50 v1.5 on one "
                "A100-80GB with mixed precision: 2470).",
                DoubleValue(2470),
                MakeDoubleAccessor(&ResNetWorkloadBuilder::m_samplesPerSecond),
                MakeIbDoubleChecker("ResNetWorkloadBuilder", "SamplesPerSecond", 1e-3, 1e9))
            .AddAttribute(
                "BytesPerGradient",
                "Bytes of a gradient element as allreduced (4: fp32).",
                UintegerValue(4),
                MakeUintegerAccessor(&ResNetWorkloadBuilder::m_bytes),
                MakeIbUintegerChecker<uint32_t>("ResNetWorkloadBuilder", "BytesPerGradient", 1, 16))
            .AddAttribute("BucketBytes",
                          "DDP bucket size (PyTorch's bucket_cap_mb = 25: 25 MiB); 0: one "
                          "allreduce per layer.",
                          UintegerValue(25 << 20),
                          MakeUintegerAccessor(&ResNetWorkloadBuilder::m_bucketBytes),
                          MakeIbUintegerChecker<uint64_t>("ResNetWorkloadBuilder",
                                                          "BucketBytes",
                                                          0,
                                                          uint64_t(1) << 40))
            .AddAttribute("FirstBucketBytes",
                          "Size of the first bucket, the last layers' gradients (PyTorch: "
                          "1 MiB).",
                          UintegerValue(1 << 20),
                          MakeUintegerAccessor(&ResNetWorkloadBuilder::m_firstBucketBytes),
                          MakeIbUintegerChecker<uint64_t>("ResNetWorkloadBuilder",
                                                          "FirstBucketBytes",
                                                          0,
                                                          uint64_t(1) << 40));
    return tid;
}

ResNetWorkloadBuilder::ResNetWorkloadBuilder()
    : m_depth(50),
      m_imageSize(224),
      m_classes(1000),
      m_batch(256),
      m_samplesPerSecond(2470),
      m_bytes(4),
      m_bucketBytes(25 << 20),
      m_firstBucketBytes(1 << 20)
{
}

ResNetWorkloadBuilder::~ResNetWorkloadBuilder() = default;

std::vector<ResNetWorkloadBuilder::Conv>
ResNetWorkloadBuilder::Layers() const
{
    std::vector<uint32_t> blocks;
    bool bottleneck = true;
    switch (m_depth)
    {
    case 18:
        blocks = {2, 2, 2, 2};
        bottleneck = false;
        break;
    case 34:
        blocks = {3, 4, 6, 3};
        bottleneck = false;
        break;
    case 50:
        blocks = {3, 4, 6, 3};
        break;
    case 101:
        blocks = {3, 4, 23, 3};
        break;
    case 152:
        blocks = {3, 8, 36, 3};
        break;
    default:
        NS_ABORT_MSG("ResNetWorkloadBuilder: Depth " << m_depth
                                                     << " is not a ResNet; use 18, 34, 50, 101 "
                                                        "or 152");
    }
    NS_ABORT_MSG_UNLESS(m_imageSize % 32 == 0,
                        "ResNetWorkloadBuilder: ImageSize " << m_imageSize
                                                            << " is not a multiple of 32 (the "
                                                               "network halves it five times)");
    std::vector<Conv> out;
    auto conv =
        [&out](const std::string& name, uint64_t k, uint64_t in, uint64_t outCh, uint64_t hw) {
            out.push_back({name, k * k * in * outCh + 2 * outCh, k * k * in * outCh * hw * hw});
        };
    uint64_t h = m_imageSize / 2; // conv1, stride 2
    conv("conv1", 7, 3, 64, h);
    h /= 2; // max pool
    uint64_t in = 64;
    const uint64_t expansion = bottleneck ? 4 : 1;
    for (uint32_t stage = 0; stage < blocks.size(); ++stage)
    {
        const uint64_t width = 64ull << stage;
        for (uint32_t b = 0; b < blocks[stage]; ++b)
        {
            const uint64_t stride = b == 0 && stage > 0 ? 2 : 1;
            const uint64_t hout = h / stride;
            const std::string prefix =
                "layer" + std::to_string(stage + 1) + "." + std::to_string(b) + ".";
            if (bottleneck)
            {
                conv(prefix + "conv1", 1, in, width, h);
                conv(prefix + "conv2", 3, width, width, hout); // v1.5: stride here
                conv(prefix + "conv3", 1, width, width * expansion, hout);
            }
            else
            {
                conv(prefix + "conv1", 3, in, width, hout);
                conv(prefix + "conv2", 3, width, width, hout);
            }
            if (b == 0 && (stride != 1 || in != width * expansion))
            {
                conv(prefix + "downsample", 1, in, width * expansion, hout);
            }
            in = width * expansion;
            h = hout;
        }
    }
    out.push_back({"fc", in * m_classes + m_classes, in * m_classes});
    return out;
}

uint64_t
ResNetWorkloadBuilder::GetParameters() const
{
    uint64_t p = 0;
    for (const Conv& c : Layers())
    {
        p += c.params;
    }
    return p;
}

uint64_t
ResNetWorkloadBuilder::GetForwardMacs() const
{
    uint64_t m = 0;
    for (const Conv& c : Layers())
    {
        m += c.macs;
    }
    return m;
}

TrainingWorkloadFile
ResNetWorkloadBuilder::Build(uint32_t gpus) const
{
    using W = TrainingWorkloadFile;
    const std::vector<Conv> layers = Layers();
    const double macs = static_cast<double>(GetForwardMacs());
    // The iteration's compute, in ns, shared by FLOPs: forward 1/3, backward 2/3.
    const double iterationNs = m_batch / m_samplesPerSecond * 1e9;
    std::vector<uint64_t> bucket(layers.size(), 0); // bytes allreduced at each layer
    uint64_t open = 0;
    bool first = true;
    for (std::size_t i = layers.size(); i-- > 0;)
    {
        open += layers[i].params * m_bytes;
        const uint64_t cap = first ? m_firstBucketBytes : m_bucketBytes;
        if (m_bucketBytes == 0 || open >= cap || i == 0)
        {
            bucket[i] = open;
            open = 0;
            first = false;
        }
    }
    W w;
    w.parallelism = W::Parallelism::DATA;
    w.allGpus = gpus;
    for (std::size_t i = 0; i < layers.size(); ++i)
    {
        const uint64_t t =
            static_cast<uint64_t>(std::llround(iterationNs * layers[i].macs / (3 * macs)));
        W::Layer l;
        l.name = layers[i].name;
        l.pass[W::FORWARD].compute = t;
        l.pass[W::INPUT_GRAD].compute = t;
        l.pass[W::WEIGHT_GRAD].compute = t;
        if (bucket[i] > 0)
        {
            l.pass[W::WEIGHT_GRAD].collective = W::Collective::ALLREDUCE;
            l.pass[W::WEIGHT_GRAD].bytes = bucket[i];
        }
        w.layers.push_back(l);
    }
    NS_LOG_INFO("ResNet-" << m_depth << ": " << layers.size() << " layers, " << GetParameters()
                          << " parameters, " << macs << " MACs per image");
    return w;
}

} // namespace ns3

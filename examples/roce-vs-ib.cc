/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * InfiniBand and RoCEv2 fabrics of the same shape under the same load: every host streams
 * RDMA WRITEs to its partner in a random permutation (the shape of an all-to-all step or of
 * a ring whose neighbours sit on different leaves), on a 2-level fat tree, and the program
 * prints the aggregate goodput of each fabric variant next to the InfiniBand one:
 *
 *   ib            IbSwitch, ftree routing (deterministic, one path per destination LID)
 *   roce-ecmp     EthSwitch, ECMP on the 5-tuple, one QP per pair (one UDP source port)
 *   roce-ecmp-qpN the pair's stream split over N QPs (N UDP source ports: more entropy)
 *   roce-spray    per-packet spraying over the ECMP group
 *   roce-adaptive per-packet least-queued port
 *   roce-qp16-pfc-only  16 QPs per pair, DCQCN off (PFC alone, as Meta runs its 400G RoCE)
 * all RoCE variants with PFC on the RoCE priority, ECN and DCQCN at their defaults.
 *
 *   ./roce-vs-ib                       128 hosts (radix 16), HDR, no oversubscription
 *   ./roce-vs-ib --oversubscription=2  the leaves' uplinks halved
 *   ./roce-vs-ib --hosts=32 --radix=8 --us=500 --seed=3
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// A saturating stream of WRITEs on one RC connection, two messages in flight.
struct Stream
{
    Ptr<IbQueuePair> qp;     ///< sender's QP
    Ptr<IbMemoryRegion> src; ///< local buffer
    Ptr<IbMemoryRegion> dst; ///< remote buffer
    uint32_t bytes{0};       ///< message size
    uint64_t done{0};        ///< bytes completed

    /// Post one WRITE.
    void Post()
    {
        qp->PostSend(src->WriteTo(*dst, bytes));
    }

    /// A WRITE completed: count it and post the next.
    /// @param wc the completion
    void Done(const IbWorkCompletion& wc)
    {
        if (wc.status == IbWcStatus::SUCCESS)
        {
            done += bytes;
        }
        Post();
    }
};

/// What one variant gave.
struct Outcome
{
    double goodput{0};  ///< aggregate, bit/s, over the measurement window
    uint64_t pauses{0}; ///< PFC frames received by switch and host ports
    uint64_t cnps{0};   ///< CNPs sent
    uint64_t drops{0};  ///< switch drops
};

/**
 * Run one variant.
 * @param topology the fabric's shape
 * @param kind "ib" or "roce"
 * @param lb EthSwitch LoadBalancing
 * @param qps queue pairs per host pair
 * @param dcqcn DCQCN on (RoCE)
 * @param warm warm-up time (not measured)
 * @param window measured time
 * @param seed permutation seed
 * @return the outcome
 */
Outcome
Run(const IbTopology& topology,
    const std::string& kind,
    const std::string& lb,
    uint32_t qps,
    bool dcqcn,
    Time warm,
    Time window,
    uint32_t seed)
{
    std::vector<Ptr<IbHca>> hcas;
    Ptr<IbSubnetManager> sm;
    EthFabric eth;
    if (kind == "ib")
    {
        IbFabricHelper fh;
        fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
        IbFabric f = fh.Build(topology);
        sm = f.subnetManager;
        hcas = IbHcaHelper().Install(f.hosts);
    }
    else
    {
        EthFabricHelper fh;
        fh.SetSwitchAttribute("LoadBalancing", StringValue(lb));
        fh.SetHcaAttribute("DcqcnEnabled", BooleanValue(dcqcn));
        eth = fh.Build(topology);
        hcas = eth.hcas;
    }
    const uint32_t n = static_cast<uint32_t>(hcas.size());
    std::vector<std::unique_ptr<Stream>> streams;
    for (const auto& [i, j] :
         IbTrafficPattern::RandomPermutation(n, IbTrafficPattern::ReplicationSeed(seed)))
    {
        if (i == j)
        {
            continue;
        }
        for (uint32_t q = 0; q < qps; ++q)
        {
            Ptr<IbCompletionQueue> cqa = hcas[i]->CreateCq();
            Ptr<IbCompletionQueue> cqb = hcas[j]->CreateCq();
            auto s = std::make_unique<Stream>();
            s->qp = hcas[i]->CreateQp(IbQpType::RC, cqa, cqa);
            Ptr<IbQueuePair> b = hcas[j]->CreateQp(IbQpType::RC, cqb, cqb);
            IbConnectionManager::ConnectRc(s->qp, b, sm, IbQpAttr());
            s->bytes = (1 << 20) / qps;
            s->src = hcas[i]->RegisterMemory(s->bytes, IB_ACCESS_LOCAL_WRITE);
            s->dst =
                hcas[j]->RegisterMemory(s->bytes, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
            cqa->SetCompletionCallback(MakeCallback(&Stream::Done, s.get()));
            s->Post();
            s->Post();
            streams.push_back(std::move(s));
        }
    }
    uint64_t before = 0;
    Simulator::Schedule(warm, [&]() {
        for (const auto& s : streams)
        {
            before += s->done;
        }
    });
    Simulator::Stop(warm + window);
    Simulator::Run();
    Outcome o;
    uint64_t after = 0;
    for (const auto& s : streams)
    {
        after += s->done;
    }
    o.goodput = (after - before) * 8.0 / window.GetSeconds();
    if (kind != "ib")
    {
        for (uint32_t k = 0; k < eth.devices.GetN(); ++k)
        {
            Ptr<EthNetDevice> d = DynamicCast<EthNetDevice>(eth.devices.Get(k));
            for (uint8_t p = 0; p < 8; ++p)
            {
                o.pauses += d->GetPfcFramesReceived(p);
            }
        }
        for (const Ptr<IbHca>& h : hcas)
        {
            o.cnps += h->GetCnpsSent();
        }
        for (const Ptr<EthSwitch>& sw : eth.ethSwitches)
        {
            for (uint8_t r = 0; r < EthSwitch::N_DROP_REASONS; ++r)
            {
                o.drops += sw->GetDropCount(static_cast<EthSwitch::DropReason>(r));
            }
        }
    }
    streams.clear();
    Simulator::Destroy();
    return o;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t hosts = 128;
    uint32_t radix = 16;
    double oversubscription = 1.0;
    std::string speed = "HDR";
    double us = 400;
    double warmUs = 100;
    uint32_t seed = 1;
    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "hosts", "hosts", hosts);
    IbOptions::Add(cmd, "radix", "switch radix", radix);
    IbOptions::Add(cmd,
                   "oversubscription",
                   "leaf down/up ratio (1: non-blocking)",
                   oversubscription);
    IbOptions::Add(cmd, "speed", "link speed (IB names; Ethernet at the same data rate)", speed);
    IbOptions::Add(cmd, "us", "measured simulated microseconds", us);
    IbOptions::Add(cmd, "warmUs", "warm-up microseconds (not measured)", warmUs);
    IbOptions::Add(cmd, "seed", "permutation seed", seed);
    cmd.Parse(argc, argv);
    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << ": use one of " << IbLinkRate::ValidSpeedNames());
    IB_REQUIRE(us > 0 && warmUs >= 0, "--us must be positive and --warmUs at least 0");
    const IbTopology t = IbTopologyBuilder::FatTree2Level(radix, hosts, oversubscription, s, 4);
    const double line = static_cast<double>(IbLinkRate::GetDataRate(s, 4).GetBitRate());
    std::cout << "# permutation of RC WRITE streams (1 MiB messages, 2 in flight), " << hosts
              << " hosts, 2-level fat tree radix " << radix << ", oversubscription "
              << oversubscription << ", " << line / 1e9 << " Gb/s links, seed " << seed << "\n";
    std::cout << std::left << std::setw(20) << "variant" << std::right << std::setw(16)
              << "goodput (Gb/s)" << std::setw(12) << "per host" << std::setw(10) << "vs ib"
              << std::setw(12) << "PFC frames" << std::setw(10) << "CNPs" << std::setw(8) << "drops"
              << "\n";

    struct Variant
    {
        std::string name;
        std::string kind;
        std::string lb;
        uint32_t qps;
        bool dcqcn;
    };

    const std::vector<Variant> variants{{"ib", "ib", "", 1, false},
                                        {"roce-ecmp", "roce", "Ecmp", 1, true},
                                        {"roce-ecmp-qp4", "roce", "Ecmp", 4, true},
                                        {"roce-ecmp-qp16", "roce", "Ecmp", 16, true},
                                        {"roce-qp16-pfc-only", "roce", "Ecmp", 16, false},
                                        {"roce-spray", "roce", "Spray", 1, true},
                                        {"roce-adaptive", "roce", "Adaptive", 1, true}};
    double ib = 0;
    for (const Variant& v : variants)
    {
        const Outcome o =
            Run(t, v.kind, v.lb, v.qps, v.dcqcn, MicroSeconds(warmUs), MicroSeconds(us), seed);
        if (v.kind == "ib")
        {
            ib = o.goodput;
        }
        std::cout << std::left << std::setw(20) << v.name << std::right << std::fixed
                  << std::setprecision(1) << std::setw(16) << o.goodput / 1e9 << std::setw(12)
                  << o.goodput / 1e9 / hosts << std::setw(9) << std::setprecision(3)
                  << o.goodput / ib << "x" << std::setw(12) << o.pauses << std::setw(10) << o.cnps
                  << std::setw(8) << o.drops << "\n";
    }
    return 0;
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * RoCEv2 fabric acceptance tests: DCQCN fairness on one bottleneck, PFC head-of-line
 * blocking of a victim flow and its cure by DCQCN, and ECMP hash collisions against QP
 * entropy on a two-level Clos.
 */

#include "ns3/core-module.h"
#include "ns3/eth-fabric-helper.h"
#include "ns3/eth-frame.h"
#include "ns3/eth-net-device.h"
#include "ns3/eth-switch.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-connection-manager.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-topology.h"
#include "ns3/ib-verbs.h"
#include "ns3/network-module.h"
#include "ns3/roce-packet.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <vector>

using namespace ns3;

namespace
{

class RoceFabricTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        RngSeedManager::SetSeed(7);
        RngSeedManager::SetRun(1);
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// Bytes of an MTU-sized RoCEv2 WRITE frame on the wire besides its 4096-byte payload:
/// Ethernet (14) + IPv4 (20) + UDP (8) + BTH (12) + ICRC (4) + FCS (4) + preamble and SFD
/// (8) + inter-frame gap (12).
constexpr double kOverhead = 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12;
/// The path MTU of the queue pairs (IbQpAttr default).
constexpr double kMtu = 4096;
/// Goodput per bit/s of link rate of a long WRITE: payload / wire bytes.
constexpr double kEfficiency = kMtu / (kMtu + kOverhead);
/// A message longer than any run here: the flows never end.
constexpr uint64_t kLongMessage = 1ULL << 31;

/**
 * A star: one switch, hosts 0..n-1 on its ports 1..n, EDR (100 Gb/s) links.
 * @param hosts the number of hosts
 * @return the topology
 */
IbTopology
Star(uint32_t hosts)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(hosts, "sw");
    for (uint32_t h = 0; h < hosts; ++h)
    {
        const uint32_t ca = t.AddCa(1, "h" + std::to_string(h));
        t.ConnectNextFree(ca, sw, IbLinkRate::EDR, 4);
    }
    return t;
}

/// One RC connection with a source and a destination region, and a never-ending WRITE.
struct Flow
{
    Ptr<IbQueuePair> qp[2];       ///< requester, responder
    Ptr<IbCompletionQueue> cq[2]; ///< their CQs
    Ptr<IbMemoryRegion> src;      ///< source region
    Ptr<IbMemoryRegion> dst;      ///< destination region
};

/**
 * Connect an RC pair from @p a to @p b and post one WRITE of kLongMessage bytes.
 * @param a the sender
 * @param b the receiver
 * @return the flow
 */
Flow
StartFlow(Ptr<IbHca> a, Ptr<IbHca> b)
{
    Flow c;
    c.cq[0] = a->CreateCq();
    c.cq[1] = b->CreateCq();
    c.qp[0] = a->CreateQp(IbQpType::RC, c.cq[0], c.cq[0]);
    c.qp[1] = b->CreateQp(IbQpType::RC, c.cq[1], c.cq[1]);
    IbQpAttr base;
    base.timeout = 14; // 67 ms: longer than any run, so nothing times out (lossless)
    IbConnectionManager::ConnectRc(c.qp[0], c.qp[1], nullptr, base);
    c.src = a->RegisterMemory(kLongMessage, IB_ACCESS_LOCAL_WRITE);
    c.dst = b->RegisterMemory(kLongMessage, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    NS_ABORT_UNLESS(
        c.qp[0]->PostSend(c.src->WriteTo(*c.dst, static_cast<uint32_t>(kLongMessage), 1)));
    return c;
}

/**
 * Payload bytes a flow's responder has received (every request packet of a long WRITE
 * carries one path MTU).
 * @param f the flow
 * @return bytes
 */
double
Received(const Flow& f)
{
    return f.qp[1]->GetCounters().packetsReceived * kMtu;
}

/**
 * Goodput of each flow between @p from and @p to (bit/s): the simulation runs to @p to.
 * @param flows the flows
 * @param from the window's start
 * @param to its end
 * @return one goodput per flow
 */
std::vector<double>
MeasureGoodput(const std::vector<Flow>& flows, Time from, Time to)
{
    std::vector<double> start(flows.size());
    Simulator::Schedule(from - Simulator::Now(), [&]() {
        for (size_t i = 0; i < flows.size(); ++i)
        {
            start[i] = Received(flows[i]);
        }
    });
    Simulator::Stop(to - Simulator::Now());
    Simulator::Run();
    std::vector<double> rate(flows.size());
    for (size_t i = 0; i < flows.size(); ++i)
    {
        rate[i] = (Received(flows[i]) - start[i]) * 8 / (to - from).GetSeconds();
    }
    return rate;
}

/**
 * DCQCN and ECN settings that converge within a millisecond at 100 Gb/s (the NIC defaults,
 * a 300 us increase timer, a 5 Mb/s additive step and a 32 KB byte counter, take tens of
 * milliseconds and favour fast flows through the byte counter). Rates recover on the
 * timer alone (byte counter 100 MB: never reached), every 5 us by 100 Mb/s; g = 1/8 makes
 * alpha follow the congestion within a few cuts; the CNP interval and the least time
 * between cuts are the firmware's 4 us. ECN: Kmin 20 KB, Kmax 100 KB, Pmax 0.1.
 */
struct DcqcnSettings
{
    double g{1.0 / 8};      ///< DcqcnGain
    double alphaPeriod{1};  ///< DcqcnAlphaPeriod, us (the default)
    double cnpInterval{4};  ///< CnpInterval and DcqcnRateReducePeriod, us
    double timer{5};        ///< DcqcnIncreaseTimer, us
    double additive{100e6}; ///< DcqcnAdditiveIncrease, bit/s
    double minRate{1e9};    ///< DcqcnMinRate, bit/s
    uint32_t kmin{20000};   ///< EcnKmin
    uint32_t kmax{100000};  ///< EcnKmax
    double pmax{0.1};       ///< EcnPmax

    /**
     * Set the attributes on @p helper.
     * @param helper the helper
     */
    void Apply(EthFabricHelper& helper) const
    {
        helper.SetHcaAttribute("DcqcnEnabled", BooleanValue(true));
        helper.SetHcaAttribute("DcqcnGain", DoubleValue(g));
        helper.SetHcaAttribute("DcqcnAlphaPeriod", TimeValue(MicroSeconds(alphaPeriod)));
        helper.SetHcaAttribute("CnpInterval", TimeValue(MicroSeconds(cnpInterval)));
        helper.SetHcaAttribute("DcqcnRateReducePeriod", TimeValue(MicroSeconds(cnpInterval)));
        helper.SetHcaAttribute("DcqcnIncreaseTimer", TimeValue(MicroSeconds(timer)));
        helper.SetHcaAttribute("DcqcnByteCounter", UintegerValue(100000000));
        helper.SetHcaAttribute("DcqcnAdditiveIncrease", DataRateValue(DataRate(additive)));
        helper.SetHcaAttribute("DcqcnMinRate", DataRateValue(DataRate(minRate)));
        helper.SetSwitchAttribute("EcnKmin", UintegerValue(kmin));
        helper.SetSwitchAttribute("EcnKmax", UintegerValue(kmax));
        helper.SetSwitchAttribute("EcnPmax", DoubleValue(pmax));
    }
};

/// The times of the CNPs a port sent, per destination (address, QP).
struct CnpRecorder
{
    /// (destination IPv4 address, destination QP) -> send times
    std::map<std::pair<uint32_t, uint32_t>, std::vector<Time>> at;

    /**
     * A frame was queued on the port.
     * @param p the frame
     */
    void Tx(Ptr<const Packet> p)
    {
        uint8_t h[RocePacket::BTH_OFFSET + 12];
        if (p->GetSize() < sizeof(h))
        {
            return;
        }
        p->CopyData(h, sizeof(h));
        const uint8_t* bth = h + RocePacket::BTH_OFFSET;
        if (bth[0] != RocePacket::CNP_OPCODE)
        {
            return;
        }
        const uint32_t qp = (uint32_t(bth[5]) << 16) | (uint32_t(bth[6]) << 8) | bth[7];
        const uint8_t* ip = h + EthFrame::HEADER_SIZE + 16;
        const uint32_t dst =
            (uint32_t(ip[0]) << 24) | (uint32_t(ip[1]) << 16) | (uint32_t(ip[2]) << 8) | ip[3];
        at[{dst, qp}].push_back(Simulator::Now());
    }
};

} // namespace

// DCQCN fairness: n = 2, then 8 senders into one receiver through one switch (the
// bottleneck is the receiver's 100 Gb/s link), PFC on, ECN + DCQCN on.
//
// Expected per-flow goodput: the fair share C x kEfficiency / n. Bound: after convergence
// every flow recovers on the same timer cadence (the byte counter is out of play), so two
// flows differ only by where they are in their own cut/recover cycle, and one cut takes at
// most alpha_max / 2 of a rate. alpha rises by g at a cut and otherwise decays by (1 - g) per
// AlphaPeriod; with cuts at most one per RateReducePeriod tau (here = CnpInterval) it cannot
// exceed alpha_max = g / (1 - (1 - g)^(tau / AlphaPeriod)) = 0.125 / (1 - 0.875^4) = 0.302.
// Each flow's window average is therefore within alpha_max / 2 = 15.1 % of the fair share,
// and so is the aggregate of the link rate (the queue drains at most once per cycle).
TEST_F(RoceFabricTest, DcqcnSharesOneBottleneckFairly)
{
    const DcqcnSettings dcqcn;
    const double alphaMax =
        dcqcn.g / (1 - std::pow(1 - dcqcn.g, dcqcn.cnpInterval / dcqcn.alphaPeriod));
    ASSERT_NEAR(alphaMax, 0.302, 0.001);
    const double bound = alphaMax / 2;
    const double link = 100e9 * kEfficiency;
    for (uint32_t n : {2U, 8U})
    {
        EthFabricHelper helper;
        dcqcn.Apply(helper);
        EthFabric f = helper.Build(Star(n + 1));
        std::vector<Flow> flows;
        for (uint32_t s = 1; s <= n; ++s)
        {
            flows.push_back(StartFlow(f.hcas[s], f.hcas[0]));
        }
        // Every sender's Rc, every 500 ns.
        double lowest = 1e300;
        std::function<void()> sample = [&]() {
            for (const Flow& c : flows)
            {
                lowest = std::min(lowest, c.qp[0]->GetRateControl().GetRate());
            }
            Simulator::Schedule(NanoSeconds(500), sample);
        };
        Simulator::Schedule(NanoSeconds(500), sample);
        // The CNPs the receiver's port sends, per destination QP.
        CnpRecorder cnps;
        f.hcas[0]->GetEthPort(1)->TraceConnectWithoutContext("MacTx",
                                                             MakeCallback(&CnpRecorder::Tx, &cnps));
        // Converged after 2 ms (the incast's first cuts and the recovery from them take
        // about 1 ms); measure over the next 8 ms.
        const Time from = MilliSeconds(2);
        const Time to = MilliSeconds(10);
        const std::vector<double> rate = MeasureGoodput(flows, from, to);
        const double fair = link / n;
        double sum = 0;
        for (uint32_t i = 0; i < n; ++i)
        {
            EXPECT_NEAR(rate[i] / fair, 1.0, bound) << "n " << n << " flow " << i;
            sum += rate[i];
        }
        EXPECT_NEAR(sum / link, 1.0, bound) << "n " << n;
        EXPECT_GT(f.ethSwitches[0]->GetEcnMarks(), 0U);
        EXPECT_EQ(f.ethSwitches[0]->GetDropCount(EthSwitch::HEADROOM_OVERFLOW), 0U);
        // At most one CNP per CnpInterval per QP: by count over the run, and between every
        // two consecutive CNPs of a QP.
        const Time interval = MicroSeconds(dcqcn.cnpInterval);
        uint64_t total = 0;
        for (const Flow& c : flows)
        {
            const uint64_t sent = c.qp[1]->GetCounters().cnpsSent;
            EXPECT_GT(sent, 0U);
            EXPECT_LE(sent,
                      1 + static_cast<uint64_t>(to.GetPicoSeconds() / interval.GetPicoSeconds()));
            total += sent;
            const uint32_t sender = f.Address(&c - flows.data() + 1).Get();
            const std::vector<Time>& at = cnps.at[{sender, c.qp[0]->GetQpNum()}];
            EXPECT_EQ(at.size(), sent);
            for (size_t k = 1; k < at.size(); ++k)
            {
                EXPECT_GE(at[k] - at[k - 1], interval) << "QP " << c.qp[0]->GetQpNum();
            }
        }
        EXPECT_EQ(total, f.hcas[0]->GetCnpsSent());
        // No rate below DcqcnMinRate, and the incast's first cuts do reach it (so the
        // floor is what holds the rates up).
        EXPECT_GE(lowest, dcqcn.minRate);
        if (n == 8)
        {
            EXPECT_LE(lowest, dcqcn.minRate * 1.0001) << "the floor was never reached";
        }
        std::cout << "n " << n << " goodput (Gb/s):";
        for (double r : rate)
        {
            std::cout << " " << r / 1e9;
        }
        std::cout << " fair " << fair / 1e9 << " lowest Rc " << lowest / 1e9 << std::endl;
        Simulator::Destroy();
    }
}

namespace
{

/// The hosts of the head-of-line blocking fabric (indices into EthFabric::hcas).
struct HolFabric
{
    EthFabric f;   ///< the fabric
    uint32_t a1;   ///< incast sender on s1
    uint32_t x;    ///< victim sender on s1
    uint32_t b[3]; ///< incast senders on s2
    uint32_t r;    ///< incast receiver on s2
    uint32_t v;    ///< victim receiver on s2
};

/**
 * Two switches joined by one cable: s1 holds incast sender A1 and victim sender X, s2
 * holds incast senders B1..B3, the incast receiver R and the victim receiver V; every link
 * EDR (100 Gb/s).
 * @param helper the helper (attributes set)
 * @return the fabric and its hosts
 */
HolFabric
BuildHolFabric(const EthFabricHelper& helper)
{
    IbTopology t;
    const uint32_t s1 = t.AddSwitch(3, "s1");
    const uint32_t s2 = t.AddSwitch(6, "s2");
    t.ConnectNextFree(s1, s2, IbLinkRate::EDR, 4);
    std::vector<std::pair<std::string, uint32_t>> cas =
        {{"a1", s1}, {"x", s1}, {"b1", s2}, {"b2", s2}, {"b3", s2}, {"r", s2}, {"v", s2}};
    std::map<uint32_t, std::string> names;
    for (const auto& [name, sw] : cas)
    {
        const uint32_t ca = t.AddCa(1, name);
        t.ConnectNextFree(ca, sw, IbLinkRate::EDR, 4);
        names[ca] = name;
    }
    HolFabric h;
    h.f = helper.Build(t);
    for (uint32_t i = 0; i < h.f.GetNHosts(); ++i)
    {
        const std::string& n = names.at(h.f.topologyIndex[i]);
        if (n == "a1")
        {
            h.a1 = i;
        }
        else if (n == "x")
        {
            h.x = i;
        }
        else if (n == "r")
        {
            h.r = i;
        }
        else if (n == "v")
        {
            h.v = i;
        }
        else
        {
            h.b[n[1] - '1'] = i;
        }
    }
    return h;
}

/**
 * The victim's goodput: X to V alone, or with the incast A1, B1..B3 to R running.
 * @param helper the helper
 * @param incast whether the incast runs
 * @param from the measurement window's start
 * @param to its end
 * @return the victim's goodput, bit/s, then the incast flows' goodputs
 */
std::vector<double>
RunHol(const EthFabricHelper& helper, bool incast, Time from, Time to)
{
    HolFabric h = BuildHolFabric(helper);
    std::vector<Flow> flows;
    flows.push_back(StartFlow(h.f.hcas[h.x], h.f.hcas[h.v]));
    if (incast)
    {
        flows.push_back(StartFlow(h.f.hcas[h.a1], h.f.hcas[h.r]));
        for (uint32_t b : h.b)
        {
            flows.push_back(StartFlow(h.f.hcas[b], h.f.hcas[h.r]));
        }
    }
    std::vector<double> r = MeasureGoodput(flows, from, to);
    Simulator::Destroy();
    return r;
}

} // namespace

TEST_F(RoceFabricTest, PfcHeadOfLineBlocksAVictimAndDcqcnFreesIt)
{
    const Time from = MicroSeconds(500);
    const Time to = MilliSeconds(3);
    EthFabricHelper off;
    off.SetHcaAttribute("DcqcnEnabled", BooleanValue(false));
    off.SetSwitchAttribute("BufferSize", UintegerValue(1 << 20));
    const std::vector<double> alone = RunHol(off, false, from, to);
    const std::vector<double> blocked = RunHol(off, true, from, to);
    EthFabricHelper on;
    on.SetSwitchAttribute("BufferSize", UintegerValue(1 << 20));
    DcqcnSettings().Apply(on);
    const std::vector<double> freed = RunHol(on, true, from, to);
    const double link = 100e9 * kEfficiency;
    // Alone, the victim has its link: C x kEfficiency (pacing-free, lossless).
    EXPECT_NEAR(alone[0] / link, 1.0, 0.005);
    // PFC only. s2 drains R's egress FIFO at C and pauses each of its m + 1 = 4 ingress
    // ports (B1..B3 and the cable from s1) at the same dynamic threshold, so each ingress
    // gets C / (m + 1) of it. The cable from s1 therefore carries k = 1 incast flow at
    // C / 4; when s2 pauses it, s1's egress FIFO toward s2 fills and s1 pauses its k + 1 = 2
    // ingress ports (A1 and X) alike, so X gets as much of the cable as A1:
    // C / (k (m + 1)) = C / 4, though V's link is idle. 5 % covers the XON offset and
    // headroom granularity of the on/off pausing.
    const double victimShare = link / (1 * (3 + 1));
    EXPECT_NEAR(blocked[0] / victimShare, 1.0, 0.05);
    for (size_t i = 1; i < blocked.size(); ++i)
    {
        EXPECT_NEAR(blocked[i] / victimShare, 1.0, 0.05) << "incast flow " << i;
    }
    // DCQCN on: the incast senders slow down at R's queue before PFC spreads, and the
    // victim gets back at least 40 % of its uncongested rate (max-min would give it
    // C - C / 4 = 75 %; DCQCN's cuts at s1's queue when it briefly backs up keep it lower).
    EXPECT_GE(freed[0] / alone[0], 0.4);
    EXPECT_GT(freed[0], 1.6 * blocked[0]);
    std::cout << "victim goodput (Gb/s): alone " << alone[0] / 1e9 << ", PFC only "
              << blocked[0] / 1e9 << " (expected " << victimShare / 1e9 << "), DCQCN "
              << freed[0] / 1e9 << std::endl;
}

namespace
{

/// Which links each flow crossed, seen on the switches' ports.
struct PathRecorder
{
    /// flow (source address, UDP source port) -> the set of (switch, port) it left by
    std::map<std::pair<uint32_t, uint16_t>, std::set<std::pair<uint32_t, uint8_t>>> links;

    /**
     * A frame was queued on a switch port.
     * @param sw the switch index
     * @param port the port
     * @param p the frame
     */
    void Tx(uint32_t sw, uint8_t port, Ptr<const Packet> p)
    {
        uint8_t h[36];
        if (p->GetSize() < 1000)
        {
            return; // ACKs, CNPs, PFC: only the data frames of the flows count
        }
        p->CopyData(h, sizeof(h));
        if (h[12] != 0x08 || h[13] != 0x00 || h[23] != 17)
        {
            return; // not IPv4/UDP (PFC)
        }
        const uint32_t src =
            (uint32_t(h[26]) << 24) | (uint32_t(h[27]) << 16) | (uint32_t(h[28]) << 8) | h[29];
        const uint16_t sport = (uint16_t(h[34]) << 8) | h[35];
        links[{src, sport}].insert({sw, port});
    }
};

/**
 * Max-min fair rates (water filling): every link has capacity @p capacity.
 * @param paths each flow's links (any key per link)
 * @param capacity link capacity
 * @return each flow's rate
 */
std::vector<double>
MaxMinRates(const std::vector<std::set<std::pair<uint32_t, uint32_t>>>& paths, double capacity)
{
    const size_t n = paths.size();
    std::vector<double> rate(n, 0);
    std::vector<bool> frozen(n, false);
    std::map<std::pair<uint32_t, uint32_t>, double> left;
    for (const auto& p : paths)
    {
        for (const auto& l : p)
        {
            left[l] = capacity;
        }
    }
    size_t done = 0;
    while (done < n)
    {
        // The most constrained link: least capacity left per unfrozen flow.
        double share = 1e300;
        std::pair<uint32_t, uint32_t> worst;
        for (const auto& [l, c] : left)
        {
            uint32_t users = 0;
            for (size_t i = 0; i < n; ++i)
            {
                users += (!frozen[i] && paths[i].count(l)) ? 1 : 0;
            }
            if (users > 0 && c / users < share)
            {
                share = c / users;
                worst = l;
            }
        }
        // Every unfrozen flow gets the share; those on the worst link freeze there.
        for (size_t i = 0; i < n; ++i)
        {
            if (frozen[i])
            {
                continue;
            }
            rate[i] += share;
            for (const auto& l : paths[i])
            {
                left[l] -= share;
            }
        }
        for (size_t i = 0; i < n; ++i)
        {
            if (!frozen[i] && paths[i].count(worst))
            {
                frozen[i] = true;
                ++done;
            }
        }
    }
    return rate;
}

/// Result of one permutation run on the Clos.
struct ClosResult
{
    double measured{0}; ///< aggregate goodput, bit/s
    double expected{0}; ///< max-min aggregate goodput of the flows' actual paths
    size_t flows{0};    ///< data flows seen on the switches' ports
};

/**
 * A permutation on FatTree2Level(8, 16): host i sends to host (i + 4) mod 16 (the next
 * leaf) over @p qps queue pairs.
 * @param helper the helper
 * @param qps queue pairs per host pair
 * @param from window start
 * @param to window end
 * @return measured and expected aggregate
 */
ClosResult
RunPermutation(const EthFabricHelper& helper, uint32_t qps, Time from, Time to)
{
    const uint32_t hosts = 16;
    EthFabric f = helper.Build(IbTopologyBuilder::FatTree2Level(8, hosts));
    PathRecorder rec;
    for (uint32_t s = 0; s < f.ethSwitches.size(); ++s)
    {
        Ptr<EthSwitch> sw = f.ethSwitches[s];
        for (uint8_t p = 1; p <= sw->GetNPorts(); ++p)
        {
            sw->GetPort(p)->TraceConnectWithoutContext(
                "MacTx",
                MakeCallback(&PathRecorder::Tx, &rec).Bind(s, p));
        }
    }
    std::vector<Flow> flows;
    for (uint32_t i = 0; i < hosts; ++i)
    {
        for (uint32_t q = 0; q < qps; ++q)
        {
            flows.push_back(StartFlow(f.hcas[i], f.hcas[(i + 4) % hosts]));
        }
    }
    std::vector<double> r = MeasureGoodput(flows, from, to);
    ClosResult res;
    for (double x : r)
    {
        res.measured += x;
    }
    // Links: a host's own cable (key host, 0xffff), then every (switch, port) it left by.
    std::vector<std::set<std::pair<uint32_t, uint32_t>>> paths;
    for (const auto& [flow, ports] : rec.links)
    {
        std::set<std::pair<uint32_t, uint32_t>> p;
        p.insert({flow.first, 0xffff});
        for (const auto& [sw, port] : ports)
        {
            p.insert({sw, port});
        }
        paths.push_back(p);
    }
    for (double x : MaxMinRates(paths, 100e9 * kEfficiency))
    {
        res.expected += x;
    }
    res.flows = paths.size();
    return res;
}

} // namespace

TEST_F(RoceFabricTest, EcmpCollisionsLimitSingleQpFlowsAndQpEntropyRaisesThroughput)
{
    const Time from = MicroSeconds(500);
    const Time to = MilliSeconds(2);
    // Single QP per pair, PFC only: a leaf uplink carrying j flows gives each C / j (the
    // leaf pauses the j hosts' ingress ports alike), spine down-links carry the same flows as
    // the uplink they come from (host i on leaf l sends to leaf l + 1), so max-min fair
    // rates of the actual paths are the expected rates. 2 % covers pause granularity.
    EthFabricHelper helper;
    // A window that never binds (ACKs queue behind data on congested uplinks: with the
    // default 256 packets a flow's rate would be window / RTT, not its max-min share),
    // and a 4 MiB buffer so that PFC, not the window, bounds the queues.
    helper.SetHcaAttribute("MaxOutstandingPackets", UintegerValue(4096));
    helper.SetSwitchAttribute("BufferSize", UintegerValue(4 << 20));
    helper.SetHcaAttribute("DcqcnEnabled", BooleanValue(false));
    const ClosResult single = RunPermutation(helper, 1, from, to);
    Simulator::Destroy();
    ASSERT_EQ(single.flows, 16U);
    const double link = 100e9 * kEfficiency;
    // The hash collides somewhere (else this test shows nothing) ...
    ASSERT_LT(single.expected, 16 * link * 0.99);
    // ... and the measured aggregate is the max-min aggregate of the actual paths.
    EXPECT_NEAR(single.measured / single.expected, 1.0, 0.02);
    // Eight QPs per pair (distinct UDP source ports) spread each pair over the uplinks.
    const ClosResult multiPfc = RunPermutation(helper, 8, from, to);
    Simulator::Destroy();
    ASSERT_EQ(multiPfc.flows, 128U);
    EXPECT_GT(multiPfc.measured, 1.05 * single.measured);
    // With DCQCN, the QPs on a shared uplink slow down instead of pausing their host's
    // other QPs: closer to the max-min aggregate of the 128 paths.
    EthFabricHelper dcqcn = helper;
    DcqcnSettings().Apply(dcqcn);
    const ClosResult multi = RunPermutation(dcqcn, 8, from, to);
    EXPECT_GT(multi.measured, 1.3 * single.measured);
    EXPECT_GE(multi.measured / multi.expected, 0.85);
    std::cout << "aggregate (Gb/s): 1 QP " << single.measured / 1e9 << " (max-min "
              << single.expected / 1e9 << "), 8 QPs PFC " << multiPfc.measured / 1e9
              << ", 8 QPs DCQCN " << multi.measured / 1e9 << " (max-min " << multi.expected / 1e9
              << ")" << std::endl;
}

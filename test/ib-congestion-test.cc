/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * InfiniBand congestion control (IBA annex A10): FECN marking on the wire, the congestion
 * control table, the CCTI arithmetic of the reaction point (alone and in a fabric), and the
 * victim flow of an incast, head-of-line blocked without congestion control and freed with it.
 */

#include "ns3/core-module.h"
#include "ns3/ib-ca-congestion-setting.h"
#include "ns3/ib-cc-rate-control.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-crc.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet-parser.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <vector>

using namespace ns3;

namespace
{

class IbCongestionTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// A message longer than any run here: the flows never end.
constexpr uint64_t kLongMessage = 1ULL << 31;
/// Path MTU of the queue pairs.
constexpr double kMtu = 4096;
/// Bytes of a middle WRITE packet besides its payload: LRH 8, BTH 12, ICRC 4, VCRC 2.
constexpr double kOverhead = 8 + 12 + 4 + 2;
/// EDR 4x data rate, bit/s.
constexpr double kEdr = 100e9;

} // namespace

TEST(IbCongestionWire, FecnIsSetInPlaceAndBothCrcsStillHold)
{
    for (bool global : {false, true})
    {
        Ptr<Packet> p = Create<Packet>(1000);
        IbLrhHeader lrh;
        lrh.SetVl(0);
        lrh.SetSl(3);
        lrh.SetDlid(7);
        lrh.SetSlid(9);
        IbBthHeader bth;
        bth.SetOpcode(IbOpcode::RC_RDMA_WRITE_MIDDLE);
        bth.SetDestQp(0x123456);
        bth.SetPsn(42);
        bth.SetBecn(true); // the mark must leave the neighbouring BECN bit alone
        IbGrhHeader grh;
        IbPacket::Seal(p, lrh, global ? &grh : nullptr, bth, 1000);
        const uint32_t head = IbPacket::PeekHead(*p);
        EXPECT_TRUE(IbPacket::SetFecn(p, head));
        EXPECT_FALSE(IbPacket::SetFecn(p, head)) << "a marked packet is marked once";
        std::vector<uint8_t> bytes(p->GetSize());
        p->CopyData(bytes.data(), bytes.size());
        IbPacketParser parser;
        std::string error;
        ASSERT_TRUE(parser.Parse(bytes.data(), bytes.size(), &error)) << error;
        EXPECT_TRUE(parser.m_bth.GetFecn());
        EXPECT_TRUE(parser.m_bth.GetBecn());
        EXPECT_EQ(parser.m_bth.GetPsn(), 42u);
        // The VCRC covers everything up to itself: recompute it from the bytes.
        const uint32_t n = bytes.size();
        const uint16_t vcrc = IbCrc::ComputeVcrc(bytes.data(), n - 2);
        EXPECT_EQ(vcrc, uint16_t(bytes[n - 2] | (bytes[n - 1] << 8)));
    }
    // A raw packet has no BTH: nothing to mark.
    Ptr<Packet> raw = Create<Packet>(100);
    IbLrhHeader lrh;
    lrh.SetDlid(3);
    IbPacket::SealRaw(raw, lrh, 0x0800);
    EXPECT_FALSE(IbPacket::SetFecn(raw, IbPacket::PeekHead(*raw)));
}

TEST(IbCongestionTable, DefaultTableAndOpenSmSyntax)
{
    const std::vector<uint16_t> d = IbCaCongestionSetting::DefaultCct();
    ASSERT_EQ(d.size(), 128u);
    // (3, floor(7 i^2 / (106^2 x 0.218))): multiplier 0 up to i = 18, 1 from 19, 24 from 92,
    // 46 at 127.
    const uint16_t shift3 = 3 << 14;
    EXPECT_EQ(d[18], shift3 | 0);
    EXPECT_EQ(d[19], shift3 | 1);
    EXPECT_EQ(d[91], shift3 | 23);
    EXPECT_EQ(d[92], shift3 | 24);
    EXPECT_EQ(d[127], shift3 | 46);
    const std::vector<uint16_t> m = IbCaCongestionSetting::CoarseCct();
    // (0, floor(7 i^2 / (95^2 x 0.218))): 0 up to i = 16, 1 from 17, 3 from 30, 57 at 127.
    EXPECT_EQ(m[16], 0);
    EXPECT_EQ(m[17], 1);
    EXPECT_EQ(m[29], 2);
    EXPECT_EQ(m[30], 3);
    EXPECT_EQ(m[127], 57);
    EXPECT_EQ(IbCaCongestionSetting::ParseCct("mellanox", "t"), m);
    EXPECT_EQ(IbCaCongestionSetting::ParseCct("default", "t"), d);
    const std::vector<uint16_t> t = IbCaCongestionSetting::ParseCct("0:0, 1:3,3:16383", "t");
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[1], (1 << 14) | 3);
    EXPECT_DOUBLE_EQ(IbCaCongestionSetting::DelayFactor(t[1]), 1.5);
    EXPECT_DOUBLE_EQ(IbCaCongestionSetting::DelayFactor(t[2]), 16383.0 / 8);
    EXPECT_DEATH(IbCaCongestionSetting::ParseCct("0:0,4:1", "CcCct"),
                 "CcCct: entry 1 \"4:1\" of the congestion control table is not shift:mult");
    EXPECT_DEATH(IbCaCongestionSetting::ParseCct("0:0,,1:1", "CcCct"), "entry 1 \"\"");
    EXPECT_DEATH(IbCaCongestionSetting::ParseCct("0:16384", "CcCct"), "multiplier 0..16383");
}

// The reaction point alone, driven by BECNs at chosen times: every step of the CCTI is the
// spec's arithmetic, and the pacing gap is the packet time times (1 + the entry's factor).
TEST_F(IbCongestionTest, CctiRisesPerBecnFallsPerTimerBetweenFloorAndLimit)
{
    IbCaCongestionSetting s;
    s.cctiIncrease = 3;
    s.cctiMin = 2;
    s.cctiTimer = MicroSeconds(10);
    for (uint16_t i = 0; i < 10; ++i)
    {
        s.cct.push_back(IbCaCongestionSetting::Entry(i % 2, i)); // (i % 2, i): 1 + i / 2^(i%2)
    }
    IbCcRateControl cc;
    std::vector<std::pair<Time, uint16_t>> seen;
    cc.SetCctiCallback(Callback<void, uint16_t, uint16_t>(
        [&](uint16_t, uint16_t now) { seen.emplace_back(Simulator::Now(), now); }));
    cc.Init(&s, 1e9);
    EXPECT_EQ(cc.GetCcti(), 2); // starts at the floor
    // BECNs at 1, 2 and 3 us: 2 -> 5 -> 8 -> 9 (the limit, 9, caps 11). The timer starts at
    // the first (due at 11 us) and is periodic: 9 -> 8 at 11, 7 at 21, a BECN at 25 us
    // raises 7 -> 9 without restarting it, then 8 at 31, 7 at 41 ... 2 at 91, where it stops.
    for (double t : {1.0, 2.0, 3.0, 25.0})
    {
        Simulator::Schedule(MicroSeconds(t), [&cc]() { cc.ReceiveBecn(); });
    }
    // Pacing at 22 us (CCTI 7, entry (1, 7): factor 3.5): 1000 bytes take 8 us on the wire at
    // 1 Gb/s, so the next may leave 8 x 4.5 = 36 us later.
    Time next;
    Simulator::Schedule(MicroSeconds(22), [&]() {
        cc.NotifySent(1000);
        next = cc.NextTransmitTime();
    });
    Simulator::Run();
    const std::vector<std::pair<double, uint16_t>> expected = {{1, 5},
                                                               {2, 8},
                                                               {3, 9},
                                                               {11, 8},
                                                               {21, 7},
                                                               {25, 9},
                                                               {31, 8},
                                                               {41, 7},
                                                               {51, 6},
                                                               {61, 5},
                                                               {71, 4},
                                                               {81, 3},
                                                               {91, 2}};
    ASSERT_EQ(seen.size(), expected.size());
    for (size_t i = 0; i < seen.size(); ++i)
    {
        EXPECT_EQ(seen[i].first, MicroSeconds(expected[i].first)) << "step " << i;
        EXPECT_EQ(seen[i].second, expected[i].second) << "step " << i;
    }
    EXPECT_EQ(cc.GetCcti(), 2);
    EXPECT_EQ(cc.GetBecns(), 4u);
    EXPECT_EQ(next, MicroSeconds(22 + 36));
    EXPECT_DOUBLE_EQ(cc.GetRate(), 1e9 / (1 + 2.0)); // entry (0, 2) at the floor
}

namespace
{

/// One RC connection and a never-ending (or given-size) WRITE.
struct Flow
{
    Ptr<IbQueuePair> qp[2];       ///< requester, responder
    Ptr<IbCompletionQueue> cq[2]; ///< their CQs
};

/**
 * Connect an RC pair from @p a to @p b and post one WRITE.
 * @param fab the fabric (for path records)
 * @param a the sender
 * @param b the receiver
 * @param bytes the message size
 * @return the flow
 */
Flow
StartFlow(const IbFabric& fab, Ptr<IbHca> a, Ptr<IbHca> b, uint64_t bytes = kLongMessage)
{
    Flow c;
    c.cq[0] = a->CreateCq();
    c.cq[1] = b->CreateCq();
    c.qp[0] = a->CreateQp(IbQpType::RC, c.cq[0], c.cq[0]);
    c.qp[1] = b->CreateQp(IbQpType::RC, c.cq[1], c.cq[1]);
    IbQpAttr base;
    base.timeout = 14; // 67 ms: longer than any run (lossless)
    IbHcaHelper::ConnectRc(c.qp[0], c.qp[1], fab.subnetManager, base);
    Ptr<IbMemoryRegion> src = a->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> dst =
        b->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    NS_ABORT_UNLESS(c.qp[0]->PostSend(src->WriteTo(*dst, static_cast<uint32_t>(bytes), 1)));
    return c;
}

/**
 * Goodput of each flow between @p from and @p to (bit/s); the simulation runs to @p to.
 * @param flows the flows
 * @param from the window's start
 * @param to its end
 * @return one goodput per flow
 */
std::vector<double>
MeasureGoodput(const std::vector<Flow>& flows, Time from, Time to)
{
    std::vector<double> start(flows.size());
    Simulator::Schedule(from, [&]() {
        for (size_t i = 0; i < flows.size(); ++i)
        {
            start[i] = flows[i].qp[1]->GetCounters().packetsReceived * kMtu;
        }
    });
    Simulator::Stop(to);
    Simulator::Run();
    std::vector<double> rate(flows.size());
    for (size_t i = 0; i < flows.size(); ++i)
    {
        const double now = flows[i].qp[1]->GetCounters().packetsReceived * kMtu;
        rate[i] = (now - start[i]) * 8 / (to - from).GetSeconds();
    }
    return rate;
}

/// The hosts of the head-of-line blocking fabric.
struct HolFabric
{
    IbFabric f;                            ///< the fabric
    std::map<std::string, Ptr<IbHca>> hca; ///< by name: a1, x, b1..b3, r, v
};

/**
 * Two switches joined by one cable: s1 holds incast sender A1 and victim sender X, s2
 * holds incast senders B1..B3, the incast receiver R and the victim receiver V; every link
 * EDR 4x (100 Gb/s).
 * @param cc whether the subnet manager turns congestion control on
 * @param victimMask its CcVictimMask
 * @return the fabric
 */
HolFabric
BuildHolFabric(bool cc, bool victimMask = false)
{
    IbTopology t;
    const uint32_t s1 = t.AddSwitch(3, "s1");
    const uint32_t s2 = t.AddSwitch(6, "s2");
    t.ConnectNextFree(s1, s2, IbLinkRate::EDR, 4);
    const std::vector<std::pair<std::string, uint32_t>> cas =
        {{"a1", s1}, {"x", s1}, {"b1", s2}, {"b2", s2}, {"b3", s2}, {"r", s2}, {"v", s2}};
    std::vector<std::string> names;
    for (const auto& [name, sw] : cas)
    {
        const uint32_t ca = t.AddCa(1, name);
        t.ConnectNextFree(ca, sw, IbLinkRate::EDR, 4);
        names.push_back(name);
    }
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("CongestionControl", BooleanValue(cc));
    fh.SetSubnetManagerAttribute("CcVictimMask", BooleanValue(victimMask));
    HolFabric h;
    h.f = fh.Build(t);
    IbHcaHelper hh;
    for (uint32_t i = 0; i < h.f.hosts.GetN(); ++i)
    {
        h.hca[names[i]] = hh.Install(h.f.hosts.Get(i));
    }
    return h;
}

/**
 * The victim X -> V alone, or beside the incast A1, B1..B3 -> R.
 * @param cc congestion control on
 * @param incast whether the incast runs
 * @param from the window's start
 * @param to its end
 * @return the victim's goodput, then the incast flows' (bit/s)
 */
std::vector<double>
RunHol(bool cc, bool incast, Time from, Time to)
{
    HolFabric h = BuildHolFabric(cc);
    std::vector<Flow> flows;
    flows.push_back(StartFlow(h.f, h.hca["x"], h.hca["v"]));
    if (incast)
    {
        for (const char* s : {"a1", "b1", "b2", "b3"})
        {
            flows.push_back(StartFlow(h.f, h.hca[s], h.hca["r"]));
        }
    }
    std::vector<double> r = MeasureGoodput(flows, from, to);
    Simulator::Destroy();
    return r;
}

} // namespace

// Congestion spreading and its cure. s2 serves R's output among its m + 1 = 4 inputs that
// want it (B1..B3 and the cable from s1) in turn, so the cable gets C / 4 of it for A1's
// packets. The cable's input FIFO at s2 holds A1's and X's packets in the order s1 sent them,
// alternately (s1 serves its two inputs in turn when credits come back): each A1 packet
// that waits for R blocks the X packet behind it, so X gets as much of the cable as A1,
// C / 4, though V's link is idle. Max-min fairness would give X the rest of the cable,
// C - C / 4.
//
// With congestion control (the subnet manager's defaults), R's output marks one eligible
// packet in MarkingRate + 1 = 11; R sends C, a packet every t_p, shared by n = 4 sources, so
// each gets a BECN every t_b = 11 n t_p = 14.5 us, while its CCTI falls by one per CCTI_Timer
// T = 51.2 us. A source must reach the first entry that brings it down to C / n (delay factor
// n - 1 = 3: entry 92 of the default table), which takes at most 92 / (1 / t_b - 1 / T) =
// 1.9 ms. The window starts at twice that. By then the victim has at least 90 % of its
// max-min share and the incast still fills R's link.
TEST_F(IbCongestionTest, AnIncastBlocksAVictimWithoutCongestionControlAndNotWithIt)
{
    const double link = kEdr * kMtu / (kMtu + kOverhead);
    {
        const Time from = MicroSeconds(1500);
        const Time to = MicroSeconds(3000);
        const std::vector<double> alone = RunHol(false, false, from, to);
        EXPECT_NEAR(alone[0] / link, 1.0, 0.005);
        const std::vector<double> blocked = RunHol(false, true, from, to);
        const double share = link / 4;
        EXPECT_NEAR(blocked[0] / share, 1.0, 0.05);
        for (size_t i = 1; i < blocked.size(); ++i)
        {
            EXPECT_NEAR(blocked[i] / share, 1.0, 0.05) << "incast flow " << i;
        }
        std::cout << "victim goodput (Gb/s): alone " << alone[0] / 1e9 << ", no CC "
                  << blocked[0] / 1e9 << " (expected " << share / 1e9 << ")" << std::endl;
    }
    // The bound, from the subnet manager's defaults.
    Ptr<IbSubnetManager> sm = CreateObject<IbSubnetManager>();
    UintegerValue markingRate;
    UintegerValue timerUnits;
    StringValue table;
    sm->GetAttribute("CcMarkingRate", markingRate);
    sm->GetAttribute("CcCctiTimer", timerUnits);
    sm->GetAttribute("CcCct", table);
    const std::vector<uint16_t> cct = IbCaCongestionSetting::ParseCct(table.Get(), "CcCct");
    const uint32_t n = 4;
    const double tp = (kMtu + kOverhead) * 8 / kEdr;
    const double tb = (markingRate.Get() + 1) * n * tp;
    const double timer = timerUnits.Get() * 1.024e-6;
    uint32_t target = 0;
    while (target < cct.size() && IbCaCongestionSetting::DelayFactor(cct[target]) < n - 1)
    {
        ++target;
    }
    ASSERT_LT(target, cct.size()) << "the table cannot slow a source to C / n";
    const double bound = target / (1 / tb - 1 / timer);
    EXPECT_NEAR(bound, 1.86e-3, 0.01e-3); // the figure the comment above derives
    const Time from = Seconds(2 * bound);
    const Time to = from + MilliSeconds(2);
    const std::vector<double> freed = RunHol(true, true, from, to);
    const double maxMin = link - link / 4;
    double incast = 0;
    for (size_t i = 1; i < freed.size(); ++i)
    {
        incast += freed[i];
    }
    std::cout << "with CC, from " << from.As(Time::US) << ": victim " << freed[0] / 1e9
              << " Gb/s (max-min " << maxMin / 1e9 << "), incast " << incast / 1e9 << " Gb/s"
              << std::endl;
    EXPECT_GE(freed[0] / maxMin, 0.9);
    EXPECT_GE(incast / link, 0.95);
}

namespace
{

/// What a source HCA's congestion control traces showed.
struct CcTrace
{
    std::vector<Time> becns;                        ///< BECN arrival times
    std::vector<std::pair<Time, uint16_t>> changes; ///< (time, new CCTI)
};

/**
 * Replay the annex A10 arithmetic on BECN arrival times, independently of the model.
 * @param s the CA setting
 * @param becns the arrival times, in order
 * @return the (time, new CCTI) changes it predicts
 */
std::vector<std::pair<Time, uint16_t>>
ReplayCcti(const IbCaCongestionSetting& s, const std::vector<Time>& becns)
{
    std::vector<std::pair<Time, uint16_t>> out;
    int ccti = s.cctiMin;
    const int limit = static_cast<int>(s.cct.size()) - 1;
    bool running = false;
    Time due;
    auto expireUntil = [&](Time t, bool all) {
        while (running && (all || due <= t))
        {
            if (ccti > s.cctiMin)
            {
                --ccti;
                out.emplace_back(due, ccti);
            }
            if (ccti > s.cctiMin)
            {
                due += s.cctiTimer;
            }
            else
            {
                running = false;
            }
        }
    };
    for (Time t : becns)
    {
        expireUntil(t, false);
        const int raised = std::min(limit, ccti + s.cctiIncrease);
        if (raised != ccti)
        {
            ccti = raised;
            out.emplace_back(t, ccti);
        }
        if (!running && ccti > s.cctiMin)
        {
            running = true;
            due = t + s.cctiTimer;
        }
    }
    expireUntil(Time::Max(), true);
    return out;
}

} // namespace

// One flow into a slower link through one switch, congestion control programmed by the
// subnet manager: the CCTI trace of the source equals the arithmetic replayed on the BECN
// times it received (+CCTI_Increase per BECN up to the limit, -1 per CCTI_Timer down to
// CCTI_Min, the timer started by a BECN when idle), and the limit and the floor are reached.
TEST_F(IbCongestionTest, OneFlowsCctiTraceIsTheSpecArithmeticOnItsBecns)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(2, "sw");
    const uint32_t h0 = t.AddCa(1, "h0");
    const uint32_t h1 = t.AddCa(1, "h1");
    t.ConnectNextFree(h0, sw, IbLinkRate::EDR, 4);
    t.ConnectNextFree(h1, sw, IbLinkRate::QDR, 4); // the bottleneck
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("CongestionControl", BooleanValue(true));
    fh.SetSubnetManagerAttribute("CcMarkingRate", UintegerValue(0));
    fh.SetSubnetManagerAttribute("CcCctiIncrease", UintegerValue(3));
    fh.SetSubnetManagerAttribute("CcCctiMin", UintegerValue(2));
    fh.SetSubnetManagerAttribute("CcCctiTimer", UintegerValue(20));
    fh.SetSubnetManagerAttribute("CcCct", StringValue("0:0,0:1,0:2,0:3,0:4,0:5,0:6,0:7,0:8,0:9"));
    IbFabric fab = fh.Build(t);
    IbHcaHelper hh;
    Ptr<IbHca> a = hh.Install(fab.hosts.Get(0));
    Ptr<IbHca> b = hh.Install(fab.hosts.Get(1));
    const IbCaCongestionSetting* s = fab.HostPort(0)->GetCongestionSetting();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->cctiTimer, NanoSeconds(20 * 1024));
    EXPECT_EQ(s->GetCctiLimit(), 9);
    CcTrace tr;
    a->TraceConnectWithoutContext("BecnReceived",
                                  Callback<void, uint32_t, uint16_t>([&](uint32_t, uint16_t) {
                                      tr.becns.push_back(Simulator::Now());
                                  }));
    a->TraceConnectWithoutContext("CctiChanged",
                                  Callback<void, uint32_t, uint8_t, uint16_t, uint16_t>(
                                      [&](uint32_t, uint8_t, uint16_t, uint16_t now) {
                                          tr.changes.emplace_back(Simulator::Now(), now);
                                      }));
    Flow f = StartFlow(fab, a, b, 8 << 20);
    Simulator::Run();
    EXPECT_EQ(f.qp[1]->GetCounters().packetsReceived, (8u << 20) / 4096);
    ASSERT_GT(tr.becns.size(), 10u);
    EXPECT_EQ(f.qp[0]->GetCounters().becnsReceived, tr.becns.size());
    EXPECT_EQ(b->GetCnpsSent(), tr.becns.size()); // a BECN for every FECN
    EXPECT_EQ(fab.switchOf[sw]->GetFecnMarks(), tr.becns.size());
    const std::vector<std::pair<Time, uint16_t>> expected = ReplayCcti(*s, tr.becns);
    ASSERT_EQ(tr.changes.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
    {
        EXPECT_EQ(tr.changes[i], expected[i]) << "change " << i;
    }
    uint16_t top = 0;
    for (const auto& c : tr.changes)
    {
        top = std::max(top, c.second);
    }
    EXPECT_EQ(top, 9);                      // the limit
    EXPECT_EQ(tr.changes.back().second, 2); // back to the floor
    EXPECT_EQ(f.qp[0]->GetIbRateControl()->GetCcti(), 2);
}

namespace
{

/**
 * A switch between an EDR host and a QDR host (the bottleneck), congestion control on.
 * @param fh the helper, with further attributes set
 * @param hcas [out] the two hosts' HCAs
 * @return the fabric
 */
IbFabric
SlowLinkFabric(IbFabricHelper& fh, Ptr<IbHca> hcas[2])
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(2, "sw");
    const uint32_t h0 = t.AddCa(1, "h0");
    const uint32_t h1 = t.AddCa(1, "h1");
    t.ConnectNextFree(h0, sw, IbLinkRate::EDR, 4);
    t.ConnectNextFree(h1, sw, IbLinkRate::QDR, 4);
    fh.SetSubnetManagerAttribute("CongestionControl", BooleanValue(true));
    fh.SetSubnetManagerAttribute("CcMarkingRate", UintegerValue(0));
    IbFabric fab = fh.Build(t);
    IbHcaHelper hh;
    for (uint32_t i = 0; i < 2; ++i)
    {
        hcas[i] = hh.Install(fab.hosts.Get(i));
    }
    return fab;
}

} // namespace

// PortControl SL: the RC queue pairs of a port on one SL share one CCTI, which every BECN
// for any of them raises; its trace names no QP.
TEST_F(IbCongestionTest, WithPortControlSlTheQueuePairsOfAnSlShareOneCcti)
{
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("CcPortControl", UintegerValue(1));
    Ptr<IbHca> h[2];
    IbFabric fab = SlowLinkFabric(fh, h);
    std::vector<uint32_t> qpns;
    h[0]->TraceConnectWithoutContext(
        "CctiChanged",
        Callback<void, uint32_t, uint8_t, uint16_t, uint16_t>(
            [&](uint32_t qpn, uint8_t, uint16_t, uint16_t) { qpns.push_back(qpn); }));
    Flow a = StartFlow(fab, h[0], h[1], 2 << 20);
    Flow b = StartFlow(fab, h[0], h[1], 2 << 20);
    Simulator::Run();
    const IbCcRateControl* shared = a.qp[0]->GetIbRateControl();
    ASSERT_NE(shared, nullptr);
    EXPECT_EQ(shared, b.qp[0]->GetIbRateControl());
    EXPECT_EQ(shared, h[0]->SlRateControl(1, 0));
    const uint64_t becns =
        a.qp[0]->GetCounters().becnsReceived + b.qp[0]->GetCounters().becnsReceived;
    EXPECT_GT(a.qp[0]->GetCounters().becnsReceived, 0u);
    EXPECT_GT(b.qp[0]->GetCounters().becnsReceived, 0u);
    EXPECT_EQ(shared->GetBecns(), becns);
    ASSERT_FALSE(qpns.empty());
    EXPECT_EQ(std::count(qpns.begin(), qpns.end(), 0u), static_cast<long>(qpns.size()));
    // Per QP (the default), each has its own.
    Simulator::Destroy();
    IbFabricHelper perQp;
    IbFabric fab2 = SlowLinkFabric(perQp, h);
    Flow c = StartFlow(fab2, h[0], h[1], 1 << 20);
    Flow d = StartFlow(fab2, h[0], h[1], 1 << 20);
    Simulator::Run();
    EXPECT_NE(c.qp[0]->GetIbRateControl(), d.qp[0]->GetIbRateControl());
    EXPECT_EQ(c.qp[0]->GetIbRateControl()->GetBecns(), c.qp[0]->GetCounters().becnsReceived);
}

// Packet_Size: packets shorter than it are never marked, however congested the output.
// With a 256-byte MTU every WRITE packet is 282 bytes, below the default 512.
TEST_F(IbCongestionTest, PacketsShorterThanPacketSizeAreNotMarked)
{
    for (uint32_t packetSize : {512u, 0u})
    {
        IbFabricHelper fh;
        fh.SetDeviceAttribute("Mtu", UintegerValue(256));
        fh.SetSubnetManagerAttribute("CcPacketSize", UintegerValue(packetSize));
        Ptr<IbHca> h[2];
        IbFabric fab = SlowLinkFabric(fh, h);
        Flow f = StartFlow(fab, h[0], h[1], 1 << 20);
        Simulator::Run();
        EXPECT_EQ(f.qp[1]->GetCounters().packetsReceived, (1u << 20) / 256);
        const uint64_t marks = fab.switchOf[0]->GetFecnMarks();
        if (packetSize == 512)
        {
            EXPECT_EQ(marks, 0u);
        }
        else
        {
            EXPECT_GT(marks, 0u);
            EXPECT_EQ(f.qp[0]->GetCounters().becnsReceived, marks);
        }
        Simulator::Destroy();
    }
}

// A UD datagram marked FECN is answered with a CNP to the QP its DETH names, whose own CCTI
// then rises (UD queue pairs always keep their own).
TEST_F(IbCongestionTest, AMarkedDatagramsCnpGoesToTheSourceQpOfItsDeth)
{
    IbFabricHelper fh;
    Ptr<IbHca> h[2];
    IbFabric fab = SlowLinkFabric(fh, h);
    Ptr<IbCompletionQueue> cq0 = h[0]->CreateCq();
    Ptr<IbCompletionQueue> cq1 = h[1]->CreateCq();
    Ptr<IbQueuePair> u0 = h[0]->CreateQp(IbQpType::UD, cq0, cq0, 512, 16);
    Ptr<IbQueuePair> u1 = h[1]->CreateQp(IbQpType::UD, cq1, cq1, 16, 16);
    IbHcaHelper::ConnectUd(u0, 0x1111);
    IbHcaHelper::ConnectUd(u1, 0x2222);
    Ptr<IbMemoryRegion> src = h[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    for (uint64_t i = 0; i < 400; ++i)
    {
        IbSendWr wr;
        wr.wrId = i;
        wr.sge.addr = src->GetAddr();
        wr.sge.length = 4096;
        wr.sge.lkey = src->GetLkey();
        wr.udDlid = fab.HostPort(1)->GetLid();
        wr.udRemoteQpn = u1->GetQpNum();
        wr.udRemoteQkey = 0x2222;
        std::string err;
        ASSERT_TRUE(u0->PostSend(wr, &err)) << err;
    }
    Simulator::Run();
    const uint64_t marks = fab.switchOf[0]->GetFecnMarks();
    EXPECT_GT(marks, 0u);
    EXPECT_EQ(h[1]->GetCnpsSent(), marks);
    EXPECT_EQ(u0->GetCounters().becnsReceived, marks);
    EXPECT_EQ(h[0]->GetUnknownDrops(), 0u);
    ASSERT_NE(u0->GetIbRateControl(), nullptr);
    EXPECT_EQ(u0->GetIbRateControl()->GetBecns(), marks);
}

// Victim_Mask: while s2 holds the cable's packets back (head-of-line blocking behind R's
// output), s1's output to the cable waits for credits; it is a victim and marks nothing
// unless the mask says to. The first 300 us, before the sources have slowed down.
TEST_F(IbCongestionTest, AnOutputWaitingForCreditsMarksOnlyWithTheVictimMask)
{
    uint64_t marks[2];
    for (bool mask : {false, true})
    {
        HolFabric h = BuildHolFabric(true, mask);
        std::vector<Flow> flows;
        flows.push_back(StartFlow(h.f, h.hca["x"], h.hca["v"]));
        for (const char* s : {"a1", "b1", "b2", "b3"})
        {
            flows.push_back(StartFlow(h.f, h.hca[s], h.hca["r"]));
        }
        Simulator::Stop(MicroSeconds(300));
        Simulator::Run();
        marks[mask] = h.f.switchOf[0]->GetFecnMarks(); // s1 is topology node 0
        Simulator::Destroy();
    }
    std::cout << "s1 marks in 300 us: " << marks[0] << " without the victim mask, " << marks[1]
              << " with it" << std::endl;
    EXPECT_LE(marks[0], 2u);
    EXPECT_GE(marks[1], 20u);
}

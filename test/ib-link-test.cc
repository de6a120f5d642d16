/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Link-layer tests: one cable, two ports. Every expected number is derived from the
 * model's physics (link data rate, packet sizes, cable delay), not measured and pasted.
 */

#include "ns3/core-module.h"
#include "ns3/error-model.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-flow-control-header.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-link-rate.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-owned-packet.h"
#include "ns3/ib-packet-parser.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-raw-traffic-application.h"
#include "ns3/ib-raw-traffic-helper.h"
#include "ns3/ib-vl-arbiter.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <array>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// Two nodes joined by one cable.
struct Link
{
    NodeContainer nodes;
    Ptr<IbNetDevice> a;
    Ptr<IbNetDevice> b;
};

Link
MakeLink(IbHelper& helper)
{
    Link l;
    l.nodes.Create(2);
    NetDeviceContainer d = helper.Install(l.nodes.Get(0), l.nodes.Get(1));
    l.a = DynamicCast<IbNetDevice>(d.Get(0));
    l.b = DynamicCast<IbNetDevice>(d.Get(1));
    return l;
}

/// @return an RC SEND-only packet of @p payload bytes from port a to port b, sealed
Ptr<Packet>
SealedSend(const Link& l, uint32_t payload)
{
    Ptr<Packet> p = Create<Packet>(payload);
    IbLrhHeader lrh;
    lrh.SetDlid(l.b->GetLid());
    lrh.SetSlid(l.a->GetLid());
    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::RC_SEND_ONLY);
    IbPacket::Seal(p, lrh, nullptr, bth, payload);
    return p;
}

/// @return an error model that corrupts 5 % of the packets (seeded)
Ptr<RateErrorModel>
FivePercentPacketErrors()
{
    Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
    em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
    em->SetAttribute("ErrorRate", DoubleValue(0.05));
    em->AssignStreams(7);
    return em;
}

/// Receive-side statistics, gathered from MacRx.
struct RxStats
{
    std::array<uint64_t, 16> packets{};
    std::array<uint64_t, 16> bytes{};
    Time first{Time::Max()};
    Time last{Time(0)};
    uint64_t total{0};
};

void
CountRx(RxStats* s, Ptr<const Packet> p)
{
    const uint8_t vl = IbPacket::PeekLrh(p).GetVl();
    s->packets[vl]++;
    s->bytes[vl] += p->GetSize();
    s->total++;
    const Time now = Simulator::Now();
    s->first = std::min(s->first, now);
    s->last = std::max(s->last, now);
}

void
CountEvent(uint64_t* n, Ptr<const Packet>)
{
    ++*n;
}

void
TrackMax(uint32_t* maxSeen, uint8_t, uint32_t bytes)
{
    *maxSeen = std::max(*maxSeen, bytes);
}

void
SumStall(Time* total, uint8_t, Time d)
{
    *total += d;
}

class IbLinkTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        IbHelper::ResetLidAllocation();
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

} // namespace

// ----------------------------------------------------------------------------- rates

TEST(IbLinkRate, DataRatesFollowTheSpeedTable)
{
    // 4x data rates of the reference table.
    EXPECT_EQ(IbLinkRate::GetDataRate(IbLinkRate::SDR, 4).GetBitRate(), 8000000000ULL);
    EXPECT_EQ(IbLinkRate::GetDataRate(IbLinkRate::QDR, 4).GetBitRate(), 32000000000ULL);
    EXPECT_EQ(IbLinkRate::GetDataRate(IbLinkRate::FDR10, 4).GetBitRate(), 40000000000ULL);
    EXPECT_EQ(IbLinkRate::GetDataRate(IbLinkRate::EDR, 4).GetBitRate(), 100000000000ULL);
    EXPECT_EQ(IbLinkRate::GetDataRate(IbLinkRate::HDR, 4).GetBitRate(), 200000000000ULL);
    EXPECT_EQ(IbLinkRate::GetDataRate(IbLinkRate::NDR, 4).GetBitRate(), 400000000000ULL);
    EXPECT_EQ(IbLinkRate::GetDataRate(IbLinkRate::XDR, 4).GetBitRate(), 800000000000ULL);
    EXPECT_EQ(IbLinkRate::GetDataRate(IbLinkRate::EDR, 12).GetBitRate(), 300000000000ULL);
    // FDR lane: 14.0625 Gbaud * 64/66.
    EXPECT_NEAR(IbLinkRate::GetDataRate(IbLinkRate::FDR, 4).GetBitRate(),
                4 * 14.0625e9 * 64 / 66,
                4.0);
    IbLinkRate::Speed s;
    uint8_t w;
    EXPECT_TRUE(IbLinkRate::ParseSpeed("hdr", s));
    EXPECT_EQ(s, IbLinkRate::HDR);
    EXPECT_FALSE(IbLinkRate::ParseSpeed("EDX", s));
    EXPECT_TRUE(IbLinkRate::ParseWidth("12x", w));
    EXPECT_EQ(w, 12);
    EXPECT_FALSE(IbLinkRate::ParseWidth("3x", w));
}

// ----------------------------------------------------------------------------- arbiter

TEST(IbVlArbiter, ParsesOpenSmTablesAndRejectsBadOnes)
{
    std::vector<IbVlArbiter::Entry> t;
    std::string err;
    ASSERT_TRUE(IbVlArbiter::ParseTable("0:4, 1:255,14:0", t, err));
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[1].vl, 1);
    EXPECT_EQ(t[1].weight, 255);
    EXPECT_EQ(IbVlArbiter::FormatTable(t), "0:4,1:255,14:0");
    ASSERT_TRUE(IbVlArbiter::ParseTable("0 : 4, 1 :255", t, err)) << err; // blanks by ':'
    EXPECT_EQ(IbVlArbiter::FormatTable(t), "0:4,1:255");
    EXPECT_FALSE(IbVlArbiter::ParseTable("0:256", t, err));
    EXPECT_NE(err.find("weights are 0..255"), std::string::npos) << err;
    EXPECT_FALSE(IbVlArbiter::ParseTable("15:4", t, err));
    EXPECT_NE(err.find("data VLs are 0..14"), std::string::npos) << err;
    EXPECT_FALSE(IbVlArbiter::ParseTable("0-4", t, err));
    EXPECT_FALSE(IbVlArbiter::ParseTable("0:4,,1:4", t, err));
    EXPECT_TRUE(IbVlArbiter::ParseTable("", t, err));
    EXPECT_TRUE(t.empty());
}

TEST(IbVlArbiter, WeightsAreSpentInBlocksAndAPacketAlwaysCompletes)
{
    IbVlArbiter arb;
    arb.SetHighTable({});
    arb.SetLowTable({{0, 3}, {1, 1}});
    const uint16_t heads[16] = {1, 1};
    // Entry 0 (weight 3) sends three 1-block packets of VL0, then entry 1 one of VL1.
    std::vector<int> order;
    for (int i = 0; i < 8; ++i)
    {
        order.push_back(arb.Select(0x3, heads));
    }
    EXPECT_EQ(order, (std::vector<int>{0, 0, 0, 1, 0, 0, 0, 1}));
    // A packet larger than the remaining weight still goes, and exhausts the entry.
    IbVlArbiter big;
    big.SetLowTable({{0, 2}, {1, 2}});
    const uint16_t bigHeads[16] = {5, 5};
    EXPECT_EQ(big.Select(0x3, bigHeads), 0);
    EXPECT_EQ(big.Select(0x3, bigHeads), 1);
    // The walk is back at entry 0 (VL0). An ineligible VL's entry is skipped: with only VL1
    // eligible, entry 1 sends; then entry 0 again once VL0 is eligible.
    EXPECT_EQ(big.Select(0x2, bigHeads), 1);
    EXPECT_EQ(big.Select(0x3, bigHeads), 0);
    EXPECT_EQ(big.Select(0x0, bigHeads), -1);
}

TEST(IbVlArbiter, LimitOfHighPriorityLetsLowThrough)
{
    const uint16_t heads[16] = {64, 64}; // 4 KB packets
    // Limit 0: one high packet, then one low packet, alternating.
    IbVlArbiter a0;
    a0.SetHighTable({{0, 255}});
    a0.SetLowTable({{1, 255}});
    a0.SetLimitOfHighPriority(0);
    std::vector<int> order;
    for (int i = 0; i < 4; ++i)
    {
        order.push_back(a0.Select(0x3, heads));
    }
    EXPECT_EQ(order, (std::vector<int>{0, 1, 0, 1}));
    // Limit 2 (8 KB): two 4 KB high packets, then one low.
    IbVlArbiter a2;
    a2.SetHighTable({{0, 255}});
    a2.SetLowTable({{1, 255}});
    a2.SetLimitOfHighPriority(2);
    order.clear();
    for (int i = 0; i < 6; ++i)
    {
        order.push_back(a2.Select(0x3, heads));
    }
    EXPECT_EQ(order, (std::vector<int>{0, 0, 1, 0, 0, 1}));
    // Limit 255: the low table starves while high has packets.
    IbVlArbiter a255;
    a255.SetHighTable({{0, 255}});
    a255.SetLowTable({{1, 255}});
    a255.SetLimitOfHighPriority(255);
    for (int i = 0; i < 10; ++i)
    {
        EXPECT_EQ(a255.Select(0x3, heads), 0);
    }
    EXPECT_EQ(a255.Select(0x2, heads), 1);
}

TEST(IbVlArbiter, TheLimitCountsOnlyWhileTheLowTableWaits)
{
    // Limit 2 (8 KB). High sends for a long time with nothing on the low table; then a
    // low packet arrives. High still has its whole 8 KB before the low packet goes:
    // before, the bytes sent while low was idle counted and the low packet went next.
    const uint16_t heads[16] = {64, 64}; // 4 KB packets
    IbVlArbiter a;
    a.SetHighTable({{0, 255}});
    a.SetLowTable({{1, 255}});
    a.SetLimitOfHighPriority(2);
    for (int i = 0; i < 10; ++i)
    {
        EXPECT_EQ(a.Select(0x1, heads), 0);
    }
    std::vector<int> order;
    for (int i = 0; i < 6; ++i)
    {
        order.push_back(a.Select(0x3, heads));
    }
    EXPECT_EQ(order, (std::vector<int>{0, 0, 1, 0, 0, 1}));
}

TEST(IbVlArbiter, WalksBothTablesInTurnAndRestartOnANewTable)
{
    // High 0:2,1:1; low 2:1; limit 0 (one high packet, then low if it can).
    IbVlArbiter arb;
    arb.SetHighTable({{0, 2}, {1, 1}});
    arb.SetLowTable({{2, 1}});
    arb.SetLimitOfHighPriority(0);
    const uint16_t heads[16] = {1, 1, 1};
    std::vector<int> order;
    for (int i = 0; i < 12; ++i)
    {
        order.push_back(arb.Select(0x7, heads));
    }
    // High entry 0 spends its two blocks on two packets, entry 1 its one, low in between.
    EXPECT_EQ(order, (std::vector<int>{0, 2, 0, 2, 1, 2, 0, 2, 0, 2, 1, 2}));
    // Only VL1 eligible: entry 0 is passed over every time.
    EXPECT_EQ(arb.Select(0x2, heads), 1);
    EXPECT_EQ(arb.Select(0x2, heads), 1);
    // A new high table replaces the walk's current entry.
    arb.SetHighTable({{3, 1}});
    EXPECT_EQ(arb.Select(0x8, heads), 3);
    EXPECT_EQ(arb.Select(0x9, heads), 3); // VL0 is no longer in the high table
    arb.SetHighTable({});
    EXPECT_EQ(arb.Select(0x9, heads), -1);
}

// ----------------------------------------------------------------------------- timing

TEST_F(IbLinkTest, ArrivalTimeIsSerializationPlusPropagation)
{
    IbHelper helper;
    helper.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
    helper.SetChannelAttribute("Length", DoubleValue(7.0)); // 35 ns at 5 ns/m
    Link l = MakeLink(helper);
    const uint32_t payload = 1000;
    Time sentAt;
    Time arrivedAt;
    uint32_t wireBytes = 0;
    Simulator::Schedule(MicroSeconds(1), [&]() {
        Ptr<Packet> p = SealedSend(l, payload);
        wireBytes = p->GetSize();
        sentAt = Simulator::Now();
        l.a->SendIbPacket(p);
    });
    l.b->TraceConnectWithoutContext("PhyRxEnd", MakeCallback(+[](Time* t, Ptr<const Packet>) {
                                                    *t = Simulator::Now();
                                                }).Bind(&arrivedAt));
    Simulator::Run();
    // LRH 8 + BTH 12 + payload 1000 + ICRC 4 + VCRC 2.
    ASSERT_EQ(wireBytes, 8u + 12 + payload + 4 + 2);
    const Time serialization = Seconds(wireBytes * 8.0 / 200e9);
    const Time propagation = NanoSeconds(35);
    EXPECT_EQ(arrivedAt - sentAt, serialization + propagation)
        << "arrived " << arrivedAt << " sent " << sentAt;
    Simulator::Destroy();

    // At SDR 1x (2 Gb/s) a byte takes 4 ns, so a byte more or less on the wire shows
    // (at HDR 4x, 41.04 ns rounds to 41 ns with or without the CRCs).
    IbHelper sdr;
    sdr.SetDeviceAttribute("LinkSpeed", StringValue("SDR"));
    sdr.SetDeviceAttribute("LinkWidth", StringValue("1x"));
    sdr.SetChannelAttribute("Length", DoubleValue(7.0));
    Link s = MakeLink(sdr);
    Simulator::Schedule(MicroSeconds(1), [&]() {
        Ptr<Packet> p = SealedSend(s, payload);
        sentAt = Simulator::Now();
        s.a->SendIbPacket(p);
    });
    s.b->TraceConnectWithoutContext("PhyRxEnd", MakeCallback(+[](Time* t, Ptr<const Packet>) {
                                                    *t = Simulator::Now();
                                                }).Bind(&arrivedAt));
    Simulator::Run();
    EXPECT_EQ(arrivedAt - sentAt, NanoSeconds(1026 * 4) + propagation);
}

TEST_F(IbLinkTest, ACableLengthOrDelaySetAfterAttachTimesTheNextPacket)
{
    // The cable's direction caches the delay: its attribute setters must refresh it.
    IbHelper helper;
    helper.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
    Link l = MakeLink(helper);
    Ptr<IbChannel> cable = DynamicCast<IbChannel>(l.a->GetChannel());
    cable->SetAttribute("Length", DoubleValue(7.0)); // 35 ns at 5 ns/m
    const uint32_t payload = 1000;
    std::vector<Time> sent;
    std::vector<Time> arrived;
    auto send = [&]() {
        sent.push_back(Simulator::Now());
        l.a->SendIbPacket(SealedSend(l, payload));
    };
    Simulator::Schedule(MicroSeconds(1), send);
    // Back to a plain delay (Length 0), then a longer one, each with nothing in flight.
    Simulator::Schedule(MicroSeconds(2), [&]() {
        cable->SetAttribute("Length", DoubleValue(0.0));
        cable->SetAttribute("Delay", TimeValue(NanoSeconds(120)));
    });
    Simulator::Schedule(MicroSeconds(3), send);
    Simulator::Schedule(MicroSeconds(4), [&]() {
        cable->SetAttribute("Length", DoubleValue(100.0));
        cable->SetAttribute("DelayPerMetre", TimeValue(NanoSeconds(4)));
    });
    Simulator::Schedule(MicroSeconds(5), send);
    l.b->TraceConnectWithoutContext("PhyRxEnd",
                                    MakeCallback(+[](std::vector<Time>* t, Ptr<const Packet>) {
                                        t->push_back(Simulator::Now());
                                    }).Bind(&arrived));
    Simulator::Run();
    ASSERT_EQ(arrived.size(), 3u);
    const Time serialization = Seconds((8u + 12 + payload + 4 + 2) * 8.0 / 200e9);
    EXPECT_EQ(arrived[0] - sent[0], serialization + NanoSeconds(35));
    EXPECT_EQ(arrived[1] - sent[1], serialization + NanoSeconds(120));
    EXPECT_EQ(arrived[2] - sent[2], serialization + NanoSeconds(400));
    // Read, Delay is the delay in effect: what ns-3's distributed engines take their
    // lookahead from.
    TimeValue delay;
    cable->GetAttribute("Delay", delay);
    EXPECT_EQ(delay.Get(), NanoSeconds(400));
    cable->SetAttribute("Length", DoubleValue(1.0));
    cable->GetAttribute("Delay", delay);
    EXPECT_EQ(delay.Get(), NanoSeconds(4));
}

TEST_F(IbLinkTest, ALongCableDeliversManyPacketsInFlightInOrder)
{
    // 1 km: 5 us one way. The receiver's 64 KB of credits cover 15 packets of 4 KB (65
    // blocks each), about 2.5 us at HDR, so more than the 8 a cable direction keeps in
    // its ring are in flight at once and the newer ones wait in its overflow queue.
    IbHelper helper;
    helper.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
    helper.SetChannelAttribute("Length", DoubleValue(1000.0));
    Link l = MakeLink(helper);
    uint64_t sent = 0;
    uint64_t received = 0;
    uint64_t maxInFlight = 0;
    uint64_t lastUid = 0;
    bool inOrder = true;
    l.a->TraceConnectWithoutContext(
        "PhyTxBegin",
        MakeCallback(+[](uint64_t* s, uint64_t* r, uint64_t* m, Ptr<const Packet>) {
            ++*s;
            *m = std::max(*m, *s - *r);
        }).Bind(&sent, &received, &maxInFlight));
    l.b->TraceConnectWithoutContext(
        "PhyRxEnd",
        MakeCallback(+[](uint64_t* r, uint64_t* last, bool* ok, Ptr<const Packet> p) {
            *ok = *ok && (*r == 0 || p->GetUid() > *last);
            *last = p->GetUid();
            ++*r;
        }).Bind(&received, &lastUid, &inOrder));
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(200));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Run();
    EXPECT_EQ(sent, 200u);
    EXPECT_EQ(received, 200u);
    EXPECT_TRUE(inOrder);
    const uint32_t wire = IbPacket::WireSize(4096, 0, false);
    const uint64_t creditPackets = 65536 / (IbPacket::Blocks(wire) * 64);
    ASSERT_EQ(creditPackets, 15u);
    EXPECT_GT(maxInFlight, 8u);
    EXPECT_LE(maxInFlight, creditPackets);
}

/*
 * Three saturating sources on one port and VL share it evenly: the listeners take turns at
 * refilling the slot each packet frees (before, the first registered took every slot and
 * the others sent only their first QueueTarget packets; an all-to-all ran as a shift).
 */
TEST_F(IbLinkTest, ARawSourceSendsMaxPacketsWithConsecutivePsns)
{
    // A source's first packet finds the port idle and starts at once, which asks the
    // source for another before the first is counted: MaxPackets=1 sent 2, and the two
    // carried the same PSN.
    for (const uint32_t max : {1u, 2u, 5u})
    {
        IbHelper helper;
        Link l = MakeLink(helper);
        std::vector<uint32_t> psns;
        l.b->TraceConnectWithoutContext(
            "MacRx",
            Callback<void, Ptr<const Packet>>([&psns](Ptr<const Packet> p) {
                Ptr<Packet> copy = p->Copy();
                IbLrhHeader lrh;
                IbBthHeader bth;
                copy->RemoveHeader(lrh);
                copy->RemoveHeader(bth);
                psns.push_back(bth.GetPsn());
            }));
        IbRawTrafficHelper traffic(l.b->GetLid());
        traffic.SetAttribute("MaxPackets", UintegerValue(max));
        traffic.Install(l.a).Start(MicroSeconds(1));
        Simulator::Run();
        std::vector<uint32_t> expected(max);
        std::iota(expected.begin(), expected.end(), 0u);
        EXPECT_EQ(psns, expected) << "MaxPackets=" << max;
        Simulator::Destroy();
    }
}

TEST_F(IbLinkTest, SaturatingSourcesOnOnePortShareIt)
{
    IbHelper helper;
    Link l = MakeLink(helper);
    IbRawTrafficHelper traffic(l.b->GetLid());
    ApplicationContainer apps;
    for (int i = 0; i < 3; ++i)
    {
        apps.Add(traffic.Install(l.a));
    }
    apps.Start(MicroSeconds(1));
    // 300 packets' worth of line time (4 KB packets at EDR: 330 ns each).
    const Time packet = l.a->GetDataRate().CalculateBytesTxTime(IbPacket::WireSize(4096, 0, false));
    Simulator::Stop(MicroSeconds(1) + packet * 300);
    Simulator::Run();
    uint64_t total = 0;
    for (uint32_t i = 0; i < 3; ++i)
    {
        total += DynamicCast<IbRawTrafficApplication>(apps.Get(i))->GetSent();
    }
    EXPECT_GE(total, 300u);
    for (uint32_t i = 0; i < 3; ++i)
    {
        const uint64_t sent = DynamicCast<IbRawTrafficApplication>(apps.Get(i))->GetSent();
        // Each a third, within the two each queues at its start.
        EXPECT_NEAR(static_cast<double>(sent), total / 3.0, 2.0) << "source " << i;
    }
    Simulator::Destroy();
}

TEST(IbOwnedPacket, HandsItsReferenceOverWithoutTouchingTheCount)
{
    Ptr<Packet> p = Create<Packet>(100);
    ASSERT_EQ(p->GetReferenceCount(), 1u);
    IbOwnedPacket a(p);
    EXPECT_EQ(p->GetReferenceCount(), 2u);
    IbOwnedPacket b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(b.Get(), PeekPointer(p));
    EXPECT_EQ(p->GetReferenceCount(), 2u);
    IbOwnedPacket c;
    c = std::move(b);
    EXPECT_FALSE(b);
    EXPECT_EQ(p->GetReferenceCount(), 2u);
    {
        const Ptr<Packet> shared = c.Share();
        EXPECT_EQ(p->GetReferenceCount(), 3u);
    }
    EXPECT_EQ(p->GetReferenceCount(), 2u);
    {
        const Ptr<Packet> released = c.Release();
        EXPECT_FALSE(c);
        EXPECT_EQ(released, p);
        EXPECT_EQ(p->GetReferenceCount(), 2u); // the Ptr holds the owned reference now
    }
    EXPECT_EQ(p->GetReferenceCount(), 1u);
    IbOwnedPacket d(p);
    IbOwnedPacket e(Create<Packet>(10));
    e = std::move(d); // drops e's packet, takes d's reference
    EXPECT_EQ(p->GetReferenceCount(), 2u);
    e.Reset();
    EXPECT_EQ(p->GetReferenceCount(), 1u);
}

namespace
{

/// What the PhyTxEnd test saw.
struct TxEndSeen
{
    std::vector<std::pair<uint64_t, Time>> begin; ///< uid and time of each PhyTxBegin
    std::vector<std::pair<uint64_t, Time>> end;   ///< uid and time of each PhyTxEnd
    std::vector<uint32_t> endSize;                ///< size of each PhyTxEnd packet
    Ptr<const Packet> last;                       ///< the last packet received
    uint64_t received{0};                         ///< packets received
};

/**
 * Send 50 packets of 1000 bytes over an HDR link, PhyTxEnd connected or not.
 * @param watchTxEnd connect PhyTxEnd
 * @return what the traces saw
 */
TxEndSeen
RunTxEndLink(bool watchTxEnd)
{
    IbHelper helper;
    helper.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
    Link l = MakeLink(helper);
    TxEndSeen seen;
    l.a->TraceConnectWithoutContext("PhyTxBegin",
                                    MakeCallback(+[](TxEndSeen* s, Ptr<const Packet> p) {
                                        s->begin.emplace_back(p->GetUid(), Simulator::Now());
                                    }).Bind(&seen));
    if (watchTxEnd)
    {
        l.a->TraceConnectWithoutContext("PhyTxEnd",
                                        MakeCallback(+[](TxEndSeen* s, Ptr<const Packet> p) {
                                            s->end.emplace_back(p->GetUid(), Simulator::Now());
                                            s->endSize.push_back(p->GetSize());
                                        }).Bind(&seen));
    }
    l.b->TraceConnectWithoutContext("PhyRxEnd",
                                    MakeCallback(+[](TxEndSeen* s, Ptr<const Packet> p) {
                                        ++s->received;
                                        s->last = p;
                                    }).Bind(&seen));
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("PayloadSize", UintegerValue(1000));
    traffic.SetAttribute("MaxPackets", UintegerValue(50));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Run();
    return seen;
}

} // namespace

TEST_F(IbLinkTest, PhyTxEndSeesEveryPacketOneSerializationAfterItStarts)
{
    // With PhyTxEnd connected the port keeps a reference to the packet on the wire until
    // the end of its serialization; without, the reference goes to the cable at once.
    const TxEndSeen seen = RunTxEndLink(true);
    const uint32_t wire = IbPacket::WireSize(1000, 0, false);
    const Time serialization = Seconds(wire * 8.0 / 200e9);
    ASSERT_EQ(seen.begin.size(), 50u);
    ASSERT_EQ(seen.end.size(), 50u);
    EXPECT_EQ(seen.received, 50u);
    for (std::size_t i = 0; i < seen.end.size(); ++i)
    {
        EXPECT_EQ(seen.end[i].first, seen.begin[i].first) << "packet " << i;
        EXPECT_EQ(seen.endSize[i], wire) << "packet " << i;
        // A packet may start after the port decided to send it (a flow-control packet
        // still on the wire), never before; back-to-back serialization times carry the
        // rounding of the previous one (one time step at most).
        EXPECT_GE(seen.end[i].second - seen.begin[i].second, serialization - TimeStep(1))
            << "packet " << i;
    }
    EXPECT_EQ(seen.end[0].second - seen.begin[0].second, serialization);
    // Every reference the port, the cable and the receiver took has been given back:
    // the trace sink's is the only one left.
    ASSERT_NE(seen.last, nullptr);
    EXPECT_EQ(seen.last->GetReferenceCount(), 1u);
}

TEST_F(IbLinkTest, APacketLeavesNoReferenceBehindWithoutPhyTxEnd)
{
    const TxEndSeen seen = RunTxEndLink(false);
    EXPECT_EQ(seen.begin.size(), 50u);
    EXPECT_EQ(seen.received, 50u);
    ASSERT_NE(seen.last, nullptr);
    EXPECT_EQ(seen.last->GetReferenceCount(), 1u);
}

// ----------------------------------------------------------------------------- throughput

namespace
{

/**
 * Saturate one VL of a link with 4 KB packets and return the goodput (payload bits per
 * second) measured between the first and the last arrival.
 */
double
MeasureGoodput(const std::string& speed, uint32_t payload)
{
    IbHelper helper;
    helper.SetDeviceAttribute("LinkSpeed", StringValue(speed));
    Link l = MakeLink(helper);
    RxStats rx;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("PayloadSize", UintegerValue(payload));
    traffic.SetAttribute("MaxPackets", UintegerValue(2000));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Run();
    EXPECT_EQ(rx.total, 2000u);
    // (n - 1) packets arrive in the interval between first and last arrival.
    return (rx.total - 1) * payload * 8.0 / (rx.last - rx.first).GetSeconds();
}

} // namespace

TEST_F(IbLinkTest, PortsTrainToTheCommonSpeedAndWidthEachOnItsOwn)
{
    // EDR 4x against HDR 2x: both nominally 100 Gb/s, but the common speed is EDR and the
    // common width 2x, so the link runs EDR 2x, 50 Gb/s, in both directions.
    NodeContainer nodes;
    nodes.Create(2);
    IbHelper edr4;
    edr4.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    edr4.SetDeviceAttribute("LinkWidth", StringValue("4x"));
    IbHelper hdr2;
    hdr2.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
    hdr2.SetDeviceAttribute("LinkWidth", StringValue("2x"));
    Ptr<IbNetDevice> a = edr4.InstallPort(nodes.Get(0));
    Ptr<IbNetDevice> b = hdr2.InstallPort(nodes.Get(1));
    ASSERT_EQ(a->GetDataRate(), b->GetDataRate()); // 100 Gb/s each before training
    edr4.Connect(a, b);
    RxStats rx;
    b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    IbRawTrafficHelper traffic(b->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(500));
    traffic.Install(a).Start(MicroSeconds(1));
    Simulator::Run();
    const DataRate edr2 = IbLinkRate::GetDataRate(IbLinkRate::EDR, 2);
    EXPECT_EQ(a->GetDataRate(), edr2);
    EXPECT_EQ(b->GetDataRate(), edr2);
    ASSERT_EQ(rx.total, 500u);
    const double payload = 4096;
    const double goodput = (rx.total - 1) * payload * 8.0 / (rx.last - rx.first).GetSeconds();
    const double expected = edr2.GetBitRate() * payload / IbPacket::WireSize(4096, 0, false);
    EXPECT_NEAR(goodput / expected, 1.0, 1e-4) << "goodput " << goodput;
}

namespace
{

void
RecordArrival(std::vector<Time>* times, Ptr<const Packet>)
{
    times->push_back(Simulator::Now());
}

/**
 * @return the goodput of 4 KB packets between the first and the last of those that
 *         arrived in [from, to]
 */
double
GoodputBetween(const std::vector<Time>& times, Time from, Time to)
{
    std::vector<Time> in;
    std::copy_if(times.begin(), times.end(), std::back_inserter(in), [&](Time t) {
        return t >= from && t <= to;
    });
    if (in.size() < 2)
    {
        return 0;
    }
    return (in.size() - 1) * 4096 * 8.0 / (in.back() - in.front()).GetSeconds();
}

} // namespace

TEST_F(IbLinkTest, AWidthChangeWhileTheLinkIsUpRetrainsBothEnds)
{
    // EDR 4x at both ends. At 20 us port b loses three lanes (LinkWidth 1x): both ends
    // train again to EDR 1x, a quarter of the rate, for the rest of the stream in either
    // direction; at 60 us b is back at 4x and so is the link.
    IbHelper helper;
    Link l = MakeLink(helper);
    std::vector<Time> arrivals;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&RecordArrival, &arrivals));
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(400));
    traffic.Install(l.a).Start(MicroSeconds(1));
    const DataRate edr4 = IbLinkRate::GetDataRate(IbLinkRate::EDR, 4);
    const DataRate edr1 = IbLinkRate::GetDataRate(IbLinkRate::EDR, 1);
    DataRate aDuring;
    // The link goes down at each change and up once what was on the wire has arrived;
    // upper layers are not told (no link-change callback). Watched every nanosecond
    // around each change, after the change itself at the same time.
    Simulator::Schedule(MicroSeconds(20), [&l]() {
        l.b->SetAttribute("LinkWidth", StringValue("1x"));
        EXPECT_FALSE(l.a->IsLinkUp());
        EXPECT_FALSE(l.b->IsLinkUp());
    });
    Simulator::Schedule(MicroSeconds(60),
                        [&l]() { l.b->SetAttribute("LinkWidth", StringValue("4x")); });
    uint32_t callbacks = 0;
    l.a->AddLinkChangeCallback(Callback<void>([&callbacks]() { ++callbacks; }));
    std::vector<std::pair<Time, bool>> changes;
    for (const Time& at : {MicroSeconds(20), MicroSeconds(60)})
    {
        for (int64_t ns = 0; ns < 2000; ++ns)
        {
            Simulator::Schedule(at + NanoSeconds(ns), [&changes, &l]() {
                if (changes.empty() || changes.back().second != l.a->IsLinkUp())
                {
                    changes.emplace_back(Simulator::Now(), l.a->IsLinkUp());
                }
            });
        }
    }
    Simulator::Schedule(MicroSeconds(40), [&l, &aDuring]() { aDuring = l.a->GetDataRate(); });
    Simulator::Run();
    ASSERT_EQ(arrivals.size(), 400u);
    EXPECT_EQ(aDuring, edr1);
    EXPECT_EQ(l.a->GetDataRate(), edr4);
    EXPECT_EQ(l.b->GetDataRate(), edr4);
    const double efficiency = 4096.0 / IbPacket::WireSize(4096, 0, false);
    // Each phase from a few packets after its change (the packet on the wire keeps the
    // old timing; the credits it left outstanding return at the new rate) to its end.
    const double before = GoodputBetween(arrivals, MicroSeconds(3), MicroSeconds(20));
    const double slow = GoodputBetween(arrivals, MicroSeconds(25), MicroSeconds(60));
    const double after = GoodputBetween(arrivals, MicroSeconds(65), Seconds(1));
    EXPECT_NEAR(before / (edr4.GetBitRate() * efficiency), 1.0, 1e-4) << before;
    EXPECT_NEAR(slow / (edr1.GetBitRate() * efficiency), 1.0, 1e-4) << slow;
    EXPECT_NEAR(after / (edr4.GetBitRate() * efficiency), 1.0, 1e-4) << after;
    // Down at 20 and 60 us (seen by the watch scheduled after the change at the same
    // time), up within a packet time (at most 1.4 us at 1x) after each.
    EXPECT_EQ(callbacks, 1u); // the link coming up at the start
    ASSERT_EQ(changes.size(), 4u);
    EXPECT_EQ(changes[0], std::make_pair(MicroSeconds(20), false));
    EXPECT_EQ(changes[2], std::make_pair(MicroSeconds(60), false));
    EXPECT_TRUE(changes[1].second && changes[3].second);
    EXPECT_GT(changes[1].first, MicroSeconds(20));
    EXPECT_LT(changes[1].first, MicroSeconds(20) + NanoSeconds(1400));
    EXPECT_GT(changes[3].first, MicroSeconds(60));
    EXPECT_LT(changes[3].first, MicroSeconds(60) + NanoSeconds(1400));
    // The wire's capacity is the rate integrated over time, each rate from when the link
    // came up with it (utilisations divide by it).
    const Time end = Simulator::Now();
    const double capacity = edr4.GetBitRate() * changes[1].first.GetSeconds() +
                            edr1.GetBitRate() * (changes[3].first - changes[1].first).GetSeconds() +
                            edr4.GetBitRate() * (end - changes[3].first).GetSeconds();
    // (the watch sees the link up at most 1 ns late: 75 bits in some 10^7)
    EXPECT_NEAR(l.a->GetWireCapacityBits(end) / capacity, 1.0, 1e-5);
}

TEST_F(IbLinkTest, BackToBackStreamReachesRateTimesWireEfficiency)
{
    const uint32_t payload = 4096;
    const double efficiency = double(payload) / IbPacket::WireSize(payload, 0, false);
    for (const auto& [speed, bps] : std::vector<std::pair<std::string, double>>{{"EDR", 100e9},
                                                                                {"HDR", 200e9},
                                                                                {"NDR", 400e9}})
    {
        const double goodput = MeasureGoodput(speed, payload);
        const double expected = bps * efficiency;
        // A back-to-back train carries the serialization's sub-ns remainder, so the rate
        // is exact: 1e-4 catches a missing VCRC (5e-4 of the wire bytes).
        EXPECT_NEAR(goodput / expected, 1.0, 1e-4)
            << speed << ": goodput " << goodput << " expected " << expected;
        Simulator::Destroy();
    }
}

TEST_F(IbLinkTest, SlowReceiverStallsSenderWithoutLossOrOverflow)
{
    IbHelper helper;
    helper.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    helper.SetDeviceAttribute("VlBufferSize", UintegerValue(32768));
    Link l = MakeLink(helper);
    const DataRate linkRate = l.a->GetDataRate();
    l.b->SetAttribute("RxDrainRate", DataRateValue(DataRate(linkRate.GetBitRate() / 2)));

    RxStats rx;
    uint64_t drops = 0;
    uint32_t maxOccupancy = 0;
    Time stalled;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    for (const char* t : {"MacTxDrop", "PhyRxDrop"})
    {
        l.a->TraceConnectWithoutContext(t, MakeBoundCallback(&CountEvent, &drops));
        l.b->TraceConnectWithoutContext(t, MakeBoundCallback(&CountEvent, &drops));
    }
    l.b->TraceConnectWithoutContext("RxBufferOccupancy",
                                    MakeBoundCallback(&TrackMax, &maxOccupancy));
    l.a->TraceConnectWithoutContext("CreditStall", MakeBoundCallback(&SumStall, &stalled));

    const uint32_t payload = 4096;
    const uint32_t packets = 1000;
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("PayloadSize", UintegerValue(payload));
    traffic.SetAttribute("MaxPackets", UintegerValue(packets));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Run();

    EXPECT_EQ(drops, 0u);
    EXPECT_EQ(rx.total, packets);
    EXPECT_LE(maxOccupancy, 32768u);
    // The buffer did fill up: back-pressure, not luck, kept it from overflowing.
    EXPECT_GT(maxOccupancy, 32768u - 2 * 64 * IbPacket::Blocks(4122));
    // The sender spent about half the time waiting for credits.
    const double wire = IbPacket::WireSize(payload, 0, false);
    const Time sendTime = Seconds(packets * wire * 8.0 / linkRate.GetBitRate());
    EXPECT_GT(stalled.GetSeconds(), 0.8 * sendTime.GetSeconds());
    // Delivery runs at the drain rate.
    const double drained = (rx.total - 1) * wire * 8.0 / (rx.last - rx.first).GetSeconds();
    EXPECT_NEAR(drained / (linkRate.GetBitRate() / 2.0), 1.0, 0.005);
}

namespace
{

/// What a slow-receiver run did, for comparing runs.
struct CreditRun
{
    uint64_t received{0};           ///< data packets delivered
    Time lastArrival;               ///< last delivery
    Time stalled;                   ///< sender's credit stall time
    uint64_t fcSentByReceiver{0};   ///< flow-control packets b sent
    uint64_t fcTraced{0};           ///< FlowControlTx packets seen on b
    uint64_t fcArrived{0};          ///< FlowControlRx packets seen on a
    uint64_t badLpcrc{0};           ///< of those, with a bad LPCRC
    std::vector<uint16_t> fcclSent; ///< FCCL of each traced flow-control packet of b
    std::vector<uint16_t> fcclSeen; ///< FCCL of each flow-control packet a received
};

/**
 * A 32 KB receive buffer drained at half the link rate: the sender lives on credits.
 * @param watchTx connect b's FlowControlTx
 * @param watchRx connect a's FlowControlRx
 * @return what happened
 */
CreditRun
RunSlowReceiver(bool watchTx, bool watchRx)
{
    IbHelper::ResetLidAllocation();
    IbHelper helper;
    helper.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    helper.SetDeviceAttribute("VlBufferSize", UintegerValue(32768));
    Link l = MakeLink(helper);
    l.b->SetAttribute("RxDrainRate", DataRateValue(DataRate(l.a->GetDataRate().GetBitRate() / 2)));
    CreditRun r;
    RxStats rx;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    l.a->TraceConnectWithoutContext("CreditStall", MakeBoundCallback(&SumStall, &r.stalled));
    auto record = [&r](bool sent, Ptr<const Packet> p) {
        IbFlowControlHeader fc;
        p->PeekHeader(fc);
        ASSERT_EQ(p->GetSize(), 6u);
        (sent ? r.fcTraced : r.fcArrived)++;
        r.badLpcrc += fc.IsLpcrcValid() ? 0 : 1;
        (sent ? r.fcclSent : r.fcclSeen).push_back(fc.GetFccl());
    };
    if (watchTx)
    {
        l.b->TraceConnectWithoutContext(
            "FlowControlTx",
            Callback<void, Ptr<const Packet>>([&record](Ptr<const Packet> p) { record(true, p); }));
    }
    if (watchRx)
    {
        l.a->TraceConnectWithoutContext("FlowControlRx",
                                        Callback<void, Ptr<const Packet>>(
                                            [&record](Ptr<const Packet> p) { record(false, p); }));
    }
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(500));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Run();
    r.received = rx.total;
    r.lastArrival = rx.last;
    r.fcSentByReceiver = l.b->GetFlowControlPacketsSent();
    Simulator::Destroy();
    return r;
}

} // namespace

TEST_F(IbLinkTest, FlowControlIsTheSameWhetherItsTracesAreWatchedOrNot)
{
    // Unwatched, a flow-control packet crosses the cable as its three fields; watched on
    // either side, as a 6-byte packet. Credits, stalls and delivery times must not differ.
    const CreditRun bare = RunSlowReceiver(false, false);
    ASSERT_EQ(bare.received, 500u);
    ASSERT_GT(bare.stalled, Time(0));
    // The receiver returns credits at least once per CreditUpdateThreshold (8192 bytes,
    // 128 blocks) it frees: 500 packets of 65 blocks (4096 B payload + 26 B of headers).
    const uint32_t blocks = IbPacket::Blocks(IbPacket::WireSize(4096, 0, false));
    ASSERT_EQ(blocks, 65u);
    ASSERT_GE(bare.fcSentByReceiver, 500u * blocks / (8192 / 64));
    for (auto [tx, rx] :
         std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {true, true}})
    {
        const CreditRun w = RunSlowReceiver(tx, rx);
        EXPECT_EQ(w.received, bare.received);
        EXPECT_EQ(w.lastArrival, bare.lastArrival);
        EXPECT_EQ(w.stalled, bare.stalled);
        EXPECT_EQ(w.fcSentByReceiver, bare.fcSentByReceiver);
        EXPECT_EQ(w.badLpcrc, 0u);
        // b's flow-control packets all show up where watched (a's initial ones too on
        // its receive side: b sent one per VL at link up, counted in fcSentByReceiver).
        EXPECT_EQ(w.fcTraced, tx ? bare.fcSentByReceiver : 0u);
        EXPECT_EQ(w.fcArrived, rx ? bare.fcSentByReceiver : 0u);
        if (tx && rx)
        {
            EXPECT_EQ(w.fcclSeen, w.fcclSent);
        }
    }
}

namespace
{

void
CountWithContext(uint64_t* n, std::string, Ptr<const Packet>)
{
    ++*n;
}

} // namespace

TEST_F(IbLinkTest, PerPacketTracesFireWhileConnectedAndStopWhenDisconnected)
{
    // The port tests a bit per trace source before firing it (IbTracedCallback keeps the
    // bit): connecting either way must set it, or the source would go silent; after a
    // disconnection nothing may fire, and a new connection must be heard again.
    IbHelper helper;
    Link l = MakeLink(helper);
    RxStats rx;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    uint64_t macTx = 0;
    uint64_t sniffed = 0;
    uint64_t rxBuffer = 0;
    const Callback<void, Ptr<const Packet>> onMacTx = MakeBoundCallback(&CountEvent, &macTx);
    const Callback<void, std::string, Ptr<const Packet>> onSniff =
        MakeBoundCallback(&CountWithContext, &sniffed);
    const Callback<void, uint8_t, uint32_t> onRxBuffer =
        MakeCallback(+[](uint64_t* n, uint8_t, uint32_t) { ++*n; }).Bind(&rxBuffer);
    const std::string sniffer = "/NodeList/" + std::to_string(l.b->GetNode()->GetId()) +
                                "/DeviceList/" + std::to_string(l.b->GetIfIndex()) +
                                "/$ns3::IbNetDevice/Sniffer";
    ASSERT_TRUE(l.a->TraceConnectWithoutContext("MacTx", onMacTx));
    ASSERT_TRUE(l.b->TraceConnectWithoutContext("RxBufferOccupancy", onRxBuffer));
    Config::Connect(sniffer, onSniff);
    const auto sendTen = [&l]() {
        IbRawTrafficHelper traffic(l.b->GetLid());
        traffic.SetAttribute("MaxPackets", UintegerValue(10));
        traffic.Install(l.a).Start(Simulator::Now() + MicroSeconds(1));
        Simulator::Run();
    };
    sendTen();
    ASSERT_EQ(rx.total, 10u);
    EXPECT_EQ(macTx, 10u);
    EXPECT_EQ(sniffed, 10u); // b receives data only; its flow control is not sniffed
    // Occupancy changes twice per packet: taken on arrival, freed when delivered.
    EXPECT_EQ(rxBuffer, 20u);
    ASSERT_TRUE(l.a->TraceDisconnectWithoutContext("MacTx", onMacTx));
    ASSERT_TRUE(l.b->TraceDisconnectWithoutContext("RxBufferOccupancy", onRxBuffer));
    Config::Disconnect(sniffer, onSniff);
    sendTen();
    ASSERT_EQ(rx.total, 20u);
    EXPECT_EQ(macTx, 10u);
    EXPECT_EQ(sniffed, 10u);
    EXPECT_EQ(rxBuffer, 20u);
    // Connected again: firing again.
    ASSERT_TRUE(l.a->TraceConnectWithoutContext("MacTx", onMacTx));
    sendTen();
    EXPECT_EQ(macTx, 20u);
    EXPECT_EQ(sniffed, 10u);
}

TEST_F(IbLinkTest, TwoVlsWithWeights3To1ShareTheLink3To1)
{
    IbHelper helper;
    helper.SetDeviceAttribute("NumDataVls", UintegerValue(2));
    helper.SetDeviceAttribute("VlArbitrationHigh", StringValue(""));
    // 4 KB packets are 65 blocks: weight 192 sends 3 of them per turn, weight 64 one.
    helper.SetDeviceAttribute("VlArbitrationLow", StringValue("0:192,1:64"));
    Link l = MakeLink(helper);
    RxStats rx;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    for (uint8_t sl : {0, 1})
    {
        IbRawTrafficHelper traffic(l.b->GetLid());
        traffic.SetAttribute("Sl", UintegerValue(sl));
        traffic.Install(l.a).Start(MicroSeconds(1));
    }
    Simulator::Stop(MicroSeconds(1) + MilliSeconds(1));
    Simulator::Run();
    ASSERT_GT(rx.bytes[1], 0u);
    const double ratio = double(rx.bytes[0]) / rx.bytes[1];
    EXPECT_NEAR(ratio / 3.0, 1.0, 0.02) << rx.bytes[0] << " vs " << rx.bytes[1];
    // And the link stayed saturated.
    const double wire = IbPacket::WireSize(4096, 0, false);
    const double total = (rx.total - 1) * wire * 8 / (rx.last - rx.first).GetSeconds();
    EXPECT_NEAR(total / 100e9, 1.0, 0.005);
}

TEST_F(IbLinkTest, RawTrafficOnSl15TakesTheVlTheTableGivesIt)
{
    // SL15 is an ordinary service level (only VL15 is the management lane): the raw
    // source refused it.
    IbHelper helper;
    helper.SetDeviceAttribute("NumDataVls", UintegerValue(2));
    helper.SetDeviceAttribute("SlToVlTable", StringValue("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1"));
    Link l = MakeLink(helper);
    RxStats rx;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("Sl", UintegerValue(15));
    traffic.SetAttribute("MaxPackets", UintegerValue(10));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Run();
    EXPECT_EQ(rx.total, 10u);
    EXPECT_EQ(rx.packets[1], 10u);
    EXPECT_EQ(rx.packets[0], 0u);
}

TEST_F(IbLinkTest, CorruptedPacketsAreDroppedCountedAndCreditsReturn)
{
    IbHelper helper;
    Link l = MakeLink(helper);
    l.b->SetReceiveErrorModel(FivePercentPacketErrors());
    RxStats rx;
    uint64_t rxDrops = 0;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    l.b->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&CountEvent, &rxDrops));
    const uint32_t packets = 2000;
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(packets));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Run();
    EXPECT_GT(rxDrops, 0u);
    EXPECT_EQ(rxDrops, l.b->GetRxCrcErrors());
    EXPECT_EQ(rx.total + rxDrops, packets);
    // Credits for the dropped packets came back: the sender has the whole buffer again.
    EXPECT_EQ(l.a->GetAvailableCredits(0), l.b->GetVlBufferSize() / 64);
    EXPECT_EQ(l.b->GetRxBufferUsed(0), 0u);
}

TEST_F(IbLinkTest, TheReceiveErrorModelAttributeSetsTheModelAndTheSetterClearsIt)
{
    IbHelper helper;
    Link l = MakeLink(helper);
    Ptr<RateErrorModel> em = FivePercentPacketErrors();
    l.b->SetAttribute("ReceiveErrorModel", PointerValue(em));
    PointerValue got;
    l.b->GetAttribute("ReceiveErrorModel", got);
    EXPECT_EQ(got.Get<ErrorModel>(), em);
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(1000));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Stop(MicroSeconds(500));
    Simulator::Run();
    const uint64_t drops = l.b->GetRxCrcErrors();
    EXPECT_GT(drops, 0u);
    // Cleared (ns-3's PointerValue cannot set a null pointer): the next packets all arrive.
    l.b->SetReceiveErrorModel(nullptr);
    EXPECT_EQ(l.b->GetReceiveErrorModel(), nullptr);
    RxStats rx;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    traffic.Install(l.a).Start(MicroSeconds(501));
    Simulator::Run();
    EXPECT_EQ(l.b->GetRxCrcErrors(), drops);
    EXPECT_EQ(rx.total, 1000u);
}

TEST_F(IbLinkTest, CreditsAreExchangedAtLinkUpAndAfterTraffic)
{
    IbHelper helper;
    helper.SetDeviceAttribute("VlBufferSize", UintegerValue(16384));
    Link l = MakeLink(helper);
    EXPECT_FALSE(l.a->IsLinkUp());
    Simulator::Stop(MicroSeconds(1));
    Simulator::Run();
    EXPECT_TRUE(l.a->IsLinkUp());
    for (uint8_t vl = 0; vl < l.a->GetNumDataVls(); ++vl)
    {
        EXPECT_EQ(l.a->GetAvailableCredits(vl), 16384u / 64);
        EXPECT_EQ(l.b->GetAvailableCredits(vl), 16384u / 64);
    }
}

// ----------------------------------------------------------------------------- raw IP

TEST_F(IbLinkTest, RawDatagramsCarryNs3ProtocolsByEtherType)
{
    IbHelper helper;
    Link l = MakeLink(helper);
    uint16_t gotProtocol = 0;
    uint32_t gotSize = 0;
    Address gotFrom;
    l.b->SetReceiveCallback(MakeCallback(+[](uint16_t* proto,
                                             uint32_t* size,
                                             Address* from,
                                             Ptr<NetDevice>,
                                             Ptr<const Packet> p,
                                             uint16_t protocol,
                                             const Address& f) {
                                *proto = protocol;
                                *size = p->GetSize();
                                *from = f;
                                return true;
                            }).Bind(&gotProtocol, &gotSize, &gotFrom));
    Simulator::Schedule(MicroSeconds(1), [&]() {
        EXPECT_TRUE(l.a->Send(Create<Packet>(100), l.b->GetAddress(), 0x0800));
    });
    Simulator::Run();
    EXPECT_EQ(gotProtocol, 0x0800);
    EXPECT_EQ(gotSize, 100u);
    EXPECT_EQ(gotFrom, l.a->GetAddress());
}

TEST_F(IbLinkTest, BufferMtuAndCreditAttributesCannotChangeOnceTheLinkIsUp)
{
    // Before, VlBufferSize, CreditUpdateThreshold and LimitOfHighPriority set after the
    // port was configured were ignored, and applied by a later reconfiguration under
    // credits already advertised (a smaller buffer then overran); an Mtu changed after
    // link up skipped the both-ends check and could wait for credits for ever.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbHelper helper;
    Link l = MakeLink(helper);
    l.a->SetAttribute("VlBufferSize", UintegerValue(32768)); // before link up: fine
    Simulator::Stop(MicroSeconds(1));
    Simulator::Run();
    l.a->SetAttribute("VlBufferSize", UintegerValue(32768)); // the same value: fine
    EXPECT_DEATH(l.a->SetAttribute("VlBufferSize", UintegerValue(16384)),
                 "IbNetDevice attribute VlBufferSize cannot change once the link is up");
    EXPECT_DEATH(l.b->SetAttribute("CreditUpdateThreshold", UintegerValue(4096)),
                 "IbNetDevice attribute CreditUpdateThreshold cannot change once the link is up");
    EXPECT_DEATH(l.b->SetAttribute("LimitOfHighPriority", UintegerValue(255)),
                 "IbNetDevice attribute LimitOfHighPriority cannot change once the link is up");
    EXPECT_DEATH(l.b->SetAttribute("Mtu", UintegerValue(2048)),
                 "IbNetDevice attribute Mtu cannot change once the link is up");
}

TEST_F(IbLinkTest, ADrainedPortReleasesEveryBlockOfTheRawDatagramsItHandsUp)
{
    // 2000 raw datagrams of 4092 bytes (4106 on the wire: 65 blocks of 64 bytes) into a
    // port that drains at half the link rate, one every 700 ns (the drain takes 657 ns):
    // every one must reach the node, and the receive buffer must end empty. The blocks
    // were counted after the LRH, RWH and VCRC had been stripped (4092 bytes: 64 blocks),
    // so each datagram leaked a block and the 1024-block buffer stalled the VL for good.
    IbHelper helper;
    Link l = MakeLink(helper);
    l.b->SetAttribute("RxDrainRate", DataRateValue(DataRate(l.a->GetDataRate().GetBitRate() / 2)));
    uint32_t up = 0;
    l.b->SetReceiveCallback(
        MakeCallback(+[](uint32_t* n, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&) {
            ++*n;
            return true;
        }).Bind(&up));
    uint32_t occupancy = UINT32_MAX;
    l.b->TraceConnectWithoutContext(
        "RxBufferOccupancy",
        MakeCallback(+[](uint32_t* o, uint8_t, uint32_t bytes) { *o = bytes; }).Bind(&occupancy));
    const uint32_t n = 2000;
    for (uint32_t k = 0; k < n; ++k)
    {
        Simulator::Schedule(MicroSeconds(1) + NanoSeconds(700) * int64_t(k),
                            [&l]() { l.a->Send(Create<Packet>(4092), l.b->GetAddress(), 0x0800); });
    }
    Simulator::Run();
    EXPECT_EQ(up, n);
    EXPECT_EQ(occupancy, 0u);
}

TEST_F(IbLinkTest, OnlyRawDatagramsGoUpToNs3ProtocolsTransportPacketsStopAtMacRx)
{
    // The port decides from the LNH carried beside the packet: a transport packet (LNH
    // IBA local) fires MacRx and stops there, a raw datagram (LNH raw) reaches the node.
    // Both with and without a receive drain rate (the drained path reads the LNH back).
    for (const char* drain : {"0bps", "10Gbps"})
    {
        IbHelper helper;
        Link l = MakeLink(helper);
        l.b->SetAttribute("RxDrainRate", DataRateValue(DataRate(drain)));
        uint32_t macRx = 0;
        uint32_t up = 0;
        l.b->TraceConnectWithoutContext("MacRx", MakeCallback(+[](uint32_t* n, Ptr<const Packet>) {
                                                     ++*n;
                                                 }).Bind(&macRx));
        l.b->SetReceiveCallback(MakeCallback(+[](uint32_t* n,
                                                 Ptr<NetDevice>,
                                                 Ptr<const Packet>,
                                                 uint16_t,
                                                 const Address&) {
                                    ++*n;
                                    return true;
                                }).Bind(&up));
        Simulator::Schedule(MicroSeconds(1), [&]() {
            EXPECT_TRUE(l.a->SendIbPacket(SealedSend(l, 256)));
            EXPECT_TRUE(l.a->SendIbPacket(SealedSend(l, 256)));
            EXPECT_TRUE(l.a->Send(Create<Packet>(100), l.b->GetAddress(), 0x0800));
        });
        Simulator::Run();
        EXPECT_EQ(macRx, 3u) << "RxDrainRate " << drain;
        EXPECT_EQ(up, 1u) << "RxDrainRate " << drain;
        Simulator::Destroy();
    }
}

namespace
{

/// Records the VLs it is told of, with its name, in a shared log.
class RecordingListener : public IbTxStartListener
{
  public:
    RecordingListener(std::vector<std::string>* log, std::string name)
        : m_log(log),
          m_name(std::move(name))
    {
    }

    bool TxStarted(uint8_t vl) override
    {
        m_log->push_back(m_name + std::to_string(vl));
        return true; // as if it had queued a packet: it goes last next time
    }

  private:
    std::vector<std::string>* m_log;
    std::string m_name;
};

} // namespace

TEST_F(IbLinkTest, TxStartListenersHearEveryPacketInOrderUntilRemovedOrDestroyed)
{
    IbHelper helper;
    helper.SetDeviceAttribute("NumDataVls", UintegerValue(2));
    Link l = MakeLink(helper);
    std::vector<std::string> log;
    RecordingListener a(&log, "a");
    auto b = std::make_unique<RecordingListener>(&log, "b");
    l.a->AddTxStartListener(&a);
    l.a->AddTxStartListener(b.get());
    EXPECT_EQ(a.GetTxStartPort(), PeekPointer(l.a));
    auto send = [&l](uint8_t sl) {
        Ptr<Packet> p = Create<Packet>(256);
        IbLrhHeader lrh;
        lrh.SetSl(sl);
        lrh.SetDlid(l.b->GetLid());
        lrh.SetSlid(l.a->GetLid());
        IbBthHeader bth;
        bth.SetOpcode(IbOpcode::RC_SEND_ONLY);
        IbPacket::Seal(p, lrh, nullptr, bth, 256);
        EXPECT_TRUE(l.a->SendIbPacket(p));
    };
    // Two packets (VL0, VL1): both listeners each time, taking turns at being first (the
    // order they registered, then the first that queued a packet goes last).
    Simulator::Schedule(MicroSeconds(1), [&]() {
        send(0);
        send(1);
    });
    // b is destroyed while registered: a hears the third packet alone. Then a leaves and
    // hears nothing more.
    Simulator::Schedule(MicroSeconds(2), [&]() {
        b.reset();
        send(0);
    });
    Simulator::Schedule(MicroSeconds(3), [&]() {
        l.a->RemoveTxStartListener(&a);
        EXPECT_EQ(a.GetTxStartPort(), nullptr);
        send(1);
    });
    Simulator::Run();
    EXPECT_EQ(log, (std::vector<std::string>{"a0", "b0", "b1", "a1", "a0"}));
    Simulator::Destroy();
}

TEST_F(IbLinkTest, SaturatingSourcesShareAPortEvenBesideASourceThatFillsNothing)
{
    // Sources A and B keep VL0 topped up; C, registered first, has finished (MaxPackets 1)
    // and fills nothing. The port used to move its first listener to the end after every
    // packet, whether it had filled the slot or not: A got 2/3 of the link and B 1/3. The
    // one that filled the slot goes last now: half each.
    IbHelper helper;
    Link l = MakeLink(helper);
    std::map<uint32_t, uint64_t> byQp;
    l.b->TraceConnectWithoutContext("MacRx",
                                    Callback<void, Ptr<const Packet>>([&byQp](Ptr<const Packet> p) {
                                        if (Simulator::Now() > MicroSeconds(20))
                                        {
                                            std::vector<uint8_t> b(p->GetSize());
                                            p->CopyData(b.data(), b.size());
                                            IbPacketParser parser;
                                            std::string e;
                                            ASSERT_TRUE(parser.Parse(b.data(), b.size(), &e)) << e;
                                            ++byQp[parser.m_bth.GetDestQp()];
                                        }
                                    }));
    const uint32_t qps[3] = {0x300, 0x100, 0x200}; // C, A, B
    for (uint32_t i = 0; i < 3; ++i)
    {
        IbRawTrafficHelper traffic(l.b->GetLid());
        traffic.SetAttribute("DestQp", UintegerValue(qps[i]));
        if (i == 0)
        {
            traffic.SetAttribute("MaxPackets", UintegerValue(1));
        }
        traffic.Install(l.a).Start(MicroSeconds(1 + i));
    }
    Simulator::Stop(MicroSeconds(420));
    Simulator::Run();
    ASSERT_GT(byQp[0x100], 500u); // (400 us at 100 Gb/s: about 1200 packets of 4 KB)
    EXPECT_NEAR(double(byQp[0x100]) / byQp[0x200], 1.0, 0.01)
        << byQp[0x100] << " packets from A, " << byQp[0x200] << " from B";
    Simulator::Destroy();
}

TEST_F(IbLinkTest, APacedSourceSendsAtItsDataRateExactly)
{
    // 252-byte payloads are 278 wire bytes, 44.48 ns at 50 Gb/s. Each gap used to be that
    // time rounded to the resolution (44 ns) and added up: 1.1 % too fast. Packet k now
    // leaves at k x 2224 bits / 50 Gb/s after the first: in 100 us, packets 0..2248.
    // Run from 1 to 101 us, optionally changing the rate at 51 us; returns packets sent.
    IbHelper helper;
    auto run = [&helper](const char* changeTo) {
        Link l = MakeLink(helper);
        IbRawTrafficHelper traffic(l.b->GetLid());
        traffic.SetAttribute("PayloadSize", UintegerValue(252));
        traffic.SetAttribute("DataRate", DataRateValue(DataRate("50Gbps")));
        ApplicationContainer apps = traffic.Install(l.a);
        apps.Start(MicroSeconds(1));
        apps.Stop(MicroSeconds(101));
        uint64_t sent = 0;
        apps.Get(0)->TraceConnectWithoutContext(
            "Tx",
            Callback<void, Ptr<const Packet>>([&sent](Ptr<const Packet>) { ++sent; }));
        if (changeTo != nullptr)
        {
            Simulator::Schedule(MicroSeconds(51), [&apps, changeTo]() {
                apps.Get(0)->SetAttribute("DataRate", DataRateValue(DataRate(changeTo)));
            });
        }
        Simulator::Run();
        Simulator::Destroy();
        return sent;
    };
    const double wireBits = IbPacket::WireSize(252, 0, false) * 8.0;
    ASSERT_EQ(wireBits, 2224.0);
    EXPECT_EQ(run(nullptr), static_cast<uint64_t>(100e-6 * 50e9 / wireBits) + 1);

    // DataRate halved at 51 us: the pace starts again at the next packet (due at
    // 1 us + 1125 x 44.48 ns), 88.96 ns apart; counted from the first packet at the new
    // rate, the source was silent until 101 us.
    const uint64_t before = static_cast<uint64_t>(50e-6 * 50e9 / wireBits) + 1;
    const double restart = 1e-6 + before * wireBits / 50e9;
    const uint64_t after = static_cast<uint64_t>((101e-6 - restart) * 25e9 / wireBits) + 1;
    EXPECT_NEAR(double(run("25Gbps")), double(before + after), 1.0);
}

TEST(IbLinkUserErrors, ATxStartListenerIsOnOnePortAtATime)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbHelper helper;
    Link l = MakeLink(helper);
    std::vector<std::string> log;
    RecordingListener a(&log, "a");
    l.a->AddTxStartListener(&a);
    EXPECT_DEATH(l.b->AddTxStartListener(&a),
                 "already registered on a port \\(another one\\); remove it there first");
    l.a->RemoveTxStartListener(&a);
    l.b->AddTxStartListener(&a);
    EXPECT_EQ(a.GetTxStartPort(), PeekPointer(l.b));
    Simulator::Destroy();
}

TEST(IbLinkUserErrors, ARawPayloadLargerThanTheMtuIsRefusedWithWhatToChange)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto startWith = [](uint32_t payload, uint32_t mtu) {
        IbHelper helper;
        helper.SetDeviceAttribute("Mtu", UintegerValue(mtu));
        Link l = MakeLink(helper);
        IbRawTrafficHelper traffic(l.b->GetLid());
        traffic.SetAttribute("PayloadSize", UintegerValue(payload));
        traffic.Install(l.a).Start(MicroSeconds(1));
        Simulator::Run();
    };
    // Beyond any IBA MTU the message does not suggest a larger Mtu.
    EXPECT_DEATH(startWith(5000, 4096),
                 "PayloadSize=5000 exceeds 4096, the largest IBA MTU; an IBA packet carries at "
                 "most 4096 payload bytes, so lower PayloadSize");
    EXPECT_DEATH(startWith(2048, 1024),
                 "PayloadSize=2048 exceeds the port's MTU 1024; lower PayloadSize or raise the "
                 "IbNetDevice Mtu");
}

TEST(IbLinkUserErrors, RawTrafficToALidThePeerDoesNotHaveIsRefusedNamingThePeersLid)
{
    // Back to back, the only LID a packet can reach is the other port's: any other DLID
    // would be delivered to a port that is not its destination.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbHelper helper;
    Link l = MakeLink(helper);
    const uint16_t other = l.b->GetLid() + 7;
    IbRawTrafficHelper traffic(other);
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Stop(MicroSeconds(3)); // without the check: runs, then fails to die
    std::ostringstream expected;
    expected << "Dlid=" << other << " \\(0x" << std::hex << other << std::dec
             << "\\) is not the LID of the only port it can reach: the cable leads straight to "
                "node "
             << l.nodes.Get(1)->GetId() << "'s port, LID " << l.b->GetLid() << "; use "
             << l.b->GetLid() << "\\.";
    EXPECT_DEATH(Simulator::Run(), expected.str());
    Simulator::Destroy();
}

TEST(IbLinkUserErrors, ADataSlMappedToVl15IsDroppedNotSentAsManagementTraffic)
{
    // SlToVlTable maps SL1 to 15, which means drop. Written into the LRH, VL 15 would make
    // the packet a management packet: no credits, ahead of every data VL.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::string table = "0,15,0,0,0,0,0,0,0,0,0,0,0,0,0,0";
    auto startRaw = [&table]() {
        IbHelper helper;
        helper.SetDeviceAttribute("SlToVlTable", StringValue(table));
        Link l = MakeLink(helper);
        IbRawTrafficHelper traffic(l.b->GetLid());
        traffic.SetAttribute("Sl", UintegerValue(1));
        traffic.Install(l.a).Start(MicroSeconds(1));
        Simulator::Stop(MicroSeconds(3)); // without the check: runs, then fails to die
        Simulator::Run();
    };
    EXPECT_DEATH(startRaw(),
                 "Sl=1 maps to VL15 in the port's SlToVlTable, which means drop: every packet "
                 "would be lost \\(or, sent on VL15, skip flow control\\). Map the SL to a "
                 "data VL in SlToVlTable or choose another Sl\\.");

    // NetDevice::Send with RawDatagramSl on such an SL: refused and traced, never sent.
    IbHelper helper;
    helper.SetDeviceAttribute("SlToVlTable", StringValue(table));
    helper.SetDeviceAttribute("RawDatagramSl", UintegerValue(1));
    Link l = MakeLink(helper);
    uint64_t dropped = 0;
    l.a->TraceConnectWithoutContext("MacTxDrop", MakeBoundCallback(&CountEvent, &dropped));
    RxStats rx;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    bool accepted = true;
    Simulator::Schedule(MicroSeconds(1), [&]() {
        accepted = l.a->Send(Create<Packet>(100), l.b->GetAddress(), 0x0800);
    });
    Simulator::Run();
    EXPECT_FALSE(accepted);
    EXPECT_EQ(dropped, 1u);
    EXPECT_EQ(rx.total, 0u);
    Simulator::Destroy();
}

TEST_F(IbLinkTest, ABufferOver128KiBWithALargeUpdateThresholdStillStreamsAtLineRate)
{
    // IBA advertises at most 2048 blocks (128 KiB) beyond the ABR, whatever the buffer. A
    // 256 KiB buffer with a 200 KiB CreditUpdateThreshold would let the sender stall after
    // 2048 blocks while the receiver waits for 3200 freed ones; the threshold is capped
    // below the window instead, and the stream runs at the rate times wire efficiency.
    IbHelper helper;
    helper.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    helper.SetDeviceAttribute("VlBufferSize", UintegerValue(262144));
    helper.SetDeviceAttribute("CreditUpdateThreshold", UintegerValue(204800));
    Link l = MakeLink(helper);
    RxStats rx;
    l.b->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&CountRx, &rx));
    const uint32_t payload = 4096;
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(2000));
    traffic.Install(l.a).Start(MicroSeconds(1));
    Simulator::Run();
    ASSERT_EQ(rx.total, 2000u);
    const double goodput = (rx.total - 1) * payload * 8.0 / (rx.last - rx.first).GetSeconds();
    const double expected = 100e9 * payload / IbPacket::WireSize(payload, 0, false);
    EXPECT_NEAR(goodput / expected, 1.0, 0.005) << "goodput " << goodput;
}

TEST_F(IbLinkTest, RawTrafficTxTraceSeesEveryPacketWhileConnected)
{
    // The application's Tx trace fires for each packet handed to the port, through
    // TraceConnect and Config alike, and stops when disconnected.
    IbHelper helper;
    Link l = MakeLink(helper);
    IbRawTrafficHelper traffic(l.b->GetLid());
    traffic.SetAttribute("MaxPackets", UintegerValue(40));
    traffic.SetAttribute("PayloadSize", UintegerValue(256));
    ApplicationContainer apps = traffic.Install(l.a);
    apps.Start(MicroSeconds(1));
    Ptr<IbRawTrafficApplication> app = DynamicCast<IbRawTrafficApplication>(apps.Get(0));
    uint64_t seen = 0;
    uint64_t seenByPath = 0;
    uint64_t sentWhenDisconnected = 0;
    auto count = MakeCallback(+[](uint64_t* n, Ptr<const Packet>) { ++*n; });
    app->TraceConnectWithoutContext("Tx", count.Bind(&seen));
    Config::ConnectWithoutContext("/NodeList/*/ApplicationList/*/$ns3::IbRawTrafficApplication/Tx",
                                  count.Bind(&seenByPath));
    // Packets start back to back from 1 us, one per serialization time T, and the
    // application keeps QueueTarget (2) more in the port's queue: at 1.5 us it has handed
    // over floor(500 ns / T) + 1 + 2 of the 40.
    Simulator::Schedule(NanoSeconds(1500), [&]() {
        sentWhenDisconnected = app->GetSent();
        app->TraceDisconnectWithoutContext("Tx", count.Bind(&seen));
    });
    Simulator::Run();
    EXPECT_EQ(app->GetSent(), 40u);
    EXPECT_EQ(seenByPath, 40u);
    const double t = IbPacket::WireSize(256, 0, false) * 8.0 / l.a->GetDataRate().GetBitRate();
    EXPECT_EQ(sentWhenDisconnected, static_cast<uint64_t>(500e-9 / t) + 1 + 2);
    EXPECT_EQ(seen, sentWhenDisconnected);
}

// ----------------------------------------------------------------------------- user errors

TEST(IbLinkUserErrors, APacketLargerThanIbaAllowsIsRefusedWithItsSize)
{
    // Sizes travel in 16 bits beside the packet: a larger one (from another MPI rank, or
    // injected into a switch) is refused, not truncated.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbHelper helper;
    Link l = MakeLink(helper);
    EXPECT_DEATH(l.b->ReceiveFromChannel(Create<Packet>(70000), false),
                 "received a packet of 70000 bytes; IBA packets are at most 4 KB");
    EXPECT_DEATH(l.b->EnqueueForwarded(Create<Packet>(70000), 0, nullptr, 0, Time(0)),
                 "a switch forwards a packet of 70000 bytes");
    Simulator::Destroy();
}

TEST(IbLinkUserErrors, BadAttributeValuesNameTheInputAndTheFix)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(CreateObject<IbNetDevice>()->SetAttribute("Mtu", UintegerValue(1500)),
                 "Mtu=1500 is not an IBA MTU; use one of 256, 512, 1024, 2048, 4096");
    EXPECT_DEATH(CreateObject<IbNetDevice>()->SetAttribute("LinkSpeed", StringValue("EDX")),
                 "LinkSpeed='EDX' is not an InfiniBand link speed; use one of SDR");
    EXPECT_DEATH(CreateObject<IbNetDevice>()->SetAttribute("LinkWidth", StringValue("3x")),
                 "LinkWidth='3x'");
    EXPECT_DEATH(
        CreateObject<IbNetDevice>()->SetAttribute("VlArbitrationLow", StringValue("0:300")),
        "VlArbitrationLow='0:300': entry 1 '0:300' has weight 300");
    EXPECT_DEATH(CreateObject<IbNetDevice>()->SetAttribute("NumDataVls", UintegerValue(16)),
                 "NumDataVls=16 is out of range");
    EXPECT_DEATH(CreateObject<IbNetDevice>()->SetAttribute("NumDataVls", UintegerValue(3)),
                 "NumDataVls=3: an IBA port operates 1, 2, 4, 8 or 15 data VLs \\(VLCap\\)");
    // The two ends of a cable must agree on the MTU (before: a 4096-byte MTU sender facing a
    // 256-byte MTU port with a 512-byte buffer waited for credits forever, silently).
    EXPECT_DEATH(
        {
            IbHelper helper;
            Link l = MakeLink(helper);
            l.b->SetAttribute("Mtu", UintegerValue(256));
            l.b->SetAttribute("VlBufferSize", UintegerValue(512));
            Simulator::Run();
        },
        "has Mtu=4096 but its peer on node [0-9]+ has Mtu=256; set the same Mtu on both ends "
        "of a cable");
    EXPECT_DEATH(CreateObject<IbChannel>()->SetAttribute("Length", DoubleValue(-1)),
                 "IbChannel attribute Length=-1 m: a cable is 0 \\(then Delay applies\\) to 1e6 "
                 "metres long");
    EXPECT_DEATH(CreateObject<IbChannel>()->SetAttribute("Delay", TimeValue(NanoSeconds(-3))),
                 "IbChannel attribute Delay=-3.*ns is negative");
    EXPECT_DEATH(
        CreateObject<IbChannel>()->SetAttribute("DelayPerMetre", TimeValue(NanoSeconds(-5))),
        "IbChannel attribute DelayPerMetre=-5.*ns is negative");
}

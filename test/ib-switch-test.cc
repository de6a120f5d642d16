/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Switch tests on hand-built fabrics with hand-programmed LFTs: latency through 1 and 3
 * switches (store-and-forward and cut-through), losslessness and fairness of a 16-to-1
 * incast, SL-to-VL remapping, and the drop of unroutable packets. Expected numbers are
 * derived from the link rate, packet size, cable delay and forwarding latency.
 */

#include "ns3/core-module.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet-parser.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-raw-traffic-helper.h"
#include "ns3/ib-switch.h"
#include "ns3/network-module.h"

#include <gtest/gtest.h>
#include <map>
#include <vector>

using namespace ns3;

namespace
{

class IbSwitchTest : public ::testing::Test
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

/// host0 - sw1 - sw2 - ... - swK - host1, LFTs programmed by hand.
struct Chain
{
    Ptr<IbNetDevice> src;
    Ptr<IbNetDevice> dst;
    std::vector<Ptr<IbSwitch>> switches;
};

Chain
MakeChain(uint32_t k,
          bool cutThrough,
          Time latency,
          double metres,
          const std::string& speed = "HDR")
{
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue(speed));
    ib.SetChannelAttribute("Length", DoubleValue(metres));
    Chain c;
    Ptr<Node> h0 = CreateObject<Node>();
    Ptr<Node> h1 = CreateObject<Node>();
    c.src = ib.InstallPort(h0);
    c.dst = ib.InstallPort(h1);
    Ptr<IbNetDevice> prev = c.src;
    for (uint32_t i = 0; i < k; ++i)
    {
        Ptr<Node> n = CreateObject<Node>();
        Ptr<IbSwitch> sw = CreateObject<IbSwitch>();
        sw->SetAttribute("CutThrough", BooleanValue(cutThrough));
        sw->SetAttribute("ForwardingLatency", TimeValue(latency));
        n->AggregateObject(sw);
        Ptr<IbNetDevice> in = ib.InstallPort(n);
        Ptr<IbNetDevice> out = ib.InstallPort(n);
        sw->AddPort(in);  // port 1: towards src
        sw->AddPort(out); // port 2: towards dst
        ib.Connect(prev, in);
        prev = out;
        c.switches.push_back(sw);
    }
    ib.Connect(prev, c.dst);
    for (auto& sw : c.switches)
    {
        sw->SetLftEntry(c.dst->GetLid(), 2);
        sw->SetLftEntry(c.src->GetLid(), 1);
    }
    return c;
}

/// @return a new switch, aggregated to a new node (returned in @p node)
Ptr<IbSwitch>
NewSwitch(Ptr<Node>* node)
{
    *node = CreateObject<Node>();
    Ptr<IbSwitch> sw = CreateObject<IbSwitch>();
    (*node)->AggregateObject(sw);
    return sw;
}

/// A switch with hosts on ports 1..N, its LFT routing each host's LID to its port.
struct Star
{
    Ptr<IbSwitch> sw;                    ///< the switch
    std::vector<Ptr<IbNetDevice>> hosts; ///< hosts[i] is on port i + 1
};

/**
 * @param ib the helper (device attributes set)
 * @param n hosts
 * @return the star
 */
Star
MakeStar(const IbHelper& ib, uint32_t n)
{
    Star st;
    Ptr<Node> s;
    st.sw = NewSwitch(&s);
    for (uint32_t i = 0; i < n; ++i)
    {
        st.hosts.push_back(ib.InstallPort(CreateObject<Node>()));
        Ptr<IbNetDevice> port = ib.InstallPort(s);
        st.sw->AddPort(port);
        ib.Connect(st.hosts.back(), port);
        st.sw->SetLftEntry(st.hosts.back()->GetLid(), i + 1);
    }
    return st;
}

/// Host a at EDR on switch port 1; hosts on ports 2.. at HDR (a faster output).
struct EdrInHdrOut
{
    Ptr<IbSwitch> sw;                   ///< the switch (cut-through)
    Ptr<IbNetDevice> a;                 ///< the EDR host
    std::vector<Ptr<IbNetDevice>> outs; ///< the HDR hosts, outs[i] on port i + 2
};

/**
 * @param n HDR hosts
 * @return the switch and its hosts; the LFT routes outs[0]'s LID to port 2
 */
EdrInHdrOut
MakeEdrInHdrOut(uint32_t n)
{
    IbHelper edr;
    edr.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    IbHelper hdr;
    hdr.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
    EdrInHdrOut e;
    Ptr<Node> s;
    e.sw = NewSwitch(&s);
    e.a = edr.InstallPort(CreateObject<Node>());
    Ptr<IbNetDevice> in = edr.InstallPort(s);
    e.sw->AddPort(in);
    edr.Connect(e.a, in);
    for (uint32_t i = 0; i < n; ++i)
    {
        e.outs.push_back(hdr.InstallPort(CreateObject<Node>()));
        Ptr<IbNetDevice> port = hdr.InstallPort(s);
        e.sw->AddPort(port);
        hdr.Connect(port, e.outs.back());
    }
    e.sw->SetLftEntry(e.outs[0]->GetLid(), 2);
    return e;
}

Ptr<Packet>
MakePacket(Ptr<IbNetDevice> from, uint16_t dlid, uint32_t payload, uint8_t sl = 0)
{
    Ptr<Packet> p = Create<Packet>(payload);
    IbLrhHeader lrh;
    lrh.SetSl(sl);
    lrh.SetVl(from->GetVlForSl(sl));
    lrh.SetDlid(dlid);
    lrh.SetSlid(from->GetLid());
    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::RC_SEND_ONLY);
    IbPacket::Seal(p, lrh, nullptr, bth, payload);
    return p;
}

/**
 * Count the wire bytes a port receives from each source LID from @p warmup on.
 * @param sink the receiving port
 * @param warmup bytes before this time are not counted
 * @param bytesFrom receives the counts, by SLID
 */
void
CountBytesBySource(Ptr<IbNetDevice> sink, Time warmup, std::map<uint16_t, uint64_t>* bytesFrom)
{
    sink->TraceConnectWithoutContext(
        "MacRx",
        MakeCallback(+[](std::map<uint16_t, uint64_t>* m, Time w, Ptr<const Packet> p) {
            if (Simulator::Now() >= w)
            {
                (*m)[IbPacket::PeekLrh(p).GetSlid()] += p->GetSize();
            }
        }).Bind(bytesFrom, warmup));
}

/// Send one packet at 1 us and return its one-way latency.
Time
OnePacketLatency(const Chain& c, uint32_t payload, uint32_t* wireBytes)
{
    Time sent;
    Time arrived;
    Simulator::Schedule(MicroSeconds(1), [&]() {
        Ptr<Packet> p = MakePacket(c.src, c.dst->GetLid(), payload);
        *wireBytes = p->GetSize();
        sent = Simulator::Now();
        c.src->SendIbPacket(p);
    });
    c.dst->TraceConnectWithoutContext("MacRx", MakeCallback(+[](Time* t, Ptr<const Packet>) {
                                                   *t = Simulator::Now();
                                               }).Bind(&arrived));
    Simulator::Run();
    return arrived - sent;
}

} // namespace

TEST_F(IbSwitchTest, StoreAndForwardLatencyIsPerHopSerializationPlusPropagationPlusLatency)
{
    for (uint32_t k : {1u, 3u})
    {
        const Time latency = NanoSeconds(90);
        Chain c = MakeChain(k, false, latency, 2.0); // 2 m: 10 ns per cable
        uint32_t bytes = 0;
        const Time measured = OnePacketLatency(c, 2048, &bytes);
        const Time ser = Seconds(bytes * 8.0 / 200e9);
        const Time prop = NanoSeconds(10);
        const Time expected = (ser + prop) * int64_t(k + 1) + latency * int64_t(k);
        EXPECT_EQ(measured, expected) << k << " switches";
        Simulator::Destroy();
    }
}

TEST_F(IbSwitchTest, CutThroughLatencyPaysSerializationOnce)
{
    for (uint32_t k : {1u, 3u})
    {
        const Time latency = NanoSeconds(90);
        Chain c = MakeChain(k, true, latency, 2.0);
        uint32_t bytes = 0;
        const Time measured = OnePacketLatency(c, 2048, &bytes);
        const Time ser = Seconds(bytes * 8.0 / 200e9);
        const Time header = Seconds(IbPacket::LRH_SIZE * 8.0 / 200e9); // the LRH routes it
        const Time prop = NanoSeconds(10);
        const Time expected = prop * int64_t(k + 1) + (header + latency) * int64_t(k) + ser;
        EXPECT_EQ(measured, expected) << k << " switches";
        Simulator::Destroy();
    }
    // At SDR 4x (8 Gb/s) a byte takes 1 ns: the LRH's 8 ns per switch show, where at HDR
    // they round to nothing.
    for (uint32_t k : {1u, 3u})
    {
        Chain c = MakeChain(k, true, NanoSeconds(90), 2.0, "SDR");
        uint32_t bytes = 0;
        const Time measured = OnePacketLatency(c, 2048, &bytes);
        const Time expected = NanoSeconds(10) * int64_t(k + 1) +
                              (NanoSeconds(8) + NanoSeconds(90)) * int64_t(k) + NanoSeconds(bytes);
        EXPECT_EQ(measured, expected) << k << " switches at SDR";
        Simulator::Destroy();
    }
}

TEST_F(IbSwitchTest, FecLatencyAddsToEveryCableOnce)
{
    // The cut-through chain of the test above with 100 ns of FEC on every cable: each of
    // the k + 1 cables delays the packet by 100 ns more, nothing else changes.
    for (uint32_t k : {1u, 3u})
    {
        const Time latency = NanoSeconds(90);
        const Time fec = NanoSeconds(100);
        Chain c = MakeChain(k, true, latency, 2.0);
        for (auto& sw : c.switches)
        {
            for (uint8_t i = 1; i <= sw->GetNPorts(); ++i)
            {
                sw->GetPort(i)->GetChannel()->SetAttribute("FecLatency", TimeValue(fec));
            }
        }
        // Delay reads the propagation alone, so that reading and setting it back (as
        // IbHelper does for cables between MPI ranks) changes nothing.
        TimeValue delay;
        c.src->GetChannel()->GetAttribute("Delay", delay);
        EXPECT_EQ(delay.Get(), NanoSeconds(10));
        c.src->GetChannel()->SetAttribute("Delay", delay);
        EXPECT_EQ(DynamicCast<IbChannel>(c.src->GetChannel())->GetDelay(), NanoSeconds(110));
        uint32_t bytes = 0;
        const Time measured = OnePacketLatency(c, 2048, &bytes);
        const Time ser = Seconds(bytes * 8.0 / 200e9);
        const Time header = Seconds(IbPacket::LRH_SIZE * 8.0 / 200e9);
        const Time prop = NanoSeconds(10) + fec;
        const Time expected = prop * int64_t(k + 1) + (header + latency) * int64_t(k) + ser;
        EXPECT_EQ(measured, expected) << k << " switches";
        Simulator::Destroy();
    }
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(CreateObject<IbChannel>()->SetAttribute("FecLatency", TimeValue(NanoSeconds(-1))),
                 "IbChannel attribute FecLatency=-1(\\.0+)?ns is negative");
}

TEST_F(IbSwitchTest, ModeAndLatencySetAfterThePortsWereAddedTakeEffect)
{
    // The ports copy the switch's mode and latency: a change made once they are added
    // must reach them (and their cables), not only GetForwardingLatency.
    const uint32_t k = 2;
    Chain c = MakeChain(k, true, NanoSeconds(90), 2.0);
    const Time latency = NanoSeconds(200);
    for (auto& sw : c.switches)
    {
        sw->SetAttribute("CutThrough", BooleanValue(false));
        sw->SetAttribute("ForwardingLatency", TimeValue(latency));
        EXPECT_EQ(sw->GetForwardingLatency(), latency);
        EXPECT_FALSE(sw->IsCutThrough());
    }
    uint32_t bytes = 0;
    const Time measured = OnePacketLatency(c, 2048, &bytes);
    const Time ser = Seconds(bytes * 8.0 / 200e9);
    const Time prop = NanoSeconds(10);
    EXPECT_EQ(measured, (ser + prop) * int64_t(k + 1) + latency * int64_t(k));
}

TEST_F(IbSwitchTest, AMulticastCopyOnAFasterOutputWaitsForItsTailLikeAUnicastPacket)
{
    // Cut-through from an EDR input to HDR outputs: a packet may not finish leaving before
    // its tail has arrived. A multicast copy must keep that rule as a unicast packet does.
    auto arrivalAtB = [](uint16_t dlidKind) {
        EdrInHdrOut e = MakeEdrInHdrOut(2);
        Ptr<IbNetDevice> a = e.a;
        std::vector<Ptr<IbNetDevice>>& outs = e.outs;
        e.sw->SetMftEntry(0xC001, {2, 3});
        Time arrived;
        outs[0]->TraceConnectWithoutContext("MacRx", MakeCallback(+[](Time* t, Ptr<const Packet>) {
                                                         *t = Simulator::Now();
                                                     }).Bind(&arrived));
        const uint16_t dlid = dlidKind == 0 ? outs[0]->GetLid() : 0xC001;
        Simulator::Schedule(MicroSeconds(1),
                            [a, dlid]() { a->SendIbPacket(MakePacket(a, dlid, 4096)); });
        Simulator::Run();
        Simulator::Destroy();
        return arrived;
    };
    const Time unicast = arrivalAtB(0);
    ASSERT_GT(unicast, MicroSeconds(1));
    EXPECT_EQ(arrivalAtB(1), unicast);
}

TEST_F(IbSwitchTest, AMulticastPacketHoldsItsInputBufferUntilItsLastCopyHasLeft)
{
    // 200 packets of 4 KB to a group of two members, one of which drains at 1 Gb/s (33 us
    // per packet). The input buffer is released when the last copy has left, so the
    // slow member pushes back on the source: in 200 us the source gets out what the
    // switch's input buffer (15 packets), the slow member's buffer (15) and its drain (6)
    // hold. Before, the buffer was released with the first copy: the source sent all 200
    // at EDR rate (66 us) and the slow output's queue grew to hold them.
    EdrInHdrOut e = MakeEdrInHdrOut(2);
    e.outs[1]->SetAttribute("RxDrainRate", DataRateValue(DataRate("1Gbps")));
    e.sw->SetMftEntry(0xC001, {2, 3});
    uint64_t fast = 0;
    e.outs[0]->TraceConnectWithoutContext(
        "MacRx",
        MakeCallback(+[](uint64_t* n, Ptr<const Packet>) { ++*n; }).Bind(&fast));
    Simulator::Schedule(MicroSeconds(1), [&e]() {
        for (int i = 0; i < 200; ++i)
        {
            e.a->SendIbPacket(MakePacket(e.a, 0xC001, 4096));
        }
    });
    Simulator::Stop(MicroSeconds(201));
    Simulator::Run();
    const uint64_t sent = e.a->GetTxPackets();
    EXPECT_GE(sent, 30u);
    EXPECT_LE(sent, 45u);
    // The fast member has everything the source sent but what is on its way.
    EXPECT_GE(fast + 2, sent);
    EXPECT_LE(e.sw->GetPort(3)->GetTxQueueLength(0), 16u);
    Simulator::Destroy();
}

TEST_F(IbSwitchTest, AMulticastCopyWhoseSlMapsToVl15IsCountedAsADrop)
{
    // Group {1, 2, 3}, sent from port 1: port 2 gets its copy; SL5 maps to VL15 towards
    // port 3, so that copy is dropped, counted and traced like a unicast packet (before,
    // it vanished without either).
    IbHelper ib;
    Star star = MakeStar(ib, 3);
    star.sw->SetMftEntry(0xC001, {1, 2, 3});
    std::array<uint8_t, 16> map{};
    map[5] = 15;
    star.sw->SetSl2Vl(1, 3, map);
    uint64_t traced = 0;
    star.sw->TraceConnectWithoutContext(
        "UnknownDlidDrop",
        Callback<void, Ptr<const Packet>, uint8_t>([&traced](Ptr<const Packet>, uint8_t in) {
            EXPECT_EQ(in, 1);
            ++traced;
        }));
    std::array<uint64_t, 3> got{};
    for (uint32_t i = 0; i < 3; ++i)
    {
        star.hosts[i]->TraceConnectWithoutContext(
            "MacRx",
            Callback<void, Ptr<const Packet>>([&got, i](Ptr<const Packet>) { ++got[i]; }));
    }
    Simulator::Schedule(MicroSeconds(1), [&star]() {
        star.hosts[0]->SendIbPacket(MakePacket(star.hosts[0], 0xC001, 256, 5));
    });
    Simulator::Run();
    EXPECT_EQ(got[0], 0u);
    EXPECT_EQ(got[1], 1u);
    EXPECT_EQ(got[2], 0u);
    EXPECT_EQ(star.sw->GetUnknownDlidDrops(), 1u);
    EXPECT_EQ(traced, 1u);
    // the input buffer was released: the port has all its credits back
    EXPECT_EQ(star.sw->GetPort(1)->GetRxBufferUsed(star.hosts[0]->GetVlForSl(5)), 0u);
}

TEST_F(IbSwitchTest, AnMftEntryNamingAPortTwiceAndAnLftEntryForNoPortAreRefused)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbHelper ib;
    Star star = MakeStar(ib, 3);
    EXPECT_DEATH(star.sw->SetMftEntry(0xC001, {1, 2, 2}),
                 "MLID 0xc001 names port 2 twice; list each member port once");
    // An LFT entry for a port the switch does not have: before, its packets were dropped
    // as if the LID had no route.
    EXPECT_DEATH(star.sw->SetLftEntry(7, 9),
                 "SetLftEntry: LID 7 goes to port 9, but the switch \\(LID [0-9]+\\) has ports "
                 "1..3 \\(0 = itself, 255 = no route\\)");
    std::vector<uint8_t> lft(8, IbSwitch::NO_ROUTE);
    lft[5] = 4;
    EXPECT_DEATH(star.sw->SetLft(lft), "SetLft: LID 5 goes to port 4");
    star.sw->SetLftEntry(7, IbSwitch::NO_ROUTE); // still fine
}

TEST_F(IbSwitchTest, PhyTxBeginIsStampedWhenACutThroughPacketReallyStarts)
{
    // EDR in, HDR out, cut-through: the output may not start until the tail allows it,
    // about 164 ns after the packet is handed over. PhyTxBegin (and so pcap and ascii
    // records) fire when the first bit goes out: one HDR serialization before PhyTxEnd.
    EdrInHdrOut e = MakeEdrInHdrOut(1);
    Ptr<IbNetDevice> a = e.a;
    Ptr<IbNetDevice> b = e.outs[0];
    Ptr<IbNetDevice> out = e.sw->GetPort(2);
    Time begin;
    Time end;
    uint32_t bytes = 0;
    out->TraceConnectWithoutContext("PhyTxBegin",
                                    MakeCallback(+[](Time* t, uint32_t* n, Ptr<const Packet> p) {
                                        *t = Simulator::Now();
                                        *n = p->GetSize();
                                    }).Bind(&begin, &bytes));
    out->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(+[](Time* t, Ptr<const Packet>) {
                                                    *t = Simulator::Now();
                                                }).Bind(&end));
    Simulator::Schedule(MicroSeconds(1),
                        [a, b]() { a->SendIbPacket(MakePacket(a, b->GetLid(), 4096)); });
    Simulator::Run();
    ASSERT_GT(bytes, 4096u);
    const Time hdrSerialization = out->GetDataRate().CalculateBytesTxTime(bytes);
    EXPECT_NEAR((end - begin).GetNanoSeconds(), hdrSerialization.GetNanoSeconds(), 1);
}

TEST_F(IbSwitchTest, UnknownDlidIsDroppedCountedAndTraced)
{
    Chain c = MakeChain(1, true, NanoSeconds(90), 1.0);
    uint64_t traced = 0;
    c.switches[0]->TraceConnectWithoutContext(
        "UnknownDlidDrop",
        MakeCallback(+[](uint64_t* n, Ptr<const Packet>, uint8_t) { ++*n; }).Bind(&traced));
    uint64_t delivered = 0;
    c.dst->TraceConnectWithoutContext("MacRx", MakeCallback(+[](uint64_t* n, Ptr<const Packet>) {
                                                   ++*n;
                                               }).Bind(&delivered));
    Simulator::Schedule(MicroSeconds(1), [&]() {
        c.src->SendIbPacket(MakePacket(c.src, 0x1234, 100)); // nobody has that LID
        c.src->SendIbPacket(MakePacket(c.src, c.dst->GetLid(), 100));
    });
    Simulator::Run();
    EXPECT_EQ(c.switches[0]->GetUnknownDlidDrops(), 1u);
    EXPECT_EQ(traced, 1u);
    EXPECT_EQ(delivered, 1u);
    // The dropped packet's buffer went back: the switch input holds nothing.
    EXPECT_EQ(c.switches[0]->GetPort(1)->GetRxBufferUsed(0), 0u);
}

TEST_F(IbSwitchTest, RawTrafficToALidNoSwitchRoutesIsRefusedAtStart)
{
    // The first switch would drop every packet (UnknownDlidDrop): the application says so
    // when it starts instead of sending into the drop counter. A routed LID still runs.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    Chain c = MakeChain(2, true, NanoSeconds(90), 1.0);
    IbRawTrafficHelper unknown(0x1234);
    unknown.Install(c.src).Start(MicroSeconds(1));
    Simulator::Stop(MicroSeconds(3)); // without the check: runs, then fails to die
    EXPECT_DEATH(Simulator::Run(),
                 "Dlid=4660 \\(0x1234\\) has no route in the forwarding table of the switch on "
                 "node [0-9]+ that the port's cable leads to, which would drop every packet; use "
                 "a LID the subnet manager assigned");
    Simulator::Destroy();

    Chain d = MakeChain(2, true, NanoSeconds(90), 1.0);
    IbRawTrafficHelper routed(d.dst->GetLid());
    routed.SetAttribute("MaxPackets", UintegerValue(3));
    routed.Install(d.src).Start(MicroSeconds(1));
    uint64_t delivered = 0;
    d.dst->TraceConnectWithoutContext("MacRx", MakeCallback(+[](uint64_t* n, Ptr<const Packet>) {
                                                   ++*n;
                                               }).Bind(&delivered));
    Simulator::Run();
    EXPECT_EQ(delivered, 3u);
    EXPECT_EQ(d.switches[0]->GetUnknownDlidDrops(), 0u);
}

TEST_F(IbSwitchTest, SlToVlTableRemapsTheVlAndKeepsTheVcrcValid)
{
    IbHelper ib;
    ib.SetDeviceAttribute("NumDataVls", UintegerValue(4));
    Chain c;
    Ptr<Node> h0 = CreateObject<Node>();
    Ptr<Node> h1 = CreateObject<Node>();
    Ptr<Node> s;
    Ptr<IbSwitch> sw = NewSwitch(&s);
    c.src = ib.InstallPort(h0);
    c.dst = ib.InstallPort(h1);
    sw->AddPort(ib.InstallPort(s));
    sw->AddPort(ib.InstallPort(s));
    ib.Connect(c.src, sw->GetPort(1));
    ib.Connect(sw->GetPort(2), c.dst);
    sw->SetLftEntry(c.dst->GetLid(), 2);
    std::array<uint8_t, 16> map{};
    map[2] = 3; // SL2 leaves on VL3
    sw->SetSl2Vl(1, 2, map);
    std::vector<uint8_t> bytes;
    c.dst->TraceConnectWithoutContext(
        "MacRx",
        MakeCallback(+[](std::vector<uint8_t>* b, Ptr<const Packet> p) {
            b->resize(p->GetSize());
            p->CopyData(b->data(), b->size());
        }).Bind(&bytes));
    Simulator::Schedule(MicroSeconds(1),
                        [&]() { c.src->SendIbPacket(MakePacket(c.src, c.dst->GetLid(), 333, 2)); });
    Simulator::Run();
    ASSERT_FALSE(bytes.empty());
    IbPacketParser parser;
    std::string error;
    EXPECT_TRUE(parser.Parse(bytes.data(), bytes.size(), &error)) << error;
    EXPECT_EQ(parser.m_lrh.GetVl(), 3);
    EXPECT_EQ(parser.m_lrh.GetSl(), 2);
    EXPECT_EQ(c.src->GetVlForSl(2), 2); // it left the host on VL2
}

TEST_F(IbSwitchTest, PhyTxEndShowsThePacketAsSentWhenTheNextSwitchRewritesItsVl)
{
    // A cut-through switch takes a 4 KB packet 90 ns after its LRH arrives and rewrites
    // its VL before the sender's last bit leaves (164 ns at HDR): the sender's PhyTxEnd
    // must still show the packet as it was sent.
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
    ib.SetDeviceAttribute("NumDataVls", UintegerValue(4));
    Ptr<Node> h0 = CreateObject<Node>();
    Ptr<Node> h1 = CreateObject<Node>();
    Ptr<Node> s;
    Ptr<IbSwitch> sw = NewSwitch(&s);
    Ptr<IbNetDevice> src = ib.InstallPort(h0);
    Ptr<IbNetDevice> dst = ib.InstallPort(h1);
    sw->AddPort(ib.InstallPort(s));
    sw->AddPort(ib.InstallPort(s));
    ib.Connect(src, sw->GetPort(1));
    ib.Connect(sw->GetPort(2), dst);
    sw->SetLftEntry(dst->GetLid(), 2);
    std::array<uint8_t, 16> map{};
    map[2] = 3; // SL2 leaves the switch on VL3
    sw->SetSl2Vl(1, 2, map);

    struct Seen
    {
        int txEndVl{-1};
        int rxVl{-1};
        Time txEnd;
        Time forwarded;
    } seen;

    auto vlOf = [](Ptr<const Packet> p) {
        uint8_t b0 = 0;
        p->CopyData(&b0, 1);
        return b0 >> 4;
    };
    src->TraceConnectWithoutContext(
        "PhyTxEnd",
        MakeCallback(+[](Seen* x, int (*vl)(Ptr<const Packet>), Ptr<const Packet> p) {
            x->txEndVl = vl(p);
            x->txEnd = Simulator::Now();
        }).Bind(&seen, +vlOf));
    sw->GetPort(2)->TraceConnectWithoutContext("PhyTxBegin",
                                               MakeCallback(+[](Seen* x, Ptr<const Packet>) {
                                                   x->forwarded = Simulator::Now();
                                               }).Bind(&seen));
    dst->TraceConnectWithoutContext(
        "MacRx",
        MakeCallback(+[](Seen* x, int (*vl)(Ptr<const Packet>), Ptr<const Packet> p) {
            x->rxVl = vl(p);
        }).Bind(&seen, +vlOf));
    Simulator::Schedule(MicroSeconds(1),
                        [&]() { src->SendIbPacket(MakePacket(src, dst->GetLid(), 4000, 2)); });
    Simulator::Run();
    ASSERT_GT(seen.forwarded, Time(0));
    EXPECT_LT(seen.forwarded, seen.txEnd); // the switch rewrote it while it was sent
    EXPECT_EQ(seen.txEndVl, 2);
    EXPECT_EQ(seen.rxVl, 3);
}

TEST_F(IbSwitchTest, Vl15PacketsFromTwoInputsToOneOutputAllCrossTheSwitch)
{
    // VL15 takes no credits, but the switch hands an output VL its next packet only once
    // that VL's queue is empty: the port must say so for VL15 too, or the packets behind
    // the first few wait in their input FIFOs for ever.
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    Star star = MakeStar(ib, 3);
    Ptr<IbSwitch> sw = star.sw;
    std::vector<Ptr<IbNetDevice>>& hosts = star.hosts;
    const uint32_t perSender = 100;
    uint64_t received = 0;
    hosts[2]->TraceConnectWithoutContext("MacRx",
                                         MakeCallback(+[](uint64_t* n, Ptr<const Packet> p) {
                                             EXPECT_EQ(IbPacket::PeekLrh(p).GetVl(), 15);
                                             ++*n;
                                         }).Bind(&received));
    Simulator::Schedule(MicroSeconds(1), [&]() {
        for (uint32_t k = 0; k < perSender; ++k)
        {
            for (uint32_t i = 0; i < 2; ++i)
            {
                Ptr<Packet> p = Create<Packet>(256);
                IbLrhHeader lrh;
                lrh.SetVl(IbNetDevice::VL15);
                lrh.SetDlid(hosts[2]->GetLid());
                lrh.SetSlid(hosts[i]->GetLid());
                IbBthHeader bth;
                bth.SetOpcode(IbOpcode::UD_SEND_ONLY);
                IbPacket::Seal(p, lrh, nullptr, bth, 256);
                ASSERT_TRUE(hosts[i]->SendIbPacket(p));
            }
        }
    });
    Simulator::Run();
    EXPECT_EQ(received, 2 * perSender);
    EXPECT_EQ(sw->GetForwardedPackets(), 2 * perSender);
}

namespace
{

/// Two hosts on one switch (ports 1 and 2), every port with @p attrs.
struct OneSwitch
{
    Ptr<IbSwitch> sw;
    Ptr<IbNetDevice> a;
    Ptr<IbNetDevice> b;
    Ptr<IbNetDevice> swOut; ///< the switch port towards b
};

OneSwitch
MakeOneSwitch(const std::vector<std::pair<std::string, std::string>>& attrs)
{
    IbHelper ib;
    for (const auto& [name, value] : attrs)
    {
        ib.SetDeviceAttribute(name, StringValue(value));
    }
    OneSwitch o;
    Ptr<Node> s;
    o.sw = NewSwitch(&s);
    o.a = ib.InstallPort(CreateObject<Node>());
    o.b = ib.InstallPort(CreateObject<Node>());
    Ptr<IbNetDevice> in = ib.InstallPort(s);
    o.swOut = ib.InstallPort(s);
    o.sw->AddPort(in);
    o.sw->AddPort(o.swOut);
    ib.Connect(o.a, in);
    ib.Connect(o.swOut, o.b);
    o.sw->SetLftEntry(o.b->GetLid(), 2);
    o.sw->SetLftEntry(o.a->GetLid(), 1);
    return o;
}

} // namespace

TEST_F(IbSwitchTest, AnUnprogrammedSwitchMapsSlsAsItsPortsSlToVlTableSays)
{
    // Every port, switch ports included, puts SL4 on VL1 of two: the switch keeps it there
    // (SL mod NumDataVls would give VL0).
    const std::string table = "0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0";
    OneSwitch o = MakeOneSwitch({{"NumDataVls", "2"}, {"SlToVlTable", table}});
    EXPECT_EQ(o.sw->GetSl2Vl(1, 2, 4), 1);
    EXPECT_EQ(o.sw->GetSl2Vl(1, 2, 5), 0);
    std::vector<uint8_t> vls;
    o.b->TraceConnectWithoutContext("MacRx",
                                    MakeCallback(+[](std::vector<uint8_t>* v, Ptr<const Packet> p) {
                                        v->push_back(IbPacket::PeekLrh(p).GetVl());
                                    }).Bind(&vls));
    Simulator::Schedule(MicroSeconds(1), [&]() {
        o.a->SendIbPacket(MakePacket(o.a, o.b->GetLid(), 256, 4));
        o.a->SendIbPacket(MakePacket(o.a, o.b->GetLid(), 256, 5));
    });
    Simulator::Run();
    EXPECT_EQ(vls, (std::vector<uint8_t>{1, 0}));
    // A table set on a port after it joined the switch counts too.
    o.swOut->SetAttribute("SlToVlTable", StringValue("1,1,1,1,0,1,1,1,1,1,1,1,1,1,1,1"));
    EXPECT_EQ(o.sw->GetSl2Vl(1, 2, 4), 0);
    EXPECT_EQ(o.sw->GetSl2Vl(1, 2, 5), 1);
}

TEST_F(IbSwitchTest, AVlTheOutputPortNeverArbitratesIsRefusedWithAMessage)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // The switch ports arbitrate VL0 only, while SL1 maps to VL1: the packet could never
    // leave. By default (SL mod NumDataVls) the port says so when the packet reaches it.
    auto run = [](const std::string& table) {
        OneSwitch o = MakeOneSwitch({{"NumDataVls", "2"}, {"SlToVlTable", table}});
        for (uint8_t p = 1; p <= 2; ++p)
        {
            o.sw->GetPort(p)->SetAttribute("VlArbitrationLow", StringValue("0:4"));
        }
        Simulator::Schedule(MicroSeconds(1),
                            [o]() { o.a->SendIbPacket(MakePacket(o.a, o.b->GetLid(), 256, 1)); });
        Simulator::Run();
    };
    EXPECT_DEATH(run(""),
                 "port [0-9]+: a packet waits on VL1, but no entry of weight > 0 names VL1 in "
                 "VlArbitrationHigh='0:4' or VlArbitrationLow='0:4', so it could never be sent "
                 "\\(a switch put it there by its SL-to-VL table\\). Add an entry such as 1:4");
    // The same with the ports' own table (the switch's unprogrammed pairs follow it).
    EXPECT_DEATH(run("0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0"),
                 "port [0-9]+: a packet waits on VL1, but no entry of weight > 0 names VL1");
    // Programming a pair explicitly (as a subnet manager does) is checked at once.
    auto program = []() {
        OneSwitch o = MakeOneSwitch({{"NumDataVls", "2"}});
        o.swOut->SetAttribute("VlArbitrationLow", StringValue("0:4"));
        std::array<uint8_t, 16> table{};
        table[1] = 1;
        o.sw->SetSl2Vl(1, 2, table);
    };
    EXPECT_DEATH(program(),
                 "IbSwitch on node [0-9]+: SL1 from port 1 to port 2 maps to VL1, but no entry of "
                 "weight > 0 names VL1 in that port's VlArbitrationHigh='0:4' or "
                 "VlArbitrationLow='0:4'");
}

TEST_F(IbSwitchTest, Incast16To1IsLosslessAndFair)
{
    const uint32_t senders = 16;
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    Star star = MakeStar(ib, senders + 1);
    Ptr<IbSwitch> sw = star.sw;
    std::vector<Ptr<IbNetDevice>>& hosts = star.hosts;
    Ptr<IbNetDevice> sink = hosts[senders];
    std::map<uint16_t, uint64_t> bytesFrom;
    uint64_t drops = 0;
    const Time warmup = MicroSeconds(100);
    CountBytesBySource(sink, warmup, &bytesFrom);
    for (auto& h : hosts)
    {
        for (const char* t : {"MacTxDrop", "PhyRxDrop"})
        {
            h->TraceConnectWithoutContext(t, MakeCallback(+[](uint64_t* n, Ptr<const Packet>) {
                                                 ++*n;
                                             }).Bind(&drops));
        }
    }
    for (uint32_t i = 0; i < senders; ++i)
    {
        IbRawTrafficHelper traffic(sink->GetLid());
        traffic.Install(hosts[i]).Start(MicroSeconds(1));
    }
    const Time end = MilliSeconds(3);
    Simulator::Stop(end);
    Simulator::Run();
    EXPECT_EQ(drops, 0u);
    EXPECT_EQ(sw->GetUnknownDlidDrops(), 0u);
    ASSERT_EQ(bytesFrom.size(), senders);
    const double window = (end - warmup).GetSeconds();
    const double bottleneck = 100e9;
    double total = 0;
    for (const auto& [slid, b] : bytesFrom)
    {
        const double share = b * 8.0 / window / bottleneck;
        EXPECT_NEAR(share * senders, 1.0, 0.02) << "source LID " << slid;
        total += share;
    }
    // The bottleneck stays busy: wire throughput within 0.5 % of the link rate.
    EXPECT_NEAR(total, 1.0, 0.005);
}

TEST_F(IbSwitchTest, ASwitchOutputWaitingForCreditsReportsItsStall)
{
    // The switch hands a packet to its output port only when the port has credits for it,
    // so the port's own queue never held a packet without credits and switch outputs
    // reported no credit stall at all. Host 0 sends through the switch to host 1, which
    // drains at half the link rate: the output to host 1 sends one packet per two wire
    // times and waits for credits in between, never while its wire is busy.
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    ib.SetDeviceAttribute("VlBufferSize", UintegerValue(32768));
    Star star = MakeStar(ib, 2);
    Ptr<IbNetDevice> sink = star.hosts[1];
    Ptr<IbNetDevice> out = star.sw->GetPort(2);
    const DataRate rate = sink->GetDataRate();
    sink->SetAttribute("RxDrainRate", DataRateValue(DataRate(rate.GetBitRate() / 2)));
    Time traced;
    uint32_t stalls = 0;
    out->TraceConnectWithoutContext(
        "CreditStall",
        Callback<void, uint8_t, Time>([&traced, &stalls](uint8_t, Time d) {
            traced += d;
            ++stalls;
        }));
    Time last;
    uint64_t received = 0;
    sink->TraceConnectWithoutContext("MacRx",
                                     Callback<void, Ptr<const Packet>>([&](Ptr<const Packet>) {
                                         last = Simulator::Now();
                                         ++received;
                                     }));
    const uint32_t packets = 400;
    IbRawTrafficHelper traffic(sink->GetLid());
    traffic.SetAttribute("PayloadSize", UintegerValue(4096));
    traffic.SetAttribute("MaxPackets", UintegerValue(packets));
    traffic.Install(star.hosts[0]).Start(MicroSeconds(1));
    Simulator::Run();
    ASSERT_EQ(received, packets);
    const double wire = rate.CalculateBytesTxTime(IbPacket::WireSize(4096, 0, false)).GetSeconds();
    const double busy = packets * wire;
    const double elapsed = (last - MicroSeconds(1)).GetSeconds();
    const double stalled = out->GetCreditStallTime(0).GetSeconds();
    EXPECT_EQ(traced, out->GetCreditStallTime(0));
    EXPECT_GT(stalls, packets / 4); // (credits come back two packets at a time)
    // about one wire time per packet once the sink's buffer is full (a few packets in)
    EXPECT_GT(stalled, 0.95 * busy);
    // and no stall while the wire was busy: stall and transmission fit in the run
    EXPECT_LT(stalled + busy, elapsed);
}

TEST_F(IbSwitchTest, ASlowInputWaitingForItsTailDoesNotHoldAFasterOutput)
{
    // Host A on an EDR 1x cable (25 Gb/s) and host B on HDR 4x (200 Gb/s) both saturate
    // host C's HDR 4x link through one cut-through switch. A cut-through packet from A
    // may start on C's link only late enough for its tail, which arrives at 25 Gb/s:
    // until then C's link must go on carrying B's packets. A gets its own link's rate,
    // B the rest, and C's link stays busy (before, each of A's packets held C's port
    // for the 1.15 us it waited, and C's link carried some 75 Gb/s).
    // A's packets of 4096 bytes are exactly 8 of B's; with 4000-byte packets A's next
    // packet is often already queued when the one before it is sent, and it too must wait
    // to ask for the output (it did not, at first, and C's link lost some 20 %).
    for (uint32_t aPayload : {4096u, 4000u})
    {
        IbHelper fast;
        fast.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
        IbHelper slow;
        slow.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
        slow.SetDeviceAttribute("LinkWidth", StringValue("1x"));
        Ptr<Node> s;
        Ptr<IbSwitch> sw = NewSwitch(&s);
        std::vector<Ptr<IbNetDevice>> hosts;
        for (uint32_t i = 0; i < 3; ++i)
        {
            const IbHelper& ib = i == 0 ? slow : fast;
            hosts.push_back(ib.InstallPort(CreateObject<Node>()));
            Ptr<IbNetDevice> port = ib.InstallPort(s);
            sw->AddPort(port);
            ib.Connect(hosts.back(), port);
            sw->SetLftEntry(hosts.back()->GetLid(), i + 1);
        }
        Ptr<IbNetDevice> sink = hosts[2];
        std::map<uint16_t, uint64_t> bytesFrom;
        const Time warmup = MicroSeconds(50);
        CountBytesBySource(sink, warmup, &bytesFrom);
        for (uint32_t i = 0; i < 2; ++i)
        {
            IbRawTrafficHelper traffic(sink->GetLid());
            traffic.SetAttribute("PayloadSize", UintegerValue(i == 0 ? aPayload : 4096));
            traffic.Install(hosts[i]).Start(MicroSeconds(1));
        }
        const Time end = MicroSeconds(550);
        Simulator::Stop(end);
        Simulator::Run();
        ASSERT_EQ(bytesFrom.size(), 2u);
        const double window = (end - warmup).GetSeconds();
        const double a = bytesFrom[hosts[0]->GetLid()] * 8.0 / window;
        const double b = bytesFrom[hosts[1]->GetLid()] * 8.0 / window;
        // A: its own cable's rate, within one 4 KB packet over the window (0.3 %).
        EXPECT_NEAR(a / 25e9, 1.0, 0.003) << a << ", A payload " << aPayload;
        // C's link: busy, within 0.5 % (as in the incast test).
        EXPECT_NEAR((a + b) / 200e9, 1.0, 0.005) << a << " + " << b << ", A payload " << aPayload;
        Simulator::Destroy();
        IbHelper::ResetLidAllocation();
    }
}

namespace
{

/// What the switch's output port towards the sink did, packet by packet.
struct OutputLog
{
    std::vector<std::pair<int64_t, uint8_t>> starts; ///< (time in ps, VL) of each packet sent
    uint64_t received{0};                            ///< packets the sink got
    uint32_t depth[2]{0, 0};                         ///< VL0 and VL1 queue depths (if traced)
    bool bothQueued{false};                          ///< both VLs' queues held a packet at once
    uint64_t depthEvents{0};                         ///< TxQueueDepth firings
};

/// Packets of host 0's burst.
constexpr uint32_t kBurst = 200;

/**
 * Two hosts send to a third through one switch, on two VLs (weights 1 and 4 in the low
 * table), over EDR links. Host 1 sends 256-byte payloads on SL1/VL1 at 40 Gb/s from 1 us;
 * host 0 sends a burst of kBurst packets on SL0/VL0 as fast as it can from 20 us. The
 * sink drains at 60 Gb/s behind 4 KB per VL. The switch's output towards it finds its
 * queues empty for most packets (host 1 alone), and during the burst, with the sink's
 * credits the limit, has packets of both VLs to arbitrate between.
 */
OutputLog
RunTwoVlMerge(bool traceQueueDepth)
{
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    ib.SetDeviceAttribute("NumDataVls", UintegerValue(2));
    ib.SetDeviceAttribute("Mtu", UintegerValue(256));
    ib.SetDeviceAttribute("VlArbitrationHigh", StringValue(""));
    ib.SetDeviceAttribute("VlArbitrationLow", StringValue("0:1,1:4"));
    Ptr<Node> s;
    Ptr<IbSwitch> sw = NewSwitch(&s);
    std::vector<Ptr<IbNetDevice>> hosts;
    for (uint32_t i = 0; i < 3; ++i)
    {
        hosts.push_back(ib.InstallPort(CreateObject<Node>()));
        if (i == 2)
        {
            // The sink: a slow drain behind a small buffer, so that the switch's output
            // runs out of credits.
            hosts.back()->SetAttribute("RxDrainRate", DataRateValue(DataRate("60Gbps")));
            hosts.back()->SetAttribute("VlBufferSize", UintegerValue(4096));
            hosts.back()->SetAttribute("CreditUpdateThreshold", UintegerValue(512));
        }
        Ptr<IbNetDevice> port = ib.InstallPort(s);
        sw->AddPort(port);
        ib.Connect(hosts.back(), port);
        sw->SetLftEntry(hosts.back()->GetLid(), i + 1);
    }
    Ptr<IbNetDevice> sink = hosts[2];
    OutputLog log;
    Ptr<IbNetDevice> out = sw->GetPort(3);
    out->TraceConnectWithoutContext("PhyTxBegin",
                                    MakeCallback(+[](OutputLog* l, Ptr<const Packet> p) {
                                        l->starts.emplace_back(Simulator::Now().GetPicoSeconds(),
                                                               IbPacket::PeekLrh(p).GetVl());
                                    }).Bind(&log));
    if (traceQueueDepth)
    {
        out->TraceConnectWithoutContext("TxQueueDepth",
                                        MakeCallback(+[](OutputLog* l, uint8_t vl, uint32_t depth) {
                                            ++l->depthEvents;
                                            l->depth[vl] = depth;
                                            l->bothQueued = l->bothQueued ||
                                                            (l->depth[0] > 0 && l->depth[1] > 0);
                                        }).Bind(&log));
    }
    sink->TraceConnectWithoutContext("MacRx", MakeCallback(+[](uint64_t* n, Ptr<const Packet>) {
                                                  ++*n;
                                              }).Bind(&log.received));
    IbRawTrafficHelper burst(sink->GetLid());
    burst.SetAttribute("Sl", UintegerValue(0));
    burst.SetAttribute("PayloadSize", UintegerValue(256));
    burst.SetAttribute("MaxPackets", UintegerValue(kBurst));
    burst.Install(hosts[0]).Start(MicroSeconds(20));
    IbRawTrafficHelper steady(sink->GetLid());
    steady.SetAttribute("Sl", UintegerValue(1));
    steady.SetAttribute("PayloadSize", UintegerValue(256));
    steady.SetAttribute("DataRate", DataRateValue(DataRate("40Gbps")));
    steady.Install(hosts[1]).Start(MicroSeconds(1));
    Simulator::Stop(MicroSeconds(200));
    Simulator::Run();
    Simulator::Destroy();
    return log;
}

} // namespace

// A forwarded packet that finds its output idle with nothing queued goes on the wire at
// once, without passing through the queue's ring; connecting TxQueueDepth makes every
// packet pass through the queue. Both must send the same packets at the same times on the
// same VLs: the direct path makes the same credit check and the same arbiter step.
TEST_F(IbSwitchTest, AnIdleOutputSendsAtOnceExactlyAsThroughItsQueue)
{
    const OutputLog direct = RunTwoVlMerge(false);
    const OutputLog queued = RunTwoVlMerge(true);
    EXPECT_EQ(direct.received, queued.received);
    ASSERT_EQ(direct.starts.size(), queued.starts.size());
    EXPECT_TRUE(direct.starts == queued.starts);
    // Host 1 sends packet k at k x wire bits / 40 Gb/s from 1 us to 200 us (LRH, BTH,
    // payload, ICRC, VCRC: 282 bytes, 56.4 ns; not a rounded 56 ns added up); the sink
    // drains 60 Gb/s, more than both hosts offer on average, so by 200 us it has the burst
    // and all of host 1's packets but the last few still on their way (a packet time and
    // the cables' delays).
    const double wireBits = IbPacket::WireSize(256, 0, false) * 8.0;
    const uint64_t steady = static_cast<uint64_t>(199e-6 * 40e9 / wireBits) + 1;
    EXPECT_LE(queued.received, kBurst + steady);
    EXPECT_GE(queued.received + 3, kBurst + steady);
    std::size_t vl0 = 0;
    for (const auto& [t, vl] : queued.starts)
    {
        vl0 += vl == 0 ? 1 : 0;
    }
    EXPECT_EQ(vl0, kBurst);
    // Packets of both VLs waited at the output at once (the arbiter chose), and every
    // packet went through the queue when TxQueueDepth was connected.
    EXPECT_TRUE(queued.bothQueued);
    EXPECT_EQ(queued.depthEvents, 2 * queued.starts.size());
}

// Packets a switch injects itself (its local agent, SHARP) go straight to an output queue
// and wait there for credits. One that finds the output idle with nothing queued but no
// credits left must wait too: the sink's buffer never holds more than it advertised, and
// once it is full the packets arrive one drain time apart.
TEST_F(IbSwitchTest, AnInjectedPacketWaitsForCreditsEvenWhenItsOutputIsIdle)
{
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue("EDR"));
    ib.SetDeviceAttribute("Mtu", UintegerValue(256));
    Ptr<Node> s;
    Ptr<IbSwitch> sw = NewSwitch(&s);
    Ptr<IbNetDevice> sink = ib.InstallPort(CreateObject<Node>());
    sink->SetAttribute("VlBufferSize", UintegerValue(1024));
    sink->SetAttribute("RxDrainRate", DataRateValue(DataRate("10Gbps")));
    Ptr<IbNetDevice> port = ib.InstallPort(s);
    sw->AddPort(port);
    ib.Connect(port, sink);
    uint32_t maxOccupancy = 0;
    sink->TraceConnectWithoutContext("RxBufferOccupancy",
                                     MakeCallback(+[](uint32_t* m, uint8_t, uint32_t bytes) {
                                         *m = std::max(*m, bytes);
                                     }).Bind(&maxOccupancy));
    std::vector<Time> delivered;
    sink->TraceConnectWithoutContext("MacRx",
                                     MakeCallback(+[](std::vector<Time>* d, Ptr<const Packet>) {
                                         d->push_back(Simulator::Now());
                                     }).Bind(&delivered));
    // One packet every 50 ns: each finds the 100 Gb/s output idle (a packet takes 22.6 ns)
    // and its queue empty; from the fourth on, the sink's 16 blocks are taken (5 each).
    const uint32_t n = 20;
    const uint32_t wire = IbPacket::WireSize(256, 0, false); // MakePacket's: LRH and BTH
    for (uint32_t i = 0; i < n; ++i)
    {
        Simulator::Schedule(NanoSeconds(1000 + 50 * i), [&]() {
            sw->InjectLocal(MakePacket(port, sink->GetLid(), 256), 1, 0, Time(0));
        });
    }
    Simulator::Run();
    ASSERT_EQ(delivered.size(), n);
    EXPECT_LE(maxOccupancy, 1024u);
    EXPECT_EQ(maxOccupancy, 3 * IbPacket::Blocks(wire) * IbPacket::BLOCK_SIZE);
    const Time drain = DataRate("10Gbps").CalculateBytesTxTime(wire);
    for (uint32_t i = 1; i < n; ++i)
    {
        EXPECT_EQ(delivered[i] - delivered[i - 1], drain) << "packet " << i;
    }
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Ethernet link-layer tests: one cable, two EthNetDevice ports. Every expected number is
 * derived from the physics (data rate, frame sizes, cable delay, pause quanta), not
 * measured and pasted. Most tests run at 8 Gb/s, where a byte takes exactly 1 ns and a
 * pause quantum (512 bit times) exactly 64 ns, so that times are exact at ns-3's default
 * resolution; the others allow the half time step to which a single time rounds.
 */

#include "shell-test-util.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/error-model.h"
#include "ns3/eth-channel.h"
#include "ns3/eth-frame.h"
#include "ns3/eth-helper.h"
#include "ns3/eth-net-device.h"
#include "ns3/eth-port-owner.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/pcap-file.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <list>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

/// IPv4 header size (no options).
constexpr uint32_t kIpv4 = 20;
/// Frame bytes around an IPv4 packet: Ethernet header and FCS.
constexpr uint32_t kEthOverhead = EthFrame::HEADER_SIZE + EthFrame::FCS_SIZE;
/// Bytes a frame of at least 64 bytes takes on the wire beyond its own: preamble, SFD, gap.
constexpr uint32_t kWireExtra = EthFrame::PREAMBLE_SFD + EthFrame::IFG;

/// Two nodes joined by one cable.
struct EthLink
{
    NodeContainer nodes;  ///< the two nodes
    Ptr<EthNetDevice> a;  ///< port of node 0
    Ptr<EthNetDevice> b;  ///< port of node 1
    Ptr<EthChannel> wire; ///< the cable
};

EthLink
MakeLink(const EthHelper& helper)
{
    EthLink l;
    l.nodes.Create(2);
    NetDeviceContainer d = helper.Install(l.nodes.Get(0), l.nodes.Get(1));
    l.a = DynamicCast<EthNetDevice>(d.Get(0));
    l.b = DynamicCast<EthNetDevice>(d.Get(1));
    l.wire = DynamicCast<EthChannel>(l.a->GetChannel());
    return l;
}

/// @return a helper for links at @p rate with a cable of @p delay
EthHelper
Helper(const std::string& rate, Time delay)
{
    EthHelper h;
    h.SetDeviceAttribute("DataRate", StringValue(rate));
    h.SetChannelAttribute("Delay", TimeValue(delay));
    return h;
}

/**
 * An IPv4 frame of exactly @p frameBytes (at least 64) from @p src to @p dst with DSCP
 * @p dscp and a zero (virtual) payload.
 */
Ptr<Packet>
Ipv4Frame(Mac48Address src, Mac48Address dst, uint32_t frameBytes, uint8_t dscp)
{
    const uint32_t payload = frameBytes - kEthOverhead - kIpv4;
    Ptr<Packet> p = Create<Packet>(payload);
    Ipv4Header ip;
    ip.SetSource(Ipv4Address("10.0.0.1"));
    ip.SetDestination(Ipv4Address("10.0.0.2"));
    ip.SetProtocol(17);
    ip.SetPayloadSize(payload);
    ip.SetTtl(64);
    ip.SetTos(static_cast<uint8_t>(dscp << 2));
    ip.EnableChecksum();
    p->AddHeader(ip);
    EthFrame::Frame(p, src, dst, EthFrame::ETHERTYPE_IPV4, payload);
    return p;
}

/// @return an IPv4 frame from port a to port b of @p l
Ptr<Packet>
FrameAtoB(const EthLink& l, uint32_t frameBytes, uint8_t dscp = 0)
{
    return Ipv4Frame(l.a->GetMacAddress(), l.b->GetMacAddress(), frameBytes, dscp);
}

/// @return a time in nanoseconds, as a double
double
Ns(Time t)
{
    return t.GetDouble() / static_cast<double>(NanoSeconds(1).GetTimeStep());
}

/// @return the wire time of a frame of @p frameBytes at @p bitRate, in ns (exact)
double
WireNs(uint32_t frameBytes, double bitRate)
{
    return (std::max<uint32_t>(frameBytes, EthFrame::MIN_FRAME) + kWireExtra) * 8.0 / bitRate * 1e9;
}

/// A port owner that records what its port tells it.
class RecordingOwner final : public EthPortOwner
{
  public:
    /// A frame received.
    struct Rx
    {
        Time at;           ///< when
        uint32_t bytes;    ///< its size
        uint8_t prio;      ///< the port's classification
        Ptr<Packet> frame; ///< the frame (if keepFrames)
    };

    /// A frame that left a queue.
    struct Started
    {
        Time at;         ///< when
        uint8_t prio;    ///< its queue
        uint32_t bytes;  ///< its size
        uint32_t cookie; ///< its cookie
    };

    void PortReceive(uint8_t port, EthNetDevice* dev, Ptr<Packet> frame, uint8_t prio) override
    {
        rx.push_back({Simulator::Now(), frame->GetSize(), prio, keepFrames ? frame : nullptr});
    }

    void PortTxReady(uint8_t port, EthNetDevice* dev, uint8_t prio) override
    {
        ready.push_back({Simulator::Now(), prio});
    }

    void PortTxStarted(uint8_t port,
                       EthNetDevice* dev,
                       uint8_t prio,
                       uint32_t bytes,
                       uint32_t cookie) override
    {
        started.push_back({Simulator::Now(), prio, bytes, cookie});
    }

    std::vector<Rx> rx;                          ///< frames received
    std::vector<Started> started;                ///< frames that left a queue
    std::vector<std::pair<Time, uint8_t>> ready; ///< PortTxReady calls
    bool keepFrames{false};                      ///< keep received frames in rx
};

/// A PFC event seen by a trace: when, which priority, what quanta.
struct PfcEvent
{
    Time at;         ///< when
    uint8_t prio;    ///< the priority
    uint16_t quanta; ///< its quanta
};

void
RecordPfc(std::vector<PfcEvent>* v, uint8_t prio, uint16_t quanta)
{
    v->push_back({Simulator::Now(), prio, quanta});
}

void
RecordTime(std::vector<Time>* v, Ptr<const Packet>)
{
    v->push_back(Simulator::Now());
}

/// @return the quanta array of a PFC frame naming only priority @p prio
std::array<uint16_t, 8>
QuantaFor(uint8_t prio, uint16_t quanta)
{
    std::array<uint16_t, 8> q{};
    q[prio] = quanta;
    return q;
}

class EthLinkTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Simulator::Destroy();
    }
};

} // namespace

// ----------------------------------------------------------------------------- timing

TEST_F(EthLinkTest, OneFrameArrivesAfterItsWireTimeAndTheCableDelay)
{
    for (const std::string rate : {"8Gbps", "100Gbps"})
    {
        const Time delay = NanoSeconds(100);
        EthLink l = MakeLink(Helper(rate, delay));
        RecordingOwner owner;
        l.b->SetOwner(&owner, 1);
        const double bitRate = static_cast<double>(DataRate(rate).GetBitRate());
        // A 1000-byte frame, and a 50-byte one that takes the wire time of 64 bytes.
        Simulator::Schedule(MicroSeconds(1), [&]() { l.a->Enqueue(FrameAtoB(l, 1000), 0, 0); });
        Simulator::Schedule(MicroSeconds(10), [&]() { l.a->Enqueue(Create<Packet>(50), 0, 0); });
        Simulator::Run();
        ASSERT_EQ(owner.rx.size(), 2u) << rate;
        EXPECT_NEAR(Ns(owner.rx[0].at - MicroSeconds(1)), WireNs(1000, bitRate) + Ns(delay), 0.5)
            << rate;
        EXPECT_NEAR(Ns(owner.rx[1].at - MicroSeconds(10)), WireNs(64, bitRate) + Ns(delay), 0.5)
            << rate;
        EXPECT_EQ(owner.rx[0].bytes, 1000u);
        EXPECT_EQ(owner.rx[1].bytes, 50u);
        EXPECT_NEAR(Ns(l.a->GetFrameTime(1000)), WireNs(1000, bitRate), 0.5);
        EXPECT_EQ(l.a->GetFrameTime(50), l.a->GetFrameTime(64));
        EXPECT_EQ(l.a->GetTxFrames(), 2u);
        EXPECT_EQ(l.a->GetTxBytes(), 1050u);
        EXPECT_EQ(l.b->GetRxFrames(), 2u);
        EXPECT_EQ(l.b->GetRxBytes(), 1050u);
        if (rate == "8Gbps")
        {
            // A byte is 1 ns: (1000 + 8 + 12) ns and (64 + 8 + 12) ns, exactly.
            EXPECT_EQ(owner.rx[0].at, MicroSeconds(1) + NanoSeconds(1020) + delay);
            EXPECT_EQ(owner.rx[1].at, MicroSeconds(10) + NanoSeconds(84) + delay);
        }
        Simulator::Destroy();
    }
}

TEST_F(EthLinkTest, BackToBackFramesReachRateTimesFrameOverFramePlus20)
{
    const Time delay = NanoSeconds(10);
    EthLink l = MakeLink(Helper("100Gbps", delay));
    RecordingOwner owner;
    l.b->SetOwner(&owner, 1);
    const uint32_t n = 1000;
    const uint32_t frame = 1500;
    Simulator::ScheduleNow([&]() {
        for (uint32_t i = 0; i < n; ++i)
        {
            l.a->Enqueue(FrameAtoB(l, frame), 0, i);
        }
    });
    Simulator::Run();
    ASSERT_EQ(owner.rx.size(), n);
    // The last frame ends n wire times after the first started; the carried remainder
    // keeps the sum exact to within the last rounding.
    EXPECT_NEAR(Ns(owner.rx.back().at), n * WireNs(frame, 100e9) + Ns(delay), 0.5);
    // Goodput between the first and the last arrival: rate x frame / (frame + 20), within
    // one time step over (n - 1) frame times.
    const double seconds = (owner.rx.back().at - owner.rx.front().at).GetSeconds();
    const double measured = (n - 1) * frame * 8.0 / seconds;
    const double expected = 100e9 * frame / (frame + kWireExtra);
    EXPECT_NEAR(measured / expected, 1.0, 1e-9 / seconds);
    EXPECT_EQ(l.a->GetTxFrames(), n);
    EXPECT_EQ(l.a->GetTxBytes(), uint64_t{n} * frame);
}

TEST_F(EthLinkTest, CutThroughHandsFramesOnAtTheirFirst64BytesPlusRxDelay)
{
    const Time delay = NanoSeconds(100);
    const Time rxDelay = NanoSeconds(200);
    EthLink l = MakeLink(Helper("8Gbps", delay));
    RecordingOwner owner;
    l.b->SetOwner(&owner, 1);
    l.b->SetCutThrough(false, rxDelay);
    Simulator::Schedule(MicroSeconds(1), [&]() { l.a->Enqueue(FrameAtoB(l, 1500), 0, 0); });
    Simulator::Schedule(MicroSeconds(5), [&]() { l.b->SetCutThrough(true, rxDelay); });
    Simulator::Schedule(MicroSeconds(6), [&]() { l.a->Enqueue(FrameAtoB(l, 1500), 0, 0); });
    Simulator::Run();
    ASSERT_EQ(owner.rx.size(), 2u);
    // Store-and-forward: the whole wire time (1500 + 20 bytes); cut-through: preamble and
    // SFD (8) and the first 64 bytes. 1 ns per byte.
    EXPECT_EQ(owner.rx[0].at, MicroSeconds(1) + NanoSeconds(1520) + delay + rxDelay);
    EXPECT_EQ(owner.rx[1].at, MicroSeconds(6) + NanoSeconds(8 + 64) + delay + rxDelay);
    EXPECT_TRUE(l.b->IsCutThrough());
    EXPECT_EQ(l.b->GetRxDelay(), rxDelay);
}

namespace
{

/// What a cable between ranks would hand to MPI: the frame and its arrival time.
struct Shipped
{
    Time rxTime;      ///< absolute arrival time
    uint32_t bytes;   ///< frame size
    bool control;     ///< a PFC frame
    EthNetDevice* to; ///< the receiving port
};

/**
 * A cable that says it spans ranks and records what it would ship (EthRemoteChannel hands
 * the same arguments to MPI), so that the arrival times a distributed run uses can be checked
 * without MPI.
 */
class ShippingChannel : public EthChannel
{
  public:
    bool IsBetweenRanks() const override
    {
        return true;
    }

    std::vector<Shipped> shipped; ///< what it was given, in order

  protected:
    void ShipData(IbOwnedPacket frame, EthNetDevice* dst, Time rxTime) override
    {
        shipped.push_back({rxTime, frame.Get()->GetSize(), false, dst});
    }

    void ShipControl(Ptr<Packet> frame, EthNetDevice* dst, Time rxTime) override
    {
        shipped.push_back({rxTime, frame->GetSize(), true, dst});
    }
};

} // namespace

TEST_F(EthLinkTest, ACableBetweenRanksShipsFramesWithTheArrivalTimesOfALocalCable)
{
    // 8 Gb/s, 1 ns per byte: the times of OneFrameArrives..., CutThrough... and the PFC tests.
    const Time delay = NanoSeconds(100);
    const Time rxDelay = NanoSeconds(200);
    EthHelper helper = Helper("8Gbps", delay);
    NodeContainer nodes;
    nodes.Create(2);
    Ptr<EthNetDevice> a = helper.InstallPort(nodes.Get(0));
    Ptr<EthNetDevice> b = helper.InstallPort(nodes.Get(1));
    Ptr<ShippingChannel> wire = CreateObject<ShippingChannel>();
    wire->SetAttribute("Delay", TimeValue(delay));
    a->Attach(wire);
    b->Attach(wire);
    EXPECT_TRUE(a->IsPointToPoint()) << "the distributed engines take lookahead from it";
    EXPECT_TRUE(b->IsPointToPoint());
    RecordingOwner owner;
    b->SetOwner(&owner, 1);
    const auto frame = [&]() { return Ipv4Frame(a->GetMacAddress(), b->GetMacAddress(), 1000, 0); };
    Simulator::Schedule(MicroSeconds(1), [&]() { a->Enqueue(frame(), 0, 0); });
    Simulator::Schedule(MicroSeconds(3), [&]() { a->Enqueue(frame(), 0, 0); });
    Simulator::Schedule(MicroSeconds(3), [&]() { a->Enqueue(frame(), 0, 0); });
    Simulator::Schedule(MicroSeconds(5), [&]() { b->SetCutThrough(true, rxDelay); });
    Simulator::Schedule(MicroSeconds(6), [&]() { a->Enqueue(frame(), 0, 0); });
    Simulator::Schedule(MicroSeconds(8), [&]() { b->SetPfcXoff(3, true); });
    Simulator::Stop(MicroSeconds(9));
    Simulator::Run();
    ASSERT_EQ(wire->shipped.size(), 5u);
    EXPECT_TRUE(owner.rx.empty()) << "nothing is delivered in this process";
    const Time frameTime = NanoSeconds(1000 + 20);
    EXPECT_EQ(wire->shipped[0].rxTime, MicroSeconds(1) + frameTime + delay);
    EXPECT_EQ(wire->shipped[1].rxTime, MicroSeconds(3) + frameTime + delay);
    EXPECT_EQ(wire->shipped[2].rxTime, MicroSeconds(3) + 2 * frameTime + delay) << "back to back";
    EXPECT_EQ(wire->shipped[3].rxTime, MicroSeconds(6) + NanoSeconds(8 + 64) + delay + rxDelay)
        << "cut-through receiver: first 64 bytes, plus its rxDelay";
    for (uint32_t i = 0; i < 4; ++i)
    {
        EXPECT_FALSE(wire->shipped[i].control);
        EXPECT_EQ(wire->shipped[i].bytes, 1000u);
        EXPECT_EQ(wire->shipped[i].to, PeekPointer(b));
    }
    // The XOFF: a 64-byte PFC frame from b, one cable delay after its last byte, no rxDelay.
    EXPECT_TRUE(wire->shipped[4].control);
    EXPECT_EQ(wire->shipped[4].to, PeekPointer(a));
    EXPECT_EQ(wire->shipped[4].rxTime, MicroSeconds(8) + NanoSeconds(64 + 20) + delay);
}

TEST_F(EthLinkTest, AFrameWithAnEarliestStartWaitsForIt)
{
    const Time delay = NanoSeconds(100);
    EthLink l = MakeLink(Helper("8Gbps", delay));
    RecordingOwner owner;
    l.b->SetOwner(&owner, 1);
    std::vector<Time> begins;
    l.a->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&RecordTime, &begins));
    Simulator::Schedule(MicroSeconds(1), [&]() {
        l.a->Enqueue(FrameAtoB(l, 1000), 0, 0, MicroSeconds(3));
        l.a->Enqueue(FrameAtoB(l, 1000), 0, 0); // behind it
    });
    Simulator::Run();
    ASSERT_EQ(begins.size(), 2u);
    EXPECT_EQ(begins[0], MicroSeconds(3));
    EXPECT_EQ(begins[1], MicroSeconds(3) + NanoSeconds(1020));
    ASSERT_EQ(owner.rx.size(), 2u);
    EXPECT_EQ(owner.rx[0].at, MicroSeconds(3) + NanoSeconds(1020) + delay);
    EXPECT_EQ(owner.rx[1].at, MicroSeconds(3) + NanoSeconds(2 * 1020) + delay);
}

// ----------------------------------------------------------------------------- scheduling

TEST_F(EthLinkTest, StrictPrioritiesGoHighestFirstAndCookiesComeBack)
{
    EthLink l = MakeLink(Helper("8Gbps", NanoSeconds(100)));
    RecordingOwner owner;
    l.a->SetOwner(&owner, 1);
    Simulator::Schedule(MicroSeconds(1), [&]() {
        // Priority 0 finds the wire idle; the others queue behind it.
        const std::array<uint8_t, 6> prios{0, 1, 5, 3, 7, 2};
        for (uint32_t i = 0; i < prios.size(); ++i)
        {
            l.a->Enqueue(FrameAtoB(l, 1500), prios[i], 100 + i);
        }
        EXPECT_EQ(l.a->GetQueueLength(5), 1u);
        EXPECT_EQ(l.a->GetQueueBytes(5), 1500u);
        EXPECT_EQ(l.a->GetQueueLength(0), 0u);
    });
    Simulator::Run();
    ASSERT_EQ(owner.started.size(), 6u);
    const std::array<uint8_t, 6> order{0, 7, 5, 3, 2, 1};
    const std::array<uint32_t, 6> cookies{100, 104, 102, 103, 105, 101};
    for (uint32_t k = 0; k < order.size(); ++k)
    {
        EXPECT_EQ(owner.started[k].prio, order[k]) << k;
        EXPECT_EQ(owner.started[k].cookie, cookies[k]) << k;
        EXPECT_EQ(owner.started[k].bytes, 1500u);
        // Each leaves its queue when the one before ends: 1520 ns apart.
        EXPECT_EQ(owner.started[k].at, MicroSeconds(1) + NanoSeconds(1520 * k)) << k;
    }
}

TEST_F(EthLinkTest, EtsSharesTheLinkByWeightWithinAFrame)
{
    // Weights 1:3 on priorities 0 and 1; the MTU makes the largest frame 1500 bytes
    // (1520 on the wire), so the quanta are one and three such frames.
    EthHelper h = Helper("8Gbps", NanoSeconds(100));
    h.SetDeviceAttribute("EtsWeights", StringValue("1,3,0,0,0,0,0,0"));
    h.SetDeviceAttribute("Mtu", UintegerValue(1500 - kEthOverhead));
    EthLink l = MakeLink(h);
    RecordingOwner owner;
    l.a->SetOwner(&owner, 1);
    const uint32_t n = 300;
    Simulator::Schedule(MicroSeconds(1), [&]() {
        for (uint32_t i = 0; i < n; ++i)
        {
            l.a->Enqueue(FrameAtoB(l, 1500), 0, 0);
            l.a->Enqueue(FrameAtoB(l, 1500), 1, 1);
        }
    });
    Simulator::Run();
    ASSERT_EQ(owner.started.size(), 2 * n);
    // While both are backlogged (until priority 1's n frames are out), each priority's
    // wire bytes stay within one frame of its share of all wire bytes sent.
    std::array<double, 2> sent{};
    uint32_t ones = 0;
    for (const auto& s : owner.started)
    {
        if (ones == n)
        {
            break;
        }
        sent[s.prio] += s.bytes + kWireExtra;
        ones += s.prio == 1;
        const double total = sent[0] + sent[1];
        EXPECT_LE(std::abs(sent[0] - total / 4), 1520.0) << total;
        EXPECT_LE(std::abs(sent[1] - 3 * total / 4), 1520.0) << total;
    }
}

TEST_F(EthLinkTest, EtsCountsBytesNotFramesAndStrictPrioritiesGoFirst)
{
    // Weights 1:1; priority 0 sends 1500-byte frames, priority 1 500-byte ones. Deficit
    // round robin: after k rounds a backlogged priority has sent k quanta less a deficit
    // below one frame, and the one being served may be up to a quantum (one 1520-byte
    // frame) ahead: the two stay within two large frames of each other.
    EthHelper h = Helper("8Gbps", NanoSeconds(100));
    h.SetDeviceAttribute("EtsWeights", StringValue("1,1,0,0,0,0,0,0"));
    h.SetDeviceAttribute("Mtu", UintegerValue(1500 - kEthOverhead));
    EthLink l = MakeLink(h);
    RecordingOwner owner;
    l.a->SetOwner(&owner, 1);
    const uint32_t n = 200;
    Simulator::Schedule(MicroSeconds(1), [&]() {
        for (uint32_t i = 0; i < n; ++i)
        {
            l.a->Enqueue(FrameAtoB(l, 1500), 0, 0);
            for (int k = 0; k < 3; ++k)
            {
                l.a->Enqueue(FrameAtoB(l, 500), 1, 1);
            }
        }
    });
    // Three frames of strict priority 4 in the middle: they go next, one after another.
    const Time strictAt = MicroSeconds(100) + NanoSeconds(7);
    Simulator::Schedule(strictAt, [&]() {
        for (int k = 0; k < 3; ++k)
        {
            l.a->Enqueue(FrameAtoB(l, 1000), 4, 4);
        }
    });
    Simulator::Run();
    ASSERT_EQ(owner.started.size(), 4 * n + 3);
    std::array<double, 2> sent{};
    uint32_t zeros = 0;
    uint32_t ones = 0;
    for (size_t i = 0; i < owner.started.size(); ++i)
    {
        const auto& s = owner.started[i];
        if (s.prio == 4)
        {
            // The first leaves the queue when the frame in flight at strictAt ends.
            ASSERT_GT(i, 0u);
            const auto& before = owner.started[i - 1];
            if (before.prio != 4)
            {
                EXPECT_LT(before.at, strictAt);
                EXPECT_GE(s.at, strictAt);
                EXPECT_EQ(s.at, before.at + NanoSeconds(before.bytes + kWireExtra));
            }
            continue;
        }
        if (zeros == n || ones == 3 * n)
        {
            continue; // one of them ran out
        }
        sent[s.prio] += s.bytes + kWireExtra;
        (s.prio == 0 ? zeros : ones) += 1;
        EXPECT_LE(std::abs(sent[0] - sent[1]), 2 * 1520.0) << i;
    }
    EXPECT_EQ(std::count_if(owner.started.begin(),
                            owner.started.end(),
                            [](const RecordingOwner::Started& s) { return s.prio == 4; }),
              3);
}

TEST_F(EthLinkTest, TxReadyComesWhenTheQueueFallsToTheThreshold)
{
    EthHelper h = Helper("8Gbps", NanoSeconds(100));
    h.SetDeviceAttribute("TxReadyThreshold", UintegerValue(2000));
    EthLink l = MakeLink(h);
    RecordingOwner owner;
    l.a->SetOwner(&owner, 7);
    std::vector<uint32_t> queueBytes;
    l.a->TraceConnectWithoutContext(
        "TxQueueBytes",
        MakeCallback(+[](std::vector<uint32_t>* v, uint8_t prio, uint32_t bytes) {
            EXPECT_EQ(prio, 2);
            v->push_back(bytes);
        }).Bind(&queueBytes));
    Simulator::Schedule(MicroSeconds(1), [&]() {
        for (uint32_t i = 0; i < 5; ++i)
        {
            l.a->Enqueue(FrameAtoB(l, 1000), 2, 10 + i);
        }
    });
    Simulator::Run();
    // The first frame leaves at once, alone in its queue (1000 bytes to 0: never above
    // the threshold). The other four queue behind it and leave at 1020 ns intervals:
    // 4000 -> 3000, 3000 -> 2000 (from above 2000 to 2000: PortTxReady), 2000 -> 1000,
    // 1000 -> 0.
    ASSERT_EQ(owner.ready.size(), 1u);
    EXPECT_EQ(owner.ready[0].first, MicroSeconds(1) + NanoSeconds(2 * 1020));
    EXPECT_EQ(owner.ready[0].second, 2);
    ASSERT_EQ(owner.started.size(), 5u);
    for (uint32_t i = 0; i < 5; ++i)
    {
        EXPECT_EQ(owner.started[i].cookie, 10 + i);
    }
    // In, out at once, four in, then out one by one.
    const std::vector<uint32_t> expected{1000, 0, 1000, 2000, 3000, 4000, 3000, 2000, 1000, 0};
    EXPECT_EQ(queueBytes, expected);
}

// ----------------------------------------------------------------------------- PFC

TEST_F(EthLinkTest, APauseHoldsThePeerForQuantaTimes512BitTimesExactly)
{
    // 8 Gb/s: a quantum is 512 bits = 64 ns. Port a sends priority 3 back to back; port b
    // sends PFC frames to it as data frames (a NIC's own flow control would).
    const Time delay = NanoSeconds(100);
    EthLink l = MakeLink(Helper("8Gbps", delay));
    RecordingOwner owner;
    l.a->SetOwner(&owner, 1);
    std::vector<PfcEvent> received;
    l.a->TraceConnectWithoutContext("PfcReceived", MakeBoundCallback(&RecordPfc, &received));
    EXPECT_EQ(l.a->GetPauseTime(100), NanoSeconds(6400));
    Simulator::ScheduleNow([&]() {
        for (uint32_t i = 0; i < 40; ++i)
        {
            l.a->Enqueue(FrameAtoB(l, 1000, 26), 3, i);
        }
    });
    const Time t0 = NanoSeconds(5500);
    const Time t1 = MicroSeconds(20);
    const Time t2 = MicroSeconds(30);
    Simulator::Schedule(t0, [&]() {
        l.b->Enqueue(EthFrame::MakePfc(l.b->GetMacAddress(), 0x08, QuantaFor(3, 100)), 7, 0);
    });
    // A long pause, then an XON: the XON resumes at once.
    Simulator::Schedule(t1, [&]() {
        l.b->Enqueue(EthFrame::MakePfc(l.b->GetMacAddress(), 0x08, QuantaFor(3, 0xFFFF)), 7, 0);
    });
    Simulator::Schedule(t2, [&]() {
        l.b->Enqueue(EthFrame::MakePfc(l.b->GetMacAddress(), 0x08, QuantaFor(3, 0)), 7, 0);
    });
    bool pausedDuring = false;
    bool pausedAfter = true;
    const Time pfcArrival = t0 + NanoSeconds(64 + kWireExtra) + delay; // 64-byte frame, cable
    const Time pause = NanoSeconds(100 * 64);
    Simulator::Schedule(pfcArrival + NanoSeconds(1),
                        [&]() { pausedDuring = l.a->IsPausedByPeer(3); });
    Simulator::Schedule(pfcArrival + pause + NanoSeconds(1),
                        [&]() { pausedAfter = l.a->IsPausedByPeer(3); });
    Simulator::Run();
    ASSERT_EQ(received.size(), 3u);
    EXPECT_EQ(received[0].at, pfcArrival);
    EXPECT_EQ(received[0].prio, 3);
    EXPECT_EQ(received[0].quanta, 100);
    EXPECT_TRUE(pausedDuring);
    EXPECT_FALSE(pausedAfter);
    // Frames start every 1020 ns until the pause arrives; the one in flight (started at
    // 5100 ns) finishes; the next starts exactly when the pause runs out.
    ASSERT_EQ(owner.started.size(), 40u);
    size_t k = 0;
    while (owner.started[k].at <= pfcArrival)
    {
        EXPECT_EQ(owner.started[k].at, NanoSeconds(1020 * k));
        ++k;
    }
    EXPECT_EQ(k, 6u); // 0, 1020, ..., 5100
    EXPECT_EQ(owner.started[k].at, pfcArrival + pause);
    // Second pause: from the arrival at t1 + 184 ns, ended by the XON's arrival.
    const Time xoffArrival = t1 + NanoSeconds(84) + delay;
    const Time xonArrival = t2 + NanoSeconds(84) + delay;
    while (owner.started[k].at <= xoffArrival)
    {
        ++k;
    }
    EXPECT_EQ(owner.started[k].at, xonArrival);
    EXPECT_EQ(l.a->GetPausedTime(3), pause + (xonArrival - xoffArrival));
    EXPECT_EQ(l.a->GetPfcFramesReceived(3), 3u);
    // The peer got the frames of priority 3 with that priority (DSCP 26 >> 3).
    EXPECT_EQ(l.b->GetRxFrames(), 40u);
}

TEST_F(EthLinkTest, XoffStopsThePeerWithinAFrameRefreshesAndXonResumes)
{
    // Port b pauses priority 3 of port a with SetPfcXoff for 200 us, with PauseQuanta 1000
    // (64 us at 8 Gb/s): the XOFF is repeated every 500 quanta (32 us). Priority 1 keeps
    // flowing meanwhile.
    const Time delay = NanoSeconds(100);
    EthHelper h = Helper("8Gbps", delay);
    h.SetDeviceAttribute("PauseQuanta", UintegerValue(1000));
    EthLink l = MakeLink(h);
    RecordingOwner owner;
    l.b->SetOwner(&owner, 1);
    std::vector<PfcEvent> sent;
    l.b->TraceConnectWithoutContext("PfcSent", MakeBoundCallback(&RecordPfc, &sent));
    const uint32_t frame = 1000;
    const uint32_t wire = frame + kWireExtra; // ns
    Simulator::ScheduleNow([&]() {
        for (uint32_t i = 0; i < 400; ++i)
        {
            l.a->Enqueue(FrameAtoB(l, frame, 26), 3, 3);
            l.a->Enqueue(FrameAtoB(l, frame, 8), 1, 1);
        }
    });
    const Time t0 = NanoSeconds(50500);
    const Time t1 = t0 + MicroSeconds(200);
    Simulator::Schedule(t0, [&]() {
        l.b->SetPfcXoff(3, true);
        EXPECT_TRUE(l.b->IsPfcXoff(3));
        l.b->SetPfcXoff(3, true); // no change, no frame
    });
    Simulator::Schedule(t1, [&]() { l.b->SetPfcXoff(3, false); });
    Simulator::Run();

    // PFC frames: XOFFs at t0 + k x 32 us while t0 + k x 32 us < t1 (k = 0..6), an XON at t1.
    const Time refresh = NanoSeconds(500 * 64);
    ASSERT_EQ(sent.size(), 8u);
    for (uint32_t k = 0; k < 7; ++k)
    {
        EXPECT_EQ(sent[k].at, t0 + refresh * k) << k;
        EXPECT_EQ(sent[k].quanta, 1000);
    }
    EXPECT_EQ(sent[7].at, t1);
    EXPECT_EQ(sent[7].quanta, 0);
    EXPECT_EQ(l.b->GetPfcFramesSent(3), 8u);

    // Port a: the XOFF arrives one PFC wire time and the delay after t0; the priority-3
    // frame then on the wire finishes; priority 1 takes the wire back to back until the
    // XON arrives; the priority-1 frame then on the wire finishes and priority 3 resumes.
    const Time xoffAtA = t0 + NanoSeconds(84) + delay;
    const Time xonAtA = t1 + NanoSeconds(84) + delay;
    const int64_t inFlight3 = xoffAtA.GetNanoSeconds() / wire; // frames start every 1020 ns
    const Time pauseBegins = NanoSeconds((inFlight3 + 1) * wire);
    const int64_t ones = (xonAtA - pauseBegins).GetNanoSeconds() / wire + 1;
    const Time resumes = pauseBegins + NanoSeconds(ones * wire);
    // The last priority-3 frame reaches b within the bound of one PFC wire time, one
    // frame time and the delay both ways; priority 1 arrives back to back (line rate)
    // while priority 3 is held, from the end of that frame to the end of the one on the
    // wire when the XON arrived.
    Time last3BeforePause;
    Time first3After = Time::Max();
    std::vector<Time> ones1;
    for (const auto& r : owner.rx)
    {
        if (r.prio == 3 && r.at <= xonAtA)
        {
            last3BeforePause = r.at;
        }
        if (r.prio == 3 && r.at > xonAtA)
        {
            first3After = std::min(first3After, r.at);
        }
        if (r.prio == 1 && r.at <= resumes + delay)
        {
            ones1.push_back(r.at);
        }
    }
    ASSERT_EQ(ones1.size(), static_cast<size_t>(ones));
    EXPECT_EQ(ones1.front(), pauseBegins + NanoSeconds(wire) + delay);
    for (size_t i = 1; i < ones1.size(); ++i)
    {
        EXPECT_EQ(ones1[i] - ones1[i - 1], NanoSeconds(wire)) << i;
    }
    EXPECT_EQ(last3BeforePause, pauseBegins + delay);
    EXPECT_LE(last3BeforePause, t0 + NanoSeconds(84 + wire) + delay * 2);
    EXPECT_EQ(first3After, resumes + NanoSeconds(wire) + delay);
    EXPECT_EQ(l.a->GetPausedTime(3), t1 - t0);
    EXPECT_EQ(l.a->GetPausedTime(1), Time(0));
    EXPECT_FALSE(l.a->IsPausedByPeer(3));
}

TEST_F(EthLinkTest, APfcFrameWaitsForTheFrameInFlightAndGoesAheadOfQueuedData)
{
    // Priorities 3 and 4 lossless: two requests that wait together share one PFC frame.
    const Time delay = NanoSeconds(100);
    EthHelper h = Helper("8Gbps", delay);
    h.SetDeviceAttribute("PfcEnabled", UintegerValue(0x18));
    EthLink l = MakeLink(h);
    std::vector<Time> begins;
    std::vector<PfcEvent> sent;
    std::vector<PfcEvent> received;
    l.b->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&RecordTime, &begins));
    l.b->TraceConnectWithoutContext("PfcSent", MakeBoundCallback(&RecordPfc, &sent));
    l.a->TraceConnectWithoutContext("PfcReceived", MakeBoundCallback(&RecordPfc, &received));
    Simulator::ScheduleNow([&]() {
        for (uint32_t i = 0; i < 20; ++i)
        {
            l.b->Enqueue(Ipv4Frame(l.b->GetMacAddress(), l.a->GetMacAddress(), 1500, 0), 0, 0);
        }
    });
    const Time t0 = NanoSeconds(10300);
    Simulator::Schedule(t0, [&]() { l.b->SetPfcXoff(3, true); });
    Simulator::Schedule(t0 + NanoSeconds(200), [&]() { l.b->SetPfcXoff(4, true); });
    Simulator::Schedule(MicroSeconds(60), [&]() {
        l.b->SetPfcXoff(3, false);
        l.b->SetPfcXoff(4, false);
    });
    Simulator::Run();
    // b's frames start every 1520 ns; the one started at 6 x 1520 = 9120 ns is on the wire
    // at t0 and ends at 10640 ns; the PFC frame goes then, and the next data frame after
    // its 84 ns.
    const Time inFlightEnd = NanoSeconds(7 * 1520);
    // XOFF 3 and 4 waited together for the frame in flight: one frame. At 60 us the wire
    // is idle: the XON of 3 goes at once, the XON of 4 after its 84 ns.
    ASSERT_EQ(sent.size(), 4u);
    for (uint32_t i = 0; i < 2; ++i)
    {
        EXPECT_EQ(sent[i].at, inFlightEnd);
        EXPECT_EQ(sent[i].prio, 3 + i);
        EXPECT_EQ(sent[i].quanta, 0xFFFF);
        EXPECT_EQ(sent[2 + i].at, MicroSeconds(60) + NanoSeconds(84 * i));
        EXPECT_EQ(sent[2 + i].prio, 3 + i);
        EXPECT_EQ(sent[2 + i].quanta, 0);
    }
    EXPECT_EQ(l.b->GetPfcFramesSent(3), 2u);
    EXPECT_EQ(l.b->GetPfcFramesSent(4), 2u);
    ASSERT_GT(begins.size(), 8u);
    EXPECT_EQ(begins[6], NanoSeconds(6 * 1520));
    EXPECT_EQ(begins[7], inFlightEnd + NanoSeconds(84));
    ASSERT_EQ(received.size(), 4u);
    EXPECT_EQ(received[0].at, inFlightEnd + NanoSeconds(84) + delay);
    EXPECT_EQ(received[1].at, received[0].at);
    EXPECT_EQ(l.a->GetPausedTime(3), MicroSeconds(60) + NanoSeconds(84) + delay - received[0].at);
    EXPECT_EQ(l.a->GetPausedTime(4),
              MicroSeconds(60) + NanoSeconds(2 * 84) + delay - received[0].at);
    // Priority 0 is not paused by it: all 20 frames went.
    EXPECT_EQ(l.a->GetRxFrames(), 20u);
}

TEST_F(EthLinkTest, PfcForAPriorityNotInPfcEnabledIsCountedAndIgnored)
{
    EthLink l = MakeLink(Helper("8Gbps", NanoSeconds(100)));
    RecordingOwner owner;
    l.a->SetOwner(&owner, 1);
    Simulator::ScheduleNow([&]() {
        for (uint32_t i = 0; i < 10; ++i)
        {
            l.a->Enqueue(FrameAtoB(l, 1000, 8), 1, i);
        }
    });
    Simulator::Schedule(NanoSeconds(2500), [&]() {
        l.b->Enqueue(EthFrame::MakePfc(l.b->GetMacAddress(), 0x02, QuantaFor(1, 0xFFFF)), 7, 0);
    });
    Simulator::Run();
    ASSERT_EQ(owner.started.size(), 10u);
    for (uint32_t k = 0; k < 10; ++k)
    {
        EXPECT_EQ(owner.started[k].at, NanoSeconds(1020 * k)); // back to back throughout
    }
    EXPECT_EQ(l.a->GetPfcFramesReceived(1), 1u);
    EXPECT_EQ(l.a->GetPausedTime(1), Time(0));
}

// ----------------------------------------------------------------------------- receive

TEST_F(EthLinkTest, FramesAreClassifiedByDscp)
{
    EthLink l = MakeLink(Helper("8Gbps", NanoSeconds(100)));
    RecordingOwner owner;
    l.b->SetOwner(&owner, 1);
    const std::array<uint8_t, 5> dscps{0, 8, 26, 46, 63};
    Simulator::ScheduleNow([&]() {
        for (uint8_t d : dscps)
        {
            l.a->Enqueue(FrameAtoB(l, 200, d), 0, 0);
        }
        // Not IPv4: priority 0, whatever follows the header.
        Ptr<Packet> arp = Create<Packet>(46);
        EthFrame::Frame(arp,
                        l.a->GetMacAddress(),
                        Mac48Address::GetBroadcast(),
                        EthFrame::ETHERTYPE_ARP,
                        46);
        l.a->Enqueue(arp, 0, 0);
    });
    Simulator::Run();
    ASSERT_EQ(owner.rx.size(), 6u);
    for (uint32_t i = 0; i < dscps.size(); ++i)
    {
        EXPECT_EQ(owner.rx[i].prio, dscps[i] >> 3) << unsigned(dscps[i]);
    }
    EXPECT_EQ(owner.rx[5].prio, 0);

    // A map of its own: DSCP 26 to priority 6, everything else 0.
    std::string map;
    for (int d = 0; d < 64; ++d)
    {
        map += (d ? "," : "") + std::to_string(d == 26 ? 6 : 0);
    }
    l.b->SetAttribute("DscpToPriority", StringValue(map));
    uint8_t head[16];
    Ptr<Packet> f = FrameAtoB(l, 200, 26);
    f->CopyData(head, sizeof(head));
    EXPECT_EQ(l.b->Classify(head, sizeof(head)), 6);
    f = FrameAtoB(l, 200, 46);
    f->CopyData(head, sizeof(head));
    EXPECT_EQ(l.b->Classify(head, sizeof(head)), 0);
    EXPECT_EQ(l.a->Classify(head, sizeof(head)), 5);
}

TEST_F(EthLinkTest, AFrameTheErrorModelCorruptsIsCountedAndDropped)
{
    EthLink l = MakeLink(Helper("8Gbps", NanoSeconds(100)));
    RecordingOwner owner;
    l.b->SetOwner(&owner, 1);
    std::vector<Ptr<Packet>> frames;
    for (uint32_t i = 0; i < 5; ++i)
    {
        frames.push_back(FrameAtoB(l, 500));
    }
    Ptr<ListErrorModel> em = CreateObject<ListErrorModel>();
    // (packet uids are 32 bits in the list of ns-3 3.37, 64 in later releases)
    using UidList = std::remove_cv_t<std::remove_reference_t<decltype(em->GetList())>>;
    UidList uids;
    uids.push_back(static_cast<UidList::value_type>(frames[1]->GetUid()));
    uids.push_back(static_cast<UidList::value_type>(frames[3]->GetUid()));
    em->SetList(uids);
    l.b->SetAttribute("ReceiveErrorModel", PointerValue(em));
    std::vector<Time> drops;
    l.b->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&RecordTime, &drops));
    Simulator::ScheduleNow([&]() {
        for (const auto& f : frames)
        {
            l.a->Enqueue(f, 0, 0);
        }
    });
    Simulator::Run();
    EXPECT_EQ(owner.rx.size(), 3u);
    EXPECT_EQ(l.b->GetFcsErrors(), 2u);
    EXPECT_EQ(l.b->GetRxFrames(), 3u);
    ASSERT_EQ(drops.size(), 2u);
    // Dropped when their last byte arrived: the 2nd and 4th of frames 520 ns apart.
    EXPECT_EQ(drops[0], NanoSeconds(2 * 520 + 100));
    EXPECT_EQ(drops[1], NanoSeconds(4 * 520 + 100));
}

TEST_F(EthLinkTest, VerifyFcsDropsAFrameWhoseBytesWereChanged)
{
    for (bool verify : {false, true})
    {
        EthLink l = MakeLink(Helper("8Gbps", NanoSeconds(100)));
        RecordingOwner owner;
        l.b->SetOwner(&owner, 1);
        l.b->SetAttribute("VerifyFcs", BooleanValue(verify));
        Ptr<Packet> good = FrameAtoB(l, 300);
        std::vector<uint8_t> bytes(good->GetSize());
        good->CopyData(bytes.data(), bytes.size());
        bytes[100] ^= 0x10; // a payload bit flipped on the way
        Ptr<Packet> bad = Create<Packet>(bytes.data(), bytes.size());
        Simulator::ScheduleNow([&]() {
            l.a->Enqueue(good, 0, 0);
            l.a->Enqueue(bad, 0, 0);
        });
        Simulator::Run();
        EXPECT_EQ(owner.rx.size(), verify ? 1u : 2u) << verify;
        EXPECT_EQ(l.b->GetFcsErrors(), verify ? 1u : 0u) << verify;
        Simulator::Destroy();
    }
}

// ----------------------------------------------------------------------------- ns-3 stack

TEST_F(EthLinkTest, SendFramesByEtherTypeAndDeliversByDestinationMac)
{
    EthLink l = MakeLink(Helper("8Gbps", NanoSeconds(100)));

    struct Got
    {
        uint16_t protocol;
        uint32_t size;
        Address from;
        NetDevice::PacketType type;
    };

    std::vector<Got> promisc;
    std::vector<Got> host;
    l.b->SetPromiscReceiveCallback([&](Ptr<NetDevice>,
                                       Ptr<const Packet> p,
                                       uint16_t proto,
                                       const Address& from,
                                       const Address&,
                                       NetDevice::PacketType type) {
        promisc.push_back({proto, p->GetSize(), from, type});
        return true;
    });
    l.b->SetReceiveCallback(
        [&](Ptr<NetDevice>, Ptr<const Packet> p, uint16_t proto, const Address& from) {
            host.push_back({proto, p->GetSize(), from, NetDevice::PACKET_HOST});
            return true;
        });
    const uint16_t experimental = 0x88B5;
    Simulator::ScheduleNow([&]() {
        EXPECT_TRUE(l.a->Send(Create<Packet>(1000), l.b->GetAddress(), experimental));
        EXPECT_TRUE(l.a->Send(Create<Packet>(100), l.a->GetBroadcast(), experimental));
        EXPECT_TRUE(
            l.a->Send(Create<Packet>(100), Mac48Address("02:00:00:00:00:99"), experimental));
        // Larger than the MTU: refused.
        EXPECT_FALSE(l.a->Send(Create<Packet>(9001), l.b->GetAddress(), experimental));
    });
    Simulator::Run();
    ASSERT_EQ(promisc.size(), 3u);
    EXPECT_EQ(promisc[0].type, NetDevice::PACKET_HOST);
    EXPECT_EQ(promisc[0].size, 1000u);
    EXPECT_EQ(promisc[0].protocol, experimental);
    EXPECT_EQ(Mac48Address::ConvertFrom(promisc[0].from), l.a->GetMacAddress());
    EXPECT_EQ(promisc[1].type, NetDevice::PACKET_BROADCAST);
    EXPECT_EQ(promisc[2].type, NetDevice::PACKET_OTHERHOST);
    ASSERT_EQ(host.size(), 2u); // not the one for another MAC
    EXPECT_EQ(host[0].size, 1000u);
    EXPECT_EQ(host[1].size, 100u);
    EXPECT_EQ(l.a->GetTxDrops(), 1u);
}

TEST_F(EthLinkTest, SendDropsTailAtTxQueueMaxBytes)
{
    EthHelper h = Helper("8Gbps", NanoSeconds(100));
    h.SetDeviceAttribute("TxQueueMaxBytes", UintegerValue(10000));
    EthLink l = MakeLink(h);
    uint32_t got = 0;
    l.b->SetReceiveCallback([&](Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&) {
        ++got;
        return true;
    });
    std::vector<Time> drops;
    l.a->TraceConnectWithoutContext("MacTxDrop", MakeBoundCallback(&RecordTime, &drops));
    Simulator::ScheduleNow([&]() {
        for (int i = 0; i < 20; ++i)
        {
            l.a->Send(Create<Packet>(1000), l.b->GetAddress(), 0x88B5);
        }
    });
    Simulator::Run();
    // 1018-byte frames: the first goes on the wire at once, then the queue takes
    // floor(10000 / 1018) = 9; the other 10 are dropped.
    const uint32_t accepted = 1 + 10000 / (1000 + kEthOverhead);
    EXPECT_EQ(got, accepted);
    EXPECT_EQ(drops.size(), 20 - accepted);
    EXPECT_EQ(l.a->GetTxDrops(), 20 - accepted);
}

TEST_F(EthLinkTest, UdpEchoRunsOverTheLinkWithArpAndExactRoundTrips)
{
    const Time delay = MicroSeconds(1);
    EthLink l = MakeLink(Helper("8Gbps", delay));
    InternetStackHelper stack;
    stack.Install(l.nodes);
    Ipv4AddressHelper addresses("10.1.1.0", "255.255.255.0");
    NetDeviceContainer devs;
    devs.Add(l.a);
    devs.Add(l.b);
    Ipv4InterfaceContainer ifs = addresses.Assign(devs);
    UdpEchoServerHelper server(9);
    ApplicationContainer s = server.Install(l.nodes.Get(1));
    s.Start(Seconds(0));
    const uint32_t size = 100;
    UdpEchoClientHelper client(ifs.GetAddress(1), 9);
    client.SetAttribute("MaxPackets", UintegerValue(3));
    // Farther apart than ARP's request jitter (up to 10 ms): the second and third echoes
    // find both ends resolved.
    client.SetAttribute("Interval", TimeValue(MilliSeconds(50)));
    client.SetAttribute("PacketSize", UintegerValue(size));
    ApplicationContainer c = client.Install(l.nodes.Get(0));
    c.Start(Seconds(1));
    std::vector<Time> tx;
    std::vector<Time> rx;
    c.Get(0)->TraceConnectWithoutContext("Tx", MakeBoundCallback(&RecordTime, &tx));
    c.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&RecordTime, &rx));
    Simulator::Stop(Seconds(2));
    Simulator::Run();
    ASSERT_EQ(tx.size(), 3u);
    ASSERT_EQ(rx.size(), 3u);
    // An echo frame: payload, UDP 8, IPv4 20, Ethernet 18. Once ARP has resolved both
    // ends, a round trip is two such frames' wire times and two cable delays.
    const uint32_t frame = size + 8 + kIpv4 + kEthOverhead;
    const Time oneWay = l.a->GetFrameTime(frame) + delay;
    EXPECT_EQ(l.a->GetFrameTime(frame), NanoSeconds(frame + kWireExtra));
    EXPECT_EQ(rx[1] - tx[1], oneWay * 2);
    EXPECT_EQ(rx[2] - tx[2], oneWay * 2);
    // The first waited for at least one ARP exchange (two 64-byte frames).
    EXPECT_GE(rx[0] - tx[0], oneWay * 2 + (l.a->GetFrameTime(64) + delay) * 2);
}

// ----------------------------------------------------------------------------- traces

namespace
{

using shelltest::RunCommand;
using shelltest::TempDir;

} // namespace

TEST_F(EthLinkTest, PcapHoldsEveryFrameSentAndReceivedAsEthernet)
{
    TempDir dir;
    {
        EthHelper h = Helper("8Gbps", NanoSeconds(100));
        EthLink l = MakeLink(h);
        h.EnablePcap(dir.Path() + "/eth.pcap", l.a, false, true);
        Simulator::Schedule(MicroSeconds(1), [&]() {
            for (uint32_t i = 0; i < 3; ++i)
            {
                l.a->Enqueue(FrameAtoB(l, 1000, 26), 3, 0);
            }
        });
        Simulator::Schedule(MicroSeconds(10), [&]() { l.b->SetPfcXoff(3, true); });
        Simulator::Schedule(MicroSeconds(20), [&]() { l.b->SetPfcXoff(3, false); });
        Simulator::Run();
        Simulator::Destroy(); // the devices go with l: the file is closed
    }
    const std::string path = dir.Path() + "/eth.pcap";
    PcapFile file;
    file.Open(path, std::ios::in);
    ASSERT_FALSE(file.Fail()) << path;
    EXPECT_EQ(file.GetDataLinkType(), uint32_t{PcapHelper::DLT_EN10MB});
    std::vector<uint32_t> sizes;
    std::vector<uint16_t> types;
    for (;;)
    {
        uint8_t data[2048];
        uint32_t sec;
        uint32_t usec;
        uint32_t incl;
        uint32_t orig;
        uint32_t read;
        file.Read(data, sizeof(data), sec, usec, incl, orig, read);
        if (file.Eof() || file.Fail())
        {
            break;
        }
        sizes.push_back(orig);
        types.push_back(EthFrame::PeekEtherType(data));
        EXPECT_TRUE(EthFrame::CheckFcs(data, read)) << sizes.size(); // whole frames, FCS kept
    }
    file.Close();
    // Three data frames sent, then the two PFC frames port a received (XOFF, XON).
    const std::vector<uint32_t> expectedSizes{1000, 1000, 1000, 64, 64};
    EXPECT_EQ(sizes, expectedSizes);
    const std::vector<uint16_t> expectedTypes{EthFrame::ETHERTYPE_IPV4,
                                              EthFrame::ETHERTYPE_IPV4,
                                              EthFrame::ETHERTYPE_IPV4,
                                              EthFrame::ETHERTYPE_MAC_CONTROL,
                                              EthFrame::ETHERTYPE_MAC_CONTROL};
    EXPECT_EQ(types, expectedTypes);
    if (RunCommand("command -v tshark").empty())
    {
        GTEST_SKIP() << "tshark is not installed: the file was checked, its decoding not";
    }
    // Every data frame's FCS good (status 1; Wireshark's MAC control dissector takes a
    // PFC frame's pad and FCS as its own, so it shows none); the PFC frames'
    // class-enable vector and priority-3 time.
    const std::string out =
        RunCommand("tshark -n -r '" + path +
                   "' -o eth.fcs:TRUE -o eth.check_fcs:TRUE -T fields -e eth.type -e "
                   "eth.fcs.status -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 2>/dev/null");
    EXPECT_EQ(out,
              "0x0800\t1\t\t\n0x0800\t1\t\t\n0x0800\t1\t\t\n"
              "0x8808\t\t0x0008\t65535\n0x8808\t\t0x0008\t0\n")
        << out;
}

TEST_F(EthLinkTest, AsciiTracesQueueSendAndReceive)
{
    // Ascii tracing turns packet metadata on, which ns-3 allows only before the process makes
    // its first packet (an assertion in builds with asserts): the run happens in a child
    // process of its own, which exits 0 when every count is as expected.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    TempDir dir;
    const std::string prefix = dir.Path() + "/eth";
    auto run = [&prefix]() {
        EthHelper h = Helper("8Gbps", NanoSeconds(100));
        EthLink l = MakeLink(h);
        h.EnableAscii(prefix, l.a);
        h.EnableAscii(prefix, l.b);
        Simulator::Schedule(MicroSeconds(1), [&]() {
            for (uint32_t i = 0; i < 3; ++i)
            {
                l.a->Send(Create<Packet>(500), l.b->GetAddress(), 0x88B5);
            }
        });
        Simulator::Run();
        Simulator::Destroy(); // flushes the files
        auto count = [](const std::string& path, char c) {
            std::ifstream in(path);
            uint32_t n = 0;
            for (std::string line; std::getline(in, line);)
            {
                n += !line.empty() && line[0] == c;
                if (!line.empty() && line[0] == 'r' &&
                    line.find("ns3::EthernetHeader") == std::string::npos)
                {
                    std::cerr << "no Ethernet header printed: " << line << "\n";
                    return 0u;
                }
            }
            std::cerr << path << ": " << n << " lines '" << c << "'\n";
            return n;
        };
        const std::string fa = prefix + "-0-0.tr";
        const std::string fb = prefix + "-1-0.tr";
        const bool ok = count(fa, '+') == 3 && count(fa, '-') == 3 && count(fb, 'r') == 3 &&
                        count(fa, 'd') + count(fb, 'd') == 0;
        std::exit(ok ? 0 : 1);
    };
    EXPECT_EXIT(run(), ::testing::ExitedWithCode(0), "");
}

// ----------------------------------------------------------------------------- user errors

TEST(EthLinkUserErrors, BadAttributeValuesNameTheInputAndTheFix)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(CreateObject<EthNetDevice>()->SetAttribute("EtsWeights", StringValue("1,2,3")),
                 "EtsWeights='1,2,3' has 3 entries; give eight");
    EXPECT_DEATH(
        CreateObject<EthNetDevice>()->SetAttribute("EtsWeights", StringValue("1,x,0,0,0,0,0,0")),
        "EtsWeights='1,x,0,0,0,0,0,0': entry 1 is 'x', not a number from 0 to 255");
    EXPECT_DEATH(
        CreateObject<EthNetDevice>()->SetAttribute("EtsWeights", StringValue("1,300,0,0,0,0,0,0")),
        "entry 1 is '300', not a number from 0 to 255");
    EXPECT_DEATH(CreateObject<EthNetDevice>()->SetAttribute("DscpToPriority", StringValue("1,9")),
                 "DscpToPriority='1,9': entry 1 is '9', not a number from 0 to 7");
    EXPECT_DEATH(CreateObject<EthNetDevice>()->SetAttribute("DscpToPriority", StringValue("1,2")),
                 "DscpToPriority has 2 entries; give 64");
    EXPECT_DEATH(CreateObject<EthNetDevice>()->SetAttribute("DataRate", StringValue("0bps")),
                 "DataRate=0bps: give the port a positive rate");
    EXPECT_DEATH(CreateObject<EthNetDevice>()->SetPfcXoff(1, true),
                 "SetPfcXoff: priority 1 is not lossless here \\(PfcEnabled=0x8\\); pause only "
                 "priorities of PfcEnabled, or add bit 1 to it");
    EXPECT_DEATH(CreateObject<EthChannel>()->SetAttribute("Delay", TimeValue(NanoSeconds(-3))),
                 "EthChannel attribute Delay=-3.*ns is negative");
    EXPECT_DEATH(
        {
            EthLink l = MakeLink(Helper("8Gbps", NanoSeconds(10)));
            l.b->SetAttribute("DataRate", StringValue("10Gbps"));
            Simulator::Run();
        },
        "has DataRate=8000000000bps but its peer .* has DataRate=10000000000bps; an Ethernet "
        "link runs at one rate");
    EXPECT_DEATH(
        {
            EthLink l = MakeLink(Helper("8Gbps", NanoSeconds(10)));
            l.a->Enqueue(Create<Packet>(100), 8, 0);
        },
        "a frame was queued on priority 8; priorities are 0..7");
    EXPECT_DEATH(
        {
            Ptr<Node> n = CreateObject<Node>();
            EthHelper h;
            Ptr<EthNetDevice> a = h.InstallPort(n);
            Ptr<EthNetDevice> b = h.InstallPort(n);
            Ptr<EthNetDevice> c = h.InstallPort(n);
            h.Connect(a, b);
            h.Connect(a, c);
        },
        "already has a cable");
}

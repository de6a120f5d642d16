/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * RoCEv2 tests: the one RDMA transport (IbQueuePair, IbHca) over Ethernet ports, through
 * EthSwitch fabrics built by EthFabricHelper. Throughput derived from the link rate and the
 * RoCEv2 framing, every byte delivered with PFC on (lossless) and off (lossy, go-back-N), the
 * pause frames of an incast, and DCQCN: CNPs at most one per interval per QP, rates never
 * below the minimum, and fair shares on a shared bottleneck.
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
#include "ns3/ib-packet.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-topology.h"
#include "ns3/ib-verbs.h"
#include "ns3/network-module.h"
#include "ns3/roce-packet.h"

#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

class RoceRdmaTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        RngSeedManager::SetSeed(5);
        RngSeedManager::SetRun(1);
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// A star: one switch, hosts 0..n-1 on its ports 1..n, links at @p speed (IB naming).
IbTopology
Star(uint32_t hosts, IbLinkRate::Speed speed = IbLinkRate::EDR)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(hosts, "sw");
    for (uint32_t h = 0; h < hosts; ++h)
    {
        const uint32_t ca = t.AddCa(1, "h" + std::to_string(h));
        t.ConnectNextFree(ca, sw, speed, 4);
    }
    return t;
}

/// One RC connection with a source and a destination region.
struct Conn
{
    Ptr<IbQueuePair> qp[2];
    Ptr<IbCompletionQueue> cq[2];
    Ptr<IbMemoryRegion> src;
    Ptr<IbMemoryRegion> dst;
};

Conn
Connect(Ptr<IbHca> a, Ptr<IbHca> b, uint64_t bytes)
{
    Conn c;
    c.cq[0] = a->CreateCq();
    c.cq[1] = b->CreateCq();
    c.qp[0] = a->CreateQp(IbQpType::RC, c.cq[0], c.cq[0]);
    c.qp[1] = b->CreateQp(IbQpType::RC, c.cq[1], c.cq[1]);
    IbQpAttr base;
    base.timeout = 10; // 4 ms: far above any queueing here, so only losses retransmit
    IbConnectionManager::ConnectRc(c.qp[0], c.qp[1], nullptr, base);
    c.src = a->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE);
    c.dst = b->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    return c;
}

IbSendWr
Write(const Conn& c, uint64_t bytes, uint64_t id = 1)
{
    return c.src->WriteTo(*c.dst, static_cast<uint32_t>(bytes), id);
}

/// Arrival times of the frames a device received.
struct Arrivals
{
    std::vector<Time> at;
    std::vector<uint32_t> size;

    void Rx(Ptr<const Packet> p)
    {
        at.push_back(Simulator::Now());
        size.push_back(p->GetSize());
    }
};

} // namespace

// RoCE write_bw at 100, 200 and 400 Gb/s: frames of a long WRITE arrive back to back, each
// payload + Ethernet (14) + IPv4 (20) + UDP (8) + BTH (12) + ICRC (4) + FCS (4) + preamble and
// SFD (8) + inter-frame gap (12) long on the wire, so the goodput is rate x 4096 / (4096 + 82).
TEST_F(RoceRdmaTest, WriteBandwidthIsTheLinkRateTimesTheRoceFramingEfficiency)
{
    for (auto speed : {IbLinkRate::EDR, IbLinkRate::HDR, IbLinkRate::NDR})
    {
        EthFabricHelper helper;
        EthFabric f = helper.Build(Star(2, speed));
        const double rate = static_cast<double>(IbLinkRate::GetDataRate(speed, 4).GetBitRate());
        const uint32_t packets = 400;
        const uint64_t bytes = packets * 4096ULL;
        Conn c = Connect(f.hcas[0], f.hcas[1], bytes);
        Arrivals arr;
        f.hcas[1]->GetEthPort(1)->TraceConnectWithoutContext("MacRx",
                                                             MakeCallback(&Arrivals::Rx, &arr));
        ASSERT_TRUE(c.qp[0]->PostSend(Write(c, bytes)));
        Simulator::Run();
        ASSERT_EQ(c.cq[0]->GetTotalCompletions(), 1u);
        ASSERT_EQ(arr.at.size(), packets);
        EXPECT_EQ(arr.size[0], 4096u + 14 + 20 + 8 + 12 + 16 + 4 + 4); // first has RETH
        EXPECT_EQ(arr.size[1], 4096u + 14 + 20 + 8 + 12 + 4 + 4);
        const double measured =
            (packets - 1) * 4096.0 * 8 / (arr.at.back() - arr.at.front()).GetSeconds();
        const double expected = rate * 4096.0 / (4096 + 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12);
        EXPECT_NEAR(measured / expected, 1.0, 1e-4) << IbLinkRate::GetDataRate(speed, 4);
        Simulator::Destroy();
    }
}

// 16:1 incast through one switch with PFC on the RoCE priority: no frame is dropped, the
// switch pauses the senders, and every byte arrives.
TEST_F(RoceRdmaTest, LosslessIncastPausesTheSendersAndDropsNothing)
{
    EthFabricHelper helper;
    helper.SetHcaAttribute("DcqcnEnabled", BooleanValue(false));
    // A shallow-buffered switch (4 MiB shared) and four times as much data in flight.
    helper.SetSwitchAttribute("BufferSize", UintegerValue(4 << 20));
    EthFabric f = helper.Build(Star(17));
    const uint64_t bytes = 1 << 20;
    std::vector<Conn> conns;
    for (uint32_t s = 1; s <= 16; ++s)
    {
        conns.push_back(Connect(f.hcas[s], f.hcas[0], bytes));
        ASSERT_TRUE(conns.back().qp[0]->PostSend(Write(conns.back(), bytes)));
    }
    Simulator::Run();
    Ptr<EthSwitch> sw = f.ethSwitches[0];
    uint64_t drops = 0;
    for (auto r : {EthSwitch::HEADROOM_OVERFLOW, EthSwitch::LOSSY_BUFFER_FULL})
    {
        drops += sw->GetDropCount(r);
    }
    EXPECT_EQ(drops, 0u);
    EXPECT_GT(sw->GetXoffCount(), 0u);
    uint64_t pausesReceived = 0;
    for (uint32_t s = 1; s <= 16; ++s)
    {
        EXPECT_EQ(conns[s - 1].cq[0]->GetTotalCompletions(), 1u) << "sender " << s;
        EXPECT_EQ(conns[s - 1].qp[0]->GetCounters().retransmittedPackets, 0u);
        pausesReceived += f.hcas[s]->GetEthPort(1)->GetPfcFramesReceived(3);
    }
    EXPECT_GT(pausesReceived, 0u);
}

// The same incast with PFC off: the switch drops, and RC's go-back-N still delivers every byte.
TEST_F(RoceRdmaTest, LossyIncastDropsAndRcRecoversEveryByte)
{
    EthFabricHelper helper;
    helper.SetHcaAttribute("DcqcnEnabled", BooleanValue(false));
    helper.SetDeviceAttribute("PfcEnabled", UintegerValue(0));
    // A shallow-buffered switch (4 MiB shared) and four times as much data in flight.
    helper.SetSwitchAttribute("BufferSize", UintegerValue(4 << 20));
    EthFabric f = helper.Build(Star(17));
    const uint64_t bytes = 1 << 20;
    std::vector<Conn> conns;
    for (uint32_t s = 1; s <= 16; ++s)
    {
        conns.push_back(Connect(f.hcas[s], f.hcas[0], bytes));
        ASSERT_TRUE(conns.back().qp[0]->PostSend(Write(conns.back(), bytes)));
    }
    Simulator::Run();
    Ptr<EthSwitch> sw = f.ethSwitches[0];
    EXPECT_GT(sw->GetDropCount(EthSwitch::LOSSY_BUFFER_FULL), 0u);
    EXPECT_EQ(sw->GetXoffCount(), 0u);
    uint64_t retransmitted = 0;
    for (uint32_t s = 1; s <= 16; ++s)
    {
        ASSERT_EQ(conns[s - 1].cq[0]->GetTotalCompletions(), 1u) << "sender " << s;
        EXPECT_EQ(conns[s - 1].cq[0]->Poll(1).at(0).status, IbWcStatus::SUCCESS);
        retransmitted += conns[s - 1].qp[0]->GetCounters().retransmittedPackets;
    }
    EXPECT_GT(retransmitted, 0u);
}

// DCQCN on an incast: the switch marks, the receiver sends CNPs at most one per CnpInterval
// per QP, senders cut their rates but never below DcqcnMinRate, and all data arrives.
TEST_F(RoceRdmaTest, DcqcnCnpsAreRateLimitedPerQpAndRatesStayAboveTheMinimum)
{
    EthFabricHelper helper;
    const Time interval = MicroSeconds(4);
    helper.SetHcaAttribute("CnpInterval", TimeValue(interval));
    EthFabric f = helper.Build(Star(9));
    const uint64_t bytes = 1024 * 1024;
    std::vector<Conn> conns;
    for (uint32_t s = 1; s <= 8; ++s)
    {
        conns.push_back(Connect(f.hcas[s], f.hcas[0], bytes));
        ASSERT_TRUE(conns.back().qp[0]->PostSend(Write(conns.back(), bytes)));
    }
    // Sample every sender's rate every microsecond.
    double lowest = 1e300;
    std::function<void()> sample = [&]() {
        for (const Conn& c : conns)
        {
            lowest = std::min(lowest, c.qp[0]->GetRateControl().GetRate());
        }
        if (Simulator::Now() < MilliSeconds(2))
        {
            Simulator::Schedule(MicroSeconds(1), sample);
        }
    };
    Simulator::Schedule(MicroSeconds(1), sample);
    const Time start = Simulator::Now();
    Simulator::Run();
    const Time end = Simulator::Now();
    EXPECT_GT(f.ethSwitches[0]->GetEcnMarks(), 0u);
    EXPECT_GT(f.hcas[0]->GetCnpsSent(), 0u);
    uint64_t cuts = 0;
    for (const Conn& c : conns)
    {
        EXPECT_EQ(c.cq[0]->GetTotalCompletions(), 1u);
        // One CNP per interval at most, over the QP's life.
        const uint64_t sent = c.qp[1]->GetCounters().cnpsSent;
        EXPECT_LE(
            sent,
            1 + static_cast<uint64_t>((end - start).GetPicoSeconds() / interval.GetPicoSeconds()));
        cuts += c.qp[0]->GetRateControl().GetCuts();
    }
    EXPECT_GT(cuts, 0u);
    UintegerValue unused;
    DataRateValue minRate;
    f.hcas[1]->GetAttribute("DcqcnMinRate", minRate);
    EXPECT_GE(lowest, static_cast<double>(minRate.Get().GetBitRate()));
    EXPECT_LT(lowest, 100e9);
}

namespace
{

/// Hosts h0 and h1 at the two ends of a chain of @p switches switches.
IbTopology
Chain(uint32_t switches)
{
    IbTopology t;
    std::vector<uint32_t> sw;
    for (uint32_t k = 0; k < switches; ++k)
    {
        sw.push_back(t.AddSwitch(2, "sw" + std::to_string(k)));
    }
    const uint32_t a = t.AddCa(1, "h0");
    const uint32_t b = t.AddCa(1, "h1");
    t.ConnectNextFree(a, sw.front());
    for (uint32_t k = 0; k + 1 < switches; ++k)
    {
        t.ConnectNextFree(sw[k], sw[k + 1]);
    }
    t.ConnectNextFree(sw.back(), b);
    return t;
}

} // namespace

// One 8-byte SEND through 1 and 3 cut-through switches (8 Gb/s links): the receive completion
// comes at
// DoorbellLatency + k x (72 bytes (preamble, SFD and the first 64 bytes) + cable delay +
// ForwardingLatency) + the whole frame's wire time (70 bytes + 20) + cable delay +
// PcieWriteLatency, to the picosecond.
TEST_F(RoceRdmaTest, OnePacketLatencyThroughOneAndThreeSwitchesIsExact)
{
    for (uint32_t k : {1u, 3u})
    {
        EthFabricHelper helper;
        const Time cable = NanoSeconds(10);
        helper.SetChannelAttribute("Delay", TimeValue(cable));
        // 8 Gb/s: one byte is one nanosecond, the simulator's time step, so every stage's
        // time is exact
        helper.SetDataRate(DataRate("8Gb/s"));
        EthFabric f = helper.Build(Chain(k));
        ASSERT_EQ(f.GetNHosts(), 2u);
        Ptr<IbHca> a = f.hcas[0];
        Ptr<IbHca> b = f.hcas[1];
        Conn c = Connect(a, b, 64);
        Ptr<IbMemoryRegion> rbuf = b->RegisterMemory(64, IB_ACCESS_LOCAL_WRITE);
        IbRecvWr rwr;
        rwr.wrId = 7;
        rwr.sge.addr = rbuf->GetAddr();
        rwr.sge.length = 64;
        rwr.sge.lkey = rbuf->GetLkey();
        ASSERT_TRUE(c.qp[1]->PostRecv(rwr));
        Time received;
        void (*note)(Time*, const IbWorkCompletion&) = [](Time* t, const IbWorkCompletion& wc) {
            *t = wc.timestamp;
        };
        c.cq[1]->SetCompletionCallback(MakeBoundCallback(note, &received));
        IbSendWr wr;
        wr.wrId = 1;
        wr.opcode = IbWrOpcode::SEND;
        wr.sge.addr = c.src->GetAddr();
        wr.sge.length = 8;
        wr.sge.lkey = c.src->GetLkey();
        ASSERT_TRUE(c.qp[0]->PostSend(wr));
        Simulator::Run();
        TimeValue doorbell;
        TimeValue pcie;
        TimeValue latency;
        a->GetAttribute("DoorbellLatency", doorbell);
        b->GetAttribute("PcieWriteLatency", pcie);
        f.ethSwitches[0]->GetAttribute("ForwardingLatency", latency);
        const double bps = 8e9;
        const uint32_t frame = 14 + 20 + 8 + 12 + 8 + 4 + 4;
        const Time head = PicoSeconds(std::llround(72 * 8 / bps * 1e12));
        const Time whole = PicoSeconds(std::llround((frame + 20) * 8 / bps * 1e12));
        const Time expected =
            doorbell.Get() + (head + cable + latency.Get()) * k + whole + cable + pcie.Get();
        EXPECT_EQ(received, expected) << k << " switches";
        Simulator::Destroy();
    }
}

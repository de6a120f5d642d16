/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * RDMA transport tests: IbHca, IbQueuePair, IbCompletionQueue, IbMemoryRegion and
 * IbHcaHelper on a back-to-back link and through one switch. Every RC and UD opcode path
 * (checked on the wire), memory contents in data mode, loss recovery (go-back-N with
 * 1 % and 10 % packet loss), atomics applied exactly once, RNR, remote access errors,
 * the QP state machine, and throughput and latency derived from the link rate, header
 * sizes and the HCA's timing attributes.
 */

#include "ns3/core-module.h"
#include "ns3/error-model.h"
#include "ns3/ib-aeth-header.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-fabric-stats.h"
#include "ns3/ib-hca-helper.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-raw-traffic-helper.h"
#include "ns3/ib-routing-engine.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-topology.h"
#include "ns3/ib-verbs.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>
#include <vector>

using namespace ns3;

namespace
{

class IbRdmaTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        IbHelper::ResetLidAllocation();
        RngSeedManager::SetSeed(3);
        RngSeedManager::SetRun(1);
    }

    void TearDown() override
    {
        Simulator::Destroy();
    }
};

/// Two hosts with an HCA each, joined by a cable or through a switch.
struct Fabric
{
    NodeContainer hosts;      ///< the two hosts
    Ptr<IbNetDevice> port[2]; ///< their ports
    Ptr<IbHca> hca[2];        ///< their HCAs
    Ptr<IbSubnetManager> sm;  ///< the SM (switched fabric only)
};

/// @return @p v in lower-case hexadecimal, without a prefix
std::string
ToHex(uint32_t v)
{
    std::ostringstream os;
    os << std::hex << v;
    return os.str();
}

/**
 * @param hh HCA helper (attributes set)
 * @param speed link speed
 * @param mtu port MTU
 * @return a back-to-back link
 */
Fabric
BackToBack(const IbHcaHelper& hh, std::string speed = "EDR", uint32_t mtu = 4096)
{
    Fabric f;
    f.hosts.Create(2);
    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue(speed));
    ib.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    NetDeviceContainer d = ib.Install(f.hosts.Get(0), f.hosts.Get(1));
    for (uint32_t i = 0; i < 2; ++i)
    {
        f.port[i] = DynamicCast<IbNetDevice>(d.Get(i));
        f.hca[i] = hh.Install(f.hosts.Get(i));
    }
    return f;
}

/**
 * @param hh HCA helper (attributes set)
 * @param mtu port MTU
 * @return two hosts through one switch, brought up by the subnet manager
 */
Fabric Switched(const IbHcaHelper& hh, uint32_t mtu = 4096);

/**
 * @param hh HCA helper (attributes set)
 * @param fab a fabric the subnet manager brought up, with at least two hosts
 * @return its hosts 0 and 1, with an HCA each
 */
Fabric
OnFabric(const IbHcaHelper& hh, const IbFabric& fab)
{
    Fabric f;
    f.hosts = fab.hosts;
    f.sm = fab.subnetManager;
    for (uint32_t i = 0; i < 2; ++i)
    {
        f.port[i] = fab.HostPort(i);
        f.hca[i] = hh.Install(f.hosts.Get(i));
    }
    return f;
}

Fabric
Switched(const IbHcaHelper& hh, uint32_t mtu)
{
    IbFabricHelper fh;
    fh.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    return OnFabric(hh, fh.Build(IbTopologyBuilder::Chain(1)));
}

/// A connected pair of RC queue pairs, host 0 <-> host 1.
struct Rc
{
    Ptr<IbQueuePair> qp[2];        ///< qp[i] on host i
    Ptr<IbCompletionQueue> scq[2]; ///< send CQs
    Ptr<IbCompletionQueue> rcq[2]; ///< receive CQs
};

/**
 * @param f the fabric
 * @param base connection attributes
 * @return a connected RC pair
 */
Rc
ConnectPair(Fabric& f, IbQpAttr base = IbQpAttr())
{
    Rc c;
    for (uint32_t i = 0; i < 2; ++i)
    {
        c.scq[i] = f.hca[i]->CreateCq(100000);
        c.rcq[i] = f.hca[i]->CreateCq(100000);
        c.qp[i] = f.hca[i]->CreateQp(IbQpType::RC, c.scq[i], c.rcq[i], 4096, 4096);
    }
    IbHcaHelper::ConnectRc(c.qp[0], c.qp[1], f.sm, base);
    return c;
}

/**
 * Fill a data-mode region with a pattern.
 * @param mr the region
 * @param seed pattern seed
 */
void
Fill(Ptr<IbMemoryRegion> mr, uint32_t seed)
{
    uint8_t* d = mr->GetData();
    uint32_t x = seed * 2654435761u + 1;
    for (uint64_t i = 0; i < mr->GetLength(); ++i)
    {
        x = x * 1103515245u + 12345u;
        d[i] = static_cast<uint8_t>(x >> 16);
    }
}

/**
 * @param a a region
 * @param aOff offset in it
 * @param b another region
 * @param bOff offset in it
 * @param len bytes
 * @return true if the ranges hold the same bytes
 */
bool
SameBytes(Ptr<IbMemoryRegion> a, uint64_t aOff, Ptr<IbMemoryRegion> b, uint64_t bOff, uint64_t len)
{
    return std::equal(a->GetData() + aOff, a->GetData() + aOff + len, b->GetData() + bOff);
}

/**
 * @param cq a completion queue
 * @return everything in it
 */
std::vector<IbWorkCompletion>
Drain(Ptr<IbCompletionQueue> cq)
{
    return cq->Poll(1000000);
}

/**
 * @param mr a region
 * @param off offset
 * @param len bytes
 * @return an SGE covering them
 */
IbSge
Sge(Ptr<IbMemoryRegion> mr, uint64_t off, uint32_t len)
{
    IbSge s;
    s.addr = mr->GetAddr() + off;
    s.length = len;
    s.lkey = mr->GetLkey();
    return s;
}

/**
 * @param wrId id
 * @param op opcode
 * @param local local SGE
 * @param remote remote region (RDMA/atomic), may be null
 * @param remoteOff offset in it
 * @return the WR
 */
IbSendWr
Wr(uint64_t wrId,
   IbWrOpcode op,
   IbSge local,
   Ptr<IbMemoryRegion> remote = nullptr,
   uint64_t remoteOff = 0)
{
    IbSendWr wr;
    wr.wrId = wrId;
    wr.opcode = op;
    wr.sge = local;
    if (remote)
    {
        wr.remoteAddr = remote->GetAddr() + remoteOff;
        wr.rkey = remote->GetRkey();
    }
    return wr;
}

/**
 * @param p a sealed packet
 * @return its BTH opcode
 */
uint8_t
OpcodeOf(Ptr<const Packet> p)
{
    uint8_t b[IbPacket::LRH_SIZE + 1];
    p->CopyData(b, sizeof(b));
    return b[IbPacket::LRH_SIZE];
}

/**
 * @param p a sealed packet
 * @return its BTH PSN
 */
uint32_t
PsnOf(Ptr<const Packet> p)
{
    uint8_t b[IbPacket::LRH_SIZE + IbPacket::BTH_SIZE];
    p->CopyData(b, sizeof(b));
    return (b[17] << 16) | (b[18] << 8) | b[19];
}

/**
 * Record the opcodes a port hands to its wire.
 * @param port the port
 * @param out where to append them
 */
void
RecordOpcodes(Ptr<IbNetDevice> port, std::vector<uint8_t>* out)
{
    port->TraceConnectWithoutContext(
        "MacTx",
        MakeCallback(+[](std::vector<uint8_t>* v, Ptr<const Packet> p) {
            v->push_back(OpcodeOf(p));
        }).Bind(out));
}

/**
 * @param rate packet error rate
 * @param stream random stream
 * @return the model, configured
 */
Ptr<RateErrorModel>
Loss(double rate, int64_t stream)
{
    Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
    em->SetAttribute("ErrorRate", DoubleValue(rate));
    em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
    em->AssignStreams(stream);
    return em;
}

// ---------------------------------------------------------------- verbs basics

TEST(IbRdmaVerbs, TimerTablesAndNames)
{
    EXPECT_EQ(IbRnrTimerValue(0), MicroSeconds(655360));
    EXPECT_EQ(IbRnrTimerValue(1), MicroSeconds(10));
    EXPECT_EQ(IbRnrTimerValue(14), MicroSeconds(1280));
    EXPECT_EQ(IbRnrTimerValue(31), MicroSeconds(491520));
    EXPECT_EQ(IbAckTimeoutValue(1), NanoSeconds(8192));
    EXPECT_EQ(IbAckTimeoutValue(14), NanoSeconds(4096LL << 14)); // 67.1 ms
    EXPECT_EQ(IbAckTimeoutValue(0), Time::Max());
    EXPECT_STREQ(IbWcStatusName(IbWcStatus::REM_ACCESS_ERR), "REM_ACCESS_ERR");
    EXPECT_STREQ(IbWcStatusName(IbWcStatus::WR_FLUSH_ERR), "WR_FLUSH_ERR");
}

TEST(IbRdmaVerbs, AFullCompletionQueueStopsWithAMessageUnlessToldToDrop)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto make = [](bool drop) {
        Ptr<IbCompletionQueue> cq = CreateObject<IbCompletionQueue>();
        cq->SetAttribute("Depth", UintegerValue(2));
        cq->SetAttribute("DropOnOverrun", BooleanValue(drop));
        return cq;
    };
    auto wc = [](uint64_t id) {
        IbWorkCompletion c;
        c.wrId = id;
        c.qpNum = 0x2a;
        return c;
    };
    Ptr<IbCompletionQueue> cq = make(false);
    cq->Deliver(wc(1));
    cq->Deliver(wc(2));
    EXPECT_DEATH(cq->Deliver(wc(3)),
                 "IbCompletionQueue: the queue is full \\(Depth 2 completions not yet "
                 "polled\\) at .* when QP 0x2a completed WR 3 \\(SUCCESS\\); poll it more "
                 "often, create it deeper");
    // A poll makes room: the third completion is queued behind the second.
    EXPECT_EQ(cq->Poll(1).at(0).wrId, 1u);
    cq->Deliver(wc(3));
    EXPECT_EQ(cq->GetNumEntries(), 2u);
    EXPECT_EQ(cq->GetOverruns(), 0u);

    Ptr<IbCompletionQueue> lossy = make(true);
    for (uint64_t id = 1; id <= 3; ++id)
    {
        lossy->Deliver(wc(id));
    }
    EXPECT_EQ(lossy->GetOverruns(), 1u);
    EXPECT_EQ(lossy->GetTotalCompletions(), 3u);
    const auto got = lossy->Poll(10);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].wrId, 1u);
    EXPECT_EQ(got[1].wrId, 2u);
}

TEST_F(IbRdmaTest, MemoryRegionsChecksAndAtomicWords)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(1000, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[0]->RegisterMemory(0x5000, 64, IB_ACCESS_REMOTE_READ);
    EXPECT_EQ(a->GetData(), nullptr); // virtual mode
    EXPECT_NE(a->GetLkey(), b->GetLkey());
    EXPECT_EQ(a->GetLkey(), a->GetRkey());
    EXPECT_EQ(b->GetAddr(), 0x5000u);
    EXPECT_EQ(a->GetAddr() % 4096, 0u);
    EXPECT_TRUE(a->CheckLocal(a->GetAddr() + 10, 990, a->GetLkey(), true));
    EXPECT_FALSE(a->CheckLocal(a->GetAddr() + 10, 991, a->GetLkey(), true));
    EXPECT_FALSE(b->CheckLocal(0x5000, 8, b->GetLkey(), true)); // no local write
    EXPECT_TRUE(b->CheckRemote(0x5000, 64, b->GetRkey(), IB_ACCESS_REMOTE_READ));
    EXPECT_FALSE(b->CheckRemote(0x5000, 64, b->GetRkey(), IB_ACCESS_REMOTE_WRITE));
    EXPECT_FALSE(b->CheckRemote(0x5000, 64, b->GetRkey() + 1, IB_ACCESS_REMOTE_READ));
    EXPECT_EQ(f.hca[0]->GetMemoryRegion(b->GetRkey()), b);
    a->WriteU64(a->GetAddr() + 8, 42);
    EXPECT_EQ(a->ReadU64(a->GetAddr() + 8), 42u);
    EXPECT_EQ(a->ReadU64(a->GetAddr() + 16), 0u);
    f.hca[0]->DeregisterMemory(b);
    EXPECT_EQ(f.hca[0]->GetMemoryRegion(b->GetRkey()), nullptr);
    // As ibv_reg_mr: remote write or atomic rights need local write.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    for (const uint32_t access : {IB_ACCESS_REMOTE_WRITE, IB_ACCESS_REMOTE_ATOMIC})
    {
        EXPECT_DEATH(f.hca[0]->RegisterMemory(64, access | IB_ACCESS_REMOTE_READ),
                     "RegisterMemory: access 0x[0-9a-f]+ gives remote write or atomic rights "
                     "without local write; verbs refuses this .*: add IB_ACCESS_LOCAL_WRITE");
    }
}

/*
 * Deregistering a region that outstanding work still uses is refused, naming the work and
 * the QP (before, the work kept a dangling pointer to the freed region); once the work has
 * completed it is allowed.
 */
TEST_F(IbRdmaTest, ARegionTooLargeToHoldInDataModeIsRefusedWithAMessage)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(true));
    Fabric f = BackToBack(hh);
    EXPECT_DEATH(f.hca[0]->RegisterMemory(uint64_t{1} << 62, IB_ACCESS_LOCAL_WRITE),
                 "IbMemoryRegion: cannot hold the 4611686018427387904 bytes of a region in "
                 "DataMode");
}

TEST_F(IbRdmaTest, DeregisteringARegionInUseIsRefused)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            IbHcaHelper hh;
            Fabric f = BackToBack(hh);
            Rc c = ConnectPair(f);
            Ptr<IbMemoryRegion> buf = f.hca[1]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
            IbRecvWr r;
            r.wrId = 1;
            r.sge = Sge(buf, 0, 4096);
            c.qp[1]->PostRecv(r);
            f.hca[1]->DeregisterMemory(buf);
        },
        "DeregisterMemory: the region with lkey 0x[0-9a-f]+ on node [0-9]+ is still used by a "
        "posted receive WR of QP [0-9]+; deregister it after that work has completed");
    EXPECT_DEATH(
        {
            IbHcaHelper hh;
            Fabric f = BackToBack(hh);
            Rc c = ConnectPair(f);
            Ptr<IbMemoryRegion> src = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
            Ptr<IbMemoryRegion> dst =
                f.hca[1]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
            c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(src, 0, 4096), dst, 0));
            f.hca[0]->DeregisterMemory(src);
        },
        "still used by a send WR not yet completed of QP [0-9]+");
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Rc c = ConnectPair(f);
    Ptr<IbMemoryRegion> src = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> dst =
        f.hca[1]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(src, 0, 4096), dst, 0)));
    Simulator::Run();
    ASSERT_EQ(Drain(c.scq[0]).size(), 1u);
    f.hca[0]->DeregisterMemory(src);
    f.hca[1]->DeregisterMemory(dst);
    EXPECT_EQ(f.hca[0]->GetMemoryRegion(src->GetLkey()), nullptr);
}

/*
 * A QP reset while it waits for room in port 1's transmit queue, then brought up again on
 * port 2, sends on port 2 (before, it stayed in port 1's list: it could not be woken for
 * port 2, and port 1 sent its packets, with port 2's source LID, when its queue drained).
 */
TEST_F(IbRdmaTest, AQpResetWhileWaitingMovesToItsNewPort)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(4, "sw", 0x10);
    const uint32_t h0 = t.AddCa(2, "h0", 0x20);
    const uint32_t h1 = t.AddCa(1, "h1", 0x30);
    std::string error;
    // Port 1 slow (SDR 1x: 16.5 us per 4 KB packet), so that the new WRITE is ready
    // (after the doorbell) while port 1 still holds a packet of the first.
    ASSERT_TRUE(t.Connect(h0, 1, sw, 1, IbLinkRate::SDR, 1, &error)) << error;
    ASSERT_TRUE(t.Connect(h0, 2, sw, 2, IbLinkRate::EDR, 4, &error)) << error;
    ASSERT_TRUE(t.Connect(h1, 1, sw, 3, IbLinkRate::EDR, 4, &error)) << error;
    IbFabric fab = IbFabricHelper().Build(t);
    IbHcaHelper hh;
    hh.SetHcaAttribute("PortQueueDepth", UintegerValue(1));
    Ptr<IbHca> hca0 = hh.Install(fab.hosts.Get(0));
    Ptr<IbHca> hca1 = hh.Install(fab.hosts.Get(1));
    Ptr<IbNetDevice> p1 = DynamicCast<IbNetDevice>(fab.hosts.Get(0)->GetDevice(0));
    Ptr<IbNetDevice> p2 = DynamicCast<IbNetDevice>(fab.hosts.Get(0)->GetDevice(1));
    Ptr<IbNetDevice> peer = DynamicCast<IbNetDevice>(fab.hosts.Get(1)->GetDevice(0));
    Ptr<IbCompletionQueue> cq0 = hca0->CreateCq(1000);
    Ptr<IbCompletionQueue> cq1 = hca1->CreateCq(1000);
    Ptr<IbQueuePair> a = hca0->CreateQp(IbQpType::RC, cq0, cq0);
    Ptr<IbQueuePair> b = hca1->CreateQp(IbQpType::RC, cq1, cq1);
    IbHcaHelper::ConnectRc(a, b, fab.subnetManager);
    Ptr<IbMemoryRegion> src = hca0->RegisterMemory(1 << 20, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> dst =
        hca1->RegisterMemory(1 << 20, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    ASSERT_TRUE(a->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(src, 0, 1 << 20), dst, 0)));
    uint64_t port1Sent = 0;
    Simulator::Schedule(MicroSeconds(5), [&]() {
        // In the middle of the 1 MiB WRITE (256 packets).
        IbQpAttr reset;
        reset.state = IbQpState::RESET;
        ASSERT_TRUE(a->Modify(reset, &error)) << error;
        ASSERT_TRUE(b->Modify(reset, &error)) << error;
        IbQpAttr x; // new PSNs: packets of the first WRITE are still in flight
        x.sqPsn = 5000;
        x.rqPsn = 5000;
        x.accessFlags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
        x.state = IbQpState::INIT;
        x.portNum = 2;
        ASSERT_TRUE(a->Modify(x, &error)) << error;
        x.portNum = 1;
        ASSERT_TRUE(b->Modify(x, &error)) << error;
        x.state = IbQpState::RTR;
        x.dlid = peer->GetLid();
        x.destQpNum = b->GetQpNum();
        ASSERT_TRUE(a->Modify(x, &error)) << error;
        x.dlid = p2->GetLid();
        x.destQpNum = a->GetQpNum();
        ASSERT_TRUE(b->Modify(x, &error)) << error;
        x.state = IbQpState::RTS;
        ASSERT_TRUE(a->Modify(x, &error)) << error;
        ASSERT_TRUE(b->Modify(x, &error)) << error;
        // What port 1 has sent and still holds (at most PortQueueDepth per VL).
        port1Sent = p1->GetTxPackets() + p1->GetTxQueueLength(0);
        ASSERT_TRUE(a->PostSend(Wr(2, IbWrOpcode::RDMA_WRITE, Sge(src, 0, 65536), dst, 0)));
    });
    Simulator::Run();
    std::vector<IbWorkCompletion> wc = Drain(cq0);
    ASSERT_FALSE(wc.empty());
    EXPECT_EQ(wc.back().wrId, 2u);
    EXPECT_EQ(wc.back().status, IbWcStatus::SUCCESS);
    EXPECT_EQ(p1->GetTxPackets(), port1Sent);
    EXPECT_EQ(p2->GetTxPackets(), 16u); // 64 KiB at MTU 4096
}

/*
 * A SEND First takes a receive WR; a request that is invalid in the middle of that SEND
 * (here a second SEND First) ends it with a fatal NAK. The WR it took completes flushed,
 * ahead of the rest of the queue (before, it never completed). Packets are injected on
 * the requester's port, so the test controls opcodes and PSNs.
 */
TEST_F(IbRdmaTest, AnInvalidRequestInTheMiddleOfASendCompletesItsReceiveWrWithTheCause)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Rc c = ConnectPair(f);
    Ptr<IbMemoryRegion> buf = f.hca[1]->RegisterMemory(3 * 4096, IB_ACCESS_LOCAL_WRITE);
    for (uint64_t id = 1; id <= 2; ++id)
    {
        IbRecvWr r;
        r.wrId = id;
        r.sge = Sge(buf, 0, 3 * 4096);
        ASSERT_TRUE(c.qp[1]->PostRecv(r));
    }
    auto sendFirst = [&](uint32_t psn) {
        Ptr<Packet> p = Create<Packet>(4096);
        IbLrhHeader lrh;
        lrh.SetDlid(f.port[1]->GetLid());
        lrh.SetSlid(f.port[0]->GetLid());
        IbBthHeader bth;
        bth.SetOpcode(IbOpcode::RC_SEND_FIRST);
        bth.SetDestQp(c.qp[1]->GetQpNum());
        bth.SetPsn(psn);
        IbPacket::Seal(p, lrh, nullptr, bth, 4096);
        return p;
    };
    Simulator::Schedule(MicroSeconds(1), [&]() { f.port[0]->SendIbPacket(sendFirst(0)); });
    Simulator::Schedule(MicroSeconds(2), [&]() { f.port[0]->SendIbPacket(sendFirst(1)); });
    Simulator::Run();
    EXPECT_EQ(c.qp[1]->GetState(), IbQpState::ERR);
    const std::vector<IbWorkCompletion> r = Drain(c.rcq[1]);
    ASSERT_EQ(r.size(), 2u);
    // The WR the SEND was filling says why (as rxe completes it); the next is flushed.
    EXPECT_EQ(r[0].wrId, 1u);
    EXPECT_EQ(r[0].status, IbWcStatus::REM_INV_REQ_ERR) << IbWcStatusName(r[0].status);
    EXPECT_NE(c.qp[1]->DescribeCompletion(r[0]).find("this QP found the sender's request "
                                                     "invalid"),
              std::string::npos);
    EXPECT_EQ(r[1].wrId, 2u);
    EXPECT_EQ(r[1].status, IbWcStatus::WR_FLUSH_ERR);
}

TEST_F(IbRdmaTest, AWriteBehindALargeReadIsNotHeldByTheReadsResponses)
{
    // A 4 MiB READ (1024 response PSNs at MTU 4096) and then a 4 KiB WRITE, with the
    // default window of 256 packets: the READ is one request packet, so the WRITE goes
    // right behind it and lands within microseconds (before, it waited for 769 of the
    // READ's responses, some 250 us at EDR).
    IbHcaHelper hh;
    Fabric f = BackToBack(hh, "EDR", 4096);
    Rc c = ConnectPair(f);
    Ptr<IbMemoryRegion> local = f.hca[0]->RegisterMemory(5 << 20, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> remote = f.hca[1]->RegisterMemory(
        5 << 20,
        IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE);
    Time landed = Time::Max();
    c.qp[1]->TraceConnectWithoutContext(
        "MessageReceived",
        MakeCallback(+[](Time* t, uint32_t, IbWrOpcode kind, uint32_t, uint64_t) {
            if (kind == IbWrOpcode::RDMA_WRITE)
            {
                *t = Simulator::Now();
            }
        }).Bind(&landed));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(local, 0, 4 << 20), remote, 0)));
    ASSERT_TRUE(c.qp[0]->PostSend(
        Wr(2, IbWrOpcode::RDMA_WRITE, Sge(local, 4 << 20, 4096), remote, 4 << 20)));
    Simulator::Run();
    const std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS);
    EXPECT_EQ(s[1].status, IbWcStatus::SUCCESS);
    // Doorbell, the READ request and the WRITE on the wire, the cable, PCIe: a few us.
    EXPECT_LT(landed, MicroSeconds(5));
}

TEST_F(IbRdmaTest, RtsToRtsKeepsTheRetryAttributes)
{
    // ConnectRc with timeout 5, retryCnt 2, depth 32 asked against 16 (capped to 16). An
    // RTS->RTS call with a default IbQpAttr (timeout 14, retryCnt 7, maxRdAtomic 16... )
    // must not undo them.
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    IbQpAttr base;
    base.timeout = 5;
    base.retryCnt = 2;
    base.maxRdAtomic = 32;
    Rc c = ConnectPair(f, base);
    IbQpAttr rts;
    rts.state = IbQpState::RTS;
    rts.maxRdAtomic = 64;
    std::string err;
    ASSERT_TRUE(c.qp[0]->Modify(rts, &err)) << err;
    EXPECT_EQ(c.qp[0]->GetAttr().timeout, 5);
    EXPECT_EQ(c.qp[0]->GetAttr().retryCnt, 2);
    EXPECT_EQ(c.qp[0]->GetAttr().maxRdAtomic, 16);
}

TEST_F(IbRdmaTest, ConnectingHcasOfDifferentDataModesIsRefused)
{
    // Before, a READ from the virtual-memory side completed SUCCESS with zeros.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    f.hca[0]->SetAttribute("DataMode", BooleanValue(true));
    EXPECT_DEATH(
        ConnectPair(f),
        "IbConnectionManager::ConnectRc: the HCA of node [0-9]+ has DataMode=true and that of "
        "node [0-9]+ DataMode=false; set the same DataMode on both");
}

TEST_F(IbRdmaTest, QpStateMachineRefusesBadTransitionsWithAMessage)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Ptr<IbCompletionQueue> cq = f.hca[0]->CreateCq();
    Ptr<IbQueuePair> qp = f.hca[0]->CreateQp(IbQpType::RC, cq, cq);
    EXPECT_EQ(qp->GetState(), IbQpState::RESET);
    std::string err;
    IbQpAttr a;
    a.state = IbQpState::RTS;
    EXPECT_FALSE(qp->Modify(a, &err));
    EXPECT_NE(err.find("RESET to RTS"), std::string::npos) << err;
    a.state = IbQpState::RTR;
    EXPECT_FALSE(qp->Modify(a, &err));
    EXPECT_NE(err.find("RESET to RTR"), std::string::npos) << err;

    Ptr<IbMemoryRegion> mr = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    IbRecvWr rwr;
    rwr.sge = Sge(mr, 0, 64);
    EXPECT_FALSE(qp->PostRecv(rwr, &err));
    EXPECT_NE(err.find("RESET"), std::string::npos) << err;

    a.state = IbQpState::INIT;
    a.portNum = 3;
    EXPECT_FALSE(qp->Modify(a, &err));
    EXPECT_NE(err.find("port 3"), std::string::npos) << err;
    a.portNum = 1;
    EXPECT_TRUE(qp->Modify(a, &err));
    EXPECT_EQ(qp->GetState(), IbQpState::INIT);
    EXPECT_TRUE(qp->PostRecv(rwr, &err)); // receives may be posted from INIT on
    IbSendWr swr = Wr(1, IbWrOpcode::SEND, Sge(mr, 0, 64));
    EXPECT_FALSE(qp->PostSend(swr, &err));
    EXPECT_NE(err.find("RTS"), std::string::npos) << err;
    a.state = IbQpState::RTS;
    EXPECT_FALSE(qp->Modify(a, &err));
    EXPECT_NE(err.find("INIT to RTS"), std::string::npos) << err;

    a.state = IbQpState::RTR;
    a.dlid = f.port[1]->GetLid();
    a.destQpNum = 5;
    a.pathMtu = 1500;
    EXPECT_FALSE(qp->Modify(a, &err));
    EXPECT_NE(err.find("pathMtu 1500"), std::string::npos) << err;
    a.pathMtu = 2048;
    a.dlid = 0;
    EXPECT_FALSE(qp->Modify(a, &err));
    EXPECT_NE(err.find("dlid 0 is not a unicast LID (1..0xBFFF); bring the subnet up"),
              std::string::npos)
        << err;
    // Back to back, only the other port's LID can be reached.
    a.dlid = f.port[1]->GetLid() + 1;
    EXPECT_FALSE(qp->Modify(a, &err));
    EXPECT_NE(err.find("RTR: dlid " + std::to_string(a.dlid) + " (0x" + ToHex(a.dlid) +
                       ") is not the LID of the only port it can "
                       "reach: the cable leads straight to node " +
                       std::to_string(f.hosts.Get(1)->GetId()) + "'s port, LID " +
                       std::to_string(f.port[1]->GetLid()) + "; use " +
                       std::to_string(f.port[1]->GetLid())),
              std::string::npos)
        << err;
    a.dlid = f.port[1]->GetLid();
    EXPECT_TRUE(qp->Modify(a, &err)) << err;
    a.state = IbQpState::RTS;
    a.retryCnt = 9;
    EXPECT_FALSE(qp->Modify(a, &err));
    a.retryCnt = 7;
    EXPECT_TRUE(qp->Modify(a, &err)) << err;
    EXPECT_EQ(qp->GetState(), IbQpState::RTS);

    // A bad local SGE is refused at post time.
    IbSendWr bad = Wr(2, IbWrOpcode::SEND, Sge(mr, 4000, 200));
    EXPECT_FALSE(qp->PostSend(bad, &err));
    EXPECT_NE(err.find("not inside a region"), std::string::npos) << err;
    bad.sge.lkey ^= 0x100;
    bad.sge.length = 8;
    EXPECT_FALSE(qp->PostSend(bad, &err));
    IbSendWr atom = Wr(3, IbWrOpcode::ATOMIC_FETCH_AND_ADD, Sge(mr, 0, 4), mr, 0);
    EXPECT_FALSE(qp->PostSend(atom, &err));
    EXPECT_NE(err.find("8-byte"), std::string::npos) << err;

    a.state = IbQpState::ERR;
    EXPECT_TRUE(qp->Modify(a, &err));
    a.state = IbQpState::RTS;
    EXPECT_FALSE(qp->Modify(a, &err));
    EXPECT_NE(err.find("ERR to RTS"), std::string::npos) << err;
    a.state = IbQpState::RESET;
    EXPECT_TRUE(qp->Modify(a, &err));
    EXPECT_EQ(qp->GetState(), IbQpState::RESET);
    Simulator::Run();
    // The receive posted before ERR was flushed.
    std::vector<IbWorkCompletion> wcs = Drain(cq);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, IbWcStatus::WR_FLUSH_ERR);
}

// ---------------------------------------------------------------- opcode paths

/// Which fabric a parameterized test runs on.
enum class Topo
{
    BACK_TO_BACK,
    ONE_SWITCH
};

class IbRdmaOpcodeTest : public IbRdmaTest, public ::testing::WithParamInterface<Topo>
{
};

TEST_P(IbRdmaOpcodeTest, EveryOpcodeMovesTheRightBytesWithTheRightPackets)
{
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(true));
    const uint32_t mtu = 1024;
    Fabric f = GetParam() == Topo::BACK_TO_BACK ? BackToBack(hh, "EDR", mtu) : Switched(hh, mtu);
    Rc c = ConnectPair(f);
    EXPECT_EQ(c.qp[0]->GetAttr().pathMtu, mtu);
    const uint32_t all = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
                         IB_ACCESS_REMOTE_ATOMIC;
    Ptr<IbMemoryRegion> src = f.hca[0]->RegisterMemory(64 * 1024, all);
    Ptr<IbMemoryRegion> dst = f.hca[1]->RegisterMemory(64 * 1024, all);
    Fill(src, 1);
    Fill(dst, 2);
    std::vector<uint8_t> tx;
    std::vector<uint8_t> rx;
    RecordOpcodes(f.port[0], &tx);
    RecordOpcodes(f.port[1], &rx);

    struct Case
    {
        IbWrOpcode op;
        uint32_t len;
        std::vector<uint8_t> reqOps;  // opcodes host 0 sends
        std::vector<uint8_t> respOps; // opcodes host 1 sends
    };

    using O = IbOpcode;
    const std::vector<Case> cases = {
        {IbWrOpcode::SEND, 100, {O::RC_SEND_ONLY}, {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::SEND, 0, {O::RC_SEND_ONLY}, {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::SEND, 1024, {O::RC_SEND_ONLY}, {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::SEND,
         2500,
         {O::RC_SEND_FIRST, O::RC_SEND_MIDDLE, O::RC_SEND_LAST},
         {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::SEND_WITH_IMM, 50, {O::RC_SEND_ONLY_WITH_IMMEDIATE}, {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::SEND_WITH_IMM,
         1500,
         {O::RC_SEND_FIRST, O::RC_SEND_LAST_WITH_IMMEDIATE},
         {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::RDMA_WRITE, 8, {O::RC_RDMA_WRITE_ONLY}, {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::RDMA_WRITE, 0, {O::RC_RDMA_WRITE_ONLY}, {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::RDMA_WRITE,
         3072,
         {O::RC_RDMA_WRITE_FIRST, O::RC_RDMA_WRITE_MIDDLE, O::RC_RDMA_WRITE_LAST},
         {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::RDMA_WRITE_WITH_IMM,
         700,
         {O::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE},
         {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::RDMA_WRITE_WITH_IMM,
         0,
         {O::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE},
         {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::RDMA_WRITE_WITH_IMM,
         2049,
         {O::RC_RDMA_WRITE_FIRST, O::RC_RDMA_WRITE_MIDDLE, O::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE},
         {O::RC_ACKNOWLEDGE}},
        {IbWrOpcode::RDMA_READ, 200, {O::RC_RDMA_READ_REQUEST}, {O::RC_RDMA_READ_RESPONSE_ONLY}},
        {IbWrOpcode::RDMA_READ, 0, {O::RC_RDMA_READ_REQUEST}, {O::RC_RDMA_READ_RESPONSE_ONLY}},
        {IbWrOpcode::RDMA_READ,
         4000,
         {O::RC_RDMA_READ_REQUEST},
         {O::RC_RDMA_READ_RESPONSE_FIRST,
          O::RC_RDMA_READ_RESPONSE_MIDDLE,
          O::RC_RDMA_READ_RESPONSE_MIDDLE,
          O::RC_RDMA_READ_RESPONSE_LAST}},
        {IbWrOpcode::ATOMIC_CMP_AND_SWP, 8, {O::RC_COMPARE_SWAP}, {O::RC_ATOMIC_ACKNOWLEDGE}},
        {IbWrOpcode::ATOMIC_FETCH_AND_ADD, 8, {O::RC_FETCH_ADD}, {O::RC_ATOMIC_ACKNOWLEDGE}},
    };
    uint64_t off = 0;
    uint64_t wrId = 100;
    for (const Case& k : cases)
    {
        SCOPED_TRACE(testing::Message() << "opcode " << int(k.op) << " length " << k.len);
        tx.clear();
        rx.clear();
        const bool recv = k.op == IbWrOpcode::SEND || k.op == IbWrOpcode::SEND_WITH_IMM ||
                          k.op == IbWrOpcode::RDMA_WRITE_WITH_IMM;
        const bool sendLike = k.op == IbWrOpcode::SEND || k.op == IbWrOpcode::SEND_WITH_IMM;
        if (recv)
        {
            IbRecvWr r;
            r.wrId = wrId + 1000;
            r.sge = sendLike ? Sge(dst, off, k.len + 16) : Sge(dst, 0, 0);
            ASSERT_TRUE(c.qp[1]->PostRecv(r));
        }
        IbSendWr wr;
        const bool atomic =
            k.op == IbWrOpcode::ATOMIC_CMP_AND_SWP || k.op == IbWrOpcode::ATOMIC_FETCH_AND_ADD;
        const uint64_t target = (off + 7) / 8 * 8;
        const uint64_t before = atomic ? dst->ReadU64(dst->GetAddr() + target) : 0;
        if (k.op == IbWrOpcode::RDMA_READ)
        {
            wr = Wr(wrId, k.op, Sge(src, off, k.len), dst, off);
        }
        else if (atomic)
        {
            wr = Wr(wrId, k.op, Sge(src, target, 8), dst, target);
            wr.compareAdd = k.op == IbWrOpcode::ATOMIC_CMP_AND_SWP ? before : 12345;
            wr.swap = 0x1122334455667788ULL;
        }
        else
        {
            wr = Wr(wrId, k.op, Sge(src, off, k.len), dst, off);
        }
        wr.immData = 0xC0FFEE00u + static_cast<uint32_t>(wrId);
        std::string err;
        ASSERT_TRUE(c.qp[0]->PostSend(wr, &err)) << err;
        Simulator::Run();
        EXPECT_EQ(tx, k.reqOps);
        EXPECT_EQ(rx, k.respOps);
        std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
        ASSERT_EQ(s.size(), 1u);
        EXPECT_EQ(s[0].wrId, wrId);
        EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS) << IbWcStatusName(s[0].status);
        std::vector<IbWorkCompletion> r = Drain(c.rcq[1]);
        EXPECT_EQ(r.size(), recv ? 1u : 0u);
        if (recv && !r.empty())
        {
            EXPECT_EQ(r[0].wrId, wrId + 1000);
            EXPECT_EQ(r[0].status, IbWcStatus::SUCCESS);
            EXPECT_EQ(r[0].byteLen, k.len);
            const bool imm = k.op != IbWrOpcode::SEND;
            EXPECT_EQ(r[0].withImm, imm);
            if (imm)
            {
                EXPECT_EQ(r[0].immData, wr.immData);
            }
            EXPECT_EQ(r[0].opcode,
                      k.op == IbWrOpcode::RDMA_WRITE_WITH_IMM ? IbWcOpcode::RECV_RDMA_WITH_IMM
                                                              : IbWcOpcode::RECV);
            EXPECT_EQ(r[0].qpNum, c.qp[1]->GetQpNum());
        }
        if (k.op == IbWrOpcode::RDMA_READ)
        {
            EXPECT_TRUE(SameBytes(src, off, dst, off, k.len));
            EXPECT_EQ(s[0].opcode, IbWcOpcode::RDMA_READ);
        }
        else if (atomic)
        {
            EXPECT_EQ(src->ReadU64(src->GetAddr() + target), before); // old value returned
            const uint64_t after =
                k.op == IbWrOpcode::ATOMIC_CMP_AND_SWP ? wr.swap : before + 12345;
            EXPECT_EQ(dst->ReadU64(dst->GetAddr() + target), after);
        }
        else
        {
            EXPECT_TRUE(SameBytes(src, off, dst, off, k.len));
        }
        off += k.len + 64;
        ++wrId;
    }
    EXPECT_EQ(c.qp[0]->GetCounters().retransmittedPackets, 0u);
    EXPECT_EQ(c.qp[1]->GetCounters().naksSent, 0u);
}

INSTANTIATE_TEST_SUITE_P(IbRdma,
                         IbRdmaOpcodeTest,
                         ::testing::Values(Topo::BACK_TO_BACK, Topo::ONE_SWITCH));

TEST_F(IbRdmaTest, UdSendsWithAndWithoutImmediateAndDropsWrongQkey)
{
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(true));
    Fabric f = BackToBack(hh, "HDR", 2048);
    Ptr<IbCompletionQueue> cq0 = f.hca[0]->CreateCq();
    Ptr<IbCompletionQueue> cq1 = f.hca[1]->CreateCq();
    Ptr<IbQueuePair> u0 = f.hca[0]->CreateQp(IbQpType::UD, cq0, cq0);
    Ptr<IbQueuePair> u1 = f.hca[1]->CreateQp(IbQpType::UD, cq1, cq1);
    IbHcaHelper::ConnectUd(u0, 0x1111);
    IbHcaHelper::ConnectUd(u1, 0x2222);
    Ptr<IbMemoryRegion> src = f.hca[0]->RegisterMemory(8192, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> dst = f.hca[1]->RegisterMemory(8192, IB_ACCESS_LOCAL_WRITE);
    Fill(src, 7);
    std::vector<uint8_t> ops;
    RecordOpcodes(f.port[0], &ops);
    // MessageReceived names where the data went: after the receive buffer's GRH area.
    std::vector<std::pair<uint32_t, uint64_t>> landed;
    u1->TraceConnectWithoutContext("MessageReceived",
                                   MakeCallback(+[](std::vector<std::pair<uint32_t, uint64_t>>* v,
                                                    uint32_t,
                                                    IbWrOpcode,
                                                    uint32_t len,
                                                    uint64_t addr) {
                                       v->emplace_back(len, addr);
                                   }).Bind(&landed));
    for (uint32_t i = 0; i < 3; ++i)
    {
        IbRecvWr r;
        r.wrId = 50 + i;
        r.sge = Sge(dst, 2100 * i, 2048 + 40);
        ASSERT_TRUE(u1->PostRecv(r));
    }
    auto ud = [&](uint64_t id, IbWrOpcode op, uint32_t off, uint32_t len, uint32_t qkey) {
        IbSendWr wr = Wr(id, op, Sge(src, off, len));
        wr.udDlid = f.port[1]->GetLid();
        wr.udRemoteQpn = u1->GetQpNum();
        wr.udRemoteQkey = qkey;
        wr.immData = 0xABCD0000u + static_cast<uint32_t>(id);
        return wr;
    };
    std::string err;
    ASSERT_TRUE(u0->PostSend(ud(1, IbWrOpcode::SEND, 0, 2048, 0x2222), &err)) << err;
    ASSERT_TRUE(u0->PostSend(ud(2, IbWrOpcode::SEND_WITH_IMM, 3000, 100, 0x2222), &err)) << err;
    ASSERT_TRUE(u0->PostSend(ud(3, IbWrOpcode::SEND, 0, 10, 0x9999), &err)) << err; // wrong key
    ASSERT_TRUE(u0->PostSend(ud(4, IbWrOpcode::SEND, 0, 0, 0x2222), &err)) << err;  // 0 bytes
    EXPECT_FALSE(u0->PostSend(ud(5, IbWrOpcode::SEND, 0, 2049, 0x2222), &err));     // > MTU
    EXPECT_NE(err.find("exceeds the MTU"), std::string::npos) << err;
    EXPECT_FALSE(u0->PostSend(ud(6, IbWrOpcode::RDMA_WRITE, 0, 8, 0x2222), &err));
    Simulator::Run();
    EXPECT_EQ(ops,
              (std::vector<uint8_t>{IbOpcode::UD_SEND_ONLY,
                                    IbOpcode::UD_SEND_ONLY_WITH_IMMEDIATE,
                                    IbOpcode::UD_SEND_ONLY,
                                    IbOpcode::UD_SEND_ONLY}));
    EXPECT_EQ(Drain(cq0).size(), 4u); // send completions
    std::vector<IbWorkCompletion> r = Drain(cq1);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].wrId, 50u);
    EXPECT_EQ(r[0].byteLen, 2048u + 40);
    EXPECT_FALSE(r[0].withImm);
    EXPECT_EQ(r[0].srcQp, u0->GetQpNum());
    EXPECT_EQ(r[0].slid, f.port[0]->GetLid());
    EXPECT_TRUE(SameBytes(src, 0, dst, 40, 2048));
    EXPECT_EQ(r[1].byteLen, 100u + 40);
    EXPECT_TRUE(r[1].withImm);
    EXPECT_EQ(r[1].immData, 0xABCD0002u);
    EXPECT_TRUE(SameBytes(src, 3000, dst, 2100 + 40, 100));
    EXPECT_EQ(r[2].byteLen, 40u); // the 0-byte message
    EXPECT_EQ(landed,
              (std::vector<std::pair<uint32_t, uint64_t>>{{2048, dst->GetAddr() + 40},
                                                          {100, dst->GetAddr() + 2100 + 40},
                                                          {0, dst->GetAddr() + 4200 + 40}}));
    EXPECT_EQ(u1->GetCounters().qkeyDrops, 1u);
    // No receive posted any more: the next datagram is dropped and counted.
    ASSERT_TRUE(u0->PostSend(ud(7, IbWrOpcode::SEND, 0, 10, 0x2222), &err));
    Simulator::Run();
    EXPECT_EQ(u1->GetCounters().noRecvDrops, 1u);
    EXPECT_EQ(Drain(cq1).size(), 0u);
}

TEST_F(IbRdmaTest, AnHcaOnAPortWithAnRxDrainRateIsRefused)
{
    // The HCA takes packets off the port's buffers at once: the rate would be ignored.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    NodeContainer hosts;
    hosts.Create(2);
    IbHelper ib;
    ib.SetDeviceAttribute("RxDrainRate", DataRateValue(DataRate("10Gbps")));
    ib.Install(hosts.Get(0), hosts.Get(1));
    EXPECT_DEATH(IbHcaHelper().Install(hosts.Get(1)),
                 "IbHca on node [0-9]+: its port [0-9]+ has RxDrainRate=10000000000bps, but an "
                 "HCA takes every packet off the port's buffers at once");
}

TEST_F(IbRdmaTest, AUdQpBackFromResetChecksItsDestinationsAgain)
{
    // A UD QP checks a destination's first hop once per run of sends to it. A QP taken
    // back through RESET (to another port, or after the routes changed) checks again.
    IbHcaHelper hh;
    Fabric f = Switched(hh);
    Ptr<IbCompletionQueue> cq = f.hca[0]->CreateCq();
    Ptr<IbQueuePair> ud = f.hca[0]->CreateQp(IbQpType::UD, cq, cq);
    IbHcaHelper::ConnectUd(ud, 0x1111);
    Ptr<IbMemoryRegion> mr = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    IbSendWr wr = Wr(1, IbWrOpcode::SEND, Sge(mr, 0, 64));
    wr.udRemoteQpn = 7;
    wr.udDlid = f.port[1]->GetLid();
    std::string err;
    ASSERT_TRUE(ud->PostSend(wr, &err)) << err;
    Ptr<IbChannel> cable = DynamicCast<IbChannel>(f.port[0]->GetChannel());
    Ptr<IbSwitch> sw = cable->GetPeer(f.port[0])->GetNode()->GetObject<IbSwitch>();
    ASSERT_NE(sw, nullptr);
    std::vector<uint8_t> lft = sw->GetLft();
    lft.at(wr.udDlid) = IbRoutingTables::NO_ROUTE;
    sw->SetLft(lft);
    IbQpAttr reset;
    reset.state = IbQpState::RESET;
    ASSERT_TRUE(ud->Modify(reset, &err)) << err;
    IbHcaHelper::ConnectUd(ud, 0x1111);
    wr.wrId = 2;
    EXPECT_FALSE(ud->PostSend(wr, &err));
    EXPECT_NE(err.find("has no route in the forwarding table"), std::string::npos) << err;
}

TEST_F(IbRdmaTest, DestinationsTheFirstSwitchDoesNotRouteAreRefusedWithTheLid)
{
    // Through a switch: an RC QP cannot be connected to, and a UD QP cannot send to, a LID
    // that the switch has no route for; the message names the LID and the switch's node.
    IbHcaHelper hh;
    Fabric f = Switched(hh);
    const uint16_t nobody = 0x0123;
    const std::string unrouted = std::to_string(nobody) +
                                 " (0x123) has no route in the forwarding table of the switch on "
                                 "node ";
    Ptr<IbCompletionQueue> cq = f.hca[0]->CreateCq();
    Ptr<IbQueuePair> rc = f.hca[0]->CreateQp(IbQpType::RC, cq, cq);
    std::string err;
    IbQpAttr a;
    a.state = IbQpState::INIT;
    a.portNum = 1;
    ASSERT_TRUE(rc->Modify(a, &err)) << err;
    a.state = IbQpState::RTR;
    a.dlid = nobody;
    a.destQpNum = 5;
    a.pathMtu = 4096;
    EXPECT_FALSE(rc->Modify(a, &err));
    EXPECT_NE(err.find("RTR: dlid " + unrouted), std::string::npos) << err;
    EXPECT_NE(err.find("use a LID the subnet manager assigned"), std::string::npos) << err;
    a.dlid = f.port[1]->GetLid();
    EXPECT_TRUE(rc->Modify(a, &err)) << err;

    Ptr<IbQueuePair> ud = f.hca[0]->CreateQp(IbQpType::UD, cq, cq);
    IbHcaHelper::ConnectUd(ud, 0x1111);
    Ptr<IbMemoryRegion> mr = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    IbSendWr wr = Wr(1, IbWrOpcode::SEND, Sge(mr, 0, 64));
    wr.udRemoteQpn = 7;
    wr.udDlid = nobody;
    EXPECT_FALSE(ud->PostSend(wr, &err));
    EXPECT_NE(err.find("PostSend: udDlid " + unrouted), std::string::npos) << err;
    wr.udDlid = 0;
    EXPECT_FALSE(ud->PostSend(wr, &err));
    EXPECT_NE(err.find("udDlid 0 (0x0) is no destination"), std::string::npos) << err;
    wr.udDlid = f.port[1]->GetLid();
    wr.udSl = 16;
    EXPECT_FALSE(ud->PostSend(wr, &err));
    EXPECT_NE(err.find("the SL must be 0..15"), std::string::npos) << err;
    wr.udSl = 0;
    wr.udRemoteQpn = 0x1000000;
    EXPECT_FALSE(ud->PostSend(wr, &err));
    EXPECT_NE(err.find("the QP number 24 bits"), std::string::npos) << err;
    wr.udDlid = 0xC001;
    wr.udRemoteQpn = 0xFFFFFF;
    EXPECT_FALSE(ud->PostSend(wr, &err));
    EXPECT_NE(err.find("udRemoteQpn 0xFFFFFF (multicast) to udDlid 49153 (0xc001): attaching QPs "
                       "to multicast groups is not modelled"),
              std::string::npos)
        << err;
    wr.udDlid = f.port[1]->GetLid();
    wr.udRemoteQpn = 7;
    EXPECT_TRUE(ud->PostSend(wr, &err)) << err;
    Simulator::Run();
    EXPECT_EQ(Drain(cq).size(), 1u); // only the send that was accepted completes
}

TEST_F(IbRdmaTest, FabricStatsCountTheFlowsOfHostsWithAnHca)
{
    // A 64 KiB RDMA WRITE through one switch: IbFabricStats sees the data flow (16 packets
    // of 4096 payload bytes) and the ACKs coming back, as it sees raw flows without an HCA.
    IbFabric fab = IbFabricHelper().Build(IbTopologyBuilder::Chain(1));
    Fabric f = OnFabric(IbHcaHelper(), fab);
    Rc c = ConnectPair(f);
    Ptr<IbQueuePair> q0 = c.qp[0];
    const uint32_t bytes = 65536;
    Ptr<IbMemoryRegion> src = f.hca[0]->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> dst =
        f.hca[1]->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    IbFabricStats stats;
    stats.Install(fab, Seconds(0));
    std::string err;
    ASSERT_TRUE(q0->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(src, 0, bytes), dst), &err)) << err;
    Simulator::Run();
    std::vector<IbWorkCompletion> wc = Drain(c.scq[0]);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, IbWcStatus::SUCCESS);
    const uint16_t lid0 = fab.HostPort(0)->GetLid();
    const uint16_t lid1 = fab.HostPort(1)->GetLid();
    uint64_t dataPackets = 0;
    uint64_t dataPayload = 0;
    uint64_t ackPackets = 0;
    uint64_t ackPayload = 0;
    for (const auto& flow : stats.GetFlows())
    {
        if (flow.slid == lid0 && flow.dlid == lid1)
        {
            dataPackets = flow.packets;
            dataPayload = flow.payload;
        }
        if (flow.slid == lid1 && flow.dlid == lid0)
        {
            ackPackets = flow.packets;
            ackPayload = flow.payload;
        }
    }
    EXPECT_EQ(stats.GetFlows().size(), 2u);
    EXPECT_EQ(dataPackets, bytes / 4096);
    EXPECT_EQ(dataPayload, bytes);
    EXPECT_GE(ackPackets, 1u);
    EXPECT_EQ(ackPayload, 0u);
}

TEST_F(IbRdmaTest, ReadsKeepTheirResponsePsnsWithinHalfThePsnSpace)
{
    // PSNs compare modulo 2^24. Two 1.5 GiB READs at path MTU 256 take 6,291,456 response
    // PSNs each: the second may go only once the first's responses have made room, or
    // its PSNs would read as old ones. A single READ of 2^31 bytes there is refused.
    Fabric f = BackToBack(IbHcaHelper(), "EDR", 256);
    Rc c = ConnectPair(f);
    ASSERT_EQ(c.qp[0]->GetAttr().pathMtu, 256u);
    const uint64_t big = 3ull << 29; // 1.5 GiB, no data in this mode
    Ptr<IbMemoryRegion> local = f.hca[0]->RegisterMemory(big, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> remote =
        f.hca[1]->RegisterMemory(big, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
    std::string err;
    for (uint64_t id = 1; id <= 2; ++id)
    {
        ASSERT_TRUE(c.qp[0]->PostSend(
            Wr(id, IbWrOpcode::RDMA_READ, Sge(local, 0, static_cast<uint32_t>(big)), remote),
            &err))
            << err;
    }
    Simulator::Stop(MicroSeconds(20));
    Simulator::Run();
    // Within 20 us the responder has seen the first READ request only.
    EXPECT_EQ(c.qp[1]->GetCounters().packetsReceived, 1u);
    EXPECT_EQ(c.qp[0]->GetCounters().duplicateResponses, 0u);

    Ptr<IbMemoryRegion> huge = f.hca[0]->RegisterMemory(1ull << 31, IB_ACCESS_LOCAL_WRITE);
    EXPECT_FALSE(
        c.qp[0]->PostSend(Wr(3, IbWrOpcode::RDMA_READ, Sge(huge, 0, 0x80000000u), remote), &err));
    EXPECT_NE(err.find("an RDMA READ of 2147483648 bytes at path MTU 256 takes 8388608 "
                       "response PSNs, half the 24-bit PSN space or more"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("split it into READs under 2147483392 bytes or use a larger pathMtu"),
              std::string::npos)
        << err;
}

namespace
{

/**
 * A READ just under the PSN limit at path MTU 256 (2^23 - 1 response PSNs) and a 2-packet
 * WRITE behind it, back to back at EDR, run for 20 us.
 * @param loss receive error model of the requester's port, or null
 * @return the connected pair, for its counters
 */
Rc
LargeReadThenWrite(Ptr<ErrorModel> loss)
{
    Fabric f = BackToBack(IbHcaHelper(), "EDR", 256);
    Rc c = ConnectPair(f);
    if (loss)
    {
        f.port[0]->SetReceiveErrorModel(loss);
    }
    const uint64_t read = (1ull << 31) - 256;
    Ptr<IbMemoryRegion> local = f.hca[0]->RegisterMemory(read, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> remote = f.hca[1]->RegisterMemory(
        read,
        IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE);
    std::string err;
    EXPECT_TRUE(c.qp[0]->PostSend(
        Wr(1, IbWrOpcode::RDMA_READ, Sge(local, 0, static_cast<uint32_t>(read)), remote),
        &err))
        << err;
    EXPECT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_WRITE, Sge(local, 0, 512), remote), &err))
        << err;
    Simulator::Stop(MicroSeconds(20));
    Simulator::Run();
    return c;
}

} // namespace

TEST_F(IbRdmaTest, RequestsBehindALargeReadWaitForItsResponsesToMakeRoom)
{
    // The WRITE's PSNs would put the READ's first responses half the 24-bit space behind
    // the newest PSN sent, where they read as old ones (duplicates, dropped on every
    // retry): it waits until responses have made room.
    Rc c = LargeReadThenWrite(nullptr);
    EXPECT_EQ(c.qp[1]->GetCounters().packetsReceived, 3u);   // the READ request, the WRITE
    EXPECT_GT(c.qp[0]->GetCounters().packetsReceived, 100u); // responses are taken
    EXPECT_EQ(c.qp[0]->GetCounters().duplicateResponses, 0u);
    EXPECT_EQ(c.qp[0]->GetState(), IbQpState::RTS);
}

TEST_F(IbRdmaTest, AConnectedQpDropsPacketsFromAnyoneButItsPeer)
{
    // Host 2 sends raw RC SEND Only packets, PSN 0 up, to host 1's connected QP; they
    // are dropped and counted. Host 0's SEND, with the same PSN 0, is then delivered.
    IbFabric fab = IbFabricHelper().Build(IbTopologyBuilder::FatTree2Level(4, 4));
    Fabric f = OnFabric(IbHcaHelper(), fab);
    Rc c = ConnectPair(f);
    Ptr<IbQueuePair> q0 = c.qp[0];
    Ptr<IbQueuePair> q1 = c.qp[1];
    Ptr<IbMemoryRegion> src = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> dst = f.hca[1]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    for (uint64_t i = 0; i < 2; ++i)
    {
        IbRecvWr r;
        r.wrId = 10 + i;
        r.sge = Sge(dst, 0, 4096);
        ASSERT_TRUE(q1->PostRecv(r));
    }
    IbRawTrafficHelper raw(fab.HostPort(1)->GetLid());
    raw.SetAttribute("DestQp", UintegerValue(q1->GetQpNum()));
    raw.SetAttribute("PayloadSize", UintegerValue(256));
    raw.SetAttribute("MaxPackets", UintegerValue(5));
    raw.Install(fab.HostPort(2)).Start(Seconds(0));
    Simulator::Schedule(MicroSeconds(2), [&]() {
        std::string err;
        EXPECT_TRUE(q0->PostSend(Wr(1, IbWrOpcode::SEND, Sge(src, 0, 1000)), &err)) << err;
    });
    Simulator::Run();
    EXPECT_EQ(q1->GetCounters().sourceDrops, 5u);
    EXPECT_EQ(q1->GetCounters().duplicatesReceived, 0u);
    std::vector<IbWorkCompletion> sent = Drain(c.scq[0]);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].status, IbWcStatus::SUCCESS);
    std::vector<IbWorkCompletion> got = Drain(c.rcq[1]);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].wrId, 10u);
    EXPECT_EQ(got[0].byteLen, 1000u);
    EXPECT_EQ(got[0].slid, fab.HostPort(0)->GetLid());
}

// ---------------------------------------------------------------- large transfers

TEST_F(IbRdmaTest, DeregisteredRegionIndicesAreUsedAgainWithKeysThatDiffer)
{
    // A program that registers a buffer per operation used a new index every time and
    // aborted after 2^24 registrations. The index is used again, with another key tag:
    // the old key names nothing.
    Fabric f = BackToBack(IbHcaHelper());
    Ptr<IbMemoryRegion> kept = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    std::set<uint32_t> indices;
    std::vector<Ptr<IbMemoryRegion>> others;
    uint32_t previous = 0;
    for (uint32_t i = 0; i < 1000; ++i)
    {
        Ptr<IbMemoryRegion> mr = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
        indices.insert(mr->GetLkey() >> 8);
        if (i > 0)
        {
            // the index's own tag counts on, whatever else registers in between (here a
            // region kept for good each time): a stale key names nothing until the index
            // has been reused 256 times
            EXPECT_EQ(mr->GetLkey() & 0xFF, (previous + 1) & 0xFF);
        }
        others.push_back(f.hca[0]->RegisterMemory(64, IB_ACCESS_LOCAL_WRITE));
        EXPECT_EQ(f.hca[0]->GetMemoryRegion(mr->GetLkey()), mr);
        previous = mr->GetLkey();
        f.hca[0]->DeregisterMemory(mr);
        EXPECT_FALSE(f.hca[0]->GetMemoryRegion(previous));
    }
    EXPECT_EQ(indices.size(), 1u);
    EXPECT_NE(*indices.begin(), kept->GetLkey() >> 8);
    EXPECT_EQ(f.hca[0]->GetMemoryRegion(kept->GetLkey()), kept);
}

TEST_F(IbRdmaTest, OneMegabyteWriteAndReadMoveExactlyTheRightBytes)
{
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(true));
    Fabric f = Switched(hh, 4096);
    Rc c = ConnectPair(f);
    const uint32_t mb = 1 << 20;
    const uint32_t acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
    // Regions with a margin on both sides that must stay untouched.
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(mb + 8192, acc);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(mb + 8192, acc);
    Ptr<IbMemoryRegion> rsrc = f.hca[1]->RegisterMemory(mb, acc);
    Ptr<IbMemoryRegion> rdst = f.hca[0]->RegisterMemory(mb + 8192, acc);
    Fill(a, 11);
    Fill(rsrc, 12);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(a, 4096, mb), b, 4096)));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_READ, Sge(rdst, 4096, mb), rsrc, 0)));
    Simulator::Run();
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS);
    EXPECT_EQ(s[1].status, IbWcStatus::SUCCESS);
    EXPECT_EQ(s[1].opcode, IbWcOpcode::RDMA_READ);
    EXPECT_TRUE(SameBytes(a, 4096, b, 4096, mb));
    EXPECT_TRUE(SameBytes(rsrc, 0, rdst, 4096, mb));
    for (uint32_t i = 0; i < 4096; ++i)
    {
        ASSERT_EQ(b->GetData()[i], 0) << "byte before the WRITE target changed";
        ASSERT_EQ(b->GetData()[4096 + mb + i], 0) << "byte after the WRITE target changed";
        ASSERT_EQ(rdst->GetData()[i], 0) << "byte before the READ target changed";
        ASSERT_EQ(rdst->GetData()[4096 + mb + i], 0) << "byte after the READ target changed";
    }
}

// ---------------------------------------------------------------- loss recovery

/// Variations of RunMixed.
struct MixedConfig
{
    uint32_t mtu{1024};      ///< port MTU
    bool switched{false};    ///< through a switch
    uint32_t window{64};     ///< MaxOutstandingPackets
    uint32_t coalescing{16}; ///< AckCoalescing
    bool zeroDelays{false};  ///< all HCA delays 0
    uint8_t maxRdAtomic{16}; ///< READs/atomics in flight
};

/// Outcome of RunMixed.
struct MixedOutcome
{
    uint64_t retransmits{0}; ///< Retransmit trace firings
    uint64_t wrs{0};         ///< send WRs posted
    uint64_t problems{0};    ///< mismatches found (each also reported)
};

/**
 * Several RC QPs run a random mix of SEND, WRITE, WRITE with immediate, READ and
 * FETCH_ADD over a link that drops @p loss of the packets arriving at either port; every
 * operation must complete once, successfully, with byte-identical memory.
 */
MixedOutcome
RunMixed(double loss,
         uint32_t nQps,
         uint32_t wrsPerQp,
         uint32_t seed,
         const MixedConfig& cfg = MixedConfig())
{
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(true));
    hh.SetHcaAttribute("MaxOutstandingPackets", UintegerValue(cfg.window));
    hh.SetHcaAttribute("AckCoalescing", UintegerValue(cfg.coalescing));
    if (cfg.zeroDelays)
    {
        for (const char* a : {"DoorbellLatency", "PcieWriteLatency", "AckDelay", "ResponseDelay"})
        {
            hh.SetHcaAttribute(a, TimeValue(Time(0)));
        }
    }
    Fabric f = cfg.switched ? Switched(hh, cfg.mtu) : BackToBack(hh, "EDR", cfg.mtu);
    if (loss > 0)
    {
        f.port[0]->SetReceiveErrorModel(Loss(loss, 10 + seed));
        f.port[1]->SetReceiveErrorModel(Loss(loss, 20 + seed));
    }
    Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();
    rng->SetStream(30 + seed);
    MixedOutcome out;
    const uint32_t all = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
                         IB_ACCESS_REMOTE_ATOMIC;

    struct Op
    {
        IbWrOpcode op;
        uint64_t off;
        uint32_t len;
    };

    struct QpRun
    {
        Rc c;
        Ptr<IbMemoryRegion> src, rdst, res, wdst, sdst, rsrc, ctr;
        std::vector<Op> ops;
        std::vector<uint64_t> recvIds;
    };

    std::vector<QpRun> runs(nQps);
    const uint64_t region = static_cast<uint64_t>(wrsPerQp) * (10 * cfg.mtu + 8) + 8 * cfg.mtu;
    uint64_t* retransmits = &out.retransmits;
    for (uint32_t q = 0; q < nQps; ++q)
    {
        QpRun& r = runs[q];
        IbQpAttr base;
        base.timeout = 6; // 262 us
        base.retryCnt = 7;
        base.sqPsn = 0xFFFFC0 + q; // PSNs wrap (2^24) during the run
        base.rqPsn = 0x7FFF80;
        base.maxRdAtomic = cfg.maxRdAtomic;
        r.c = ConnectPair(f, base);
        r.c.qp[0]->TraceConnectWithoutContext(
            "Retransmit",
            MakeCallback(+[](uint64_t* n, uint32_t, const std::string&) {
                ++*n;
            }).Bind(retransmits));
        r.src = f.hca[0]->RegisterMemory(region, all);
        r.rdst = f.hca[0]->RegisterMemory(region, all);
        r.res = f.hca[0]->RegisterMemory(8 * wrsPerQp, all);
        r.wdst = f.hca[1]->RegisterMemory(region, all);
        r.sdst = f.hca[1]->RegisterMemory(region, all);
        r.rsrc = f.hca[1]->RegisterMemory(region, all);
        r.ctr = f.hca[1]->RegisterMemory(8, all);
        Fill(r.src, 100 + q);
        Fill(r.rsrc, 200 + q);
        uint64_t off = 0;
        for (uint32_t j = 0; j < wrsPerQp; ++j)
        {
            const uint32_t kind = rng->GetInteger(0, 4);
            uint32_t len = rng->GetInteger(0, 10) == 0 ? cfg.mtu * rng->GetInteger(0, 8)
                                                       : rng->GetInteger(0, 10 * cfg.mtu);
            Op op{IbWrOpcode::RDMA_WRITE, off, len};
            IbSendWr wr;
            switch (kind)
            {
            case 0:
                wr = Wr(j, IbWrOpcode::RDMA_WRITE, Sge(r.src, off, len), r.wdst, off);
                break;
            case 1: {
                op.op = IbWrOpcode::RDMA_WRITE_WITH_IMM;
                wr = Wr(j, op.op, Sge(r.src, off, len), r.wdst, off);
                wr.immData = j;
                IbRecvWr rw;
                rw.wrId = j;
                r.recvIds.push_back(j);
                r.c.qp[1]->PostRecv(rw);
                break;
            }
            case 2: {
                op.op = IbWrOpcode::SEND;
                wr = Wr(j, op.op, Sge(r.src, off, len));
                IbRecvWr rw;
                rw.wrId = j;
                rw.sge = Sge(r.sdst, off, len);
                r.recvIds.push_back(j);
                r.c.qp[1]->PostRecv(rw);
                break;
            }
            case 3:
                op.op = IbWrOpcode::RDMA_READ;
                wr = Wr(j, op.op, Sge(r.rdst, off, len), r.rsrc, off);
                break;
            default:
                op.op = IbWrOpcode::ATOMIC_FETCH_AND_ADD;
                op.len = 8;
                wr = Wr(j, op.op, Sge(r.res, 8 * j, 8), r.ctr, 0);
                wr.compareAdd = 1;
                break;
            }
            std::string err;
            if (!r.c.qp[0]->PostSend(wr, &err))
            {
                ADD_FAILURE() << err;
                ++out.problems;
            }
            r.ops.push_back(op);
            off += len + 8;
            ++out.wrs;
        }
    }
    Simulator::Run();
    for (uint32_t q = 0; q < nQps; ++q)
    {
        QpRun& r = runs[q];
        SCOPED_TRACE(testing::Message() << "QP " << q);
        EXPECT_EQ(r.c.qp[0]->GetState(), IbQpState::RTS);
        std::vector<IbWorkCompletion> s = Drain(r.c.scq[0]);
        std::vector<uint32_t> seen(wrsPerQp, 0);
        for (const auto& wc : s)
        {
            EXPECT_EQ(wc.status, IbWcStatus::SUCCESS)
                << "WR " << wc.wrId << ": " << IbWcStatusName(wc.status);
            if (wc.wrId < wrsPerQp)
            {
                ++seen[wc.wrId];
            }
        }
        // Completions come in posting order, each exactly once.
        for (size_t i = 0; i < s.size(); ++i)
        {
            if (s[i].wrId != i)
            {
                ADD_FAILURE() << "send completion " << i << " is WR " << s[i].wrId;
                ++out.problems;
                break;
            }
        }
        if (s.size() != wrsPerQp)
        {
            ADD_FAILURE() << s.size() << " send completions for " << wrsPerQp << " WRs";
            ++out.problems;
        }
        std::vector<IbWorkCompletion> rc = Drain(r.c.rcq[1]);
        if (rc.size() != r.recvIds.size())
        {
            ADD_FAILURE() << rc.size() << " receive completions for " << r.recvIds.size();
            ++out.problems;
        }
        for (size_t i = 0; i < std::min(rc.size(), r.recvIds.size()); ++i)
        {
            const Op& op = r.ops[r.recvIds[i]];
            if (rc[i].wrId != r.recvIds[i] || rc[i].status != IbWcStatus::SUCCESS ||
                rc[i].byteLen != op.len)
            {
                ADD_FAILURE() << "receive completion " << i << " wrId " << rc[i].wrId << " status "
                              << IbWcStatusName(rc[i].status) << " len " << rc[i].byteLen;
                ++out.problems;
            }
            if (op.op == IbWrOpcode::RDMA_WRITE_WITH_IMM &&
                (!rc[i].withImm || rc[i].immData != r.recvIds[i]))
            {
                ADD_FAILURE() << "immediate data of receive " << i;
                ++out.problems;
            }
        }
        // Memory: build the expected images and compare whole regions.
        std::vector<uint8_t> wExp(r.wdst->GetLength(), 0);
        std::vector<uint8_t> sExp(r.sdst->GetLength(), 0);
        std::vector<uint8_t> rExp(r.rdst->GetLength(), 0);
        uint64_t adds = 0;
        std::set<uint64_t> olds;
        for (uint32_t j = 0; j < wrsPerQp; ++j)
        {
            const Op& op = r.ops[j];
            switch (op.op)
            {
            case IbWrOpcode::RDMA_WRITE:
            case IbWrOpcode::RDMA_WRITE_WITH_IMM:
                std::copy_n(r.src->GetData() + op.off, op.len, wExp.begin() + op.off);
                break;
            case IbWrOpcode::SEND:
                std::copy_n(r.src->GetData() + op.off, op.len, sExp.begin() + op.off);
                break;
            case IbWrOpcode::RDMA_READ:
                std::copy_n(r.rsrc->GetData() + op.off, op.len, rExp.begin() + op.off);
                break;
            default:
                ++adds;
                olds.insert(r.res->ReadU64(r.res->GetAddr() + 8 * j));
                break;
            }
        }
        auto same = [&](Ptr<IbMemoryRegion> mr, const std::vector<uint8_t>& exp, const char* what) {
            if (!std::equal(exp.begin(), exp.end(), mr->GetData()))
            {
                ADD_FAILURE() << what << " memory differs";
                ++out.problems;
            }
        };
        same(r.wdst, wExp, "WRITE destination");
        same(r.sdst, sExp, "SEND destination");
        same(r.rdst, rExp, "READ destination");
        if (r.ctr->ReadU64(r.ctr->GetAddr()) != adds || olds.size() != adds ||
            (adds > 0 && *olds.rbegin() != adds - 1))
        {
            ADD_FAILURE() << "fetch-and-add: counter " << r.ctr->ReadU64(r.ctr->GetAddr())
                          << " after " << adds << " adds, " << olds.size()
                          << " distinct old values";
            ++out.problems;
        }
    }
    return out;
}

TEST_F(IbRdmaTest, MixedOperationsSurviveOnePercentLoss)
{
    const MixedOutcome o = RunMixed(0.01, 4, 60, 1);
    EXPECT_EQ(o.problems, 0u);
    EXPECT_GT(o.retransmits, 0u) << "1 % loss should have caused retransmissions";
}

TEST_F(IbRdmaTest, StressMixedOperationsSurviveTenPercentLoss)
{
    const MixedOutcome o = RunMixed(0.10, 8, 100, 2);
    EXPECT_EQ(o.problems, 0u);
    EXPECT_GT(o.retransmits, 10u);
}

TEST_F(IbRdmaTest, MixedOperationsSurviveLossAcrossConfigurations)
{
    // Path MTU, fabric, window, ACK coalescing, zero HCA delays (no time between a
    // request and its response: re-entrancy) and one READ/atomic in flight, combined;
    // 2 to 12 % loss.
    const uint32_t mtus[] = {256, 512, 1024, 2048, 4096};
    const uint32_t windows[] = {4, 16, 64, 256};
    const uint32_t coalescing[] = {1, 3, 16};
    for (uint32_t k = 0; k < 30; ++k)
    {
        MixedConfig cfg;
        cfg.mtu = mtus[k % 5];
        cfg.switched = k % 2;
        cfg.window = windows[(k / 2) % 4];
        cfg.coalescing = coalescing[(k / 3) % 3];
        cfg.zeroDelays = (k / 5) % 2;
        cfg.maxRdAtomic = (k / 7) % 2 ? 1 : 16;
        const double loss = k % 3 == 0 ? 0.12 : (k % 3 == 1 ? 0.08 : 0.02);
        SCOPED_TRACE(testing::Message()
                     << "configuration " << k << ": loss " << loss << ", MTU " << cfg.mtu
                     << (cfg.switched ? ", switch" : ", cable") << ", window " << cfg.window
                     << ", coalescing " << cfg.coalescing << (cfg.zeroDelays ? ", no delays" : "")
                     << ", maxRdAtomic " << unsigned(cfg.maxRdAtomic));
        const MixedOutcome o = RunMixed(loss, 4, 40, 200 + k, cfg);
        EXPECT_EQ(o.problems, 0u);
        Simulator::Destroy();
        IbHelper::ResetLidAllocation();
    }
}

TEST_F(IbRdmaTest, MixedOperationsWithoutLossNeedNoRetransmission)
{
    const MixedOutcome o = RunMixed(0.0, 2, 40, 3);
    EXPECT_EQ(o.problems, 0u);
    EXPECT_EQ(o.retransmits, 0u);
}

namespace
{

/**
 * 300 FetchAdds on one QP under 10 % loss both ways.
 * @param depth maxRdAtomic asked of ConnectRc (maxDestRdAtomic 16)
 */
void
FetchAddsUnderLoss(uint8_t depth)
{
    // Virtual mode: atomics keep their words in the regions' small maps.
    IbHcaHelper hh;
    Fabric f = BackToBack(hh, "EDR", 4096);
    f.port[0]->SetReceiveErrorModel(Loss(0.10, 41));
    f.port[1]->SetReceiveErrorModel(Loss(0.10, 42));
    IbQpAttr base;
    base.timeout = 5;
    base.maxRdAtomic = depth;
    base.maxDestRdAtomic = 16;
    Rc c = ConnectPair(f, base);
    ASSERT_EQ(c.qp[0]->GetAttr().maxRdAtomic, std::min<uint8_t>(depth, 16));
    ASSERT_EQ(c.qp[1]->GetAttr().maxRdAtomic, std::min<uint8_t>(depth, 16));
    uint64_t retransmits = 0;
    c.qp[0]->TraceConnectWithoutContext(
        "Retransmit",
        MakeCallback(+[](uint64_t* n, uint32_t, const std::string&) { ++*n; }).Bind(&retransmits));
    const uint32_t n = 300;
    Ptr<IbMemoryRegion> res = f.hca[0]->RegisterMemory(8 * n, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> ctr =
        f.hca[1]->RegisterMemory(64, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC);
    for (uint32_t i = 0; i < n; ++i)
    {
        IbSendWr wr = Wr(i, IbWrOpcode::ATOMIC_FETCH_AND_ADD, Sge(res, 8 * i, 8), ctr, 16);
        wr.compareAdd = 1;
        ASSERT_TRUE(c.qp[0]->PostSend(wr));
    }
    Simulator::Run();
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), n);
    std::vector<uint64_t> olds;
    for (uint32_t i = 0; i < n; ++i)
    {
        EXPECT_EQ(s[i].wrId, i);
        EXPECT_EQ(s[i].status, IbWcStatus::SUCCESS);
        EXPECT_EQ(s[i].opcode, IbWcOpcode::FETCH_ADD);
        olds.push_back(res->ReadU64(res->GetAddr() + 8 * i));
    }
    EXPECT_EQ(ctr->ReadU64(ctr->GetAddr() + 16), n);
    // One QP, applied in order: WR i saw exactly i.
    for (uint32_t i = 0; i < n; ++i)
    {
        ASSERT_EQ(olds[i], i);
    }
    EXPECT_GT(retransmits, 0u);
    EXPECT_GT(c.qp[1]->GetCounters().duplicatesReceived, 0u)
        << "some atomics should have been answered from the history";
}

} // namespace

/*
 * With 4 atomics in flight, and with 64 asked for against the responder's 16
 * (maxDestRdAtomic): ConnectRc caps the initiator depth at 16, so that a lost response is
 * still in the responder's 16-entry history when the requester comes back for it (before,
 * 64 in flight pushed it out and the QP ended in RETRY_EXC_ERR).
 */
TEST_F(IbRdmaTest, FetchAddsApplyExactlyOnceUnderTenPercentLoss)
{
    for (const uint8_t depth : {4, 64})
    {
        SCOPED_TRACE("maxRdAtomic " + std::to_string(depth));
        IbHelper::ResetLidAllocation();
        FetchAddsUnderLoss(depth);
        Simulator::Destroy();
    }
}

TEST_F(IbRdmaTest, CompareAndSwapSwapsOnlyOnMatch)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Rc c = ConnectPair(f);
    Ptr<IbMemoryRegion> res = f.hca[0]->RegisterMemory(64, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> word =
        f.hca[1]->RegisterMemory(64, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC);
    word->WriteU64(word->GetAddr(), 7);
    IbSendWr hit = Wr(1, IbWrOpcode::ATOMIC_CMP_AND_SWP, Sge(res, 0, 8), word, 0);
    hit.compareAdd = 7;
    hit.swap = 99;
    IbSendWr miss = Wr(2, IbWrOpcode::ATOMIC_CMP_AND_SWP, Sge(res, 8, 8), word, 0);
    miss.compareAdd = 7;
    miss.swap = 1234;
    ASSERT_TRUE(c.qp[0]->PostSend(hit));
    ASSERT_TRUE(c.qp[0]->PostSend(miss));
    Simulator::Run();
    EXPECT_EQ(res->ReadU64(res->GetAddr()), 7u);
    EXPECT_EQ(res->ReadU64(res->GetAddr() + 8), 99u);
    EXPECT_EQ(word->ReadU64(word->GetAddr()), 99u);
    EXPECT_EQ(Drain(c.scq[0]).size(), 2u);
}

TEST_F(IbRdmaTest, RetriesExhaustedGiveRetryExcErr)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    f.port[1]->SetReceiveErrorModel(Loss(1.0, 5)); // everything towards host 1 is lost
    IbQpAttr base;
    base.timeout = 4; // 65.5 us
    base.retryCnt = 2;
    Rc c = ConnectPair(f, base);
    std::vector<std::string> reasons;
    c.qp[0]->TraceConnectWithoutContext(
        "Retransmit",
        MakeCallback(+[](std::vector<std::string>* v, uint32_t, const std::string& r) {
            v->push_back(r);
        }).Bind(&reasons));
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b =
        f.hca[1]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 100), b, 0)));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 100), b, 0)));
    Simulator::Run();
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].status, IbWcStatus::RETRY_EXC_ERR) << IbWcStatusName(s[0].status);
    EXPECT_EQ(s[1].status, IbWcStatus::WR_FLUSH_ERR) << IbWcStatusName(s[1].status);
    EXPECT_EQ(c.qp[0]->GetState(), IbQpState::ERR);
    EXPECT_EQ(reasons, (std::vector<std::string>{"timeout", "timeout"}));
    EXPECT_EQ(c.qp[0]->GetCounters().timeouts, 3u);
    // Three transmissions of both packets, 65.536 us apart.
    const Time expectedEnd = NanoSeconds(300) + 3 * IbAckTimeoutValue(4);
    EXPECT_GE(s[0].timestamp, expectedEnd);
    EXPECT_LT(s[0].timestamp, expectedEnd + MicroSeconds(2));
    // What a program that stops on it prints: the QP, its peer and what to look at.
    const std::string d = c.qp[0]->DescribeCompletion(s[0]);
    EXPECT_EQ(d.find("QP " + std::to_string(c.qp[0]->GetQpNum()) + " (RC, to LID " +
                     std::to_string(f.port[1]->GetLid()) + " (0x" + ToHex(f.port[1]->GetLid()) +
                     ") QP " + std::to_string(c.qp[1]->GetQpNum()) +
                     "): WR 1 completed with RETRY_EXC_ERR: no acknowledgement in 3 tries of "
                     "the local ACK timeout (4.096 us * 2^4)"),
              0u)
        << d;
    EXPECT_NE(d.find("GetUnknownDlidDrops"), std::string::npos) << d;
}

// ---------------------------------------------------------------- errors and RNR

TEST_F(IbRdmaTest, BadRkeyGivesRemoteAccessErrorAndFlushesLaterWork)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Rc c = ConnectPair(f);
    std::vector<uint8_t> naks;
    c.qp[0]->TraceConnectWithoutContext(
        "NakReceived",
        MakeCallback(+[](std::vector<uint8_t>* v, uint32_t, uint8_t s) {
            v->push_back(s);
        }).Bind(&naks));
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b =
        f.hca[1]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    IbSendWr good = Wr(1, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 100), b, 0);
    IbSendWr bad = Wr(2, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 100), b, 0);
    bad.rkey ^= 0x5500;
    IbSendWr later = Wr(3, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 100), b, 0);
    ASSERT_TRUE(c.qp[0]->PostSend(good));
    ASSERT_TRUE(c.qp[0]->PostSend(bad));
    ASSERT_TRUE(c.qp[0]->PostSend(later));
    Simulator::Run();
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS);
    EXPECT_EQ(s[1].status, IbWcStatus::REM_ACCESS_ERR) << IbWcStatusName(s[1].status);
    EXPECT_EQ(s[1].wrId, 2u);
    EXPECT_EQ(s[2].status, IbWcStatus::WR_FLUSH_ERR);
    EXPECT_EQ(naks, (std::vector<uint8_t>{IbAethHeader::NAK_REMOTE_ACCESS_ERROR}));
    EXPECT_EQ(c.qp[0]->GetState(), IbQpState::ERR);
    EXPECT_EQ(c.qp[1]->GetState(), IbQpState::ERR);
    // Posting in ERR is accepted and flushed, as in verbs.
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(4, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 8), b, 0)));
    Simulator::Run();
    s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].wrId, 4u);
    EXPECT_EQ(s[0].status, IbWcStatus::WR_FLUSH_ERR);
}

TEST_F(IbRdmaTest, RtsToRtsChangesTheAccessFlagsItsMaskNames)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Rc c = ConnectPair(f);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(
        4096,
        IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ);
    std::string err;
    IbQpAttr rts;
    rts.state = IbQpState::RTS;
    rts.accessFlags = IB_ACCESS_REMOTE_READ;
    // Without a mask nothing changes: the WRITE lands.
    ASSERT_TRUE(c.qp[1]->Modify(rts, &err)) << err;
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 100), b, 0)));
    Simulator::Run();
    // With IB_QP_ACCESS_FLAGS the responder takes remote write away: a READ still
    // works, the next WRITE is an invalid request (the QP's right, not the region's).
    rts.mask = IB_QP_ACCESS_FLAGS;
    ASSERT_TRUE(c.qp[1]->Modify(rts, &err)) << err;
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_READ, Sge(a, 0, 100), b, 0)));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(3, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 100), b, 0)));
    Simulator::Run();
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS);
    EXPECT_EQ(s[1].status, IbWcStatus::SUCCESS);
    EXPECT_EQ(s[2].wrId, 3u);
    EXPECT_EQ(s[2].status, IbWcStatus::REM_INV_REQ_ERR) << IbWcStatusName(s[2].status);

    // An RC QP's mask may not name the Q_Key (a UD attribute).
    Rc d = ConnectPair(f);
    rts.mask = IB_QP_QKEY;
    EXPECT_FALSE(d.qp[0]->Modify(rts, &err));
    EXPECT_NE(err.find("RTS->RTS: mask 2 on an RC QP; it may change IB_QP_ACCESS_FLAGS and "
                       "IB_QP_MIN_RNR_TIMER"),
              std::string::npos)
        << err;
}

TEST_F(IbRdmaTest, ReadOutsideTheRegionIsARemoteAccessErrorAndWithoutTheQpsRightInvalid)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(8192, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(4096, IB_ACCESS_REMOTE_READ);
    {
        Rc c = ConnectPair(f);
        ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(a, 0, 5000), b, 0)));
        Simulator::Run();
        std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
        ASSERT_EQ(s.size(), 1u);
        EXPECT_EQ(s[0].status, IbWcStatus::REM_ACCESS_ERR);
    }
    {
        Rc c = ConnectPair(f);
        ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 64), b, 0)));
        Simulator::Run();
        std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
        ASSERT_EQ(s.size(), 1u);
        EXPECT_EQ(s[0].status, IbWcStatus::REM_ACCESS_ERR) << "the region has no remote write";
    }
    {
        // The QP itself refuses READs: an invalid request, as rxe and hfi1 answer it (not a
        // remote access error, which names the region); also for a 0-byte READ, which
        // never looks at a region.
        IbQpAttr base;
        base.accessFlags = IB_ACCESS_REMOTE_WRITE;
        for (uint32_t len : {64u, 0u})
        {
            Rc c = ConnectPair(f, base);
            ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(a, 0, len), b, 0)));
            Simulator::Run();
            std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
            ASSERT_EQ(s.size(), 1u);
            EXPECT_EQ(s[0].status, IbWcStatus::REM_INV_REQ_ERR)
                << len << " bytes: " << IbWcStatusName(s[0].status);
            EXPECT_NE(c.qp[0]->DescribeCompletion(s[0]).find("accessFlags"), std::string::npos)
                << c.qp[0]->DescribeCompletion(s[0]);
        }
    }
}

TEST_F(IbRdmaTest, AReadWhoseResponsesComeCutToAnotherMtuIsALocalLengthError)
{
    // Connected by hand, the requester with pathMtu 1024 and the responder with 4096: the
    // 4000-byte READ comes back as one 4000-byte response where 1024 bytes were expected.
    // Before, the response was dropped and every retry cut the same way, until
    // RETRY_EXC_ERR some 0.5 s later; now the READ fails at once.
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Ptr<IbCompletionQueue> cq[2];
    Ptr<IbQueuePair> qp[2];
    for (uint32_t i = 0; i < 2; ++i)
    {
        cq[i] = f.hca[i]->CreateCq(16);
        qp[i] = f.hca[i]->CreateQp(IbQpType::RC, cq[i], cq[i]);
    }
    for (uint32_t i = 0; i < 2; ++i)
    {
        std::string err;
        IbQpAttr a;
        a.state = IbQpState::INIT;
        a.accessFlags = IB_ACCESS_REMOTE_READ;
        ASSERT_TRUE(qp[i]->Modify(a, &err)) << err;
        a.state = IbQpState::RTR;
        a.pathMtu = i == 0 ? 1024 : 4096;
        a.destQpNum = qp[1 - i]->GetQpNum();
        a.dlid = f.port[1 - i]->GetLid();
        ASSERT_TRUE(qp[i]->Modify(a, &err)) << err;
        a.state = IbQpState::RTS;
        ASSERT_TRUE(qp[i]->Modify(a, &err)) << err;
    }
    Ptr<IbMemoryRegion> local = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> remote = f.hca[1]->RegisterMemory(4096, IB_ACCESS_REMOTE_READ);
    ASSERT_TRUE(qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(local, 0, 4000), remote, 0)));
    Simulator::Stop(MicroSeconds(20));
    Simulator::Run();
    const std::vector<IbWorkCompletion> s = Drain(cq[0]);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].status, IbWcStatus::LOC_LEN_ERR) << IbWcStatusName(s[0].status);
    EXPECT_NE(qp[0]->DescribeCompletion(s[0]).find("pathMtu"), std::string::npos);
    EXPECT_EQ(qp[0]->GetState(), IbQpState::ERR);
}

TEST_F(IbRdmaTest, NoReadResourcesAreAllowedAndRefuseReadsAsVerbsDo)
{
    // maxRdAtomic 0 and maxDestRdAtomic 0 are legal (send/receive-only connections, as
    // the RDMA CM sets up with initiator depth and responder resources 0). The requester
    // then refuses to post a READ; a responder without resources NAKs one (invalid
    // request). Before, Modify refused both values.
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Ptr<IbMemoryRegion> local = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> remote = f.hca[1]->RegisterMemory(4096, IB_ACCESS_REMOTE_READ);
    {
        IbQpAttr base;
        base.maxDestRdAtomic = 0;
        Rc c = ConnectPair(f, base);
        std::string err;
        EXPECT_FALSE(
            c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(local, 0, 64), remote, 0), &err));
        EXPECT_NE(err.find("maxRdAtomic 0"), std::string::npos) << err;
    }
    Ptr<IbCompletionQueue> cq[2];
    Ptr<IbQueuePair> qp[2];
    for (uint32_t i = 0; i < 2; ++i)
    {
        cq[i] = f.hca[i]->CreateCq(16);
        qp[i] = f.hca[i]->CreateQp(IbQpType::RC, cq[i], cq[i]);
        std::string err;
        IbQpAttr a;
        a.state = IbQpState::INIT;
        a.accessFlags = IB_ACCESS_REMOTE_READ;
        ASSERT_TRUE(qp[i]->Modify(a, &err)) << err;
    }
    for (uint32_t i = 0; i < 2; ++i)
    {
        std::string err;
        IbQpAttr a;
        a.state = IbQpState::RTR;
        a.destQpNum = qp[1 - i]->GetQpNum();
        a.dlid = f.port[1 - i]->GetLid();
        a.maxDestRdAtomic = 0; // no responder resources on either side
        ASSERT_TRUE(qp[i]->Modify(a, &err)) << err;
        a.state = IbQpState::RTS;
        a.maxRdAtomic = 1; // but host 0 believes it may issue one READ
        ASSERT_TRUE(qp[i]->Modify(a, &err)) << err;
    }
    ASSERT_TRUE(qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_READ, Sge(local, 0, 64), remote, 0)));
    Simulator::Run();
    const std::vector<IbWorkCompletion> s = Drain(cq[0]);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].status, IbWcStatus::REM_INV_REQ_ERR) << IbWcStatusName(s[0].status);
}

TEST_F(IbRdmaTest, SendWithoutReceiveGetsRnrNakThenSucceeds)
{
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(true));
    Fabric f = BackToBack(hh, "EDR", 1024);
    IbQpAttr base;
    base.minRnrTimer = 2; // 20 us
    Rc c = ConnectPair(f, base);
    std::vector<uint32_t> rnr;
    c.qp[0]->TraceConnectWithoutContext(
        "RnrNakReceived",
        MakeCallback(+[](std::vector<uint32_t>* v, uint32_t psn, uint8_t s) {
            EXPECT_TRUE(IbAethHeader::IsRnrNakSyndrome(s));
            EXPECT_EQ(s & 0x1F, 2);
            v->push_back(psn);
        }).Bind(&rnr));
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(8192, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(8192, IB_ACCESS_LOCAL_WRITE);
    Fill(a, 9);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::SEND, Sge(a, 0, 3000))));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::SEND, Sge(a, 3000, 100))));
    const Time postAt = MicroSeconds(50);
    Simulator::Schedule(postAt, [&]() {
        for (uint32_t i = 0; i < 2; ++i)
        {
            IbRecvWr r;
            r.wrId = 10 + i;
            r.sge = Sge(b, 4000 * i, 4000);
            ASSERT_TRUE(c.qp[1]->PostRecv(r));
        }
    });
    Simulator::Run();
    EXPECT_GE(rnr.size(), 2u); // at 0 and every 20 us until 50 us
    EXPECT_LE(rnr.size(), 4u);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS);
    EXPECT_EQ(s[1].status, IbWcStatus::SUCCESS);
    EXPECT_GT(s[0].timestamp, postAt);
    std::vector<IbWorkCompletion> r = Drain(c.rcq[1]);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].byteLen, 3000u);
    EXPECT_EQ(r[1].byteLen, 100u);
    EXPECT_TRUE(SameBytes(a, 0, b, 0, 3000));
    EXPECT_TRUE(SameBytes(a, 3000, b, 4000, 100));
    EXPECT_EQ(c.qp[0]->GetCounters().retransmittedPackets > 0, true);
}

TEST_F(IbRdmaTest, RnrRetriesExhaustedGiveRnrRetryExcErr)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    IbQpAttr base;
    base.minRnrTimer = 1;
    base.rnrRetry = 3;
    Rc c = ConnectPair(f, base);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(64, IB_ACCESS_LOCAL_WRITE);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::SEND, Sge(a, 0, 64))));
    Simulator::Run();
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].status, IbWcStatus::RNR_RETRY_EXC_ERR) << IbWcStatusName(s[0].status);
    EXPECT_EQ(c.qp[0]->GetCounters().rnrNaksReceived, 4u);
    EXPECT_EQ(c.qp[1]->GetCounters().rnrNaksSent, 4u);
}

namespace
{

/// Corrupts the first arriving packet with each of the given BTH opcodes (LRH-only
/// packets), then none.
class DropFirstOfOpcode : public ErrorModel
{
  public:
    /// @param opcodes the BTH opcodes to drop once each
    explicit DropFirstOfOpcode(std::vector<uint8_t> opcodes)
        : m_opcodes(std::move(opcodes)),
          m_done(m_opcodes.size(), false)
    {
    }

    /// @param opcode the BTH opcode to drop once
    explicit DropFirstOfOpcode(uint8_t opcode)
        : DropFirstOfOpcode(std::vector<uint8_t>{opcode})
    {
    }

    /// @return packets dropped so far
    uint32_t Dropped() const
    {
        return m_dropped;
    }

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        uint8_t bytes[IbPacket::LRH_SIZE + 1];
        if (p->CopyData(bytes, sizeof(bytes)) != sizeof(bytes))
        {
            return false;
        }
        for (size_t i = 0; i < m_opcodes.size(); ++i)
        {
            if (!m_done[i] && bytes[IbPacket::LRH_SIZE] == m_opcodes[i])
            {
                m_done[i] = true;
                ++m_dropped;
                return true;
            }
        }
        return false;
    }

    void DoReset() override
    {
    }

    std::vector<uint8_t> m_opcodes;
    std::vector<bool> m_done;
    uint32_t m_dropped{0};
};

} // namespace

TEST_F(IbRdmaTest, AFatalNakAfterALostReadResponseFailsTheRequestItNames)
{
    // READ R, then a WRITE W with a bad rkey. R's response is lost; W's NAK (remote access
    // error) arrives. The NAK is W's: R, executed but without its data, is flushed as the
    // QP goes to the error state, and W gets REM_ACCESS_ERR.
    Fabric f = BackToBack(IbHcaHelper());
    Rc c = ConnectPair(f);
    auto drop = CreateObject<DropFirstOfOpcode>(IbOpcode::RC_RDMA_READ_RESPONSE_ONLY);
    f.port[0]->SetReceiveErrorModel(drop);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(
        4096,
        IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ);
    IbSendWr bad = Wr(2, IbWrOpcode::RDMA_WRITE, Sge(a, 1024, 100), b, 0);
    bad.rkey ^= 0x5500;
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(a, 0, 100), b, 0)));
    ASSERT_TRUE(c.qp[0]->PostSend(bad));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(3, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 100), b, 0)));
    Simulator::Run();
    EXPECT_EQ(drop->Dropped(), 1u);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].wrId, 1u);
    EXPECT_EQ(s[0].status, IbWcStatus::WR_FLUSH_ERR) << IbWcStatusName(s[0].status);
    EXPECT_EQ(s[1].wrId, 2u);
    EXPECT_EQ(s[1].status, IbWcStatus::REM_ACCESS_ERR) << IbWcStatusName(s[1].status);
    EXPECT_EQ(s[2].status, IbWcStatus::WR_FLUSH_ERR);
}

TEST_F(IbRdmaTest, AnRnrNakAfterALostReadResponseGoesBackForTheRead)
{
    // READ R, then a SEND S that finds no receive WQE (rnrRetry 0). R's response is lost,
    // and S's RNR NAK arrives: the RNR NAK is S's, not R's. The requester goes back for R
    // (the responder executes it again and its data arrives), then S is RNR NAKed again and
    // fails with RNR_RETRY_EXC_ERR.
    Fabric f = BackToBack(IbHcaHelper());
    IbQpAttr base;
    base.minRnrTimer = 1;
    base.rnrRetry = 0;
    Rc c = ConnectPair(f, base);
    auto drop = CreateObject<DropFirstOfOpcode>(IbOpcode::RC_RDMA_READ_RESPONSE_ONLY);
    f.port[0]->SetReceiveErrorModel(drop);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(4096, IB_ACCESS_REMOTE_READ);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(a, 0, 100), b, 0)));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::SEND, Sge(a, 1024, 64))));
    Simulator::Run();
    EXPECT_EQ(drop->Dropped(), 1u);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].wrId, 1u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS) << IbWcStatusName(s[0].status);
    EXPECT_EQ(s[0].byteLen, 100u);
    EXPECT_EQ(s[1].wrId, 2u);
    EXPECT_EQ(s[1].status, IbWcStatus::RNR_RETRY_EXC_ERR) << IbWcStatusName(s[1].status);
    EXPECT_EQ(c.qp[0]->GetCounters().rnrNaksReceived, 2u);
}

TEST_F(IbRdmaTest, AnAckForAResentSendDoesNotSendTheResentReadAgain)
{
    // SEND S, then READ R. S's ACK and R's response are lost; the local ACK timeout sends
    // both again. The responder acknowledges the duplicate S with its newest PSN, which
    // covers R, before it replays R's response: that ACK must not make the requester go
    // back for R once more (R's response is on its way), which read and sent R's data a
    // third time and dropped it as duplicates.
    Fabric f = BackToBack(IbHcaHelper());
    Rc c = ConnectPair(f);
    auto drop = CreateObject<DropFirstOfOpcode>(
        std::vector<uint8_t>{IbOpcode::RC_ACKNOWLEDGE, IbOpcode::RC_RDMA_READ_RESPONSE_ONLY});
    f.port[0]->SetReceiveErrorModel(drop);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b =
        f.hca[1]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
    IbRecvWr r;
    r.wrId = 9;
    r.sge = Sge(b, 2048, 64);
    ASSERT_TRUE(c.qp[1]->PostRecv(r));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::SEND, Sge(a, 1024, 64))));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_READ, Sge(a, 0, 100), b, 0)));
    Simulator::Run();
    EXPECT_EQ(drop->Dropped(), 2u);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS) << IbWcStatusName(s[0].status);
    EXPECT_EQ(s[1].status, IbWcStatus::SUCCESS) << IbWcStatusName(s[1].status);
    EXPECT_EQ(c.qp[0]->GetCounters().retransmitEpisodes, 1u); // the timeout's
    EXPECT_EQ(c.qp[0]->GetCounters().duplicateResponses, 0u);
}

TEST_F(IbRdmaTest, RequestsBehindALargeReadWaitForItsLostResponseToComeAgain)
{
    // As RequestsBehindALargeReadWaitForItsResponsesToMakeRoom, with the READ's first
    // response lost: the later responses acknowledge past it, but the room is counted
    // from the oldest PSN still wanted (the lost one), so the WRITE waits until the
    // go-back's replay of that response has arrived. Counted from the last PSN
    // acknowledged, the WRITE went at once and the replayed response read as old (a
    // duplicate, on every retry).
    auto drop = CreateObject<DropFirstOfOpcode>(IbOpcode::RC_RDMA_READ_RESPONSE_FIRST);
    Rc c = LargeReadThenWrite(drop);
    EXPECT_EQ(drop->Dropped(), 1u);
    EXPECT_EQ(c.qp[0]->GetCounters().retransmitEpisodes, 1u);
    // The READ, the READ again (the responder restarts its responses there), and the
    // WRITE's two packets once the replayed responses have made room. Counted from the
    // last PSN acknowledged, the WRITE went at once and the replayed responses read as
    // old (duplicates).
    EXPECT_EQ(c.qp[1]->GetCounters().packetsReceived, 4u);
    EXPECT_EQ(c.qp[1]->GetCounters().readRestarts, 1u);
    EXPECT_EQ(c.qp[0]->GetCounters().duplicateResponses, 0u);
    EXPECT_EQ(c.qp[0]->GetState(), IbQpState::RTS);
}

namespace
{

/// Two hosts back to back at MTU 256 in data mode, an RC pair, host 0 losing the first
/// response of one opcode, and a region on each host (host 1's filled).
struct ReadLoss
{
    Fabric f;                    ///< the hosts
    Rc c;                        ///< the QPs
    Ptr<DropFirstOfOpcode> drop; ///< host 0's loss
    Ptr<IbMemoryRegion> dst;     ///< host 0's region
    Ptr<IbMemoryRegion> src;     ///< host 1's region
};

/**
 * @param lost the response opcode whose first packet host 0 loses
 * @param bytes the regions' size
 * @return the setup
 */
ReadLoss
MakeReadLoss(uint8_t lost, uint32_t bytes)
{
    IbHcaHelper hh;
    hh.SetHcaAttribute("DataMode", BooleanValue(true));
    ReadLoss r;
    r.f = BackToBack(hh, "EDR", 256);
    r.c = ConnectPair(r.f);
    r.drop = CreateObject<DropFirstOfOpcode>(lost);
    r.f.port[0]->SetReceiveErrorModel(r.drop);
    const uint32_t acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ;
    r.dst = r.f.hca[0]->RegisterMemory(bytes, acc);
    r.src = r.f.hca[1]->RegisterMemory(bytes, acc);
    Fill(r.src, 5);
    return r;
}

} // namespace

TEST_F(IbRdmaTest, ADuplicateReadRestartsTheResponsesStillBeingSent)
{
    // A 64 KiB READ at MTU 256 (256 responses) loses its second response. The requester
    // asks again from that PSN while the responder is still sending: the responder
    // restarts there. Before, it queued a second train behind the first, whose remaining
    // ~250 packets the requester dropped as out of sequence: about 510 responses for 256.
    ReadLoss r = MakeReadLoss(IbOpcode::RC_RDMA_READ_RESPONSE_MIDDLE, 65536);
    Rc& c = r.c;
    Ptr<DropFirstOfOpcode> drop = r.drop;
    Ptr<IbMemoryRegion> dst = r.dst;
    Ptr<IbMemoryRegion> src = r.src;
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(dst, 0, 65536), src, 0)));
    Simulator::Run();
    EXPECT_EQ(drop->Dropped(), 1u);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS) << IbWcStatusName(s[0].status);
    EXPECT_TRUE(SameBytes(src, 0, dst, 0, 65536));
    EXPECT_EQ(c.qp[1]->GetCounters().readRestarts, 1u);
    EXPECT_EQ(c.qp[0]->GetCounters().retransmitEpisodes, 1u);
    // 256 responses, those sent before the request again reached the responder, and
    // nothing queued behind them
    const uint64_t responses = c.qp[0]->GetCounters().packetsReceived;
    EXPECT_GE(responses, 256u);
    EXPECT_LT(responses, 256u + 32u);
}

TEST_F(IbRdmaTest, ARestartedReadDoesNotOvertakeTheReplayOfAnEarlierOne)
{
    // READs A and B of 16 responses each (MTU 256); A's last response is lost, which shows
    // at B's first. The requester asks for A again, then B. A's responses have all gone,
    // so A's replay is queued behind B's; B's request again must not restart B ahead of
    // A's replay (the requester would drop B's restarted train as out of sequence and wait
    // for the ACK timeout, about 67 ms, to ask for B once more).
    ReadLoss r = MakeReadLoss(IbOpcode::RC_RDMA_READ_RESPONSE_LAST, 8192);
    Rc& c = r.c;
    Ptr<DropFirstOfOpcode> drop = r.drop;
    Ptr<IbMemoryRegion> dst = r.dst;
    Ptr<IbMemoryRegion> src = r.src;
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(dst, 0, 4096), src, 0)));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_READ, Sge(dst, 4096, 4096), src, 4096)));
    Simulator::Stop(MicroSeconds(100)); // both complete well before the ACK timeout
    Simulator::Run();
    EXPECT_EQ(drop->Dropped(), 1u);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].status, IbWcStatus::SUCCESS) << IbWcStatusName(s[0].status);
    EXPECT_EQ(s[1].status, IbWcStatus::SUCCESS) << IbWcStatusName(s[1].status);
    EXPECT_TRUE(SameBytes(src, 0, dst, 0, 8192));
    EXPECT_EQ(c.qp[0]->GetCounters().timeouts, 0u);
}

TEST_F(IbRdmaTest, ADuplicateReadThatLostItsAccessIsNaked)
{
    // The READ's only response is lost and, before the requester asks again, the
    // responder's QP loses IB_ACCESS_REMOTE_READ (RTS -> RTS). The READ again is NAKed
    // (invalid request), as a new one would be; before, it was dropped silently and the
    // requester retried until RETRY_EXC_ERR.
    Fabric f = BackToBack(IbHcaHelper());
    Rc c = ConnectPair(f);
    auto drop = CreateObject<DropFirstOfOpcode>(IbOpcode::RC_RDMA_READ_RESPONSE_ONLY);
    f.port[0]->SetReceiveErrorModel(drop);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(4096, IB_ACCESS_REMOTE_READ);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_READ, Sge(a, 0, 100), b, 0)));
    Simulator::Schedule(MicroSeconds(5), [&c]() {
        IbQpAttr attr;
        attr.state = IbQpState::RTS;
        attr.accessFlags = IB_ACCESS_LOCAL_WRITE;
        attr.mask = IB_QP_ACCESS_FLAGS;
        std::string err;
        EXPECT_TRUE(c.qp[1]->Modify(attr, &err)) << err;
    });
    Simulator::Run();
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].status, IbWcStatus::REM_INV_REQ_ERR) << IbWcStatusName(s[0].status);
    EXPECT_EQ(c.qp[0]->GetCounters().timeouts, 1u);
}

TEST_F(IbRdmaTest, AfterAGoBackALostReadResponseStillBringsTheReadBackAtOnce)
{
    // One go-back first (a SEND's ACK lost, the timeout), then READ R and WRITE W are
    // posted, and R's response is lost. W's ACK shows it: the requester goes back for R
    // at once. R was requested for the first time, not again: the rule that lets a
    // re-requested READ wait for its replay does not apply, and nothing waits for the
    // ACK timeout (timeout 14: about 67 ms).
    Fabric f = BackToBack(IbHcaHelper());
    IbQpAttr base;
    base.timeout = 14;
    Rc c = ConnectPair(f, base);
    auto drop = CreateObject<DropFirstOfOpcode>(
        std::vector<uint8_t>{IbOpcode::RC_ACKNOWLEDGE, IbOpcode::RC_RDMA_READ_RESPONSE_ONLY});
    f.port[0]->SetReceiveErrorModel(drop);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(4096,
                                                     IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
                                                         IB_ACCESS_REMOTE_WRITE);
    IbRecvWr r;
    r.wrId = 9;
    r.sge = Sge(b, 2048, 64);
    ASSERT_TRUE(c.qp[1]->PostRecv(r));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::SEND, Sge(a, 1024, 64))));
    Simulator::Stop(MilliSeconds(200));
    Simulator::Run(); // the SEND completes after one timeout
    ASSERT_EQ(c.qp[0]->GetCounters().retransmitEpisodes, 1u);
    const Time posted = Simulator::Now();
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_READ, Sge(a, 0, 100), b, 0)));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(3, IbWrOpcode::RDMA_WRITE, Sge(a, 200, 100), b, 0)));
    Simulator::Stop(MicroSeconds(100));
    Simulator::Run();
    EXPECT_EQ(drop->Dropped(), 2u);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 3u);
    for (const auto& wc : s)
    {
        EXPECT_EQ(wc.status, IbWcStatus::SUCCESS) << wc.wrId;
    }
    EXPECT_EQ(c.qp[0]->GetCounters().retransmitEpisodes, 2u);
    EXPECT_LT(Simulator::Now() - posted, MicroSeconds(101));
}

TEST_F(IbRdmaTest, AnAckForARequestSentAfterAResentReadShowsItsLossAtOnce)
{
    // SEND S finds no receive WQE: RNR NAK, and the requester goes back, sending S and
    // READ R again (R never executed: the responder dropped it behind the NAK). R's
    // response is lost. WRITE W, posted later and sent for the first time, is
    // acknowledged; its ACK can only follow R's response, so it shows the loss, and the
    // requester goes back for R at once instead of waiting for the ACK timeout (about
    // 67 ms at timeout 14).
    Fabric f = BackToBack(IbHcaHelper());
    IbQpAttr base;
    base.timeout = 14;
    base.minRnrTimer = 1; // 0.01 ms
    Rc c = ConnectPair(f, base);
    auto drop = CreateObject<DropFirstOfOpcode>(IbOpcode::RC_RDMA_READ_RESPONSE_ONLY);
    f.port[0]->SetReceiveErrorModel(drop);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(4096,
                                                     IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
                                                         IB_ACCESS_REMOTE_WRITE);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::SEND, Sge(a, 1024, 64))));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_READ, Sge(a, 0, 100), b, 0)));
    Simulator::Schedule(MicroSeconds(5), [&c, b]() {
        IbRecvWr r;
        r.wrId = 9;
        r.sge = Sge(b, 2048, 64);
        c.qp[1]->PostRecv(r);
    });
    Simulator::Schedule(MicroSeconds(50), [&c, a, b]() {
        c.qp[0]->PostSend(Wr(3, IbWrOpcode::RDMA_WRITE, Sge(a, 200, 100), b, 0));
    });
    Simulator::Stop(MicroSeconds(200));
    Simulator::Run();
    EXPECT_EQ(drop->Dropped(), 1u);
    EXPECT_GE(c.qp[0]->GetCounters().rnrNaksReceived, 1u);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 3u);
    for (const auto& wc : s)
    {
        EXPECT_EQ(wc.status, IbWcStatus::SUCCESS) << wc.wrId << " " << IbWcStatusName(wc.status);
    }
}

// ---------------------------------------------------------------- timing and throughput

TEST_F(IbRdmaTest, SmallWriteAndReadLatencyFollowTheTimingAttributes)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh, "EDR");
    Ptr<IbHca> h = f.hca[0];
    Rc c = ConnectPair(f);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(
        4096,
        IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ);
    Time landed;
    c.qp[1]->TraceConnectWithoutContext(
        "MessageReceived",
        MakeCallback(+[](Time* t, uint32_t, IbWrOpcode, uint32_t len, uint64_t) {
            EXPECT_EQ(len, 64u);
            *t = Simulator::Now();
        }).Bind(&landed));
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 64), b, 0)));
    Simulator::Run();
    const DataRate rate = f.port[0]->GetDataRate();
    const Time prop = NanoSeconds(10); // IbChannel default Delay
    const Time write = rate.CalculateBytesTxTime(IbPacket::WireSize(64, 16, false));
    const Time ack = rate.CalculateBytesTxTime(IbPacket::WireSize(0, 4, false));
    const Time wantLanded = h->GetDoorbellLatency() + write + prop + h->GetPcieWriteLatency();
    EXPECT_NEAR(landed.GetNanoSeconds(), wantLanded.GetNanoSeconds(), 2);
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 1u);
    const Time wantDone = h->GetDoorbellLatency() + write + prop + f.hca[1]->GetAckDelay() + ack +
                          prop + h->GetPcieWriteLatency();
    EXPECT_NEAR(s[0].timestamp.GetNanoSeconds(), wantDone.GetNanoSeconds(), 2);

    const Time start = Simulator::Now();
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(2, IbWrOpcode::RDMA_READ, Sge(a, 0, 64), b, 0)));
    Simulator::Run();
    s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 1u);
    const Time req = rate.CalculateBytesTxTime(IbPacket::WireSize(0, 16, false));
    const Time resp = rate.CalculateBytesTxTime(IbPacket::WireSize(64, 4, false));
    const Time wantRead = h->GetDoorbellLatency() + req + prop + f.hca[1]->GetResponseDelay() +
                          resp + prop + h->GetPcieWriteLatency();
    EXPECT_NEAR((s[0].timestamp - start).GetNanoSeconds(), wantRead.GetNanoSeconds(), 2);
}

/**
 * Stream @p n RDMA WRITEs of @p size bytes from each of @p senders (host 0, and host 1 too
 * if @p both), and return the goodput of each direction measured between the first and
 * the last message landing.
 */
std::vector<double>
WriteStreamGoodput(Fabric& f, uint32_t n, uint32_t size, bool both, uint32_t qpsPerSide = 1)
{
    std::vector<std::vector<Time>> landed(2);
    std::vector<Rc> conns;
    for (uint32_t q = 0; q < qpsPerSide; ++q)
    {
        conns.push_back(ConnectPair(f));
    }
    for (uint32_t dir = 0; dir < (both ? 2u : 1u); ++dir)
    {
        const uint32_t from = dir;
        const uint32_t to = 1 - dir;
        Ptr<IbMemoryRegion> src = f.hca[from]->RegisterMemory(size, IB_ACCESS_LOCAL_WRITE);
        Ptr<IbMemoryRegion> dst =
            f.hca[to]->RegisterMemory(size, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
        for (Rc& c : conns)
        {
            c.qp[to]->TraceConnectWithoutContext(
                "MessageReceived",
                MakeCallback(+[](std::vector<Time>* v, uint32_t, IbWrOpcode, uint32_t, uint64_t) {
                    v->push_back(Simulator::Now());
                }).Bind(&landed[dir]));
            for (uint32_t i = 0; i < n; ++i)
            {
                IbSendWr wr = Wr(i, IbWrOpcode::RDMA_WRITE, Sge(src, 0, size), dst, 0);
                wr.signaled = (i % 16 == 15);
                EXPECT_TRUE(c.qp[from]->PostSend(wr));
            }
        }
    }
    Simulator::Run();
    std::vector<double> out;
    for (uint32_t dir = 0; dir < (both ? 2u : 1u); ++dir)
    {
        const std::vector<Time>& t = landed[dir];
        EXPECT_EQ(t.size(), n * qpsPerSide);
        const double secs = (t.back() - t.front()).GetSeconds();
        out.push_back((t.size() - 1) * 8.0 * size / secs);
    }
    return out;
}

TEST_F(IbRdmaTest, WriteStreamReachesLinkRateTimesWireEfficiency)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh, "EDR", 4096);
    const uint32_t size = 64 * 1024;
    const uint32_t pkts = size / 4096;
    // LRH 8 + BTH 12 + payload + ICRC 4 + VCRC 2 per packet, RETH 16 on the first only.
    const double wire = pkts * (8 + 12 + 4096 + 4 + 2) + 16;
    const double expected = f.port[0]->GetDataRate().GetBitRate() * size / wire;
    const std::vector<double> g = WriteStreamGoodput(f, 160, size, false);
    // Events: the link's two per packet (end of serialization, arrival) plus flow control;
    // the HCA adds only one wake-up per ACK and a few per WR, never one per data packet.
    const uint64_t packets = f.port[0]->GetTxPackets() + f.port[1]->GetTxPackets();
    EXPECT_EQ(f.port[0]->GetTxPackets(), 160u * 16);
    EXPECT_LT(Simulator::GetEventCount(), 3 * packets);
    EXPECT_NEAR(g[0] / expected, 1.0, 0.01)
        << "goodput " << g[0] / 1e9 << " Gb/s, expected " << expected / 1e9;
}

TEST_F(IbRdmaTest, AcksOnTheReverseLinkDoNotSlowBidirectionalStreams)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh, "HDR", 4096);
    const uint32_t size = 64 * 1024;
    const double wire = (size / 4096) * (8 + 12 + 4096 + 4 + 2) + 16;
    const double expected = f.port[0]->GetDataRate().GetBitRate() * size / wire;
    const std::vector<double> g = WriteStreamGoodput(f, 160, size, true);
    EXPECT_NEAR(g[0] / expected, 1.0, 0.01) << g[0] / 1e9 << " Gb/s";
    EXPECT_NEAR(g[1] / expected, 1.0, 0.01) << g[1] / 1e9 << " Gb/s";
}

TEST_F(IbRdmaTest, QueuePairsOnOnePortShareItFairly)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh, "EDR", 4096);
    std::vector<Rc> conns;
    std::vector<std::vector<Time>> landed(3);
    Ptr<IbMemoryRegion> src = f.hca[0]->RegisterMemory(1 << 20, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> dst =
        f.hca[1]->RegisterMemory(1 << 20, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    for (uint32_t q = 0; q < 3; ++q)
    {
        conns.push_back(ConnectPair(f));
        conns[q].qp[1]->TraceConnectWithoutContext(
            "MessageReceived",
            MakeCallback(+[](std::vector<Time>* v, uint32_t, IbWrOpcode, uint32_t, uint64_t) {
                v->push_back(Simulator::Now());
            }).Bind(&landed[q]));
        // QP q streams 64 KB messages; they all start together.
        for (uint32_t i = 0; i < 40; ++i)
        {
            ASSERT_TRUE(conns[q].qp[0]->PostSend(
                Wr(i, IbWrOpcode::RDMA_WRITE, Sge(src, 0, 65536), dst, 0)));
        }
    }
    Simulator::Run();
    // Interleaved packet by packet, round robin: each QP gets a third of the link (the
    // first one to wake up leads by the packets it sent before the others joined, and
    // the lead does not grow).
    const Time pkt = f.port[0]->GetDataRate().CalculateBytesTxTime(4122);
    const double wire = 16 * 4122.0 + 16;
    const double third = f.port[0]->GetDataRate().GetBitRate() * 65536 / wire / 3;
    for (uint32_t q = 0; q < 3; ++q)
    {
        ASSERT_EQ(landed[q].size(), 40u);
        const double rate = 39 * 65536 * 8.0 / (landed[q][39] - landed[q][0]).GetSeconds();
        EXPECT_NEAR(rate / third, 1.0, 0.01) << "QP " << q;
    }
    for (uint32_t i = 0; i < 40; ++i)
    {
        const Time lo = std::min({landed[0][i], landed[1][i], landed[2][i]});
        const Time hi = std::max({landed[0][i], landed[1][i], landed[2][i]});
        ASSERT_LE(hi - lo, 9 * pkt) << "message " << i;
    }
}

TEST_F(IbRdmaTest, SendWindowBoundsPacketsInFlight)
{
    IbHcaHelper hh;
    hh.SetHcaAttribute("MaxOutstandingPackets", UintegerValue(8));
    hh.SetHcaAttribute("AckCoalescing", UintegerValue(4));
    Fabric f = BackToBack(hh, "EDR", 1024);
    Rc c = ConnectPair(f);

    // Requests leave port 0, ACKs arrive at it: track the distance between the two.
    struct Track
    {
        uint32_t highestSent{0};
        uint32_t highestAcked{0};
        bool any{false};
        uint32_t maxOutstanding{0};
    } tr;

    f.port[0]->TraceConnectWithoutContext(
        "PhyTxBegin",
        MakeCallback(+[](Track* t, Ptr<const Packet> p) {
            t->highestSent = PsnOf(p);
            if (!t->any)
            {
                t->any = true;
                t->highestAcked = (t->highestSent - 1) & 0xFFFFFF;
            }
            t->maxOutstanding =
                std::max(t->maxOutstanding, (t->highestSent - t->highestAcked) & 0xFFFFFF);
        }).Bind(&tr));
    f.port[0]->TraceConnectWithoutContext("PhyRxEnd",
                                          MakeCallback(+[](Track* t, Ptr<const Packet> p) {
                                              if (OpcodeOf(p) == IbOpcode::RC_ACKNOWLEDGE)
                                              {
                                                  t->highestAcked = PsnOf(p);
                                              }
                                          }).Bind(&tr));
    Ptr<IbMemoryRegion> src = f.hca[0]->RegisterMemory(65536, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> dst =
        f.hca[1]->RegisterMemory(65536, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    ASSERT_TRUE(c.qp[0]->PostSend(Wr(1, IbWrOpcode::RDMA_WRITE, Sge(src, 0, 65536), dst, 0)));
    Simulator::Run();
    EXPECT_EQ(Drain(c.scq[0]).size(), 1u);
    EXPECT_LE(tr.maxOutstanding, 8u);
    EXPECT_GE(tr.maxOutstanding, 5u);
    EXPECT_GE(c.qp[1]->GetCounters().acksSent, 64u / 4);
}

TEST_F(IbRdmaTest, UnsignaledWorkRequestsRetireWithoutCompletions)
{
    IbHcaHelper hh;
    Fabric f = Switched(hh);
    Rc c = ConnectPair(f);
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b =
        f.hca[1]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
    for (uint32_t i = 0; i < 10; ++i)
    {
        IbSendWr wr = Wr(i, IbWrOpcode::RDMA_WRITE, Sge(a, 0, 256), b, 0);
        wr.signaled = i == 9;
        ASSERT_TRUE(c.qp[0]->PostSend(wr));
    }
    EXPECT_EQ(c.qp[0]->GetSendQueueLength(), 10u);
    Simulator::Run();
    std::vector<IbWorkCompletion> s = Drain(c.scq[0]);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].wrId, 9u);
    EXPECT_EQ(c.qp[0]->GetSendQueueLength(), 0u);
}

TEST_F(IbRdmaTest, CompletionCallbackReceivesCompletionsInsteadOfPoll)
{
    IbHcaHelper hh;
    Fabric f = BackToBack(hh);
    Rc c = ConnectPair(f);
    std::vector<uint64_t> ids;
    c.scq[0]->SetCompletionCallback(
        MakeCallback(+[](std::vector<uint64_t>* v, const IbWorkCompletion& wc) {
            v->push_back(wc.wrId);
        }).Bind(&ids));
    Ptr<IbMemoryRegion> a = f.hca[0]->RegisterMemory(4096, IB_ACCESS_LOCAL_WRITE);
    Ptr<IbMemoryRegion> b = f.hca[1]->RegisterMemory(4096, IB_ACCESS_REMOTE_READ);
    for (uint32_t i = 0; i < 5; ++i)
    {
        ASSERT_TRUE(c.qp[0]->PostSend(Wr(i, IbWrOpcode::RDMA_READ, Sge(a, 0, 2000), b, 0)));
    }
    Simulator::Run();
    EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(c.scq[0]->GetNumEntries(), 0u);
    EXPECT_EQ(c.scq[0]->GetTotalCompletions(), 5u);
}

} // namespace

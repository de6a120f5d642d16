/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * pcap output: the module writes ERF records (link type 197, record type 21) that the
 * machine's tshark decodes as InfiniBand. The test sends packets of many shapes (local
 * and global, every extension-header combination the wire-format layer has, odd payload
 * sizes that need padding, a raw datagram), then
 *  - reads the file back itself and checks each record's ERF header (with its timestamp),
 *    both CRCs, and the payload length, pad count, packet length and GRH PayLen against
 *    lengths worked out from what was sent;
 *  - runs tshark on it and checks DLID, SLID, VL, opcode, PSN, pad count, GRH PayLen and
 *    time of every packet against what was sent, and that tshark flags none as malformed.
 */

#include "shell-test-util.h"

#include "ns3/core-module.h"
#include "ns3/ib-aeth-header.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-deth-header.h"
#include "ns3/ib-erf-header.h"
#include "ns3/ib-grh-header.h"
#include "ns3/ib-helper.h"
#include "ns3/ib-immdt-header.h"
#include "ns3/ib-lrh-header.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet-parser.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-reth-header.h"
#include "ns3/ib-switch.h"
#include "ns3/network-module.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ns3;

namespace
{

/// What the test put on the wire for one packet.
struct Sent
{
    uint16_t dlid;
    uint16_t slid;
    uint8_t vl;
    int opcode; ///< -1 for a raw datagram (no BTH)
    uint32_t psn;
    uint32_t payload{0}; ///< payload bytes after the extension headers
    uint32_t ext{0};     ///< extension header bytes (ImmDt, RETH, AETH, DETH)
    bool global{false};  ///< has a GRH
    Time at;             ///< when it was handed to the idle port: its first bit's time
};

/// One record read back from the pcap file.
struct Record
{
    std::vector<uint8_t> erf;
    std::vector<uint8_t> packet;
};

std::vector<Record>
ReadPcap(const std::string& path, uint32_t* linkType)
{
    std::ifstream f(path, std::ios::binary);
    std::vector<uint8_t> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<Record> out;
    auto le32 = [&](size_t o) {
        return uint32_t(all[o]) | uint32_t(all[o + 1]) << 8 | uint32_t(all[o + 2]) << 16 |
               uint32_t(all[o + 3]) << 24;
    };
    if (all.size() < 24)
    {
        return out;
    }
    EXPECT_EQ(le32(0), 0xa1b2c3d4u) << "pcap magic (microsecond, little-endian)";
    *linkType = le32(20);
    size_t o = 24;
    while (o + 16 <= all.size())
    {
        const uint32_t incl = le32(o + 8);
        o += 16;
        if (o + incl > all.size() || incl < 16)
        {
            ADD_FAILURE() << "truncated pcap record at offset " << o;
            break;
        }
        Record r;
        r.erf.assign(all.begin() + o, all.begin() + o + 16);
        r.packet.assign(all.begin() + o + 16, all.begin() + o + incl);
        out.push_back(r);
        o += incl;
    }
    return out;
}

using shelltest::RunCommand;

class IbPcapTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        IbHelper::ResetLidAllocation();
        char tmpl[] = "/tmp/ib-pcap-test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        m_dir = tmpl;
    }

    void TearDown() override
    {
        Simulator::Destroy();
        if (!std::getenv("IB_TEST_KEEP_FILES")) // set it to look at the pcap afterwards
        {
            RunCommand("rm -rf '" + m_dir + "'");
        }
    }

    /**
     * Build a link, send a mix of packets from port a, write port a's pcap.
     * @return what was sent, in order
     */
    std::vector<Sent> SendMix(const std::string& pcapPath)
    {
        IbHelper helper;
        helper.SetDeviceAttribute("LinkSpeed", StringValue("HDR"));
        NodeContainer nodes;
        nodes.Create(2);
        NetDeviceContainer d = helper.Install(nodes.Get(0), nodes.Get(1));
        Ptr<IbNetDevice> a = DynamicCast<IbNetDevice>(d.Get(0));
        Ptr<IbNetDevice> b = DynamicCast<IbNetDevice>(d.Get(1));
        helper.EnablePcap(pcapPath, a, false, true);

        std::vector<Sent> sent;
        uint32_t psn = 0xFFFFF0; // crosses the 24-bit wrap
        const std::vector<uint32_t> payloads = {0, 1, 2, 3, 5, 64, 255, 256, 1000, 4093, 4096};
        const std::vector<uint8_t> opcodes = {IbOpcode::RC_SEND_ONLY,
                                              IbOpcode::RC_SEND_FIRST,
                                              IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE,
                                              IbOpcode::RC_RDMA_WRITE_ONLY,
                                              IbOpcode::RC_RDMA_WRITE_MIDDLE,
                                              IbOpcode::RC_ACKNOWLEDGE,
                                              IbOpcode::UD_SEND_ONLY};
        Time t = MicroSeconds(1);
        uint32_t i = 0;
        for (uint8_t op : opcodes)
        {
            for (uint32_t pl : payloads)
            {
                const bool global = (i % 3) == 2;
                const uint8_t sl = i % 8;
                const uint32_t payload = (op == IbOpcode::RC_ACKNOWLEDGE) ? 0 : pl;
                Ptr<Packet> p = Create<Packet>(payload);
                // Extension header sizes from IBA 9.3 (ImmDt 4, RETH 16, AETH 4, DETH 8).
                const uint32_t ext = op == IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE ? 4
                                     : op == IbOpcode::RC_RDMA_WRITE_ONLY        ? 16
                                     : op == IbOpcode::RC_ACKNOWLEDGE            ? 4
                                     : op == IbOpcode::UD_SEND_ONLY              ? 8
                                                                                 : 0;
                if (op == IbOpcode::RC_SEND_ONLY_WITH_IMMEDIATE)
                {
                    IbImmDtHeader imm;
                    imm.SetImmediateData(0xC0FFEE00 + i);
                    p->AddHeader(imm);
                }
                if (op == IbOpcode::RC_RDMA_WRITE_ONLY)
                {
                    IbRethHeader reth;
                    reth.SetVirtualAddress(0x7f0000001000ULL + i);
                    reth.SetRKey(0x1234 + i);
                    reth.SetDmaLength(payload);
                    p->AddHeader(reth);
                }
                if (op == IbOpcode::RC_ACKNOWLEDGE)
                {
                    IbAethHeader aeth;
                    aeth.SetSyndrome(0x1F);
                    aeth.SetMsn(i);
                    p->AddHeader(aeth);
                }
                if (op == IbOpcode::UD_SEND_ONLY)
                {
                    IbDethHeader deth;
                    deth.SetQKey(0x11111111);
                    deth.SetSrcQp(0x123);
                    p->AddHeader(deth);
                }
                IbLrhHeader lrh;
                lrh.SetSl(sl);
                lrh.SetVl(a->GetVlForSl(sl));
                lrh.SetDlid(b->GetLid());
                lrh.SetSlid(a->GetLid());
                IbBthHeader bth;
                bth.SetOpcode(op);
                bth.SetDestQp(0x200 + i);
                bth.SetPsn(psn);
                IbGrhHeader grh;
                grh.SetHopLmt(64);
                grh.SetSgid(Ipv6Address("fe80::1"));
                grh.SetDgid(Ipv6Address("fe80::2"));
                IbPacket::Seal(p, lrh, global ? &grh : nullptr, bth, payload);
                sent.push_back({b->GetLid(),
                                a->GetLid(),
                                a->GetVlForSl(sl),
                                op,
                                psn,
                                payload,
                                ext,
                                global,
                                t});
                Simulator::Schedule(t, [a, p]() { a->SendIbPacket(p); });
                t += MicroSeconds(1);
                psn = (psn + 1) & 0xFFFFFF;
                ++i;
            }
        }
        // A raw datagram carrying an ns-3 protocol.
        Simulator::Schedule(t, [a, b]() { a->Send(Create<Packet>(61), b->GetAddress(), 0x88B5); });
        sent.push_back({b->GetLid(), a->GetLid(), a->GetVlForSl(0), -1, 0, 61, 0, false, t});
        Simulator::Run();
        Simulator::Destroy(); // closes (flushes) the pcap file
        return sent;
    }

    std::string m_dir;
};

} // namespace

TEST_F(IbPcapTest, RecordsAreErfInfiniBandWithCorrectCrcs)
{
    const std::string path = m_dir + "/mix.pcap";
    const std::vector<Sent> sent = SendMix(path);
    uint32_t linkType = 0;
    const std::vector<Record> records = ReadPcap(path, &linkType);
    EXPECT_EQ(linkType, 197u);
    ASSERT_EQ(records.size(), sent.size());
    for (size_t k = 0; k < records.size(); ++k)
    {
        const Record& r = records[k];
        const uint32_t len = r.packet.size();
        EXPECT_EQ(r.erf[8], 21) << "ERF type InfiniBand";
        EXPECT_EQ(r.erf[9], 0x04) << "ERF flags: varying length";
        EXPECT_EQ((r.erf[10] << 8) | r.erf[11], int(16 + len)) << "rlen";
        EXPECT_EQ((r.erf[14] << 8) | r.erf[15], int(len)) << "wlen";
        // ERF timestamp: little-endian 32.32 fixed point, seconds and binary fraction.
        uint64_t stamp = 0;
        for (int byte = 7; byte >= 0; --byte)
        {
            stamp = (stamp << 8) | r.erf[byte];
        }
        const double seconds = (stamp >> 32) + (stamp & 0xFFFFFFFFu) / 4294967296.0;
        EXPECT_NEAR(seconds, sent[k].at.GetSeconds(), 0.5e-9) << "record " << k << " timestamp";
        IbPacketParser parser;
        std::string error;
        std::ostringstream hex;
        for (uint8_t byte : r.packet)
        {
            hex << std::hex << std::setw(2) << std::setfill('0') << unsigned(byte);
        }
        EXPECT_TRUE(parser.Parse(r.packet.data(), len, &error))
            << "record " << k << ": " << error << "\n"
            << hex.str();
        EXPECT_EQ(parser.m_lrh.GetDlid(), sent[k].dlid);
        EXPECT_EQ(parser.m_lrh.GetSlid(), sent[k].slid);
        EXPECT_EQ(parser.m_lrh.GetVl(), sent[k].vl);
        if (sent[k].opcode >= 0)
        {
            EXPECT_EQ(parser.m_bth.GetOpcode(), sent[k].opcode);
            EXPECT_EQ(parser.m_bth.GetPsn(), sent[k].psn);
            // Lengths from what was sent, not from the parser's own arithmetic: the pad
            // takes the payload to a multiple of 4, the packet is its headers, payload,
            // pad and CRCs, and the GRH's PayLen counts from the BTH to the ICRC.
            const uint32_t pad = (4 - sent[k].payload % 4) % 4;
            EXPECT_EQ(parser.m_payloadLength, sent[k].payload) << "record " << k;
            EXPECT_EQ(parser.m_padCount, pad) << "record " << k;
            EXPECT_EQ(parser.m_bth.GetPadCnt(), pad) << "record " << k;
            const uint32_t fromBth = 12 + sent[k].ext + sent[k].payload + pad + 4;
            EXPECT_EQ(len, 8 + (sent[k].global ? 40 : 0) + fromBth + 2) << "record " << k;
            EXPECT_EQ(parser.m_hasGrh, sent[k].global) << "record " << k;
            if (sent[k].global)
            {
                EXPECT_EQ(parser.m_grh.GetPayLen(), fromBth) << "record " << k;
            }
        }
        else
        {
            EXPECT_TRUE(parser.m_hasRawHeader);
            EXPECT_EQ(parser.m_rawEtherType, 0x88B5);
        }
    }
}

TEST_F(IbPcapTest, AsciiTraceLinesShowTheTrailersAsSent)
{
    // Packet::Print builds trailers afresh and reads them from their extent: a 2-byte
    // payload has a 2-byte pad, and a raw datagram ends in a VCRC alone. Ascii tracing
    // turns packet metadata on, which ns-3 allows only before the process makes its
    // first packet: the run happens in a child process of its own (a death-test fork
    // that exits 0 when every line is as expected and prints what is not).
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::string path = m_dir + "/trailers.tr";
    auto run = [&path]() {
        NodeContainer nodes;
        nodes.Create(2);
        IbHelper helper;
        NetDeviceContainer d = helper.Install(nodes.Get(0), nodes.Get(1));
        Ptr<IbNetDevice> a = DynamicCast<IbNetDevice>(d.Get(0));
        Ptr<IbNetDevice> b = DynamicCast<IbNetDevice>(d.Get(1));
        AsciiTraceHelper ascii;
        helper.EnableAscii(ascii.CreateFileStream(path), a);
        Simulator::Schedule(MicroSeconds(1), [a, b]() {
            Ptr<Packet> p = Create<Packet>(2);
            IbLrhHeader lrh;
            lrh.SetDlid(b->GetLid());
            lrh.SetSlid(a->GetLid());
            IbBthHeader bth;
            bth.SetOpcode(IbOpcode::RC_SEND_ONLY);
            IbPacket::Seal(p, lrh, nullptr, bth, 2);
            a->SendIbPacket(p);
        });
        Simulator::Schedule(MicroSeconds(2),
                            [a, b]() { a->Send(Create<Packet>(61), b->GetAddress(), 0x88B5); });
        Simulator::Run();
        Simulator::Destroy(); // flushes the file
        std::ifstream in(path);
        std::vector<std::string> tx;
        for (std::string line; std::getline(in, line);)
        {
            if (line.rfind("- ", 0) == 0)
            {
                tx.push_back(line);
            }
        }
        const bool ok = tx.size() == 2 &&
                        tx[0].find("ns3::IbPadTrailer (Pad: 2 bytes)") != std::string::npos &&
                        tx[0].find("Invariant CRC: 0x") != std::string::npos &&
                        tx[1].find("Invariant CRC") == std::string::npos &&
                        tx[1].find("ns3::IbCrcTrailer (Variant CRC: 0x") != std::string::npos;
        for (const std::string& line : tx)
        {
            std::cerr << line << "\n";
        }
        std::exit(ok ? 0 : 1);
    };
    EXPECT_EXIT(run(), ::testing::ExitedWithCode(0), "");
}

TEST_F(IbPcapTest, AsciiTraceOfASwitchPortShowsWhatTheSwitchDropped)
{
    // A packet to a LID the switch has no route for is dropped by the switch, not by a
    // port: the ascii trace of the port it arrived on gets its 'd' line. (A child process,
    // as above: ascii tracing turns packet metadata on.)
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::string path = m_dir + "/switch.tr";
    auto run = [&path]() {
        IbHelper helper;
        Ptr<Node> s = CreateObject<Node>();
        Ptr<IbSwitch> sw = CreateObject<IbSwitch>();
        s->AggregateObject(sw);
        Ptr<IbNetDevice> h = helper.InstallPort(CreateObject<Node>());
        Ptr<IbNetDevice> in = helper.InstallPort(s);
        sw->AddPort(in);
        helper.Connect(h, in);
        AsciiTraceHelper ascii;
        helper.EnableAscii(ascii.CreateFileStream(path), in);
        Simulator::Schedule(MicroSeconds(1), [h]() {
            Ptr<Packet> p = Create<Packet>(64);
            IbLrhHeader lrh;
            lrh.SetDlid(0x1234);
            lrh.SetSlid(h->GetLid());
            IbBthHeader bth;
            bth.SetOpcode(IbOpcode::UD_SEND_ONLY);
            IbPacket::Seal(p, lrh, nullptr, bth, 64);
            h->SendIbPacket(p);
        });
        Simulator::Run();
        const uint64_t drops = sw->GetUnknownDlidDrops();
        const std::string portPath = "/NodeList/" + std::to_string(s->GetId()) + "/DeviceList/" +
                                     std::to_string(in->GetIfIndex()) +
                                     "/$ns3::IbNetDevice/UnknownDlidDrop";
        Simulator::Destroy();
        std::ifstream in2(path);
        uint32_t dLines = 0;
        for (std::string line; std::getline(in2, line);)
        {
            std::cerr << line << "\n";
            // The line names the port the packet arrived on.
            if (line.rfind("d ", 0) == 0 && line.find(portPath) != std::string::npos &&
                line.find("Destination Local ID: 4660") != std::string::npos)
            {
                ++dLines;
            }
        }
        std::exit(drops == 1 && dLines == 1 ? 0 : 1);
    };
    EXPECT_EXIT(run(), ::testing::ExitedWithCode(0), "");
}

#ifdef IB_TSHARK_TESTS
TEST_F(IbPcapTest, TsharkDecodesEveryPacketAsSent)
{
    if (RunCommand("command -v tshark").empty())
    {
        GTEST_FAIL() << "tshark is not installed (utils/install-deps.sh installs it)";
    }
    const std::string path = m_dir + "/mix.pcap";
    const std::vector<Sent> sent = SendMix(path);
    // The payloads are virtual (zeros): Wireshark's payload heuristics would claim some of
    // them as upper-layer protocols (EoIB takes an empty UD SEND and then reports it as
    // malformed, RPC-over-RDMA takes 4- and 12-byte SENDs). Only the IB layer is checked.
    std::string base = "tshark -n -r '" + path + "' --disable-heuristic mellanox_eoib";
    for (const char* proto :
         {"rpcordma", "smc", "smb_direct", "nvme-rdma", "lnet", "iser", "infiniband_sdp", "fcoib"})
    {
        base += std::string(" --disable-protocol ") + proto;
    }
    base += " ";
    const std::string fields =
        RunCommand(base + "-T fields -E separator=, -e frame.protocols -e infiniband.lrh.dlid "
                          "-e infiniband.lrh.slid -e infiniband.lrh.vl -e infiniband.bth.opcode "
                          "-e infiniband.bth.psn -e infiniband.bth.padcnt -e infiniband.grh.paylen "
                          "-e frame.time_epoch 2>/dev/null");
    std::istringstream lines(fields);
    std::string line;
    size_t k = 0;
    // Raw datagrams (LNH 0) are decoded as InfiniBand too; only packets with a BTH have an
    // opcode and a PSN.
    while (std::getline(lines, line))
    {
        ASSERT_LT(k, sent.size()) << "tshark printed more packets than were sent";
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string item;
        while (std::getline(ss, item, ','))
        {
            f.push_back(item);
        }
        f.resize(9);
        EXPECT_NE(f[0].find("infiniband"), std::string::npos) << "packet " << k << ": " << line;
        EXPECT_EQ(std::stoul(f[1], nullptr, 0), sent[k].dlid) << line;
        EXPECT_EQ(std::stoul(f[2], nullptr, 0), sent[k].slid) << line;
        EXPECT_EQ(std::stoul(f[3], nullptr, 0), sent[k].vl) << line;
        if (sent[k].opcode >= 0)
        {
            EXPECT_EQ(std::stoul(f[4], nullptr, 0), unsigned(sent[k].opcode)) << line;
            EXPECT_EQ(std::stoul(f[5], nullptr, 0), sent[k].psn) << line;
            EXPECT_EQ(std::stoul(f[6], nullptr, 0), (4 - sent[k].payload % 4) % 4) << line;
            if (sent[k].global)
            {
                EXPECT_EQ(std::stoul(f[7], nullptr, 0),
                          12 + sent[k].ext + sent[k].payload + (4 - sent[k].payload % 4) % 4 + 4)
                    << line;
            }
        }
        // Wireshark takes the time from the ERF record (the pcap header's is in us).
        EXPECT_NEAR(std::stod(f[8]), sent[k].at.GetSeconds(), 1e-9) << line;
        ++k;
    }
    EXPECT_EQ(k, sent.size());
    const std::string malformed = RunCommand(base + "-Y _ws.malformed 2>/dev/null");
    EXPECT_TRUE(malformed.empty()) << "tshark reports malformed packets:\n" << malformed;
}
#endif

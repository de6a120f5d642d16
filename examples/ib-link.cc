/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Two hosts, one InfiniBand cable, two saturating streams on two VLs.
 *
 *   host0 [port] ==== cable ==== [port] host1
 *          SL0 -> VL0 (weight W0)
 *          SL1 -> VL1 (weight W1)
 *
 * Prints the throughput of each VL, the share the VL arbiter gave it next to the share
 * its weights ask for, and how long each VL waited for credits. With --drainRate the
 * receiving host takes packets out of its buffers more slowly than the link delivers
 * them, and credit-based flow control throttles the sender without losing a packet.
 *
 *   ./ib-link --pcap=true            writes ib-link-0-0.pcap (open it in Wireshark)
 *   ./ib-link --speed=NDR --w0=64 --w1=64 --drainRate=200Gbps
 */

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <array>
#include <iomanip>
#include <iostream>

using namespace ns3;

namespace
{

struct VlStats
{
    std::array<uint64_t, 16> bytes{};
    std::array<uint64_t, 16> payload{};
    std::array<uint64_t, 16> packets{};
};

void
OnRx(VlStats* s, Ptr<const Packet> p)
{
    const uint8_t vl = IbPacket::PeekLrh(p).GetVl();
    s->bytes[vl] += p->GetSize();
    // Payload: the packet less its headers, CRCs and the pad (BTH PadCnt) that fills the
    // payload to a multiple of 4 bytes.
    uint8_t h[10];
    p->CopyData(h, sizeof(h));
    const uint32_t pad = (h[9] >> 4) & 0x3;
    s->payload[vl] += p->GetSize() - IbPacket::WireSize(0, 0, false) - pad;
    s->packets[vl]++;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string speed = "EDR";
    std::string width = "4x";
    uint32_t payload = 4096;
    uint32_t w0 = 192;
    uint32_t w1 = 64;
    double cableMetres = 3.0;
    std::string drainRate = "0bps";
    double duration = 0.002;
    bool pcap = false;

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "speed", "link speed (SDR..XDR)", speed);
    IbOptions::Add(cmd, "width", "link width (1x, 2x, 4x, 8x, 12x)", width);
    IbOptions::Add(cmd, "payload", "payload bytes per packet (<= 4096)", payload);
    IbOptions::Add(cmd, "w0", "VL arbitration weight of VL0 (64-byte units, 1..255)", w0);
    IbOptions::Add(cmd, "w1", "VL arbitration weight of VL1 (64-byte units, 1..255)", w1);
    IbOptions::Add(cmd, "cable", "cable length in metres", cableMetres);
    IbOptions::Add(cmd,
                   "drainRate",
                   "receiver drain rate (0bps = as fast as it arrives)",
                   drainRate);
    IbOptions::Add(cmd, "duration", "simulated seconds of traffic", duration);
    IbOptions::Add(cmd,
                   "pcap",
                   "write ib-link-<node>-<ifindex>.pcap (ERF, Wireshark-readable)",
                   pcap);
    cmd.Parse(argc, argv);
    IB_REFUSE(!(duration > 0),
              "--duration=" << duration << ": traffic needs a positive number of seconds");
    IbLinkRate::Speed linkSpeed;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, linkSpeed),
               "--speed=" << speed << ": use one of " << IbLinkRate::ValidSpeedNames());
    uint8_t linkWidth;
    IB_REQUIRE(IbLinkRate::ParseWidth(width, linkWidth),
               "--width=" << width << ": use one of 1x, 2x, 4x, 8x, 12x");
    IB_REFUSE(payload < 1 || payload > 4096,
              "--payload=" << payload << ": use 1 to 4096 bytes (an IBA packet's payload)");
    IB_REFUSE(w0 < 1 || w0 > 255 || w1 < 1 || w1 > 255,
              "--w0=" << w0 << " --w1=" << w1 << ": weights are 1 to 255 (64-byte units)");
    IB_REFUSE(!(cableMetres >= 0), "--cable=" << cableMetres << ": a length is 0 m or more");

    NodeContainer hosts;
    hosts.Create(2);

    IbHelper ib;
    ib.SetDeviceAttribute("LinkSpeed", StringValue(speed));
    ib.SetDeviceAttribute("LinkWidth", StringValue(width));
    ib.SetDeviceAttribute("NumDataVls", UintegerValue(2));
    ib.SetDeviceAttribute("VlArbitrationHigh", StringValue(""));
    ib.SetDeviceAttribute("VlArbitrationLow",
                          StringValue("0:" + std::to_string(w0) + ",1:" + std::to_string(w1)));
    ib.SetChannelAttribute("Length", DoubleValue(cableMetres));
    NetDeviceContainer ports = ib.Install(hosts.Get(0), hosts.Get(1));
    Ptr<IbNetDevice> tx = DynamicCast<IbNetDevice>(ports.Get(0));
    Ptr<IbNetDevice> rx = DynamicCast<IbNetDevice>(ports.Get(1));
    DataRateValue drain;
    IB_REQUIRE(drain.DeserializeFromString(drainRate, MakeDataRateChecker()),
               "--drainRate=" << drainRate << ": not a data rate; e.g. 200Gbps, or 0bps for none");
    rx->SetAttribute("RxDrainRate", drain);

    const Time start = MicroSeconds(1);
    for (uint8_t sl : {0, 1})
    {
        IbRawTrafficHelper traffic(rx->GetLid());
        traffic.SetAttribute("Sl", UintegerValue(sl));
        traffic.SetAttribute("PayloadSize", UintegerValue(payload));
        traffic.SetAttribute("DestQp", UintegerValue(0x100 + sl));
        ApplicationContainer app = traffic.Install(tx);
        app.Start(start);
        app.Stop(start + Seconds(duration));
    }

    VlStats stats;
    rx->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&OnRx, &stats));
    if (pcap)
    {
        ib.EnablePcap("ib-link", ports.Get(0), false);
    }

    Simulator::Stop(start + Seconds(duration));
    Simulator::Run();

    const double rate = tx->GetDataRate().GetBitRate();
    std::cout << "InfiniBand link: " << speed << " " << width << " = " << rate / 1e9
              << " Gb/s data rate, cable " << cableMetres << " m, " << payload
              << " B payload per packet, " << duration * 1e3 << " ms of traffic\n";
    std::cout << "VL  weight  packets   payload Gb/s  wire Gb/s  share  weight share  "
                 "credit stall\n";
    const uint64_t totalBytes = stats.bytes[0] + stats.bytes[1];
    for (uint8_t vl : {0, 1})
    {
        const uint32_t w = vl == 0 ? w0 : w1;
        std::cout << std::setw(2) << unsigned(vl) << "  " << std::setw(6) << w << "  "
                  << std::setw(7) << stats.packets[vl] << "  " << std::fixed << std::setprecision(3)
                  << std::setw(12) << stats.payload[vl] * 8.0 / duration / 1e9 << "  "
                  << std::setw(9) << stats.bytes[vl] * 8.0 / duration / 1e9 << "  " << std::setw(5)
                  << (totalBytes ? double(stats.bytes[vl]) / totalBytes : 0.0) << "  "
                  << std::setw(12) << double(w) / (w0 + w1) << "  " << std::setw(9)
                  << tx->GetCreditStallTime(vl).GetMicroSeconds() << " us\n";
    }
    std::cout << "total wire throughput " << totalBytes * 8.0 / duration / 1e9 << " Gb/s of "
              << rate / 1e9 << " Gb/s; flow-control packets sent by the receiver: "
              << rx->GetFlowControlPacketsSent() << "; dropped: " << rx->GetRxCrcErrors() << "\n";
    if (pcap)
    {
        std::cout << "pcap written: ib-link-" << tx->GetNode()->GetId() << "-" << tx->GetIfIndex()
                  << ".pcap (tshark -r ib-link-0-0.pcap)\n";
    }
    Simulator::Destroy();
    return 0;
}

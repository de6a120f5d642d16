/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The same TCP workload on an InfiniBand fabric (IP over IB) and on an IPv4-routed
 * Ethernet fabric of the same fat-tree shape and link rates, side by side in one
 * simulation: the same hosts have an IPoIB interface (10.1.0.0/16) and an Ethernet
 * (point-to-point) NIC (10.2.0.0/16), and each flow picks its fabric by its destination
 * address.
 *
 * Workload: all-pairs bulk transfer (every host sends --bytes to every other host with
 * BulkSendApplication over TCP), on both fabrics at the same time (they share no link).
 *
 *   ./ib-vs-ethernet
 *   ./ib-vs-ethernet --hosts=16 --radix=8 --bytes=2000000 --speed=HDR
 *   ./ib-vs-ethernet --pcap=true      (ib-vs-ethernet-ib-*.pcap, ib-vs-ethernet-eth-*.pcap)
 *   ./ib-vs-ethernet --flowmonXml=flows.xml   (FlowMonitor's per-flow statistics)
 *   ./ib-vs-ethernet --addressMode=Eui64   (IPoIB with 8-byte hardware addresses: ARP
 *                                          works also on an ns-3 built with asserts)
 *
 * Prints, per fabric, the completion time of the workload, its aggregate throughput and
 * FlowMonitor statistics of the data flows.
 */

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/flow-monitor-helper.h"
#include "ns3/infiniband-module.h"
#include "ns3/internet-module.h"
#include "ns3/ipv4-flow-classifier.h"
#include "ns3/network-module.h"

#include <fstream>
#include <iomanip>
#include <iostream>

using namespace ns3;

namespace
{

/// Per-fabric progress of the workload.
struct FabricProgress
{
    uint64_t expected{0}; ///< bytes the sinks must receive
    uint64_t received{0}; ///< bytes received so far
    Time done;            ///< when the last byte arrived
};

void
SinkRx(FabricProgress* f, Ptr<const Packet> p, const Address&)
{
    f->received += p->GetSize();
    if (f->received >= f->expected && f->done.IsZero())
    {
        f->done = Simulator::Now();
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t hosts = 8;
    uint32_t radix = 4;
    uint64_t bytes = 1000000;
    uint32_t mss = 1448;
    std::string speed = "EDR";
    bool pcap = false;
    double stopS = 1.0;
    std::string flowmonXml;
#ifdef IB_NS3_CORE_ASSERTS
    // ns-3 built with asserts (an in-tree debug or default build) asserts in ArpHeader on
    // IPoIB's 20-byte hardware addresses: ARP works only with Eui64 there.
    std::string addressMode = "Eui64";
#else
    std::string addressMode = "Ipoib20";
#endif
    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "hosts", "number of hosts", hosts);
    IbOptions::Add(cmd, "radix", "switch radix of the two-level fat tree", radix);
    IbOptions::Add(cmd, "bytes", "bytes each host sends to each other host", bytes);
    IbOptions::Add(cmd, "mss", "TCP segment size on both fabrics (1448 fits a 1500-byte MTU)", mss);
    IbOptions::Add(cmd,
                   "speed",
                   "IB link speed (the Ethernet links get the same data rate)",
                   speed);
    IbOptions::Add(cmd, "pcap", "write IB and Ethernet pcaps of the hosts' ports", pcap);
    IbOptions::Add(cmd, "stop", "simulation stop time in seconds (positive)", stopS);
    IbOptions::Add(cmd,
                   "flowmonXml",
                   "write FlowMonitor's per-flow statistics to this XML file",
                   flowmonXml);
    IbOptions::Add(cmd,
                   "addressMode",
                   "IPoIB hardware address mode (IpoibNetDevice::HardwareAddressMode): Ipoib20 "
                   "(RFC 4391, 20 bytes; the default unless ns-3 is built with asserts) or "
                   "Eui64 (8 bytes)",
                   addressMode);
    cmd.Parse(argc, argv);
    IB_REQUIRE(addressMode == "Ipoib20" || addressMode == "Eui64",
               "--addressMode=" << addressMode << ": use Ipoib20 or Eui64");
#ifdef IB_NS3_CORE_ASSERTS
    IB_REFUSE(addressMode == "Ipoib20",
              "--addressMode=Ipoib20: this ns-3 is built with asserts, and its ArpHeader "
              "asserts on IPoIB's 20-byte hardware addresses; use --addressMode=Eui64 (the "
              "default here) or an ns-3 built without asserts (the optimized profile)");
#endif
    IB_REQUIRE(stopS > 0, "--stop=" << stopS << ": the stop time must be positive");
    // BulkSend's MaxBytes=0 means "no limit": a 0-byte transfer would measure nothing.
    IB_REFUSE(bytes == 0, "--bytes=0: each host must send at least 1 byte");
    IB_REFUSE(bytes > (uint64_t{1} << 40),
              "--bytes=" << bytes << ": give at most 1 TiB (" << (uint64_t{1} << 40)
                         << ") per pair of hosts");
    if (!flowmonXml.empty())
    {
        std::ofstream probe(flowmonXml);
        IB_REQUIRE(probe, "--flowmonXml=" << flowmonXml << ": cannot write the file");
    }
    IB_REFUSE(hosts < 2, "--hosts=" << hosts << ": the all-to-all needs at least 2 hosts");

    IbLinkRate::Speed sp;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, sp),
               "unknown speed " << speed << "; valid: " << IbLinkRate::ValidSpeedNames());
    // The same segments on both fabrics: they must fit the smaller MTU, Ethernet's 1500
    // bytes less IPv4 (20), TCP (20) and the timestamp option ns-3's TCP sends (12).
    IB_REFUSE(mss == 0 || mss > 1448,
              "--mss=" << mss
                       << ": a TCP segment must carry 1 to 1448 bytes to fit the Ethernet "
                          "links' 1500-byte MTU with its IPv4 and TCP headers");
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 20));
    // ns-3 delays each ARP request by up to 10 ms by default (IPoIB uses ARP).
    Config::SetDefault("ns3::ArpL3Protocol::RequestJitter",
                       StringValue("ns3::ConstantRandomVariable[Constant=0.0]"));

    IbEthernetSideBySideHelper helper;
    helper.GetIpoibHelper().SetDeviceAttribute("HardwareAddressMode", StringValue(addressMode));
    IbEthernetSideBySide s =
        helper.Build(IbTopologyBuilder::FatTree2Level(radix, hosts, 1.0, sp, 4));
    const uint32_t n = s.GetNHosts();
    const DataRate rate = IbLinkRate::GetDataRate(sp, 4);
    std::cout << n << " hosts, " << s.ib.switches.GetN() << " IB switches / " << s.routers.GetN()
              << " IPv4 routers, links " << rate.GetBitRate() / 1e9 << " Gb/s on both fabrics\n"
              << "IPoIB MTU " << s.ipoibDevices.Get(0)->GetMtu() << ", Ethernet MTU "
              << s.ethHostDevices.Get(0)->GetMtu() << ", TCP MSS " << mss << "\n";

    // Workload: one sink per host and fabric, one BulkSend per ordered pair and fabric.
    FabricProgress progress[2];
    const uint16_t port[2] = {5000, 6000};
    const char* name[2] = {"InfiniBand (IPoIB)", "Ethernet (p2p, routed)"};
    for (uint32_t f = 0; f < 2; ++f)
    {
        progress[f].expected = bytes * n * (n - 1);
        for (uint32_t j = 0; j < n; ++j)
        {
            const Ipv4Address dst = f == 0 ? s.IbAddress(j) : s.EthAddress(j);
            PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(dst, port[f]));
            ApplicationContainer a = sink.Install(s.ib.hosts.Get(j));
            a.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&SinkRx, &progress[f]));
            for (uint32_t i = 0; i < n; ++i)
            {
                if (i == j)
                {
                    continue;
                }
                BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dst, port[f]));
                bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
                bulk.Install(s.ib.hosts.Get(i)).Start(MicroSeconds(10));
            }
        }
    }
    if (pcap)
    {
        helper.GetIbFabricHelper().GetIbHelper().EnablePcap("ib-vs-ethernet-ib", s.ib.hostPorts);
        helper.GetEthernetHelper().EnablePcap("ib-vs-ethernet-eth", s.ethHostDevices);
    }
    FlowMonitorHelper fmh;
    Ptr<FlowMonitor> fm = fmh.Install(s.ib.hosts);
    Simulator::Stop(Seconds(stopS));
    Simulator::Run();
    fm->CheckForLostPackets();
    if (!flowmonXml.empty())
    {
        fm->SerializeToXmlFile(flowmonXml, true, true);
    }

    // FlowMonitor statistics of the data flows (to the sinks' ports), per fabric.
    struct Agg
    {
        uint32_t flows{0};
        uint64_t txPackets{0};
        uint64_t rxPackets{0};
        uint64_t rxBytes{0};
        uint32_t lost{0};
        Time delaySum;
        double sumFlowThroughput{0};
        double minFlowThroughput{1e300};
    } agg[2];

    Ptr<Ipv4FlowClassifier> cls = DynamicCast<Ipv4FlowClassifier>(fmh.GetClassifier());
    for (const auto& [id, st] : fm->GetFlowStats())
    {
        const auto t = cls->FindFlow(id);
        for (uint32_t f = 0; f < 2; ++f)
        {
            if (t.destinationPort != port[f])
            {
                continue;
            }
            Agg& a = agg[f];
            ++a.flows;
            a.txPackets += st.txPackets;
            a.rxPackets += st.rxPackets;
            a.rxBytes += st.rxBytes;
            a.lost += st.lostPackets;
            a.delaySum += st.delaySum;
            const double dur = (st.timeLastRxPacket - st.timeFirstTxPacket).GetSeconds();
            const double thr = dur > 0 ? st.rxBytes * 8.0 / dur : 0;
            a.sumFlowThroughput += thr;
            a.minFlowThroughput = std::min(a.minFlowThroughput, thr);
        }
    }
    std::cout << std::fixed << std::setprecision(3);
    for (uint32_t f = 0; f < 2; ++f)
    {
        const FabricProgress& p = progress[f];
        const Agg& a = agg[f];
        std::cout << "\n" << name[f] << "\n";
        if (p.done.IsZero())
        {
            std::cout << "  not complete by " << stopS << " s: " << p.received << " of "
                      << p.expected << " bytes\n";
        }
        else
        {
            const double t = (p.done - MicroSeconds(10)).GetSeconds();
            std::cout << "  completion time    " << t * 1e3 << " ms\n"
                      << "  aggregate goodput  " << p.expected * 8.0 / t / 1e9 << " Gb/s ("
                      << p.expected * 8.0 / t / 1e9 / n << " Gb/s per host)\n";
        }
        std::cout << "  FlowMonitor: " << a.flows << " data flows, " << a.txPackets
                  << " packets sent, " << a.rxPackets << " received, " << a.lost << " lost\n"
                  << "  mean one-way delay "
                  << (a.rxPackets ? a.delaySum.GetMicroSeconds() / double(a.rxPackets) : 0)
                  << " us\n"
                  << "  per-flow throughput mean "
                  << (a.flows ? a.sumFlowThroughput / a.flows / 1e9 : 0) << " Gb/s, min "
                  << (a.flows ? a.minFlowThroughput / 1e9 : 0) << " Gb/s\n";
    }
    Simulator::Destroy();
    return 0;
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Congestion spreading on InfiniBand and IBA congestion control (annex A10).
 *
 * Two switches joined by one cable. s1 holds incast sender A and victim sender X; s2
 * holds incast senders B1..B(n-1), the incast receiver R and the victim receiver V. The n
 * incast flows (RC WRITEs) share R's link; the victim X -> V shares only the cable with A.
 *
 *   ./ib-incast-victim                      n = 4, with and without congestion control
 *   ./ib-incast-victim --n=8 --speed=HDR --us=6000
 *   ./ib-incast-victim --cc=on --timer=50 --markingRate=0
 *
 * Without congestion control the credits back up from R's port over the cable: the victim
 * gets what A gets, C / n, though V's link is idle (head-of-line blocking in s2's input
 * buffer). With it, R's port marks FECN, R answers with CNPs, the incast senders raise
 * their CCTI until the table's delay brings them to about C / n, and the victim gets back
 * toward its max-min share, C - C / n.
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <iomanip>
#include <iostream>
#include <map>

using namespace ns3;

namespace
{

/// One RC WRITE that never ends within the run.
struct Flow
{
    std::string name;         ///< "X->V", "A->R", ...
    Ptr<IbQueuePair> qp[2];   ///< requester, responder
    uint64_t startPackets{0}; ///< responder packets at the window's start
};

/// Results of one run.
struct Result
{
    std::vector<double> goodput; ///< per flow, bit/s (victim first)
    uint64_t marks{0};           ///< FECN marks in both switches
    uint64_t cnps{0};            ///< CNPs R sent
    uint16_t maxCcti{0};         ///< largest CCTI an incast sender reached
    uint16_t victimCcti{0};      ///< largest CCTI the victim sender reached
    uint64_t marksS1{0};         ///< FECN marks in s1
};

/**
 * Build the fabric, run the flows, measure.
 * @param cc congestion control on
 * @param n incast senders
 * @param speed link speed
 * @param from window start
 * @param to end of the run
 * @param timer CcCctiTimer (0: default)
 * @param markingRate CcMarkingRate (negative: default)
 * @param cct CcCct (empty: default)
 * @return the result
 */
Result
Run(bool cc,
    uint32_t n,
    IbLinkRate::Speed speed,
    Time from,
    Time to,
    uint32_t timer,
    int markingRate,
    const std::string& cct)
{
    IbTopology t;
    const uint32_t s1 = t.AddSwitch(3, "s1");
    const uint32_t s2 = t.AddSwitch(n + 2, "s2");
    t.ConnectNextFree(s1, s2, speed, 4);
    std::vector<std::pair<std::string, uint32_t>> cas = {{"A", s1}, {"X", s1}};
    for (uint32_t i = 1; i < n; ++i)
    {
        cas.emplace_back("B" + std::to_string(i), s2);
    }
    cas.emplace_back("R", s2);
    cas.emplace_back("V", s2);
    for (const auto& [name, sw] : cas)
    {
        t.ConnectNextFree(t.AddCa(1, name), sw, speed, 4);
    }
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("CongestionControl", BooleanValue(cc));
    if (timer != 0)
    {
        fh.SetSubnetManagerAttribute("CcCctiTimer", UintegerValue(timer));
    }
    if (markingRate >= 0)
    {
        fh.SetSubnetManagerAttribute("CcMarkingRate", UintegerValue(markingRate));
    }
    if (!cct.empty())
    {
        fh.SetSubnetManagerAttribute("CcCct", StringValue(cct));
    }
    IbFabric fab = fh.Build(t);
    IbHcaHelper hh;
    std::map<std::string, Ptr<IbHca>> hca;
    for (uint32_t i = 0; i < fab.hosts.GetN(); ++i)
    {
        hca[cas[i].first] = hh.Install(fab.hosts.Get(i));
    }
    std::vector<Flow> flows;
    auto start = [&](const std::string& a, const std::string& b) {
        Flow fl;
        fl.name = a + "->" + b;
        Ptr<IbCompletionQueue> cqa = hca[a]->CreateCq();
        Ptr<IbCompletionQueue> cqb = hca[b]->CreateCq();
        fl.qp[0] = hca[a]->CreateQp(IbQpType::RC, cqa, cqa);
        fl.qp[1] = hca[b]->CreateQp(IbQpType::RC, cqb, cqb);
        IbHcaHelper::ConnectRc(fl.qp[0], fl.qp[1], fab.subnetManager);
        const uint64_t bytes = 1ULL << 31;
        Ptr<IbMemoryRegion> src = hca[a]->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE);
        Ptr<IbMemoryRegion> dst =
            hca[b]->RegisterMemory(bytes, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
        NS_ABORT_UNLESS(fl.qp[0]->PostSend(src->WriteTo(*dst, static_cast<uint32_t>(bytes), 1)));
        flows.push_back(fl);
    };
    start("X", "V");
    start("A", "R");
    for (uint32_t i = 1; i < n; ++i)
    {
        start("B" + std::to_string(i), "R");
    }
    Result r;
    if (cc)
    {
        hca["A"]->TraceConnectWithoutContext("CctiChanged",
                                             Callback<void, uint32_t, uint8_t, uint16_t, uint16_t>(
                                                 [&r](uint32_t, uint8_t, uint16_t, uint16_t now) {
                                                     r.maxCcti = std::max(r.maxCcti, now);
                                                 }));
        hca["X"]->TraceConnectWithoutContext("CctiChanged",
                                             Callback<void, uint32_t, uint8_t, uint16_t, uint16_t>(
                                                 [&r](uint32_t, uint8_t, uint16_t, uint16_t now) {
                                                     r.victimCcti = std::max(r.victimCcti, now);
                                                 }));
    }
    Simulator::Schedule(from, [&flows]() {
        for (Flow& fl : flows)
        {
            fl.startPackets = fl.qp[1]->GetCounters().packetsReceived;
        }
    });
    Simulator::Stop(to);
    Simulator::Run();
    const double mtu = 4096; // the IbQpAttr default path MTU
    for (const Flow& fl : flows)
    {
        const uint64_t pkts = fl.qp[1]->GetCounters().packetsReceived - fl.startPackets;
        r.goodput.push_back(pkts * mtu * 8 / (to - from).GetSeconds());
    }
    for (uint32_t s : {s1, s2})
    {
        r.marks += fab.switchOf[s]->GetFecnMarks();
    }
    r.cnps = hca["R"]->GetCnpsSent();
    r.marksS1 = fab.switchOf[s1]->GetFecnMarks();
    Simulator::Destroy();
    return r;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t n = 4;
    std::string speed = "EDR";
    std::string ccMode = "both";
    double fromUs = 1500;
    double us = 4000;
    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "n", "incast senders (1 on s1, n - 1 on s2), at least 2", n);
    IbOptions::Add(cmd, "speed", "link speed of every cable (SDR..XDR), 4x", speed);
    IbOptions::Add(cmd, "cc", "congestion control: on, off or both", ccMode);
    IbOptions::Add(cmd, "from", "start of the measurement window, us", fromUs);
    IbOptions::Add(cmd, "us", "end of the run, us", us);
    uint32_t timer = 0;
    int markingRate = -1;
    std::string cct;
    IbOptions::Add(cmd, "cct", "CcCct (empty: the default table)", cct);
    IbOptions::Add(cmd, "timer", "CcCctiTimer (1.024 us units; 0: the default)", timer);
    IbOptions::Add(cmd, "markingRate", "CcMarkingRate (-1: the default)", markingRate);
    cmd.Parse(argc, argv);
    IB_REFUSE(n < 2 || n > 250, "--n=" << n << ": give 2 to 250 incast senders");
    IB_REQUIRE(ccMode == "on" || ccMode == "off" || ccMode == "both",
               "--cc=" << ccMode << ": use on, off or both");
    IB_REQUIRE(fromUs >= 0 && us > fromUs,
               "--from=" << fromUs << " --us=" << us << ": need 0 <= from < us");
    IbLinkRate::Speed s;
    IB_REQUIRE(IbLinkRate::ParseSpeed(speed, s),
               "--speed=" << speed << ": use one of " << IbLinkRate::ValidSpeedNames());

    const double c =
        IbLinkRate::GetDataRate(s, 4).GetBitRate() * 4096.0 / IbPacket::WireSize(4096, 0, false);
    std::cout << "incast " << n << ":1 and a victim, 4x" << speed
              << " (payload rate C = " << c / 1e9 << " Gb/s), window " << fromUs << ".." << us
              << " us\n"
              << "head-of-line share C/n = " << c / n / 1e9 << " Gb/s, victim's max-min share "
              << "C - C/n = " << (c - c / n) / 1e9 << " Gb/s\n";
    std::cout << std::fixed << std::setprecision(2);
    for (bool cc : {false, true})
    {
        if ((cc && ccMode == "off") || (!cc && ccMode == "on"))
        {
            continue;
        }
        const Result r =
            Run(cc, n, s, MicroSeconds(fromUs), MicroSeconds(us), timer, markingRate, cct);
        double incast = 0;
        for (size_t i = 1; i < r.goodput.size(); ++i)
        {
            incast += r.goodput[i];
        }
        std::cout << (cc ? "with congestion control:    " : "without congestion control: ")
                  << "victim " << r.goodput[0] / 1e9 << " Gb/s ("
                  << 100 * r.goodput[0] / (c - c / n) << " % of max-min), incast total "
                  << incast / 1e9 << " Gb/s (A " << r.goodput[1] / 1e9 << ")";
        if (cc)
        {
            std::cout << ", FECN marks " << r.marks << " (s1 " << r.marksS1 << "), CNPs to the "
                      << "incast " << r.cnps << ", top CCTI: A " << r.maxCcti << ", X "
                      << r.victimCcti;
        }
        std::cout << "\n";
    }
    return 0;
}

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Load a real fabric description (the output of `ibnetdiscover`, or ibsim's simplified
 * topology format), build it, bring it up with a subnet manager and run traffic on it.
 *
 *   ./ib-ibnetdiscover                                  the shipped sample fabric
 *   ./ib-ibnetdiscover --topology=my-cluster.ibnd --routing=updn --pattern=all-to-all
 *   ./ib-ibnetdiscover --lftDump=lfts.dump              also write the LFTs as OpenSM would
 *
 * A malformed file is refused with its name, the line number and what was expected.
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/network-module.h"

#include <fstream>
#include <iostream>
#include <map>

using namespace ns3;

int
main(int argc, char* argv[])
{
#ifdef IB_SOURCE_DIR
    const std::string here = std::string(IB_SOURCE_DIR) + "/examples"; // this module's CMake
#else
    // In an ns-3 tree, whose build gives the compiler absolute source paths.
    const std::string here = std::string(__FILE__).substr(0, std::string(__FILE__).rfind('/'));
#endif
    std::string topologyFile = here + "/topologies/two-level-fat-tree.ibnd";
    std::string routing = "updn";
    std::string pattern = "permutation";
    uint32_t payload = 4096;
    double durationUs = 100;
    uint32_t seed = 1;
    std::string lftDump;
    bool allowCreditLoop = false;

    CommandLine cmd(__FILE__);
    IbOptions::Add(cmd, "topology", "ibnetdiscover or ibsim topology file", topologyFile);
    IbOptions::Add(cmd, "routing", "routing engine: minhop, updn, ftree, dfsssp", routing);
    IbOptions::Add(cmd, "pattern", "permutation, shift, all-to-all or incast", pattern);
    IbOptions::Add(cmd, "payload", "payload bytes per packet", payload);
    IbOptions::Add(cmd, "duration", "simulated microseconds of traffic", durationUs);
    IbOptions::Add(cmd, "seed", "seed of the random permutation", seed);
    IbOptions::Add(cmd,
                   "lftDump",
                   "write the forwarding tables (opensm-lfts.dump format) here",
                   lftDump);
    IbOptions::Add(cmd,
                   "allowCreditLoop",
                   "run routes with a credit loop anyway (a deadlock is then reported and "
                   "the program exits with an error if one happens)",
                   allowCreditLoop);
    cmd.Parse(argc, argv);
    IB_REQUIRE(IbSubnetManager::IsRoutingEngine(routing) && routing != "file",
               "--routing=" << routing << ": use minhop, updn, ftree or dfsssp");
    IB_REFUSE(!(durationUs > 0),
              "--duration=" << durationUs << ": traffic needs a positive number of us");
    IB_REFUSE(payload == 0, "--payload must be at least 1 byte (up to the MTU)");

    IbTopology topology;
    std::string error;
    if (!IbNetDiscoverReader::Read(topologyFile, topology, &error))
    {
        std::cerr << "cannot load the topology: " << error << "\n";
        return 1;
    }
    std::map<std::string, uint32_t> linkKinds;
    for (uint32_t i = 0; i < topology.GetNNodes(); ++i)
    {
        for (uint32_t p = 1; p < topology.GetNode(i).ports.size(); ++p)
        {
            const auto& port = topology.GetNode(i).ports[p];
            if (port.peerNode > static_cast<int32_t>(i) ||
                (port.peerNode == static_cast<int32_t>(i) && port.peerPort > p))
            {
                linkKinds[std::to_string(port.width) + "x" + IbLinkRate::SpeedName(port.speed)]++;
            }
        }
    }
    std::cout << topologyFile << ": " << topology.GetSwitches().size() << " switches, "
              << topology.GetCas().size() << " channel adapters, " << topology.GetNLinks()
              << " cables (";
    for (auto it = linkKinds.begin(); it != linkKinds.end(); ++it)
    {
        std::cout << (it == linkKinds.begin() ? "" : ", ") << it->second << " x " << it->first;
    }
    std::cout << ")\n";

    IbFabricHelper fabricHelper;
    fabricHelper.SetDeviceAttribute("NumDataVls", UintegerValue(routing == "dfsssp" ? 8 : 1));
    fabricHelper.SetSubnetManagerAttribute("RoutingEngine", StringValue(routing));
    IbFabric fabric = fabricHelper.Build(topology);
    if (!lftDump.empty())
    {
        std::ofstream out(lftDump);
        fabric.subnetManager->WriteLfts(out);
        IB_REQUIRE(out, "--lftDump=" << lftDump << ": cannot write the file");
        std::cout << "forwarding tables written to " << lftDump << "\n";
    }
    const auto cycles = fabric.subnetManager->CheckDeadlocks();
    std::cout << "routing " << routing << ": "
              << (cycles.empty() ? "deadlock-free" : "credit loop: " + cycles.front()) << "\n";
    IB_REFUSE(!cycles.empty() && !allowCreditLoop,
              "--routing=" << routing << " gives this topology a credit loop (" << cycles.front()
                           << "), which can deadlock the fabric; use a deadlock-free engine "
                              "(updn, or dfsssp with its VLs), or --allowCreditLoop=true to "
                              "run it and see");

    const Time start = MicroSeconds(1);
    const Time stop = start + MicroSeconds(durationUs);
    ObjectFactory flowAttributes;
    flowAttributes.SetTypeId("ns3::IbRawTrafficApplication");
    flowAttributes.Set("PayloadSize", UintegerValue(payload));
    const auto flows = IbTrafficPattern::ByName(pattern,
                                                fabric.hosts.GetN(),
                                                IbTrafficPattern::ReplicationSeed(seed));
    ApplicationContainer apps = IbTrafficPattern::InstallRawFlows(fabric, flows, flowAttributes);
    apps.Start(start);
    apps.Stop(stop);
    IbFabricStats stats;
    stats.Install(fabric, start + MicroSeconds(durationUs / 10));

    std::cout << "path records (host 0 to each host):\n";
    for (uint32_t d = 1; d < fabric.hosts.GetN() && d < 6; ++d)
    {
        const IbPathRecord pr =
            fabric.subnetManager->GetPathRecord(fabric.HostPort(0), fabric.HostPort(d));
        std::cout << "  LID " << pr.slid << " -> LID " << pr.dlid << ": " << pr.hops
                  << " switches, SL " << unsigned(pr.sl) << ", MTU " << pr.mtu << ", "
                  << pr.rateBps / 1e9 << " Gb/s\n";
    }

    Simulator::Stop(stop);
    Ptr<IbDeadlockWatchdog> watchdog = CreateObject<IbDeadlockWatchdog>();
    watchdog->Install(fabric);
    Simulator::Run();
    IB_REFUSE(watchdog->IsDeadlocked(), watchdog->GetReport());
    std::cout << pattern << " traffic, " << flows.size() << " flows, " << durationUs
              << " us (rates over the last " << durationUs * 0.9 << " us: the first tenth is "
              << "warm-up):\n";
    stats.Print(std::cout, stop);
    Simulator::Destroy();
    return 0;
}

// Your first simulation: ib_write_bw between two hosts on different leaves of a 2-level fat
// tree (radix 8, 16 hosts).
// Standalone: `cmake --build build` builds every scratch/*.cc as build/scratch/<name>.
#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"

using namespace ns3;

int
main(int argc, char* argv[])
{
    CommandLine cmd(__FILE__);
    cmd.Parse(argc, argv);
    IbFabric fabric = IbFabricHelper().Build(IbTopologyBuilder::FatTree2Level(8, 16));
    IbHcaHelper().Install(fabric.hosts);
    IbPerftestHelper perf;
    perf.SetAttribute("Test", StringValue("write_bw")); // 64 KiB messages, as perftest
    ApplicationContainer apps =
        perf.Install(fabric.hosts.Get(0), fabric.hosts.Get(15), fabric.subnetManager);
    apps.Start(MicroSeconds(1));
    Simulator::Run();
    auto client = DynamicCast<IbPerftestApplication>(apps.Get(0));
    for (const IbPerftestResult& r : client->GetAllResults())
    {
        std::cout << r.bytes << " B: " << r.bwAvgGbps << " Gb/s\n";
    }
    Simulator::Destroy();
    return 0;
}

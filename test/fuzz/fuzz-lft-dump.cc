/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target: the LFT dump reader (IbLftDump::Read, opensm-lfts.dump format) against
 * a fixed fabric: a two-level fat tree with its LIDs assigned. Any input must be read or
 * refused with a "file:line:" message, never a crash, an abort or undefined behaviour.
 */

#include "ns3/ib-lft-dump.h"
#include "ns3/ib-lid-assigner.h"
#include "ns3/ib-routing-engine.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-topology-builder.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace
{

/// @return the routing problem of a 2-level fat tree (radix 8, 16 hosts), LIDs assigned
const ns3::IbRoutingProblem&
Problem()
{
    static const ns3::IbTopology topology =
        ns3::IbTopologyBuilder::FatTree2Level(8, 16, 1.0, ns3::IbLinkRate::HDR, 4);
    static const ns3::IbRoutingProblem problem = ns3::IbLidAssigner::Assign(topology, 0, 1);
    return problem;
}

} // namespace

/// With IB_FUZZ_SEED_DIR set, write the fabric's minhop tables there as a seed
/// (utils/fuzz.sh does, so that the fuzzer starts from a dump this fabric accepts).
extern "C" int
LLVMFuzzerInitialize(int* argc, char*** argv)
{
    const char* dir = std::getenv("IB_FUZZ_SEED_DIR");
    if (dir != nullptr)
    {
        ns3::IbRoutingTables tables;
        std::string error;
        if (ns3::IbSubnetManager::CreateRoutingEngine("minhop", "fuzz")
                ->Route(Problem(), tables, &error))
        {
            std::ofstream out(std::string(dir) + "/minhop.dump");
            ns3::IbLftDump::Write(out, Problem(), tables);
        }
    }
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    ns3::IbRoutingTables tables;
    std::string error;
    if (!ns3::IbLftDump::Read(in, "fuzz.dump", Problem(), tables, &error) &&
        error.compare(0, 10, "fuzz.dump:") != 0)
    {
        std::abort(); // a refusal must name the file and line
    }
    return 0;
}

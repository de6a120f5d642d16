/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-profile-helper.h"

#include "ns3/config.h"
#include "ns3/log.h"
#include "ns3/pcie-link.h"
#include "ns3/pointer.h"
#include "ns3/string.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbProfileHelper");

namespace
{

// Sources, as doc/validation-sources.md section 7 lists them.
const char* const kPcieRead = "pcie-bench raw data (SIGCOMM 2018), 64 B DMA read median, "
                              "Gen3 x8, Xeon E5-2630 v4 [D]; validation-sources 3.1";
const char* const kPcieReadReused = "the Gen3 pcie-bench 64 B DMA read median (no Gen4/Gen5 "
                                    "DMA latency published) [D]; validation-sources 3.1";
const char* const kPcieWrite = "derived: pcie-bench write-then-read 773 ns minus read 546 ns, "
                               "64 B [D]; validation-sources 3.1";
const char* const kMmio = "147 ns to 'poke the NIC' (doorbell), RAMCloud's RPC latency "
                          "breakdown, Intel e1000 on PCIe [M]; validation-sources 7";
const char* const kMps = "256 B, the MPS ConnectX adapters advertise and servers negotiate "
                         "[P]; validation-sources 7";
const char* const kMrrs = "512 B, pcie-bench's model default [D]; validation-sources 7";
const char* const kRcb = "64 B read completion boundary, pcie-bench's model default [D]; "
                         "validation-sources 7";
const char* const kBlueFlame = "256 B BlueFlame register of mlx5 (kernel MLX5_BF_SIZE, UCX) "
                               "[P]; validation-sources 7";
const char* const kInline = "236 B, perftest's largest RC inline default, which ConnectX "
                            "accepts [P]; validation-sources 7";
const char* const kPipeline = "adapter pipeline: no published figure; the PCIe stages model "
                              "the host side, the adapter's own processing is left out [U]";
const char* const kFec = "RS(544,514) (KP4) FEC: 100 ns, the low end of Ethernet transceiver "
                         "specifications for the same code; NVIDIA publishes none [S]; "
                         "validation-sources 7";
const char* const kQuantum = "QM8790 product brief 'sub-130ns' (quoted second-hand) [S]; "
                             "validation-sources 2";
const char* const kNcclLaunch = "about 3 us per operation that CUDA graphs remove: a user's "
                                "measurement, NVIDIA/nccl #1984 (H800) [M]; "
                                "validation-sources 7";
const char* const kNcclPost = "NCCL's own tuning model: network post overhead 1 us on Intel "
                              "x86 (NCCL_NET_OVERHEAD, src/graph/tuning.cc) [C]; "
                              "validation-sources 7";
const char* const kMpich = "MPICH allreduce: recursive doubling under 2 KiB, Rabenseifner "
                           "above (Thakur, Rabenseifner, Gropp, IJHPCA 2005) [P]";

/// Host interface of a ConnectX adapter on a PCIe link of @p gen.
std::vector<IbProfileHelper::Setting>
Host(uint32_t gen)
{
    return {
        {"ns3::PcieLink::Generation", std::to_string(gen), "the adapter's host interface [P]"},
        {"ns3::PcieLink::Lanes", "16", "x16, the adapter's host interface [P]"},
        {"ns3::PcieLink::MaxPayloadSize", "256", kMps},
        {"ns3::PcieLink::MaxReadRequestSize", "512", kMrrs},
        {"ns3::PcieLink::ReadCompletionSize", "64", kRcb},
        {"ns3::PcieLink::ReadLatency", "546ns", gen == 3 ? kPcieRead : kPcieReadReused},
        {"ns3::PcieLink::WriteLatency", "227ns", kPcieWrite},
        {"ns3::PcieLink::MmioLatency", "147ns", kMmio},
        {"ns3::IbHca::BlueFlameSize", "256", kBlueFlame},
        {"ns3::IbHca::MaxInlineData", "236", kInline},
        // The idealized lumps covered the PCIe crossings the PcieLink now models.
        {"ns3::IbHca::DoorbellLatency", "0ns", kPipeline},
        {"ns3::IbHca::PcieWriteLatency", "0ns", kPipeline},
        {"ns3::IbHca::AckDelay", "0ns", kPipeline},
        {"ns3::IbHca::ResponseDelay", "0ns", kPipeline},
    };
}

/**
 * @param name the profile's name
 * @param summary its one line
 * @param gen the adapter's PCIe generation
 * @param algorithm the collective algorithm
 * @return a profile of ConnectX hardware: the host interface on PCIe @p gen
 */
IbProfileHelper::Profile
Hardware(const std::string& name,
         const std::string& summary,
         uint32_t gen,
         const std::string& algorithm)
{
    IbProfileHelper::Profile p;
    p.name = name;
    p.summary = summary;
    p.pcie = true;
    p.algorithm = algorithm;
    p.settings = Host(gen);
    return p;
}

/// @return the profiles
const std::vector<IbProfileHelper::Profile>&
Profiles()
{
    static const std::vector<IbProfileHelper::Profile> profiles = [] {
        std::vector<IbProfileHelper::Profile> v;
        {
            IbProfileHelper::Profile p;
            p.name = "ideal";
            p.summary = "the idealized model (the defaults): no PCIe link, a generic best-case "
                        "HCA, collectives without host costs";
            v.push_back(p);
        }
        IbProfileHelper::Profile edr = Hardware("edr-cx4-mpi",
                                                "ConnectX-4 EDR on PCIe Gen3 x16, Switch-IB 2, "
                                                "an MPI library",
                                                3,
                                                "tuned");
        edr.settings.push_back({"ns3::CollectiveTunedAlgorithm::AllReduce", "rd:2048,hd", kMpich});
        edr.missing = {"the adapter's internal pipeline (TX and RX processing)",
                       "Switch-IB 2 port-to-port latency (the model's default 90 ns stays)",
                       "the MPI library's per-message software overhead and reduction rate",
                       "the SHARP library's host overhead"};
        v.push_back(edr);
        IbProfileHelper::Profile hdr = Hardware("hdr-cx6-mpi",
                                                "ConnectX-6 HDR on PCIe Gen4 x16, Quantum HDR "
                                                "switches, an MPI library",
                                                4,
                                                "tuned");
        hdr.settings.push_back({"ns3::IbChannel::FecLatency", "100ns", kFec});
        hdr.settings.push_back({"ns3::IbSwitch::ForwardingLatency", "130ns", kQuantum});
        hdr.settings.push_back({"ns3::CollectiveTunedAlgorithm::AllReduce", "rd:2048,hd", kMpich});
        hdr.missing = {"the adapter's internal pipeline (TX and RX processing)",
                       "a Gen4 DMA latency (the Gen3 measurement is used)",
                       "the MPI library's per-message software overhead and reduction rate",
                       "the SHARP library's host overhead"};
        v.push_back(hdr);
        IbProfileHelper::Profile ndr = Hardware("ndr-cx7-nccl",
                                                "ConnectX-7 NDR on PCIe Gen5 x16, Quantum-2 "
                                                "switches, NCCL",
                                                5,
                                                "ring");
        ndr.settings.push_back({"ns3::IbChannel::FecLatency", "100ns", kFec});
        ndr.settings.push_back({"ns3::CollectiveCommunicator::LaunchLatency", "3us", kNcclLaunch});
        ndr.settings.push_back({"ns3::CollectiveCommunicator::SendOverhead", "1us", kNcclPost});
        ndr.missing = {"the adapter's internal pipeline (TX and RX processing)",
                       "a Gen5 DMA latency (the Gen3 measurement is used)",
                       "Quantum-2 port-to-port latency (sources disagree: the model's default "
                       "90 ns stays)",
                       "NCCL's protocols (LL, LL128, Simple) and per-step synchronisation on "
                       "the GPU"};
        v.push_back(ndr);
        return v;
    }();
    return profiles;
}

} // namespace

std::vector<std::string>
IbProfileHelper::GetNames()
{
    std::vector<std::string> names;
    for (const Profile& p : Profiles())
    {
        names.push_back(p.name);
    }
    return names;
}

const IbProfileHelper::Profile*
IbProfileHelper::Find(const std::string& name)
{
    for (const Profile& p : Profiles())
    {
        if (p.name == name)
        {
            return &p;
        }
    }
    return nullptr;
}

bool
IbProfileHelper::Apply(const std::string& name, std::string* error)
{
    const Profile* p = Find(name);
    if (p == nullptr)
    {
        if (error != nullptr)
        {
            std::string names;
            for (const std::string& n : GetNames())
            {
                names += (names.empty() ? "" : ", ") + n;
            }
            *error = "unknown profile '" + name + "'; use one of " + names;
        }
        return false;
    }
    for (const Setting& s : p->settings)
    {
        Config::SetDefault(s.attribute, StringValue(s.value));
    }
    if (p->pcie)
    {
        // One link object for every HCA: it holds the configuration, the HCA the state.
        Config::SetDefault("ns3::IbHca::PcieLink", PointerValue(CreateObject<PcieLink>()));
    }
    return true;
}

std::string
IbProfileHelper::FindInArguments(int argc, char** argv)
{
    std::string name;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        for (const char* prefix : {"--profile=", "-profile="})
        {
            if (a.rfind(prefix, 0) == 0)
            {
                name = a.substr(std::string(prefix).size());
            }
        }
    }
    return name;
}

std::string
IbProfileHelper::Describe(const std::string& name)
{
    const Profile* p = Find(name);
    if (p == nullptr)
    {
        return "";
    }
    std::ostringstream os;
    os << "# profile " << p->name << ": " << p->summary << "\n";
    for (const Setting& s : p->settings)
    {
        os << "#   " << s.attribute << " = " << s.value << "  (" << s.source << ")\n";
    }
    if (!p->algorithm.empty())
    {
        os << "#   collective algorithm: " << p->algorithm << "\n";
    }
    for (const std::string& m : p->missing)
    {
        os << "#   not modelled (no source): " << m << "\n";
    }
    return os.str();
}

} // namespace ns3

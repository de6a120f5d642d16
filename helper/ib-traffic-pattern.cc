/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-traffic-pattern.h"

#include "ib-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-raw-traffic-application.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <random>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbTrafficPattern");

namespace
{

/**
 * An unbiased draw in [0, bound) from a Mersenne twister's 32-bit outputs. The
 * std::uniform_int_distribution algorithm is left to the standard library (libstdc++ and
 * libc++ differ); this one is fixed, so that a seed gives the same pattern everywhere.
 * @param rng the generator
 * @param bound the number of values (at least 1)
 * @return the draw
 */
uint32_t
DrawBelow(std::mt19937& rng, uint32_t bound)
{
    // Outputs below 2^32 mod bound are rejected: the rest cover each residue equally often.
    const uint32_t reject = static_cast<uint32_t>(-bound) % bound;
    uint32_t r;
    do
    {
        r = static_cast<uint32_t>(rng());
    } while (r < reject);
    return r % bound;
}

} // namespace

uint32_t
IbTrafficPattern::ReplicationSeed(uint32_t seed)
{
    const uint64_t runSeed = RngSeedManager::GetSeed();
    const uint64_t run = RngSeedManager::GetRun();
    if (runSeed == 1 && run == 1)
    {
        return seed;
    }
    // SplitMix64's finaliser over (seed, RngSeed, RngRun): nearby runs get unrelated seeds.
    uint64_t z = (uint64_t{seed} << 32) ^ (runSeed * 0x9E3779B97F4A7C15ULL) ^ run;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<uint32_t>(z ^ (z >> 32));
}

std::vector<IbTrafficPattern::Flow>
IbTrafficPattern::RandomPermutation(uint32_t n, uint32_t seed)
{
    NS_ABORT_MSG_IF(n < 2, "IbTrafficPattern: a permutation needs at least 2 hosts");
    // Sattolo's shuffle gives a single cycle: a permutation with no fixed point.
    std::vector<uint32_t> dst(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        dst[i] = i;
    }
    std::mt19937 rng(seed);
    for (uint32_t i = n - 1; i > 0; --i)
    {
        std::swap(dst[i], dst[DrawBelow(rng, i)]);
    }
    std::vector<Flow> flows;
    for (uint32_t i = 0; i < n; ++i)
    {
        flows.emplace_back(i, dst[i]);
    }
    return flows;
}

void
IbTrafficPattern::CheckHosts(uint32_t n, const char* pattern)
{
    // (Without it, all-to-all and incast over one host were no flows at all, silently.)
    NS_ABORT_MSG_IF(n < 2,
                    "IbTrafficPattern::" << pattern << ": " << n
                                         << " host(s); a traffic pattern needs at least 2 (a "
                                            "host sends to other hosts only)");
}

std::vector<IbTrafficPattern::Flow>
IbTrafficPattern::Shift(uint32_t n, uint32_t shift)
{
    CheckHosts(n, "Shift");
    NS_ABORT_MSG_IF(shift % n == 0,
                    "IbTrafficPattern::Shift: shift " << shift << " over " << n
                                                      << " hosts sends hosts to themselves");
    std::vector<Flow> flows;
    for (uint32_t i = 0; i < n; ++i)
    {
        flows.emplace_back(i, (i + shift) % n);
    }
    return flows;
}

std::vector<IbTrafficPattern::Flow>
IbTrafficPattern::AllToAll(uint32_t n)
{
    CheckHosts(n, "AllToAll");
    std::vector<Flow> flows;
    for (uint32_t i = 0; i < n; ++i)
    {
        for (uint32_t j = 0; j < n; ++j)
        {
            if (i != j)
            {
                flows.emplace_back(i, j);
            }
        }
    }
    return flows;
}

std::vector<IbTrafficPattern::Flow>
IbTrafficPattern::Incast(uint32_t n, uint32_t sink)
{
    CheckHosts(n, "Incast");
    NS_ABORT_MSG_IF(sink >= n, "IbTrafficPattern::Incast: sink " << sink << " of " << n);
    std::vector<Flow> flows;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (i != sink)
        {
            flows.emplace_back(i, sink);
        }
    }
    return flows;
}

std::vector<IbTrafficPattern::Flow>
IbTrafficPattern::ByName(const std::string& name, uint32_t n, uint32_t seed)
{
    if (name == "permutation")
    {
        return RandomPermutation(n, seed);
    }
    if (name == "shift")
    {
        return Shift(n, n / 2);
    }
    if (name == "all-to-all")
    {
        return AllToAll(n);
    }
    if (name == "incast")
    {
        return Incast(n, 0);
    }
    NS_ABORT_MSG("traffic pattern '" << name
                                     << "' is unknown; use permutation, shift, all-to-all or "
                                        "incast");
    return {};
}

ApplicationContainer
IbTrafficPattern::InstallRawFlows(const IbFabric& fabric,
                                  const std::vector<Flow>& flows,
                                  const ObjectFactory& attributes)
{
    NS_ABORT_MSG_UNLESS(fabric.subnetManager,
                        "IbTrafficPattern::InstallRawFlows: bring the fabric up first");
    ObjectFactory factory = attributes;
    if (factory.GetTypeId().GetUid() == 0)
    {
        factory.SetTypeId(IbRawTrafficApplication::GetTypeId());
    }
    NS_ABORT_MSG_UNLESS(factory.GetTypeId() == IbRawTrafficApplication::GetTypeId() ||
                            factory.GetTypeId().IsChildOf(IbRawTrafficApplication::GetTypeId()),
                        "IbTrafficPattern::InstallRawFlows: the factory makes "
                            << factory.GetTypeId().GetName()
                            << "; it must make ns3::IbRawTrafficApplication (or leave the type "
                               "unset)");
    ApplicationContainer apps;
    const uint32_t hosts = fabric.hostPorts.GetN();
    for (std::size_t k = 0; k < flows.size(); ++k)
    {
        const auto& [s, d] = flows[k];
        NS_ABORT_MSG_IF(s >= hosts || d >= hosts,
                        "IbTrafficPattern::InstallRawFlows: flow "
                            << k << " (" << s << " -> " << d << ") names host "
                            << (s >= hosts ? s : d)
                            << ", which does not exist; "
                               "the fabric has "
                            << hosts << " hosts (0.." << (hosts == 0 ? 0 : hosts - 1) << ")");
        Ptr<IbNetDevice> src = fabric.HostPort(s);
        Ptr<IbNetDevice> dst = fabric.HostPort(d);
        const IbPathRecord pr = fabric.subnetManager->GetPathRecord(src, dst);
        NS_ABORT_MSG_UNLESS(pr.valid,
                            "IbTrafficPattern: host " << d << " (LID " << dst->GetLid()
                                                      << ") is unreachable from host " << s);
        Ptr<IbRawTrafficApplication> app = factory.Create<IbRawTrafficApplication>();
        app->SetAttribute("Dlid", UintegerValue(pr.dlid));
        app->SetAttribute("Sl", UintegerValue(pr.sl));
        app->SetAttribute("DestQp", UintegerValue(0x100 + d));
        app->SetDevice(src);
        src->GetNode()->AddApplication(app);
        apps.Add(app);
    }
    return apps;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-topology-builder.h"

#include "ib-lid-assigner.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbTopologyBuilder");

namespace
{

/**
 * Cable two ports, aborting on failure (a builder bug, not a user error).
 * @param t the fabric
 * @param a node a
 * @param pa port on a
 * @param b node b
 * @param pb port on b
 * @param speed link speed
 * @param width link width
 */
void
Cable(IbTopology& t,
      uint32_t a,
      uint32_t pa,
      uint32_t b,
      uint32_t pb,
      IbLinkRate::Speed speed,
      uint8_t width)
{
    std::string error;
    const bool ok =
        t.Connect(a, static_cast<uint8_t>(pa), b, static_cast<uint8_t>(pb), speed, width, &error);
    NS_ABORT_MSG_UNLESS(ok, "IbTopologyBuilder: " << error);
}

/**
 * Add @p n single-port hosts named "host-<k>".
 * @param t the fabric
 * @param n number of hosts
 */
void
AddHosts(IbTopology& t, uint32_t n)
{
    for (uint32_t k = 0; k < n; ++k)
    {
        t.AddCa(1, "host-" + std::to_string(k));
    }
}

/**
 * Check a radix is usable as a switch port count.
 * @param fn calling function, for the message
 * @param radix ports per switch
 */
void
CheckRadix(const char* fn, uint32_t radix)
{
    NS_ABORT_MSG_IF(radix < 2 || radix > 254,
                    "IbTopologyBuilder::" << fn << ": radix " << radix
                                          << " is out of range; a switch has 2..254 ports");
}

/**
 * Abort, naming the call, if a fabric needs more LIDs than a subnet has: one per switch
 * (port 0) and one per host port at LMC 0. Checked before anything is built, so that a
 * mistyped size (a negative number read as 4294967295) fails at once, not out of memory.
 * @param call the builder and its arguments, for the message
 * @param switches switches of the fabric
 * @param hosts one-port hosts of the fabric
 */
void
CheckLidSpace(const std::string& call, uint64_t switches, uint64_t hosts)
{
    const uint64_t need = switches + hosts;
    NS_ABORT_MSG_IF(need > IbLidAssigner::MAX_UNICAST_LID,
                    "IbTopologyBuilder::" << call << ": " << switches << " switches and " << hosts
                                          << " hosts need " << need << " LIDs, but a subnet has "
                                          << IbLidAssigner::MAX_UNICAST_LID
                                          << " unicast LIDs (1 to 0xBFFF); build a smaller fabric");
}

} // namespace

void
IbTopologyBuilder::SplitLeafPorts(uint32_t radix,
                                  double oversubscription,
                                  uint32_t& down,
                                  uint32_t& up)
{
    NS_ABORT_MSG_UNLESS(oversubscription > 0 && std::isfinite(oversubscription),
                        "IbTopologyBuilder: oversubscription " << oversubscription
                                                               << " must be a positive ratio");
    // The small epsilon keeps exact ratios (e.g. 24/8 for 3.0) from rounding down.
    const double d = radix * oversubscription / (1.0 + oversubscription);
    down = static_cast<uint32_t>(std::floor(d + 1e-9));
    if (down > radix)
    {
        down = radix;
    }
    up = radix - down;
    NS_ABORT_MSG_IF(down == 0 || up == 0,
                    "IbTopologyBuilder: radix " << radix << " with oversubscription "
                                                << oversubscription << " leaves " << down
                                                << " host ports and " << up
                                                << " uplinks per leaf; both must be >= 1");
}

IbTopology
IbTopologyBuilder::FatTree2Level(uint32_t radix,
                                 uint32_t numHosts,
                                 double oversubscription,
                                 IbLinkRate::Speed speed,
                                 uint8_t width)
{
    NS_LOG_FUNCTION(radix << numHosts << oversubscription << speed << +width);
    CheckRadix("FatTree2Level", radix);
    NS_ABORT_MSG_IF(numHosts == 0, "IbTopologyBuilder::FatTree2Level: numHosts must be >= 1");
    uint32_t down;
    uint32_t up;
    SplitLeafPorts(radix, oversubscription, down, up);
    const uint32_t leaves = (numHosts + down - 1) / down;
    const uint32_t spines = up;
    NS_ABORT_MSG_IF(leaves > radix,
                    "IbTopologyBuilder::FatTree2Level(radix="
                        << radix << ", numHosts=" << numHosts
                        << ", oversubscription=" << oversubscription << "): needs " << leaves
                        << " leaves but a spine has only " << radix
                        << " ports; the largest host count that fits is "
                        << static_cast<uint64_t>(radix) * down);
    CheckLidSpace("FatTree2Level(radix=" + std::to_string(radix) +
                      ", numHosts=" + std::to_string(numHosts) + ")",
                  uint64_t{leaves} + spines,
                  numHosts);

    IbTopology t;
    AddHosts(t, numHosts);
    std::vector<uint32_t> leaf(leaves);
    std::vector<uint32_t> spine(spines);
    for (uint32_t i = 0; i < leaves; ++i)
    {
        leaf[i] = t.AddSwitch(radix, "leaf-" + std::to_string(i));
        t.GetNodeMutable(leaf[i]).level = 0;
    }
    for (uint32_t j = 0; j < spines; ++j)
    {
        spine[j] = t.AddSwitch(radix, "spine-" + std::to_string(j));
        t.GetNodeMutable(spine[j]).level = 1;
    }
    for (uint32_t k = 0; k < numHosts; ++k)
    {
        Cable(t, k, 1, leaf[k / down], k % down + 1, speed, width);
    }
    for (uint32_t i = 0; i < leaves; ++i)
    {
        for (uint32_t j = 0; j < spines; ++j)
        {
            Cable(t, leaf[i], down + 1 + j, spine[j], i + 1, speed, width);
        }
    }
    NS_LOG_INFO("FatTree2Level: " << numHosts << " hosts, " << leaves << " leaves (" << down
                                  << " down/" << up << " up), " << spines << " spines");
    return t;
}

uint32_t
IbTopologyBuilder::SmallestRailRadix(uint32_t servers,
                                     uint32_t gpusPerServer,
                                     double oversubscription)
{
    for (uint32_t radix = 4; radix <= 254; radix += 2)
    {
        uint32_t down;
        uint32_t up;
        SplitLeafPorts(radix, oversubscription, down, up);
        const uint64_t groups = (servers + down - 1) / down;
        if (down >= 1 && gpusPerServer <= radix && groups * gpusPerServer <= radix)
        {
            return radix;
        }
    }
    return 0;
}

IbTopology
IbTopologyBuilder::RailOptimized2Level(uint32_t radix,
                                       uint32_t servers,
                                       uint32_t gpusPerServer,
                                       double oversubscription,
                                       IbLinkRate::Speed speed,
                                       uint8_t width)
{
    NS_LOG_FUNCTION(radix << servers << gpusPerServer << oversubscription << speed << +width);
    CheckRadix("RailOptimized2Level", radix);
    NS_ABORT_MSG_IF(servers == 0, "IbTopologyBuilder::RailOptimized2Level: servers must be >= 1");
    NS_ABORT_MSG_IF(gpusPerServer == 0 || gpusPerServer > radix,
                    "IbTopologyBuilder::RailOptimized2Level: gpusPerServer="
                        << gpusPerServer << ": give 1.." << radix
                        << " (one leaf per rail in every group, radix leaves at most)");
    uint32_t down;
    uint32_t up;
    SplitLeafPorts(radix, oversubscription, down, up);
    const uint32_t groups = (servers + down - 1) / down;
    const uint32_t leaves = groups * gpusPerServer;
    NS_ABORT_MSG_IF(leaves > radix,
                    "IbTopologyBuilder::RailOptimized2Level(radix="
                        << radix << ", servers=" << servers << ", gpusPerServer=" << gpusPerServer
                        << ", oversubscription=" << oversubscription << "): needs " << groups
                        << " groups of " << down << " servers, " << leaves
                        << " leaves, but a spine has only " << radix
                        << " ports; the largest server count that fits is "
                        << static_cast<uint64_t>(radix / gpusPerServer) * down);
    const uint32_t hosts = servers * gpusPerServer;
    CheckLidSpace("RailOptimized2Level(radix=" + std::to_string(radix) +
                      ", servers=" + std::to_string(servers) +
                      ", gpusPerServer=" + std::to_string(gpusPerServer) + ")",
                  uint64_t{leaves} + up,
                  hosts);

    IbTopology t;
    AddHosts(t, hosts);
    std::vector<uint32_t> leaf(leaves);
    for (uint32_t g = 0; g < groups; ++g)
    {
        for (uint32_t k = 0; k < gpusPerServer; ++k)
        {
            const uint32_t i = g * gpusPerServer + k;
            leaf[i] =
                t.AddSwitch(radix, "rail-" + std::to_string(k) + "-leaf-" + std::to_string(g));
            t.GetNodeMutable(leaf[i]).level = 0;
        }
    }
    std::vector<uint32_t> spine(up);
    for (uint32_t j = 0; j < up; ++j)
    {
        spine[j] = t.AddSwitch(radix, "spine-" + std::to_string(j));
        t.GetNodeMutable(spine[j]).level = 1;
    }
    for (uint32_t s = 0; s < servers; ++s)
    {
        for (uint32_t k = 0; k < gpusPerServer; ++k)
        {
            Cable(t,
                  s * gpusPerServer + k,
                  1,
                  leaf[(s / down) * gpusPerServer + k],
                  s % down + 1,
                  speed,
                  width);
        }
    }
    for (uint32_t i = 0; i < leaves; ++i)
    {
        for (uint32_t j = 0; j < up; ++j)
        {
            Cable(t, leaf[i], down + 1 + j, spine[j], i + 1, speed, width);
        }
    }
    NS_LOG_INFO("RailOptimized2Level: " << servers << " servers x " << gpusPerServer << " GPUs, "
                                        << groups << " groups, " << leaves << " leaves (" << down
                                        << " down/" << up << " up), " << up << " spines");
    return t;
}

IbTopology
IbTopologyBuilder::RailOnly(uint32_t radix,
                            uint32_t servers,
                            uint32_t gpusPerServer,
                            double oversubscription,
                            IbLinkRate::Speed speed,
                            uint8_t width)
{
    NS_LOG_FUNCTION(radix << servers << gpusPerServer << oversubscription << speed << +width);
    CheckRadix("RailOnly", radix);
    NS_ABORT_MSG_IF(servers == 0, "IbTopologyBuilder::RailOnly: servers must be >= 1");
    NS_ABORT_MSG_IF(gpusPerServer == 0 || gpusPerServer > 1024,
                    "IbTopologyBuilder::RailOnly: gpusPerServer=" << gpusPerServer
                                                                  << ": give 1..1024 (one "
                                                                     "rail per GPU)");
    const bool flat = servers <= radix;
    uint32_t down = radix;
    uint32_t up = 0;
    if (!flat)
    {
        SplitLeafPorts(radix, oversubscription, down, up);
    }
    const uint32_t leaves = flat ? 1 : (servers + down - 1) / down;
    NS_ABORT_MSG_IF(leaves > radix,
                    "IbTopologyBuilder::RailOnly(radix="
                        << radix << ", servers=" << servers
                        << ", oversubscription=" << oversubscription << "): a rail needs " << leaves
                        << " leaves of " << down << " servers, but a spine has only " << radix
                        << " ports; the largest server count that fits is "
                        << static_cast<uint64_t>(radix) * down);
    const uint32_t hosts = servers * gpusPerServer;
    CheckLidSpace("RailOnly(radix=" + std::to_string(radix) +
                      ", servers=" + std::to_string(servers) +
                      ", gpusPerServer=" + std::to_string(gpusPerServer) + ")",
                  uint64_t{gpusPerServer} * (leaves + up),
                  hosts);

    IbTopology t;
    AddHosts(t, hosts);
    for (uint32_t k = 0; k < gpusPerServer; ++k)
    {
        const std::string rail = "rail-" + std::to_string(k);
        std::vector<uint32_t> leaf(leaves);
        for (uint32_t g = 0; g < leaves; ++g)
        {
            leaf[g] =
                t.AddSwitch(radix, flat ? rail + "-switch" : rail + "-leaf-" + std::to_string(g));
            t.GetNodeMutable(leaf[g]).level = 0;
        }
        for (uint32_t s = 0; s < servers; ++s)
        {
            Cable(t, s * gpusPerServer + k, 1, leaf[s / down], s % down + 1, speed, width);
        }
        for (uint32_t j = 0; j < up; ++j)
        {
            const uint32_t spine = t.AddSwitch(radix, rail + "-spine-" + std::to_string(j));
            t.GetNodeMutable(spine).level = 1;
            for (uint32_t g = 0; g < leaves; ++g)
            {
                Cable(t, leaf[g], down + 1 + j, spine, g + 1, speed, width);
            }
        }
    }
    t.SetSeparateSubnets(gpusPerServer > 1);
    NS_LOG_INFO("RailOnly: " << servers << " servers x " << gpusPerServer << " GPUs, "
                             << gpusPerServer << " rails of " << leaves << " leaves and " << up
                             << " spines");
    return t;
}

IbTopology
IbTopologyBuilder::FatTree3Level(uint32_t radix,
                                 uint32_t numHosts,
                                 double oversubscription,
                                 IbLinkRate::Speed speed,
                                 uint8_t width)
{
    NS_LOG_FUNCTION(radix << numHosts << oversubscription << speed << +width);
    CheckRadix("FatTree3Level", radix);
    NS_ABORT_MSG_IF(numHosts == 0, "IbTopologyBuilder::FatTree3Level: numHosts must be >= 1");
    uint32_t down;
    uint32_t up;
    SplitLeafPorts(radix, oversubscription, down, up);
    const uint32_t leavesPerPod = radix / 2;     // P
    const uint32_t aggUp = radix - leavesPerPod; // C: core switches per group
    const uint32_t aggPerPod = up;               // one per leaf uplink
    const uint32_t leaves = (numHosts + down - 1) / down;
    const uint32_t pods = (leaves + leavesPerPod - 1) / leavesPerPod;
    NS_ABORT_MSG_IF(pods > radix,
                    "IbTopologyBuilder::FatTree3Level(radix="
                        << radix << ", numHosts=" << numHosts
                        << ", oversubscription=" << oversubscription << "): needs " << pods
                        << " pods but a core switch has only " << radix
                        << " ports; the largest host count that fits is "
                        << static_cast<uint64_t>(radix) * leavesPerPod * down);
    CheckLidSpace("FatTree3Level(radix=" + std::to_string(radix) +
                      ", numHosts=" + std::to_string(numHosts) + ")",
                  uint64_t{leaves} + uint64_t{pods} * aggPerPod + uint64_t{aggPerPod} * aggUp,
                  numHosts);

    IbTopology t;
    AddHosts(t, numHosts);
    // leafId[pod][i], aggId[pod][j], coreId[j][m]
    std::vector<std::vector<uint32_t>> leafId(pods);
    std::vector<std::vector<uint32_t>> aggId(pods);
    std::vector<std::vector<uint32_t>> coreId(aggPerPod);
    for (uint32_t p = 0; p < pods; ++p)
    {
        const uint32_t n = std::min(leavesPerPod, leaves - p * leavesPerPod);
        for (uint32_t i = 0; i < n; ++i)
        {
            const uint32_t id =
                t.AddSwitch(radix, "leaf-" + std::to_string(p) + "-" + std::to_string(i));
            t.GetNodeMutable(id).level = 0;
            leafId[p].push_back(id);
        }
    }
    for (uint32_t p = 0; p < pods; ++p)
    {
        for (uint32_t j = 0; j < aggPerPod; ++j)
        {
            const uint32_t id =
                t.AddSwitch(radix, "agg-" + std::to_string(p) + "-" + std::to_string(j));
            t.GetNodeMutable(id).level = 1;
            aggId[p].push_back(id);
        }
    }
    for (uint32_t j = 0; j < aggPerPod; ++j)
    {
        for (uint32_t m = 0; m < aggUp; ++m)
        {
            const uint32_t id = t.AddSwitch(radix, "core-" + std::to_string(j * aggUp + m));
            t.GetNodeMutable(id).level = 2;
            coreId[j].push_back(id);
        }
    }
    for (uint32_t k = 0; k < numHosts; ++k)
    {
        const uint32_t l = k / down;
        Cable(t, k, 1, leafId[l / leavesPerPod][l % leavesPerPod], k % down + 1, speed, width);
    }
    for (uint32_t p = 0; p < pods; ++p)
    {
        for (uint32_t i = 0; i < leafId[p].size(); ++i)
        {
            for (uint32_t j = 0; j < aggPerPod; ++j)
            {
                Cable(t, leafId[p][i], down + 1 + j, aggId[p][j], i + 1, speed, width);
            }
        }
        for (uint32_t j = 0; j < aggPerPod; ++j)
        {
            for (uint32_t m = 0; m < aggUp; ++m)
            {
                Cable(t, aggId[p][j], leavesPerPod + 1 + m, coreId[j][m], p + 1, speed, width);
            }
        }
    }
    NS_LOG_INFO("FatTree3Level: " << numHosts << " hosts, " << pods << " pods, " << leaves
                                  << " leaves, " << pods * aggPerPod << " aggregation, "
                                  << aggPerPod * aggUp << " core switches");
    return t;
}

IbTopology
IbTopologyBuilder::KaryNTree(uint32_t k, uint32_t n, IbLinkRate::Speed speed, uint8_t width)
{
    NS_LOG_FUNCTION(k << n << speed << +width);
    NS_ABORT_MSG_IF(k < 1 || k > 127,
                    "IbTopologyBuilder::KaryNTree(k=" << k << ", n=" << n
                                                      << "): k must be 1..127 (2k ports)");
    NS_ABORT_MSG_IF(n < 1, "IbTopologyBuilder::KaryNTree(k=" << k << ", n=0): n must be >= 1");
    // k^n hosts must fit in the 32-bit node indices with room to spare.
    uint64_t hosts = 1;
    for (uint32_t i = 0; i < n; ++i)
    {
        hosts *= k;
        NS_ABORT_MSG_IF(hosts > (1ULL << 24),
                        "IbTopologyBuilder::KaryNTree(k=" << k << ", n=" << n
                                                          << "): more than 2^24 hosts");
    }
    const uint32_t perLevel = static_cast<uint32_t>(hosts / k); // k^(n-1)
    CheckLidSpace("KaryNTree(k=" + std::to_string(k) + ", n=" + std::to_string(n) + ")",
                  uint64_t{n} * perLevel,
                  hosts);

    IbTopology t;
    AddHosts(t, static_cast<uint32_t>(hosts));
    // sw[l][x]: switch x (w as a number) at level l
    std::vector<std::vector<uint32_t>> sw(n, std::vector<uint32_t>(perLevel));
    for (uint32_t l = 0; l < n; ++l)
    {
        for (uint32_t x = 0; x < perLevel; ++x)
        {
            sw[l][x] = t.AddSwitch(2 * k, "sw-" + std::to_string(l) + "-" + std::to_string(x));
            t.GetNodeMutable(sw[l][x]).level = static_cast<int32_t>(l);
        }
    }
    for (uint32_t h = 0; h < hosts; ++h)
    {
        Cable(t, h, 1, sw[0][h / k], h % k + 1, speed, width);
    }
    // Between level l and l+1 the digit of weight k^l varies.
    uint32_t weight = 1;
    for (uint32_t l = 0; l + 1 < n; ++l)
    {
        for (uint32_t x = 0; x < perLevel; ++x)
        {
            const uint32_t digit = (x / weight) % k;
            for (uint32_t c = 0; c < k; ++c)
            {
                const uint32_t upper = x - digit * weight + c * weight;
                Cable(t, sw[l][x], k + 1 + c, sw[l + 1][upper], digit + 1, speed, width);
            }
        }
        weight *= k;
    }
    return t;
}

IbTopology
IbTopologyBuilder::Ring(uint32_t numSwitches,
                        uint32_t hostsPerSwitch,
                        IbLinkRate::Speed speed,
                        uint8_t width)
{
    NS_LOG_FUNCTION(numSwitches << hostsPerSwitch << speed << +width);
    NS_ABORT_MSG_IF(numSwitches < 2,
                    "IbTopologyBuilder::Ring(numSwitches=" << numSwitches
                                                           << "): a ring needs >= 2 switches");
    NS_ABORT_MSG_IF(hostsPerSwitch < 1 || hostsPerSwitch > 252,
                    "IbTopologyBuilder::Ring(hostsPerSwitch="
                        << hostsPerSwitch << "): must be 1..252 (switches have 254 ports)");
    CheckLidSpace("Ring(numSwitches=" + std::to_string(numSwitches) +
                      ", hostsPerSwitch=" + std::to_string(hostsPerSwitch) + ")",
                  numSwitches,
                  uint64_t{numSwitches} * hostsPerSwitch);
    IbTopology t;
    AddHosts(t, numSwitches * hostsPerSwitch);
    const uint32_t first = t.GetNNodes();
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        t.AddSwitch(hostsPerSwitch + 2, "sw-" + std::to_string(i));
    }
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        for (uint32_t h = 0; h < hostsPerSwitch; ++h)
        {
            Cable(t, i * hostsPerSwitch + h, 1, first + i, h + 1, speed, width);
        }
    }
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        Cable(t,
              first + i,
              hostsPerSwitch + 1,
              first + (i + 1) % numSwitches,
              hostsPerSwitch + 2,
              speed,
              width);
    }
    return t;
}

IbTopology
IbTopologyBuilder::Chain(uint32_t numSwitches, IbLinkRate::Speed speed, uint8_t width)
{
    NS_LOG_FUNCTION(numSwitches << speed << +width);
    CheckLidSpace("Chain(numSwitches=" + std::to_string(numSwitches) + ")", numSwitches, 2);
    IbTopology t;
    AddHosts(t, 2);
    if (numSwitches == 0)
    {
        Cable(t, 0, 1, 1, 1, speed, width);
        return t;
    }
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        t.AddSwitch(2, "sw-" + std::to_string(i));
    }
    Cable(t, 0, 1, 2, 1, speed, width);
    for (uint32_t i = 0; i + 1 < numSwitches; ++i)
    {
        Cable(t, 2 + i, 2, 3 + i, 1, speed, width);
    }
    Cable(t, 2 + numSwitches - 1, 2, 1, 1, speed, width);
    return t;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Topology builder and ibnetdiscover reader tests. Expected node, link and port counts
 * are derived here from the construction rules documented in ib-topology-builder.h.
 */

#include "ns3/ib-lft-dump.h"
#include "ns3/ib-link-rate.h"
#include "ns3/ib-netdiscover-reader.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-topology.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <queue>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

/// @return number of cabled ports of node @p n
uint32_t
Degree(const IbTopology& t, uint32_t n)
{
    uint32_t d = 0;
    for (uint32_t p = 1; p < t.GetNode(n).ports.size(); ++p)
    {
        d += t.GetNode(n).ports[p].peerNode >= 0 ? 1 : 0;
    }
    return d;
}

/// @return number of CAs reachable from the first CA (BFS)
uint32_t
ReachableCas(const IbTopology& t)
{
    const auto cas = t.GetCas();
    if (cas.empty())
    {
        return 0;
    }
    std::vector<bool> seen(t.GetNNodes(), false);
    std::queue<uint32_t> q;
    q.push(cas.front());
    seen[cas.front()] = true;
    uint32_t found = 0;
    while (!q.empty())
    {
        const uint32_t n = q.front();
        q.pop();
        found += t.GetNode(n).type == IbTopology::CA ? 1 : 0;
        for (const auto& port : t.GetNode(n).ports)
        {
            if (port.peerNode >= 0 && !seen[port.peerNode])
            {
                seen[port.peerNode] = true;
                q.push(port.peerNode);
            }
        }
    }
    return found;
}

/// @return count of nodes whose name starts with @p prefix, checking their level
uint32_t
CountNamed(const IbTopology& t, const std::string& prefix, int32_t level)
{
    uint32_t n = 0;
    for (const auto& node : t.GetNodes())
    {
        if (node.name.compare(0, prefix.size(), prefix) == 0)
        {
            ++n;
            EXPECT_EQ(node.level, level) << node.name;
        }
    }
    return n;
}

/// The documented rule: down = floor(radix * o / (1 + o)), up = radix - down.
void
ExpectedSplit(uint32_t radix, double o, uint32_t& down, uint32_t& up)
{
    down = static_cast<uint32_t>(std::floor(radix * o / (1 + o) + 1e-9));
    up = radix - down;
}

/// Directory of the shipped sample topologies.
std::string
TopologiesDir()
{
    // IB_SOURCE_DIR is absolute, where __FILE__ may be relative to the build folder
    return std::string(IB_SOURCE_DIR) + "/examples/topologies/";
}

/// Parse @p text; return the error ("" on success).
std::string
ParseError(const std::string& text, IbTopology* out = nullptr)
{
    std::istringstream in(text);
    IbTopology t;
    std::string error;
    const bool ok = IbNetDiscoverReader::Parse(in, "topo.txt", t, &error);
    if (out)
    {
        *out = t;
    }
    return ok ? std::string() : (error.empty() ? std::string("(empty error)") : error);
}

/// @return node index of the node named @p name, or -1
int32_t
FindNamed(const IbTopology& t, const std::string& name)
{
    for (uint32_t i = 0; i < t.GetNNodes(); ++i)
    {
        if (t.GetNode(i).name == name)
        {
            return static_cast<int32_t>(i);
        }
    }
    return -1;
}

} // namespace

TEST(IbTopologyBuilder, SplitLeafPortsRule)
{
    uint32_t down;
    uint32_t up;
    IbTopologyBuilder::SplitLeafPorts(32, 1.0, down, up);
    EXPECT_EQ(down, 16u);
    EXPECT_EQ(up, 16u);
    IbTopologyBuilder::SplitLeafPorts(32, 2.0, down, up);
    EXPECT_EQ(down, 21u); // 21/11 = 1.9 <= 2, 22/10 = 2.2 > 2
    EXPECT_EQ(up, 11u);
    IbTopologyBuilder::SplitLeafPorts(32, 3.0, down, up);
    EXPECT_EQ(down, 24u);
    EXPECT_EQ(up, 8u);
    IbTopologyBuilder::SplitLeafPorts(5, 1.0, down, up);
    EXPECT_EQ(down, 2u);
    EXPECT_EQ(up, 3u);
    for (uint32_t radix : {4u, 7u, 36u, 40u, 64u})
    {
        for (double o : {1.0, 1.5, 2.0, 3.0, 4.0})
        {
            IbTopologyBuilder::SplitLeafPorts(radix, o, down, up);
            EXPECT_EQ(down + up, radix);
            EXPECT_LE(static_cast<double>(down) / up, o + 1e-9) << radix << " " << o;
            // one more host port would exceed the ratio
            EXPECT_GT(static_cast<double>(down + 1) / (up - 1), o - 1e-9) << radix << " " << o;
        }
    }
}

TEST(IbTopologyBuilder, FatTree2LevelCounts)
{
    struct Case
    {
        uint32_t radix;
        uint32_t hosts;
        double o;
    };

    for (const Case& c : {Case{8, 32, 1.0},
                          Case{8, 5, 1.0},
                          Case{36, 100, 1.0},
                          Case{32, 200, 3.0},
                          Case{40, 800, 1.0},
                          Case{7, 10, 2.0}})
    {
        SCOPED_TRACE("radix " + std::to_string(c.radix) + " hosts " + std::to_string(c.hosts) +
                     " o " + std::to_string(c.o));
        uint32_t down;
        uint32_t up;
        ExpectedSplit(c.radix, c.o, down, up);
        const uint32_t leaves = (c.hosts + down - 1) / down;
        const uint32_t spines = up;
        const IbTopology t =
            IbTopologyBuilder::FatTree2Level(c.radix, c.hosts, c.o, IbLinkRate::HDR, 4);
        EXPECT_EQ(t.GetCas().size(), c.hosts);
        EXPECT_EQ(t.GetSwitches().size(), leaves + spines);
        EXPECT_EQ(t.GetNLinks(), c.hosts + leaves * spines);
        EXPECT_EQ(CountNamed(t, "leaf-", 0), leaves);
        EXPECT_EQ(CountNamed(t, "spine-", 1), spines);
        EXPECT_EQ(CountNamed(t, "host-", -1), c.hosts);
        for (uint32_t k = 0; k < c.hosts; ++k)
        {
            EXPECT_EQ(t.GetNode(k).name, "host-" + std::to_string(k));
            EXPECT_EQ(Degree(t, k), 1u);
            // host k on leaf k / down, port k % down + 1
            const auto& port = t.GetNode(k).ports[1];
            EXPECT_EQ(t.GetNode(port.peerNode).name, "leaf-" + std::to_string(k / down));
            EXPECT_EQ(port.peerPort, k % down + 1);
            EXPECT_EQ(port.speed, IbLinkRate::HDR);
            EXPECT_EQ(port.width, 4);
        }
        for (uint32_t i = 0; i < leaves; ++i)
        {
            const int32_t n = FindNamed(t, "leaf-" + std::to_string(i));
            ASSERT_GE(n, 0);
            const uint32_t hostsHere = std::min(down, c.hosts - i * down);
            EXPECT_EQ(Degree(t, n), hostsHere + spines);
            EXPECT_EQ(t.GetNode(n).ports.size(), c.radix + 1);
            for (uint32_t j = 0; j < spines; ++j)
            {
                const auto& port = t.GetNode(n).ports[down + 1 + j];
                EXPECT_EQ(t.GetNode(port.peerNode).name, "spine-" + std::to_string(j));
                EXPECT_EQ(port.peerPort, i + 1);
            }
        }
        for (uint32_t j = 0; j < spines; ++j)
        {
            const int32_t n = FindNamed(t, "spine-" + std::to_string(j));
            ASSERT_GE(n, 0);
            EXPECT_EQ(Degree(t, n), leaves);
        }
        EXPECT_EQ(ReachableCas(t), c.hosts);
        std::string error;
        EXPECT_TRUE(t.Validate(&error)) << error;
    }
}

TEST(IbTopologyBuilder, FatTree2LevelLargestFitsAndBeyondAborts)
{
    // radix 8 non-blocking: 8 leaves x 4 hosts = 32 hosts at most.
    const IbTopology t = IbTopologyBuilder::FatTree2Level(8, 32, 1.0, IbLinkRate::EDR, 4);
    EXPECT_EQ(t.GetCas().size(), 32u);
    EXPECT_DEATH(IbTopologyBuilder::FatTree2Level(8, 33, 1.0, IbLinkRate::EDR, 4),
                 "largest host count that fits is 32");
    EXPECT_DEATH(IbTopologyBuilder::FatTree2Level(32, 1000, 3.0, IbLinkRate::EDR, 4),
                 "radix=32.*numHosts=1000.*768");
}

TEST(IbTopologyBuilder, FatTree3LevelCounts)
{
    struct Case
    {
        uint32_t radix;
        uint32_t hosts;
        double o;
    };

    for (const Case& c : {Case{4, 16, 1.0},
                          Case{8, 128, 1.0},
                          Case{8, 50, 1.0},
                          Case{32, 1024, 1.0},
                          Case{32, 8192, 1.0},
                          Case{32, 4096, 2.0},
                          Case{6, 20, 2.0}})
    {
        SCOPED_TRACE("radix " + std::to_string(c.radix) + " hosts " + std::to_string(c.hosts) +
                     " o " + std::to_string(c.o));
        uint32_t down;
        uint32_t up;
        ExpectedSplit(c.radix, c.o, down, up);
        const uint32_t leavesPerPod = c.radix / 2;
        const uint32_t coresPerGroup = c.radix - leavesPerPod;
        const uint32_t leaves = (c.hosts + down - 1) / down;
        const uint32_t pods = (leaves + leavesPerPod - 1) / leavesPerPod;
        const uint32_t aggs = pods * up;
        const uint32_t cores = up * coresPerGroup;
        const IbTopology t =
            IbTopologyBuilder::FatTree3Level(c.radix, c.hosts, c.o, IbLinkRate::EDR, 4);
        EXPECT_EQ(t.GetCas().size(), c.hosts);
        EXPECT_EQ(CountNamed(t, "leaf-", 0), leaves);
        EXPECT_EQ(CountNamed(t, "agg-", 1), aggs);
        EXPECT_EQ(CountNamed(t, "core-", 2), cores);
        EXPECT_EQ(t.GetSwitches().size(), leaves + aggs + cores);
        EXPECT_EQ(t.GetNLinks(), c.hosts + leaves * up + aggs * coresPerGroup);
        for (uint32_t i = 0; i < t.GetNNodes(); ++i)
        {
            const auto& node = t.GetNode(i);
            if (node.type == IbTopology::CA)
            {
                EXPECT_EQ(Degree(t, i), 1u);
                continue;
            }
            EXPECT_EQ(node.ports.size(), c.radix + 1);
            const uint32_t deg = Degree(t, i);
            if (node.level == 2)
            {
                EXPECT_EQ(deg, pods) << node.name;
            }
            else if (node.level == 1)
            {
                // agg-<pod>-<j>: one cable per leaf of its pod plus a full core group
                const uint32_t pod = std::stoul(node.name.substr(4));
                const uint32_t leavesHere = std::min(leavesPerPod, leaves - pod * leavesPerPod);
                EXPECT_EQ(deg, leavesHere + coresPerGroup) << node.name;
            }
            else
            {
                EXPECT_LE(deg, down + up) << node.name;
                EXPECT_GE(deg, up + 1) << node.name;
            }
        }
        // Every aggregation switch j reaches exactly core group j.
        for (uint32_t i = 0; i < t.GetNNodes(); ++i)
        {
            const auto& node = t.GetNode(i);
            if (node.level != 1)
            {
                continue;
            }
            const uint32_t j = std::stoul(node.name.substr(node.name.rfind('-') + 1));
            for (uint32_t m = 0; m < coresPerGroup; ++m)
            {
                const auto& port = node.ports[leavesPerPod + 1 + m];
                ASSERT_GE(port.peerNode, 0);
                EXPECT_EQ(t.GetNode(port.peerNode).name,
                          "core-" + std::to_string(j * coresPerGroup + m));
            }
        }
        EXPECT_EQ(ReachableCas(t), c.hosts);
        std::string error;
        EXPECT_TRUE(t.Validate(&error)) << error;
    }
    // The classic k-ary fat tree: radix 32 non-blocking reaches radix^3/4 hosts.
    EXPECT_DEATH(IbTopologyBuilder::FatTree3Level(32, 8193, 1.0, IbLinkRate::EDR, 4),
                 "largest host count that fits is 8192");
    EXPECT_DEATH(IbTopologyBuilder::FatTree3Level(8, 200, 1.0, IbLinkRate::EDR, 4),
                 "radix=8.*numHosts=200.*128");
}

TEST(IbTopologyBuilder, AFabricBeyondTheLidSpaceIsRefusedBeforeItIsBuilt)
{
    // One LID per switch and per host port: 0xBFFF = 49151 in a subnet. The largest chain
    // fits; one more switch, or a size read from "-1", is refused with the count at once.
    const IbTopology longest = IbTopologyBuilder::Chain(49149);
    EXPECT_EQ(longest.GetNNodes(), 49151u);
    EXPECT_DEATH(IbTopologyBuilder::Chain(49150),
                 "Chain\\(numSwitches=49150\\): 49150 switches and 2 hosts need 49152 LIDs, but a "
                 "subnet has 49151 unicast LIDs \\(1 to 0xBFFF\\); build a smaller fabric");
    EXPECT_DEATH(IbTopologyBuilder::Chain(4294967295u), "4294967295 switches and 2 hosts");
    // radix 254, 127 hosts per leaf: 100,000 hosts need 788 leaves in 7 pods of 127
    // aggregation switches each, and 127 x 127 core switches: 788 + 889 + 16129.
    EXPECT_DEATH(IbTopologyBuilder::FatTree3Level(254, 100000, 1.0, IbLinkRate::EDR, 4),
                 "FatTree3Level\\(radix=254, numHosts=100000\\): 17806 switches and 100000 hosts "
                 "need 117806 LIDs");
    EXPECT_DEATH(IbTopologyBuilder::KaryNTree(16, 4),
                 "KaryNTree\\(k=16, n=4\\): 16384 switches "
                 "and 65536 hosts need 81920 LIDs");
    EXPECT_DEATH(IbTopologyBuilder::Ring(200, 252),
                 "Ring\\(numSwitches=200, hostsPerSwitch=252\\)");
}

TEST(IbTopologyBuilder, KaryNTree)
{
    for (auto [k, n] :
         std::vector<std::pair<uint32_t, uint32_t>>{{2, 1}, {2, 3}, {4, 2}, {4, 3}, {3, 4}, {8, 3}})
    {
        SCOPED_TRACE("k " + std::to_string(k) + " n " + std::to_string(n));
        uint32_t hosts = 1;
        for (uint32_t i = 0; i < n; ++i)
        {
            hosts *= k;
        }
        const uint32_t perLevel = hosts / k;
        const IbTopology t = IbTopologyBuilder::KaryNTree(k, n, IbLinkRate::NDR, 4);
        EXPECT_EQ(t.GetCas().size(), hosts);
        EXPECT_EQ(t.GetSwitches().size(), n * perLevel);
        // k^n host cables plus k^n cables between each pair of adjacent levels
        EXPECT_EQ(t.GetNLinks(), n * hosts);
        std::vector<uint32_t> perLevelCount(n, 0);
        for (uint32_t i = 0; i < t.GetNNodes(); ++i)
        {
            const auto& node = t.GetNode(i);
            if (node.type == IbTopology::CA)
            {
                EXPECT_EQ(Degree(t, i), 1u);
                continue;
            }
            ASSERT_GE(node.level, 0);
            ASSERT_LT(node.level, static_cast<int32_t>(n));
            ++perLevelCount[node.level];
            EXPECT_EQ(node.ports.size(), 2 * k + 1);
            EXPECT_EQ(Degree(t, i), node.level + 1u == n ? k : 2 * k) << node.name;
            // Petrini-Vanneschi adjacency: neighbours one level up differ from this
            // switch at most in the digit of weight k^level.
            const uint32_t x = std::stoul(node.name.substr(node.name.rfind('-') + 1));
            uint32_t weight = 1;
            for (int32_t l = 0; l < node.level; ++l)
            {
                weight *= k;
            }
            for (uint32_t c = 0; node.level + 1u < n && c < k; ++c)
            {
                const auto& port = node.ports[k + 1 + c];
                ASSERT_GE(port.peerNode, 0);
                const auto& up = t.GetNode(port.peerNode);
                EXPECT_EQ(up.level, node.level + 1);
                const uint32_t y = std::stoul(up.name.substr(up.name.rfind('-') + 1));
                EXPECT_EQ(y, x - ((x / weight) % k) * weight + c * weight);
                EXPECT_EQ(port.peerPort, (x / weight) % k + 1);
            }
        }
        for (uint32_t l = 0; l < n; ++l)
        {
            EXPECT_EQ(perLevelCount[l], perLevel);
        }
        EXPECT_EQ(ReachableCas(t), hosts);
        EXPECT_EQ(t.GetNode(0).ports[1].speed, IbLinkRate::NDR);
    }
}

TEST(IbTopologyBuilder, RingAndChain)
{
    const IbTopology ring = IbTopologyBuilder::Ring(5, 3);
    EXPECT_EQ(ring.GetCas().size(), 15u);
    EXPECT_EQ(ring.GetSwitches().size(), 5u);
    EXPECT_EQ(ring.GetNLinks(), 15u + 5u);
    for (uint32_t s : ring.GetSwitches())
    {
        EXPECT_EQ(Degree(ring, s), 3u + 2u);
        // port 4 goes to the next switch's port 5
        const auto& port = ring.GetNode(s).ports[4];
        EXPECT_EQ(ring.GetNode(port.peerNode).type, IbTopology::SWITCH);
        EXPECT_EQ(port.peerPort, 5);
    }
    EXPECT_EQ(ReachableCas(ring), 15u);
    EXPECT_EQ(ring.GetNode(0).ports[1].speed, IbLinkRate::EDR);
    EXPECT_EQ(ring.GetNode(0).ports[1].width, 4);

    const IbTopology two = IbTopologyBuilder::Ring(2, 1);
    EXPECT_EQ(two.GetNLinks(), 2u + 2u);
    EXPECT_EQ(ReachableCas(two), 2u);

    for (uint32_t n : {0u, 1u, 4u})
    {
        const IbTopology chain = IbTopologyBuilder::Chain(n, IbLinkRate::FDR, 1);
        EXPECT_EQ(chain.GetCas().size(), 2u);
        EXPECT_EQ(chain.GetSwitches().size(), n);
        EXPECT_EQ(chain.GetNLinks(), n + 1);
        EXPECT_EQ(ReachableCas(chain), 2u);
        // hop count host-0 -> host-1 is n + 1 cables
        uint32_t hops = 0;
        uint32_t node = 0;
        uint32_t prev = UINT32_MAX;
        while (node != 1 && hops <= n + 1)
        {
            uint32_t next = UINT32_MAX;
            for (const auto& port : chain.GetNode(node).ports)
            {
                if (port.peerNode >= 0 && static_cast<uint32_t>(port.peerNode) != prev)
                {
                    next = port.peerNode;
                }
            }
            ASSERT_NE(next, UINT32_MAX);
            prev = node;
            node = next;
            ++hops;
        }
        EXPECT_EQ(hops, n + 1);
        EXPECT_EQ(chain.GetNode(0).ports[1].width, 1);
    }
}

// ------------------------------------------------------------------- reader

namespace
{

/// The example from IB-REFERENCE.md section 5, in both directions.
const char* kFullSnippet = "#\n"
                           "# Topology file: generated by hand\n"
                           "#\n"
                           "\n"
                           "vendid=0x2c9\n"
                           "devid=0xd2f0\n"
                           "sysimgguid=0xb8599f0300fc6de4\n"
                           "switchguid=0xb8599f0300fc6de4(b8599f0300fc6de4)\n"
                           "Switch\t41 \"S-b8599f0300fc6de4\"\t\t# \"MF0;r-ufm-sw95:MQM8700/U1\" "
                           "enhanced port 0 lid 13 lmc 0\n"
                           "[1]\t\"H-ec0d9a03007d7d0b\"[1](ec0d9a03007d7d0b) \t\t# \"r-dcs96 "
                           "HCA-2\" lid 5 4xHDR\n"
                           "[2]\t\"H-ec0d9a03007d7d0c\"[1](ec0d9a03007d7d0c) \t\t# \"r-dcs97 "
                           "HCA-1\" lid 6 1xSDR\n"
                           "\n"
                           "vendid=0x2c9\n"
                           "devid=0x101b\n"
                           "sysimgguid=0xec0d9a03007d7d0b\n"
                           "caguid=0xec0d9a03007d7d0b\n"
                           "Ca\t1 \"H-ec0d9a03007d7d0b\"\t\t# \"r-dcs96 HCA-2\"\n"
                           "[1](ec0d9a03007d7d0b) \t\"S-b8599f0300fc6de4\"[1]\t\t# lid 5 lmc 0 "
                           "\"MF0;r-ufm-sw95:MQM8700/U1\" lid 13 4xHDR\n"
                           "\n"
                           "Ca\t2 \"H-ec0d9a03007d7d0c\"\t\t# \"r-dcs97 HCA-1\"\n"
                           "[1](ec0d9a03007d7d0c) \t\"S-b8599f0300fc6de4\"[2]\t\t# lid 6 lmc 0 "
                           "\"MF0;r-ufm-sw95:MQM8700/U1\" lid 13 1xSDR\n";

} // namespace

TEST(IbTopologyGuids, GeneratedGuidsLeaveRoomForEveryPortOfACa)
{
    // A CA's port p has GUID node + p - 1 in LFT dumps: a 2-port CA's second port must
    // not have the GUID of the node generated after it, nor may a file's.
    IbTopology t;
    const uint32_t a = t.AddCa(2, "a");
    const uint32_t b = t.AddCa(1, "b");
    const uint32_t s = t.AddSwitch(4, "s");
    std::set<uint64_t> guids;
    for (uint32_t n : {a, b, s})
    {
        const IbTopology::Node& node = t.GetNode(n);
        const uint8_t ports = node.type == IbTopology::CA ? node.ports.size() - 1 : 1;
        for (uint8_t p = 1; p <= ports; ++p)
        {
            EXPECT_TRUE(guids.insert(IbLftDump::PortGuid(node, p)).second)
                << node.name << " port " << unsigned(p);
        }
    }
    IbTopology r;
    ASSERT_EQ(ParseError("Hca 2 \"h1\"\n[1] \"s\"[1]\n[2] \"s\"[2]\n"
                         "Hca 1 \"h2\"\n[1] \"s\"[3]\n"
                         "Switch 4 \"s\"\n[1] \"h1\"[1]\n[2] \"h1\"[2]\n[3] \"h2\"[1]\n",
                         &r),
              "");
    ASSERT_EQ(r.GetNNodes(), 3u);
    EXPECT_NE(IbLftDump::PortGuid(r.GetNode(0), 2), r.GetNode(1).guid);
    EXPECT_NE(IbLftDump::PortGuid(r.GetNode(0), 2), r.GetNode(2).guid);
}

TEST(IbTopologyValidate, NamesTheNodesOutsideTheLargestPart)
{
    // An isolated host listed first: it is the stray node, not the switch and its hosts.
    IbTopology t;
    t.AddCa(1, "Hca0");
    const uint32_t sw = t.AddSwitch(4, "Switch1");
    const uint32_t h1 = t.AddCa(1, "Hca1");
    const uint32_t h2 = t.AddCa(1, "Hca2");
    ASSERT_TRUE(t.Connect(sw, 1, h1, 1, IbLinkRate::EDR, 4));
    ASSERT_TRUE(t.Connect(sw, 2, h2, 1, IbLinkRate::EDR, 4));
    std::string error;
    EXPECT_FALSE(t.Validate(&error));
    EXPECT_EQ(error,
              "1 node is not connected to the rest of the fabric (3 nodes): 'Hca0'; cable "
              "them to it, or leave them out");
    IbTopology one;
    one.AddCa(1, "h0");
    EXPECT_FALSE(one.Validate(&error));
    EXPECT_EQ(error,
              "the fabric is the single node 'h0', with no cable; a fabric needs at least two "
              "nodes cabled together");
    // A 2-port HCA cabled to itself is a fabric (a loopback).
    IbTopology loop;
    loop.AddCa(2, "h");
    ASSERT_TRUE(loop.Connect(0, 1, 0, 2, IbLinkRate::EDR, 4));
    EXPECT_TRUE(loop.Validate(&error)) << error;
}

TEST(IbTopologyValidate, ACaCabledStraightToACaBesideSwitchesIsRefused)
{
    // Hosts A and B on a switch, and a second cable from A port 2 to B port 2. Before,
    // the check passed and routing aborted blaming the engine ("left a destination
    // unreachable"); two hosts back to back without switches stay a fabric.
    IbTopology t;
    const uint32_t sw = t.AddSwitch(4, "sw");
    const uint32_t a = t.AddCa(2, "A");
    const uint32_t b = t.AddCa(2, "B");
    ASSERT_TRUE(t.Connect(sw, 1, a, 1, IbLinkRate::EDR, 4));
    ASSERT_TRUE(t.Connect(sw, 2, b, 1, IbLinkRate::EDR, 4));
    ASSERT_TRUE(t.Connect(a, 2, b, 2, IbLinkRate::EDR, 4));
    std::string error;
    EXPECT_FALSE(t.Validate(&error));
    EXPECT_EQ(error,
              "'A' port 2 is cabled straight to 'B' port 2, in a fabric with switches: that "
              "cable is a separate subnet, which this subnet manager cannot reach through its "
              "switches; remove it (or simulate that pair as a fabric of its own)");
    IbTopology pair;
    const uint32_t x = pair.AddCa(1, "x");
    const uint32_t y = pair.AddCa(1, "y");
    ASSERT_TRUE(pair.Connect(x, 1, y, 1, IbLinkRate::EDR, 4));
    EXPECT_TRUE(pair.Validate(&error)) << error;
}

TEST(IbNetDiscoverReader, ParsesFullFormat)
{
    IbTopology t;
    ASSERT_EQ(ParseError(kFullSnippet, &t), "");
    ASSERT_EQ(t.GetNNodes(), 3u);
    EXPECT_EQ(t.GetNLinks(), 2u);
    const int32_t sw = t.FindByGuid(0xb8599f0300fc6de4ULL);
    const int32_t h1 = t.FindByGuid(0xec0d9a03007d7d0bULL);
    const int32_t h2 = t.FindByGuid(0xec0d9a03007d7d0cULL); // from the "H-" name
    ASSERT_GE(sw, 0);
    ASSERT_GE(h1, 0);
    ASSERT_GE(h2, 0);
    EXPECT_EQ(t.GetNode(sw).type, IbTopology::SWITCH);
    EXPECT_EQ(t.GetNode(sw).name, "MF0;r-ufm-sw95:MQM8700/U1");
    EXPECT_EQ(t.GetNode(sw).ports.size(), 42u);
    EXPECT_EQ(t.GetNode(h1).type, IbTopology::CA);
    EXPECT_EQ(t.GetNode(h1).name, "r-dcs96 HCA-2");
    EXPECT_EQ(t.GetNode(h2).ports.size(), 3u);
    const auto& p1 = t.GetNode(sw).ports[1];
    EXPECT_EQ(p1.peerNode, h1);
    EXPECT_EQ(p1.peerPort, 1);
    EXPECT_EQ(p1.speed, IbLinkRate::HDR);
    EXPECT_EQ(p1.width, 4);
    const auto& p2 = t.GetNode(sw).ports[2];
    EXPECT_EQ(p2.peerNode, h2);
    EXPECT_EQ(p2.speed, IbLinkRate::SDR);
    EXPECT_EQ(p2.width, 1);
    EXPECT_EQ(t.GetNode(h2).ports[2].peerNode, -1);
    EXPECT_EQ(t.GetNode(sw).level, -1);
}

TEST(IbNetDiscoverReader, LeavesOutSharpAggregationNodes)
{
    // The same fabric with the switch's SHARP Aggregation Node, which ibnetdiscover lists
    // as a CA on internal port 41, in a block of its own before the hosts'.
    std::string text = kFullSnippet;
    const std::string hostBlocks = "\nvendid=0x2c9\ndevid=0x101b";
    const size_t at = text.find(hostBlocks);
    ASSERT_NE(at, std::string::npos);
    text.insert(at,
                "[41]\t\"H-b8599f0300fc6dec\"[1](b8599f0300fc6dec) \t\t# \"Mellanox "
                "Technologies Aggregation Node\" lid 14 4xHDR\n"
                "\n"
                "Ca\t1 \"H-b8599f0300fc6dec\"\t\t# \"Mellanox Technologies Aggregation Node\"\n"
                "[1](b8599f0300fc6dec) \t\"S-b8599f0300fc6de4\"[41]\t\t# lid 14 lmc 0 "
                "\"MF0;r-ufm-sw95:MQM8700/U1\" lid 13 4xHDR\n");
    IbTopology t;
    ASSERT_EQ(ParseError(text, &t), "");
    ASSERT_EQ(t.GetNNodes(), 3u); // the switch and the two hosts
    EXPECT_EQ(t.GetNLinks(), 2u);
    EXPECT_LT(t.FindByGuid(0xb8599f0300fc6decULL), 0);
    const int32_t sw = t.FindByGuid(0xb8599f0300fc6de4ULL);
    const int32_t h1 = t.FindByGuid(0xec0d9a03007d7d0bULL);
    const int32_t h2 = t.FindByGuid(0xec0d9a03007d7d0cULL);
    ASSERT_GE(sw, 0);
    ASSERT_GE(h1, 0);
    ASSERT_GE(h2, 0);
    EXPECT_EQ(t.GetNode(sw).ports.size(), 42u);
    EXPECT_EQ(t.GetNode(sw).ports[41].peerNode, -1);
    EXPECT_EQ(t.GetNode(sw).ports[1].peerNode, h1);
    EXPECT_EQ(t.GetNode(sw).ports[2].peerNode, h2);
    EXPECT_EQ(t.GetNode(sw).ports[2].speed, IbLinkRate::SDR);
    EXPECT_EQ(t.GetNode(h1).ports[1].peerNode, sw);
    EXPECT_EQ(t.GetNode(h2).ports[1].peerPort, 2);
    EXPECT_EQ(t.GetNode(h2).name, "r-dcs97 HCA-1");
    std::string error;
    EXPECT_TRUE(t.Validate(&error)) << error;
}

TEST(IbNetDiscoverReader, ParsesIbsimFormAndDefaults)
{
    // Forward references, Hca/Ca keywords, names without GUIDs, comments, and a link
    // without speed (EDR 4x default), 12xQDR, 4xFDR10 and w=/s= options.
    const std::string text = "# ibsim\n"
                             "Switch 8 \"Switch1\" # first switch\n"
                             "[1] \"Hca1\"[1]\n"
                             "[2] \"Hca2\"[1] # 12xQDR\n"
                             "[3] \"Switch2\"[3] w=1 s=2\n"
                             "[4] \"Hca1\"[2] # 4xFDR10\n"
                             "\n"
                             "Switch 8 \"Switch2\"\n"
                             "# a comment inside a block\n"
                             "[3] \"Switch1\"[3]\n"
                             "\n"
                             "Hca 2 \"Hca1\"\n"
                             "[1] \"Switch1\"[1]\n"
                             "[2] \"Switch1\"[4] # 4xFDR10\n"
                             "Ca 1 \"Hca2\"\n"
                             "[1] \"Switch1\"[2]\n";
    IbTopology t;
    ASSERT_EQ(ParseError(text, &t), "");
    ASSERT_EQ(t.GetNNodes(), 4u);
    EXPECT_EQ(t.GetNLinks(), 4u);
    EXPECT_EQ(t.GetSwitches().size(), 2u);
    EXPECT_EQ(t.GetNode(0).name, "first switch");
    EXPECT_EQ(t.GetNode(1).name, "Switch2");
    const auto& sw1 = t.GetNode(0);
    EXPECT_EQ(sw1.ports[1].speed, IbLinkRate::EDR);
    EXPECT_EQ(sw1.ports[1].width, 4);
    EXPECT_EQ(sw1.ports[2].speed, IbLinkRate::QDR);
    EXPECT_EQ(sw1.ports[2].width, 12);
    EXPECT_EQ(sw1.ports[3].speed, IbLinkRate::DDR);
    EXPECT_EQ(sw1.ports[3].width, 1);
    EXPECT_EQ(sw1.ports[4].speed, IbLinkRate::FDR10);
    EXPECT_EQ(t.GetNode(sw1.ports[4].peerNode).name, "Hca1");
    EXPECT_EQ(sw1.ports[4].peerPort, 2);
    // generated GUIDs are unique and non-zero
    for (uint32_t i = 0; i < 4; ++i)
    {
        EXPECT_NE(t.GetNode(i).guid, 0u);
        EXPECT_EQ(t.FindByGuid(t.GetNode(i).guid), static_cast<int32_t>(i));
    }
    std::string error;
    EXPECT_TRUE(t.Validate(&error)) << error;
}

TEST(IbNetDiscoverReader, ReadsShippedFatTree)
{
    const std::string file = TopologiesDir() + "two-level-fat-tree.ibnd";
    IbTopology t;
    std::string error;
    ASSERT_TRUE(IbNetDiscoverReader::Read(file, t, &error)) << error;
    EXPECT_EQ(t.GetSwitches().size(), 6u);
    EXPECT_EQ(t.GetCas().size(), 16u);
    // 16 host cables + 4 leaves x 2 spines x 2 parallel cables
    EXPECT_EQ(t.GetNLinks(), 32u);
    EXPECT_EQ(ReachableCas(t), 16u);
    EXPECT_TRUE(t.Validate(&error)) << error;
    std::map<std::string, uint32_t> rates;
    for (uint32_t i = 0; i < t.GetNNodes(); ++i)
    {
        for (uint32_t p = 1; p < t.GetNode(i).ports.size(); ++p)
        {
            const auto& port = t.GetNode(i).ports[p];
            if (port.peerNode > static_cast<int32_t>(i))
            {
                ++rates[std::to_string(port.width) + "x" + IbLinkRate::SpeedName(port.speed)];
            }
        }
    }
    EXPECT_EQ(rates["4xHDR"], 8u + 15u); // gpu hosts + all uplinks but one
    EXPECT_EQ(rates["4xEDR"], 8u);       // cpu hosts
    EXPECT_EQ(rates["2xHDR"], 1u);       // one degraded uplink
    for (uint32_t s : t.GetSwitches())
    {
        const auto& node = t.GetNode(s);
        EXPECT_EQ(node.ports.size(), 42u) << node.name;
        const bool spine = node.name.find("spine") != std::string::npos;
        EXPECT_EQ(Degree(t, s), 8u) << node.name; // spine: 8 cables; leaf: 4 + 4
        if (!spine)
        {
            EXPECT_EQ(t.GetNode(node.ports[1].peerNode).type, IbTopology::CA);
        }
    }
    const int32_t gpu1 = t.FindByGuid(0xb8cef60300a13c2eULL);
    ASSERT_GE(gpu1, 0);
    EXPECT_EQ(t.GetNode(gpu1).name, "gpu001 mlx5_0");
    EXPECT_EQ(t.GetNode(t.GetNode(gpu1).ports[1].peerNode).name, "MF0;leaf01:MQM8700/U1");
}

TEST(IbNetDiscoverReader, ReadsShippedIbsim)
{
    const std::string file = TopologiesDir() + "ibsim-small.topo";
    IbTopology t;
    std::string error;
    ASSERT_TRUE(IbNetDiscoverReader::Read(file, t, &error)) << error;
    EXPECT_EQ(t.GetSwitches().size(), 4u);
    EXPECT_EQ(t.GetCas().size(), 5u);
    EXPECT_EQ(t.GetNLinks(), 10u);
    EXPECT_EQ(ReachableCas(t), 5u);
    EXPECT_TRUE(t.Validate(&error)) << error;
    const int32_t leaf1 = FindNamed(t, "leaf switch 1");
    const int32_t spine2 = FindNamed(t, "spine two");
    const int32_t hca3 = FindNamed(t, "dual-port host");
    ASSERT_GE(leaf1, 0);
    ASSERT_GE(spine2, 0);
    ASSERT_GE(hca3, 0);
    const auto& l1 = t.GetNode(leaf1);
    EXPECT_EQ(l1.ports[1].speed, IbLinkRate::FDR10); // given at the switch end only
    EXPECT_EQ(l1.ports[2].speed, IbLinkRate::EDR);   // default
    EXPECT_EQ(l1.ports[2].width, 4);
    EXPECT_EQ(l1.ports[7].speed, IbLinkRate::SDR); // s=1
    EXPECT_EQ(l1.ports[7].width, 12);              // w=12
    EXPECT_EQ(l1.ports[8].speed, IbLinkRate::QDR);
    EXPECT_EQ(l1.ports[8].peerNode, spine2);
    EXPECT_EQ(Degree(t, hca3), 2u);
}

/*
 * What real ibnetdiscover output also contains: the -g (grouping) lines (chassis headers,
 * "Hostname:", "Non-Chassis Nodes", "[ext N]" port numbers), and a cable between two CAs,
 * whose peer port GUID follows a space. Before, -g files stopped at "Non-Chassis Nodes"
 * and the CA-CA line at its second GUID.
 */
TEST(IbNetDiscoverReader, ReadsGroupedOutputAndCaToCaCables)
{
    const std::string text =
        "#\n# Topology file: generated on Mon Nov 30 10:00:00 2026\n#\n"
        "# Initiated from node 0002c903000a0001 port 0002c903000a0001\n"
        "\nChassis 1 (guid 0x0008f104003f0a3c)\n"
        "\n# Spine Nodes\n"
        "vendid=0x8f1\ndevid=0x5a31\nsysimgguid=0x8f104003f0a3c\t\t# Chassis 1\n"
        "switchguid=0x8f104003f0a3d(8f104003f0a3d)\t# ISR9288/ISR9096 Voltaire sLB-24D\n"
        "Switch\t24 \"S-0008f104003f0a3d\"\t\t# \"ISR9288 Voltaire sLB-24D\" base port 0 lid "
        "5 lmc 0\n"
        "[1][ext 1]\t\"S-0008f104003f0a3e\"[2]\t\t# \"ISR9288 Voltaire sLB-24D\" lid 6 4xQDR\n"
        "[2][ext 2]\t\"H-0002c903000a0001\"[2](2c903000a0003) \t\t# \"h1\" lid 1 4xQDR\n"
        "Hostname: isr9288-1\n"
        "\nNon-Chassis Nodes\n"
        "\nvendid=0x8f1\ndevid=0x5a31\n"
        "switchguid=0x8f104003f0a3e(8f104003f0a3e)\n"
        "Switch\t24 \"S-0008f104003f0a3e\"\t\t# \"edge\" base port 0 lid 6 lmc 0\n"
        "[2]\t\"S-0008f104003f0a3d\"[1][ext 1]\t\t# \"ISR9288 Voltaire sLB-24D\" lid 5 4xQDR\n"
        "\nvendid=0x2c9\ndevid=0x101b\ncaguid=0x2c903000a0001\n"
        "Ca\t2 \"H-0002c903000a0001\"\t\t# \"h1\"\n"
        "[1](2c903000a0002) \t\"H-0002c903000a0005\"[1] (2c903000a0006) \t\t# lid 1 lmc 0 \"h2\" "
        "lid 2 4xHDR\n"
        "[2](2c903000a0003) \t\"S-0008f104003f0a3d\"[2][ext 2]\t\t# lid 1 lmc 0 \"ISR9288\" lid "
        "5 4xQDR\n"
        "\ncaguid=0x2c903000a0005\n"
        "Ca\t1 \"H-0002c903000a0005\"\t\t# \"h2\"\n"
        "[1](2c903000a0006) \t\"H-0002c903000a0001\"[1] (2c903000a0002) \t\t# lid 2 lmc 0 \"h1\" "
        "lid 1 4xHDR\n";
    IbTopology t;
    ASSERT_EQ(ParseError(text, &t), "");
    EXPECT_EQ(t.GetSwitches().size(), 2u);
    EXPECT_EQ(t.GetCas().size(), 2u);
    EXPECT_EQ(t.GetNLinks(), 3u);
    const int32_t h1 = t.FindByGuid(0x2c903000a0001ULL);
    const int32_t h2 = t.FindByGuid(0x2c903000a0005ULL);
    ASSERT_GE(h1, 0);
    ASSERT_GE(h2, 0);
    EXPECT_EQ(t.GetNode(h1).ports[1].peerNode, h2);
    EXPECT_EQ(t.GetNode(h1).ports[1].speed, IbLinkRate::HDR);
    EXPECT_EQ(t.GetNode(h1).ports[2].speed, IbLinkRate::QDR);
}

/*
 * Link words ibnetdiscover could not decode ("??" width, "???" speed) are refused rather
 * than read as EDR 4x; ibsim's w= is LinkWidthEnabled bits, as ibsim reads it (before, a
 * lane count: w=2 gave 2x where ibsim gives 4x); e= is refused with what to write instead.
 */
TEST(IbNetDiscoverReader, UnknownLinkWordsAndIbsimWidthBits)
{
    const std::string sw = "Switch 4 \"S-1\"\n";
    const std::string ca = "\nCa 1 \"H-1\"\n[1] \"S-1\"[1]\n";
    for (const std::string word : {"4x???", "??x???", "??xHDR"})
    {
        const std::string error = ParseError(sw + "[1] \"H-1\"[1] # \"h\" lid 3 " + word + ca);
        EXPECT_EQ(error.rfind("topo.txt:2: link '" + word +
                                  "': ibnetdiscover did not know this link's width or speed; "
                                  "expected the link's real width and speed in its place",
                              0),
                  0u)
            << error;
    }
    const std::vector<std::pair<std::string, uint8_t>> widths = {{"1", 1},
                                                                 {"2", 4},
                                                                 {"3", 4},
                                                                 {"4", 8},
                                                                 {"8", 12},
                                                                 {"12", 12},
                                                                 {"16", 2},
                                                                 {"17", 2},
                                                                 {"31", 12}};
    for (const auto& [bits, lanes] : widths)
    {
        IbTopology t;
        ASSERT_EQ(ParseError(sw + "[1] \"H-1\"[1] w=" + bits + ca, &t), "") << bits;
        EXPECT_EQ(t.GetNode(0).ports[1].width, lanes) << "w=" << bits;
    }
    for (const std::string bad : {"0", "32", "x", "100"})
    {
        const std::string error = ParseError(sw + "[1] \"H-1\"[1] w=" + bad + ca);
        EXPECT_NE(error.find("width option 'w=" + bad +
                             "'; expected w=<1..31>, IBA "
                             "LinkWidthEnabled bits"),
                  std::string::npos)
            << error;
    }
    EXPECT_NE(ParseError(sw + "[1] \"H-1\"[1] e=1" + ca)
                  .find("topo.txt:2: ibsim extended-speed option 'e=1'; expected the link's "
                        "width and speed in the line's comment"),
              std::string::npos);
}

TEST(IbNetDiscoverReader, MalformedInputsNameFileAndLine)
{
    const std::string sw = "Switch 4 \"S-1\"\n";
    const std::string ca = "\nCa 1 \"H-1\"\n[1] \"S-1\"[1]\n";

    struct Case
    {
        std::string what;
        std::string text;
        uint32_t line;
        std::string needle;
    };

    const std::vector<Case> cases = {
        {"truncated port line", sw + "[1] \"H-1\"[1]\n[2] \"H-", 3, "missing closing quote"},
        {"truncated after peer", sw + "[1] \"H-1\"", 2, "ends after the peer name"},
        {"truncated peer port", sw + "[1] \"H-1\"[1" + ca, 2, "unterminated port number"},
        {"truncated header", "# c\nSwitch\n", 2, "without a port count"},
        {"bad port number 0", sw + "[0] \"H-1\"[1]" + ca, 2, "port number '0' in \"[0]\""},
        {"bad port number high", sw + "[5] \"H-1\"[1]" + ca, 2, "a port 1..4 of switch \"S-1\""},
        {"non-numeric port", sw + "[a] \"H-1\"[1]" + ca, 2, "port number 'a'"},
        {"peer port beyond its ports",
         sw + "[1] \"H-1\"[3]" + "\nCa 1 \"H-1\"\n",
         2,
         "a port 1..1 of channel adapter \"H-1\""},
        {"unknown node", sw + "[1] \"H-1\"[1]\n[2] \"H-9\"[1]" + ca, 3, "unknown node \"H-9\""},
        {"duplicate port line", sw + "[1] \"H-1\"[1]\n[1] \"H-1\"[1]" + ca, 3, "described again"},
        {"contradicting ends",
         sw + "[1] \"H-1\"[1]\n[2] \"H-2\"[1]\n" +
             "\nCa 1 \"H-1\"\n[1] \"S-1\"[2]\n\nCa 1 \"H-2\"\n",
         6,
         "both ends of a cable must agree"},
        {"two ports claim one",
         sw + "[1] \"H-1\"[1]\n[2] \"H-1\"[1]\n\nCa 1 \"H-1\"\n",
         3,
         "already cabled"},
        {"speed disagreement",
         sw + "[1] \"H-1\"[1] # 4xHDR\n\nCa 1 \"H-1\"\n[1] \"S-1\"[1] # 4xEDR\n",
         5,
         "link 4xEDR"},
        {"missing quote in header", "Switch 4 \"S-1\n", 1, "missing closing quote"},
        {"missing quote in description", "Switch 4 \"S-1\" # \"desc\n", 1, "missing closing quote"},
        {"non-numeric port count", "\n\nSwitch x4 \"S-1\"\n", 3, "port count 'x4'"},
        {"zero port count", "Ca 0 \"H-1\"\n", 1, "port count '0'"},
        {"duplicate node", sw + "\n" + sw, 3, "defined again"},
        {"router", "Rt 2 \"R-1\"\n", 1, "routers are not supported"},
        {"unknown speed", sw + "[1] \"H-1\"[1] # 4xWDR" + ca, 2, "link speed 'WDR'"},
        {"port line outside block", sw + "\n[1] \"H-1\"[1]" + ca, 3, "outside a node block"},
        {"garbage", sw + "\nhello world\n", 3, "unrecognised line"},
        {"trailing garbage", sw + "[1] \"H-1\"[1] junk" + ca, 2, "unexpected text 'junk'"},
        {"bad guid", "switchguid=0xZZ\n" + sw, 1, "GUID '0xZZ'"},
        {"duplicate guid",
         "Switch 4 \"S-00000000000000ab\"\n\nswitchguid=0xab\nSwitch 4 \"S-2\"\n",
         4,
         "already used"},
        {"self cable", sw + "[1] \"S-1\"[1]\n", 2, "cabled to itself"},
        {"switch looped to its own port",
         sw + "[1] \"S-1\"[2]\n[2] \"S-1\"[1]\n",
         2,
         "\"S-1\" cabled to its own port 2"},
        {"port GUIDs that disagree",
         sw + "[1] \"H-1\"[1](0x11)\n\nCa 1 \"H-1\"\n[1](0x12) \"S-1\"[1]\n",
         2,
         "port GUID (0x11) for \"H-1\"[1], which line 5 gives as (0x12)"},
        {"NUL in a name",
         std::string("Switch 4 \"S-") + '\0' + "1\"\n",
         1,
         "a control character (byte 0x00) at character 3 of the node name"},
        {"unbounded line",
         sw + std::string(70000, 'x') + "\n",
         2,
         "a line of more than 65536 bytes"},
        {"GUID line of the other kind",
         "caguid=0xab\n" + sw,
         2,
         "caguid=0xab before the switch header of \"S-1\""},
        {"GUID line and name disagree",
         "switchguid=0xab\nSwitch 4 \"S-00000000000000ac\"\n",
         2,
         "node \"S-00000000000000ac\" after switchguid=0xab"},
        {"empty", "# nothing\n\n", 2, "no Switch, Ca or Hca node"},
    };
    for (const Case& c : cases)
    {
        IbTopology t;
        t.AddCa(1, "sentinel");
        const std::string error = ParseError(c.text, &t);
        const std::string prefix = "topo.txt:" + std::to_string(c.line) + ": ";
        EXPECT_EQ(error.compare(0, prefix.size(), prefix), 0)
            << c.what << ": got \"" << error << "\", wanted prefix " << prefix;
        EXPECT_NE(error.find(c.needle), std::string::npos)
            << c.what << ": \"" << error << "\" lacks \"" << c.needle << "\"";
        EXPECT_NE(error.find("; expected "), std::string::npos) << c.what << ": " << error;
    }
}

TEST(IbNetDiscoverReader, AByteOrderMarkAndCrOnlyLineEndsReadAsPlainText)
{
    const std::string text = "Switch 2 \"S-1\"\n[1] \"H-1\"[1]\n\nCa 1 \"H-1\"\n[1] \"S-1\"[1]\n";
    IbTopology plain;
    ASSERT_EQ(ParseError(text, &plain), "");
    std::string cr = text;
    std::replace(cr.begin(), cr.end(), '\n', '\r');
    IbTopology t;
    EXPECT_EQ(ParseError("\xEF\xBB\xBF" + cr, &t), "");
    EXPECT_EQ(t.GetNNodes(), plain.GetNNodes());
    EXPECT_EQ(t.GetNLinks(), plain.GetNLinks());
    // And the line numbers of CR-only text count its lines.
    std::string bad = "Switch 2 \"S-1\"\r\rhello\r";
    EXPECT_EQ(ParseError(bad).compare(0, 11, "topo.txt:3:"), 0) << ParseError(bad);
}

TEST(IbNetDiscoverReader, NodesOfOneDescriptionGetDistinctNames)
{
    const std::string text =
        "Switch 2 \"S-1\" # \"MF0;switch:SB7800/U1\"\n[1] \"H-1\"[1]\n[2] \"S-2\"[2]\n\n"
        "Switch 2 \"S-2\" # \"MF0;switch:SB7800/U1\"\n[1] \"H-2\"[1]\n[2] \"S-1\"[2]\n\n"
        "Ca 1 \"H-1\" # \"host1\"\n[1] \"S-1\"[1]\n\nCa 1 \"H-2\" # \"host2\"\n[1] \"S-2\"[1]\n";
    IbTopology t;
    ASSERT_EQ(ParseError(text, &t), "");
    std::set<std::string> names;
    for (const IbTopology::Node& n : t.GetNodes())
    {
        names.insert(n.name);
    }
    EXPECT_EQ(names.size(), 4u);
    EXPECT_EQ(names.count("MF0;switch:SB7800/U1 (S-1)"), 1u);
    EXPECT_EQ(names.count("MF0;switch:SB7800/U1 (S-2)"), 1u);
    EXPECT_EQ(names.count("host1"), 1u); // unique descriptions stay as they are
}

TEST(IbNetDiscoverReader, FailureLeavesOutputAndReportsMissingFile)
{
    IbTopology t;
    t.AddCa(1, "keep-me");
    std::istringstream in("Switch 4 \"S-1\"\n[1] \"H-9\"[1]\n");
    std::string error;
    EXPECT_FALSE(IbNetDiscoverReader::Parse(in, "x.topo", t, &error));
    ASSERT_EQ(t.GetNNodes(), 1u);
    EXPECT_EQ(t.GetNode(0).name, "keep-me");
    // a null error pointer is allowed
    std::istringstream in2("Switch 4 \"S-1\"\n[1] \"H-9\"[1]\n");
    EXPECT_FALSE(IbNetDiscoverReader::Parse(in2, "x.topo", t, nullptr));

    EXPECT_FALSE(IbNetDiscoverReader::Read("/nonexistent/dir/none.ibnd", t, &error));
    EXPECT_NE(error.find("/nonexistent/dir/none.ibnd"), std::string::npos) << error;
    EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(IbNetDiscoverReader, TruncatedOrMutatedInputNeverCrashes)
{
    std::ifstream in(TopologiesDir() + "two-level-fat-tree.ibnd");
    ASSERT_TRUE(in.good());
    const std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto lines = static_cast<uint32_t>(std::count(full.begin(), full.end(), '\n'));
    uint32_t failures = 0;
    auto check = [&](const std::string& text) {
        std::istringstream s(text);
        IbTopology t;
        std::string error;
        if (!IbNetDiscoverReader::Parse(s, "cut.ibnd", t, &error))
        {
            ++failures;
            ASSERT_EQ(error.compare(0, 9, "cut.ibnd:"), 0) << error;
            const uint32_t line = std::stoul(error.substr(9));
            EXPECT_GE(line, 1u) << error;
            EXPECT_LE(line, lines + 1) << error;
            EXPECT_NE(error.find("; expected "), std::string::npos) << error;
        }
    };
    for (size_t cut = 0; cut < full.size(); cut += 11)
    {
        check(full.substr(0, cut));
    }
    const std::string junk = "[]\"#(x0 \n";
    for (size_t at = 0; at < full.size(); at += 17)
    {
        std::string text = full;
        text[at] = junk[at % junk.size()];
        check(text);
    }
    EXPECT_GT(failures, 0u);
}

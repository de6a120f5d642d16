/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Routing tests: LID assignment, the routing engines (minhop, updn, ftree, dfsssp, file),
 * the deadlock and reachability checker, and the LFT dump format. Topologies are built
 * by hand here; every expectation is a property of the routes (reachability, path length
 * against BFS, acyclic dependency graphs, channel loads), not a pasted table.
 */

#include "ns3/core-module.h"
#include "ns3/ib-deadlock-checker.h"
#include "ns3/ib-lft-dump.h"
#include "ns3/ib-lid-assigner.h"
#include "ns3/ib-routing-dfsssp.h"
#include "ns3/ib-routing-file.h"
#include "ns3/ib-routing-ftree.h"
#include "ns3/ib-routing-minhop.h"
#include "ns3/ib-routing-updn.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-topology.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace ns3;

namespace
{

/// Two-level leaf/spine: every leaf has one cable to every spine.
IbTopology
LeafSpine(uint32_t leaves, uint32_t spines, uint32_t hostsPerLeaf, bool levels)
{
    IbTopology t;
    std::vector<uint32_t> hosts;
    for (uint32_t h = 0; h < leaves * hostsPerLeaf; ++h)
    {
        hosts.push_back(t.AddCa(1, "host-" + std::to_string(h)));
    }
    std::vector<uint32_t> leaf;
    std::vector<uint32_t> spine;
    for (uint32_t i = 0; i < leaves; ++i)
    {
        leaf.push_back(t.AddSwitch(hostsPerLeaf + spines, "leaf-" + std::to_string(i)));
    }
    for (uint32_t j = 0; j < spines; ++j)
    {
        spine.push_back(t.AddSwitch(leaves, "spine-" + std::to_string(j)));
    }
    for (uint32_t h = 0; h < hosts.size(); ++h)
    {
        t.ConnectNextFree(leaf[h / hostsPerLeaf], hosts[h]);
    }
    for (uint32_t i = 0; i < leaves; ++i)
    {
        for (uint32_t j = 0; j < spines; ++j)
        {
            t.ConnectNextFree(leaf[i], spine[j]);
        }
    }
    if (levels)
    {
        for (uint32_t s : leaf)
        {
            t.GetNodeMutable(s).level = 0;
        }
        for (uint32_t s : spine)
        {
            t.GetNodeMutable(s).level = 1;
        }
    }
    return t;
}

/**
 * The k-ary n-tree (Petrini and Vanneschi): k^n hosts, n levels of k^(n-1) switches with
 * 2k ports. Switch <w, l>, w in {0..k-1}^(n-1) as a number; <w, l> and <w', l+1> are
 * cabled when they differ at most in the digit of weight k^l: the lower uses up port
 * k+1+(upper's digit), the upper down port 1+(lower's digit). Host h sits on leaf h / k,
 * port h % k + 1.
 */
IbTopology
KaryNTree(uint32_t k, uint32_t n, bool levels)
{
    IbTopology t;
    uint32_t perLevel = 1;
    for (uint32_t i = 0; i + 1 < n; ++i)
    {
        perLevel *= k;
    }
    const uint32_t numHosts = perLevel * k;
    for (uint32_t h = 0; h < numHosts; ++h)
    {
        t.AddCa(1, "host-" + std::to_string(h));
    }
    std::vector<std::vector<uint32_t>> sw(n, std::vector<uint32_t>(perLevel));
    for (uint32_t l = 0; l < n; ++l)
    {
        for (uint32_t w = 0; w < perLevel; ++w)
        {
            sw[l][w] = t.AddSwitch(2 * k, "sw-" + std::to_string(l) + "-" + std::to_string(w));
            if (levels)
            {
                t.GetNodeMutable(sw[l][w]).level = l;
            }
        }
    }
    for (uint32_t h = 0; h < numHosts; ++h)
    {
        EXPECT_TRUE(t.Connect(sw[0][h / k], h % k + 1, h, 1, IbLinkRate::EDR, 4));
    }
    uint32_t weight = 1;
    for (uint32_t l = 0; l + 1 < n; ++l)
    {
        for (uint32_t w = 0; w < perLevel; ++w)
        {
            const uint32_t digit = (w / weight) % k;
            for (uint32_t c = 0; c < k; ++c)
            {
                const uint32_t upper = w - digit * weight + c * weight;
                EXPECT_TRUE(t.Connect(sw[l][w],
                                      k + 1 + c,
                                      sw[l + 1][upper],
                                      1 + digit,
                                      IbLinkRate::EDR,
                                      4));
            }
        }
        weight *= k;
    }
    return t;
}

/// Switches in a ring, each with its hosts.
IbTopology
Ring(uint32_t numSwitches, uint32_t hostsPerSwitch)
{
    IbTopology t;
    std::vector<uint32_t> sw;
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        sw.push_back(t.AddSwitch(hostsPerSwitch + 2, "sw-" + std::to_string(i)));
    }
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        for (uint32_t h = 0; h < hostsPerSwitch; ++h)
        {
            t.ConnectNextFree(sw[i], t.AddCa(1));
        }
    }
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        t.ConnectNextFree(sw[i], sw[(i + 1) % numSwitches]);
    }
    return t;
}

/// A random connected irregular fabric: a random tree plus extra cables, 1-2 hosts each.
IbTopology
RandomIrregular(uint32_t numSwitches, uint32_t extraLinks, uint32_t seed)
{
    std::mt19937 rng(seed);
    IbTopology t;
    std::vector<uint32_t> sw;
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        sw.push_back(t.AddSwitch(16));
    }
    for (uint32_t i = 1; i < numSwitches; ++i)
    {
        t.ConnectNextFree(sw[i], sw[rng() % i]);
    }
    for (uint32_t e = 0; e < extraLinks; ++e)
    {
        const uint32_t a = rng() % numSwitches;
        const uint32_t b = rng() % numSwitches;
        if (a != b)
        {
            t.ConnectNextFree(sw[a], sw[b]); // parallel cables are allowed
        }
    }
    for (uint32_t i = 0; i < numSwitches; ++i)
    {
        const uint32_t hosts = 1 + rng() % 2;
        for (uint32_t h = 0; h < hosts; ++h)
        {
            t.ConnectNextFree(sw[i], t.AddCa(1));
        }
    }
    return t;
}

Ptr<IbRoutingEngine>
MakeEngine(const std::string& name)
{
    if (name == "minhop")
    {
        return CreateObject<IbMinHopRouting>();
    }
    if (name == "updn")
    {
        return CreateObject<IbUpDownRouting>();
    }
    if (name == "ftree")
    {
        return CreateObject<IbFatTreeRouting>();
    }
    if (name == "dfsssp")
    {
        return CreateObject<IbDfssspRouting>();
    }
    return nullptr;
}

/// Route; fails the test on error.
IbRoutingTables
RouteOk(const std::string& engine, const IbRoutingProblem& problem)
{
    IbRoutingTables tables;
    std::string error;
    Ptr<IbRoutingEngine> e = MakeEngine(engine);
    EXPECT_EQ(e->GetName(), engine);
    EXPECT_TRUE(e->Route(problem, tables, &error)) << engine << ": " << error;
    return tables;
}

/// Switch hops of the route from CA port (ca, 1) to dlid; -1 if it does not arrive.
int32_t
RouteLength(const IbRoutingProblem& p,
            const IbRoutingTables& tables,
            uint32_t ca,
            uint16_t dlid,
            std::vector<std::pair<uint32_t, uint8_t>>* channels = nullptr)
{
    const auto& nodes = p.topology->GetNodes();
    uint32_t node = ca;
    uint8_t port = 1;
    for (int32_t hops = 0; hops < 1000; ++hops)
    {
        if (channels)
        {
            channels->emplace_back(node, port);
        }
        const auto& link = nodes[node].ports[port];
        if (nodes[link.peerNode].type == IbTopology::CA)
        {
            return link.peerNode == p.lidOwner[dlid].first ? hops : -1;
        }
        node = link.peerNode;
        port = tables.lft[node][dlid];
        if (port == 0 || port == IbRoutingTables::NO_ROUTE)
        {
            return -1;
        }
    }
    return -1;
}

/// BFS distance in switches crossed between two single-port CAs.
uint32_t
SwitchDistance(const IbTopology& t, uint32_t a, uint32_t b)
{
    const auto& nodes = t.GetNodes();
    std::vector<int32_t> dist(nodes.size(), -1);
    std::vector<uint32_t> queue{a};
    dist[a] = 0;
    for (std::size_t head = 0; head < queue.size(); ++head)
    {
        const uint32_t u = queue[head];
        if (u != a && nodes[u].type == IbTopology::CA)
        {
            continue; // CAs do not forward
        }
        for (const auto& port : nodes[u].ports)
        {
            if (port.peerNode >= 0 && dist[port.peerNode] < 0)
            {
                dist[port.peerNode] = dist[u] + 1;
                queue.push_back(port.peerNode);
            }
        }
    }
    return dist[b] - 1; // cables - 1 = switches crossed
}

/// Named topologies for the all-engines tests.
struct Fabric
{
    std::string name;
    IbTopology topology;
    bool fatTree;
};

std::vector<Fabric>
AllFabrics()
{
    std::vector<Fabric> f;
    f.push_back({"leaf-spine 4x2 (levels)", LeafSpine(4, 2, 3, true), true});
    f.push_back({"leaf-spine 6x3 (no levels)", LeafSpine(6, 3, 4, false), true});
    f.push_back({"2-ary 3-tree", KaryNTree(2, 3, true), true});
    f.push_back({"4-ary 2-tree", KaryNTree(4, 2, false), true});
    f.push_back({"ring 6", Ring(6, 2), false});
    f.push_back({"random irregular", RandomIrregular(12, 10, 7), false});
    return f;
}

std::vector<uint32_t>
CasOf(const IbTopology& t)
{
    return t.GetCas();
}

} // namespace

// ------------------------------------------------------------------- LID assignment

TEST(IbLidAssigner, NodeOrderLmc0)
{
    IbTopology t = LeafSpine(2, 1, 2, false); // hosts 0..3, leaves 4..5, spine 6
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    EXPECT_EQ(p.MaxLid(), 7);
    for (uint32_t n = 0; n < 7; ++n)
    {
        const uint8_t port = t.GetNode(n).type == IbTopology::CA ? 1 : 0;
        EXPECT_EQ(p.baseLid[n][port], n + 1);
        EXPECT_EQ(p.lidOwner[n + 1].first, static_cast<int32_t>(n));
        EXPECT_EQ(p.lidOwner[n + 1].second, port);
    }
    EXPECT_EQ(p.lidOwner[0].first, -1);
}

TEST(IbLidAssigner, LmcAlignsCaPortsAndSwitchesFillHoles)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(8);  // LID 1
    const uint32_t ca = t.AddCa(2);      // port 1 cabled: LIDs 4..7 (LMC 2)
    const uint32_t sw2 = t.AddSwitch(8); // fills hole 2
    const uint32_t ca2 = t.AddCa(1);     // 8..11
    const uint32_t sw3 = t.AddSwitch(8); // fills hole 3
    t.ConnectNextFree(sw, ca);
    t.ConnectNextFree(sw, sw2);
    t.ConnectNextFree(sw2, ca2);
    t.ConnectNextFree(sw2, sw3);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 2, 4);
    EXPECT_EQ(p.lmc, 2);
    EXPECT_EQ(p.numDataVls, 4);
    EXPECT_EQ(p.baseLid[sw][0], 1);
    EXPECT_EQ(p.baseLid[ca][1], 4);
    EXPECT_EQ(p.baseLid[ca][2], 0); // uncabled port: no LID
    EXPECT_EQ(p.baseLid[sw2][0], 2);
    EXPECT_EQ(p.baseLid[ca2][1], 8);
    EXPECT_EQ(p.baseLid[sw3][0], 3);
    EXPECT_EQ(p.MaxLid(), 11);
    for (uint16_t lid = 4; lid < 8; ++lid)
    {
        EXPECT_EQ(p.lidOwner[lid], std::make_pair(static_cast<int32_t>(ca), uint8_t{1}));
    }
}

TEST(IbLidAssigner, RunningOutOfLidsAborts)
{
    IbTopology t;
    const uint32_t a = t.AddSwitch(254);
    const uint32_t b = t.AddSwitch(254);
    t.ConnectNextFree(a, b);
    for (uint32_t i = 0; i < 400; ++i)
    {
        t.ConnectNextFree(i < 200 ? a : b, t.AddCa(1));
    }
    // 400 ports * 128 LIDs > 0xBFFF.
    EXPECT_DEATH(IbLidAssigner::Assign(t, 7, 1), "0xBFFF|49151");
}

// ------------------------------------------------------------------- all engines

TEST(IbRouting, EveryEngineReachesAllPairs)
{
    for (const Fabric& f : AllFabrics())
    {
        const IbRoutingProblem p = IbLidAssigner::Assign(f.topology, 0, 8);
        std::vector<std::string> engines{"minhop", "updn", "dfsssp"};
        if (f.fatTree)
        {
            engines.push_back("ftree");
        }
        for (const std::string& engine : engines)
        {
            SCOPED_TRACE(f.name + " / " + engine);
            const IbRoutingTables tables = RouteOk(engine, p);
            std::string failure;
            EXPECT_TRUE(IbDeadlockChecker::CheckReachability(p, tables, &failure)) << failure;
            // Every switch LID is routed too, and a switch's own LID goes to port 0.
            for (uint32_t s : f.topology.GetSwitches())
            {
                for (uint32_t lid = 1; lid <= p.MaxLid(); ++lid)
                {
                    const uint8_t port = tables.lft[s][lid];
                    if (lid == p.baseLid[s][0])
                    {
                        EXPECT_EQ(port, 0);
                    }
                    else
                    {
                        EXPECT_NE(port, IbRoutingTables::NO_ROUTE);
                        EXPECT_NE(port, 0);
                    }
                }
            }
        }
    }
}

TEST(IbRouting, MinhopFtreeAndDfssspPathsAreShortest)
{
    for (const Fabric& f : AllFabrics())
    {
        // Eight data VLs, so that dfsssp can break the ring's and irregular fabric's cycles.
        const IbRoutingProblem p = IbLidAssigner::Assign(f.topology, 0, 8);
        std::vector<std::string> engines{"minhop", "dfsssp"};
        if (f.fatTree)
        {
            engines.push_back("ftree");
            engines.push_back("updn"); // up*/down* paths are shortest in fat trees
        }
        const auto cas = CasOf(f.topology);
        for (const std::string& engine : engines)
        {
            SCOPED_TRACE(f.name + " / " + engine);
            const IbRoutingTables tables = RouteOk(engine, p);
            for (uint32_t a : cas)
            {
                for (uint32_t b : cas)
                {
                    if (a != b)
                    {
                        EXPECT_EQ(RouteLength(p, tables, a, p.baseLid[b][1]),
                                  static_cast<int32_t>(SwitchDistance(f.topology, a, b)))
                            << "from " << f.topology.GetNode(a).name << " to "
                            << f.topology.GetNode(b).name;
                    }
                }
            }
        }
    }
}

TEST(IbRouting, MinhopBalancesEqualCostPorts)
{
    // 4 leaves x 4 spines, 4 hosts per leaf: each leaf has 12 remote host LIDs and 4 up
    // ports, so balancing gives exactly 3 per up port.
    IbTopology t = LeafSpine(4, 4, 4, false);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    const IbRoutingTables tables = RouteOk("minhop", p);
    for (uint32_t s : t.GetSwitches())
    {
        if (t.GetNode(s).name.rfind("leaf", 0) != 0)
        {
            continue;
        }
        std::map<uint8_t, uint32_t> perPort;
        for (uint32_t ca : t.GetCas())
        {
            const uint8_t port = tables.lft[s][p.baseLid[ca][1]];
            if (t.GetNode(s).ports[port].peerNode >= 0 &&
                t.GetNode(t.GetNode(s).ports[port].peerNode).type == IbTopology::SWITCH)
            {
                ++perPort[port];
            }
        }
        EXPECT_EQ(perPort.size(), 4u);
        for (const auto& [port, n] : perPort)
        {
            EXPECT_EQ(n, 3u) << t.GetNode(s).name << " port " << +port;
        }
    }
}

TEST(IbRouting, Lmc1GivesTwoLidsPerCaPortAllRoutedOnDifferentPaths)
{
    IbTopology t = LeafSpine(4, 2, 2, true);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 1, 1);
    for (uint32_t ca : t.GetCas())
    {
        const uint16_t base = p.baseLid[ca][1];
        EXPECT_EQ(base % 2, 0);
        EXPECT_EQ(p.lidOwner[base].first, static_cast<int32_t>(ca));
        EXPECT_EQ(p.lidOwner[base + 1].first, static_cast<int32_t>(ca));
    }
    for (const std::string engine : {"minhop", "updn", "ftree", "dfsssp"})
    {
        SCOPED_TRACE(engine);
        const IbRoutingTables tables = RouteOk(engine, p);
        std::string failure;
        EXPECT_TRUE(IbDeadlockChecker::CheckReachability(p, tables, &failure)) << failure;
        if (engine == "dfsssp")
        {
            continue; // SSSP spreads by weights, not by LID
        }
        // The two LIDs of a remote host leave a leaf through different spines.
        for (uint32_t a : t.GetCas())
        {
            for (uint32_t b : t.GetCas())
            {
                if (SwitchDistance(t, a, b) != 3)
                {
                    continue;
                }
                std::vector<std::pair<uint32_t, uint8_t>> c0;
                std::vector<std::pair<uint32_t, uint8_t>> c1;
                RouteLength(p, tables, a, p.baseLid[b][1], &c0);
                RouteLength(p, tables, a, p.baseLid[b][1] + 1, &c1);
                ASSERT_GE(c0.size(), 2u);
                ASSERT_GE(c1.size(), 2u);
                EXPECT_NE(c0[1], c1[1]);
            }
        }
    }
}

// ------------------------------------------------------------------- updn

TEST(IbRouting, UpdnDetectsRootsAndAcceptsRootGuids)
{
    IbTopology t = LeafSpine(4, 2, 2, false);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    Ptr<IbUpDownRouting> updn = CreateObject<IbUpDownRouting>();
    IbRoutingTables tables;
    std::string error;
    ASSERT_TRUE(updn->Route(p, tables, &error)) << error;
    std::set<std::string> roots;
    for (uint32_t r : updn->GetRoots())
    {
        roots.insert(t.GetNode(r).name);
    }
    EXPECT_EQ(roots, (std::set<std::string>{"spine-0", "spine-1"}));

    // A management node on spine-0 (or a SHARP aggregation node, which ibnetdiscover
    // lists as a CA) of a 32-host tree: both spines stay roots. (Ranking by the distance
    // from the nearest CA made spine-1 the only root, and all leaf-to-leaf traffic crossed
    // it.)
    {
        IbTopology m;
        std::vector<uint32_t> leaves;
        std::vector<uint32_t> spines;
        for (uint32_t i = 0; i < 8; ++i)
        {
            leaves.push_back(m.AddSwitch(6, "leaf-" + std::to_string(i)));
        }
        for (uint32_t j = 0; j < 2; ++j)
        {
            spines.push_back(m.AddSwitch(9, "spine-" + std::to_string(j)));
        }
        std::vector<uint32_t> hosts;
        for (uint32_t h = 0; h < 32; ++h)
        {
            hosts.push_back(m.AddCa(1, "host-" + std::to_string(h)));
            m.ConnectNextFree(leaves[h / 4], hosts.back());
        }
        for (uint32_t i = 0; i < 8; ++i)
        {
            for (uint32_t j = 0; j < 2; ++j)
            {
                m.ConnectNextFree(leaves[i], spines[j]);
            }
        }
        m.ConnectNextFree(spines[0], m.AddCa(1, "ufm"));
        const IbRoutingProblem mp = IbLidAssigner::Assign(m, 0, 1);
        Ptr<IbUpDownRouting> u = CreateObject<IbUpDownRouting>();
        ASSERT_TRUE(u->Route(mp, tables, &error)) << error;
        std::set<std::string> mroots;
        for (uint32_t r : u->GetRoots())
        {
            mroots.insert(m.GetNode(r).name);
        }
        EXPECT_EQ(mroots, (std::set<std::string>{"spine-0", "spine-1"}));
        // Each leaf sends its 28 remote hosts' LIDs up both spines.
        for (uint32_t i = 0; i < 8; ++i)
        {
            std::set<uint32_t> up;
            for (uint32_t h = 0; h < 32; ++h)
            {
                if (h / 4 != i)
                {
                    up.insert(m.GetNode(leaves[i])
                                  .ports[tables.lft[leaves[i]][mp.baseLid[hosts[h]][1]]]
                                  .peerNode);
                }
            }
            EXPECT_EQ(up.size(), 2u) << "leaf-" << i;
        }
        EXPECT_TRUE(IbDeadlockChecker::CheckReachability(mp, tables, &error)) << error;
    }

    // One given root (a leaf, as a test of the attribute).
    char guid[32];
    const uint32_t leaf0 = t.GetSwitches().front();
    std::snprintf(guid, sizeof(guid), "0x%llx", (unsigned long long)t.GetNode(leaf0).guid);
    updn->SetAttribute("RootGuids", StringValue(guid));
    ASSERT_TRUE(updn->Route(p, tables, &error)) << error;
    ASSERT_EQ(updn->GetRoots().size(), 1u);
    EXPECT_EQ(updn->GetRoots()[0], leaf0);
    EXPECT_TRUE(IbDeadlockChecker::CheckReachability(p, tables, &error)) << error;
    EXPECT_TRUE(IbDeadlockChecker::Check(p, tables).empty());

    updn->SetAttribute("RootGuids", StringValue("0x1234567"));
    EXPECT_FALSE(updn->Route(p, tables, &error));
    EXPECT_NE(error.find("0x0000000001234567"), std::string::npos) << error;
    updn->SetAttribute("RootGuids", StringValue("zz"));
    EXPECT_FALSE(updn->Route(p, tables, &error));
    EXPECT_NE(error.find("'zz'"), std::string::npos) << error;
}

TEST(IbRouting, TwoRailsJoinedOnlyByTheHostsAreRefusedAsSeparateSubnets)
{
    // Every host has port 1 on rail A and port 2 on rail B: the topology is connected
    // through the hosts, but the switches are two subnets.
    IbTopology t;
    const uint32_t railA = t.AddSwitch(4, "rail-a");
    const uint32_t railB = t.AddSwitch(4, "rail-b");
    for (uint32_t h = 0; h < 2; ++h)
    {
        const uint32_t ca = t.AddCa(2, "host-" + std::to_string(h));
        ASSERT_TRUE(t.Connect(ca, 1, railA, h + 1, IbLinkRate::EDR, 4, nullptr));
        ASSERT_TRUE(t.Connect(ca, 2, railB, h + 1, IbLinkRate::EDR, 4, nullptr));
    }
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 8);
    for (const std::string engine : {"minhop", "updn", "dfsssp"})
    {
        IbRoutingTables tables;
        std::string error;
        EXPECT_FALSE(MakeEngine(engine)->Route(p, tables, &error)) << engine;
        EXPECT_NE(error.find("separate subnets"), std::string::npos) << engine << ": " << error;
    }
}

// ------------------------------------------------------------------- ftree

TEST(IbRouting, FtreeRefusesNonFatTrees)
{
    {
        IbTopology t = Ring(4, 1);
        const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
        IbRoutingTables tables;
        std::string error;
        EXPECT_FALSE(CreateObject<IbFatTreeRouting>()->Route(p, tables, &error));
        EXPECT_NE(error.find("switch 'sw-"), std::string::npos) << error;
        EXPECT_NE(error.find("adjacent levels"), std::string::npos) << error;
    }
    // A three-level tree whose leaf L3 shows no hosts (ibnetdiscover lists only active
    // links): without levels it looks like a level-2 switch, and the message says why.
    {
        IbTopology t;
        std::vector<uint32_t> leaf;
        std::vector<uint32_t> agg;
        for (uint32_t i = 0; i < 4; ++i)
        {
            leaf.push_back(t.AddSwitch(4, "L" + std::to_string(i)));
        }
        for (uint32_t i = 0; i < 4; ++i)
        {
            agg.push_back(t.AddSwitch(4, "A" + std::to_string(i)));
        }
        const uint32_t core[2] = {t.AddSwitch(2, "C0"), t.AddSwitch(2, "C1")};
        for (uint32_t i = 0; i < 3; ++i)
        {
            t.ConnectNextFree(leaf[i], t.AddCa(1));
            t.ConnectNextFree(leaf[i], t.AddCa(1));
        }
        for (uint32_t i = 0; i < 4; ++i) // pod i / 2: leaves 2p, 2p+1 and aggs 2p, 2p+1
        {
            for (uint32_t j = 0; j < 2; ++j)
            {
                t.ConnectNextFree(leaf[i], agg[(i / 2) * 2 + j]);
            }
        }
        for (uint32_t a = 0; a < 4; ++a)
        {
            t.ConnectNextFree(agg[a], core[a % 2]);
        }
        const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
        IbRoutingTables tables;
        std::string error;
        EXPECT_FALSE(CreateObject<IbFatTreeRouting>()->Route(p, tables, &error));
        EXPECT_NE(error.find("switch 'L3' (level 2) cannot reach leaf switch"), std::string::npos)
            << error;
        EXPECT_NE(error.find("a leaf that shows no hosts"), std::string::npos) << error;
    }
    // A host on a level-1 switch, with the levels given and without (as from an
    // ibnetdiscover file, where the stray host makes 'top' a leaf too).
    auto strayHost = [](bool levels) {
        IbTopology u;
        const uint32_t leaf = u.AddSwitch(4, "leaf");
        const uint32_t top = u.AddSwitch(4, "top");
        u.ConnectNextFree(leaf, u.AddCa(1));
        u.ConnectNextFree(leaf, top);
        u.ConnectNextFree(top, u.AddCa(1, "stray-host"));
        if (levels)
        {
            u.GetNodeMutable(leaf).level = 0;
            u.GetNodeMutable(top).level = 1;
        }
        const IbRoutingProblem p = IbLidAssigner::Assign(u, 0, 1);
        IbRoutingTables tables;
        std::string error;
        EXPECT_FALSE(CreateObject<IbFatTreeRouting>()->Route(p, tables, &error));
        return error;
    };
    const std::string given = strayHost(true);
    EXPECT_NE(given.find("switch 'top'"), std::string::npos) << given;
    EXPECT_NE(given.find("stray-host"), std::string::npos) << given;
    const std::string derived = strayHost(false);
    EXPECT_NE(derived.find("if 'top' is not a leaf, its channel adapter 'stray-host' makes it "
                           "look like one"),
              std::string::npos)
        << derived;
    EXPECT_NE(derived.find("give every switch its level"), std::string::npos) << derived;
}

namespace
{

/**
 * Expect every shift permutation of @p cas (host i to host i + s) to cross each channel at
 * most once.
 * @param p the problem
 * @param tables its tables
 * @param cas the hosts, in order
 */
void
ExpectShiftsCongestionFree(const IbRoutingProblem& p,
                           const IbRoutingTables& tables,
                           const std::vector<uint32_t>& cas)
{
    const uint32_t n = cas.size();
    for (uint32_t s = 1; s < n; ++s)
    {
        std::map<std::pair<uint32_t, uint8_t>, uint32_t> load;
        for (uint32_t i = 0; i < n; ++i)
        {
            std::vector<std::pair<uint32_t, uint8_t>> channels;
            ASSERT_GE(RouteLength(p, tables, cas[i], p.baseLid[cas[(i + s) % n]][1], &channels), 0);
            for (const auto& c : channels)
            {
                ++load[c];
            }
        }
        uint32_t worst = 0;
        for (const auto& [c, l] : load)
        {
            worst = std::max(worst, l);
        }
        EXPECT_EQ(worst, 1u) << "shift " << s;
    }
}

} // namespace

TEST(IbRouting, FtreeShiftPermutationsAreCongestionFree)
{
    for (const auto& [k, n] : std::vector<std::pair<uint32_t, uint32_t>>{{2, 3}, {4, 2}, {3, 3}})
    {
        SCOPED_TRACE(std::to_string(k) + "-ary " + std::to_string(n) + "-tree");
        IbTopology t = KaryNTree(k, n, n % 2 == 1);
        const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
        const IbRoutingTables tables = RouteOk("ftree", p);
        ExpectShiftsCongestionFree(p, tables, CasOf(t));
    }
}

TEST(IbRouting, FtreeSpreadsShiftsOverInterleavedParallelCables)
{
    // Two leaves of 4 hosts, two spines, two cables from every leaf to every spine, cabled
    // as real leaves often are: uplink k to spine k mod 2 (A B A B). Before, a leaf sent
    // spine A only destinations of even index and A used only its first cable down to
    // each leaf: the leaf-to-leaf shift put two flows on one cable and none on its twin.
    IbTopology t;
    std::vector<uint32_t> hosts;
    for (uint32_t h = 0; h < 8; ++h)
    {
        hosts.push_back(t.AddCa(1, "host-" + std::to_string(h)));
    }
    const uint32_t leaf[2] = {t.AddSwitch(8, "leaf-0"), t.AddSwitch(8, "leaf-1")};
    const uint32_t spine[2] = {t.AddSwitch(4, "spine-A"), t.AddSwitch(4, "spine-B")};
    for (uint32_t h = 0; h < 8; ++h)
    {
        t.ConnectNextFree(leaf[h / 4], hosts[h]);
    }
    for (uint32_t i = 0; i < 2; ++i)
    {
        for (uint32_t k = 0; k < 4; ++k)
        {
            t.ConnectNextFree(leaf[i], spine[k % 2]);
        }
    }
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    ExpectShiftsCongestionFree(p, RouteOk("ftree", p), hosts);
}

TEST(IbRouting, FtreeOnBuilderFabrics)
{
    // The fabrics the topology builder makes: ftree is congestion-free on shifts of its
    // k-ary n-tree and non-blocking 2-level fat tree, and deadlock-free on all of them.
    struct Case
    {
        std::string name;
        IbTopology t;
        bool shiftFree;
    };

    std::vector<Case> cases;
    cases.push_back({"KaryNTree(4,3)", IbTopologyBuilder::KaryNTree(4, 3), true});
    cases.push_back({"FatTree2Level(8, 32)", IbTopologyBuilder::FatTree2Level(8, 32), true});
    cases.push_back(
        {"FatTree3Level(8, 100, 2)", IbTopologyBuilder::FatTree3Level(8, 100, 2.0), false});
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.name);
        const IbRoutingProblem p = IbLidAssigner::Assign(c.t, 0, 1);
        const IbRoutingTables tables = RouteOk("ftree", p);
        std::string failure;
        EXPECT_TRUE(IbDeadlockChecker::CheckReachability(p, tables, &failure)) << failure;
        EXPECT_TRUE(IbDeadlockChecker::Check(p, tables).empty());
        if (!c.shiftFree)
        {
            continue;
        }
        const auto cas = CasOf(c.t);
        uint32_t worst = 0;
        for (uint32_t s = 1; s < cas.size(); ++s)
        {
            std::map<std::pair<uint32_t, uint8_t>, uint32_t> load;
            for (uint32_t i = 0; i < cas.size(); ++i)
            {
                std::vector<std::pair<uint32_t, uint8_t>> channels;
                RouteLength(p, tables, cas[i], p.baseLid[cas[(i + s) % cas.size()]][1], &channels);
                for (const auto& ch : channels)
                {
                    worst = std::max(worst, ++load[ch]);
                }
            }
        }
        EXPECT_EQ(worst, 1u);
    }
}

TEST(IbRouting, MinhopIsNotCongestionFreeOnShiftsButFtreeIs)
{
    // Sanity check of the congestion measure: on the 2-ary 3-tree, minhop's greedy
    // balancing is not shift-optimal for every shift while ftree is.
    IbTopology t = KaryNTree(2, 3, false);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    const auto cas = CasOf(t);
    auto worstOverShifts = [&](const IbRoutingTables& tables) {
        uint32_t worst = 0;
        for (uint32_t s = 1; s < cas.size(); ++s)
        {
            std::map<std::pair<uint32_t, uint8_t>, uint32_t> load;
            for (uint32_t i = 0; i < cas.size(); ++i)
            {
                std::vector<std::pair<uint32_t, uint8_t>> channels;
                RouteLength(p, tables, cas[i], p.baseLid[cas[(i + s) % cas.size()]][1], &channels);
                for (const auto& c : channels)
                {
                    worst = std::max(worst, ++load[c]);
                }
            }
        }
        return worst;
    };
    EXPECT_EQ(worstOverShifts(RouteOk("ftree", p)), 1u);
    EXPECT_GT(worstOverShifts(RouteOk("minhop", p)), 1u);
}

// ------------------------------------------------------------------- deadlocks

TEST(IbDeadlockChecker, FatTreesAreDeadlockFree)
{
    for (const Fabric& f : AllFabrics())
    {
        if (!f.fatTree)
        {
            continue;
        }
        const IbRoutingProblem p = IbLidAssigner::Assign(f.topology, 0, 1);
        for (const std::string engine : {"updn", "ftree", "minhop"})
        {
            SCOPED_TRACE(f.name + " / " + engine);
            const auto cycles = IbDeadlockChecker::Check(p, RouteOk(engine, p));
            EXPECT_TRUE(cycles.empty()) << IbDeadlockChecker::Describe(p, cycles.front());
        }
    }
}

TEST(IbDeadlockChecker, MinhopOnRingHasCycleThatDescribeNames)
{
    IbTopology t = Ring(6, 1);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    const IbRoutingTables tables = RouteOk("minhop", p);
    const auto cycles = IbDeadlockChecker::Check(p, tables);
    ASSERT_FALSE(cycles.empty());
    const auto& c = cycles.front();
    EXPECT_EQ(c.vl, 0);
    EXPECT_GE(c.channels.size(), 6u); // around the ring
    // Each channel's far end is the next channel's node.
    for (std::size_t i = 0; i < c.channels.size(); ++i)
    {
        const auto& link = t.GetNode(c.channels[i].first).ports[c.channels[i].second];
        EXPECT_EQ(static_cast<uint32_t>(link.peerNode),
                  c.channels[(i + 1) % c.channels.size()].first);
    }
    const std::string text = IbDeadlockChecker::Describe(p, c);
    EXPECT_EQ(text.rfind("VL0: sw-", 0), 0u) << text;
    const std::string first =
        t.GetNode(c.channels[0].first).name + " port " + std::to_string(c.channels[0].second);
    EXPECT_NE(text.find(" -> "), std::string::npos) << text;
    EXPECT_EQ(text.substr(text.size() - first.size()), first) << text;
    for (const auto& ch : c.channels)
    {
        EXPECT_NE(text.find(t.GetNode(ch.first).name + " port " + std::to_string(ch.second)),
                  std::string::npos)
            << text;
    }
    // An SL-to-VL map sending every SL to VL 3 moves the cycle to VL 3.
    std::array<uint8_t, 16> allTo3;
    allTo3.fill(3);
    const auto moved = IbDeadlockChecker::Check(p, tables, allTo3);
    ASSERT_FALSE(moved.empty());
    EXPECT_EQ(moved.front().vl, 3);
}

TEST(IbDeadlockChecker, UpdnOnRingAndIrregularHasNoCycle)
{
    for (const auto& t :
         {Ring(6, 1), Ring(4, 2), RandomIrregular(12, 10, 7), RandomIrregular(20, 25, 3)})
    {
        const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
        const IbRoutingTables tables = RouteOk("updn", p);
        std::string failure;
        EXPECT_TRUE(IbDeadlockChecker::CheckReachability(p, tables, &failure)) << failure;
        const auto cycles = IbDeadlockChecker::Check(p, tables);
        EXPECT_TRUE(cycles.empty()) << IbDeadlockChecker::Describe(p, cycles.front());
    }
}

TEST(IbDeadlockChecker, DfssspLayersTheRingOntoSeveralVls)
{
    IbTopology t = Ring(6, 2);
    {
        const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 4);
        const IbRoutingTables tables = RouteOk("dfsssp", p);
        EXPECT_GT(tables.vlsUsed, 1);
        EXPECT_LE(tables.vlsUsed, 4);
        std::string failure;
        EXPECT_TRUE(IbDeadlockChecker::CheckReachability(p, tables, &failure)) << failure;
        const auto cycles = IbDeadlockChecker::Check(p, tables);
        EXPECT_TRUE(cycles.empty()) << IbDeadlockChecker::Describe(p, cycles.front());
        // On one VL (all SLs to VL 0) the same routes do have a cycle.
        std::array<uint8_t, 16> allTo0{};
        EXPECT_FALSE(IbDeadlockChecker::Check(p, tables, allTo0).empty());
    }
    {
        const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
        IbRoutingTables tables;
        std::string error;
        EXPECT_FALSE(CreateObject<IbDfssspRouting>()->Route(p, tables, &error));
        EXPECT_NE(error.find("more than 1 VL"), std::string::npos) << error;
    }
    for (const auto& irregular : {RandomIrregular(12, 10, 7), RandomIrregular(20, 25, 3)})
    {
        const IbRoutingProblem p = IbLidAssigner::Assign(irregular, 1, 8);
        const IbRoutingTables tables = RouteOk("dfsssp", p);
        EXPECT_TRUE(IbDeadlockChecker::Check(p, tables).empty());
    }
}

TEST(IbDeadlockChecker, ReachabilityReportsMissingEntriesAndLoops)
{
    IbTopology t = Ring(4, 1);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    IbRoutingTables tables = RouteOk("minhop", p);
    std::string failure;
    ASSERT_TRUE(IbDeadlockChecker::CheckReachability(p, tables, &failure)) << failure;

    // Hosts are nodes 4..7 (LIDs 5..8) on sw-0..sw-3. Drop sw-1's entry for host on sw-2.
    const uint32_t host2 = 6;
    const uint16_t lid = p.baseLid[host2][1];
    IbRoutingTables broken = tables;
    broken.lft[1][lid] = IbRoutingTables::NO_ROUTE;
    EXPECT_FALSE(IbDeadlockChecker::CheckReachability(p, broken, &failure));
    EXPECT_NE(failure.find("sw-1' has no LFT entry"), std::string::npos) << failure;

    // A loop between sw-1 and sw-2... make sw-2 send it back to sw-1 and sw-1 to sw-2.
    broken = tables;
    const auto& sw1 = t.GetNode(1);
    uint8_t toSw2 = 0;
    for (uint32_t q = 1; q < sw1.ports.size(); ++q)
    {
        if (sw1.ports[q].peerNode == 2)
        {
            toSw2 = q;
        }
    }
    broken.lft[1][lid] = toSw2;
    broken.lft[2][lid] = sw1.ports[toSw2].peerPort;
    EXPECT_FALSE(IbDeadlockChecker::CheckReachability(p, broken, &failure));
    EXPECT_NE(failure.find("loops"), std::string::npos) << failure;
}

// ------------------------------------------------------------------- LFT dump

TEST(IbLftDump, WriteFormat)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(4, "MF0;leaf:MQM8700/U1", 0xb8599f0300fc6de4ULL);
    const uint32_t h = t.AddCa(1, "r-dcs96 HCA-2", 0xec0d9a03007d7d0bULL);
    t.ConnectNextFree(sw, h);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    const IbRoutingTables tables = RouteOk("minhop", p);
    std::ostringstream os;
    IbLftDump::Write(os, p, tables);
    EXPECT_EQ(os.str(),
              "Unicast lids [0x0-0x2] of switch Lid 1 guid 0xb8599f0300fc6de4 "
              "('MF0;leaf:MQM8700/U1'):\n"
              "0x0001 000 : (Switch portguid 0xb8599f0300fc6de4: 'MF0;leaf:MQM8700/U1')\n"
              "0x0002 001 : (Channel Adapter portguid 0xec0d9a03007d7d0b: 'r-dcs96 HCA-2')\n"
              "2 lids dumped\n");
}

TEST(IbLftDump, RoundTripThroughFileEngine)
{
    const std::string path = "ib-routing-test-lfts.dump";
    for (const Fabric& f : AllFabrics())
    {
        const IbRoutingProblem p = IbLidAssigner::Assign(f.topology, 1, 8);
        for (const std::string engine : {"minhop", "updn"})
        {
            SCOPED_TRACE(f.name + " / " + engine);
            const IbRoutingTables tables = RouteOk(engine, p);
            {
                std::ofstream out(path);
                IbLftDump::Write(out, p, tables);
            }
            Ptr<IbFileRouting> file = CreateObject<IbFileRouting>();
            EXPECT_EQ(file->GetName(), "file");
            file->SetAttribute("FileName", StringValue(path));
            IbRoutingTables read;
            std::string error;
            ASSERT_TRUE(file->Route(p, read, &error)) << error;
            EXPECT_EQ(read.lft, tables.lft);
        }
    }
    std::remove(path.c_str());

    Ptr<IbFileRouting> file = CreateObject<IbFileRouting>();
    file->SetAttribute("FileName", StringValue("/nonexistent/lfts.dump"));
    IbTopology t = Ring(3, 1);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    IbRoutingTables read;
    std::string error;
    EXPECT_FALSE(file->Route(p, read, &error));
    EXPECT_NE(error.find("/nonexistent/lfts.dump"), std::string::npos) << error;
}

TEST(IbLftDump, ReadsOpenSmAndIbrouteVariants)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(4, "sw", 0x0002c90300000010ULL);
    const uint32_t h = t.AddCa(1, "h", 0x0002c90300000020ULL);
    t.ConnectNextFree(sw, h);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    const std::string text = "# comment\n"
                             "Unicast lids [0-2] of switch Lid 1 guid 0x0002c90300000010 ('sw'):\n"
                             "  Lid  Out   Destination\r\n"
                             "       Port     Info \n"
                             "0x0001 000 # Switch portguid 0x0002c90300000010: 'sw'\n"
                             "0x2 001 : (Channel Adapter portguid 0x0002c90300000020: 'h')\n"
                             "\n"
                             "2 valid lids dumped \n";
    std::istringstream is(text);
    IbRoutingTables tables;
    std::string error;
    ASSERT_TRUE(IbLftDump::Read(is, "x.dump", p, tables, &error)) << error;
    EXPECT_EQ(tables.lft[sw], (std::vector<uint8_t>{255, 0, 1}));
    EXPECT_TRUE(tables.lft[h].empty());
}

TEST(IbLftDump, MalformedLinesNameFileAndLine)
{
    IbTopology t;
    const uint32_t sw = t.AddSwitch(4, "sw", 0x0002c90300000010ULL);
    t.ConnectNextFree(sw, t.AddCa(1, "h", 0x0002c90300000020ULL));
    const IbRoutingProblem p = IbLidAssigner::Assign(t, 0, 1);
    const std::string header =
        "Unicast lids [0x0-0x2] of switch Lid 1 guid 0x0002c90300000010 ('sw'):\n";
    const std::vector<std::pair<std::string, std::string>> cases{
        {header + "0x0002 xyz : (Channel Adapter)\n", "lfts.dump:2: bad port number"},
        {header + "0x0001 000 : (Switch)\n0xg002 001\n", "lfts.dump:3: bad LID"},
        {header + "0x0009 001\n", "lfts.dump:2: LID 0x0009 is beyond"},
        {header + "0x0002 007\n", "lfts.dump:2: switch 'sw' has no port 7"},
        {"0x0002 001\n", "lfts.dump:1: forwarding entry before any switch header"},
        {"Unicast lids [0x0-0x2] of switch Lid 1 guid 0x0002c903000000ff ('x'):\n",
         "lfts.dump:1: no switch of the fabric has GUID 0x0002c903000000ff"},
        {header + "0x0002 001\nhello world\n", "lfts.dump:3: unrecognised line 'hello world'"},
        {header + "0x0001 000\n" + header, "lfts.dump:3: second table for switch 'sw'"},
        {header + "0x0002 001\n",
         "lfts.dump:2: the table of switch 'sw' (from line 1) has no entry '0x0001 000' for "
         "the switch's own LID"},
        {header + "0x0002 001\n2 lids dumped\n",
         "lfts.dump:3: the table of switch 'sw' (from line 1) has no entry"},
        {"Unicast lids [0x0-0x2] of switch Lid 2 guid 0x0002c90300000010 ('sw'):\n",
         "lfts.dump:1: switch 'sw' (0x0002c90300000010) is LID 2 in this file but LID 1 in "
         "the fabric"},
        {header + "0x0001 001 : (Switch)\n",
         "lfts.dump:2: switch 'sw' sends its own LID 0x0001 to port 1; expected port 000"},
        {"\n\n", "lfts.dump:2: end of file, but no table for switch 'sw'"},
    };
    for (const auto& [text, expected] : cases)
    {
        std::istringstream is(text);
        IbRoutingTables tables;
        std::string error;
        EXPECT_FALSE(IbLftDump::Read(is, "lfts.dump", p, tables, &error)) << text;
        EXPECT_EQ(error.rfind(expected, 0), 0u) << "got: " << error;
        EXPECT_NE(error.find("expected"), std::string::npos) << error;
    }
}

// ------------------------------------------------------------------- scale

namespace
{

/// Route a 16-ary 3-tree (4096 hosts, 768 switches) and report the time per engine.
void
RouteLargeFatTree(uint8_t lmc, const std::vector<std::string>& engines)
{
    IbTopology t = KaryNTree(16, 3, true);
    const IbRoutingProblem p = IbLidAssigner::Assign(t, lmc, 8);
    for (const std::string& engine : engines)
    {
        const auto start = std::chrono::steady_clock::now();
        const IbRoutingTables tables = RouteOk(engine, p);
        const auto routed = std::chrono::steady_clock::now();
        std::string failure;
        EXPECT_TRUE(IbDeadlockChecker::CheckReachability(p, tables, &failure)) << failure;
        const auto checked = std::chrono::steady_clock::now();
        const auto cycles = IbDeadlockChecker::Check(p, tables);
        const auto end = std::chrono::steady_clock::now();
        EXPECT_TRUE(cycles.empty());
        auto ms = [](auto a, auto b) {
            return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
        };
        std::printf("%s, 4096 hosts, %u LIDs: route %ld ms, reachability %ld ms, deadlock "
                    "check %ld ms\n",
                    engine.c_str(),
                    p.MaxLid(),
                    static_cast<long>(ms(start, routed)),
                    static_cast<long>(ms(routed, checked)),
                    static_cast<long>(ms(checked, end)));
    }
}

} // namespace

TEST(IbRouting, DISABLED_LargeFatTreeTiming)
{
    RouteLargeFatTree(1, {"minhop", "updn", "ftree", "dfsssp"});
}

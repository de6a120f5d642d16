/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_TOPOLOGY_BUILDER_H
#define IB_TOPOLOGY_BUILDER_H

#include "ib-topology.h"

#include "ns3/ib-link-rate.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief Builds regular fabrics (fat trees, k-ary n-trees, rings, chains) as IbTopology
 * descriptions.
 *
 * All functions are deterministic: the same parameters always give the same node order,
 * port numbers and GUIDs, so every MPI rank builds the same fabric.
 *
 * Common conventions:
 * - Hosts (single-port channel adapters named "host-<k>") are added first, so host k is
 *   node index k; switches follow.
 * - Every cable gets the same @p speed and @p width.
 * - Host ports are the lowest switch ports (1, 2, ...), uplinks follow them.
 * - Impossible parameters abort with NS_ABORT_MSG naming the parameters and the largest
 *   host count that fits.
 */
class IbTopologyBuilder
{
  public:
    /**
     * Split a leaf switch's ports between hosts and uplinks for a requested
     * oversubscription (host ports : uplink ports).
     *
     * Rule: down = floor(radix * o / (1 + o)), up = radix - down. This is the largest
     * number of host ports whose ratio down/up does not exceed @p oversubscription, and it
     * uses every port. Examples: radix 32, o = 1 gives 16/16; o = 2 gives 21/11 (1.9:1);
     * o = 3 gives 24/8; radix 5, o = 1 gives 2/3. Aborts if either side would be empty.
     *
     * @param radix switch ports (>= 2)
     * @param oversubscription requested host:uplink ratio (> 0; 1.0 = non-blocking)
     * @param [out] down host ports per leaf
     * @param [out] up uplink ports per leaf
     */
    static void SplitLeafPorts(uint32_t radix,
                               double oversubscription,
                               uint32_t& down,
                               uint32_t& up);

    /**
     * Two-level leaf/spine fat tree (folded Clos).
     *
     * Each leaf switch (@p radix ports) has `down` host ports (1..down) and `up` uplinks
     * (ports down+1..down+up), split by SplitLeafPorts(). There are ceil(numHosts / down)
     * leaves and exactly `up` spines; every leaf has one cable to every spine: leaf i port
     * down+1+j goes to spine j port i+1. Spines have @p radix ports, of which one per leaf
     * is used, so at most radix leaves fit: the largest fabric holds radix * down hosts.
     * Hosts fill leaves in order (host k on leaf k / down, port k % down + 1); the last
     * leaf may be partly filled.
     *
     * Names "host-<k>", "leaf-<i>", "spine-<j>"; levels 0 (leaves) and 1 (spines).
     *
     * @param radix ports per switch (2..254)
     * @param numHosts number of hosts (>= 1)
     * @param oversubscription host ports : uplinks per leaf (1.0 = non-blocking)
     * @param speed link speed of every cable
     * @param width link width of every cable
     * @return the fabric
     */
    static IbTopology FatTree2Level(uint32_t radix,
                                    uint32_t numHosts,
                                    double oversubscription = 1.0,
                                    IbLinkRate::Speed speed = IbLinkRate::EDR,
                                    uint8_t width = 4);

    /**
     * The smallest even radix whose rail-optimized fat tree (RailOptimized2Level) holds
     * the servers: a rail's leaf per group of `down` servers, and every leaf on every spine.
     * @param servers servers (>= 1)
     * @param gpusPerServer GPUs (NICs) per server (>= 1)
     * @param oversubscription host ports : uplinks per leaf
     * @return the radix, or 0 if none up to 254 does
     */
    static uint32_t SmallestRailRadix(uint32_t servers,
                                      uint32_t gpusPerServer,
                                      double oversubscription = 1.0);

    /**
     * Two-level rail-optimized fat tree of GPU servers, each GPU with its own NIC: NIC k
     * of every server is cabled to a leaf of rail k, as in NVIDIA's DGX SuperPOD and other
     * AI-cluster reference designs, so that the k-th GPUs of the servers of a group meet
     * one switch away from each other.
     *
     * Servers form groups of `down` (SplitLeafPorts); group g has one leaf per rail,
     * "rail-<k>-leaf-<g>", and server s's NIC k (host s * gpusPerServer + k, port 1) goes to
     * port s % down + 1 of rail k's leaf of group s / down. There are `up` spines, and
     * every leaf has one cable to every spine (leaf index i = g * gpusPerServer + k, port
     * down+1+j to spine j port i+1), as in FatTree2Level: traffic between rails, or
     * between groups, crosses a spine. At most radix leaves fit: the largest fabric holds
     * radix / gpusPerServer groups of `down` servers.
     *
     * Names "host-<n>" (n = s * gpusPerServer + k), "rail-<k>-leaf-<g>", "spine-<j>";
     * levels 0 (leaves) and 1 (spines).
     *
     * @param radix ports per switch (2..254)
     * @param servers number of servers (>= 1)
     * @param gpusPerServer GPUs (NICs) per server (1..radix)
     * @param oversubscription host ports : uplinks per leaf (1.0 = non-blocking)
     * @param speed link speed of every cable
     * @param width link width of every cable
     * @return the fabric
     */
    static IbTopology RailOptimized2Level(uint32_t radix,
                                          uint32_t servers,
                                          uint32_t gpusPerServer,
                                          double oversubscription = 1.0,
                                          IbLinkRate::Speed speed = IbLinkRate::NDR,
                                          uint8_t width = 4);

    /**
     * Rail-only fabric of GPU servers (Wang et al., "Rail-only: a low-cost
     * high-performance network for training LLMs with trillion parameters", 2023): NIC k
     * of every server is on rail k's network, and no switch joins two rails, so traffic
     * between GPUs of different indices must cross NVLink first (NCCL's PXN; the
     * hierarchical algorithms do). The fabric is one subnet per rail
     * (IbTopology::SetSeparateSubnets).
     *
     * A rail is one switch, "rail-<k>-switch", when the servers fit its radix; else a
     * two-level fat tree of its own: groups of `down` servers (SplitLeafPorts) on leaves
     * "rail-<k>-leaf-<g>" (server s on port s % down + 1 of leaf s / down), and `up`
     * spines "rail-<k>-spine-<j>" with one cable from every leaf of the rail (leaf g port
     * down+1+j to spine j port g+1). At most radix leaves per rail: radix x down servers.
     *
     * Names "host-<n>" (n = s * gpusPerServer + k); levels 0 (switches with hosts) and 1.
     *
     * @param radix ports per switch (2..254)
     * @param servers number of servers (>= 1)
     * @param gpusPerServer GPUs (NICs, rails) per server (>= 1)
     * @param oversubscription host ports : uplinks per leaf, for rails of two levels
     * @param speed link speed of every cable
     * @param width link width of every cable
     * @return the fabric
     */
    static IbTopology RailOnly(uint32_t radix,
                               uint32_t servers,
                               uint32_t gpusPerServer,
                               double oversubscription = 1.0,
                               IbLinkRate::Speed speed = IbLinkRate::NDR,
                               uint8_t width = 4);

    /**
     * Three-level folded Clos: the k-ary fat tree (k = @p radix) generalised to any host
     * count and a leaf oversubscription.
     *
     * - Leaf: `down` host ports (1..down) and `up` uplinks, split by SplitLeafPorts().
     * - Pod: P = floor(radix / 2) leaves and `up` aggregation switches; leaf i port
     *   down+1+j goes to aggregation switch j port i+1 (every leaf reaches every
     *   aggregation switch of its pod once).
     * - Aggregation switch j: ports 1..P down to the pod's leaves, ports P+1..radix
     *   (C = radix - P uplinks) up to core group j, one cable to each of its C members.
     * - Core: `up` groups of C switches ("core-<j*C+m>"); core switch m of group j port
     *   p+1 goes to aggregation switch j of pod p. A core switch has one port per pod, so
     *   at most radix pods fit: the largest fabric holds radix * P * down hosts (radix^3/4
     *   non-blocking, e.g. 8192 at radix 32).
     *
     * Only the pods needed are built (ceil(leaves / P), the last pod may have fewer
     * leaves, and its last leaf fewer hosts); every pod has all its aggregation switches
     * and the core is always complete, so every pod reaches every core switch.
     *
     * Names "host-<k>", "leaf-<pod>-<i>", "agg-<pod>-<j>", "core-<m>"; levels 0, 1, 2.
     *
     * @param radix ports per switch (2..254)
     * @param numHosts number of hosts (>= 1)
     * @param oversubscription host ports : uplinks per leaf (1.0 = non-blocking)
     * @param speed link speed of every cable
     * @param width link width of every cable
     * @return the fabric
     */
    static IbTopology FatTree3Level(uint32_t radix,
                                    uint32_t numHosts,
                                    double oversubscription = 1.0,
                                    IbLinkRate::Speed speed = IbLinkRate::EDR,
                                    uint8_t width = 4);

    /**
     * The k-ary n-tree of Petrini and Vanneschi: k^n hosts and n levels of k^(n-1)
     * switches with 2k ports each.
     *
     * A switch is <w, l> with w = (w_0 .. w_{n-2}) in {0..k-1}^(n-1) and our level l
     * (0 = leaves, n-1 = top). Switches <w, l> and <w', l+1> are cabled when w and w'
     * differ at most in digit n-2-l. Ports 1..k go down, k+1..2k go up: the lower switch
     * uses up port k+1+(the upper switch's digit), the upper switch uses down port
     * 1+(the lower switch's digit). Host h = (p_0 .. p_{n-1}) sits on leaf
     * (p_0 .. p_{n-2}), port p_{n-1}+1. Top-level switches leave ports k+1..2k free.
     *
     * Names "host-<h>", "sw-<l>-<w>" (w as a number, w_0 most significant); levels 0..n-1.
     *
     * @param k half the switch radix (1..127)
     * @param n number of levels (>= 1)
     * @param speed link speed of every cable
     * @param width link width of every cable
     * @return the fabric
     */
    static IbTopology KaryNTree(uint32_t k,
                                uint32_t n,
                                IbLinkRate::Speed speed = IbLinkRate::EDR,
                                uint8_t width = 4);

    /**
     * Switches in a ring, each with its own hosts: a topology with a cyclic channel
     * dependency under shortest-path routing, for deadlock tests.
     *
     * Switch i ("sw-<i>") has hostsPerSwitch + 2 ports: ports 1..hostsPerSwitch to its
     * hosts (host i*hostsPerSwitch + h on port h+1), port hostsPerSwitch+1 to the next
     * switch (i+1 mod numSwitches) on its port hostsPerSwitch+2. With two switches the
     * ring is two parallel cables. Levels are left at -1.
     *
     * @param numSwitches number of switches (>= 2)
     * @param hostsPerSwitch hosts on each switch (>= 1)
     * @param speed link speed of every cable
     * @param width link width of every cable
     * @return the fabric
     */
    static IbTopology Ring(uint32_t numSwitches,
                           uint32_t hostsPerSwitch,
                           IbLinkRate::Speed speed = IbLinkRate::EDR,
                           uint8_t width = 4);

    /**
     * host-0 - sw-0 - sw-1 - ... - sw-(n-1) - host-1, for latency tests.
     *
     * Every switch has two ports: port 1 towards host-0, port 2 towards host-1. With
     * @p numSwitches = 0 the two hosts are cabled back to back. Levels are left at -1.
     *
     * @param numSwitches number of switches in the chain (0..)
     * @param speed link speed of every cable
     * @param width link width of every cable
     * @return the fabric
     */
    static IbTopology Chain(uint32_t numSwitches,
                            IbLinkRate::Speed speed = IbLinkRate::EDR,
                            uint8_t width = 4);
};

} // namespace ns3

#endif /* IB_TOPOLOGY_BUILDER_H */

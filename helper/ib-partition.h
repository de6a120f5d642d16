/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PARTITION_H
#define IB_PARTITION_H

#include "ns3/ib-topology.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <ostream>
#include <vector>

namespace ns3
{

struct IbFabric;

/**
 * @ingroup infiniband-helper
 * @brief Splits a fabric over the ranks of a distributed (MPI) simulation: which rank
 * simulates which topology node, and what that split costs.
 *
 * A partition is a vector with one rank per topology node (IbTopology order), to give
 * to IbFabricHelper::SetRankOfNode. Every rank must compute the same partition: the
 * functions here are deterministic.
 *
 * Hosts always stay with the switch they are cabled to, so the traffic between a host
 * and its leaf never crosses ranks. Groups (a leaf switch with its hosts, or a whole
 * pod) are given to ranks in topology order, in contiguous blocks of about equal node
 * count. The switches above the groups (spines, cores) are spread, level by level
 * upwards: each rank takes at most its share (rounded up) of a level's switches, and
 * each switch goes to the rank, among those below their share, holding most of its
 * cables' other ends, ties going to the rank with the fewest switches of that level.
 *
 * Switch levels are the topology's (IbTopologyBuilder sets them: 0 = leaf); when a
 * switch has none, levels are derived from the distance to the nearest host.
 *
 * Every cable between ranks delays the ranks' progress by its propagation delay at
 * most: the smallest delay of a cut cable is the lookahead of the distributed engines.
 */
class IbPartition
{
  public:
    /// What a partition cuts.
    struct Stats
    {
        uint32_t ranks{0};                     ///< ranks used (highest rank + 1)
        uint32_t cables{0};                    ///< cables in the fabric
        uint32_t cutCables{0};                 ///< cables whose ends are on different ranks
        std::vector<uint32_t> nodesPerRank;    ///< nodes (hosts and switches) per rank
        std::vector<uint32_t> hostsPerRank;    ///< hosts (CAs) per rank
        std::vector<uint32_t> cutCablesOfRank; ///< cut cables with an end on each rank
        Time lookahead;                        ///< smallest delay of a cut cable (0: none)
    };

    /**
     * One group per leaf switch (level 0) with its hosts; all higher switches are spread.
     * @param topology the fabric
     * @param ranks number of ranks (>= 1)
     * @return rank of each topology node
     */
    static std::vector<uint32_t> ByLeafGroups(const IbTopology& topology, uint32_t ranks);

    /**
     * One group per pod: the hosts and switches below the top level that are cabled to
     * each other (in a 3-level fat tree a pod's leaves and aggregation switches, in a
     * 2-level tree a leaf and its hosts); only the top-level switches are spread. This
     * cuts only the cables to the top level.
     * @param topology the fabric
     * @param ranks number of ranks (>= 1)
     * @return rank of each topology node
     */
    static std::vector<uint32_t> ByPod(const IbTopology& topology, uint32_t ranks);

    /**
     * @param topology the fabric
     * @return the level of each node: switches as set in the topology (derived from the
     *         distance to the nearest host if unset), -1 for hosts
     */
    static std::vector<int32_t> Levels(const IbTopology& topology);

    /**
     * Statistics of a partition before the fabric is built.
     * @param topology the fabric
     * @param rankOf rank of each topology node
     * @param cableDelay the delay of every cable (IbChannel Delay)
     * @return the cut; lookahead is @p cableDelay if a cable is cut
     */
    static Stats CutLinks(const IbTopology& topology,
                          const std::vector<uint32_t>& rankOf,
                          Time cableDelay);

    /**
     * Statistics of a built fabric, from its nodes' system ids and its cables' delays.
     * @param fabric the fabric (IbFabricHelper::Build)
     * @return the cut
     */
    static Stats CutLinks(const IbFabric& fabric);

    /**
     * Print a few lines: cables cut, lookahead, nodes and hosts per rank.
     * @param os where to print
     * @param stats the statistics
     */
    static void Print(std::ostream& os, const Stats& stats);

  private:
    /**
     * Common part of ByLeafGroups and ByPod.
     * @param topology the fabric
     * @param ranks number of ranks
     * @param groupBelow switches of a level below this are grouped with what they are
     *        cabled to; the others are spread
     * @return rank of each topology node
     */
    static std::vector<uint32_t> Partition(const IbTopology& topology,
                                           uint32_t ranks,
                                           int32_t groupBelow);
};

} // namespace ns3

#endif /* IB_PARTITION_H */

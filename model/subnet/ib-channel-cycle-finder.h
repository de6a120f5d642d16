/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_CHANNEL_CYCLE_FINDER_H
#define IB_CHANNEL_CYCLE_FINDER_H

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief The cycle finder of channel dependency graphs, on Boost.Graph: the one that
 * IbDeadlockChecker reports credit loops with and IbDfssspRouting breaks them with.
 *
 * The vertices are channels, numbered 0 .. n-1 by the caller; the edges are dependencies
 * (a route uses the first channel, then the second). The graph is built once (Boost's
 * compressed sparse row graph) from the dependencies sorted by first channel; a dependency
 * is named by its position in that list (Boost's edge index), so that callers keep data per
 * dependency in plain vectors. Each search follows a channel's dependencies in list order.
 *
 * Two searches:
 * - FindComponentCycles(): one cycle per strongly connected component of more than one
 *   channel (Boost's strong_components), the shortest through the component's
 *   lowest-numbered channel (breadth-first). This is what IbDeadlockChecker reports.
 * - FindFirstCycle(): the first cycle a depth-first search (Boost's depth_first_search)
 *   meets, over the dependencies the caller marks present: roots in channel order, each
 *   channel's dependencies in list order, the first back edge closes the cycle. dfsssp's
 *   layering depends on which cycle is broken first, and this is the order it has always
 *   searched in.
 */
class IbChannelCycleFinder
{
  public:
    /// A dependency: (first channel, second channel).
    using Dependency = std::pair<uint32_t, uint32_t>;

    /**
     * Build the dependency graph.
     * @param numChannels the number of channels (vertices)
     * @param dependencies the dependencies, sorted by first channel (stable: the order
     *        among one channel's dependencies is the order the searches follow them in);
     *        every channel number below @p numChannels
     */
    IbChannelCycleFinder(uint32_t numChannels, const std::vector<Dependency>& dependencies);
    ~IbChannelCycleFinder();

    IbChannelCycleFinder(const IbChannelCycleFinder&) = delete;
    IbChannelCycleFinder& operator=(const IbChannelCycleFinder&) = delete;

    /// @return the number of channels
    uint32_t GetNumChannels() const;
    /// @return the number of dependencies
    uint32_t GetNumDependencies() const;

    /**
     * One cycle per strongly connected component of more than one channel.
     * @return per component, in the order of their lowest channels: the channels of the
     *         shortest cycle through the lowest one, starting there, each depending on the
     *         one before it and the first on the last; empty if there is no such component
     */
    std::vector<std::vector<uint32_t>> FindComponentCycles() const;

    /**
     * The first cycle of a depth-first search over the present dependencies.
     * @param present per dependency (GetNumDependencies() entries): nonzero if it is in
     *        the graph searched
     * @return the dependencies of the cycle, in order: from the channel the closing (back)
     *         dependency returns to, along the search path, ending with the closing one;
     *         empty if the present dependencies have no cycle
     */
    std::vector<uint32_t> FindFirstCycle(const std::vector<uint32_t>& present) const;

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl; //!< the Boost graph
};

} // namespace ns3

#endif /* IB_CHANNEL_CYCLE_FINDER_H */

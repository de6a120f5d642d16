/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// IbChannelCycleFinder, the cycle finder of IbDeadlockChecker and IbDfssspRouting, on small
// dependency graphs written out by hand: which cycle each search finds, and in which order
// it names its channels or dependencies.

#include "ns3/ib-channel-cycle-finder.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <vector>

using namespace ns3;

namespace
{

using Deps = std::vector<IbChannelCycleFinder::Dependency>;

/**
 * @param d dependencies
 * @return 1 for each of them (all present)
 */
std::vector<uint32_t>
All(const Deps& d)
{
    return std::vector<uint32_t>(d.size(), 1);
}

} // namespace

TEST(IbChannelCycleFinder, AcyclicGraphsHaveNoCycle)
{
    // 0 -> 1 -> 2, 0 -> 2, 3 isolated.
    const Deps d = {{0, 1}, {0, 2}, {1, 2}};
    const IbChannelCycleFinder f(4, d);
    EXPECT_EQ(f.GetNumChannels(), 4u);
    EXPECT_EQ(f.GetNumDependencies(), 3u);
    EXPECT_TRUE(f.FindComponentCycles().empty());
    EXPECT_TRUE(f.FindFirstCycle(All(d)).empty());
    const IbChannelCycleFinder empty(0, {});
    EXPECT_TRUE(empty.FindComponentCycles().empty());
    EXPECT_TRUE(empty.FindFirstCycle({}).empty());
}

TEST(IbChannelCycleFinder, FirstCycleFollowsChannelAndDependencyOrder)
{
    // Dependencies (numbered by position):
    //   0: 0->1   1: 1->2   2: 1->3   3: 2->0   4: 3->1   5: 4->5   6: 5->4
    // A depth-first search from channel 0 goes 0, 1, 2 (1's first dependency) and closes
    // 2->0 first: the cycle 0->1->2->0, named from channel 0 on.
    const Deps d = {{0, 1}, {1, 2}, {1, 3}, {2, 0}, {3, 1}, {4, 5}, {5, 4}};
    const IbChannelCycleFinder f(6, d);
    std::vector<uint32_t> present = All(d);
    EXPECT_EQ(f.FindFirstCycle(present), (std::vector<uint32_t>{0, 1, 3}));

    // Without 2->0: from 2 nothing; then 1's second dependency, 3, whose 3->1 closes 1->3->1.
    present[3] = 0;
    EXPECT_EQ(f.FindFirstCycle(present), (std::vector<uint32_t>{2, 4}));

    // Without 3->1 as well: the first root that reaches a cycle is 4.
    present[4] = 0;
    EXPECT_EQ(f.FindFirstCycle(present), (std::vector<uint32_t>{5, 6}));
    present[6] = 0;
    EXPECT_TRUE(f.FindFirstCycle(present).empty());

    // A dependency of a channel on itself is a cycle of one dependency.
    const Deps self = {{0, 1}, {1, 1}};
    EXPECT_EQ(IbChannelCycleFinder(2, self).FindFirstCycle(All(self)), (std::vector<uint32_t>{1}));
}

TEST(IbChannelCycleFinder, ComponentCyclesAreShortestThroughTheLowestChannel)
{
    // Component {0, 1, 2, 3}: 0->1->2->3->0 and the shortcut 1->0; component {4, 5}: 5->4->5;
    // 6 -> 0 leads into a component without being in one; 7 depends on itself (one channel:
    // not reported).
    const Deps d = {{0, 1}, {1, 2}, {1, 0}, {2, 3}, {3, 0}, {4, 5}, {5, 4}, {6, 0}, {7, 7}};
    const IbChannelCycleFinder f(8, d);
    const auto cycles = f.FindComponentCycles();
    ASSERT_EQ(cycles.size(), 2u);
    EXPECT_EQ(cycles[0], (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(cycles[1], (std::vector<uint32_t>{4, 5}));
    // The depth-first search closes the long way round first: 1's first dependency is 1->2,
    // so it reaches 3 and closes 3->0 before it tries 1->0.
    EXPECT_EQ(f.FindFirstCycle(All(d)), (std::vector<uint32_t>{0, 1, 3, 4}));
}

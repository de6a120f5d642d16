/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_TRAFFIC_PATTERN_H
#define IB_TRAFFIC_PATTERN_H

#include "ns3/application-container.h"
#include "ns3/object-factory.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

struct IbFabric;

/**
 * @ingroup infiniband-helper
 * @brief Classic traffic patterns over the hosts of a fabric, and raw IB flows for them.
 *
 * A pattern is a list of (source host, destination host) pairs, by host index in
 * IbFabric::hosts. InstallRawFlows() starts one IbRawTrafficApplication per pair, on
 * the SL the subnet manager's path record gives, so layered (deadlock-free by VL)
 * routing engines are honoured.
 */
class IbTrafficPattern
{
  public:
    /// A flow: (source host index, destination host index).
    typedef std::pair<uint32_t, uint32_t> Flow;

    /**
     * @param n number of hosts
     * @param seed seed of the shuffle
     * @return a random permutation without fixed points: every host sends to one other
     *         host and receives from one. It is one cycle through all hosts (Sattolo's
     *         shuffle, uniform over such cycles), drawn from std::mt19937 with a rejection
     *         step of this module's own, so a seed gives the same pattern with every C++
     *         standard library.
     */
    static std::vector<Flow> RandomPermutation(uint32_t n, uint32_t seed);
    /**
     * The seed a program's own random choices use for replication: @p seed itself under
     * ns-3's default RngSeed 1 and RngRun 1, otherwise a mix of the three, so that
     * --RngRun=N (or --RngSeed) gives independent replications as with ns-3's random
     * variables, and the same arguments always give the same choices.
     * @param seed the program's --seed
     * @return the seed to draw with
     */
    static uint32_t ReplicationSeed(uint32_t seed);
    /**
     * @param n number of hosts
     * @param shift the shift (1..n-1)
     * @return host i sends to host (i + shift) mod n
     */
    static std::vector<Flow> Shift(uint32_t n, uint32_t shift);
    /**
     * @param n number of hosts
     * @return every host sends to every other host
     */
    static std::vector<Flow> AllToAll(uint32_t n);
    /**
     * @param n number of hosts
     * @param sink the receiving host
     * @return every other host sends to @p sink
     */
    static std::vector<Flow> Incast(uint32_t n, uint32_t sink);
    /**
     * @param name permutation, shift, all-to-all or incast
     * @param n number of hosts
     * @param seed seed for the random permutation
     * @return the pattern; aborts with the valid names if @p name is unknown
     */
    static std::vector<Flow> ByName(const std::string& name, uint32_t n, uint32_t seed);

    /**
     * Start one saturating (or rate-limited) raw flow per pair.
     * @param fabric the fabric (brought up)
     * @param flows the pairs
     * @param attributes a factory of ns3::IbRawTrafficApplication (SetTypeId, then its
     *        attributes: PayloadSize, DataRate, MaxPackets, ...); an empty factory gives
     *        the defaults, a factory of another type is refused with a message
     * @return the applications, in flow order
     */
    static ApplicationContainer InstallRawFlows(const IbFabric& fabric,
                                                const std::vector<Flow>& flows,
                                                const ObjectFactory& attributes);

  private:
    /**
     * Abort with a message naming @p pattern if @p n is less than 2 hosts.
     * @param n hosts
     * @param pattern the pattern's name, for the message
     */
    static void CheckHosts(uint32_t n, const char* pattern);
};

} // namespace ns3

#endif /* IB_TRAFFIC_PATTERN_H */

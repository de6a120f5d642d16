/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_LINK_FAILURE_HELPER_H
#define IB_LINK_FAILURE_HELPER_H

#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class IbChannel;
class Node;
struct IbFabric;

/**
 * @ingroup infiniband-helper
 * @brief Fails cables of a fabric and brings them back: at given times, from a
 * command-line specification, or at random (exponential times to failure and to
 * repair). See IbChannel::SetLinkDown for what a failure does, and
 * IbSubnetManager's RerouteOnLinkChange for the recovery.
 */
class IbLinkFailureHelper
{
  public:
    /**
     * @param node a switch or a host
     * @param port a switch's port number (IbSwitch::GetPort), or a host's IB port number
     *        (1 for its first IbNetDevice)
     * @return the cable on that port; aborts, naming the node and port, if there is none
     */
    static Ptr<IbChannel> FindCable(Ptr<Node> node, uint8_t port);

    /**
     * Fail @p cable at @p down and bring it back at @p up.
     * @param cable the cable
     * @param down when it fails (from now)
     * @param up when it is up again (Time::Max(): never); must be after @p down
     */
    void Schedule(Ptr<IbChannel> cable, Time down, Time up = Time::Max());

    /**
     * Schedule failures written as a comma-separated list of NODE:PORT@DOWN[-UP], NODE a
     * node of @p fabric by name (as the topology names it), PORT its port number, DOWN
     * and UP ns-3 times (e.g. "spine-0:3@2ms-40ms,leaf-1:5@10ms"). Aborts with a message
     * naming the entry and what is wrong.
     * @param fabric the fabric (brought up)
     * @param spec the list
     * @param what the option it came from, for messages (e.g. "--failLink")
     */
    void ScheduleFromSpec(const IbFabric& fabric, const std::string& spec, const std::string& what);

    /**
     * Random failures: each cable fails after an exponential time with mean @p mtbf,
     * is repaired after an exponential time with mean @p mttr, and so on until @p until.
     * @param cables the cables
     * @param mtbf mean time between failures of one cable
     * @param mttr mean time to repair
     * @param until no failure starts after this
     * @param stream first random stream (one per cable)
     * @return the failures scheduled
     */
    uint32_t ScheduleRandom(const std::vector<Ptr<IbChannel>>& cables,
                            Time mtbf,
                            Time mttr,
                            Time until,
                            int64_t stream);

    /// @return the inter-switch cables of @p fabric (candidates for random failures)
    static std::vector<Ptr<IbChannel>> SwitchCables(const IbFabric& fabric);
};

} // namespace ns3

#endif /* IB_LINK_FAILURE_HELPER_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_OUTAGE_MONITOR_H
#define IB_OUTAGE_MONITOR_H

#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <ostream>
#include <vector>

namespace ns3
{

class Packet;
struct IbFabric;

/**
 * @ingroup infiniband-helper
 * @brief What link failures cost each flow: the outage from the first packet of the flow
 * lost to a failed link to the first packet of the flow delivered after the fabric was
 * repaired (the subnet manager's reroute programmed its last table, or a failed cable
 * came up again).
 *
 * A flow is a destination queue pair, (DLID, DestQP) from the BTH (DLID only for
 * packets without one), with the SLID of its first lost packet: an RC connection's two
 * directions are two flows (requests, and ACKs and READ responses). Losses are counted
 * at every port's LinkDownDrop (on the wire, queued, forwarded to a down port) and
 * deliveries at the host ports' MacRx; a delivery before the first repair after the
 * loss (a packet that was past the failure) does not end the outage. Losses of a flow
 * whose outage is still open count in it; a loss after it ended opens another.
 */
class IbOutageMonitor
{
  public:
    /// One outage of one flow.
    struct Outage
    {
        uint16_t slid{0};   ///< source LID of the first lost packet
        uint16_t dlid{0};   ///< destination LID
        uint32_t destQp{0}; ///< destination QP (0 without a BTH)
        Time firstLost;     ///< when its first packet was lost
        /// when its first packet was delivered after a repair (Time::Max() while open)
        Time recovered{Time::Max()};
        uint64_t lost{0}; ///< packets lost in it

        /// @return recovered - firstLost (Time::Max() while open)
        Time Duration() const;
    };

    /**
     * Watch @p fabric: every port's LinkDownDrop, every cable's LinkState, the host ports'
     * MacRx and the subnet manager's Rerouted trace.
     * @param fabric a fabric whose subnet manager is up
     */
    void Install(const IbFabric& fabric);

    /// @return the outages, ended and open, in the order they started
    std::vector<Outage> GetOutages() const;

    /**
     * Print one row per outage (at most @p maxRows) and a summary (flows hit, packets
     * lost, shortest, mean and longest outage).
     * @param os where to print
     * @param maxRows most rows to print
     */
    void Print(std::ostream& os, uint32_t maxRows = 32) const;

  private:
    /**
     * LinkDownDrop of a port.
     * @param self the monitor
     * @param packet the lost packet
     * @param onWire it was on the cable
     */
    static void OnLost(IbOutageMonitor* self, Ptr<const Packet> packet, bool onWire);
    /**
     * MacRx of a host port.
     * @param self the monitor
     * @param packet the delivered packet
     */
    static void OnDelivered(IbOutageMonitor* self, Ptr<const Packet> packet);
    /**
     * A repair: a reroute finished or a cable came up.
     * @param self the monitor
     */
    static void OnRepaired(IbOutageMonitor* self);
    /**
     * @param packet an IBA packet
     * @param [out] slid its SLID
     * @return its flow key (DLID << 24 | DestQP)
     */
    static uint64_t FlowOf(const Packet& packet, uint16_t* slid);

    std::vector<Outage> m_outages;     //!< every outage, in the order they started
    std::map<uint64_t, size_t> m_open; //!< flow key -> its open outage in m_outages
    Time m_lastRepair{Time::Min()};    //!< the latest repair
};

} // namespace ns3

#endif /* IB_OUTAGE_MONITOR_H */

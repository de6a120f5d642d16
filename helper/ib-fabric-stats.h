/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_FABRIC_STATS_H
#define IB_FABRIC_STATS_H

#include "ns3/node-container.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <vector>

namespace ns3
{

class IbNetDevice;
class Packet;
struct IbFabric;

/**
 * @ingroup infiniband-helper
 * @brief Per-flow throughput and per-port utilisation of a fabric, measured over a
 * window [start, stop) of simulated time, for examples and experiments.
 *
 * A flow is identified by (SLID, DLID) as seen at the receiving host port's MacRx; its
 * figures count the packets whose last bit arrived in the window, so a flow at line rate
 * can show up to one packet per window more than the link carries.
 * Port utilisation is the part of the window in which the port was putting data packets on
 * the wire (IbNetDevice::GetTxBytesOnWire at both ends of the window over what its data
 * rate allows, IbNetDevice::GetWireCapacityBits, also when the link trains to another rate
 * in the window): at most 1, flow-control packets not counted.
 */
class IbFabricStats
{
  public:
    /// One flow's figures.
    struct Flow
    {
        uint16_t slid{0};    ///< source LID
        uint16_t dlid{0};    ///< destination LID
        uint64_t packets{0}; ///< packets received in the window
        uint64_t bytes{0};   ///< wire bytes received in the window
        uint64_t payload{0}; ///< payload bytes received in the window (from PktLen/PadCnt)
    };

    /// One port's figures.
    struct Port
    {
        std::string name;   ///< "node <id> port <n>" or the node's name
        double utilisation; ///< fraction of the window the port was sending
    };

    /**
     * Hook every host port of @p fabric and snapshot port counters at @p start.
     * @param fabric the fabric
     * @param start start of the measurement window
     */
    void Install(const IbFabric& fabric, Time start);

    /**
     * @return the flows, ordered by (SLID, DLID): those that delivered a packet in the
     *         window, and those of the hosts' IbRawTrafficApplications that delivered none
     *         (with zero counts)
     */
    std::vector<Flow> GetFlows() const;
    /**
     * Call it at @p stop: it reads the ports' counters as they are now.
     * @param stop end of the window
     * @return every port (hosts and switches), busiest first
     */
    std::vector<Port> GetPorts(Time stop) const;

    /**
     * Print a per-flow table (all flows if there are at most @p maxRows) with a summary
     * (minimum, mean, maximum and Jain's fairness index over the flows that carry payload
     * or delivered nothing: flows of ACKs only are left out of it) and the busiest ports.
     * Call it at @p stop, or after the simulation ended before it (the counters are read
     * as they are now).
     * @param os where to print
     * @param stop end of the window
     * @param maxRows most flow rows to print
     */
    void Print(std::ostream& os, Time stop, uint32_t maxRows = 32) const;

  private:
    /**
     * MacRx of a host port.
     * @param self the stats
     * @param packet the packet
     */
    static void OnRx(IbFabricStats* self, Ptr<const Packet> packet);
    /// Record every port's transmitted bytes at the window's start.
    void Snapshot();

    /**
     * @param stop end of the window
     * @return the window's length; aborts, naming both ends, unless it ends after it starts
     */
    double WindowSeconds(Time stop) const;

    std::map<uint32_t, Flow> m_flows;          //!< (slid << 16 | dlid) -> flow
    NodeContainer m_hosts;                     //!< the fabric's hosts on this rank (their flows)
    std::vector<Ptr<IbNetDevice>> m_hostPorts; //!< those hosts' cabled ports
    std::vector<Ptr<IbNetDevice>> m_ports;     //!< every port
    std::vector<std::string> m_portNames;      //!< their names
    std::vector<double> m_startBytes;          //!< bytes on the wire at the window's start
    std::vector<double> m_startCapacity;       //!< GetWireCapacityBits at the window's start
    Time m_start;                              //!< window start
};

} // namespace ns3

#endif /* IB_FABRIC_STATS_H */

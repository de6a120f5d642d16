/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_DEADLOCK_WATCHDOG_H
#define IB_DEADLOCK_WATCHDOG_H

#include "ib-fabric-helper.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <string>
#include <vector>

namespace ns3
{

class IbNetDevice;
class Node;

/**
 * @ingroup infiniband-helper
 * @brief Watches a fabric for a credit deadlock: ports that hold packets and have sent
 * none for Interval, each waiting for the credits of a node whose blocked ports wait in
 * turn, round a cycle. It then reports the cycle (port by port: packets queued, credits
 * left), fires Deadlock and, with StopOnDeadlock, stops the simulation, so that a program
 * can say so and exit with an error instead of running on, or ending "successfully" with
 * flows that delivered nothing. The rest of the fabric may still move packets.
 *
 * It checks every Interval while the simulation has other events pending, so it never
 * keeps a finished simulation alive. Ports blocked without a cycle (behind a slow or
 * failed receiver) are not a deadlock and are not reported; the static check of the
 * routes (IbSubnetManager::CheckDeadlocks) finds the credit loops that make one possible.
 */
class IbDeadlockWatchdog : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    IbDeadlockWatchdog();
    ~IbDeadlockWatchdog() override;

    /**
     * Watch every port of the fabric (hosts' and switches'), from now on.
     * @param fabric the fabric
     */
    void Install(const IbFabric& fabric);
    /// @return true once a deadlock has been seen
    bool IsDeadlocked() const;
    /// @return the report of the deadlock ("" if none): when, and the blocked ports
    std::string GetReport() const;

    /// Signature of the Deadlock trace: the report.
    typedef void (*DeadlockTracedCallback)(const std::string& report);

  protected:
    void DoDispose() override;

  private:
    /// One check: is a set of ports blocked on each other?
    void Check();
    /// @return the ports holding packets that started none since the last check
    std::vector<size_t> Blocked();
    /**
     * @param blocked blocked ports
     * @return a cycle of them, each waiting for the next one's node (empty if none)
     */
    std::vector<size_t> FindCycle(const std::vector<size_t>& blocked) const;
    /**
     * @param node a node
     * @return true if any of its ports holds packets (receive buffer or transmit queue)
     */
    bool NodeHoldsPackets(Ptr<Node> node) const;
    /**
     * @param i a watched port
     * @return its name and what waits in it
     */
    std::string Describe(size_t i) const;

    Time m_interval;                       //!< Interval attribute
    bool m_stop;                           //!< StopOnDeadlock attribute
    std::vector<Ptr<IbNetDevice>> m_ports; //!< watched ports
    std::vector<std::string> m_names;      //!< their names, for the report
    std::vector<uint64_t> m_lastTx;        //!< per port: data packets at the last check
    bool m_deadlocked{false};              //!< seen
    std::string m_report;                  //!< what was seen
    EventId m_event;                       //!< the next check
    TracedCallback<const std::string&> m_deadlockTrace; //!< Deadlock
};

} // namespace ns3

#endif /* IB_DEADLOCK_WATCHDOG_H */

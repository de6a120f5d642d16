/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PERFTEST_HELPER_H
#define IB_PERFTEST_HELPER_H

#include "ns3/application-container.h"
#include "ns3/object-factory.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class IbSubnetManager;
class Node;

/**
 * @ingroup infiniband-helper
 * @brief Sets up a perftest benchmark between two hosts: an IbPerftestApplication on
 * each (client and server), with the RC queue pair, completion queues and buffer each
 * side needs, created through the hosts' IbHca and connected as perftest does after its
 * out-of-band exchange.
 *
 * The hosts must have an IbHca (IbHcaHelper::Install) on a subnet whose LIDs are
 * assigned. Application attributes (Test, Size, Iterations, TxDepth, ...) are set on
 * the helper and apply to both sides.
 *
 * Several message sizes run one after the other in one simulation with InstallSweep
 * (perftest -a): each size starts when both sides have finished the previous one. A
 * single size per Simulator::Run() is the other way (Install, run, read the results,
 * Simulator::Destroy()).
 *
 * Usage:
 * @code
 *   IbPerftestHelper perf;
 *   perf.SetAttribute("Test", StringValue("write_lat"));
 *   ApplicationContainer apps = perf.Install(fabric.hosts.Get(0), fabric.hosts.Get(1),
 *                                            fabric.subnetManager);
 *   apps.Start(MicroSeconds(1));
 *   Simulator::Run();
 *   IbPerftestResult r = DynamicCast<IbPerftestApplication>(apps.Get(0))->GetResults();
 * @endcode
 */
class IbPerftestHelper
{
  public:
    IbPerftestHelper();

    /**
     * @param name attribute of ns3::IbPerftestApplication (Role is set by Install)
     * @param value its value
     */
    void SetAttribute(std::string name, const AttributeValue& value);

    /**
     * Create the two applications and their resources, connect the queue pairs and pair
     * the applications.
     * @param client host of the client (perftest run with the server's name)
     * @param server host of the server
     * @param sm the subnet manager, for path records (SL, MTU); null: SL 0 and the
     *        ports' MTU
     * @return the client application (index 0) and the server application (index 1)
     */
    ApplicationContainer Install(Ptr<Node> client,
                                 Ptr<Node> server,
                                 Ptr<IbSubnetManager> sm = nullptr) const;
    /**
     * As Install, for several message sizes run one after the other.
     * @param client host of the client
     * @param server host of the server
     * @param sizes message sizes in bytes, in order
     * @param sm the subnet manager, or null
     * @return the client application (index 0) and the server application (index 1)
     */
    ApplicationContainer InstallSweep(Ptr<Node> client,
                                      Ptr<Node> server,
                                      const std::vector<uint64_t>& sizes,
                                      Ptr<IbSubnetManager> sm = nullptr) const;

    /// @return perftest -a's sizes: 2, 4, ..., 2^23 bytes
    static std::vector<uint64_t> AllSizes();
    /**
     * Parse a comma-separated list of sizes, e.g. "2,64,4K,1M" (K, M, G suffixes are
     * powers of 1024, as perftest's -s accepts).
     * @param list the text
     * @param [out] sizes the sizes, set on success
     * @param [out] error the reason when the list is refused (may be null)
     * @return true on success
     */
    static bool ParseSizes(const std::string& list,
                           std::vector<uint64_t>& sizes,
                           std::string* error = nullptr);

  private:
    /**
     * @param client host of the client
     * @param server host of the server
     * @param sizes message sizes (empty: the Size attribute)
     * @param sm the subnet manager, or null
     * @return the two applications
     */
    ApplicationContainer DoInstall(Ptr<Node> client,
                                   Ptr<Node> server,
                                   const std::vector<uint64_t>& sizes,
                                   Ptr<IbSubnetManager> sm) const;

    ObjectFactory m_factory; //!< application factory
};

} // namespace ns3

#endif /* IB_PERFTEST_HELPER_H */

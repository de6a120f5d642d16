/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef WORKLOAD_TRAINING_HELPER_H
#define WORKLOAD_TRAINING_HELPER_H

#include "collective-helper.h"

#include "ns3/object-factory.h"
#include "ns3/training-workload-file.h"
#include "ns3/workload-training-job.h"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief Installs a WorkloadTrainingJob: one CollectiveCommunicator per group of ranks
 * the workload's collectives run in (tensor-parallel, data-parallel, expert groups), each
 * made by the CollectiveHelper it is given (algorithm, GPUs per server, transports), on
 * an InfiniBand fabric, an Ethernet fabric (RoCE or TCP) or any TCP/IP nodes.
 *
 * Rank r of the job is host @p hosts[r] (all hosts in order by default).
 */
class WorkloadTrainingHelper
{
  public:
    /// @param collectives makes the groups' communicators (copied)
    explicit WorkloadTrainingHelper(const CollectiveHelper& collectives = CollectiveHelper());

    /**
     * @param name attribute of ns3::WorkloadTrainingJob (TickTime, Iterations)
     * @param value its value
     */
    void SetJobAttribute(const std::string& name, const AttributeValue& value);
    /**
     * Make the communicators of one group kind with another CollectiveHelper, e.g. the
     * data-parallel groups with SHARP while the tensor-parallel ones stay on NVLink.
     * @param kind the group kind
     * @param collectives makes its communicators (copied)
     */
    void SetGroupCollectives(WorkloadTrainingJob::GroupKind kind,
                             const CollectiveHelper& collectives);

    /**
     * @param workload the workload
     * @param source its name for messages
     * @param fabric an InfiniBand fabric
     * @param hosts the ranks' hosts (empty: all)
     * @return the job, not started
     */
    Ptr<WorkloadTrainingJob> InstallIb(const TrainingWorkloadFile& workload,
                                       const std::string& source,
                                       const IbFabric& fabric,
                                       std::vector<uint32_t> hosts = {});
    /**
     * The same at flow level (CollectiveHelper::InstallFlow): timing only.
     * @param workload the workload
     * @param source its name, for messages
     * @param fabric the flow-level fabric
     * @param hosts the ranks' hosts (empty: all hosts)
     * @return the job (not started)
     */
    Ptr<WorkloadTrainingJob> InstallFlow(const TrainingWorkloadFile& workload,
                                         const std::string& source,
                                         const IbFlowFabric& fabric,
                                         std::vector<uint32_t> hosts = {});
    /**
     * @param workload the workload
     * @param source its name for messages
     * @param fabric an Ethernet fabric with RoCE NICs
     * @param hosts the ranks' hosts (empty: all)
     * @return the job, not started
     */
    Ptr<WorkloadTrainingJob> InstallRoce(const TrainingWorkloadFile& workload,
                                         const std::string& source,
                                         const EthFabric& fabric,
                                         std::vector<uint32_t> hosts = {});
    /**
     * @param workload the workload
     * @param source its name for messages
     * @param nodes the ranks' nodes, with an Internet stack and routes between them
     * @return the job, not started
     */
    Ptr<WorkloadTrainingJob> InstallTcp(const TrainingWorkloadFile& workload,
                                        const std::string& source,
                                        NodeContainer nodes);

  private:
    /**
     * Make the job and its groups' communicators.
     * @param workload the workload
     * @param source its name
     * @param hosts the ranks' hosts
     * @param install makes a communicator over some hosts with a helper
     * @return the job
     */
    Ptr<WorkloadTrainingJob> Install(
        const TrainingWorkloadFile& workload,
        const std::string& source,
        const std::vector<uint32_t>& hosts,
        const std::function<Ptr<CollectiveCommunicator>(CollectiveHelper&,
                                                        const std::vector<uint32_t>&)>& install);

    CollectiveHelper m_collectives; //!< communicators
    /// per group kind: another helper (SetGroupCollectives)
    std::array<std::optional<CollectiveHelper>, WorkloadTrainingJob::N_GROUP_KINDS> m_byKind;
    ObjectFactory m_job; //!< jobs
};

} // namespace ns3

#endif /* WORKLOAD_TRAINING_HELPER_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "workload-training-helper.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadTrainingHelper");

WorkloadTrainingHelper::WorkloadTrainingHelper(const CollectiveHelper& collectives)
    : m_collectives(collectives)
{
    m_job.SetTypeId("ns3::WorkloadTrainingJob");
}

void
WorkloadTrainingHelper::SetJobAttribute(const std::string& name, const AttributeValue& value)
{
    m_job.Set(name, value);
}

void
WorkloadTrainingHelper::SetGroupCollectives(WorkloadTrainingJob::GroupKind kind,
                                            const CollectiveHelper& collectives)
{
    m_byKind[kind] = collectives;
}

Ptr<WorkloadTrainingJob>
WorkloadTrainingHelper::Install(
    const TrainingWorkloadFile& workload,
    const std::string& source,
    const std::vector<uint32_t>& hosts,
    const std::function<Ptr<CollectiveCommunicator>(CollectiveHelper&,
                                                    const std::vector<uint32_t>&)>& install)
{
    Ptr<WorkloadTrainingJob> job = m_job.Create<WorkloadTrainingJob>();
    job->Setup(workload, hosts.size(), source);
    for (uint32_t k = 0; k < WorkloadTrainingJob::N_GROUP_KINDS; ++k)
    {
        const auto kind = static_cast<WorkloadTrainingJob::GroupKind>(k);
        if (!job->Uses(kind))
        {
            continue;
        }
        const auto& groups = job->GetGroups(kind);
        CollectiveHelper& helper = m_byKind[k] ? *m_byKind[k] : m_collectives;
        for (uint32_t g = 0; g < groups.size(); ++g)
        {
            std::vector<uint32_t> members;
            for (uint32_t r : groups[g])
            {
                members.push_back(hosts[r]);
            }
            job->SetCommunicator(kind, g, install(helper, members));
        }
    }
    return job;
}

namespace
{
/**
 * @param hosts given hosts (empty: all)
 * @param n hosts there are
 * @return the hosts
 */
std::vector<uint32_t>
AllIfEmpty(std::vector<uint32_t> hosts, uint32_t n)
{
    if (hosts.empty())
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            hosts.push_back(i);
        }
    }
    return hosts;
}
} // namespace

Ptr<WorkloadTrainingJob>
WorkloadTrainingHelper::InstallIb(const TrainingWorkloadFile& workload,
                                  const std::string& source,
                                  const IbFabric& fabric,
                                  std::vector<uint32_t> hosts)
{
    return Install(workload,
                   source,
                   AllIfEmpty(hosts, fabric.hosts.GetN()),
                   [&fabric](CollectiveHelper& h, const std::vector<uint32_t>& members) {
                       return h.InstallIb(fabric, members);
                   });
}

Ptr<WorkloadTrainingJob>
WorkloadTrainingHelper::InstallFlow(const TrainingWorkloadFile& workload,
                                    const std::string& source,
                                    const IbFlowFabric& fabric,
                                    std::vector<uint32_t> hosts)
{
    return Install(workload,
                   source,
                   AllIfEmpty(hosts, fabric.GetNHosts()),
                   [&fabric](CollectiveHelper& h, const std::vector<uint32_t>& members) {
                       return h.InstallFlow(fabric, members);
                   });
}

Ptr<WorkloadTrainingJob>
WorkloadTrainingHelper::InstallRoce(const TrainingWorkloadFile& workload,
                                    const std::string& source,
                                    const EthFabric& fabric,
                                    std::vector<uint32_t> hosts)
{
    return Install(workload,
                   source,
                   AllIfEmpty(hosts, fabric.hosts.GetN()),
                   [&fabric](CollectiveHelper& h, const std::vector<uint32_t>& members) {
                       return h.InstallRoce(fabric, members);
                   });
}

Ptr<WorkloadTrainingJob>
WorkloadTrainingHelper::InstallTcp(const TrainingWorkloadFile& workload,
                                   const std::string& source,
                                   NodeContainer nodes)
{
    return Install(workload,
                   source,
                   AllIfEmpty({}, nodes.GetN()),
                   [&nodes](CollectiveHelper& h, const std::vector<uint32_t>& members) {
                       return h.InstallTcp(nodes, members);
                   });
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "data-parallel-training-helper.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DataParallelTrainingHelper");

DataParallelTrainingHelper::DataParallelTrainingHelper()
{
    m_job.SetTypeId(DataParallelTrainingJob::GetTypeId());
    m_app.SetTypeId(DataParallelTrainingApplication::GetTypeId());
}

void
DataParallelTrainingHelper::SetJobAttribute(const std::string& name, const AttributeValue& value)
{
    m_job.Set(name, value);
}

void
DataParallelTrainingHelper::SetApplicationAttribute(const std::string& name,
                                                    const AttributeValue& value)
{
    m_app.Set(name, value);
}

Ptr<DataParallelTrainingJob>
DataParallelTrainingHelper::Install(Ptr<CollectiveCommunicator> comm,
                                    NodeContainer servers,
                                    ApplicationContainer* apps) const
{
    NS_ABORT_MSG_IF(servers.GetN() == 0, "DataParallelTrainingHelper::Install: no servers");
    NS_ABORT_MSG_IF(servers.GetN() > 1 && !comm,
                    "DataParallelTrainingHelper::Install: " << servers.GetN()
                                                            << " servers need a communicator");
    NS_ABORT_MSG_IF(comm && comm->GetNRanks() != servers.GetN(),
                    "DataParallelTrainingHelper::Install: the communicator has "
                        << comm->GetNRanks() << " ranks for " << servers.GetN() << " servers");
    Ptr<DataParallelTrainingJob> job = m_job.Create<DataParallelTrainingJob>();
    job->SetCommunicator(comm);
    for (uint32_t i = 0; i < servers.GetN(); ++i)
    {
        Ptr<DataParallelTrainingApplication> app = m_app.Create<DataParallelTrainingApplication>();
        app->SetJob(job);
        servers.Get(i)->AddApplication(app);
        if (apps != nullptr)
        {
            apps->Add(app);
        }
    }
    return job;
}

} // namespace ns3

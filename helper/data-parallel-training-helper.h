/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef DATA_PARALLEL_TRAINING_HELPER_H
#define DATA_PARALLEL_TRAINING_HELPER_H

#include "ns3/application-container.h"
#include "ns3/collective-communicator.h"
#include "ns3/data-parallel-training-application.h"
#include "ns3/data-parallel-training-job.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"

#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-helper
 * @brief Sets up a data-parallel training job: one DataParallelTrainingJob over a
 * communicator, and one DataParallelTrainingApplication per server node, in rank order.
 */
class DataParallelTrainingHelper
{
  public:
    DataParallelTrainingHelper();

    /**
     * @param name attribute of ns3::DataParallelTrainingJob (GradientBytes, BucketSize, ...)
     * @param value its value
     */
    void SetJobAttribute(const std::string& name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::DataParallelTrainingApplication (ForwardTime, ...)
     * @param value its value
     */
    void SetApplicationAttribute(const std::string& name, const AttributeValue& value);

    /**
     * Create the job and install one application on each server; the applications start
     * (StartTime 0) as soon as the simulation runs.
     * @param comm communicator whose rank i is @p servers.Get(i) (null for one server)
     * @param servers the server nodes, in rank order
     * @param apps the applications installed (output, may be null)
     * @return the job
     */
    Ptr<DataParallelTrainingJob> Install(Ptr<CollectiveCommunicator> comm,
                                         NodeContainer servers,
                                         ApplicationContainer* apps = nullptr) const;

  private:
    ObjectFactory m_job; //!< job factory
    ObjectFactory m_app; //!< application factory
};

} // namespace ns3

#endif /* DATA_PARALLEL_TRAINING_HELPER_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_ROUTING_FILE_H
#define IB_ROUTING_FILE_H

#include "ib-routing-engine.h"

#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief OpenSM's "file" engine: loads the forwarding tables from an opensm-lfts.dump
 * (format: IbLftDump), for example one dumped by OpenSM or dump_fts on a real cluster.
 *
 * Switches are matched by node GUID; every switch needs a table. Errors name the file and
 * line.
 */
class IbFileRouting : public IbRoutingEngine
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbFileRouting();
    ~IbFileRouting() override;

    /**
     * Read the tables from the FileName attribute's file.
     * @param problem topology and LIDs
     * @param [out] tables the forwarding tables
     * @param [out] error "<file>:<line>: ..." on failure
     * @return true on success
     */
    bool Route(const IbRoutingProblem& problem,
               IbRoutingTables& tables,
               std::string* error) override;
    /// @return "file"
    std::string GetName() const override;

  private:
    std::string m_fileName; //!< FileName attribute
};

} // namespace ns3

#endif /* IB_ROUTING_FILE_H */

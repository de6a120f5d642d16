/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-routing-file.h"

#include "ns3/ib-lft-dump.h"
#include "ns3/log.h"
#include "ns3/string.h"

#include <fstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbFileRouting");

NS_OBJECT_ENSURE_REGISTERED(IbFileRouting);

TypeId
IbFileRouting::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbFileRouting")
            .SetParent<IbRoutingEngine>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbFileRouting>()
            .AddAttribute("FileName",
                          "The opensm-lfts.dump file to load the forwarding tables from.",
                          StringValue(""),
                          MakeStringAccessor(&IbFileRouting::m_fileName),
                          MakeStringChecker());
    return tid;
}

IbFileRouting::IbFileRouting()
{
    NS_LOG_FUNCTION(this);
}

IbFileRouting::~IbFileRouting()
{
    NS_LOG_FUNCTION(this);
}

std::string
IbFileRouting::GetName() const
{
    return "file";
}

bool
IbFileRouting::Route(const IbRoutingProblem& problem, IbRoutingTables& tables, std::string* error)
{
    NS_LOG_FUNCTION(this << m_fileName);
    if (m_fileName.empty())
    {
        if (error)
        {
            *error = "file: the FileName attribute is empty; set it to an opensm-lfts.dump";
        }
        return false;
    }
    std::ifstream in(m_fileName);
    if (!in)
    {
        if (error)
        {
            *error = "file: cannot open '" + m_fileName + "'";
        }
        return false;
    }
    return IbLftDump::Read(in, m_fileName, problem, tables, error);
}

} // namespace ns3

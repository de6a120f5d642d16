/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "gpu-cluster-scheduler.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/random-variable-stream.h"

#include <numeric>
#include <set>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("GpuClusterScheduler");

GpuClusterScheduler::GpuClusterScheduler(uint32_t servers,
                                         uint32_t gpusPerServer,
                                         uint32_t serversPerGroup)
    : m_servers(servers),
      m_gpusPerServer(gpusPerServer),
      m_serversPerGroup(serversPerGroup)
{
    NS_ABORT_MSG_UNLESS(servers >= 1 && gpusPerServer >= 1 && serversPerGroup >= 1,
                        "GpuClusterScheduler: servers, GPUs per server and servers per group "
                        "must be at least 1");
}

bool
GpuClusterScheduler::ParsePolicy(const std::string& name, Policy& policy)
{
    static const char* const names[] = {"packed", "fragmented", "random", "explicit"};
    for (uint8_t i = 0; i < 4; ++i)
    {
        if (name == names[i])
        {
            policy = static_cast<Policy>(i);
            return true;
        }
    }
    return false;
}

std::string
GpuClusterScheduler::PolicyNames()
{
    return "packed, fragmented, random, explicit";
}

uint32_t
GpuClusterScheduler::AddJob(const std::string& name, uint32_t gpus, std::vector<uint32_t> servers)
{
    NS_ABORT_MSG_IF(m_placed, "GpuClusterScheduler: job " << name << " added after Place");
    NS_ABORT_MSG_UNLESS(gpus >= m_gpusPerServer && gpus % m_gpusPerServer == 0,
                        "GpuClusterScheduler: job " << name << " asks for " << gpus
                                                    << " GPUs; jobs get whole servers of "
                                                    << m_gpusPerServer << " GPUs");
    Job j;
    j.name = name;
    j.servers = gpus / m_gpusPerServer;
    j.given = std::move(servers);
    m_jobs.push_back(j);
    return m_jobs.size() - 1;
}

void
GpuClusterScheduler::Place(Policy policy)
{
    NS_ABORT_MSG_IF(m_placed, "GpuClusterScheduler: Place called twice");
    m_placed = true;
    uint32_t need = 0;
    for (const Job& j : m_jobs)
    {
        need += j.servers;
    }
    NS_ABORT_MSG_IF(need > m_servers,
                    "GpuClusterScheduler: the jobs need "
                        << need << " servers (" << need * m_gpusPerServer
                        << " GPUs) and the cluster has " << m_servers
                        << "; add servers or shrink a job");
    if (policy == EXPLICIT)
    {
        std::set<uint32_t> taken;
        for (Job& j : m_jobs)
        {
            NS_ABORT_MSG_UNLESS(j.given.size() == j.servers,
                                "GpuClusterScheduler: job " << j.name << " needs " << j.servers
                                                            << " servers and was given "
                                                            << j.given.size());
            for (uint32_t s : j.given)
            {
                NS_ABORT_MSG_UNLESS(s < m_servers,
                                    "GpuClusterScheduler: job " << j.name << ": server " << s
                                                                << " is out of range (0.."
                                                                << m_servers - 1 << ")");
                NS_ABORT_MSG_UNLESS(taken.insert(s).second,
                                    "GpuClusterScheduler: job " << j.name << ": server " << s
                                                                << " is given to two jobs");
            }
            j.placed = j.given;
        }
        return;
    }
    for (const Job& j : m_jobs)
    {
        NS_ABORT_MSG_UNLESS(j.given.empty(),
                            "GpuClusterScheduler: job " << j.name
                                                        << " was given servers; use the "
                                                           "explicit policy");
    }
    std::vector<uint32_t> order(m_servers);
    std::iota(order.begin(), order.end(), 0);
    if (policy == RANDOM)
    {
        Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
        for (uint32_t i = m_servers; i-- > 1;)
        {
            std::swap(order[i], order[u->GetInteger(0, i)]);
        }
    }
    if (policy == FRAGMENTED)
    {
        uint32_t next = 0;
        uint32_t j = 0;
        while (next < need)
        {
            if (m_jobs[j].placed.size() < m_jobs[j].servers)
            {
                m_jobs[j].placed.push_back(order[next++]);
            }
            j = (j + 1) % m_jobs.size();
        }
        return;
    }
    uint32_t next = 0;
    for (Job& j : m_jobs)
    {
        j.placed.assign(order.begin() + next, order.begin() + next + j.servers);
        next += j.servers;
    }
}

const std::vector<uint32_t>&
GpuClusterScheduler::GetServers(uint32_t job) const
{
    NS_ABORT_MSG_UNLESS(m_placed, "GpuClusterScheduler: Place first");
    NS_ABORT_MSG_UNLESS(job < m_jobs.size(), "GpuClusterScheduler: no job " << job);
    return m_jobs[job].placed;
}

std::vector<uint32_t>
GpuClusterScheduler::GetHosts(uint32_t job) const
{
    std::vector<uint32_t> hosts;
    for (uint32_t s : GetServers(job))
    {
        for (uint32_t k = 0; k < m_gpusPerServer; ++k)
        {
            hosts.push_back(s * m_gpusPerServer + k);
        }
    }
    return hosts;
}

std::string
GpuClusterScheduler::Describe(uint32_t job) const
{
    std::vector<uint32_t> s = GetServers(job);
    std::ostringstream os;
    os << "servers ";
    std::set<uint32_t> groups;
    for (uint32_t i = 0; i < s.size();)
    {
        uint32_t j = i;
        while (j + 1 < s.size() && s[j + 1] == s[j] + 1)
        {
            ++j;
        }
        os << (i > 0 ? "," : "") << s[i];
        if (j > i)
        {
            os << "-" << s[j];
        }
        for (uint32_t k = i; k <= j; ++k)
        {
            groups.insert(s[k] / m_serversPerGroup);
        }
        i = j + 1;
    }
    os << " (group" << (groups.size() > 1 ? "s " : " ");
    bool first = true;
    for (uint32_t g : groups)
    {
        os << (first ? "" : ",") << g;
        first = false;
    }
    os << ")";
    return os.str();
}

std::vector<uint32_t>
GpuClusterScheduler::GetFreeServers() const
{
    std::set<uint32_t> taken;
    for (const Job& j : m_jobs)
    {
        taken.insert(j.placed.begin(), j.placed.end());
    }
    std::vector<uint32_t> free;
    for (uint32_t s = 0; s < m_servers; ++s)
    {
        if (!taken.count(s))
        {
            free.push_back(s);
        }
    }
    return free;
}

} // namespace ns3

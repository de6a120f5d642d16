/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef GPU_CLUSTER_SCHEDULER_H
#define GPU_CLUSTER_SCHEDULER_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief Places jobs on the GPU servers of a cluster, whole servers at a time, as a
 * cluster scheduler does, and names the hosts (one per GPU) each job runs on.
 *
 * Servers are numbered as IbTopologyBuilder::RailOptimized2Level numbers them: server s
 * has GPU hosts s G .. s G + G - 1, and servers s with the same s / ServersPerGroup share
 * their rail leaves (a rail group). Policies:
 * - packed: each job, in the order added, takes the lowest free servers in one run, so a
 *   job fills rail groups before it spills into the next;
 * - fragmented: servers are dealt one at a time to the jobs in turn (server 0 to job 0,
 *   server 1 to job 1, ...; a job that has its servers drops out), so every job spreads
 *   over every rail group and shares its leaves with the others;
 * - random: the servers in a random order (ns-3's random number stream: RngSeed, RngRun),
 *   then each job the next ones;
 * - explicit: the servers given with each job.
 */
class GpuClusterScheduler
{
  public:
    /// How jobs are placed.
    enum Policy : uint8_t
    {
        PACKED,     ///< consecutive servers
        FRAGMENTED, ///< servers dealt round-robin over the jobs
        RANDOM,     ///< a random permutation of the servers
        EXPLICIT    ///< the servers each job was given
    };

    /**
     * @param servers servers in the cluster
     * @param gpusPerServer GPUs (hosts) per server
     * @param serversPerGroup servers per rail group (for Describe)
     */
    GpuClusterScheduler(uint32_t servers, uint32_t gpusPerServer, uint32_t serversPerGroup);

    /**
     * @param name packed, fragmented, random or explicit
     * @param [out] policy the policy
     * @return true if @p name is one
     */
    static bool ParsePolicy(const std::string& name, Policy& policy);
    /// @return the policy names, for messages
    static std::string PolicyNames();

    /**
     * Add a job; aborts naming it if its GPUs are not whole servers.
     * @param name the job's name (for messages)
     * @param gpus its GPUs (a multiple of the GPUs per server)
     * @param servers its servers (only with EXPLICIT; as many as it needs)
     * @return its index
     */
    uint32_t AddJob(const std::string& name, uint32_t gpus, std::vector<uint32_t> servers = {});

    /**
     * Place every job; aborts with a message naming the job and what to change if the
     * jobs do not fit or explicit servers are out of range or taken twice.
     * @param policy the policy
     */
    void Place(Policy policy);

    /**
     * @param job a job
     * @return its servers, in rank order
     */
    const std::vector<uint32_t>& GetServers(uint32_t job) const;
    /**
     * @param job a job
     * @return its GPU hosts, in rank order (server by server)
     */
    std::vector<uint32_t> GetHosts(uint32_t job) const;
    /**
     * @param job a job
     * @return its servers as ranges, and the rail groups they are in, e.g.
     *         "servers 0-3,8-11 (groups 0,1)"
     */
    std::string Describe(uint32_t job) const;
    /// @return servers no job holds
    std::vector<uint32_t> GetFreeServers() const;

  private:
    /// A job.
    struct Job
    {
        std::string name;             ///< its name
        uint32_t servers{0};          ///< servers it needs
        std::vector<uint32_t> given;  ///< EXPLICIT: its servers
        std::vector<uint32_t> placed; ///< after Place
    };

    uint32_t m_servers;         //!< servers in the cluster
    uint32_t m_gpusPerServer;   //!< GPUs per server
    uint32_t m_serversPerGroup; //!< servers per rail group
    std::vector<Job> m_jobs;    //!< jobs
    bool m_placed{false};       //!< Place was called
};

} // namespace ns3

#endif /* GPU_CLUSTER_SCHEDULER_H */

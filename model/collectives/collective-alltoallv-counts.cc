/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-alltoallv-counts.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveAllToAllVCounts");

CollectiveAllToAllVCounts::CollectiveAllToAllVCounts(uint32_t n, std::vector<uint64_t> counts)
    : m_n(n),
      m_counts(std::move(counts)),
      m_maxBuffer(0),
      m_offRank(0)
{
    NS_ABORT_MSG_UNLESS(n >= 1, "CollectiveAllToAllVCounts: no ranks");
    NS_ABORT_MSG_UNLESS(m_counts.size() == uint64_t(n) * n,
                        "CollectiveAllToAllVCounts: " << m_counts.size() << " counts for " << n
                                                      << " ranks: give n x n = " << uint64_t(n) * n
                                                      << " (row i: what rank i sends each rank)");
    m_sendOff.resize(m_counts.size());
    m_recvOff.resize(m_counts.size());
    std::vector<uint64_t> sendTotal(n, 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        uint64_t off = 0;
        for (uint32_t j = 0; j < n; ++j)
        {
            m_sendOff[uint64_t(i) * n + j] = off;
            off += m_counts[uint64_t(i) * n + j];
            if (i != j)
            {
                m_offRank += m_counts[uint64_t(i) * n + j];
            }
        }
        sendTotal[i] = off;
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        uint64_t off = sendTotal[r];
        for (uint32_t j = 0; j < n; ++j)
        {
            m_recvOff[uint64_t(r) * n + j] = off;
            off += m_counts[uint64_t(j) * n + r];
        }
        m_maxBuffer = std::max(m_maxBuffer, off);
    }
}

uint32_t
CollectiveAllToAllVCounts::GetN() const
{
    return m_n;
}

uint64_t
CollectiveAllToAllVCounts::Count(uint32_t from, uint32_t to) const
{
    return m_counts[uint64_t(from) * m_n + to];
}

uint64_t
CollectiveAllToAllVCounts::SendOffset(uint32_t rank, uint32_t to) const
{
    return m_sendOff[uint64_t(rank) * m_n + to];
}

uint64_t
CollectiveAllToAllVCounts::RecvOffset(uint32_t rank, uint32_t from) const
{
    return m_recvOff[uint64_t(rank) * m_n + from];
}

uint64_t
CollectiveAllToAllVCounts::MaxBufferCount() const
{
    return m_maxBuffer;
}

uint64_t
CollectiveAllToAllVCounts::GetOffRankCount() const
{
    return m_offRank;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_ALLTOALLV_COUNTS_H
#define COLLECTIVE_ALLTOALLV_COUNTS_H

#include "ns3/simple-ref-count.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief The per-pair sizes of an all-to-allv (CollectiveKind::ALLTOALLV): how many
 * elements each rank sends each other rank, and where they sit in the ranks' buffers,
 * worked out once for the whole operation.
 *
 * Buffer layout of rank r (out of place, as MPI_Alltoallv with packed displacements):
 * first the send part, the segment for rank j at element SendOffset(r, j) with Count(r, j)
 * elements, in rank order; then the receive part, the segment from rank j at element
 * RecvOffset(r, j) with Count(j, r) elements, in rank order. The segment a rank sends
 * itself is copied, taking no time. Every rank's buffer holds MaxBufferCount() elements,
 * the largest rank's send plus receive part.
 */
class CollectiveAllToAllVCounts : public SimpleRefCount<CollectiveAllToAllVCounts>
{
  public:
    /**
     * @param n ranks (at least 1)
     * @param counts n x n element counts, counts[i * n + j] from rank i to rank j
     *        (aborts, naming the size expected, if it does not have n x n entries)
     */
    CollectiveAllToAllVCounts(uint32_t n, std::vector<uint64_t> counts);

    /// @return the ranks
    uint32_t GetN() const;
    /**
     * @param from sender
     * @param to receiver
     * @return elements from @p from to @p to
     */
    uint64_t Count(uint32_t from, uint32_t to) const;
    /**
     * @param rank a rank
     * @param to the receiver
     * @return first element of @p rank's segment for @p to
     */
    uint64_t SendOffset(uint32_t rank, uint32_t to) const;
    /**
     * @param rank a rank
     * @param from the sender
     * @return first element of @p rank's segment from @p from
     */
    uint64_t RecvOffset(uint32_t rank, uint32_t from) const;
    /// @return elements of every rank's buffer: the largest send + receive part
    uint64_t MaxBufferCount() const;
    /// @return elements sent by all ranks together, to other ranks
    uint64_t GetOffRankCount() const;

  private:
    uint32_t m_n;                    //!< ranks
    std::vector<uint64_t> m_counts;  //!< n x n counts
    std::vector<uint64_t> m_sendOff; //!< n x n send offsets (elements)
    std::vector<uint64_t> m_recvOff; //!< n x n receive offsets (elements)
    uint64_t m_maxBuffer;            //!< MaxBufferCount
    uint64_t m_offRank;              //!< GetOffRankCount
};

} // namespace ns3

#endif // COLLECTIVE_ALLTOALLV_COUNTS_H

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_LID_ASSIGNER_H
#define IB_LID_ASSIGNER_H

#include "ib-topology.h"

#include "ns3/ib-routing-engine.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief Assigns LIDs the way OpenSM does by default, producing the IbRoutingProblem a
 * routing engine works on.
 *
 * Nodes are visited in index order. A switch gets one LID, for its management port 0
 * (switches use LMC 0, as OpenSM does unless lmc_esp0 is set for enhanced port 0). Each
 * cabled CA port gets a base LID aligned to 2^lmc and owns the 2^lmc LIDs from it;
 * uncabled CA ports get none. With lmc > 0 the alignment leaves holes, which later
 * switches fill (lowest free LID first), as OpenSM's free-range search does. LIDs start
 * at 1; the unicast range ends at 0xBFFF.
 */
class IbLidAssigner
{
  public:
    /// Highest unicast LID.
    static constexpr uint16_t MAX_UNICAST_LID = 0xBFFF;

    /**
     * Assign LIDs. Aborts (NS_ABORT_MSG) if the fabric needs LIDs beyond 0xBFFF or lmc > 7.
     * @param t the fabric (must outlive the returned problem: it keeps a pointer)
     * @param lmc LID mask control (0..7)
     * @param numDataVls number of data VLs the ports run (1..15)
     * @return topology and LIDs
     */
    static IbRoutingProblem Assign(const IbTopology& t, uint8_t lmc, uint8_t numDataVls);
};

} // namespace ns3

#endif /* IB_LID_ASSIGNER_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef FLOW_NETWORK_H
#define FLOW_NETWORK_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-flow
 * @brief A fluid model of a network for flow-level simulation: directed links of given
 * capacities, and flows that each cross a fixed list of links and share them max-min
 * fairly (progressive filling: the most loaded link's flows get its fair share, the
 * others split what is left, and so on).
 *
 * Rates are recomputed only when the set of flows changes, once per instant however
 * many flows start or end at it; between changes every flow drains at its rate, and
 * the next end is one event. So a collective step whose n flows start together and end
 * together costs two recomputations, each O(F p log L) for F flows of p links on L
 * links, and no per-packet or per-byte events.
 *
 * What it does not model: queues, credits or pauses, congestion control, packet loss,
 * adaptive routing, or the latency of a flow's first byte (its user adds a latency
 * term); a flow's rate is its max-min fair share at once.
 */
class FlowNetwork : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    FlowNetwork();
    ~FlowNetwork() override;

    /**
     * @param bytesPerSecond the link's capacity (> 0)
     * @return its index
     */
    uint32_t AddLink(double bytesPerSecond);
    /// @return the number of links
    uint32_t GetNLinks() const;
    /**
     * @param link a link
     * @return its capacity, bytes per second
     */
    double GetCapacity(uint32_t link) const;

    /**
     * Start a flow now.
     * @param links the links it crosses, in order (each at most once; may be empty: the
     *        flow then ends at once)
     * @param bytes what it carries
     * @param drained called when its last byte has entered its last link (from an event
     *        of its own, never from inside this call)
     */
    void StartFlow(const std::vector<uint32_t>& links, double bytes, Callback<void> drained);

    /// @return flows started so far
    uint64_t GetFlowsStarted() const;
    /// @return flows under way
    uint32_t GetActiveFlows() const;
    /// @return rate recomputations so far
    uint64_t GetRecomputations() const;
    /**
     * @param link a link
     * @return bytes carried by the link so far (up to the last change)
     */
    double GetBytesCarried(uint32_t link) const;

  protected:
    void DoDispose() override;

  private:
    /// A flow.
    struct Flow
    {
        std::vector<uint32_t> links; ///< its path
        double remaining{0};         ///< bytes not yet sent
        double rate{0};              ///< bytes per second
        Callback<void> drained;      ///< when done
    };

    /// Drain every flow at its rate up to now.
    void Advance();
    /// Schedule a recomputation at this instant (once).
    void Touch();
    /// Recompute the rates (progressive filling) and schedule the next end.
    void Recompute();
    /// The next flow ends: finish those that have, and recompute.
    void NextEnd();

    std::vector<double> m_capacity; //!< per link
    std::vector<double> m_carried;  //!< per link: bytes carried
    std::vector<Flow> m_flows;      //!< slots
    std::vector<uint32_t> m_free;   //!< free slots
    std::vector<uint32_t> m_active; //!< active flow slots
    Time m_last;                    //!< when the remaining bytes were last drained
    EventId m_recompute;            //!< pending recomputation
    EventId m_next;                 //!< next end
    uint64_t m_started{0};          //!< flows started
    uint64_t m_recomputations{0};   //!< recomputations
    // progressive filling scratch, per link
    std::vector<double> m_left;                  //!< capacity not yet given out
    std::vector<uint32_t> m_unfrozen;            //!< flows not yet given a rate
    std::vector<uint32_t> m_version;             //!< heap entry validity
    std::vector<std::vector<uint32_t>> m_onLink; //!< active flows per link
    std::vector<uint32_t> m_touched;             //!< links with flows this round
};

} // namespace ns3

#endif /* FLOW_NETWORK_H */

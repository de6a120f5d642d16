/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef BACKGROUND_TRAFFIC_H
#define BACKGROUND_TRAFFIC_H

#include "ns3/collective-communicator.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-training
 * @brief Open-loop background traffic between pairs of hosts sharing a fabric with
 * training jobs: storage or checkpoint streams, or a permutation at a given load.
 *
 * Each flow is a two-rank CollectiveCommunicator (any transport: IB verbs, RoCE, TCP):
 * its first rank sends MessageBytes to the second every MessageBytes / (Load x LineRate),
 * starting at a random offset within the first interval (ns-3's random stream), as long
 * as fewer than MaxOutstanding of its messages are in flight (a message that would exceed
 * it is skipped and counted: the fabric gave the flow less than its load).
 */
class BackgroundTraffic : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    BackgroundTraffic();
    ~BackgroundTraffic() override;

    /**
     * @param pair a two-rank communicator: rank 0 sends to rank 1
     */
    void AddFlow(Ptr<CollectiveCommunicator> pair);
    /// Start every flow now.
    void Start();
    /// Stop sending (messages in flight finish).
    void Stop();
    /// @return bytes delivered, over all flows
    uint64_t GetBytesDelivered() const;
    /// @return when the last message arrived
    Time GetLastDelivery() const;
    /// @return messages skipped because MaxOutstanding were in flight
    uint64_t GetSkipped() const;
    /// @return the flows
    uint32_t GetNFlows() const;

  protected:
    void DoDispose() override;

  private:
    /// A flow.
    struct Flow
    {
        Ptr<CollectiveCommunicator> comm; ///< the pair
        uint32_t outstanding{0};          ///< messages in flight
        EventId next;                     ///< its next message
    };

    /**
     * Send a flow's next message and schedule the one after.
     * @param f the flow
     */
    void Send(uint32_t f);
    /// @return a flow's time between messages: MessageBytes / (Load x LineRate)
    Time Interval() const;

    uint64_t m_bytes;         //!< MessageBytes attribute
    double m_load;            //!< Load attribute
    DataRate m_rate;          //!< LineRate attribute
    uint32_t m_maxOut;        //!< MaxOutstanding attribute
    std::vector<Flow> m_flow; //!< flows
    uint64_t m_delivered{0};  //!< bytes delivered
    uint64_t m_skipped{0};    //!< messages skipped
    Time m_last;              //!< last delivery
    bool m_running{false};    //!< between Start and Stop
};

} // namespace ns3

#endif /* BACKGROUND_TRAFFIC_H */

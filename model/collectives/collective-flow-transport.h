/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_FLOW_TRANSPORT_H
#define COLLECTIVE_FLOW_TRANSPORT_H

#include "collective-transport.h"

#include "ns3/callback.h"
#include "ns3/flow-network.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <deque>
#include <map>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief CollectiveTransport at flow level: each message is a flow of its wire bytes
 * over its route's links in a FlowNetwork, sharing them max-min fairly with the other
 * messages under way, then arrives after the route's latency. Timing only (no data).
 *
 * Between two ranks, QueuePairsPerPeer connections carry the message streams (stream k,
 * the tag's low 4 bits, on connection k mod that, as CollectiveIbTransport's queue
 * pairs); a connection sends its messages one after the other, each as one flow of
 * payload + ceil(payload / Mtu) x PacketOverhead bytes (a zero-byte message is one
 * packet's overhead). A message is delivered when its last byte has left plus the
 * route's latency; its sent callback fires when its last byte has left.
 *
 * Not modelled: credits, PFC, congestion control and adaptive routing dynamics, packet
 * loss and retransmission, acknowledgements (their few bytes), send windows.
 */
class CollectiveFlowTransport : public CollectiveTransport
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveFlowTransport();
    ~CollectiveFlowTransport() override;

    /// A message's way from one rank to another.
    struct Route
    {
        std::vector<uint32_t> links; ///< FlowNetwork links, in order
        Time latency;                ///< from its last byte leaving to its arrival
    };

    /// The route of connection (lane) k from rank a to rank b: (a, b, k).
    typedef Callback<Route, uint32_t, uint32_t, uint32_t> RouteCallback;

    /**
     * @param ranks the number of ranks
     * @param network the links
     * @param route where rank a's messages to rank b go (asked once per connection)
     */
    void Setup(uint32_t ranks, Ptr<FlowNetwork> network, RouteCallback route);

    uint32_t GetNRanks() const override;
    bool IsDataMode() const override;
    void Send(uint32_t src,
              uint32_t dst,
              uint32_t tag,
              uint64_t bytes,
              const uint8_t* data,
              Callback<void> sent) override;

    /// @return the flow network
    Ptr<FlowNetwork> GetNetwork() const;

  protected:
    void DoDispose() override;

  private:
    /// A message waiting or under way.
    struct Message
    {
        uint32_t tag{0};     ///< its tag
        uint64_t bytes{0};   ///< payload
        Callback<void> sent; ///< when its last byte has left
    };

    /// One connection's sending side.
    struct Connection
    {
        uint32_t src{0};           ///< sender
        uint32_t dst{0};           ///< receiver
        Route route;               ///< its route
        std::deque<Message> queue; ///< front: the one under way (when busy)
        bool busy{false};          ///< a message is under way
        Callback<void> drained;    ///< Drained for this connection
    };

    /**
     * Start the next message of a connection as a flow.
     * @param c the connection
     */
    void StartNext(Connection* c);
    /**
     * A connection's message has left.
     * @param c the connection
     */
    void Drained(Connection* c);

    uint32_t m_ranks{0};                    //!< ranks
    Ptr<FlowNetwork> m_network;             //!< the links
    RouteCallback m_route;                  //!< routes
    std::map<uint64_t, Connection> m_conns; //!< by (src, dst, lane)
    uint32_t m_mtu;                         //!< Mtu attribute
    uint32_t m_overhead;                    //!< PacketOverhead attribute
    uint32_t m_lanes;                       //!< QueuePairsPerPeer attribute
};

} // namespace ns3

#endif /* COLLECTIVE_FLOW_TRANSPORT_H */

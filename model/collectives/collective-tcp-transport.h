/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_TCP_TRANSPORT_H
#define COLLECTIVE_TCP_TRANSPORT_H

#include "collective-transport.h"

#include "ns3/ipv4-address.h"
#include "ns3/ptr.h"

#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace ns3
{

class Node;
class Packet;
class Socket;
class Address;

/**
 * @ingroup infiniband-collectives
 * @brief CollectiveTransport over ns-3 TCP sockets, for any IPv4 fabric (Ethernet,
 * point-to-point, ...): one connection per pair of ranks that talk, opened when either
 * first sends to the other (the lower rank connects to the higher one's listening socket
 * and first sends its rank), so that the first messages also pay for the handshake, and
 * ranks that never talk (n^2 pairs on a large communicator, or ranks on rails that
 * nothing joins) open none. Messages are framed with a 12-byte header
 * (tag with a has-data flag, 64-bit length) so their boundaries survive the byte stream;
 * real bytes are carried when Send is given data, zero-filled virtual bytes otherwise.
 * The @p sent callback fires when the message's last byte has been accepted by the
 * socket's send buffer.
 */
class CollectiveTcpTransport : public CollectiveTransport
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveTcpTransport();
    ~CollectiveTcpTransport() override;

    /**
     * Set the ranks and open the connections (from an event at the current simulated time).
     * @param nodes rank i runs on @p nodes[i] (with an IPv4 stack and TCP)
     * @param addresses the address at which rank i is reached
     */
    void Setup(const std::vector<Ptr<Node>>& nodes, const std::vector<Ipv4Address>& addresses);

    uint32_t GetNRanks() const override;
    bool IsDataMode() const override;
    void Send(uint32_t src,
              uint32_t dst,
              uint32_t tag,
              uint64_t bytes,
              const uint8_t* data,
              Callback<void> sent) override;

    /// @return connections established (each counted at both ends)
    uint32_t GetNConnected() const;

  protected:
    void DoDispose() override;

  private:
    /// A frame waiting to be written into a socket.
    struct OutFrame
    {
        std::vector<uint8_t> header; ///< header bytes (or the hello)
        std::vector<uint8_t> data;   ///< payload copy (when real)
        uint64_t bytes{0};           ///< payload length
        bool hasData{false};         ///< payload is real
        uint64_t written{0};         ///< header + payload bytes written so far
        Callback<void> sent;         ///< done callback
    };

    /// One end of a connection: rank @c self's side towards @c peer.
    struct Endpoint
    {
        uint32_t self{0};            ///< local rank
        uint32_t peer{0};            ///< remote rank (when known)
        Ptr<Socket> socket;          ///< the connected socket (null until connected)
        bool connected{false};       ///< may write
        bool dialed{false};          ///< lower rank's end: its connect started or queued
        std::deque<OutFrame> tx;     ///< frames to write
        std::vector<uint8_t> hdr;    ///< header bytes being collected
        bool helloDone{false};       ///< accepting side: peer rank known
        bool inPayload{false};       ///< collecting a payload
        uint32_t rxTag{0};           ///< current frame's tag
        bool rxHasData{false};       ///< current frame carries real bytes
        uint64_t rxLen{0};           ///< current frame's length
        uint64_t rxGot{0};           ///< its payload bytes so far
        std::vector<uint8_t> rxData; ///< its payload (real)
    };

    /// Create the listening sockets and connect every pair (an event at Setup time).
    void OpenSockets();
    /**
     * Open the connection between two ranks (the lower one connects), unless done; before
     * the listeners exist, once they do.
     * @param a a rank
     * @param b a higher rank
     */
    void Dial(uint32_t a, uint32_t b);
    /**
     * Connect rank @p a's socket to rank @p b's listener.
     * @param a a rank
     * @param b a higher rank
     */
    void Connect(uint32_t a, uint32_t b);
    /**
     * @param rank a rank
     * @return a new TCP socket on its node, with the transport's segment and buffer sizes
     */
    Ptr<Socket> NewSocket(uint32_t rank) const;
    /**
     * Write queued frames into the socket while it has room.
     * @param ep an endpoint
     */
    void Pump(Endpoint* ep);
    /**
     * Socket receive callback.
     * @param ep the endpoint
     * @param socket the socket
     */
    void HandleRead(Endpoint* ep, Ptr<Socket> socket);
    /**
     * Socket send callback (buffer space).
     * @param ep the endpoint
     * @param socket the socket
     * @param available free bytes
     */
    void HandleSend(Endpoint* ep, Ptr<Socket> socket, uint32_t available);
    /**
     * Connection established (connecting side).
     * @param ep the endpoint
     * @param socket the socket
     */
    void Connected(Endpoint* ep, Ptr<Socket> socket);
    /**
     * Connection failed.
     * @param ep the endpoint that tried
     * @param socket the socket
     */
    void ConnectFailed(Endpoint* ep, Ptr<Socket> socket);
    /**
     * A connection closed while the transport uses it (the peer closed it, or it failed):
     * stop with a message naming the two ranks, rather than wait for it forever.
     * @param ep the endpoint
     * @param error whether it closed with an error
     * @param socket the socket
     */
    void Closed(Endpoint* ep, bool error, Ptr<Socket> socket);
    /**
     * Stop reporting closes (DoDispose closes the connections itself).
     * @param socket a connection
     */
    static void ForgetCloses(Ptr<Socket> socket);
    /**
     * A connection request arrived at a listener.
     * @param socket the listener
     * @param from the peer
     * @return true (accept)
     */
    bool AcceptRequest(Ptr<Socket> socket, const Address& from);
    /**
     * A connection was accepted.
     * @param rank the listening rank
     * @param socket the new socket
     * @param from the peer
     */
    void Accepted(uint32_t rank, Ptr<Socket> socket, const Address& from);
    /**
     * Consume stream bytes of an endpoint.
     * @param ep the endpoint
     * @param p the bytes
     * @param n how many
     */
    void Consume(Endpoint* ep, const uint8_t* p, uint32_t n);

    uint16_t m_port;        //!< Port attribute
    uint32_t m_segmentSize; //!< SegmentSize attribute
    uint32_t m_bufSize;     //!< BufferSize attribute

    std::vector<Ptr<Node>> m_nodes;                         //!< by rank
    std::vector<Ipv4Address> m_addresses;                   //!< by rank
    std::vector<Ptr<Socket>> m_listeners;                   //!< by rank
    bool m_open{false};                                     //!< the listeners exist
    std::vector<std::pair<uint32_t, uint32_t>> m_toDial;    //!< pairs to dial once they do
    std::map<uint64_t, std::unique_ptr<Endpoint>> m_eps;    //!< (self << 32) | peer
    std::vector<std::unique_ptr<Endpoint>> m_pendingAccept; //!< accepted, hello not read
    uint32_t m_connected;                                   //!< established ends
};

} // namespace ns3

#endif /* COLLECTIVE_TCP_TRANSPORT_H */

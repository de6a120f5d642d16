/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_TRANSPORT_H
#define COLLECTIVE_TRANSPORT_H

#include "ns3/callback.h"
#include "ns3/object.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Point-to-point message transport between the ranks 0..n-1 of a communicator,
 * the only thing the collective algorithms use (CollectiveIbTransport over RDMA,
 * CollectiveTcpTransport over TCP/IP).
 *
 * One transport object serves all ranks of a communicator (it is a simulation: the
 * ranks' hosts are all in the same process).
 *
 * Contract: Send copies @p data (when given) at once, so the caller may change its
 * buffer afterwards; the receive callback fires once per message, when all of it has
 * arrived, with the sender's rank, the tag, the length and the bytes (nullptr for a
 * virtual payload); messages from one rank to another are delivered in the order they
 * were sent; @p sent fires when the transport no longer needs the message (IB: its send
 * completion, TCP: its last byte accepted into the socket send buffer).
 */
class CollectiveTransport : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveTransport();
    ~CollectiveTransport() override;

    /// Receive callback: (source rank, destination rank, tag, bytes, data or nullptr).
    typedef Callback<void, uint32_t, uint32_t, uint32_t, uint64_t, const uint8_t*> ReceiveCallback;

    /**
     * @param cb called for each whole message that arrives
     */
    void SetReceiveCallback(ReceiveCallback cb);

    /// @return the number of ranks
    virtual uint32_t GetNRanks() const = 0;
    /// @return true if messages carry real bytes
    virtual bool IsDataMode() const = 0;
    /**
     * Send a message.
     * @param src sending rank
     * @param dst receiving rank (not @p src)
     * @param tag tag delivered with the message (31 bits); its low 4 bits name the
     *        message stream: messages of one stream between two ranks arrive in the order
     *        sent, messages of different streams need not (a transport may carry them over
     *        separate connections)
     * @param bytes length (may be 0)
     * @param data the bytes (copied now), or nullptr for a virtual payload
     * @param sent called once the transport is done with the message (may be null)
     */
    virtual void Send(uint32_t src,
                      uint32_t dst,
                      uint32_t tag,
                      uint64_t bytes,
                      const uint8_t* data,
                      Callback<void> sent) = 0;

    /**
     * @param tag a message's tag
     * @return its message stream (the tag's low 4 bits, Send)
     */
    static uint32_t StreamOf(uint32_t tag)
    {
        return tag & 0xFu;
    }

    /// @return messages sent so far
    uint64_t GetMessagesSent() const;
    /// @return payload bytes sent so far
    uint64_t GetBytesSent() const;

  protected:
    void DoDispose() override;
    /**
     * Hand a whole message to the receive callback (and count it).
     * @param src sender
     * @param dst receiver
     * @param tag tag
     * @param bytes length
     * @param data bytes or nullptr
     */
    void Deliver(uint32_t src, uint32_t dst, uint32_t tag, uint64_t bytes, const uint8_t* data);
    /**
     * Count a message sent.
     * @param bytes its length
     */
    void CountSent(uint64_t bytes);

  private:
    ReceiveCallback m_receive; //!< consumer
    uint64_t m_msgsSent;       //!< messages sent
    uint64_t m_bytesSent;      //!< payload bytes sent
};

} // namespace ns3

#endif /* COLLECTIVE_TRANSPORT_H */

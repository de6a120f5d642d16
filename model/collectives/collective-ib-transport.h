/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_IB_TRANSPORT_H
#define COLLECTIVE_IB_TRANSPORT_H

#include "collective-transport.h"

#include "ns3/ib-verbs.h"
#include "ns3/ptr.h"

#include <deque>
#include <map>
#include <memory>
#include <vector>

namespace ns3
{

class IbCompletionQueue;
class IbHca;
class IbMemoryRegion;
class IbQueuePair;
class IbSubnetManager;

/**
 * @ingroup infiniband-collectives
 * @brief CollectiveTransport over the RDMA transport: one RC queue pair per pair of ranks
 * that talk (created and connected the first time they do; QueuePairsPerPeer of them, one
 * per message stream modulo that, for NCCL-style channels), messages cut into fragments of
 * at most SlotSize bytes, each sent as SEND_WITH_IMM into one of RecvSlots receive buffers
 * the receiver keeps posted (the immediate carries the tag and a last-fragment flag).
 *
 * Flow control: a sender has at most RecvSlots fragments outstanding per peer (a fragment
 * stays outstanding until its send completion, which comes after the receiver reposted the
 * buffer), so the receiver never runs out of receive WRs and there are no RNR NAKs; the
 * HCA's own per-QP window (MaxOutstandingPackets) limits the packets in flight. In the
 * HCA's data mode the fragments are copied into a registered send buffer and out of the
 * receive buffer, so real bytes travel; otherwise payloads are virtual.
 */
class CollectiveIbTransport : public CollectiveTransport
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveIbTransport();
    ~CollectiveIbTransport() override;

    /**
     * Set the ranks: rank i is the HCA @p hcas[i] (port 1).
     * @param hcas one HCA per rank (installed with IbHcaHelper; all data mode or none)
     * @param sm the subnet manager (for path SL and MTU), or null
     */
    void Setup(const std::vector<Ptr<IbHca>>& hcas, Ptr<IbSubnetManager> sm);

    uint32_t GetNRanks() const override;
    bool IsDataMode() const override;
    void Send(uint32_t src,
              uint32_t dst,
              uint32_t tag,
              uint64_t bytes,
              const uint8_t* data,
              Callback<void> sent) override;

    /**
     * @param a a rank
     * @param b another rank
     * @return the queue pair of @p a towards @p b of the lowest lane they used, or null
     *         if they never talked
     */
    Ptr<IbQueuePair> GetQueuePair(uint32_t a, uint32_t b) const;
    /// @return the number of queue pairs created (two per connected pair of ranks and lane)
    uint32_t GetNQueuePairs() const;

  protected:
    void DoDispose() override;

  private:
    /// Destroy the queue pairs and deregister the regions of every endpoint on its HCA.
    void ReleaseEndpoints();

    /// A message being sent.
    struct OutMsg
    {
        uint32_t tag{0};              ///< tag
        uint64_t bytes{0};            ///< length
        std::vector<uint8_t> data;    ///< copy of the bytes (data mode)
        bool hasData{false};          ///< data valid
        Callback<void> sent;          ///< done callback
        uint64_t nextOffset{0};       ///< first byte not yet posted
        uint32_t fragsOutstanding{0}; ///< posted, not completed
        bool allPosted{false};        ///< every fragment posted
    };

    /// One direction's endpoint: rank @c self's queue pair towards rank @c peer.
    struct Endpoint
    {
        uint32_t self{0};                             ///< local rank
        uint32_t peer{0};                             ///< remote rank
        uint32_t lane{0};                             ///< which of the pair's queue pairs
        Ptr<IbQueuePair> qp;                          ///< the RC queue pair
        Ptr<IbMemoryRegion> sendMr;                   ///< send staging buffers
        Ptr<IbMemoryRegion> recvMr;                   ///< receive buffers
        std::vector<uint32_t> freeSlots;              ///< free send staging slots
        std::vector<std::shared_ptr<OutMsg>> slotMsg; ///< message of each busy send slot
        std::deque<std::shared_ptr<OutMsg>> queue;    ///< messages with fragments to post
        std::vector<uint8_t> rxData;                  ///< message being reassembled (data mode)
        uint64_t rxBytes{0};                          ///< its bytes so far
        bool rxHasData{false};                        ///< real bytes received
    };

    /**
     * @param a a rank
     * @param b another rank
     * @param lane which of their queue pairs (0 .. QueuePairsPerPeer - 1)
     * @return the endpoint of @p a towards @p b (creating and connecting both sides)
     */
    Endpoint& GetEndpoint(uint32_t a, uint32_t b, uint32_t lane);
    /**
     * Post as many fragments as the free slots allow.
     * @param ep the endpoint
     */
    void Pump(Endpoint& ep);
    /**
     * Send-side completion of rank @p rank.
     * @param rank the rank
     * @param wc the completion
     */
    void SendDone(uint32_t rank, const IbWorkCompletion& wc);
    /**
     * Receive-side completion of rank @p rank.
     * @param rank the rank
     * @param wc the completion
     */
    void RecvDone(uint32_t rank, const IbWorkCompletion& wc);
    /**
     * Post receive buffer @p slot of an endpoint.
     * @param ep the endpoint
     * @param slot the slot
     */
    void PostRecvSlot(Endpoint& ep, uint32_t slot);

    uint32_t m_slotSize;   //!< SlotSize attribute
    uint32_t m_recvSlots;  //!< RecvSlots attribute
    uint8_t m_sl;          //!< ServiceLevel attribute (without a subnet manager)
    uint8_t m_timeout{14}; //!< Timeout attribute
    uint8_t m_retryCnt{7}; //!< RetryCount attribute
    uint32_t m_lanes;      //!< QueuePairsPerPeer attribute

    std::vector<Ptr<IbHca>> m_hcas;            //!< by rank
    Ptr<IbSubnetManager> m_sm;                 //!< for path records
    std::vector<Ptr<IbCompletionQueue>> m_scq; //!< send CQ by rank
    std::vector<Ptr<IbCompletionQueue>> m_rcq; //!< receive CQ by rank
    std::map<uint64_t, Endpoint> m_endpoints;  //!< key (self << 36) | (peer << 4) | lane
    bool m_dataMode;                           //!< the HCAs' data mode
};

} // namespace ns3

#endif /* COLLECTIVE_IB_TRANSPORT_H */

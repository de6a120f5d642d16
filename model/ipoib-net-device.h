/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IPOIB_NET_DEVICE_H
#define IPOIB_NET_DEVICE_H

#include "ib-verbs.h"
#include "ipoib-address.h"

#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <map>
#include <vector>

namespace ns3
{

class IbCompletionQueue;
class IbHca;
class IbMemoryRegion;
class IbNetDevice;
class IbQueuePair;
class IbSubnetManager;
class Packet;

/**
 * @ingroup infiniband
 * @brief IP over InfiniBand in datagram mode (RFC 4391/4392), as an ns3::NetDevice on
 * top of a UD queue pair of the node's IbHca.
 *
 * - Encapsulation: each IP or ARP packet gets the 4-byte IPoIB header (EtherType,
 *   reserved) and travels as one UD SEND Only message: LRH, BTH, DETH, IPoIB header,
 *   IP packet, ICRC, VCRC. The HCA must be in DataMode so that the real bytes cross the
 *   fabric (and show in the ports' pcap).
 * - Hardware address: IpoibAddress, 20 bytes: flags, QPN, GID fe80::<node GUID>.
 * - Unicast: the destination's address gives the QPN and the GUID; the subnet manager
 *   resolves the GUID to the port's LID and answers the path record (SL); both are
 *   cached.
 * - Broadcast and multicast: sent once to the broadcast group's multicast LID (see
 *   IbMulticastGroup), replicated by the switches. Every IPv4 multicast group is mapped
 *   to the broadcast group (receivers filter at the IP layer). The model's HCA does not
 *   implement multicast QP attachment (DestQP 0xFFFFFF), so the group's packets carry the
 *   group QPN that IpoibHelper makes equal on every member (SetBroadcastGroup).
 * - MTU: the port's IB MTU minus 4 (2044 for 2048, 4092 for 4096) unless set.
 * - Send side: SendBuffers registered buffers; a packet is copied into a free one and
 *   posted; when none is free packets wait in a FIFO of up to TxQueueSize packets (then
 *   they are dropped: MacTxDrop). Receive side: RecvBuffers receive WRs of MTU + 40
 *   bytes (the GRH space) stay posted; each is re-posted once its packet is handed up.
 * - ns-3 metadata: the bytes delivered are those that crossed the fabric; for unicast
 *   packets the receiver re-attaches the sender's ns3::Packet (same bytes, with its byte
 *   tags, e.g. FlowMonitor's) found in a simulation-wide table by content, so
 *   FlowMonitor and other tag users work as on any ns-3 device.
 */
class IpoibNetDevice : public NetDevice
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    IpoibNetDevice();
    ~IpoibNetDevice() override;

    /**
     * Bind to a port of an HCA: create the UD QP (QPN from the HCA), the completion
     * queues and the buffers, and post the receive WRs. The subnet manager must have
     * configured the fabric.
     * @param hca the node's HCA (in DataMode)
     * @param sm the subnet manager of its fabric
     * @param port the HCA port (1..)
     */
    void Setup(Ptr<IbHca> hca, Ptr<IbSubnetManager> sm, uint8_t port = 1);

    /**
     * Set the broadcast group: its multicast LID and the QPN its members listen on.
     * @param mlid the multicast LID (0xC000..0xFFFE)
     * @param qpn the QPN carried by group packets
     */
    void SetBroadcastGroup(uint16_t mlid, uint32_t qpn);

    /// @return the UD queue pair
    Ptr<IbQueuePair> GetQueuePair() const;
    /// @return the IB port
    Ptr<IbNetDevice> GetIbPort() const;
    /// @return the HCA
    Ptr<IbHca> GetHca() const;
    /// @return the hardware address
    IpoibAddress GetIpoibAddress() const;
    /// @return packets dropped because the destination could not be resolved
    uint64_t GetUnresolvedDrops() const;
    /// @return packets dropped because the transmit FIFO was full
    uint64_t GetTxQueueDrops() const;

    // NetDevice
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsPointToPoint() const override;
    bool IsBridge() const override;
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;

  private:
    /// A packet waiting for a send buffer.
    struct TxItem
    {
        Ptr<Packet> packet; ///< with the IPoIB header
        uint16_t dlid;      ///< destination LID
        uint8_t sl;         ///< service level
        uint32_t qpn;       ///< destination QPN
        bool unicast;       ///< register for tag re-attachment
    };

    /// Resolved unicast destination.
    struct Route
    {
        uint16_t dlid{0};  ///< LID
        uint8_t sl{0};     ///< SL of the path record
        bool valid{false}; ///< resolvable
    };

    /**
     * @param guid a node GUID
     * @return its port-1 LID and path record SL
     */
    Route Resolve(uint64_t guid);
    /**
     * @param lid a LID of the fabric
     * @return the GUID of the CA that owns it (0 if none)
     */
    uint64_t GuidOfLid(uint16_t lid);
    /// Post waiting packets while send buffers are free.
    void TrySend();
    /**
     * Send completion.
     * @param wc the completion
     */
    void SendDone(const IbWorkCompletion& wc);
    /**
     * Receive completion.
     * @param wc the completion
     */
    void RecvDone(const IbWorkCompletion& wc);
    /**
     * Post receive buffer @p slot.
     * @param slot its index
     */
    void PostRecvSlot(uint32_t slot);

    Ptr<Node> m_node;                                    //!< node
    uint32_t m_ifIndex;                                  //!< interface index
    Ptr<IbHca> m_hca;                                    //!< HCA
    Ptr<IbSubnetManager> m_sm;                           //!< subnet manager
    Ptr<IbNetDevice> m_port;                             //!< IB port
    uint8_t m_portNum;                                   //!< its number
    Ptr<IbQueuePair> m_qp;                               //!< UD QP
    Ptr<IbCompletionQueue> m_sendCq;                     //!< send CQ
    Ptr<IbCompletionQueue> m_recvCq;                     //!< receive CQ
    Ptr<IbMemoryRegion> m_sendMr;                        //!< send buffers
    Ptr<IbMemoryRegion> m_recvMr;                        //!< receive buffers
    uint32_t m_slotSize;                                 //!< send buffer size (IB MTU)
    uint32_t m_recvSlotSize;                             //!< receive buffer size (IB MTU + 40)
    std::vector<uint32_t> m_freeSlots;                   //!< free send buffers
    std::deque<TxItem> m_txQueue;                        //!< packets waiting for a buffer
    IpoibAddress m_address;                              //!< own address
    uint16_t m_mlid;                                     //!< broadcast group MLID
    uint32_t m_groupQpn;                                 //!< QPN of broadcast group packets
    std::map<uint64_t, Route> m_routes;                  //!< GUID -> route
    std::map<uint16_t, uint64_t> m_lidGuid;              //!< LID -> GUID
    uint16_t m_mtu;                                      //!< IP MTU (0 = auto until Setup)
    NetDevice::ReceiveCallback m_rxCallback;             //!< upper layer
    NetDevice::PromiscReceiveCallback m_promiscCallback; //!< promiscuous upper layer
    // Attributes
    uint32_t m_qkey;        //!< Q_Key
    uint32_t m_sendBuffers; //!< send buffers
    uint32_t m_recvBuffers; //!< receive WRs
    uint32_t m_txQueueSize; //!< FIFO limit
    uint16_t m_pkey;        //!< P_Key (broadcast GID)
    // Counters
    uint64_t m_unresolvedDrops; //!< unresolved destinations
    uint64_t m_txQueueDrops;    //!< FIFO overflow
    // Traces
    TracedCallback<Ptr<const Packet>> m_macTxTrace;     //!< MacTx
    TracedCallback<Ptr<const Packet>> m_macTxDropTrace; //!< MacTxDrop
    TracedCallback<Ptr<const Packet>> m_macRxTrace;     //!< MacRx
    TracedCallback<Ptr<const Packet>> m_macRxDropTrace; //!< MacRxDrop
};

} // namespace ns3

#endif /* IPOIB_NET_DEVICE_H */

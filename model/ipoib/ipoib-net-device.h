/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IPOIB_NET_DEVICE_H
#define IPOIB_NET_DEVICE_H

#include "ipoib-address.h"

#include "ns3/ib-verbs.h"
#include "ns3/mac64-address.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
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
 * @ingroup infiniband-ipoib
 * @brief IP over InfiniBand in datagram mode (RFC 4391/4392), as an ns3::NetDevice on
 * top of a UD queue pair of the node's IbHca.
 *
 * - Encapsulation: each IP or ARP packet gets the 4-byte IPoIB header (EtherType,
 *   reserved) and travels as one UD SEND Only message: LRH, BTH, DETH, IPoIB header,
 *   IP packet, ICRC, VCRC. The HCA must be in DataMode so that the real bytes cross the
 *   fabric (and show in the ports' pcap).
 * - Hardware address (attribute HardwareAddressMode):
 *   - Ipoib20 (default): IpoibAddress, 20 bytes: flags, QPN, GID fe80::<node GUID>, as in
 *     RFC 4391 (ARP payloads as Linux ipoib sends them). IPv6: the interface identifier is
 *     the GUID with the universal/local bit inverted (RFC 4391); ns-3 3.37 needs
 *     IpoibHelper::AssignIpv6 to set the addresses up (see SetPresentInterfaceId) and
 *     cannot run neighbour discovery over 20-byte addresses; ARP works only with an ns-3
 *     built without asserts.
 *   - Eui64: the device's address is that interface identifier as an 8-byte
 *     Mac64Address, which ns-3's ARP and neighbour discovery carry natively: IPv6
 *     link-local autoconfiguration, DAD, neighbour discovery and SLAAC run unmodified,
 *     and ARP works with any ns-3 build. The QPN is not part of the address: unicast
 *     packets go to the QPN of the broadcast group (SetBroadcastGroup), which
 *     IpoibHelper makes the IPoIB QPN of every host. Only the ARP and neighbour
 *     discovery payloads differ from RFC 4391 (8-byte instead of 20-byte addresses): not
 *     interoperable with a real IPoIB stack.
 * - Unicast: the destination's address gives the GUID (and the QPN); the subnet manager
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
 *   packets the receiver re-attaches the sender's ns3::Packet (same bytes, with its
 *   packet and byte tags, e.g. FlowMonitor's), so FlowMonitor and other tag users work as
 *   on any ns-3 device. The sender appends each unicast packet it posts to a FIFO that the
 *   receiving IpoibNetDevice keeps for that sender QP (found once per destination, when
 *   the route is resolved). The fabric delivers the packets of one UD QP to one
 *   destination LID in order (one path: deterministic forwarding tables, one SL and VL,
 *   FIFO buffers per VL), so the receiver finds a packet's original at its FIFO's front;
 *   packets lost on the way (error model, no receive WR) are skipped, as the bytes are
 *   compared in full. Senders of another MPI rank have no FIFO: their packets are
 *   delivered from the bytes.
 */
class IpoibNetDevice : public NetDevice
{
  public:
    /// What the device presents as its hardware address (attribute HardwareAddressMode).
    enum AddressMode
    {
        IPOIB20, //!< the 20-byte RFC 4391 address (IpoibAddress)
        EUI64,   //!< the 8-byte interface identifier (Mac64Address)
    };

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
    /**
     * While @p on, GetAddress() returns this port's IPv6 interface identifier, the port
     * GUID with the universal/local bit inverted (RFC 4391 section 8, modified EUI-64), as a
     * Mac64Address, instead of the 20-byte IPoIB address. ns-3 3.37 derives the link-local
     * address (Ipv6Interface::DoSetup) and Ipv6AddressHelper's addresses from
     * GetAddress() and knows 1, 2, 6 and 8-byte addresses only: IpoibHelper::AssignIpv6
     * switches this on around Ipv6AddressHelper::Assign. Off by default; ARP and IPv6
     * packets always carry the 20-byte address. No effect in Eui64 mode (HardwareAddressMode),
     * where GetAddress() always returns the interface identifier.
     * @param on present the interface identifier
     */
    void SetPresentInterfaceId(bool on);
    /// @return the IPv6 interface identifier (GUID with the U/L bit inverted)
    uint64_t GetInterfaceId() const;
    /// @return the hardware address mode (attribute HardwareAddressMode)
    AddressMode GetAddressMode() const;
    /**
     * Set the hardware address mode (attribute HardwareAddressMode); only before Setup().
     * @param mode the mode
     */
    void SetAddressMode(AddressMode mode);
    /**
     * @param guid a port GUID (EUI-64)
     * @return its modified EUI-64 interface identifier (U/L bit inverted) as a
     *         Mac64Address: the device address of a port in Eui64 mode
     */
    static Mac64Address InterfaceIdAddress(uint64_t guid);
    /// @return packets dropped because the destination could not be resolved or reached
    ///         from this port (the QP refused the send)
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
    /**
     * The Mtu attribute's setter: SetMtu, which after Setup refuses 0 and more than the
     * IB MTU minus 4, with a message.
     * @param mtu the IP MTU
     */
    void SetMtuAttribute(uint16_t mtu);
    /// Unicast packets one sender QP posted to this device, oldest first.
    using SentFifo = std::deque<Ptr<Packet>>;

    /// A packet waiting for a send buffer.
    struct TxItem
    {
        Ptr<Packet> packet;             ///< with the IPoIB header
        uint16_t dlid;                  ///< destination LID
        uint8_t sl;                     ///< service level
        uint32_t qpn;                   ///< destination QPN
        std::shared_ptr<SentFifo> fifo; ///< unicast: the receiver's FIFO for this device
    };

    /// Resolved unicast destination.
    struct Route
    {
        uint16_t dlid{0};               ///< LID
        uint8_t sl{0};                  ///< SL of the path record
        bool valid{false};              ///< resolvable
        Ptr<IbNetDevice> port;          ///< the destination port
        uint32_t fifoQpn{0};            ///< the QPN that fifo belongs to
        std::shared_ptr<SentFifo> fifo; ///< the destination device's FIFO for this device
    };

    /// What this device knows about a LID, as a receiver.
    struct LidEntry
    {
        uint64_t guid{0};      ///< GUID of the CA that owns it (0: none)
        bool guidKnown{false}; ///< guid was looked up
        std::vector<std::pair<uint32_t, std::shared_ptr<SentFifo>>> fifos; ///< by sender QPN
    };

    /**
     * @param guid the GUID of a CA
     * @param qpn the destination QPN on it
     * @return the route to its port 1 (LID, path record SL) and the FIFO of its device
     */
    const Route& Resolve(uint64_t guid, uint32_t qpn);
    /**
     * Eui64 mode, once per destination: abort unless the IpoibNetDevice of @p dstPort (if
     * it is on this MPI rank) has a QP with number @p qpn.
     * @param dstPort a CA port
     * @param qpn the QPN this device sends to
     */
    void CheckPeerQpn(Ptr<IbNetDevice> dstPort, uint32_t qpn) const;
    /**
     * @param dstPort a CA port
     * @param qpn a QPN of its HCA
     * @return the FIFO that the IpoibNetDevice with this port and QP keeps for this device's
     *         packets, or nullptr if there is none on this MPI rank
     */
    std::shared_ptr<SentFifo> PeerFifo(Ptr<IbNetDevice> dstPort, uint32_t qpn) const;
    /**
     * @param lid a LID of the fabric
     * @return its entry (GUID of the CA that owns it, 0 if none; FIFOs of its senders)
     */
    LidEntry& Lid(uint16_t lid);
    /**
     * @param slid the LID of a sender
     * @param srcQpn its QP
     * @return the FIFO of the unicast packets it posted to this device (created if needed)
     */
    std::shared_ptr<SentFifo> SenderFifo(uint16_t slid, uint32_t srcQpn);
    /**
     * Find the sender's packet with exactly the bytes received, and forget it and those
     * posted before it (lost).
     * @param from the entry of the sender's LID
     * @param srcQpn the sender's QP
     * @param data the bytes received (IPoIB header and IP packet)
     * @param len their number
     * @return the sender's packet, or nullptr if it is not known
     */
    Ptr<Packet> TakeSent(LidEntry& from, uint32_t srcQpn, const uint8_t* data, uint32_t len);
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
    /**
     * The IB port's link changed: tell the upper layers (ns-3's ARP and ND flush their
     * caches), except for the port's first training at the start of the run. To them
     * the device is up from Setup, as a CSMA or point-to-point device is from Attach,
     * so that ARP and ND entries made before the run stay.
     */
    void PortLinkChanged();

    TracedCallback<> m_linkChangeCallbacks; //!< upper layers' link-change callbacks
    bool m_portCameUp{false};               //!< the port's first link-up has happened

    Ptr<Node> m_node;                             //!< node
    uint32_t m_ifIndex;                           //!< interface index
    Ptr<IbHca> m_hca;                             //!< HCA
    Ptr<IbSubnetManager> m_sm;                    //!< subnet manager
    Ptr<IbNetDevice> m_port;                      //!< IB port
    uint8_t m_portNum;                            //!< its number
    Ptr<IbQueuePair> m_qp;                        //!< UD QP
    Ptr<IbCompletionQueue> m_sendCq;              //!< send CQ
    Ptr<IbCompletionQueue> m_recvCq;              //!< receive CQ
    Ptr<IbMemoryRegion> m_sendMr;                 //!< send buffers
    Ptr<IbMemoryRegion> m_recvMr;                 //!< receive buffers
    uint32_t m_slotSize;                          //!< send buffer size (IB MTU)
    uint32_t m_recvSlotSize;                      //!< receive buffer size (IB MTU + 40)
    std::vector<uint32_t> m_freeSlots;            //!< free send buffers
    std::deque<TxItem> m_txQueue;                 //!< packets waiting for a buffer
    IpoibAddress m_address;                       //!< own address
    bool m_presentInterfaceId;                    //!< see SetPresentInterfaceId
    AddressMode m_addressMode;                    //!< HardwareAddressMode
    uint16_t m_mlid;                              //!< broadcast group MLID
    uint32_t m_groupQpn;                          //!< QPN of broadcast group packets
    std::unordered_map<uint64_t, Route> m_routes; //!< GUID -> route
    uint64_t m_lastGuid{0};                       //!< destination of the last send
    Route* m_lastRoute{nullptr};                  //!< its route (elements of m_routes do not move)
    std::vector<LidEntry> m_lids;                 //!< by LID (senders)
    std::vector<uint8_t> m_scratch;               //!< one receive buffer
    uint16_t m_mtu;                               //!< IP MTU (0 = auto until Setup)
    NetDevice::ReceiveCallback m_rxCallback;      //!< upper layer
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

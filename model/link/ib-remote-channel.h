/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_REMOTE_CHANNEL_H
#define IB_REMOTE_CHANNEL_H

// Distributed (MPI) simulation only: without ns-3's mpi module (NS3_MPI undefined, as
// in Debian's binary ns-3) this header declares nothing and its .cc compiles to nothing.
#ifdef NS3_MPI

#include "ib-channel.h"

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

class NetDevice;
class Node;

/**
 * @ingroup infiniband-link
 * @brief One-byte prefix that an IbRemoteChannel puts in front of a packet it ships to
 * another MPI rank: it says whether the packet is a data packet or a link-level
 * flow-control packet, the one fact IbChannel::Transmit passes besides the packet.
 *
 * It is a header, not a tag, so that it travels in the packet's bytes: the receiving
 * rank reads and removes it before the port sees the packet, which then holds exactly
 * the bytes that were sent (LRH .. VCRC, or the 6-byte flow-control packet).
 */
class IbRemoteHeader : public Header
{
  public:
    /// What the packet is.
    enum Kind : uint8_t
    {
        DATA = 0xD0, ///< a data packet (LRH .. VCRC)
        LINK = 0xF0  ///< a link-level flow-control packet
    };

    IbRemoteHeader();
    /**
     * @param linkPacket true for a flow-control packet
     */
    explicit IbRemoteHeader(bool linkPacket);

    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    /**
     * @param start where to read
     * @return 1, or 0 if no byte remains or the byte is not a known kind
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    /// @return true for a flow-control packet
    bool IsLinkPacket() const;

  private:
    uint8_t m_kind; //!< DATA or LINK
};

/**
 * @ingroup infiniband-link
 * @brief An InfiniBand cable whose two ports are on different MPI ranks of a
 * distributed simulation (ns-3's DistributedSimulatorImpl or NullMessageSimulatorImpl).
 *
 * Every rank builds the whole fabric (all nodes, ports and cables exist as objects on
 * every rank) but runs events only for its own nodes (Node::GetSystemId). A packet sent
 * by a port of this rank to a port of another rank is copied, prefixed with an
 * IbRemoteHeader and handed to MpiInterface::SendPacket with its absolute arrival time,
 * computed exactly as IbChannel computes it (the peer port object exists here too, so
 * its cut-through mode and receive delay are known). The receiving rank's MpiReceiver,
 * aggregated to the port by EnableMpiReceive(), removes the prefix and calls
 * IbNetDevice::ReceiveFromChannel at that time. Packets sent by a port that is not on
 * this rank are dropped: its own rank sends them.
 *
 * The cable's delay is the lookahead of the distributed engines: it must be positive.
 * Both engines read the channel's Delay attribute (IbHelper sets it to the effective
 * delay when Length is used) for the ports whose IbNetDevice::IsPointToPoint() is true,
 * which is the case for the ports of a cable between ranks.
 *
 * IbHelper::Connect (and so IbFabricHelper::Build) creates this channel instead of an
 * IbChannel when MPI is enabled and the two nodes have different system ids.
 */
class IbRemoteChannel : public IbChannel
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbRemoteChannel();
    ~IbRemoteChannel() override;

    /**
     * Deliver locally if the peer port is on this rank, ship the packet to the peer's
     * rank if it is not; drop it if the sending port is not on this rank.
     * @param packet the packet (not modified: a copy is shipped)
     * @param src the sending port
     * @param headerEnd time from now at which the packet's LRH is on the wire
     * @param txEnd time from now at which the last bit is on the wire
     * @param linkPacket true for a link-level flow-control packet
     */
    void Transmit(IbOwnedPacket packet,
                  Ptr<IbNetDevice> src,
                  Time headerEnd,
                  Time txEnd,
                  bool linkPacket) override;

    /**
     * A flow-control packet between ports of this rank crosses as fields, as on an
     * IbChannel; one to or from another rank is built as a packet and goes through
     * Transmit.
     * @param fc the flow-control fields
     * @param src the sending port
     * @param txEnd time from now at which the last bit is on the wire
     */
    void TransmitFlowControl(const IbFlowControlHeader& fc,
                             Ptr<IbNetDevice> src,
                             Time txEnd) override;

    /**
     * Aggregate an MpiReceiver to @p device (once) that gives packets arriving from
     * other ranks, without their IbRemoteHeader, to IbNetDevice::ReceiveFromChannel.
     * @param device a port of a cable between ranks
     */
    static void EnableMpiReceive(Ptr<IbNetDevice> device);

    /// @return true: the two ends are on different ranks
    bool IsBetweenRanks() const override;

    /// @return packets this channel shipped to another rank
    uint64_t GetRemoteTxPackets() const;

    /**
     * Hand a packet to MpiInterface::SendPacket for a port of another rank; the one place
     * where cables between ranks (this one and EthRemoteChannel) leave the process. Refuses,
     * naming the nodes, a packet too large for the receiving rank's MPI buffer, and keeps
     * the null-message engine's promises tight (see the .cc).
     * @param packet what to ship, with any marker header (not modified afterwards)
     * @param rxTime its absolute arrival time
     * @param srcNode the sending node
     * @param dst the receiving port, on another rank
     * @param channel the channel type, for messages
     */
    static void SendToRank(Ptr<Packet> packet,
                           Time rxTime,
                           Ptr<Node> srcNode,
                           Ptr<NetDevice> dst,
                           const char* channel);

  private:
    /**
     * MpiReceiver callback.
     * @param device the receiving port
     * @param packet the packet as it arrived, with its IbRemoteHeader
     */
    static void ReceiveFromRemote(Ptr<IbNetDevice> device, Ptr<Packet> packet);

    uint64_t m_remoteTxPackets; //!< packets shipped to another rank
};

} // namespace ns3

#endif /* NS3_MPI */

#endif /* IB_REMOTE_CHANNEL_H */

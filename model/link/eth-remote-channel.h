/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_REMOTE_CHANNEL_H
#define ETH_REMOTE_CHANNEL_H

// Distributed (MPI) simulation only: without ns-3's mpi module (NS3_MPI undefined, as
// in Debian's binary ns-3) this header declares nothing and its .cc compiles to nothing.
#ifdef NS3_MPI

#include "eth-channel.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-link
 * @brief An Ethernet cable whose two ports are on different MPI ranks of a distributed
 * simulation, in the design of IbRemoteChannel.
 *
 * Every rank builds the whole fabric but runs events only for its own nodes. A frame that a
 * port of this rank sends to a port of another rank is handed, with the absolute arrival time
 * EthChannel would give it (the peer port object exists here too, so its cut-through mode
 * and receive delay are known), to MpiInterface::SendPacket through
 * IbRemoteChannel::SendToRank; PFC frames arrive one propagation delay after their last
 * byte, as on an EthChannel. No marker is needed: a PFC frame says what it is by its
 * EtherType (0x8808). The receiving rank's MpiReceiver, aggregated to the port by
 * EnableMpiReceive(), hands a MAC control frame to the port's PFC receiver and any other
 * frame to its data receiver. Frames sent by a port that is not on this rank are dropped:
 * its own rank sends them.
 *
 * The cable's Delay is the lookahead of the distributed engines: it must be positive.
 * EthNetDevice::IsPointToPoint() is true for the ports of such a cable, which is what the
 * engines look for. EthHelper::Connect and EthFabricHelper::Build create this channel
 * instead of an EthChannel when MPI is enabled and the two nodes have different system ids.
 */
class EthRemoteChannel : public EthChannel
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    EthRemoteChannel();
    ~EthRemoteChannel() override;

    /**
     * Aggregate an MpiReceiver to @p device (once) that gives frames arriving from other
     * ranks to the port.
     * @param device a port of a cable between ranks
     */
    static void EnableMpiReceive(Ptr<EthNetDevice> device);

    /// @return true: the two ends are on different ranks
    bool IsBetweenRanks() const override;

    /// @return frames (data and PFC) this cable shipped to another rank
    uint64_t GetRemoteTxFrames() const;

  protected:
    void ShipData(IbOwnedPacket frame, EthNetDevice* dst, Time rxTime) override;
    void ShipControl(Ptr<Packet> frame, EthNetDevice* dst, Time rxTime) override;

  private:
    /**
     * Ship a frame, or drop it if its sender is not on this rank.
     * @param frame the frame
     * @param dst the receiving port
     * @param rxTime its absolute arrival time
     */
    void Ship(Ptr<Packet> frame, EthNetDevice* dst, Time rxTime);

    /**
     * MpiReceiver callback.
     * @param device the receiving port
     * @param frame the frame as it arrived
     */
    static void ReceiveFromRemote(Ptr<EthNetDevice> device, Ptr<Packet> frame);

    uint64_t m_remoteTxFrames{0}; //!< frames shipped to another rank
};

} // namespace ns3

#endif /* NS3_MPI */

#endif /* ETH_REMOTE_CHANNEL_H */

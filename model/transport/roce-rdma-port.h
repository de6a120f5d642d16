/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ROCE_RDMA_PORT_H
#define ROCE_RDMA_PORT_H

#include "rdma-port.h"

#include "ns3/eth-net-device.h"
#include "ns3/ipv4-address.h"
#include "ns3/roce-packet.h"

namespace ns3
{

/**
 * @ingroup infiniband-transport
 * @brief The Ethernet link layer of an HCA port: RoCEv2 packets (Ethernet, IPv4, UDP to port
 * 4791, BTH ..., ICRC, FCS) on an EthNetDevice.
 *
 * A path's remote end is an IPv4 address, and the SL of a queue pair or work request chooses
 * the 802.1p priority its packets use: SL 0, every queue pair's default, the port's default
 * priority (IbHca attribute RocePriority, 3: the lossless class of common RoCE deployments,
 * where EthNetDevice's PfcEnabled has PFC on by default), SL 1..7 priority SL. Packets carry
 * DSCP = 8 x priority, which the ports' default DSCP-to-priority map (DSCP >> 3) takes back to
 * the same priority. Frames go to the
 * MAC address of the device at the other end of the port's cable (the first switch, which
 * routes by IP, or the other host of a back-to-back cable): the neighbour an ARP request would
 * find. Every data packet is ECN-capable (ECT(0)), so that switches can mark it.
 */
class RoceRdmaPort : public RdmaPort
{
  public:
    /**
     * @param dev the port's device (kept by the HCA as long as this object)
     * @param address the port's IPv4 address (its RoCEv2 GID)
     * @param defaultPriority the priority of SL 0
     */
    RoceRdmaPort(Ptr<EthNetDevice> dev, Ipv4Address address, uint8_t defaultPriority);

    /// @return the device
    EthNetDevice* GetEthDevice() const
    {
        return m_dev;
    }

    /// @return the port's IPv4 address
    Ipv4Address GetAddress() const
    {
        return m_address;
    }

    /**
     * A congestion notification packet from this port.
     * @param remote the IPv4 address to send it to (the sender of the marked packet)
     * @param destQp the QP it is for (the sender's QP)
     * @param entropy the UDP source port
     * @param dscp its DSCP
     * @return the CNP, sealed
     */
    Ptr<Packet> MakeCnp(uint32_t remote, uint32_t destQp, uint16_t entropy, uint8_t dscp) const;

    bool IsRoce() const override;
    Ptr<NetDevice> GetDevice() const override;
    DataRate GetDataRate() const override;
    uint32_t GetWireOverhead() const override;
    uint32_t GetActiveMtu() const override;
    uint32_t GetLocalAddress() const override;
    std::string SlProblem(uint8_t sl) const override;
    uint8_t GetClassForSl(uint8_t sl) const override;
    std::string FirstHopProblem(uint32_t remote) const override;
    std::string AddressText(uint32_t remote) const override;
    uint32_t GetTxQueueLength(uint8_t cls) const override;
    void Send(Ptr<Packet> p, uint8_t cls) override;
    void Seal(Ptr<Packet> p,
              uint32_t remote,
              uint8_t sl,
              uint16_t entropy,
              const IbBthHeader& bth,
              uint32_t zeroTail) override;
    uint32_t GetBthOffset() const override;
    uint32_t GetTrailerSize() const override;

  private:
    /// @return the addressing of this port's packets to @p remote, the peer MAC filled in
    /// @param remote the destination IPv4 address
    RocePacket::Addressing Addressing(uint32_t remote) const;

    Ptr<EthNetDevice> m_keep;        //!< keeps the device alive
    EthNetDevice* m_dev;             //!< the device, for the per-packet calls
    Ipv4Address m_address;           //!< the port's address
    uint8_t m_defaultPriority;       //!< the priority of SL 0
    mutable Mac48Address m_peerMac;  //!< next hop's MAC (found at the first packet)
    mutable bool m_peerKnown{false}; //!< m_peerMac is valid
};

} // namespace ns3

#endif /* ROCE_RDMA_PORT_H */

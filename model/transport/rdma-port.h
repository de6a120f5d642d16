/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RDMA_PORT_H
#define RDMA_PORT_H

#include "ns3/data-rate.h"
#include "ns3/ib-bth-header.h"
#include "ns3/ib-ca-congestion-setting.h"
#include "ns3/net-device.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>

namespace ns3
{

class Packet;

/**
 * @ingroup infiniband-transport
 * @brief What a received packet's link layer told the transport about it.
 *
 * The port that received the packet fills it in (IbRdmaPort from the LRH, RoceRdmaPort from
 * the Ethernet, IPv4 and UDP headers); the queue pair then decodes the BTH and its extension
 * headers at bthOffset with the one IBA decoder (IbHeaderView).
 */
struct RdmaRxInfo
{
    uint32_t bthOffset{0}; ///< bytes before the BTH (LRH, or Ethernet + IPv4 + UDP)
    uint32_t trailer{0};   ///< bytes after the last pad byte (ICRC + VCRC, or ICRC + FCS)
    uint32_t source{0};    ///< the sender: its LID (InfiniBand) or IPv4 address (RoCE)
    uint8_t sl{0};         ///< the LRH SL, or the priority the DSCP maps to
    bool congested{false}; ///< FECN (InfiniBand) or IPv4 ECN CE (RoCE) set in flight
};

/**
 * @ingroup infiniband-transport
 * @brief One port of an IbHca as the RDMA transport sees it, whichever link layer it has.
 *
 * Real RDMA stacks keep one transport (queue pairs, PSNs, ACKs, retransmission, verbs) over
 * two link layers: InfiniBand (LRH, LIDs, VLs, credits) and Ethernet (RoCEv2: Ethernet, IPv4
 * and UDP headers, IP addresses, 802.1p priorities, PFC). This interface is the line between
 * them: IbQueuePair and IbHca call only these functions, and IbRdmaPort and RoceRdmaPort
 * implement them. A path's remote end is one 32-bit number: a LID (InfiniBand) or an IPv4
 * address in host order (RoCE); a path's class is a VL (InfiniBand, from the port's SL-to-VL
 * table) or a priority (RoCE, equal to the SL).
 */
class RdmaPort
{
  public:
    virtual ~RdmaPort() = default;

    /// @return true for an Ethernet (RoCEv2) port, false for an InfiniBand one
    virtual bool IsRoce() const = 0;
    /// @return the link-layer device (IbNetDevice or EthNetDevice)
    virtual Ptr<NetDevice> GetDevice() const = 0;
    /// @return the port's data rate (what a packet's bits are serialized at)
    virtual DataRate GetDataRate() const = 0;
    /// @return bytes a packet occupies on the wire beyond its own (Ethernet: preamble, SFD and
    ///         inter-frame gap; InfiniBand: none)
    virtual uint32_t GetWireOverhead() const = 0;
    /// @return the largest IBA path MTU (256..4096) the port carries
    virtual uint32_t GetActiveMtu() const = 0;
    /// @return the port's own address in the transport's sense: its LID or IPv4 address
    virtual uint32_t GetLocalAddress() const = 0;
    /**
     * @param sl a service level (InfiniBand) or priority (RoCE)
     * @return "" if packets may be sent with it, else what is wrong with it, as a sentence
     *         ending that a user can append to "SL N "
     */
    virtual std::string SlProblem(uint8_t sl) const = 0;
    /**
     * @param sl a service level that SlProblem() accepts
     * @return the transmit class it uses on this port: a VL, or a priority (0..15)
     */
    virtual uint8_t GetClassForSl(uint8_t sl) const = 0;
    /**
     * @param remote a remote address (LID or IPv4 address)
     * @return "" if the first hop can carry packets to it, else why not
     */
    virtual std::string FirstHopProblem(uint32_t remote) const = 0;
    /**
     * @param remote a remote address
     * @return it as a message names it, e.g. "LID 3 (0x3)" or "10.0.0.3"
     */
    virtual std::string AddressText(uint32_t remote) const = 0;

    /**
     * @param cls a transmit class
     * @return the packets waiting in the port's queue of that class
     */
    virtual uint32_t GetTxQueueLength(uint8_t cls) const = 0;
    /**
     * Hand a sealed packet to the port.
     * @param p the packet
     * @param cls its transmit class
     */
    virtual void Send(Ptr<Packet> p, uint8_t cls) = 0;

    /**
     * Turn a transport payload (extension headers and payload) into a complete packet of
     * this link layer, with real header bytes and CRCs.
     * @param p the packet, modified in place
     * @param remote the destination's address
     * @param sl the service level or priority
     * @param entropy flow entropy of the sending QP (RoCE: the UDP source port; unused on
     *        InfiniBand)
     * @param bth the BTH (PadCnt is set by the sealing)
     * @param zeroTail bytes at the end of @p p known to be zero (virtual payload)
     */
    virtual void Seal(Ptr<Packet> p,
                      uint32_t remote,
                      uint8_t sl,
                      uint16_t entropy,
                      const IbBthHeader& bth,
                      uint32_t zeroTail) = 0;

    /// @return the IBA congestion control the subnet manager programmed into the port, or
    ///         null (off, or a RoCE port, whose congestion control is DCQCN)
    virtual const IbCaCongestionSetting* GetCongestionSetting() const
    {
        return nullptr;
    }

    /// @return whether the fabric routes requests to this port adaptively (they may arrive
    ///         out of order)
    virtual bool IsAdaptiveRouting() const
    {
        return false;
    }

    /// @return bytes before the BTH of the packets this port seals
    virtual uint32_t GetBthOffset() const = 0;
    /// @return bytes after the pad of the packets this port seals
    virtual uint32_t GetTrailerSize() const = 0;
};

} // namespace ns3

#endif /* RDMA_PORT_H */

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Building blocks for Ethernet tests (and, later, the module's helpers): a simple host
 * that sends hand-made IPv4/UDP frames and records what it receives, and a fabric builder
 * that makes hosts, switches and cables by hand (no IP stack, no ARP: the switches are
 * routers with static routes, and a host's next hop is the switch port it is cabled to).
 */

#ifndef ETH_TEST_UTIL_H
#define ETH_TEST_UTIL_H

#include "ns3/data-rate.h"
#include "ns3/eth-net-device.h"
#include "ns3/eth-port-owner.h"
#include "ns3/eth-switch.h"
#include "ns3/ipv4-address.h"
#include "ns3/mac48-address.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{
namespace ethtest
{

/// What a frame built by MakeUdpFrame carries.
struct UdpFlow
{
    Ipv4Address srcIp;      ///< source address
    Ipv4Address dstIp;      ///< destination address
    uint16_t srcPort{4791}; ///< UDP source port
    uint16_t dstPort{4791}; ///< UDP destination port
    uint8_t dscp{0};        ///< DSCP (the port maps it to a priority: dscp >> 3 by default)
    uint8_t ecn{0};         ///< ECN field: 0 not ECT, 2 ECT(0)
    uint8_t ttl{64};        ///< TTL
};

/**
 * An Ethernet II frame holding IPv4 (20 bytes, checksum set) / UDP (8 bytes, checksum 0) /
 * a zero payload, with its FCS.
 * @param src source MAC
 * @param dst destination MAC
 * @param flow addresses, ports, DSCP, ECN, TTL
 * @param payload UDP payload bytes
 * @return the frame: payload + 28 + 18 bytes (at least 64)
 */
Ptr<Packet> MakeUdpFrame(Mac48Address src, Mac48Address dst, const UdpFlow& flow, uint32_t payload);

/// @return the frame size MakeUdpFrame makes for @p payload bytes
uint32_t UdpFrameBytes(uint32_t payload);

/**
 * @ingroup infiniband-tests
 * A host with one EthNetDevice that it owns: sends frames built by MakeUdpFrame to the
 * peer of its port and records every frame it receives. Aggregated to its node.
 */
class EthTestHost : public Object, public EthPortOwner
{
  public:
    /// One received frame.
    struct Rx
    {
        Time time;           ///< when it reached the host (its last byte)
        uint32_t bytes{0};   ///< frame size
        uint32_t srcIp{0};   ///< its source address
        uint16_t srcPort{0}; ///< its UDP source port
        uint8_t ecn{0};      ///< its ECN field
        uint8_t ttl{0};      ///< its TTL
        uint8_t prio{0};     ///< the port's classification
        Mac48Address srcMac; ///< its source MAC
        Mac48Address dstMac; ///< its destination MAC
        bool fcsGood{false}; ///< EthFrame::CheckFcs (only if CheckFcs was asked for)
    };

    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    /**
     * @param dev the host's port (already on its node)
     * @param ip the host's address
     */
    void Setup(Ptr<EthNetDevice> dev, Ipv4Address ip);
    /// @return the port
    Ptr<EthNetDevice> GetDevice() const;
    /// @return the address
    Ipv4Address GetIp() const;

    /**
     * Queue frames to the port's peer now (the port sends them back to back).
     * @param flow the frames' flow (srcIp is set to the host's)
     * @param payload UDP payload bytes of each
     * @param count how many
     * @param prio the priority queue they go in (by default the port's classification of
     *        the DSCP)
     */
    void Send(UdpFlow flow, uint32_t payload, uint32_t count = 1, int prio = -1);
    /**
     * Schedule Send at @p at.
     * @param at absolute time
     * @param flow the flow
     * @param payload payload bytes
     * @param count how many frames
     */
    void SendAt(Time at, UdpFlow flow, uint32_t payload, uint32_t count = 1);

    /// @param on check the FCS of every received frame (reads whole frames)
    void SetCheckFcs(bool on);

    /// @return frames received so far
    const std::vector<Rx>& GetReceived() const;
    /// @return frames that left the host's queues
    uint64_t GetTxStarted() const;
    /// @return times at which frames left the host's queues (started transmission)
    const std::vector<Time>& GetTxStartTimes() const;

    // EthPortOwner
    void PortReceive(uint8_t port, EthNetDevice* dev, Ptr<Packet> frame, uint8_t prio) override;
    void PortTxReady(uint8_t port, EthNetDevice* dev, uint8_t prio) override;
    void PortTxStarted(uint8_t port,
                       EthNetDevice* dev,
                       uint8_t prio,
                       uint32_t bytes,
                       uint32_t cookie) override;

  protected:
    void DoDispose() override;

  private:
    Ptr<EthNetDevice> m_dev;      //!< the port
    Ipv4Address m_ip;             //!< the address
    bool m_checkFcs{false};       //!< check received FCSs
    std::vector<Rx> m_rx;         //!< received frames
    std::vector<Time> m_txStarts; //!< transmission starts
};

/**
 * @ingroup infiniband-tests
 * Builds hosts, switches and cables by hand. Device and channel attributes apply to what
 * is made after they are set; switch attributes to the switches made after.
 */
class EthTestFabric
{
  public:
    EthTestFabric();

    /**
     * @param name an EthNetDevice attribute
     * @param value its value for the ports made from now on
     */
    void SetDeviceAttribute(const std::string& name, const AttributeValue& value);
    /**
     * @param name an EthChannel attribute (Delay)
     * @param value its value for the cables made from now on
     */
    void SetChannelAttribute(const std::string& name, const AttributeValue& value);
    /**
     * @param name an EthSwitch attribute
     * @param value its value for the switches made from now on
     */
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);

    /**
     * @param ip the host's address
     * @return a new host on a new node, with one (unconnected) port
     */
    Ptr<EthTestHost> AddHost(Ipv4Address ip);
    /// @return a new switch aggregated to a new node, without ports
    Ptr<EthSwitch> AddSwitch();
    /**
     * Cable a host to a new port of a switch.
     * @param sw the switch
     * @param host the host
     * @return the switch's port number
     */
    uint8_t Connect(Ptr<EthSwitch> sw, Ptr<EthTestHost> host);
    /**
     * Cable new ports of two switches.
     * @param a one switch
     * @param b the other
     * @return a's port number (b's is GetLastPeerPort())
     */
    uint8_t Connect(Ptr<EthSwitch> a, Ptr<EthSwitch> b);
    /// @return b's port number of the last Connect(a, b)
    uint8_t GetLastPeerPort() const;

    /**
     * @param sw a switch
     * @return a new port on its node (added to the node, not to the switch)
     */
    Ptr<EthNetDevice> NewDevice(Ptr<Node> node);
    /**
     * Cable two ports.
     * @param a one port
     * @param b the other
     * @return the cable
     */
    Ptr<EthChannel> Cable(Ptr<EthNetDevice> a, Ptr<EthNetDevice> b);

    /// @return every host made, in order
    const std::vector<Ptr<EthTestHost>>& Hosts() const;
    /// @return every switch made, in order
    const std::vector<Ptr<EthSwitch>>& Switches() const;

  private:
    ObjectFactory m_device;                 //!< ports
    ObjectFactory m_channel;                //!< cables
    ObjectFactory m_switch;                 //!< switches
    uint8_t m_lastPeerPort{0};              //!< see GetLastPeerPort
    std::vector<Ptr<EthTestHost>> m_hosts;  //!< hosts made
    std::vector<Ptr<EthSwitch>> m_switches; //!< switches made
};

/**
 * A two-level leaf-spine fabric: leaf l has hosts 10.0.l.1 .. 10.0.l.H on ports 1..H and
 * uplinks to spines 0..S-1 on ports H+1..H+S; spine s has leaf l on port l + 1. Routes:
 * a leaf has a /32 per host and 10.0.0.0/16 over all its uplinks (ECMP); a spine has
 * 10.0.l.0/24 to leaf l.
 */
struct LeafSpine
{
    std::vector<Ptr<EthSwitch>> leaves;               ///< the leaves
    std::vector<Ptr<EthSwitch>> spines;               ///< the spines
    std::vector<std::vector<Ptr<EthTestHost>>> hosts; ///< hosts[l][h]
};

/**
 * @param f the builder (attributes already set)
 * @param leaves number of leaves (at most 254)
 * @param spines number of spines
 * @param hostsPerLeaf hosts per leaf (at most 254)
 * @return the fabric
 */
LeafSpine BuildLeafSpine(EthTestFabric& f, uint32_t leaves, uint32_t spines, uint32_t hostsPerLeaf);

/**
 * @param n balls thrown independently and uniformly into @p k bins
 * @param k bins
 * @return P(max load <= t) for t = 0..n, exactly (by the multinomial count:
 *         n! / k^n x [x^n] (sum_{j<=t} x^j / j!)^k)
 */
std::vector<double> MaxLoadCdf(uint32_t n, uint32_t k);

} // namespace ethtest
} // namespace ns3

#endif /* ETH_TEST_UTIL_H */

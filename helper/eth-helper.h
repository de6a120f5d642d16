/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_HELPER_H
#define ETH_HELPER_H

#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"
#include "ns3/trace-helper.h"

#include <string>

namespace ns3
{

class EthChannel;
class EthNetDevice;

/**
 * @ingroup infiniband-helper
 * @brief Builds Ethernet links (two EthNetDevice ports joined by an EthChannel), in the
 * style of PointToPointHelper, and enables pcap and ascii tracing on them.
 *
 * Ports get a MAC address from Mac48Address::Allocate() unless their Address attribute
 * set one. pcap files are DLT_EN10MB (Ethernet) and hold every frame a port sends or
 * receives, data and PFC, from the destination MAC through the FCS (tell Wireshark or
 * tshark so: `-o eth.fcs:TRUE`). Ascii traces write '+' when a frame is queued
 * (MacTx), '-' when it starts on the wire (PhyTxBegin), 'd' for a frame Send refused
 * (MacTxDrop) or one that failed its FCS (PhyRxDrop), and 'r' when a frame is handed up
 * (MacRx).
 */
class EthHelper : public PcapHelperForDevice, public AsciiTraceHelperForDevice
{
  public:
    EthHelper();
    ~EthHelper() override = default;

    /**
     * @param name attribute of ns3::EthNetDevice
     * @param value its value
     */
    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::EthChannel
     * @param value its value
     */
    void SetChannelAttribute(std::string name, const AttributeValue& value);

    /**
     * Join two nodes with a cable.
     * @param a first node
     * @param b second node
     * @return the two ports, a's first
     */
    NetDeviceContainer Install(Ptr<Node> a, Ptr<Node> b) const;
    /**
     * @param c exactly two nodes
     * @return the two ports
     */
    NetDeviceContainer Install(const NodeContainer& c) const;
    /**
     * Create one port on a node, without a cable (for a switch cabled later by Connect).
     * @param node the node
     * @return the port
     */
    Ptr<EthNetDevice> InstallPort(Ptr<Node> node) const;
    /**
     * Join two ports that have no cable with a new one.
     * @param a a port
     * @param b another port
     * @return the cable
     */
    Ptr<EthChannel> Connect(Ptr<EthNetDevice> a, Ptr<EthNetDevice> b) const;

    /**
     * Join two ports with a cable made by @p factory: an EthChannel, or, in a distributed
     * simulation (MPI enabled) when the ports' nodes have different system ids, an
     * EthRemoteChannel with the same attributes (its Delay, the lookahead, must be
     * positive). Connect() and EthFabricHelper::Build() cable through here.
     * @param factory the channel's type and attributes (ns3::EthChannel)
     * @param a a port without a cable
     * @param b another
     * @return the cable
     */
    static Ptr<EthChannel> Cable(const ObjectFactory& factory,
                                 Ptr<EthNetDevice> a,
                                 Ptr<EthNetDevice> b);

  private:
    void EnablePcapInternal(std::string prefix,
                            Ptr<NetDevice> nd,
                            bool promiscuous,
                            bool explicitFilename) override;
    void EnableAsciiInternal(Ptr<OutputStreamWrapper> stream,
                             std::string prefix,
                             Ptr<NetDevice> nd,
                             bool explicitFilename) override;

    ObjectFactory m_deviceFactory;  //!< device factory
    ObjectFactory m_channelFactory; //!< channel factory
};

} // namespace ns3

#endif /* ETH_HELPER_H */

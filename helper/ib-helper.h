/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_HELPER_H
#define IB_HELPER_H

#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"
#include "ns3/trace-helper.h"

#include <string>

namespace ns3
{

class IbNetDevice;

/**
 * @ingroup infiniband-helper
 * @brief Builds InfiniBand links (two IbNetDevice ports joined by an IbChannel), in the
 * style of PointToPointHelper, and enables pcap and ascii tracing on them.
 *
 * pcap files use link type 197 (ERF) with one ERF record of type 21 per InfiniBand
 * packet, as Mellanox ibdump writes; Wireshark and tshark decode them as InfiniBand.
 * Only data packets are captured (link-level flow-control packets are not, as ibdump
 * does not see them either).
 *
 * Ports that have no LID get one from a counter shared by all IbHelper instances
 * (1, 2, 3, ...); a subnet manager may reassign them.
 */
class IbHelper : public PcapHelperForDevice, public AsciiTraceHelperForDevice
{
  public:
    IbHelper();
    ~IbHelper() override = default;

    /**
     * @param name attribute of ns3::IbNetDevice
     * @param value its value
     */
    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::IbChannel
     * @param value its value
     */
    void SetChannelAttribute(std::string name, const AttributeValue& value);

    /**
     * Join two nodes with a cable.
     * @param a first node
     * @param b second node
     * @return the two ports, a's first
     */
    NetDeviceContainer Install(Ptr<Node> a, Ptr<Node> b);
    /**
     * @param c exactly two nodes
     * @return the two ports
     */
    NetDeviceContainer Install(NodeContainer c);

    /**
     * Create one port on a node without attaching it (for switches and HCAs that
     * are cabled later with Connect()).
     * @param node the node
     * @param assignLid give the port the next automatic LID (unless its Lid attribute set
     *        one); false for ports whose LID a subnet manager assigns (IbFabricHelper), so
     *        that switch ports, which have none, do not use up the 49151 unicast LIDs
     * @return the port
     */
    Ptr<IbNetDevice> InstallPort(Ptr<Node> node, bool assignLid = true) const;

    /**
     * Join two existing ports with a new cable. In a distributed simulation (ns-3 built
     * with MPI, MpiInterface enabled) ports of nodes with different system ids are
     * joined by an IbRemoteChannel, whose Delay is set to the effective delay and must
     * be positive (it is the lookahead); otherwise by an IbChannel.
     * @param a a port
     * @param b another port
     */
    void Connect(Ptr<IbNetDevice> a, Ptr<IbNetDevice> b) const;

    /// Restart automatic LID allocation at 1 (for tests that build several fabrics). Every
    /// Simulator::Destroy does it too: each simulation's ports are numbered from LID 1.
    static void ResetLidAllocation();

  private:
    void EnablePcapInternal(std::string prefix,
                            Ptr<NetDevice> nd,
                            bool promiscuous,
                            bool explicitFilename) override;
    void EnableAsciiInternal(Ptr<OutputStreamWrapper> stream,
                             std::string prefix,
                             Ptr<NetDevice> nd,
                             bool explicitFilename) override;
    /**
     * If @p device is a switch port, write the switch's drops of packets that arrived on
     * it (UnknownDlidDrop) as 'd' lines to @p stream.
     * @param stream the ascii stream
     * @param context the trace path written on each line, or "" for none
     * @param device the port
     */
    static void HookSwitchDrops(Ptr<OutputStreamWrapper> stream,
                                std::string context,
                                Ptr<IbNetDevice> device);

    ObjectFactory m_deviceFactory;  //!< device factory
    ObjectFactory m_channelFactory; //!< channel factory
};

} // namespace ns3

#endif /* IB_HELPER_H */

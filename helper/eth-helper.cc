/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-helper.h"

#include "ns3/abort.h"
#include "ns3/config.h"
#include "ns3/eth-channel.h"
#include "ns3/eth-net-device.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pcap-file-wrapper.h"

#ifdef NS3_MPI
#include "ns3/eth-remote-channel.h"
#include "ns3/mpi-interface.h"
#endif

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthHelper");

EthHelper::EthHelper()
{
    m_deviceFactory.SetTypeId("ns3::EthNetDevice");
    m_channelFactory.SetTypeId("ns3::EthChannel");
}

void
EthHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
EthHelper::SetChannelAttribute(std::string name, const AttributeValue& value)
{
    m_channelFactory.Set(name, value);
}

Ptr<EthNetDevice>
EthHelper::InstallPort(Ptr<Node> node) const
{
    NS_ABORT_MSG_IF(!node, "EthHelper::InstallPort: the node is null");
    Ptr<EthNetDevice> dev = m_deviceFactory.Create<EthNetDevice>();
    if (dev->GetMacAddress() == Mac48Address("00:00:00:00:00:00"))
    {
        dev->SetAddress(Mac48Address::Allocate());
    }
    node->AddDevice(dev);
    return dev;
}

Ptr<EthChannel>
EthHelper::Connect(Ptr<EthNetDevice> a, Ptr<EthNetDevice> b) const
{
    NS_ABORT_MSG_IF(!a || !b, "EthHelper::Connect: a port is null");
    NS_ABORT_MSG_IF(a == b,
                    "EthHelper::Connect: cannot cable device "
                        << a->GetIfIndex() << " of node " << a->GetNode()->GetId() << " to itself");
    for (const Ptr<EthNetDevice>& d : {a, b})
    {
        NS_ABORT_MSG_IF(d->GetChannel(),
                        "EthHelper::Connect: device "
                            << d->GetIfIndex() << " of node " << d->GetNode()->GetId()
                            << " already has a cable; a port takes one (install another port "
                               "with InstallPort for another link)");
    }
    return Cable(m_channelFactory, a, b);
}

Ptr<EthChannel>
EthHelper::Cable(const ObjectFactory& factory, Ptr<EthNetDevice> a, Ptr<EthNetDevice> b)
{
#ifdef NS3_MPI
    if (MpiInterface::IsEnabled() && a->GetNode()->GetSystemId() != b->GetNode()->GetSystemId())
    {
        ObjectFactory remote = factory;
        remote.SetTypeId("ns3::EthRemoteChannel");
        Ptr<EthRemoteChannel> channel = remote.Create<EthRemoteChannel>();
        NS_ABORT_MSG_UNLESS(channel->GetDelay().IsStrictlyPositive(),
                            "EthHelper: the cable between node "
                                << a->GetNode()->GetId() << " (rank " << a->GetNode()->GetSystemId()
                                << ") and node " << b->GetNode()->GetId() << " (rank "
                                << b->GetNode()->GetSystemId()
                                << ") has no delay; a cable between ranks needs a positive "
                                   "Delay: it is the lookahead");
        a->Attach(channel);
        b->Attach(channel);
        EthRemoteChannel::EnableMpiReceive(a);
        EthRemoteChannel::EnableMpiReceive(b);
        return channel;
    }
#endif
    Ptr<EthChannel> channel = factory.Create<EthChannel>();
    a->Attach(channel);
    b->Attach(channel);
    return channel;
}

NetDeviceContainer
EthHelper::Install(Ptr<Node> a, Ptr<Node> b) const
{
    Ptr<EthNetDevice> da = InstallPort(a);
    Ptr<EthNetDevice> db = InstallPort(b);
    Connect(da, db);
    NetDeviceContainer c;
    c.Add(da);
    c.Add(db);
    return c;
}

NetDeviceContainer
EthHelper::Install(const NodeContainer& c) const
{
    NS_ABORT_MSG_UNLESS(c.GetN() == 2,
                        "EthHelper::Install(NodeContainer) joins exactly two nodes; it got "
                            << c.GetN() << ". Call Install(a, b) once per cable.");
    return Install(c.Get(0), c.Get(1));
}

void
EthHelper::EnablePcapInternal(std::string prefix,
                              Ptr<NetDevice> nd,
                              bool promiscuous,
                              bool explicitFilename)
{
    Ptr<EthNetDevice> device = nd->GetObject<EthNetDevice>();
    if (!device)
    {
        NS_LOG_INFO("EthHelper::EnablePcapInternal: device " << nd << " is not an EthNetDevice");
        return;
    }
    PcapHelper pcapHelper;
    const std::string filename =
        explicitFilename ? prefix : pcapHelper.GetFilenameFromDevice(prefix, device);
    Ptr<PcapFileWrapper> file =
        pcapHelper.CreateFile(filename, std::ios::out, PcapHelper::DLT_EN10MB);
    pcapHelper.HookDefaultSink<EthNetDevice>(device,
                                             promiscuous ? "PromiscSniffer" : "Sniffer",
                                             file);
}

void
EthHelper::EnableAsciiInternal(Ptr<OutputStreamWrapper> stream,
                               std::string prefix,
                               Ptr<NetDevice> nd,
                               bool explicitFilename)
{
    Ptr<EthNetDevice> device = nd->GetObject<EthNetDevice>();
    if (!device)
    {
        NS_LOG_INFO("EthHelper::EnableAsciiInternal: device " << nd << " is not an EthNetDevice");
        return;
    }
    Packet::EnablePrinting();
    if (!stream)
    {
        // One file per device, hooked without context.
        AsciiTraceHelper asciiTraceHelper;
        const std::string filename =
            explicitFilename ? prefix : asciiTraceHelper.GetFilenameFromDevice(prefix, device);
        Ptr<OutputStreamWrapper> theStream = asciiTraceHelper.CreateFileStream(filename);
        asciiTraceHelper.HookDefaultEnqueueSinkWithoutContext<EthNetDevice>(device,
                                                                            "MacTx",
                                                                            theStream);
        asciiTraceHelper.HookDefaultDequeueSinkWithoutContext<EthNetDevice>(device,
                                                                            "PhyTxBegin",
                                                                            theStream);
        asciiTraceHelper.HookDefaultDropSinkWithoutContext<EthNetDevice>(device,
                                                                         "MacTxDrop",
                                                                         theStream);
        asciiTraceHelper.HookDefaultDropSinkWithoutContext<EthNetDevice>(device,
                                                                         "PhyRxDrop",
                                                                         theStream);
        asciiTraceHelper.HookDefaultReceiveSinkWithoutContext<EthNetDevice>(device,
                                                                            "MacRx",
                                                                            theStream);
        return;
    }
    // A shared stream: hooked with context, so that lines say which device they are of.
    std::ostringstream path;
    path << "/NodeList/" << nd->GetNode()->GetId() << "/DeviceList/" << nd->GetIfIndex()
         << "/$ns3::EthNetDevice/";
    Config::Connect(path.str() + "MacTx",
                    MakeBoundCallback(&AsciiTraceHelper::DefaultEnqueueSinkWithContext, stream));
    Config::Connect(path.str() + "PhyTxBegin",
                    MakeBoundCallback(&AsciiTraceHelper::DefaultDequeueSinkWithContext, stream));
    Config::Connect(path.str() + "MacTxDrop",
                    MakeBoundCallback(&AsciiTraceHelper::DefaultDropSinkWithContext, stream));
    Config::Connect(path.str() + "PhyRxDrop",
                    MakeBoundCallback(&AsciiTraceHelper::DefaultDropSinkWithContext, stream));
    Config::Connect(path.str() + "MacRx",
                    MakeBoundCallback(&AsciiTraceHelper::DefaultReceiveSinkWithContext, stream));
}

} // namespace ns3

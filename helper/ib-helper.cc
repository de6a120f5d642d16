/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-helper.h"

#include "ns3/abort.h"
#include "ns3/config.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-erf-header.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/simulator.h"

#ifdef NS3_MPI
#include "ns3/ib-remote-channel.h"
#include "ns3/mpi-interface.h"
#endif

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbHelper");

namespace
{

/// Next LID handed out to a port that has none.
uint16_t g_nextLid = 1;

/// Simulator::Destroy restarts the allocation (ForgetLids is scheduled for it).
bool g_forgetAtDestroy = false;

/// The simulation's nodes are gone: the next one's ports are a new subnet, from LID 1.
void
ForgetLids()
{
    g_nextLid = 1;
    g_forgetAtDestroy = false;
}

/**
 * Write one InfiniBand packet as an ERF record.
 * @param file the pcap file
 * @param packet the packet, LRH through VCRC
 */
void
IbPcapSniffEvent(Ptr<PcapFileWrapper> file, Ptr<const Packet> packet)
{
    IbErfHeader erf;
    const Time now = Simulator::Now();
    erf.SetTimestamp(now);
    erf.SetPacketLength(static_cast<uint16_t>(packet->GetSize()));
    file->Write(now, erf, packet);
}

/**
 * A packet the switch dropped (UnknownDlidDrop: no route, or its SL maps to VL15) as an
 * ascii 'd' line of the port it arrived on, written by ns-3's default drop sinks.
 * @param stream the ascii stream
 * @param context the trace path, or "" for a per-device file (lines without context)
 * @param port the switch port the stream traces
 * @param packet the dropped packet
 * @param inPort the port it arrived on
 */
void
IbAsciiSwitchDrop(Ptr<OutputStreamWrapper> stream,
                  std::string context,
                  uint8_t port,
                  Ptr<const Packet> packet,
                  uint8_t inPort)
{
    if (inPort != port)
    {
        return;
    }
    if (context.empty())
    {
        AsciiTraceHelper::DefaultDropSinkWithoutContext(stream, packet);
    }
    else
    {
        AsciiTraceHelper::DefaultDropSinkWithContext(stream, context, packet);
    }
}

} // namespace

IbHelper::IbHelper()
{
    m_deviceFactory.SetTypeId("ns3::IbNetDevice");
    m_channelFactory.SetTypeId("ns3::IbChannel");
}

void
IbHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
IbHelper::SetChannelAttribute(std::string name, const AttributeValue& value)
{
    m_channelFactory.Set(name, value);
}

Ptr<IbNetDevice>
IbHelper::InstallPort(Ptr<Node> node, bool assignLid) const
{
    Ptr<IbNetDevice> dev = m_deviceFactory.Create<IbNetDevice>();
    if (assignLid && dev->GetLid() == 0)
    {
        NS_ABORT_MSG_IF(g_nextLid >= 0xC000,
                        "IbHelper: all 49151 unicast LIDs are in use; a subnet has at most "
                        "0xBFFF ports with LMC 0");
        dev->SetLid(g_nextLid++);
        if (!g_forgetAtDestroy)
        {
            Simulator::ScheduleDestroy(&ForgetLids);
            g_forgetAtDestroy = true;
        }
    }
    node->AddDevice(dev);
    return dev;
}

void
IbHelper::Connect(Ptr<IbNetDevice> a, Ptr<IbNetDevice> b) const
{
    NS_ABORT_MSG_IF(!a || !b, "IbHelper::Connect: a port is null");
    NS_ABORT_MSG_IF(a == b,
                    "IbHelper::Connect: cannot cable device "
                        << a->GetIfIndex() << " of node " << a->GetNode()->GetId() << " to itself");
    for (const Ptr<IbNetDevice>& d : {a, b})
    {
        NS_ABORT_MSG_IF(d->GetChannel(),
                        "IbHelper::Connect: device "
                            << d->GetIfIndex() << " of node " << d->GetNode()->GetId()
                            << " already has a cable; a port takes one cable (install another "
                               "port with InstallPort for another link)");
    }
#ifdef NS3_MPI
    if (MpiInterface::IsEnabled() && a->GetNode()->GetSystemId() != b->GetNode()->GetSystemId())
    {
        // A cable between MPI ranks: same attributes, remote channel type.
        ObjectFactory factory = m_channelFactory;
        factory.SetTypeId("ns3::IbRemoteChannel");
        Ptr<IbRemoteChannel> channel = factory.Create<IbRemoteChannel>();
        const Time delay = channel->GetPropagationDelay();
        NS_ABORT_MSG_UNLESS(delay.IsStrictlyPositive(),
                            "IbHelper::Connect: the cable between node "
                                << a->GetNode()->GetId() << " (rank " << a->GetNode()->GetSystemId()
                                << ") and node " << b->GetNode()->GetId() << " (rank "
                                << b->GetNode()->GetSystemId()
                                << ") has no delay; a cable between ranks needs a positive "
                                   "Delay (or Length): it is the lookahead");
        // The distributed engines read the Delay attribute: make it the effective delay
        // also when Length sets it.
        channel->SetAttribute("Delay", TimeValue(delay));
        a->Attach(channel);
        b->Attach(channel);
        IbRemoteChannel::EnableMpiReceive(a);
        IbRemoteChannel::EnableMpiReceive(b);
        return;
    }
#endif
    Ptr<IbChannel> channel = m_channelFactory.Create<IbChannel>();
    a->Attach(channel);
    b->Attach(channel);
}

NetDeviceContainer
IbHelper::Install(Ptr<Node> a, Ptr<Node> b)
{
    Ptr<IbNetDevice> da = InstallPort(a);
    Ptr<IbNetDevice> db = InstallPort(b);
    Connect(da, db);
    NetDeviceContainer c;
    c.Add(da);
    c.Add(db);
    return c;
}

NetDeviceContainer
IbHelper::Install(NodeContainer c)
{
    NS_ABORT_MSG_UNLESS(c.GetN() == 2,
                        "IbHelper::Install(NodeContainer) joins exactly two nodes; it got "
                            << c.GetN() << ". Call Install(a, b) once per cable.");
    return Install(c.Get(0), c.Get(1));
}

void
IbHelper::ResetLidAllocation()
{
    g_nextLid = 1;
}

void
IbHelper::EnablePcapInternal(std::string prefix,
                             Ptr<NetDevice> nd,
                             bool promiscuous,
                             bool explicitFilename)
{
    Ptr<IbNetDevice> device = nd->GetObject<IbNetDevice>();
    if (!device)
    {
        NS_LOG_INFO("IbHelper::EnablePcapInternal: device " << nd << " is not an IbNetDevice");
        return;
    }
    PcapHelper pcapHelper;
    const std::string filename =
        explicitFilename ? prefix : pcapHelper.GetFilenameFromDevice(prefix, device);
    Ptr<PcapFileWrapper> file =
        pcapHelper.CreateFile(filename,
                              std::ios::out,
                              static_cast<PcapHelper::DataLinkType>(IbErfHeader::LINKTYPE_ERF));
    device->TraceConnectWithoutContext(promiscuous ? "PromiscSniffer" : "Sniffer",
                                       MakeBoundCallback(&IbPcapSniffEvent, file));
}

void
IbHelper::EnableAsciiInternal(Ptr<OutputStreamWrapper> stream,
                              std::string prefix,
                              Ptr<NetDevice> nd,
                              bool explicitFilename)
{
    Ptr<IbNetDevice> device = nd->GetObject<IbNetDevice>();
    if (!device)
    {
        NS_LOG_INFO("IbHelper::EnableAsciiInternal: device " << nd << " is not an IbNetDevice");
        return;
    }
    Packet::EnablePrinting();
    const uint32_t nodeid = nd->GetNode()->GetId();
    const uint32_t deviceid = nd->GetIfIndex();
    std::ostringstream path;
    path << "/NodeList/" << nodeid << "/DeviceList/" << deviceid << "/$ns3::IbNetDevice/";
    if (!stream)
    {
        // One file per device, hooked without context.
        AsciiTraceHelper asciiTraceHelper;
        const std::string filename =
            explicitFilename ? prefix : asciiTraceHelper.GetFilenameFromDevice(prefix, device);
        Ptr<OutputStreamWrapper> theStream = asciiTraceHelper.CreateFileStream(filename);
        asciiTraceHelper.HookDefaultEnqueueSinkWithoutContext<IbNetDevice>(device,
                                                                           "MacTx",
                                                                           theStream);
        asciiTraceHelper.HookDefaultDequeueSinkWithoutContext<IbNetDevice>(device,
                                                                           "PhyTxBegin",
                                                                           theStream);
        asciiTraceHelper.HookDefaultDropSinkWithoutContext<IbNetDevice>(device,
                                                                        "MacTxDrop",
                                                                        theStream);
        asciiTraceHelper.HookDefaultDropSinkWithoutContext<IbNetDevice>(device,
                                                                        "PhyRxDrop",
                                                                        theStream);
        asciiTraceHelper.HookDefaultReceiveSinkWithoutContext<IbNetDevice>(device,
                                                                           "MacRx",
                                                                           theStream);
        HookSwitchDrops(theStream, "", device);
        return;
    }
    // A shared stream: hook with context so lines say which device they come from.
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
    // The switch's drops of packets that arrived on this port, named by the port's path.
    HookSwitchDrops(stream, path.str() + "UnknownDlidDrop", device);
}

void
IbHelper::HookSwitchDrops(Ptr<OutputStreamWrapper> stream,
                          std::string context,
                          Ptr<IbNetDevice> device)
{
    // A switch port's drops are the switch's: the port it arrived on gets the 'd' line.
    Ptr<IbSwitch> sw = device->GetNode()->GetObject<IbSwitch>();
    if (!sw)
    {
        return;
    }
    for (uint8_t p = 1; p <= sw->GetNPorts(); ++p)
    {
        if (sw->GetPort(p) == device)
        {
            sw->TraceConnectWithoutContext(
                "UnknownDlidDrop",
                MakeBoundCallback(&IbAsciiSwitchDrop, stream, context, p));
            return;
        }
    }
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-outage-monitor.h"

#include "ib-fabric-helper.h"

#include "ns3/callback.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-header-view.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <iomanip>
#include <set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbOutageMonitor");

Time
IbOutageMonitor::Outage::Duration() const
{
    return recovered == Time::Max() ? Time::Max() : recovered - firstLost;
}

void
IbOutageMonitor::Install(const IbFabric& fabric)
{
    NS_ABORT_MSG_UNLESS(fabric.subnetManager,
                        "IbOutageMonitor::Install: bring the fabric up (IbFabricHelper::"
                        "BringUp) before watching it");
    std::set<Ptr<IbChannel>> cables;
    auto watchPort = [&](Ptr<IbNetDevice> dev) {
        dev->TraceConnectWithoutContext("LinkDownDrop",
                                        MakeBoundCallback(&IbOutageMonitor::OnLost, this));
        Ptr<IbChannel> ch = DynamicCast<IbChannel>(dev->GetChannel());
        if (ch && cables.insert(ch).second)
        {
            ch->TraceConnectWithoutContext("LinkState", Callback<void, bool>([this](bool up) {
                                               if (up)
                                               {
                                                   OnRepaired(this);
                                               }
                                           }));
        }
    };
    const NetDeviceContainer switchPorts = fabric.SwitchPorts();
    for (uint32_t i = 0; i < switchPorts.GetN(); ++i)
    {
        watchPort(DynamicCast<IbNetDevice>(switchPorts.Get(i)));
    }
    for (uint32_t h = 0; h < fabric.hosts.GetN(); ++h)
    {
        Ptr<Node> node = fabric.hosts.Get(h);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            Ptr<IbNetDevice> dev = DynamicCast<IbNetDevice>(node->GetDevice(d));
            if (dev)
            {
                watchPort(dev);
                dev->TraceConnectWithoutContext(
                    "MacRx",
                    MakeBoundCallback(&IbOutageMonitor::OnDelivered, this));
            }
        }
    }
    fabric.subnetManager->TraceConnectWithoutContext(
        "Rerouted",
        Callback<void, uint32_t>([this](uint32_t) { OnRepaired(this); }));
}

uint64_t
IbOutageMonitor::FlowOf(const Packet& packet, uint16_t* slid)
{
    uint8_t bytes[IbLrhHeader::SIZE + IbGrhHeader::SIZE + IbBthHeader::SIZE];
    const uint32_t n = packet.CopyData(bytes, sizeof(bytes));
    const IbHeaderView v(bytes, n);
    if (!v.HasLrh())
    {
        *slid = 0;
        return 0;
    }
    *slid = v.GetSlid();
    const uint32_t qp = v.HasBth() ? v.GetDestQp() : 0;
    return (static_cast<uint64_t>(v.GetDlid()) << 24) | qp;
}

void
IbOutageMonitor::OnLost(IbOutageMonitor* self, Ptr<const Packet> packet, bool onWire)
{
    uint16_t slid = 0;
    const uint64_t key = FlowOf(*packet, &slid);
    auto it = self->m_open.find(key);
    if (it != self->m_open.end())
    {
        ++self->m_outages[it->second].lost;
        return;
    }
    Outage o;
    o.slid = slid;
    o.dlid = static_cast<uint16_t>(key >> 24);
    o.destQp = static_cast<uint32_t>(key & 0xFFFFFF);
    o.firstLost = Simulator::Now();
    o.lost = 1;
    NS_LOG_INFO("flow LID " << o.slid << " -> LID " << o.dlid << " QP " << o.destQp
                            << ": first packet lost " << (onWire ? "on the wire" : "in a queue"));
    self->m_open[key] = self->m_outages.size();
    self->m_outages.push_back(o);
}

void
IbOutageMonitor::OnDelivered(IbOutageMonitor* self, Ptr<const Packet> packet)
{
    if (self->m_open.empty())
    {
        return;
    }
    uint16_t slid = 0;
    const uint64_t key = FlowOf(*packet, &slid);
    auto it = self->m_open.find(key);
    if (it == self->m_open.end())
    {
        return;
    }
    Outage& o = self->m_outages[it->second];
    if (self->m_lastRepair < o.firstLost)
    {
        return; // it was past the failure: the fabric has not been repaired for the flow yet
    }
    o.recovered = Simulator::Now();
    self->m_open.erase(it);
}

void
IbOutageMonitor::OnRepaired(IbOutageMonitor* self)
{
    self->m_lastRepair = Simulator::Now();
}

std::vector<IbOutageMonitor::Outage>
IbOutageMonitor::GetOutages() const
{
    return m_outages;
}

void
IbOutageMonitor::Print(std::ostream& os, uint32_t maxRows) const
{
    os << "Link-failure outages: " << m_outages.size() << " (first loss to first delivery "
       << "after the repair)\n";
    if (m_outages.empty())
    {
        return;
    }
    os << "  " << std::setw(6) << "SLID" << std::setw(6) << "DLID" << std::setw(10) << "DestQP"
       << std::setw(14) << "first lost" << std::setw(14) << "outage" << std::setw(8) << "lost"
       << "\n";
    uint64_t lost = 0;
    Time shortest = Time::Max();
    Time longest;
    Time sum;
    uint32_t ended = 0;
    for (size_t i = 0; i < m_outages.size(); ++i)
    {
        const Outage& o = m_outages[i];
        lost += o.lost;
        if (o.recovered != Time::Max())
        {
            ++ended;
            shortest = std::min(shortest, o.Duration());
            longest = std::max(longest, o.Duration());
            sum += o.Duration();
        }
        if (i < maxRows)
        {
            std::ostringstream first;
            first << std::fixed << std::setprecision(3) << o.firstLost.GetSeconds() * 1e3 << " ms";
            std::ostringstream dur;
            if (o.recovered == Time::Max())
            {
                dur << "open";
            }
            else
            {
                dur << std::fixed << std::setprecision(3) << o.Duration().GetSeconds() * 1e3
                    << " ms";
            }
            std::ostringstream qp; // (24-bit QPNs in hex, as ibv_devinfo and ibdump show them)
            qp << "0x" << std::hex << std::setw(6) << std::setfill('0') << o.destQp;
            os << "  " << std::setw(6) << o.slid << std::setw(6) << o.dlid << std::setw(10)
               << qp.str() << std::setw(14) << first.str() << std::setw(14) << dur.str()
               << std::setw(8) << o.lost << "\n";
        }
    }
    os << "  " << m_outages.size() << " outages, " << lost << " packets lost, " << ended
       << " ended";
    if (ended > 0)
    {
        os << std::fixed << std::setprecision(3) << ": shortest " << shortest.GetSeconds() * 1e3
           << " ms, mean " << sum.GetSeconds() * 1e3 / ended << " ms, longest "
           << longest.GetSeconds() * 1e3 << " ms";
    }
    os << "\n";
    if (ended < m_outages.size())
    {
        os << "  (open: nothing the flow sent after the loss arrived; it had ended, or its "
              "destination went away, as a rebuilt SHARP tree's queue pair does)\n";
    }
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-fabric-stats.h"

#include "ib-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/channel.h"
#include "ns3/ib-header-view.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-raw-traffic-application.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbFabricStats");

void
IbFabricStats::Install(const IbFabric& fabric, Time start)
{
    m_start = start;
    auto name = [](Ptr<IbNetDevice> d) {
        std::string n = Names::FindName(d->GetNode());
        if (n.empty())
        {
            n = "node " + std::to_string(d->GetNode()->GetId());
        }
        return n + " port " + std::to_string(d->GetIfIndex() + 1);
    };
    // In a distributed run (MPI) every rank holds the whole fabric but runs only its own
    // nodes: the statistics take those, so that a rank does not report the others'
    // flows as starved and their ports as idle. One process: all nodes.
    const uint32_t rank = Simulator::GetSystemId();
    // Every cabled port of every host: a multi-port HCA's second rail carries flows too.
    for (uint32_t i = 0; i < fabric.hosts.GetN(); ++i)
    {
        Ptr<Node> host = fabric.hosts.Get(i);
        if (host->GetSystemId() != rank)
        {
            continue;
        }
        m_hosts.Add(host);
        for (uint32_t k = 0; k < host->GetNDevices(); ++k)
        {
            Ptr<IbNetDevice> d = DynamicCast<IbNetDevice>(host->GetDevice(k));
            if (!d || !d->GetChannel())
            {
                continue;
            }
            d->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&IbFabricStats::OnRx, this));
            m_hostPorts.push_back(d);
            m_ports.push_back(d);
            m_portNames.push_back(name(d));
        }
    }
    for (const auto& sw : fabric.switchOf)
    {
        if (!sw || sw->GetObject<Node>()->GetSystemId() != rank)
        {
            continue;
        }
        for (uint8_t p = 1; p <= sw->GetNPorts(); ++p)
        {
            if (sw->GetPort(p)->GetChannel())
            {
                m_ports.push_back(sw->GetPort(p));
                m_portNames.push_back(name(sw->GetPort(p)));
            }
        }
    }
    m_startBytes.assign(m_ports.size(), 0);
    m_startCapacity.assign(m_ports.size(), 0);
    NS_ABORT_MSG_IF(start < Simulator::Now(),
                    "IbFabricStats::Install: the window would start at "
                        << start.As(Time::US) << ", before now (" << Simulator::Now().As(Time::US)
                        << "); give a start time from now on");
    Simulator::Schedule(start - Simulator::Now(), &IbFabricStats::Snapshot, this);
}

void
IbFabricStats::Snapshot()
{
    for (uint32_t i = 0; i < m_ports.size(); ++i)
    {
        m_startBytes[i] = m_ports[i]->GetTxBytesOnWire();
        m_startCapacity[i] = m_ports[i]->GetWireCapacityBits(Simulator::Now());
    }
}

void
IbFabricStats::OnRx(IbFabricStats* self, Ptr<const Packet> packet)
{
    if (Simulator::Now() < self->m_start)
    {
        return;
    }
    uint8_t h[8 + 40 + 12];
    const uint32_t n = packet->CopyData(h, sizeof(h));
    const IbHeaderView view(h, n);
    const uint16_t dlid = view.GetDlid();
    const uint16_t slid = view.GetSlid();
    Flow& f = self->m_flows[(uint32_t(slid) << 16) | dlid];
    f.slid = slid;
    f.dlid = dlid;
    f.packets++;
    f.bytes += packet->GetSize();
    // Payload = PktLen words - headers - pad - ICRC, for IBA transport packets.
    if (view.HasBth())
    {
        const uint32_t pktLen = view.GetPktLen() * 4;
        const uint8_t pad = view.GetPadCnt();
        const uint32_t hdr = view.GetBthOffset() + IbBthHeader::SIZE +
                             IbBthHeader::ExtensionHeaderSize(view.GetOpcode());
        if (pktLen >= hdr + pad + 4)
        {
            f.payload += pktLen - hdr - pad - 4;
        }
    }
}

std::vector<IbFabricStats::Flow>
IbFabricStats::GetFlows() const
{
    std::map<uint32_t, Flow> all = m_flows;
    // The LIDs are read now, not at Install: the subnet manager may assign them later.
    std::set<uint16_t> localLids;
    for (const auto& d : m_hostPorts)
    {
        for (uint32_t l = 0; l < (1u << d->GetLmc()); ++l)
        {
            localLids.insert(d->GetLid() + l);
        }
    }
    // A flow that delivered nothing (starved, blocked) is a flow too: with zero counts.
    for (uint32_t i = 0; i < m_hosts.GetN(); ++i)
    {
        Ptr<Node> host = m_hosts.Get(i);
        for (uint32_t k = 0; k < host->GetNApplications(); ++k)
        {
            Ptr<IbRawTrafficApplication> app =
                DynamicCast<IbRawTrafficApplication>(host->GetApplication(k));
            // (A flow to a host of another rank is that rank's to report; one that had sent
            // its last packet or stopped before the window is not a flow of the window.)
            if (app && app->GetSlid() != 0 && app->GetEndTime() > m_start &&
                localLids.count(app->GetDlid()) > 0)
            {
                Flow& f = all[(uint32_t(app->GetSlid()) << 16) | app->GetDlid()];
                f.slid = app->GetSlid();
                f.dlid = app->GetDlid();
            }
        }
    }
    std::vector<Flow> out;
    for (const auto& [key, f] : all)
    {
        out.push_back(f);
    }
    return out;
}

double
IbFabricStats::WindowSeconds(Time stop) const
{
    NS_ABORT_MSG_IF(stop <= m_start,
                    "IbFabricStats: the window would end at "
                        << stop.As(Time::US) << ", not after its start at " << m_start.As(Time::US)
                        << " (Install); stop the statistics after they start (a warm-up shorter "
                           "than the run)");
    NS_ABORT_MSG_IF(stop < Simulator::Now(),
                    "IbFabricStats: the window would end at "
                        << stop.As(Time::US) << ", but the counters are read now, at "
                        << Simulator::Now().As(Time::US)
                        << ", and include what happened since; read the statistics at the end "
                           "of the window (Simulator::Stop at it, then Print)");
    return (stop - m_start).GetSeconds();
}

std::vector<IbFabricStats::Port>
IbFabricStats::GetPorts(Time stop) const
{
    std::vector<Port> out;
    WindowSeconds(stop); // checks the window
    for (uint32_t i = 0; i < m_ports.size(); ++i)
    {
        const double bits = (m_ports[i]->GetTxBytesOnWire() - m_startBytes[i]) * 8.0;
        // The rate integrated over the window: a link may train to another rate in it.
        const double capacity = m_ports[i]->GetWireCapacityBits(stop) - m_startCapacity[i];
        // A busy window can come out a few parts per million above 1: each packet's
        // serialization is rounded to the time resolution (the remainder carried to the
        // next one), and its bytes on the wire are read back at the exact rate.
        out.push_back({m_portNames[i], capacity > 0 ? std::min(1.0, bits / capacity) : 0.0});
    }
    std::stable_sort(out.begin(), out.end(), [](const Port& a, const Port& b) {
        return a.utilisation > b.utilisation;
    });
    return out;
}

void
IbFabricStats::Print(std::ostream& os, Time stop, uint32_t maxRows) const
{
    const double window = WindowSeconds(stop);
    const std::vector<Flow> flows = GetFlows();
    os << std::fixed << std::setprecision(3);
    if (flows.size() <= maxRows)
    {
        os << " SLID  DLID   packets   payload Gb/s   wire Gb/s\n";
        for (const auto& f : flows)
        {
            os << std::setw(5) << f.slid << " " << std::setw(5) << f.dlid << " " << std::setw(9)
               << f.packets << " " << std::setw(14) << f.payload * 8.0 / window / 1e9 << " "
               << std::setw(11) << f.bytes * 8.0 / window / 1e9 << "\n";
        }
    }
    // The summary is over data flows: those with payload, and those that delivered
    // nothing. A flow of ACKs only (packets, no payload) would pull min and Jain's index
    // down for a perfectly fair run.
    uint32_t data = 0;
    uint32_t ackOnly = 0;
    double sum = 0;
    double sumSq = 0;
    double lo = 1e300;
    double hi = 0;
    for (const auto& f : flows)
    {
        if (f.packets > 0 && f.payload == 0)
        {
            ++ackOnly;
            continue;
        }
        const double g = f.payload * 8.0 / window / 1e9;
        ++data;
        sum += g;
        sumSq += g * g;
        lo = std::min(lo, g);
        hi = std::max(hi, g);
    }
    if (data > 0)
    {
        const double jain = sumSq > 0 ? sum * sum / (data * sumSq) : 0.0;
        os << data << " flows: payload Gb/s min " << lo << ", mean " << sum / data << ", max " << hi
           << ", total " << sum << "; Jain's fairness " << jain;
        if (ackOnly > 0)
        {
            os << " (" << ackOnly << " flows of ACKs only left out)";
        }
        os << "\n";
    }
    const std::vector<Port> ports = GetPorts(stop);
    double mean = 0;
    for (const auto& p : ports)
    {
        mean += p.utilisation;
    }
    os << "port utilisation: mean " << (ports.empty() ? 0.0 : mean / ports.size()) << " over "
       << ports.size() << " cabled ports; busiest:\n";
    for (uint32_t i = 0; i < ports.size() && i < 8; ++i)
    {
        os << "  " << std::setw(6) << ports[i].utilisation * 100 << " %  " << ports[i].name << "\n";
    }
}

} // namespace ns3

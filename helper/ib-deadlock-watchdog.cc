/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-deadlock-watchdog.h"

#include "ns3/boolean.h"
#include "ns3/channel.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbDeadlockWatchdog");

NS_OBJECT_ENSURE_REGISTERED(IbDeadlockWatchdog);

TypeId
IbDeadlockWatchdog::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IbDeadlockWatchdog")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<IbDeadlockWatchdog>()
            .AddAttribute("Interval",
                          "A deadlock is declared when packets wait in the fabric's ports and "
                          "no data packet has started on any port for this long.",
                          TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&IbDeadlockWatchdog::m_interval),
                          MakeIbTimeChecker("IbDeadlockWatchdog", "Interval", NanoSeconds(1)))
            .AddAttribute("StopOnDeadlock",
                          "Stop the simulation when a deadlock is seen.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&IbDeadlockWatchdog::m_stop),
                          MakeBooleanChecker())
            .AddTraceSource("Deadlock",
                            "A deadlock was seen: the report (time and blocked ports).",
                            MakeTraceSourceAccessor(&IbDeadlockWatchdog::m_deadlockTrace),
                            "ns3::IbDeadlockWatchdog::DeadlockTracedCallback");
    return tid;
}

IbDeadlockWatchdog::IbDeadlockWatchdog()
    : m_interval(MilliSeconds(1)),
      m_stop(true)
{
    NS_LOG_FUNCTION(this);
}

IbDeadlockWatchdog::~IbDeadlockWatchdog()
{
    NS_LOG_FUNCTION(this);
}

void
IbDeadlockWatchdog::DoDispose()
{
    m_event.Cancel();
    m_ports.clear();
    Object::DoDispose();
}

void
IbDeadlockWatchdog::Install(const IbFabric& fabric)
{
    auto add = [this](Ptr<NetDevice> d) {
        Ptr<IbNetDevice> port = DynamicCast<IbNetDevice>(d);
        if (!port)
        {
            return;
        }
        Ptr<Node> node = port->GetNode();
        std::string name = Names::FindName(node);
        if (name.empty())
        {
            name = "node " + std::to_string(node->GetId());
        }
        m_ports.push_back(port);
        m_names.push_back(name + " port " + std::to_string(port->GetIfIndex() + 1));
    };
    for (uint32_t i = 0; i < fabric.switches.GetN(); ++i)
    {
        Ptr<Node> n = fabric.switches.Get(i);
        for (uint32_t k = 0; k < n->GetNDevices(); ++k)
        {
            add(n->GetDevice(k));
        }
    }
    for (uint32_t i = 0; i < fabric.hosts.GetN(); ++i)
    {
        Ptr<Node> n = fabric.hosts.Get(i);
        for (uint32_t k = 0; k < n->GetNDevices(); ++k)
        {
            add(n->GetDevice(k));
        }
    }
    m_lastTx.assign(m_ports.size(), 0);
    for (size_t i = 0; i < m_ports.size(); ++i)
    {
        m_lastTx[i] = m_ports[i]->GetTxPackets();
    }
    m_event.Cancel();
    m_event = Simulator::Schedule(m_interval, &IbDeadlockWatchdog::Check, this);
}

std::vector<size_t>
IbDeadlockWatchdog::Blocked()
{
    std::vector<size_t> blocked;
    for (size_t i = 0; i < m_ports.size(); ++i)
    {
        // Blocked: sent nothing since the last check, while a packet waits for it (in its
        // transmit queue, or in its switch's input buffers) and its peer has no room for
        // one: the peer's receive buffer is full.
        const Ptr<IbNetDevice>& p = m_ports[i];
        const uint64_t tx = p->GetTxPackets();
        bool stuck = false;
        if (tx == m_lastTx[i])
        {
            const bool nodeHolds = NodeHoldsPackets(p->GetNode());
            for (uint8_t vl = 0; vl < p->GetNumDataVls() && !stuck; ++vl)
            {
                const bool noRoom = uint64_t{p->GetAvailableCredits(vl)} * 64 < p->GetIbMtu() + 64;
                stuck = noRoom && (p->GetTxQueueLength(vl) > 0 || nodeHolds);
            }
        }
        if (stuck)
        {
            blocked.push_back(i);
        }
        m_lastTx[i] = tx;
    }
    return blocked;
}

bool
IbDeadlockWatchdog::NodeHoldsPackets(Ptr<Node> node) const
{
    for (uint32_t k = 0; k < node->GetNDevices(); ++k)
    {
        Ptr<IbNetDevice> d = DynamicCast<IbNetDevice>(node->GetDevice(k));
        for (uint8_t vl = 0; d && vl < d->GetNumDataVls(); ++vl)
        {
            if (d->GetRxBufferUsed(vl) > 0 || d->GetTxQueueLength(vl) > 0)
            {
                return true;
            }
        }
    }
    return false;
}

std::string
IbDeadlockWatchdog::Describe(size_t i) const
{
    const Ptr<IbNetDevice>& p = m_ports[i];
    std::ostringstream os;
    os << m_names[i] << " (";
    bool first = true;
    for (uint8_t vl = 0; vl < p->GetNumDataVls(); ++vl)
    {
        if (uint64_t{p->GetAvailableCredits(vl)} * 64 >= p->GetIbMtu() + 64)
        {
            continue;
        }
        os << (first ? "" : "; ") << "VL " << unsigned(vl) << ": " << p->GetAvailableCredits(vl)
           << " credits from its peer, " << p->GetTxQueueLength(vl) << " packets queued";
        first = false;
    }
    os << ")";
    return os.str();
}

std::vector<size_t>
IbDeadlockWatchdog::FindCycle(const std::vector<size_t>& blocked) const
{
    // A blocked port waits for its peer's receive buffer, which drains only through the
    // peer node's output ports: the edges go to the blocked ports of the peer's node.
    std::map<Ptr<Node>, std::vector<size_t>> byNode;
    for (size_t i : blocked)
    {
        byNode[m_ports[i]->GetNode()].push_back(i);
    }
    std::map<size_t, std::vector<size_t>> next;
    for (size_t i : blocked)
    {
        Ptr<Channel> ch = m_ports[i]->GetChannel();
        if (!ch)
        {
            continue;
        }
        for (std::size_t k = 0; k < ch->GetNDevices(); ++k)
        {
            Ptr<NetDevice> d = ch->GetDevice(k);
            if (d != m_ports[i])
            {
                auto it = byNode.find(d->GetNode());
                if (it != byNode.end())
                {
                    next[i] = it->second;
                }
            }
        }
    }
    // Depth-first search for a cycle (colours: 0 new, 1 on the path, 2 done).
    std::map<size_t, int> colour;
    std::vector<size_t> path;
    std::vector<size_t> cycle;
    std::function<bool(size_t)> visit = [&](size_t u) -> bool {
        colour[u] = 1;
        path.push_back(u);
        for (size_t v : next[u])
        {
            if (colour[v] == 1)
            {
                cycle.assign(std::find(path.begin(), path.end(), v), path.end());
                return true;
            }
            if (colour[v] == 0 && visit(v))
            {
                return true;
            }
        }
        colour[u] = 2;
        path.pop_back();
        return false;
    };
    for (size_t i : blocked)
    {
        if (colour[i] == 0 && visit(i))
        {
            break;
        }
    }
    return cycle;
}

void
IbDeadlockWatchdog::Check()
{
    const std::vector<size_t> blocked = Blocked();
    const std::vector<size_t> cycle = blocked.empty() ? blocked : FindCycle(blocked);
    if (!cycle.empty())
    {
        std::ostringstream os;
        os << "deadlock at " << Simulator::Now().As(Time::US) << ": " << blocked.size()
           << " ports hold packets and sent none for " << m_interval.As(Time::US)
           << ", waiting for each other's credits in a cycle:";
        for (size_t i : cycle)
        {
            os << "\n  " << Describe(i) << " waits for";
        }
        os << "\n  " << Describe(cycle.front());
        m_deadlocked = true;
        m_report = os.str();
        NS_LOG_WARN(m_report);
        m_deadlockTrace(m_report);
        if (m_stop)
        {
            Simulator::Stop();
        }
        return;
    }
    if (!Simulator::IsFinished())
    {
        m_event = Simulator::Schedule(m_interval, &IbDeadlockWatchdog::Check, this);
    }
}

bool
IbDeadlockWatchdog::IsDeadlocked() const
{
    return m_deadlocked;
}

std::string
IbDeadlockWatchdog::GetReport() const
{
    return m_report;
}

} // namespace ns3

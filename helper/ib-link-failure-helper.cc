/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-link-failure-helper.h"

#include "ib-fabric-helper.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/ib-channel.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"

#include <regex>
#include <set>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbLinkFailureHelper");

Ptr<IbChannel>
IbLinkFailureHelper::FindCable(Ptr<Node> node, uint8_t port)
{
    Ptr<IbNetDevice> dev;
    Ptr<IbSwitch> sw = node->GetObject<IbSwitch>();
    if (sw)
    {
        NS_ABORT_MSG_UNLESS(port >= 1 && port <= sw->GetNPorts(),
                            "IbLinkFailureHelper: switch node " << node->GetId() << " has ports 1.."
                                                                << unsigned(sw->GetNPorts())
                                                                << ", not " << unsigned(port));
        dev = sw->GetPort(port);
    }
    else
    {
        uint8_t n = 0;
        for (uint32_t d = 0; d < node->GetNDevices() && !dev; ++d)
        {
            Ptr<IbNetDevice> ib = DynamicCast<IbNetDevice>(node->GetDevice(d));
            if (ib && ++n == port)
            {
                dev = ib;
            }
        }
        NS_ABORT_MSG_UNLESS(dev,
                            "IbLinkFailureHelper: host node "
                                << node->GetId() << " has " << unsigned(n)
                                << " IB port(s), not port " << unsigned(port));
    }
    Ptr<IbChannel> ch = DynamicCast<IbChannel>(dev->GetChannel());
    NS_ABORT_MSG_UNLESS(ch && ch->GetNDevices() == 2,
                        "IbLinkFailureHelper: port " << unsigned(port) << " of node "
                                                     << node->GetId() << " has no cable");
    return ch;
}

void
IbLinkFailureHelper::Schedule(Ptr<IbChannel> cable, Time down, Time up)
{
    NS_ABORT_MSG_IF(down.IsStrictlyNegative(),
                    "IbLinkFailureHelper::Schedule: the failure time " << down.As(Time::MS)
                                                                       << " is negative");
    NS_ABORT_MSG_UNLESS(up > down,
                        "IbLinkFailureHelper::Schedule: the cable comes up at "
                            << up.As(Time::MS) << ", not after it fails at " << down.As(Time::MS));
    Simulator::Schedule(down, &IbChannel::SetLinkDown, cable);
    if (up != Time::Max())
    {
        Simulator::Schedule(up, &IbChannel::SetLinkUp, cable);
    }
}

void
IbLinkFailureHelper::ScheduleFromSpec(const IbFabric& fabric,
                                      const std::string& spec,
                                      const std::string& what)
{
    NS_ABORT_MSG_UNLESS(fabric.subnetManager,
                        what << ": bring the fabric up before scheduling link failures");
    const IbTopology& topo = fabric.subnetManager->GetTopology();
    std::stringstream list(spec);
    std::string entry;
    while (std::getline(list, entry, ','))
    {
        if (entry.empty())
        {
            continue;
        }
        const size_t colon = entry.rfind(':', entry.find('@'));
        const size_t at = entry.find('@');
        NS_ABORT_MSG_IF(colon == std::string::npos || at == std::string::npos || at < colon,
                        what << " entry '" << entry
                             << "' is not NODE:PORT@DOWN[-UP] (e.g. spine-0:3@2ms-40ms)");
        const std::string name = entry.substr(0, colon);
        const std::string portText = entry.substr(colon + 1, at - colon - 1);
        const std::string times = entry.substr(at + 1);
        int32_t index = -1;
        for (uint32_t i = 0; i < topo.GetNNodes(); ++i)
        {
            if (topo.GetNode(i).name == name)
            {
                index = static_cast<int32_t>(i);
            }
        }
        NS_ABORT_MSG_IF(index < 0,
                        what << " entry '" << entry << "': the fabric has no node named '" << name
                             << "' (names as in the topology, e.g. "
                             << topo.GetNode(topo.GetNNodes() - 1).name << ")");
        char* end = nullptr;
        const unsigned long port = std::strtoul(portText.c_str(), &end, 10);
        NS_ABORT_MSG_IF(portText.empty() || *end != '\0' || port == 0 ||
                            port >= topo.GetNode(index).ports.size(),
                        what << " entry '" << entry << "': port '" << portText << "' of '" << name
                             << "' is not one of 1.." << topo.GetNode(index).ports.size() - 1);
        const size_t dash = times.find('-');
        Time down;
        Time up = Time::Max();
        auto parse = [&](const std::string& text, Time* t) {
            // Checked here: ns-3's own parser aborts without naming the input.
            static const std::regex timeText(
                R"(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?(s|ms|us|ns|ps|fs|min|h|d))");
            NS_ABORT_MSG_UNLESS(std::regex_match(text, timeText),
                                what << " entry '" << entry << "': '" << text
                                     << "' is not a time with a unit (e.g. 2ms, 1.5us)");
            *t = Time(text);
        };
        parse(times.substr(0, dash), &down);
        if (dash != std::string::npos)
        {
            parse(times.substr(dash + 1), &up);
        }
        NS_ABORT_MSG_UNLESS(up > down,
                            what << " entry '" << entry
                                 << "': the cable must come up after it fails");
        Schedule(FindCable(fabric.nodeOf[index], static_cast<uint8_t>(port)),
                 down - Simulator::Now(),
                 up == Time::Max() ? up : up - Simulator::Now());
    }
}

uint32_t
IbLinkFailureHelper::ScheduleRandom(const std::vector<Ptr<IbChannel>>& cables,
                                    Time mtbf,
                                    Time mttr,
                                    Time until,
                                    int64_t stream)
{
    NS_ABORT_MSG_UNLESS(mtbf.IsStrictlyPositive() && mttr.IsStrictlyPositive(),
                        "IbLinkFailureHelper::ScheduleRandom: MTBF and MTTR must be positive");
    uint32_t failures = 0;
    for (const auto& cable : cables)
    {
        Ptr<ExponentialRandomVariable> toFail = CreateObject<ExponentialRandomVariable>();
        toFail->SetAttribute("Mean", DoubleValue(mtbf.GetSeconds()));
        toFail->SetStream(stream++);
        Ptr<ExponentialRandomVariable> toRepair = CreateObject<ExponentialRandomVariable>();
        toRepair->SetAttribute("Mean", DoubleValue(mttr.GetSeconds()));
        toRepair->SetStream(stream++);
        Time t = Simulator::Now();
        while (true)
        {
            const Time down = t + Seconds(toFail->GetValue());
            if (down > until)
            {
                break;
            }
            const Time up = down + Seconds(toRepair->GetValue());
            Schedule(cable, down - Simulator::Now(), up - Simulator::Now());
            ++failures;
            t = up;
        }
    }
    return failures;
}

std::vector<Ptr<IbChannel>>
IbLinkFailureHelper::SwitchCables(const IbFabric& fabric)
{
    std::vector<Ptr<IbChannel>> out;
    std::set<Ptr<IbChannel>> seen;
    for (const auto& sw : fabric.switchOf)
    {
        if (!sw)
        {
            continue;
        }
        for (uint8_t p = 1; p <= sw->GetNPorts(); ++p)
        {
            Ptr<IbChannel> ch = DynamicCast<IbChannel>(sw->GetPort(p)->GetChannel());
            if (!ch || ch->GetNDevices() != 2)
            {
                continue;
            }
            Ptr<IbNetDevice> peer = ch->GetPeer(sw->GetPort(p));
            if (peer->GetNode()->GetObject<IbSwitch>() && seen.insert(ch).second)
            {
                out.push_back(ch);
            }
        }
    }
    return out;
}

} // namespace ns3

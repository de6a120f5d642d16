/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-topology.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbTopology");

IbTopology::IbTopology()
    : m_links(0),
      m_nextGuid(0x0002c90300000001ULL) // generated GUIDs use the Mellanox OUI 0x0002c9
{
}

uint32_t
IbTopology::AddSwitch(uint32_t numPorts, const std::string& name, uint64_t guid)
{
    NS_ABORT_MSG_UNLESS(numPorts >= 1 && numPorts <= 254,
                        "IbTopology::AddSwitch: a switch has 1..254 ports, not " << numPorts);
    Node n;
    n.type = SWITCH;
    n.guid = guid ? guid : m_nextGuid++;
    n.name = name.empty() ? "switch-" + std::to_string(m_nodes.size()) : name;
    n.ports.resize(numPorts + 1);
    m_nodes.push_back(n);
    return m_nodes.size() - 1;
}

uint32_t
IbTopology::AddCa(uint32_t numPorts, const std::string& name, uint64_t guid)
{
    NS_ABORT_MSG_UNLESS(numPorts >= 1 && numPorts <= 254,
                        "IbTopology::AddCa: a channel adapter has 1..254 ports, not " << numPorts);
    Node n;
    n.type = CA;
    // A CA's port p has GUID node GUID + p - 1 (IbLftDump::PortGuid): a generated GUID
    // takes one per port, so that no two ports share one.
    n.guid = guid ? guid : m_nextGuid;
    m_nextGuid += guid ? 0 : numPorts;
    n.name = name.empty() ? "host-" + std::to_string(m_nodes.size()) : name;
    n.ports.resize(numPorts + 1);
    m_nodes.push_back(n);
    return m_nodes.size() - 1;
}

bool
IbTopology::Connect(uint32_t a,
                    uint8_t portA,
                    uint32_t b,
                    uint8_t portB,
                    IbLinkRate::Speed speed,
                    uint8_t width,
                    std::string* error)
{
    auto fail = [error](const std::string& msg) {
        if (error)
        {
            *error = msg;
        }
        return false;
    };
    if (a >= m_nodes.size() || b >= m_nodes.size())
    {
        return fail("node index out of range");
    }
    if (a == b && portA == portB)
    {
        return fail("a port cannot be cabled to itself");
    }
    Node& na = m_nodes[a];
    Node& nb = m_nodes[b];
    if (portA == 0 || portA >= na.ports.size())
    {
        return fail("'" + na.name + "' has no port " + std::to_string(portA) + " (ports 1.." +
                    std::to_string(na.ports.size() - 1) + ")");
    }
    if (portB == 0 || portB >= nb.ports.size())
    {
        return fail("'" + nb.name + "' has no port " + std::to_string(portB) + " (ports 1.." +
                    std::to_string(nb.ports.size() - 1) + ")");
    }
    if (na.ports[portA].peerNode >= 0)
    {
        return fail("port " + std::to_string(portA) + " of '" + na.name +
                    "' is already cabled to '" + m_nodes[na.ports[portA].peerNode].name + "'");
    }
    if (nb.ports[portB].peerNode >= 0)
    {
        return fail("port " + std::to_string(portB) + " of '" + nb.name +
                    "' is already cabled to '" + m_nodes[nb.ports[portB].peerNode].name + "'");
    }
    na.ports[portA] = {static_cast<int32_t>(b), portB, speed, width};
    nb.ports[portB] = {static_cast<int32_t>(a), portA, speed, width};
    ++m_links;
    return true;
}

void
IbTopology::ConnectNextFree(uint32_t a, uint32_t b, IbLinkRate::Speed speed, uint8_t width)
{
    auto freePort = [this](uint32_t n) -> uint8_t {
        for (uint32_t p = 1; p < m_nodes[n].ports.size(); ++p)
        {
            if (m_nodes[n].ports[p].peerNode < 0)
            {
                return static_cast<uint8_t>(p);
            }
        }
        return 0;
    };
    NS_ABORT_MSG_IF(a >= m_nodes.size() || b >= m_nodes.size(),
                    "IbTopology::ConnectNextFree: node index out of range");
    const uint8_t pa = freePort(a);
    uint8_t pb = freePort(b);
    NS_ABORT_MSG_IF(pa == 0, "IbTopology: '" << m_nodes[a].name << "' has no free port left");
    NS_ABORT_MSG_IF(pb == 0, "IbTopology: '" << m_nodes[b].name << "' has no free port left");
    if (a == b)
    {
        NS_ABORT_MSG("IbTopology: cannot cable '" << m_nodes[a].name << "' to itself");
    }
    std::string error;
    NS_ABORT_MSG_UNLESS(Connect(a, pa, b, pb, speed, width, &error), "IbTopology: " << error);
}

const std::vector<IbTopology::Node>&
IbTopology::GetNodes() const
{
    return m_nodes;
}

const IbTopology::Node&
IbTopology::GetNode(uint32_t i) const
{
    NS_ASSERT(i < m_nodes.size());
    return m_nodes[i];
}

IbTopology::Node&
IbTopology::GetNodeMutable(uint32_t i)
{
    NS_ASSERT(i < m_nodes.size());
    return m_nodes[i];
}

uint32_t
IbTopology::GetNNodes() const
{
    return m_nodes.size();
}

std::vector<uint32_t>
IbTopology::GetSwitches() const
{
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < m_nodes.size(); ++i)
    {
        if (m_nodes[i].type == SWITCH)
        {
            out.push_back(i);
        }
    }
    return out;
}

std::vector<uint32_t>
IbTopology::GetCas() const
{
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < m_nodes.size(); ++i)
    {
        if (m_nodes[i].type == CA)
        {
            out.push_back(i);
        }
    }
    return out;
}

uint32_t
IbTopology::GetNLinks() const
{
    return m_links;
}

int32_t
IbTopology::FindByGuid(uint64_t guid) const
{
    for (uint32_t i = 0; i < m_nodes.size(); ++i)
    {
        if (m_nodes[i].guid == guid)
        {
            return static_cast<int32_t>(i);
        }
    }
    return -1;
}

bool
IbTopology::Validate(std::string* error) const
{
    auto fail = [error](const std::string& msg) {
        if (error)
        {
            *error = msg;
        }
        return false;
    };
    if (GetCas().empty())
    {
        return fail("the fabric has no channel adapter (host)");
    }
    for (uint32_t i = 0; i < m_nodes.size(); ++i)
    {
        for (uint32_t p = 1; p < m_nodes[i].ports.size(); ++p)
        {
            const Port& port = m_nodes[i].ports[p];
            if (port.peerNode < 0)
            {
                continue;
            }
            const Port& back = m_nodes[port.peerNode].ports[port.peerPort];
            if (back.peerNode != static_cast<int32_t>(i) || back.peerPort != p)
            {
                return fail("cable from '" + m_nodes[i].name + "' port " + std::to_string(p) +
                            " is not matched at the other end");
            }
        }
    }
    // In a fabric with switches, the subnet manager routes through them: a CA port cabled
    // straight to a CA port (another host, or a loopback) would get a LID that no switch
    // can reach. (Without switches, two CAs or a loopback are a fabric of their own.)
    if (std::any_of(m_nodes.begin(), m_nodes.end(), [](const Node& n) { return n.type == SWITCH; }))
    {
        for (uint32_t i = 0; i < m_nodes.size(); ++i)
        {
            for (uint32_t p = 1; p < m_nodes[i].ports.size() && m_nodes[i].type == CA; ++p)
            {
                const Port& port = m_nodes[i].ports[p];
                if (port.peerNode >= 0 && m_nodes[port.peerNode].type == CA)
                {
                    return fail("'" + m_nodes[i].name + "' port " + std::to_string(p) +
                                " is cabled straight to '" + m_nodes[port.peerNode].name +
                                "' port " + std::to_string(port.peerPort) +
                                ", in a fabric with switches: that cable is a separate subnet, "
                                "which this subnet manager cannot reach through its switches; "
                                "remove it (or simulate that pair as a fabric of its own)");
                }
            }
        }
    }
    // One connected component. When there are several, the largest is taken for the
    // fabric and the others are named: an isolated host must not make the whole rest of
    // the fabric look like the stray part.
    uint32_t nComponents = 0;
    const std::vector<uint32_t> component = GetComponents(&nComponents);
    std::vector<uint32_t> sizes(nComponents, 0);
    for (uint32_t c : component)
    {
        ++sizes[c];
    }
    if (m_separateSubnets && nComponents > 1)
    {
        // One subnet per component: each needs a switch to route it and a CA to address.
        std::vector<uint32_t> switches(nComponents, 0);
        std::vector<uint32_t> cas(nComponents, 0);
        for (uint32_t i = 0; i < m_nodes.size(); ++i)
        {
            ++(m_nodes[i].type == SWITCH ? switches : cas)[component[i]];
        }
        for (uint32_t i = 0; i < m_nodes.size(); ++i)
        {
            const uint32_t c = component[i];
            if (switches[c] == 0 || cas[c] == 0)
            {
                return fail("the subnet of '" + m_nodes[i].name + "' (" + std::to_string(sizes[c]) +
                            " nodes) has " +
                            (switches[c] == 0 ? "no switch" : "no channel adapter") +
                            "; every separate subnet needs both: cable it to one, or leave it "
                            "out");
            }
        }
        return true;
    }
    if (m_nodes.size() == 1 && std::none_of(m_nodes[0].ports.begin(),
                                            m_nodes[0].ports.end(),
                                            [](const Port& port) { return port.peerNode >= 0; }))
    {
        return fail("the fabric is the single node '" + m_nodes[0].name +
                    "', with no cable; a fabric needs at least two nodes cabled together");
    }
    if (sizes.size() > 1)
    {
        const auto largest =
            static_cast<uint32_t>(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
        std::string outside;
        uint32_t count = 0;
        for (uint32_t i = 0; i < m_nodes.size(); ++i)
        {
            if (component[i] != largest && ++count <= 5)
            {
                outside += (outside.empty() ? "'" : ", '") + m_nodes[i].name + "'";
            }
        }
        return fail(std::to_string(count) + (count == 1 ? " node is" : " nodes are") +
                    " not connected to the rest of the fabric (" + std::to_string(sizes[largest]) +
                    " nodes): " + outside + (count > 5 ? ", ..." : "") +
                    "; cable them to it, or leave them out");
    }
    return true;
}

void
IbTopology::SetSeparateSubnets(bool separate)
{
    m_separateSubnets = separate;
}

bool
IbTopology::HasSeparateSubnets() const
{
    return m_separateSubnets;
}

std::vector<uint32_t>
IbTopology::GetComponents(uint32_t* count) const
{
    std::vector<uint32_t> component(m_nodes.size(), UINT32_MAX);
    uint32_t next = 0;
    for (uint32_t start = 0; start < m_nodes.size(); ++start)
    {
        if (component[start] != UINT32_MAX)
        {
            continue;
        }
        const uint32_t c = next++;
        std::vector<uint32_t> stack{start};
        component[start] = c;
        while (!stack.empty())
        {
            const uint32_t n = stack.back();
            stack.pop_back();
            for (const Port& port : m_nodes[n].ports)
            {
                if (port.peerNode >= 0 && component[port.peerNode] == UINT32_MAX)
                {
                    component[port.peerNode] = c;
                    stack.push_back(port.peerNode);
                }
            }
        }
    }
    if (count != nullptr)
    {
        *count = next;
    }
    return component;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-lft-dump.h"

#include "ns3/log.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbLftDump");

uint64_t
IbLftDump::PortGuid(const IbTopology::Node& node, uint8_t port)
{
    if (node.type == IbTopology::SWITCH || port == 0)
    {
        return node.guid;
    }
    return node.guid + port - 1;
}

void
IbLftDump::Write(std::ostream& os, const IbRoutingProblem& problem, const IbRoutingTables& tables)
{
    const auto& nodes = problem.topology->GetNodes();
    const uint32_t maxLid = problem.MaxLid();
    char buf[64];
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type != IbTopology::SWITCH)
        {
            continue;
        }
        const uint16_t ownLid = problem.baseLid[n].empty() ? 0 : problem.baseLid[n][0];
        std::snprintf(buf,
                      sizeof(buf),
                      "0x%016llx",
                      static_cast<unsigned long long>(nodes[n].guid));
        os << "Unicast lids [0x0-0x" << std::hex << maxLid << std::dec << "] of switch Lid "
           << ownLid << " guid " << buf << " ('" << nodes[n].name << "'):\n";
        uint32_t dumped = 0;
        const std::vector<uint8_t> empty;
        const std::vector<uint8_t>& lft = n < tables.lft.size() ? tables.lft[n] : empty;
        for (uint32_t lid = 0; lid < lft.size() && lid <= maxLid; ++lid)
        {
            const uint8_t port = lft[lid];
            if (port == IbRoutingTables::NO_ROUTE || port >= nodes[n].ports.size())
            {
                continue;
            }
            std::snprintf(buf, sizeof(buf), "0x%04x %03u : (", lid, port);
            os << buf;
            const auto& owner = problem.lidOwner[lid];
            if (owner.first >= 0)
            {
                const IbTopology::Node& dest = nodes[owner.first];
                std::snprintf(buf,
                              sizeof(buf),
                              "0x%016llx",
                              static_cast<unsigned long long>(PortGuid(dest, owner.second)));
                os << (dest.type == IbTopology::SWITCH ? "Switch" : "Channel Adapter")
                   << " portguid " << buf << ": '" << dest.name << "')\n";
            }
            else
            {
                os << "unknown node and type)\n";
            }
            ++dumped;
        }
        os << dumped << " lids dumped\n";
    }
}

namespace
{

/// @return s starts with prefix
bool
StartsWith(const std::string& s, std::size_t pos, const char* prefix)
{
    return s.compare(pos, std::char_traits<char>::length(prefix), prefix) == 0;
}

/// @return s ends with suffix
bool
EndsWith(const std::string& s, const char* suffix)
{
    const std::size_t n = std::char_traits<char>::length(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

/**
 * Parse hex digits at pos.
 * @param s the text
 * @param [in,out] pos position, moved past the digits
 * @param [out] value the number
 * @param maxDigits most digits allowed
 * @return false if there is no digit or too many
 */
bool
ParseHex(const std::string& s, std::size_t& pos, uint64_t& value, std::size_t maxDigits)
{
    const std::size_t start = pos;
    value = 0;
    while (pos < s.size() && std::isxdigit(static_cast<unsigned char>(s[pos])))
    {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[pos])));
        value = value * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
        ++pos;
        if (pos - start > maxDigits)
        {
            return false;
        }
    }
    return pos > start;
}

} // namespace

bool
IbLftDump::Read(std::istream& is,
                const std::string& sourceName,
                const IbRoutingProblem& problem,
                IbRoutingTables& tables,
                std::string* error)
{
    const auto& nodes = problem.topology->GetNodes();
    const uint32_t maxLid = problem.MaxLid();
    uint32_t lineNo = 0;
    auto fail = [&](const std::string& msg) {
        if (error)
        {
            *error = sourceName + ":" + std::to_string(lineNo) + ": " + msg;
        }
        return false;
    };
    auto hex = [](uint64_t v, int width) {
        char buf[24];
        std::snprintf(buf, sizeof(buf), "0x%0*llx", width, static_cast<unsigned long long>(v));
        return std::string(buf);
    };
    const std::string headerForm =
        "expected 'Unicast lids [0x0-0x<max>] of switch Lid <lid> guid 0x<guid> "
        "('<description>'):'";
    const std::string entryForm = "expected '0x<lid> <port> : (<destination>)'";

    std::unordered_map<uint64_t, uint32_t> byGuid;
    uint32_t nSwitches = 0;
    tables.lft.assign(nodes.size(), {});
    tables.sl.clear();
    tables.vlsUsed = 1;
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type == IbTopology::SWITCH)
        {
            byGuid[nodes[n].guid] = n;
            ++nSwitches;
        }
    }
    std::vector<bool> seen(nodes.size(), false);
    int32_t current = -1;
    uint32_t sectionLine = 0;
    // A section must send the switch's own LID to port 0 (a missing line left it 255: the
    // switch would drop its management traffic).
    auto closeSection = [&]() {
        if (current < 0)
        {
            return true;
        }
        const uint16_t ownLid = problem.baseLid[current][0];
        if (tables.lft[current][ownLid] != 0)
        {
            return fail("the table of switch '" + nodes[current].name + "' (from line " +
                        std::to_string(sectionLine) + ") has no entry '" + hex(ownLid, 4) +
                        " 000' for the switch's own LID; expected its own LID to go to port "
                        "000 (the switch itself)");
        }
        current = -1;
        return true;
    };
    std::string line;
    while (std::getline(is, line))
    {
        ++lineNo;
        if (!line.empty() && line.back() == '\r')
        {
            line.pop_back();
        }
        std::size_t pos = line.find_first_not_of(" \t");
        if (pos == std::string::npos || line[pos] == '#')
        {
            continue;
        }
        const std::size_t last = line.find_last_not_of(" \t");
        const std::string text = line.substr(pos, last - pos + 1);
        if (StartsWith(text, 0, "Unicast lids"))
        {
            if (!closeSection())
            {
                return false;
            }
            sectionLine = lineNo;
            const std::size_t g = text.find("guid 0x");
            if (text.find('[') == std::string::npos || text.find(']') == std::string::npos ||
                text.find("of switch") == std::string::npos || g == std::string::npos)
            {
                return fail("malformed switch header '" + text + "'; " + headerForm);
            }
            std::size_t gp = g + 7;
            uint64_t guid = 0;
            if (!ParseHex(text, gp, guid, 16))
            {
                return fail("bad switch GUID in '" + text +
                            "'; expected 'guid 0x' and up to "
                            "16 hex digits");
            }
            const auto it = byGuid.find(guid);
            if (it == byGuid.end())
            {
                return fail("no switch of the fabric has GUID " + hex(guid, 16) +
                            "; expected the node GUID of one of its " + std::to_string(nSwitches) +
                            " switches");
            }
            if (seen[it->second])
            {
                return fail("second table for switch '" + nodes[it->second].name + "' (" +
                            hex(guid, 16) + "); expected one section per switch");
            }
            seen[it->second] = true;
            current = it->second;
            const uint16_t ownLid = problem.baseLid[current][0];
            const std::string lidKey = "of switch Lid ";
            const std::size_t l = text.find(lidKey);
            if (l != std::string::npos && l < g)
            {
                // The file's LIDs must be this fabric's: an entry names a destination by
                // LID only, so a dump from a fabric numbered otherwise (a real cluster's,
                // next to an ibnetdiscover file) would send every packet somewhere else.
                const unsigned long fileLid =
                    std::strtoul(text.c_str() + l + lidKey.size(), nullptr, 10);
                if (fileLid != ownLid)
                {
                    return fail("switch '" + nodes[current].name + "' (" + hex(guid, 16) +
                                ") is LID " + std::to_string(fileLid) + " in this file but LID " +
                                std::to_string(ownLid) +
                                " in the fabric, whose LIDs are assigned in topology order; "
                                "the table's entries name destinations by LID, so they would "
                                "route to other nodes. Use a dump written for this fabric "
                                "(IbSubnetManager::WriteLfts) or rebuild it with the fabric's "
                                "LIDs; expected the header 'of switch Lid " +
                                std::to_string(ownLid) + "'");
                }
            }
            tables.lft[current].assign(maxLid + 1, IbRoutingTables::NO_ROUTE);
            continue;
        }
        if (StartsWith(text, 0, "0x") || StartsWith(text, 0, "0X"))
        {
            if (current < 0)
            {
                return fail("forwarding entry before any switch header; " + headerForm);
            }
            std::size_t p = 2;
            uint64_t lid = 0;
            if (!ParseHex(text, p, lid, 4))
            {
                return fail("bad LID in '" + text + "'; " + entryForm +
                            " with a LID of 1 to 4 hex digits");
            }
            if (p >= text.size() || (text[p] != ' ' && text[p] != '\t'))
            {
                return fail("no port after LID " + hex(lid, 4) + " in '" + text + "'; " +
                            entryForm);
            }
            p = text.find_first_not_of(" \t", p);
            const std::size_t portStart = p;
            uint32_t port = 0;
            while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p])) &&
                   p - portStart < 4)
            {
                port = port * 10 + (text[p] - '0');
                ++p;
            }
            if (p == portStart || (p < text.size() && text[p] != ' ' && text[p] != '\t'))
            {
                return fail("bad port number in '" + text + "'; " + entryForm +
                            " with a decimal port number");
            }
            if (lid > maxLid)
            {
                return fail("LID " + hex(lid, 4) + " is beyond the fabric's highest LID " +
                            hex(maxLid, 4) + "; expected a LID of 0x0000.." + hex(maxLid, 4));
            }
            const uint32_t nPorts = nodes[current].ports.size() - 1;
            if (port > nPorts)
            {
                return fail("switch '" + nodes[current].name + "' has no port " +
                            std::to_string(port) + "; expected a port of 0.." +
                            std::to_string(nPorts));
            }
            if (lid == problem.baseLid[current][0] && port != 0)
            {
                return fail("switch '" + nodes[current].name + "' sends its own LID " +
                            hex(lid, 4) + " to port " + std::to_string(port) +
                            "; expected port 000 (the switch itself): the file's LIDs are "
                            "not this fabric's");
            }
            tables.lft[current][lid] = static_cast<uint8_t>(port);
            continue;
        }
        if (EndsWith(text, "lids dumped"))
        {
            if (!std::isdigit(static_cast<unsigned char>(text[0])))
            {
                return fail("malformed trailer '" + text + "'; expected '<n> lids dumped'");
            }
            if (!closeSection())
            {
                return false;
            }
            continue;
        }
        if ((StartsWith(text, 0, "Lid") && text.find("Out") != std::string::npos) ||
            (StartsWith(text, 0, "Port") && text.find("Info") != std::string::npos))
        {
            continue;
        }
        return fail("unrecognised line '" + text + "'; " + headerForm + ", " + entryForm +
                    " or '<n> lids dumped'");
    }
    if (!closeSection())
    {
        return false;
    }
    for (uint32_t n = 0; n < nodes.size(); ++n)
    {
        if (nodes[n].type == IbTopology::SWITCH && !seen[n])
        {
            return fail("end of file, but no table for switch '" + nodes[n].name + "' (" +
                        hex(nodes[n].guid, 16) +
                        "); expected one 'Unicast lids' section per "
                        "switch");
        }
    }
    return true;
}

} // namespace ns3

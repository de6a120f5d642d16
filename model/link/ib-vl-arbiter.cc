/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-vl-arbiter.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/log.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbVlArbiter");

IbVlArbiter::IbVlArbiter()
    : m_highBytes(0),
      m_limit(0),
      m_lowTurnDue(false)
{
}

bool
IbVlArbiter::ParseTable(const std::string& text, std::vector<Entry>& table, std::string& error)
{
    std::vector<Entry> out;
    std::stringstream ss(text);
    std::string item;
    uint32_t position = 0;
    while (std::getline(ss, item, ','))
    {
        ++position;
        // Trim blanks.
        const auto first = item.find_first_not_of(" \t");
        if (first == std::string::npos)
        {
            error = "entry " + std::to_string(position) + " is empty";
            return false;
        }
        item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
        const auto colon = item.find(':');
        if (colon == std::string::npos)
        {
            error = "entry " + std::to_string(position) + " '" + item +
                    "' is not of the form VL:weight";
            return false;
        }
        long vl = -1;
        long weight = -1;
        // blanks around the colon are allowed ("0 : 4")
        auto trim = [](const std::string& t) {
            const auto a = t.find_first_not_of(" \t");
            return a == std::string::npos ? std::string()
                                          : t.substr(a, t.find_last_not_of(" \t") - a + 1);
        };
        const std::string v = trim(item.substr(0, colon));
        const std::string w = trim(item.substr(colon + 1));
        try
        {
            std::size_t used = 0;
            vl = std::stol(v, &used);
            if (used != v.size())
            {
                vl = -1;
            }
            weight = std::stol(w, &used);
            if (used != w.size())
            {
                weight = -1;
            }
        }
        catch (const std::exception&)
        {
            error = "entry " + std::to_string(position) + " '" + item +
                    "' is not of the form VL:weight with two integers";
            return false;
        }
        if (vl < 0 || vl > 14)
        {
            error = "entry " + std::to_string(position) + " '" + item + "' names VL " + v +
                    "; data VLs are 0..14";
            return false;
        }
        if (weight < 0 || weight > 255)
        {
            error = "entry " + std::to_string(position) + " '" + item + "' has weight " + w +
                    "; weights are 0..255 (units of 64 bytes)";
            return false;
        }
        out.push_back({static_cast<uint8_t>(vl), static_cast<uint8_t>(weight)});
    }
    if (out.size() > 64)
    {
        error = "the table has " + std::to_string(out.size()) + " entries; IBA allows 64";
        return false;
    }
    table = out;
    return true;
}

std::string
IbVlArbiter::FormatTable(const std::vector<Entry>& table)
{
    std::ostringstream os;
    for (std::size_t i = 0; i < table.size(); ++i)
    {
        os << (i ? "," : "") << unsigned(table[i].vl) << ":" << unsigned(table[i].weight);
    }
    return os.str();
}

void
IbVlArbiter::Load(Walk& w, const std::vector<Entry>& entries, std::array<Entry, 64>& table)
{
    w.mask = 0;
    for (const auto& e : entries)
    {
        if (e.weight > 0)
        {
            w.mask |= static_cast<uint16_t>(1u << e.vl);
        }
    }
    std::copy(entries.begin(), entries.end(), table.begin());
    w.n = static_cast<uint8_t>(entries.size());
    w.index = 0;
    w.vl = entries.empty() ? 0 : entries[0].vl;
    w.weight = entries.empty() ? 0 : entries[0].weight;
    w.remaining = w.weight;
}

void
IbVlArbiter::Advance(Walk& w, const Entry* table)
{
    if (w.n > 1)
    {
        w.index = static_cast<uint8_t>((w.index + 1) % w.n);
        w.vl = table[w.index].vl;
        w.weight = table[w.index].weight;
    }
    w.remaining = w.weight;
}

void
IbVlArbiter::SetHighTable(const std::vector<Entry>& table)
{
    NS_ABORT_MSG_IF(table.size() > 64,
                    "IbVlArbiter: a high-priority VL arbitration table of "
                        << table.size() << " entries; IBA allows at most 64");
    m_highEntries = table;
    Load(m_high, m_highEntries, m_highTable);
}

void
IbVlArbiter::SetLowTable(const std::vector<Entry>& table)
{
    NS_ABORT_MSG_IF(table.size() > 64,
                    "IbVlArbiter: a low-priority VL arbitration table of "
                        << table.size() << " entries; IBA allows at most 64");
    m_lowEntries = table;
    Load(m_low, m_lowEntries, m_lowTable);
}

void
IbVlArbiter::SetLimitOfHighPriority(uint8_t limit)
{
    m_limit = limit;
}

const std::vector<IbVlArbiter::Entry>&
IbVlArbiter::GetHighTable() const
{
    return m_highEntries;
}

const std::vector<IbVlArbiter::Entry>&
IbVlArbiter::GetLowTable() const
{
    return m_lowEntries;
}

uint8_t
IbVlArbiter::GetLimitOfHighPriority() const
{
    return m_limit;
}

void
IbVlArbiter::Reset()
{
    Load(m_high, m_highEntries, m_highTable);
    Load(m_low, m_lowEntries, m_lowTable);
    m_highBytes = 0;
    m_lowTurnDue = false;
}

int
IbVlArbiter::Pick(Walk& w, const Entry* table, uint16_t eligible, const uint16_t* headBlocks)
{
    const uint32_t n = w.n;
    if (n == 0 || (eligible & w.mask) == 0)
    {
        return -1;
    }
    // Stay on the current entry while it has weight left and its VL can send;
    // otherwise move on, reloading each visited entry's weight.
    for (uint32_t step = 0; step <= n; ++step)
    {
        if (w.remaining > 0 && (eligible & (1u << w.vl)))
        {
            const int vl = w.vl;
            const int32_t left = w.remaining - static_cast<int32_t>(headBlocks[vl]);
            if (left <= 0)
            {
                Advance(w, table);
            }
            else
            {
                w.remaining = static_cast<int16_t>(left);
            }
            return vl;
        }
        Advance(w, table);
    }
    return -1;
}

int
IbVlArbiter::Select(uint16_t eligible, const uint16_t* headBlocks)
{
    const bool lowCan = (eligible & m_low.mask) != 0;
    if (!(m_lowTurnDue && lowCan))
    {
        const int vl = Pick(m_high, m_highTable.data(), eligible, headBlocks);
        if (vl >= 0 && !lowCan)
        {
            // No low-table VL could send: this packet took no opportunity from one, so
            // the limit counts from zero again (it bounds high while low waits).
            m_highBytes = 0;
            m_lowTurnDue = false;
            return vl;
        }
        if (vl >= 0)
        {
            // Capped: with an unbounded limit (255) it would otherwise wrap around.
            m_highBytes = static_cast<uint32_t>(
                std::min<uint64_t>(m_highBytes + static_cast<uint64_t>(headBlocks[vl]) * 64,
                                   UINT32_MAX));
            if (m_limit != 255 && m_highBytes >= static_cast<uint32_t>(m_limit) * 4096)
            {
                m_lowTurnDue = true;
            }
            return vl;
        }
    }
    const int vl = Pick(m_low, m_lowTable.data(), eligible, headBlocks);
    if (vl >= 0)
    {
        m_highBytes = 0;
        m_lowTurnDue = false;
    }
    return vl;
}

} // namespace ns3

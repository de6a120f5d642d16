/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-ca-congestion-setting.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbCaCongestionSetting");

namespace
{

/**
 * The LLNL study's tables: entry i = (shift, floor(7 i^2 / (d^2 x 0.218))), in integers as
 * 7000 i^2 / (d^2 x 218).
 * @param shift the shift of every entry
 * @param d the divisor's base (106 or 95)
 * @return 128 entries
 */
std::vector<uint16_t>
QuadraticCct(uint8_t shift, uint64_t d)
{
    std::vector<uint16_t> cct(IbCaCongestionSetting::DEFAULT_CCT_ENTRIES);
    for (uint32_t i = 0; i < cct.size(); ++i)
    {
        const uint64_t m = 7000ULL * i * i / (d * d * 218ULL);
        cct[i] = IbCaCongestionSetting::Entry(shift, static_cast<uint16_t>(m));
    }
    return cct;
}

} // namespace

std::vector<uint16_t>
IbCaCongestionSetting::DefaultCct()
{
    return QuadraticCct(3, 106);
}

std::vector<uint16_t>
IbCaCongestionSetting::CoarseCct()
{
    return QuadraticCct(0, 95);
}

std::vector<uint16_t>
IbCaCongestionSetting::ParseCct(const std::string& text, const std::string& what)
{
    std::string trimmed;
    for (char c : text)
    {
        if (!std::isspace(static_cast<unsigned char>(c)))
        {
            trimmed += c;
        }
    }
    if (trimmed == "default" || trimmed == "simula")
    {
        return DefaultCct();
    }
    if (trimmed == "mellanox")
    {
        return CoarseCct();
    }
    NS_ABORT_MSG_IF(trimmed.empty(),
                    what << ": empty congestion control table; give comma-separated "
                            "shift:multiplier entries (e.g. \"0:0,0:1,0:2\"), \"default\" or "
                            "\"mellanox\"");
    std::vector<uint16_t> cct;
    std::istringstream in(trimmed);
    std::string item;
    uint32_t n = 0;
    while (std::getline(in, item, ','))
    {
        const size_t colon = item.find(':');
        char* end = nullptr;
        bool ok = colon != std::string::npos && colon > 0 && colon + 1 < item.size();
        unsigned long shift = 0;
        unsigned long mult = 0;
        if (ok)
        {
            const std::string s = item.substr(0, colon);
            const std::string m = item.substr(colon + 1);
            shift = std::strtoul(s.c_str(), &end, 0);
            ok = *end == '\0';
            mult = std::strtoul(m.c_str(), &end, 0);
            ok = ok && *end == '\0';
        }
        NS_ABORT_MSG_UNLESS(ok && shift <= 3 && mult <= MAX_MULTIPLIER,
                            what << ": entry " << n << " \"" << item
                                 << "\" of the congestion control table is not "
                                    "shift:multiplier with shift 0..3 and multiplier 0.."
                                 << MAX_MULTIPLIER);
        cct.push_back(Entry(static_cast<uint8_t>(shift), static_cast<uint16_t>(mult)));
        ++n;
    }
    NS_ABORT_MSG_IF(cct.size() > 4096,
                    what << ": " << cct.size()
                         << " congestion control table entries; IBA allows at most 4096");
    return cct;
}

} // namespace ns3

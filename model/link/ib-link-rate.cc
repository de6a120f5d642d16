/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-link-rate.h"

#include "ns3/log.h"

#include <algorithm>
#include <cctype>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbLinkRate");

namespace
{

/// One row of the speed table.
struct SpeedRow
{
    const char* name;       ///< name as ibstat prints it
    uint64_t signallingBps; ///< lane signalling rate
    uint64_t dataBps;       ///< lane data rate after encoding
    uint32_t symbolBits;    ///< bits per symbol on the lane (10 for 8b/10b, 66 for 64b/66b)
};

// Lane data rates: 8b/10b keeps 8/10 of the signalling rate, 64b/66b keeps 64/66.
// FDR: 14.0625 * 64 / 66 = 13.636... Gb/s. HDR/NDR/XDR: nominal rates after FEC.
// PAM4 links carry 2 bits per symbol; we count a 66-bit block as the "symbol" there too,
// which only matters for the flow-control refresh period.
const SpeedRow kSpeeds[IbLinkRate::SPEED_COUNT] = {
    {"SDR", 2500000000ULL, 2000000000ULL, 10},
    {"DDR", 5000000000ULL, 4000000000ULL, 10},
    {"QDR", 10000000000ULL, 8000000000ULL, 10},
    {"FDR10", 10312500000ULL, 10000000000ULL, 66},
    {"FDR", 14062500000ULL, 13636363636ULL, 66},
    {"EDR", 25781250000ULL, 25000000000ULL, 66},
    {"HDR", 53125000000ULL, 50000000000ULL, 66},
    {"NDR", 106250000000ULL, 100000000000ULL, 66},
    {"XDR", 212500000000ULL, 200000000000ULL, 66},
};

std::string
Upper(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::toupper(c));
    });
    return s;
}

} // namespace

bool
IbLinkRate::ParseSpeed(const std::string& name, Speed& speed)
{
    const std::string u = Upper(name);
    for (uint8_t i = 0; i < SPEED_COUNT; ++i)
    {
        if (u == kSpeeds[i].name)
        {
            speed = static_cast<Speed>(i);
            return true;
        }
    }
    return false;
}

bool
IbLinkRate::ParseWidth(const std::string& name, uint8_t& width)
{
    std::string s = Upper(name);
    if (!s.empty() && s.back() == 'X')
    {
        s.pop_back();
    }
    if (s == "1" || s == "2" || s == "4" || s == "8" || s == "12")
    {
        width = static_cast<uint8_t>(std::stoi(s));
        return true;
    }
    return false;
}

const char*
IbLinkRate::SpeedName(Speed speed)
{
    NS_ASSERT(speed < SPEED_COUNT);
    return kSpeeds[speed].name;
}

std::string
IbLinkRate::ValidSpeedNames()
{
    std::string out;
    for (uint8_t i = 0; i < SPEED_COUNT; ++i)
    {
        out += (i ? ", " : "");
        out += kSpeeds[i].name;
    }
    return out;
}

uint64_t
IbLinkRate::LaneDataRateBps(Speed speed)
{
    NS_ASSERT(speed < SPEED_COUNT);
    return kSpeeds[speed].dataBps;
}

uint64_t
IbLinkRate::LaneSignallingRateBps(Speed speed)
{
    NS_ASSERT(speed < SPEED_COUNT);
    return kSpeeds[speed].signallingBps;
}

DataRate
IbLinkRate::GetDataRate(Speed speed, uint8_t width)
{
    NS_ASSERT(speed < SPEED_COUNT);
    return DataRate(kSpeeds[speed].dataBps * width);
}

Time
IbLinkRate::FlowControlRefreshPeriod(Speed speed)
{
    NS_ASSERT(speed < SPEED_COUNT);
    const double symbolSeconds =
        static_cast<double>(kSpeeds[speed].symbolBits) / kSpeeds[speed].signallingBps;
    return Seconds(65536.0 * symbolSeconds);
}

} // namespace ns3

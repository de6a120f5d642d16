/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_LINK_RATE_H
#define IB_LINK_RATE_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-link
 * @brief InfiniBand link speeds and widths, and the data rate they give.
 *
 * The per-lane figures come from the IBA speed table (IB-REFERENCE.md section 3):
 * signalling rate and line encoding give the lane data rate; the link data rate is the
 * lane data rate times the width. HDR and later use PAM4 with FEC; their lane data
 * rates are the nominal 50, 100 and 200 Gb/s.
 */
class IbLinkRate
{
  public:
    /// Link speed generations, as `ibstat` and `iblinkinfo` name them.
    enum Speed : uint8_t
    {
        SDR = 0, ///< 2.5 Gbaud, 8b/10b
        DDR,     ///< 5 Gbaud, 8b/10b
        QDR,     ///< 10 Gbaud, 8b/10b
        FDR10,   ///< 10.3125 Gbaud, 64b/66b
        FDR,     ///< 14.0625 Gbaud, 64b/66b
        EDR,     ///< 25.78125 Gbaud, 64b/66b
        HDR,     ///< 53.125 Gb/s PAM4 + FEC
        NDR,     ///< 106.25 Gb/s PAM4 + FEC
        XDR,     ///< 212.5 Gb/s PAM4 + FEC
        SPEED_COUNT
    };

    /**
     * Parse a speed name ("SDR" ... "XDR", case-insensitive).
     * @param name the name
     * @param [out] speed the speed, set on success
     * @return true if the name is a known speed
     */
    static bool ParseSpeed(const std::string& name, Speed& speed);
    /**
     * Parse a width ("1x", "2x", "4x", "8x", "12x", or the bare number).
     * @param name the name
     * @param [out] width the number of lanes, set on success
     * @return true if the width is one IBA defines
     */
    static bool ParseWidth(const std::string& name, uint8_t& width);
    /**
     * @param speed a speed
     * @return its name, e.g. "EDR"
     */
    static const char* SpeedName(Speed speed);
    /// @return the list of valid speed names, for error messages
    static std::string ValidSpeedNames();
    /**
     * @param speed a speed
     * @return the data rate of one lane in bit/s (after line encoding)
     */
    static uint64_t LaneDataRateBps(Speed speed);
    /**
     * @param speed a speed
     * @return the signalling rate of one lane in bit/s
     */
    static uint64_t LaneSignallingRateBps(Speed speed);
    /**
     * @param speed a speed
     * @param width the number of lanes (1, 2, 4, 8 or 12)
     * @return the link data rate
     */
    static DataRate GetDataRate(Speed speed, uint8_t width);
    /**
     * IBA requires a flow-control packet per VL at least every 65,536 symbol times.
     * @param speed a speed
     * @return 65,536 symbol times of one lane of that speed
     */
    static Time FlowControlRefreshPeriod(Speed speed);
};

} // namespace ns3

#endif /* IB_LINK_RATE_H */

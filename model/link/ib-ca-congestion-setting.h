/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_CA_CONGESTION_SETTING_H
#define IB_CA_CONGESTION_SETTING_H

#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-link
 * @brief What the subnet manager programs into a channel adapter port for IBA congestion
 * control (annex A10): the CA Congestion Setting of the port's SLs and its Congestion
 * Control Table (CCT).
 *
 * The reaction point (the sending CA) keeps a Congestion Control Table Index (CCTI) per
 * queue pair (PortControl QP, the ConnectX way) or per SL of the port (PortControl SL). A
 * BECN raises the CCTI by CctiIncrease, never above the last entry (CCTI_Limit); every
 * CctiTimer the CCTI falls by one, never below CctiMin. The CCT entry at the CCTI holds a
 * 2-bit shift and a 14-bit multiplier; the source then waits, after each packet it puts on
 * the wire, multiplier x (that packet's transmission time) / 2^shift before the next (the
 * inter-packet delay), so entry (s, m) sends at line rate / (1 + m / 2^s).
 *
 * An IbNetDevice holds one (IbNetDevice::SetCongestionSetting); the transport reads it when
 * a queue pair becomes ready to receive.
 */
class IbCaCongestionSetting
{
  public:
    /// Entries of the built-in tables (IBA allows up to 64 x 64 = 4096 entries).
    static constexpr uint32_t DEFAULT_CCT_ENTRIES = 128;
    /// Largest multiplier an entry holds (14 bits).
    static constexpr uint16_t MAX_MULTIPLIER = 0x3FFF;

    bool perQp{true};             ///< PortControl: a CCTI per QP (true) or per SL (false)
    Time cctiTimer;               ///< CCTI_Timer (IBA units of 1.024 us; 0 = never decrease)
    uint8_t cctiIncrease{1};      ///< CCTI_Increase: added per BECN
    uint16_t cctiMin{0};          ///< CCTI_Min: the floor
    uint16_t triggerThreshold{0}; ///< Trigger_Threshold: a CCTI at or above it is logged
    std::vector<uint16_t> cct;    ///< entries (shift << 14 | multiplier); CCTI_Limit = size - 1

    /// @return CCTI_Limit, the last index of the table (0 for an empty table)
    uint16_t GetCctiLimit() const
    {
        return cct.empty() ? 0 : static_cast<uint16_t>(cct.size() - 1);
    }

    /**
     * @param shift 0..3
     * @param multiplier 0..MAX_MULTIPLIER
     * @return the 16-bit entry
     */
    static uint16_t Entry(uint8_t shift, uint16_t multiplier)
    {
        return static_cast<uint16_t>((shift & 0x3) << 14 | (multiplier & MAX_MULTIPLIER));
    }

    /**
     * @param entry a CCT entry
     * @return the delay after a packet, as a multiple of its transmission time
     */
    static double DelayFactor(uint16_t entry)
    {
        return static_cast<double>(entry & MAX_MULTIPLIER) /
               static_cast<double>(1u << (entry >> 14));
    }

    /**
     * The fine-grained table of the LLNL congestion-control study (its "Simula optimal"
     * OpenSM cc_cct): entry i is shift 3, multiplier floor(7 i^2 / (106^2 x 0.218)), i = 0..127.
     * Steps of 1/8 of a packet time; the first 19 entries do not delay; entry 127 sends at
     * 1 / (1 + 46/8) of the line rate. The default.
     * @return the table
     */
    static std::vector<uint16_t> DefaultCct();

    /**
     * The coarse table of the same study (its "Mellanox default"): entry i is shift 0,
     * multiplier floor(7 i^2 / (95^2 x 0.218)). Whole packet times: entry 17 already halves
     * the rate; entry 127 sends at 1/58 of it.
     * @return the table
     */
    static std::vector<uint16_t> CoarseCct();

    /**
     * Parse a table in OpenSM's cc_cct syntax: comma-separated "shift:multiplier" entries,
     * e.g. "0:0,0:1,1:3". The keywords "default" (or "simula") and "mellanox" give
     * DefaultCct() and CoarseCct().
     * @param text the table
     * @param what who asks (attribute name), for the message
     * @return the entries; aborts with a message naming the bad entry otherwise
     */
    static std::vector<uint16_t> ParseCct(const std::string& text, const std::string& what);
};

} // namespace ns3

#endif /* IB_CA_CONGESTION_SETTING_H */

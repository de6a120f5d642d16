/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_VL_ARBITER_H
#define IB_VL_ARBITER_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-link
 * @brief The VL arbiter of an output port (IBA vol. 1, 7.6.9).
 *
 * Two tables of (VL, weight) entries, high and low priority. The weight of an entry is
 * the number of 64-byte units the entry may send before the arbiter moves on; a packet
 * is started while the remaining weight is above zero and always completes. Entries of
 * weight 0, and VLs with nothing eligible, are skipped. The high table is served first;
 * the Limit of High Priority caps the bytes (in 4 KB units) the high table may send while
 * the low table has something eligible: 0 lets one high packet through, 255 is unbounded.
 * VL15 is not arbitrated here; the port sends it ahead of everything.
 *
 * Select() is O(number of entries) in the worst case and does no allocation: it runs
 * once per transmitted packet. What Select reads is in the object's first 22 bytes (the
 * two walks hold their current entry, so the tables are read only when a walk moves to
 * another entry): IbNetDevice puts them in a cache line it reads for every packet
 * anyway.
 */
class IbVlArbiter
{
  public:
    /// One table entry.
    struct Entry
    {
        uint8_t vl;     ///< virtual lane 0..14
        uint8_t weight; ///< weight in 64-byte units, 0 = entry disabled
    };

    IbVlArbiter();

    /**
     * Parse an OpenSM-style table, "VL:weight,VL:weight,...". The empty string is an
     * empty table.
     * @param text the table
     * @param [out] table the entries, on success
     * @param [out] error what is wrong, on failure
     * @return true on success
     */
    static bool ParseTable(const std::string& text, std::vector<Entry>& table, std::string& error);
    /**
     * @param table a table
     * @return it in OpenSM syntax
     */
    static std::string FormatTable(const std::vector<Entry>& table);

    /// @param table the high-priority table (at most 64 entries)
    void SetHighTable(const std::vector<Entry>& table);
    /// @param table the low-priority table (at most 64 entries)
    void SetLowTable(const std::vector<Entry>& table);
    /// @param limit the Limit of High Priority, in 4 KB units (255 = unbounded)
    void SetLimitOfHighPriority(uint8_t limit);
    /// @return the high-priority table
    const std::vector<Entry>& GetHighTable() const;
    /// @return the low-priority table
    const std::vector<Entry>& GetLowTable() const;
    /// @return the Limit of High Priority
    uint8_t GetLimitOfHighPriority() const;

    /**
     * Choose the VL to transmit next and charge its entry for the packet.
     * @param eligible bit v set when VL v (0..14) has a head packet that may be sent now
     * @param headBlocks headBlocks[v] = size of VL v's head packet in 64-byte blocks
     * @return the chosen VL, or -1 if no table entry names an eligible VL
     */
    int Select(uint16_t eligible, const uint16_t* headBlocks);

    /// Forget the position in both tables (for example at link up).
    void Reset();

  private:
    /// State of the walk through one table.
    struct Walk
    {
        uint16_t mask{0};     ///< VLs named by an entry of non-zero weight
        uint8_t n{0};         ///< entries in the table (at most 64)
        uint8_t index{0};     ///< current entry
        uint8_t vl{0};        ///< its VL
        uint8_t weight{0};    ///< its weight
        int16_t remaining{0}; ///< weight left in the current entry, 64-byte units (> 0 or 0)
    };

    /**
     * Move a walk to the table's next entry and load its weight (a table of one entry
     * is not read).
     * @param w the walk
     * @param table its table
     */
    static void Advance(Walk& w, const Entry* table);

    /**
     * Pick from one table and charge the entry.
     * @param w the table walk
     * @param table its table
     * @param eligible eligible VLs
     * @param headBlocks head packet sizes
     * @return the VL, or -1
     */
    static int Pick(Walk& w, const Entry* table, uint16_t eligible, const uint16_t* headBlocks);
    /**
     * Load a table as set and restart its walk.
     * @param w the walk
     * @param entries the table as set
     * @param table where Select reads it
     */
    static void Load(Walk& w, const std::vector<Entry>& entries, std::array<Entry, 64>& table);

    // What every Select reads, together (one cache line of the port); then the tables,
    // of which Select reads only the current entry.
    Walk m_high;                         //!< walk through the high-priority table
    Walk m_low;                          //!< walk through the low-priority table
    uint32_t m_highBytes;                //!< bytes the high table sent since low's turn (capped)
    uint8_t m_limit;                     //!< Limit of High Priority (4 KB units)
    bool m_lowTurnDue;                   //!< the high limit was reached: low next if it can
    std::array<Entry, 64> m_highTable{}; //!< high-priority table, inside the port
    std::array<Entry, 64> m_lowTable{};  //!< low-priority table, inside the port
    std::vector<Entry> m_highEntries;    //!< high-priority table as set (GetHighTable)
    std::vector<Entry> m_lowEntries;     //!< low-priority table as set (GetLowTable)
};

} // namespace ns3

#endif /* IB_VL_ARBITER_H */

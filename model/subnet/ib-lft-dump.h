/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_LFT_DUMP_H
#define IB_LFT_DUMP_H

#include "ib-topology.h"

#include "ns3/ib-routing-engine.h"

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief Writes and reads linear forwarding tables in the text layout ibroute and
 * dump_fts print, which OpenSM's "file" routing engine loads as an opensm-lfts.dump
 * (OpenSM's own dump_lfts output, with decimal ranges and "#" comments, is read too).
 *
 * Per switch:
 *
 *     Unicast lids [0x0-0x1f] of switch Lid 13 guid 0xb8599f0300fc6de4 ('leaf-0'):
 *     0x0005 001 : (Channel Adapter portguid 0xec0d9a03007d7d0b: 'r-dcs96 HCA-2')
 *     0x000d 000 : (Switch portguid 0xb8599f0300fc6de4: 'leaf-0')
 *     2 lids dumped
 *
 * one entry per routed LID (the switch's own LID goes to port 0). Port GUIDs are derived
 * from node GUIDs (PortGuid()). The reader accepts this and the OpenSM variants: "[0-31]"
 * ranges, entries with "#" instead of " : (...)", ibroute's "Lid Out Destination" and
 * "Port Info" header lines, "valid lids dumped" trailers, blank lines and "#" comments.
 */
class IbLftDump
{
  public:
    /**
     * Write every switch's LFT.
     * @param os where to write
     * @param problem topology and LIDs
     * @param tables the tables
     */
    static void Write(std::ostream& os,
                      const IbRoutingProblem& problem,
                      const IbRoutingTables& tables);

    /**
     * Read LFTs. Switches are matched by node GUID; every switch of the fabric must have a
     * section. LIDs not listed get IbRoutingTables::NO_ROUTE; tables.sl is cleared.
     * @param is where to read
     * @param sourceName file name for messages
     * @param problem topology and LIDs
     * @param [out] tables the tables read
     * @param [out] error "<file>:<line>: what is wrong; expected what", on failure
     * @return true on success
     */
    static bool Read(std::istream& is,
                     const std::string& sourceName,
                     const IbRoutingProblem& problem,
                     IbRoutingTables& tables,
                     std::string* error);

    /**
     * The port GUID written for a port: a switch's node GUID (all its ports share port
     * 0's GUID), a CA port's node GUID + port - 1.
     * @param node the node
     * @param port the port
     * @return the port GUID
     */
    static uint64_t PortGuid(const IbTopology::Node& node, uint8_t port);
};

} // namespace ns3

#endif /* IB_LFT_DUMP_H */

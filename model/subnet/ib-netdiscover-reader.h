/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_NETDISCOVER_READER_H
#define IB_NETDISCOVER_READER_H

#include "ib-topology.h"

#include <istream>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief Reads a fabric description in `ibnetdiscover` text format, or in ibsim's
 * simplified form of it, into an IbTopology.
 *
 * Accepted input (one item per line; leading blanks and a trailing CR are ignored):
 * - `# ...` comment lines, and blank lines (a blank line ends a node block).
 * - `key=value` lines. `switchguid=0x...(...)` and `caguid=0x...` (or `hcaguids=`) give
 *   the GUID of the next Switch or Ca node; `vendid=`, `devid=`, `sysimgguid=` and other
 *   keys are ignored. Such a line also ends a node block.
 * - Node headers `Switch <nports> "<id>" [# "<desc>" ...]`, `Ca <nports> "<id>" ...` and
 *   `Hca <nports> "<id>" ...` (ibsim). `Rt` (router) nodes are refused with an error.
 *   `<id>` is the name other lines use to refer to the node ("S-<guid>", "H-<guid>", or
 *   any ibsim name). The description (quoted text after '#', or the unquoted comment up
 *   to " lid "/" lmc "/" base port "/" enhanced port ") is stored in Node::name; without
 *   one the id is used. The GUID comes from a preceding switchguid=/caguid= line, else
 *   from the 16 hex digits of an "S-<guid>"/"H-<guid>" id, else it is generated.
 * - Port lines, inside a node block: `[p] "<peer id>"[q] # ...` (switch ports) and
 *   `[p](portguid) "<peer id>"[q](portguid) # ...` (CA ports). Optional `[ext N]` after
 *   a port number and `(hex)` port GUIDs (also after a space, as for a peer CA) are
 *   skipped. ibsim options `w=<bits>` (IBA LinkWidthEnabled bits, as ibsim's parser reads
 *   them: 1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x, the widest set wins; ibsim's example
 *   file's "w=(1|4|12)" disagrees with its parser for 4) and `s=<speed>` (SDR..XDR, or the
 *   IBA LinkSpeed code 1, 2 or 4 = SDR, DDR, QDR) may follow the peer; `e=` is refused.
 * - The grouping lines of `ibnetdiscover -g` ("Chassis N (guid ...)", "Hostname: ...",
 *   "Non-Chassis Nodes") are skipped.
 *
 * Per-link speed and width come from a `<width>x<speed>` word in the port line's
 * comment (e.g. `4xHDR`, `1xSDR`, `12xQDR`, `4xFDR10`; text in quotes is skipped), else
 * from the w=/s= options. **When a line gives neither, the link is EDR 4x**
 * (IbLinkRate::EDR, width 4). A word ibnetdiscover printed for a width or speed it did
 * not know (`4x???`, `??x???`) is an error.
 *
 * Cables are normally listed from both ends: they are connected once, and the two
 * descriptions must agree (each end names the other's node and port; speeds and widths
 * agree where both ends give them). A cable listed from one end only is accepted.
 * Nodes may be referenced before their block (the file is read in two passes).
 * SHARP Aggregation Nodes, which ibnetdiscover lists as channel adapters whose
 * description contains "Aggregation Node" (on a switch's internal port: 41 on HDR
 * Quantum, 65 on NDR), are left out with their cables: they are no hosts, and the module
 * models ANs inside its switches (SharpHelper).
 * Node levels are left at -1.
 *
 * Every error gives `<source>:<line>: <what was found>; expected <what>`; nothing in the
 * input can make the reader crash or read past the end of a line.
 */
class IbNetDiscoverReader
{
  public:
    /**
     * Read a topology file.
     * @param fileName path of the file; it is also the source name in error messages
     * @param [out] out the fabric; replaced only on success
     * @param [out] error what is wrong (may be nullptr)
     * @return true on success
     */
    static bool Read(const std::string& fileName, IbTopology& out, std::string* error);

    /**
     * Parse a topology from a stream.
     * @param in the text
     * @param sourceName name used in error messages (e.g. the file name)
     * @param [out] out the fabric; replaced only on success
     * @param [out] error what is wrong (may be nullptr)
     * @return true on success
     */
    static bool Parse(std::istream& in,
                      const std::string& sourceName,
                      IbTopology& out,
                      std::string* error);
};

} // namespace ns3

#endif /* IB_NETDISCOVER_READER_H */

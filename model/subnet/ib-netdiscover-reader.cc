/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-netdiscover-reader.h"

#include "ns3/log.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbNetDiscoverReader");

namespace
{

/// Largest port count a node may declare (IbTopology's limit).
constexpr uint32_t kMaxPorts = 254;

/// One port line, as read in the first pass.
struct PortDesc
{
    bool present{false};                      ///< the port has a line
    std::string peerId;                       ///< peer node id as written
    uint32_t peerPort{0};                     ///< peer port number
    bool hasSpeed{false};                     ///< the line gives a speed
    IbLinkRate::Speed speed{IbLinkRate::EDR}; ///< speed, if given
    bool hasWidth{false};                     ///< the line gives a width
    uint8_t width{4};                         ///< width, if given
    uint32_t line{0};                         ///< line number
    uint64_t ownGuid{0};  ///< "(guid)" after this port's number: its port GUID (0 = none)
    uint64_t peerGuid{0}; ///< "(guid)" after the peer's port: the peer port's GUID (0 = none)
};

/// One node block, as read in the first pass.
struct NodeRec
{
    IbTopology::NodeType type{IbTopology::CA}; ///< kind
    std::string id;                            ///< quoted id ("S-...", "Hca1")
    std::string desc;                          ///< node description ("" = none)
    uint32_t nports{0};                        ///< declared number of ports
    uint64_t guid{0};                          ///< GUID, 0 = to be generated
    uint32_t line{0};                          ///< header line number
    std::vector<PortDesc> ports;               ///< index = port number
};

/**
 * Bounds-checked reading position in one line.
 */
class Cursor
{
  public:
    /**
     * @param s the line (must outlive the cursor)
     */
    explicit Cursor(const std::string& s)
        : m_s(s),
          m_pos(0)
    {
    }

    /// @return true at the end of the line
    bool AtEnd() const
    {
        return m_pos >= m_s.size();
    }

    /**
     * Skip white space, but only if @p ch follows it.
     * @param ch the character
     */
    void SkipSpaceBefore(char ch)
    {
        std::size_t p = m_pos;
        while (p < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[p])))
        {
            ++p;
        }
        if (p < m_s.size() && m_s[p] == ch)
        {
            m_pos = p;
        }
    }

    /// @return the current character, or '\0' at the end
    char Peek() const
    {
        return AtEnd() ? '\0' : m_s[m_pos];
    }

    /// Move one character on (not past the end).
    void Advance()
    {
        if (!AtEnd())
        {
            ++m_pos;
        }
    }

    /// Skip blanks.
    void SkipSpace()
    {
        while (!AtEnd() && std::isspace(static_cast<unsigned char>(m_s[m_pos])))
        {
            ++m_pos;
        }
    }

    /**
     * @param prefix text
     * @return true if the rest of the line starts with @p prefix
     */
    bool StartsWith(const std::string& prefix) const
    {
        return m_s.compare(std::min(m_pos, m_s.size()), prefix.size(), prefix) == 0;
    }

    /// @return the rest of the line
    std::string Rest() const
    {
        return AtEnd() ? std::string() : m_s.substr(m_pos);
    }

    /**
     * Read up to (not including) the first character for which @p stop is true.
     * @tparam Pred bool(char)
     * @param stop predicate
     * @return the text read
     */
    template <typename Pred>
    std::string ReadUntil(Pred stop)
    {
        const size_t start = m_pos;
        while (!AtEnd() && !stop(m_s[m_pos]))
        {
            ++m_pos;
        }
        return m_s.substr(start, m_pos - start);
    }

  private:
    const std::string& m_s; //!< the line
    size_t m_pos;           //!< current position
};

/**
 * @param s text
 * @return @p s cut to 40 characters
 */
std::string
Excerpt(const std::string& s)
{
    return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}

/**
 * @param s text
 * @return true if @p s is non-empty and all decimal digits
 */
bool
AllDigits(const std::string& s)
{
    if (s.empty())
    {
        return false;
    }
    for (char c : s)
    {
        if (!std::isdigit(static_cast<unsigned char>(c)))
        {
            return false;
        }
    }
    return true;
}

/**
 * @param s text
 * @param [out] value the value, if @p s is 1..16 hexadecimal digits
 * @return true on success
 */
bool
ParseHex(const std::string& s, uint64_t& value)
{
    if (s.empty() || s.size() > 16)
    {
        return false;
    }
    value = 0;
    for (char c : s)
    {
        const auto u = static_cast<unsigned char>(c);
        if (!std::isxdigit(u))
        {
            return false;
        }
        const int d = std::isdigit(u) ? u - '0' : std::tolower(u) - 'a' + 10;
        value = (value << 4) | static_cast<uint64_t>(d);
    }
    return true;
}

/**
 * @param s all-digit text
 * @return its value, saturated at 999999
 */
uint32_t
SmallNumber(const std::string& s)
{
    uint32_t v = 0;
    for (char c : s)
    {
        v = v * 10 + static_cast<uint32_t>(c - '0');
        if (v > 999999)
        {
            return 999999;
        }
    }
    return v;
}

/**
 * @param r a node
 * @return e.g. `a port 1..36 of switch "S-..."`
 */
std::string
PortRange(const NodeRec& r)
{
    return "a port 1.." + std::to_string(r.nports) + " of " +
           (r.type == IbTopology::SWITCH ? "switch" : "channel adapter") + " \"" + r.id + "\"";
}

/**
 * @param hasWidth the width is given
 * @param width the width
 * @param hasSpeed the speed is given
 * @param speed the speed
 * @return e.g. "4xHDR" (4x and EDR where not given)
 */
std::string
LinkText(bool hasWidth, uint8_t width, bool hasSpeed, IbLinkRate::Speed speed)
{
    return (hasWidth ? std::to_string(width) : std::string("4")) + "x" +
           (hasSpeed ? IbLinkRate::SpeedName(speed) : "EDR");
}

/// The two passes over one input.
class Parser
{
  public:
    /**
     * @param source name for error messages
     * @param error where errors go (may be nullptr)
     */
    Parser(const std::string& source, std::string* error)
        : m_source(source),
          m_error(error)
    {
    }

    /**
     * @param in the text
     * @param [out] out the fabric
     * @return true on success
     */
    bool Run(std::istream& in, IbTopology& out)
    {
        std::string line;
        uint32_t lineNo = 0;
        bool more = true;
        while (more)
        {
            ++lineNo;
            bool tooLong = false;
            more = NextLine(in, line, tooLong);
            if (tooLong)
            {
                return Fail(lineNo,
                            "a line of more than " + std::to_string(kMaxLine) + " bytes",
                            "an ibnetdiscover or ibsim topology file, whose lines are short");
            }
            if (lineNo == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0)
            {
                line.erase(0, 3); // a UTF-8 byte-order mark
            }
            if (!more && line.empty())
            {
                --lineNo;
                break;
            }
            if (!ParseLine(line, lineNo))
            {
                return false;
            }
        }
        if (m_recs.empty())
        {
            return Fail(lineNo == 0 ? 1 : lineNo,
                        "no Switch, Ca or Hca node in the input",
                        "at least one node block");
        }
        IbTopology topo;
        if (!Build(topo))
        {
            return false;
        }
        out = WithoutAggregationNodes(topo);
        NS_LOG_INFO(m_source << ": " << topo.GetNNodes() << " nodes, " << topo.GetNLinks()
                             << " links");
        return true;
    }

  private:
    /// Longest line read (ibnetdiscover's are well under 1 KiB).
    static constexpr size_t kMaxLine = 65536;

    /**
     * Read one line ending in LF, CRLF or a lone CR (or the end of the input).
     * @param in the text
     * @param [out] line the line, without its end
     * @param [out] tooLong set if the line exceeds kMaxLine (reading stops)
     * @return false once the input has ended (@p line then holds what came last)
     */
    static bool NextLine(std::istream& in, std::string& line, bool& tooLong)
    {
        line.clear();
        tooLong = false;
        std::streambuf* sb = in.rdbuf();
        for (;;)
        {
            const int ch = sb->sbumpc();
            if (ch == std::char_traits<char>::eof())
            {
                in.setstate(std::ios::eofbit);
                return false;
            }
            if (ch == '\n')
            {
                return true;
            }
            if (ch == '\r')
            {
                if (sb->sgetc() == '\n')
                {
                    sb->sbumpc();
                }
                return true;
            }
            if (line.size() >= kMaxLine)
            {
                tooLong = true;
                return false;
            }
            line.push_back(static_cast<char>(ch));
        }
    }

    /**
     * Record an error.
     * @param line line number
     * @param found what was found
     * @param expected what was expected
     * @return false
     */
    bool Fail(uint32_t line, const std::string& found, const std::string& expected)
    {
        if (m_error)
        {
            *m_error =
                m_source + ":" + std::to_string(line) + ": " + found + "; expected " + expected;
        }
        return false;
    }

    /**
     * First pass over one line.
     * @param text the line
     * @param line its number
     * @return false on error
     */
    bool ParseLine(const std::string& text, uint32_t line)
    {
        Cursor c(text);
        c.SkipSpace();
        if (c.AtEnd())
        {
            m_current = -1; // a blank line ends a block
            return true;
        }
        if (c.Peek() == '#')
        {
            return true;
        }
        if (c.Peek() == '[')
        {
            if (m_current < 0)
            {
                return Fail(line,
                            "port line \"" + Excerpt(c.Rest()) + "\" outside a node block",
                            "a Switch, Ca or Hca line before it (a blank line ends a block)");
            }
            return ParsePortLine(c, line, m_recs[m_current]);
        }
        const std::string word = c.ReadUntil(
            [](char ch) { return !(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'); });
        if (word == "Switch" || word == "Ca" || word == "Hca" || word == "Rt")
        {
            if (!c.AtEnd() && !std::isspace(static_cast<unsigned char>(c.Peek())))
            {
                return Unrecognised(text, line);
            }
            if (word == "Rt")
            {
                return Fail(line,
                            "router node \"" + Excerpt(text) + "\"",
                            "Switch, Ca or Hca nodes (routers are not supported)");
            }
            return ParseHeader(c, line, word);
        }
        c.SkipSpace();
        if (!word.empty() && c.Peek() == '=')
        {
            c.Advance();
            m_current = -1;
            return ParseKeyValue(word, c, line);
        }
        // ibnetdiscover -g (grouping) adds "Chassis N (guid 0x...)", "Hostname: <name>" and
        // "Non-Chassis Nodes" lines between the node blocks: they carry nothing the
        // topology needs.
        if (word == "Chassis" || (word == "Hostname" && c.Peek() == ':') ||
            (word == "Non" && c.Rest().rfind("-Chassis Nodes", 0) == 0))
        {
            m_current = -1;
            return true;
        }
        if (word == "include" || word == "do" || word == "module")
        {
            return Fail(line,
                        "ibsim directive '" + word + "'",
                        "a self-contained topology (include/do/module are not supported)");
        }
        return Unrecognised(text, line);
    }

    /**
     * @param text the line
     * @param line its number
     * @return false, with an error
     */
    bool Unrecognised(const std::string& text, uint32_t line)
    {
        return Fail(line,
                    "unrecognised line \"" + Excerpt(text) + "\"",
                    "a Switch/Ca/Hca header, a port line \"[p] ...\", a key=value line or a "
                    "# comment");
    }

    /**
     * A key=value line.
     * @param key the key
     * @param c cursor after '='
     * @param line line number
     * @return false on error
     */
    bool ParseKeyValue(const std::string& key, Cursor& c, uint32_t line)
    {
        const bool sw = key == "switchguid";
        const bool ca = key == "caguid" || key == "hcaguids";
        if (!sw && !ca)
        {
            return true; // vendid, devid, sysimgguid, ibsim settings: not needed
        }
        c.SkipSpace();
        std::string value = c.ReadUntil(
            [](char ch) { return ch == '(' || std::isspace(static_cast<unsigned char>(ch)); });
        std::string hex = value;
        if (hex.size() > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
        {
            hex = hex.substr(2);
        }
        uint64_t guid = 0;
        if (!ParseHex(hex, guid) || guid == 0)
        {
            return Fail(line,
                        "GUID '" + Excerpt(value) + "' in '" + key + "='",
                        "a non-zero hexadecimal GUID such as 0xb8599f0300fc6de4");
        }
        (sw ? m_pendingSwitchGuid : m_pendingCaGuid) = guid;
        return true;
    }

    /**
     * Read a node description after '#'.
     * @param c cursor after '#'
     * @param line line number
     * @param [out] desc the description
     * @return false on error
     */
    bool ParseDescription(Cursor& c, uint32_t line, std::string& desc)
    {
        c.SkipSpace();
        if (c.Peek() == '"')
        {
            return ParseQuoted(c, line, "node description", desc);
        }
        desc = c.Rest();
        for (const char* stop : {" enhanced port ", " base port ", " lid ", " lmc "})
        {
            const std::string padded = " " + desc;
            const size_t at = padded.find(stop);
            if (at != std::string::npos)
            {
                desc = at == 0 ? std::string() : desc.substr(0, at - 1);
            }
        }
        while (!desc.empty() && std::isspace(static_cast<unsigned char>(desc.back())))
        {
            desc.pop_back();
        }
        return true;
    }

    /**
     * Read a quoted string.
     * @param c cursor at the opening quote
     * @param line line number
     * @param what what the string is, for messages
     * @param [out] s the text between the quotes
     * @return false on error
     */
    bool ParseQuoted(Cursor& c, uint32_t line, const std::string& what, std::string& s)
    {
        c.Advance(); // the opening quote
        s = c.ReadUntil([](char ch) { return ch == '"'; });
        if (c.AtEnd())
        {
            return Fail(line,
                        "missing closing quote in " + what + " \"" + Excerpt(s),
                        "a closing '\"' on the same line");
        }
        c.Advance();
        for (size_t i = 0; i < s.size(); ++i)
        {
            const unsigned char ch = static_cast<unsigned char>(s[i]);
            if (ch < 0x20 || ch == 0x7f)
            {
                std::ostringstream os;
                os << "a control character (byte 0x" << std::hex << std::setw(2)
                   << std::setfill('0') << unsigned(ch) << ") at character " << std::dec << i + 1
                   << " of the " << what;
                return Fail(line, os.str(), "printable text between the quotes");
            }
        }
        return true;
    }

    /**
     * A node header; the keyword is read.
     * @param c cursor after the keyword
     * @param line line number
     * @param kw the keyword
     * @return false on error
     */
    bool ParseHeader(Cursor& c, uint32_t line, const std::string& kw)
    {
        NodeRec r;
        r.type = kw == "Switch" ? IbTopology::SWITCH : IbTopology::CA;
        r.line = line;
        c.SkipSpace();
        const std::string count = c.ReadUntil(
            [](char ch) { return ch == '"' || std::isspace(static_cast<unsigned char>(ch)); });
        if (count.empty())
        {
            return Fail(line,
                        "'" + kw + "' header without a port count",
                        "'" + kw + " <nports> \"<name>\"'");
        }
        if (!AllDigits(count))
        {
            return Fail(line,
                        "port count '" + Excerpt(count) + "' in '" + kw + " " + Excerpt(count) +
                            "'",
                        "a number of ports 1.." + std::to_string(kMaxPorts));
        }
        r.nports = SmallNumber(count);
        if (r.nports < 1 || r.nports > kMaxPorts)
        {
            return Fail(line,
                        "port count '" + count + "' in '" + kw + " " + count + "'",
                        "a number of ports 1.." + std::to_string(kMaxPorts));
        }
        c.SkipSpace();
        if (c.Peek() != '"')
        {
            return Fail(line,
                        c.AtEnd() ? "header ends after the port count"
                                  : "'" + Excerpt(c.Rest()) + "' after the port count",
                        "a quoted node name, e.g. " + kw + " " + count + " \"S-0002c903000a0b0c\"");
        }
        if (!ParseQuoted(c, line, "node name", r.id))
        {
            return false;
        }
        if (r.id.empty())
        {
            return Fail(line, "an empty node name \"\"", "a non-empty quoted node name");
        }
        c.SkipSpace();
        if (c.Peek() == '#')
        {
            c.Advance();
            if (!ParseDescription(c, line, r.desc))
            {
                return false;
            }
        }
        else if (!c.AtEnd())
        {
            return Fail(line,
                        "'" + Excerpt(c.Rest()) + "' after the node name",
                        "'# <description>' or the end of the line");
        }
        auto known = m_byId.find(r.id);
        if (known != m_byId.end())
        {
            return Fail(line,
                        "node \"" + r.id + "\" defined again",
                        "unique node names (first defined at line " +
                            std::to_string(m_recs[known->second].line) + ")");
        }
        // GUID: switchguid=/caguid= line, else the 16 hex digits of "S-<guid>"/"H-<guid>".
        // A GUID line belongs to the header right after it: the other kind's is dropped.
        const bool sw = r.type == IbTopology::SWITCH;
        const uint64_t pending = sw ? m_pendingSwitchGuid : m_pendingCaGuid;
        const uint64_t other = sw ? m_pendingCaGuid : m_pendingSwitchGuid;
        m_pendingSwitchGuid = 0;
        m_pendingCaGuid = 0;
        if (other != 0)
        {
            std::ostringstream os;
            os << (sw ? "caguid=0x" : "switchguid=0x") << std::hex << other << " before the "
               << (sw ? "switch" : "channel adapter") << " header of \"" << r.id << "\"";
            return Fail(line,
                        os.str(),
                        std::string(sw ? "switchguid=" : "caguid=") + " before a " +
                            (sw ? "Switch" : "Ca/Hca") +
                            " header (or the GUID line of the node it belongs to)");
        }
        uint64_t idGuid = 0;
        if (r.id.size() == 18 && (r.id[0] == 'S' || r.id[0] == 'H') && r.id[1] == '-')
        {
            ParseHex(r.id.substr(2), idGuid);
        }
        if (pending != 0 && idGuid != 0 && pending != idGuid)
        {
            std::ostringstream os;
            os << "node \"" << r.id << "\" after " << (sw ? "switchguid" : "caguid") << "=0x"
               << std::hex << pending;
            return Fail(line, os.str(), "the GUID line and the node's name to give the same GUID");
        }
        r.guid = pending != 0 ? pending : idGuid;
        if (r.guid != 0)
        {
            auto dup = m_byGuid.find(r.guid);
            if (dup != m_byGuid.end())
            {
                std::ostringstream os;
                os << "GUID 0x" << std::hex << r.guid << " of \"" << r.id << "\" already used by \""
                   << m_recs[dup->second].id << "\" (line " << std::dec << m_recs[dup->second].line
                   << ")";
                return Fail(line, os.str(), "a unique GUID per node");
            }
            m_byGuid[r.guid] = m_recs.size();
        }
        r.ports.resize(r.nports + 1);
        m_byId[r.id] = m_recs.size();
        m_recs.push_back(r);
        m_current = static_cast<int32_t>(m_recs.size() - 1);
        return true;
    }

    /**
     * Read "[n]" (cursor at '[').
     * @param c cursor
     * @param line line number
     * @param expected expected range text, for messages
     * @param [out] value the number
     * @return false on error
     */
    bool ParsePortNumber(Cursor& c, uint32_t line, const std::string& expected, uint32_t& value)
    {
        c.Advance(); // '['
        const std::string num = c.ReadUntil([](char ch) { return ch == ']'; });
        if (c.AtEnd())
        {
            return Fail(line,
                        "unterminated port number \"[" + Excerpt(num) + "\"",
                        "a closing ']' after the port number");
        }
        c.Advance();
        if (!AllDigits(num))
        {
            return Fail(line,
                        "port number '" + Excerpt(num) + "' in \"[" + Excerpt(num) + "]\"",
                        expected);
        }
        value = SmallNumber(num);
        return true;
    }

    /**
     * Skip optional "[ext N]" and "(portguid)" after a port number.
     * @param c cursor
     * @param line line number
     * @return false on error
     */
    bool SkipPortExtras(Cursor& c, uint32_t line, uint64_t& guid)
    {
        guid = 0;
        for (;;)
        {
            // ibnetdiscover prints a peer CA's port GUID after a space: "[1] (guid)"
            c.SkipSpaceBefore('(');
            if (c.StartsWith("[ext"))
            {
                const std::string ext = c.ReadUntil([](char ch) { return ch == ']'; });
                if (c.AtEnd())
                {
                    return Fail(line,
                                "unterminated \"" + Excerpt(ext) + "\"",
                                "a closing ']' after the external port number");
                }
                c.Advance();
            }
            else if (c.Peek() == '(')
            {
                c.Advance();
                const std::string g = c.ReadUntil([](char ch) { return ch == ')'; });
                if (c.AtEnd())
                {
                    return Fail(line,
                                "unterminated port GUID \"(" + Excerpt(g) + "\"",
                                "a closing ')' after the port GUID");
                }
                c.Advance();
                uint64_t v;
                std::string hex = g;
                if (hex.size() > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
                {
                    hex = hex.substr(2);
                }
                if (!ParseHex(hex, v))
                {
                    return Fail(line,
                                "port GUID \"(" + Excerpt(g) + ")\"",
                                "a hexadecimal port GUID in parentheses");
                }
                guid = v;
            }
            else
            {
                return true;
            }
        }
    }

    /**
     * Look for a "<width>x<speed>" word in a port line's comment (quoted text skipped).
     * @param c cursor after '#'
     * @param line line number
     * @param d the port description to complete
     * @return false on error
     */
    bool ParseLinkComment(Cursor& c, uint32_t line, PortDesc& d)
    {
        for (;;)
        {
            c.SkipSpace();
            if (c.AtEnd())
            {
                return true;
            }
            if (c.Peek() == '"')
            {
                std::string ignored;
                if (!ParseQuoted(c, line, "peer description", ignored))
                {
                    return false;
                }
                continue;
            }
            const std::string word = c.ReadUntil(
                [](char ch) { return ch == '"' || std::isspace(static_cast<unsigned char>(ch)); });
            size_t x = 0;
            while (x < word.size() &&
                   (std::isdigit(static_cast<unsigned char>(word[x])) || word[x] == '?'))
            {
                ++x;
            }
            if (x > 0 && x + 1 < word.size() && (word[x] == 'x' || word[x] == 'X') &&
                word.find('?') != std::string::npos)
            {
                // ibnetdiscover prints "??" for a width and "???" for a speed it does not
                // know (XDR in older versions, or a switch whose port 0 it could not read).
                return Fail(line,
                            "link '" + Excerpt(word) +
                                "': ibnetdiscover did not know this link's width or speed",
                            "the link's real width and speed in its place, e.g. 4xHDR or 4xXDR "
                            "(the model will not guess it)");
            }
            if (x == 0 || x + 1 >= word.size() || (word[x] != 'x' && word[x] != 'X') ||
                !std::isalpha(static_cast<unsigned char>(word[x + 1])))
            {
                continue; // not a link word (e.g. "lid", "13", "0x2c9")
            }
            const std::string w = word.substr(0, x);
            const std::string s = word.substr(x + 1);
            bool alnum = s.size() <= 8;
            for (char ch : s)
            {
                alnum = alnum && std::isalnum(static_cast<unsigned char>(ch));
            }
            if (!alnum)
            {
                continue;
            }
            uint8_t width;
            IbLinkRate::Speed speed;
            if (!IbLinkRate::ParseWidth(w, width))
            {
                return Fail(line,
                            "link width '" + w + "x' in '" + word + "'",
                            "a width of 1x, 2x, 4x, 8x or 12x");
            }
            if (!IbLinkRate::ParseSpeed(s, speed))
            {
                return Fail(line,
                            "link speed '" + s + "' in '" + word + "'",
                            "one of " + IbLinkRate::ValidSpeedNames());
            }
            d.hasWidth = d.hasSpeed = true;
            d.width = width;
            d.speed = speed;
        }
    }

    /**
     * A port line (cursor at '[').
     * @param c cursor
     * @param line line number
     * @param r the node block it belongs to
     * @return false on error
     */
    bool ParsePortLine(Cursor& c, uint32_t line, NodeRec& r)
    {
        uint32_t p = 0;
        if (!ParsePortNumber(c, line, PortRange(r), p))
        {
            return false;
        }
        const std::string pText = "[" + std::to_string(p) + "]";
        if (p < 1 || p > r.nports)
        {
            return Fail(line,
                        "port number '" + std::to_string(p) + "' in \"" + pText + "\"",
                        PortRange(r));
        }
        if (r.ports[p].present)
        {
            return Fail(line,
                        "port " + std::to_string(p) + " of \"" + r.id + "\" described again",
                        "each port once (first described at line " +
                            std::to_string(r.ports[p].line) + ")");
        }
        uint64_t ownGuid = 0;
        if (!SkipPortExtras(c, line, ownGuid))
        {
            return false;
        }
        PortDesc d;
        d.line = line;
        d.ownGuid = ownGuid;
        c.SkipSpace();
        if (c.Peek() != '"')
        {
            return Fail(line,
                        c.AtEnd() ? "port line ends after \"" + pText + "\""
                                  : "'" + Excerpt(c.Rest()) + "' after \"" + pText + "\"",
                        "the peer's quoted node name and port, e.g. \"S-0002c903000a0b0c\"[1]");
        }
        if (!ParseQuoted(c, line, "peer node name", d.peerId))
        {
            return false;
        }
        if (d.peerId.empty())
        {
            return Fail(line, "an empty peer node name \"\"", "a non-empty quoted node name");
        }
        if (c.Peek() != '[')
        {
            return Fail(
                line,
                c.AtEnd() ? "port line ends after the peer name \"" + d.peerId + "\""
                          : "'" + Excerpt(c.Rest()) + "' after the peer name \"" + d.peerId + "\"",
                "the peer's port number right after its name, e.g. \"" + d.peerId + "\"[1]");
        }
        const std::string peerRange =
            "a port 1.." + std::to_string(kMaxPorts) + " of \"" + d.peerId + "\"";
        if (!ParsePortNumber(c, line, peerRange, d.peerPort))
        {
            return false;
        }
        if (d.peerPort < 1 || d.peerPort > kMaxPorts)
        {
            return Fail(line,
                        "port number '" + std::to_string(d.peerPort) + "' in \"[" +
                            std::to_string(d.peerPort) + "]\"",
                        peerRange);
        }
        if (!SkipPortExtras(c, line, d.peerGuid))
        {
            return false;
        }
        // ibsim options, then the comment.
        for (;;)
        {
            c.SkipSpace();
            if (c.AtEnd())
            {
                break;
            }
            if (c.Peek() == '#')
            {
                c.Advance();
                if (!ParseLinkComment(c, line, d))
                {
                    return false;
                }
                break;
            }
            const std::string opt = c.ReadUntil(
                [](char ch) { return ch == '#' || std::isspace(static_cast<unsigned char>(ch)); });
            if (opt.compare(0, 2, "w=") == 0)
            {
                // As ibsim reads it: IBA LinkWidthEnabled bits, 1 = 1x, 2 = 4x, 4 = 8x,
                // 8 = 12x, 16 = 2x; the widest enabled width wins.
                const std::string v = opt.substr(2);
                const uint32_t bits = AllDigits(v) && v.size() <= 2 ? SmallNumber(v) : 0;
                if (bits < 1 || bits > 31)
                {
                    return Fail(line,
                                "width option '" + Excerpt(opt) + "'",
                                "w=<1..31>, IBA LinkWidthEnabled bits as ibsim reads them (1 = "
                                "1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x; e.g. w=2 for a 4x link)");
                }
                d.width = (bits & 8) ? 12 : (bits & 4) ? 8 : (bits & 2) ? 4 : (bits & 16) ? 2 : 1;
                d.hasWidth = true;
            }
            else if (opt.compare(0, 2, "s=") == 0)
            {
                const std::string v = opt.substr(2);
                if (v == "1" || v == "2" || v == "3" || v == "4" || v == "5" || v == "6" ||
                    v == "7")
                {
                    // IBA LinkSpeed bits: 1 SDR, 2 DDR, 4 QDR; the highest bit set wins.
                    const int code = v[0] - '0';
                    d.speed = code >= 4   ? IbLinkRate::QDR
                              : code >= 2 ? IbLinkRate::DDR
                                          : IbLinkRate::SDR;
                }
                else if (!IbLinkRate::ParseSpeed(v, d.speed))
                {
                    return Fail(line,
                                "speed option '" + Excerpt(opt) + "'",
                                "s=<1..7> (IBA LinkSpeed bits) or s=<" +
                                    IbLinkRate::ValidSpeedNames() + ">");
                }
                d.hasSpeed = true;
            }
            else if (opt.compare(0, 2, "e=") == 0)
            {
                return Fail(line,
                            "ibsim extended-speed option '" + Excerpt(opt) + "'",
                            "the link's width and speed in the line's comment instead, e.g. "
                            "\"# 4xHDR\" (e= is not read)");
            }
            else
            {
                return Fail(line,
                            "unexpected text '" + Excerpt(opt) + "' after the peer's port",
                            "w=<width>, s=<speed>, a '# comment' or the end of the line");
            }
        }
        d.present = true;
        r.ports[p] = d;
        return true;
    }

    /**
     * Second pass: create the nodes and the cables.
     * @param [out] t the fabric
     * @return false on error
     */
    bool Build(IbTopology& t)
    {
        uint64_t next = 0x0002c90300000001ULL;
        // The GUIDs the file gives, a CA's with one per port (port p is node + p - 1 in
        // LFT dumps): generated ones avoid them all.
        std::set<uint64_t> given;
        std::map<std::string, uint32_t> descCount; // nodes per description
        for (const auto& r : m_recs)
        {
            ++descCount[r.desc];
            const uint32_t span = r.type == IbTopology::CA ? r.nports : 1;
            for (uint64_t k = 0; r.guid != 0 && k < span; ++k)
            {
                given.insert(r.guid + k);
            }
        }
        for (auto& r : m_recs)
        {
            if (r.guid == 0)
            {
                // One GUID per port of a CA (port p is node GUID + p - 1 in LFT dumps),
                // none given to another node in the file.
                const uint32_t span = r.type == IbTopology::CA ? r.nports : 1;
                auto taken = [&given, span](uint64_t first) {
                    for (uint64_t g = first; g < first + span; ++g)
                    {
                        if (given.count(g))
                        {
                            return true;
                        }
                    }
                    return false;
                };
                while (taken(next))
                {
                    ++next;
                }
                r.guid = next;
                next += span;
            }
            // Two nodes of one description (switches of the same model often share it)
            // get their ids added, so that messages, statistics and LFT dumps tell them
            // apart.
            std::string name = r.desc.empty() ? r.id : r.desc;
            if (!r.desc.empty() && descCount[r.desc] > 1)
            {
                name += " (" + r.id + ")";
            }
            if (r.type == IbTopology::SWITCH)
            {
                t.AddSwitch(r.nports, name, r.guid);
            }
            else
            {
                t.AddCa(r.nports, name, r.guid);
            }
        }
        for (uint32_t a = 0; a < m_recs.size(); ++a)
        {
            const NodeRec& ra = m_recs[a];
            for (uint32_t p = 1; p <= ra.nports; ++p)
            {
                const PortDesc& d = ra.ports[p];
                if (d.present && !Link(t, a, p))
                {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Leave out the SHARP Aggregation Nodes. A switch with SHARP (NVIDIA Quantum) shows
     * its AN to ibnetdiscover as a channel adapter, "Mellanox Technologies Aggregation
     * Node", on an internal port (41 on HDR Quantum, 65 on NDR). It is no host: kept,
     * it would send and receive the traffic of every host pattern, and a fat tree with
     * one on a spine would not look like one. The module models ANs inside its switches
     * (SharpHelper); the switch port it sat on stays uncabled.
     * @param full the fabric as the file lists it
     * @return the fabric without them (@p full itself if it has none)
     */
    IbTopology WithoutAggregationNodes(const IbTopology& full) const
    {
        std::vector<int32_t> newIndex(full.GetNNodes(), -1);
        IbTopology t;
        for (uint32_t i = 0; i < full.GetNNodes(); ++i)
        {
            const IbTopology::Node& node = full.GetNode(i);
            // One port, cabled to a switch (its internal port), and the description.
            const bool an = node.type == IbTopology::CA && node.ports.size() == 2 &&
                            node.ports[1].peerNode >= 0 &&
                            full.GetNode(node.ports[1].peerNode).type == IbTopology::SWITCH &&
                            m_recs[i].desc.find("Aggregation Node") != std::string::npos;
            if (an)
            {
                NS_LOG_INFO(m_source << ":" << m_recs[i].line << ": \"" << m_recs[i].desc
                                     << "\" is a SHARP Aggregation Node, not a host: left out");
                continue;
            }
            newIndex[i] =
                static_cast<int32_t>(node.type == IbTopology::SWITCH
                                         ? t.AddSwitch(node.ports.size() - 1, node.name, node.guid)
                                         : t.AddCa(node.ports.size() - 1, node.name, node.guid));
        }
        if (t.GetNNodes() == full.GetNNodes())
        {
            return full;
        }
        for (uint32_t a = 0; a < full.GetNNodes(); ++a)
        {
            const auto& ports = full.GetNode(a).ports;
            for (uint32_t p = 1; p < ports.size(); ++p)
            {
                const int32_t b = ports[p].peerNode;
                if (b < 0 || newIndex[a] < 0 || newIndex[b] < 0 ||
                    std::make_pair(uint32_t(b), uint32_t(ports[p].peerPort)) < std::make_pair(a, p))
                {
                    continue; // uncabled, an AN's cable, or seen from the other end
                }
                std::string err;
                NS_ABORT_MSG_UNLESS(t.Connect(newIndex[a],
                                              static_cast<uint8_t>(p),
                                              newIndex[b],
                                              ports[p].peerPort,
                                              ports[p].speed,
                                              ports[p].width,
                                              &err),
                                    m_source << ": a cable of the file could not be copied: "
                                             << err);
            }
        }
        return t;
    }

    /**
     * Cable port @p p of node @p a as its line describes, checking the other end.
     * @param t the fabric
     * @param a node index
     * @param p port number
     * @return false on error
     */
    bool Link(IbTopology& t, uint32_t a, uint32_t p)
    {
        const NodeRec& ra = m_recs[a];
        const PortDesc& d = ra.ports[p];
        auto it = m_byId.find(d.peerId);
        if (it == m_byId.end())
        {
            return Fail(d.line,
                        "unknown node \"" + d.peerId + "\" as the peer of port " +
                            std::to_string(p) + " of \"" + ra.id + "\"",
                        "a node defined by a Switch, Ca or Hca line in this file");
        }
        const uint32_t b = it->second;
        const NodeRec& rb = m_recs[b];
        const uint32_t q = d.peerPort;
        if (q > rb.nports)
        {
            return Fail(d.line,
                        "port number '" + std::to_string(q) + "' in \"[" + std::to_string(q) +
                            "]\" after \"" + rb.id + "\"",
                        PortRange(rb));
        }
        if (a == b && p == q)
        {
            return Fail(d.line,
                        "port " + std::to_string(p) + " of \"" + ra.id + "\" cabled to itself",
                        "a cable to another port");
        }
        if (a == b)
        {
            return Fail(d.line,
                        "port " + std::to_string(p) + " of \"" + ra.id +
                            "\" cabled to its own port " + std::to_string(q),
                        "a cable to another node (a loop back to the same node carries no "
                        "traffic a subnet manager routes)");
        }
        const PortDesc& e = rb.ports[q];
        if (e.present && d.peerGuid != 0 && e.ownGuid != 0 && d.peerGuid != e.ownGuid)
        {
            std::ostringstream os;
            os << "port GUID (0x" << std::hex << d.peerGuid << ") for \"" << rb.id << "\"["
               << std::dec << q << "], which line " << e.line << " gives as (0x" << std::hex
               << e.ownGuid << ")";
            return Fail(d.line, os.str(), "the same port GUID at both ends of the cable");
        }
        if (e.present)
        {
            if (e.peerId != ra.id || e.peerPort != p)
            {
                const std::string dText = "port " + std::to_string(p) + " of \"" + ra.id +
                                          "\" cabled to \"" + rb.id + "\"[" + std::to_string(q) +
                                          "]";
                const std::string eText = "port " + std::to_string(q) + " of \"" + rb.id +
                                          "\" cabled to \"" + e.peerId + "\"[" +
                                          std::to_string(e.peerPort) + "]";
                if (e.line > d.line)
                {
                    return Fail(e.line,
                                eText,
                                "\"" + ra.id + "\"[" + std::to_string(p) + "] as line " +
                                    std::to_string(d.line) +
                                    " says (both ends of a cable must agree)");
                }
                return Fail(d.line,
                            dText,
                            "a peer port that names it back, but line " + std::to_string(e.line) +
                                " has " + eText);
            }
            if ((d.hasSpeed && e.hasSpeed && d.speed != e.speed) ||
                (d.hasWidth && e.hasWidth && d.width != e.width))
            {
                const PortDesc& later = e.line > d.line ? e : d;
                const PortDesc& earlier = e.line > d.line ? d : e;
                return Fail(
                    later.line,
                    "link " + LinkText(later.hasWidth, later.width, later.hasSpeed, later.speed),
                    LinkText(earlier.hasWidth, earlier.width, earlier.hasSpeed, earlier.speed) +
                        " as the other end says at line " + std::to_string(earlier.line) +
                        " (both ends of a cable must agree)");
            }
            if (t.GetNode(a).ports[p].peerNode >= 0)
            {
                return true; // already cabled from the other end
            }
        }
        else if (t.GetNode(b).ports[q].peerNode >= 0)
        {
            const auto& other = t.GetNode(b).ports[q];
            return Fail(d.line,
                        "port " + std::to_string(q) + " of \"" + rb.id + "\" already cabled to \"" +
                            m_recs[other.peerNode].id + "\"[" + std::to_string(other.peerPort) +
                            "]",
                        "each port in one cable only");
        }
        const IbLinkRate::Speed speed = d.hasSpeed   ? d.speed
                                        : e.hasSpeed ? e.speed
                                                     : IbLinkRate::EDR;
        const uint8_t width = d.hasWidth ? d.width : e.hasWidth ? e.width : 4;
        std::string err;
        if (!t.Connect(a, static_cast<uint8_t>(p), b, static_cast<uint8_t>(q), speed, width, &err))
        {
            return Fail(d.line, "a cable that cannot be made (" + err + ")", "a valid cable");
        }
        return true;
    }

    std::string m_source;                   //!< name for messages
    std::string* m_error;                   //!< error output
    std::vector<NodeRec> m_recs;            //!< node blocks, in file order
    std::map<std::string, uint32_t> m_byId; //!< node id -> index in m_recs
    std::map<uint64_t, uint32_t> m_byGuid;  //!< given GUID -> index in m_recs
    int32_t m_current{-1};                  //!< block being read, -1 = none
    uint64_t m_pendingSwitchGuid{0};        //!< from switchguid=, for the next switch
    uint64_t m_pendingCaGuid{0};            //!< from caguid=, for the next CA
};

} // namespace

bool
IbNetDiscoverReader::Read(const std::string& fileName, IbTopology& out, std::string* error)
{
    NS_LOG_FUNCTION(fileName);
    std::ifstream in(fileName);
    if (!in)
    {
        if (error)
        {
            *error = fileName + ":0: cannot open the file (" + std::strerror(errno) +
                     "); expected a readable ibnetdiscover or ibsim topology file";
        }
        return false;
    }
    return Parse(in, fileName, out, error);
}

bool
IbNetDiscoverReader::Parse(std::istream& in,
                           const std::string& sourceName,
                           IbTopology& out,
                           std::string* error)
{
    NS_LOG_FUNCTION(sourceName);
    Parser parser(sourceName, error);
    return parser.Run(in, out);
}

} // namespace ns3

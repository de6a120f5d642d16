/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-example-options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>

namespace ns3
{

void
IbOptions::Add(CommandLine& cmd, const std::string& name, const std::string& attributePath)
{
    cmd.AddValue(name, attributePath);
}

void
IbOptions::Fail(const std::string& message)
{
    std::cout.flush();
    std::cerr << "error: " << message << std::endl;
    std::exit(1);
}

uint64_t
IbOptions::ParseInteger(const std::string& name,
                        const std::string& text,
                        bool isSigned,
                        uint64_t max)
{
    const std::string range =
        isSigned ? "a whole number" : "a whole number from 0 to " + std::to_string(max);
    size_t i = 0;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || (text[i] == '-' && isSigned)))
    {
        negative = text[i] == '-';
        ++i;
    }
    if (i == text.size() || text.find_first_not_of("0123456789", i) != std::string::npos)
    {
        Fail("--" + name + "=" + text + " is not " + range);
    }
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str() + i, nullptr, 10);
    const uint64_t limit = negative ? max + 1 : max;
    if (errno == ERANGE || v > limit)
    {
        Fail("--" + name + "=" + text + " is out of range: give " + range +
             (isSigned ? " of magnitude at most " + std::to_string(max) : ""));
    }
    return negative ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
}

double
IbOptions::ParseReal(const std::string& name, const std::string& text)
{
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    {
        Fail("--" + name + "=" + text + " is not a number");
    }
    return v;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target: the ibnetdiscover / ibsim topology reader (IbNetDiscoverReader::Parse).
 * Any input must give a topology or a "file:line: ...; expected ..." message, never a
 * crash, an abort or undefined behaviour. utils/fuzz.sh builds and runs it.
 */

#include "ns3/ib-netdiscover-reader.h"
#include "ns3/ib-topology.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    ns3::IbTopology t;
    std::string error;
    if (!ns3::IbNetDiscoverReader::Parse(in, "fuzz.ibnd", t, &error) &&
        error.compare(0, 10, "fuzz.ibnd:") != 0)
    {
        std::abort(); // a refusal must name the file and line
    }
    return 0;
}

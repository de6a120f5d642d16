/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target: the training workload file reader (ASTRA-sim 1.0 / SimAI text,
 * TrainingWorkloadFile::Parse). Any input must be read or refused with a "source:line:"
 * message, never a crash, an abort or undefined behaviour.
 */

#include "ns3/training-workload-file.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    ns3::TrainingWorkloadFile w;
    std::string error;
    if (!w.Parse(in, "fuzz.txt", &error) && error.compare(0, 9, "fuzz.txt:") != 0)
    {
        std::abort(); // a refusal must name the source and line
    }
    return 0;
}

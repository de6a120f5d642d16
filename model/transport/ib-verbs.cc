/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-verbs.h"

#include "ns3/log.h"

#include <array>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbVerbs");

const char*
IbWcStatusName(IbWcStatus s)
{
    switch (s)
    {
    case IbWcStatus::SUCCESS:
        return "SUCCESS";
    case IbWcStatus::LOC_LEN_ERR:
        return "LOC_LEN_ERR";
    case IbWcStatus::LOC_PROT_ERR:
        return "LOC_PROT_ERR";
    case IbWcStatus::WR_FLUSH_ERR:
        return "WR_FLUSH_ERR";
    case IbWcStatus::REM_ACCESS_ERR:
        return "REM_ACCESS_ERR";
    case IbWcStatus::REM_INV_REQ_ERR:
        return "REM_INV_REQ_ERR";
    case IbWcStatus::REM_OP_ERR:
        return "REM_OP_ERR";
    case IbWcStatus::RETRY_EXC_ERR:
        return "RETRY_EXC_ERR";
    case IbWcStatus::RNR_RETRY_EXC_ERR:
        return "RNR_RETRY_EXC_ERR";
    }
    return "UNKNOWN";
}

Time
IbRnrTimerValue(uint8_t code)
{
    // IBA table 45 (also listed for min_rnr_timer in the ibv_modify_qp man page), in
    // units of 10 us: code 0 is the longest wait, 655.36 ms; codes 1..31 grow roughly
    // geometrically from 0.01 ms to 491.52 ms.
    static const std::array<uint32_t, 32> tensOfUs = {
        65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,   32,
        48,    64,   96,   128,  192,  256,   384,   512,   768,   1024, 1536,
        2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
    return MicroSeconds(10 * static_cast<int64_t>(tensOfUs[code & 0x1F]));
}

Time
IbAckTimeoutValue(uint8_t timeout)
{
    if (timeout == 0)
    {
        return Time::Max();
    }
    // 4.096 us * 2^timeout, timeout 1..31.
    return NanoSeconds(static_cast<int64_t>(4096) << (timeout & 0x1F));
}

} // namespace ns3

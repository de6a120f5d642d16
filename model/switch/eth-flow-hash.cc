/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-flow-hash.h"

#include "ns3/ib-crc.h"

namespace ns3
{

uint32_t
EthFlowHash::Mix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

uint32_t
EthFlowHash::Crc32(uint32_t srcIp,
                   uint32_t dstIp,
                   uint16_t srcPort,
                   uint16_t dstPort,
                   uint8_t protocol,
                   uint32_t seed)
{
    const uint8_t b[13] = {static_cast<uint8_t>(srcIp >> 24),
                           static_cast<uint8_t>(srcIp >> 16),
                           static_cast<uint8_t>(srcIp >> 8),
                           static_cast<uint8_t>(srcIp),
                           static_cast<uint8_t>(dstIp >> 24),
                           static_cast<uint8_t>(dstIp >> 16),
                           static_cast<uint8_t>(dstIp >> 8),
                           static_cast<uint8_t>(dstIp),
                           static_cast<uint8_t>(srcPort >> 8),
                           static_cast<uint8_t>(srcPort),
                           static_cast<uint8_t>(dstPort >> 8),
                           static_cast<uint8_t>(dstPort),
                           protocol};
    return Mix(IbCrc::Crc32(b, sizeof(b)) ^ seed);
}

uint32_t
EthFlowHash::XorFold(uint32_t srcIp,
                     uint32_t dstIp,
                     uint16_t srcPort,
                     uint16_t dstPort,
                     uint8_t protocol,
                     uint32_t seed)
{
    uint32_t x = srcIp ^ dstIp ^ ((uint32_t(srcPort) << 16) | dstPort) ^ protocol ^ seed;
    x ^= x >> 16;
    return x & 0xFFFF;
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_FLOW_HASH_H
#define ETH_FLOW_HASH_H

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-switch
 * @brief The hash functions an EthSwitch spreads flows over an ECMP group with (static
 * functions only).
 *
 * Both read the IPv4 5-tuple (source and destination address, source and destination
 * port, protocol) and a per-switch seed, and return 32 bits; the switch takes the hash
 * modulo the group size.
 *
 * - Crc32: CRC-32 (IEEE 802.3 polynomial 0x04C11DB7, reflected, initial value and final
 *   XOR 0xFFFFFFFF) of the 13 tuple bytes in network order, then the seed XORed in and
 *   a non-linear 32-bit finalizer (xor-shift-multiply, as MurmurHash3's fmix32). The
 *   finalizer is what makes seeds decorrelate switches: a CRC is affine over GF(2), so a
 *   seed prepended to (or XORed into) the CRC's input changes every switch's hash by one
 *   constant XOR, and the low bits that pick a port in a power-of-two group stay the same
 *   function of the flow at every switch.
 * - XorFold: the tuple's words XORed together with the seed, folded to 16 bits: the cheap
 *   hash of simple switches. It is linear: between any two switches, a seed only flips
 *   fixed bits of every flow's hash, so in power-of-two groups the flows one switch sends
 *   to the next all make the same choice there, whatever the seeds (polarization); it is
 *   there to show that.
 */
class EthFlowHash
{
  public:
    /**
     * @param srcIp source IPv4 address
     * @param dstIp destination IPv4 address
     * @param srcPort UDP/TCP source port (0 for other protocols)
     * @param dstPort UDP/TCP destination port (0 for other protocols)
     * @param protocol IPv4 protocol number
     * @param seed the switch's seed
     * @return the Crc32 hash
     */
    static uint32_t Crc32(uint32_t srcIp,
                          uint32_t dstIp,
                          uint16_t srcPort,
                          uint16_t dstPort,
                          uint8_t protocol,
                          uint32_t seed);
    /**
     * @param srcIp source IPv4 address
     * @param dstIp destination IPv4 address
     * @param srcPort UDP/TCP source port
     * @param dstPort UDP/TCP destination port
     * @param protocol IPv4 protocol number
     * @param seed the switch's seed
     * @return the XorFold hash (16 bits)
     */
    static uint32_t XorFold(uint32_t srcIp,
                            uint32_t dstIp,
                            uint16_t srcPort,
                            uint16_t dstPort,
                            uint8_t protocol,
                            uint32_t seed);
    /**
     * The 32-bit finalizer: a bijection in which every input bit affects every output bit.
     * @param h a value
     * @return the mixed value
     */
    static uint32_t Mix(uint32_t h);
};

} // namespace ns3

#endif /* ETH_FLOW_HASH_H */

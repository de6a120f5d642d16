/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_QUEUE_PAIR_INTERNAL_H
#define IB_QUEUE_PAIR_INTERNAL_H

// What the three files of IbQueuePair share (ib-queue-pair.cc: state machine, posting,
// scheduling, packet building, receive and completions; ib-queue-pair-requester.cc;
// ib-queue-pair-responder.cc). Not for use outside them.

#include "ib-verbs.h"

#include "ns3/ib-packet.h"

#include <cstdint>
#include <sstream>
#include <string>

namespace ns3
{
namespace ib_qp_detail
{

/// PSNs are 24 bits.
constexpr uint32_t kPsnMask = 0xFFFFFF;
/// Half the PSN space: PSNs at least this far apart cannot be ordered.
constexpr uint32_t kPsnHalf = 0x800000;
/// Bytes of a UD receive buffer reserved for the GRH.
constexpr uint32_t kUdGrhBytes = 40;
/// Smallest number of atomics a responder remembers.
constexpr uint32_t kMinAtomicLog = 16;
/// Largest RC message (IBA: 2^31 bytes).
constexpr uint64_t kMaxMessage = 0x80000000ULL;
/// Bytes of LRH + BTH.
constexpr uint32_t kBaseHeaders = IbPacket::LRH_SIZE + IbPacket::BTH_SIZE;
/// Largest link headers (RoCEv2: Ethernet, IPv4, UDP) + BTH + extension headers of the
/// opcodes used (AtomicETH).
constexpr uint32_t kMaxHeaders = 42 + IbPacket::BTH_SIZE + 28;

/**
 * The UDP source port a RoCEv2 QP uses when none is given, derived from the two QP numbers
 * as Linux does for RoCE (an IPv6-style 20-bit flow label from the product of the QPNs,
 * folded into 14 bits and placed in 0xC000..0xFFFF): distinct QP pairs get distinct ports,
 * the entropy ECMP hashes on.
 * @param lqpn the local QP number
 * @param rqpn the remote QP number
 * @return the UDP source port
 */
inline uint16_t
RoceUdpSourcePort(uint32_t lqpn, uint32_t rqpn)
{
    uint64_t v = static_cast<uint64_t>(lqpn) * rqpn;
    v ^= v >> 20;
    v ^= v >> 40;
    const uint32_t label = static_cast<uint32_t>(v & 0xFFFFF);
    const uint32_t low = (label & 0x3FFF) ^ ((label & 0xFC000) >> 14);
    return static_cast<uint16_t>(low | 0xC000);
}

/**
 * @param lid a LID
 * @return "N (0xN)", as messages name a LID
 */
inline std::string
LidText(uint16_t lid)
{
    std::ostringstream os;
    os << lid << " (0x" << std::hex << lid << ")";
    return os.str();
}

/// Inbound message in progress at the responder.
enum InKind : uint8_t
{
    IN_NONE = 0,
    IN_SEND = 1,
    IN_WRITE = 2
};

/**
 * @param a a PSN
 * @param n an increment
 * @return a + n modulo 2^24
 */
inline uint32_t
PsnAdd(uint32_t a, uint32_t n)
{
    return (a + n) & kPsnMask;
}

/**
 * @param a a PSN
 * @param b a PSN
 * @return a - b as a signed 24-bit distance
 */
inline int32_t
PsnDiff(uint32_t a, uint32_t b)
{
    return static_cast<int32_t>(((a - b) & kPsnMask) << 8) >> 8;
}

/**
 * @param a a PSN
 * @param b a PSN
 * @return true if a comes before b
 */
inline bool
PsnLess(uint32_t a, uint32_t b)
{
    return PsnDiff(a, b) < 0;
}

/**
 * @param op a send WR opcode
 * @return the completion opcode it produces
 */
inline IbWcOpcode
WcOpcodeFor(IbWrOpcode op)
{
    switch (op)
    {
    case IbWrOpcode::SEND:
    case IbWrOpcode::SEND_WITH_IMM:
        return IbWcOpcode::SEND;
    case IbWrOpcode::RDMA_WRITE:
    case IbWrOpcode::RDMA_WRITE_WITH_IMM:
        return IbWcOpcode::RDMA_WRITE;
    case IbWrOpcode::RDMA_READ:
        return IbWcOpcode::RDMA_READ;
    case IbWrOpcode::ATOMIC_CMP_AND_SWP:
        return IbWcOpcode::COMP_SWAP;
    case IbWrOpcode::ATOMIC_FETCH_AND_ADD:
        return IbWcOpcode::FETCH_ADD;
    }
    return IbWcOpcode::SEND;
}

/**
 * @param len message bytes
 * @param mtu path MTU
 * @return packets (at least 1)
 */
inline uint32_t
PacketsFor(uint64_t len, uint32_t mtu)
{
    return len == 0 ? 1 : static_cast<uint32_t>((len + mtu - 1) / mtu);
}

/**
 * @param mtu a value
 * @return true if it is an IBA MTU
 */
inline bool
IsIbaMtu(uint32_t mtu)
{
    return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

} // namespace ib_qp_detail
} // namespace ns3

#endif // IB_QUEUE_PAIR_INTERNAL_H

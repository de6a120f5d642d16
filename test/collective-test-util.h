/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Shared by the collective and SHARP tests: reference reductions and checks.
 */

#ifndef COLLECTIVE_TEST_UTIL_H
#define COLLECTIVE_TEST_UTIL_H

#include "ns3/collective-communicator.h"
#include "ns3/collective-helper.h"
#include "ns3/collective-reduction.h"
#include "ns3/ib-fabric-helper.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{
namespace ibtest
{

/// One buffer per rank.
using Buffers = std::vector<std::vector<uint8_t>>;

/// Every element type.
inline const CollectiveDataType kTypes[] = {CollectiveDataType::INT8,
                                            CollectiveDataType::INT16,
                                            CollectiveDataType::INT32,
                                            CollectiveDataType::INT64,
                                            CollectiveDataType::FLOAT16,
                                            CollectiveDataType::BFLOAT16,
                                            CollectiveDataType::FLOAT32,
                                            CollectiveDataType::FLOAT64};

inline const CollectiveRedOp kOps[] = {CollectiveRedOp::SUM,
                                       CollectiveRedOp::PROD,
                                       CollectiveRedOp::MIN,
                                       CollectiveRedOp::MAX,
                                       CollectiveRedOp::BAND,
                                       CollectiveRedOp::BOR,
                                       CollectiveRedOp::BXOR};

/// An IB fabric with data-mode HCAs.
struct IbSetup
{
    IbFabric fabric;         ///< the fabric
    CollectiveHelper helper; ///< communicator factory
};

/**
 * Payload share of the wire bytes of a CollectiveIbTransport stream: fragments of
 * @p slot bytes in packets of @p mtu, the ImmDt of each fragment's last packet, and one
 * coalesced ACK per 16 packets in the same direction for the opposite flow.
 * @param slot the transport's SlotSize
 * @param mtu the path MTU
 * @return payload bytes / wire bytes
 */
double IbPayloadShare(uint32_t slot, uint32_t mtu = 4096);
/**
 * @param t a float type
 * @return its unit roundoff
 */
double Eps(CollectiveDataType t);
/**
 * @param t a float type
 * @param p an element
 * @return its value
 */
double GetF(CollectiveDataType t, const uint8_t* p);
/**
 * Store a value (rounded to the type).
 * @param t a float type
 * @param p where
 * @param v the value
 */
void PutF(CollectiveDataType t, uint8_t* p, double v);
/**
 * @param t an integer type
 * @param p an element
 * @return its value, sign-extended
 */
int64_t GetI(CollectiveDataType t, const uint8_t* p);
/**
 * Fill one buffer per rank with test values for @p op.
 * @param t type
 * @param op operator
 * @param n ranks
 * @param bytes bytes per buffer
 * @param seed random seed
 * @return the buffers
 */
Buffers MakeInputs(CollectiveDataType t,
                   CollectiveRedOp op,
                   uint32_t n,
                   uint64_t bytes,
                   uint32_t seed);
/**
 * Check results against the reference reduction of the inputs (integers exactly, floats
 * within 2 n eps sum|x|: any reduction tree rounds n - 1 partial results).
 * @param t type
 * @param op operator
 * @param in the inputs
 * @param out the results to check (one pointer per rank checked)
 * @param off first byte to check
 * @param bytes bytes to check
 * @param what description for failures
 * @return number of wrong elements (at most a few are reported)
 */
uint64_t CheckReduce(CollectiveDataType t,
                     CollectiveRedOp op,
                     const Buffers& in,
                     const std::vector<const uint8_t*>& out,
                     uint64_t off,
                     uint64_t bytes,
                     const std::string& what);
/**
 * @param s the setup to fill
 * @param hosts host count (two-level fat tree of radix 4, or 8 for more than 8 hosts)
 * @param dataMode real bytes
 */
void BuildIb(IbSetup& s, uint32_t hosts, bool dataMode = true);
/**
 * Run every operator on every type with one communicator and check the results.
 * @param comm the communicator
 * @param count elements
 * @param what description
 */
void AllOpsAllTypes(Ptr<CollectiveCommunicator> comm, uint64_t count, const std::string& what);

} // namespace ibtest
} // namespace ns3

#endif /* COLLECTIVE_TEST_UTIL_H */

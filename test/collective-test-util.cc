/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Shared by the collective and SHARP tests: reference reductions and checks.
 */

#include "collective-test-util.h"

#include "ns3/boolean.h"
#include "ns3/ib-packet.h"
#include "ns3/ib-topology-builder.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>

namespace ns3
{
namespace ibtest
{

/**
 * @param t a float type
 * @return its unit roundoff
 */
double
IbPayloadShare(uint32_t slot, uint32_t mtu)
{
    const uint32_t pkts = (slot + mtu - 1) / mtu;
    const double wire = (pkts - 1) * IbPacket::WireSize(mtu, 0, false) +
                        IbPacket::WireSize(slot - (pkts - 1) * mtu, 4, false) +
                        IbPacket::WireSize(0, 4, false) * std::ceil(double(pkts) / 16);
    return slot / wire;
}

double
Eps(CollectiveDataType t)
{
    switch (t)
    {
    case CollectiveDataType::FLOAT16:
        return std::ldexp(1.0, -11);
    case CollectiveDataType::BFLOAT16:
        return std::ldexp(1.0, -8);
    case CollectiveDataType::FLOAT32:
        return std::ldexp(1.0, -24);
    default:
        return std::ldexp(1.0, -53);
    }
}

/**
 * @param t a float type
 * @param p an element
 * @return its value
 */
double
GetF(CollectiveDataType t, const uint8_t* p)
{
    uint16_t h;
    float f;
    double d;
    switch (t)
    {
    case CollectiveDataType::FLOAT16:
        std::memcpy(&h, p, 2);
        return CollectiveReduction::HalfToFloat(h);
    case CollectiveDataType::BFLOAT16:
        std::memcpy(&h, p, 2);
        return CollectiveReduction::Bf16ToFloat(h);
    case CollectiveDataType::FLOAT32:
        std::memcpy(&f, p, 4);
        return f;
    default:
        std::memcpy(&d, p, 8);
        return d;
    }
}

/**
 * Store a value (rounded to the type).
 * @param t a float type
 * @param p where
 * @param v the value
 */
void
PutF(CollectiveDataType t, uint8_t* p, double v)
{
    uint16_t h;
    float f = static_cast<float>(v);
    switch (t)
    {
    case CollectiveDataType::FLOAT16:
        h = CollectiveReduction::FloatToHalf(f);
        std::memcpy(p, &h, 2);
        break;
    case CollectiveDataType::BFLOAT16:
        h = CollectiveReduction::FloatToBf16(f);
        std::memcpy(p, &h, 2);
        break;
    case CollectiveDataType::FLOAT32:
        std::memcpy(p, &f, 4);
        break;
    default:
        std::memcpy(p, &v, 8);
        break;
    }
}

/**
 * @param t an integer type
 * @param p an element
 * @return its value, sign-extended
 */
int64_t
GetI(CollectiveDataType t, const uint8_t* p)
{
    switch (t)
    {
    case CollectiveDataType::INT8:
        return static_cast<int8_t>(p[0]);
    case CollectiveDataType::INT16: {
        int16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    case CollectiveDataType::INT32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    default: {
        int64_t v;
        std::memcpy(&v, p, 8);
        return v;
    }
    }
}

/**
 * Fill one buffer per rank with test values for @p op.
 * @param t type
 * @param op operator
 * @param n ranks
 * @param bytes bytes per buffer
 * @param seed random seed
 * @return the buffers
 */
Buffers
MakeInputs(CollectiveDataType t, CollectiveRedOp op, uint32_t n, uint64_t bytes, uint32_t seed)
{
    std::mt19937_64 rng(seed);
    Buffers b(n, std::vector<uint8_t>(bytes));
    const uint32_t es = CollectiveReduction::SizeOf(t);
    for (auto& buf : b)
    {
        for (uint64_t i = 0; i < bytes / es; ++i)
        {
            if (CollectiveReduction::IsInteger(t))
            {
                uint64_t v = rng();
                if (op == CollectiveRedOp::PROD)
                {
                    v = (v % 7) - 3; // keep some products from being zero mod 2^k
                }
                std::memcpy(buf.data() + i * es, &v, es);
            }
            else
            {
                const double u = std::uniform_real_distribution<double>(0, 1)(rng);
                const double v = op == CollectiveRedOp::PROD ? 0.5 + 1.5 * u : 2 * u - 1;
                PutF(t, buf.data() + i * es, v);
            }
        }
    }
    return b;
}

/**
 * Check every rank's result of an allreduce against the reference.
 * @param t type
 * @param op operator
 * @param in the inputs
 * @param out the results
 * @param off first byte to check
 * @param bytes bytes to check
 * @param what description for failures
 * @return number of wrong elements (at most a few are reported)
 */
uint64_t
CheckReduce(CollectiveDataType t,
            CollectiveRedOp op,
            const Buffers& in,
            const std::vector<const uint8_t*>& out,
            uint64_t off,
            uint64_t bytes,
            const std::string& what)
{
    const uint32_t n = in.size();
    const uint32_t es = CollectiveReduction::SizeOf(t);
    uint64_t bad = 0;
    for (uint64_t i = off; i < off + bytes; i += es)
    {
        if (CollectiveReduction::IsInteger(t))
        {
            // reference: the reduction applied in rank order, wrapping like the hardware
            std::vector<uint8_t> acc(in[0].begin() + i, in[0].begin() + i + es);
            for (uint32_t r = 1; r < n; ++r)
            {
                CollectiveReduction::Reduce(t, op, acc.data(), in[r].data() + i, 1);
            }
            // cross-check the library's element reduction with int64 arithmetic
            int64_t ref = GetI(t, in[0].data() + i);
            for (uint32_t r = 1; r < n; ++r)
            {
                const int64_t x = GetI(t, in[r].data() + i);
                switch (op)
                {
                case CollectiveRedOp::SUM:
                    ref = static_cast<int64_t>(uint64_t(ref) + uint64_t(x));
                    break;
                case CollectiveRedOp::PROD:
                    ref = static_cast<int64_t>(uint64_t(ref) * uint64_t(x));
                    break;
                case CollectiveRedOp::MIN:
                    ref = std::min(ref, x);
                    break;
                case CollectiveRedOp::MAX:
                    ref = std::max(ref, x);
                    break;
                case CollectiveRedOp::BAND:
                    ref &= x;
                    break;
                case CollectiveRedOp::BOR:
                    ref |= x;
                    break;
                case CollectiveRedOp::BXOR:
                    ref ^= x;
                    break;
                }
                std::vector<uint8_t> tmp(8);
                std::memcpy(tmp.data(), &ref, 8);
                ref = GetI(t, tmp.data()); // truncate to the type
            }
            for (uint32_t r = 0; r < out.size(); ++r)
            {
                const int64_t got = GetI(t, out[r] + i);
                if (got != ref || GetI(t, acc.data()) != ref)
                {
                    if (++bad <= 3)
                    {
                        ADD_FAILURE() << what << ": rank " << r << " element " << i / es << " = "
                                      << got << ", expected " << ref;
                    }
                }
            }
        }
        else
        {
            double exact = GetF(t, in[0].data() + i);
            double mag = std::fabs(exact);
            for (uint32_t r = 1; r < n; ++r)
            {
                const double x = GetF(t, in[r].data() + i);
                switch (op)
                {
                case CollectiveRedOp::SUM:
                    exact += x;
                    mag += std::fabs(x);
                    break;
                case CollectiveRedOp::PROD:
                    exact *= x;
                    mag = std::fabs(exact);
                    break;
                case CollectiveRedOp::MIN:
                    exact = std::min(exact, x);
                    break;
                case CollectiveRedOp::MAX:
                    exact = std::max(exact, x);
                    break;
                default:
                    break;
                }
            }
            // The library rounds n - 1 partial results to the type, each bounded by mag
            // (SUM: sum |x|; PROD: |product|, relative roundings), and the reference, in
            // double, rounds n - 1 times more: 2 n eps mag covers both. MIN and MAX are
            // exact. FLOAT16 also loses up to half a subnormal step per rounding.
            double bound = 0;
            if (op == CollectiveRedOp::SUM || op == CollectiveRedOp::PROD)
            {
                bound = 2.0 * n * Eps(t) * mag;
                if (t == CollectiveDataType::FLOAT16)
                {
                    bound += std::ldexp(1.0, -24) * n;
                }
            }
            for (uint32_t r = 0; r < out.size(); ++r)
            {
                const double got = GetF(t, out[r] + i);
                if (!(std::fabs(got - exact) <= bound))
                {
                    if (++bad <= 3)
                    {
                        ADD_FAILURE() << what << ": rank " << r << " element " << i / es << " = "
                                      << got << ", expected " << exact << " +- " << bound;
                    }
                }
                // Within the bound is not enough: every rank must hold the same bits.
                else if (r > 0 && std::memcmp(out[r] + i, out[0] + i, es) != 0)
                {
                    if (++bad <= 3)
                    {
                        ADD_FAILURE()
                            << what << ": rank " << r << " element " << i / es << " = " << got
                            << ", not bit for bit rank 0's " << GetF(t, out[0] + i);
                    }
                }
            }
        }
    }
    return bad;
}

/**
 * @param s the setup to fill
 * @param hosts host count (two-level fat tree of radix 4, or 8 for more than 8 hosts)
 * @param dataMode real bytes
 */
void
BuildIb(IbSetup& s, uint32_t hosts, bool dataMode)
{
    IbFabricHelper fh;
    s.fabric = fh.Build(IbTopologyBuilder::FatTree2Level(hosts > 8 ? 8 : 4, hosts));
    s.helper.SetHcaAttribute("DataMode", BooleanValue(dataMode));
}

/**
 * Run every operator on every type with one communicator and check the results.
 * @param comm the communicator
 * @param count elements
 * @param what description
 */
void
AllOpsAllTypes(Ptr<CollectiveCommunicator> comm, uint64_t count, const std::string& what)
{
    const uint32_t n = comm->GetNRanks();
    uint32_t seed = 1;
    for (CollectiveDataType t : kTypes)
    {
        for (CollectiveRedOp op : kOps)
        {
            if (!CollectiveReduction::IsValid(t, op))
            {
                continue;
            }
            CollectiveOpSpec spec;
            spec.count = count;
            spec.type = t;
            spec.op = op;
            const uint64_t bytes = count * CollectiveReduction::SizeOf(t);
            const Buffers in = MakeInputs(t, op, n, bytes, seed++);
            Buffers out = in;
            const Time d = CollectiveHelper::Run(comm, spec, &out);
            const std::string w = what + " " + CollectiveReduction::TypeName(t) + " " +
                                  CollectiveReduction::OpName(op);
            ASSERT_NE(d, Time::Max()) << w << " did not finish";
            std::vector<const uint8_t*> res;
            for (const auto& b : out)
            {
                res.push_back(b.data());
            }
            EXPECT_EQ(CheckReduce(t, op, in, res, 0, bytes, w), 0u) << w;
        }
    }
}

} // namespace ibtest
} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-reduction.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveReduction");

namespace
{

/**
 * Combine two values of an arithmetic type.
 * @param op operator (bitwise ones only reach here for integers)
 * @param a first operand
 * @param b second operand
 * @return a op b
 */
template <typename T>
T
Combine(CollectiveRedOp op, T a, T b)
{
    switch (op)
    {
    case CollectiveRedOp::SUM:
    case CollectiveRedOp::PROD: {
        const T r = static_cast<T>(op == CollectiveRedOp::SUM ? a + b : a * b);
        if constexpr (std::is_floating_point_v<T>)
        {
            // Of two NaNs the hardware keeps the first one's payload (and sign): recursive
            // doubling adds a to b on one rank and b to a on its partner, which would then
            // end with different bits. Every NaN result is the one quiet NaN.
            if (std::isnan(r))
            {
                return std::numeric_limits<T>::quiet_NaN();
            }
        }
        return r;
    }
    case CollectiveRedOp::MIN:
    case CollectiveRedOp::MAX:
        if constexpr (std::is_floating_point_v<T>)
        {
            // A NaN on either side gives NaN, whichever operand it is: std::min/max keep
            // it only as the first one, so the result would depend on the order in which
            // an algorithm or a SHARP tree combines contributions.
            if (std::isnan(a) || std::isnan(b))
            {
                return std::numeric_limits<T>::quiet_NaN();
            }
            // -0 and +0 compare equal, and std::min/max return the first: MIN gives -0 and
            // MAX +0 whatever the order (recursive doubling combines a with b on one rank
            // and b with a on its partner; both must end with the same bits).
            if (a == b)
            {
                const bool takeA = std::signbit(a) == (op == CollectiveRedOp::MIN);
                return takeA ? a : b;
            }
        }
        return op == CollectiveRedOp::MIN ? std::min(a, b) : std::max(a, b);
    default:
        break;
    }
    if constexpr (std::is_integral_v<T>)
    {
        switch (op)
        {
        case CollectiveRedOp::BAND:
            return static_cast<T>(a & b);
        case CollectiveRedOp::BOR:
            return static_cast<T>(a | b);
        case CollectiveRedOp::BXOR:
            return static_cast<T>(a ^ b);
        default:
            break;
        }
    }
    NS_ABORT_MSG("invalid reduction operator for this type");
    return a;
}

/**
 * Integer combine without signed-overflow undefined behaviour (wraps like the hardware).
 * @param op operator
 * @param a first operand
 * @param b second operand
 * @return a op b
 */
template <typename T>
T
CombineInt(CollectiveRedOp op, T a, T b)
{
    using U = std::make_unsigned_t<T>;
    // Arithmetic in an unsigned type at least as wide as unsigned int: narrower ones are
    // promoted to (signed) int, and 65533 * 65533 overflows it.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    if (op == CollectiveRedOp::SUM)
    {
        return static_cast<T>(static_cast<U>(W(static_cast<U>(a)) + W(static_cast<U>(b))));
    }
    if (op == CollectiveRedOp::PROD)
    {
        return static_cast<T>(static_cast<U>(W(static_cast<U>(a)) * W(static_cast<U>(b))));
    }
    return Combine<T>(op, a, b);
}

/**
 * Reduce arrays of a plain type.
 * @param op operator
 * @param dst accumulator
 * @param src operand
 * @param count elements
 */
template <typename T>
void
ReducePlain(CollectiveRedOp op, uint8_t* dst, const uint8_t* src, uint64_t count)
{
    for (uint64_t i = 0; i < count; ++i)
    {
        T a;
        T b;
        std::memcpy(&a, dst + i * sizeof(T), sizeof(T));
        std::memcpy(&b, src + i * sizeof(T), sizeof(T));
        T r;
        if constexpr (std::is_integral_v<T>)
        {
            r = CombineInt<T>(op, a, b);
        }
        else
        {
            r = Combine<T>(op, a, b);
        }
        std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
    }
}

/**
 * Reduce arrays of a 16-bit float format through float.
 * @param op operator
 * @param dst accumulator
 * @param src operand
 * @param count elements
 * @param toF to float
 * @param fromF from float
 */
void
Reduce16(CollectiveRedOp op,
         uint8_t* dst,
         const uint8_t* src,
         uint64_t count,
         float (*toF)(uint16_t),
         uint16_t (*fromF)(float))
{
    for (uint64_t i = 0; i < count; ++i)
    {
        uint16_t a;
        uint16_t b;
        std::memcpy(&a, dst + 2 * i, 2);
        std::memcpy(&b, src + 2 * i, 2);
        const uint16_t r = fromF(Combine<float>(op, toF(a), toF(b)));
        std::memcpy(dst + 2 * i, &r, 2);
    }
}

} // namespace

uint32_t
CollectiveReduction::SizeOf(CollectiveDataType t)
{
    switch (t)
    {
    case CollectiveDataType::INT8:
        return 1;
    case CollectiveDataType::INT16:
    case CollectiveDataType::FLOAT16:
    case CollectiveDataType::BFLOAT16:
        return 2;
    case CollectiveDataType::INT32:
    case CollectiveDataType::FLOAT32:
        return 4;
    case CollectiveDataType::INT64:
    case CollectiveDataType::FLOAT64:
        return 8;
    }
    return 1;
}

bool
CollectiveReduction::IsInteger(CollectiveDataType t)
{
    return t == CollectiveDataType::INT8 || t == CollectiveDataType::INT16 ||
           t == CollectiveDataType::INT32 || t == CollectiveDataType::INT64;
}

bool
CollectiveReduction::IsValid(CollectiveDataType t, CollectiveRedOp op)
{
    const bool bitwise =
        op == CollectiveRedOp::BAND || op == CollectiveRedOp::BOR || op == CollectiveRedOp::BXOR;
    return !bitwise || IsInteger(t);
}

void
CollectiveReduction::Reduce(CollectiveDataType t,
                            CollectiveRedOp op,
                            uint8_t* dst,
                            const uint8_t* src,
                            uint64_t count)
{
    NS_ABORT_MSG_UNLESS(IsValid(t, op),
                        "reduction operator " << OpName(op) << " is not defined on type "
                                              << TypeName(t)
                                              << " (bitwise operators need an integer type)");
    switch (t)
    {
    case CollectiveDataType::INT8:
        ReducePlain<int8_t>(op, dst, src, count);
        break;
    case CollectiveDataType::INT16:
        ReducePlain<int16_t>(op, dst, src, count);
        break;
    case CollectiveDataType::INT32:
        ReducePlain<int32_t>(op, dst, src, count);
        break;
    case CollectiveDataType::INT64:
        ReducePlain<int64_t>(op, dst, src, count);
        break;
    case CollectiveDataType::FLOAT16:
        Reduce16(op, dst, src, count, &HalfToFloat, &FloatToHalf);
        break;
    case CollectiveDataType::BFLOAT16:
        Reduce16(op, dst, src, count, &Bf16ToFloat, &FloatToBf16);
        break;
    case CollectiveDataType::FLOAT32:
        ReducePlain<float>(op, dst, src, count);
        break;
    case CollectiveDataType::FLOAT64:
        ReducePlain<double>(op, dst, src, count);
        break;
    }
}

std::string
CollectiveReduction::TypeName(CollectiveDataType t)
{
    switch (t)
    {
    case CollectiveDataType::INT8:
        return "int8";
    case CollectiveDataType::INT16:
        return "int16";
    case CollectiveDataType::INT32:
        return "int32";
    case CollectiveDataType::INT64:
        return "int64";
    case CollectiveDataType::FLOAT16:
        return "half";
    case CollectiveDataType::BFLOAT16:
        return "bfloat16";
    case CollectiveDataType::FLOAT32:
        return "float";
    case CollectiveDataType::FLOAT64:
        return "double";
    }
    return "?";
}

std::string
CollectiveReduction::OpName(CollectiveRedOp op)
{
    switch (op)
    {
    case CollectiveRedOp::SUM:
        return "sum";
    case CollectiveRedOp::PROD:
        return "prod";
    case CollectiveRedOp::MIN:
        return "min";
    case CollectiveRedOp::MAX:
        return "max";
    case CollectiveRedOp::BAND:
        return "band";
    case CollectiveRedOp::BOR:
        return "bor";
    case CollectiveRedOp::BXOR:
        return "bxor";
    }
    return "?";
}

bool
CollectiveReduction::ParseType(const std::string& name, CollectiveDataType& t)
{
    static const std::pair<const char*, CollectiveDataType> names[] = {
        {"int8", CollectiveDataType::INT8},
        {"int16", CollectiveDataType::INT16},
        {"int32", CollectiveDataType::INT32},
        {"int64", CollectiveDataType::INT64},
        {"half", CollectiveDataType::FLOAT16},
        {"fp16", CollectiveDataType::FLOAT16},
        {"bfloat16", CollectiveDataType::BFLOAT16},
        {"bf16", CollectiveDataType::BFLOAT16},
        {"float", CollectiveDataType::FLOAT32},
        {"fp32", CollectiveDataType::FLOAT32},
        {"double", CollectiveDataType::FLOAT64},
        {"fp64", CollectiveDataType::FLOAT64}};
    for (const auto& [n, v] : names)
    {
        if (name == n)
        {
            t = v;
            return true;
        }
    }
    return false;
}

bool
CollectiveReduction::ParseOp(const std::string& name, CollectiveRedOp& op)
{
    for (uint8_t i = 0; i <= static_cast<uint8_t>(CollectiveRedOp::BXOR); ++i)
    {
        if (OpName(static_cast<CollectiveRedOp>(i)) == name)
        {
            op = static_cast<CollectiveRedOp>(i);
            return true;
        }
    }
    return false;
}

float
CollectiveReduction::HalfToFloat(uint16_t h)
{
    const uint32_t sign = (h >> 15) & 1;
    const int32_t exp = (h >> 10) & 0x1F;
    const uint32_t mant = h & 0x3FF;
    float v;
    if (exp == 0)
    {
        v = std::ldexp(static_cast<float>(mant), -24);
    }
    else if (exp == 31)
    {
        v = mant == 0 ? INFINITY : NAN;
    }
    else
    {
        v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
    }
    return sign ? -v : v;
}

uint16_t
CollectiveReduction::FloatToHalf(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    const int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF);
    uint32_t mant = x & 0x7FFFFF;
    if (exp == 0xFF)
    {
        return sign | 0x7C00 | (mant ? 0x200 : 0);
    }
    // value = 1.mant * 2^(exp-127); half exponent e = exp - 127 + 15
    int32_t e = exp - 112;
    if (e >= 31)
    {
        return sign | 0x7C00;
    }
    uint32_t full; // significand with the implicit bit, 24 bits
    int32_t shift; // right shift to reach the 10-bit half mantissa (plus implicit bit)
    if (e <= 0)
    {
        if (exp == 0 || e < -10)
        {
            return sign; // too small even for a subnormal half (or a float subnormal)
        }
        full = mant | 0x800000;
        shift = 14 - e; // subnormal: 13 + (1 - e)
        e = 0;
    }
    else
    {
        full = mant | 0x800000;
        shift = 13;
    }
    uint32_t q = full >> shift;
    const uint32_t rem = full & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
    {
        ++q;
    }
    if (e == 0)
    {
        // subnormal: q holds the mantissa; a carry into bit 10 makes the smallest normal
        return sign | static_cast<uint16_t>(q);
    }
    // normal: q = 1.xxx in 11 bits, maybe 12 after rounding
    uint32_t he = static_cast<uint32_t>(e);
    if (q & 0x800)
    {
        q >>= 1;
        ++he;
        if (he >= 31)
        {
            return sign | 0x7C00;
        }
    }
    return sign | static_cast<uint16_t>((he << 10) | (q & 0x3FF));
}

float
CollectiveReduction::Bf16ToFloat(uint16_t b)
{
    const uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

uint16_t
CollectiveReduction::FloatToBf16(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7F800000) == 0x7F800000 && (x & 0x7FFFFF))
    {
        return static_cast<uint16_t>((x >> 16) | 0x40); // quiet NaN
    }
    const uint32_t lsb = (x >> 16) & 1;
    x += 0x7FFF + lsb;
    return static_cast<uint16_t>(x >> 16);
}

} // namespace ns3

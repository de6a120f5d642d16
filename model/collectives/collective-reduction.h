/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_REDUCTION_H
#define COLLECTIVE_REDUCTION_H

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Element type of a collective operation's buffer.
 */
enum class CollectiveDataType : uint8_t
{
    INT8,     ///< signed 8-bit integer
    INT16,    ///< signed 16-bit integer
    INT32,    ///< signed 32-bit integer
    INT64,    ///< signed 64-bit integer
    FLOAT16,  ///< IEEE 754 binary16
    BFLOAT16, ///< bfloat16 (upper half of a binary32)
    FLOAT32,  ///< IEEE 754 binary32
    FLOAT64   ///< IEEE 754 binary64
};

/**
 * @ingroup infiniband-collectives
 * @brief Reduction operator of a collective operation.
 */
enum class CollectiveRedOp : uint8_t
{
    SUM,  ///< a + b
    PROD, ///< a * b
    MIN,  ///< smaller
    MAX,  ///< larger
    BAND, ///< bitwise and (integer types only)
    BOR,  ///< bitwise or (integer types only)
    BXOR  ///< bitwise exclusive or (integer types only)
};

/**
 * @ingroup infiniband-collectives
 * @brief Element-wise reductions on raw byte buffers, for every CollectiveDataType and
 * CollectiveRedOp. FLOAT16 and BFLOAT16 elements are converted to float, combined, and
 * rounded back to nearest-even.
 */
class CollectiveReduction
{
  public:
    /**
     * @param t a type
     * @return its size in bytes
     */
    static uint32_t SizeOf(CollectiveDataType t);
    /**
     * @param t a type
     * @return true for the integer types
     */
    static bool IsInteger(CollectiveDataType t);
    /**
     * @param t a type
     * @param op an operator
     * @return true if @p op is defined on @p t (bitwise operators need integers)
     */
    static bool IsValid(CollectiveDataType t, CollectiveRedOp op);
    /**
     * dst[i] = dst[i] op src[i] for @p count elements. Aborts with a message if the
     * operator is not defined on the type.
     * @param t element type
     * @param op operator
     * @param dst accumulator (and result)
     * @param src other operand
     * @param count elements
     */
    static void Reduce(CollectiveDataType t,
                       CollectiveRedOp op,
                       uint8_t* dst,
                       const uint8_t* src,
                       uint64_t count);
    /**
     * @param t a type
     * @return its name as nccl-tests prints it ("int32", "half", "bfloat16", "float", ...)
     */
    static std::string TypeName(CollectiveDataType t);
    /**
     * @param op an operator
     * @return its name ("sum", "prod", "min", "max", "band", "bor", "bxor")
     */
    static std::string OpName(CollectiveRedOp op);
    /**
     * @param name a type name (TypeName's, or int8/int16/int32/int64/fp16/bf16/fp32/fp64)
     * @param t the type, set on success
     * @return true if known
     */
    static bool ParseType(const std::string& name, CollectiveDataType& t);
    /**
     * @param name an operator name
     * @param op the operator, set on success
     * @return true if known
     */
    static bool ParseOp(const std::string& name, CollectiveRedOp& op);
    /**
     * @param h a binary16 bit pattern
     * @return its value
     */
    static float HalfToFloat(uint16_t h);
    /**
     * @param f a value
     * @return the nearest binary16 (ties to even; overflow to infinity)
     */
    static uint16_t FloatToHalf(float f);
    /**
     * @param b a bfloat16 bit pattern
     * @return its value
     */
    static float Bf16ToFloat(uint16_t b);
    /**
     * @param f a value
     * @return the nearest bfloat16 (ties to even)
     */
    static uint16_t FloatToBf16(float f);
};

} // namespace ns3

#endif /* COLLECTIVE_REDUCTION_H */

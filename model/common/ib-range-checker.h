/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_RANGE_CHECKER_H
#define IB_RANGE_CHECKER_H

#include "ns3/attribute.h"
#include "ns3/double.h"
#include "ns3/nstime.h"
#include "ns3/uinteger.h"

#include <limits>
#include <sstream>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-common
 * @brief An attribute checker for a range of values that says what is wrong.
 *
 * ns-3 reports a value its checker refuses as "Invalid value for attribute set (Name) on
 * ns3::Class", without the value or the range. This checker checks as the ns-3 checker it
 * wraps (MakeUintegerChecker, MakeDoubleChecker, MakeTimeChecker) and, when a value of the
 * attribute's type falls outside the range, first writes "Class attribute Name=value is
 * out of range; use ..." to std::cerr. Everything else (the type's name and range shown
 * by --PrintAttributes, creating and copying values) is the wrapped checker's. Made by
 * MakeIbUintegerChecker, MakeIbDoubleChecker and MakeIbTimeChecker.
 */
class IbRangeChecker : public AttributeChecker
{
  public:
    /**
     * @param inner the ns-3 checker that decides
     * @param owner the class of the attribute, without "ns3::" (as in the message)
     * @param name the attribute's name
     * @param range what to use instead, e.g. "use 1 to 64"
     */
    IbRangeChecker(Ptr<const AttributeChecker> inner,
                   std::string owner,
                   std::string name,
                   std::string range);

    bool Check(const AttributeValue& value) const override;
    std::string GetValueTypeName() const override;
    bool HasUnderlyingTypeInformation() const override;
    std::string GetUnderlyingTypeInformation() const override;
    Ptr<AttributeValue> Create() const override;
    bool Copy(const AttributeValue& source, AttributeValue& destination) const override;

    /// @return the class of the attribute, as given (a test compares it with the TypeId)
    const std::string& GetOwner() const;
    /// @return the attribute's name, as given
    const std::string& GetName() const;
    /**
     * @param value a value of the attribute's type that the wrapped checker refuses
     * @return the message Check writes for it
     */
    std::string Explain(const AttributeValue& value) const;

  private:
    Ptr<const AttributeChecker> m_inner; //!< the ns-3 checker
    std::string m_owner;                 //!< class of the attribute
    std::string m_name;                  //!< the attribute
    std::string m_range;                 //!< what to use
};

/**
 * An unsigned integer attribute's checker that names the attribute, the value and the
 * range when a value is out of it.
 * @tparam T the member's type
 * @param owner class of the attribute, without "ns3::"
 * @param name the attribute
 * @param min the smallest value
 * @param max the largest value
 * @return the checker
 */
template <typename T>
Ptr<const AttributeChecker>
MakeIbUintegerChecker(const std::string& owner,
                      const std::string& name,
                      uint64_t min,
                      uint64_t max = std::numeric_limits<T>::max())
{
    std::ostringstream range;
    range << "use " << min;
    if (max == std::numeric_limits<T>::max())
    {
        range << " or more";
    }
    else
    {
        range << " to " << max;
    }
    return Create<IbRangeChecker>(MakeUintegerChecker<T>(min, max), owner, name, range.str());
}

/**
 * A double attribute's checker that names the attribute, the value and the range when a
 * value is out of it.
 * @param owner class of the attribute, without "ns3::"
 * @param name the attribute
 * @param min the smallest value
 * @return the checker (no largest value)
 */
Ptr<const AttributeChecker> MakeIbDoubleChecker(const std::string& owner,
                                                const std::string& name,
                                                double min);

/**
 * A double attribute's checker that names the attribute, the value and the range when a
 * value is out of it.
 * @param owner class of the attribute, without "ns3::"
 * @param name the attribute
 * @param min the smallest value
 * @param max the largest value
 * @return the checker
 */
Ptr<const AttributeChecker> MakeIbDoubleChecker(const std::string& owner,
                                                const std::string& name,
                                                double min,
                                                double max);

/**
 * A Time attribute's checker that names the attribute, the value and the range when a
 * value is out of it.
 * @param owner class of the attribute, without "ns3::"
 * @param name the attribute
 * @param min the shortest time
 * @return the checker (no longest time)
 */
Ptr<const AttributeChecker> MakeIbTimeChecker(const std::string& owner,
                                              const std::string& name,
                                              Time min);

} // namespace ns3

#endif /* IB_RANGE_CHECKER_H */

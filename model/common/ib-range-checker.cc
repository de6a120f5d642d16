/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-range-checker.h"

#include "ns3/log.h"

#include <iostream>
#include <typeinfo>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbRangeChecker");

IbRangeChecker::IbRangeChecker(Ptr<const AttributeChecker> inner,
                               std::string owner,
                               std::string name,
                               std::string range)
    : m_inner(inner),
      m_owner(std::move(owner)),
      m_name(std::move(name)),
      m_range(std::move(range))
{
}

bool
IbRangeChecker::Check(const AttributeValue& value) const
{
    if (m_inner->Check(value))
    {
        return true;
    }
    // A value of another type (a StringValue on its way to being parsed) is not out of
    // range: ns-3 converts it and checks again.
    const Ptr<AttributeValue> probe = m_inner->Create();
    if (typeid(*probe) == typeid(value))
    {
        std::cerr << Explain(value) << std::endl;
    }
    return false;
}

std::string
IbRangeChecker::Explain(const AttributeValue& value) const
{
    return m_owner + " attribute " + m_name + "=" + value.SerializeToString(m_inner) +
           " is out of range; " + m_range + ".";
}

std::string
IbRangeChecker::GetValueTypeName() const
{
    return m_inner->GetValueTypeName();
}

bool
IbRangeChecker::HasUnderlyingTypeInformation() const
{
    return m_inner->HasUnderlyingTypeInformation();
}

std::string
IbRangeChecker::GetUnderlyingTypeInformation() const
{
    return m_inner->GetUnderlyingTypeInformation();
}

Ptr<AttributeValue>
IbRangeChecker::Create() const
{
    return m_inner->Create();
}

bool
IbRangeChecker::Copy(const AttributeValue& source, AttributeValue& destination) const
{
    return m_inner->Copy(source, destination);
}

const std::string&
IbRangeChecker::GetOwner() const
{
    return m_owner;
}

const std::string&
IbRangeChecker::GetName() const
{
    return m_name;
}

Ptr<const AttributeChecker>
MakeIbDoubleChecker(const std::string& owner, const std::string& name, double min)
{
    std::ostringstream range;
    range << "use " << min << " or more";
    return Create<IbRangeChecker>(MakeDoubleChecker<double>(min), owner, name, range.str());
}

Ptr<const AttributeChecker>
MakeIbDoubleChecker(const std::string& owner, const std::string& name, double min, double max)
{
    std::ostringstream range;
    range << "use " << min << " to " << max;
    return Create<IbRangeChecker>(MakeDoubleChecker<double>(min, max), owner, name, range.str());
}

Ptr<const AttributeChecker>
MakeIbTimeChecker(const std::string& owner, const std::string& name, Time min)
{
    std::ostringstream range;
    range << "use " << min.As(Time::NS) << " or more";
    return Create<IbRangeChecker>(MakeTimeChecker(min), owner, name, range.str());
}

} // namespace ns3

/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Attribute tests: a value outside an attribute's range is refused with a message that
 * names the class, the attribute, the value and the range to use, not only with ns-3's
 * "Invalid value for attribute set".
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <string>

using namespace ns3;

namespace
{

/**
 * @param info an attribute's
 * @return true if its checker refuses some value of its type that the type can hold
 */
bool
IsBounded(const TypeId::AttributeInformation& info)
{
    const Ptr<const AttributeChecker> c = info.checker;
    const std::string type = c->GetValueTypeName();
    if (type == "ns3::TimeValue")
    {
        return !c->Check(TimeValue(Time::Min())) || !c->Check(TimeValue(Time::Max()));
    }
    if (type == "ns3::DoubleValue")
    {
        const double big = std::numeric_limits<double>::max();
        return !c->Check(DoubleValue(-big)) || !c->Check(DoubleValue(big));
    }
    if (type == "ns3::UintegerValue")
    {
        // "uint32_t 64:4294967295": the member's type, then the range.
        std::istringstream is(c->GetUnderlyingTypeInformation());
        std::string name;
        uint64_t lo = 0;
        uint64_t hi = 0;
        char colon = 0;
        is >> name >> lo >> colon >> hi;
        const uint64_t top = name == "uint8_t"    ? std::numeric_limits<uint8_t>::max()
                             : name == "uint16_t" ? std::numeric_limits<uint16_t>::max()
                             : name == "uint32_t" ? std::numeric_limits<uint32_t>::max()
                                                  : std::numeric_limits<uint64_t>::max();
        return lo != 0 || hi != top;
    }
    return false;
}

} // namespace

// Every attribute of the module whose checker has a range explains a refused value, and the
// class and attribute its message names are the ones it belongs to.
TEST(IbAttributes, EveryRangedAttributeNamesItselfAndTheRangeWhenAValueIsRefused)
{
    uint32_t ranged = 0;
    for (uint16_t i = 0; i < TypeId::GetRegisteredN(); ++i)
    {
        const TypeId tid = TypeId::GetRegistered(i);
        if (tid.GetGroupName() != "Infiniband")
        {
            continue;
        }
        for (std::size_t j = 0; j < tid.GetAttributeN(); ++j)
        {
            const TypeId::AttributeInformation info = tid.GetAttribute(j);
            if (!IsBounded(info))
            {
                continue;
            }
            ++ranged;
            const auto* checker = dynamic_cast<const IbRangeChecker*>(PeekPointer(info.checker));
            ASSERT_NE(checker, nullptr)
                << tid.GetName() << "::" << info.name
                << " has a range but ns-3's plain checker: use MakeIb...Checker";
            EXPECT_EQ("ns3::" + checker->GetOwner(), tid.GetName()) << info.name;
            EXPECT_EQ(checker->GetName(), info.name) << tid.GetName();
        }
    }
    // 51 when this test was written: the checkers are in place, not just the loop.
    EXPECT_GE(ranged, 51u);
}

TEST(IbAttributes, AValueOutOfRangeIsRefusedWithTheRangeToUse)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // As a typed value, through a string (Config and the command line), and as a time.
    EXPECT_DEATH(CreateObject<IbNetDevice>()->SetAttribute("VlBufferSize", UintegerValue(10)),
                 "IbNetDevice attribute VlBufferSize=10 is out of range; use 64 or more\\.");
    EXPECT_DEATH(Config::SetDefault("ns3::IbRawTrafficApplication::Sl", StringValue("16")),
                 "IbRawTrafficApplication attribute Sl=16 is out of range; use 0 to 15");
    EXPECT_DEATH(CreateObject<IbHca>()->SetAttribute("PortQueueDepth", UintegerValue(65)),
                 "IbHca attribute PortQueueDepth=65 is out of range; use 1 to 64\\.");
    EXPECT_DEATH(
        CreateObject<IbNetDevice>()->SetAttribute("FlowControlRefresh", TimeValue(NanoSeconds(-1))),
        "IbNetDevice attribute FlowControlRefresh=-1(\\.0+)?ns is out of range; use "
        "\\+?0(\\.0+)?ns or "
        "more\\.");
    // The fail-safe form refuses without stopping, and a value in range passes silently.
    Ptr<IbNetDevice> port = CreateObject<IbNetDevice>();
    EXPECT_FALSE(port->SetAttributeFailSafe("VlBufferSize", UintegerValue(10)));
    testing::internal::CaptureStderr();
    EXPECT_TRUE(port->SetAttributeFailSafe("VlBufferSize", UintegerValue(4096)));
    EXPECT_TRUE(port->SetAttributeFailSafe("VlBufferSize", StringValue("8192")));
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    UintegerValue v;
    port->GetAttribute("VlBufferSize", v);
    EXPECT_EQ(v.Get(), 8192u);
}

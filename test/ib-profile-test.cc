/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * IbProfileHelper: each profile sets what it says (every attribute default it lists, a
 * PcieLink on every HCA), names its sources and what it leaves out, and an unknown name
 * is answered with the names to use.
 */

#include "ns3/config.h"
#include "ns3/core-module.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-profile-helper.h"
#include "ns3/pcie-link.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

class IbProfileTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        Config::Reset();
    }
};

/**
 * @param attribute "ns3::Class::Attribute"
 * @return the value a new object of Class has for it, as a string
 */
std::string
NewObjectValue(const std::string& attribute)
{
    const size_t sep = attribute.rfind("::");
    ObjectFactory f(attribute.substr(0, sep));
    Ptr<Object> o = f.Create();
    StringValue v;
    o->GetAttribute(attribute.substr(sep + 2), v);
    return v.Get();
}

/**
 * @param attribute "ns3::Class::Attribute"
 * @param value a value as a profile writes it
 * @return the value as the attribute's checker writes it back
 */
std::string
Canonical(const std::string& attribute, const std::string& value)
{
    const size_t sep = attribute.rfind("::");
    TypeId tid = TypeId::LookupByName(attribute.substr(0, sep));
    TypeId::AttributeInformation info;
    EXPECT_TRUE(tid.LookupAttributeByName(attribute.substr(sep + 2), &info)) << attribute;
    Ptr<AttributeValue> v = info.checker->Create();
    EXPECT_TRUE(v->DeserializeFromString(value, info.checker)) << attribute << "=" << value;
    return v->SerializeToString(info.checker);
}

TEST_F(IbProfileTest, EachProfileSetsEveryAttributeItLists)
{
    for (const std::string& name : IbProfileHelper::GetNames())
    {
        const IbProfileHelper::Profile* p = IbProfileHelper::Find(name);
        ASSERT_NE(p, nullptr);
        std::string error;
        ASSERT_TRUE(IbProfileHelper::Apply(name, &error)) << error;
        for (const IbProfileHelper::Setting& s : p->settings)
        {
            EXPECT_EQ(NewObjectValue(s.attribute), Canonical(s.attribute, s.value))
                << name << ": " << s.attribute;
            EXPECT_FALSE(s.source.empty()) << name << ": " << s.attribute << " has no source";
        }
        Ptr<IbHca> hca = CreateObject<IbHca>();
        EXPECT_EQ(hca->GetPcieLink() != nullptr, p->pcie) << name;
        const std::string text = IbProfileHelper::Describe(name);
        EXPECT_NE(text.find(p->summary), std::string::npos);
        for (const std::string& m : p->missing)
        {
            EXPECT_NE(text.find("not modelled (no source): " + m), std::string::npos) << m;
        }
        Config::Reset();
    }
}

TEST_F(IbProfileTest, TheIdealProfileLeavesTheIdealizedModel)
{
    ASSERT_TRUE(IbProfileHelper::Apply("ideal", nullptr));
    Ptr<IbHca> hca = CreateObject<IbHca>();
    EXPECT_EQ(hca->GetPcieLink(), nullptr);
    EXPECT_EQ(hca->GetDoorbellLatency(), NanoSeconds(300));
    EXPECT_TRUE(IbProfileHelper::Find("ideal")->settings.empty());
}

TEST_F(IbProfileTest, AHardwareProfileGivesEveryHcaItsPcieLink)
{
    ASSERT_TRUE(IbProfileHelper::Apply("hdr-cx6-mpi", nullptr));
    Ptr<IbHca> a = CreateObject<IbHca>();
    Ptr<IbHca> b = CreateObject<IbHca>();
    ASSERT_NE(a->GetPcieLink(), nullptr);
    EXPECT_EQ(a->GetPcieLink()->Describe(),
              "PCIe Gen4 x16, MPS 256, MRRS 512, read completions 64 B");
    EXPECT_EQ(a->GetPcieLink()->GetReadLatency(), NanoSeconds(546));
    EXPECT_EQ(a->GetMaxInlineData(), 236u);
    EXPECT_EQ(b->GetPcieLink(), a->GetPcieLink()); // the configuration is shared
    EXPECT_EQ(a->GetDoorbellLatency(), Time(0));
}

TEST_F(IbProfileTest, AnUnknownProfileIsAnsweredWithTheNames)
{
    std::string error;
    EXPECT_FALSE(IbProfileHelper::Apply("cx9", &error));
    EXPECT_EQ(error,
              "unknown profile 'cx9'; use one of ideal, edr-cx4-mpi, hdr-cx6-mpi, ndr-cx7-nccl");
}

} // namespace

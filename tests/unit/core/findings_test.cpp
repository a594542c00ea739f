// The finding registry (findings.cpp): one row per code, each with its class.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ibc/core/findings.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

TEST(FindingRegistry, EveryCodeHasOneRowThatNamesItBackAndAClass) {
  const auto& registry = findingRegistry();
  ASSERT_EQ(registry.size(), allFindingCodes().size());
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const auto& t = registry[i];
    EXPECT_EQ(static_cast<std::size_t>(t.code), i);
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_EQ(findingCodeName(t.code), t.name);
    EXPECT_EQ(findingCodeFromName(t.name), t.code);
    EXPECT_EQ(&findingTraits(t.code), &findingTraits(t.code));
    EXPECT_FALSE(t.area.empty()) << t.name;
    EXPECT_FALSE(t.meaning.empty()) << t.name;
    EXPECT_GE(t.specificity, 0);
    EXPECT_LE(t.specificity, 6);
    EXPECT_EQ(t.name.rfind("PF_", 0) == 0, t.finding_class == FindingClass::HostSide) << t.name;
  }
  EXPECT_EQ(findingTraits("NOT_A_CODE"), nullptr);
  EXPECT_EQ(findingClassOf("PORT_NOT_ACTIVE_SM"), FindingClass::FabricSm);
  EXPECT_EQ(findingClassOf("LINK_RATE_BELOW_EXPECTED"), FindingClass::PhysicalLink);
  EXPECT_EQ(findingClassOf("MEMLOCK_LIMIT"), FindingClass::TenantConfig);
  EXPECT_EQ(findingSpecificity("PORT_DOWN"), 0);
  EXPECT_LT(findingSpecificity("LINK_RATE_BELOW_EXPECTED"), findingSpecificity("MEMLOCK_LIMIT"));
}

}  // namespace
}  // namespace ibc::core

// A bundle judged again (bundle_judgement.cpp rejudgeBundle): its signed snapshots against
// findings.json.

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "bundle_exports.h"
#include "fixtures.h"
#include "ibc/core/bundle.h"
#include "ibc/core/bundle_judgement.h"
#include "ibc/core/bundle_report.h"
#include "ibc/core/redact.h"
#include "ibc/core/report.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

using test_bundles::exported;

TEST(BundleJudgement, AnExportedBundleJudgedAgainHasNoDifference) {
  const auto members = exported(false);
  const auto again = rejudgeBundle(members);
  ASSERT_TRUE(again.judged) << again.reason;
  EXPECT_GT(again.findings_compared, 0u);
  EXPECT_TRUE(again.differences.empty()) << again.differences.front();
}

TEST(BundleJudgement, AFindingDroppedFromFindingsJsonIsNamed) {
  auto members = exported(false);
  v1::Report report;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(members.at("findings.json"), &report).ok());
  ASSERT_GT(report.findings_size(), 0);
  const v1::Finding dropped = report.findings(0);
  report.mutable_findings()->DeleteSubrange(0, 1);
  members["findings.json"] = *renderJson(report);
  const auto again = rejudgeBundle(members);
  ASSERT_TRUE(again.judged) << again.reason;
  ASSERT_EQ(again.differences.size(), 1u);
  EXPECT_THAT(again.differences[0], HasSubstr(dropped.code()));
  EXPECT_THAT(again.differences[0], HasSubstr("missing from findings.json"));
}

TEST(BundleJudgement, ARedactedBundleSaysItCannotBeJudgedAgain) {
  const auto again = rejudgeBundle(exported(true));
  EXPECT_FALSE(again.judged);
  EXPECT_THAT(again.reason, HasSubstr("redacted"));
}

}  // namespace
}  // namespace ibc::core

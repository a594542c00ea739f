// The rules of one node together (rules.cpp diagnoseNode): a healthy node gives nothing.
// Rule tests run on SYNTHETIC snapshots (rule_snapshots.h): a healthy node plus the evidence
// of the row; codes also exercised on real captures live in fixture_diagnosis_test.cpp.

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ibc/core/rules.h"
#include "rule_snapshots.h"

namespace ibc::core {
namespace {

using ibc::test::describe;
using ibc::test::snapshot;

namespace v1 = ::ibcollect::v1;

TEST(Rules, TheHealthyBaseNodeHasNoFindings) {
  const auto findings = diagnoseNode(snapshot(""), {});
  EXPECT_TRUE(findings.empty()) << describe(findings);
}

}  // namespace
}  // namespace ibc::core

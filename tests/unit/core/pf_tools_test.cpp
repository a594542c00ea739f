// A whole paste of PF tools (parsers/pf/pf_tools.cpp) on the real captures of
// tests/fixtures/real/pf (labels in its PROVENANCE.md), plus good/empty/truncated/garbage/huge
// input.

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

TEST(PfToolOutput, NothingRecognisedIsEmptyNotClean) {
  EXPECT_TRUE(parsePfToolOutput("").empty());
  EXPECT_TRUE(parsePfToolOutput("hello world\nthis is not tool output\n").empty());
  EXPECT_TRUE(parsePfToolOutput(std::string(1 << 20, 'x')).empty());
  const auto mixed = parsePfToolOutput(pfCapture("healthcheck-script_cx7"));
  EXPECT_FALSE(mixed.empty());
  ASSERT_EQ(mixed.flint.size(), 1u);
  EXPECT_EQ(mixed.flint[0].fw_version(), "28.40.1000");
}

}  // namespace
}  // namespace ibc::core

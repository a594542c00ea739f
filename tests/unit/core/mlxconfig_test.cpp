// The mlxconfig parser (parsers/pf/mlxconfig.cpp) on the real captures of tests/fixtures/real/pf
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

TEST(MlxconfigParser, Cx3QueryGivesSriovSettings) {
  const auto r = parseMlxconfig(pfCapture("mlxconfig-q_cx3"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].device_type(), "ConnectX3");
  EXPECT_EQ(r[0].device(), "/dev/mst/mt4099_pciconf0");
  EXPECT_EQ(r[0].sriov_en(), "True(1)");
  EXPECT_EQ(r[0].num_of_vfs(), "8");
  EXPECT_GE(r[0].settings_size(), 9);
  EXPECT_TRUE(parseMlxconfig(pfCapture("mlxlink-c_cx4")).empty());
}

}  // namespace
}  // namespace ibc::core

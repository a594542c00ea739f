// The mlxlink parser (parsers/pf/mlxlink.cpp) on the real captures of tests/fixtures/real/pf
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

TEST(MlxlinkParser, ForumCaptureWithBlankLinesAndCollapsedColumnsGivesCounters) {
  const auto r = parseMlxlink(pfCapture("mlxlink-c_cx4"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].device(), "/dev/mst/mt4115_pciconf0");
  EXPECT_EQ(r[0].state(), "Active");
  EXPECT_EQ(r[0].phys_state(), "LinkUp");
  EXPECT_EQ(r[0].speed(), "100GbE");
  EXPECT_EQ(r[0].fec(), "Standard RS-FEC - RS(528,514)");
  EXPECT_EQ(r[0].effective_errors(), 0u);
  EXPECT_EQ(r[0].raw_ber(), "3E-12");
  EXPECT_DOUBLE_EQ(r[0].raw_ber_value(), 3e-12);
  EXPECT_DOUBLE_EQ(r[0].time_since_clear_min(), 1715.4);
  ASSERT_EQ(r[0].raw_errors_per_lane_size(), 4);
  EXPECT_EQ(r[0].raw_errors_per_lane(0), 26711u);
  EXPECT_EQ(r[0].raw_errors_per_lane(3), 9108u);
  EXPECT_FALSE(r[0].has_link_down_counter());
}

TEST(MlxlinkParser, EyeSectionGivesGradesPerLane) {
  const auto r = parseMlxlink(pfCapture("mlxlink-e_cx4"));
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].physical_grade_size(), 4);
  EXPECT_EQ(r[0].physical_grade(0), 3065);
  EXPECT_EQ(r[0].height_eye_mv(3), 37);
  EXPECT_EQ(r[0].phase_eye_psec(2), 15);
}

TEST(MlxlinkParser, PassiveDacModuleInfoIsNotApplicableNotZero) {
  const auto r = parseMlxlink(pfCapture("mlxlink-m-c_bf3"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].port(), 1u);
  EXPECT_EQ(r[0].module_identifier(), "QSFP28");
  EXPECT_EQ(r[0].ddm(), "No");
  EXPECT_FALSE(r[0].has_temperature_c());
  EXPECT_EQ(r[0].rx_power_dbm_size(), 0);
  EXPECT_EQ(r[0].faults_size(), 0);
  EXPECT_EQ(r[0].firmware_version(), "32.43.2402");
  EXPECT_EQ(r[0].link_down_counter(), 0u);
  EXPECT_EQ(r[0].link_error_recovery_counter(), 0u);
  EXPECT_EQ(r[0].effective_ber(), "15E-255");
}

TEST(MlxlinkParser, EmptyGarbageAndOtherToolsGiveNothing) {
  EXPECT_TRUE(parseMlxlink("").empty());
  EXPECT_TRUE(parseMlxlink("\x01\x02 garbage : : :\n\n---\n").empty());
  EXPECT_TRUE(parseMlxlink(pfCapture("flint-q_cx4lx-ibm")).empty());
  EXPECT_TRUE(parseMlxlink(pfCapture("ethtool-m_sfp-10gbase-sr-finisar")).empty());
}

TEST(MlxlinkParser, TruncatedCaptureKeepsWholeFieldsAndHugeInputIsBounded) {
  const std::string text = pfCapture("mlxlink-m-c_bf3");
  const auto cut = parseMlxlink(text.substr(0, text.find("Module Info")));
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].state(), "Active");
  EXPECT_TRUE(cut[0].module_identifier().empty());
  std::string huge;
  for (int i = 0; i < 400; ++i) huge += "mlxlink -d 0000:42:00.0\nState : Active\n";
  EXPECT_EQ(parseMlxlink(huge).size(), kMaxPfReports);
}

TEST(MlxlinkParser, AnnotatedCounterKeepsItsNumber) {
  const auto r = parseMlxlink(
      "mlxlink -d mlx5_3 -c\nEffective Physical Errors : 1234 <-- rising\n"
      "Effective Physical BER : 2E-9   <-- bad\nLink Down Counter : 7\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].effective_errors(), 1234u);
  EXPECT_DOUBLE_EQ(r[0].effective_ber_value(), 2e-9);
}

}  // namespace
}  // namespace ibc::core

// `grep . /sys/...` listings pasted as tool output (tool_output_sysfs.cpp): the real captures
// of tests/fixtures/real/sysfs (ground truth in their PROVENANCE.md) and the separator rule.

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "fixtures.h"
#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "tool_evidence_lookup.h"

namespace ibc::core {
namespace {

using test::kindsOf;

constexpr char kSysfsGrep[] =
    "real/sysfs/sysfs-grep_i40iw0-counters-no-pma_node_exporter-issue-966.txt";

struct SysfsLineCase {
  std::string line;
  std::string path;
  std::string value;
};

class SysfsListingLineTable : public ::testing::TestWithParam<SysfsLineCase> {};

TEST(SysfsListingParser, GrepCaptureKeepsPathsWithPciColonsAndNoPmaValues) {
  const ToolEvidence ev = parseToolOutputAs(kKindSysfsListing, test::readFixture(kSysfsGrep));
  EXPECT_EQ(kindsOf(ev), "sysfs-listing");
  ASSERT_EQ(ev.sysfs_entries.size(), 8u);
  EXPECT_EQ(ev.sysfs_entries[0].path,
            "/sys/devices/pci0000:05/0000:05:02.0/0000:07:00.0/0000:08:03.0/0000:09:00.0/"
            "infiniband/i40iw0/ports/1/counters/excessive_buffer_overrun_errors");
  EXPECT_EQ(ev.sysfs_entries[0].value, "N/A (no PMA)");
  EXPECT_EQ(ev.sysfs_entries[7].value, "N/A (no PMA)");
  EXPECT_TRUE(endsWith(ev.sysfs_entries[7].path, "/counters/port_rcv_packets"));
  EXPECT_EQ(ev.lines_unrecognised, 0u);  // the "# grep -s . ..." command line is noise
  ASSERT_EQ(ev.spans.size(), 1u);
  EXPECT_EQ(ev.spans[0].first_line, 2u);
  EXPECT_EQ(ev.spans[0].last_line, 9u);
}

TEST_P(SysfsListingLineTable, SplitsAtGrepsSeparatorNotAtColonsInPathOrValue) {
  const auto& c = GetParam();
  const ToolEvidence ev = parseToolOutputAs(kKindSysfsListing, c.line + "\n");
  ASSERT_EQ(ev.sysfs_entries.size(), 1u) << c.line;
  EXPECT_EQ(ev.sysfs_entries[0].path, c.path);
  EXPECT_EQ(ev.sysfs_entries[0].value, c.value);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, SysfsListingLineTable,
    ::testing::Values(
        SysfsLineCase{"/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE",
                      "/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE"},
        SysfsLineCase{"/sys/class/infiniband/mlx5_0/ports/1/gids/0:fe80:0000:0000:0000:0a7f:"
                      "bc12:45ef:d23b",
                      "/sys/class/infiniband/mlx5_0/ports/1/gids/0",
                      "fe80:0000:0000:0000:0a7f:bc12:45ef:d23b"},
        SysfsLineCase{"/sys/class/infiniband/mlx5_0/ports/1/rate:100 Gb/sec (4X EDR)",
                      "/sys/class/infiniband/mlx5_0/ports/1/rate", "100 Gb/sec (4X EDR)"},
        SysfsLineCase{"/sys/bus/pci/devices/0000:0c:00.0/current_link_speed:16.0 GT/s PCIe",
                      "/sys/bus/pci/devices/0000:0c:00.0/current_link_speed", "16.0 GT/s PCIe"},
        SysfsLineCase{"/sys/devices/pci0000:00/0000:00:01.0/0000:0c:00.0/numa_node:0",
                      "/sys/devices/pci0000:00/0000:00:01.0/0000:0c:00.0/numa_node", "0"},
        SysfsLineCase{"/sys/class/infiniband/mlx5_0/node_guid:b8ce:f603:00a1:b2c4",
                      "/sys/class/infiniband/mlx5_0/node_guid", "b8ce:f603:00a1:b2c4"},
        SysfsLineCase{"/sys/class/net/ib0/mode:", "/sys/class/net/ib0/mode", ""}));

TEST(SysfsListingParser, GrepErrorsOnSysfsFilesAreToolErrors) {
  const ToolEvidence ev = parseToolOutputAs(
      kKindSysfsListing,
      "/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:0\n"
      "grep: /sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_wait: Invalid argument\n");
  ASSERT_EQ(ev.sysfs_entries.size(), 1u);
  ASSERT_EQ(ev.tool_errors.size(), 1u);
  EXPECT_EQ(ev.tool_errors[0],
            "grep: /sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_wait: Invalid "
            "argument");
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(SysfsListingParser, PathsWithoutAValueSeparatorAreNotEntries) {
  const ToolEvidence ev =
      parseToolOutputAs(kKindSysfsListing, "/sys/class/infiniband/mlx5_0/ports/1/state\n");
  EXPECT_TRUE(ev.sysfs_entries.empty());
  EXPECT_EQ(ev.lines_unrecognised, 1u);
}

}  // namespace
}  // namespace ibc::core

// Golden files for the renderers (report.h): one node built in core alone from real
// captures a customer would paste — `ibportstate` + `ibstat` of an mlx4 with port 1
// disabled, `perfquery -x` with traffic, an NCCL log with a completion error, a kernel log
// with a TX timeout — diagnosed, then rendered as text (default, -v, -q) and as JSON with
// the snapshot inside, and compared byte for byte with tests/fixtures/golden/. (The job
// renderings of three collected trees are tests/unit/agent/report_golden_test.cpp.)
// After an intended change of the layout or the JSON shape, regenerate with
//   scripts/update-golden.sh
// and review the diff of tests/fixtures/golden/ like code.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "fixtures.h"
#include "ibc/core/job_verdict.h"
#include "ibc/core/kernel_log.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/report.h"
#include "ibc/core/rules.h"
#include "ibc/core/tool_output.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

AnalyzedNode pastedNode() {
  AnalyzedNode n;
  v1::Snapshot& s = n.snapshot;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname("gpu01");
  s.mutable_node()->set_source("pasted");
  s.mutable_node()->set_collected_at_unix_ms(1764000000000);
  for (const char* paste :
       {"real/ibtools/ibportstate-and-ibstat_mlx4-port1-down-disabled-port2-active56_rdma-core-pr-"
        "847.txt",
        "real/ibtools/perfquery-x_traffic-no-errors-email-wrapped-header_netdata-issue-2620.txt"}) {
    const ToolEvidence ev = parseToolOutput(ibc::test::readFixture(paste));
    for (const auto& d : ev.devices) *s.add_devices() = d;
    for (const auto& nd : ev.netdevs) *s.add_netdevs() = nd;
  }
  auto* log = s.add_nccl_logs();
  log->set_source("nccl.log");
  *log->mutable_parsed() = parseNcclLog(
      ibc::test::readFixture("real/nccl-logs/nccl-log_ib-completion-error4-vendor81_nccl-issue-"
                             "928.txt"));
  *s.mutable_kernel_log() = filterKernelLog(
      ibc::test::readFixture(
          "real/dmesg/dmesg_mlx4-netdev-watchdog-tx-queue-timeout_raspberry-pi-pcie-devices-"
          "issue-139.txt"),
      {"file:dmesg.txt", 2000});
  n.snapshot_file = "/tmp/gpu01.ibsnap";
  return n;
}

v1::Report report(bool include_snapshot = false) {
  std::vector<AnalyzedNode> nodes{pastedNode()};
  nodes[0].include_snapshot = include_snapshot;
  judgeJob(nodes, {});
  return buildReport(std::move(nodes));
}

using ibc::test::compareWithGolden;

TEST(RenderGolden, TheNodeHasFindingsFromEveryPaste) {
  // The goldens below are worth something only if the node shows what the pastes hold.
  std::vector<AnalyzedNode> nodes{pastedNode()};
  judgeJob(nodes, {});
  std::set<std::string> codes;
  for (const auto& f : nodes[0].findings) {
    codes.insert(f.code());
    EXPECT_EQ(f.node(), "gpu01");  // the log's host names are a notice, never nodes
  }
  EXPECT_TRUE(codes.count("PORT_DOWN") || codes.count("PHYS_LINK_NOT_UP")) << codes.size();
  EXPECT_EQ(codes.count("NCCL_IB_COMPLETION_ERROR"), 1u);
  EXPECT_EQ(codes.count("TX_TIMEOUT"), 1u);
}

TEST(RenderGolden, ReportTextAt100Columns) {
  TextOptions o;
  o.width = 100;
  const std::string text = renderText(report(), o);
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) EXPECT_LE(l.size(), 100u) << l;
  compareWithGolden("node_text_100.txt", text);
}

TEST(RenderGolden, ReportTextVerbose) {
  TextOptions o;
  o.width = 100;
  o.verbose = true;
  compareWithGolden("node_text_verbose.txt", renderText(report(), o));
}

TEST(RenderGolden, ReportTextQuiet) {
  TextOptions o;
  o.quiet = true;
  compareWithGolden("node_text_quiet.txt", renderText(report(), o));
}

TEST(RenderGolden, ReportJsonWithTheSnapshot) {
  auto json = renderJson(report(true));
  ASSERT_TRUE(json.ok()) << json.error().message;
  compareWithGolden("node_snapshot.json", *json);
}

}  // namespace
}  // namespace ibc::core

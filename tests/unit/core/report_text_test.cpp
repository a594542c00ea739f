// The text layout of a report: wrapping, grouping of the same finding in many places,
// the node's WORST FINDING, -q/-v and colour. Findings here are built in the test
// (synthetic, to pin the layout); tests/unit/agent/report_golden_test.cpp renders reports
// of real captures.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "ibc/core/findings.h"
#include "ibc/core/report.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

v1::Finding finding(FindingCode code, Severity sev, const std::string& node,
                    const std::string& device, uint32_t port, const std::string& summary,
                    const std::string& action = "Do the one thing that helps.") {
  return makeFinding({code, sev, node, device, port, summary, {"evidence of " + device}, action});
}

AnalyzedNode node(const std::string& name, std::vector<v1::Finding> findings) {
  AnalyzedNode n;
  n.snapshot.mutable_node()->set_slurm_node(name);
  n.snapshot.mutable_node()->set_hostname(name);
  n.findings = std::move(findings);
  return n;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

const std::string kLongAction =
    "Run jobs with `ulimit -l unlimited`: add `* - memlock unlimited` under "
    "/etc/security/limits.d/, for Slurm set PropagateResourceLimitsExcept=MEMLOCK (or "
    "LimitMEMLOCK=infinity in slurmd's unit), for containers pass --ulimit memlock=-1.";

TEST(ReportText, LongNextStepsWrapAtWordBoundariesWithAHangingIndent) {
  const auto report = buildReport({node(
      "node1", {finding(FindingCode::MemlockLimit, Severity::Warning, "node1", "", 0,
                        "Locked-memory limit is 8 MiB, not unlimited: RDMA memory registration "
                        "will fail for large buffers",
                        kLongAction)})});
  TextOptions o;
  o.width = 80;
  const std::string text = renderText(report, o);
  for (const auto& l : lines(text)) EXPECT_LE(l.size(), 80u) << l;
  EXPECT_THAT(text, HasSubstr("  next step: Run jobs with `ulimit -l unlimited`: add `* - memlock "
                              "unlimited`\n    under /etc/security/limits.d/,"));
  // Width 0: one line per item, as before.
  const std::string unwrapped = renderText(report, {});
  EXPECT_THAT(unwrapped, HasSubstr("  next step: " + kLongAction + "\n"));
}

TEST(ReportText, AWordLongerThanALineIsCutSoEveryLineFits) {
  const std::string path(150, 'x');
  const auto report = buildReport({node(
      "node1", {finding(FindingCode::MemlockLimit, Severity::Warning, "node1", "", 0, path)})});
  TextOptions o;
  o.width = 60;
  const std::string text = renderText(report, o);
  // The findings (the table below has its own minimum width).
  for (const auto& l : lines(text.substr(text.find("\n\n")))) EXPECT_LE(l.size(), 60u) << l;
  EXPECT_THAT(text, HasSubstr(std::string(50, 'x')));
}

TEST(ReportText, TheSameFindingOnEightPortsIsOneEntryWithADeviceRange) {
  std::vector<v1::Finding> fs;
  for (int d = 0; d < 8; ++d) {
    const std::string dev = "mlx5_" + std::to_string(d);
    fs.push_back(finding(FindingCode::Congestion, Severity::Info, "gpu1", dev, 1,
                         dev + " port 1: congestion counted before this snapshot"));
  }
  const std::string text = renderText(buildReport({node("gpu1", fs)}), {});
  EXPECT_THAT(text, HasSubstr("INFO  CONGESTION  gpu1 mlx5_0..mlx5_7 port 1 (8 places)\n"
                              "  Congestion counted before this snapshot\n"));
  EXPECT_EQ(count(text, "next step:"), 1u) << text;
  // -v: every place its own entry, with its own evidence.
  TextOptions v;
  v.verbose = true;
  const std::string verbose = renderText(buildReport({node("gpu1", fs)}), v);
  EXPECT_EQ(count(verbose, "next step:"), 8u) << verbose;
  EXPECT_THAT(verbose, HasSubstr("evidence of mlx5_7"));
}

TEST(ReportText, TheSameFindingOnManyNodesIsOneEntryWithAHostlist) {
  std::vector<AnalyzedNode> nodes;
  for (const std::string name : {"node2", "node3", "node4", "node5", "node9"}) {
    nodes.push_back(node(name, {finding(FindingCode::MemlockLimit, Severity::Warning, name, "", 0,
                                        "Locked-memory limit is 8 MiB on " + name)}));
  }
  nodes.push_back(node("node7", {}));
  const std::string text = renderText(buildReport(nodes), {});
  EXPECT_THAT(text, HasSubstr("WARNING  MEMLOCK_LIMIT  node[2-5,9] (5 places)\n"));
  EXPECT_EQ(count(text, "MEMLOCK_LIMIT"), 1u) << text;
}

TEST(ReportText, DifferentPlacesOnDifferentNodesAreNotMixedUp) {
  const auto report = buildReport(
      {node("node1", {finding(FindingCode::Congestion, Severity::Info, "node1", "mlx4_0", 1,
                              "mlx4_0 port 1: congestion counted before this snapshot"),
                      finding(FindingCode::Congestion, Severity::Info, "node1", "mlx4_0", 2,
                              "mlx4_0 port 2: congestion counted before this snapshot")}),
       node("node3", {finding(FindingCode::Congestion, Severity::Info, "node3", "mlx5_0", 1,
                              "mlx5_0 port 1: congestion counted before this snapshot")})});
  const std::string text = renderText(report, {});
  EXPECT_THAT(text,
              HasSubstr("CONGESTION  node1 mlx4_0 ports 1,2; node3 mlx5_0 port 1 (3 places)"));
}

TEST(ReportText, WorstFindingIsTheMostSpecificAtEqualSeverity) {
  // The memlock warning comes first in the node's list; the link downgrade must still win.
  const auto report = buildReport({node(
      "node3",
      {finding(FindingCode::MemlockLimit, Severity::Warning, "node3", "", 0, "memlock"),
       finding(FindingCode::EscalateHostInspection, Severity::Warning, "node3", "mlx5_0", 0, "e"),
       finding(FindingCode::CqeErrors, Severity::Warning, "node3", "mlx5_0", 1, "cqe"),
       finding(FindingCode::LinkRateBelowExpected, Severity::Warning, "node3", "mlx5_0", 1, "25"),
       finding(FindingCode::Congestion, Severity::Info, "node3", "mlx5_0", 1, "c")})});
  EXPECT_EQ(report.nodes(0).worst_code(), "LINK_RATE_BELOW_EXPECTED");
  TextOptions o;
  o.node_table = true;
  EXPECT_NE(renderText(report, o).find("WARNING  LINK_RATE_BELOW_EXPECTED"), std::string::npos);
  // Severity still comes first: a critical host finding beats a link warning.
  const auto crit = buildReport({node(
      "node4",
      {finding(FindingCode::LinkRateBelowExpected, Severity::Warning, "node4", "mlx5_0", 1, "25"),
       finding(FindingCode::UverbsAccess, Severity::Critical, "node4", "", 0, "uverbs")})});
  EXPECT_EQ(crit.nodes(0).worst_code(), "UVERBS_ACCESS");
  // The order of areas, most specific first.
  EXPECT_LT(findingSpecificity("PORT_DOWN"), findingSpecificity("CQE_ERRORS"));
  EXPECT_LT(findingSpecificity("CQE_ERRORS"), findingSpecificity("NCCL_IB_COMPLETION_ERROR"));
  EXPECT_LT(findingSpecificity("NCCL_IB_COMPLETION_ERROR"), findingSpecificity("MEMLOCK_LIMIT"));
  EXPECT_LT(findingSpecificity("MEMLOCK_LIMIT"), findingSpecificity("ESCALATE_HOST_INSPECTION"));
}

TEST(ReportText, FailedProbesAreNamedWithPathAndErrorInVerboseAndJson) {
  AnalyzedNode n = node("gpu01", {});
  auto* pe = n.snapshot.add_probe_errors();
  pe->set_probe("hw_counters");
  pe->set_path("/sys/class/infiniband/mlx5_0/ports/1/hw_counters");
  pe->set_error("EACCES");
  pe->set_message("Permission denied");
  std::vector<AnalyzedNode> nodes;
  nodes.push_back(std::move(n));
  const auto report = buildReport(std::move(nodes));
  ASSERT_EQ(report.nodes(0).failed_probes_size(), 1);
  const std::string plain = renderText(report);
  EXPECT_THAT(plain, HasSubstr("1 probe(s) failed (-v names them)"));
  TextOptions verbose;
  verbose.verbose = true;
  const std::string text = renderText(report, verbose);
  EXPECT_THAT(text,
              HasSubstr("hw_counters /sys/class/infiniband/mlx5_0/ports/1/hw_counters: EACCES: "
                        "Permission denied"));
  const auto json = renderJson(report);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"failed_probes\""), std::string::npos) << *json;
  EXPECT_NE(json->find("EACCES"), std::string::npos) << *json;
}

TEST(ReportText, QuietShowsTheVerdictTableAndCountsOnly) {
  const auto report = buildReport(
      {node("node1",
            {finding(FindingCode::MemlockLimit, Severity::Warning, "node1", "", 0, "memlock")})});
  TextOptions q;
  q.quiet = true;
  q.node_table = true;
  const std::string text = renderText(report, q);
  EXPECT_THAT(text, HasSubstr("node1"));
  EXPECT_THAT(text, HasSubstr("1 node; 1 finding: 0 critical, 1 warning, 0 info"));
  EXPECT_THAT(text, Not(HasSubstr("next step")));
  EXPECT_THAT(text, Not(HasSubstr("memlock")));
}

TEST(ReportText, ColourTouchesOnlySeverityWordsAndNeverHostileText) {
  const auto report =
      buildReport({node("node1", {finding(FindingCode::MemlockLimit, Severity::Warning, "node1", "",
                                          0, "limit \x1b[31mred\x1b[0m from a paste")})});
  TextOptions c;
  c.color = true;
  const std::string text = renderText(report, c);
  EXPECT_THAT(text, HasSubstr("\x1b[33mWARNING\x1b[0m  MEMLOCK_LIMIT"));
  EXPECT_THAT(text, Not(HasSubstr("\x1b[31m")));
  // Table verdict, node line and finding header, each opened and closed.
  EXPECT_EQ(count(text, "\x1b["), 6u) << text;
  EXPECT_EQ(renderText(report, {}).find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace ibc::core

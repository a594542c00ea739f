// The text report people read (issue 10): fits the width, tells the same finding once with
// where it holds, names the most specific worst finding, colours only severity words and
// never passes an escape sequence from the evidence.

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <sstream>

#include "ibc/core/report.h"
#include "ibc/core/rules.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

v1::Finding finding(const std::string& node, const std::string& code, const std::string& sev,
                    const std::string& device, uint32_t port, const std::string& summary,
                    const std::string& action, std::vector<std::string> evidence = {}) {
  v1::Finding f;
  f.set_node(node);
  f.set_code(code);
  f.set_severity(sev);
  f.set_device(device);
  f.set_port(port);
  f.set_summary(summary);
  f.set_action(action);
  for (auto& e : evidence) f.add_evidence(std::move(e));
  return f;
}

AnalyzedNode node(const std::string& name, std::vector<v1::Finding> findings) {
  AnalyzedNode n;
  n.snapshot.mutable_node()->set_hostname(name);
  n.snapshot.mutable_node()->set_source("/");
  auto* d = n.snapshot.add_devices();
  d->set_name("mlx5_0");
  auto* p = d->add_ports();
  p->set_port(1);
  p->mutable_state()->set_code(4);
  p->mutable_state()->set_raw("4: ACTIVE");
  n.findings = std::move(findings);
  return n;
}

std::size_t longestLine(const std::string& text) {
  std::size_t longest = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) longest = std::max(longest, line.size());
  return longest;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

const std::string kLongAction =
    "Bit errors on the link: cable, transceiver or switch port. Check whether they still grow "
    "(`ibcollect snapshot --window 30`); `mlxlink -d <pci> -p <port> -c -e -m` shows BER, "
    "effective errors and module temperature/power; reseat or replace the cable and check the "
    "switch port's counters.";

TEST(ReportText, TheSameFindingOnManyNodesIsOneEntryWithItsPlacesAndOneNextStep) {
  std::vector<AnalyzedNode> nodes;
  for (const char* n : {"node2", "node3", "node4", "node5", "node9"}) {
    nodes.push_back(node(n, {finding(n, "PHY_ERRORS", "warning", "mlx5_0", 1,
                                     "mlx5_0 port 1: physical-layer errors counted before this "
                                     "snapshot",
                                     kLongAction, {"symbol_error = 12"})}));
  }
  TextOptions o;
  o.node_table = true;
  const std::string text = renderText(buildReport(nodes), o);
  EXPECT_EQ(count(text, "PHY_ERRORS  node[2-5,9] mlx5_0 port 1 (5 places)"), 1u) << text;
  EXPECT_EQ(count(text, "next step:"), 1u) << text;
  o.verbose = true;
  const std::string all = renderText(buildReport(nodes), o);
  EXPECT_EQ(count(all, "next step:"), 5u) << all;
}

TEST(ReportText, TheSameFindingOnManyPortsOfANodeIsOneEntry) {
  std::vector<v1::Finding> fs;
  for (int i = 0; i < 8; ++i) {
    const std::string dev = "mlx5_" + std::to_string(i);
    fs.push_back(finding("gpu01", "COUNTER_UNAVAILABLE", "info", dev, 1,
                         dev + " port 1: counters cannot be read here (EINVAL)",
                         "Normal for devices without a port management agent."));
  }
  const std::string text = renderText(buildReport({node("gpu01", fs)}), {});
  EXPECT_NE(text.find("COUNTER_UNAVAILABLE  gpu01 mlx5_[0-7] port 1 (8 places)"), std::string::npos)
      << text;
  EXPECT_EQ(count(text, "COUNTER_UNAVAILABLE"), 1u) << text;
}

TEST(ReportText, EveryLineFitsTheWidthAndLongTextWrapsAtWords) {
  const std::string log_line(300, 'x');  // a log line without spaces: cut, not overflowing
  auto n = node("node1", {finding("node1", "PHY_ERRORS", "critical", "mlx5_0", 1,
                                  "mlx5_0 port 1: physical-layer errors increased during the 10 "
                                  "s window, and this summary is long enough to need wrapping",
                                  kLongAction, {"symbol_error = 5 (+5 in 10 s)", log_line})});
  for (std::size_t width : {std::size_t{80}, std::size_t{60}}) {
    TextOptions o;
    o.node_table = true;
    o.width = width;
    const std::string text = renderText(buildReport({n}), o);
    EXPECT_LE(longestLine(text), width) << text;
    EXPECT_NE(text.find("  next step: Bit errors on the link:"), std::string::npos) << text;
  }
  TextOptions unwrapped;
  EXPECT_GT(longestLine(renderText(buildReport({n}), unwrapped)), 300u);
}

TEST(ReportText, TheWorstFindingIsTheMostSpecificAmongTheMostSevere) {
  auto n =
      node("node1",
           {finding("node1", "MEMLOCK_LIMIT", "warning", "", 0, "memlock is 64 KiB", "raise it"),
            finding("node1", "LINK_RATE_BELOW_EXPECTED", "warning", "mlx5_0", 1,
                    "mlx5_0 port 1 runs at 100 Gb/s", "check the cable")});
  EXPECT_EQ(summarizeNode(n).worst_code(), "LINK_RATE_BELOW_EXPECTED");
  EXPECT_LT(findingSpecificity("PORT_DOWN"), findingSpecificity("MEMLOCK_LIMIT"));
  EXPECT_LT(findingSpecificity("PHY_ERRORS"), findingSpecificity("ESCALATE_HOST_INSPECTION"));
}

TEST(ReportText, ColourMarksOnlySeverityWordsAndHostileEscapesNeverPass) {
  auto n = node("node1",
                {finding("node1", "PORT_DOWN", "critical", "mlx5_0", 1,
                         "mlx5_0 port 1 is DOWN \x1b]0;pwned\x07", "fix it", {"log \x1b[2Jline"})});
  TextOptions o;
  o.color = true;
  const std::string colored = renderText(buildReport({n}), o);
  EXPECT_NE(colored.find("\x1b[1;31mCRITICAL\x1b[0m"), std::string::npos) << colored;
  EXPECT_EQ(colored.find("\x1b]0;"), std::string::npos);
  EXPECT_EQ(colored.find("\x1b[2J"), std::string::npos);
  o.color = false;
  const std::string plain = renderText(buildReport({n}), o);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos) << plain;
}

TEST(ReportText, QuietIsTheVerdictTableAndCountsOnly) {
  auto n = node("node1", {finding("node1", "PORT_DOWN", "critical", "mlx5_0", 1, "down", "fix")});
  TextOptions o;
  o.quiet = true;
  const std::string text = renderText(buildReport({n}), o);
  EXPECT_NE(text.find("CRITICAL"), std::string::npos) << text;
  EXPECT_NE(text.find("1 finding(s): 1 critical"), std::string::npos) << text;
  EXPECT_EQ(text.find("next step"), std::string::npos) << text;
}

}  // namespace
}  // namespace ibc::core

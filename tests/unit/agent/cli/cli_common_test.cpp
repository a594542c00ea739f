// The plumbing both programs' commands share (cli_common.cpp): help footers and the 80-column
// help formatter, parse errors that name the command's --help, the verdict winning over a
// delivery problem, report and text options (width, colour), and printing a report.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli_run.h"
#include "fixtures.h"
#include "ibc/agent/cli_common.h"
#include "ibc/core/findings.h"
#include "ibc/core/rules.h"

using ::testing::HasSubstr;

namespace ibc::agent::cli {
namespace {

using ibc::test::CliHarness;

TEST(HelpFooter, OneExampleIsSingularAndEachExampleIsIndentedAboveTheExitCodes) {
  EXPECT_EQ(helpFooter({"ibcollect x"}, "Exit codes: 0."),
            "Example:\n  ibcollect x\n\nExit codes: 0.");
  EXPECT_EQ(helpFooter({"a", "b"}, "E"), "Examples:\n  a\n  b\n\nE");
}

TEST(VerdictBeforeDelivery, WarningsAndCriticalWinOverADeliveryProblem) {
  EXPECT_EQ(verdictBeforeDelivery(core::kExitCritical, true), core::kExitCritical);
  EXPECT_EQ(verdictBeforeDelivery(core::kExitWarnings, true), core::kExitWarnings);
  EXPECT_EQ(verdictBeforeDelivery(core::kExitOk, true), core::kExitCollectFailed);
  EXPECT_EQ(verdictBeforeDelivery(core::kExitOk, false), core::kExitOk);
  EXPECT_EQ(verdictBeforeDelivery(core::kExitCritical, false), core::kExitCritical);
}

TEST(RuleOptions, OnlyExpectationsThatWereGivenBecomeRuleOptions) {
  ReportOptions o;
  EXPECT_FALSE(ruleOptions(o).expect_rate_gbps.has_value());
  EXPECT_FALSE(ruleOptions(o).expect_busbw_gbs.has_value());
  o.expect_rate = 200;
  o.expect_busbw = 180;
  EXPECT_EQ(ruleOptions(o).expect_rate_gbps, 200.0);
  EXPECT_EQ(ruleOptions(o).expect_busbw_gbs, 180.0);
}

core::TextOptions textOptions(CliHarness& h, const ReportOptions& o) {
  std::ostringstream out, err;
  auto env = h.environment(out, err);
  return textOptionsFor(env, o);
}

TEST(TextOptions, WidthIsTheFlagElseColumnsElseTheTerminalElseNoWrapping) {
  CliHarness h;
  ReportOptions o;
  EXPECT_EQ(textOptions(h, o).width, 0u);
  h.terminal_columns = [] { return 132; };
  EXPECT_EQ(textOptions(h, o).width, 132u);
  h.env.vars["COLUMNS"] = "100";
  EXPECT_EQ(textOptions(h, o).width, 100u);
  o.width = 90;
  EXPECT_EQ(textOptions(h, o).width, 90u);
  // A COLUMNS that is no small number is ignored; a width below 20 is no wrapping.
  o.width = 0;
  h.env.vars["COLUMNS"] = "wide";
  EXPECT_EQ(textOptions(h, o).width, 132u);
  h.terminal_columns = [] { return 10; };
  h.env.vars.erase("COLUMNS");
  EXPECT_EQ(textOptions(h, o).width, 0u);
}

TEST(TextOptions, AutoColourIsForATerminalWithoutNoColor) {
  CliHarness h;
  ReportOptions o;
  EXPECT_FALSE(textOptions(h, o).color);  // not a terminal
  h.terminal_columns = [] { return 80; };
  EXPECT_TRUE(textOptions(h, o).color);
  h.env.vars["NO_COLOR"] = "1";
  EXPECT_FALSE(textOptions(h, o).color);
  o.color = "always";
  EXPECT_TRUE(textOptions(h, o).color);
  o.color = "never";
  h.env.vars.clear();
  EXPECT_FALSE(textOptions(h, o).color);
}

TEST(TextOptions, QuietVerboseAndNoInfoCarryOver) {
  CliHarness h;
  ReportOptions o;
  o.quiet = true;
  o.verbose = true;
  o.quiet_info = true;
  o.expect_busbw = 42;
  const auto t = textOptions(h, o);
  EXPECT_TRUE(t.quiet);
  EXPECT_TRUE(t.verbose);
  EXPECT_FALSE(t.show_info);
  EXPECT_DOUBLE_EQ(t.expect_busbw_gbs, 42);
}

// A node with findings: the real mlx5 tree with hw_counters errors.
core::AnalyzedNode brokenNode() {
  ibc::test::FixedClock clock;
  core::AnalyzedNode n;
  n.snapshot = ibc::test::collectFixtureTree(
      ibc::test::fixturePath("real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/"
                             "fixtures"),
      clock);
  n.findings = core::diagnoseNode(n.snapshot, {});
  return n;
}

TEST(PrintReport, JsonIsOneDocumentAndTheExitCodeIsItsFindings) {
  const core::AnalyzedNode node = brokenNode();
  ASSERT_FALSE(node.findings.empty());
  const int expected = core::exitCodeFor(node.findings);
  ASSERT_NE(expected, core::kExitOk);
  CliHarness h;
  std::ostringstream out, err;
  auto env = h.environment(out, err);
  ReportOptions o;
  o.format = "json";
  EXPECT_EQ(printReport(env, {node}, o), expected);
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out.str(), &doc).ok()) << out.str();
  EXPECT_EQ(doc.fields().at("findings").list_value().values_size(),
            static_cast<int>(node.findings.size()));
  EXPECT_EQ(err.str(), "");
}

TEST(PrintReport, TextNamesEveryFindingCodeAndFitsTheWidth) {
  const core::AnalyzedNode node = brokenNode();
  CliHarness h;
  std::ostringstream out, err;
  auto env = h.environment(out, err);
  ReportOptions o;
  o.width = 80;
  EXPECT_EQ(printReport(env, {node}, o), core::exitCodeFor(node.findings));
  for (const auto& f : node.findings) EXPECT_THAT(out.str(), HasSubstr(f.code()));
  std::istringstream lines(out.str());
  for (std::string l; std::getline(lines, l);) EXPECT_LE(l.size(), 80u) << l;
}

TEST(SeamsFor, ProgressGoesToStderrWithTheProgramsName) {
  CliHarness h;
  std::ostringstream out, err;
  auto env = h.environment(out, err);
  const HostSeams seams = seamsFor(env, h.files);
  seams.progress("collecting");
  EXPECT_EQ(err.str(), "ibcollect: collecting\n");
  EXPECT_EQ(&seams.files, &h.files);
}

TEST(ParseAndRun, AParseErrorIsOneLineAndNamesTheHelpOfTheCommandGiven) {
  CliHarness h;
  const auto r = h.run(&runCli, {"snapshot", "--format", "yaml"});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("ibcollect: --format: "));
  EXPECT_THAT(r.err, HasSubstr("\nRun 'ibcollect snapshot --help' for usage.\n"));
  EXPECT_EQ(r.out, "");
}

TEST(ParseAndRun, HelpIsExitZeroOnStdoutAndFitsEightyColumns) {
  CliHarness h;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"snapshot", "--help"}, {"analyze", "--help"}}) {
    const auto r = h.run(&runCli, args);
    EXPECT_EQ(r.code, core::kExitOk);
    EXPECT_THAT(r.out, HasSubstr("Exit codes:"));
    std::istringstream lines(r.out);
    for (std::string l; std::getline(lines, l);) EXPECT_LE(l.size(), 80u) << args.front() << l;
  }
}

TEST(ReportOptions, OutOfRangeValuesAreUsageErrors) {
  CliHarness h;
  EXPECT_EQ(h.run(&runCli, {"analyze", "--width", "5"}).code, core::kExitUsage);
  EXPECT_EQ(h.run(&runCli, {"analyze", "--color", "sometimes"}).code, core::kExitUsage);
  EXPECT_EQ(h.run(&runCli, {"analyze", "--expect-rate", "-1"}).code, core::kExitUsage);
}

}  // namespace
}  // namespace ibc::agent::cli

#include "ibc/agent/cli_common.h"

#include <algorithm>
#include <sstream>

#include "ibc/core/findings.h"
#include "ibc/core/text.h"

namespace ibc::agent::cli {

namespace {

// CLI11's formatter with descriptions wrapped at word boundaries so `--help` fits 80
// columns (CLI11 indents the lines after a '\n' under the description column).
class WrappingFormatter : public CLI::Formatter {
 public:
  static constexpr std::size_t kHelpWidth = 80;

  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrapWords(CLI::Formatter::make_option_desc(opt));
  }
  // A command's own description above its usage, at most kHelpWidth wide (line by line: the
  // top level's has lines of its own).
  std::string make_description(const CLI::App* app) const override {
    std::string out;
    core::forEachLine(CLI::Formatter::make_description(app), [&](std::string_view line, uint32_t) {
      out += core::wrapWords(line, kHelpWidth) + "\n";
    });
    return out;
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), wrapWords(sub->get_description()),
                             get_column_width());
    return out.str();
  }

 private:
  // The description column's words on lines of at most kHelpWidth - column width.
  std::string wrapWords(const std::string& desc) const {
    return core::wrapWords(desc, kHelpWidth - get_column_width());
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> helpFormatter() { return std::make_shared<WrappingFormatter>(); }

int parseAndRun(CLI::App& app, const std::vector<std::string>& args, CliEnvironment& env,
                const std::vector<Command>& commands, const char* nothing_given) {
  std::vector<const char*> argv{"ibcollect"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, env.out, env.err), core::kExitOk;  // --help
    // One line for the mistake, one for where to look: the help of the command given.
    std::string command = "ibcollect";
    for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
      at = at->get_subcommands().front();
      command += " " + at->get_name();
    }
    env.err << "ibcollect: " << e.what() << "\nRun '" << command << " --help' for usage.\n";
    return core::kExitUsage;
  }
  for (const auto& c : commands) {
    if (c.selected()) return c.run();
  }
  env.err << "ibcollect: " << nothing_given << "\nRun '" << app.get_name()
          << " --help' for usage.\n";
  return core::kExitUsage;
}

const char* const kExitCodes =
    "Exit codes: 0 no warning or critical finding, 1 warnings, 2 critical findings,\n"
    "3 usage error, 4 could not collect or deliver (the message says what was kept,\n"
    "where). A verdict is never hidden by a delivery problem: with warnings or\n"
    "critical findings the exit code is the verdict's (1 or 2) and the delivery\n"
    "problem is printed.";

const char* const kDeliveryExitCodes =
    "Exit codes: 0 every snapshot delivered, 3 usage error, 4 a snapshot could not be\n"
    "delivered (each is named; what was not delivered stays in the spool for flush).";

const char* const kDownloadExitCodes =
    "Exit codes: 0 done, 3 usage error, 4 the collector could not be reached or\n"
    "refused, or a file arrived damaged or could not be written (each is named).";

std::string helpFooter(std::initializer_list<std::string_view> examples,
                       std::string_view exit_codes) {
  std::string out = examples.size() == 1 ? "Example:\n" : "Examples:\n";
  for (auto e : examples) out += "  " + std::string(e) + "\n";
  return out + "\n" + std::string(exit_codes);
}

int verdictBeforeDelivery(int verdict_code, bool delivery_failed) {
  if (verdict_code == core::kExitWarnings || verdict_code == core::kExitCritical)
    return verdict_code;
  return delivery_failed ? core::kExitCollectFailed : verdict_code;
}

void addReportOptions(CLI::App* cmd, ReportOptions& o) {
  cmd->add_option("--format", o.format, "Output: text (for people) or json (one document)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--expect-rate", o.expect_rate,
                  "Link rate every active port should run at, Gb/s (e.g. 200 for HDR, 400 for NDR)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--expect-busbw", o.expect_busbw,
                  "nccl-tests bus bandwidth a healthy run reaches, GB/s: shown beside the "
                  "results, and a lower peak is NCCL_TEST_LOW_BUSBW")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-info", o.quiet_info, "Text output: hide info-level findings");
  cmd->add_flag("-q,--quiet", o.quiet, "Text output: the verdict table and counts only");
  cmd->add_flag("-v,--verbose", o.verbose,
                "Text output: every place and every evidence line of each finding");
  cmd->add_option("--color", o.color,
                  "Colour the severity words: auto (a terminal, unless NO_COLOR is set), always, "
                  "never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_option("--width", o.width,
                  "Text output: wrap at N columns (default: $COLUMNS, else the terminal's width, "
                  "else no wrapping)")
      ->check(CLI::Range(20, 1000));
}

core::RuleOptions ruleOptions(const ReportOptions& o) {
  core::RuleOptions r;
  if (o.expect_rate > 0) r.expect_rate_gbps = o.expect_rate;
  if (o.expect_busbw > 0) r.expect_busbw_gbs = o.expect_busbw;
  return r;
}

core::TextOptions textOptionsFor(CliEnvironment& env, const ReportOptions& o) {
  core::TextOptions t;
  t.show_info = !o.quiet_info;
  t.quiet = o.quiet;
  t.verbose = o.verbose;
  t.expect_busbw_gbs = o.expect_busbw;
  const int terminal = env.terminal_columns ? env.terminal_columns() : 0;
  int width = o.width;
  if (width == 0) {
    const std::string columns = env.env.get("COLUMNS");
    if (!columns.empty() && columns.size() < 5 &&
        std::all_of(columns.begin(), columns.end(), [](char c) { return c >= '0' && c <= '9'; }))
      width = std::stoi(columns);
  }
  if (width == 0) width = terminal;
  t.width = width >= 20 ? static_cast<std::size_t>(width) : 0;
  t.color =
      o.color == "always" || (o.color == "auto" && terminal > 0 && env.env.get("NO_COLOR").empty());
  return t;
}

int printReport(CliEnvironment& env, std::vector<core::AnalyzedNode> nodes, const ReportOptions& o,
                bool node_table) {
  const auto report = core::buildReport(std::move(nodes));
  if (o.format == "json") {
    auto json = core::renderJson(report);
    if (!json.ok()) {
      env.err << "ibcollect: " << json.error().message << "\n";
      return core::kExitCollectFailed;
    }
    env.out << *json;
  } else {
    core::TextOptions t = textOptionsFor(env, o);
    t.node_table = node_table;
    env.out << core::renderText(report, t);
  }
  std::vector<::ibcollect::v1::Finding> all(report.findings().begin(), report.findings().end());
  return core::exitCodeFor(all);
}

HostSeams seamsFor(CliEnvironment& env, const Filesystem& host) {
  return HostSeams{host,
                   env.files,
                   env.runner,
                   env.clock,
                   env.env,
                   env.process_facts,
                   [&env](const std::string& msg) { env.err << "ibcollect: " << msg << "\n"; }};
}

}  // namespace ibc::agent::cli

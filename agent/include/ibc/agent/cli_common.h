#pragma once

// Shared plumbing of the command modules of both programs (agent/src/cli/cli_*.cpp and
// support/src/cli/*.cpp): help, report options, the command table, module registration.

#include <CLI/CLI.hpp>

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/agent/cli.h"
#include "ibc/agent/collect.h"
#include "ibc/core/report.h"
#include "ibc/core/rules.h"

#ifndef IBC_VERSION
#define IBC_VERSION "0.0.0"
#endif

namespace ibc::agent::cli {

extern const char* const kExitCodes;
// Exit codes of the commands that deliver without judging (upload, flush) and of those that
// download (fetch).
extern const char* const kDeliveryExitCodes;
extern const char* const kDownloadExitCodes;
// A command's --help footer: "Examples:" with one command line per entry, then `exit_codes`
// (each command's help shows its own examples, never the top level's).
std::string helpFooter(std::initializer_list<std::string_view> examples,
                       std::string_view exit_codes);

// A command and what runs it: `selected` says whether the parsed command line asked for
// it (a subcommand was given, or a top-level option such as --job).
struct Command {
  std::function<bool()> selected;
  std::function<int()> run;
};

// CLI11's help formatter with descriptions wrapped at word boundaries (80 columns).
std::shared_ptr<CLI::Formatter> helpFormatter();

// Parses `args` (without argv[0]) into `app` and runs the selected command. A parse error is
// one line for the mistake and one naming the --help of the command given (exit 3); no
// command selected prints `nothing_given` (exit 3).
int parseAndRun(CLI::App& app, const std::vector<std::string>& args, CliEnvironment& env,
                const std::vector<Command>& commands, const char* nothing_given);

// The exit code of a command that judged evidence and then delivered it: warnings and
// critical findings (1, 2) win over a delivery problem (4), which the command printed.
int verdictBeforeDelivery(int verdict_code, bool delivery_failed);

struct ReportOptions {
  std::string format = "text";
  double expect_rate = 0;
  bool quiet_info = false;
  bool quiet = false;    // -q: the verdict table and counts only
  bool verbose = false;  // -v: every place and evidence line
  std::string color = "auto";
  int width = 0;
  double expect_busbw = 0;  // --expect-busbw, GB/s; 0 not given  // --width; 0: COLUMNS, else the
                            // terminal's, else no wrapping
};

void addReportOptions(CLI::App* cmd, ReportOptions& o);
core::RuleOptions ruleOptions(const ReportOptions& o);
// Prints the report (text or JSON) and returns the exit code of its findings.
// node_table: one row per node and findings grouped by node (jobs).
// Text options from the report options: width from --width, else $COLUMNS, else the terminal;
// colour per --color and NO_COLOR.
core::TextOptions textOptionsFor(CliEnvironment& env, const ReportOptions& o);
int printReport(CliEnvironment& env, std::vector<core::AnalyzedNode> nodes, const ReportOptions& o,
                bool node_table = false);
HostSeams seamsFor(CliEnvironment& env, const Filesystem& host);

// Command modules register their subcommands; the state they parse into lives as long
// as the returned Command (captured by the lambdas).
void addCollectCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands);
// `--job` (top-level options), `compare`, and the hidden node side `job-step`.
void addJobCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands);
void addTransportCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands);
// The support program's commands (ibcollect-support, support_cli.cpp).
// `host-inspect` (docs/formats.md, the physical host's side).
void addHostCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands);
// `bundle export|verify|show` (cli_bundle.cpp).
void addBundleCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands);
// `case create|list|show|update|attach` (cli_case.cpp).
void addCaseCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands);
// `fetch` (cli_fetch.cpp).
void addFetchCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands);
// `explain CODE | --list` (cli_explain.cpp): core's finding registry for people, and
// docs/codes.md (`--list --format markdown`).
void addExplainCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands);
// `completion bash|zsh|fish` (cli_completion.cpp): the completion script of `program`, read
// from `app` when it runs (so register it with every other command). Commands of `app` that
// pass their words on to `delegate` (prefix commands: ibcollect's support commands) complete
// with `delegate`'s script.
void addCompletionCommand(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands,
                          const std::string& program, const std::string& delegate);
// A check that accepts every value and names the ones worth offering: shell completion offers
// them (set option_text too: --help would list them all).
CLI::Validator suggestedValues(const std::vector<std::string>& values);

}  // namespace ibc::agent::cli

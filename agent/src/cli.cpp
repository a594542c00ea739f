#include "ibc/agent/cli.h"

#include <sstream>

#include "cli_internal.h"
#include "ibc/core/findings.h"

namespace ibc::agent {

namespace {

// CLI11's formatter with descriptions wrapped at word boundaries so `--help` fits 80
// columns (CLI11 indents the lines after a '\n' under the description column).
class WrappingFormatter : public CLI::Formatter {
 public:
  static constexpr std::size_t kHelpWidth = 80;

  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrapWords(CLI::Formatter::make_option_desc(opt));
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
    const std::size_t room = kHelpWidth - get_column_width();
    std::string out, line;
    std::size_t i = 0;
    while (i < desc.size()) {
      std::size_t j = desc.find(' ', i);
      if (j == std::string::npos) j = desc.size();
      const std::string word = desc.substr(i, j - i);
      i = j + 1;
      if (word.empty()) continue;
      if (!line.empty() && line.size() + 1 + word.size() > room) {
        out += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    return out + line;
  }
};

}  // namespace

std::string versionString() { return "ibcollect " IBC_VERSION; }

int runCli(const std::vector<std::string>& args, CliEnvironment& env) {
  CLI::App app{
      "ibcollect: VF-side InfiniBand/RoCE evidence and diagnosis for GPU clusters.\n"
      "Collects sysfs port state and counters, kernel log, netdev and host facts,\n"
      "NCCL logs and nccl-tests output into a snapshot and prints findings with the\n"
      "next step.",
      "ibcollect"};
  app.formatter(std::make_shared<WrappingFormatter>());
  app.set_version_flag("--version", versionString());
  app.require_subcommand(0, 1);
  app.footer(std::string(
                 "Examples:\n"
                 "  ibcollect --job 1234                        every node of Slurm job 1234\n"
                 "  ibcollect snapshot -o node.ibsnap           collect this node, save, diagnose\n"
                 "  ibcollect snapshot --window 10              also counter deltas over 10 s\n"
                 "  ibcollect analyze node.ibsnap --nccl-log rank0.log\n"
                 "  ibcollect analyze --tool-output ibstat.txt  diagnose pasted tool output\n"
                 "  ibcollect analyze --root /tmp/customer-tree diagnose a copied /sys tree\n\n") +
             cli::kExitCodes);

  std::vector<cli::Command> commands;
  cli::addCollectCommands(app, env, commands);
  cli::addJobCommands(app, env, commands);
  cli::addTransportCommands(app, env, commands);
  cli::addBundleCommands(app, env, commands);
  cli::addCaseCommands(app, env, commands);
  cli::addHostCommands(app, env, commands);

  std::vector<const char*> argv{"ibcollect"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, env.out, env.err), core::kExitOk;  // --help
    // One line for the mistake, one for where to look: the help of the command given.
    std::string command = "ibcollect";
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    env.err << "ibcollect: " << e.what() << "\nRun '" << command << " --help' for usage.\n";
    return core::kExitUsage;
  }
  for (const auto& c : commands) {
    if (c.selected()) return c.run();
  }
  env.err << "ibcollect: give a command (snapshot, analyze, compare) or --job JOBID\n"
             "Run 'ibcollect --help' for usage.\n";
  return core::kExitUsage;
}

}  // namespace ibc::agent

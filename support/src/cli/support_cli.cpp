#include "ibc/support/support_cli.h"

#include <cassert>

#include "ibc/agent/cli_common.h"

namespace ibc::agent {

int runSupportCli(const std::vector<std::string>& args, CliEnvironment& env) {
  CLI::App app{
      "ibcollect-support: the support and provider commands of ibcollect: escalation\n"
      "bundles, cases in the collector, a job's snapshots from it, and the physical\n"
      "host's inspection of the PFs behind a bundle. Run as 'ibcollect COMMAND' or\n"
      "'ibcollect-support COMMAND'.",
      "ibcollect"};
  app.formatter(cli::helpFormatter());
  app.set_version_flag("--version", std::string(kSupportProgram) + " " IBC_VERSION);
  app.require_subcommand(0, 1);
  app.footer(
      std::string("Examples:\n"
                  "  ibcollect case create --job 1234 --tenant acme --title 'slow allreduce'\n"
                  "  ibcollect bundle export --case 7 -o case7.ibbundle\n"
                  "  ibcollect host-inspect --bundle case7.ibbundle   (on the physical host)\n\n") +
      cli::kExitCodes);
  std::vector<cli::Command> commands;
  cli::addBundleCommands(app, env, commands);
  cli::addCaseCommands(app, env, commands);
  cli::addFetchCommands(app, env, commands);
  cli::addHostCommands(app, env, commands);
  // The modules above register exactly the rows of kSupportCommands, which `ibcollect`
  // forwards here: a row without its module is a programming error.
  for ([[maybe_unused]] const SupportCommand& c : kSupportCommands) {
    assert(!app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == c.name; }).empty());
  }
  cli::addCompletionCommand(app, env, commands, kSupportProgram, "");
  const std::string nothing_given = "give a command (" + supportCommandNames() + ")";
  return cli::parseAndRun(app, args, env, commands, nothing_given.c_str());
}

}  // namespace ibc::agent

#include "ibc/agent/support_cli.h"

#include "cli_internal.h"

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
  cli::addCompletionCommand(app, env, commands, kSupportProgram, "");
  return cli::parseAndRun(app, args, env, commands,
                          "give a command (bundle, case, fetch, host-inspect)");
}

}  // namespace ibc::agent

#include "ibc/agent/cli.h"

#include "cli_internal.h"
#include "ibc/core/findings.h"

namespace ibc::agent {

std::string versionString() { return "ibcollect " IBC_VERSION; }

int runCli(const std::vector<std::string>& args, CliEnvironment& env) {
  CLI::App app{
      "ibcollect: VF-side InfiniBand/RoCE evidence and diagnosis for GPU clusters.\n"
      "Collects sysfs port state and counters, kernel log, netdev and host facts, NCCL logs and\n"
      "nccl-tests output into a snapshot and prints findings with the next step.",
      "ibcollect"};
  app.set_version_flag("--version", versionString());
  app.require_subcommand(0, 1);
  app.footer(
      std::string(
          "Examples:\n"
          "  ibcollect --job 1234                         every node of Slurm job 1234, compared\n"
          "  ibcollect snapshot -o node.ibsnap            collect this node, save, diagnose\n"
          "  ibcollect snapshot --window 10               also measure counter deltas over 10 s\n"
          "  ibcollect analyze node.ibsnap --nccl-log rank0.log\n"
          "  ibcollect analyze --tool-output ibstat.txt   diagnose pasted tool output\n"
          "  ibcollect analyze --root /tmp/customer-tree  diagnose a copied /sys tree\n\n") +
      cli::kExitCodes);

  std::vector<cli::Command> commands;
  cli::addCollectCommands(app, env, commands);
  cli::addJobCommands(app, env, commands);
  cli::addTransportCommands(app, env, commands);

  std::vector<const char*> argv{"ibcollect"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e, env.out, env.err);
    if (rc == 0) return core::kExitOk;  // --help, --version
    env.err << "Run 'ibcollect --help' for usage.\n";
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

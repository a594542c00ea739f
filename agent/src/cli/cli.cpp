#include "ibc/agent/cli.h"

#include <cerrno>

#include "ibc/agent/cli_common.h"
#include "ibc/core/findings.h"

namespace ibc::agent {

namespace {

bool isSupportCommand(const std::string& name) {
  for (const SupportCommand& c : kSupportCommands) {
    if (name == c.name) return true;
  }
  return false;
}

// The directory part of this program's path, with its '/' ("" when it has none).
std::string directoryOf(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Git-style: `ibcollect bundle ...` is `ibcollect-support bundle ...` from the directory
// this program is in (never $PATH: the pair is installed together, and a tenant's PATH may
// hold anything). Returns only when that program could not be run.
int runSupportProgram(CliEnvironment& env, const std::vector<std::string>& args) {
  const std::string& command = args.front();
  const std::string dir = directoryOf(env.executable);
  if (dir.empty()) {
    // Never a bare name: execv would take it from the working directory.
    env.err << "ibcollect " << command << ": cannot tell where this ibcollect is installed; run "
            << kSupportProgram << " " << command << " directly\n";
    return core::kExitUsage;
  }
  const std::string path = dir + kSupportProgram;
  std::vector<std::string> argv{kSupportProgram};
  argv.insert(argv.end(), args.begin(), args.end());
  const core::Status st = env.exec_program
                              ? env.exec_program(path, argv)
                              : core::Status(core::Error{core::ErrorCode::NotFound, path});
  if (!st.ok() && st.error().code == core::ErrorCode::NotFound) {
    env.err << "ibcollect " << command << ": this is a support command (" << supportCommandNames()
            << "), provided by the package " << kSupportProgram
            << ", which is not installed here (no " << path << ").\n"
            << "Install it where support or provider work happens (apt-get install "
            << kSupportProgram << "); tenant nodes do not need it.\n";
  } else {
    env.err << "ibcollect " << command << ": cannot run " << path << ": "
            << (st.ok() ? std::string("exec returned") : st.error().message) << "\n";
  }
  return core::kExitUsage;
}

// The support commands in `ibcollect --help`, each passing everything after it on.
void addSupportPlaceholders(CLI::App& app, CliEnvironment& env,
                            std::vector<cli::Command>& commands) {
  for (const auto& [name, summary] : kSupportCommands) {
    CLI::App* sub = app.add_subcommand(name, summary);
    // Their own heading in --help (and not in the man page's SUBCOMMANDS: they have theirs).
    sub->group(std::string("Support commands (") + kSupportProgram + ")");
    sub->prefix_command();
    sub->set_help_flag();  // `ibcollect bundle --help` is ibcollect-support's help
    commands.push_back({[sub] { return sub->parsed(); },
                        [&env, sub, command = std::string(name)] {
                          std::vector<std::string> rest{command};
                          for (auto& a : sub->remaining()) rest.push_back(a);
                          return runSupportProgram(env, rest);
                        }});
  }
}

}  // namespace

std::string versionString() { return "ibcollect " IBC_VERSION; }

std::string supportCommandNames() {
  std::string names;
  for (const SupportCommand& c : kSupportCommands) {
    if (!names.empty()) names += ", ";
    names += c.name;
  }
  return names;
}

int runCli(const std::vector<std::string>& args, CliEnvironment& env) {
  if (!args.empty() && isSupportCommand(args.front())) return runSupportProgram(env, args);
  CLI::App app{
      "ibcollect: VF-side InfiniBand/RoCE evidence and diagnosis for GPU clusters.\n"
      "Collects sysfs port state and counters, kernel log, netdev and host facts,\n"
      "NCCL logs and nccl-tests output into a snapshot and prints findings with the\n"
      "next step.",
      "ibcollect"};
  app.formatter(cli::helpFormatter());
  app.set_version_flag("--version", versionString());
  app.require_subcommand(0, 1);
  app.footer(
      std::string(
          "Examples:\n"
          "  ibcollect --job 1234                        every node of Slurm job 1234\n"
          "  ibcollect snapshot -o node.ibsnap           collect this node, save, diagnose\n"
          "  ibcollect snapshot --window 10              also counter deltas over 10 s\n"
          "  ibcollect analyze node.ibsnap --nccl-log rank0.log\n"
          "  ibcollect analyze --tool-output ibstat.txt  diagnose pasted tool output\n"
          "  ibcollect analyze --root /tmp/customer-tree diagnose a copied /sys tree\n"
          "  ibcollect explain PORT_NOT_ACTIVE_SM        what a code means, what to do\n\n") +
      cli::kExitCodes);

  // CLI11 builds every option of every command it holds before it parses (~0.25 ms of a
  // ~2 ms `snapshot`, run hourly on every node and by every step of --job): a command line
  // that starts with a subcommand gets only that subcommand's module; --help, --version,
  // --job and mistakes get them all, so help and errors are unchanged.
  const std::string first = args.empty() ? std::string() : args.front();
  const bool collect = first == "snapshot" || first == "analyze";
  const bool job = first == "compare" || first == "job-step";
  const bool transport = first == "upload" || first == "flush" || first == "verify";
  const bool explain = first == "explain";
  // `completion` reads every command's definitions: it needs them all.
  const bool all = !collect && !job && !transport && !explain;
  std::vector<cli::Command> commands;
  if (all || collect) cli::addCollectCommands(app, env, commands);
  if (all || job) cli::addJobCommands(app, env, commands);
  if (all || transport) cli::addTransportCommands(app, env, commands);
  if (all || explain) cli::addExplainCommands(app, env, commands);
  if (all) addSupportPlaceholders(app, env, commands);
  if (all) cli::addCompletionCommand(app, env, commands, "ibcollect", kSupportProgram);
  return cli::parseAndRun(app, args, env, commands,
                          "give a command (snapshot, analyze, compare) or --job JOBID");
}

}  // namespace ibc::agent

#pragma once

// The `ibcollect` command line (docs/commands.md). main() builds the real OS adapters and calls
// runCli(); tests call it with fixture trees and string streams.

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ibc/agent/seams.h"

namespace ibc::agent {

struct CliEnvironment {
  std::ostream& out;  // reports
  std::ostream& err;  // errors, progress, notices
  // User-given files (--nccl-log, -o, FILE.ibsnap), paths as typed.
  const Filesystem& files;
  // The node to collect from: "/" for this host, a tree for --root.
  std::function<std::unique_ptr<Filesystem>(const std::string& root)> open_root;
  CommandRunner& runner;
  Clock& clock;
  const Environment& env;
  std::function<ProcessFacts()> process_facts;
  // Every file written (snapshot -o, --job --out, bundles, the spool): the write seam.
  FileWriter& writer;
  // This program's own path: what `--job` runs on the nodes unless --agent says otherwise.
  std::string executable;
  // Columns of the terminal stdout is, or 0 when stdout is not a terminal (text layout and
  // `--color auto`). May be empty: not a terminal.
  std::function<int()> terminal_columns;
  // Runs another program in place of this one (git-style subcommands: `ibcollect bundle`
  // runs `ibcollect-support bundle`); returns only when it could not. Empty: not possible
  // here (NotFound).
  std::function<core::Status(const std::string& path, const std::vector<std::string>& argv)>
      exec_program = {};
};

// Runs one command line of the tenant program `ibcollect` (args without argv[0]); the
// support commands (kSupportCommands) run `ibcollect-support` from the same directory
// through env.exec_program. Returns the docs/commands.md exit code:
// 0 no warning or critical finding, 1 warnings, 2 critical, 3 usage error,
// 4 could not collect or deliver.
int runCli(const std::vector<std::string>& args, CliEnvironment& env);

std::string versionString();

// main() of a program: builds the real OS adapters (files, processes, clock, environment,
// terminal, exec) and runs `run` on the command line.
using CliRunner = int (*)(const std::vector<std::string>& args, CliEnvironment& env);
int runProgram(int argc, char** argv, CliRunner run);

// A command of `ibcollect-support` (support and provider side, docs/architecture.md): its
// name and the one line `ibcollect --help` shows for it.
struct SupportCommand {
  const char* name;
  const char* summary;
};

// The one table of the support commands: `ibcollect` forwards exactly these to
// kSupportProgram and lists them in its --help (so in its man page and completion);
// `ibcollect-support` registers one module per row (support_cli.cpp checks that it did).
inline constexpr SupportCommand kSupportCommands[] = {
    {"bundle", "Support: escalation bundles (export, verify, show)"},
    {"case", "Support: cases in the collector (create, list, show, update, attach)"},
    {"fetch", "Support: download a job's snapshots from the collector"},
    {"host-inspect", "Provider: inspect the PFs behind a bundle's VFs on the physical host"},
};
// The program and package that hold them.
inline constexpr const char* kSupportProgram = "ibcollect-support";

// "bundle, case, fetch, host-inspect": the table's names for messages.
std::string supportCommandNames();

}  // namespace ibc::agent

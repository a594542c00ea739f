#pragma once

// The `ibcollect` command line (docs/commands.md). main() builds the real OS adapters and calls
// runCli(); tests call it with fixture trees and string streams.

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ibc/agent/os.h"

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

// The commands `ibcollect-support` provides (support and provider side, docs/architecture.md), and
// the program and package that hold them.
inline constexpr const char* kSupportCommands[] = {"bundle", "case", "fetch", "host-inspect"};
inline constexpr const char* kSupportProgram = "ibcollect-support";

}  // namespace ibc::agent

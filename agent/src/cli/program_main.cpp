// The real OS adapters around a command line: what `ibcollect` and `ibcollect-support`
// run from main().
#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "ibc/agent/cli.h"
#include "ibc/agent/seams.h"

namespace ibc::agent {

int runProgram(int argc, char** argv, CliRunner run) {
  std::ios::sync_with_stdio(false);
  RootedFilesystem files("");
  ProcessRunner runner;
  SystemClock clock;
  ProcessEnvironment env;
  DiskFileWriter writer;
  CliEnvironment cli{
      std::cout,
      std::cerr,
      files,
      [](const std::string& root) { return std::make_unique<RootedFilesystem>(root); },
      runner,
      clock,
      env,
      &readProcessFacts,
      writer,
      selfExecutable(),
      [] {
        winsize ws{};
        if (::isatty(STDOUT_FILENO) != 1) return 0;
        return ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? int{ws.ws_col} : 80;
      },
      [](const std::string& path, const std::vector<std::string>& program_argv) {
        std::cout.flush();
        std::cerr.flush();
        return execProgram(path, program_argv);
      }};
  std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = run(args, cli);
  std::cout.flush();
  return rc;
}

}  // namespace ibc::agent

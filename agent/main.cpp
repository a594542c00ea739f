// ibcollect: builds the real OS adapters and hands the command line to runCli().
#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "ibc/agent/cli.h"
#include "ibc/agent/os.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  ibc::agent::RootedFilesystem files("");
  ibc::agent::ProcessRunner runner;
  ibc::agent::SystemClock clock;
  ibc::agent::ProcessEnvironment env;
  ibc::agent::DiskFileWriter writer;
  ibc::agent::CliEnvironment cli{
      std::cout,
      std::cerr,
      files,
      [](const std::string& root) { return std::make_unique<ibc::agent::RootedFilesystem>(root); },
      runner,
      clock,
      env,
      &ibc::agent::readProcessFacts,
      writer,
      ibc::agent::selfExecutable(),
      [] {
        winsize ws{};
        if (::isatty(STDOUT_FILENO) != 1) return 0;
        return ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? int{ws.ws_col} : 80;
      }};
  std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = ibc::agent::runCli(args, cli);
  std::cout.flush();
  return rc;
}

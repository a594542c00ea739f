// ibcollect-collector: raises the descriptor limit for many agents at once and hands the
// command line to runCollector().
#include <signal.h>
#include <sys/resource.h>

#include <iostream>
#include <string>
#include <vector>

#include "ibc/collector/app.h"

int main(int argc, char** argv) {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  ::signal(SIGPIPE, SIG_IGN);
  const std::vector<std::string> args(argv + 1, argv + argc);
  return ibc::collector::runCollector(args, std::cout, std::cerr);
}

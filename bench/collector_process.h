#pragma once

// The real ibcollect-collector as the collector benchmarks start it (header-only; on demand,
// not in CI): listening on 127.0.0.1 port 0 with the PKI that certs/make-pki wrote to
// PKI_DIR (ca.pem, collector.pem, collector.key), stderr to a log file, the port read from
// the address it prints first on stdout.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace ibc::bench {

struct CollectorProcess {
  pid_t pid = -1;
  int port = 0;  // 0: it did not start (or printed no address)
};

inline CollectorProcess startCollector(const std::string& binary, const std::string& pki_dir,
                                       const std::string& data, const std::string& log,
                                       const std::vector<std::string>& extra = {}) {
  int out[2];
  if (::pipe(out) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = {binary,
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--data",
                                   data,
                                   "--ca",
                                   pki_dir + "/ca.pem",
                                   "--cert",
                                   pki_dir + "/collector.pem",
                                   "--key",
                                   pki_dir + "/collector.key"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  CollectorProcess c;
  const int spawned = ::posix_spawn(&c.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    return {};
  }
  std::string line;
  char ch;
  while (::read(out[0], &ch, 1) == 1 && ch != '\n') line.push_back(ch);
  ::close(out[0]);
  const auto colon = line.rfind(':');
  if (colon != std::string::npos) c.port = std::stoi(line.substr(colon + 1));
  return c;
}

// SIGTERM (a clean stop: drains) or SIGKILL, then waits for it.
inline void stopCollector(const CollectorProcess& c, int signal = SIGTERM) {
  if (c.pid <= 0) return;
  ::kill(c.pid, signal);
  ::waitpid(c.pid, nullptr, 0);
}

}  // namespace ibc::bench

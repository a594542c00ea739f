#pragma once

// Test support for integration tests that need a real `ibcollect-collector`: the process
// on 127.0.0.1 port 0 (its first stdout line gives the port), its arguments over a
// certs/make-pki directory, the identities that directory holds, plain TCP connections to
// it, and polling helpers.

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "loopback.h"

extern char** environ;

namespace ibcollect::v1 {}  // namespace ibcollect::v1

namespace ibc::test {

namespace v1 = ::ibcollect::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

inline std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
inline void writeAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Polls `condition` until it holds or `timeout` passes.
inline bool eventually(const std::function<bool()>& condition, milliseconds timeout = seconds(20)) {
  const auto deadline = SteadyClock::now() + timeout;
  while (SteadyClock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return condition();
}

// The collector as a child process: stdout's first line gives the port, stderr goes to a
// log file the test reads.
class CollectorProcess {
 public:
  CollectorProcess(const std::string& binary, const std::vector<std::string>& args,
                   const std::string& log_path)
      : log_path_(log_path) {
    int out[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    std::vector<std::string> argv = {binary};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&pid_, cargv[0], &actions, nullptr, cargv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    // The first line, with a deadline.
    std::string line;
    const auto deadline = SteadyClock::now() + seconds(30);
    while (line.find('\n') == std::string::npos && SteadyClock::now() < deadline) {
      pollfd p{out[0], POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    stdout_fd_ = out[0];
    stdout_ = line;
    const std::string prefix = "listening on 127.0.0.1:";
    EXPECT_EQ(line.rfind(prefix, 0), 0u) << line << "\n" << log();
    if (line.rfind(prefix, 0) == 0) port_ = std::stoi(line.substr(prefix.size()));
  }
  ~CollectorProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (stdout_fd_ >= 0) ::close(stdout_fd_);
  }
  CollectorProcess(const CollectorProcess&) = delete;
  CollectorProcess& operator=(const CollectorProcess&) = delete;

  // The rest of the stdout line that starts with `prefix` (e.g. "metrics on "), read with a
  // deadline; empty when no such line came.
  std::string stdoutLine(const std::string& prefix, milliseconds timeout = seconds(30)) {
    const auto deadline = SteadyClock::now() + timeout;
    while (true) {
      for (std::size_t at = 0; at < stdout_.size();) {
        const auto end = stdout_.find('\n', at);
        if (end == std::string::npos) break;
        if (stdout_.compare(at, prefix.size(), prefix) == 0) {
          return stdout_.substr(at + prefix.size(), end - at - prefix.size());
        }
        at = end + 1;
      }
      if (stdout_fd_ < 0 || SteadyClock::now() >= deadline) return "";
      pollfd p{stdout_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
      if (n <= 0) return "";
      stdout_.append(buf, static_cast<std::size_t>(n));
    }
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return readAll(log_path_); }
  void signal(int sig) const { ::kill(pid_, sig); }
  // The exit status after the process ends (-1 on timeout, 128+N when killed by N).
  int waitExit(milliseconds timeout = seconds(30)) {
    int status = 0;
    const bool ended =
        eventually([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, timeout);
    if (!ended) return -1;
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  std::string log_path_;
  std::string stdout_;
  int stdout_fd_ = -1;
  pid_t pid_ = -1;
  int port_ = 0;
  bool exited_ = false;
};

// The collector's arguments over the PKI certs/make-pki wrote to `pki`: 127.0.0.1 port 0,
// its store in `data`, then `extra`.
inline std::vector<std::string> collectorArgs(const std::string& pki, const std::string& data,
                                              const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {
      "--listen", "127.0.0.1:0",         "--data", data,
      "--ca",     pki + "/ca.pem",       "--cert", pki + "/collector.pem",
      "--key",    pki + "/collector.key"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A certificate and key certs/make-pki wrote; `node` is an agent certificate's CN.
struct Identity {
  std::string cert;
  std::string key;
  std::string node;
};
inline Identity agentIdentity(const std::string& pki, const std::string& tenant,
                              const std::string& node) {
  const std::string base = pki + "/agents/" + tenant + "/" + node;
  return {base + ".pem", base + ".key", node};
}
inline Identity supportIdentity(const std::string& pki, const std::string& name = "alice") {
  return {pki + "/support/" + name + ".pem", pki + "/support/" + name + ".key", ""};
}

// A plain TCP connection to 127.0.0.1:port (-1 on failure).
inline int rawConnect(int port) { return connectLoopback(port); }

}  // namespace ibc::test

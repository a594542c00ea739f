// The command seam (ProcessRunner: posix_spawn, argv, timeout, bounded output), a
// supervised child for job steps, and this program's own path.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "fd.h"
#include "ibc/os/os.h"

extern char** environ;

namespace ibc::os {

using detail::Fd;

namespace {

std::string findOnPath(std::string_view program) {
  if (program.find('/') != std::string_view::npos) {
    std::string p(program);
    return ::access(p.c_str(), X_OK) == 0 ? p : std::string();
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    std::string candidate = std::string(dir) + "/" + std::string(program);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return {};
}

// Starts `exe` with stdin from /dev/null and stdout/stderr on the given pipe ends, in its own
// process group with default signal handling.
Result<pid_t> spawnChild(const std::string& exe, const std::vector<std::string>& argv, int out_fd,
                         int err_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group, so a timeout can stop the child and anything it started.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  sigaddset(&default_signals, SIGTERM);
  sigaddset(&default_signals, SIGINT);
  posix_spawnattr_setsigdefault(&attr, &default_signals);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return errnoError(rc, argv[0]);
  return pid;
}

// Cuts streamed stdout into lines for the caller, who may stop the command at any line.
struct StdoutLines {
  const std::function<bool(std::string_view)>& on_line;
  std::string pending;  // partial line
  bool stop = false;    // the caller wants no more lines

  void deliver(std::string_view data) {
    pending.append(data);
    std::size_t start = 0;
    while (!stop) {
      const auto nl = pending.find('\n', start);
      if (nl == std::string::npos) break;
      if (!on_line(std::string_view(pending).substr(start, nl - start))) stop = true;
      start = nl + 1;
    }
    pending.erase(0, start);
    if (pending.size() > (1u << 20)) pending.clear();  // a line longer than 1 MiB is not ours
  }
  // The last line may have no newline.
  void finish() {
    if (!stop && !pending.empty()) on_line(pending);
  }
};

// Reads stdout and stderr until both close, the deadline passes (result.timed_out) or the
// line reader stops. Without a line reader stdout is kept like stderr, up to max_output.
void pumpOutput(int out_fd, int err_fd, std::chrono::steady_clock::time_point deadline,
                std::size_t max_output, StdoutLines* lines, CommandResult& result) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0 && !(lines != nullptr && lines->stop)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    const int n = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r > 0 && i == 0 && lines != nullptr) {
        lines->deliver(std::string_view(buf, static_cast<std::size_t>(r)));
      } else if (r > 0) {
        std::string& sink = *sinks[i];
        const std::size_t room = max_output > sink.size() ? max_output - sink.size() : 0;
        sink.append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(r)));
        if (static_cast<std::size_t>(r) > room) result.output_truncated = true;
      } else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
}

// Waits for the child. One that timed out or whose reader stopped is asked to stop (its
// whole process group), and killed after a short grace; its exit code is -1 unless the
// reader stopped it and it exited on its own.
int reapChild(pid_t pid, bool timed_out, bool stopped) {
  int status = 0;
  if (timed_out || stopped) {
    ::kill(-pid, SIGTERM);
    const auto grace = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > grace) {
        ::kill(-pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return stopped && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

bool ProcessRunner::available(std::string_view program) const {
  return !findOnPath(program).empty();
}

Result<CommandResult> CommandRunner::runStreaming(
    const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
    const std::function<bool(std::string_view)>& on_line, std::size_t max_stderr) {
  auto r = run(argv, timeout, std::max<std::size_t>(max_stderr, 64u << 20));
  if (!r.ok()) return r;
  std::string out = std::move(r->out);
  r->out.clear();
  std::size_t start = 0;
  while (start < out.size()) {
    auto nl = out.find('\n', start);
    if (nl == std::string::npos) nl = out.size();
    if (!on_line(std::string_view(out).substr(start, nl - start))) break;
    start = nl + 1;
  }
  return r;
}

Result<CommandResult> ProcessRunner::run(const std::vector<std::string>& argv,
                                         std::chrono::milliseconds timeout,
                                         std::size_t max_output) {
  return execute(argv, timeout, max_output, nullptr);
}

Result<CommandResult> ProcessRunner::runStreaming(
    const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
    const std::function<bool(std::string_view)>& on_line, std::size_t max_stderr) {
  return execute(argv, timeout, max_stderr, &on_line);
}

Result<CommandResult> ProcessRunner::execute(const std::vector<std::string>& argv,
                                             std::chrono::milliseconds timeout,
                                             std::size_t max_output,
                                             const std::function<bool(std::string_view)>* on_line) {
  if (argv.empty()) return Error{ErrorCode::InvalidArgument, "empty command"};
  const std::string exe = findOnPath(argv[0]);
  if (exe.empty()) return Error{ErrorCode::NotFound, argv[0] + ": not installed (not on PATH)"};

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return errnoError(errno, "pipe");
  Fd out_r(out_pipe[0]), out_w(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return errnoError(errno, "pipe");
  Fd err_r(err_pipe[0]), err_w(err_pipe[1]);
  const auto pid = spawnChild(exe, argv, out_w.get(), err_w.get());
  if (!pid.ok()) return pid.error();
  ::close(out_w.release());
  ::close(err_w.release());

  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<StdoutLines> lines;
  if (on_line != nullptr) lines.emplace(StdoutLines{*on_line, {}, false});
  pumpOutput(out_r.get(), err_r.get(), deadline, max_output, lines ? &*lines : nullptr, result);
  if (lines) lines->finish();
  result.exit_code = reapChild(*pid, result.timed_out, lines && lines->stop);
  return result;
}

std::string selfExecutable() {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

core::Status execProgram(const std::string& path, const std::vector<std::string>& argv) {
  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  for (const auto& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  ::execv(path.c_str(), c_argv.data());
  return errnoError(errno, path);
}

Result<SupervisedExit> runSupervised(const std::function<int()>& body,
                                     std::chrono::steady_clock::time_point deadline) {
  const pid_t pid = ::fork();
  if (pid < 0) return errnoError(errno, "fork");
  if (pid == 0) {
    int code = 4;
    code = body();
    std::fflush(nullptr);
    ::_exit(code);
  }
  SupervisedExit out;
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return errnoError(errno, "waitpid");
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      out.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // waiting on a child, not a race
  }
  if (WIFEXITED(status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  }
  return out;
}

}  // namespace ibc::os

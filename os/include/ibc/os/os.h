#pragma once

// The seams through which a program touches the host (CONTRIBUTING.md, habit 2): a rooted
// filesystem, a command runner (argv + timeout, never a shell string), a clock, the
// environment and a write seam, with their POSIX adapters (library ibc_os, which every
// program may link). Probes, readers and writers receive these interfaces; tests pass real
// fixture trees (RootedFilesystem over a temp dir or tests/fixtures) or the doubles of
// tests/unit/doubles/.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ibc/core/result.h"

namespace ibc::os {

using core::Error;
using core::ErrorCode;
using core::Result;

struct Access {
  bool readable = false;
  bool writable = false;
};

// What stat(2) says of a path (the path itself when it is a link).
struct FileStatus {
  bool regular = false;
  bool directory = false;
  bool fifo = false;
  uint64_t bytes = 0;
  int64_t modified_ns = 0;  // last modification, nanoseconds since the epoch
};

// Read-only view of a host filesystem. Paths are absolute host paths ("/sys/class/...");
// implementations map them under their root. Errors: NotFound (ENOENT/ENOTDIR),
// PermissionDenied (EACCES/EPERM), InvalidArgument (EINVAL, as some sysfs counters
// answer), TooLarge (file beyond max_bytes), Io (anything else, message has strerror).
// Implementations are safe to call from one thread at a time.
class Filesystem {
 public:
  virtual ~Filesystem() = default;
  // Whole file content, at most max_bytes. When the file holds more: TooLarge, or, when
  // `truncated` is given, the first max_bytes with *truncated = true.
  virtual Result<std::string> readFile(std::string_view path, std::size_t max_bytes,
                                       bool* truncated = nullptr) const = 0;
  // The last max_bytes of a file (the whole file when smaller). For logs, whose newest
  // lines matter most.
  virtual Result<std::string> readTail(std::string_view path, std::size_t max_bytes) const = 0;
  // Entry names of a directory, sorted, without "." and "..".
  virtual Result<std::vector<std::string>> listDir(std::string_view path) const = 0;
  // Target of a symbolic link, as stored.
  virtual Result<std::string> readLink(std::string_view path) const = 0;
  virtual bool exists(std::string_view path) const = 0;
  virtual bool isDirectory(std::string_view path) const = 0;
  // Type, size and modification time of a file (the spool orders what it keeps by age).
  // Errors as readFile; Unsupported from filesystems that keep no such facts (the default).
  virtual Result<FileStatus> status(std::string_view path) const;
  // What the calling process may do with the file (access(2) semantics).
  virtual Result<Access> access(std::string_view path) const = 0;
  // Every entry of a directory with its content (or why it could not be read), sorted by
  // name, at most max_files entries of at most max_bytes_each. One call per counter
  // directory: implementations read relative to the open directory.
  virtual Result<std::vector<std::pair<std::string, Result<std::string>>>> readDirFiles(
      std::string_view dir, std::size_t max_bytes_each, std::size_t max_files) const = 0;
  // Records of a record-oriented character device such as /dev/kmsg: one read() per
  // record, non-blocking, until no more are ready; records overwritten while reading
  // are skipped. At most max_bytes in total (the oldest records are dropped beyond it).
  virtual Result<std::vector<std::string>> readKmsgRecords(std::string_view path,
                                                           std::size_t max_bytes) const = 0;
};

// The real filesystem under `root` ("/" for the live host, a copied tree otherwise). With an
// empty root, relative paths stay relative to the working directory (user-given files).
//
// A copied tree is hostile input (a customer's tree): every path, and every symbolic link met
// while resolving it, is resolved as if `root` were "/": absolute links and `..` never leave
// the tree, so sysfs' own relative links keep working while a link to /etc/hostname reads
// `root`/etc/hostname (usually NotFound). Linux openat2(RESOLVE_IN_ROOT) does this where the
// kernel has it (5.6+); elsewhere a component-by-component walk with O_NOFOLLOW does the
// same. A root that cannot be opened makes every read fail with that error.
class RootedFilesystem final : public Filesystem {
 public:
  enum class Resolution {
    Kernel,  // openat2(RESOLVE_IN_ROOT), falling back to the walk when the kernel lacks it
    Walk,    // always the checked walk (tests of the fallback)
  };
  explicit RootedFilesystem(std::string root, Resolution resolution = Resolution::Kernel);
  ~RootedFilesystem() override;
  RootedFilesystem(const RootedFilesystem&) = delete;
  RootedFilesystem& operator=(const RootedFilesystem&) = delete;
  Result<std::string> readFile(std::string_view path, std::size_t max_bytes,
                               bool* truncated = nullptr) const override;
  Result<std::vector<std::string>> readKmsgRecords(std::string_view path,
                                                   std::size_t max_bytes) const override;
  Result<std::string> readTail(std::string_view path, std::size_t max_bytes) const override;
  Result<std::vector<std::string>> listDir(std::string_view path) const override;
  Result<std::string> readLink(std::string_view path) const override;
  bool exists(std::string_view path) const override;
  bool isDirectory(std::string_view path) const override;
  Result<FileStatus> status(std::string_view path) const override;
  Result<Access> access(std::string_view path) const override;
  Result<std::vector<std::pair<std::string, Result<std::string>>>> readDirFiles(
      std::string_view dir, std::size_t max_bytes_each, std::size_t max_files) const override;
  const std::string& root() const { return root_; }

 private:
  // An open file descriptor for `path` resolved inside the root (the caller closes it).
  Result<int> open(std::string_view path, int flags) const;
  Result<int> openByWalk(std::string_view path, int flags) const;
  bool shortReadIsEof(std::string_view path) const;
  std::string root_;  // without trailing '/', empty for "/"
  Resolution resolution_;
  int root_fd_ = -1;    // O_PATH descriptor of root_ when root_ is not empty
  int root_errno_ = 0;  // why root_ could not be opened
};

// A filesystem held in memory: pasted `grep . /sys/...` listings are read through the
// same probes as a real tree. Directories exist implicitly above every file.
class MemoryFilesystem final : public Filesystem {
 public:
  void addFile(std::string path, std::string content);
  void addSymlink(std::string path, std::string target);
  bool empty() const { return files_.empty(); }
  Result<std::string> readFile(std::string_view path, std::size_t max_bytes,
                               bool* truncated = nullptr) const override;
  Result<std::string> readTail(std::string_view path, std::size_t max_bytes) const override;
  Result<std::vector<std::string>> listDir(std::string_view path) const override;
  Result<std::string> readLink(std::string_view path) const override;
  bool exists(std::string_view path) const override;
  bool isDirectory(std::string_view path) const override;
  Result<FileStatus> status(std::string_view path) const override;
  Result<Access> access(std::string_view path) const override;
  Result<std::vector<std::pair<std::string, Result<std::string>>>> readDirFiles(
      std::string_view dir, std::size_t max_bytes_each, std::size_t max_files) const override;
  Result<std::vector<std::string>> readKmsgRecords(std::string_view path,
                                                   std::size_t max_bytes) const override;

 private:
  std::map<std::string, std::string, std::less<>> files_;
  std::map<std::string, std::string, std::less<>> links_;
};

// Maps an errno value to an Error naming the path.
Error errnoError(int err, std::string_view what);

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or timed out
  bool timed_out = false;
  std::string out;
  std::string err;
  bool output_truncated = false;  // stdout or stderr exceeded max_output
};

// Runs a program with arguments (no shell). `argv[0]` is looked up on PATH.
// Implementations must allow concurrent calls (the ssh fan-out runs several at once).
// Errors: NotFound when the program is not installed, Io when it cannot be started.
// A non-zero exit is not an error: it is in CommandResult.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual Result<CommandResult> run(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout,
                                    std::size_t max_output = 16u << 20) = 0;
  // True when argv0 is an executable on PATH (or an existing executable path).
  virtual bool available(std::string_view program) const = 0;
  // Like run(), but hands every complete stdout line (without '\n') to `on_line` as it
  // arrives; when on_line returns false the command is stopped (SIGTERM, then SIGKILL).
  // stdout is not kept in the result; stderr is. The default runs to completion first.
  virtual Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                             std::chrono::milliseconds timeout,
                                             const std::function<bool(std::string_view)>& on_line,
                                             std::size_t max_stderr = 1u << 20);
};

// posix_spawn + poll; on timeout the child gets SIGTERM, then SIGKILL after 200 ms.
class ProcessRunner final : public CommandRunner {
 public:
  Result<CommandResult> run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                            std::size_t max_output = 16u << 20) override;
  bool available(std::string_view program) const override;
  Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds timeout,
                                     const std::function<bool(std::string_view)>& on_line,
                                     std::size_t max_stderr = 1u << 20) override;

 private:
  Result<CommandResult> execute(const std::vector<std::string>& argv,
                                std::chrono::milliseconds timeout, std::size_t max_output,
                                const std::function<bool(std::string_view)>* on_line);
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point now() const = 0;
  virtual std::chrono::steady_clock::time_point steadyNow() const = 0;
  virtual void sleepUntil(std::chrono::steady_clock::time_point deadline) = 0;
};

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point now() const override;
  std::chrono::steady_clock::time_point steadyNow() const override;
  void sleepUntil(std::chrono::steady_clock::time_point deadline) override;
};

// Environment variables the agent reads (SLURM_JOB_ID, SLURMD_NODENAME, ...), behind a
// seam so tests do not depend on the test runner's environment.
class Environment {
 public:
  virtual ~Environment() = default;
  virtual std::string get(std::string_view name) const = 0;
};

class ProcessEnvironment final : public Environment {
 public:
  std::string get(std::string_view name) const override;
};

// The write seam beside the read seam (Filesystem): every file the agent writes — a
// snapshot (`-o`, `--job --out`), the spool, bundles — goes through one of these. The agent
// never writes anywhere else on the host and never resets a counter. Errors name the path
// and the OS's reason (ENOSPC, EACCES, EROFS, ...): PermissionDenied, NotFound (a missing
// parent directory), Io. Implementations are safe to call from one thread at a time.
class FileWriter {
 public:
  virtual ~FileWriter() = default;
  // Writes `bytes` to `path` atomically: a reader sees the old file or the whole new one.
  // On failure nothing is left at `path` that was not there before. The file gets `mode`
  // (before the umask): 0600 for what must stay private (pseudonym maps, keys).
  virtual core::Status writeFileAtomic(const std::string& path, std::string_view bytes,
                                       unsigned mode = 0644) = 0;
  // mkdir -p; directories it creates get `mode` (before the umask), existing ones are left
  // as they are.
  virtual core::Status makeDirectories(const std::string& path, unsigned mode = 0755) = 0;
  // Removes one file. Errors: NotFound when there was none.
  virtual core::Status removeFile(const std::string& path) = 0;
  // Removes an empty directory (rmdir). Errors: NotFound, Io (not empty, busy, ...);
  // Unsupported from writers that never remove directories (the default).
  virtual core::Status removeEmptyDirectory(const std::string& path);
  // rename(2): replaces `to` atomically; both on one filesystem.
  virtual core::Status renameFile(const std::string& from, const std::string& to) = 0;
};

// The real disk: temporary file in the same directory, fsync, rename, fsync of the
// directory for writeFileAtomic.
class DiskFileWriter final : public FileWriter {
 public:
  core::Status writeFileAtomic(const std::string& path, std::string_view bytes,
                               unsigned mode = 0644) override;
  core::Status makeDirectories(const std::string& path, unsigned mode = 0755) override;
  core::Status removeFile(const std::string& path) override;
  core::Status removeEmptyDirectory(const std::string& path) override;
  core::Status renameFile(const std::string& from, const std::string& to) override;
};

// DiskFileWriter's two most used operations as plain functions.
core::Status writeFileAtomic(const std::string& path, std::string_view bytes, unsigned mode = 0644);
core::Status makeDirectories(const std::string& path, unsigned mode = 0755);

// This process's executable (/proc/self/exe), "" when unknown.
std::string selfExecutable();

// Replaces this process with `path` run with `argv` (argv[0] included), the environment
// unchanged (execv). Returns only when that failed. Errors: NotFound (no such program),
// PermissionDenied, Io.
core::Status execProgram(const std::string& path, const std::vector<std::string>& argv);

// Runs `body` in a forked child and waits for it until `deadline`; a child still running
// then is killed (SIGKILL). Lets a job step always exit normally and say what happened,
// even when its collector is OOM-killed, crashes or hangs in a kernel read (srun drops
// the other nodes' output when a task dies by a signal).
struct SupervisedExit {
  bool exited = false;  // normal exit with exit_code
  int exit_code = -1;
  int signal = 0;          // killed by this signal
  bool timed_out = false;  // killed by us at the deadline
};
Result<SupervisedExit> runSupervised(const std::function<int()>& body,
                                     std::chrono::steady_clock::time_point deadline);

// Resource limits and host name of the running process (live host only).
struct ProcessFacts {
  bool memlock_known = false;
  bool memlock_unlimited = false;
  uint64_t memlock_soft_bytes = 0;
  uint64_t memlock_hard_bytes = 0;
  std::string hostname;
};
ProcessFacts readProcessFacts();

}  // namespace ibc::os

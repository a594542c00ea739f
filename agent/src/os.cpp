#include "ibc/agent/os.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

extern char** environ;

namespace ibc::agent {

Error errnoError(int err, std::string_view what) {
  ErrorCode code = ErrorCode::Io;
  switch (err) {
    case ENOENT:
    case ENOTDIR: code = ErrorCode::NotFound; break;
    case EACCES:
    case EPERM: code = ErrorCode::PermissionDenied; break;
    case EINVAL:
    case EOPNOTSUPP: code = ErrorCode::InvalidArgument; break;
    case ETIMEDOUT: code = ErrorCode::Timeout; break;
    default: break;
  }
  return Error{code, std::string(what) + ": " + std::strerror(err)};
}

namespace {

bool startsWithPath(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

// Reads up to `limit` bytes; sets `more` when the file had more. With
// `short_read_is_eof`, a read that returns less than asked ends the file: true for
// regular files and sysfs attributes (one read returns the whole value), which saves a
// syscall per attribute; procfs seq files return a page at a time and need the loop.
Result<std::string> readBounded(int fd, std::size_t limit, bool& more, std::string_view path,
                                bool short_read_is_eof) {
  std::string out;
  more = false;
  char small[4096];
  std::unique_ptr<char[]> big;
  std::size_t big_size = 0;
  while (true) {
    char* buf = small;
    std::size_t want = sizeof small;
    if (out.size() >= sizeof small) {
      // Past the first page: larger reads for logs and listings.
      if (!big) {
        big_size = 1u << 20;
        big = std::make_unique<char[]>(big_size);
      }
      buf = big.get();
      want = big_size;
    }
    ssize_t n;
    do {
      n = ::read(fd, buf, want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return errnoError(errno, path);
    if (n == 0) return out;
    const auto got = static_cast<std::size_t>(n);
    if (out.size() + got > limit) {
      out.append(buf, limit - out.size());
      more = true;
      return out;
    }
    out.append(buf, got);
    if (short_read_is_eof && got < want) return out;
  }
}

}  // namespace

namespace {

// Splits a path into its components, dropping empty ones and ".".
std::vector<std::string> pathComponents(std::string_view path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view c = path.substr(i, j - i);
    if (!c.empty() && c != ".") out.emplace_back(c);
    i = j + 1;
  }
  return out;
}

constexpr int kMaxSymlinks = 40;  // as the kernel's MAXSYMLINKS

// openat2(2) with RESOLVE_IN_ROOT; -1 with errno ENOSYS where the kernel (or a seccomp
// filter) lacks it.
int openInRoot(int root_fd, const char* relative, int flags) {
#ifdef SYS_openat2
  struct {
    std::uint64_t flags, mode, resolve;
  } how{static_cast<std::uint64_t>(flags), 0,
        0x10 /* RESOLVE_IN_ROOT */ | 0x02 /* NO_MAGICLINKS */};
  long r;
  do {
    r = ::syscall(SYS_openat2, root_fd, relative, &how, sizeof how);
  } while (r < 0 && errno == EINTR);
  return static_cast<int>(r);
#else
  (void)root_fd, (void)relative, (void)flags;
  errno = ENOSYS;
  return -1;
#endif
}

std::atomic<bool> g_kernel_resolution_missing{false};

}  // namespace

RootedFilesystem::RootedFilesystem(std::string root, Resolution resolution)
    : root_(std::move(root)), resolution_(resolution) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
  if (!root_.empty()) {
    root_fd_ = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd_ < 0) root_errno_ = errno;
  }
}

RootedFilesystem::~RootedFilesystem() {
  if (root_fd_ >= 0) ::close(root_fd_);
}

bool RootedFilesystem::shortReadIsEof(std::string_view path) const {
  // A copied tree holds regular files; the live /sys serves attributes in one read.
  return !root_.empty() || path.substr(0, 5) == "/sys/";
}

Result<int> RootedFilesystem::open(std::string_view path, int flags) const {
  flags |= O_CLOEXEC;
  if (root_.empty()) {
    const int fd = ::open(std::string(path).c_str(), flags);
    if (fd < 0) return errnoError(errno, path);
    return fd;
  }
  if (root_fd_ < 0) return errnoError(root_errno_, root_);
  if (resolution_ == Resolution::Kernel && !g_kernel_resolution_missing.load()) {
    std::string relative(path);
    if (relative.empty()) relative = ".";
    const int fd = openInRoot(root_fd_, relative.c_str(), flags);
    if (fd >= 0) return fd;
    if (errno != ENOSYS) return errnoError(errno, path);
    g_kernel_resolution_missing.store(true);
  }
  return openByWalk(path, flags);
}

// What RESOLVE_IN_ROOT does, one component at a time: each component is opened with
// O_NOFOLLOW relative to its verified parent; a symlink's target is spliced into the
// remaining components (an absolute one restarts at the root), ".." never climbs above the
// root. The chain of open parents makes the walk immune to renames behind it.
Result<int> RootedFilesystem::openByWalk(std::string_view path, int flags) const {
  std::vector<Fd> stack;  // open directories below the root, innermost last
  auto current = [&] { return stack.empty() ? root_fd_ : stack.back().get(); };
  std::vector<std::string> todo = pathComponents(path);
  std::reverse(todo.begin(), todo.end());  // pop from the back
  int links = 0;
  while (!todo.empty()) {
    std::string name = std::move(todo.back());
    todo.pop_back();
    if (name == "..") {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    const bool last = todo.empty();
    Fd fd(::openat(current(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) return errnoError(errno, path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return errnoError(errno, path);
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxSymlinks) return errnoError(ELOOP, path);
      std::string target(4096, '\0');
      const ssize_t n = ::readlinkat(current(), name.c_str(), target.data(), target.size());
      if (n < 0) return errnoError(errno, path);
      target.resize(static_cast<std::size_t>(n));
      if (!target.empty() && target.front() == '/') stack.clear();
      auto parts = pathComponents(target);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
      continue;
    }
    if (last) {
      if ((flags & O_PATH) != 0) return fd.release();
      const int opened = ::openat(current(), name.c_str(), flags | O_NOFOLLOW);
      if (opened < 0) return errnoError(errno, path);
      return opened;
    }
    if (!S_ISDIR(st.st_mode)) return errnoError(ENOTDIR, path);
    stack.emplace_back(fd.release());
  }
  // The path named the root itself (or resolved to it).
  const int opened = ::openat(current(), ".", flags);
  if (opened < 0) return errnoError(errno, path);
  return opened;
}

Result<std::string> RootedFilesystem::readFile(std::string_view path, std::size_t max_bytes,
                                               bool* truncated) const {
  auto opened = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
  if (!opened.ok()) return opened.error();
  Fd fd(*opened);
  bool more = false;
  auto content = readBounded(fd.get(), max_bytes, more, path, shortReadIsEof(path));
  if (!content.ok()) return content;
  if (truncated != nullptr) *truncated = more;
  if (more && truncated == nullptr) {
    return Error{ErrorCode::TooLarge,
                 std::string(path) + ": larger than " + std::to_string(max_bytes) + " bytes"};
  }
  return content;
}

Result<std::string> RootedFilesystem::readTail(std::string_view path, std::size_t max_bytes) const {
  auto opened = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
  if (!opened.ok()) return opened.error();
  Fd fd(*opened);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errnoError(errno, path);
  if (S_ISDIR(st.st_mode))
    return Error{ErrorCode::InvalidArgument, std::string(path) + ": is a directory"};
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes) {
    if (::lseek(fd.get(), st.st_size - static_cast<off_t>(max_bytes), SEEK_SET) < 0) {
      return errnoError(errno, path);
    }
  }
  bool more = false;
  return readBounded(fd.get(), max_bytes, more, path, shortReadIsEof(path));
}

Result<std::vector<std::string>> RootedFilesystem::listDir(std::string_view path) const {
  auto opened = open(path, O_RDONLY | O_DIRECTORY);
  if (!opened.ok()) return opened.error();
  DIR* d = ::fdopendir(*opened);
  if (d == nullptr) {
    const int err = errno;
    ::close(*opened);
    return errnoError(err, path);
  }
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) return errnoError(err, path);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> RootedFilesystem::readLink(std::string_view path) const {
  // The link itself, not what it points to: open its directory inside the root and read
  // the last component without following it.
  std::string dir(path);
  std::string name;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const auto slash = dir.rfind('/');
  if (slash == std::string::npos) {
    name = dir;
    dir = root_.empty() ? "." : "/";
  } else {
    name = dir.substr(slash + 1);
    dir.resize(slash == 0 ? 1 : slash);
  }
  if (name.empty() || name == "." || name == "..") return errnoError(EINVAL, path);
  auto opened = open(dir, O_PATH | O_DIRECTORY);
  if (!opened.ok()) return opened.error();
  Fd dfd(*opened);
  std::string buf(256, '\0');
  while (true) {
    ssize_t n = ::readlinkat(dfd.get(), name.c_str(), buf.data(), buf.size());
    if (n < 0) return errnoError(errno, path);
    if (static_cast<std::size_t>(n) < buf.size()) {
      buf.resize(static_cast<std::size_t>(n));
      return buf;
    }
    if (buf.size() > 65536)
      return Error{ErrorCode::TooLarge, std::string(path) + ": link too long"};
    buf.resize(buf.size() * 2);
  }
}

Result<std::vector<std::pair<std::string, Result<std::string>>>> RootedFilesystem::readDirFiles(
    std::string_view dir, std::size_t max_bytes_each, std::size_t max_files) const {
  auto opened = open(dir, O_RDONLY | O_DIRECTORY);
  if (!opened.ok()) return opened.error();
  const int dfd = *opened;
  DIR* d = ::fdopendir(dfd);
  if (d == nullptr) {
    const int err = errno;
    ::close(dfd);
    return errnoError(err, dir);
  }
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_type == DT_DIR) continue;
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  std::sort(names.begin(), names.end());
  if (names.size() > max_files) names.resize(max_files);
  const bool short_eof = shortReadIsEof(dir);
  std::vector<std::pair<std::string, Result<std::string>>> out;
  out.reserve(names.size());
  for (auto& name : names) {
    const std::string full = std::string(dir) + "/" + name;
    // On the live host the open directory is enough; inside a tree an entry may be a link
    // out of it, so it is resolved inside the root like any other path.
    Result<int> entry =
        root_.empty()
            ? Result<int>(::openat(dfd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK))
            : open(full, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (entry.ok() && *entry < 0) entry = errnoError(errno, full);
    if (!entry.ok()) {
      out.emplace_back(std::move(name), entry.error());
      continue;
    }
    Fd fd(*entry);
    bool more = false;
    auto content = readBounded(fd.get(), max_bytes_each, more, name, short_eof);
    if (content.ok() && more) {
      content = Error{ErrorCode::TooLarge, full + ": too large"};
    }
    out.emplace_back(std::move(name), std::move(content));
  }
  ::closedir(d);  // closes dfd
  return out;
}

bool RootedFilesystem::exists(std::string_view path) const {
  auto opened = open(path, O_PATH);
  if (!opened.ok()) return false;
  ::close(*opened);
  return true;
}

bool RootedFilesystem::isDirectory(std::string_view path) const {
  auto opened = open(path, O_PATH);
  if (!opened.ok()) return false;
  Fd fd(*opened);
  struct stat st {};
  return ::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<Access> RootedFilesystem::access(std::string_view path) const {
  if (root_.empty()) {
    const std::string p(path);
    if (::access(p.c_str(), F_OK) != 0) return errnoError(errno, path);
    Access a;
    a.readable = ::access(p.c_str(), R_OK) == 0;
    a.writable = ::access(p.c_str(), W_OK) == 0;
    return a;
  }
  // The file resolved inside the root, asked about through its descriptor: /proc/self/fd/N
  // names exactly the opened inode.
  auto opened = open(path, O_PATH);
  if (!opened.ok()) return opened.error();
  Fd fd(*opened);
  const std::string p = "/proc/self/fd/" + std::to_string(fd.get());
  Access a;
  a.readable = ::access(p.c_str(), R_OK) == 0;
  a.writable = ::access(p.c_str(), W_OK) == 0;
  return a;
}

Result<std::vector<std::string>> RootedFilesystem::readKmsgRecords(std::string_view path,
                                                                   std::size_t max_bytes) const {
  auto opened = open(path, O_RDONLY | O_NONBLOCK);
  if (!opened.ok()) return opened.error();
  Fd fd(*opened);
  std::vector<std::string> records;
  std::size_t total = 0;
  std::size_t first = 0;  // index of the oldest record still kept
  char buf[8192];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) continue;  // record overwritten in the ring buffer: skip it
      if (errno == EAGAIN) break;    // no more records ready
      if (records.empty()) return errnoError(errno, path);
      break;
    }
    if (n == 0) break;
    records.emplace_back(buf, static_cast<std::size_t>(n));
    total += static_cast<std::size_t>(n);
    while (total > max_bytes && first < records.size()) {
      total -= records[first].size();
      records[first].clear();
      records[first].shrink_to_fit();
      ++first;
    }
  }
  records.erase(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(first));
  return records;
}

// ---- in-memory filesystem ----------------------------------------------------------------

namespace {
std::string normalisePath(std::string_view path) {
  std::string p(path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}
}  // namespace

void MemoryFilesystem::addFile(std::string path, std::string content) {
  files_[normalisePath(path)] = std::move(content);
}

void MemoryFilesystem::addSymlink(std::string path, std::string target) {
  links_[normalisePath(path)] = std::move(target);
}

Result<std::string> MemoryFilesystem::readFile(std::string_view path, std::size_t max_bytes,
                                               bool* truncated) const {
  auto it = files_.find(normalisePath(path));
  if (it == files_.end()) {
    return Error{isDirectory(path) ? ErrorCode::InvalidArgument : ErrorCode::NotFound,
                 std::string(path) +
                     (isDirectory(path) ? ": is a directory" : ": No such file or directory")};
  }
  if (it->second.size() > max_bytes) {
    if (truncated == nullptr) return Error{ErrorCode::TooLarge, std::string(path) + ": too large"};
    *truncated = true;
    return it->second.substr(0, max_bytes);
  }
  if (truncated != nullptr) *truncated = false;
  return it->second;
}

Result<std::string> MemoryFilesystem::readTail(std::string_view path, std::size_t max_bytes) const {
  auto r = readFile(path, SIZE_MAX);
  if (!r.ok()) return r;
  if (r->size() > max_bytes) return r->substr(r->size() - max_bytes);
  return r;
}

Result<std::vector<std::string>> MemoryFilesystem::listDir(std::string_view path) const {
  std::string prefix = normalisePath(path);
  if (prefix != "/") prefix += "/";
  std::vector<std::string> names;
  auto collect = [&](const auto& map) {
    for (auto it = map.lower_bound(prefix); it != map.end() && startsWithPath(it->first, prefix);
         ++it) {
      std::string_view rest = std::string_view(it->first).substr(prefix.size());
      const std::string name(rest.substr(0, rest.find('/')));
      if (!name.empty() && (names.empty() || names.back() != name)) names.push_back(name);
    }
  };
  collect(files_);
  collect(links_);
  if (names.empty())
    return Error{ErrorCode::NotFound, std::string(path) + ": No such file or directory"};
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<std::string> MemoryFilesystem::readLink(std::string_view path) const {
  auto it = links_.find(normalisePath(path));
  if (it == links_.end())
    return Error{ErrorCode::NotFound, std::string(path) + ": not a symbolic link"};
  return it->second;
}

bool MemoryFilesystem::exists(std::string_view path) const {
  return files_.count(normalisePath(path)) != 0 || links_.count(normalisePath(path)) != 0 ||
         isDirectory(path);
}

bool MemoryFilesystem::isDirectory(std::string_view path) const {
  std::string prefix = normalisePath(path);
  if (prefix != "/") prefix += "/";
  auto it = files_.lower_bound(prefix);
  if (it != files_.end() && startsWithPath(it->first, prefix)) return true;
  auto lt = links_.lower_bound(prefix);
  return lt != links_.end() && startsWithPath(lt->first, prefix);
}

Result<Access> MemoryFilesystem::access(std::string_view path) const {
  if (!exists(path))
    return Error{ErrorCode::NotFound, std::string(path) + ": No such file or directory"};
  return Access{true, false};
}

Result<std::vector<std::pair<std::string, Result<std::string>>>> MemoryFilesystem::readDirFiles(
    std::string_view dir, std::size_t max_bytes_each, std::size_t max_files) const {
  auto names = listDir(dir);
  if (!names.ok()) return names.error();
  std::vector<std::pair<std::string, Result<std::string>>> out;
  for (const auto& name : *names) {
    const std::string path = std::string(dir) + "/" + name;
    if (isDirectory(path)) continue;
    if (out.size() >= max_files) break;
    out.emplace_back(name, readFile(path, max_bytes_each));
  }
  return out;
}

Result<std::vector<std::string>> MemoryFilesystem::readKmsgRecords(std::string_view path,
                                                                   std::size_t) const {
  return Error{ErrorCode::Unavailable, std::string(path) + ": not available in a pasted listing"};
}

// ---- processes ---------------------------------------------------------------------------

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

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
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
  ::close(out_w.release());
  ::close(err_w.release());

  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  bool stop = false;
  std::string pending;  // partial stdout line when streaming
  auto deliver = [&](std::string_view data) {
    pending.append(data);
    std::size_t start = 0;
    while (!stop) {
      const auto nl = pending.find('\n', start);
      if (nl == std::string::npos) break;
      if (!(*on_line)(std::string_view(pending).substr(start, nl - start))) stop = true;
      start = nl + 1;
    }
    pending.erase(0, start);
    if (pending.size() > (1u << 20)) pending.clear();  // a line longer than 1 MiB is not ours
  };
  while (open_fds > 0 && !stop) {
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
      if (r > 0 && i == 0 && on_line != nullptr) {
        deliver(std::string_view(buf, static_cast<std::size_t>(r)));
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

  if (on_line != nullptr && !stop && !pending.empty()) (*on_line)(pending);
  int status = 0;
  if (result.timed_out || stop) {
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
    result.exit_code = stop && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// ---- writing ---------------------------------------------------------------------------

core::Status writeFileAtomic(const std::string& path, std::string_view bytes) {
  const auto slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.get() < 0) return errnoError(errno, path);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::unlink(tmp.c_str());
      return errnoError(err, path);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return errnoError(err, path);
  }
  ::close(fd.release());
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return errnoError(err, path);
  }
  Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() >= 0) ::fsync(dfd.get());
  return {};
}

core::Status makeDirectories(const std::string& path) {
  std::string cur;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const auto slash = path.find('/', pos);
    cur = path.substr(0, slash == std::string::npos ? path.size() : slash);
    if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return errnoError(errno, cur);
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Error{ErrorCode::Io, path + ": not a directory"};
  }
  return {};
}

std::string selfExecutable() {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  buf.resize(static_cast<std::size_t>(n));
  return buf;
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

// ---- clock, environment, process facts -------------------------------------------------

std::chrono::system_clock::time_point SystemClock::now() const {
  return std::chrono::system_clock::now();
}

std::chrono::steady_clock::time_point SystemClock::steadyNow() const {
  return std::chrono::steady_clock::now();
}

void SystemClock::sleepUntil(std::chrono::steady_clock::time_point deadline) {
  std::this_thread::sleep_until(deadline);
}

std::string ProcessEnvironment::get(std::string_view name) const {
  const char* v = std::getenv(std::string(name).c_str());
  return v != nullptr ? std::string(v) : std::string();
}

ProcessFacts readProcessFacts() {
  ProcessFacts f;
  rlimit rl{};
  if (::getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    f.memlock_known = true;
    f.memlock_unlimited = rl.rlim_cur == RLIM_INFINITY;
    f.memlock_soft_bytes = rl.rlim_cur == RLIM_INFINITY ? 0 : rl.rlim_cur;
    f.memlock_hard_bytes = rl.rlim_max == RLIM_INFINITY ? 0 : rl.rlim_max;
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) f.hostname = host;
  return f;
}

}  // namespace ibc::agent

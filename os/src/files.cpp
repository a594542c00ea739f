// The read seam: RootedFilesystem (the host or a copied tree, every path resolved inside
// the root) and errnoError.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

#include "fd.h"
#include "ibc/os/os.h"

namespace ibc::os {

using detail::Fd;
using detail::startsWithPath;

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

Result<FileStatus> Filesystem::status(std::string_view path) const {
  return Error{ErrorCode::Unsupported, std::string(path) + ": no file status here"};
}

Result<FileStatus> RootedFilesystem::status(std::string_view path) const {
  auto opened = open(path, O_PATH);
  if (!opened.ok()) return opened.error();
  Fd fd(*opened);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errnoError(errno, path);
  FileStatus s;
  s.regular = S_ISREG(st.st_mode);
  s.directory = S_ISDIR(st.st_mode);
  s.fifo = S_ISFIFO(st.st_mode);
  s.bytes = static_cast<uint64_t>(st.st_size);
  s.modified_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  return s;
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

}  // namespace ibc::os

// The write seam: atomic whole-file writes, directories, removal and renames.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "fd.h"
#include "ibc/os/os.h"

namespace ibc::os {

using detail::Fd;

core::Status writeFileAtomic(const std::string& path, std::string_view bytes, unsigned mode) {
  const auto slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  // rename() would put a regular file in place of a device or FIFO: `-o /dev/null --force`
  // as root would replace /dev/null for the whole machine.
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) &&
      !S_ISLNK(existing.st_mode)) {
    return core::Error{core::ErrorCode::InvalidArgument,
                       path +
                           ": not a regular file (a device, FIFO, socket or directory); "
                           "ibcollect writes only regular files: give another path"};
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode)));
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

core::Status makeDirectories(const std::string& path, unsigned mode) {
  std::string cur;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const auto slash = path.find('/', pos);
    cur = path.substr(0, slash == std::string::npos ? path.size() : slash);
    const bool last = slash == std::string::npos || slash + 1 == path.size();
    if (!cur.empty() && ::mkdir(cur.c_str(), last ? static_cast<mode_t>(mode) : 0755) != 0 &&
        errno != EEXIST)
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

core::Status DiskFileWriter::writeFileAtomic(const std::string& path, std::string_view bytes,
                                             unsigned mode) {
  return os::writeFileAtomic(path, bytes, mode);
}

core::Status DiskFileWriter::makeDirectories(const std::string& path, unsigned mode) {
  return os::makeDirectories(path, mode);
}

core::Status DiskFileWriter::removeFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return errnoError(errno, path);
  return {};
}

core::Status FileWriter::removeEmptyDirectory(const std::string& path) {
  return core::Error{core::ErrorCode::Unsupported, "this writer removes no directory: " + path};
}

core::Status DiskFileWriter::removeEmptyDirectory(const std::string& path) {
  if (::rmdir(path.c_str()) != 0) return errnoError(errno, path);
  return {};
}

core::Status DiskFileWriter::renameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return errnoError(errno, from + " -> " + to);
  return {};
}

}  // namespace ibc::os

#include "ibc/collector/net/admin_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

namespace ibc::collector {

using core::Error;
using core::ErrorCode;

namespace {

constexpr std::size_t kMaxLine = 4096;
constexpr std::chrono::milliseconds kRequestDeadline{5000};

bool socketAddress(const std::string& path, sockaddr_un& address) {
  address = sockaddr_un{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path) return false;
  std::memcpy(address.sun_path, path.data(), path.size());
  return true;
}

// Reads one line (without its newline) within `deadline`; false on timeout, EOF first or
// an overlong line.
bool readLine(int fd, std::string& line, std::chrono::steady_clock::time_point deadline) {
  line.clear();
  while (line.size() <= kMaxLine) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    line.append(buf, static_cast<std::size_t>(n));
    const auto nl = line.find('\n');
    if (nl != std::string::npos) {
      line.resize(nl);
      return true;
    }
  }
  return false;
}

void writeAll(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

struct AdminSocket::Impl {
  std::string path;
  Handler handler;
  EventLog* log = nullptr;
  int listen_fd = -1;
  int stop_pipe[2] = {-1, -1};
  std::thread thread;

  void run() {
    while (true) {
      pollfd p[2] = {{listen_fd, POLLIN, 0}, {stop_pipe[0], POLLIN, 0}};
      const int r = ::poll(p, 2, -1);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 || (p[1].revents & POLLIN) != 0) return;
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string line;
      if (readLine(fd, line, std::chrono::steady_clock::now() + kRequestDeadline)) {
        writeAll(fd, handler(line) + "\n");
      } else {
        writeAll(fd, "error no request line within 5 s (at most 4 KiB)\n");
      }
      ::close(fd);
    }
  }
  ~Impl() {
    if (thread.joinable()) {
      (void)!::write(stop_pipe[1], "x", 1);
      thread.join();
    }
    if (listen_fd >= 0) {
      ::close(listen_fd);
      ::unlink(path.c_str());
    }
    for (int fd : stop_pipe) {
      if (fd >= 0) ::close(fd);
    }
  }
};

AdminSocket::AdminSocket(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AdminSocket::~AdminSocket() = default;

core::Result<std::unique_ptr<AdminSocket>> AdminSocket::start(const std::string& path,
                                                              Handler handler, EventLog& log) {
  sockaddr_un address;
  if (!socketAddress(path, address)) {
    return Error{ErrorCode::InvalidArgument, "admin socket path longer than " +
                                                 std::to_string(sizeof address.sun_path - 1) +
                                                 " bytes: " + path};
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->handler = std::move(handler);
  impl->log = &log;
  if (::pipe2(impl->stop_pipe, O_CLOEXEC) != 0) {
    return Error{ErrorCode::Io, std::string("pipe: ") + std::strerror(errno)};
  }
  ::unlink(path.c_str());
  impl->listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  // The socket is created 0600 (umask for the bind), so no moment exists where others
  // could connect.
  const mode_t old_mask = ::umask(0177);
  const int bound =
      impl->listen_fd < 0
          ? -1
          : ::bind(impl->listen_fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int bind_errno = errno;
  ::umask(old_mask);
  if (bound != 0 || ::listen(impl->listen_fd, 4) != 0) {
    const std::string why = std::strerror(bound != 0 ? bind_errno : errno);
    if (impl->listen_fd >= 0) ::close(impl->listen_fd);
    impl->listen_fd = -1;
    return Error{ErrorCode::Io, "cannot listen on " + path + ": " + why};
  }
  Impl* p = impl.get();
  p->thread = std::thread([p] { p->run(); });
  return std::unique_ptr<AdminSocket>(new AdminSocket(std::move(impl)));
}

core::Result<std::string> adminRequest(const std::string& path, const std::string& request,
                                       std::chrono::milliseconds timeout) {
  sockaddr_un address;
  if (!socketAddress(path, address)) {
    return Error{ErrorCode::NotFound, "no admin socket (path too long): " + path};
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error{ErrorCode::Io, std::string("socket: ") + std::strerror(errno)};
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int e = errno;
    ::close(fd);
    if (e == ENOENT || e == ECONNREFUSED) {
      return Error{ErrorCode::NotFound, "no collector listens on " + path};
    }
    if (e == EACCES || e == EPERM) {
      return Error{ErrorCode::PermissionDenied,
                   path + ": permission denied (run as the collector's user or root)"};
    }
    return Error{ErrorCode::Io, "cannot connect to " + path + ": " + std::strerror(e)};
  }
  writeAll(fd, request + "\n");
  std::string line;
  const bool ok = readLine(fd, line, std::chrono::steady_clock::now() + timeout);
  ::close(fd);
  if (!ok) return Error{ErrorCode::Timeout, "no answer from the collector on " + path};
  return line;
}

}  // namespace ibc::collector

#pragma once

// The running collector's local admin channel: a Unix-domain stream socket in the data
// directory (`DATA/admin.sock`, mode 0600, so only the collector's user and root reach it).
// `ibcollect-collector backup` uses it, because RocksDB lets one process open a store: the
// running collector takes the checkpoint itself, consistent with its own ingest.
//
// Protocol: one request line, one answer line, then the connection closes.
//   checkpoint ABSOLUTE_DEST   →   ok bytes=N ms=M   |   error MESSAGE
// A request line is at most 4 KiB and must arrive within 5 s. Requests are served one at a
// time on the socket's own thread.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "ibc/collector/event_log.h"
#include "ibc/core/result.h"

namespace ibc::collector {

class AdminSocket {
 public:
  // Answers one request line (without its newline) with one line (without newline).
  using Handler = std::function<std::string(const std::string& request)>;
  // Binds `path` (a stale socket file left by a killed collector is replaced: the caller
  // holds the store's lock, so no other collector serves this directory) and serves on a
  // new thread. Errors: InvalidArgument (path longer than a socket address allows), Io.
  static core::Result<std::unique_ptr<AdminSocket>> start(const std::string& path, Handler handler,
                                                          EventLog& log);
  // Stops, joins the thread and removes the socket file.
  ~AdminSocket();
  AdminSocket(const AdminSocket&) = delete;
  AdminSocket& operator=(const AdminSocket&) = delete;

 private:
  struct Impl;
  explicit AdminSocket(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Sends `request` to the admin socket at `path` and returns the answer line. Errors:
// NotFound (no socket there, or nothing listening: no collector runs on this directory),
// PermissionDenied, Timeout (no answer within `timeout`), Io.
core::Result<std::string> adminRequest(const std::string& path, const std::string& request,
                                       std::chrono::milliseconds timeout);

}  // namespace ibc::collector

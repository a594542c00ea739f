#pragma once

// The event log's lines for accepted uploads (docs/operations.md, issue 24): one line per upload
// while they are rare, one line per second while a job uploads thousands at once.
//
// In each second (from the first upload accepted after the previous second ended) the
// first `lines_per_second` uploads get a line of their own:
//
//   level=info event=upload_accepted snapshot=ID job=77 node=node01 bytes=65536
//     already_stored=false peer=10.0.0.7:40122 tenant=acme role=agent cn=node01
//
// and the others of that second are counted into one line written when the second ends:
//
//   level=info event=uploads_accepted count=1995 tenants=1 tenant=acme stored=1990
//     already_stored=5 bytes=130744320 seconds=1
//
// (each one line; wrapped here). `count` is the uploads of that second that had no line
// of their own, so every accepted upload is in exactly one line; `tenant` is given when
// they all came from one tenant; `stored` and `already_stored` split `count` by whether
// the collector had the snapshot before; `seconds` is 1, or the part of a second a drain
// cut short (e.g. 0.4). A second ends for the log when tick() or the next
// upload finds it over, or at flush() (drain): the network layer calls tick() a few times
// a second, so the line comes at most a fraction of a second late. "Accepted" means
// acknowledged: the snapshot is durable.
//
// Thread-safe: accepted() runs on the service's writer thread, tick() on the io thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "ibc/collector/event_log.h"

namespace ibc::collector {

struct Peer;

// Lines of their own per second; the rest of the second is counted. Below the event log's
// own rate limit per kind (StreamEventLogOptions::lines_per_second), so none is suppressed.
inline constexpr std::size_t kAcceptedUploadLinesPerSecond = 5;

struct AcceptedUpload {
  std::string snapshot_id;
  std::string tenant;
  std::string job_id;
  std::string node;
  std::size_t bytes = 0;
  bool already_stored = false;
};

class AcceptedUploadLog {
 public:
  using Now = std::function<std::chrono::steady_clock::time_point()>;

  // `log` must outlive this. `now` is a seam for tests (default: steady_clock).
  explicit AcceptedUploadLog(EventLog& log,
                             std::size_t lines_per_second = kAcceptedUploadLinesPerSecond,
                             Now now = {});
  ~AcceptedUploadLog();
  AcceptedUploadLog(const AcceptedUploadLog&) = delete;
  AcceptedUploadLog& operator=(const AcceptedUploadLog&) = delete;

  void accepted(const Peer& peer, const AcceptedUpload& upload);
  // Writes the count of a second that has ended.
  void tick();
  // Writes the count of the current second now (drain, exit). The destructor calls it.
  void flush();

 private:
  void endSecond(bool force);

  EventLog& log_;
  const std::size_t lines_per_second_;
  Now now_;
  std::mutex mutex_;
  bool open_ = false;  // a second is being counted
  std::chrono::steady_clock::time_point start_;
  std::size_t lines_ = 0;  // lines of their own in this second
  uint64_t count_ = 0;
  uint64_t already_stored_ = 0;
  uint64_t bytes_ = 0;
  std::set<std::string> tenants_;
};

}  // namespace ibc::collector

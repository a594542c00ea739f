#pragma once

// Runs the retention policy (store/maintenance.h) on its own thread: once at start, then
// every `interval`, without holding up ingest (deletes go in chunks of a few hundred
// snapshots, each a short atomic write). Each run is logged as `event=retention_done`
// (what was deleted, the store's size before and after) or `event=retention_failed`.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "ibc/collector/event_log.h"
#include "ibc/collector/store/maintenance.h"

namespace ibc::collector {

class RetentionLoop {
 public:
  using Now = std::function<std::chrono::system_clock::time_point()>;
  // `store` and `log` must outlive the loop. Starts the first run at once.
  RetentionLoop(Store& store, RetentionPolicy policy, std::chrono::milliseconds interval,
                EventLog& log, Now now);
  // Waits for a run in progress to finish, then stops.
  ~RetentionLoop();
  RetentionLoop(const RetentionLoop&) = delete;
  RetentionLoop& operator=(const RetentionLoop&) = delete;

  // Snapshots deleted since start; runs completed. Any thread.
  uint64_t deleted() const;
  uint64_t runs() const;

 private:
  void run();

  Store& store_;
  const RetentionPolicy policy_;
  const std::chrono::milliseconds interval_;
  EventLog& log_;
  Now now_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  uint64_t deleted_ = 0;
  uint64_t runs_ = 0;
  std::thread thread_;
};

}  // namespace ibc::collector

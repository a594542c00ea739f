#include "ibc/collector/service/retention_loop.h"

namespace ibc::collector {

RetentionLoop::RetentionLoop(Store& store, RetentionPolicy policy,
                             std::chrono::milliseconds interval, EventLog& log, Now now)
    : store_(store),
      policy_(policy),
      interval_(interval),
      log_(log),
      now_(std::move(now)),
      thread_([this] { run(); }) {}

RetentionLoop::~RetentionLoop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t RetentionLoop::deleted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return deleted_;
}

uint64_t RetentionLoop::runs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runs_;
}

void RetentionLoop::run() {
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    auto report = applyRetention(store_, policy_, now_());
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
    if (report.ok()) {
      const auto& r = *report;
      log_.event(LogLevel::Info, "retention_done",
                 {{"deleted", std::to_string(r.deleted)},
                  {"deleted_bytes", std::to_string(r.deleted_bytes)},
                  {"oldest_received_ms", std::to_string(r.oldest_received_unix_ms)},
                  {"newest_received_ms", std::to_string(r.newest_received_unix_ms)},
                  {"kept_for_open_cases", std::to_string(r.kept_protected)},
                  {"range_deletes", std::to_string(r.range_deletes)},
                  {"point_deletes", std::to_string(r.point_deletes)},
                  {"store_bytes_before", std::to_string(totalBytes(r.before))},
                  {"store_bytes_after", std::to_string(totalBytes(r.after))},
                  {"ms", std::to_string(ms)}});
    } else {
      log_.event(LogLevel::Error, "retention_failed", {{"detail", report.error().message}});
    }
    std::unique_lock<std::mutex> lock(mutex_);
    ++runs_;
    if (report.ok()) deleted_ += report->deleted;
    if (wake_.wait_for(lock, interval_, [this] { return stopping_; })) return;
  }
}

}  // namespace ibc::collector

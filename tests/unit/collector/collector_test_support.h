#pragma once

// Helpers for the collector unit tests: a temp directory, snapshots, a captured log.

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "ibc/collector/service/service.h"
#include "ibc/collector/store/store.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::collector::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ibc-collector-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A snapshot id (64 hex digits) made of `n`: 000...0042.
inline std::string hexId(int n) {
  std::string id(64, '0');
  const std::string digits = std::to_string(n);
  id.replace(64 - digits.size(), digits.size(), digits);
  return id;
}

// A stored snapshot record `n` (hexId(n)) of `node` in `tenant`'s `job`, its envelope
// `envelope`.
inline SnapshotRecord storedRecord(int n, const std::string& tenant, const std::string& job,
                                   const std::string& node, int64_t collected_ms,
                                   int64_t received_ms, std::string envelope) {
  SnapshotRecord r;
  r.info.set_snapshot_id(hexId(n));
  r.info.set_tenant(tenant);
  r.info.set_job_id(job);
  r.info.set_node(node);
  r.info.set_collected_at_unix_ms(collected_ms);
  r.info.set_received_at_unix_ms(received_ms);
  r.envelope = std::move(envelope);
  r.info.set_size_bytes(r.envelope.size());
  return r;
}

inline ::ibcollect::v1::Snapshot makeSnapshot(const std::string& hostname, const std::string& job,
                                              int64_t collected_at_ms) {
  ::ibcollect::v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname(hostname);
  s.mutable_node()->set_job_id(job);
  s.mutable_node()->set_collected_at_unix_ms(collected_at_ms);
  auto* dev = s.add_devices();
  dev->set_name("mlx5_0");
  return s;
}

class CapturedLog final : public EventLog {
 public:
  // Keeps the formatted line (without the time stamp).
  void event(LogLevel level, std::string_view event, const LogFields& fields) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back(formatEvent(level, event, fields));
    }
    logged_.notify_all();
  }
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }
  bool contains(std::string_view needle) const { return count(needle) > 0; }
  // Lines holding `needle`.
  std::size_t count(std::string_view needle) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return countLocked(needle);
  }
  // Waits until `n` lines hold `needle` (woken by each event, not by polling); false when
  // `timeout` passes first.
  bool waitFor(std::string_view needle, std::size_t n,
               std::chrono::milliseconds timeout = std::chrono::seconds(30)) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return logged_.wait_for(lock, timeout, [&] { return countLocked(needle) >= n; });
  }

 private:
  std::size_t countLocked(std::string_view needle) const {
    std::size_t n = 0;
    for (const auto& l : lines_) n += l.find(needle) != std::string::npos ? 1 : 0;
    return n;
  }
  mutable std::mutex mutex_;
  mutable std::condition_variable logged_;
  std::vector<std::string> lines_;
};

}  // namespace ibc::collector::test

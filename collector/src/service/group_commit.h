#pragma once

// One writer thread that commits every queued snapshot in one batch with one WAL sync
// (group commit): bench/README.md measured ~2,000/s this way against ~1,300/s for a sync per
// snapshot. Internal to the service.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "ibc/collector/store/store.h"

namespace ibc::collector {

class GroupCommitWriter {
 public:
  using Done = std::function<void(Result<PutOutcome>)>;
  enum class Submitted { Queued, Full, Stopped };

  GroupCommitWriter(Store& store, std::size_t max_queued, std::size_t max_batch_records,
                    std::size_t max_batch_bytes);
  ~GroupCommitWriter();

  // Queues a record; `done` runs on the writer thread after its batch is durable or
  // failed. Full: the queue holds max_queued records. Stopped: stop() was called.
  Submitted submit(SnapshotRecord record, Done done);
  // Writes what is queued, then ends the thread. Idempotent.
  void stop();
  uint64_t batches() const;
  // Records waiting to be written (not counting the batch being written).
  std::size_t queued() const;

 private:
  struct Item {
    SnapshotRecord record;
    Done done;
  };
  void run();

  Store& store_;
  const std::size_t max_queued_;
  const std::size_t max_batch_records_;
  const std::size_t max_batch_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  uint64_t batches_ = 0;
  std::thread thread_;
};

}  // namespace ibc::collector

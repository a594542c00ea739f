#include "group_commit.h"

#include <vector>

namespace ibc::collector {

GroupCommitWriter::GroupCommitWriter(Store& store, std::size_t max_queued,
                                     std::size_t max_batch_records, std::size_t max_batch_bytes)
    : store_(store),
      max_queued_(max_queued),
      max_batch_records_(max_batch_records),
      max_batch_bytes_(max_batch_bytes),
      thread_([this] { run(); }) {}

GroupCommitWriter::~GroupCommitWriter() { stop(); }

GroupCommitWriter::Submitted GroupCommitWriter::submit(SnapshotRecord record, Done done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return Submitted::Stopped;
    if (queue_.size() >= max_queued_) return Submitted::Full;
    queue_.push_back(Item{std::move(record), std::move(done)});
  }
  wake_.notify_one();
  return Submitted::Queued;
}

void GroupCommitWriter::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

uint64_t GroupCommitWriter::batches() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return batches_;
}

std::size_t GroupCommitWriter::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

void GroupCommitWriter::run() {
  std::vector<Item> batch;
  std::vector<const SnapshotRecord*> records;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued is written
      // Everything that queued while the previous batch synced goes into this one.
      std::size_t bytes = 0;
      while (!queue_.empty() && batch.size() < max_batch_records_ &&
             (batch.empty() || bytes + queue_.front().record.envelope.size() <= max_batch_bytes_)) {
        bytes += queue_.front().record.envelope.size();
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      ++batches_;
    }
    records.clear();
    for (const auto& item : batch) records.push_back(&item.record);
    auto outcomes = store_.put(records);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (outcomes.ok()) {
        batch[i].done((*outcomes)[i]);
      } else {
        batch[i].done(outcomes.error());
      }
    }
    batch.clear();
  }
}

}  // namespace ibc::collector

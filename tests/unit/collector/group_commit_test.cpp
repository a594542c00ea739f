// The group-commit writer (service/group_commit.cpp) on a real RocksDB store in a temp dir:
// one writer thread commits what queued while the previous batch synced in one write, and
// a record's callback runs only after its batch is written. To decide what queues, a test
// holds the writer inside the first record's callback while it submits the others.

#include "service/group_commit.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collector_test_support.h"

namespace ibc::collector {
namespace {

using test::hexId;

SnapshotRecord record(int n, std::size_t envelope_bytes = 1000) {
  return test::storedRecord(n, "acme", "77", "node" + std::to_string(n), n, 1'700'000'000'000,
                            std::string(envelope_bytes, static_cast<char>('a' + n % 26)));
}

// Holds the writer thread inside a callback until open() (or the end of the test).
class WriterHold {
 public:
  // A callback that says it was entered, then waits for open().
  GroupCommitWriter::Done holdHere() {
    return [this](Result<PutOutcome>) {
      entered_.set_value();
      gate_.wait();
    };
  }
  void waitUntilHeld() { entered_.get_future().wait(); }
  void open() {
    std::call_once(opened_, [this] { release_.set_value(); });
  }
  ~WriterHold() { open(); }

 private:
  std::promise<void> entered_;
  std::promise<void> release_;
  std::shared_future<void> gate_ = release_.get_future().share();
  std::once_flag opened_;
};

// What each callback saw: its outcome, and whether its record was readable from the store
// when it ran.
struct Acks {
  std::mutex mutex;
  std::vector<std::string> ids;
  std::vector<bool> stored_when_acked;
  std::vector<std::string> errors;

  GroupCommitWriter::Done forRecord(Store& store, const std::string& id) {
    return [this, &store, id](Result<PutOutcome> outcome) {
      auto got = store.get(id);
      std::lock_guard<std::mutex> lock(mutex);
      ids.push_back(id);
      stored_when_acked.push_back(got.ok() && got->has_value());
      errors.push_back(outcome.ok() ? "" : outcome.error().message);
    };
  }
};

std::unique_ptr<Store> openStore(const std::string& dir) {
  auto s = Store::open(dir);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(*s) : nullptr;
}

// A writer on a fresh store, its thread held inside record 0's callback so that what a test
// submits next queues behind it (hold.open() lets it go on).
struct HeldWriter {
  // False (and the test failed) when the store did not open or record 0 was not queued.
  bool start(std::size_t max_queued, std::size_t max_records, std::size_t max_bytes) {
    store = openStore(dir.path());
    if (store == nullptr) return false;
    writer = std::make_unique<GroupCommitWriter>(*store, max_queued, max_records, max_bytes);
    const auto first = writer->submit(record(0), hold.holdHere());
    EXPECT_EQ(first, GroupCommitWriter::Submitted::Queued);
    if (first != GroupCommitWriter::Submitted::Queued) return false;
    hold.waitUntilHeld();
    return true;
  }
  // Submits `r` with a callback that records into `acks` under `id`.
  GroupCommitWriter::Submitted submit(SnapshotRecord r, const std::string& id) {
    return writer->submit(std::move(r), acks.forRecord(*store, id));
  }
  GroupCommitWriter::Submitted submit(int n, std::size_t envelope_bytes = 1000) {
    return submit(record(n, envelope_bytes), hexId(n));
  }

  test::TempDir dir;
  std::unique_ptr<Store> store;
  Acks acks;
  std::unique_ptr<GroupCommitWriter> writer;
  WriterHold hold;  // after the writer: opened before the writer is destroyed
};

TEST(GroupCommitWriter, RecordsQueuedDuringAWriteGoInTheNextBatchAndEachIsAckedAfterItsWrite) {
  HeldWriter held;
  ASSERT_TRUE(held.start(100, 100, 64u << 20));
  const uint64_t syncs_before = held.store->walSyncs();
  for (int n = 1; n <= 10; ++n) {
    ASSERT_EQ(held.submit(n), GroupCommitWriter::Submitted::Queued);
  }
  EXPECT_EQ(held.writer->queued(), 10u);
  EXPECT_EQ(held.writer->batches(), 1u);
  held.hold.open();
  held.writer->stop();
  EXPECT_EQ(held.writer->batches(), 2u);  // the first record alone, then the ten together
  EXPECT_EQ(held.writer->queued(), 0u);
  EXPECT_GE(held.store->walSyncs(), syncs_before + 1);
  ASSERT_EQ(held.acks.ids.size(), 10u);
  for (int n = 1; n <= 10; ++n) {
    EXPECT_EQ(held.acks.ids[n - 1], hexId(n)) << "callbacks run in submission order";
    EXPECT_TRUE(held.acks.stored_when_acked[n - 1]) << n;
    EXPECT_EQ(held.acks.errors[n - 1], "");
  }
}

TEST(GroupCommitWriter, ABatchTakesAtMostItsRecordLimitAndItsByteLimit) {
  struct Case {
    std::size_t max_records;
    std::size_t max_bytes;
    std::size_t envelope_bytes;
    int queued;
    uint64_t batches_after_the_first;
  };
  for (const Case& c : {Case{3, 64u << 20, 1000, 7, 3},  // 3 + 3 + 1
                        Case{100, 2500, 1000, 6, 3},     // 2 of 1000 bytes fit in 2500
                        Case{100, 500, 1000, 2, 2}}) {   // one too large still goes alone
    HeldWriter held;
    ASSERT_TRUE(held.start(100, c.max_records, c.max_bytes));
    for (int n = 1; n <= c.queued; ++n) held.submit(n, c.envelope_bytes);
    held.hold.open();
    held.writer->stop();
    EXPECT_EQ(held.writer->batches(), 1 + c.batches_after_the_first)
        << c.max_records << " records, " << c.max_bytes << " bytes";
    EXPECT_EQ(held.acks.ids.size(), static_cast<std::size_t>(c.queued));
  }
}

TEST(GroupCommitWriter, AFullQueueRefusesAndAStopWritesWhatWasQueuedThenRefuses) {
  HeldWriter held;
  ASSERT_TRUE(held.start(2, 100, 64u << 20));
  EXPECT_EQ(held.submit(1), GroupCommitWriter::Submitted::Queued);
  EXPECT_EQ(held.submit(2), GroupCommitWriter::Submitted::Queued);
  EXPECT_EQ(held.submit(3), GroupCommitWriter::Submitted::Full);
  held.hold.open();
  held.writer->stop();
  EXPECT_EQ(held.acks.ids, (std::vector<std::string>{hexId(1), hexId(2)}));
  EXPECT_EQ(held.submit(4), GroupCommitWriter::Submitted::Stopped);
  held.writer->stop();  // idempotent
  EXPECT_EQ(held.acks.ids.size(), 2u);
  auto refused = held.store->get(hexId(3));
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->has_value());
}

TEST(GroupCommitWriter, AWriteThatFailsGivesEveryRecordOfItsBatchTheErrorAndStoresNone) {
  HeldWriter held;
  ASSERT_TRUE(held.start(100, 100, 64u << 20));
  SnapshotRecord bad = record(2);
  bad.info.set_snapshot_id("not-a-hex-id");
  held.submit(1);
  held.submit(std::move(bad), hexId(2));
  held.hold.open();
  held.writer->stop();
  ASSERT_EQ(held.acks.errors.size(), 2u);
  EXPECT_NE(held.acks.errors[0], "");
  EXPECT_EQ(held.acks.errors[0], held.acks.errors[1]);
  EXPECT_FALSE(held.acks.stored_when_acked[0]) << "nothing of a failed batch is written";
  auto first = held.store->get(hexId(0));
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->has_value()) << "the batch before it was written";
}

}  // namespace
}  // namespace ibc::collector

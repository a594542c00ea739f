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

TEST(GroupCommitWriter, RecordsQueuedDuringAWriteGoInTheNextBatchAndEachIsAckedAfterItsWrite) {
  test::TempDir dir;
  auto store = openStore(dir.path());
  ASSERT_NE(store, nullptr);
  Acks acks;
  GroupCommitWriter writer(*store, 100, 100, 64u << 20);
  WriterHold hold;
  ASSERT_EQ(writer.submit(record(0), hold.holdHere()), GroupCommitWriter::Submitted::Queued);
  hold.waitUntilHeld();
  const uint64_t syncs_before = store->walSyncs();
  for (int n = 1; n <= 10; ++n) {
    ASSERT_EQ(writer.submit(record(n), acks.forRecord(*store, hexId(n))),
              GroupCommitWriter::Submitted::Queued);
  }
  EXPECT_EQ(writer.queued(), 10u);
  EXPECT_EQ(writer.batches(), 1u);
  hold.open();
  writer.stop();
  EXPECT_EQ(writer.batches(), 2u);  // the first record alone, then the ten together
  EXPECT_EQ(writer.queued(), 0u);
  EXPECT_GE(store->walSyncs(), syncs_before + 1);
  ASSERT_EQ(acks.ids.size(), 10u);
  for (int n = 1; n <= 10; ++n) {
    EXPECT_EQ(acks.ids[n - 1], hexId(n)) << "callbacks run in submission order";
    EXPECT_TRUE(acks.stored_when_acked[n - 1]) << n;
    EXPECT_EQ(acks.errors[n - 1], "");
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
    test::TempDir dir;
    auto store = openStore(dir.path());
    ASSERT_NE(store, nullptr);
    Acks acks;
    GroupCommitWriter writer(*store, 100, c.max_records, c.max_bytes);
    WriterHold hold;
    ASSERT_EQ(writer.submit(record(0), hold.holdHere()), GroupCommitWriter::Submitted::Queued);
    hold.waitUntilHeld();
    for (int n = 1; n <= c.queued; ++n) {
      writer.submit(record(n, c.envelope_bytes), acks.forRecord(*store, hexId(n)));
    }
    hold.open();
    writer.stop();
    EXPECT_EQ(writer.batches(), 1 + c.batches_after_the_first)
        << c.max_records << " records, " << c.max_bytes << " bytes";
    EXPECT_EQ(acks.ids.size(), static_cast<std::size_t>(c.queued));
  }
}

TEST(GroupCommitWriter, AFullQueueRefusesAndAStopWritesWhatWasQueuedThenRefuses) {
  test::TempDir dir;
  auto store = openStore(dir.path());
  ASSERT_NE(store, nullptr);
  Acks acks;
  GroupCommitWriter writer(*store, 2, 100, 64u << 20);
  WriterHold hold;
  ASSERT_EQ(writer.submit(record(0), hold.holdHere()), GroupCommitWriter::Submitted::Queued);
  hold.waitUntilHeld();
  EXPECT_EQ(writer.submit(record(1), acks.forRecord(*store, hexId(1))),
            GroupCommitWriter::Submitted::Queued);
  EXPECT_EQ(writer.submit(record(2), acks.forRecord(*store, hexId(2))),
            GroupCommitWriter::Submitted::Queued);
  EXPECT_EQ(writer.submit(record(3), acks.forRecord(*store, hexId(3))),
            GroupCommitWriter::Submitted::Full);
  hold.open();
  writer.stop();
  EXPECT_EQ(acks.ids, (std::vector<std::string>{hexId(1), hexId(2)}));
  EXPECT_EQ(writer.submit(record(4), acks.forRecord(*store, hexId(4))),
            GroupCommitWriter::Submitted::Stopped);
  writer.stop();  // idempotent
  EXPECT_EQ(acks.ids.size(), 2u);
  auto refused = store->get(hexId(3));
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->has_value());
}

TEST(GroupCommitWriter, AWriteThatFailsGivesEveryRecordOfItsBatchTheErrorAndStoresNone) {
  test::TempDir dir;
  auto store = openStore(dir.path());
  ASSERT_NE(store, nullptr);
  Acks acks;
  GroupCommitWriter writer(*store, 100, 100, 64u << 20);
  WriterHold hold;
  ASSERT_EQ(writer.submit(record(0), hold.holdHere()), GroupCommitWriter::Submitted::Queued);
  hold.waitUntilHeld();
  SnapshotRecord bad = record(2);
  bad.info.set_snapshot_id("not-a-hex-id");
  writer.submit(record(1), acks.forRecord(*store, hexId(1)));
  writer.submit(std::move(bad), acks.forRecord(*store, hexId(2)));
  hold.open();
  writer.stop();
  ASSERT_EQ(acks.errors.size(), 2u);
  EXPECT_NE(acks.errors[0], "");
  EXPECT_EQ(acks.errors[0], acks.errors[1]);
  EXPECT_FALSE(acks.stored_when_acked[0]) << "nothing of a failed batch is written";
  auto first = store->get(hexId(0));
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->has_value()) << "the batch before it was written";
}

}  // namespace
}  // namespace ibc::collector

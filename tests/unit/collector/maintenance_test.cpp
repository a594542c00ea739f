// Retention, size and checkpoints on a real RocksDB store in a temp dir.
#include "ibc/collector/store/maintenance.h"

#include <gtest/gtest.h>

#include <fstream>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>
#include <thread>

#include "collector_test_support.h"

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using std::chrono::hours;
using std::chrono::milliseconds;
using test::hexId;
using test::TempDir;
using SystemClock = std::chrono::system_clock;

const SystemClock::time_point kNow = SystemClock::time_point(milliseconds(1'800'000'000'000));
const int64_t kNowMs = 1'800'000'000'000;
constexpr int64_t kDayMs = 86'400'000;

// A ~64 KiB envelope of random bytes (zstd cannot shrink it: sizes on disk are real).
SnapshotRecord record(int n, const std::string& tenant, const std::string& job,
                      const std::string& node, int64_t collected_ms, int64_t received_ms) {
  std::mt19937_64 random(static_cast<uint64_t>(n));
  std::string envelope(64 << 10, '\0');
  for (auto& c : envelope) c = static_cast<char>(random());
  return test::storedRecord(n, tenant, job, node, collected_ms, received_ms, std::move(envelope));
}

void put(Store& store, const std::vector<SnapshotRecord>& records) {
  std::vector<const SnapshotRecord*> ptrs;
  for (const auto& r : records) ptrs.push_back(&r);
  auto out = store.put(ptrs);
  ASSERT_TRUE(out.ok()) << out.error().message;
}

uint64_t bytesOnDisk(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

std::set<std::string> listed(const Store& store, const std::string& tenant,
                             const std::string& job = "") {
  v1::ListSnapshotsRequest q;
  q.set_tenant(tenant);
  q.set_job_id(job);
  auto list = store.listSnapshots(q, 100000);
  EXPECT_TRUE(list.ok());
  std::set<std::string> out;
  if (list.ok()) {
    for (const auto& s : list->snapshots()) out.insert(s.snapshot_id());
  }
  return out;
}

bool present(const Store& store, int n) {
  auto got = store.get(hexId(n));
  return got.ok() && got->has_value();
}

// 300 snapshots of ~64 KiB over 2 tenants, 6 nodes, 3 jobs: n < 200 received 40 days ago
// (oldest first), the rest 1 day ago. Collection times are interleaved so old and recent
// snapshots alternate within a node's index (runs must stop at survivors).
std::unique_ptr<Store> filledStore(const std::string& dir) {
  auto store = Store::open(dir);
  EXPECT_TRUE(store.ok());
  if (!store.ok()) return nullptr;
  std::vector<SnapshotRecord> batch;
  for (int n = 0; n < 300; ++n) {
    const bool old = n < 200;
    const int64_t received = old ? kNowMs - 40 * kDayMs + n : kNowMs - kDayMs + n;
    const int64_t collected = n % 5 == 0 ? 1000 + 300 - n : 1000 + n;  // some out of order
    batch.push_back(record(n, n % 2 == 0 ? "acme" : "globex", "job" + std::to_string(n % 3),
                           "node" + std::to_string(n % 6), collected, received));
    if (batch.size() == 50) {
      put(**store, batch);
      batch.clear();
    }
  }
  return std::move(*store);
}

TEST(Retention, OldSnapshotsGoWithEveryIndexEntryAndTheStoreShrinksOnDisk) {
  TempDir dir;
  auto store = filledStore(dir.path());
  ASSERT_NE(store, nullptr);
  const uint64_t disk_before = bytesOnDisk(dir.path());
  RetentionPolicy policy;
  policy.max_age = hours(24 * 30);
  // Three old snapshots belong to an open case.
  policy.protected_ids = [](const Store&) -> Result<std::unordered_set<std::string>> {
    return std::unordered_set<std::string>{hexId(10), hexId(11), hexId(150)};
  };
  auto report = applyRetention(*store, policy, kNow);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const uint64_t disk_after = bytesOnDisk(dir.path());
  std::cout << "retention: deleted " << report->deleted << " of 300 snapshots ("
            << report->deleted_bytes << " envelope bytes), store " << totalBytes(report->before)
            << " -> " << totalBytes(report->after) << " bytes (sst+blob+wal), directory "
            << disk_before << " -> " << disk_after << " bytes, " << report->range_deletes
            << " range deletes, " << report->point_deletes << " point deletes\n";

  EXPECT_EQ(report->deleted, 197u);
  EXPECT_EQ(report->kept_protected, 3u);
  EXPECT_GT(report->range_deletes, 0u);
  EXPECT_EQ(report->oldest_received_unix_ms, kNowMs - 40 * kDayMs);
  // Two thirds of the data went: the store and its directory shrink accordingly.
  EXPECT_LT(totalBytes(report->after), totalBytes(report->before) / 2);
  EXPECT_LT(disk_after, disk_before / 2);

  std::set<std::string> expected_acme, expected_globex, expected_job0;
  for (int n = 0; n < 300; ++n) {
    const bool kept = n >= 200 || n == 10 || n == 11 || n == 150;
    EXPECT_EQ(present(*store, n), kept) << n;
    if (!kept) continue;
    (n % 2 == 0 ? expected_acme : expected_globex).insert(hexId(n));
    if (n % 3 == 0 && n % 2 == 0) expected_job0.insert(hexId(n));
  }
  // The indexes list exactly the survivors.
  EXPECT_EQ(listed(*store, "acme"), expected_acme);
  EXPECT_EQ(listed(*store, "globex"), expected_globex);
  EXPECT_EQ(listed(*store, "acme", "job0"), expected_job0);
  auto nodes = store->listNodes("acme", "");
  ASSERT_TRUE(nodes.ok());
  uint64_t counted = 0;
  for (const auto& node : nodes->nodes()) counted += node.snapshot_count();
  EXPECT_EQ(counted, expected_acme.size());

  // A second run finds nothing more to delete.
  auto again = applyRetention(*store, policy, kNow);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->deleted, 0u);
}

// The default hook reads the cases column family: an open or escalated case keeps its
// snapshots, a closed one does not (docs/operations.md).
TEST(Retention, SnapshotsOfOpenAndEscalatedCasesAreKeptOfClosedOnesNot) {
  TempDir dir;
  auto store = filledStore(dir.path());
  ASSERT_NE(store, nullptr);
  const auto addCase = [&](const std::string& id, v1::CaseState state, std::vector<int> ns) {
    v1::Case c;
    c.set_case_id(id);
    c.set_tenant("acme");
    c.set_state(state);
    for (int n : ns) c.add_snapshot_ids(hexId(n));
    auto inserted = store->insertCase(c);
    ASSERT_TRUE(inserted.ok() && *inserted);
  };
  addCase("case-open", v1::CASE_STATE_OPEN, {10, 12});
  addCase("case-escalated", v1::CASE_STATE_ESCALATED, {14});
  addCase("case-closed", v1::CASE_STATE_CLOSED, {16});
  RetentionPolicy policy;  // the default protected_ids: the store's cases
  policy.max_age = hours(24 * 30);
  auto report = applyRetention(*store, policy, kNow);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->kept_protected, 3u);
  EXPECT_TRUE(present(*store, 10));
  EXPECT_TRUE(present(*store, 12));
  EXPECT_TRUE(present(*store, 14));
  EXPECT_FALSE(present(*store, 16));
  EXPECT_FALSE(present(*store, 18));
  // Cases themselves are never retention's to delete.
  EXPECT_TRUE(store->getCase("acme", "case-closed")->has_value());
}

TEST(Retention, ASizeLimitDeletesTheOldestReceivedUntilTheStoreFits) {
  TempDir dir;
  auto store = filledStore(dir.path());
  ASSERT_NE(store, nullptr);
  auto size = storeSize(*store);
  ASSERT_TRUE(size.ok());
  RetentionPolicy policy;
  policy.max_store_bytes = totalBytes(*size) / 3;
  auto report = applyRetention(*store, policy, kNow);
  ASSERT_TRUE(report.ok()) << report.error().message;
  std::cout << "retention by size: limit " << policy.max_store_bytes << " bytes, store "
            << totalBytes(report->before) << " -> " << totalBytes(report->after) << " bytes, "
            << report->deleted << " deleted\n";
  EXPECT_LE(totalBytes(report->after), policy.max_store_bytes);
  EXPECT_GT(report->deleted, 150u);
  EXPECT_LT(report->deleted, 250u);
  // Oldest received first: the survivors are exactly the newest.
  for (int n = 0; n < 300; ++n) {
    EXPECT_EQ(present(*store, n), n >= static_cast<int>(report->deleted)) << n;
  }
}

TEST(Retention, NoPolicyDeletesNothing) {
  TempDir dir;
  auto store = filledStore(dir.path());
  ASSERT_NE(store, nullptr);
  auto report = applyRetention(*store, RetentionPolicy{}, kNow);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->deleted, 0u);
  EXPECT_TRUE(present(*store, 0));
}

TEST(Retention, SnapshotsWrittenDuringARunInsideADeletedRangeSurvive) {
  TempDir dir;
  auto store = filledStore(dir.path());
  ASSERT_NE(store, nullptr);
  // While retention deletes the old snapshots, a late agent delivers recent snapshots whose
  // collection times fall between old ones of the same nodes (inside the index runs).
  std::atomic<bool> done{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int n = 1000; n < 1100 && !done; ++n) {
      const auto r = record(n, "acme", "job0", "node" + std::to_string(n % 6 / 2 * 2),
                            1000 + (n - 1000) * 2 + 1, kNowMs);
      std::vector<const SnapshotRecord*> one{&r};
      if (store->put(one).ok()) ++written;
    }
  });
  RetentionPolicy policy;
  policy.max_age = hours(24 * 30);
  policy.chunk = 7;  // many short writes, so the writer interleaves
  auto report = applyRetention(*store, policy, kNow);
  done = true;
  writer.join();
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->deleted, 200u);
  const auto acme = listed(*store, "acme");
  for (int n = 1000; n < 1000 + written; ++n) {
    EXPECT_TRUE(present(*store, n)) << n;
    EXPECT_EQ(acme.count(hexId(n)), 1u) << n << " lost its index entry";
  }
}

TEST(Checkpoint, ACheckpointTakenDuringWritesHoldsEveryEarlierWriteAndOpensAsAStore) {
  TempDir dir;
  auto store = Store::open(dir.path() + "/data");
  ASSERT_TRUE(store.ok());
  std::atomic<int> acknowledged{0};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int n = 0; n < 100000 && !stop; ++n) {
      const auto r = record(n, "acme", "j", "node01", n, kNowMs);
      std::vector<const SnapshotRecord*> one{&r};
      if (!(*store)->put(one).ok()) return;
      acknowledged = n + 1;
    }
  });
  while (acknowledged < 40) std::this_thread::yield();
  const int before = acknowledged;
  auto made = createCheckpoint(**store, dir.path() + "/backups/one");
  stop = true;
  writer.join();
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_GT(made->bytes, uint64_t{40} << 16);
  std::cout << "checkpoint: " << made->bytes << " bytes in " << made->took.count() << " ms\n";
  // A second checkpoint into the same place is refused.
  auto again = createCheckpoint(**store, dir.path() + "/backups/one");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::InvalidArgument);

  store->reset();
  auto restored = Store::open(dir.path() + "/backups/one");
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  for (int n = 0; n < before; ++n) EXPECT_TRUE(present(**restored, n)) << n;
}

// What a backup killed on the way leaves (RocksDB's NAME.tmp of the staging directory the
// store recorded) is removed by the next backup or start; a finished backup leaves only its
// destination.
TEST(Checkpoint, AKilledBackupLeavesNothingOnceTheNextBackupOrStartRuns) {
  TempDir dir;
  auto store = Store::open(dir.path() + "/data");
  ASSERT_TRUE(store.ok());
  const auto r = record(1, "acme", "j", "node01", 1, kNowMs);
  ASSERT_TRUE((*store)->put({&r}).ok());
  // A backup of this store into backups/killed, killed while RocksDB copied.
  const std::string staging = dir.path() + "/backups/.ibcollect-partial-killed";
  std::filesystem::create_directories(staging + ".tmp");
  std::ofstream(staging + ".tmp/000001.sst") << std::string(1 << 16, 'x');
  std::ofstream(dir.path() + "/data/PARTIAL_BACKUPS") << staging << "\n";

  const auto removed = removePartialBackups(**store);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], staging + ".tmp");
  EXPECT_FALSE(std::filesystem::exists(staging + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/data/PARTIAL_BACKUPS"));

  auto made = createCheckpoint(**store, dir.path() + "/backups/next");
  ASSERT_TRUE(made.ok()) << made.error().message;
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/backups")) {
    left.push_back(e.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"next"});
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/data/PARTIAL_BACKUPS"));
  EXPECT_TRUE(removePartialBackups(**store).empty());
}

TEST(StoreSize, CountsBlobsAndTheWriteAheadLog) {
  TempDir dir;
  auto store = Store::open(dir.path());
  ASSERT_TRUE(store.ok());
  auto empty = storeSize(**store);
  ASSERT_TRUE(empty.ok());
  put(**store,
      {record(1, "acme", "j", "node01", 1, kNowMs), record(2, "acme", "j", "node01", 2, kNowMs)});
  auto size = storeSize(**store);
  ASSERT_TRUE(size.ok());
  // Not flushed yet: the envelopes are in the WAL.
  EXPECT_GE(size->wal_bytes, empty->wal_bytes + (uint64_t{2} << 16));
}

}  // namespace
}  // namespace ibc::collector

#include "ibc/collector/store/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "collector_test_support.h"

using ::testing::HasSubstr;

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using test::hexId;
using test::TempDir;

SnapshotRecord record(int n, const std::string& tenant, const std::string& job,
                      const std::string& node, int64_t time) {
  SnapshotRecord r = test::storedRecord(
      n, tenant, job, node, time, 1'700'000'000'000,
      "envelope-" + std::to_string(n) + std::string(8000, static_cast<char>('a' + n % 26)));
  r.info.set_signer("CN=" + node + ",OU=agent,O=" + tenant);
  return r;
}

std::unique_ptr<Store> openStore(const std::string& dir) {
  auto s = Store::open(dir);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(*s) : nullptr;
}

std::vector<PutOutcome> put(Store& store, const std::vector<SnapshotRecord>& records) {
  std::vector<const SnapshotRecord*> ptrs;
  for (const auto& r : records) ptrs.push_back(&r);
  auto out = store.put(ptrs);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return out.ok() ? *out : std::vector<PutOutcome>();
}

std::vector<std::string> ids(const v1::SnapshotList& list) {
  std::vector<std::string> out;
  for (const auto& s : list.snapshots()) out.push_back(s.snapshot_id());
  return out;
}

TEST(Store, PutThenGetReturnsTheEnvelopeVerbatimAndItsInfo) {
  TempDir dir;
  auto store = openStore(dir.path());
  const auto r = record(1, "acme", "77", "node01", 1000);
  EXPECT_EQ(put(*store, {r}), std::vector<PutOutcome>{PutOutcome::Stored});
  auto got = store->get(hexId(1));
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->envelope, r.envelope);
  EXPECT_EQ((*got)->info.SerializeAsString(), r.info.SerializeAsString());
  auto missing = store->get(hexId(2));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST(Store, EveryPutSyncsTheWriteAheadLogBeforeItReturns) {
  TempDir dir;
  auto store = openStore(dir.path());  // default options: what the collector runs with
  for (int n = 1; n <= 3; ++n) {
    const uint64_t before = store->walSyncs();
    put(*store, {record(n, "acme", "77", "node01", n)});
    EXPECT_GE(store->walSyncs(), before + 1) << "put " << n << " returned before a WAL sync";
  }
  // A put that writes nothing (already stored) needs no sync.
  const uint64_t before = store->walSyncs();
  EXPECT_EQ(put(*store, {record(1, "acme", "77", "node01", 1)}),
            std::vector<PutOutcome>{PutOutcome::AlreadyStored});
  EXPECT_EQ(store->walSyncs(), before);
}

TEST(Store, WithoutSyncTheCounterStaysStill) {
  // The counter above really observes syncs: turned off, it does not move.
  TempDir dir;
  StoreOptions unsynced;
  unsynced.sync = false;
  auto store = Store::open(dir.path(), unsynced);
  ASSERT_TRUE(store.ok());
  const uint64_t before = (*store)->walSyncs();
  put(**store, {record(1, "acme", "77", "node01", 1)});
  EXPECT_EQ((*store)->walSyncs(), before);
}

TEST(Store, AnIdIsStoredOnceWithinABatchAndAcrossBatches) {
  TempDir dir;
  auto store = openStore(dir.path());
  auto first = record(1, "acme", "77", "node01", 1000);
  auto again = first;
  again.envelope = "would overwrite";
  EXPECT_EQ(
      put(*store, {first, again, record(2, "acme", "77", "node02", 1000)}),
      (std::vector<PutOutcome>{PutOutcome::Stored, PutOutcome::AlreadyStored, PutOutcome::Stored}));
  EXPECT_EQ(put(*store, {again}), std::vector<PutOutcome>{PutOutcome::AlreadyStored});
  EXPECT_EQ((*store->get(hexId(1)))->envelope, first.envelope);
  auto nodes = store->listNodes("acme", "77");
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->nodes_size(), 2);
  EXPECT_EQ(nodes->nodes(0).snapshot_count(), 1u);
}

TEST(Store, WhatWasStoredSurvivesAReopen) {
  TempDir dir;
  {
    auto store = openStore(dir.path());
    put(*store, {record(1, "acme", "77", "node01", 1000)});
  }
  auto store = openStore(dir.path());
  auto got = store->get(hexId(1));
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->info.node(), "node01");
}

TEST(Store, ASecondOpenOfTheSameDirectoryIsAnIoError) {
  TempDir dir;
  auto store = openStore(dir.path());
  auto second = Store::open(dir.path());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::Io);
  EXPECT_THAT(second.error().message, HasSubstr(dir.path()));
}

TEST(Store, ListsJobsNodesAndSnapshotsOfOneTenantOnly) {
  TempDir dir;
  auto store = openStore(dir.path());
  put(*store, {record(1, "acme", "77", "node01", 3000), record(2, "acme", "77", "node01", 1000),
               record(3, "acme", "77", "node02", 2000), record(4, "acme", "78", "node01", 4000),
               record(5, "acme", "", "node03", 5000), record(6, "globex", "77", "gx1", 1000),
               record(7, "acme2", "99", "n", 1)});
  auto jobs = store->listJobs("acme", "", 100);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->jobs_size(), 2);
  EXPECT_EQ(jobs->jobs(0).job_id(), "77");
  EXPECT_EQ(jobs->jobs(1).job_id(), "78");
  EXPECT_FALSE(jobs->more());
  auto after = store->listJobs("acme", "77", 100);
  ASSERT_EQ(after->jobs_size(), 1);
  EXPECT_EQ(after->jobs(0).job_id(), "78");
  auto limited = store->listJobs("acme", "", 1);
  EXPECT_EQ(limited->jobs_size(), 1);
  EXPECT_TRUE(limited->more());

  auto nodes = store->listNodes("acme", "77");
  ASSERT_EQ(nodes->nodes_size(), 2);
  EXPECT_EQ(nodes->nodes(0).node(), "node01");
  EXPECT_EQ(nodes->nodes(0).snapshot_count(), 2u);
  EXPECT_EQ(nodes->nodes(0).last_collected_at_unix_ms(), 3000);
  auto all_nodes = store->listNodes("acme", "");
  ASSERT_EQ(all_nodes->nodes_size(), 3);  // node01, node02, node03 (no job)
  EXPECT_EQ(all_nodes->nodes(0).snapshot_count(), 3u);

  v1::ListSnapshotsRequest q;
  q.set_tenant("acme");
  q.set_job_id("77");
  auto snaps = store->listSnapshots(q, 100);
  ASSERT_TRUE(snaps.ok());
  // By node, then oldest first.
  EXPECT_EQ(ids(*snaps), (std::vector<std::string>{hexId(2), hexId(1), hexId(3)}));
  EXPECT_TRUE(snaps->next_page_token().empty());
  q.set_node("node02");
  EXPECT_EQ(ids(*store->listSnapshots(q, 100)), std::vector<std::string>{hexId(3)});
  v1::ListSnapshotsRequest by_node;
  by_node.set_tenant("acme");
  by_node.set_node("node03");
  EXPECT_EQ(ids(*store->listSnapshots(by_node, 100)), std::vector<std::string>{hexId(5)});
}

TEST(Store, WithoutATenantAJobIsSearchedInEveryTenant) {
  TempDir dir;
  auto store = openStore(dir.path());
  put(*store, {record(1, "acme", "77", "a1", 1), record(2, "globex", "77", "g1", 1),
               record(3, "globex", "78", "g1", 1), record(4, "zeta", "77", "z1", 1)});
  v1::ListSnapshotsRequest q;
  q.set_job_id("77");
  EXPECT_EQ(ids(*store->listSnapshots(q, 100)),
            (std::vector<std::string>{hexId(1), hexId(2), hexId(4)}));
  // Paged one at a time across tenants.
  std::vector<std::string> paged;
  for (int i = 0; i < 10; ++i) {
    auto page = store->listSnapshots(q, 1);
    ASSERT_TRUE(page.ok()) << page.error().message;
    for (const auto& s : page->snapshots()) paged.push_back(s.snapshot_id());
    if (page->next_page_token().empty()) break;
    q.set_page_token(page->next_page_token());
  }
  EXPECT_EQ(paged, (std::vector<std::string>{hexId(1), hexId(2), hexId(4)}));
}

TEST(Store, PagesCoverEverySnapshotOnce) {
  TempDir dir;
  auto store = openStore(dir.path());
  std::vector<SnapshotRecord> records;
  for (int i = 1; i <= 25; ++i)
    records.push_back(record(i, "acme", "77", "node" + std::to_string(i % 4), i));
  put(*store, records);
  v1::ListSnapshotsRequest q;
  q.set_tenant("acme");
  q.set_job_id("77");
  std::set<std::string> seen;
  int pages = 0;
  while (true) {
    auto page = store->listSnapshots(q, 7);
    ASSERT_TRUE(page.ok());
    ++pages;
    for (const auto& s : page->snapshots()) EXPECT_TRUE(seen.insert(s.snapshot_id()).second);
    if (page->next_page_token().empty()) break;
    q.set_page_token(page->next_page_token());
  }
  EXPECT_EQ(seen.size(), 25u);
  EXPECT_EQ(pages, 4);
  q.set_tenant("globex");  // a token of another tenant's query
  EXPECT_FALSE(store->listSnapshots(q, 7).ok());
}

TEST(Store, TimesSortOldestFirstIncludingBefore1970) {
  TempDir dir;
  auto store = openStore(dir.path());
  put(*store, {record(1, "acme", "j", "n", 5), record(2, "acme", "j", "n", -5),
               record(3, "acme", "j", "n", 0), record(4, "acme", "j", "n", INT64_MAX)});
  v1::ListSnapshotsRequest q;
  q.set_tenant("acme");
  q.set_job_id("j");
  EXPECT_EQ(ids(*store->listSnapshots(q, 10)),
            (std::vector<std::string>{hexId(2), hexId(3), hexId(1), hexId(4)}));
  EXPECT_EQ(store->listNodes("acme", "j")->nodes(0).last_collected_at_unix_ms(), INT64_MAX);
}

TEST(Store, BadIdsAndZeroBytesInNamesAreInvalidAndWriteNothing) {
  TempDir dir;
  auto store = openStore(dir.path());
  auto good = record(1, "acme", "77", "n", 1);
  auto bad_name = record(2, "acme",
                         std::string("7\0"
                                     "7",
                                     3),
                         "n", 1);
  auto out = store->put({&good, &bad_name});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::InvalidArgument);
  EXPECT_FALSE(store->get(hexId(1))->has_value());
  auto bad_id = record(3, "acme", "77", "n", 1);
  bad_id.info.set_snapshot_id("xyz");
  EXPECT_EQ(store->put({&bad_id}).error().code, ErrorCode::InvalidArgument);
  EXPECT_EQ(store->get("not-hex").error().code, ErrorCode::InvalidArgument);
  v1::ListSnapshotsRequest none;
  EXPECT_EQ(store->listSnapshots(none, 10).error().code, ErrorCode::InvalidArgument);
}

// Issue 11 #2: below the free-space floor writes are refused before RocksDB runs out of
// space (nothing written, reads still served), and they resume when space returns.
TEST(Store, BelowTheFreeSpaceFloorWritesAreRefusedAndResumeWhenSpaceReturns) {
  TempDir dir;
  uint64_t free = 10u << 20;
  StoreOptions options;
  options.min_free_bytes = 64u << 20;
  options.free_bytes = [&free](const std::string&) { return Result<uint64_t>(free); };
  auto opened = Store::open(dir.path(), options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto& store = **opened;
  free = 1u << 30;
  ASSERT_EQ(put(store, {record(1, "acme", "77", "node01", 1000)}).size(), 1u);
  free = 10u << 20;
  const auto r2 = record(2, "acme", "77", "node01", 2000);
  auto refused = store.put({&r2});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::Unavailable);
  EXPECT_THAT(refused.error().message, HasSubstr("only 10 MiB free"));
  EXPECT_THAT(refused.error().message, HasSubstr("--min-free-mb"));
  auto missing = store.get(hexId(2));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value()) << "a refused write left a record";
  auto kept = store.get(hexId(1));
  ASSERT_TRUE(kept.ok() && kept->has_value()) << "reads stop while writes are refused";
  free = 1u << 30;
  EXPECT_EQ(put(store, {r2}), std::vector<PutOutcome>{PutOutcome::Stored});
}

TEST(Store, AStoreOfTheOldSchemaIsRefusedWithWhatToDo) {
  TempDir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), &db).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "schema", "1").ok());
    delete db;
  }
  auto s = Store::open(dir.path());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::Unsupported);
  EXPECT_THAT(s.error().message, HasSubstr("schema 1"));
  EXPECT_THAT(s.error().message, HasSubstr("new --data directory"));
}

}  // namespace
}  // namespace ibc::collector

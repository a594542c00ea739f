#pragma once

// The collector's storage (docs/security.md): RocksDB, the only code that touches it. Every
// rocksdb::Status is checked and converted into a core::Error.
//
// Key layout — one column family per kind of record:
//
//   "snapshots"      id                                     → SignedSnapshot bytes, verbatim
//   "snapshot_info"  id                                     → v1::SnapshotInfo
//   "by_job"         tenant 00 job 00 node 00 time id       → v1::SnapshotInfo
//   "by_node"        tenant 00 node 00 time id              → v1::SnapshotInfo
//   "cases"          tenant 00 case_id                      → v1::Case
//   "findings"       tenant 00 case_id 00 id 00 code        → (reserved: findings of a case)
//   "default"        "schema"                               → "2"
//
//   id   = the 32 raw bytes of the snapshot id: SHA-256 of the whole signed envelope
//          (snapshot, signature, chain). Schema 1 hashed the inner snapshot only, so a
//          tenant re-signing a copy of another tenant's snapshot took over its id; since
//          schema 2 an id names one envelope, whose signer's tenant is the uploader's, so
//          deduplication by id is deduplication within a tenant. Schema-1 stores are
//          refused at open with what to do.
//   time = collected_at_unix_ms as 8 bytes big-endian with the sign bit flipped, so keys
//          sort by time, oldest first, negative times included
//   00   = one zero byte. Tenant, job and node names never contain one (the service
//          rejects them), so a prefix "tenant 00 job 00" selects exactly one job and
//          "name 01" is the first key past every key of "name".
//
// Snapshots without a job id get no "by_job" entry. The index values repeat the small
// SnapshotInfo (~150 bytes beside a ~64 KiB envelope) so listings are one range scan.
//
// Cases are the one record that changes: insertCase/updateCase read, change and rewrite a
// case under one mutex, each write synced like an upload. A case id is unique across
// tenants (the service draws it at random and checks), so a case is found by id alone with
// a scan of the (small) cases family.
//
// Ingest is write-once: a record is only ever added, never rewritten, which is what makes
// an upload idempotent and a crash harmless (a batch is in the WAL entirely or not at all).
// Only retention (maintenance.h) deletes: every record of a snapshot in one atomic write,
// under the same lock as put(), so a deleted snapshot never leaves an index entry behind.
// Large values live in blob files (BlobDB: compaction never rewrites them, except
// retention's garbage collection of the oldest blob files); `bytes_per_sync` 1 MiB and a 16 MiB
// write buffer keep background writeback smooth (bench/README.md).
//
// Threading: put() from one writer thread at a time (the service's group-commit writer);
// reads, retention and checkpoints from any thread, concurrently with put().

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ibc/collector/event_log.h"
#include "ibc/core/result.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::collector {

using core::Error;
using core::ErrorCode;
using core::Result;
using core::Status;

struct StoreOptions {
  // Sync the write-ahead log before put() returns. Only benchmarks measuring the cost of
  // durability turn this off.
  bool sync = true;
  std::size_t snapshot_write_buffer_bytes = 16u << 20;
  std::size_t bytes_per_sync = 1u << 20;
  // Blob values at least this large go to blob files.
  std::size_t min_blob_bytes = 4096;
  // zstd for blob files when this RocksDB build has it (snapshot text shrinks ~6x).
  bool compress_blobs = true;
  // Writes are refused (Unavailable) while the store's filesystem has less than this free,
  // before RocksDB itself runs out of space mid-write (issue 11 #2). 0: no floor.
  uint64_t min_free_bytes = 256u << 20;
  // Free bytes of the filesystem holding `dir` (statvfs when empty): a seam for tests.
  std::function<Result<uint64_t>(const std::string& dir)> free_bytes;
  // Where RocksDB's own warnings go (`event=rocksdb`); stderr when null. Must outlive the
  // store.
  EventLog* log = nullptr;
};

// One snapshot to store: what is known about it and the envelope exactly as received.
struct SnapshotRecord {
  ::ibcollect::v1::SnapshotInfo info;  // snapshot_id (hex), tenant, job_id, node, times
  std::string envelope;                // serialized SignedSnapshot
};

// Retention, size and checkpoints (store/maintenance.h) reach the database through this.
struct StoreAccess;

enum class PutOutcome { Stored, AlreadyStored };

struct StoredSnapshot {
  ::ibcollect::v1::SnapshotInfo info;
  std::string envelope;
};

class Store {
 public:
  // Opens (creating when missing) the database in `dir`. Errors: Io (RocksDB could not
  // open it: permissions, corruption, another process holds its lock), Unsupported (a
  // newer schema).
  static Result<std::unique_ptr<Store>> open(const std::string& dir,
                                             const StoreOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Stores every record not stored yet in one atomic write whose WAL record is synced
  // before this returns. A record whose id is already stored, or repeated earlier in
  // `records`, is AlreadyStored and not written again. Outcomes are in `records` order.
  // Errors: InvalidArgument (a record with a bad id or a name holding a zero byte;
  // nothing written), Unavailable (free space below StoreOptions::min_free_bytes; nothing
  // written), Io (the write or the sync failed; nothing of the batch may be assumed
  // durable). After a failed write RocksDB stops writing; the next put() with enough free
  // space resumes it (DB::Resume) without a restart. Reads keep working throughout.
  Result<std::vector<PutOutcome>> put(const std::vector<const SnapshotRecord*>& records);

  // The snapshot with this hex id, or nullopt. Errors: InvalidArgument (not a 64-digit
  // hex id), Io.
  Result<std::optional<StoredSnapshot>> get(std::string_view snapshot_id) const;

  // Job ids of a tenant, sorted, after `after_job`, at most `limit`.
  Result<::ibcollect::v1::JobList> listJobs(std::string_view tenant, std::string_view after_job,
                                            std::size_t limit) const;
  // Nodes of a tenant (of one job when `job_id` is not empty) with their snapshot count
  // and newest collection time, sorted by node.
  Result<::ibcollect::v1::NodeList> listNodes(std::string_view tenant,
                                              std::string_view job_id) const;
  // Snapshots matching the request (see collector.proto ListSnapshotsRequest), oldest
  // first within a node, at most `limit`, continuing from `page_token`. An empty tenant
  // searches every tenant. Errors: InvalidArgument (neither tenant, job nor node given;
  // a bad page token), Io.
  Result<::ibcollect::v1::SnapshotList> listSnapshots(
      const ::ibcollect::v1::ListSnapshotsRequest& request, std::size_t limit) const;

  // --- Cases ---
  // Stores a new case when no case (of any tenant) has its id: false when the id is taken.
  // Errors: InvalidArgument (empty tenant or id, a zero byte), Unavailable (free space
  // below the floor), Io.
  Result<bool> insertCase(const ::ibcollect::v1::Case& c);
  // The case with this id, or nullopt; with a non-empty `tenant` only that tenant's.
  Result<std::optional<::ibcollect::v1::Case>> getCase(std::string_view tenant,
                                                       std::string_view case_id) const;
  // Reads the case, lets `change` modify it and writes it back (synced), under the case
  // mutex: concurrent updates of one case serialise and none is lost. `change` returning an
  // error aborts without writing. Errors: NotFound (no such case of `tenant`), the error of
  // `change`, Unavailable, Io.
  Result<::ibcollect::v1::Case> updateCase(
      std::string_view tenant, std::string_view case_id,
      const std::function<Status(::ibcollect::v1::Case&)>& change);
  // Cases matching the request, sorted by tenant then id, notes and host reports left out,
  // at most `limit` (CaseList.more says when more match).
  Result<::ibcollect::v1::CaseList> listCases(const ::ibcollect::v1::ListCasesRequest& request,
                                              std::size_t limit) const;
  // Hex ids of every snapshot a case that is not closed covers: retention keeps them.
  Result<std::unordered_set<std::string>> snapshotsOfOpenCases() const;

  // How many times the write-ahead log was synced to disk since open(): with
  // StoreOptions::sync every put() that writes adds at least one. Any thread.
  uint64_t walSyncs() const;

 private:
  friend StoreAccess storeAccess(const Store& store);
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// 64 lower-case hex digits ↔ 32 raw bytes. Errors: InvalidArgument.
Result<std::string> snapshotIdBytes(std::string_view hex_id);

}  // namespace ibc::collector

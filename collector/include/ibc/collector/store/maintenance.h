#pragma once

// Operations on an open Store beside ingest (docs/operations.md): its size on disk, the retention
// policy, and consistent online checkpoints. All run concurrently with put() and reads.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ibc/collector/store/store.h"

namespace ibc::collector {

// The store's bytes on disk by kind of file (the collector's metrics export them).
struct StoreSizeFigures {
  uint64_t sst_bytes = 0;
  uint64_t blob_bytes = 0;
  uint64_t wal_bytes = 0;
};

// Live SST files, live blob files and WAL files of every column family, bytes. Files
// already obsolete and waiting to be removed are not counted. Errors: Io.
Result<StoreSizeFigures> storeSize(const Store& store);
inline uint64_t totalBytes(const StoreSizeFigures& z) {
  return z.sst_bytes + z.blob_bytes + z.wal_bytes;
}

// The hex ids of snapshots referenced by a case that is not closed (open or escalated):
// retention never deletes them (Store::snapshotsOfOpenCases).
Result<std::unordered_set<std::string>> protectedSnapshotIds(const Store& store);

struct RetentionPolicy {
  // Delete snapshots received longer ago than this (0: no age limit).
  std::chrono::milliseconds max_age{0};
  // Then delete the oldest until the store is at most this large (0: no size limit).
  uint64_t max_store_bytes = 0;
  // Snapshots deleted per atomic write (each holds the store's write lock briefly).
  std::size_t chunk = 512;
  // The snapshots never to delete (hex ids), asked once per run.
  std::function<Result<std::unordered_set<std::string>>(const Store&)> protected_ids =
      protectedSnapshotIds;
};

struct RetentionReport {
  uint64_t deleted = 0;                 // snapshots
  uint64_t deleted_bytes = 0;           // their envelopes' size
  uint64_t kept_protected = 0;          // would have gone, but an open case holds them
  uint64_t range_deletes = 0;           // DeleteRange records written (index runs)
  uint64_t point_deletes = 0;           // single-key deletes written
  int64_t oldest_received_unix_ms = 0;  // of the deleted, 0 when none
  int64_t newest_received_unix_ms = 0;
  StoreSizeFigures before;
  StoreSizeFigures after;
};

// Applies `policy` as of `now`. Age is the time the collector received a snapshot (its own
// clock: a snapshot's collection time is the agent's word). Oldest received go first.
// Every record of a snapshot goes in one atomic write: the envelope and its info (point
// deletes: their keys are hashes, never adjacent), and its index entries ("by_job",
// "by_node"), where runs of adjacent deleted entries become one DeleteRange. Afterwards the
// affected column families are compacted (blob garbage collected) so the files on disk
// actually shrink. With a size limit, rounds repeat (at most 4) while the store is still too
// large and something can go. Errors: Io (nothing of a failed chunk was deleted).
Result<RetentionReport> applyRetention(Store& store, const RetentionPolicy& policy,
                                       std::chrono::system_clock::time_point now);

struct CheckpointReport {
  uint64_t bytes = 0;  // sum of the checkpoint's file sizes (hard links count in full)
  std::chrono::milliseconds took{0};
};

// A RocksDB checkpoint of the open store in `dest` (which must not exist; its parent is
// created): hard links where `dest` is on the store's filesystem, copies elsewhere. It holds
// every write acknowledged before the call. The checkpoint is a store directory: start a
// collector with `--data dest` to use it. Errors: InvalidArgument (dest exists), Io.
//
// It is built under a staging name beside `dest` (".ibcollect-partial-NAME") recorded in the
// store's directory (PARTIAL_BACKUPS) and renamed to `dest` when complete: a backup killed on
// the way leaves no `dest`, and what it left is removed by the next backup or the next start
// (removePartialBackups).
Result<CheckpointReport> createCheckpoint(const Store& store, const std::string& dest);

// Removes what backups of this store killed on the way left behind (their staging
// directories, as PARTIAL_BACKUPS records them), except a backup running now in this
// process. Returns the paths removed. Called by createCheckpoint and at the collector's
// start.
std::vector<std::string> removePartialBackups(const Store& store);

}  // namespace ibc::collector

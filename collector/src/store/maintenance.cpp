#include "ibc/collector/store/maintenance.h"

#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>

#include "store_access.h"

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;

namespace {

Error rocksError(const rocksdb::Status& s, std::string_view what) {
  return Error{ErrorCode::Io, std::string(what) + ": " + s.ToString()};
}

rocksdb::Slice slice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

struct Candidate {
  int64_t received_ms;
  uint64_t size;
  std::string id;  // 32 raw bytes
};

// Deletes `keys` (sorted, unique) from `cf`: each run of keys that are adjacent in the
// column family — no other key between them — becomes one DeleteRange [first, last+"\0"),
// a lone key a point delete. Keys already gone are skipped. Call with the write lock held,
// so no key can appear inside a run before the batch is written.
void deleteRuns(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                const std::vector<std::string>& keys, rocksdb::WriteBatch& batch,
                RetentionReport& report) {
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
  std::size_t i = 0;
  while (i < keys.size()) {
    it->Seek(slice(keys[i]));
    if (!it->Valid() || it->key() != slice(keys[i])) {
      ++i;
      continue;
    }
    const std::size_t first = i;
    std::size_t last = i++;
    for (it->Next(); i < keys.size() && it->Valid() && it->key() == slice(keys[i]); it->Next()) {
      last = i++;
    }
    if (last == first) {
      (void)batch.Delete(cf, slice(keys[first]));
      ++report.point_deletes;
    } else {
      (void)batch.DeleteRange(cf, slice(keys[first]), slice(keys[last] + '\0'));
      ++report.range_deletes;
    }
  }
}

Status deleteChunk(const StoreAccess& a, const std::vector<const Candidate*>& chunk,
                   RetentionReport& report) {
  std::lock_guard<std::mutex> lock(*a.write_mutex);
  rocksdb::WriteBatch batch;
  std::vector<std::string> by_node;
  std::vector<std::string> by_job;
  RetentionReport counts;
  std::string bytes;
  for (const Candidate* c : chunk) {
    const auto g = a.db->Get(rocksdb::ReadOptions(), a.info, slice(c->id), &bytes);
    if (g.IsNotFound()) continue;
    if (!g.ok()) return rocksError(g, "retention: cannot read a snapshot's info");
    v1::SnapshotInfo info;
    if (!info.ParseFromString(bytes)) return Error{ErrorCode::Io, "retention: corrupt info record"};
    (void)batch.Delete(a.snapshots, slice(c->id));
    (void)batch.Delete(a.info, slice(c->id));
    counts.point_deletes += 2;
    by_node.push_back(byNodeKey(info, c->id));
    if (!info.job_id().empty()) by_job.push_back(byJobKey(info, c->id));
    ++counts.deleted;
    counts.deleted_bytes += c->size;
    if (counts.oldest_received_unix_ms == 0) counts.oldest_received_unix_ms = c->received_ms;
    counts.newest_received_unix_ms = c->received_ms;
  }
  if (counts.deleted == 0) return {};
  std::sort(by_node.begin(), by_node.end());
  std::sort(by_job.begin(), by_job.end());
  deleteRuns(a.db, a.by_node, by_node, batch, counts);
  deleteRuns(a.db, a.by_job, by_job, batch, counts);
  rocksdb::WriteOptions w;
  w.sync = true;
  const auto s = a.db->Write(w, &batch);
  if (!s.ok())
    return rocksError(
        s, "retention: the delete of " + std::to_string(counts.deleted) + " snapshots failed");
  report.deleted += counts.deleted;
  report.deleted_bytes += counts.deleted_bytes;
  report.point_deletes += counts.point_deletes;
  report.range_deletes += counts.range_deletes;
  if (report.oldest_received_unix_ms == 0) {
    report.oldest_received_unix_ms = counts.oldest_received_unix_ms;
  }
  report.newest_received_unix_ms = counts.newest_received_unix_ms;
  return {};
}

Status flushAll(const StoreAccess& a) {
  rocksdb::FlushOptions o;
  o.wait = true;
  o.allow_write_stall = true;
  const auto s = a.db->Flush(o, a.families);
  if (!s.ok()) return rocksError(s, "retention: flush failed");
  return {};
}

// Compacts what retention touched so deleted records leave the disk. Blob files hold the
// envelopes in the order they arrived, so the oldest `fraction` of them holds what was
// deleted: only those are garbage collected (their few live blobs rewritten), not the
// whole store.
Status compactAfterDelete(const StoreAccess& a, double fraction) {
  for (auto* cf : {a.info, a.by_job, a.by_node, a.snapshots}) {
    rocksdb::CompactRangeOptions o;
    o.exclusive_manual_compaction = false;  // ingest's own flushes and compactions go on
    o.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForceOptimized;
    if (cf == a.snapshots) {
      o.blob_garbage_collection_policy = rocksdb::BlobGarbageCollectionPolicy::kForce;
      o.blob_garbage_collection_age_cutoff = std::clamp(fraction + 0.05, 0.0, 1.0);
    }
    const auto s = a.db->CompactRange(o, cf, nullptr, nullptr);
    if (!s.ok()) return rocksError(s, "retention: compaction failed");
  }
  return {};
}

Result<std::vector<Candidate>> scanSnapshots(const StoreAccess& a) {
  std::vector<Candidate> out;
  std::unique_ptr<rocksdb::Iterator> it(a.db->NewIterator(rocksdb::ReadOptions(), a.info));
  v1::SnapshotInfo info;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!info.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) continue;
    out.push_back(Candidate{info.received_at_unix_ms(), info.size_bytes(), it->key().ToString()});
  }
  if (!it->status().ok()) return rocksError(it->status(), "retention: snapshot scan failed");
  std::sort(out.begin(), out.end(), [](const Candidate& x, const Candidate& y) {
    return x.received_ms != y.received_ms ? x.received_ms < y.received_ms : x.id < y.id;
  });
  return out;
}

}  // namespace

Result<StoreSizeFigures> storeSize(const Store& store) {
  const StoreAccess a = storeAccess(store);
  StoreSizeFigures z;
  if (!a.db->GetAggregatedIntProperty(rocksdb::DB::Properties::kLiveSstFilesSize, &z.sst_bytes) ||
      !a.db->GetAggregatedIntProperty(rocksdb::DB::Properties::kLiveBlobFileSize, &z.blob_bytes)) {
    return Error{ErrorCode::Io, "the store's size properties cannot be read"};
  }
  rocksdb::VectorLogPtr wal;
  const auto s = a.db->GetSortedWalFiles(wal);
  if (!s.ok()) return rocksError(s, "the store's WAL files cannot be listed");
  for (const auto& f : wal) z.wal_bytes += f->SizeFileBytes();
  return z;
}

Result<std::unordered_set<std::string>> protectedSnapshotIds(const Store& store) {
  // Every case not closed (open or escalated) keeps its snapshots (docs/operations.md).
  return store.snapshotsOfOpenCases();
}

Result<RetentionReport> applyRetention(Store& store, const RetentionPolicy& policy,
                                       std::chrono::system_clock::time_point now) {
  const StoreAccess a = storeAccess(store);
  RetentionReport report;
  if (policy.max_age.count() <= 0 && policy.max_store_bytes == 0) return report;
  // Memtables to files first, every column family: a family with unflushed writes keeps
  // every WAL file since them alive, so the WAL would hold (and count) the deleted data
  // twice, and sizes would not be comparable before and after.
  if (auto st = flushAll(a); !st.ok()) return st.error();
  auto before = storeSize(store);
  if (!before.ok()) return before.error();
  report.before = report.after = *before;

  auto protected_hex =
      policy.protected_ids
          ? policy.protected_ids(store)
          : Result<std::unordered_set<std::string>>(std::unordered_set<std::string>());
  if (!protected_hex.ok()) return protected_hex.error();
  std::unordered_set<std::string> keep;
  for (const auto& hex : *protected_hex) {
    if (auto id = snapshotIdBytes(hex); id.ok()) keep.insert(std::move(*id));
  }
  const int64_t cutoff_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() -
      policy.max_age.count();

  for (int round = 0; round < 4; ++round) {
    auto all = scanSnapshots(a);
    if (!all.ok()) return all.error();
    uint64_t envelope_bytes = 0;
    for (const auto& c : *all) envelope_bytes += c.size;
    std::vector<const Candidate*> victims;
    std::vector<bool> chosen(all->size(), false);
    uint64_t victim_bytes = 0;
    uint64_t kept = 0;
    if (round == 0 && policy.max_age.count() > 0) {
      for (std::size_t i = 0; i < all->size() && (*all)[i].received_ms < cutoff_ms; ++i) {
        if (keep.count((*all)[i].id) != 0) {
          ++kept;
          continue;
        }
        chosen[i] = true;
        victims.push_back(&(*all)[i]);
        victim_bytes += (*all)[i].size;
      }
    }
    if (policy.max_store_bytes > 0 && envelope_bytes > 0) {
      // Bytes on disk per envelope byte (compression, indexes, WAL) estimate what deleting
      // a snapshot frees; the next round corrects the estimate with the measured size.
      const double per_byte =
          static_cast<double>(totalBytes(report.after)) / static_cast<double>(envelope_bytes);
      double estimate = static_cast<double>(totalBytes(report.after)) -
                        per_byte * static_cast<double>(victim_bytes);
      for (std::size_t i = 0;
           i < all->size() && estimate > static_cast<double>(policy.max_store_bytes); ++i) {
        if (chosen[i]) continue;
        if (keep.count((*all)[i].id) != 0) {
          ++kept;
          continue;
        }
        victims.push_back(&(*all)[i]);
        victim_bytes += (*all)[i].size;
        estimate -= per_byte * static_cast<double>((*all)[i].size);
      }
    }
    report.kept_protected = std::max(report.kept_protected, kept);
    if (victims.empty()) break;
    std::sort(victims.begin(), victims.end(), [](const Candidate* x, const Candidate* y) {
      return x->received_ms != y->received_ms ? x->received_ms < y->received_ms : x->id < y->id;
    });
    const uint64_t deleted_before = report.deleted;
    for (std::size_t i = 0; i < victims.size(); i += std::max<std::size_t>(1, policy.chunk)) {
      const auto end = std::min(victims.size(), i + std::max<std::size_t>(1, policy.chunk));
      std::vector<const Candidate*> chunk(victims.begin() + static_cast<std::ptrdiff_t>(i),
                                          victims.begin() + static_cast<std::ptrdiff_t>(end));
      if (auto st = deleteChunk(a, chunk, report); !st.ok()) return st.error();
    }
    const double fraction = static_cast<double>(victim_bytes) /
                            static_cast<double>(std::max<uint64_t>(1, envelope_bytes));
    if (auto st = compactAfterDelete(a, fraction); !st.ok()) return st.error();
    if (auto st = flushAll(a); !st.ok()) return st.error();
    auto after = storeSize(store);
    if (!after.ok()) return after.error();
    report.after = *after;
    if (report.deleted == deleted_before || policy.max_store_bytes == 0 ||
        totalBytes(report.after) <= policy.max_store_bytes) {
      break;
    }
  }
  return report;
}

namespace {

constexpr const char* kPartialBackups = "PARTIAL_BACKUPS";

// The staging directories of the backups running in this process (one process at a time
// holds a store: RocksDB's lock).
std::mutex& activeMutex() {
  static std::mutex m;
  return m;
}
std::set<std::string>& activeStagings() {
  static std::set<std::string> active;
  return active;
}

std::vector<std::string> readLines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// Rewrites the record of partial backups to `lines` (removes it when empty).
void writeLines(const std::string& path, const std::vector<std::string>& lines) {
  std::error_code ec;
  if (lines.empty()) {
    std::filesystem::remove(path, ec);
    return;
  }
  const std::string tmp = path + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& l : lines) out << l << "\n";
  }
  std::filesystem::rename(tmp, path, ec);
}

}  // namespace

std::vector<std::string> removePartialBackups(const Store& store) {
  const std::string record = storeAccess(store).dir + "/" + kPartialBackups;
  std::lock_guard<std::mutex> lock(activeMutex());
  std::vector<std::string> removed, kept;
  for (const auto& staging : readLines(record)) {
    if (activeStagings().count(staging) != 0) {
      kept.push_back(staging);
      continue;
    }
    std::error_code ec;
    // RocksDB builds a checkpoint in NAME.tmp and renames it to NAME.
    for (const auto& p : {staging + ".tmp", staging}) {
      if (std::filesystem::remove_all(p, ec) > 0) removed.push_back(p);
    }
  }
  writeLines(record, kept);
  return removed;
}

Result<CheckpointReport> createCheckpoint(const Store& store, const std::string& dest) {
  const auto started = std::chrono::steady_clock::now();
  std::error_code ec;
  if (std::filesystem::exists(dest, ec)) {
    return Error{ErrorCode::InvalidArgument, dest + " already exists: name a new directory"};
  }
  const std::filesystem::path target = std::filesystem::path(dest).lexically_normal();
  const auto parent = target.parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  (void)removePartialBackups(store);
  const std::string staging =
      (parent / (".ibcollect-partial-" + target.filename().string())).string();
  const StoreAccess a = storeAccess(store);
  const std::string record = a.dir + "/" + kPartialBackups;
  {
    std::lock_guard<std::mutex> lock(activeMutex());
    if (!activeStagings().insert(staging).second) {
      return Error{ErrorCode::InvalidArgument, "a backup into " + dest + " is running"};
    }
    auto lines = readLines(record);
    lines.push_back(staging);
    writeLines(record, lines);
  }
  const auto finished = [&] {
    std::lock_guard<std::mutex> lock(activeMutex());
    activeStagings().erase(staging);
  };
  std::filesystem::remove_all(staging, ec);
  std::filesystem::remove_all(staging + ".tmp", ec);
  rocksdb::Checkpoint* raw = nullptr;
  auto s = rocksdb::Checkpoint::Create(a.db, &raw);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // log_size_for_flush 0: memtables are flushed first, so the checkpoint needs no WAL replay
  // for anything written before this call.
  if (s.ok()) s = checkpoint->CreateCheckpoint(staging, 0);
  if (s.ok()) std::filesystem::rename(staging, target, ec);
  finished();
  (void)removePartialBackups(store);  // what failed on the way, and the record's line
  if (!s.ok()) return rocksError(s, "checkpoint into " + dest + " failed");
  if (ec)
    return Error{ErrorCode::Io,
                 "cannot rename the finished backup to " + dest + ": " + ec.message()};
  CheckpointReport report;
  for (const auto& e : std::filesystem::recursive_directory_iterator(target, ec)) {
    if (e.is_regular_file(ec)) report.bytes += e.file_size(ec);
  }
  report.took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  return report;
}

}  // namespace ibc::collector

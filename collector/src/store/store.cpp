#include "ibc/collector/store/store.h"

#include "store_access.h"

#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <unordered_set>

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;

namespace {

enum Family { kDefault, kSnapshots, kInfo, kByJob, kByNode, kCases, kFindings, kFamilyCount };
constexpr const char* kFamilyNames[kFamilyCount] = {"default",  // rocksdb::kDefaultColumnFamilyName
                                                    "snapshots", "snapshot_info", "by_job",
                                                    "by_node",   "cases",         "findings"};
constexpr std::string_view kSchemaKey = "schema";
constexpr std::string_view kSchemaVersion = "2";

Error rocksError(const rocksdb::Status& s, std::string_view what) {
  return Error{ErrorCode::Io, std::string(what) + ": " + s.ToString()};
}

rocksdb::Slice slice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

bool startsWith(const rocksdb::Slice& key, std::string_view prefix) {
  return key.size() >= prefix.size() && std::string_view(key.data(), prefix.size()) == prefix;
}

// The component of `key` that starts at `offset` and ends before the next zero byte.
std::string_view component(const rocksdb::Slice& key, std::size_t offset) {
  std::string_view rest(key.data() + offset, key.size() - offset);
  return rest.substr(0, rest.find('\0'));
}

bool cleanName(std::string_view s) { return s.find('\0') == std::string_view::npos; }

Result<uint64_t> statvfsFreeBytes(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) {
    return Error{ErrorCode::Io, "statvfs " + dir + " failed"};
  }
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

// RocksDB's own log goes to stderr (warnings and worse) instead of a LOG file in the data
// directory: a full disk must not turn RocksDB's logging into a second failure, and the
// operator reads one log.
class StderrLogger final : public rocksdb::Logger {
 public:
  explicit StderrLogger(EventLog* log)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), log_(log) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    std::vsnprintf(line, sizeof line, format, ap);
    if (log_ != nullptr) {
      log_->event(LogLevel::Warn, "rocksdb", {{"msg", line}});
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(stderr, "rocksdb: %s\n", line);
  }

 private:
  EventLog* log_;
  std::mutex mutex_;
};

}  // namespace

Result<std::string> snapshotIdBytes(std::string_view hex_id) {
  if (hex_id.size() != 64) {
    return Error{ErrorCode::InvalidArgument, "snapshot id must be 64 hex digits"};
  }
  std::string out(32, '\0');
  for (std::size_t i = 0; i < 64; ++i) {
    const char c = hex_id[i];
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    if (v < 0) return Error{ErrorCode::InvalidArgument, "snapshot id must be 64 hex digits"};
    out[i / 2] = static_cast<char>((out[i / 2] << 4) | v);
  }
  return out;
}

struct Store::Impl {
  StoreOptions options;
  std::string dir;
  std::atomic<bool> write_failed{false};  // RocksDB stopped writing after an error: Resume() first
  std::mutex cases_mutex;                 // insertCase/updateCase: read, change, write as one step
  // Held by put() and by retention's deletes (store_access.h), so a range delete never
  // covers a key written between its check and its write.
  mutable std::mutex write_mutex;
  rocksdb::DB* db = nullptr;
  std::shared_ptr<rocksdb::Statistics> statistics;
  std::vector<rocksdb::ColumnFamilyHandle*> families;

  ~Impl() {
    if (db == nullptr) return;
    for (auto* h : families) {
      // A failure here only leaks a handle at exit; the data is already durable.
      (void)db->DestroyColumnFamilyHandle(h);
    }
    (void)db->Close();
    delete db;
  }
  rocksdb::ColumnFamilyHandle* cf(Family f) const { return families[f]; }

  Result<std::string> nextFirstComponent(Family f, const std::string& after) const;
  // The free-space floor and RocksDB's resume after a failed write (put() and the cases).
  Status readyToWrite();
  Status writeSynced(rocksdb::WriteBatch& batch, std::string_view what);
  // The key of a case ("tenant 00 case_id") found by id alone, or "" when there is none.
  Result<std::string> caseKey(std::string_view tenant, std::string_view case_id) const;
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const std::string& dir, const StoreOptions& options) {
  // Made here so RocksDB does not log an error about a missing directory on first start.
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.bytes_per_sync = options.bytes_per_sync;
  db_options.max_background_jobs = 2;
  db_options.keep_log_file_num = 4;
  // Bounds recovery time after a crash: old WAL files force their memtables to flush.
  db_options.max_total_wal_size = 256u << 20;
  db_options.info_log = std::make_shared<StderrLogger>(options.log);

  rocksdb::BlockBasedTableOptions point_lookups;
  point_lookups.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  rocksdb::ColumnFamilyOptions small;
  small.write_buffer_size = 4u << 20;
  small.table_factory.reset(rocksdb::NewBlockBasedTableFactory(point_lookups));

  rocksdb::ColumnFamilyOptions blobs = small;
  blobs.write_buffer_size = options.snapshot_write_buffer_bytes;
  blobs.enable_blob_files = true;
  blobs.min_blob_size = options.min_blob_bytes;
  blobs.blob_file_size = 256u << 20;
  if (options.compress_blobs) {
    const auto supported = rocksdb::GetSupportedCompressions();
    if (std::find(supported.begin(), supported.end(), rocksdb::kZSTD) != supported.end()) {
      blobs.blob_compression_type = rocksdb::kZSTD;
    }
  }

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (int f = 0; f < kFamilyCount; ++f) {
    descriptors.emplace_back(kFamilyNames[f], f == kSnapshots ? blobs : small);
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->dir = dir;
  if (!impl->options.free_bytes) impl->options.free_bytes = statvfsFreeBytes;
  // Tickers only (no timers or histograms): the WAL sync count proves durability in tests
  // and costs an atomic add per event.
  impl->statistics = rocksdb::CreateDBStatistics();
  impl->statistics->set_stats_level(rocksdb::StatsLevel::kExceptHistogramOrTimers);
  db_options.statistics = impl->statistics;
  const auto s = rocksdb::DB::Open(db_options, dir, descriptors, &impl->families, &impl->db);
  if (!s.ok()) return rocksError(s, "cannot open the store in " + dir);

  std::string schema;
  const auto g =
      impl->db->Get(rocksdb::ReadOptions(), impl->cf(kDefault), slice(kSchemaKey), &schema);
  if (g.IsNotFound()) {
    rocksdb::WriteOptions w;
    w.sync = true;
    const auto p = impl->db->Put(w, impl->cf(kDefault), slice(kSchemaKey), slice(kSchemaVersion));
    if (!p.ok()) return rocksError(p, "cannot initialise the store in " + dir);
  } else if (!g.ok()) {
    return rocksError(g, "cannot read the store schema in " + dir);
  } else if (schema == "1") {
    // Schema 1 named snapshots by the hash of the inner snapshot alone, which let one tenant
    // take over another's id (issue 11 #1); its ids cannot be reused.
    return Error{ErrorCode::Unsupported,
                 "the store in " + dir +
                     " was written by an older collector (schema 1: snapshot ids without the "
                     "signature). Start this collector on a new --data directory; agents "
                     "re-send what they still spool, and `ibcollect fetch` from the old "
                     "collector followed by `ibcollect upload` moves older snapshots"};
  } else if (schema != kSchemaVersion) {
    return Error{ErrorCode::Unsupported, "the store in " + dir + " has schema " + schema +
                                             ", this collector understands " +
                                             std::string(kSchemaVersion)};
  }
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Result<std::vector<PutOutcome>> Store::put(const std::vector<const SnapshotRecord*>& records) {
  std::lock_guard<std::mutex> write_lock(impl_->write_mutex);
  std::vector<std::string> ids;
  ids.reserve(records.size());
  for (const auto* r : records) {
    auto id = snapshotIdBytes(r->info.snapshot_id());
    if (!id.ok()) return id.error();
    const auto& i = r->info;
    if (i.tenant().empty() || i.node().empty() || !cleanName(i.tenant()) ||
        !cleanName(i.job_id()) || !cleanName(i.node())) {
      return Error{
          ErrorCode::InvalidArgument,
          "snapshot " + i.snapshot_id() + ": empty tenant or node, or a zero byte in a name"};
    }
    ids.push_back(std::move(*id));
  }

  if (auto ready = impl_->readyToWrite(); !ready.ok()) return ready.error();
  rocksdb::WriteBatch batch;
  std::vector<PutOutcome> outcomes;
  outcomes.reserve(records.size());
  std::unordered_set<std::string> seen;
  std::string existing;
  for (std::size_t n = 0; n < records.size(); ++n) {
    const std::string& id = ids[n];
    if (!seen.insert(id).second) {
      outcomes.push_back(PutOutcome::AlreadyStored);
      continue;
    }
    const auto g = impl_->db->Get(rocksdb::ReadOptions(), impl_->cf(kInfo), slice(id), &existing);
    if (g.ok()) {
      outcomes.push_back(PutOutcome::AlreadyStored);
      continue;
    }
    if (!g.IsNotFound())
      return rocksError(g, "cannot look up snapshot " + records[n]->info.snapshot_id());
    outcomes.push_back(PutOutcome::Stored);
    const auto& info = records[n]->info;
    const std::string value = info.SerializeAsString();
    rocksdb::Status s = batch.Put(impl_->cf(kSnapshots), slice(id), slice(records[n]->envelope));
    if (s.ok()) s = batch.Put(impl_->cf(kInfo), slice(id), slice(value));
    if (s.ok() && !info.job_id().empty()) {
      s = batch.Put(impl_->cf(kByJob), slice(byJobKey(info, id)), slice(value));
    }
    if (s.ok()) s = batch.Put(impl_->cf(kByNode), slice(byNodeKey(info, id)), slice(value));
    if (!s.ok()) return rocksError(s, "cannot build the write batch");
  }
  if (batch.Count() > 0) {
    auto written =
        impl_->writeSynced(batch, "write of " + std::to_string(batch.Count()) + " records");
    if (!written.ok()) return written.error();
  }
  return outcomes;
}

Status Store::Impl::readyToWrite() {
  if (options.min_free_bytes > 0) {
    auto free = options.free_bytes(dir);
    if (free.ok() && *free < options.min_free_bytes) {
      return Error{ErrorCode::Unavailable,
                   "only " + std::to_string(*free >> 20) + " MiB free in " + dir + " (floor " +
                       std::to_string(options.min_free_bytes >> 20) +
                       " MiB, --min-free-mb): not writing until space returns"};
    }
  }
  if (write_failed) {
    // Space (or the device) is back: leave RocksDB's read-only mode without a restart.
    // RocksDB recovers from a full disk by itself once space returns (SstFileManager polls
    // it); Resume() answers Busy while that runs, OK once writes work again.
    const auto r = db->Resume();
    if (r.IsBusy()) {
      return Error{ErrorCode::Unavailable,
                   "the store is recovering from a failed write (RocksDB resumes by itself once "
                   "space returns): retry shortly"};
    }
    if (!r.ok()) return rocksError(r, "the store stopped writing after an error and cannot resume");
    write_failed = false;
  }
  return {};
}

Status Store::Impl::writeSynced(rocksdb::WriteBatch& batch, std::string_view what) {
  rocksdb::WriteOptions w;
  w.sync = options.sync;
  const auto s = db->Write(w, &batch);
  if (!s.ok()) {
    write_failed = true;
    return rocksError(s, std::string(what) + " failed");
  }
  return {};
}

uint64_t Store::walSyncs() const {
  return impl_->statistics->getTickerCount(rocksdb::WAL_FILE_SYNCED);
}

StoreAccess storeAccess(const Store& store) {
  const auto& i = *store.impl_;
  return StoreAccess{i.db,          i.cf(kSnapshots), i.cf(kInfo), i.cf(kByJob),
                     i.cf(kByNode), i.families,       i.dir,       &i.write_mutex};
}

Result<std::optional<StoredSnapshot>> Store::get(std::string_view snapshot_id) const {
  auto id = snapshotIdBytes(snapshot_id);
  if (!id.ok()) return id.error();
  std::string info_bytes;
  const auto g = impl_->db->Get(rocksdb::ReadOptions(), impl_->cf(kInfo), slice(*id), &info_bytes);
  if (g.IsNotFound()) return std::optional<StoredSnapshot>();
  if (!g.ok()) return rocksError(g, "cannot read snapshot " + std::string(snapshot_id));
  StoredSnapshot out;
  if (!out.info.ParseFromString(info_bytes)) {
    return Error{ErrorCode::Io, "snapshot " + std::string(snapshot_id) + ": corrupt index record"};
  }
  const auto b =
      impl_->db->Get(rocksdb::ReadOptions(), impl_->cf(kSnapshots), slice(*id), &out.envelope);
  if (!b.ok()) return rocksError(b, "cannot read snapshot " + std::string(snapshot_id));
  return std::optional<StoredSnapshot>(std::move(out));
}

Result<std::string> Store::Impl::nextFirstComponent(Family f, const std::string& after) const {
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf(f)));
  it->Seek(after.empty() ? rocksdb::Slice() : slice(after + '\x01'));
  if (!it->Valid()) {
    if (!it->status().ok()) return rocksError(it->status(), "index scan failed");
    return std::string();
  }
  return std::string(component(it->key(), 0));
}

Result<v1::JobList> Store::listJobs(std::string_view tenant, std::string_view after_job,
                                    std::size_t limit) const {
  const std::string prefix = joined({tenant});
  std::unique_ptr<rocksdb::Iterator> it(
      impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->cf(kByJob)));
  v1::JobList out;
  it->Seek(after_job.empty() ? slice(prefix) : slice(prefix + std::string(after_job) + '\x01'));
  while (it->Valid() && startsWith(it->key(), prefix)) {
    const std::string job(component(it->key(), prefix.size()));
    if (static_cast<std::size_t>(out.jobs_size()) >= limit) {
      out.set_more(true);
      break;
    }
    out.add_jobs()->set_job_id(job);
    it->Seek(slice(prefix + job + '\x01'));  // skip the rest of this job
  }
  if (!it->status().ok()) return rocksError(it->status(), "job index scan failed");
  return out;
}

Result<v1::NodeList> Store::listNodes(std::string_view tenant, std::string_view job_id) const {
  const bool by_job = !job_id.empty();
  const std::string prefix = by_job ? joined({tenant, job_id}) : joined({tenant});
  std::unique_ptr<rocksdb::Iterator> it(
      impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->cf(by_job ? kByJob : kByNode)));
  v1::NodeList out;
  for (it->Seek(slice(prefix)); it->Valid() && startsWith(it->key(), prefix); it->Next()) {
    const std::string_view node = component(it->key(), prefix.size());
    const std::size_t time_at = prefix.size() + node.size() + 1;
    if (it->key().size() < time_at + 8) continue;
    const int64_t t = timeFromKey(std::string_view(it->key().data() + time_at, 8));
    if (out.nodes_size() == 0 || out.nodes(out.nodes_size() - 1).node() != node) {
      auto* n = out.add_nodes();
      n->set_node(std::string(node));
      n->set_last_collected_at_unix_ms(t);
    }
    auto* n = out.mutable_nodes(out.nodes_size() - 1);
    n->set_snapshot_count(n->snapshot_count() + 1);
    n->set_last_collected_at_unix_ms(std::max(n->last_collected_at_unix_ms(), t));
  }
  if (!it->status().ok()) return rocksError(it->status(), "node index scan failed");
  return out;
}

Result<v1::SnapshotList> Store::listSnapshots(const v1::ListSnapshotsRequest& request,
                                              std::size_t limit) const {
  if (request.tenant().empty() && request.job_id().empty() && request.node().empty()) {
    return Error{ErrorCode::InvalidArgument, "name a tenant, a job or a node"};
  }
  if (!cleanName(request.tenant()) || !cleanName(request.job_id()) || !cleanName(request.node())) {
    return Error{ErrorCode::InvalidArgument, "names never contain a zero byte"};
  }
  const Family family = request.job_id().empty() ? kByNode : kByJob;
  std::string tail;  // the key after "tenant 00"
  if (!request.job_id().empty()) {
    tail = joined({request.job_id()});
    if (!request.node().empty()) tail += joined({request.node()});
  } else if (!request.node().empty()) {
    tail = joined({request.node()});
  }
  const std::string& token = request.page_token();
  const rocksdb::Slice token_slice = slice(token);
  std::string tenant = request.tenant();
  if (!token.empty()) {
    const std::string_view token_tenant = component(token_slice, 0);
    if (token_tenant.size() == token.size() ||
        (!request.tenant().empty() && token_tenant != request.tenant())) {
      return Error{ErrorCode::InvalidArgument, "page token does not belong to this query"};
    }
    tenant = std::string(token_tenant);
  } else if (tenant.empty()) {
    auto first = impl_->nextFirstComponent(family, "");
    if (!first.ok()) return first.error();
    tenant = std::move(*first);
  }

  v1::SnapshotList out;
  std::unique_ptr<rocksdb::Iterator> it(
      impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->cf(family)));
  std::string last_key;
  while (!tenant.empty()) {
    const std::string prefix = joined({tenant}) + tail;
    const bool resume = !token.empty() && startsWith(token_slice, prefix);
    it->Seek(resume ? token_slice : slice(prefix));
    if (resume && it->Valid() && it->key() == token_slice) it->Next();
    for (; it->Valid() && startsWith(it->key(), prefix); it->Next()) {
      if (static_cast<std::size_t>(out.snapshots_size()) >= limit) {
        out.set_next_page_token(last_key);
        return out;
      }
      if (!out.add_snapshots()->ParseFromArray(it->value().data(),
                                               static_cast<int>(it->value().size()))) {
        return Error{ErrorCode::Io, "corrupt index record"};
      }
      last_key = it->key().ToString();
    }
    if (!it->status().ok()) return rocksError(it->status(), "snapshot index scan failed");
    if (!request.tenant().empty()) break;
    auto next = impl_->nextFirstComponent(family, tenant);
    if (!next.ok()) return next.error();
    tenant = std::move(*next);
  }
  return out;
}

Result<std::string> Store::Impl::caseKey(std::string_view tenant, std::string_view case_id) const {
  if (!cleanName(tenant) || !cleanName(case_id) || case_id.empty()) return std::string();
  std::string value;
  if (!tenant.empty()) {
    const std::string key = joined({tenant}) + std::string(case_id);
    const auto g = db->Get(rocksdb::ReadOptions(), cf(kCases), slice(key), &value);
    if (g.IsNotFound()) return std::string();
    if (!g.ok()) return rocksError(g, "cannot read case " + std::string(case_id));
    return key;
  }
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf(kCases)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view t = component(it->key(), 0);
    if (it->key().size() == t.size() + 1 + case_id.size() &&
        std::string_view(it->key().data() + t.size() + 1, case_id.size()) == case_id) {
      return it->key().ToString();
    }
  }
  if (!it->status().ok()) return rocksError(it->status(), "case scan failed");
  return std::string();
}

namespace {

Result<v1::Case> parseCase(const std::string& bytes, std::string_view key) {
  v1::Case c;
  if (!c.ParseFromString(bytes)) {
    return Error{ErrorCode::Io,
                 "corrupt case record " + std::string(key.substr(key.find('\0') + 1))};
  }
  return c;
}

}  // namespace

Result<bool> Store::insertCase(const v1::Case& c) {
  if (c.tenant().empty() || c.case_id().empty() || !cleanName(c.tenant()) ||
      !cleanName(c.case_id())) {
    return Error{ErrorCode::InvalidArgument, "a case needs a tenant and an id without zero bytes"};
  }
  std::lock_guard<std::mutex> lock(impl_->cases_mutex);
  auto existing = impl_->caseKey("", c.case_id());
  if (!existing.ok()) return existing.error();
  if (!existing->empty()) return false;
  if (auto ready = impl_->readyToWrite(); !ready.ok()) return ready.error();
  rocksdb::WriteBatch batch;
  const auto s = batch.Put(impl_->cf(kCases), slice(joined({c.tenant()}) + c.case_id()),
                           slice(c.SerializeAsString()));
  if (!s.ok()) return rocksError(s, "cannot build the write batch");
  auto written = impl_->writeSynced(batch, "write of case " + c.case_id());
  if (!written.ok()) return written.error();
  return true;
}

Result<std::optional<v1::Case>> Store::getCase(std::string_view tenant,
                                               std::string_view case_id) const {
  auto key = impl_->caseKey(tenant, case_id);
  if (!key.ok()) return key.error();
  if (key->empty()) return std::optional<v1::Case>();
  std::string value;
  const auto g = impl_->db->Get(rocksdb::ReadOptions(), impl_->cf(kCases), slice(*key), &value);
  if (g.IsNotFound()) return std::optional<v1::Case>();
  if (!g.ok()) return rocksError(g, "cannot read case " + std::string(case_id));
  auto c = parseCase(value, *key);
  if (!c.ok()) return c.error();
  return std::optional<v1::Case>(std::move(*c));
}

Result<v1::Case> Store::updateCase(std::string_view tenant, std::string_view case_id,
                                   const std::function<Status(v1::Case&)>& change) {
  std::lock_guard<std::mutex> lock(impl_->cases_mutex);
  auto key = impl_->caseKey(tenant, case_id);
  if (!key.ok()) return key.error();
  if (key->empty()) {
    return Error{ErrorCode::NotFound,
                 "no case " + std::string(case_id.substr(0, 64)) +
                     (tenant.empty() ? "" : " of tenant " + std::string(tenant.substr(0, 64)))};
  }
  std::string value;
  const auto g = impl_->db->Get(rocksdb::ReadOptions(), impl_->cf(kCases), slice(*key), &value);
  if (!g.ok()) return rocksError(g, "cannot read case " + std::string(case_id));
  auto c = parseCase(value, *key);
  if (!c.ok()) return c.error();
  if (auto changed = change(*c); !changed.ok()) return changed.error();
  if (auto ready = impl_->readyToWrite(); !ready.ok()) return ready.error();
  rocksdb::WriteBatch batch;
  const auto s = batch.Put(impl_->cf(kCases), slice(*key), slice(c->SerializeAsString()));
  if (!s.ok()) return rocksError(s, "cannot build the write batch");
  auto written = impl_->writeSynced(batch, "write of case " + std::string(case_id));
  if (!written.ok()) return written.error();
  return std::move(*c);
}

Result<v1::CaseList> Store::listCases(const v1::ListCasesRequest& request,
                                      std::size_t limit) const {
  if (!cleanName(request.tenant()) || !cleanName(request.after_case())) {
    return Error{ErrorCode::InvalidArgument, "names never contain a zero byte"};
  }
  const std::string prefix = request.tenant().empty() ? std::string() : joined({request.tenant()});
  // after_case is "tenant/case_id" (the last case of the previous page).
  std::string seek = prefix;
  if (!request.after_case().empty()) {
    const auto slash = request.after_case().find('/');
    if (slash == std::string::npos) {
      return Error{ErrorCode::InvalidArgument, "after_case must be tenant/case_id"};
    }
    seek = joined({request.after_case().substr(0, slash)}) +
           request.after_case().substr(slash + 1) + '\x01';
    if (seek < prefix) seek = prefix;
  }
  v1::CaseList out;
  std::unique_ptr<rocksdb::Iterator> it(
      impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->cf(kCases)));
  for (it->Seek(slice(seek)); it->Valid() && startsWith(it->key(), prefix); it->Next()) {
    v1::Case c;
    if (!c.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return Error{ErrorCode::Io, "corrupt case record"};
    }
    if (!request.job_id().empty() && c.job_id() != request.job_id()) continue;
    if (request.state() != v1::CASE_STATE_UNSPECIFIED && c.state() != request.state()) continue;
    if (static_cast<std::size_t>(out.cases_size()) >= limit) {
      out.set_more(true);
      break;
    }
    c.clear_notes();
    for (auto& h : *c.mutable_host_results()) h.clear_report_json();
    *out.add_cases() = std::move(c);
  }
  if (!it->status().ok()) return rocksError(it->status(), "case scan failed");
  return out;
}

Result<std::unordered_set<std::string>> Store::snapshotsOfOpenCases() const {
  std::unordered_set<std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(
      impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->cf(kCases)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    v1::Case c;
    if (!c.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return Error{ErrorCode::Io, "corrupt case record"};
    }
    if (c.state() == v1::CASE_STATE_CLOSED) continue;
    for (const auto& id : c.snapshot_ids()) out.insert(id);
  }
  if (!it->status().ok()) return rocksError(it->status(), "case scan failed");
  return out;
}

}  // namespace ibc::collector

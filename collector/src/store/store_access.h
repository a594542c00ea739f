#pragma once

// Internal to the store: the key layout documented in store.h (one owner: store.cpp writes
// the keys, maintenance.cpp deletes them), and what maintenance.cpp (retention, size,
// checkpoints) needs of an open Store.

#include <rocksdb/db.h>

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/collector/store/store.h"

namespace ibc::collector {

// 8 bytes that sort by time, oldest first, including times before 1970.
std::string timeKey(int64_t unix_ms);
int64_t timeFromKey(std::string_view bytes);
// Each part followed by a zero byte (a prefix that no longer part can extend).
std::string joined(std::initializer_list<std::string_view> parts);
// The index keys of a snapshot: by node (tenant, node, time, id) and by job (tenant, job,
// node, time, id; only for a snapshot with a job id). `id` is the key's form of the id (the
// 32 bytes of snapshotIdBytes, as in the snapshots column family), not its hex.
std::string byNodeKey(const ::ibcollect::v1::SnapshotInfo& info, std::string_view id);
std::string byJobKey(const ::ibcollect::v1::SnapshotInfo& info, std::string_view id);

struct StoreAccess {
  rocksdb::DB* db;
  rocksdb::ColumnFamilyHandle* snapshots;
  rocksdb::ColumnFamilyHandle* info;
  rocksdb::ColumnFamilyHandle* by_job;
  rocksdb::ColumnFamilyHandle* by_node;
  // Every column family (the ones above and the others: default, cases, findings).
  const std::vector<rocksdb::ColumnFamilyHandle*>& families;
  const std::string& dir;
  // Serializes writes with Store::put(): hold it from reading what to delete to writing it.
  std::mutex* write_mutex;
};

StoreAccess storeAccess(const Store& store);

}  // namespace ibc::collector

#pragma once

// Internal to the store: what maintenance.cpp (retention, size, checkpoints) needs of an
// open Store. The key layout is the one documented in store.h.

#include <rocksdb/db.h>

#include <mutex>
#include <string>
#include <vector>

#include "ibc/collector/store/store.h"

namespace ibc::collector {

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

#pragma once

// What the collector indexes a snapshot by, read from the signed Snapshot bytes without
// parsing the whole message.
//
// Why read the signed bytes rather than trust fields the uploader adds to its request:
// the index can then never disagree with what was signed, and an agent cannot file its
// snapshot under another job or node. Why not parse the Snapshot: it holds counters and
// raw logs (tens of KiB) whose parsing would cost more than the signature check (bench/README.md).
// This reader walks the top-level fields of the wire format, skips every field but `node` (2, a few
// hundred bytes) by its length prefix, and parses only that one.

#include <cstdint>
#include <string>
#include <string_view>

#include "ibc/core/result.h"

namespace ibc::collector {

struct SnapshotIndexKeys {
  std::string job_id;  // NodeIdentity.job_id, may be empty
  std::string node;    // NodeIdentity.slurm_node, else .hostname; may be empty
  int64_t collected_at_unix_ms = 0;
};

// Longest job id or node name accepted in an index key.
inline constexpr std::size_t kMaxIndexNameBytes = 255;

// Errors: Malformed (not a Snapshot encoding; a name longer than kMaxIndexNameBytes or
// holding a zero byte).
core::Result<SnapshotIndexKeys> readSnapshotIndexKeys(std::string_view snapshot_bytes);

}  // namespace ibc::collector

#pragma once

// What the console shows: snapshots read from .ibsnap files and diagnosed exactly as
// `ibcollect compare` does (core::diagnoseJobNodes, core::buildReport), so the console and
// the CLI never disagree. No Qt widgets here; no I/O on the GUI thread (callers run
// loadSnapshotFiles on a worker).

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ibc/core/compare.h"
#include "ibc/core/report.h"
#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::console {

struct JobData {
  // One per snapshot that could be read, in the order given; report.nodes() has the same
  // order and each node's label (unique even when two snapshots share a host name).
  std::vector<::ibcollect::v1::Snapshot> snapshots;
  ::ibcollect::v1::Report report;
  // Files that could not be read or decoded, each a sentence naming the file.
  std::vector<std::string> errors;
  bool cancelled = false;
  // From the collector: the tenant, and each snapshot's full hex id (parallel to
  // `snapshots`); empty for opened files. A case is created on these ids.
  std::string tenant;
  std::vector<std::string> snapshot_ids;
};

// `progress(done, total)` is called after each file; setting `cancel` stops before the next
// file (what was read so far is diagnosed and returned, with `cancelled` set).
JobData loadSnapshotFiles(const std::vector<std::string>& paths,
                          const core::CompareOptions& options = {},
                          const std::function<void(std::size_t, std::size_t)>& progress = {},
                          const std::atomic<bool>* cancel = nullptr);

// The same diagnosis over snapshots already in memory (tests, the collector's answers).
// `files` names where each came from ("" when unknown); it gives each node its source.
JobData diagnoseSnapshots(std::vector<::ibcollect::v1::Snapshot> snapshots,
                          const std::vector<std::string>& files,
                          const core::CompareOptions& options = {});

// The node (index into report.nodes()) finding `finding` belongs to: the node with the
// finding's source (its file or tree), else with its node name; -1 when none.
int nodeOfFinding(const JobData& job, int finding);

// Severity order used by every model: 0 ok, 1 info, 2 warning, 3 critical.
int severityRank(const std::string& severity);

}  // namespace ibc::console

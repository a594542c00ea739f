#pragma once

// One input of a report or a job (a snapshot with its findings, or a node that did not
// answer), as `analyze`, `compare`, `--job`, bundles and the console all pass it around.
// Report rendering is report.h's; cross-node diagnosis compare.h's.

#include <string>
#include <vector>

#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

struct AnalyzedNode {
  ::ibcollect::v1::Snapshot snapshot;
  std::vector<::ibcollect::v1::Finding> findings;
  std::string snapshot_file;       // where the snapshot was written or read, if any
  bool include_snapshot = false;   // put the whole snapshot into the JSON node entry
  std::string unreachable_reason;  // a --job node that did not answer
  // Set by labelNodes(): the node name, made unique among the inputs of one report.
  std::string label;
  // What the row was made from when it is no snapshot (a NCCL log no node of a job
  // carried, under the host name the log uses).
  std::string input;
  // What the report must say about this input (Report.notices).
  std::vector<std::string> notices;
};

// Where a node's evidence came from: its snapshot file, else its input, else the
// snapshot's own source (the tree, "/", the pasted file).
std::string nodeSource(const AnalyzedNode& node);

// Gives every node a label unique in `nodes`: its name, and when another node has the same
// name, the file (or source) it came from, else its collection time, else "#k". Returns
// notices for the report, one per colliding name. Idempotent.
std::vector<std::string> labelNodes(std::vector<AnalyzedNode>& nodes);

}  // namespace ibc::core

#pragma once

// What the charts page plots (DESIGN §7 `charts`), as plain numbers: per node across the
// job (nccl-tests busbw, or one counter summed over the node's ports), and one counter
// across the snapshots of one host over time. A counter's value is its window delta when
// the snapshot has a window, else its total; nodes without the value are left out, never
// drawn as 0.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibc/console/job_data.h"

namespace ibc::console {

struct NodeValue {
  int node = 0;       // index into report.nodes()
  std::string label;  // the node's label
  double value = 0;
  bool outlier = false;  // core's outlier rules (node_metrics.h) against core's median
};

struct TimeValue {
  int node = 0;
  int64_t unix_ms = 0;
  double value = 0;
};

// The peak bus bandwidth (GB/s) of each node's nccl-tests output (the larger of out-of-place
// and in-place over all sizes), for nodes that have one; an outlier is core::isBusbwOutlier.
std::vector<NodeValue> busbwPerNode(const JobData& job);

// `counter` summed over each node's ports (counters, counters_ext, hw_counters); an outlier
// is core::isCounterOutlier (above 10 × max(median, 1): a node that counts what others do
// not).
std::vector<NodeValue> counterPerNode(const JobData& job, const std::string& counter);

// `counter` summed over the ports of every snapshot of the same host as node `node_index`
// (same hostname), oldest first: the counter's history across saved snapshots.
std::vector<TimeValue> counterOverTime(const JobData& job, int node_index,
                                       const std::string& counter);

// Every counter name in the job, sorted, for the chooser.
std::vector<std::string> counterNames(const JobData& job);

}  // namespace ibc::console

#pragma once

// One builder of SYNTHETIC jobs for the benchmarks (compare_nodes, bundle, job_scale):
// snapshots collected from the real class-view captures in tests/fixtures/real/sysfs
// (mlx4 QDR, mlx5 VF with error counters, mlx4 with saturated counters), replicated with
// distinct node names and a counter window (second sample = first sample, one node in 50
// with a moved symbol_error counter). Nothing here is a capture: every node is made.

#include <chrono>
#include <string>
#include <vector>

#include "ibc/agent/collect.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::bench {

// A snapshot collected from a copied tree (no commands, no environment), with `extra`'s
// options (NCCL logs, nccl-tests, ...) beside the root.
::ibcollect::v1::Snapshot collectTree(const std::string& root,
                                      const agent::CollectOptions& extra = {});

// The three real class-view captures under FIXTURES_DIR/real/sysfs, collected.
std::vector<::ibcollect::v1::Snapshot> captureTemplates(const std::string& fixtures_dir);

// Node `index` of a synthetic job: a template (round robin) named `name` (hostname and Slurm
// node) in job `job_id`, with a 10 s counter window.
::ibcollect::v1::Snapshot syntheticNode(const std::vector<::ibcollect::v1::Snapshot>& templates,
                                        int index, const std::string& name,
                                        const std::string& job_id);

// "node0042"-style names: `prefix` and `index` on four digits.
std::string nodeName(const std::string& prefix, int index);

// The command line of the node-count benchmarks: FIXTURES_DIR [MAX_NODES] (default 2,000),
// and the capture templates read from FIXTURES_DIR. Prints the usage and exits 3 without
// FIXTURES_DIR.
struct NodeBenchArgs {
  std::string fixtures_dir;
  int max_nodes = 2000;
  std::vector<::ibcollect::v1::Snapshot> templates;  // captureTemplates(fixtures_dir)
};
NodeBenchArgs nodeBenchArgs(int argc, char** argv);

inline double ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace ibc::bench

#pragma once

// Cross-node diagnosis for the nodes of one job (docs/codes.md "across nodes"):
// MTU_MISMATCH, FW_VERSION_MISMATCH, NODE_OUTLIER (a node or port whose rate, counter
// deltas, throughput, busbw or device layout differ from its peers'),
// LINK_RATE_BELOW_EXPECTED against the peers' majority when no expected rate was given,
// and NCCL_RANK_LAGGING across the nodes' NCCL logs. Pure and linear in the number of
// nodes × ports: 2,000 nodes compare in well under a second (bench/compare_nodes).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ibc/core/node_metrics.h"
#include "ibc/core/report.h"
#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

struct CompareOptions {
  // `--expect-rate`: when given, single-node rules judge rates and the peers' majority is
  // not used.
  std::optional<double> expect_rate_gbps;
  // A counter class is an outlier on a node when its window delta exceeds this multiple
  // of the peers' median (and the median node saw little).
  double outlier_factor = 10.0;
  // Throughput below this fraction of the peers' median is an outlier.
  double slow_fraction = 0.5;
};

// Findings that need several nodes to see. Fewer than two nodes: none. Findings name each
// node by nodeName(), or by `labels[i]` when given (one per node, unique: two snapshots
// of one host are two nodes here).
// `metrics` (one per node, when given) are the nodes' nodeCounterMetrics (counter movement and
// busbw peak), taken before their counters and nccl-tests tables were let go (JobJudgement's
// slim nodes); without them they are read from `nodes`.
std::vector<::ibcollect::v1::Finding> compareNodes(
    const std::vector<const ::ibcollect::v1::Snapshot*>& nodes, const CompareOptions& options,
    const std::vector<std::string>* labels = nullptr,
    const std::vector<const NodeCounterMetrics*>* metrics = nullptr);

// Which node of a job a host name (from a log line or a finding) refers to: a node whose
// Slurm name (nodeName()) or hostname is that name, else one whose short form is the
// name's short form ("node7.cluster.local" is node7; IPv4 addresses are never shortened).
// Exact names win over short forms; among equals, the first node in the given order.
// Built once in O(nodes); each lookup is O(1) expected. Names are copied: the index does
// not refer to `nodes` after construction.
class JobNodeIndex {
 public:
  explicit JobNodeIndex(const std::vector<AnalyzedNode>& nodes);
  std::optional<std::size_t> find(std::string_view host) const;

 private:
  std::unordered_map<std::string, std::size_t> exact_;
  std::unordered_map<std::string, std::size_t> short_;
};

}  // namespace ibc::core

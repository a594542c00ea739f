#pragma once

// Cross-node diagnosis for the nodes of one job (DESIGN §5 "across nodes"):
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
std::vector<::ibcollect::v1::Finding> compareNodes(
    const std::vector<const ::ibcollect::v1::Snapshot*>& nodes, const CompareOptions& options,
    const std::vector<std::string>* labels = nullptr);

// Single-node findings of every node plus the cross-node ones, without duplicates (a
// port below both --expect-rate... and its peers is reported once; a finding several
// snapshots show word for word — one NCCL log carried by several nodes — once), sorted.
std::vector<::ibcollect::v1::Finding> diagnoseJob(
    const std::vector<const ::ibcollect::v1::Snapshot*>& nodes, const CompareOptions& options);

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

// Hands each finding to the node it names (JobNodeIndex); a finding about a host that is
// not a node of the job (a log line from another machine) goes to the first node, so
// nothing is dropped. A finding given to a node is renamed to that node's job name,
// whatever form the log used. No-op without nodes. Linear in nodes + findings.
void assignFindings(std::vector<AnalyzedNode>& nodes,
                    std::vector<::ibcollect::v1::Finding> findings);

// What `ibcollect --job` and `ibcollect compare` do once the snapshots are in. Every finding
// belongs to the input it came from, by position, never by host name (two snapshots of one
// host, NCCL host names that are not Slurm names): a node's own findings stay on it, except
// a log line that names another node of the job, which goes to that node; cross-node
// findings go to the node they single out; a finding several snapshots of different nodes
// show word for word (one shared log) is kept once, while inputs of one host keep theirs. Each
// finding gets its node's name and source; each node's findings are sorted. Findings already on the
// nodes are kept. Nodes with an unreachable_reason are diagnosed only on the NCCL logs and
// nccl-tests output the launcher read for them.
void diagnoseJobNodes(std::vector<AnalyzedNode>& nodes, const CompareOptions& options);

}  // namespace ibc::core

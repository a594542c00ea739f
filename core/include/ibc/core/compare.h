#pragma once

// Cross-node diagnosis for the nodes of one job (DESIGN §5 "across nodes"):
// MTU_MISMATCH, FW_VERSION_MISMATCH, NODE_OUTLIER (a node or port whose rate, counter
// deltas, throughput, busbw or device layout differ from its peers'),
// LINK_RATE_BELOW_EXPECTED against the peers' majority when no expected rate was given,
// and NCCL_RANK_LAGGING across the nodes' NCCL logs. Pure and linear in the number of
// nodes × ports: 2,000 nodes compare in well under a second (bench/compare_nodes).

#include <optional>
#include <string>
#include <vector>

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

// Findings that need several nodes to see. Fewer than two nodes: none.
std::vector<::ibcollect::v1::Finding> compareNodes(
    const std::vector<const ::ibcollect::v1::Snapshot*>& nodes, const CompareOptions& options);

// Single-node findings of every node plus the cross-node ones, without duplicates (a
// port below both --expect-rate... and its peers is reported once), sorted.
std::vector<::ibcollect::v1::Finding> diagnoseJob(
    const std::vector<const ::ibcollect::v1::Snapshot*>& nodes, const CompareOptions& options);

}  // namespace ibc::core

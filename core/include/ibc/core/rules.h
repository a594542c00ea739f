#pragma once

// Single-node diagnosis (DESIGN §5): every code except the cross-node ones. Pure: the
// same snapshot and options always give the same findings, in a stable order.

#include <optional>
#include <string>
#include <vector>

#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

struct RuleOptions {
  // `--expect-rate`: the link rate every active port should run at, Gb/s.
  std::optional<double> expect_rate_gbps;
  // `--expect-busbw`: the nccl-tests bus bandwidth a healthy run reaches, GB/s. When given,
  // NCCL_TEST_LOW_BUSBW compares the peak busbw with it instead of the ports' rates.
  std::optional<double> expect_busbw_gbs;
};

// Findings for one node's snapshot, sorted (critical first).
std::vector<::ibcollect::v1::Finding> diagnoseNode(const ::ibcollect::v1::Snapshot& snapshot,
                                                   const RuleOptions& options);

// The name findings use for a snapshot's node: Slurm node name, else hostname, else
// "unknown-node".
std::string nodeName(const ::ibcollect::v1::Snapshot& snapshot);

}  // namespace ibc::core

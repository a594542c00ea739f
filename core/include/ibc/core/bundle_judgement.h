#pragma once

// `bundle verify` judges the bundle's signed snapshots again (docs/formats.md): the job verdict
// (judgeJob) with the rule options the manifest records, compared with the findings.json
// the exporter wrote. A difference names the node, the code and which side has it. Pure:
// members in, differences out.

#include <string>
#include <vector>

#include "ibc/core/bundle.h"

namespace ibc::core {

struct BundleRejudgement {
  // False when the bundle cannot be judged again (redacted: no snapshots; a member that does
  // not parse); `reason` says why.
  bool judged = false;
  std::string reason;
  std::size_t findings_compared = 0;
  // For people, one per finding only one side has: "node4 LINK_RATE_BELOW_EXPECTED (warning)
  // mlx5_3 port 1: judged from the snapshots, missing from findings.json".
  std::vector<std::string> differences;
};

// Every snapshot member the manifest lists, judged as one job; compared by (node, source,
// code, severity, device, port) with findings.json. Hashes and signatures are
// verifyBundle's; run it first.
BundleRejudgement rejudgeBundle(const BundleMembers& members);

}  // namespace ibc::core

#pragma once

// Assembles the evidence `ibcollect analyze` was given — saved snapshots, a host or tree,
// NCCL logs, nccl-tests output, a kernel log, pasted tool output — into node snapshots
// and diagnoses each.

#include <optional>
#include <string>
#include <vector>

#include "ibc/agent/collect.h"
#include "ibc/core/evidence_merge.h"
#include "ibc/core/report.h"
#include "ibc/core/rules.h"
#include "ibc/core/tool_output.h"

namespace ibc::agent {

struct AnalyzeInputs {
  std::vector<std::string> snapshot_files;  // FILE.ibsnap
  std::optional<std::string> root;          // --root (a tree or "/")
  std::vector<std::string> nccl_logs;
  std::vector<std::string> nccl_tests;
  std::vector<std::string> tool_outputs;
  std::string dmesg_file;
};

struct AnalyzeOutcome {
  std::vector<core::AnalyzedNode> nodes;
  // Inputs that could not be read or decoded, each a full sentence naming the file.
  std::vector<std::string> input_errors;
  // Inputs read only in part (larger than the read bound), each a sentence naming the file
  // and what was read.
  std::vector<std::string> notices;
  // --tool-output files that hold host-side (PF) tool output (mlxlink, ethtool -m, flint,
  // mlxconfig, lspci, a host kernel log) and nothing of the VF side: a sentence each naming
  // the file and the command that judges it (`host-inspect --paste`). A usage mistake.
  std::vector<std::string> host_side_pastes;
};

// `open_root` gives the filesystem for --root; `files` reads user-given paths.
AnalyzeOutcome analyzeInputs(
    const AnalyzeInputs& inputs, const core::RuleOptions& rules, const HostSeams& user_files_seams,
    const std::function<std::unique_ptr<Filesystem>(const std::string&)>& open_root,
    const std::string& agent_version);

// Merges a parsed tool output into a snapshot through core::mergeEvidence (a pasted
// `grep . /sys/...` listing through the sysfs probes first) and adds a ToolOutput record.
// Where the paste contradicts what the snapshot already holds, the snapshot's value stays
// and the conflict is appended to `conflicts` (when given).
void mergeToolEvidence(const core::ToolEvidence& evidence, const std::string& source,
                       std::string_view raw, const CollectLimits& limits, v1::Snapshot& snap,
                       std::vector<core::EvidenceConflict>* conflicts = nullptr);

// Reads and decodes a .ibsnap file (bounded). Errors name the file and the problem.
Result<v1::Snapshot> readSnapshotFile(const Filesystem& files, const std::string& path);
// The same, as a node of a report: the snapshot with its file named.
Result<core::AnalyzedNode> readSavedNode(const Filesystem& files, const std::string& path);

}  // namespace ibc::agent

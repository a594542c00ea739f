#pragma once

// The job verdict (docs/commands.md, docs/codes.md, docs/formats.md): one judgement of a job's
// snapshots that every consumer carries unchanged — `--job`, `compare`, `analyze` of several
// inputs, the console's pages, the bundle (findings.json, report.md, pf-inspection.*), `bundle
// show`, `bundle verify` (which judges again and names a difference) and `host-inspect`.
//
// Order: every node's evidence rules (rules.h), the cross-node findings (compare.h), NCCL
// failures joined to the peer they name (a completion error, connect or QP failure whose peer
// address or remote GID is a port GID of another node of the job gets an evidence line naming
// that node, device and port and what its findings say of it), then escalation by class over
// each node's whole findings, so that a port known to be slow only from its peers is escalated
// like one below `--expect-rate`.

#include <optional>
#include <string>
#include <vector>

#include "ibc/core/analyzed_node.h"
#include "ibc/core/compare.h"
#include "ibc/core/node_metrics.h"
#include "ibc/core/rules.h"

namespace ibc::core {

struct JobVerdictOptions {
  RuleOptions rules;  // --expect-rate, --expect-busbw
  // Outlier thresholds of the comparison; its expect_rate_gbps is taken from `rules`.
  CompareOptions compare;
};

// Judges `nodes` in place. Every node gets a unique label (labelNodes) and its findings:
// each finding names the node (nodeName()) and source of the input that brought its
// evidence, never a host name printed inside a log. A log line naming another host does
// not make a node: when several inputs carry the same line word for word (a shared log
// directory) it is kept once, on the carrier it names if one does, else on the first
// carrier; a host name inside a log that is not its node's becomes a notice of that node
// (AnalyzedNode::notices). Cross-node findings go to the node they single out. Findings
// already on the nodes are kept (and escalated over). Nodes with an unreachable_reason
// are judged only on the NCCL logs and nccl-tests output the launcher read for them.
// Each node's findings are sorted. Linear in nodes × findings.
void judgeJob(std::vector<AnalyzedNode>& nodes, const JobVerdictOptions& options);

// What JobJudgement keeps of a node's snapshot once its own evidence rules have read it.
enum class Keep {
  Whole,   // everything (judgeJob)
  Report,  // what the report and the cross-node steps read (slimSnapshot): the CLI's reports
  // What the cross-node steps read, and no nccl-tests tables: the node's report entry carries
  // neither its nccl-tests tables nor their busbw (the console, which reads them from the node's
  // whole snapshot when a page shows it).
  Verdict,
};

// The same verdict taken one node at a time, for jobs too large to hold every parsed snapshot
// at once (`compare` of thousands of files): add() runs the node's own evidence rules at once,
// then lets go of what `keep` does not keep, measuring first what the cross-node findings compare
// (nodeCounterMetrics: counter movement, busbw peak), and holds what is left serialized until
// finish() (a parsed snapshot takes several times its bytes) parses all of them at once, together
// (their memory is one block to give back after). finish() gives exactly the findings judgeJob
// gives for the same nodes in the same order. judgeJob is add() of every node with Keep::Whole,
// then finish().
class JobJudgement {
 public:
  explicit JobJudgement(JobVerdictOptions options);
  void add(AnalyzedNode node, Keep keep);
  std::vector<AnalyzedNode> finish();

 private:
  // The nodes added, each slim one parsed again.
  std::vector<AnalyzedNode> takeNodes();

  JobVerdictOptions options_;
  std::vector<AnalyzedNode> nodes_;
  std::vector<bool> judged_;                                     // per node: judgedNode() at add
  std::vector<std::vector<::ibcollect::v1::Finding>> evidence_;  // per node: its own rules'
  std::vector<std::optional<NodeCounterMetrics>> metrics_;       // per node, taken when slimmed
  std::vector<std::string> slim_;  // per node: its slim snapshot serialized; "" when whole
};

// Clears what only a node's own evidence rules read, which no later step of the verdict and
// nothing in the report needs (the console's pages do: they read whole snapshots): port, device
// and netdev counters, the counter window, the kernel log's lines, the raw text of NCCL logs and
// pasted tool outputs, and of the NCCL logs' results all but the ranks' progress and the failures
// that name a peer (nccl-tests tables stay: the report carries them). What is left is a fraction
// of the parsed snapshot.
void slimSnapshot(::ibcollect::v1::Snapshot& snapshot);

}  // namespace ibc::core

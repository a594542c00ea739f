#pragma once

// The report printed by `ibcollect snapshot|analyze|compare|--job`: a per-node table,
// then findings with evidence and the next step (text), or one JSON document
// `{"nodes":[...], "findings":[...]}` through protobuf's JSON mapping (docs/commands.md).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/analyzed_node.h"
#include "ibc/core/findings.h"
#include "ibc/core/result.h"
#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

// Per-port summary of a node, with the worst severity of the findings on each port.
::ibcollect::v1::NodeReport summarizeNode(const AnalyzedNode& node);

// Nodes in the given order; findings of all nodes, sorted (critical first). Snapshots
// that go into the report are moved, not copied (they can be large). In a job, a finding
// that says the same thing (findingGroupKey) on at least kJobWideShare of the nodes, and on
// at least kJobWideMinNodes, is one job-wide finding (scope "job", DESIGN §11): the job's or
// the image's configuration, not a node's fault, listed after the nodes' own findings of its
// severity. The nodes' rows still count it (a node's verdict is its own).
::ibcollect::v1::Report buildReport(std::vector<AnalyzedNode> nodes);

// Where a job-wide finding holds, as every surface says it: "job-wide: all 2000 nodes",
// "job-wide: all but node17 (1999 of 2000 nodes)".
std::string jobWideWhere(const ::ibcollect::v1::Finding& finding);

inline constexpr double kJobWideShare = 0.9;
inline constexpr int kJobWideMinNodes = 3;

// The job-wide findings of `findings` (node_of[i]: the index in `labels` of finding i's node,
// -1 for none) joined as buildReport joins them; the others are kept as they are.
std::vector<::ibcollect::v1::Finding> joinJobWide(std::vector<::ibcollect::v1::Finding> findings,
                                                  const std::vector<int>& node_of,
                                                  const std::vector<std::string>& labels);

// A node row names at most this many failed probes (NodeReport.failed_probes); all are
// counted (probe_errors) and all stay in the snapshot.
inline constexpr int kMaxNamedProbeFailures = 50;

struct TextOptions {
  bool show_info = true;          // info findings (unavailable counters, ...)
  std::size_t max_evidence = 12;  // evidence lines per finding before "... N more"
  // One row per node (ports active/total, rates, firmware, worst finding) instead of one
  // per port: for jobs.
  bool node_table = false;
  // Columns to fit: summaries, evidence, next steps and notes wrap at word boundaries with a
  // hanging indent (a word longer than a line is cut). 0: no wrapping.
  std::size_t width = 0;
  // Severity words in colour (ANSI SGR); the caller decides (terminal, NO_COLOR, --color).
  bool color = false;
  // The verdict table and the counts only (`-q`).
  bool quiet = false;
  // Every place and every evidence line of every finding, none grouped (`-v`).
  bool verbose = false;
  // `--expect-busbw`, GB/s, printed beside the nccl-tests results; 0: not given.
  double expect_busbw_gbs = 0;
};

std::string renderText(const ::ibcollect::v1::Report& report, const TextOptions& options = {});

// The word a text report prints for a severity or verdict name, upper-cased ("critical" →
// "CRITICAL", "ok" → "OK"): what the severity column of a table holds (TextTable below).
std::string severityWord(std::string_view severity);

// A table a caller builds for the head of a report (host-inspect's VF table, pf_report.h),
// laid out as renderText lays out its own: the first row is the header; left-aligned columns
// sized to their widest cell and, past TextOptions::width, narrowed and wrapped. The cells of
// `severity_column` below the header are severity words ("CRITICAL", "WARNING", "INFO",
// "OK", "UNREACHABLE" coloured under TextOptions::color; other words are left as they are).
struct TextTable {
  std::vector<std::vector<std::string>> rows;
  std::optional<std::size_t> severity_column;
};

// renderText with `heading` (one line wrapped to options.width, none when empty) and `head`
// in place of the per-port table: notices, node verdicts, counts and findings follow as
// renderText prints them, sanitised and coloured the same way.
std::string renderTextWithTable(const ::ibcollect::v1::Report& report, std::string_view heading,
                                const TextTable& head, const TextOptions& options);

// Every field is printed (zeros and empty strings too) so consumers see a fixed shape;
// field names are the proto names (snake_case).
Result<std::string> renderJson(const ::ibcollect::v1::Report& report);

}  // namespace ibc::core

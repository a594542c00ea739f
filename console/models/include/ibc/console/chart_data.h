#pragma once

// What the charts page plots (console/README.md `charts`), as plain numbers: per node across the
// job (nccl-tests busbw, or one counter summed over the node's ports), and one counter
// across the snapshots of one host over time. A counter's value is its window delta when
// the snapshot has a window, else its total; nodes without the value are left out, never
// drawn as 0. Also the arithmetic of a readable chart: nice axis ticks, a histogram for
// large jobs, units, and the words that name outliers. Pure; no widgets.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/console/job_data.h"
#include "ibc/console/units.h"

namespace ibc::console {

struct NodeValue {
  int node = 0;          // index into report.nodes()
  std::string label;     // the node's label
  double value = 0;      // GB/s for busbw; the counter's unit (counterUnit) for counters
  bool outlier = false;  // core's mark (core::NodeOutliers), never the console's
};

enum class NodeQuantity { Busbw, Counter };

// One value per node across the job, with what judged them.
struct NodeSeries {
  NodeQuantity quantity = NodeQuantity::Busbw;
  std::string counter;                    // for Counter
  CounterUnit unit = CounterUnit::Count;  // for Counter
  std::vector<NodeValue> values;          // nodes that have the value, in node order
  int nodes = 0;                          // nodes in the job
  // Core's judgement of the values (core::NodeOutliers, node_metrics.h): its median,
  // threshold and rule in the values' own counts, for the words that explain a mark; `scale`
  // turns a count into the unit shown. Each value carries its own mark.
  core::OutlierMarks marks;
  double scale = 1;
  int outliers() const { return marks.count(); }
};

// Fills `series` with core's per-node values and marks (`judged`, one per node; `labels` the
// nodes' labels, same order): each node that has a value takes core's own mark for it
// (NodeOutliers::outlier), shown in `scale` units. What every series is built with.
void fillSeries(NodeSeries& series, const std::vector<std::string>& labels,
                core::NodeOutliers judged, double scale);

// The peak bus bandwidth (GB/s) of each node's nccl-tests output (the larger of out-of-place
// and in-place over all sizes), for nodes that have one; outliers by core::markBusbwOutliers.
NodeSeries busbwPerNode(const JobData& job);

// `counter` summed over each node's ports (counters, counters_ext, hw_counters), in its unit
// (data counters in bytes); outliers by core::markCounterOutliers on the counts (above 10 ×
// max(median, 1): a node that counts what others do not).
NodeSeries counterPerNode(const JobData& job, const std::string& counter);

// "97.5 GB/s", "1.50 GiB", "120".
std::string formatValue(const NodeSeries& series, double value);

// Core's rule in words with this job's numbers: "below 80% of the job's median (338.8
// GB/s)", "above 10 x max(median, 1) (median 0)".
std::string outlierRule(const NodeSeries& series);

// A bar's tooltip: "node1661: 97.5 GB/s\noutlier: below 80% of ..." or "...\nnot an outlier
// (...)".
// `k` indexes series.values.
std::string describeValue(const NodeSeries& series, std::size_t k);

// Indexes into series.values of the outliers, most extreme first (busbw: lowest first;
// counters: highest first; ties by node order).
std::vector<int> outliersWorstFirst(const NodeSeries& series);

// "node0042 (97.5 GB/s), node0107 (101.2 GB/s) and 3 more": the first `max_named` outliers,
// most extreme first; "" when there is none.
std::string outlierNames(const NodeSeries& series, int max_named);

// Ticks at 1, 2 or 5 × 10^k that cover [lo, hi] with at most `max_ticks` ticks (at least 2):
// lo and hi rounded outwards to the step. An empty range (lo == hi) is widened around the
// value ([0, 1] for 0). `decimals` is what a tick label needs to show the step.
struct NiceAxis {
  double lo = 0;
  double hi = 1;
  double step = 1;
  int tick_count = 2;
  int decimals = 0;
};
NiceAxis niceAxis(double lo, double hi, int max_ticks);

// A distribution of a series for jobs too large for one bar per node: at most `max_bins`
// bins of one nice width (niceAxis) in the unit shown (values / `divisor`: bins of 50 GiB,
// not of 5e10 bytes), each [lo, hi) except the last, which holds its hi. Edges and step are in
// the series' unit; `decimals` is for the shown unit.
struct HistogramBin {
  double lo = 0;
  double hi = 0;
  int count = 0;
  int first = -1;             // the first value in the bin (index into series.values)
  std::vector<int> outliers;  // outliers in the bin (indexes into series.values), worst first
};
struct Histogram {
  double step = 1;
  int decimals = 0;  // for the bin edges' labels
  std::vector<HistogramBin> bins;
};
Histogram histogramOf(const NodeSeries& series, int max_bins, double divisor = 1);
// The bin `value` falls in; -1 outside the histogram (or none).
int binOf(const Histogram& histogram, double value);

// The prefix every label shares, cut back to end at a separator (- _ . / : space) or where
// letters turn into digits, so that each label keeps a readable rest ("gpu-h100-r07-" for
// gpu-h100-r07-n01 and gpu-h100-r07-n02); "" when shorter than `min_length` or when a label
// would be left empty.
std::string commonLabelPrefix(const std::vector<std::string>& labels, std::size_t min_length);

struct TimeValue {
  int node = 0;
  int64_t unix_ms = 0;
  double value = 0;  // the counter's unit (counterUnit)
};

// `counter` summed over the ports of every snapshot of the same host as node `node_index`
// (same hostname), oldest first: the counter's history across saved snapshots.
std::vector<TimeValue> counterOverTime(const JobData& job, int node_index,
                                       const std::string& counter);

// Every counter name in the job, sorted, for the chooser.
std::vector<std::string> counterNames(const JobData& job);

}  // namespace ibc::console

#pragma once

// Per-node numbers that cross-node comparison (NODE_OUTLIER, compare.h) judges and the
// console shows: window deltas summed per counter class with the largest single
// contributor, and RDMA data throughput. Built from portCounterValues() (counters.h), so
// the grid, the charts and the findings count the same thing. Pure.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/counters.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

// A node of a comparison: its snapshot (not owned) and the name findings give it.
struct NodeView {
  const ::ibcollect::v1::Snapshot* snap = nullptr;
  std::string name;
};

// What one counter class moved on a node during the window.
struct ClassMovement {
  double delta = 0;           // sum of the positive deltas of the class's counters
  double largest = 0;         // the largest of them
  std::string largest_where;  // "mlx5_3 port 1 symbol_error +120"
};

struct NodeCounterMetrics {
  bool windowed = false;  // the snapshot has a readable second sample
  double interval_seconds = 0;
  // Classes that moved (CqeFlush and None are not tallied: secondary or not trouble).
  // Where a port has one counter in both counters/ and counters_ext/ (mlx4's *_64), the
  // 64-bit one counts and the legacy one does not: nothing is counted twice.
  std::map<CounterClass, ClassMovement> classes;
  // port_xmit_data + port_rcv_data over the window (4-byte words × 4), all ports.
  double bytes_per_second = 0;
  // The node's nccl-tests peak busbw (peakBusbwGbs), windowed or not.
  std::optional<double> peak_busbw_gbs;
};

NodeCounterMetrics nodeCounterMetrics(const ::ibcollect::v1::Snapshot& snapshot);

// The classes NODE_OUTLIER compares, in the order findings are made.
const std::vector<CounterClass>& outlierClasses();

// A node whose class delta exceeds `factor` × max(median over windowed nodes, 1).
struct CounterOutlier {
  std::size_t node = 0;  // index into the metrics given
  CounterClass cls = CounterClass::None;
  double value = 0;
  double median = 0;
  std::size_t windowed_nodes = 0;
};
// Fewer than two windowed nodes: none. Nodes without a window are neither judged nor part
// of the median; a windowed node that did not see a class counts as 0 for its median.
std::vector<CounterOutlier> counterOutliers(const std::vector<NodeCounterMetrics>& nodes,
                                            double factor);

// Median of the values (the upper one for an even count); 0 for none. The one median of
// the project: NODE_OUTLIER, the console's grid, charts and diff use it.
double medianOf(std::vector<double> values);

// The named outlier rules (docs/codes.md NODE_OUTLIER): what the comparison judges is what the
// console highlights, one definition each.
// A counter (class delta, or a counter's delta or total) far above its peers: above
// `factor` × max(median, 1), so a node that counts what its peers do not stands out.
inline constexpr double kCounterOutlierFactor = 10.0;
bool isCounterOutlier(double value, double median, double factor = kCounterOutlierFactor);
// nccl-tests peak busbw below this fraction of the job's median node.
inline constexpr double kBusbwOutlierFraction = 0.8;
bool isBusbwOutlier(double busbw_gbs, double median_gbs);

// The rules applied to one value per node or port, as every consumer applies them: the
// median of `values` and, for each value (same order), whether it is an outlier. Fewer than
// two values: nothing is an outlier (no peers to differ from).
struct OutlierMarks {
  double median = 0;
  std::vector<bool> outlier;
  // The rule in numbers and words, for every surface that explains a mark: a value is an
  // outlier below (busbw) or above (counters) `threshold`; `rule` says so without units
  // ("below 80% of the job's median", "above 10 x max(median, 1)").
  double threshold = 0;
  bool below = false;
  std::string rule;
  int count() const {
    int n = 0;
    for (const bool o : outlier) n += o ? 1 : 0;
    return n;
  }
};
// What one count of a counter is (every surface shows counters in these units). IB's
// port_xmit_data/port_rcv_data (and their counters_ext `_64` forms) count 4-byte words:
// bytes, 4 per count; `*bytes` counters are bytes; `*packets`/`*pkts` packets; anything else
// a count of events.
enum class CounterUnit { Count, Packets, Bytes };
CounterUnit counterUnit(std::string_view name);
// How many of its unit one count is: 4 for the 4-byte-word data counters, else 1.
double counterScale(std::string_view name);

// The per-node values those marks are put on, one definition each for NODE_OUTLIER and the
// console's charts:
// - a node's nccl-tests peak bus bandwidth, GB/s: the largest out-of-place or in-place busbw
//   of any row of any output; nullopt when none is above 0 (no output, or a test that moved
//   nothing: not judged against its peers);
std::optional<double> peakBusbwGbs(const ::ibcollect::v1::Snapshot& snapshot);
// - `counter` over a node's ports (a device's own hw_counter once per device): with a counter
//   window (and `Moved`), the sum of the deltas of the ports sampled twice, else the totals;
//   in the counter's counts (4-byte words for the data counters); nullopt when no port has
//   it readable.
enum class CounterSum { Moved, Totals };
std::optional<double> nodeCounterSum(const ::ibcollect::v1::Snapshot& snapshot,
                                     std::string_view counter, CounterSum sum = CounterSum::Moved);

// Every counter of a node summed as nodeCounterSum sums it (Moved and Totals), in one walk:
// what a caller keeps of a node's counters when it lets the snapshot go (the console's charts
// keep these for every node of a job, not its parsed counters). `on_port`: the counter is a
// port's (not only a device's own hw_counter).
struct NodeCounterSums {
  std::optional<double> moved;
  std::optional<double> totals;
  bool on_port = false;
};
std::map<std::string, NodeCounterSums, std::less<>> nodeCounterSums(
    const ::ibcollect::v1::Snapshot& snapshot);

OutlierMarks markBusbwOutliers(const std::vector<double>& busbw_gbs);
OutlierMarks markCounterOutliers(const std::vector<double>& values,
                                 double factor = kCounterOutlierFactor);

// One value per node of a job and core's marks on it: what NODE_OUTLIER judges (busbw) and
// what the console's grid and charts show, computed in one place. `value[i]` is node i's
// (nullopt: it has none and is not judged); `marks` are over the judged nodes in node
// order; `outlier[i]` is node i's mark.
struct NodeOutliers {
  std::vector<std::optional<double>> value;
  std::vector<bool> outlier;
  OutlierMarks marks;
  std::size_t judged() const { return marks.outlier.size(); }
};
NodeOutliers nodeBusbwOutliers(const std::vector<const ::ibcollect::v1::Snapshot*>& nodes);
// The same marks on peaks already taken (peakBusbwGbs, one per node; nullopt: none).
NodeOutliers nodeBusbwOutliers(std::vector<std::optional<double>> peaks);
NodeOutliers nodeCounterOutliers(const std::vector<const ::ibcollect::v1::Snapshot*>& nodes,
                                 std::string_view counter);
// The same marks on values already summed (nodeCounterSum's Moved, or nodeCounterSums' `moved`,
// one per node; nullopt: the node has none).
NodeOutliers nodeCounterOutliers(std::vector<std::optional<double>> values);

}  // namespace ibc::core

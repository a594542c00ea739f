#include "ibc/core/node_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

// mlx4's counters_ext names carry a _64 suffix; the legacy counter is the one without.
std::string legacyName(const std::string& ext_name) {
  constexpr std::string_view kSuffix = "_64";
  if (ext_name.size() > kSuffix.size() &&
      ext_name.compare(ext_name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
    return ext_name.substr(0, ext_name.size() - kSuffix.size());
  }
  return ext_name;
}

}  // namespace

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

NodeCounterMetrics nodeCounterMetrics(const v1::Snapshot& s) {
  NodeCounterMetrics m;
  m.peak_busbw_gbs = peakBusbwGbs(s);
  const CounterWindowIndex window(s);
  if (!window.present()) return m;
  m.windowed = true;
  m.interval_seconds = window.intervalSeconds();
  for (const auto& d : s.devices()) {
    for (const auto& p : d.ports()) {
      std::set<std::string> wide;  // legacy names a 64-bit counters_ext entry replaces
      for (const auto& c : p.counters_ext()) wide.insert(legacyName(c.name()));
      for (const auto& v : portCounterValues(window, d, p)) {
        if (v.device_level) continue;  // device-level hw_counters: not a port's traffic
        if (!v.delta || *v.delta <= 0) continue;
        if (v.group == CounterGroup::PortCounters && wide.count(v.name) > 0) continue;
        const std::string name =
            v.group == CounterGroup::PortCountersExt ? legacyName(v.name) : v.name;
        const auto delta = static_cast<double>(*v.delta);
        if ((v.group == CounterGroup::PortCounters || v.group == CounterGroup::PortCountersExt) &&
            (name == "port_xmit_data" || name == "port_rcv_data")) {
          m.bytes_per_second += counterScale(name) * delta / m.interval_seconds;
          continue;
        }
        const CounterClass cls = classifyCounter(v.name, v.group);
        if (cls == CounterClass::None || cls == CounterClass::CqeFlush) continue;
        ClassMovement& c = m.classes[cls];
        c.delta += delta;
        if (delta > c.largest) {
          c.largest = delta;
          c.largest_where = d.name() + " port " + std::to_string(p.port()) + " " + v.name + " +" +
                            formatNumber(delta, 3);
        }
      }
    }
  }
  return m;
}

const std::vector<CounterClass>& outlierClasses() {
  static const std::vector<CounterClass> kClasses{
      CounterClass::PhyError,    CounterClass::LinkDowned, CounterClass::BufferOverrun,
      CounterClass::XmitDiscard, CounterClass::Congestion, CounterClass::TransportRetry,
      CounterClass::CqeError,    CounterClass::PcieError};
  return kClasses;
}

std::vector<CounterOutlier> counterOutliers(const std::vector<NodeCounterMetrics>& nodes,
                                            double factor) {
  std::vector<CounterOutlier> out;
  std::size_t windowed = 0;
  for (const auto& n : nodes) windowed += n.windowed ? 1 : 0;
  if (windowed < 2) return out;
  for (CounterClass cls : outlierClasses()) {
    std::vector<double> values;
    for (const auto& n : nodes) {
      if (!n.windowed) continue;
      auto it = n.classes.find(cls);
      values.push_back(it == n.classes.end() ? 0.0 : it->second.delta);
    }
    const double med = medianOf(values);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i].windowed) continue;
      auto it = nodes[i].classes.find(cls);
      if (it == nodes[i].classes.end()) continue;
      const double v = it->second.delta;
      if (!isCounterOutlier(v, med, factor)) continue;
      out.push_back({i, cls, v, med, windowed});
    }
  }
  return out;
}

bool isCounterOutlier(double value, double median, double factor) {
  return value > factor * std::max(median, 1.0);
}

bool isBusbwOutlier(double busbw_gbs, double median_gbs) {
  return busbw_gbs < kBusbwOutlierFraction * median_gbs;
}

namespace {

template <typename Rule>
OutlierMarks mark(const std::vector<double>& values, Rule is_outlier) {
  OutlierMarks m;
  m.median = medianOf(values);
  m.outlier.assign(values.size(), false);
  if (values.size() < 2) return m;
  for (std::size_t i = 0; i < values.size(); ++i) m.outlier[i] = is_outlier(values[i], m.median);
  return m;
}

}  // namespace

std::optional<double> peakBusbwGbs(const v1::Snapshot& snapshot) {
  double peak = 0;
  for (const auto& t : snapshot.nccl_tests()) {
    for (const auto& r : t.parsed().rows())
      peak = std::max({peak, r.oop_busbw_gbs(), r.ip_busbw_gbs()});
  }
  return peak > 0 ? std::optional<double>(peak) : std::nullopt;
}

namespace {

// The walk nodeCounterSum and nodeCounterSums share: add(value) for each counter value a node
// sum counts (a device's own hw_counter once per device; values without a total are unread).
template <typename Add>
void forEachSummed(const v1::Snapshot& snapshot, const Add& add) {
  const CounterWindowIndex window(snapshot);
  for (const auto& d : snapshot.devices()) {
    std::set<std::string, std::less<>> device_counted;
    for (const auto& p : d.ports()) {
      for (auto& c : portCounterValues(window, d, p)) {
        if (!c.total) continue;
        if (c.device_level && !device_counted.insert(c.name).second) continue;
        add(c);
      }
    }
  }
}

// One value into a sum: the totals, or with a window (and Moved) the deltas only.
void addTo(std::optional<double>& sum, const PortCounterValue& c, bool windowed) {
  if (!windowed) {
    sum = sum.value_or(0) + static_cast<double>(*c.total);
  } else if (c.delta) {
    sum = sum.value_or(0) + static_cast<double>(*c.delta);
  }
}

}  // namespace

std::optional<double> nodeCounterSum(const v1::Snapshot& snapshot, std::string_view counter,
                                     CounterSum sum) {
  std::optional<double> total;
  const bool windowed = sum == CounterSum::Moved && latestWindow(snapshot) != nullptr;
  forEachSummed(snapshot, [&](const PortCounterValue& c) {
    if (c.name == counter) addTo(total, c, windowed);
  });
  return total;
}

std::map<std::string, NodeCounterSums, std::less<>> nodeCounterSums(const v1::Snapshot& snapshot) {
  std::map<std::string, NodeCounterSums, std::less<>> out;
  const bool windowed = latestWindow(snapshot) != nullptr;
  forEachSummed(snapshot, [&](const PortCounterValue& c) {
    auto& sums = out[c.name];
    addTo(sums.moved, c, windowed);
    addTo(sums.totals, c, false);
    sums.on_port = sums.on_port || !c.device_level;
  });
  return out;
}

OutlierMarks markBusbwOutliers(const std::vector<double>& busbw_gbs) {
  OutlierMarks m = mark(busbw_gbs, isBusbwOutlier);
  m.threshold = kBusbwOutlierFraction * m.median;
  m.below = true;
  m.rule = "below " + std::to_string(static_cast<int>(std::lround(kBusbwOutlierFraction * 100))) +
           "% of the job's median";
  return m;
}

OutlierMarks markCounterOutliers(const std::vector<double>& values, double factor) {
  OutlierMarks m =
      mark(values, [factor](double v, double med) { return isCounterOutlier(v, med, factor); });
  m.threshold = factor * std::max(m.median, 1.0);
  char f[32];
  std::snprintf(f, sizeof f, "%g", factor);
  m.rule = std::string("above ") + f + " x max(median, 1)";
  return m;
}

namespace {

bool isDataWords(std::string_view name) {
  if (endsWith(name, "_64")) name.remove_suffix(3);
  return name == "port_xmit_data" || name == "port_rcv_data";
}

}  // namespace

CounterUnit counterUnit(std::string_view name) {
  if (isDataWords(name) || endsWith(name, "bytes")) return CounterUnit::Bytes;
  if (endsWith(name, "packets") || endsWith(name, "pkts")) return CounterUnit::Packets;
  return CounterUnit::Count;
}

double counterScale(std::string_view name) { return isDataWords(name) ? 4.0 : 1.0; }

namespace {

// Core's marks on one value per node (nodes without a value are not judged).
template <typename Judge>
NodeOutliers markNodes(std::vector<std::optional<double>> values, const Judge& judge) {
  NodeOutliers out;
  out.value = std::move(values);
  std::vector<double> judged;
  for (const auto& v : out.value) {
    if (v) judged.push_back(*v);
  }
  out.marks = judge(judged);
  out.outlier.assign(out.value.size(), false);
  std::size_t k = 0;
  for (std::size_t i = 0; i < out.value.size(); ++i) {
    if (out.value[i]) out.outlier[i] = out.marks.outlier[k++];
  }
  return out;
}

template <typename ValueOf>
std::vector<std::optional<double>> valuesOf(const std::vector<const v1::Snapshot*>& nodes,
                                            const ValueOf& value_of) {
  std::vector<std::optional<double>> values;
  values.reserve(nodes.size());
  for (const auto* s : nodes) values.push_back(s != nullptr ? value_of(*s) : std::nullopt);
  return values;
}

}  // namespace

NodeOutliers nodeBusbwOutliers(const std::vector<const v1::Snapshot*>& nodes) {
  return nodeBusbwOutliers(valuesOf(nodes, peakBusbwGbs));
}

NodeOutliers nodeBusbwOutliers(std::vector<std::optional<double>> peaks) {
  return markNodes(std::move(peaks), markBusbwOutliers);
}

NodeOutliers nodeCounterOutliers(const std::vector<const v1::Snapshot*>& nodes,
                                 std::string_view counter) {
  return nodeCounterOutliers(
      valuesOf(nodes, [counter](const v1::Snapshot& s) { return nodeCounterSum(s, counter); }));
}

NodeOutliers nodeCounterOutliers(std::vector<std::optional<double>> values) {
  return markNodes(std::move(values),
                   [](const std::vector<double>& v) { return markCounterOutliers(v); });
}

}  // namespace ibc::core

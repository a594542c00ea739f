#include "ibc/console/chart_data.h"

#include "ibc/core/node_metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <set>

#include "ibc/console/port_counters.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

namespace {

int decimalsFor(double step) {
  return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
}

bool isSeparator(char c) {
  return c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == ' ';
}

}  // namespace

void fillSeries(NodeSeries& series, const std::vector<std::string>& labels,
                core::NodeOutliers judged, double scale) {
  series.nodes = static_cast<int>(labels.size());
  for (std::size_t i = 0; i < labels.size() && i < judged.value.size(); ++i) {
    if (const auto& v = judged.value[i])
      series.values.push_back({static_cast<int>(i), labels[i], *v * scale, judged.outlier[i]});
  }
  series.marks = std::move(judged.marks);
  series.scale = scale;
}

namespace {

std::vector<std::string> labelsOf(const JobData& job) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(job.report.nodes_size()));
  for (const auto& n : job.report.nodes()) out.push_back(n.label());
  return out;
}

}  // namespace

NodeSeries busbwPerNode(const JobData& job) {
  NodeSeries series;
  series.quantity = NodeQuantity::Busbw;
  // Core's per-node values and marks, the ones its NODE_OUTLIER judges.
  fillSeries(series, labelsOf(job), core::nodeBusbwOutliers(busbwPeaks(job)), 1.0);
  return series;
}

NodeSeries counterPerNode(const JobData& job, const std::string& counter) {
  NodeSeries series;
  series.quantity = NodeQuantity::Counter;
  series.counter = counter;
  series.unit = counterUnit(counter);
  // Core's node sums, kept per node when the job was loaded (the job holds no parsed counters);
  // judged by core on the counts, shown in the counter's unit.
  const int id = job.counter_names.find(counter);
  std::vector<std::optional<double>> values;
  for (int i = 0; i < job.report.nodes_size(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    const NodeCounters::Sum* sum =
        id >= 0 && k < job.counters.size() ? job.counters[k].sum(id) : nullptr;
    values.push_back(sum != nullptr && sum->has_moved ? std::optional<double>(sum->moved)
                                                      : std::nullopt);
  }
  fillSeries(series, labelsOf(job), core::nodeCounterOutliers(std::move(values)),
             counterScale(counter));
  return series;
}

std::string formatValue(const NodeSeries& series, double value) {
  if (series.quantity == NodeQuantity::Busbw) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f GB/s", value);
    return buf;
  }
  return formatAmount(value, series.unit);
}

std::string outlierRule(const NodeSeries& series) {
  // Core's rule in its words, with core's numbers for this job in the unit shown.
  const std::string core_median = formatValue(series, series.marks.median * series.scale);
  if (series.quantity == NodeQuantity::Busbw) return series.marks.rule + " (" + core_median + ")";
  return series.marks.rule + " = " + formatValue(series, series.marks.threshold * series.scale) +
         " (median " + core_median + ")";
}

std::string describeValue(const NodeSeries& series, std::size_t k) {
  const NodeValue& value = series.values[k];
  std::string out = value.label + ": " + formatValue(series, value.value) + "\n";
  if (value.outlier) return out + "outlier: " + outlierRule(series);
  return out + "not an outlier (an outlier is " + outlierRule(series) + ")";
}

std::vector<int> outliersWorstFirst(const NodeSeries& series) {
  std::vector<int> out;
  for (std::size_t k = 0; k < series.values.size(); ++k)
    if (series.values[k].outlier) out.push_back(static_cast<int>(k));
  const bool low_is_worse = series.quantity == NodeQuantity::Busbw;
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    const double va = series.values[static_cast<std::size_t>(a)].value;
    const double vb = series.values[static_cast<std::size_t>(b)].value;
    return low_is_worse ? va < vb : va > vb;
  });
  return out;
}

std::string outlierNames(const NodeSeries& series, int max_named) {
  const auto worst = outliersWorstFirst(series);
  std::string out;
  const int named = std::min(static_cast<int>(worst.size()), std::max(max_named, 0));
  for (int k = 0; k < named; ++k) {
    const NodeValue& v =
        series.values[static_cast<std::size_t>(worst[static_cast<std::size_t>(k)])];
    if (k > 0) out += ", ";
    out += v.label + " (" + formatValue(series, v.value) + ")";
  }
  const int rest = static_cast<int>(worst.size()) - named;
  if (rest > 0)
    out += (named > 0 ? " and " : "") + formatAmount(rest, CounterUnit::Count) + " more";
  return out;
}

NiceAxis niceAxis(double lo, double hi, int max_ticks) {
  max_ticks = std::max(max_ticks, 2);
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    if (lo == 0) return {0, 1, 1, 2, 0};
    const double d = std::fabs(lo) * 0.1;
    lo -= d;
    hi += d;
  }
  const double raw = (hi - lo) / (max_ticks - 1);
  double step = std::pow(10.0, std::floor(std::log10(raw)));
  // 1, 2, 5 × 10^k from below the raw step upwards: the first that covers [lo, hi] in at most
  // max_ticks ticks.
  static constexpr double kMultiples[] = {1, 2, 5};
  for (int k = 0; k < 60; ++k) {
    const double candidate = step * kMultiples[k % 3] * std::pow(10.0, k / 3);
    if (candidate < raw * (1 - 1e-9)) continue;
    const double n_lo = std::floor(lo / candidate + 1e-9);
    const double n_hi = std::ceil(hi / candidate - 1e-9);
    const int ticks = static_cast<int>(n_hi - n_lo) + 1;
    if (ticks > max_ticks) continue;
    return {n_lo * candidate, n_hi * candidate, candidate, ticks, decimalsFor(candidate)};
  }
  // Two ticks around zero (lo < 0 < hi) have no nice step: the range as it is.
  return {lo, hi, hi - lo, 2, decimalsFor(hi - lo)};
}

Histogram histogramOf(const NodeSeries& series, int max_bins, double divisor) {
  Histogram h;
  if (series.values.empty()) return h;
  if (!(divisor > 0)) divisor = 1;
  const auto [lo, hi] =
      std::minmax_element(series.values.begin(), series.values.end(),
                          [](const NodeValue& a, const NodeValue& b) { return a.value < b.value; });
  const NiceAxis axis =
      niceAxis(lo->value / divisor, hi->value / divisor, std::max(max_bins, 1) + 1);
  h.step = axis.step * divisor;
  h.decimals = axis.decimals;
  const int bins = std::max(axis.tick_count - 1, 1);
  h.bins.resize(static_cast<std::size_t>(bins));
  for (int b = 0; b < bins; ++b) {
    h.bins[static_cast<std::size_t>(b)].lo = (axis.lo + b * axis.step) * divisor;
    h.bins[static_cast<std::size_t>(b)].hi = (axis.lo + (b + 1) * axis.step) * divisor;
  }
  for (std::size_t k = 0; k < series.values.size(); ++k) {
    const int b = binOf(h, series.values[k].value);
    if (b < 0) continue;  // not reached: the axis covers every value
    HistogramBin& bin = h.bins[static_cast<std::size_t>(b)];
    ++bin.count;
    if (bin.first < 0) bin.first = static_cast<int>(k);
  }
  for (const int k : outliersWorstFirst(series)) {
    const int b = binOf(h, series.values[static_cast<std::size_t>(k)].value);
    if (b >= 0) h.bins[static_cast<std::size_t>(b)].outliers.push_back(k);
  }
  return h;
}

int binOf(const Histogram& histogram, double value) {
  if (histogram.bins.empty()) return -1;
  const double lo = histogram.bins.front().lo;
  const double hi = histogram.bins.back().hi;
  const double tolerance = histogram.step * 1e-9;
  if (value < lo - tolerance || value > hi + tolerance) return -1;
  const int b = static_cast<int>(std::floor((value - lo) / histogram.step + 1e-9));
  return std::clamp(b, 0, static_cast<int>(histogram.bins.size()) - 1);
}

std::string commonLabelPrefix(const std::vector<std::string>& labels, std::size_t min_length) {
  if (labels.size() < 2) return {};
  std::size_t shortest = labels.front().size();
  std::size_t common = labels.front().size();
  for (const auto& l : labels) {
    shortest = std::min(shortest, l.size());
    std::size_t i = 0;
    while (i < common && i < l.size() && l[i] == labels.front()[i]) ++i;
    common = i;
  }
  // Every label keeps at least one character.
  common = std::min(common, shortest == 0 ? 0 : shortest - 1);
  const std::string& first = labels.front();
  auto cutAt = [&](auto&& good) -> std::size_t {
    for (std::size_t p = common; p >= min_length && p > 0; --p)
      if (good(p)) return p;
    return 0;
  };
  const auto u = [](char c) { return static_cast<unsigned char>(c); };
  std::size_t p = cutAt([&](std::size_t at) { return isSeparator(first[at - 1]); });
  if (p == 0) {
    p = cutAt([&](std::size_t at) {
      return std::isalpha(u(first[at - 1])) && std::isdigit(u(first[at]));
    });
  }
  return first.substr(0, p);
}

std::vector<TimeValue> counterOverTime(const JobData& job, int node_index,
                                       const std::string& counter) {
  std::vector<TimeValue> out;
  if (node_index < 0 || node_index >= static_cast<int>(job.hostnames.size())) return out;
  // Names and times the job keeps per node: no kept snapshot is parsed (a chart click on a
  // 10,000-node job would parse 10,000).
  const std::string& host = job.hostnames[static_cast<std::size_t>(node_index)];
  const double scale = counterScale(counter);
  const int id = job.counter_names.find(counter);
  const int nodes = std::min(job.report.nodes_size(), static_cast<int>(job.hostnames.size()));
  for (int i = 0; id >= 0 && i < nodes && i < static_cast<int>(job.counters.size()); ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (job.hostnames[k] != host) continue;
    // Core's node sum of the totals (nodeCounterSum's Totals), kept when the job was loaded.
    if (const auto* sum = job.counters[k].sum(id); sum != nullptr && sum->has_totals)
      out.push_back({i, job.report.nodes(i).collected_at_unix_ms(), sum->totals * scale});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TimeValue& a, const TimeValue& b) { return a.unix_ms < b.unix_ms; });
  return out;
}

std::vector<std::string> counterNames(const JobData& job) {
  std::set<std::string> names;
  for (const auto& node : job.counters) {
    for (const auto& sum : node.sums) {
      if (sum.on_port) names.insert(job.counter_names.name(sum.id));
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace ibc::console

#include "ibc/console/chart_data.h"

#include "ibc/core/counters.h"
#include "ibc/core/node_metrics.h"

#include <algorithm>
#include <set>

#include "ibc/console/port_counters.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

namespace {

// `counter` over every port of `snap` (a device-level counter once per device); with a
// window, the sum of the deltas of the ports sampled twice. nullopt when no port has it
// readable.
std::optional<double> counterSum(const v1::Snapshot& snap, const std::string& counter,
                                 bool use_window) {
  std::optional<double> total;
  for (const auto& d : snap.devices()) {
    bool device_counted = false;
    for (const auto& p : d.ports()) {
      for (const auto& c : portCounters(snap, d.name(), p.port())) {
        if (c.name != counter || !c.total) continue;
        const bool device_level = c.group == QStringLiteral("device hw_counters");
        if (device_level && device_counted) continue;
        device_counted = device_counted || device_level;
        if (use_window && core::latestWindow(snap) != nullptr) {
          if (!c.delta) continue;
          total = total.value_or(0) + static_cast<double>(*c.delta);
        } else {
          total = total.value_or(0) + static_cast<double>(*c.total);
        }
      }
    }
  }
  return total;
}

}  // namespace

std::vector<NodeValue> busbwPerNode(const JobData& job) {
  std::vector<NodeValue> out;
  for (int i = 0; i < job.report.nodes_size() && i < static_cast<int>(job.snapshots.size()); ++i) {
    std::optional<double> peak;
    for (const auto& t : job.snapshots[static_cast<std::size_t>(i)].nccl_tests()) {
      for (const auto& r : t.parsed().rows())
        peak = std::max(peak.value_or(0), std::max(r.oop_busbw_gbs(), r.ip_busbw_gbs()));
    }
    if (peak) out.push_back({i, job.report.nodes(i).label(), *peak, false});
  }
  std::vector<double> values;
  for (const auto& v : out) values.push_back(v.value);
  const auto marks = core::markBusbwOutliers(values);
  for (std::size_t k = 0; k < out.size(); ++k) out[k].outlier = marks.outlier[k];
  return out;
}

std::vector<NodeValue> counterPerNode(const JobData& job, const std::string& counter) {
  std::vector<NodeValue> out;
  for (int i = 0; i < job.report.nodes_size() && i < static_cast<int>(job.snapshots.size()); ++i) {
    if (auto v = counterSum(job.snapshots[static_cast<std::size_t>(i)], counter, true))
      out.push_back({i, job.report.nodes(i).label(), *v, false});
  }
  std::vector<double> values;
  for (const auto& v : out) values.push_back(v.value);
  const auto marks = core::markCounterOutliers(values);
  for (std::size_t k = 0; k < out.size(); ++k) out[k].outlier = marks.outlier[k];
  return out;
}

std::vector<TimeValue> counterOverTime(const JobData& job, int node_index,
                                       const std::string& counter) {
  std::vector<TimeValue> out;
  if (node_index < 0 || node_index >= static_cast<int>(job.snapshots.size())) return out;
  const std::string host = job.snapshots[static_cast<std::size_t>(node_index)].node().hostname();
  for (std::size_t i = 0; i < job.snapshots.size(); ++i) {
    const auto& s = job.snapshots[i];
    if (s.node().hostname() != host) continue;
    if (auto v = counterSum(s, counter, false))
      out.push_back({static_cast<int>(i), s.node().collected_at_unix_ms(), *v});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TimeValue& a, const TimeValue& b) { return a.unix_ms < b.unix_ms; });
  return out;
}

std::vector<std::string> counterNames(const JobData& job) {
  std::set<std::string> names;
  for (const auto& s : job.snapshots) {
    for (const auto& d : s.devices()) {
      for (const auto& p : d.ports()) {
        core::forEachCounter(
            p, [&](core::CounterGroup, const v1::Counter& c) { names.insert(c.name()); });
      }
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace ibc::console

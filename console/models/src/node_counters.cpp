#include "ibc/console/node_counters.h"

#include <algorithm>
#include <map>

#include "ibc/core/counters.h"
#include "ibc/core/node_metrics.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

int CounterNames::intern(std::string_view name) {
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  const int id = static_cast<int>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(names_.back(), id);
  return id;
}

int CounterNames::find(std::string_view name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

std::optional<double> NodeCounters::Port::amount(int id) const {
  const auto it = std::lower_bound(amounts.begin(), amounts.end(), id,
                                   [](const auto& a, int want) { return a.first < want; });
  if (it == amounts.end() || it->first != id) return std::nullopt;
  return it->second;
}

const NodeCounters::Port* NodeCounters::port(std::string_view device, std::uint32_t number) const {
  for (const auto& p : ports) {
    if (p.port == number && p.device == device) return &p;
  }
  return nullptr;
}

const NodeCounters::Sum* NodeCounters::sum(int id) const {
  const auto it = std::lower_bound(sums.begin(), sums.end(), id,
                                   [](const Sum& s, int want) { return s.id < want; });
  return it != sums.end() && it->id == id ? &*it : nullptr;
}

namespace {

using Counters = google::protobuf::RepeatedPtrField<v1::Counter>;

const v1::Counter* findCounter(const Counters& list, const std::string& name) {
  for (const auto& c : list) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

// One list of a port's counters into `out`: totals, or with a window the deltas to the
// window's later reading of the same name.
void addAmounts(std::vector<std::pair<int, double>>& out, CounterNames& names, const Counters& list,
                const Counters* later, bool windowed) {
  for (const auto& c : list) {
    if (!c.unavailable_reason().empty()) continue;
    double amount = static_cast<double>(c.value());
    if (windowed) {
      // A counter that went backwards was reset or wrapped: no delta rather than a wrong one
      // (nor a total posing as a delta).
      const auto* s = later != nullptr ? findCounter(*later, c.name()) : nullptr;
      if (s == nullptr || !s->unavailable_reason().empty() || s->value() < c.value()) continue;
      amount = static_cast<double>(s->value() - c.value());
    }
    out.emplace_back(names.intern(c.name()), amount);
  }
}

}  // namespace

NodeCounters nodeCountersOf(const v1::Snapshot& snapshot, CounterNames& names) {
  NodeCounters out;
  out.peak_busbw_gbs = core::peakBusbwGbs(snapshot);
  const v1::CounterWindow* window = core::latestWindow(snapshot);
  const bool windowed = window != nullptr && window->interval_seconds() > 0;
  if (windowed) out.interval_seconds = window->interval_seconds();
  std::map<std::pair<std::string_view, std::uint32_t>, const v1::PortCounterSample*> second;
  for (int w = 0; window != nullptr && w < window->ports_size(); ++w) {
    const auto& sample = window->ports(w);
    second.emplace(std::make_pair(std::string_view(sample.device()), sample.port()), &sample);
  }
  for (const auto& d : snapshot.devices()) {
    for (const auto& p : d.ports()) {
      NodeCounters::Port port;
      port.device = d.name();
      port.port = p.port();
      const auto found = second.find({d.name(), p.port()});
      const v1::PortCounterSample* later = found != second.end() ? found->second : nullptr;
      auto& a = port.amounts;
      addAmounts(a, names, p.counters(), later != nullptr ? &later->counters() : nullptr, windowed);
      addAmounts(a, names, p.counters_ext(), later != nullptr ? &later->counters_ext() : nullptr,
                 windowed);
      addAmounts(a, names, p.hw_counters(), later != nullptr ? &later->hw_counters() : nullptr,
                 windowed);
      if (!windowed) addAmounts(a, names, d.hw_counters(), nullptr, false);
      // First of a name wins (counters before counters_ext before hw_counters).
      std::stable_sort(a.begin(), a.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      a.erase(std::unique(a.begin(), a.end(),
                          [](const auto& x, const auto& y) { return x.first == y.first; }),
              a.end());
      a.shrink_to_fit();
      out.ports.push_back(std::move(port));
    }
  }
  for (const auto& [name, s] : core::nodeCounterSums(snapshot)) {
    NodeCounters::Sum sum;
    sum.id = names.intern(name);
    sum.on_port = s.on_port;
    sum.has_moved = s.moved.has_value();
    sum.moved = s.moved.value_or(0);
    sum.has_totals = s.totals.has_value();
    sum.totals = s.totals.value_or(0);
    out.sums.push_back(sum);
  }
  std::sort(out.sums.begin(), out.sums.end(),
            [](const NodeCounters::Sum& a, const NodeCounters::Sum& b) { return a.id < b.id; });
  // Held for every node of the job: no room for growth.
  out.ports.shrink_to_fit();
  out.sums.shrink_to_fit();
  return out;
}

}  // namespace ibc::console

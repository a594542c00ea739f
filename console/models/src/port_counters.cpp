#include "ibc/console/port_counters.h"

#include "ibc/core/counters.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

namespace {

// The walk and the deltas are core's (core/counters.h portCounterValues), the same numbers
// NODE_OUTLIER judges; this only names the groups for the views.
std::vector<PortCounter> named(std::vector<core::PortCounterValue> values) {
  std::vector<PortCounter> out;
  out.reserve(values.size());
  for (auto& v : values) {
    PortCounter r;
    r.name = std::move(v.name);
    r.group = v.device_level ? QStringLiteral("device hw_counters")
                             : QString::fromLatin1(
                                   core::counterGroupName(v.group).data(),
                                   static_cast<qsizetype>(core::counterGroupName(v.group).size()));
    r.total = v.total;
    r.delta = v.delta;
    r.unavailable = std::move(v.unavailable);
    r.trouble = core::classifyCounter(r.name, v.group);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<PortCounter> portCounters(const v1::Snapshot& snap, const std::string& device,
                                      uint32_t port) {
  return named(core::portCounterValues(snap, device, port));
}

std::vector<PortCounter> portCounters(const core::CounterWindowIndex& window,
                                      const v1::RdmaDevice& device, const v1::RdmaPort& port) {
  return named(core::portCounterValues(window, device, port));
}

bool isTrafficCounter(const std::string& name) {
  for (const char* part : {"_data", "_packets", "_pkts", "bytes", "unicast", "multicast"}) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace ibc::console

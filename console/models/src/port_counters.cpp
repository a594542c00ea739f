#include "ibc/console/port_counters.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;
using CounterList = google::protobuf::RepeatedPtrField<v1::Counter>;

namespace {

const v1::Counter* find(const CounterList* list, const std::string& name) {
  if (list == nullptr) return nullptr;
  for (const auto& c : *list) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

void add(std::vector<PortCounter>& out, const CounterList& list, const QString& group,
         const CounterList* second) {
  for (const auto& c : list) {
    PortCounter r;
    r.name = c.name();
    r.group = group;
    if (c.unavailable_reason().empty()) {
      r.total = c.value();
      // A counter that went backwards was reset or wrapped: no delta rather than a wrong one.
      if (const auto* s = find(second, c.name());
          s != nullptr && s->unavailable_reason().empty() && s->value() >= c.value()) {
        r.delta = static_cast<int64_t>(s->value() - c.value());
      }
    } else {
      r.unavailable = c.unavailable_reason();
    }
    out.push_back(std::move(r));
  }
}

}  // namespace

std::vector<PortCounter> portCounters(const v1::Snapshot& snap, const std::string& device,
                                      uint32_t port) {
  std::vector<PortCounter> out;
  const v1::PortCounterSample* sample = nullptr;
  if (snap.has_window()) {
    for (const auto& s : snap.window().ports()) {
      if (s.device() == device && s.port() == port) sample = &s;
    }
  }
  for (const auto& d : snap.devices()) {
    if (d.name() != device) continue;
    for (const auto& p : d.ports()) {
      if (p.port() != port) continue;
      add(out, p.counters(), QStringLiteral("counters"), sample ? &sample->counters() : nullptr);
      add(out, p.counters_ext(), QStringLiteral("counters_ext"),
          sample ? &sample->counters_ext() : nullptr);
      add(out, p.hw_counters(), QStringLiteral("hw_counters"),
          sample ? &sample->hw_counters() : nullptr);
    }
    add(out, d.hw_counters(), QStringLiteral("device hw_counters"), nullptr);
  }
  return out;
}

bool isTrafficCounter(const std::string& name) {
  for (const char* part : {"_data", "_packets", "_pkts", "bytes", "unicast", "multicast"}) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace ibc::console

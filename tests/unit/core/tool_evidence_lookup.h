#pragma once

// Lookups shared by the tool-output tests. Each returns nullptr when absent so a test can
// ASSERT_NE on it and then check values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ibc/core/tool_output.h"

namespace ibc::test {

namespace v1 = ::ibcollect::v1;
using ::ibc::core::ToolEvidence;

inline const v1::RdmaDevice* findDevice(const ToolEvidence& ev, std::string_view name) {
  for (const auto& d : ev.devices) {
    if (d.name() == name) return &d;
  }
  return nullptr;
}

inline const v1::RdmaPort* findPort(const v1::RdmaDevice* dev, uint32_t port) {
  if (dev == nullptr) return nullptr;
  for (const auto& p : dev->ports()) {
    if (p.port() == port) return &p;
  }
  return nullptr;
}

inline const v1::NetDevice* findNetdev(const ToolEvidence& ev, std::string_view name) {
  for (const auto& n : ev.netdevs) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

template <typename Counters>
const v1::Counter* findCounter(const Counters& counters, std::string_view name) {
  for (const auto& c : counters) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

// Value of an available counter; nullopt when missing or unavailable.
template <typename Counters>
std::optional<uint64_t> valueOf(const Counters& counters, std::string_view name) {
  const v1::Counter* c = findCounter(counters, name);
  if (c == nullptr || !c->unavailable_reason().empty()) return std::nullopt;
  return c->value();
}

inline std::string kindsOf(const ToolEvidence& ev) {
  std::string out;
  for (const auto& k : ev.kinds) {
    if (!out.empty()) out += ',';
    out += k;
  }
  return out;
}

}  // namespace ibc::test

#pragma once

// A SYNTHETIC counter window for rule and comparison tests, built in memory on a snapshot.

#include <cstdint>
#include <string>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::test {

// A 10 s window on the first device's first port (mlx5_0/1) of `s`: its counters as they
// are, except `moved` (when named), which ends the window at `to`.
inline void addCounterWindow(::ibcollect::v1::Snapshot& s, const std::string& moved = "",
                             std::uint64_t to = 0) {
  auto* w = s.add_window();
  w->set_interval_seconds(10);
  auto* p = w->add_ports();
  p->set_device("mlx5_0");
  p->set_port(1);
  for (const auto& c : s.devices(0).ports(0).counters()) {
    auto* end = p->add_counters();
    *end = c;
    if (!moved.empty() && c.name() == moved) end->set_value(to);
  }
}

}  // namespace ibc::test

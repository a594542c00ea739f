#pragma once

// One walk over a port's counters for every model (grid, node, diff, charts): counters,
// counters_ext and hw_counters of the port, then the device's hw_counters, each with its
// total and, when the snapshot sampled a window, its delta over that window. The walk and
// the numbers are core's (core/counters.h portCounterValues), which NODE_OUTLIER uses too.

#include <QString>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibc/core/counters.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::console {

struct PortCounter {
  std::string name;
  QString group;                  // "counters", "counters_ext", "hw_counters", "device hw_counters"
  std::optional<uint64_t> total;  // unset when unavailable
  std::optional<int64_t> delta;   // over the window; unset without a second readable sample
  std::string unavailable;        // the reason when there is no value
  // What the counter means for diagnosis (core's table): None for traffic and configuration.
  core::CounterClass trouble = core::CounterClass::None;

  // What "how much" means for comparisons: the window delta when there is one, else the total.
  std::optional<double> amount() const {
    if (delta) return static_cast<double>(*delta);
    if (total) return static_cast<double>(*total);
    return std::nullopt;
  }
};

std::vector<PortCounter> portCounters(const ::ibcollect::v1::Snapshot& snapshot,
                                      const std::string& device, uint32_t port);
// The same for a port in hand, with the snapshot's window indexed once by the caller: what a
// walk over every port of a node uses (the lookup above is linear in the node's ports).
std::vector<PortCounter> portCounters(const core::CounterWindowIndex& window,
                                      const ::ibcollect::v1::RdmaDevice& device,
                                      const ::ibcollect::v1::RdmaPort& port);

// True for counters that count traffic rather than trouble (data, packets, bytes): more
// is not worse.
bool isTrafficCounter(const std::string& name);

}  // namespace ibc::console

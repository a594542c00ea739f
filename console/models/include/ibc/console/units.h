#pragma once

// Counters and rates in their units on every page (issue 22): packets, bytes with binary
// prefixes, Gb/s. Which unit a counter counts is core's (core::counterUnit, counterScale).

#include <string>

#include "ibc/core/node_metrics.h"

namespace ibc::console {

using core::counterScale;
using core::CounterUnit;
using core::counterUnit;

// "12,345 packets", "1.50 GiB" (binary prefixes), "812 bytes", "42".
std::string formatAmount(double value, CounterUnit unit);
// A counter's raw count in its unit: port_xmit_data 1000 -> "3.91 KiB" (4,000 bytes).
std::string formatCounter(std::string_view name, double count);
// A counter's rate: "12.5 MiB/s", "3 packets/s", "0.4/s".
std::string formatCounterRate(std::string_view name, double count_per_second);

// Where an axis of `unit` puts its numbers for values up to `largest`: bytes in the binary
// prefix that keeps them below 1024 ({1024^3, "GiB"}); other units as they are.
struct UnitScale {
  double divisor = 1;
  std::string suffix;  // "GiB", "packets", "" for a plain count
};
UnitScale unitScale(CounterUnit unit, double largest);

}  // namespace ibc::console

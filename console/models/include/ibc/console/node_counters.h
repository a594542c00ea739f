#pragma once

// What the console keeps of a node's counters and nccl-tests peak (issue 22). A job's snapshots are
// kept slim (core::slimSnapshot: a parsed snapshot's counters are ~4x its file), so what the grid,
// the charts and the filters read of every node is taken from the whole snapshot while it is
// loaded, in a compact form: per port, each counter's amount as the grid shows and filters it,
// and per counter core's node sums (core::nodeCounterSums) as the charts judge them. Pages that
// show one node's counters whole (node, diff) read its snapshot again (readFullSnapshot).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::console {

// Counter names interned once per job: a node keeps ids, not names.
class CounterNames {
 public:
  int intern(std::string_view name);
  int find(std::string_view name) const;  // -1 when no node has it
  const std::string& name(int id) const { return names_[static_cast<std::size_t>(id)]; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::unordered_map<std::string, int, Hash, std::equal_to<>> ids_;
};

struct NodeCounters {
  // Core's peak nccl-tests bus bandwidth of the node (core::peakBusbwGbs), GB/s; unset without
  // one. The job keeps no nccl-tests rows.
  std::optional<double> peak_busbw_gbs;
  // The latest window's interval; 0 without a window (amounts are then totals).
  double interval_seconds = 0;
  struct Port {
    std::string device;
    std::uint32_t port = 0;
    // (counter id, amount) sorted by id, one per name (counters before counters_ext before
    // hw_counters; without a window the device's own hw_counters too): the window's delta when
    // there is one, else the total. Counters unreadable, or with a window not read twice or gone
    // backwards (reset or wrapped), are absent rather than wrong.
    std::vector<std::pair<int, double>> amounts;
    std::optional<double> amount(int id) const;
  };
  std::vector<Port> ports;  // in the snapshot's order
  // Core's node sums per counter (core::nodeCounterSums), sorted by id.
  struct Sum {
    int id = 0;
    bool on_port = false;  // a port's counter (not only a device's own hw_counter)
    bool has_moved = false;
    bool has_totals = false;
    double moved = 0;
    double totals = 0;
  };
  std::vector<Sum> sums;

  const Port* port(std::string_view device, std::uint32_t port) const;
  const Sum* sum(int id) const;
};

// The counters of `snapshot` (a whole one, as read from its file), names interned in `names`.
NodeCounters nodeCountersOf(const ::ibcollect::v1::Snapshot& snapshot, CounterNames& names);

}  // namespace ibc::console

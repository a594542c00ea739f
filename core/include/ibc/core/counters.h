#pragma once

// What a counter means for diagnosis, and the deltas of a `--window` collection.
// Counter names are the kernel's (sysfs counters/, hw_counters/, counters_ext/), ethtool -S
// names of mlx5/mlx4 (modern `*_phy` and legacy names) and perfquery names mapped to
// the kernel's by the tool-output parser.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "ibc/core/sysfs_values.h"

namespace ibc::core {

enum class CounterClass {
  None,            // traffic, configuration or unknown: not judged
  PhyError,        // symbol/CRC errors, link error recovery, link integrity, rcv errors
  LinkDowned,      // link_downed, link_down_events_phy
  BufferOverrun,   // excessive_buffer_overrun_errors, out_of_buffer, rx_discards_phy
  XmitDiscard,     // port_xmit_discards, tx_discards_phy
  Congestion,      // port_xmit_wait, CNP/ECN, pause frames
  TransportRetry,  // ack timeouts, sequence errors, RNR retries, RoCE retransmits
  CqeError,        // completion errors (root events)
  CqeFlush,        // flush completions: secondary to a CqeError, never a root cause
  PcieError,       // PCIe signal integrity events seen by the NIC
};

CounterClass classifyCounter(std::string_view name, CounterSet set);
std::string_view counterClassName(CounterClass c);

// Where a counter lives in a snapshot; `group` is "counters", "hw_counters",
// "counters_ext", "ethtool" or "stats".
struct CounterKey {
  std::string device;  // RDMA device, or netdev name for ethtool/stats
  uint32_t port = 0;   // 0 for device-level and netdev counters
  std::string group;
  std::string name;
  bool operator<(const CounterKey& o) const {
    return std::tie(device, port, group, name) < std::tie(o.device, o.port, o.group, o.name);
  }
};

// The second sample of a window, indexed for lookups while walking the first sample.
class CounterWindowIndex {
 public:
  explicit CounterWindowIndex(const v1::Snapshot& snapshot);
  bool present() const { return present_; }
  double intervalSeconds() const { return interval_s_; }
  // Value in the second sample; nullopt when absent there or unavailable.
  std::optional<uint64_t> after(const CounterKey& key) const;
  std::optional<uint64_t> carrierChangesAfter(const std::string& netdev) const;

 private:
  bool present_ = false;
  double interval_s_ = 0;
  std::map<CounterKey, uint64_t> values_;
  std::map<std::string, uint64_t> carrier_changes_;
};

struct CounterDelta {
  uint64_t before = 0;
  uint64_t after = 0;
  // after - before; negative when the counter was reset (or wrapped) in the window.
  int64_t delta = 0;
};
std::optional<CounterDelta> counterDelta(const CounterWindowIndex& window, const CounterKey& key,
                                         const v1::Counter& first);

}  // namespace ibc::core

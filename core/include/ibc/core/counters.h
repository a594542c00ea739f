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
#include <vector>

#include "ibc/core/sysfs_values.h"
#include "ibcollect/v1/snapshot.pb.h"

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

// Where a counter lives in a snapshot (a device's own hw_counters: port 0).
struct CounterKey {
  std::string device;  // RDMA device, or netdev name for ethtool/stats
  uint32_t port = 0;   // 0 for device-level and netdev counters
  CounterGroup group = CounterGroup::PortCounters;
  std::string name;
  bool operator<(const CounterKey& o) const {
    return std::tie(device, port, group, name) < std::tie(o.device, o.port, o.group, o.name);
  }
};

// The one walk over the counters of a port, a window sample, a netdev: calls
// `fn(CounterGroup, const v1::Counter&)` for every counter, unavailable ones included, in a
// fixed order — counters, counters_ext, hw_counters; for netdevs ethtool, then stats.
// Rules, cross-node comparison, the window index and the console all walk through these,
// so none of them forgets a group.
template <typename Fn>
void forEachCounter(const v1::RdmaPort& port, Fn&& fn) {
  for (const auto& c : port.counters()) fn(CounterGroup::PortCounters, c);
  for (const auto& c : port.counters_ext()) fn(CounterGroup::PortCountersExt, c);
  for (const auto& c : port.hw_counters()) fn(CounterGroup::HwCounters, c);
}
template <typename Fn>
void forEachCounter(const v1::PortCounterSample& sample, Fn&& fn) {
  for (const auto& c : sample.counters()) fn(CounterGroup::PortCounters, c);
  for (const auto& c : sample.counters_ext()) fn(CounterGroup::PortCountersExt, c);
  for (const auto& c : sample.hw_counters()) fn(CounterGroup::HwCounters, c);
}
template <typename Fn>
void forEachCounter(const v1::NetDevice& netdev, Fn&& fn) {
  for (const auto& c : netdev.ethtool()) fn(CounterGroup::Ethtool, c);
  for (const auto& c : netdev.stats()) fn(CounterGroup::NetdevStats, c);
}
template <typename Fn>
void forEachCounter(const v1::NetdevCounterSample& sample, Fn&& fn) {
  for (const auto& c : sample.ethtool()) fn(CounterGroup::Ethtool, c);
  for (const auto& c : sample.stats()) fn(CounterGroup::NetdevStats, c);
}
// A device's own hw_counters (port 0 in keys and window samples).
template <typename Fn>
void forEachDeviceCounter(const v1::RdmaDevice& device, Fn&& fn) {
  for (const auto& c : device.hw_counters()) fn(CounterGroup::HwCounters, c);
}

// The latest sample of a `--window` collection with a positive interval (the window's
// deltas are latest − first), nullptr without one.
const v1::CounterWindow* latestWindow(const v1::Snapshot& snapshot);

// The latest sample of a window, indexed for lookups while walking the first sample.
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

// One counter of a port as every comparison sees it (NODE_OUTLIER, the console's grid,
// node page, diff and charts): its total and its delta over the window.
struct PortCounterValue {
  CounterGroup group = CounterGroup::PortCounters;
  bool device_level = false;  // the device's own hw_counters, not the port's
  std::string name;
  // The latest reading (the window's second sample when there is one); unset when
  // unavailable.
  std::optional<uint64_t> total;
  // after - before over the window; unset without a readable second sample, or when the
  // counter went backwards (reset or wrapped: `reset` is set) rather than a wrong value.
  std::optional<int64_t> delta;
  bool reset = false;
  std::string unavailable;  // the reason when there is no value
  // "How much" for comparisons: the window delta when there is one, else the total.
  std::optional<double> amount() const {
    if (delta) return static_cast<double>(*delta);
    if (total) return static_cast<double>(*total);
    return std::nullopt;
  }
};

// The counters of one port in forEachCounter order, then the device's own hw_counters.
std::vector<PortCounterValue> portCounterValues(const CounterWindowIndex& window,
                                                const v1::RdmaDevice& device,
                                                const v1::RdmaPort& port);
// The same by name; empty when the snapshot has no such port.
std::vector<PortCounterValue> portCounterValues(const v1::Snapshot& snapshot,
                                                const std::string& device, uint32_t port);

}  // namespace ibc::core

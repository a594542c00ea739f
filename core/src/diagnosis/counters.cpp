#include "ibc/core/counters.h"

#include <array>

#include "ibc/core/text.h"

namespace ibc::core {

namespace {

struct Entry {
  std::string_view name;
  CounterClass cls;
};

// IB PMA counters (sysfs counters/ and counters_ext/ use the same names).
constexpr std::array<Entry, 12> kIbCounters{{
    {"symbol_error", CounterClass::PhyError},
    {"link_error_recovery", CounterClass::PhyError},
    {"local_link_integrity_errors", CounterClass::PhyError},
    {"port_rcv_errors", CounterClass::PhyError},
    {"port_rcv_remote_physical_errors", CounterClass::PhyError},
    {"link_downed", CounterClass::LinkDowned},
    {"excessive_buffer_overrun_errors", CounterClass::BufferOverrun},
    {"port_xmit_discards", CounterClass::XmitDiscard},
    {"port_xmit_wait", CounterClass::Congestion},
    {"port_xmit_wait_64", CounterClass::Congestion},
    {"port_rcv_switch_relay_errors", CounterClass::None},  // switches only
    {"VL15_dropped", CounterClass::None},                  // SMP drops; not data path
}};

// mlx5/mlx4 hw_counters (Documentation/.../mlx5 counters, rdma-core docs).
constexpr std::array<Entry, 27> kHwCounters{{
    {"out_of_buffer", CounterClass::BufferOverrun},
    {"out_of_sequence", CounterClass::TransportRetry},
    {"packet_seq_err", CounterClass::TransportRetry},
    {"implied_nak_seq_err", CounterClass::TransportRetry},
    {"local_ack_timeout_err", CounterClass::TransportRetry},
    {"rnr_nak_retry_err", CounterClass::TransportRetry},
    {"duplicate_request", CounterClass::TransportRetry},
    {"roce_adp_retrans", CounterClass::TransportRetry},
    {"roce_adp_retrans_to", CounterClass::TransportRetry},
    {"roce_slow_restart", CounterClass::TransportRetry},
    {"roce_slow_restart_trans", CounterClass::TransportRetry},
    {"req_transport_retries_exceeded", CounterClass::TransportRetry},
    {"req_rnr_retries_exceeded", CounterClass::TransportRetry},
    {"req_cqe_error", CounterClass::CqeError},
    {"resp_cqe_error", CounterClass::CqeError},
    {"resp_local_length_error", CounterClass::CqeError},
    {"req_remote_access_errors", CounterClass::CqeError},
    {"req_remote_invalid_request", CounterClass::CqeError},
    {"resp_remote_access_errors", CounterClass::CqeError},
    {"rx_icrc_encapsulated", CounterClass::PhyError},
    {"req_cqe_flush_error", CounterClass::CqeFlush},
    {"resp_cqe_flush_error", CounterClass::CqeFlush},
    {"np_cnp_sent", CounterClass::Congestion},
    {"np_ecn_marked_roce_packets", CounterClass::Congestion},
    {"rp_cnp_handled", CounterClass::Congestion},
    {"rp_cnp_ignored", CounterClass::Congestion},
    {"roce_slow_restart_cnps", CounterClass::Congestion},
}};

// ethtool -S of mlx5 (modern *_phy names) and mlx4/old mlx5 (legacy names).
constexpr std::array<Entry, 22> kEthtool{{
    {"rx_crc_errors_phy", CounterClass::PhyError},
    {"rx_symbol_err_phy", CounterClass::PhyError},
    {"rx_pcs_symbol_err_phy", CounterClass::PhyError},
    {"rx_in_range_len_errors_phy", CounterClass::PhyError},
    {"rx_undersize_pkts_phy", CounterClass::PhyError},
    {"rx_fragments_phy", CounterClass::PhyError},
    {"rx_jabbers_phy", CounterClass::PhyError},
    {"crc_align_errors", CounterClass::PhyError},
    {"symbol_err", CounterClass::PhyError},
    {"link_down_events_phy", CounterClass::LinkDowned},
    {"rx_discards_phy", CounterClass::BufferOverrun},
    {"rx_out_of_buffer", CounterClass::BufferOverrun},
    {"in_discards", CounterClass::BufferOverrun},
    {"rx_buffer_passed_thres_phy", CounterClass::Congestion},
    {"tx_discards_phy", CounterClass::XmitDiscard},
    {"tx_errors_phy", CounterClass::XmitDiscard},
    {"out_discards", CounterClass::XmitDiscard},
    {"rx_pause_ctrl_phy", CounterClass::Congestion},
    {"tx_pause_ctrl_phy", CounterClass::Congestion},
    {"rx_pci_signal_integrity", CounterClass::PcieError},
    {"tx_pci_signal_integrity", CounterClass::PcieError},
    {"pause_ctrl_rx", CounterClass::Congestion},
}};

template <std::size_t N>
std::optional<CounterClass> lookup(const std::array<Entry, N>& table, std::string_view name) {
  for (const auto& e : table) {
    if (e.name == name) return e.cls;
  }
  return std::nullopt;
}

}  // namespace

CounterClass classifyCounter(std::string_view name, CounterSet set) {
  switch (set) {
    case CounterSet::PortCounters:
    case CounterSet::PortCountersExt: {
      if (auto c = lookup(kIbCounters, name)) return *c;
      // counters_ext names carry a _64 suffix on mlx4.
      if (endsWith(name, "_64")) {
        if (auto c = lookup(kIbCounters, name.substr(0, name.size() - 3))) return *c;
      }
      // Kernels that expose hw counters under counters/ (and perfquery pastes of them).
      if (auto c = lookup(kHwCounters, name)) return *c;
      return CounterClass::None;
    }
    case CounterSet::HwCounters:
      if (auto c = lookup(kHwCounters, name)) return *c;
      return CounterClass::None;
    case CounterSet::Ethtool: {
      if (auto c = lookup(kEthtool, name)) return *c;
      // Per-priority pause: rx_prio3_pause, tx_prio3_pause (not *_duration/_transition).
      if ((startsWith(name, "rx_prio") || startsWith(name, "tx_prio")) &&
          endsWith(name, "_pause")) {
        return CounterClass::Congestion;
      }
      if (name == "rx_global_pause" || name == "tx_global_pause") return CounterClass::Congestion;
      if (startsWith(name, "tx_pause_storm")) return CounterClass::Congestion;
      return CounterClass::None;
    }
    case CounterSet::NetdevStats:
      if (name == "rx_crc_errors") return CounterClass::PhyError;
      return CounterClass::None;
  }
  return CounterClass::None;
}

std::string_view counterClassName(CounterClass c) {
  switch (c) {
    case CounterClass::None: return "none";
    case CounterClass::PhyError: return "physical-layer errors";
    case CounterClass::LinkDowned: return "link down events";
    case CounterClass::BufferOverrun: return "receive buffer overruns";
    case CounterClass::XmitDiscard: return "transmit discards";
    case CounterClass::Congestion: return "congestion";
    case CounterClass::TransportRetry: return "transport retries";
    case CounterClass::CqeError: return "completion errors";
    case CounterClass::CqeFlush: return "flushed completions";
    case CounterClass::PcieError: return "PCIe errors";
  }
  return "none";
}

const v1::CounterWindow* latestWindow(const v1::Snapshot& snapshot) {
  for (int i = snapshot.window_size() - 1; i >= 0; --i) {
    if (snapshot.window(i).interval_seconds() > 0) return &snapshot.window(i);
  }
  return nullptr;
}

CounterWindowIndex::CounterWindowIndex(const v1::Snapshot& snapshot) {
  const v1::CounterWindow* window = latestWindow(snapshot);
  if (window == nullptr) return;
  present_ = true;
  interval_s_ = window->interval_seconds();
  const auto add = [&](const std::string& dev, uint32_t port) {
    return [&, dev, port](CounterGroup group, const v1::Counter& c) {
      if (c.unavailable_reason().empty())
        values_[CounterKey{dev, port, group, c.name()}] = c.value();
    };
  };
  for (const auto& p : window->ports()) forEachCounter(p, add(p.device(), p.port()));
  for (const auto& n : window->netdevs()) {
    forEachCounter(n, add(n.name(), 0));
    if (n.has_carrier_changes()) carrier_changes_[n.name()] = n.carrier_changes();
  }
}

std::optional<uint64_t> CounterWindowIndex::after(const CounterKey& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint64_t> CounterWindowIndex::carrierChangesAfter(const std::string& netdev) const {
  auto it = carrier_changes_.find(netdev);
  if (it == carrier_changes_.end()) return std::nullopt;
  return it->second;
}

std::optional<CounterDelta> counterDelta(const CounterWindowIndex& window, const CounterKey& key,
                                         const v1::Counter& first) {
  if (!window.present() || !first.unavailable_reason().empty()) return std::nullopt;
  auto after = window.after(key);
  if (!after) return std::nullopt;
  CounterDelta d;
  d.before = first.value();
  d.after = *after;
  d.delta = static_cast<int64_t>(*after - first.value());
  return d;
}

namespace {

PortCounterValue valueOf(const CounterWindowIndex& window, const CounterKey& key,
                         const v1::Counter& c) {
  PortCounterValue v;
  v.group = key.group;
  v.device_level = key.port == 0;
  v.name = c.name();
  if (!c.unavailable_reason().empty()) {
    v.unavailable = c.unavailable_reason();
    return v;
  }
  v.total = c.value();
  if (const auto d = counterDelta(window, key, c)) {
    // The total is the latest reading: a counter that read 12 and then 480 is "480, +468",
    // never "12, +468" (the first sample is history the delta already accounts for).
    v.total = d->after;
    if (d->after >= d->before) {
      v.delta = d->delta;
    } else {
      v.reset = true;
    }
  }
  return v;
}

}  // namespace

std::vector<PortCounterValue> portCounterValues(const CounterWindowIndex& window,
                                                const v1::RdmaDevice& device,
                                                const v1::RdmaPort& port) {
  std::vector<PortCounterValue> out;
  out.reserve(static_cast<std::size_t>(port.counters_size() + port.counters_ext_size() +
                                       port.hw_counters_size() + device.hw_counters_size()));
  forEachCounter(port, [&](CounterGroup g, const v1::Counter& c) {
    out.push_back(valueOf(window, CounterKey{device.name(), port.port(), g, c.name()}, c));
  });
  forEachDeviceCounter(device, [&](CounterGroup g, const v1::Counter& c) {
    out.push_back(valueOf(window, CounterKey{device.name(), 0, g, c.name()}, c));
  });
  return out;
}

std::vector<PortCounterValue> portCounterValues(const v1::Snapshot& snapshot,
                                                const std::string& device, uint32_t port) {
  const CounterWindowIndex window(snapshot);
  for (const auto& d : snapshot.devices()) {
    if (d.name() != device) continue;
    for (const auto& p : d.ports()) {
      if (p.port() == port) return portCounterValues(window, d, p);
    }
  }
  return {};
}

}  // namespace ibc::core

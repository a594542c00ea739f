// Pasted tool output → snapshot evidence, so the same rules judge pasted and collected data.

#include <algorithm>

#include "ibc/agent/analyze.h"
#include "ibc/core/text.h"

namespace ibc::agent {

namespace {

// Rewrites a listed sysfs path to where the probes look: any ".../infiniband/<dev>/rest"
// (class or device view) → /sys/class/infiniband/<dev>/rest; ".../net/<if>/rest" →
// /sys/class/net/<if>/rest. Other paths are kept as listed.
std::string canonicalSysfsPath(std::string_view path) {
  for (const std::string_view marker :
       {std::string_view("/infiniband/"), std::string_view("/net/")}) {
    const auto pos = path.rfind(marker);
    if (pos == std::string_view::npos) continue;
    // "/sys/class/net/eth0/..." and "/sys/bus/pci/devices/X/net/eth0/..." alike.
    std::string_view rest = path.substr(pos + marker.size());
    if (rest.empty()) continue;
    return std::string(marker == "/net/" ? "/sys/class/net/" : "/sys/class/infiniband/") +
           std::string(rest);
  }
  return std::string(path);
}

void mergePort(v1::RdmaPort& into, const v1::RdmaPort& from) {
  // A paste without a state (perfquery, a counters listing) must not create an empty one:
  // an empty state means "expected and not read" (PORT_STATE_UNKNOWN).
  if (from.has_state() && into.state().raw().empty() && into.state().name().empty())
    *into.mutable_state() = from.state();
  if (from.has_phys_state() && into.phys_state().raw().empty() &&
      into.phys_state().name().empty()) {
    *into.mutable_phys_state() = from.phys_state();
  }
  if (into.rate_raw().empty()) {
    into.set_rate_raw(from.rate_raw());
    into.set_rate_gbps(from.rate_gbps());
    into.set_width_lanes(from.width_lanes());
    into.set_speed_name(from.speed_name());
  }
  if (into.link_layer().empty()) into.set_link_layer(from.link_layer());
  if (!into.has_lid() && from.has_lid()) into.set_lid(from.lid());
  if (!into.has_sm_lid() && from.has_sm_lid()) into.set_sm_lid(from.sm_lid());
  if (into.port_guid().empty()) into.set_port_guid(from.port_guid());
  if (!into.has_active_mtu() && from.has_active_mtu()) into.set_active_mtu(from.active_mtu());
  auto mergeCounters = [](auto* into_list, const auto& from_list) {
    for (const auto& c : from_list) {
      const bool present = std::any_of(into_list->begin(), into_list->end(),
                                       [&](const v1::Counter& x) { return x.name() == c.name(); });
      if (!present) *into_list->Add() = c;
    }
  };
  mergeCounters(into.mutable_counters(), from.counters());
  mergeCounters(into.mutable_hw_counters(), from.hw_counters());
  mergeCounters(into.mutable_counters_ext(), from.counters_ext());
  for (const auto& g : from.gids()) {
    if (std::find(into.gids().begin(), into.gids().end(), g) == into.gids().end()) into.add_gids(g);
  }
  for (const auto& n : from.netdevs()) {
    if (std::find(into.netdevs().begin(), into.netdevs().end(), n) == into.netdevs().end())
      into.add_netdevs(n);
  }
}

void mergeDevice(v1::RdmaDevice& into, const v1::RdmaDevice& from) {
  auto fill = [](std::string* dst, const std::string& src) {
    if (dst->empty()) *dst = src;
  };
  fill(into.mutable_fw_ver(), from.fw_ver());
  fill(into.mutable_board_id(), from.board_id());
  fill(into.mutable_hca_type(), from.hca_type());
  fill(into.mutable_node_guid(), from.node_guid());
  fill(into.mutable_sys_image_guid(), from.sys_image_guid());
  fill(into.mutable_node_desc(), from.node_desc());
  fill(into.mutable_missing_reason(), from.missing_reason());
  if (!into.is_virtual_function() && from.is_virtual_function()) {
    into.set_is_virtual_function(true);
    into.set_virtual_function_evidence(from.virtual_function_evidence());
  }
  if (!into.has_pci() && from.has_pci()) *into.mutable_pci() = from.pci();
  for (const auto& p : from.ports()) {
    auto it = std::find_if(into.mutable_ports()->begin(), into.mutable_ports()->end(),
                           [&](const v1::RdmaPort& x) { return x.port() == p.port(); });
    if (it == into.mutable_ports()->end()) {
      *into.add_ports() = p;
    } else {
      mergePort(*it, p);
    }
  }
}

void mergeNetdev(v1::NetDevice& into, const v1::NetDevice& from) {
  if (into.rdma_device().empty()) {
    into.set_rdma_device(from.rdma_device());
    into.set_rdma_port(from.rdma_port());
  }
  if (!into.has_mtu() && from.has_mtu()) into.set_mtu(from.mtu());
  if (into.operstate().empty()) into.set_operstate(from.operstate());
  if (!into.has_admin_up() && from.has_admin_up()) into.set_admin_up(from.admin_up());
  if (into.type() == 0) into.set_type(from.type());
  if (into.address().empty()) into.set_address(from.address());
  if (into.qdisc().empty()) into.set_qdisc(from.qdisc());
  if (into.flags_raw().empty()) into.set_flags_raw(from.flags_raw());
  if (into.stats_size() == 0) *into.mutable_stats() = from.stats();
  if (into.ethtool_size() == 0) *into.mutable_ethtool() = from.ethtool();
}

}  // namespace

void mergeToolEvidence(const core::ToolEvidence& evidence, const std::string& source,
                       std::string_view raw, const CollectLimits& limits, v1::Snapshot& snap) {
  std::string kinds;
  for (const auto& k : evidence.kinds) kinds += (kinds.empty() ? "" : ",") + k;

  std::vector<v1::RdmaDevice> devices = evidence.devices;
  std::vector<v1::NetDevice> netdevs = evidence.netdevs;
  if (!evidence.sysfs_entries.empty()) {
    MemoryFilesystem mem;
    for (const auto& e : evidence.sysfs_entries)
      mem.addFile(canonicalSysfsPath(e.path), e.value + "\n");
    v1::Snapshot listed;
    SysfsLayout layout;
    collectRdmaDevices(mem, limits, listed, layout);
    collectNetdevs(mem, limits, listed, layout);
    for (auto& d : *listed.mutable_devices()) {
      // Nor is a state the listing does not show "expected and not read".
      for (auto& p : *d.mutable_ports()) {
        if (p.state().raw().empty() && p.state().name().empty()) p.clear_state();
      }
      devices.push_back(std::move(d));
    }
    for (auto& n : *listed.mutable_netdevs()) netdevs.push_back(std::move(n));
    // A listing holds what the customer chose to grep; absent attributes are not errors.
    for (const auto& e : listed.probe_errors()) {
      if (e.error() != core::errorCodeName(ErrorCode::NotFound)) *snap.add_probe_errors() = e;
    }
  }
  for (auto& d : devices) {
    auto it = std::find_if(snap.mutable_devices()->begin(), snap.mutable_devices()->end(),
                           [&](const v1::RdmaDevice& x) { return x.name() == d.name(); });
    if (it == snap.mutable_devices()->end()) {
      d.set_seen_in(core::printable(source + " (" + kinds + ")"));
      *snap.add_devices() = std::move(d);
    } else {
      mergeDevice(*it, d);
    }
  }
  for (auto& n : netdevs) {
    auto it = std::find_if(snap.mutable_netdevs()->begin(), snap.mutable_netdevs()->end(),
                           [&](const v1::NetDevice& x) { return x.name() == n.name(); });
    if (it == snap.mutable_netdevs()->end()) {
      *snap.add_netdevs() = std::move(n);
    } else {
      mergeNetdev(*it, n);
    }
  }
  // ethtool -i names the firmware of the PCI function behind a netdev.
  for (const auto& info : evidence.driver_infos) {
    for (auto& d : *snap.mutable_devices()) {
      if (!info.bus_info.empty() && d.pci().address() == info.bus_info && d.fw_ver().empty()) {
        d.set_fw_ver(core::printable(info.firmware_version));
      }
    }
  }
  v1::ToolOutput* t = snap.add_tool_outputs();
  t->set_source(core::printable(source));
  for (const auto& k : evidence.kinds) t->add_kinds(k);
  t->set_lines_total(evidence.lines_total);
  t->set_lines_unrecognised(evidence.lines_unrecognised);
  t->set_reported_no_rdma_devices(evidence.no_rdma_devices);
  for (const auto& e : evidence.tool_errors) t->add_tool_errors(core::printable(e));
  const std::size_t keep = std::min(raw.size(), limits.artifact_raw_kept);
  t->set_raw(core::sanitizeUtf8(raw.substr(0, keep)));
  t->set_raw_truncated(keep < raw.size());
}

}  // namespace ibc::agent

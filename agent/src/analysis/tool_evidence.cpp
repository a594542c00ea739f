// Pasted tool output → snapshot evidence, so the same rules judge pasted and collected data.

#include <algorithm>

#include "ibc/agent/analyze.h"
#include "ibc/core/evidence_merge.h"
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

}  // namespace

void mergeToolEvidence(const core::ToolEvidence& evidence, const std::string& source,
                       std::string_view raw, const CollectLimits& limits, v1::Snapshot& snap,
                       std::vector<core::EvidenceConflict>* conflicts) {
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
  // One merge for every source (core/evidence_merge.h): what the paste adds is kept, what
  // it contradicts is returned as a conflict with both values.
  v1::Snapshot from;
  for (auto& d : devices) {
    const bool known = std::any_of(snap.devices().begin(), snap.devices().end(),
                                   [&](const v1::RdmaDevice& x) { return x.name() == d.name(); });
    if (!known) d.set_seen_in(core::printable(source + " (" + kinds + ")"));
    *from.add_devices() = std::move(d);
  }
  for (auto& n : netdevs) *from.add_netdevs() = std::move(n);
  auto found = core::mergeEvidence(snap, from);
  if (conflicts != nullptr) {
    for (auto& c : found) conflicts->push_back(std::move(c));
  }
  // ethtool -i names the firmware of the PCI function behind a netdev.
  for (const auto& info : evidence.driver_infos) {
    for (auto& d : *snap.mutable_devices()) {
      if (!info.bus_info.empty() && d.pci().address() == info.bus_info && d.fw_ver().empty()) {
        d.set_fw_ver(core::printable(info.firmware_version));
      }
    }
  }
  for (const auto& run : evidence.rdma_tests) {
    v1::RdmaTest* r = snap.add_rdma_tests();
    *r = run;
    r->set_source(core::printable(source));
  }
  for (const auto& topo : evidence.gpu_topologies) {
    // The first matrix given is the node's; a second is said by its ToolOutput kinds.
    if (snap.has_gpu_topology()) break;
    *snap.mutable_gpu_topology() = topo;
    snap.mutable_gpu_topology()->set_source(core::printable(source));
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

// sysfs probes: RDMA devices, ports, counters, PCI identity, netdevs.
//
// Devices are found under /sys/class/infiniband; trees that only hold the PCI device view
// (/sys/bus/pci/devices/<BDF>/infiniband/<dev>, as health-check dumps store them) are
// read from there. Every attribute read is bounded; one unreadable file never aborts the
// snapshot (node_exporter issues #966 and #3265 crashed on exactly this).

#include <algorithm>
#include <optional>

#include "ibc/agent/collect.h"
#include "ibc/core/net_addresses.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "ibc/core/virtual_function.h"

namespace ibc::agent {

namespace {

using core::CounterSet;

std::string basename(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

void addProbeError(v1::Snapshot& snap, std::string_view probe, std::string_view path,
                   const Error& e) {
  auto* pe = snap.add_probe_errors();
  pe->set_probe(std::string(probe));
  pe->set_path(std::string(path));
  pe->set_error(std::string(core::errorCodeName(e.code)));
  pe->set_message(core::printable(e.message));
}

// Reads sysfs attributes, recording failures in the snapshot.
class SysfsReader {
 public:
  SysfsReader(const Filesystem& fs, const CollectLimits& limits, v1::Snapshot& snap)
      : fs_(fs), limits_(limits), snap_(snap) {}

  // The attribute without its trailing newline; nullopt when unreadable. NotFound is
  // recorded only for attributes every kernel has (`required`).
  std::optional<std::string> attr(const std::string& path, std::string_view probe,
                                  bool required = false) {
    auto r = fs_.readFile(path, limits_.sysfs_file_bytes);
    if (!r.ok()) {
      if (required || r.error().code != ErrorCode::NotFound)
        addProbeError(snap_, probe, path, r.error());
      return std::nullopt;
    }
    return std::string(core::stripOneNewline(*r));
  }

  std::optional<uint64_t> number(const std::string& path, std::string_view probe) {
    auto v = attr(path, probe);
    if (!v) return std::nullopt;
    return core::parseUnsigned(*v);
  }

  std::vector<std::string> list(const std::string& dir, std::string_view probe,
                                bool required = false) {
    auto r = fs_.listDir(dir);
    if (!r.ok()) {
      if (required || r.error().code != ErrorCode::NotFound)
        addProbeError(snap_, probe, dir, r.error());
      return {};
    }
    return std::move(r).value();
  }

  // One counter directory into `out`; a file that cannot be read becomes an unavailable
  // counter with the reason (EINVAL, EACCES, ...), never a failed snapshot. With `only`,
  // just those names (the second sample of a window reads what the first one found).
  void counters(const std::string& dir, CounterSet set,
                google::protobuf::RepeatedPtrField<v1::Counter>* out,
                const std::vector<std::string>* only = nullptr) {
    auto entries = fs_.readDirFiles(dir, limits_.sysfs_file_bytes, limits_.max_counters_per_dir);
    if (!entries.ok()) {
      if (entries.error().code != ErrorCode::NotFound) {
        addProbeError(snap_, "sysfs.counters", dir, entries.error());
      } else if (auto odd = notADirectory(dir)) {
        addProbeError(snap_, "sysfs.counters", dir, *odd);
      }
      return;
    }
    out->Reserve(static_cast<int>(entries->size()));
    for (const auto& [name, content] : *entries) {
      if (only != nullptr && !std::binary_search(only->begin(), only->end(), name)) continue;
      if (content.ok()) {
        *out->Add() = core::makeCounter(name, *content, set);
      } else {
        v1::Counter* c = out->Add();
        c->set_name(name);
        c->set_width_bits(core::counterWidthBits(name, set));
        c->set_unavailable_reason(std::string(core::errorCodeName(content.error().code)));
      }
    }
  }

  const Filesystem& fs() const { return fs_; }
  v1::Snapshot& snap() { return snap_; }

  // Absent is NotFound (an older kernel has no hw_counters); a name that is there but is no
  // directory (a dangling link, a FIFO, a file) is a counter source that could not be read:
  // an error, so the port is never judged clean on counters nobody read.
  std::optional<Error> notADirectory(const std::string& dir) const {
    if (auto target = fs_.readLink(dir); target.ok() && !fs_.exists(dir)) {
      return Error{ErrorCode::Unavailable,
                   dir + " is a link to " + core::printable(*target, 200) +
                       ", which does not exist (sysfs has a directory here)"};
    }
    if (fs_.exists(dir) && !fs_.isDirectory(dir)) {
      return Error{ErrorCode::Unavailable,
                   dir + " is not a directory (sysfs has one here): its counters were not read"};
    }
    return std::nullopt;
  }

 private:
  const Filesystem& fs_;
  const CollectLimits& limits_;
  v1::Snapshot& snap_;
};

struct DeviceDir {
  std::string name;
  std::string dir;      // sysfs directory of the RDMA device
  std::string pci_dir;  // its PCI function directory
  std::string pci_address;
};

std::vector<DeviceDir> findDevices(SysfsReader& rd, std::size_t max_devices) {
  std::vector<DeviceDir> out;
  const std::string cls = "/sys/class/infiniband";
  auto names = rd.fs().listDir(cls);
  if (names.ok()) {
    for (const auto& n : *names) {
      out.push_back({n, cls + "/" + n, cls + "/" + n + "/device", ""});
    }
  } else {
    if (names.error().code != ErrorCode::NotFound)
      addProbeError(rd.snap(), "sysfs.devices", cls, names.error());
    // PCI-side view only.
    const std::string pci = "/sys/bus/pci/devices";
    auto bdfs = rd.fs().listDir(pci);
    if (bdfs.ok()) {
      for (const auto& bdf : *bdfs) {
        auto devs = rd.fs().listDir(pci + "/" + bdf + "/infiniband");
        if (!devs.ok()) continue;
        for (const auto& n : *devs) {
          out.push_back({n, pci + "/" + bdf + "/infiniband/" + n, pci + "/" + bdf, bdf});
        }
      }
    }
  }
  if (out.size() > max_devices) {
    addProbeError(
        rd.snap(), "sysfs.devices", cls,
        Error{ErrorCode::TooLarge, std::to_string(out.size()) + " RDMA devices; kept the first " +
                                       std::to_string(max_devices)});
    out.resize(max_devices);
  }
  return out;
}

void readPci(SysfsReader& rd, DeviceDir& d, v1::RdmaDevice& dev) {
  if (!rd.fs().isDirectory(d.pci_dir)) return;  // no device link (virtual devices, trimmed trees)
  v1::PciFunction* pci = dev.mutable_pci();
  if (d.pci_address.empty()) {
    if (auto link = rd.fs().readLink(d.dir + "/device"); link.ok()) d.pci_address = basename(*link);
  }
  pci->set_address(d.pci_address);
  const std::string& p = d.pci_dir;
  if (auto v = rd.attr(p + "/vendor", "sysfs.pci")) pci->set_vendor_id(*v);
  if (auto v = rd.attr(p + "/device", "sysfs.pci")) pci->set_device_id(*v);
  if (auto v = rd.attr(p + "/subsystem_vendor", "sysfs.pci")) pci->set_subsystem_vendor_id(*v);
  if (auto v = rd.attr(p + "/subsystem_device", "sysfs.pci")) pci->set_subsystem_device_id(*v);
  if (auto v = rd.attr(p + "/numa_node", "sysfs.pci")) {
    if (auto n = core::parseInt(*v)) pci->set_numa_node(static_cast<int32_t>(*n));
  }
  if (auto v = rd.attr(p + "/current_link_speed", "sysfs.pci")) {
    pci->set_current_link_speed(*v);
    if (auto g = core::parsePcieSpeedGts(*v)) pci->set_current_link_gts(*g);
  }
  if (auto v = rd.attr(p + "/current_link_width", "sysfs.pci")) {
    pci->set_current_link_width(*v);
    if (auto w = core::parsePcieWidth(*v)) pci->set_current_link_lanes(*w);
  }
  if (auto v = rd.attr(p + "/max_link_speed", "sysfs.pci")) {
    pci->set_max_link_speed(*v);
    if (auto g = core::parsePcieSpeedGts(*v)) pci->set_max_link_gts(*g);
  }
  if (auto v = rd.attr(p + "/max_link_width", "sysfs.pci")) {
    pci->set_max_link_width(*v);
    if (auto w = core::parsePcieWidth(*v)) pci->set_max_link_lanes(*w);
  }
  if (auto link = rd.fs().readLink(p + "/driver"); link.ok()) pci->set_driver(basename(*link));
  if (auto link = rd.fs().readLink(p + "/physfn"); link.ok()) {
    pci->set_is_virtual_function(true);
    pci->set_physfn_address(basename(*link));
    pci->set_virtual_function_evidence("physfn link to PF " + pci->physfn_address());
  } else if (auto name = core::mellanoxVirtualFunctionName(pci->device_id()); !name.empty()) {
    pci->set_is_virtual_function(true);
    pci->set_virtual_function_evidence("PCI device id " + pci->device_id() + " is a " +
                                       std::string(name));
  }
}

void readGids(SysfsReader& rd, const std::string& port_dir, v1::RdmaPort& port) {
  // GID tables hold 128+ entries, nearly all zero; read the head and stop after a run of
  // unused entries to keep the probe cheap.
  constexpr int kMaxGids = 32;
  constexpr int kStopAfterZeros = 4;
  int zeros = 0;
  for (int i = 0; i < kMaxGids && zeros < kStopAfterZeros; ++i) {
    auto r = rd.fs().readFile(port_dir + "/gids/" + std::to_string(i), 256);
    if (!r.ok()) break;
    const std::string gid(core::trim(*r));
    if (gid.empty() || core::isZeroGid(gid)) {
      ++zeros;
      continue;
    }
    zeros = 0;
    port.add_gids(gid);
    if (i == 0 && core::startsWith(gid, "fe80:") && gid.size() >= 39) {
      port.set_port_guid(gid.substr(20));
    }
  }
  for (int i = 0; i < 8; ++i) {
    auto r = rd.fs().readFile(port_dir + "/pkeys/" + std::to_string(i), 64);
    if (!r.ok()) break;
    const std::string pk(core::trim(*r));
    if (auto v = core::parseUnsigned(pk); v && (*v & 0x7fff) != 0) port.add_pkeys(pk);
  }
}

void readPort(SysfsReader& rd, const std::string& dir, uint32_t number, v1::RdmaPort& port) {
  port.set_port(number);
  if (auto v = rd.attr(dir + "/state", "sysfs.port", true)) {
    if (auto e = core::parseEnumValue(*v); e.ok())
      *port.mutable_state() = *e;
    else
      port.mutable_state()->set_raw(core::printable(*v));
  } else {
    port.mutable_state();  // present but empty: the state was expected and not read
  }
  if (auto v = rd.attr(dir + "/phys_state", "sysfs.port", true)) {
    if (auto e = core::parseEnumValue(*v); e.ok())
      *port.mutable_phys_state() = *e;
    else
      port.mutable_phys_state()->set_raw(core::printable(*v));
  }
  if (auto v = rd.attr(dir + "/rate", "sysfs.port", true)) {
    port.set_rate_raw(core::printable(*v));
    if (auto r = core::parseRate(*v); r.ok()) {
      port.set_rate_gbps(r->gbps);
      port.set_width_lanes(r->width_lanes);
      port.set_speed_name(core::printable(r->speed_name));
    }
  }
  // Trimmed: a CR or space in the file (an edited or pasted tree) is not part of the name.
  if (auto v = rd.attr(dir + "/link_layer", "sysfs.port"))
    port.set_link_layer(core::printable(core::trim(*v)));
  if (auto v = rd.attr(dir + "/lid", "sysfs.port")) {
    port.set_lid_raw(core::printable(*v));
    if (auto n = core::parseUnsigned(*v); n && *n <= 0xffff)
      port.set_lid(static_cast<uint32_t>(*n));
  }
  if (auto v = rd.attr(dir + "/sm_lid", "sysfs.port")) {
    port.set_sm_lid_raw(core::printable(*v));
    if (auto n = core::parseUnsigned(*v); n && *n <= 0xffff)
      port.set_sm_lid(static_cast<uint32_t>(*n));
  }
  rd.counters(dir + "/counters", CounterSet::PortCounters, port.mutable_counters());
  rd.counters(dir + "/hw_counters", CounterSet::HwCounters, port.mutable_hw_counters());
  rd.counters(dir + "/counters_ext", CounterSet::PortCountersExt, port.mutable_counters_ext());
  readGids(rd, dir, port);
}

}  // namespace

void collectRdmaDevices(const Filesystem& fs, const CollectLimits& limits, v1::Snapshot& snap,
                        SysfsLayout& layout) {
  SysfsReader rd(fs, limits, snap);
  for (auto& d : findDevices(rd, limits.max_devices)) {
    v1::RdmaDevice* dev = snap.add_devices();
    dev->set_name(core::printable(d.name));
    layout.device_dirs[d.name] = d.dir;
    if (auto v = rd.attr(d.dir + "/fw_ver", "sysfs.device")) dev->set_fw_ver(core::printable(*v));
    if (auto v = rd.attr(d.dir + "/board_id", "sysfs.device"))
      dev->set_board_id(core::printable(*v));
    if (auto v = rd.attr(d.dir + "/hca_type", "sysfs.device"))
      dev->set_hca_type(core::printable(*v));
    if (auto v = rd.attr(d.dir + "/node_guid", "sysfs.device"))
      dev->set_node_guid(core::printable(*v));
    if (auto v = rd.attr(d.dir + "/sys_image_guid", "sysfs.device"))
      dev->set_sys_image_guid(core::printable(*v));
    if (auto v = rd.attr(d.dir + "/node_desc", "sysfs.device"))
      dev->set_node_desc(core::printable(*v));
    if (auto v = rd.attr(d.dir + "/node_type", "sysfs.device"))
      dev->set_node_type(core::printable(*v));
    readPci(rd, d, *dev);
    core::classifyVirtualFunction(*dev);
    rd.counters(d.dir + "/hw_counters", CounterSet::HwCounters, dev->mutable_hw_counters());
    std::vector<std::pair<uint32_t, std::string>> ports;
    for (const auto& p : rd.list(d.dir + "/ports", "sysfs.ports", true)) {
      if (auto n = core::parseUnsigned(p); n && *n > 0 && *n < 256)
        ports.emplace_back(static_cast<uint32_t>(*n), p);
    }
    std::sort(ports.begin(), ports.end());
    for (const auto& [n, name] : ports) {
      readPort(rd, d.dir + "/ports/" + name, n, *dev->add_ports());
    }
  }
}

namespace {

void readNetdev(SysfsReader& rd, const std::string& dir, v1::NetDevice& nd) {
  if (auto v = rd.number(dir + "/mtu", "sysfs.netdev")) nd.set_mtu(static_cast<uint32_t>(*v));
  if (auto v = rd.attr(dir + "/operstate", "sysfs.netdev")) nd.set_operstate(core::printable(*v));
  // carrier and speed answer EINVAL while the interface is down: that is "unknown".
  if (auto r = rd.fs().readFile(dir + "/carrier", 64); r.ok()) {
    if (auto v = core::parseUnsigned(*r)) nd.set_carrier(*v != 0);
  }
  if (auto v = rd.number(dir + "/carrier_changes", "sysfs.netdev")) nd.set_carrier_changes(*v);
  if (auto v = rd.number(dir + "/carrier_up_count", "sysfs.netdev")) nd.set_carrier_up_count(*v);
  if (auto v = rd.number(dir + "/carrier_down_count", "sysfs.netdev"))
    nd.set_carrier_down_count(*v);
  if (auto r = rd.fs().readFile(dir + "/speed", 64); r.ok()) {
    if (auto v = core::parseInt(*r); v && *v > 0) nd.set_speed_mbps(static_cast<uint64_t>(*v));
  }
  if (auto v = rd.attr(dir + "/address", "sysfs.netdev")) nd.set_address(core::printable(*v));
  if (auto v = rd.number(dir + "/type", "sysfs.netdev")) nd.set_type(static_cast<uint32_t>(*v));
  if (auto v = rd.attr(dir + "/flags", "sysfs.netdev")) {
    nd.set_flags_raw(core::printable(*v));
    if (auto f = core::parseUnsigned(*v)) nd.set_admin_up((*f & 0x1) != 0);  // IFF_UP
  }
  if (auto v = rd.attr(dir + "/mode", "sysfs.netdev")) nd.set_mode(core::printable(*v));
  rd.counters(dir + "/statistics", CounterSet::NetdevStats, nd.mutable_stats());
  // mlx5 RoCE congestion control: ecn/roce_np/enable/<prio>, ecn/roce_rp/enable/<prio>.
  if (rd.fs().isDirectory(dir + "/ecn")) {
    v1::EcnConfig* ecn = nd.mutable_ecn();
    for (const char* side : {"roce_np", "roce_rp"}) {
      const std::string sdir = dir + "/ecn/" + side;
      for (const auto& prio : rd.list(sdir + "/enable", "sysfs.ecn")) {
        auto v = rd.number(sdir + "/enable/" + prio, "sysfs.ecn");
        auto p = core::parseUnsigned(prio);
        if (v && *v != 0 && p) {
          (std::string(side) == "roce_np"
               ? ecn->add_np_enabled_priorities(static_cast<uint32_t>(*p))
               : ecn->add_rp_enabled_priorities(static_cast<uint32_t>(*p)));
        }
      }
      for (const auto& param : rd.list(sdir, "sysfs.ecn")) {
        if (param == "enable") continue;
        if (auto v = rd.attr(sdir + "/" + param, "sysfs.ecn")) {
          auto* kv = ecn->add_parameters();
          kv->set_key(std::string(side) + "/" + param);
          kv->set_value(core::printable(*v));
        }
      }
    }
  }
}

}  // namespace

namespace {

// The collected interfaces' IPv4 and IPv6 addresses from /proc/net (the host's, or the copied
// tree's under --root). A tree without those files has no addresses: nothing to report.
void readInterfaceAddresses(const Filesystem& fs, v1::Snapshot& snap) {
  constexpr std::size_t kBound = 4 << 20;
  auto read = [&](const char* path) {
    auto text = fs.readFile(path, kBound);
    return text.ok() ? std::move(text).value() : std::string();
  };
  const auto v6 = core::ipv6Addresses(read("/proc/net/if_inet6"));
  const auto v4 = core::ipv4Addresses(read("/proc/net/fib_trie"), read("/proc/net/route"));
  for (auto& nd : *snap.mutable_netdevs()) {
    for (const auto* table : {&v4, &v6}) {
      const auto it = table->find(nd.name());
      if (it == table->end()) continue;
      for (const auto& a : it->second) {
        if (nd.addresses_size() < 64) nd.add_addresses(a);
      }
    }
  }
}

}  // namespace

void collectNetdevs(const Filesystem& fs, const CollectLimits& limits, v1::Snapshot& snap,
                    SysfsLayout& layout) {
  SysfsReader rd(fs, limits, snap);
  auto add = [&](const std::string& name, const std::string& dir) -> v1::NetDevice* {
    if (layout.netdev_dirs.count(name) != 0) return nullptr;
    if (layout.netdev_dirs.size() >= limits.max_netdevs) return nullptr;
    layout.netdev_dirs[name] = dir;
    v1::NetDevice* nd = snap.add_netdevs();
    nd->set_name(core::printable(name));
    readNetdev(rd, dir, *nd);
    return nd;
  };
  // Netdevs of each RDMA device's PCI function, mapped to ports by dev_port (0-based).
  for (auto& dev : *snap.mutable_devices()) {
    auto it = layout.device_dirs.find(dev.name());
    if (it == layout.device_dirs.end()) continue;
    const std::string net_dir = it->second + "/device/net";
    std::string base = net_dir;
    auto names = fs.listDir(net_dir);
    if (!names.ok() && !dev.pci().address().empty()) {
      base = "/sys/bus/pci/devices/" + dev.pci().address() + "/net";
      names = fs.listDir(base);
    }
    if (!names.ok()) continue;
    for (const auto& name : *names) {
      v1::NetDevice* nd = add(name, base + "/" + name);
      if (nd == nullptr) continue;
      nd->set_rdma_device(dev.name());
      nd->set_pci_address(dev.pci().address());
      uint32_t port_no = 1;
      if (auto dp = fs.readFile(base + "/" + name + "/dev_port", 64); dp.ok()) {
        if (auto v = core::parseUnsigned(*dp); v && *v < 255)
          port_no = static_cast<uint32_t>(*v) + 1;
      }
      nd->set_rdma_port(port_no);
      for (auto& port : *dev.mutable_ports()) {
        if (port.port() == port_no || dev.ports_size() == 1) {
          nd->set_rdma_port(port.port());
          port.add_netdevs(nd->name());
          break;
        }
      }
    }
  }
  // Other IPoIB and RoCE-capable interfaces (not bound through the PCI function above).
  if (auto names = fs.listDir("/sys/class/net"); names.ok()) {
    for (const auto& name : *names) {
      if (layout.netdev_dirs.count(name) != 0) continue;
      const std::string dir = "/sys/class/net/" + name;
      auto type = fs.readFile(dir + "/type", 64);
      const bool ipoib = type.ok() && core::parseUnsigned(*type) == 32u;
      if (!ipoib && !fs.isDirectory(dir + "/ecn")) continue;
      add(name, dir);
    }
  }
  readInterfaceAddresses(fs, snap);
}

void sampleWindowCounters(const Filesystem& fs, const CollectLimits& limits,
                          const SysfsLayout& layout, v1::Snapshot& snap) {
  SysfsReader rd(fs, limits, snap);
  v1::CounterWindow* w = snap.add_window();
  auto names = [](const google::protobuf::RepeatedPtrField<v1::Counter>& list) {
    std::vector<std::string> out;
    out.reserve(static_cast<size_t>(list.size()));
    for (const auto& c : list) out.push_back(c.name());
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const auto& dev : snap.devices()) {
    auto it = layout.device_dirs.find(dev.name());
    if (it == layout.device_dirs.end()) continue;
    if (dev.hw_counters_size() > 0) {
      auto* s = w->add_ports();
      s->set_device(dev.name());
      s->set_port(0);
      const auto only = names(dev.hw_counters());
      rd.counters(it->second + "/hw_counters", CounterSet::HwCounters, s->mutable_hw_counters(),
                  &only);
    }
    for (const auto& port : dev.ports()) {
      auto* s = w->add_ports();
      s->set_device(dev.name());
      s->set_port(port.port());
      const std::string pdir = it->second + "/ports/" + std::to_string(port.port());
      const auto c = names(port.counters());
      const auto h = names(port.hw_counters());
      const auto e = names(port.counters_ext());
      rd.counters(pdir + "/counters", CounterSet::PortCounters, s->mutable_counters(), &c);
      rd.counters(pdir + "/hw_counters", CounterSet::HwCounters, s->mutable_hw_counters(), &h);
      rd.counters(pdir + "/counters_ext", CounterSet::PortCountersExt, s->mutable_counters_ext(),
                  &e);
    }
  }
  for (const auto& nd : snap.netdevs()) {
    auto it = layout.netdev_dirs.find(nd.name());
    if (it == layout.netdev_dirs.end()) continue;
    auto* s = w->add_netdevs();
    s->set_name(nd.name());
    if (auto v = rd.number(it->second + "/carrier_changes", "sysfs.netdev"))
      s->set_carrier_changes(*v);
    const auto st = names(nd.stats());
    rd.counters(it->second + "/statistics", CounterSet::NetdevStats, s->mutable_stats(), &st);
  }
}

}  // namespace ibc::agent

// ESCALATE_HOST_INSPECTION and VF_IDENTITY_MISSING (docs/codes.md): the customer sees only the
// VF; what only the provider can act on goes to the provider, with the reasons (the codes
// that made it) and a runbook that follows the fault's class in the finding registry.
// Runs over a node's whole findings: its own and, in a job, the cross-node ones (a port
// that trained below its peers is physical evidence known only from the peers).

#include <algorithm>
#include <map>
#include <set>

#include "ibc/core/rules.h"
#include "ibc/core/sysfs_values.h"
#include "rules_internal.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

bool physicalFunctionIsRemote(const v1::Snapshot& snap, const v1::RdmaDevice& dev) {
  return rules::physicalFunctionIsRemote(snap, dev);
}

// Whether a finding counts for escalation: above info, and not the IPoIB-down warning
// (which says nothing about the physical port).
bool counts(const v1::Finding& f) {
  const Severity s = severityOf(f);
  if (s == Severity::Info) return false;
  return !(f.code() == "PORT_DOWN" && s != Severity::Critical);
}

bool usableGuid(const std::string& g) { return isGuidShaped(g) && !isZeroGuid(g); }

bool usableMac(const std::string& m) {
  return isMacShaped(m) && m.find_first_not_of("0:") != std::string::npos;
}

// What the host can search for to find this VF's PF; empty when nothing is usable.
std::vector<std::string> hostIdentities(const v1::Snapshot& snap, const v1::RdmaDevice& dev) {
  std::vector<std::string> out;
  if (usableGuid(dev.node_guid())) out.push_back("node_guid " + dev.node_guid());
  for (const auto& p : dev.ports()) {
    if (usableGuid(p.port_guid()))
      out.push_back("port " + std::to_string(p.port()) + " port_guid " + p.port_guid());
  }
  for (const auto& n : snap.netdevs()) {
    if (n.rdma_device() == dev.name() && usableMac(n.address()))
      out.push_back("netdev " + n.name() + " address " + n.address());
  }
  if (isVmIdShaped(snap.node().vm_id())) out.push_back("VM id " + snap.node().vm_id());
  return out;
}

// Everything known about the device, for people: identities of the wrong shape are said to
// be unknown, never passed on as values.
std::vector<std::string> identity(const v1::Snapshot& snap, const v1::RdmaDevice& dev) {
  std::vector<std::string> out;
  // "VF" only on PCI evidence (physfn, a VF device id); a device in a VM without it is
  // named for what is known.
  std::string id = (dev.is_virtual_function() ? "VF " : "device ") + dev.name();
  if (!dev.pci().address().empty()) id += ": guest PCI " + dev.pci().address();
  if (!dev.virtual_function_evidence().empty()) {
    id += " (" + dev.virtual_function_evidence() + ")";
  } else if (!dev.is_virtual_function()) {
    id += " (no PCI evidence that it is a VF";
    if (!snap.node().virtualization_evidence().empty())
      id += "; virtual machine: " + snap.node().virtualization_evidence();
    id += ")";
  }
  out.push_back(id);
  out.push_back(usableGuid(dev.node_guid()) ? "node_guid " + dev.node_guid()
                                            : std::string("node_guid unknown"));
  if (usableGuid(dev.sys_image_guid())) out.push_back("sys_image_guid " + dev.sys_image_guid());
  if (isFirmwareVersionShaped(dev.fw_ver())) out.push_back("fw_ver " + dev.fw_ver());
  for (const auto& p : dev.ports()) {
    std::string s = "port " + std::to_string(p.port());
    s += usableGuid(p.port_guid()) ? " port_guid " + p.port_guid()
                                   : std::string(" port_guid unknown");
    if (p.gids_size() > 0) s += " gid[0] " + p.gids(0);
    if (p.pkeys_size() > 0) s += " pkey " + p.pkeys(0);
    if (p.has_lid()) s += " lid " + std::to_string(p.lid());
    out.push_back(s);
  }
  for (const auto& n : snap.netdevs()) {
    if (n.rdma_device() == dev.name() && usableMac(n.address())) {
      out.push_back("netdev " + n.name() + " address " + n.address());
    }
  }
  if (isVmIdShaped(snap.node().vm_id())) out.push_back("VM id " + snap.node().vm_id());
  return out;
}

std::string findThePf(const v1::RdmaDevice& dev) {
  // Only PCI evidence makes the device a VF; otherwise it may be a passed-through PF.
  return dev.is_virtual_function()
             ? "Host side: find the PF of this VF (match the VF's node/port GUID or MAC in "
               "`ip link show <pf>` / `ibdev2netdev -v`, or run `ibcollect host-inspect "
               "--bundle` there)"
             : "Host side: find the physical device behind this guest device (a passed-through "
               "adapter, or the PF if it is a VF: match its node/port GUID or MAC in "
               "`ip link show <pf>` / `ibdev2netdev -v`)";
}

std::string runbook(EscalationKind kind, const v1::RdmaDevice& dev, uint32_t port) {
  const std::string p = std::to_string(port == 0 ? 1 : port);
  switch (kind) {
    case EscalationKind::Physical:
      return "Send this snapshot (the .ibsnap file) to the provider with the ticket. " +
             findThePf(dev) + ", then `mlxlink -d <PF> -p " + p +
             " -m -c -e` (BER, effective errors, FEC, module DDM and temperature), `mst status "
             "-v`, `flint -d <PF> q` (firmware), check the cable/transceiver and the switch "
             "port, the PF's PCIe AER counters and the BMC SEL for PCIe/thermal events.";
    case EscalationKind::SubnetManager:
      return "Send this snapshot to the provider with the ticket: the link is up but the "
             "subnet manager has not made the port ACTIVE, which only the host and fabric side "
             "can fix. " +
             findThePf(dev) +
             ", then check the VF's GUIDs assigned on the PF (`cat "
             "/sys/class/infiniband/<PF>/device/sriov/<N>/node` and `.../port`: set, non-zero, "
             "unique), its `sriov/<N>/policy` (Follow or Up, not Down), that the SM runs with "
             "virtualization enabled (OpenSM `virt_enabled 2`) and sees the VF's port GUID "
             "(`ibstat` / `smpquery portinfo` on the fabric), and that the pkey the VF uses is a "
             "member of its partition (`/sys/class/infiniband/<PF>/ports/" +
             p + "/pkeys`, the SM's partitions.conf).";
    case EscalationKind::TransportPath:
      return "Send this snapshot to the provider with the ticket: the VF side is clean, so the "
             "errors come from beyond it. " +
             findThePf(dev) + ", then `mlxlink -d <PF> -p " + p +
             " -m -c -e` and `ethtool -S <PF_NETDEV>` (discards, retransmits, pause), the "
             "switch port's counters and the path to the peers named in the evidence "
             "(`ibtracert`, the switch's error and congestion counters).";
  }
  return {};
}

std::string summaryFor(EscalationKind kind, const v1::RdmaDevice& dev) {
  const bool vf = dev.is_virtual_function();
  const std::string what =
      vf ? dev.name() + " is a virtual function"
         : dev.name() + " (in a virtual machine; no PCI evidence that it is a VF)";
  switch (kind) {
    case EscalationKind::Physical:
      return what + " with physical-link or device evidence: the provider must inspect " +
             (vf ? "its PF, cable and switch port" : "the physical device and port behind it");
    case EscalationKind::SubnetManager:
      return what + " whose port the subnet manager has not activated: the provider must check " +
             "the VF's GUID assignment on the PF, SM virtualization and pkey membership";
    case EscalationKind::TransportPath:
      return what + " with transport errors while its " + (vf ? "VF" : "guest") +
             "-side link evidence is clean: the PF and the path beyond it must be inspected";
  }
  return {};
}

struct DeviceReasons {
  std::set<std::string> codes;
  std::vector<std::string> lines;
  std::set<uint32_t> ports;
  Severity worst = Severity::Info;
  bool escalating = false;  // a physical, device or SM reason
  bool symptoms = false;
};

// What a node's findings give escalation to work with.
struct Reasons {
  bool state_unknown = false;  // the VF side is not known to be clean
  std::map<std::string, DeviceReasons> by_device;
  std::vector<std::string> node_symptoms;  // symptoms pinned to no device (NCCL)
  std::set<std::string> node_symptom_codes;
  bool node_level_physical = false;
};

Reasons gatherReasons(const std::vector<v1::Finding>& findings) {
  Reasons r;
  for (const auto& f : findings) {
    r.state_unknown = r.state_unknown || f.code() == "PORT_STATE_UNKNOWN";
    if (!counts(f)) continue;
    const FindingClass c = findingClassOf(f.code());
    const bool escalating =
        c == FindingClass::PhysicalLink || c == FindingClass::Device || c == FindingClass::FabricSm;
    const bool symptom = c == FindingClass::TransportSymptom;
    if (!escalating && !symptom) continue;
    const std::string line = f.code() + " (" + f.severity() + "): " + f.summary();
    if (f.device().empty()) {
      r.node_level_physical = r.node_level_physical || escalating;
      if (symptom) {
        r.node_symptoms.push_back(line);
        r.node_symptom_codes.insert(f.code());
      }
      continue;
    }
    auto& d = r.by_device[f.device()];
    d.codes.insert(f.code());
    d.lines.push_back(line);
    if (f.port() != 0) d.ports.insert(f.port());
    if (escalating) {
      d.escalating = true;
      d.worst = std::max(d.worst, severityOf(f));
    } else {
      d.symptoms = true;
    }
  }
  return r;
}

v1::Finding identityMissing(const v1::Snapshot& snap, const v1::RdmaDevice& dev, uint32_t port) {
  const auto shown = [](const std::string& v, const char* none, const char* what) {
    return v.empty() ? std::string(none) : "\"" + v + "\" (" + what + ")";
  };
  std::vector<std::string> ev{"node_guid " + shown(dev.node_guid(), "empty", "not a GUID")};
  for (const auto& p : dev.ports()) {
    ev.push_back("port " + std::to_string(p.port()) + " port_guid " +
                 shown(p.port_guid(), "empty", "not a GUID"));
  }
  ev.push_back("no netdev MAC address of this device");
  ev.push_back("VM id " + shown(snap.node().vm_id(), "unknown", "not an id"));
  return makeFinding(
      {FindingCode::VfIdentityMissing, Severity::Warning, nodeName(snap), dev.name(), port,
       dev.name() + " must be inspected on the host, but nothing the host can search for "
                    "identifies it (no node/port GUID, MAC or VM id)",
       std::move(ev),
       "Ask the customer for one of: `cat /sys/class/infiniband/" + dev.name() +
           "/node_guid` (as root if unreadable), `ibstat " + dev.name() +
           "` (Port GUID), the MAC in `ip link`, or the VM's instance id (`cat "
           "/sys/class/dmi/id/product_uuid` as root, or the cloud console)."});
}

// ESCALATE_HOST_INSPECTION for one device (and VF_IDENTITY_MISSING when nothing identifies
// it); nothing when no reason is of an escalated class.
void escalateDevice(const v1::Snapshot& snap, const v1::RdmaDevice& dev,
                    const std::set<std::string>& codes, std::vector<std::string> lines,
                    uint32_t port, Severity severity, std::vector<v1::Finding>& out) {
  const std::vector<std::string> reasons(codes.begin(), codes.end());
  const auto kind = escalationKindFor(reasons);
  if (!kind) return;
  for (auto& line : identity(snap, dev)) lines.push_back(std::move(line));
  auto f = makeFinding({FindingCode::EscalateHostInspection, severity, nodeName(snap), dev.name(),
                        port, summaryFor(*kind, dev), std::move(lines), runbook(*kind, dev, port)});
  for (const auto& r : reasons) f.add_reasons(r);
  out.push_back(std::move(f));
  if (hostIdentities(snap, dev).empty()) out.push_back(identityMissing(snap, dev, port));
}

// Node-level symptoms (NCCL) without a device to pin them on, on a node whose RDMA devices
// are remote-PF devices and look clean: one escalation for the node, naming them all
// (device "" stands for every device).
void escalateNode(const v1::Snapshot& snap, const Reasons& r, std::vector<v1::Finding>& out) {
  std::vector<const v1::RdmaDevice*> devices;
  for (const auto& dev : snap.devices()) {
    if (physicalFunctionIsRemote(snap, dev) && dev.missing_reason().empty())
      devices.push_back(&dev);
  }
  if (devices.empty()) return;
  bool all_vfs = true;
  for (const auto* dev : devices) all_vfs = all_vfs && dev->is_virtual_function();
  std::vector<std::string> ev = r.node_symptoms;
  for (const auto* dev : devices) {
    for (auto& line : identity(snap, *dev)) ev.push_back(std::move(line));
  }
  auto f = makeFinding(
      {FindingCode::EscalateHostInspection, Severity::Warning, nodeName(snap), "", 0,
       all_vfs ? "Transport errors with clean VF-side evidence on every VF of this node: the "
                 "PFs and the path beyond them must be inspected"
               : "Transport errors with clean guest-side evidence on every RDMA device of this "
                 "virtual machine: the physical devices and the path behind them must be "
                 "inspected",
       std::move(ev), runbook(EscalationKind::TransportPath, *devices.front(), 0)});
  for (const auto& code : r.node_symptom_codes) f.add_reasons(code);
  out.push_back(std::move(f));
  for (const auto* dev : devices) {
    if (hostIdentities(snap, *dev).empty()) out.push_back(identityMissing(snap, *dev, 0));
  }
}

}  // namespace

std::string_view escalationKindName(EscalationKind kind) {
  switch (kind) {
    case EscalationKind::Physical: return "physical";
    case EscalationKind::SubnetManager: return "subnet_manager";
    case EscalationKind::TransportPath: return "transport_path";
  }
  return "physical";
}

std::optional<EscalationKind> escalationKindFor(const std::vector<std::string>& reason_codes) {
  bool sm = false;
  bool transport = false;
  for (const auto& code : reason_codes) {
    switch (findingClassOf(code)) {
      case FindingClass::PhysicalLink:
      case FindingClass::Device: return EscalationKind::Physical;
      case FindingClass::FabricSm: sm = true; break;
      case FindingClass::TransportSymptom: transport = true; break;
      default: break;
    }
  }
  if (sm) return EscalationKind::SubnetManager;
  if (transport) return EscalationKind::TransportPath;
  return std::nullopt;
}

std::vector<v1::Finding> escalationFindings(const v1::Snapshot& snap,
                                            const std::vector<v1::Finding>& findings) {
  std::vector<v1::Finding> out;
  const Reasons r = gatherReasons(findings);
  bool escalated_any = false;
  for (const auto& dev : snap.devices()) {
    if (!physicalFunctionIsRemote(snap, dev)) continue;
    const auto it = r.by_device.find(dev.name());
    if (it == r.by_device.end()) continue;
    const DeviceReasons& d = it->second;
    // Symptoms alone escalate only when the VF side is known to be clean.
    if (!d.escalating && (!d.symptoms || r.state_unknown)) continue;
    const uint32_t port = d.ports.size() == 1 ? *d.ports.begin() : 0;
    escalateDevice(snap, dev, d.codes, d.lines, port, d.escalating ? d.worst : Severity::Warning,
                   out);
    escalated_any = true;
  }
  if (!escalated_any && !r.node_level_physical && !r.state_unknown && !r.node_symptoms.empty())
    escalateNode(snap, r, out);
  sortFindings(out);
  return out;
}

}  // namespace ibc::core

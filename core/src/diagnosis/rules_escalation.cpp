// ESCALATE_HOST_INSPECTION: the customer sees only the VF; physical-layer or device
// evidence on a VF, or transport symptoms while the VF-side evidence is clean, must go to
// the provider, who owns the PF, the cable and the switch port.

#include <algorithm>
#include <set>

#include "ibc/core/sysfs_values.h"
#include "rules_internal.h"

namespace ibc::core::rules {

namespace {

// Evidence about the physical link or the device itself.
const std::set<std::string_view>& physicalCodes() {
  static const std::set<std::string_view> codes{
      "PORT_DOWN",          "PHYS_LINK_NOT_UP",   "PORT_NOT_ACTIVE_SM", "LINK_RATE_BELOW_EXPECTED",
      "PHY_ERRORS",         "LINK_DOWNED",        "XMIT_DISCARDS",      "KERNEL_LINK_FLAP",
      "DEVICE_FATAL",       "FW_COMMAND_TIMEOUT", "MODULE_TEMPERATURE", "PCIE_ERROR",
      "PCIE_LINK_DEGRADED", "NO_RDMA_DEVICES"};
  return codes;
}

// Symptoms that need a look beyond the VF when the VF-side link evidence is clean.
const std::set<std::string_view>& symptomCodes() {
  static const std::set<std::string_view> codes{"TRANSPORT_RETRIES", "CQE_ERRORS",
                                                "NCCL_IB_COMPLETION_ERROR", "NCCL_IB_ASYNC_EVENT",
                                                "NCCL_QP_SETUP_FAILED"};
  return codes;
}

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
  if (!dev.node_guid().empty()) out.push_back("node_guid " + dev.node_guid());
  if (!dev.sys_image_guid().empty()) out.push_back("sys_image_guid " + dev.sys_image_guid());
  if (!dev.fw_ver().empty()) out.push_back("fw_ver " + dev.fw_ver());
  for (const auto& p : dev.ports()) {
    std::string s = "port " + std::to_string(p.port());
    if (!p.port_guid().empty()) s += " port_guid " + p.port_guid();
    if (p.gids_size() > 0) s += " gid[0] " + p.gids(0);
    if (p.pkeys_size() > 0) s += " pkey " + p.pkeys(0);
    if (p.has_lid()) s += " lid " + std::to_string(p.lid());
    out.push_back(s);
  }
  for (const auto& n : snap.netdevs()) {
    if (n.rdma_device() == dev.name() && !n.address().empty()) {
      out.push_back("netdev " + n.name() + " address " + n.address());
    }
  }
  if (!snap.node().vm_id().empty()) out.push_back("VM id " + snap.node().vm_id());
  return out;
}

std::string hostSteps(const v1::RdmaDevice& dev) {
  std::string port = dev.ports_size() > 0 ? std::to_string(dev.ports(0).port()) : "1";
  // Only PCI evidence makes the device a VF; otherwise it may be a passed-through PF.
  const std::string find_it =
      dev.is_virtual_function()
          ? "Host side: find the PF of this VF (match the VF's node/port GUID or MAC in "
            "`ip link show <pf>` / `ibdev2netdev -v`)"
          : "Host side: find the physical device behind this guest device (a passed-through "
            "adapter, or the PF if it is a VF: match its node/port GUID or MAC in "
            "`ip link show <pf>` / `ibdev2netdev -v`)";
  return "Send this snapshot (the .ibsnap file) to the provider with the ticket. " + find_it +
         ", then `mlxlink -d <PF> -p " + port +
         " -m -c -e` (BER, effective errors, module DDM and temperature), `mst status -v`, "
         "`flint -d <PF> q` (firmware), check the cable/transceiver and the switch port, and "
         "the BMC SEL for PCIe/thermal events.";
}

}  // namespace

void runEscalationRules(RuleContext& ctx) {
  const auto& phys = physicalCodes();
  const auto& symptoms = symptomCodes();
  bool escalated_any = false;
  for (const auto& dev : ctx.snap.devices()) {
    if (!physicalFunctionIsRemote(ctx.snap, dev)) continue;
    std::vector<std::string> physical;
    std::vector<std::string> symptom;
    Severity worst = Severity::Info;
    bool state_unknown = false;
    for (const auto& f : ctx.findings) {
      if (f.device() != dev.name() || f.node() != ctx.node) continue;
      if (f.code() == "PORT_STATE_UNKNOWN") state_unknown = true;
      const Severity s = severityOf(f);
      if (s == Severity::Info) continue;
      // The IPoIB-down warning says nothing about the physical port.
      if (f.code() == "PORT_DOWN" && s != Severity::Critical) continue;
      const std::string line = f.code() + " (" + f.severity() + "): " + f.summary();
      if (phys.count(f.code()) != 0) {
        physical.push_back(line);
        worst = std::max(worst, s);
      } else if (symptoms.count(f.code()) != 0) {
        symptom.push_back(line);
      }
    }
    // Symptoms alone escalate only when the VF side is known to be clean.
    if (physical.empty() && (symptom.empty() || state_unknown)) continue;
    std::vector<std::string> ev;
    std::string summary;
    Severity sev;
    if (!physical.empty()) {
      summary = dev.name() +
                (dev.is_virtual_function()
                     ? std::string(" is a virtual function with physical-layer or device "
                                   "evidence: the provider must inspect its PF and port")
                     : std::string(" (in a virtual machine; no PCI evidence that it is a VF) "
                                   "has physical-layer or device evidence: the provider must "
                                   "inspect the physical device and port behind it"));
      ev = physical;
      sev = worst;
    } else {
      summary = dev.name() +
                (dev.is_virtual_function()
                     ? std::string(" shows transport errors while its VF-side link evidence "
                                   "is clean: the PF, cable or fabric beyond the VF must be "
                                   "inspected")
                     : std::string(" (in a virtual machine; no PCI evidence that it is a VF) "
                                   "shows transport errors while its guest-side link evidence "
                                   "is clean: the physical device, cable or fabric behind it "
                                   "must be inspected"));
      ev = symptom;
      sev = Severity::Warning;
    }
    for (auto& line : identity(ctx.snap, dev)) ev.push_back(std::move(line));
    ctx.add({FindingCode::EscalateHostInspection, sev, "", dev.name(), 0, std::move(summary),
             std::move(ev), hostSteps(dev)});
    escalated_any = true;
  }
  if (escalated_any) return;
  // Node-level symptoms (NCCL) without a device to pin them on, on a node whose RDMA
  // devices are VFs and look clean.
  std::vector<const v1::RdmaDevice*> vfs;
  for (const auto& dev : ctx.snap.devices()) {
    if (physicalFunctionIsRemote(ctx.snap, dev) && dev.missing_reason().empty())
      vfs.push_back(&dev);
  }
  if (vfs.empty()) return;
  std::vector<std::string> ev;
  for (const auto& f : ctx.findings) {
    if (severityOf(f) == Severity::Info || f.node() != ctx.node) continue;
    if (phys.count(f.code()) != 0) return;  // a physical finding not tied to a VF: act on it first
    if (f.code() == "PORT_STATE_UNKNOWN") return;  // the VF side is not known to be clean
    if (symptoms.count(f.code()) != 0 && f.device().empty()) {
      ev.push_back(f.code() + " (" + f.severity() + "): " + f.summary());
    }
  }
  if (ev.empty()) return;
  for (const auto* dev : vfs) {
    for (auto& line : identity(ctx.snap, *dev)) ev.push_back(std::move(line));
  }
  bool all_vfs = true;
  for (const auto* dev : vfs) all_vfs = all_vfs && dev->is_virtual_function();
  ctx.add({FindingCode::EscalateHostInspection, Severity::Warning, "", "", 0,
           all_vfs ? "Transport errors with clean VF-side evidence on every VF of this node: "
                     "the PFs, cables or fabric beyond them must be inspected"
                   : "Transport errors with clean guest-side evidence on every RDMA device of "
                     "this virtual machine: the physical devices, cables or fabric behind "
                     "them must be inspected",
           std::move(ev), hostSteps(*vfs.front())});
}

}  // namespace ibc::core::rules

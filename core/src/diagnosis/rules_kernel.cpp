// Kernel log rules: KERNEL_LINK_FLAP, FW_COMMAND_TIMEOUT, FW_COMMAND_FAILED, DEVICE_FATAL,
// TX_TIMEOUT, DRIVER_LOAD_FAILED, PCIE_ERROR, MODULE_TEMPERATURE, and PCIE_LINK_DEGRADED
// from the kernel's own "limited by" line.

#include <map>
#include <tuple>

#include "ibc/core/kernel_log.h"
#include "ibc/core/text.h"
#include "rules_internal.h"

namespace ibc::core::rules {

namespace {

constexpr std::size_t kEvidenceLines = 10;

struct EventGroup {
  std::vector<const v1::KernelLogLine*> lines;
  bool severe = false;  // e.g. an uncorrected PCIe error
};

std::string lineText(const v1::KernelLogLine& l) {
  std::string s;
  if (!l.host().empty()) s += l.host() + ": ";
  if (!l.timestamp().empty()) s += l.timestamp() + " ";
  return s + l.text();
}

// The RDMA device a kernel message is about, when the snapshot can tell.
std::string deviceFor(const RuleContext& ctx, const KernelMessageSubject& subject) {
  if (!subject.rdma_device.empty() && ctx.device(subject.rdma_device) != nullptr)
    return subject.rdma_device;
  for (const auto& d : ctx.snap.devices()) {
    if (!subject.pci_address.empty() && d.pci().address() == subject.pci_address) return d.name();
  }
  for (const auto& n : ctx.snap.netdevs()) {
    if (!subject.netdev.empty() && n.name() == subject.netdev && !n.rdma_device().empty())
      return n.rdma_device();
  }
  return {};
}

FindingText codeFor(KernelEvent e) {
  switch (e) {
    case KernelEvent::LinkDown:
    case KernelEvent::LinkUp:
    case KernelEvent::LinkNotReady:
    case KernelEvent::CableUnplugged:
    case KernelEvent::RdmaSendFailure:
      return {
          FindingCode::KernelLinkFlap, Severity::Warning,
          "the kernel saw the link go down or not come up",
          "Match the link-down times with job errors; inspect the cable/module (`mlxlink -m`) and "
          "the switch port log; for a VF the host must inspect the PF."};
    case KernelEvent::ModuleError:
      return {FindingCode::KernelLinkFlap, Severity::Critical,
              "the port's cable/transceiver module reported an error",
              "Replace or reseat the cable/transceiver named in the message (power budget, "
              "unsupported or bad EEPROM cables keep the link down); host side for a VF."};
    case KernelEvent::ModuleTemperature:
      return {FindingCode::ModuleTemperature, Severity::Critical,
              "a cable/transceiver module reported a high temperature",
              "Check airflow and the module's temperature (`mlxlink -d <pci> -m`); replace the "
              "transceiver if it keeps overheating (host side for a VF)."};
    case KernelEvent::FwCommandTimeout:
      return {
          FindingCode::FwCommandTimeout, Severity::Critical,
          "HCA firmware commands timed out: the device stopped answering its driver",
          "The HCA firmware is hung or the PCIe path stalls: collect the kernel log, then reset "
          "the device (driver reload or reboot); if it recurs the provider must check firmware "
          "and the PF (escalate)."};
    case KernelEvent::FwCommandFailed:
      return {
          FindingCode::FwCommandFailed, Severity::Warning,
          "the HCA firmware rejected a driver command",
          "Usually a driver/firmware version mismatch or an unsupported feature: compare the "
          "firmware (`fw_ver`) with the driver's supported list and update the firmware; harmless "
          "if the device works and the command is optional."};
    case KernelEvent::DeviceFatal:
      return {FindingCode::DeviceFatal, Severity::Critical,
              "the HCA reported a fatal internal error (health compromised / catastrophic)",
              "The device is unusable until reset: stop the job on this node, reset the device or "
              "reboot, and escalate with the kernel log (firmware crash dump on the PF)."};
    case KernelEvent::TxTimeout:
      return {FindingCode::TxTimeout, Severity::Critical,
              "a transmit queue timed out (netdev watchdog): the NIC stopped sending",
              "The NIC or its PCIe path stalled: check for PCIe errors and firmware health; a "
              "driver reload or reboot clears it; report recurrences with the kernel log."};
    case KernelEvent::DriverLoadFailed:
      return {FindingCode::DriverLoadFailed, Severity::Critical,
              "the RDMA driver failed to initialise the device: no RDMA device is created",
              "Read the failing step in the evidence (firmware/driver mismatch, resource profile, "
              "capability negotiation); update the driver or firmware to a supported pair, then "
              "reload (`modprobe -r mlx5_ib mlx5_core && modprobe mlx5_core`)."};
    case KernelEvent::PcieError:
      return {
          FindingCode::PcieError, Severity::Warning, "PCIe errors (AER) on the HCA's path",
          "Corrected errors point to a marginal slot, riser or card seating; uncorrected ones "
          "break the device. Reseat, check `lspci -vvv` error status (provider side for a VF)."};
    case KernelEvent::PcieBandwidthLimited:
      return {FindingCode::PcieLinkDegraded, Severity::Warning,
              "the kernel reports the HCA's PCIe bandwidth limited by a slower/narrower link",
              "The card trained below its PCIe capability: reseat it or move it to a slot with the "
              "full width and generation; check BIOS settings."};
    case KernelEvent::None: break;
  }
  return {FindingCode::KernelLinkFlap, Severity::Info, "", ""};
}

}  // namespace

void runKernelLogRules(RuleContext& ctx) {
  // Group lines by (finding code, device) in log order.
  struct Key {
    FindingCode code;
    std::string device;
    bool operator<(const Key& o) const {
      return std::tie(code, device) < std::tie(o.code, o.device);
    }
  };
  std::map<Key, EventGroup> groups;
  std::map<Key, FindingText> texts;
  bool link_trouble = false;  // "link is not ready" only counts next to real link events
  for (const auto& line : ctx.snap.kernel_log().lines()) {
    const KernelEvent e = classifyKernelMessage(line.text());
    if (e == KernelEvent::LinkDown || e == KernelEvent::CableUnplugged ||
        e == KernelEvent::RdmaSendFailure || e == KernelEvent::ModuleError) {
      link_trouble = true;
    }
  }
  for (const auto& line : ctx.snap.kernel_log().lines()) {
    const KernelEvent e = classifyKernelMessage(line.text());
    if (e == KernelEvent::None || e == KernelEvent::LinkUp) continue;
    if (e == KernelEvent::LinkNotReady && !link_trouble) continue;
    const FindingText c = codeFor(e);
    if (c.severity == Severity::Info) continue;
    Key key{c.code, deviceFor(ctx, kernelMessageSubjectOf(line.text()))};
    auto& g = groups[key];
    g.lines.push_back(&line);
    if (e == KernelEvent::PcieError && (containsIgnoreCase(line.text(), "uncorrect") ||
                                        containsIgnoreCase(line.text(), "fatal"))) {
      g.severe = true;
    }
    auto [it, inserted] = texts.emplace(key, c);
    if (!inserted && c.severity > it->second.severity) it->second = c;
  }
  for (const auto& [key, g] : groups) {
    const FindingText& c = texts.at(key);
    Severity sev = c.severity;
    if (g.severe) sev = Severity::Critical;
    std::vector<std::string> ev;
    for (std::size_t i = 0; i < g.lines.size() && i < kEvidenceLines; ++i)
      ev.push_back(lineText(*g.lines[i]));
    if (g.lines.size() > kEvidenceLines) {
      ev.push_back("... " + std::to_string(g.lines.size() - kEvidenceLines) + " more line(s)");
    }
    ev.push_back("source " + ctx.snap.kernel_log().source());
    std::string where = key.device.empty() ? "kernel log" : key.device;
    ctx.add({key.code, sev, "", key.device, 0,
             where + ": " + c.summary + " (" + std::to_string(g.lines.size()) + " line" +
                 (g.lines.size() == 1 ? "" : "s") + ")",
             std::move(ev), c.action});
  }
}

}  // namespace ibc::core::rules

#include "ibc/core/bundle_report.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <set>

#include "ibc/core/findings.h"
#include "ibc/core/rules.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

// Markdown fences around untrusted text: a line of the text cannot close them.
std::string fenced(const std::vector<std::string>& lines) {
  std::string out = "~~~~\n";
  for (const auto& l : lines) {
    std::string s = printable(l, 2000);
    for (std::size_t p; (p = s.find("~~~~")) != std::string::npos;) s.replace(p, 4, "~ ~ ");
    out += s + "\n";
  }
  return out + "~~~~\n";
}

// Table cells: no pipes or newlines from the evidence.
std::string cell(std::string_view s) {
  std::string out = printable(s, 200);
  for (char& c : out) {
    if (c == '|' || c == '\n') c = '/';
  }
  return out.empty() ? "-" : out;
}

std::string utc(int64_t ms) {
  return ms <= 0 ? std::string("unknown") : formatUtc(ms / 1000, "%Y-%m-%d %H:%M:%SZ");
}

// Markdown prose with each placeholder (`<PF>`, `<N>`, ...) as code: bare, a renderer takes
// "<PF_NETDEV>" for an HTML tag and hides it with everything up to the next '>'.
std::string codePlaceholders(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') {
      const std::size_t close = text.find('>', i);
      const std::string_view inside =
          close == std::string_view::npos ? std::string_view() : text.substr(i + 1, close - i - 1);
      const bool placeholder =
          !inside.empty() &&
          inside.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == std::string_view::npos;
      if (placeholder) {
        out += '`';
        out.append(text.substr(i, close - i + 1));
        out += '`';
        i = close;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::vector<v1::HostStep> hostSteps(const v1::SuspectVf& vf) {
  const std::string port = std::to_string(vf.port() == 0 ? 1 : vf.port());
  std::vector<v1::HostStep> steps;
  const auto add = [&](std::string purpose, std::string command) {
    v1::HostStep s;
    s.set_purpose(std::move(purpose));
    s.set_command(std::move(command));
    steps.push_back(std::move(s));
  };
  std::string vf_arg;
  if (!vf.port_guid().empty()) {
    vf_arg = vf.port_guid();
  } else if (!vf.node_guid().empty()) {
    vf_arg = vf.node_guid();
  } else if (!vf.mac().empty()) {
    vf_arg = vf.mac();
  } else {
    vf_arg = vf.pci_address();
  }
  add("Map this VF to its PF and VF index and judge the PF side automatically (as root)",
      "ibcollect host-inspect --bundle <BUNDLE> --attach-to <BUNDLE>" +
          (vf_arg.empty() ? std::string() : "   # or: ibcollect host-inspect --vf " + vf_arg));
  std::vector<std::string> patterns;
  if (!vf.node_guid().empty()) patterns.push_back(guidWithByteColons(vf.node_guid()));
  if (!vf.port_guid().empty()) patterns.push_back(guidWithByteColons(vf.port_guid()));
  if (!vf.mac().empty() && vf.mac().size() <= 17) patterns.push_back(vf.mac());
  if (!patterns.empty()) {
    std::string grep = "ip link show | grep -i";
    for (const auto& p : patterns) grep += " -e '" + p + "'";
    add("Find the PF netdev whose VF table lists this VF (`vf N` lines: MAC, NODE_GUID, "
        "PORT_GUID); the netdev above the matching line is <PF_NETDEV>, N is the VF index",
        grep);
  }
  if (!vf.node_guid().empty() || !vf.port_guid().empty()) {
    std::string grep = "grep -il";
    if (!vf.node_guid().empty()) grep += " -e '" + guidWithByteColons(vf.node_guid()) + "'";
    if (!vf.port_guid().empty()) grep += " -e '" + guidWithByteColons(vf.port_guid()) + "'";
    add("mlx5 SR-IOV: the PF whose sriov/<N>/node or port GUID is this VF's "
        "(/sys/class/net/<PF_NETDEV>/device is <PF_PCI>)",
        grep + " /sys/class/net/*/device/sriov/*/node /sys/class/net/*/device/sriov/*/port");
  }
  add("List Mellanox devices, the mst device <PF> of <PF_PCI>, and its netdevs", "mst status -v");
  if (vf.escalation() == escalationKindName(EscalationKind::SubnetManager)) {
    add("The VF's GUIDs and policy as the PF assigned them (set, non-zero, unique; policy "
        "Follow or Up, not Down); <N> is the VF index found above",
        "grep . /sys/class/net/<PF_NETDEV>/device/sriov/<N>/node "
        "/sys/class/net/<PF_NETDEV>/device/sriov/<N>/port "
        "/sys/class/net/<PF_NETDEV>/device/sriov/<N>/policy");
    add("The PF's VF table: the VF's NODE_GUID, PORT_GUID and link-state",
        "ip link show <PF_NETDEV>");
    add("The PF port itself must be ACTIVE (else the PF runbook applies)",
        "mlxlink -d <PF> -p " + port);
    add("The subnet manager must run with virtualization enabled (on the SM host; UFM: "
        "Virtualization enabled)",
        "sminfo; grep -i virt_enabled /etc/opensm/opensm.conf   # expect virt_enabled 2");
    std::string pkeys = "the partition of pkey";
    for (const auto& k : vf.pkeys()) pkeys += " " + k;
    add("The VF's port GUID must be a member of " + pkeys +
            " (the SM's partitions.conf, or ALL=full)",
        "grep -i -e '" + (vf.pkeys().empty() ? std::string("default") : vf.pkeys(0)) +
            "' -e ALL /etc/opensm/partitions.conf   # on the SM host");
    return steps;
  }
  if (vf.escalation() == escalationKindName(EscalationKind::TransportPath)) {
    add("Physical link of the PF port: BER, FEC, effective errors, module DDM",
        "mlxlink -d <PF> -p " + port + " -m -c -e");
    add("PF netdev counters on the path (discards, retransmits, out-of-buffer, pause)",
        "ethtool -S <PF_NETDEV> | grep -i -e discard -e retrans -e out_of -e pause -e error");
    add("Host kernel log lines of the PF", "dmesg -T | grep -i -e <PF_PCI> -e mlx5");
    add("The switch port the PF is cabled to: its error and congestion counters (the LID and "
        "port from `ibstat` on the host, or the switch's own CLI)",
        "perfquery -x <SWITCH_LID> <SWITCH_PORT>");
    return steps;
  }
  add("Physical link of the PF port: BER, FEC, effective errors, module DDM and temperature",
      "mlxlink -d <PF> -p " + port + " -m -c -e");
  add("Firmware version and health", "flint -d <PF> q");
  add("Firmware configuration (SR-IOV, link type)", "mlxconfig -d <PF> q");
  add("PF netdev counters (phy, FEC, discards, pause)", "ethtool -S <PF_NETDEV>");
  add("Transceiver/cable module EEPROM and DDM (temperature, power, alarms)",
      "ethtool -m <PF_NETDEV>");
  add("PCIe AER counters of the PF",
      "grep . /sys/bus/pci/devices/<PF_PCI>/aer_dev_correctable "
      "/sys/bus/pci/devices/<PF_PCI>/aer_dev_nonfatal /sys/bus/pci/devices/<PF_PCI>/aer_dev_fatal");
  add("PCIe link of the PF (width and speed against its maximum)",
      "lspci -s <PF_PCI> -vv | grep -e LnkCap -e LnkSta");
  add("Host kernel log lines of the PF", "dmesg -T | grep -i -e <PF_PCI> -e mlx5");
  add("BMC system event log (PCIe, thermal, power events)", "ipmitool sel list");
  return steps;
}

}  // namespace

std::string guidWithByteColons(std::string_view guid) {
  std::string hex;
  for (char c : guid) {
    if (c == ':') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::string(guid);
    hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (hex.size() != 16) return std::string(guid);
  std::string out;
  for (std::size_t i = 0; i < 16; i += 2) {
    if (i > 0) out += ':';
    out += hex.substr(i, 2);
  }
  return out;
}

v1::PfInspection buildPfInspection(const std::vector<AnalyzedNode>& nodes, std::string_view case_id,
                                   std::string_view job_id) {
  v1::PfInspection out;
  out.set_format_version(1);
  out.set_case_id(std::string(case_id));
  out.set_job_id(std::string(job_id));
  for (const char* p : {"<PF>", "<PF_NETDEV>", "<PF_PCI>", "<BUNDLE>"}) out.add_placeholders(p);
  for (const auto& node : nodes) {
    // Devices the job verdict escalated, with the reasons; "" = every device.
    std::map<std::string, std::set<std::string>> devices;
    std::set<std::string> identity_missing;
    for (const auto& f : node.findings) {
      if (f.code() == findingCodeName(FindingCode::VfIdentityMissing)) {
        identity_missing.insert(f.device());
        continue;
      }
      if (f.code() != findingCodeName(FindingCode::EscalateHostInspection)) continue;
      devices[f.device()].insert(f.reasons().begin(), f.reasons().end());
    }
    if (devices.empty()) continue;
    const auto& snap = node.snapshot;
    const std::string label = node.label.empty() ? nodeName(snap) : node.label;
    for (const auto& dev : snap.devices()) {
      std::set<std::string> reasons;
      for (const std::string& key : {dev.name(), std::string()}) {
        if (auto it = devices.find(key); it != devices.end()) {
          reasons.insert(it->second.begin(), it->second.end());
        }
      }
      const auto kind = escalationKindFor({reasons.begin(), reasons.end()});
      if (!kind) continue;
      if (reasons.empty() || !dev.missing_reason().empty()) continue;
      std::vector<const v1::RdmaPort*> ports;
      for (const auto& p : dev.ports()) ports.push_back(&p);
      v1::RdmaPort none;
      if (ports.empty()) ports.push_back(&none);
      for (const auto* p : ports) {
        v1::SuspectVf* vf = out.add_suspects();
        vf->set_node(label);
        vf->set_device(dev.name());
        vf->set_port(p->port());
        vf->set_pci_address(dev.pci().address());
        // Only identities of the right shape reach the host's commands; a placeholder
        // ("node_guid") or an all-zero GUID (an unconfigured VF) would match the wrong PF
        // or nothing.
        const auto guid = [](const std::string& g) {
          return isGuidShaped(g) && !isZeroGuid(g) ? g : std::string();
        };
        vf->set_node_guid(guid(dev.node_guid()));
        vf->set_port_guid(guid(p->port_guid()));
        vf->set_sys_image_guid(guid(dev.sys_image_guid()));
        for (const auto& n : snap.netdevs()) {
          const bool bound =
              n.rdma_device() == dev.name() && (n.rdma_port() == p->port() || n.rdma_port() == 0);
          const bool listed =
              std::find(p->netdevs().begin(), p->netdevs().end(), n.name()) != p->netdevs().end();
          if ((bound || listed) && vf->netdev().empty()) {
            vf->set_netdev(n.name());
            if (isMacShaped(n.address()) &&
                n.address().find_first_not_of("0:") != std::string::npos) {
              vf->set_mac(n.address());
            }
          }
        }
        for (const auto& g : p->gids()) vf->add_gids(g);
        for (const auto& k : p->pkeys()) vf->add_pkeys(k);
        if (isVmIdShaped(snap.node().vm_id())) {
          vf->set_vm_id(snap.node().vm_id());
          vf->set_vm_id_source(snap.node().vm_id_source());
        }
        vf->set_link_layer(p->link_layer());
        if (isFirmwareVersionShaped(dev.fw_ver())) vf->set_fw_ver(dev.fw_ver());
        if (dev.board_id() != "board_id") vf->set_board_id(dev.board_id());
        for (const auto& r : reasons) vf->add_reasons(r);
        vf->set_escalation(std::string(escalationKindName(*kind)));
        vf->set_identity_missing(identity_missing.count(dev.name()) != 0);
        for (auto& s : hostSteps(*vf)) *vf->add_steps() = std::move(s);
      }
    }
  }
  return out;
}

std::string renderPfInspectionMarkdown(const v1::PfInspection& in) {
  std::string out = "# PF inspection\n\n";
  if (!in.case_id().empty()) out += "Case " + cell(in.case_id()) + ". ";
  if (!in.job_id().empty()) out += "Job " + cell(in.job_id()) + ". ";
  if (in.suspects_size() == 0) {
    out +=
        "\nNo node of this bundle has physical-layer evidence or asks for host inspection: "
        "nothing to inspect on the host side.\n";
    return out;
  }
  out += std::to_string(in.suspects_size()) +
         " suspect VF(s). For each: find the PF that hosts the VF (match its GUIDs or MAC), "
         "then run the steps on that host as root. Fill in `<PF>` (the mst device or PF PCI "
         "address), `<PF_NETDEV>`, `<PF_PCI>` and `<BUNDLE>` (this file's bundle).\n";
  for (const auto& vf : in.suspects()) {
    out += "\n## " + cell(vf.node()) + " " + cell(vf.device()) + " port " +
           std::to_string(vf.port()) + "\n\n";
    out += "Why: ";
    for (int i = 0; i < vf.reasons_size(); ++i) out += (i ? ", " : "") + cell(vf.reasons(i));
    out += "\n\nLook at: ";
    if (vf.escalation() == escalationKindName(EscalationKind::SubnetManager)) {
      out +=
          "the subnet manager side (the link is up but the port is not ACTIVE): the VF's GUID "
          "assignment on the PF, its SR-IOV policy, SM virtualization and pkey membership.";
    } else if (vf.escalation() == escalationKindName(EscalationKind::TransportPath)) {
      out += "the PF and the path beyond it (the VF side is clean; traffic suffered).";
    } else {
      out +=
          "the physical link and device: the PF, its port, the cable or transceiver and the "
          "switch port.";
    }
    if (vf.identity_missing()) {
      out +=
          "\n\n**VF_IDENTITY_MISSING**: nothing the host can search for identifies this VF "
          "(no node/port GUID, MAC or VM id). Ask the customer for `cat "
          "/sys/class/infiniband/" +
          cell(vf.device()) +
          "/node_guid` (as root), `ibstat` (Port GUID), the MAC in `ip link`, or the VM's "
          "instance id before going to the host.";
    }
    out += "\n\n| identity | value |\n|---|---|\n";
    const auto row = [&](std::string_view k, std::string_view v) {
      if (!v.empty()) out += "| " + std::string(k) + " | `" + cell(v) + "` |\n";
    };
    row("guest PCI address", vf.pci_address());
    row("node GUID", vf.node_guid());
    row("port GUID", vf.port_guid());
    row("system image GUID", vf.sys_image_guid());
    row("netdev", vf.netdev());
    row("MAC / hardware address", vf.mac());
    for (const auto& g : vf.gids()) row("GID", g);
    for (const auto& k : vf.pkeys()) row("pkey", k);
    row("VM id", vf.vm_id().empty() ? "" : vf.vm_id() + " (" + vf.vm_id_source() + ")");
    row("link layer", vf.link_layer());
    row("firmware", vf.fw_ver());
    row("board id", vf.board_id());
    out += "\nSteps on the host:\n\n";
    int n = 0;
    for (const auto& s : vf.steps()) {
      // The code block is indented as far as the item's text ("1. " 3, "10. " 4), or it
      // ends the list.
      const std::string marker = std::to_string(++n) + ". ";
      const std::string indent(marker.size(), ' ');
      out += marker + codePlaceholders(s.purpose()) + ":\n\n" + indent + "~~~~\n" + indent +
             printable(s.command(), 2000) + "\n" + indent + "~~~~\n";
    }
  }
  return out;
}

std::string renderBundleReport(const v1::Report& report, const v1::BundleManifest& manifest,
                               const v1::PfInspection& inspection) {
  std::string out = "# ibcollect escalation report\n\n";
  if (!manifest.case_id().empty()) out += "- Case: " + cell(manifest.case_id()) + "\n";
  if (!manifest.tenant().empty()) out += "- Tenant: " + cell(manifest.tenant()) + "\n";
  if (!manifest.job_id().empty()) out += "- Job: " + cell(manifest.job_id()) + "\n";
  out += "- Nodes: " + std::to_string(report.nodes_size()) + "\n";
  out += "- Collected: " + utc(manifest.window_start_unix_ms()) + " to " +
         utc(manifest.window_end_unix_ms()) + "\n";
  out += "- Exported by: " + cell(manifest.exporter().subject()) + " with ibcollect " +
         cell(manifest.ibcollect_version()) + " at " + utc(manifest.created_unix_ms()) + "\n";
  if (manifest.redacted()) {
    out +=
        "- Redacted: host names, IP addresses and user names are pseudonyms; the signed "
        "snapshots are not included\n";
  }
  out +=
      "\n## Verdict per node\n\n| node | verdict | critical | warning | info | worst finding "
      "|\n|---|---|---|---|---|---|\n";
  for (const auto& n : report.nodes()) {
    out += "| " + cell(n.label().empty() ? n.node() : n.label()) + " | " +
           cell(n.worst_severity()) + " | " + std::to_string(n.critical()) + " | " +
           std::to_string(n.warning()) + " | " + std::to_string(n.info()) + " | " +
           cell(n.worst_code()) + " |\n";
  }
  if (report.notices_size() > 0) {
    out += "\n## Notes\n\n";
    for (const auto& n : report.notices()) out += "- " + printable(n, 2000) + "\n";
  }
  out +=
      "\n## Ports per node\n\n| node | device | port | state | physical state | rate | link "
      "layer | firmware | netdevs |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& n : report.nodes()) {
    const std::string name = cell(n.label().empty() ? n.node() : n.label());
    if (n.ports_size() == 0) out += "| " + name + " | - | - | - | - | - | - | - | - |\n";
    for (const auto& p : n.ports()) {
      std::string netdevs;
      for (const auto& d : p.netdevs()) netdevs += (netdevs.empty() ? "" : ", ") + d;
      out += "| " + name + " | " + cell(p.device()) + " | " +
             (p.port() == 0 ? std::string("-") : std::to_string(p.port())) + " | " +
             cell(p.state()) + " | " + cell(p.phys_state()) + " | " + cell(p.rate()) + " | " +
             cell(p.link_layer()) + " | " + cell(p.fw_ver()) + " | " + cell(netdevs) + " |\n";
    }
  }
  out += "\n## Findings\n";
  int shown = 0;
  for (const auto& f : report.findings()) {
    if (f.severity() == "info") continue;
    ++shown;
    out += "\n### " + cell(f.code()) + " (" + cell(f.severity()) + ") on " + cell(f.node());
    if (!f.device().empty()) out += " " + cell(f.device());
    if (f.port() != 0) out += " port " + std::to_string(f.port());
    out += "\n\n" + printable(f.summary(), 2000) + "\n\n";
    if (f.evidence_size() > 0) {
      std::vector<std::string> ev(f.evidence().begin(), f.evidence().end());
      out += "Evidence:\n\n" + fenced(ev) + "\n";
    }
    if (!f.action().empty()) out += "Next step: " + printable(f.action(), 4000) + "\n";
  }
  if (shown == 0) out += "\nNo warning or critical finding.\n";
  int info = 0;
  for (const auto& f : report.findings()) info += f.severity() == "info" ? 1 : 0;
  if (info > 0) {
    out += "\n" + std::to_string(info) +
           " info finding(s) (unavailable data and the like) are in findings.json.\n";
  }
  out += "\n## Next\n\n";
  if (inspection.suspects_size() > 0) {
    out += std::to_string(inspection.suspects_size()) +
           " suspect VF(s) need the host side: pf-inspection.md lists how to find each PF "
           "and the commands to run there; `ibcollect host-inspect --bundle <BUNDLE> "
           "--attach-to <BUNDLE>` does it and attaches the result.\n";
  } else {
    out += "No node needs host inspection.\n";
  }
  return out;
}

}  // namespace ibc::core

// PF judgement (pf_judge.h): each kind of evidence adds what it shows, and the PF verdict is
// the union. Every finding names the PF and the VFs of the case it hosts, so the host team
// and the tenant's support engineer read the same story.

#include "ibc/core/pf_judge.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ibc/core/findings.h"
#include "ibc/core/kernel_log.h"
#include "ibc/core/report.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && startsWithIgnoreCase(a, b);
}

const v1::Counter* findCounter(const google::protobuf::RepeatedPtrField<v1::Counter>& list,
                               std::string_view name) {
  for (const auto& c : list) {
    if (c.name() == name && c.unavailable_reason().empty()) return &c;
  }
  return nullptr;
}

class PfJudge {
 public:
  PfJudge(const v1::PfEvidence& pf, const std::vector<v1::VfMapping>& vfs, std::string_view host,
          std::string_view source)
      : pf_(pf), vfs_(vfs), host_(host), source_(source) {
    for (const auto& m : vfs_) {
      vf_names_ += (vf_names_.empty() ? "" : ", ") + std::string("vf ") +
                   std::to_string(m.vf_index()) +
                   (m.node().empty() ? "" : " (" + m.node() + " " + m.device() + ")");
    }
  }

  std::vector<v1::Finding> run() {
    portState();
    vfLinkPolicy();
    mlxlinkCounters();
    sysfsCounters();
    moduleHealth();
    pcie();
    kernelLog();
    verdict();
    return std::move(out_);
  }

 private:
  void add(FindingCode code, Severity sev, uint32_t port, std::string summary,
           std::vector<std::string> evidence, std::string action) {
    if (!vf_names_.empty()) evidence.push_back("hosts " + vf_names_);
    FindingSpec spec{code,
                     sev,
                     std::string(host_),
                     pf_.pf_device(),
                     port,
                     std::move(summary),
                     std::move(evidence),
                     std::move(action)};
    auto f = makeFinding(std::move(spec));
    f.set_source(std::string(source_));
    out_.push_back(std::move(f));
  }
  std::string pfName() const {
    std::string s = "PF " + pf_.pf_device();
    if (!pf_.pf_pci().empty() && pf_.pf_pci() != pf_.pf_device()) s += " (" + pf_.pf_pci() + ")";
    return s;
  }

  void portState() {
    for (const auto& p : pf_.rdma().ports()) {
      examined("sysfs port " + std::to_string(p.port()) + " state " + p.state().raw());
      const PortState st = portStateOf(p.state());
      const PhysState ph = physStateOf(p.phys_state());
      if (st == PortState::Active || st == PortState::Unknown) continue;
      add(FindingCode::PfPortDown, Severity::Critical, p.port(),
          pfName() + " port " + std::to_string(p.port()) + " is " + std::string(portStateName(st)) +
              (ph != PhysState::Unknown ? " (" + std::string(physStateName(ph)) + ")" : ""),
          {"state: " + p.state().raw(), "phys_state: " + p.phys_state().raw()},
          "Every VF of this port is down with it: check the cable and the switch port "
          "(mlxlink -d " +
              pf_.pf_pci() + " -m -c), then the subnet manager for INIT/ARMED");
    }
    for (const auto& ml : pf_.mlxlink()) {
      if (ml.state().empty() && ml.phys_state().empty()) continue;
      examined("mlxlink state " + ml.state() + "/" + ml.phys_state());
      const bool active = ml.state().empty() || equalsIgnoreCase(ml.state(), "Active");
      const bool up = ml.phys_state().empty() || equalsIgnoreCase(ml.phys_state(), "LinkUp");
      if (active && up) continue;
      std::vector<std::string> ev{"mlxlink State: " + ml.state(),
                                  "mlxlink Physical state: " + ml.phys_state()};
      if (!ml.status_opcode().empty()) ev.push_back("Status Opcode: " + ml.status_opcode());
      if (!ml.recommendation().empty()) ev.push_back("Recommendation: " + ml.recommendation());
      add(FindingCode::PfPortDown, Severity::Critical, ml.port(),
          pfName() + " link is " + (ml.state().empty() ? ml.phys_state() : ml.state()) +
              " per mlxlink",
          std::move(ev),
          "Follow mlxlink's recommendation; reseat or replace the cable, check the switch port");
    }
    auto netdevDown = [&](const std::string& name, bool admin_up, bool has_carrier, bool carrier,
                          const std::string& what) {
      examined("netdev " + name + " " + what);
      if (!admin_up || !has_carrier || carrier) return;
      add(FindingCode::PfPortDown, Severity::Critical, 0,
          pfName() + " netdev " + name + " is up but has no carrier", {name + ": " + what},
          "The physical link is down: check cable, module and switch port");
    };
    for (const auto& l : pf_.links()) {
      netdevDown(l.name(), l.has_admin_up() && l.admin_up(), l.has_carrier(), l.carrier(),
                 "<" + l.flags_raw() + "> state " + l.state());
    }
    for (const auto& n : pf_.netdevs()) {
      bool listed = false;
      for (const auto& l : pf_.links()) listed = listed || l.name() == n.name();
      if (listed) continue;
      netdevDown(n.name(), n.has_admin_up() && n.admin_up(), n.has_carrier(), n.carrier(),
                 "operstate " + n.operstate());
    }
  }

  // The host's VF link policy: `link-state disable` forces the VF's port down.
  void vfLinkPolicy() {
    for (const auto& m : vfs_) {
      for (const auto& l : pf_.links()) {
        for (const auto& vf : l.vfs()) {
          if (static_cast<int32_t>(vf.index()) != m.vf_index() || vf.link_state() != "disable")
            continue;
          add(FindingCode::PfPortDown, Severity::Critical, 0,
              "The host forces VF " + std::to_string(vf.index()) + " of " + l.name() +
                  " down (link-state disable)",
              {l.name() + " vf " + std::to_string(vf.index()) + ": " + vf.raw()},
              "The tenant sees its port down whatever the fabric does: set `ip link set " +
                  l.name() + " vf " + std::to_string(vf.index()) +
                  " state auto` (or enable) if the VF should be up");
        }
      }
    }
  }

  void mlxlinkCounters() {
    for (const auto& ml : pf_.mlxlink()) {
      const bool has_counters = ml.has_effective_errors() || ml.has_raw_ber_value() ||
                                ml.has_link_down_counter() || ml.raw_errors_per_lane_size() > 0;
      if (!has_counters) continue;
      std::string window =
          ml.has_time_since_clear_min()
              ? " over " + formatNumber(ml.time_since_clear_min(), 6) + " min since clear"
              : std::string();
      examined("mlxlink physical counters" + window);
      std::vector<std::string> ev;
      Severity sev = Severity::Info;
      bool phy = false;
      if (ml.has_effective_errors() && ml.effective_errors() > 0) {
        phy = true;
        sev = std::max(sev, Severity::Warning);
        ev.push_back("Effective Physical Errors: " + std::to_string(ml.effective_errors()) +
                     window);
      }
      if (ml.has_effective_ber_value() && ml.effective_ber_value() >= kEffectiveBerCritical) {
        phy = true;
        sev = Severity::Critical;
        ev.push_back("Effective Physical BER: " + ml.effective_ber() + " (>= 1e-12)");
      }
      if (ml.has_raw_ber_value() && ml.raw_ber_value() > kRawBerWarning) {
        phy = true;
        sev = std::max(sev, Severity::Warning);
        ev.push_back("Raw Physical BER: " + ml.raw_ber() + " (> 1e-6: living on FEC margin)");
      }
      if (ml.has_link_error_recovery_counter() && ml.link_error_recovery_counter() > 0) {
        phy = true;
        sev = std::max(sev, Severity::Warning);
        ev.push_back("Link Error Recovery Counter: " +
                     std::to_string(ml.link_error_recovery_counter()));
      }
      if (ml.has_symbol_errors() && ml.symbol_errors() > 0) {
        phy = true;
        sev = std::max(sev, Severity::Warning);
        ev.push_back("Symbol Errors: " + std::to_string(ml.symbol_errors()));
      }
      const bool opcode_issue = !ml.status_opcode().empty() && ml.status_opcode() != "0" &&
                                !startsWithIgnoreCase(ml.recommendation(), "No issue");
      if (opcode_issue) {
        phy = true;
        sev = std::max(sev, Severity::Warning);
        ev.push_back("Status Opcode: " + ml.status_opcode() +
                     (ml.recommendation().empty() ? "" : ", " + ml.recommendation()));
      }
      if (phy) {
        if (!ml.fec().empty()) ev.push_back("FEC: " + ml.fec());
        add(FindingCode::PfPhyErrors, sev, ml.port(),
            pfName() + " has physical-layer errors (mlxlink)", std::move(ev),
            "Clear the counters (mlxlink -d " + (ml.device().empty() ? pf_.pf_pci() : ml.device()) +
                " --pc), watch whether they rise; if so, replace the cable/module, then check "
                "the switch port");
      }
      if (ml.has_link_down_counter() && ml.link_down_counter() > 0) {
        add(FindingCode::PfLinkFlap, Severity::Warning, ml.port(),
            pfName() + " link went down " + std::to_string(ml.link_down_counter()) +
                " time(s) (mlxlink)",
            {"Link Down Counter: " + std::to_string(ml.link_down_counter()) + window},
            "Each link-down drops every VF's QPs: match the times with the host kernel log and "
            "the switch log; replace the cable if it keeps happening");
      }
      // Raw errors corrected by FEC: information, not a fault.
      uint64_t raw_total = 0;
      std::string lanes;
      for (auto v : ml.raw_errors_per_lane()) {
        raw_total += v;
        lanes += (lanes.empty() ? "" : ",") + std::to_string(v);
      }
      if (raw_total > 0 && !phy) {
        clean_notes_.push_back("raw (pre-FEC) errors per lane " + lanes +
                               " corrected by FEC, effective errors " +
                               (ml.has_effective_errors() ? std::to_string(ml.effective_errors())
                                                          : std::string("not shown")) +
                               (ml.raw_ber().empty() ? "" : ", raw BER " + ml.raw_ber()));
      }
      if (ml.physical_grade_size() > 0) {
        std::string grades;
        for (auto g : ml.physical_grade())
          grades += (grades.empty() ? "" : ",") + std::to_string(g);
        clean_notes_.push_back("eye grades per lane " + grades + " (no threshold printed)");
      }
    }
  }

  void sysfsCounters() {
    static constexpr std::string_view kPhy[] = {"symbol_error", "link_error_recovery",
                                                "local_link_integrity_errors", "port_rcv_errors",
                                                "port_rcv_remote_physical_errors"};
    for (const auto& p : pf_.rdma().ports()) {
      if (p.counters_size() == 0) continue;
      examined("sysfs counters of port " + std::to_string(p.port()));
      std::vector<std::string> ev;
      for (auto name : kPhy) {
        if (const auto* c = findCounter(p.counters(), name); c && c->value() > 0)
          ev.push_back(std::string(name) + ": " + std::to_string(c->value()));
      }
      if (!ev.empty()) {
        add(FindingCode::PfPhyErrors, Severity::Warning, p.port(),
            pfName() + " port " + std::to_string(p.port()) + " counts physical errors (sysfs)",
            std::move(ev),
            "Totals since the counters were last cleared: sample again to see whether they "
            "rise, then check cable and switch port");
      }
      if (const auto* c = findCounter(p.counters(), "link_downed"); c && c->value() > 0) {
        add(FindingCode::PfLinkFlap, Severity::Warning, p.port(),
            pfName() + " port " + std::to_string(p.port()) + " link went down " +
                std::to_string(c->value()) + " time(s) (sysfs link_downed)",
            {"link_downed: " + std::to_string(c->value())},
            "Match the times with the host kernel log and the switch log");
      }
    }
    for (const auto& n : pf_.netdevs()) {
      if (n.ethtool_size() == 0) continue;
      examined("ethtool -S " + n.name());
      std::vector<std::string> ev;
      for (auto name : {"link_down_events_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy",
                        "rx_crc_errors_phy", "rx_corrected_bits_phy"}) {
        if (const auto* c = findCounter(n.ethtool(), name); c && c->value() > 0)
          ev.push_back(n.name() + " " + name + ": " + std::to_string(c->value()));
      }
      if (!ev.empty()) {
        add(FindingCode::PfPhyErrors, Severity::Warning, 0,
            pfName() + " netdev " + n.name() + " counts physical errors (ethtool -S)",
            std::move(ev),
            "Sample again to see whether they rise, then check cable and switch port");
      }
    }
  }

  void moduleHealth() {
    for (const auto& ml : pf_.mlxlink()) {
      if (ml.module_identifier().empty() && !ml.has_temperature_c() && ml.faults_size() == 0)
        continue;
      examined("mlxlink module info" +
               (ml.module_identifier().empty() ? "" : " (" + ml.module_identifier() + ")"));
      std::vector<std::string> ev;
      Severity sev = Severity::Info;
      for (const auto& f : ml.faults()) {
        ev.push_back(f.key() + ": " + f.value());
        sev = Severity::Critical;
      }
      temperature(ml.has_temperature_c(), ml.temperature_c(), ev, sev);
      for (double d : ml.rx_power_dbm()) rxPower(d, ev, sev);
      if (sev == Severity::Info) continue;
      moduleIdentity(ev, ml.vendor_name(), ml.vendor_part_number(), ml.vendor_serial_number());
      add(FindingCode::PfModule, sev, ml.port(),
          pfName() + " module/cable reports a fault (mlxlink -m)", std::move(ev),
          "Reseat, then replace the module or cable named here; check the peer end");
    }
    for (const auto& m : pf_.modules()) {
      examined("ethtool -m" + (m.netdev().empty() ? "" : " " + m.netdev()));
      std::vector<std::string> ev;
      Severity sev = Severity::Info;
      for (const auto& a : m.alarms_on()) {
        ev.push_back(a + ": On");
        sev = Severity::Critical;
      }
      for (const auto& w : m.warnings_on()) {
        ev.push_back(w + ": On");
        sev = std::max(sev, Severity::Warning);
      }
      if (m.flags_reported() == 0) {
        temperature(m.has_temperature_c(), m.temperature_c(), ev, sev);
        for (double d : m.rx_power_dbm()) rxPower(d, ev, sev);
      } else {
        if (m.has_temperature_c())
          ev.push_back("Module temperature: " + formatNumber(m.temperature_c(), 6) + " C");
        for (double d : m.rx_power_dbm()) ev.push_back("Rx power: " + formatNumber(d, 6) + " dBm");
      }
      if (sev == Severity::Info) continue;
      moduleIdentity(ev, m.vendor_name(), m.vendor_pn(), m.vendor_sn());
      add(FindingCode::PfModule, sev, 0,
          pfName() + " module " + (m.netdev().empty() ? "" : "of " + m.netdev() + " ") +
              "reports " + (sev == Severity::Critical ? "alarms" : "warnings") + " (ethtool -m)",
          std::move(ev),
          "Low Rx power: clean or replace the fibre and check the peer's Tx; high temperature: "
          "airflow; then replace the module");
    }
  }
  void temperature(bool has, double c, std::vector<std::string>& ev, Severity& sev) {
    if (!has) return;
    if (c >= kModuleTempCriticalC) {
      sev = Severity::Critical;
    } else if (c >= kModuleTempWarningC) {
      sev = std::max(sev, Severity::Warning);
    } else {
      return;
    }
    ev.push_back("module temperature " + formatNumber(c, 6) + " C");
  }
  void rxPower(double dbm, std::vector<std::string>& ev, Severity& sev) {
    if (dbm <= kRxPowerNoLightDbm) {
      sev = Severity::Critical;
      ev.push_back("Rx power " + formatNumber(dbm, 6) + " dBm (no light)");
    } else if (dbm <= kRxPowerLowDbm) {
      sev = std::max(sev, Severity::Warning);
      ev.push_back("Rx power " + formatNumber(dbm, 6) + " dBm (low)");
    }
  }
  static void moduleIdentity(std::vector<std::string>& ev, const std::string& vendor,
                             const std::string& pn, const std::string& sn) {
    if (vendor.empty() && pn.empty() && sn.empty()) return;
    ev.push_back("module " + vendor + " " + pn + (sn.empty() ? "" : " SN " + sn));
  }

  void pcie() {
    std::map<std::string, uint64_t> totals;
    std::vector<std::string> nonzero;
    for (const auto& a : pf_.aer()) {
      if (startsWith(a.name(), "TOTAL_ERR_")) {
        totals[a.kind()] += a.value();
      } else if (a.value() > 0) {
        nonzero.push_back("aer_dev_" + a.kind() + " " + a.name() + ": " +
                          std::to_string(a.value()));
      }
    }
    if (!pf_.aer().empty()) examined("AER counters");
    // Files without a TOTAL line (older kernels): sum the entries.
    if (totals.empty()) {
      for (const auto& a : pf_.aer()) totals[a.kind()] += a.value();
    }
    Severity sev = Severity::Info;
    std::vector<std::string> ev;
    if (totals["fatal"] > 0) sev = Severity::Critical;
    if (totals["nonfatal"] > 0 || totals["correctable"] > 0) sev = std::max(sev, Severity::Warning);
    for (const auto& [kind, n] : totals) {
      if (n > 0) ev.push_back("aer_dev_" + kind + " total " + std::to_string(n));
    }
    ev.insert(ev.end(), nonzero.begin(), nonzero.end());
    const auto& pci = pf_.rdma().pci();
    if (pci.max_link_lanes() > 0 || pci.max_link_gts() > 0) {
      examined("PCIe link " + pci.current_link_speed() + " x" + pci.current_link_width());
      const bool narrow = pci.max_link_lanes() > 0 && pci.current_link_lanes() > 0 &&
                          pci.current_link_lanes() < pci.max_link_lanes();
      const bool slow = pci.max_link_gts() > 0 && pci.current_link_gts() > 0 &&
                        pci.current_link_gts() < pci.max_link_gts();
      if (narrow || slow) {
        sev = std::max(sev, Severity::Warning);
        ev.push_back("PCIe link " + pci.current_link_speed() + " x" + pci.current_link_width() +
                     " of max " + pci.max_link_speed() + " x" + pci.max_link_width());
      }
    }
    const std::size_t unreadable = lspci(ev, sev);
    if (sev == Severity::Info) return;
    std::string summary = pfName() + " has PCIe errors or a degraded PCIe link";
    std::string action = "Check the slot, riser and BIOS PCIe settings (lspci -vvv -s " +
                         pf_.pf_pci() +
                         "); fatal/non-fatal AER errors disturb every VF of the device";
    if (unreadable > 0) {
      summary = pfName() + ": " + std::to_string(unreadable) +
                " PCI function(s) do not answer configuration reads (all ones)";
      action =
          "Those functions are unreachable on PCIe: read the host kernel log for AER and "
          "link-down events, check the BIOS (SR-IOV, ARI) and the slot, then reset the device "
          "or reboot the host; replace the adapter if it recurs. " +
          action;
    }
    add(FindingCode::PfPcieErrors, sev, 0, std::move(summary), cap(std::move(ev)),
        std::move(action));
  }

  // lspci records: a function whose configuration space reads all ones is critical (it is
  // gone from the bus); AER status bits follow the AER counters (fatal per UESvrt critical,
  // others a warning: the bits are sticky since the last clear); a downgraded link is a
  // warning, as the sysfs link above. Returns how many functions read all ones.
  std::size_t lspci(std::vector<std::string>& ev, Severity& sev) {
    if (pf_.pci_functions().empty()) return 0;
    // A bare listing (`lspci | grep Mellanox`) only shows that the functions enumerate: it
    // is inventory, not PCIe health, so it alone never makes the PF clean.
    const bool health =
        std::any_of(pf_.pci_functions().begin(), pf_.pci_functions().end(), [](const auto& f) {
          return f.config_unreadable() || !f.link_sta().empty() || !f.ue_sta().empty() ||
                 !f.ce_sta().empty();
        });
    if (health)
      examined("lspci (" + std::to_string(pf_.pci_functions_size()) + " PCI function(s))");
    std::size_t unreadable = 0;
    for (const auto& f : pf_.pci_functions()) {
      const std::string who = f.address().empty() ? std::string("function") : f.address();
      if (f.config_unreadable()) {
        ++unreadable;
        sev = Severity::Critical;
        ev.push_back(who + " reads all ones: " + f.unreadable_line());
      }
      if (f.link_downgraded()) {
        sev = std::max(sev, Severity::Warning);
        ev.push_back(who + " " + f.link_sta() +
                     (f.link_cap().empty() ? "" : " (" + f.link_cap() + ")"));
      } else if (!f.link_sta().empty() && f.has_sta_gts()) {
        clean_notes_.push_back(who + " " + f.link_sta());
      }
      if (f.uncorrectable_set_size() > 0) {
        const bool fatal = f.uncorrectable_fatal_size() > 0;
        sev = fatal ? Severity::Critical : std::max(sev, Severity::Warning);
        std::string names;
        for (const auto& n : f.uncorrectable_fatal()) names += (names.empty() ? "" : ", ") + n;
        ev.push_back(who + " " + f.ue_sta() +
                     (fatal ? " (fatal per UESvrt: " + names + ")" : std::string()));
      }
      if (f.correctable_set_size() > 0) {
        sev = std::max(sev, Severity::Warning);
        ev.push_back(who + " " + f.ce_sta());
      }
    }
    return unreadable;
  }

  void kernelLog() {
    if (pf_.kernel_log().empty()) return;
    examined("host kernel log (" + std::to_string(pf_.kernel_log_size()) + " lines)");
    std::vector<std::string> fw_ev, flap_ev, module_ev, pcie_ev;
    Severity fw_sev = Severity::Info, module_sev = Severity::Info, pcie_sev = Severity::Info;
    int downs = 0;
    for (const auto& l : pf_.kernel_log()) {
      const std::string line = (l.timestamp().empty() ? "" : l.timestamp() + " ") + l.text();
      const bool syndrome = l.text().find("synd 0x") != std::string::npos &&
                            l.text().find("ext_synd") == std::string::npos;
      KernelEvent e = classifyKernelMessage(l.text());
      // "pcieport 0004:00:00.0: pciehp: Slot(41): Link Down" is the PCIe slot's link (hot
      // plug or surprise removal), not the network port's: a PCIe event, never a flap.
      if (e == KernelEvent::LinkDown &&
          (containsIgnoreCase(l.text(), "pciehp") || startsWith(l.text(), "pcieport ")))
        e = KernelEvent::PcieError;
      if (syndrome) {
        fw_sev = Severity::Critical;
        fw_ev.push_back(line);
        continue;
      }
      switch (e) {
        case KernelEvent::DeviceFatal:
        case KernelEvent::FwCommandTimeout:
        case KernelEvent::DriverLoadFailed:
          fw_sev = Severity::Critical;
          fw_ev.push_back(line);
          break;
        case KernelEvent::FwCommandFailed:
          fw_sev = std::max(fw_sev, Severity::Warning);
          fw_ev.push_back(line);
          break;
        case KernelEvent::LinkDown:
          ++downs;
          flap_ev.push_back(line);
          break;
        case KernelEvent::LinkUp:
          if (downs > 0) flap_ev.push_back(line);
          break;
        case KernelEvent::ModuleTemperature:
        case KernelEvent::ModuleError:
          module_sev = Severity::Critical;
          module_ev.push_back(line);
          break;
        case KernelEvent::CableUnplugged:
          module_sev = std::max(module_sev, Severity::Warning);
          module_ev.push_back(line);
          break;
        case KernelEvent::PcieError:
        case KernelEvent::PcieBandwidthLimited:
          pcie_sev = std::max(pcie_sev, Severity::Warning);
          pcie_ev.push_back(line);
          break;
        default: break;
      }
    }
    if (fw_sev != Severity::Info) {
      add(FindingCode::PfFw, fw_sev, 0,
          pfName() + ": firmware health or command failures in the host kernel log",
          cap(std::move(fw_ev)),
          "Collect `mlxfwreset`-free evidence first (devlink health show, mstdump / fw trace), "
          "check the firmware version against the release notes, then open a vendor case; a "
          "health syndrome usually needs a firmware reset or host reboot");
    }
    if (downs > 0) {
      add(FindingCode::PfLinkFlap, downs >= 2 ? Severity::Critical : Severity::Warning, 0,
          pfName() + " link went down " + std::to_string(downs) + " time(s) (host kernel log)",
          cap(std::move(flap_ev)),
          "Match the times with the switch log; check cable and module (mlxlink -m -c)");
    }
    if (module_sev != Severity::Info) {
      add(FindingCode::PfModule, module_sev, 0,
          pfName() + ": module or cable events in the host kernel log", cap(std::move(module_ev)),
          "Reseat or replace the module/cable; check airflow");
    }
    if (pcie_sev != Severity::Info) {
      add(FindingCode::PfPcieErrors, pcie_sev, 0, pfName() + ": PCIe errors in the host kernel log",
          cap(std::move(pcie_ev)),
          "Check slot, riser and BIOS PCIe settings; read the AER counters");
    }
  }
  static std::vector<std::string> cap(std::vector<std::string> v) {
    constexpr std::size_t kMax = 20;
    if (v.size() > kMax) {
      const std::size_t dropped = v.size() - kMax;
      v.resize(kMax);
      v.push_back("... " + std::to_string(dropped) + " more line(s)");
    }
    return v;
  }

  void verdict() {
    for (const auto& f : out_) {
      if (severityOf(f) != Severity::Info) return;
    }
    for (const auto& ml : pf_.mlxlink()) {
      if (!ml.firmware_version().empty())
        clean_notes_.push_back("firmware " + ml.firmware_version());
    }
    for (const auto& fq : pf_.flint()) {
      examined("flint query");
      clean_notes_.push_back("firmware " + fq.fw_version() + " PSID " + fq.psid());
    }
    for (const auto& mc : pf_.mlxconfig()) {
      examined("mlxconfig query");
      if (!mc.sriov_en().empty())
        clean_notes_.push_back("SRIOV_EN " + mc.sriov_en() + ", NUM_OF_VFS " + mc.num_of_vfs());
    }
    if (examined_.empty()) {
      std::vector<std::string> ev{"nothing PF-side could be read for " + pfName()};
      for (const auto& n : pf_.notes()) ev.push_back(n);
      add(FindingCode::PortStateUnknown, Severity::Warning, 0,
          pfName() + ": no PF-side evidence (port state, counters, module, PCIe, kernel log)",
          std::move(ev),
          "Run host-inspect as root on the host itself, or paste mlxlink -m -c -e, ethtool -m "
          "and the host kernel log with --paste");
      return;
    }
    std::vector<std::string> ev;
    for (const auto& e : examined_) ev.push_back("read: " + e);
    for (const auto& n : clean_notes_) ev.push_back(n);
    add(FindingCode::PfClean, Severity::Info, 0, pfName() + " shows nothing wrong in what was read",
        std::move(ev),
        "Look beyond the PF: the switch port and its peer (switch counters, UFM), the cable's "
        "far end, and the VF-side evidence of the case");
  }

  void examined(std::string what) {
    if (std::find(examined_.begin(), examined_.end(), what) == examined_.end())
      examined_.push_back(std::move(what));
  }

  const v1::PfEvidence& pf_;
  const std::vector<v1::VfMapping>& vfs_;
  std::string_view host_;
  std::string_view source_;
  std::string vf_names_;
  std::vector<v1::Finding> out_;
  std::vector<std::string> examined_;
  std::vector<std::string> clean_notes_;
};

}  // namespace

std::vector<v1::Finding> judgePf(const v1::PfEvidence& pf, const std::vector<v1::VfMapping>& vfs,
                                 std::string_view host, std::string_view source) {
  return PfJudge(pf, vfs, host, source).run();
}

v1::Finding pfNotFoundFinding(const v1::VfMapping& vf, std::string_view host,
                              std::string_view source) {
  std::vector<std::string> ev;
  for (const auto& id : vf.identities()) ev.push_back("looked for " + id);
  for (const auto& c : vf.compared()) ev.push_back("compared with " + c);
  std::string who = vf.node().empty() ? vf.device() : vf.node() + " " + vf.device();
  // A guest PCI address alone identifies nothing on the host (the hypervisor maps the VF to
  // a guest bus of its own): a miss on it says nothing.
  const bool only_guest_pci =
      std::all_of(vf.identities().begin(), vf.identities().end(),
                  [](const std::string& id) { return id.rfind("guest pci ", 0) == 0; });
  if (only_guest_pci) {
    auto f = makeFinding(
        {FindingCode::VfIdentityMissing, Severity::Warning, std::string(host), vf.device(), 0,
         "VF " + who +
             " has no identity to look for (no node/port GUID, MAC or PCI address): "
             "nothing was compared, so this host may still host it",
         std::move(ev),
         "Ask the customer for the VF's node GUID (`cat /sys/class/infiniband/<dev>/node_guid` "
         "as root), its port GUID (`ibstat`), its MAC (`ip link`) or the VM's instance id, then "
         "run `ibcollect host-inspect --vf <GUID|MAC>` here"});
    f.set_source(std::string(source));
    return f;
  }
  auto f = makeFinding(
      {FindingCode::PfNotFound, Severity::Critical, std::string(host), vf.device(), 0,
       "No PF on this host hosts VF " + who, std::move(ev),
       "This is not the VM's host, or the VF was re-created since the snapshot: find the host "
       "from the VM id (product_uuid) in the hypervisor, and run host-inspect there"});
  f.set_source(std::string(source));
  return f;
}

void finishHostInspection(v1::HostInspection& inspection) {
  AnalyzedNode node;
  node.snapshot.mutable_node()->set_hostname(inspection.host());
  node.snapshot.mutable_node()->set_source(inspection.root());
  node.snapshot.mutable_node()->set_collected_at_unix_ms(inspection.inspected_at_unix_ms());
  for (const auto& pf : inspection.pf()) {
    if (pf.rdma().name().empty() && pf.rdma().ports_size() == 0) continue;
    *node.snapshot.add_devices() = pf.rdma();
  }
  std::vector<v1::Finding> all(inspection.findings().begin(), inspection.findings().end());
  sortFindings(all);
  node.findings = all;
  inspection.clear_nodes();
  *inspection.add_nodes() = summarizeNode(node);
  inspection.clear_findings();
  for (auto& f : all) *inspection.add_findings() = std::move(f);
}

}  // namespace ibc::core

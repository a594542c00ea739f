// The host-inspect report (pf_report.h): the VF table is built here, from what the PF
// judgement found; the layout below it (notices, counts, findings) is the report's own
// (report.h renderTextWithTable), so a host inspection reads like `analyze`.

#include "ibc/core/pf_report.h"

#include <cstddef>
#include <string>
#include <vector>

#include "ibc/core/findings.h"
#include "ibc/core/json.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

// What a VF's PF link looks like: mlxlink's state (and speed) when it was read, else the PF's
// first RDMA port.
std::string pfLink(const v1::HostInspection& in, const v1::VfMapping& m) {
  std::string link = "-";
  for (const auto& pf : in.pf()) {
    if (pf.pf_device() != m.pf_device() || m.vf_index() < 0) continue;
    for (const auto& ml : pf.mlxlink()) {
      if (!ml.phys_state().empty() || !ml.state().empty()) {
        link = ml.state().empty() ? ml.phys_state() : ml.state();
        if (!ml.speed().empty()) link += " " + ml.speed();
        break;
      }
    }
    if (link == "-" && pf.rdma().ports_size() > 0) {
      const auto& p = pf.rdma().ports(0);
      link = p.state().name().empty() ? p.state().raw() : p.state().name();
      if (!p.rate_raw().empty()) link += " " + p.rate_raw().substr(0, p.rate_raw().find(' ') + 0);
    }
  }
  return link;
}

// The worst finding above info on the VF's PF, or whether the VF was found at all.
std::string vfVerdict(const v1::HostInspection& in, const v1::VfMapping& m) {
  std::string verdict = m.vf_index() < 0 ? "NOT FOUND" : "OK";
  Severity worst = Severity::Info;
  bool any = false;
  for (const auto& f : in.findings()) {
    const bool about_pf = m.vf_index() >= 0 && f.device() == m.pf_device();
    const bool about_vf = m.vf_index() < 0 && f.device() == m.device();
    if (!about_pf && !about_vf) continue;
    if (!any || severityOf(f) > worst) worst = severityOf(f);
    any = true;
  }
  if (m.vf_index() >= 0 && any && worst != Severity::Info)
    verdict = severityWord(severityName(worst));
  return verdict;
}

// Pastes judged on their own (no VF looked for): one row per PF they name.
TextTable pfTable(const v1::HostInspection& in) {
  std::vector<std::vector<std::string>> rows{{"PF", "PF PCI", "SOURCE", "VERDICT"}};
  for (const auto& pf : in.pf()) {
    Severity worst = Severity::Info;
    for (const auto& f : in.findings()) {
      if (f.device() == pf.pf_device() && severityOf(f) > worst) worst = severityOf(f);
    }
    std::string source;  // the pastes' file names (their paths are in the JSON)
    for (const auto& s : pf.sources()) {
      source += (source.empty() ? "" : ", ") + s.substr(s.find_last_of(":/") + 1);
    }
    rows.push_back({pf.pf_device(), pf.pf_pci().empty() ? "-" : pf.pf_pci(),
                    source.empty() ? "-" : source,
                    worst == Severity::Info ? "OK" : severityWord(severityName(worst))});
  }
  return {std::move(rows), 3};
}

// One row per VF looked for: where it lives and how its PF looks.
TextTable vfTable(const v1::HostInspection& in, std::size_t max_width) {
  std::vector<std::vector<std::string>> rows{
      {"NODE", "VF", "VF PCI", "PF", "PF PCI", "VF#", "MATCHED BY", "PF LINK", "VERDICT"}};
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (const auto& m : in.vf_map()) {
    rows.push_back({dash(m.node()), dash(m.device()), dash(m.vf_pci()), dash(m.pf_device()),
                    dash(m.pf_pci()), m.vf_index() < 0 ? "-" : std::to_string(m.vf_index()),
                    dash(m.matched_by()), pfLink(in, m), vfVerdict(in, m)});
  }
  if (max_width > 0) {
    // A column that says nothing on any row (no tenant node for --vf) is left out.
    for (std::size_t c = rows[0].size() - 1; c-- > 0;) {
      bool empty = true;
      for (std::size_t r = 1; r < rows.size(); ++r) empty = empty && rows[r][c] == "-";
      if (!empty || rows.size() == 1) continue;
      for (auto& row : rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    }
  }
  const std::size_t verdict_column = rows[0].size() - 1;
  return {std::move(rows), verdict_column};
}

}  // namespace

std::string renderHostInspectionText(const v1::HostInspection& inspection,
                                     const TextOptions& options) {
  std::string heading;
  if (!inspection.host().empty() || !inspection.root().empty()) {
    heading = "host " + inspection.host() +
              (inspection.root().empty() || inspection.root() == "/"
                   ? std::string()
                   : " (tree " + inspection.root() + ")");
  }
  v1::Report report;
  *report.mutable_nodes() = inspection.nodes();
  *report.mutable_findings() = inspection.findings();
  *report.mutable_notices() = inspection.notices();
  return renderTextWithTable(report, heading,
                             inspection.vf_map_size() == 0 && inspection.pf_size() > 0
                                 ? pfTable(inspection)
                                 : vfTable(inspection, options.width),
                             options);
}

std::string renderHostInspectionJson(const v1::HostInspection& inspection) {
  std::string out = messageToJson(inspection);
  out.push_back('\n');
  return out;
}

}  // namespace ibc::core

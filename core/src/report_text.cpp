// Text layout of a report: tables, findings with evidence and next step, wrapped to the
// terminal width. What the report contains is decided in report.cpp; this file only lays it out.

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ibc/core/findings.h"
#include "ibc/core/report.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

namespace {

// Left-aligned columns sized to their widest cell.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

namespace {

std::string portTable(const v1::Report& report) {
  std::vector<std::vector<std::string>> rows{
      {"NODE", "DEVICE", "PORT", "STATE", "PHYS", "RATE", "LINK", "FW", "NETDEV", "VERDICT"}};
  for (const auto& n : report.nodes()) {
    if (n.ports_size() == 0) {
      rows.push_back(
          {n.label(), "-", "-", "-", "-", "-", "-", "-", "-", upper(n.worst_severity())});
      continue;
    }
    for (const auto& p : n.ports()) {
      rows.push_back(
          {n.label(), p.device() + (p.virtual_function() ? " (VF)" : ""),
           p.port() == 0 ? "-" : std::to_string(p.port()), p.state(),
           p.phys_state().empty() ? "-" : p.phys_state(), p.rate().empty() ? "-" : p.rate(),
           p.link_layer().empty() ? "-" : p.link_layer(), p.fw_ver().empty() ? "-" : p.fw_ver(),
           p.netdevs().empty() ? "-" : p.netdevs(), upper(p.worst_severity())});
    }
  }
  std::string out = table(rows);
  for (const auto& n : report.nodes()) {
    for (const auto& p : n.ports()) {
      if (p.remark().empty()) continue;
      out += "remark: " + n.label() + " " + p.device() +
             (p.port() == 0 ? std::string() : " port " + std::to_string(p.port())) + ": " +
             p.remark() + "\n";
    }
  }
  return out;
}

// One row per node: what a job owner scans first.
std::string nodeTable(const v1::Report& report) {
  std::vector<std::vector<std::string>> rows{
      {"NODE", "PORTS", "RATES", "FW", "VERDICT", "WORST FINDING"}};
  for (const auto& n : report.nodes()) {
    if (!n.unreachable_reason().empty()) {
      rows.push_back({n.label(), "-", "-", "-", "UNREACHABLE", n.unreachable_reason()});
      continue;
    }
    std::map<std::string, int> rates;
    std::map<std::string, int> fws;
    for (const auto& p : n.ports()) {
      if (p.state() == "ACTIVE" && p.rate_gbps() > 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", p.rate_gbps());
        rates[buf]++;
      }
      if (!p.fw_ver().empty()) fws[p.fw_ver()]++;
    }
    std::string rate_text, fw_text;
    for (const auto& [r, k] : rates)
      rate_text += (rate_text.empty() ? "" : ",") + std::to_string(k) + "x" + r;
    for (const auto& [f, k] : fws) fw_text += (fw_text.empty() ? "" : ",") + f;
    rows.push_back({n.label(),
                    std::to_string(n.ports_active()) + "/" + std::to_string(n.ports_total()),
                    rate_text.empty() ? "-" : rate_text, fw_text.empty() ? "-" : fw_text,
                    upper(n.worst_severity()), n.worst_code().empty() ? "-" : n.worst_code()});
  }
  return table(rows);
}

// The row label of the node a finding belongs to (its node name unless names collide),
// found by (node, source); built once per report.
class RowLabels {
 public:
  explicit RowLabels(const v1::Report& report) {
    for (const auto& n : report.nodes()) {
      const std::string label = n.label().empty() ? n.node() : n.label();
      by_source_.emplace(n.node() + '\0' + n.source(), label);
      if (!n.snapshot_file().empty())
        by_source_.emplace(n.node() + '\0' + n.snapshot_file(), label);
      by_node_.emplace(n.node(), label);
    }
  }
  const std::string& of(const v1::Finding& f) const {
    if (auto it = by_source_.find(f.node() + '\0' + f.source()); it != by_source_.end())
      return it->second;
    if (auto it = by_node_.find(f.node()); it != by_node_.end()) return it->second;
    return f.node();
  }

 private:
  std::unordered_map<std::string, std::string> by_source_;
  std::unordered_map<std::string, std::string> by_node_;
};

void findingText(std::string& out, const v1::Finding& f, const std::string& label,
                 const TextOptions& options) {
  std::string where = label;
  if (!f.device().empty()) where += " " + f.device();
  if (f.port() != 0) where += " port " + std::to_string(f.port());
  out += "\n" + upper(f.severity()) + "  " + f.code() + "  " + where + "\n";
  out += "  " + f.summary() + "\n";
  if (f.evidence_size() > 0) {
    out += "  evidence:\n";
    const int shown = static_cast<int>(
        std::min<std::size_t>(options.max_evidence, static_cast<std::size_t>(f.evidence_size())));
    for (int i = 0; i < shown; ++i) out += "    - " + f.evidence(i) + "\n";
    if (f.evidence_size() > shown) {
      out += "    ... " + std::to_string(f.evidence_size() - shown) + " more (--format json)\n";
    }
  }
  if (!f.action().empty()) out += "  next step: " + f.action() + "\n";
}

}  // namespace

std::string renderText(const v1::Report& report, const TextOptions& options) {
  std::string out = options.node_table ? nodeTable(report) : portTable(report);
  const RowLabels labels(report);

  uint32_t crit = 0, warn = 0, info = 0;
  for (const auto& f : report.findings()) {
    const Severity s = severityOf(f);
    (s == Severity::Critical ? crit : s == Severity::Warning ? warn : info)++;
  }
  out += "\n";
  for (const auto& notice : report.notices()) out += "note: " + notice + "\n";
  uint32_t unreachable = 0;
  for (const auto& n : report.nodes()) {
    if (!n.unreachable_reason().empty()) ++unreachable;
    if (options.node_table) continue;  // the table already has one line per node
    if (report.nodes_size() > 1 || n.critical() + n.warning() > 0 || n.probe_errors() > 0) {
      out += "node " + n.label() + ": " + upper(n.worst_severity()) + " (" +
             std::to_string(n.critical()) + " critical, " + std::to_string(n.warning()) +
             " warning, " + std::to_string(n.info()) + " info)";
      if (n.probe_errors() > 0) {
        out +=
            ", " + std::to_string(n.probe_errors()) + " probe(s) failed (details: --format json)";
      }
      out += "\n";
    }
  }
  if (options.node_table) {
    out += std::to_string(report.nodes_size()) + " node(s)" +
           (unreachable > 0 ? ", " + std::to_string(unreachable) + " unreachable" : std::string()) +
           "; ";
  }
  out += std::to_string(report.findings_size()) + " finding(s): " + std::to_string(crit) +
         " critical, " + std::to_string(warn) + " warning, " + std::to_string(info) + " info\n";

  if (options.node_table) {
    // Grouped by node, nodes in report order, each node's findings worst first.
    std::map<std::string, std::vector<const v1::Finding*>> by_node;
    for (const auto& f : report.findings()) by_node[labels.of(f)].push_back(&f);
    std::vector<std::string> order;
    for (const auto& n : report.nodes()) order.push_back(n.label());
    for (const auto& [node, list] : by_node) {
      if (std::find(order.begin(), order.end(), node) == order.end()) order.push_back(node);
    }
    for (const auto& node : order) {
      auto it = by_node.find(node);
      if (it == by_node.end()) continue;
      bool header = false;
      for (const auto* f : it->second) {
        if (!options.show_info && severityOf(*f) == Severity::Info) continue;
        if (!header) {
          out += "\n== " + node + "\n";
          header = true;
        }
        findingText(out, *f, node, options);
      }
    }
  } else {
    for (const auto& f : report.findings()) {
      if (!options.show_info && severityOf(f) == Severity::Info) continue;
      findingText(out, f, labels.of(f), options);
    }
    for (const auto& n : report.nodes()) {
      if (!n.snapshot_file().empty())
        out += "\nsnapshot of " + n.label() + ": " + n.snapshot_file() + "\n";
    }
  }
  // Node names, values and log lines come from other machines and from pastes: no byte of
  // them may reach a terminal as an escape sequence.
  return sanitizeUtf8(out);
}

}  // namespace ibc::core

#include "ibc/core/report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "ibc/core/findings.h"
#include "ibc/core/json.h"
#include "ibc/core/rules.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

// Adapters that only speak Ethernet (RoCE), by PCI device id, else by the hca_type sysfs
// gives ("MT4118" is device 4118 = 0x1016). Returns the model and the id it was known by.
std::pair<std::string_view, std::string> ethernetOnlyModel(const v1::RdmaDevice& d) {
  std::string id = d.pci().device_id();
  if (id.empty() && d.hca_type().size() > 2 && d.hca_type().compare(0, 2, "MT") == 0) {
    const std::string digits = d.hca_type().substr(2);
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%04lx", std::strtoul(digits.c_str(), nullptr, 10));
      id = buf;
    }
  }
  if (id == "0x1015") return {"ConnectX-4 Lx", id};
  if (id == "0x1016") return {"ConnectX-4 Lx VF", id};
  if (id == "0x101f") return {"ConnectX-6 Lx", id};
  return {{}, id};
}

// One way to print a rate everywhere (text, JSON, console): "200 Gb/s (4X HDR)", the lanes
// and speed name as the kernel gives them for InfiniBand; "25 Gb/s" on Ethernet, where RoCE
// ports report InfiniBand speed names that mean nothing; a rate that could not be parsed as
// read; "-" when none was read.
std::string rateText(const v1::RdmaPort& p) {
  if (p.rate_gbps() <= 0) return p.rate_raw().empty() ? "-" : p.rate_raw();
  std::string out = formatNumber(p.rate_gbps(), 4) + " Gb/s";
  const auto open = p.rate_raw().find('(');
  const auto close = p.rate_raw().rfind(')');
  if (p.link_layer() != "Ethernet" && open != std::string::npos && close != std::string::npos &&
      close > open + 1) {
    out += " " + p.rate_raw().substr(open, close - open + 1);
  }
  return out;
}

std::string portRemark(const v1::RdmaDevice& d, const v1::RdmaPort& p) {
  const auto [model, id] = ethernetOnlyModel(d);
  if (!model.empty() && p.link_layer() == "InfiniBand") {
    // The rate is named only when it does name an InfiniBand speed ("(1X EDR)").
    const bool ib_rate = !p.speed_name().empty() || p.rate_raw().find('(') != std::string::npos;
    return std::string(model) + " (PCI device " + id +
           ") is an Ethernet-only adapter, yet link_layer says InfiniBand" +
           (ib_rate ? " and the rate \"" + p.rate_raw() + "\" names an InfiniBand speed"
                    : std::string()) +
           ": the evidence does not fit together (an edited or composed tree?)";
  }
  if (p.link_layer().empty() && !p.rate_raw().empty()) {
    // Neither a sysfs link_layer file nor a tool's "Link layer" line said it.
    return "link layer unknown (the evidence does not say it): InfiniBand or Ethernet cannot "
           "be told";
  }
  return {};
}

std::string stateShort(const v1::EnumValue& v, bool physical) {
  if (physical) {
    const PhysState s = physStateOf(v);
    if (s != PhysState::Unknown) return std::string(physStateName(s));
  } else {
    const PortState s = portStateOf(v);
    if (s != PortState::Unknown) return std::string(portStateName(s));
  }
  // What could not be understood is said in words, with the raw value beside it.
  if (!v.raw().empty()) return "unknown (\"" + v.raw() + "\")";
  return "-";
}

}  // namespace

v1::NodeReport summarizeNode(const AnalyzedNode& node) {
  const v1::Snapshot& s = node.snapshot;
  v1::NodeReport r;
  r.set_node(nodeName(s));
  r.set_label(node.label.empty() ? nodeName(s) : node.label);
  // The input, as every finding of the node names it (docs/commands.md): two inputs may share a
  // host name, and a JSON reader joins findings to nodes by node and source.
  r.set_source(nodeSource(node));
  r.set_job_id(s.node().job_id());
  if (s.node().collected_at_unix_ms() != 0) {
    r.set_collected_at_unix_ms(s.node().collected_at_unix_ms());
  }
  r.set_probe_errors(static_cast<uint32_t>(s.probe_errors_size()));
  for (int i = 0; i < s.probe_errors_size() && i < kMaxNamedProbeFailures; ++i)
    *r.add_failed_probes() = s.probe_errors(i);
  r.set_snapshot_file(node.snapshot_file);
  std::map<std::pair<std::string, uint32_t>, Severity> port_worst;
  std::map<std::string, Severity> device_worst;
  for (const auto& f : node.findings) {
    const Severity sev = severityOf(f);
    switch (sev) {
      case Severity::Critical: r.set_critical(r.critical() + 1); break;
      case Severity::Warning: r.set_warning(r.warning() + 1); break;
      case Severity::Info: r.set_info(r.info() + 1); break;
    }
    if (f.device().empty()) continue;
    if (f.port() == 0) {
      auto& d = device_worst[f.device()];
      d = std::max(d, sev);
    } else {
      auto& p = port_worst[{f.device(), f.port()}];
      p = std::max(p, sev);
    }
  }
  r.set_worst_severity(!node.unreachable_reason.empty() ? "unreachable"
                       : r.critical() > 0               ? "critical"
                       : r.warning() > 0                ? "warning"
                                                        : "ok");
  r.set_unreachable_reason(node.unreachable_reason);
  Severity worst_seen = Severity::Info;
  for (const auto& f : node.findings) {
    const Severity sev = severityOf(f);
    if (sev == Severity::Info) continue;
    if (r.worst_code().empty() || sev > worst_seen ||
        (sev == worst_seen && findingSpecificity(f.code()) < findingSpecificity(r.worst_code()))) {
      r.set_worst_code(f.code());
      worst_seen = sev;
    }
  }
  for (const auto& d : s.devices()) {
    for (const auto& p : d.ports()) {
      r.set_ports_total(r.ports_total() + 1);
      if (portStateOf(p.state()) == PortState::Active) r.set_ports_active(r.ports_active() + 1);
    }
  }
  for (const auto& d : s.devices()) {
    auto add_port = [&](const v1::RdmaPort* p) {
      v1::PortSummary* ps = r.add_ports();
      ps->set_device(d.name());
      // A placeholder ("fw_ver": a copied file holding its own name) is said to be unknown,
      // never shown as a version.
      ps->set_fw_ver(d.fw_ver().empty() || isFirmwareVersionShaped(d.fw_ver())
                         ? d.fw_ver()
                         : "unknown (\"" + printable(d.fw_ver(), 40) + "\")");
      ps->set_virtual_function(d.is_virtual_function());
      Severity worst = Severity::Info;
      if (auto it = device_worst.find(d.name()); it != device_worst.end()) worst = it->second;
      if (p == nullptr) {
        ps->set_state(d.missing_reason().empty() ? "-" : "MISSING");
      } else {
        ps->set_port(p->port());
        ps->set_state(stateShort(p->state(), false));
        ps->set_phys_state(stateShort(p->phys_state(), true));
        if (p->rate_gbps() > 0) ps->set_rate_gbps(p->rate_gbps());
        ps->set_rate(rateText(*p));
        ps->set_link_layer(p->link_layer());
        ps->set_remark(portRemark(d, *p));
        *ps->mutable_netdevs() = p->netdevs();
        if (auto it = port_worst.find({d.name(), p->port()}); it != port_worst.end()) {
          worst = std::max(worst, it->second);
        }
      }
      ps->set_worst_severity(worst == Severity::Info ? "ok" : std::string(severityName(worst)));
    };
    if (d.ports_size() == 0) {
      add_port(nullptr);
    } else {
      for (const auto& p : d.ports()) add_port(&p);
    }
  }
  *r.mutable_nccl_tests() = s.nccl_tests();
  for (const auto& t : s.nccl_tests()) *r.add_busbw() = busbwAgainstLinks(s, t);
  if (node.include_snapshot) *r.mutable_snapshot() = s;
  return r;
}

std::vector<v1::Finding> joinJobWide(std::vector<v1::Finding> findings,
                                     const std::vector<int>& node_of,
                                     const std::vector<std::string>& labels) {
  const int nodes = static_cast<int>(labels.size());
  if (nodes < kJobWideMinNodes) return findings;
  // Per saying (findingGroupKey), the nodes it holds on: counted once per saying.
  struct Saying {
    std::vector<bool> holds;
    int count = 0;
    bool emitted = false;
  };
  std::unordered_map<std::string, Saying> sayings;
  std::vector<std::string> keys(findings.size());
  for (std::size_t i = 0; i < findings.size(); ++i) {
    if (node_of[i] < 0) continue;
    keys[i] = findingGroupKey(findings[i]);
    Saying& s = sayings[keys[i]];
    if (s.holds.empty()) s.holds.assign(static_cast<std::size_t>(nodes), false);
    auto&& h = s.holds[static_cast<std::size_t>(node_of[i])];
    if (!h) ++s.count;
    h = true;
  }
  std::vector<v1::Finding> out;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    Saying* s = node_of[i] < 0 ? nullptr : &sayings[keys[i]];
    if (s == nullptr || s->count < kJobWideMinNodes || s->count < kJobWideShare * nodes) {
      out.push_back(std::move(findings[i]));
      continue;
    }
    if (s->emitted) continue;
    s->emitted = true;
    const int count = s->count;
    const std::vector<bool>& holds = s->holds;
    // One finding for all of them: what the first place says, without the place, with its
    // evidence named as that place's.
    v1::Finding& first = findings[i];
    v1::Finding job;
    job.set_code(first.code());
    job.set_severity(first.severity());
    std::string summary = summaryWithoutPlace(first);
    for (std::size_t p = first.node().empty() ? std::string::npos : summary.find(first.node());
         p != std::string::npos; p = summary.find(first.node(), p + 9))
      summary.replace(p, first.node().size(), "each node");
    job.set_summary(std::move(summary));
    const std::string place = labels[static_cast<std::size_t>(node_of[i])] +
                              (first.device().empty() ? "" : " " + first.device()) +
                              (first.port() != 0 ? " port " + std::to_string(first.port()) : "");
    job.add_evidence("on " + place + " (one of " + std::to_string(count) + " nodes):");
    for (auto& e : *first.mutable_evidence()) job.add_evidence(std::move(e));
    job.set_action(first.action());
    *job.mutable_reasons() = first.reasons();
    job.set_scope("job");
    job.set_nodes_count(static_cast<uint32_t>(count));
    for (int n = 0; n < nodes; ++n) {
      if (!holds[static_cast<std::size_t>(n)]) job.add_except(labels[static_cast<std::size_t>(n)]);
    }
    out.push_back(std::move(job));
  }
  return out;
}

namespace {

// A physical-layer fault on (nearly) every node is the fabric's, not each node's PF: the
// escalations that job-wide physical findings alone made (one PF runbook per node) become one
// job-wide escalation to what the nodes share (DESIGN §11). An escalation with any other
// reason stays the node's, as does the VF_IDENTITY_MISSING of a device still escalated.
std::vector<v1::Finding> joinFabricEscalation(
    std::vector<v1::Finding> findings, const std::vector<std::string>& labels,
    const std::map<std::pair<std::string, std::string>, std::string>& label_of) {
  std::set<std::string> fabric;  // job-wide physical-layer codes
  std::vector<const v1::Finding*> fabric_findings;
  for (const auto& f : findings) {
    if (f.scope() == "job" && findingClassOf(f.code()) == FindingClass::PhysicalLink) {
      fabric.insert(f.code());
      fabric_findings.push_back(&f);
    }
  }
  if (fabric.empty()) return findings;
  const std::string escalate(findingCodeName(FindingCode::EscalateHostInspection));
  std::set<std::tuple<std::string, std::string, std::string>> dropped;  // node, source, device
  std::set<std::string> nodes;
  Severity worst = Severity::Info;
  auto onlyFabric = [&](const v1::Finding& f) {
    return !f.reasons().empty() &&
           std::all_of(f.reasons().begin(), f.reasons().end(),
                       [&](const std::string& r) { return fabric.count(r) != 0; });
  };
  bool joined = false;  // joinJobWide already made the nodes' escalations one
  for (const auto& f : findings) {
    if (f.code() != escalate || !onlyFabric(f)) continue;
    worst = std::max(worst, severityOf(f));
    if (f.scope() == "job") {
      joined = true;
      for (const auto& l : labels) {
        if (std::find(f.except().begin(), f.except().end(), l) == f.except().end()) nodes.insert(l);
      }
      continue;
    }
    dropped.emplace(f.node(), f.source(), f.device());
    const auto label = label_of.find({f.node(), f.source()});
    nodes.insert(label != label_of.end() ? label->second : f.node());
  }
  if (dropped.empty() && !joined) return findings;
  v1::Finding job;
  job.set_code(escalate);
  job.set_severity(std::string(severityName(worst)));
  std::string codes;
  for (const auto& c : fabric) codes += (codes.empty() ? "" : ", ") + c;
  job.set_summary("The same physical-layer fault on " + std::to_string(nodes.size()) + " nodes (" +
                  codes + "): the fabric they share, not one PF per node");
  for (const auto* f : fabric_findings)
    job.add_evidence(f->code() + " on " + std::to_string(f->nodes_count()) +
                     " nodes: " + f->summary());
  job.add_evidence("in place of each node's escalation with a PF runbook");
  job.set_action(
      "Inspect what the nodes share before any one PF: the switch ports' and the subnet "
      "manager's configured rate, width and FEC, the switches' firmware, a batch of cables or "
      "optics; then `ibcollect host-inspect` on one node's host confirms the PF side.");
  for (const auto& c : fabric) job.add_reasons(c);
  job.set_scope("job");
  job.set_nodes_count(static_cast<uint32_t>(nodes.size()));
  for (const auto& l : labels) {
    if (nodes.count(l) == 0) job.add_except(l);
  }
  const std::string identity(findingCodeName(FindingCode::VfIdentityMissing));
  std::vector<v1::Finding> out;
  for (auto& f : findings) {
    const bool gone = (f.code() == escalate && f.scope() == "job" && onlyFabric(f)) ||
                      ((f.code() == escalate || f.code() == identity) && f.scope() != "job" &&
                       dropped.count({f.node(), f.source(), f.device()}) != 0);
    if (!gone) out.push_back(std::move(f));
  }
  out.push_back(std::move(job));
  return out;
}

}  // namespace

v1::Report buildReport(std::vector<AnalyzedNode> nodes) {
  v1::Report report;
  for (auto& notice : labelNodes(nodes)) report.add_notices(std::move(notice));
  for (auto& n : nodes) {
    for (auto& notice : n.notices) report.add_notices(std::move(notice));
  }
  std::vector<v1::Finding> all;
  std::vector<int> node_of;
  std::vector<std::string> labels;
  std::map<std::pair<std::string, std::string>, std::string> label_of;  // node, source
  for (auto& n : nodes) {
    const bool include = n.include_snapshot;
    n.include_snapshot = false;
    // Every finding names the input it came from: host names are not unique.
    const std::string source = nodeSource(n);
    const std::string name = nodeName(n.snapshot);  // before the snapshot moves to the report
    for (auto& f : n.findings) {
      if (f.source().empty()) f.set_source(source);
      if (f.scope().empty()) f.set_scope("node");
    }
    v1::NodeReport* r = report.add_nodes();
    *r = summarizeNode(n);
    if (include) r->mutable_snapshot()->Swap(&n.snapshot);
    node_of.insert(node_of.end(), n.findings.size(), static_cast<int>(labels.size()));
    labels.push_back(r->label());
    label_of[{name, source}] = r->label();
    std::move(n.findings.begin(), n.findings.end(), std::back_inserter(all));
  }
  all = joinJobWide(std::move(all), node_of, labels);
  all = joinFabricEscalation(std::move(all), labels, label_of);
  sortFindings(all);
  for (auto& f : all) *report.add_findings() = std::move(f);
  return report;
}

Result<std::string> renderJson(const v1::Report& report) {
  std::string out = messageToJson(report);
  out.push_back('\n');
  return out;
}

}  // namespace ibc::core

#include "ibc/console/escalation.h"

#include <algorithm>

#include "ibc/core/bundle_report.h"
#include "ibc/core/findings.h"
#include "ibc/core/report.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

std::vector<int> suspectNodes(const JobData& job) {
  // Core's rule decides (which findings make a VF the PF's business), node by node.
  std::vector<int> out;
  for (int n = 0; n < job.report.nodes_size(); ++n) {
    if (pfInspectionFor(job, {n}, {}, "").suspects_size() > 0) out.push_back(n);
  }
  return out;
}

v1::PfInspection pfInspectionFor(const JobData& job, const std::vector<int>& nodes,
                                 const std::set<int>& findings, const std::string& job_id) {
  std::vector<core::AnalyzedNode> analyzed;
  for (const int n : nodes) {
    if (n < 0 || n >= job.report.nodes_size() || n >= static_cast<int>(job.snapshots.size()))
      continue;
    core::AnalyzedNode a;
    a.snapshot = job.snapshots[static_cast<std::size_t>(n)];
    a.snapshot_file = job.report.nodes(n).snapshot_file();
    a.label = job.report.nodes(n).label();
    // The checked findings, and each escalation of the job verdict narrowed to them: an
    // escalation checked itself goes whole; one whose reasons were checked (a link flap on
    // its device) goes with those reasons only. Nothing is judged here.
    std::set<std::pair<std::string, std::string>> checked;  // (code, device)
    for (const int i : findingsOfNode(job, n)) {
      if (!findings.empty() && findings.count(i) == 0) continue;
      const auto& f = job.report.findings(i);
      checked.emplace(f.code(), f.device());
      a.findings.push_back(f);
    }
    for (const int i : findingsOfNode(job, n)) {
      const auto& f = job.report.findings(i);
      if (findings.empty() || findings.count(i) != 0) continue;
      if (f.code() != core::findingCodeName(core::FindingCode::EscalateHostInspection)) continue;
      ::ibcollect::v1::Finding narrowed = f;
      narrowed.clear_reasons();
      for (const auto& r : f.reasons()) {
        for (const auto& [code, device] : checked) {
          if (code == r && (f.device().empty() || device == f.device())) {
            narrowed.add_reasons(r);
            break;
          }
        }
      }
      if (narrowed.reasons_size() > 0) a.findings.push_back(std::move(narrowed));
    }
    analyzed.push_back(std::move(a));
  }
  return core::buildPfInspection(analyzed, "", job_id);
}

v1::CreateCaseRequest caseRequestFor(const JobData& job, const std::vector<int>& nodes,
                                     const std::set<int>& findings) {
  v1::CreateCaseRequest r;
  if (job.tenant.empty()) return r;
  r.set_tenant(job.tenant);
  std::set<std::string> ids, labels, codes, jobs;
  for (const int n : nodes) {
    if (n < 0 || n >= job.report.nodes_size()) continue;
    if (static_cast<std::size_t>(n) < job.snapshot_ids.size()) ids.insert(job.snapshot_ids[n]);
    // Case node names are plain host names (a label may add the file: "n1 (a.ibsnap)").
    std::string label = job.report.nodes(n).node();
    for (char& c : label) {
      if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f ||
          c == '/') {
        c = '_';
      }
    }
    labels.insert(label);
    if (!job.report.nodes(n).job_id().empty()) jobs.insert(job.report.nodes(n).job_id());
  }
  const v1::Finding* worst = nullptr;
  for (int i = 0; i < job.report.findings_size(); ++i) {
    const int owner = nodeOfFinding(job, i);
    if (std::find(nodes.begin(), nodes.end(), owner) == nodes.end()) continue;
    if (!findings.empty() && findings.count(i) == 0) continue;
    const auto& f = job.report.findings(i);
    codes.insert(f.code());
    if (worst == nullptr || severityRank(f.severity()) > severityRank(worst->severity())) {
      worst = &f;
    }
  }
  if (jobs.size() == 1) r.set_job_id(*jobs.begin());
  for (const auto& id : ids) r.add_snapshot_ids(id);
  for (const auto& l : labels) r.add_nodes(l);
  for (const auto& c : codes) r.add_finding_codes(c);
  std::string title = worst != nullptr ? worst->code() : std::string("escalation");
  title += " on " + std::to_string(labels.size()) + " node(s)";
  if (jobs.size() == 1) title += " of job " + *jobs.begin();
  r.set_title(title);
  return r;
}

}  // namespace ibc::console

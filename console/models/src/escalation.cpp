#include "ibc/console/escalation.h"

#include "ibc/core/bundle_report.h"
#include "ibc/core/report.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

std::vector<int> suspectNodes(const JobData& job) {
  std::set<int> out;
  for (int i = 0; i < job.report.findings_size(); ++i) {
    const auto& f = job.report.findings(i);
    if (severityRank(f.severity()) < 2) continue;
    if (f.code() != "ESCALATE_HOST_INSPECTION" && !core::isPhysicalLayerCode(f.code())) continue;
    if (const int n = nodeOfFinding(job, i); n >= 0) out.insert(n);
  }
  return {out.begin(), out.end()};
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
    for (int i = 0; i < job.report.findings_size(); ++i) {
      if (!findings.empty() && findings.count(i) == 0) continue;
      if (nodeOfFinding(job, i) == n) a.findings.push_back(job.report.findings(i));
    }
    analyzed.push_back(std::move(a));
  }
  return core::buildPfInspection(analyzed, "", job_id);
}

}  // namespace ibc::console

#include "ibc/console/escalation.h"

#include "ibc/core/bundle_report.h"
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
    for (const int i : findingsOfNode(job, n)) {
      if (!findings.empty() && findings.count(i) == 0) continue;
      a.findings.push_back(job.report.findings(i));
    }
    analyzed.push_back(std::move(a));
  }
  return core::buildPfInspection(analyzed, "", job_id);
}

}  // namespace ibc::console

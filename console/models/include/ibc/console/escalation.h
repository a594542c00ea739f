#pragma once

// What the escalate page hands the host side (DESIGN §7 `escalate`, §8): the suspect nodes
// of a job and the PF runbook for the chosen nodes and findings, built by ibc_core's bundle
// code (core::buildPfInspection) so the page and `ibcollect bundle export` say the same.

#include <set>
#include <string>
#include <vector>

#include "ibc/console/job_data.h"
#include "ibcollect/v1/bundle.pb.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::console {

// Nodes for which core's pf-inspection has a suspect VF (ESCALATE_HOST_INSPECTION or a
// physical-layer finding): the ones the page checks first.
std::vector<int> suspectNodes(const JobData& job);

// The PF inspection for `nodes`, from their findings restricted to `findings` (indexes into
// report.findings(); empty = every finding of those nodes).
::ibcollect::v1::PfInspection pfInspectionFor(const JobData& job, const std::vector<int>& nodes,
                                              const std::set<int>& findings,
                                              const std::string& job_id);

// The case to create in the collector for `nodes` and `findings` (as pfInspectionFor): the
// job's tenant, the checked nodes' snapshot ids, their labels, the checked finding codes
// and a title naming the worst of them. Empty tenant when the job did not come from the
// collector (a case covers stored snapshots only).
::ibcollect::v1::CreateCaseRequest caseRequestFor(const JobData& job, const std::vector<int>& nodes,
                                                  const std::set<int>& findings);

}  // namespace ibc::console

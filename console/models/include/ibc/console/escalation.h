#pragma once

// What the escalate page hands the host side (console/README.md `escalate`, §8): the suspect nodes
// of a job and the PF runbook for the chosen nodes and findings, built by ibc_core's bundle
// code (core::buildPfInspection) so the page and `ibcollect bundle export` say the same.

#include <set>
#include <string>
#include <string_view>
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

// An escalation kind (SuspectVf.escalation, core::escalationKindName) in words for people:
// "physical link or device", "subnet manager", "transport path"; the kind itself otherwise.
std::string escalationWords(const std::string& kind);

// Why core made a node a suspect, from the job verdict's escalations (pfInspectionFor over
// every finding): its VFs grouped by kind and reason codes, and the ones nothing identifies.
struct SuspectReason {
  int node = -1;
  // "subnet manager: PORT_NOT_ACTIVE_SM on mlx5_2/1, mlx5_5/1"; one line per group.
  std::vector<std::string> lines;
  std::vector<std::string> codes;  // every reason code, sorted
  // VFs with VF_IDENTITY_MISSING ("mlx5_2/1"): the host cannot find them.
  std::vector<std::string> identity_missing;
};
// Every suspect node of the job (suspectNodes' order).
std::vector<SuspectReason> suspectReasons(const JobData& job);
// What the page says of a VF nothing identifies.
inline constexpr const char* kIdentityMissingWords =
    "the host cannot find this VF: ask the customer for its GUID/MAC/VM id";

// The job id the checked `nodes` share ("" when none has one or they differ).
std::string jobIdOf(const JobData& job, const std::vector<int>& nodes);

// The case of `job_id` of `tenant` to show instead of creating another: an open or escalated
// one first, then the most recently updated; nullptr when none (or no job id).
const ::ibcollect::v1::Case* caseOfJob(const std::vector<::ibcollect::v1::Case>& cases,
                                       const std::string& tenant, const std::string& job_id);

// The command lines the page shows for the checked `nodes`, with the real job id and case.
struct EscalationCommands {
  std::string bundle_file;  // "job4242.ibbundle", "case-....ibbundle", "case.ibbundle"
  std::string export_line;  // `ibcollect bundle export ...`
  std::string host_line;    // `sudo ibcollect host-inspect --bundle ... --attach-to ...`
  // When the CLI line would not export exactly the checked nodes, what differs (e.g. the
  // case covers nodes no longer checked, or --job takes every node of the job).
  std::string note;
};
// `the_case` may be null. Opened files are named (shell-quoted); a job from the collector
// goes by --case when it has one, else by --job ID --tenant T (every node of the job).
EscalationCommands escalationCommands(const JobData& job, const std::vector<int>& nodes,
                                      const ::ibcollect::v1::Case* the_case, bool redact);

// The part of a PF runbook (core's pf-inspection.md) the escalate page renders: the
// preamble and the VF sections ("## NODE DEVICE port N") of node `node`, or the first section
// when `node` has none. A job-wide fault makes the whole runbook a section per suspect VF
// (429 KB of markdown tables at 2,000 nodes, 2 s of rich-text layout): rich text is only for
// the selected node; the bundle carries every section.
struct RunbookPart {
  std::string markdown;
  int shown = 0;  // sections in `markdown`
  int total = 0;  // sections in the whole runbook
};
RunbookPart runbookOfNode(std::string_view pf_inspection_md, std::string_view node);

}  // namespace ibc::console

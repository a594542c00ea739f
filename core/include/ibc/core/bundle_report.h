#pragma once

// The people-facing members of an escalation bundle (docs/formats.md): report.md and
// pf-inspection.md/.json. Pure: analysed nodes in, text out.

#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/report.h"
#include "ibcollect/v1/bundle.pb.h"
#include "ibcollect/v1/report.pb.h"

namespace ibc::core {

// The suspects are what the job verdict (judgeJob) escalated: each RDMA device named by an
// ESCALATE_HOST_INSPECTION finding (every device of the node when it names none) is one
// SuspectVf per port, with the finding's reasons (codes, never the escalation itself), its
// kind (escalationKindFor: the runbook), whether VF_IDENTITY_MISSING was raised for it,
// the identity the host needs (guest PCI address, node/port/system image GUIDs, MAC, GIDs,
// pkeys, VM id; only values of the right shape) and the host-side steps of its kind filled
// in with those values. `nodes` must be judged (judgeJob); suspects are named by label.
::ibcollect::v1::PfInspection buildPfInspection(const std::vector<AnalyzedNode>& nodes,
                                                std::string_view case_id, std::string_view job_id);

std::string renderPfInspectionMarkdown(const ::ibcollect::v1::PfInspection& inspection);

// report.md: what the bundle covers, the verdict per node, the findings (critical first)
// with evidence and the next step, and where to go from here.
std::string renderBundleReport(const ::ibcollect::v1::Report& report,
                               const ::ibcollect::v1::BundleManifest& manifest,
                               const ::ibcollect::v1::PfInspection& inspection);

// "00:02:c9:03:00:a0:b1:c2" for a sysfs GUID "0002:c903:00a0:b1c2" (the form `ip link`
// and mlx5 sriov/N/node use); the input unchanged when it is not 16 hex digits.
std::string guidWithByteColons(std::string_view guid);

}  // namespace ibc::core

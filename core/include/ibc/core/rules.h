#pragma once

// Single-node diagnosis (docs/codes.md): every code except the cross-node ones. Pure: the
// same snapshot and options always give the same findings, in a stable order.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

struct RuleOptions {
  // `--expect-rate`: the link rate every active port should run at, Gb/s.
  std::optional<double> expect_rate_gbps;
  // `--expect-busbw`: the nccl-tests bus bandwidth a healthy run reaches, GB/s. When given,
  // NCCL_TEST_LOW_BUSBW compares the peak busbw with it instead of the ports' rates.
  std::optional<double> expect_busbw_gbs;
};

// Findings for one node's snapshot, sorted (critical first): the evidence rules, then
// escalation over them (escalationFindings).
std::vector<::ibcollect::v1::Finding> diagnoseNode(const ::ibcollect::v1::Snapshot& snapshot,
                                                   const RuleOptions& options);

// The evidence rules alone, without escalation: for a job verdict (job_verdict.h), which
// escalates each node once its cross-node findings are known.
std::vector<::ibcollect::v1::Finding> diagnoseNodeEvidence(
    const ::ibcollect::v1::Snapshot& snapshot, const RuleOptions& options);

// What the provider is asked to do, by the class of the reasons (docs/codes.md): physical
// link and device faults → the PF/cable/switch runbook; a port the SM has not activated →
// the SM runbook (GUID assignment, SR-IOV policy, SM virtualization, pkey); transport
// symptoms with a clean VF side → the PF and the path beyond it.
enum class EscalationKind { Physical, SubnetManager, TransportPath };
// "physical", "subnet_manager", "transport_path".
std::string_view escalationKindName(EscalationKind kind);
// The kind a set of reason codes asks for (physical beats SM beats transport); nullopt
// when no code is of an escalated class (tenant configuration, application, observation).
std::optional<EscalationKind> escalationKindFor(const std::vector<std::string>& reason_codes);

// ESCALATE_HOST_INSPECTION per RDMA device whose PF is the provider's (a VF, or any
// device of a VM) from the node's findings (own and cross-node, all named nodeName()):
// each with `reasons` (the codes that made it, never itself), evidence, the identity the
// host needs and the runbook of its kind; plus VF_IDENTITY_MISSING for each escalated
// device that no usable node/port GUID, MAC or VM id identifies. Transport symptoms
// escalate only when no port's state is unknown. Sorted.
std::vector<::ibcollect::v1::Finding> escalationFindings(
    const ::ibcollect::v1::Snapshot& snapshot,
    const std::vector<::ibcollect::v1::Finding>& findings);

// nccl-tests busbw against the node's own links (docs/codes.md, NCCL_TEST_LOW_BUSBW): a
// multi-node run whose peak busbw is under kLowBusbwFraction of what the node's active RDMA
// ports carry (their rates summed / 8, GB/s) is low; `--expect-busbw` overrides the budget.
// A healthy RDMA path clears half its links at large sizes whatever the algorithm (a tree or
// NVLS allreduce may even exceed 1).
inline constexpr double kLowBusbwFraction = 0.5;
::ibcollect::v1::NcclTestsBusbw busbwAgainstLinks(const ::ibcollect::v1::Snapshot& snapshot,
                                                  const ::ibcollect::v1::NcclTestsOutput& output);

// An RDMA bandwidth test (perftest) against its port's rate (docs/codes.md,
// RDMA_TEST_LOW_BW): its best average is low under
// kRdmaTestLowFraction of the rate (twice the rate for a bidirectional run); the best row is
// among messages of kRdmaTestFillBytes or more (tool_output.h), a run without one is not judged.
inline constexpr double kRdmaTestLowFraction = 0.8;
struct RdmaTestBudget {
  double measured_gbps = 0;  // the run's best average in Gb/s; 0 when unknown
  std::string unit_read;     // how the number was read ("MB/sec = MiB/s by perftest's definition")
  double rate_gbps = 0;      // the port's rate, one direction; 0 when none is known
  std::string rate_from;     // "mlx5_0 port 1", "every active port of the node", "--expect-rate"
  double budget_gbps = 0;    // rate, ×2 for a bidirectional run
  // Why the run is not judged ("no rate to judge against: ..."); "" when it is.
  std::string not_judged;
};
RdmaTestBudget rdmaTestBudget(const ::ibcollect::v1::Snapshot& snapshot,
                              const ::ibcollect::v1::RdmaTest& test, const RuleOptions& options);
// One line per bandwidth run of the snapshot that was not judged, saying why: for the notices
// of `analyze` (a run that could not be judged is never called fine).
std::vector<std::string> rdmaTestNotices(const ::ibcollect::v1::Snapshot& snapshot,
                                         const RuleOptions& options);

// The name findings use for a snapshot's node: Slurm node name, else hostname, else
// "unknown-node".
std::string nodeName(const ::ibcollect::v1::Snapshot& snapshot);

}  // namespace ibc::core

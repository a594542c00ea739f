#pragma once

// Finding codes and severities of docs/codes.md. Codes are a stable interface: tests, JSON
// consumers and support runbooks depend on the exact strings.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibcollect/v1/report.pb.h"

namespace ibc::core {

enum class Severity { Info = 0, Warning = 1, Critical = 2 };

std::string_view severityName(Severity severity);  // "info" | "warning" | "critical"
std::optional<Severity> severityFromName(std::string_view name);

enum class FindingCode {
  // port/link
  NoRdmaDevices,
  PortDown,
  PortNotActiveSm,
  PhysLinkNotUp,
  LinkRateBelowExpected,
  PortStateUnknown,
  // counters
  PhyErrors,
  LinkDowned,
  BufferOverrun,
  XmitDiscards,
  Congestion,
  TransportRetries,
  CqeErrors,
  CounterSaturated,
  CounterUnavailable,
  // kernel log
  KernelLinkFlap,
  FwCommandTimeout,
  FwCommandFailed,
  DeviceFatal,
  TxTimeout,
  DriverLoadFailed,
  PcieError,
  ModuleTemperature,
  // NCCL log
  NcclSocketFallback,
  NcclIbUnavailable,
  NcclGdrDisabled,
  NcclIbCompletionError,
  NcclIbAsyncEvent,
  NcclRegMrFailed,
  NcclConnectFailed,
  NcclQpSetupFailed,
  NcclCollectiveTimeout,
  NcclRankLagging,
  // nccl-tests
  NcclTestWrongResults,
  NcclTestLowBusbw,
  // host
  MemlockLimit,
  UverbsAccess,
  PeermemMissing,
  PcieLinkDegraded,
  // across nodes
  MtuMismatch,
  FwVersionMismatch,
  NodeOutlier,
  // escalation
  EscalateHostInspection,
  // host side (PF), `ibcollect host-inspect`
  PfNotFound,
  PfPortDown,
  PfPhyErrors,
  PfLinkFlap,
  PfModule,
  PfPcieErrors,
  PfFw,
  PfClean,
  // added with the job verdict (docs/codes.md "More codes")
  VfIdentityMissing,
  PfUnknown,
  // active checks (perftest pasted now; run by `--job --active` later)
  RdmaTestLowBw,
  RdmaTestFailed,
};

// What kind of fault a code is evidence of (docs/codes.md). Escalation, ranking and the
// runbooks read it from the registry, never from a list of their own.
enum class FindingClass {
  PhysicalLink,      // the link itself: cable, transceiver, lanes, switch port
  FabricSm,          // the subnet manager / partition: a port the SM has not activated
  Device,            // the adapter, its firmware or its PCIe link
  TransportSymptom,  // what traffic suffered; the cause may be beyond the VF
  TenantConfig,      // the tenant fixes it (limits, modules, NCCL settings); never escalated
  Application,       // the job itself (hangs, lagging ranks, wrong results)
  Observation,       // a fact that is no fault by itself (unavailable data, a busy fabric,
                     // a value that differs from the peers')
  Escalation,        // what the verdict asks of the provider
  HostSide,          // PF_* codes of `host-inspect`
};

// "physical_link", "fabric_sm", "device", "transport_symptom", "tenant_config",
// "application", "observation", "escalation", "host_side".
std::string_view findingClassName(FindingClass finding_class);

// One row of the finding registry: everything a code means besides its evidence.
struct FindingTraits {
  FindingCode code;
  std::string_view name;      // "PORT_NOT_ACTIVE_SM"
  std::string_view area;      // docs/codes.md's area: "port/link", "counters", "kernel log", ...
  Severity default_severity;  // what the code usually is (rules may lower or raise it)
  // How directly the code names a cause: 0 (the port is down) .. 6 (a summary or gap).
  // Among findings of one severity, the most specific is a node's worst.
  int specificity;
  FindingClass finding_class;
  std::string_view meaning;  // one line for people (`explain`, docs/codes.md)
  // What raises it: the evidence the rules read and when they judge it so (for people:
  // `ibcollect explain`, docs/codes.md). Rules are the truth; this says what they check.
  std::string_view evidence;
  // The next step in general; a finding's own `action` is the one fitted to its evidence.
  std::string_view next_step;
};

// The registry: one row per code, in the order of docs/codes.md (the enum's order).
const std::vector<FindingTraits>& findingRegistry();
const FindingTraits& findingTraits(FindingCode code);
// nullptr for a name no code has (a newer producer's code, a typo).
const FindingTraits* findingTraits(std::string_view name);

// "NO_RDMA_DEVICES", "PORT_DOWN", ...
std::string_view findingCodeName(FindingCode code);
std::optional<FindingCode> findingCodeFromName(std::string_view name);
// Every code, in the order of docs/codes.md.
const std::vector<FindingCode>& allFindingCodes();
// The registry's specificity of a code name; 5 for a name it does not know.
int findingSpecificity(std::string_view code);
// The registry's class of a code name; Observation for a name it does not know.
FindingClass findingClassOf(std::string_view code);

struct FindingSpec {
  FindingCode code;
  Severity severity;
  std::string node;
  std::string device;
  uint32_t port = 0;
  std::string summary;
  std::vector<std::string> evidence;
  std::string action;
};
::ibcollect::v1::Finding makeFinding(FindingSpec spec);

// Severity of a Finding message (Info when the string is unknown).
Severity severityOf(const ::ibcollect::v1::Finding& finding);
// Highest severity among findings; nullopt when empty.
std::optional<Severity> worstSeverity(const std::vector<::ibcollect::v1::Finding>& findings);

// docs/commands.md exit codes: 0 no warning or critical, 1 warnings, 2 critical.
inline constexpr int kExitOk = 0;
inline constexpr int kExitWarnings = 1;
inline constexpr int kExitCritical = 2;
inline constexpr int kExitUsage = 3;
inline constexpr int kExitCollectFailed = 4;
inline constexpr int kExitVerifyFailed = 5;  // a signature, hash or certificate did not verify
int exitCodeFor(const std::vector<::ibcollect::v1::Finding>& findings);

// Orders findings: critical first; of one severity, a node's own before job-wide ones (scope
// "job": the job's or image's configuration, DESIGN §11); then node, device, port, code.
void sortFindings(std::vector<::ibcollect::v1::Finding>& findings);

// What a finding says with its own node, device and port taken out, with its code, severity
// and next step: findings with one key say the same thing in different places (one entry in
// a text report; one job-wide finding, report.h).
std::string findingGroupKey(const ::ibcollect::v1::Finding& finding);

// The summary without the place it starts with ("mlx5_0 port 1: Link is down" → "Link is
// down"): what a finding says when it stands for several places.
std::string summaryWithoutPlace(const ::ibcollect::v1::Finding& finding);

}  // namespace ibc::core

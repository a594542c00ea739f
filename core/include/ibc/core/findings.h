#pragma once

// Finding codes and severities of DESIGN §5. Codes are a stable interface: tests, JSON
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
};

// "NO_RDMA_DEVICES", "PORT_DOWN", ...
std::string_view findingCodeName(FindingCode code);
std::optional<FindingCode> findingCodeFromName(std::string_view name);
// Every code, in the order of DESIGN §5.
const std::vector<FindingCode>& allFindingCodes();

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

// DESIGN §3 exit codes: 0 no warning or critical, 1 warnings, 2 critical.
inline constexpr int kExitOk = 0;
inline constexpr int kExitWarnings = 1;
inline constexpr int kExitCritical = 2;
inline constexpr int kExitUsage = 3;
inline constexpr int kExitCollectFailed = 4;
inline constexpr int kExitVerifyFailed = 5;  // a signature, hash or certificate did not verify
int exitCodeFor(const std::vector<::ibcollect::v1::Finding>& findings);

// Orders findings: critical first, then node, device, port, code.
void sortFindings(std::vector<::ibcollect::v1::Finding>& findings);

}  // namespace ibc::core

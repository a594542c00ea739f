#include "ibc/core/findings.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

namespace ibc::core {

namespace {

struct CodeName {
  FindingCode code;
  std::string_view name;
};

constexpr std::array<CodeName, 51> kCodes{{
    {FindingCode::NoRdmaDevices, "NO_RDMA_DEVICES"},
    {FindingCode::PortDown, "PORT_DOWN"},
    {FindingCode::PortNotActiveSm, "PORT_NOT_ACTIVE_SM"},
    {FindingCode::PhysLinkNotUp, "PHYS_LINK_NOT_UP"},
    {FindingCode::LinkRateBelowExpected, "LINK_RATE_BELOW_EXPECTED"},
    {FindingCode::PortStateUnknown, "PORT_STATE_UNKNOWN"},
    {FindingCode::PhyErrors, "PHY_ERRORS"},
    {FindingCode::LinkDowned, "LINK_DOWNED"},
    {FindingCode::BufferOverrun, "BUFFER_OVERRUN"},
    {FindingCode::XmitDiscards, "XMIT_DISCARDS"},
    {FindingCode::Congestion, "CONGESTION"},
    {FindingCode::TransportRetries, "TRANSPORT_RETRIES"},
    {FindingCode::CqeErrors, "CQE_ERRORS"},
    {FindingCode::CounterSaturated, "COUNTER_SATURATED"},
    {FindingCode::CounterUnavailable, "COUNTER_UNAVAILABLE"},
    {FindingCode::KernelLinkFlap, "KERNEL_LINK_FLAP"},
    {FindingCode::FwCommandTimeout, "FW_COMMAND_TIMEOUT"},
    {FindingCode::FwCommandFailed, "FW_COMMAND_FAILED"},
    {FindingCode::DeviceFatal, "DEVICE_FATAL"},
    {FindingCode::TxTimeout, "TX_TIMEOUT"},
    {FindingCode::DriverLoadFailed, "DRIVER_LOAD_FAILED"},
    {FindingCode::PcieError, "PCIE_ERROR"},
    {FindingCode::ModuleTemperature, "MODULE_TEMPERATURE"},
    {FindingCode::NcclSocketFallback, "NCCL_SOCKET_FALLBACK"},
    {FindingCode::NcclIbUnavailable, "NCCL_IB_UNAVAILABLE"},
    {FindingCode::NcclGdrDisabled, "NCCL_GDR_DISABLED"},
    {FindingCode::NcclIbCompletionError, "NCCL_IB_COMPLETION_ERROR"},
    {FindingCode::NcclIbAsyncEvent, "NCCL_IB_ASYNC_EVENT"},
    {FindingCode::NcclRegMrFailed, "NCCL_REG_MR_FAILED"},
    {FindingCode::NcclConnectFailed, "NCCL_CONNECT_FAILED"},
    {FindingCode::NcclQpSetupFailed, "NCCL_QP_SETUP_FAILED"},
    {FindingCode::NcclCollectiveTimeout, "NCCL_COLLECTIVE_TIMEOUT"},
    {FindingCode::NcclRankLagging, "NCCL_RANK_LAGGING"},
    {FindingCode::NcclTestWrongResults, "NCCL_TEST_WRONG_RESULTS"},
    {FindingCode::NcclTestLowBusbw, "NCCL_TEST_LOW_BUSBW"},
    {FindingCode::MemlockLimit, "MEMLOCK_LIMIT"},
    {FindingCode::UverbsAccess, "UVERBS_ACCESS"},
    {FindingCode::PeermemMissing, "PEERMEM_MISSING"},
    {FindingCode::PcieLinkDegraded, "PCIE_LINK_DEGRADED"},
    {FindingCode::MtuMismatch, "MTU_MISMATCH"},
    {FindingCode::FwVersionMismatch, "FW_VERSION_MISMATCH"},
    {FindingCode::NodeOutlier, "NODE_OUTLIER"},
    {FindingCode::EscalateHostInspection, "ESCALATE_HOST_INSPECTION"},
    {FindingCode::PfNotFound, "PF_NOT_FOUND"},
    {FindingCode::PfPortDown, "PF_PORT_DOWN"},
    {FindingCode::PfPhyErrors, "PF_PHY_ERRORS"},
    {FindingCode::PfLinkFlap, "PF_LINK_FLAP"},
    {FindingCode::PfModule, "PF_MODULE"},
    {FindingCode::PfPcieErrors, "PF_PCIE_ERRORS"},
    {FindingCode::PfFw, "PF_FW"},
    {FindingCode::PfClean, "PF_CLEAN"},
}};

}  // namespace

std::string_view severityName(Severity severity) {
  switch (severity) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Critical: return "critical";
  }
  return "info";
}

std::optional<Severity> severityFromName(std::string_view name) {
  if (name == "info") return Severity::Info;
  if (name == "warning") return Severity::Warning;
  if (name == "critical") return Severity::Critical;
  return std::nullopt;
}

std::string_view findingCodeName(FindingCode code) {
  for (const auto& c : kCodes) {
    if (c.code == code) return c.name;
  }
  return "UNKNOWN";
}

std::optional<FindingCode> findingCodeFromName(std::string_view name) {
  for (const auto& c : kCodes) {
    if (c.name == name) return c.code;
  }
  return std::nullopt;
}

const std::vector<FindingCode>& allFindingCodes() {
  static const std::vector<FindingCode> all = [] {
    std::vector<FindingCode> v;
    for (const auto& c : kCodes) v.push_back(c.code);
    return v;
  }();
  return all;
}

::ibcollect::v1::Finding makeFinding(FindingSpec spec) {
  ::ibcollect::v1::Finding f;
  f.set_code(std::string(findingCodeName(spec.code)));
  f.set_severity(std::string(severityName(spec.severity)));
  f.set_node(std::move(spec.node));
  f.set_device(std::move(spec.device));
  f.set_port(spec.port);
  f.set_summary(std::move(spec.summary));
  for (auto& e : spec.evidence) f.add_evidence(std::move(e));
  f.set_action(std::move(spec.action));
  return f;
}

Severity severityOf(const ::ibcollect::v1::Finding& finding) {
  return severityFromName(finding.severity()).value_or(Severity::Info);
}

std::optional<Severity> worstSeverity(const std::vector<::ibcollect::v1::Finding>& findings) {
  std::optional<Severity> worst;
  for (const auto& f : findings) {
    const Severity s = severityOf(f);
    if (!worst || s > *worst) worst = s;
  }
  return worst;
}

int exitCodeFor(const std::vector<::ibcollect::v1::Finding>& findings) {
  const auto worst = worstSeverity(findings);
  if (!worst || *worst == Severity::Info) return kExitOk;
  return *worst == Severity::Critical ? kExitCritical : kExitWarnings;
}

void sortFindings(std::vector<::ibcollect::v1::Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const auto& a, const auto& b) {
    const int sa = static_cast<int>(severityOf(a));
    const int sb = static_cast<int>(severityOf(b));
    // ESCALATE_HOST_INSPECTION summarises others of the same node: keep it after them.
    const bool ea = a.code() == "ESCALATE_HOST_INSPECTION";
    const bool eb = b.code() == "ESCALATE_HOST_INSPECTION";
    return std::make_tuple(-sa, a.node(), ea, a.device(), a.port(), a.code()) <
           std::make_tuple(-sb, b.node(), eb, b.device(), b.port(), b.code());
  });
}

}  // namespace ibc::core

#include "ibc/core/findings.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace ibc::core {

namespace {

constexpr std::array<FindingTraits, 53> kRegistry{{
    {FindingCode::NoRdmaDevices, "NO_RDMA_DEVICES", "port/link", Severity::Critical, 0,
     FindingClass::Device,
     "No RDMA device is visible although the node is expected to have one (driver, VF not "
     "attached)."},
    {FindingCode::PortDown, "PORT_DOWN", "port/link", Severity::Critical, 0,
     FindingClass::PhysicalLink, "A port is logically DOWN: no link to the switch."},
    {FindingCode::PortNotActiveSm, "PORT_NOT_ACTIVE_SM", "port/link", Severity::Critical, 0,
     FindingClass::FabricSm,
     "A port is physically LinkUp but INIT/ARMED: the subnet manager has not activated it (SM, "
     "partition, VF GUID)."},
    {FindingCode::PhysLinkNotUp, "PHYS_LINK_NOT_UP", "port/link", Severity::Critical, 0,
     FindingClass::PhysicalLink,
     "The physical link is not up (Polling, Disabled, LinkErrorRecovery): cable, transceiver or "
     "switch port."},
    {FindingCode::LinkRateBelowExpected, "LINK_RATE_BELOW_EXPECTED", "port/link", Severity::Warning,
     0, FindingClass::PhysicalLink,
     "A port trained below the expected rate or below its peers' (a lower-rated cable, a failed "
     "lane, a limited switch port)."},
    {FindingCode::PortStateUnknown, "PORT_STATE_UNKNOWN", "port state", Severity::Warning, 0,
     FindingClass::Observation,
     "A port's state could not be read or means nothing: never a silent OK."},
    {FindingCode::PhyErrors, "PHY_ERRORS", "counters", Severity::Warning, 2,
     FindingClass::PhysicalLink,
     "Physical-layer error counters (symbol errors, link error recovery, integrity, receive "
     "errors) are non-zero."},
    {FindingCode::LinkDowned, "LINK_DOWNED", "counters", Severity::Warning, 2,
     FindingClass::PhysicalLink, "The link went down and came back (link_downed)."},
    {FindingCode::BufferOverrun, "BUFFER_OVERRUN", "counters", Severity::Warning, 2,
     FindingClass::TransportSymptom,
     "Excessive buffer overruns: the receiver ran out of buffers (flow control, a misbehaving "
     "peer)."},
    {FindingCode::XmitDiscards, "XMIT_DISCARDS", "counters", Severity::Warning, 2,
     FindingClass::TransportSymptom,
     "Packets were discarded on transmit (a link down or a congested path)."},
    {FindingCode::Congestion, "CONGESTION", "counters", Severity::Info, 2,
     FindingClass::Observation,
     "The port waited to transmit or saw ECN/CNP marks: a busy fabric does this; it matters when "
     "it moves a lot."},
    {FindingCode::TransportRetries, "TRANSPORT_RETRIES", "counters", Severity::Warning, 2,
     FindingClass::TransportSymptom,
     "Transport retries and timeouts (ACK timeouts, out-of-sequence, RNR NAK, RoCE retransmits)."},
    {FindingCode::CqeErrors, "CQE_ERRORS", "counters", Severity::Warning, 2,
     FindingClass::TransportSymptom, "Completions with errors were counted on the device."},
    {FindingCode::CounterSaturated, "COUNTER_SATURATED", "counters", Severity::Warning, 2,
     FindingClass::Observation,
     "A counter stopped at its width's maximum: its value says nothing more."},
    {FindingCode::CounterUnavailable, "COUNTER_UNAVAILABLE", "counters", Severity::Info, 6,
     FindingClass::Observation,
     "Counters could not be read (no PMA on a VF, permission): the evidence is incomplete."},
    {FindingCode::KernelLinkFlap, "KERNEL_LINK_FLAP", "kernel log", Severity::Warning, 1,
     FindingClass::PhysicalLink, "The kernel logged the link going down and up."},
    {FindingCode::FwCommandTimeout, "FW_COMMAND_TIMEOUT", "kernel log", Severity::Critical, 1,
     FindingClass::Device, "A firmware command timed out (mlx5 cmd timeout, command EQ recovery)."},
    {FindingCode::FwCommandFailed, "FW_COMMAND_FAILED", "kernel log", Severity::Warning, 1,
     FindingClass::Device, "A firmware command failed with a status and syndrome."},
    {FindingCode::DeviceFatal, "DEVICE_FATAL", "kernel log", Severity::Critical, 1,
     FindingClass::Device,
     "The device reported a fatal state (health compromised, catastrophic, unrecoverable error)."},
    {FindingCode::TxTimeout, "TX_TIMEOUT", "kernel log", Severity::Critical, 1,
     FindingClass::TransportSymptom, "A netdev transmit queue timed out."},
    {FindingCode::DriverLoadFailed, "DRIVER_LOAD_FAILED", "kernel log", Severity::Critical, 1,
     FindingClass::Device, "The RDMA driver failed to probe or load the device."},
    {FindingCode::PcieError, "PCIE_ERROR", "kernel log", Severity::Critical, 1,
     FindingClass::Device, "PCIe AER errors were logged for the device."},
    {FindingCode::ModuleTemperature, "MODULE_TEMPERATURE", "kernel log", Severity::Warning, 1,
     FindingClass::PhysicalLink,
     "The cable/transceiver module reported a temperature or power alarm."},
    {FindingCode::NcclSocketFallback, "NCCL_SOCKET_FALLBACK", "NCCL log", Severity::Critical, 3,
     FindingClass::TenantConfig,
     "Inter-node NCCL traffic went over NET/Socket instead of IB/RoCE."},
    {FindingCode::NcclIbUnavailable, "NCCL_IB_UNAVAILABLE", "NCCL log", Severity::Critical, 3,
     FindingClass::TenantConfig,
     "NCCL found no usable IB device (libibverbs missing, no device, filtered by NCCL_IB_HCA)."},
    {FindingCode::NcclGdrDisabled, "NCCL_GDR_DISABLED", "NCCL log", Severity::Warning, 3,
     FindingClass::TenantConfig,
     "GPUDirect RDMA is disabled (nvidia_peermem missing, NCCL_NET_GDR_LEVEL)."},
    {FindingCode::NcclIbCompletionError, "NCCL_IB_COMPLETION_ERROR", "NCCL log", Severity::Critical,
     3, FindingClass::TransportSymptom,
     "NCCL got a work completion error (status 12 retry exceeded, 4 protection; 5 flushed is "
     "secondary)."},
    {FindingCode::NcclIbAsyncEvent, "NCCL_IB_ASYNC_EVENT", "NCCL log", Severity::Critical, 3,
     FindingClass::TransportSymptom,
     "NCCL received an asynchronous IB event (port error, device fatal)."},
    {FindingCode::NcclRegMrFailed, "NCCL_REG_MR_FAILED", "NCCL log", Severity::Critical, 3,
     FindingClass::TenantConfig,
     "NCCL could not register memory (memlock limit, GPUDirect, IOMMU)."},
    {FindingCode::NcclConnectFailed, "NCCL_CONNECT_FAILED", "NCCL log", Severity::Critical, 3,
     FindingClass::TenantConfig,
     "NCCL bootstrap or socket connections failed (interface selection, firewall, a dead peer)."},
    {FindingCode::NcclQpSetupFailed, "NCCL_QP_SETUP_FAILED", "NCCL log", Severity::Critical, 3,
     FindingClass::TransportSymptom,
     "NCCL could not bring a queue pair up (GID index, MTU, path)."},
    {FindingCode::NcclCollectiveTimeout, "NCCL_COLLECTIVE_TIMEOUT", "NCCL log", Severity::Critical,
     3, FindingClass::Application,
     "A collective did not finish (PyTorch watchdog or heartbeat monitor)."},
    {FindingCode::NcclRankLagging, "NCCL_RANK_LAGGING", "NCCL log", Severity::Warning, 3,
     FindingClass::Application,
     "Ranks stopped at different collectives: the ones behind are named."},
    {FindingCode::NcclTestWrongResults, "NCCL_TEST_WRONG_RESULTS", "nccl-tests", Severity::Critical,
     3, FindingClass::Application, "nccl-tests reported wrong results (#wrong > 0)."},
    {FindingCode::NcclTestLowBusbw, "NCCL_TEST_LOW_BUSBW", "nccl-tests", Severity::Warning, 3,
     FindingClass::Observation, "nccl-tests bus bandwidth is far below what the links can carry."},
    {FindingCode::MemlockLimit, "MEMLOCK_LIMIT", "host", Severity::Warning, 5,
     FindingClass::TenantConfig, "The locked-memory limit is too low for RDMA."},
    {FindingCode::UverbsAccess, "UVERBS_ACCESS", "host", Severity::Critical, 5,
     FindingClass::TenantConfig, "/dev/infiniband/uverbs* is missing or not accessible."},
    {FindingCode::PeermemMissing, "PEERMEM_MISSING", "host", Severity::Warning, 5,
     FindingClass::TenantConfig, "nvidia_peermem is not loaded: no GPUDirect RDMA."},
    {FindingCode::PcieLinkDegraded, "PCIE_LINK_DEGRADED", "host", Severity::Warning, 1,
     FindingClass::Device, "The device's PCIe link runs below its capability (width or speed)."},
    {FindingCode::MtuMismatch, "MTU_MISMATCH", "across nodes", Severity::Warning, 4,
     FindingClass::TenantConfig, "Nodes of the job use different MTUs."},
    {FindingCode::FwVersionMismatch, "FW_VERSION_MISMATCH", "across nodes", Severity::Warning, 4,
     FindingClass::Device, "A device's firmware differs from the rest of the job."},
    {FindingCode::NodeOutlier, "NODE_OUTLIER", "across nodes", Severity::Warning, 4,
     FindingClass::Observation,
     "A node's value (counter delta, throughput, busbw, layout) differs from its peers'."},
    {FindingCode::EscalateHostInspection, "ESCALATE_HOST_INSPECTION", "escalation",
     Severity::Warning, 6, FindingClass::Escalation,
     "The provider must inspect the PF behind a VF; the reasons and the runbook follow the fault's "
     "class."},
    {FindingCode::PfNotFound, "PF_NOT_FOUND", "host side (PF)", Severity::Critical, 0,
     FindingClass::HostSide,
     "No PF on this host hosts the VF (the identities compared are named)."},
    {FindingCode::PfPortDown, "PF_PORT_DOWN", "host side (PF)", Severity::Critical, 0,
     FindingClass::HostSide, "The PF's port is down."},
    {FindingCode::PfPhyErrors, "PF_PHY_ERRORS", "host side (PF)", Severity::Warning, 2,
     FindingClass::HostSide, "The PF shows physical-layer errors (symbol, FEC, BER)."},
    {FindingCode::PfLinkFlap, "PF_LINK_FLAP", "host side (PF)", Severity::Warning, 1,
     FindingClass::HostSide,
     "The PF's link went down and up (link_down_events_phy, host kernel log)."},
    {FindingCode::PfModule, "PF_MODULE", "host side (PF)", Severity::Warning, 1,
     FindingClass::HostSide,
     "The PF's cable/transceiver module reports temperature, power or fault alarms."},
    {FindingCode::PfPcieErrors, "PF_PCIE_ERRORS", "host side (PF)", Severity::Warning, 1,
     FindingClass::HostSide, "The PF shows PCIe AER errors or a degraded PCIe link."},
    {FindingCode::PfFw, "PF_FW", "host side (PF)", Severity::Critical, 1, FindingClass::HostSide,
     "The PF's firmware reports a health problem or syndrome."},
    {FindingCode::PfClean, "PF_CLEAN", "host side (PF)", Severity::Info, 6, FindingClass::HostSide,
     "The PF side shows nothing: look beyond it (switch port, peer)."},
    {FindingCode::VfIdentityMissing, "VF_IDENTITY_MISSING", "escalation", Severity::Warning, 6,
     FindingClass::Escalation,
     "A suspect VF has no readable node/port GUID, MAC or VM id: the host cannot find it; ask the "
     "customer for one."},
    {FindingCode::PfUnknown, "PF_UNKNOWN", "host side (PF)", Severity::Warning, 6,
     FindingClass::HostSide,
     "The PF was found but its evidence could not be read: never PF_CLEAN."},
}};

// One row per code, in the enum's order: findingTraits(code) is an index.
constexpr bool registryInEnumOrder() {
  for (std::size_t i = 0; i < kRegistry.size(); ++i) {
    if (static_cast<std::size_t>(kRegistry[i].code) != i) return false;
  }
  return true;
}
static_assert(registryInEnumOrder(), "kRegistry rows must follow FindingCode's order");
static_assert(kRegistry.size() == static_cast<std::size_t>(FindingCode::PfUnknown) + 1,
              "every FindingCode needs a row in kRegistry");

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

std::string_view findingClassName(FindingClass finding_class) {
  switch (finding_class) {
    case FindingClass::PhysicalLink: return "physical_link";
    case FindingClass::FabricSm: return "fabric_sm";
    case FindingClass::Device: return "device";
    case FindingClass::TransportSymptom: return "transport_symptom";
    case FindingClass::TenantConfig: return "tenant_config";
    case FindingClass::Application: return "application";
    case FindingClass::Observation: return "observation";
    case FindingClass::Escalation: return "escalation";
    case FindingClass::HostSide: return "host_side";
  }
  return "observation";
}

const std::vector<FindingTraits>& findingRegistry() {
  static const std::vector<FindingTraits> all(kRegistry.begin(), kRegistry.end());
  return all;
}

const FindingTraits& findingTraits(FindingCode code) {
  return kRegistry[static_cast<std::size_t>(code)];
}

const FindingTraits* findingTraits(std::string_view name) {
  static const std::unordered_map<std::string_view, const FindingTraits*> by_name = [] {
    std::unordered_map<std::string_view, const FindingTraits*> m;
    for (const auto& t : kRegistry) m.emplace(t.name, &t);
    return m;
  }();
  const auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

std::string_view findingCodeName(FindingCode code) { return findingTraits(code).name; }

std::optional<FindingCode> findingCodeFromName(std::string_view name) {
  if (const auto* t = findingTraits(name)) return t->code;
  return std::nullopt;
}

const std::vector<FindingCode>& allFindingCodes() {
  static const std::vector<FindingCode> all = [] {
    std::vector<FindingCode> v;
    for (const auto& t : kRegistry) v.push_back(t.code);
    return v;
  }();
  return all;
}

int findingSpecificity(std::string_view code) {
  const auto* t = findingTraits(code);
  return t != nullptr ? t->specificity : 5;
}

FindingClass findingClassOf(std::string_view code) {
  const auto* t = findingTraits(code);
  return t != nullptr ? t->finding_class : FindingClass::Observation;
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
    const bool ea = findingClassOf(a.code()) == FindingClass::Escalation;
    const bool eb = findingClassOf(b.code()) == FindingClass::Escalation;
    return std::make_tuple(-sa, a.node(), ea, a.device(), a.port(), a.code()) <
           std::make_tuple(-sb, b.node(), eb, b.device(), b.port(), b.code());
  });
}

}  // namespace ibc::core

#pragma once

// Judgement of the PF side (`ibcollect host-inspect`, docs/formats.md) with the PF_* codes of
// docs/codes.md (the host-inspect report, text and JSON, is pf_report.h's). Pure: takes the
// evidence the agent collected or parsed from pastes, never the host.
//
// Severity follows evidence as in docs/codes.md: what holds now (a port down, a module alarm
// asserted, a fatal AER count, a firmware health syndrome, a fatal kernel line) is critical;
// an old non-zero total (error counters since the last clear, link-down counts, correctable
// AER counts) is a warning; what could not be read is said, never taken for clean.
// From `lspci` (PfEvidence.pci_functions) PF_PCIE_ERRORS is raised for a function whose
// configuration space reads all ones (critical: it is gone from the bus), AER status bits
// set (UESta bits UESvrt marks fatal: critical; other UESta and CESta bits: warning, like
// the AER counters) and a downgraded link (warning, like the sysfs link width/speed), each
// with the function's address and the line that shows it. A bare `lspci` listing (no Lnk or
// AER lines, nothing unreadable) is inventory: it alone never makes the PF clean. A PCIe
// slot's "Link Down" (pciehp, pcieport) in the host kernel log is a PCIe event, not a flap.
//
// Thresholds (named so tests and runbooks can quote them):
//   * effective (post-FEC) BER at or above kEffectiveBerCritical (1e-12, the IB/Ethernet
//     link BER objective) is critical; any effective error below that a warning;
//   * raw (pre-FEC) BER above kRawBerWarning (1e-6) is a warning (the link lives on FEC
//     margin); raw errors per lane with zero effective errors are information only;
//   * module temperature from DDM: kModuleTempWarningC (70 °C) warning, kModuleTempCriticalC
//     (80 °C) critical, when the tool printed no alarm flags of its own; module Rx power at
//     or below kRxPowerNoLightDbm (-20 dBm) on a lane is critical (no light), at or below
//     kRxPowerLowDbm (-14 dBm) a warning;
//   * a module value printed "N/A" (a passive copper cable has no DDM) is not applicable:
//     no finding.

#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/result.h"
#include "ibcollect/v1/host.pb.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

inline constexpr double kEffectiveBerCritical = 1e-12;
inline constexpr double kRawBerWarning = 1e-6;
inline constexpr double kModuleTempWarningC = 70;
inline constexpr double kModuleTempCriticalC = 80;
inline constexpr double kRxPowerNoLightDbm = -20;
inline constexpr double kRxPowerLowDbm = -14;

// Findings about one PF: node = `host`, device = pf.pf_device(), source = `source`.
// `vfs` are the VFs mapped to this PF (named in the evidence, and a VF whose link the
// host forced down — `link-state disable` — is PF_PORT_DOWN). Exactly one of: PF findings
// above info (plus info ones), PF_CLEAN (info: nothing found in what was read; its evidence
// says what was read), or PORT_STATE_UNKNOWN (warning: nothing PF-side could be read).
std::vector<v1::Finding> judgePf(const v1::PfEvidence& pf, const std::vector<v1::VfMapping>& vfs,
                                 std::string_view host, std::string_view source);

// For a VF no PF of the host hosts: PF_NOT_FOUND (critical: the escalation cannot go on
// here) with what was compared, and said when the host has no SR-IOV PF at all; or, when the
// VF had no identity to look for (no node/port GUID or MAC in the bundle or on --vf; a guest
// PCI address alone names no host device), VF_IDENTITY_MISSING (warning): a miss says
// nothing, so nothing says it is not here.
v1::Finding pfNotFoundFinding(const v1::VfMapping& vf, std::string_view host,
                              std::string_view source);

// Fills `nodes` (one NodeReport for the host: its PF ports, counts, worst severity) from
// `pf` and `findings`, and sorts the findings.
void finishHostInspection(v1::HostInspection& inspection);

}  // namespace ibc::core

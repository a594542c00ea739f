#pragma once

// Test helper: everything a paste of PF tools held, as the evidence of one PF (host-inspect
// attributes each record to its PF; a capture of one adapter needs no attribution).

#include <string>

#include "ibc/core/pf_tools.h"
#include "ibcollect/v1/host.pb.h"

namespace ibc::test {

inline ::ibcollect::v1::PfEvidence onePf(const core::PfToolEvidence& ev,
                                         const std::string& device = "mlx5_0",
                                         const std::string& pci = "0000:42:00.0") {
  ::ibcollect::v1::PfEvidence e;
  e.set_pf_device(device);
  if (!pci.empty()) e.set_pf_pci(pci);
  for (const auto& m : ev.mlxlink) *e.add_mlxlink() = m;
  for (const auto& m : ev.modules) *e.add_modules() = m;
  for (const auto& l : ev.links) *e.add_links() = l;
  for (const auto& l : ev.kernel_log) *e.add_kernel_log() = l;
  for (const auto& a : ev.aer) *e.add_aer() = a;
  for (const auto& f : ev.flint) *e.add_flint() = f;
  for (const auto& c : ev.mlxconfig) *e.add_mlxconfig() = c;
  for (const auto& f : ev.pci_functions) *e.add_pci_functions() = f;
  return e;
}

}  // namespace ibc::test

#pragma once

// Test helpers of the PF side: the real PF captures by name, and everything a paste of PF
// tools held as the evidence of one PF (host-inspect attributes each record to its PF; a
// capture of one adapter needs no attribution), and what a judgement of it found.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fixtures.h"

#include "ibc/core/pf/pf_tools.h"
#include "ibcollect/v1/host.pb.h"
#include "ibcollect/v1/report.pb.h"

namespace ibc::test {

// The real capture under tests/fixtures/real/pf/ whose file name starts with `prefix`; fails
// the current test (and returns "") when there is none.
inline std::string pfCapture(const std::string& prefix) {
  for (const auto& f : fixtureFiles("real/pf", ".txt")) {
    const std::string name = f.substr(f.rfind('/') + 1);
    if (name.rfind(prefix, 0) == 0) return readFixture("real/pf/" + name);
  }
  ADD_FAILURE() << "no fixture " << prefix;
  return {};
}

inline ::ibcollect::v1::PfEvidence onePf(const core::PfToolEvidence& ev,
                                         const std::string& device = "mlx5_0",
                                         const std::string& pci = "0000:42:00.0") {
  ::ibcollect::v1::PfEvidence e;
  e.set_pf_device(device);
  if (!pci.empty()) e.set_pf_pci(pci);
  core::addAllToPf(ev, e);
  return e;
}

// The findings as "CODE:severity", sorted: a judgement compared whole.
inline std::vector<std::string> codes(const std::vector<::ibcollect::v1::Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.code() + ":" + f.severity());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ibc::test

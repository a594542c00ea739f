// Every real host-side capture of tests/fixtures/real/pf through the PF parsers and the PF
// judge, checked against the labels of its PROVENANCE.md entry:
//   * Expected codes: PF_MODULE, PF_PCIE_ERRORS     (exactly these codes, any severity)
//   * Forbidden codes: PF_FW                          (optional)
//   * Known miss: <why>                               (optional: reported, not failed)
// The VFs a paste lists (`vf N` records of `ip link`) are taken as the case's VFs, so a VF
// the host forces down is judged as it would be for a suspect VF.

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capture_labels.h"
#include "fixtures.h"
#include "ibc/core/pf/pf_tools.h"
#include "ibc/core/pf_judge.h"
#include "pf_evidence.h"

namespace ibc::core {
namespace {

using ibc::test::captureLabels;
using ibc::test::joinedCodes;
using Label = ibc::test::CaptureLabel;

std::set<std::string> judged(const std::string& text) {
  const PfToolEvidence ev = parsePfToolOutput(text);
  const v1::PfEvidence e = ibc::test::onePf(ev, "pf", "");
  std::vector<v1::VfMapping> vfs;
  for (const auto& l : ev.links) {
    for (const auto& vf : l.vfs()) {
      v1::VfMapping m;
      m.set_vf_index(static_cast<int32_t>(vf.index()));
      vfs.push_back(m);
    }
  }
  std::set<std::string> out;
  for (const auto& f : judgePf(e, vfs, "host", "capture")) out.insert(f.code());
  return out;
}

TEST(PfCaptureDiagnosis, EveryRealCaptureGivesItsLabelledCodesAndNoForbiddenOne) {
  const auto label = captureLabels(ibc::test::readFixture("real/pf/PROVENANCE.md"));
  const auto files = ibc::test::fixtureFiles("real/pf", ".txt");
  ASSERT_FALSE(files.empty());
  int right = 0;
  int known = 0;
  for (const auto& path : files) {
    const std::string name = path.substr(path.rfind('/') + 1);
    const auto it = label.find(name);
    if (it == label.end() || !it->second.has_expected) {
      ADD_FAILURE() << name << ": no \"* Expected codes:\" line in PROVENANCE.md";
      continue;
    }
    const Label& l = it->second;
    const auto got = judged(ibc::test::readFixture("real/pf/" + name));
    std::set<std::string> bad;
    std::set_intersection(got.begin(), got.end(), l.forbidden.begin(), l.forbidden.end(),
                          std::inserter(bad, bad.begin()));
    const bool ok = got == l.expected && bad.empty();
    if (ok) {
      ++right;
    } else if (!l.known_miss.empty()) {
      ++known;
      std::cout << "[ known miss ] " << name << ": got " << joinedCodes(got) << ", labelled "
                << joinedCodes(l.expected) << " (" << l.known_miss << ")\n";
    } else {
      ADD_FAILURE() << name << ": got " << joinedCodes(got) << ", labelled "
                    << joinedCodes(l.expected)
                    << (bad.empty() ? "" : "; forbidden " + joinedCodes(bad));
    }
    if (ok && !l.known_miss.empty()) {
      ADD_FAILURE() << name << " now gives its label: drop its \"Known miss\" line";
    }
  }
  std::cout << "[ pf captures ] " << right << " of " << files.size() << " right"
            << (known ? ", " + std::to_string(known) + " known miss(es)" : "") << "\n";
  EXPECT_EQ(right + known, static_cast<int>(files.size()));
}

TEST(PfCaptureDiagnosis, LabelsAreReadFromProvenanceEntries) {
  const auto l = captureLabels(
      "## a.txt\n* Expected codes: PF_MODULE, PF_PCIE_ERRORS\n* Forbidden codes: PF_FW\n"
      "## b.txt\n* Expected codes: PF_CLEAN\n* Known miss: no parser\n## Coverage\n"
      "* Expected codes: PF_FW\n");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l.at("a.txt").expected, (std::set<std::string>{"PF_MODULE", "PF_PCIE_ERRORS"}));
  EXPECT_EQ(l.at("a.txt").forbidden, std::set<std::string>{"PF_FW"});
  EXPECT_EQ(l.at("b.txt").known_miss, " no parser");
}

}  // namespace
}  // namespace ibc::core

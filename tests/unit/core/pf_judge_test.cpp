// The PF judge (escalation/pf_judge.cpp) on the real captures of tests/fixtures/real/pf (labels in
// its PROVENANCE.md), plus good/empty/truncated/garbage/huge input.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fixtures.h"
#include "ibc/core/pf/pf_tools.h"
#include "ibc/core/pf_judge.h"
#include "pf_evidence.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

using namespace ibc::test;  // the real PF captures, one PF's evidence and its codes

TEST(PfJudge, CleanRealCapturesAreCleanWithWhatWasRead) {
  for (const char* name : {"mlxlink-c_cx4", "mlxlink-e_cx4", "mlxlink-m-c_bf3"}) {
    const auto f = judgePf(onePf(parsePfToolOutput(pfCapture(name))), {}, "h", "t");
    EXPECT_EQ(codes(f), std::vector<std::string>{"PF_CLEAN:info"}) << name;
  }
  // Raw errors corrected by FEC are named, not judged.
  const auto f = judgePf(onePf(parsePfToolOutput(pfCapture("mlxlink-c_cx4"))), {}, "h", "t");
  bool named = false;
  for (const auto& e : f[0].evidence())
    named = named || e.find("26711,0,0,9108") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(PfJudge, RealPositivesGiveTheirLabels) {
  EXPECT_EQ(codes(judgePf(onePf(parsePfToolOutput(pfCapture("dmesg-pf_mlx5-health-synd"))), {}, "h",
                          "t")),
            std::vector<std::string>{"PF_FW:critical"});
  EXPECT_EQ(
      codes(judgePf(onePf(parsePfToolOutput(pfCapture("dmesg-pf_cx4lx-vf-enable"))), {}, "h", "t")),
      std::vector<std::string>{"PF_FW:critical"});
  EXPECT_EQ(codes(judgePf(onePf(parsePfToolOutput(pfCapture("ethtool-m_sfp-10gbase-sr-finisar"))),
                          {}, "h", "t")),
            std::vector<std::string>{"PF_MODULE:critical"});
  EXPECT_EQ(
      codes(judgePf(onePf(parsePfToolOutput(pfCapture("iplink-pf_cx5-eth-p4p1"))), {}, "h", "t")),
      std::vector<std::string>{"PF_PORT_DOWN:critical"});
  // The IPoIB netdev left down is no port evidence; the VF's link-state disable is.
  v1::VfMapping vf0;
  vf0.set_vf_index(0);
  const auto ib = onePf(parsePfToolOutput(pfCapture("iplink-pf_mlx5-ipoib-ib4")));
  EXPECT_EQ(codes(judgePf(ib, {vf0}, "h", "t")), std::vector<std::string>{"PF_PORT_DOWN:critical"});
  v1::VfMapping vf5;
  vf5.set_vf_index(5);
  EXPECT_EQ(codes(judgePf(ib, {vf5}, "h", "t")), std::vector<std::string>{"PF_CLEAN:info"});
}

// Derived (labelled synthetic): the real BlueField-3 capture with its counters changed in
// the test, since no real capture with non-zero effective errors was found.
TEST(PfJudge, DerivedNonZeroCountersGivePhyErrorsAndLinkFlap) {
  std::string text = pfCapture("mlxlink-m-c_bf3");
  auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("Effective Physical Errors          : 0", "Effective Physical Errors          : 1234");
  replace("Link Down Counter                  : 0", "Link Down Counter                  : 7");
  const auto f = judgePf(onePf(parsePfToolOutput(text)), {}, "h", "t");
  EXPECT_EQ(codes(f), (std::vector<std::string>{"PF_LINK_FLAP:warning", "PF_PHY_ERRORS:warning"}));
  replace("Effective Physical BER             : 15E-255",
          "Effective Physical BER             : 2E-9");
  const auto g = judgePf(onePf(parsePfToolOutput(text)), {}, "h", "t");
  EXPECT_EQ(codes(g), (std::vector<std::string>{"PF_LINK_FLAP:warning", "PF_PHY_ERRORS:critical"}));
}

TEST(PfJudge, NoEvidenceIsNeverClean) {
  v1::PfEvidence e;
  e.set_pf_device("mlx5_0");
  const auto f = judgePf(e, {}, "h", "t");
  EXPECT_EQ(codes(f), std::vector<std::string>{"PORT_STATE_UNKNOWN:warning"});
}

TEST(PfJudge, AerTotalsFollowSeverityOfEvidence) {
  v1::PfEvidence e;
  e.set_pf_device("mlx5_0");
  for (auto& a : parseAerCounters("RxErr 2\nTOTAL_ERR_COR 2\n", "correctable")) *e.add_aer() = a;
  EXPECT_EQ(codes(judgePf(e, {}, "h", "t")), std::vector<std::string>{"PF_PCIE_ERRORS:warning"});
  for (auto& a : parseAerCounters("DLP 1\nTOTAL_ERR_FATAL 1\n", "fatal")) *e.add_aer() = a;
  EXPECT_EQ(codes(judgePf(e, {}, "h", "t")), std::vector<std::string>{"PF_PCIE_ERRORS:critical"});
}

TEST(PfJudge, AVfWithNothingToLookForIsVfIdentityMissingNeverPfNotFound) {
  v1::VfMapping vf;
  vf.set_node("node3");
  vf.set_device("mlx5_2");
  vf.add_compared("3 SR-IOV PF(s) in sysfs (sriov_numvfs)");
  vf.add_identities("guest pci 0000:12:00.0");  // the guest's bus address: no host identity
  const auto missing = pfNotFoundFinding(vf, "host7", "/");
  EXPECT_EQ(missing.code(), "VF_IDENTITY_MISSING");
  EXPECT_EQ(missing.severity(), "warning");
  EXPECT_THAT(missing.action(), HasSubstr("node GUID"));
  vf.add_identities("node_guid 0002:c903:00a0:b1c2");
  const auto not_found = pfNotFoundFinding(vf, "host7", "/");
  EXPECT_EQ(not_found.code(), "PF_NOT_FOUND");
  EXPECT_EQ(not_found.severity(), "critical");
}

TEST(PfJudge, UnreadableFunctionsAreCriticalAndNamed) {
  const auto ev = parsePfToolOutput(pfCapture("lspci_cx4lx"));
  ASSERT_FALSE(ev.pci_functions.empty());
  EXPECT_NE(std::find(ev.kinds.begin(), ev.kinds.end(), std::string(kKindLspci)), ev.kinds.end());
  const auto findings = judgePf(onePf(ev), {}, "h", "t");
  ASSERT_EQ(codes(findings), std::vector<std::string>{"PF_PCIE_ERRORS:critical"});
  EXPECT_THAT(findings[0].summary(), HasSubstr("8 PCI function(s)"));
  EXPECT_THAT(findings[0].evidence(0), HasSubstr("0b:01.0 reads all ones"));
}

}  // namespace
}  // namespace ibc::core

// The lspci parser (parsers/pf/lspci.cpp) on the real captures of tests/fixtures/real/pf (labels in
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

TEST(LspciParser, FunctionsReadingAllOnesAreUnreadableWithTheirLine) {
  const auto fns = parseLspci(pfCapture("lspci_cx4lx"));
  ASSERT_EQ(fns.size(), 16u);  // 2 PFs, 6 VFs, 7 VFs (rev ff), 0000:0b:08.1
  EXPECT_EQ(fns[0].address(), "0b:00.0");
  EXPECT_FALSE(fns[0].config_unreadable());
  EXPECT_THAT(fns[0].description(), HasSubstr("[15b3:1015]"));
  int unreadable = 0;
  for (const auto& f : fns) unreadable += f.config_unreadable() ? 1 : 0;
  EXPECT_EQ(unreadable, 8);
  EXPECT_EQ(fns[8].address(), "0b:01.0");
  EXPECT_THAT(fns[8].unreadable_line(), HasSubstr("(rev ff)"));
  EXPECT_EQ(fns.back().address(), "0000:0b:08.1");
  EXPECT_THAT(fns.back().unreadable_line(), HasSubstr("Unknown header type 7f"));
}

TEST(LspciParser, HealthyLinkAndMaskedAdvisoryBitAreNoErrors) {
  const auto fns = parseLspci(pfCapture("lspci-vv_cx4lx-mcx4421a"));
  ASSERT_EQ(fns.size(), 2u);
  for (const auto& f : fns) {
    EXPECT_EQ(f.cap_gts(), 8);
    EXPECT_EQ(f.cap_lanes(), 8u);
    EXPECT_EQ(f.sta_gts(), 8);
    EXPECT_EQ(f.sta_lanes(), 8u);
    EXPECT_FALSE(f.link_downgraded());
    EXPECT_EQ(f.correctable_set_size(), 0) << f.ce_sta();  // AdvNonFatalErr+ is masked
    EXPECT_EQ(f.uncorrectable_set_size(), 0);
  }
  EXPECT_EQ(fns[1].address(), "0000:01:00.1");
}

TEST(LspciParser, AVfWithoutALinkOfItsOwnIsNotDowngraded) {
  const auto fns = parseLspci(pfCapture("lspci-vvv_cx5-vf"));
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_THAT(fns[0].link_sta(), HasSubstr("(downgraded)"));
  EXPECT_FALSE(fns[0].link_downgraded());
}

// Register layouts as lspci 3.x prints them (a wrapped UESta, old LnkSta without "(ok)"),
// with bits set: the real captures above have none set.
TEST(LspciParser, WrappedAerRegistersAndLinkBelowCapability) {
  const std::string text =
      "[root@h ~]# lspci -vvv -s 5e:00.0 | grep -e Lnk -e UE -e CE\n"
      "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
      "\t\tLnkSta:\tSpeed 8GT/s, Width x8\n"
      "\t\tUESta:\tDLP+ SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP-\n"
      "\t\t\tECRC- UnsupReq+ ACSViol- UncorrIntErr- BlockedTLP- AtomicOpBlocked-\n"
      "\t\tUEMsk:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP-\n"
      "\t\tUESvrt:\tDLP+ SDES+ TLP- FCP+ CmpltTO- CmpltAbrt- UnxCmplt- RxOF+ MalfTLP+\n"
      "\t\tCESta:\tRxErr+ BadTLP- BadDLLP+ Rollover- Timeout- AdvNonFatalErr-\n"
      "\t\tCEMsk:\tRxErr- BadTLP- BadDLLP+ Rollover- Timeout- AdvNonFatalErr+\n";
  const auto fns = parseLspci(text);
  ASSERT_EQ(fns.size(), 1u);
  const auto& f = fns[0];
  EXPECT_EQ(f.address(), "5e:00.0");  // from the command line's -s
  EXPECT_TRUE(f.link_downgraded());
  EXPECT_EQ(std::vector<std::string>(f.uncorrectable_set().begin(), f.uncorrectable_set().end()),
            (std::vector<std::string>{"DLP", "UnsupReq"}));
  EXPECT_EQ(
      std::vector<std::string>(f.uncorrectable_fatal().begin(), f.uncorrectable_fatal().end()),
      std::vector<std::string>{"DLP"});
  EXPECT_EQ(std::vector<std::string>(f.correctable_set().begin(), f.correctable_set().end()),
            std::vector<std::string>{"RxErr"});  // BadDLLP is masked

  v1::PfEvidence e;
  e.set_pf_device("mlx5_0");
  *e.add_pci_functions() = f;
  const auto findings = judgePf(e, {}, "h", "t");
  ASSERT_EQ(codes(findings), std::vector<std::string>{"PF_PCIE_ERRORS:critical"});
  std::string ev;
  for (const auto& line : findings[0].evidence()) ev += line + "\n";
  EXPECT_THAT(ev, HasSubstr("5e:00.0 LnkSta:"));
  EXPECT_THAT(ev, HasSubstr("fatal per UESvrt: DLP"));
  EXPECT_THAT(ev, HasSubstr("5e:00.0 CESta:"));
}

TEST(LspciParser, EmptyGarbageAndOtherToolsGiveNothingAndHugeInputIsBounded) {
  EXPECT_TRUE(parseLspci("").empty());
  EXPECT_TRUE(parseLspci("\x01\x02 garbage : here\n+++\n").empty());
  EXPECT_TRUE(parseLspci(pfCapture("mlxlink-c_cx4")).empty());
  EXPECT_TRUE(parseLspci(pfCapture("dmesg-pf_cx5-mlx5-fatal")).empty());
  std::string huge;
  for (int i = 0; i < 5000; ++i) huge += "0b:00.0 Ethernet controller: x (rev ff)\n";
  EXPECT_EQ(parseLspci(huge).size(), kMaxPfReports);
}

}  // namespace
}  // namespace ibc::core

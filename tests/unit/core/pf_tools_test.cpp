// PF-side parsers and the PF judge on the real captures of tests/fixtures/real/pf (labels
// in its PROVENANCE.md), plus good/empty/truncated/garbage/huge input.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fixtures.h"
#include "ibc/core/pf_judge.h"
#include "ibc/core/pf_tools.h"
#include "pf_evidence.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

using ibc::test::readFixture;

std::string pf(const std::string& prefix) {
  for (const auto& f : ibc::test::fixtureFiles("real/pf", ".txt")) {
    const std::string name = f.substr(f.rfind('/') + 1);
    if (name.rfind(prefix, 0) == 0) return readFixture("real/pf/" + name);
  }
  ADD_FAILURE() << "no fixture " << prefix;
  return {};
}

std::vector<std::string> codes(const std::vector<v1::Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.code() + ":" + f.severity());
  std::sort(out.begin(), out.end());
  return out;
}

v1::PfEvidence evidenceFrom(const PfToolEvidence& ev) { return ibc::test::onePf(ev); }

TEST(MlxlinkParser, ForumCaptureWithBlankLinesAndCollapsedColumnsGivesCounters) {
  const auto r = parseMlxlink(pf("mlxlink-c_cx4"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].device(), "/dev/mst/mt4115_pciconf0");
  EXPECT_EQ(r[0].state(), "Active");
  EXPECT_EQ(r[0].phys_state(), "LinkUp");
  EXPECT_EQ(r[0].speed(), "100GbE");
  EXPECT_EQ(r[0].fec(), "Standard RS-FEC - RS(528,514)");
  EXPECT_EQ(r[0].effective_errors(), 0u);
  EXPECT_EQ(r[0].raw_ber(), "3E-12");
  EXPECT_DOUBLE_EQ(r[0].raw_ber_value(), 3e-12);
  EXPECT_DOUBLE_EQ(r[0].time_since_clear_min(), 1715.4);
  ASSERT_EQ(r[0].raw_errors_per_lane_size(), 4);
  EXPECT_EQ(r[0].raw_errors_per_lane(0), 26711u);
  EXPECT_EQ(r[0].raw_errors_per_lane(3), 9108u);
  EXPECT_FALSE(r[0].has_link_down_counter());
}

TEST(MlxlinkParser, EyeSectionGivesGradesPerLane) {
  const auto r = parseMlxlink(pf("mlxlink-e_cx4"));
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].physical_grade_size(), 4);
  EXPECT_EQ(r[0].physical_grade(0), 3065);
  EXPECT_EQ(r[0].height_eye_mv(3), 37);
  EXPECT_EQ(r[0].phase_eye_psec(2), 15);
}

TEST(MlxlinkParser, PassiveDacModuleInfoIsNotApplicableNotZero) {
  const auto r = parseMlxlink(pf("mlxlink-m-c_bf3"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].port(), 1u);
  EXPECT_EQ(r[0].module_identifier(), "QSFP28");
  EXPECT_EQ(r[0].ddm(), "No");
  EXPECT_FALSE(r[0].has_temperature_c());
  EXPECT_EQ(r[0].rx_power_dbm_size(), 0);
  EXPECT_EQ(r[0].faults_size(), 0);
  EXPECT_EQ(r[0].firmware_version(), "32.43.2402");
  EXPECT_EQ(r[0].link_down_counter(), 0u);
  EXPECT_EQ(r[0].link_error_recovery_counter(), 0u);
  EXPECT_EQ(r[0].effective_ber(), "15E-255");
}

TEST(MlxlinkParser, EmptyGarbageAndOtherToolsGiveNothing) {
  EXPECT_TRUE(parseMlxlink("").empty());
  EXPECT_TRUE(parseMlxlink("\x01\x02 garbage : : :\n\n---\n").empty());
  EXPECT_TRUE(parseMlxlink(pf("flint-q_cx4lx-ibm")).empty());
  EXPECT_TRUE(parseMlxlink(pf("ethtool-m_sfp-10gbase-sr-finisar")).empty());
}

TEST(MlxlinkParser, TruncatedCaptureKeepsWholeFieldsAndHugeInputIsBounded) {
  const std::string text = pf("mlxlink-m-c_bf3");
  const auto cut = parseMlxlink(text.substr(0, text.find("Module Info")));
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].state(), "Active");
  EXPECT_TRUE(cut[0].module_identifier().empty());
  std::string huge;
  for (int i = 0; i < 400; ++i) huge += "mlxlink -d 0000:42:00.0\nState : Active\n";
  EXPECT_EQ(parseMlxlink(huge).size(), kMaxPfReports);
}

TEST(MlxconfigParser, Cx3QueryGivesSriovSettings) {
  const auto r = parseMlxconfig(pf("mlxconfig-q_cx3"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].device_type(), "ConnectX3");
  EXPECT_EQ(r[0].device(), "/dev/mst/mt4099_pciconf0");
  EXPECT_EQ(r[0].sriov_en(), "True(1)");
  EXPECT_EQ(r[0].num_of_vfs(), "8");
  EXPECT_GE(r[0].settings_size(), 9);
  EXPECT_TRUE(parseMlxconfig(pf("mlxlink-c_cx4")).empty());
}

TEST(FlintParser, QueriesGiveVersionAndPsidWithoutAnnotations) {
  const auto ibm = parseFlintQuery(pf("flint-q_cx4lx-ibm"));
  ASSERT_EQ(ibm.size(), 1u);
  EXPECT_EQ(ibm[0].device(), "0001:19:00.0");
  EXPECT_EQ(ibm[0].fw_version(), "14.26.0226");
  EXPECT_EQ(ibm[0].psid(), "IBM0000000034");
  EXPECT_EQ(ibm[0].base_guid(), "0894ef030080a89f");
  const auto annotated = parseFlintQuery(pf("flint-q_cx4lx-fw14.32"));
  ASSERT_EQ(annotated.size(), 1u);
  EXPECT_EQ(annotated[0].fw_version(), "14.32.1010");
  EXPECT_EQ(annotated[0].psid(), "MT_2420110034");
  // mlxlink's module "FW Version : N/A" is not a flint query.
  EXPECT_TRUE(parseFlintQuery(pf("mlxlink-m-c_bf3")).empty());
}

TEST(EthtoolModuleParser, SfpWithRxPowerLowAlarmOn) {
  const auto r = parseEthtoolModule(pf("ethtool-m_sfp-10gbase-sr-finisar"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].netdev(), "ens22f0");
  EXPECT_EQ(r[0].vendor_pn(), "FTLX8571D3BCL-HD");
  EXPECT_DOUBLE_EQ(r[0].temperature_c(), 30.14);
  ASSERT_EQ(r[0].rx_power_dbm_size(), 1);
  EXPECT_DOUBLE_EQ(r[0].rx_power_dbm(0), -33.98);
  ASSERT_EQ(r[0].alarms_on_size(), 1);
  EXPECT_EQ(r[0].alarms_on(0), "Laser rx power low alarm");
  ASSERT_EQ(r[0].warnings_on_size(), 1);
  EXPECT_EQ(r[0].flags_reported(), 20u);
  EXPECT_TRUE(parseEthtoolModule("Identifier : QSFP28\n").empty());  // mlxlink's, not 0x..
}

TEST(PfIpLinkParser, InfinibandVfRecordWrappedOntoTheNextLine) {
  const auto r = parsePfIpLink(pf("iplink-pf_mlx5-ipoib-ib4"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].name(), "ib4");
  EXPECT_FALSE(r[0].admin_up());
  EXPECT_EQ(r[0].link_type(), "infiniband");
  ASSERT_EQ(r[0].vfs_size(), 1);
  EXPECT_EQ(r[0].vfs(0).index(), 0u);
  EXPECT_EQ(r[0].vfs(0).node_guid(), "22:44:33:00:33:11:00:33");
  EXPECT_EQ(r[0].vfs(0).port_guid(), "10:21:33:12:00:11:22:10");
  EXPECT_EQ(r[0].vfs(0).link_state(), "disable");
}

TEST(PfIpLinkParser, EthernetTablesWithMarkdownQuoteAndBold) {
  const auto danm = parsePfIpLink(pf("iplink-pf_mlx-eth-enp101s0f0"));
  ASSERT_EQ(danm.size(), 1u);
  EXPECT_EQ(danm[0].name(), "enp101s0f0");
  ASSERT_EQ(danm[0].vfs_size(), 11);
  EXPECT_EQ(danm[0].vfs(9).vlan(), "10");
  EXPECT_EQ(danm[0].vfs(9).spoof_checking(), "on");
  EXPECT_EQ(danm[0].vfs(10).mac(), "00:00:00:00:00:00");
  const auto ovn = parsePfIpLink(pf("iplink-pf_cx5-eth-p4p1"));
  ASSERT_EQ(ovn.size(), 1u);
  EXPECT_TRUE(ovn[0].admin_up());
  EXPECT_FALSE(ovn[0].carrier());
  EXPECT_EQ(ovn[0].vfs_size(), 4);
}

TEST(AerParser, SysfsFilesAndGrepListings) {
  const auto file = parseAerCounters("RxErr 3\nBadTLP 0\nTOTAL_ERR_COR 3\n", "correctable");
  ASSERT_EQ(file.size(), 3u);
  EXPECT_EQ(file[0].value(), 3u);
  const auto ev = parsePfToolOutput(
      "/sys/bus/pci/devices/0000:42:00.0/aer_dev_fatal:DLP 1\n"
      "/sys/bus/pci/devices/0000:42:00.0/aer_dev_fatal:TOTAL_ERR_FATAL 1\n");
  ASSERT_EQ(ev.aer.size(), 2u);
  EXPECT_EQ(ev.aer[1].kind(), "fatal");
  EXPECT_TRUE(parseAerCounters("RxErr -1\nnot a line at all\n", "x").empty());
}

TEST(EthtoolModuleParser, MailWrappedAndQuotedPrintableDumpsKeepEveryFlag) {
  // Thunderbird wrapped values after a space; the module must not end at the wrap.
  const auto wrapped = parseEthtoolModule(pf("ethtool-m_dell-m14mk-sfp28"));
  ASSERT_EQ(wrapped.size(), 1u);
  EXPECT_EQ(wrapped[0].vendor_pn(), "M14MK");
  EXPECT_EQ(wrapped[0].flags_reported(), 20u);
  EXPECT_EQ(wrapped[0].alarms_on_size(), 3);
  EXPECT_EQ(wrapped[0].warnings_on_size(), 3);
  // Quoted-printable soft breaks ("125.8=" / "3 degrees F") are joined back.
  const auto qp = parseEthtoolModule(pf("ethtool-m_oem-sfp-10g-sr-all-flags-off"));
  ASSERT_EQ(qp.size(), 1u);
  EXPECT_DOUBLE_EQ(qp[0].temperature_c(), 52.13);
  EXPECT_EQ(qp[0].flags_reported(), 20u);
  EXPECT_EQ(qp[0].alarms_on_size(), 0);
  // A poster's "(...)" elision inside a quoted dump.
  const auto elided = parseEthtoolModule(pf("ethtool-m_cx3pro-mlx4-sfp"));
  ASSERT_EQ(elided.size(), 1u);
  EXPECT_EQ(elided[0].netdev(), "eth2");
  ASSERT_EQ(elided[0].alarms_on_size(), 1);
  EXPECT_EQ(elided[0].alarms_on(0), "Laser rx power low alarm");
}

TEST(EthtoolModuleParser, AnnotatedFlagIsStillOnAndOtherTextEndsTheModule) {
  const auto r = parseEthtoolModule(
      "Identifier : 0x03 (SFP)\nVendor PN : X\nLaser rx power low alarm : On   <-- no light\n"
      "Laser rx power low warning : Off\nsome prose after the paste\nmore prose here\n"
      "Laser bias current high alarm : On\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].alarms_on_size(), 1);
  EXPECT_EQ(r[0].flags_reported(), 2u);
}

TEST(PfKernelLog, PcieBandwidthLimitedLineIsKeptWrappedOrUnstamped) {
  const auto wrapped = parsePfKernelLog(pf("dmesg-pf_pci-gpu-pcie-limited"));
  const bool whole = std::any_of(wrapped.begin(), wrapped.end(), [](const v1::KernelLogLine& l) {
    return l.text().find(
               "bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:00:01.1 (capable "
               "of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)") != std::string::npos;
  });
  EXPECT_TRUE(whole);
  const auto bare = parsePfKernelLog(
      "mlx5_core 0000:17:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe "
      "x4 link at 0000:16:02.0 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)\n");
  ASSERT_EQ(bare.size(), 1u);
  v1::PfEvidence e;
  e.set_pf_device("mlx5_0");
  *e.add_kernel_log() = bare[0];
  EXPECT_EQ(codes(judgePf(e, {}, "h", "t")), std::vector<std::string>{"PF_PCIE_ERRORS:warning"});
  // At capability the kernel prints no "limited by": nothing to say.
  const auto at_cap =
      judgePf(evidenceFrom(parsePfToolOutput(pf("dmesg-pf_cx5-mlx5-pcie-8gts-x8-at-capability"))),
              {}, "h", "t");
  EXPECT_EQ(codes(at_cap), std::vector<std::string>{"PF_CLEAN:info"});
}

TEST(MlxlinkParser, AnnotatedCounterKeepsItsNumber) {
  const auto r = parseMlxlink(
      "mlxlink -d mlx5_3 -c\nEffective Physical Errors : 1234 <-- rising\n"
      "Effective Physical BER : 2E-9   <-- bad\nLink Down Counter : 7\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].effective_errors(), 1234u);
  EXPECT_DOUBLE_EQ(r[0].effective_ber_value(), 2e-9);
}

TEST(PfKernelLog, MailWrappedHealthDumpIsJoinedBackToItsRecords) {
  const auto lines = parsePfKernelLog(pf("dmesg-pf_mlx5-health-synd"));
  ASSERT_EQ(lines.size(), 13u);
  const bool synd = std::any_of(lines.begin(), lines.end(), [](const v1::KernelLogLine& l) {
    return l.text().find("print_health_info:385:(pid 0): synd 0x7: irisc not responding") !=
           std::string::npos;
  });
  EXPECT_TRUE(synd);
}

TEST(PfToolOutput, NothingRecognisedIsEmptyNotClean) {
  EXPECT_TRUE(parsePfToolOutput("").empty());
  EXPECT_TRUE(parsePfToolOutput("hello world\nthis is not tool output\n").empty());
  EXPECT_TRUE(parsePfToolOutput(std::string(1 << 20, 'x')).empty());
  const auto mixed = parsePfToolOutput(pf("healthcheck-script_cx7"));
  EXPECT_FALSE(mixed.empty());
  ASSERT_EQ(mixed.flint.size(), 1u);
  EXPECT_EQ(mixed.flint[0].fw_version(), "28.40.1000");
}

TEST(PfJudge, CleanRealCapturesAreCleanWithWhatWasRead) {
  for (const char* name : {"mlxlink-c_cx4", "mlxlink-e_cx4", "mlxlink-m-c_bf3"}) {
    const auto f = judgePf(evidenceFrom(parsePfToolOutput(pf(name))), {}, "h", "t");
    EXPECT_EQ(codes(f), std::vector<std::string>{"PF_CLEAN:info"}) << name;
  }
  // Raw errors corrected by FEC are named, not judged.
  const auto f = judgePf(evidenceFrom(parsePfToolOutput(pf("mlxlink-c_cx4"))), {}, "h", "t");
  bool named = false;
  for (const auto& e : f[0].evidence())
    named = named || e.find("26711,0,0,9108") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(PfJudge, RealPositivesGiveTheirLabels) {
  EXPECT_EQ(codes(judgePf(evidenceFrom(parsePfToolOutput(pf("dmesg-pf_mlx5-health-synd"))), {}, "h",
                          "t")),
            std::vector<std::string>{"PF_FW:critical"});
  EXPECT_EQ(
      codes(judgePf(evidenceFrom(parsePfToolOutput(pf("dmesg-pf_cx4lx-vf-enable"))), {}, "h", "t")),
      std::vector<std::string>{"PF_FW:critical"});
  EXPECT_EQ(codes(judgePf(evidenceFrom(parsePfToolOutput(pf("ethtool-m_sfp-10gbase-sr-finisar"))),
                          {}, "h", "t")),
            std::vector<std::string>{"PF_MODULE:critical"});
  EXPECT_EQ(
      codes(judgePf(evidenceFrom(parsePfToolOutput(pf("iplink-pf_cx5-eth-p4p1"))), {}, "h", "t")),
      std::vector<std::string>{"PF_PORT_DOWN:critical"});
  // The IPoIB netdev left down is no port evidence; the VF's link-state disable is.
  v1::VfMapping vf0;
  vf0.set_vf_index(0);
  const auto ib = evidenceFrom(parsePfToolOutput(pf("iplink-pf_mlx5-ipoib-ib4")));
  EXPECT_EQ(codes(judgePf(ib, {vf0}, "h", "t")), std::vector<std::string>{"PF_PORT_DOWN:critical"});
  v1::VfMapping vf5;
  vf5.set_vf_index(5);
  EXPECT_EQ(codes(judgePf(ib, {vf5}, "h", "t")), std::vector<std::string>{"PF_CLEAN:info"});
}

// Derived (labelled synthetic): the real BlueField-3 capture with its counters changed in
// the test, since no real capture with non-zero effective errors was found.
TEST(PfJudge, DerivedNonZeroCountersGivePhyErrorsAndLinkFlap) {
  std::string text = pf("mlxlink-m-c_bf3");
  auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("Effective Physical Errors          : 0", "Effective Physical Errors          : 1234");
  replace("Link Down Counter                  : 0", "Link Down Counter                  : 7");
  const auto f = judgePf(evidenceFrom(parsePfToolOutput(text)), {}, "h", "t");
  EXPECT_EQ(codes(f), (std::vector<std::string>{"PF_LINK_FLAP:warning", "PF_PHY_ERRORS:warning"}));
  replace("Effective Physical BER             : 15E-255",
          "Effective Physical BER             : 2E-9");
  const auto g = judgePf(evidenceFrom(parsePfToolOutput(text)), {}, "h", "t");
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

TEST(LspciParser, FunctionsReadingAllOnesAreUnreadableWithTheirLine) {
  const auto fns = parseLspci(pf("lspci_cx4lx"));
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
  const auto fns = parseLspci(pf("lspci-vv_cx4lx-mcx4421a"));
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
  const auto fns = parseLspci(pf("lspci-vvv_cx5-vf"));
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
  EXPECT_TRUE(parseLspci(pf("mlxlink-c_cx4")).empty());
  EXPECT_TRUE(parseLspci(pf("dmesg-pf_cx5-mlx5-fatal")).empty());
  std::string huge;
  for (int i = 0; i < 5000; ++i) huge += "0b:00.0 Ethernet controller: x (rev ff)\n";
  EXPECT_EQ(parseLspci(huge).size(), kMaxPfReports);
}

TEST(PfJudge, UnreadableFunctionsAreCriticalAndNamed) {
  const auto ev = parsePfToolOutput(pf("lspci_cx4lx"));
  ASSERT_FALSE(ev.pci_functions.empty());
  EXPECT_NE(std::find(ev.kinds.begin(), ev.kinds.end(), std::string(kKindLspci)), ev.kinds.end());
  const auto findings = judgePf(evidenceFrom(ev), {}, "h", "t");
  ASSERT_EQ(codes(findings), std::vector<std::string>{"PF_PCIE_ERRORS:critical"});
  EXPECT_THAT(findings[0].summary(), HasSubstr("8 PCI function(s)"));
  EXPECT_THAT(findings[0].evidence(0), HasSubstr("0b:01.0 reads all ones"));
}

}  // namespace
}  // namespace ibc::core

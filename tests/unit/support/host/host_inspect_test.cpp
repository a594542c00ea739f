// Host inspection (host_inspect.cpp) in-process on the synthetic host trees of
// make_host_trees.py and the real PF captures: VF spellings, the SR-IOV inventory, VF -> PF
// mapping (GUIDs, MACs, PCI addresses; never an all-zero identity), and the PF side judged.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "capture_labels.h"
#include "fixtures.h"
#include "host_trees.h"
#include "ibc/core/pf/pf_tools.h"
#include "ibc/support/host_inspect.h"
#include "os_doubles.h"

using ::testing::HasSubstr;

namespace ibc::agent {
namespace {

TEST(VfArgument, GuidMacAndPciSpellingsNormalise) {
  EXPECT_EQ(parseVfArgument("0x2244330033110033")->guid, "2244330033110033");
  EXPECT_EQ(parseVfArgument("2244:3300:3311:0033")->guid, "2244330033110033");
  EXPECT_EQ(parseVfArgument("B8-59-9F-C1-EC-12")->mac, "b8:59:9f:c1:ec:12");
  EXPECT_EQ(parseVfArgument("42:00.2")->pci, "0000:42:00.2");
  EXPECT_FALSE(parseVfArgument("42:00.9").ok());
  EXPECT_FALSE(parseVfArgument("").ok());
}

TEST(VfMapping, IpLinkTableMapsByMacButNeverByAnAllZeroMac) {
  SriovInventory inv;
  std::vector<v1::PfNetdevLink> links = core::parsePfIpLink(
      "4: enp1: <BROADCAST,UP,LOWER_UP> mtu 1500 state UP\n"
      "    link/ether ac:1f:6b:cf:32:c8 brd ff:ff:ff:ff:ff:ff\n"
      "    vf 0 MAC 00:00:00:00:00:00, spoof checking off, link-state auto\n"
      "    vf 3 MAC 02:11:22:33:44:55, spoof checking off, link-state auto\n");
  VfQuery zero = *parseVfArgument("00:00:00:00:00:00");
  VfQuery set = *parseVfArgument("02:11:22:33:44:55");
  const auto m = mapVfs({zero, set}, inv, links);
  EXPECT_EQ(m[0].vf_index(), -1);
  EXPECT_EQ(m[1].vf_index(), 3);
  EXPECT_EQ(m[1].pf_device(), "enp1");
  EXPECT_EQ(m[1].matched_by(), "mac (ip link enp1 vf 3)");
}

TEST(VfArgument, WhatIsNoIdentityIsNamed) {
  const auto r = parseVfArgument("not-an-id");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, core::ErrorCode::InvalidArgument);
  EXPECT_THAT(r.error().message, HasSubstr("not-an-id"));
}

TEST(Normalize, EverySpellingOfAnIdentityBecomesOne) {
  EXPECT_EQ(normalizeGuid("24:8a:07:03:00:a1:b2:c3"), "248a070300a1b2c3");
  EXPECT_EQ(normalizeGuid("0x248A070300A1B2C3"), "248a070300a1b2c3");
  EXPECT_EQ(normalizeGuid("248a:0703"), "");
  EXPECT_EQ(normalizeMac("B8:59:9F:C1:EC:12"), "b8:59:9f:c1:ec:12");
  EXPECT_EQ(normalizeMac("b8:59:9f"), "");
  EXPECT_EQ(normalizePci("42:00.2"), "0000:42:00.2");
  EXPECT_EQ(normalizePci("0001:19:00.0"), "0001:19:00.0");
  EXPECT_EQ(normalizePci("eth0"), "");
}

TEST(SriovInventory, ReadsThePfItsVfsAndWhatTheyAreNamed) {
  os::RootedFilesystem fs(ibc::test::hostTree("pf-clean"));
  const auto inv = readSriovInventory(fs);
  ASSERT_EQ(inv.pfs.size(), 1u);
  const auto& pf = inv.pfs[0];
  EXPECT_EQ(pf.pci, "0000:42:00.0");
  EXPECT_EQ(pf.numvfs, 4u);
  EXPECT_EQ(pf.totalvfs, 8u);
  EXPECT_EQ(pf.rdma_devices, std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(pf.netdevs, std::vector<std::string>{"p4p1"});
  ASSERT_EQ(pf.vfs.size(), 4u);
  const auto vf1 =
      std::find_if(pf.vfs.begin(), pf.vfs.end(), [](const SriovVf& v) { return v.index == 1; });
  ASSERT_NE(vf1, pf.vfs.end());
  EXPECT_EQ(vf1->pci, "0000:42:00.3");
}

TEST(SriovInventory, AnAllZeroGuidIsReadAsNone) {
  os::RootedFilesystem fs(ibc::test::hostTree("pf-errors"));
  const auto inv = readSriovInventory(fs);
  ASSERT_EQ(inv.pfs.size(), 1u);
  for (const auto& vf : inv.pfs[0].vfs) {
    if (vf.index == 0) {
      EXPECT_EQ(vf.node_guid, "2244330033110033");
    } else {
      EXPECT_EQ(vf.node_guid, "") << "vf " << vf.index;
    }
  }
}

TEST(VfMapping, ANodeGuidMapsToItsPfAndVfIndexAndSaysHow) {
  os::RootedFilesystem fs(ibc::test::hostTree("pf-errors"));
  const auto m = mapVfs({*parseVfArgument("0x2244330033110033")}, readSriovInventory(fs), {});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].pf_pci(), "0001:19:00.0");
  EXPECT_EQ(m[0].pf_device(), "mlx5_0");
  EXPECT_EQ(m[0].vf_pci(), "0001:19:00.2");
  EXPECT_EQ(m[0].vf_index(), 0);
  EXPECT_EQ(m[0].matched_by(), "node_guid (sriov/0/node)");
}

TEST(VfMapping, AVfOnNoPfSaysWhatItWasComparedWith) {
  os::RootedFilesystem fs(ibc::test::hostTree("vf-absent"));
  const auto m = mapVfs({*parseVfArgument("0000:42:00.7")}, readSriovInventory(fs), {});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].vf_index(), -1);
  EXPECT_EQ(m[0].matched_by(), "");
  EXPECT_FALSE(m[0].compared().empty());
}

// The PF side of `tree` for `vf`, with `pastes` (paths), judged, on no live host.
HostInspectOutcome inspect(const std::string& tree, const std::string& vf,
                           const std::vector<std::string>& pastes = {}) {
  HostInspectOptions o;
  o.root = ibc::test::hostTree(tree);
  o.version = "test";
  o.vfs.push_back(*parseVfArgument(vf));
  os::RootedFilesystem files("");
  for (const auto& p : pastes) o.pastes.push_back({p, *files.readFile(p, 16u << 20)});
  os::RootedFilesystem host(o.root);
  ibc::test::NoCommands runner;
  ibc::test::FixedClock clock;
  ibc::test::MapEnvironment env;
  return inspectHost(o, HostSeams{host, files, runner, clock, env, nullptr, nullptr});
}

std::vector<std::string> codes(const v1::HostInspection& in) {
  std::vector<std::string> out;
  for (const auto& f : in.findings()) out.push_back(f.code() + ":" + f.severity());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(InspectHost, ACleanPfWithACleanMlxlinkIsPfClean) {
  const auto r = inspect("pf-clean", "0000:42:00.3", {ibc::test::pfCapture("mlxlink-m-c_bf3")});
  EXPECT_EQ(codes(r.inspection), std::vector<std::string>{"PF_CLEAN:info"});
  EXPECT_TRUE(r.unrecognised_pastes.empty());
  EXPECT_EQ(r.inspection.host(), "host-pf-clean");
  EXPECT_EQ(r.inspection.root(), ibc::test::hostTree("pf-clean"));
  EXPECT_EQ(r.inspection.ibcollect_version(), "test");
  // FixedClock: the inspection is stamped with the clock's time.
  EXPECT_EQ(r.inspection.inspected_at_unix_ms(), 1'800'000'000'000);
  ASSERT_EQ(r.inspection.vf_map_size(), 1);
  EXPECT_EQ(r.inspection.vf_map(0).matched_by(), "pci (virtfn1)");
}

TEST(InspectHost, ThePastesOfAFaultyPfAreAttributedToItAndJudged) {
  const auto r = inspect(
      "pf-errors", "0x2244330033110033",
      {ibc::test::pfCapture("dmesg-pf_mlx5-health-synd"), ibc::test::pfCapture("ethtool-m_sfp"),
       ibc::test::pfCapture("iplink-pf_cx5-eth-p4p1")});
  EXPECT_EQ(codes(r.inspection), (std::vector<std::string>{"PF_FW:critical", "PF_MODULE:critical",
                                                           "PF_PORT_DOWN:critical"}));
  ASSERT_EQ(r.inspection.pf_size(), 1);
  EXPECT_EQ(r.inspection.pf(0).pf_pci(), "0001:19:00.0");
}

TEST(InspectHost, AVfThatIsNowhereIsPfNotFound) {
  const auto r = inspect("vf-absent", "22:44:33:00:33:11:00:99");
  EXPECT_EQ(codes(r.inspection), std::vector<std::string>{"PF_NOT_FOUND:critical"});
}

TEST(InspectHost, APasteInWhichNothingIsRecognisedIsNamed) {
  const std::string junk = ibc::test::makeTempDir("host-junk") + "/junk.txt";
  os::DiskFileWriter disk;
  ASSERT_TRUE(disk.writeFileAtomic(junk, "hello\nnothing to see\n").ok());
  const auto r = inspect("pf-clean", "0000:42:00.3", {junk});
  EXPECT_EQ(r.unrecognised_pastes, std::vector<std::string>{junk});
}

// A provider's paste on its own (inspectPastes): every real PF capture gives the codes its
// PROVENANCE.md labels, as the PF judge gives them on the capture (pf_capture_diagnosis_test),
// reading nothing of this machine.
TEST(InspectPastes, EveryRealPfCaptureOnItsOwnGivesItsLabelledCodes) {
  const auto labels = ibc::test::captureLabels(ibc::test::readFixture("real/pf/PROVENANCE.md"));
  const auto files = ibc::test::fixtureFiles("real/pf", ".txt");
  ASSERT_FALSE(files.empty());
  ibc::test::FixedClock clock;
  int right = 0;
  for (const auto& path : files) {
    const std::string name = path.substr(path.rfind('/') + 1);
    const auto it = labels.find(name);
    ASSERT_NE(it, labels.end()) << name;
    HostInspectOptions o;
    o.pastes.push_back({name, ibc::test::readFixture("real/pf/" + name)});
    const auto outcome = inspectPastes(o, clock);
    std::set<std::string> got;
    for (const auto& f : outcome.inspection.findings()) got.insert(f.code());
    EXPECT_EQ(got.count("PF_NOT_FOUND"), 0u) << name;
    EXPECT_TRUE(outcome.unrecognised_pastes.empty()) << name;
    EXPECT_EQ(outcome.inspection.vf_map_size(), 0) << name;
    if (got == it->second.expected || !it->second.known_miss.empty()) {
      ++right;
    } else {
      ADD_FAILURE() << name << ": got " << ibc::test::joinedCodes(got) << ", labelled "
                    << ibc::test::joinedCodes(it->second.expected);
    }
  }
  std::cout << "[ pf pastes on their own ] " << right << " of " << files.size() << " right\n";
}

TEST(InspectPastes, APasteNamingSeveralPfsJudgesEachAndAnUnnamedOneIsNamedByItsFile) {
  ibc::test::FixedClock clock;
  HostInspectOptions o;
  o.pastes.push_back({"two.txt",
                      "$ ethtool -m ens1f0\n"
                      "\tIdentifier                                : 0x03 (SFP)\n"
                      "\tLaser rx power low alarm                  : On\n"
                      "$ ethtool -m ens1f1\n"
                      "\tIdentifier                                : 0x03 (SFP)\n"
                      "\tLaser rx power low alarm                  : Off\n"});
  const auto outcome = inspectPastes(o, clock);
  ASSERT_EQ(outcome.inspection.pf_size(), 2) << outcome.inspection.DebugString();
  EXPECT_EQ(outcome.inspection.pf(0).pf_device(), "ens1f0");
  EXPECT_EQ(outcome.inspection.pf(1).pf_device(), "ens1f1");
  std::vector<std::string> module_faults;
  for (const auto& f : outcome.inspection.findings()) {
    if (f.code() == "PF_MODULE") module_faults.push_back(f.device());
  }
  EXPECT_EQ(module_faults, std::vector<std::string>{"ens1f0"});

  HostInspectOptions unnamed;
  unnamed.pastes.push_back({"/tmp/flint.txt",
                            "Image type:            FS3\nFW Version:            "
                            "14.26.0226\nPSID:                  MT_0000000011\n"});
  const auto u = inspectPastes(unnamed, clock);
  ASSERT_EQ(u.inspection.pf_size(), 1);
  EXPECT_EQ(u.inspection.pf(0).pf_device(), "(as pasted in /tmp/flint.txt)");
}

}  // namespace
}  // namespace ibc::agent

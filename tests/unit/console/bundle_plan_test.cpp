// bundle_plan.h: what the escalate page's bundle will carry, held to what core::buildBundle
// writes (names and exact sizes, plain and redacted; the pseudonym map against the redacted
// manifest), what a node checked without its peers loses, and the members table.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "console_fixtures.h"
#include "ibc/console/bundle_plan.h"
#include "ibc/console/job_data.h"
#include "ibc/core/bundle.h"

using ::testing::HasSubstr;

namespace ibc::console {
namespace {

TEST(BundlePlan, EveryMemberCoreWritesIsListedWithTheSizeItWillHave) {
  const SignedJob s = signedVmJob();
  const int slow = nodeLabelled(s.job, "node1720 (gpu02.ibsnap)");
  const int stuck = nodeLabelled(s.job, "node1661");
  const std::vector<int> nodes = {slow, stuck};
  const BundlePlan plan = planBundle(bundlePlanInputs(s.job, nodes, ""), false);
  const core::BundleMembers bundle =
      exportedBundle(s, {std::min(slow, stuck), std::max(slow, stuck)}, false);
  std::set<std::string> planned, written;
  for (const auto& m : plan.members) planned.insert(m.name);
  for (const auto& [name, bytes] : bundle) written.insert(name);
  EXPECT_EQ(planned, written);
  for (const auto& m : plan.members) {
    ASSERT_TRUE(bundle.count(m.name)) << m.name;
    const auto actual = bundle.at(m.name).size();
    if (m.exact) {
      EXPECT_EQ(m.bytes, actual) << m.name;
    } else {
      // Known once signed (exporter, time, signature): close, never a guess off by much.
      EXPECT_NEAR(static_cast<double>(m.bytes), static_cast<double>(actual),
                  actual * (m.name == "manifest.sig" ? 0.5 : 0.25))
          << m.name;
    }
  }
  // The snapshots are exact (their signed bytes) and say what they carry inside.
  int snapshots = 0;
  for (const auto& m : plan.members) {
    if (m.name.rfind("snapshots/", 0) != 0) continue;
    ++snapshots;
    EXPECT_TRUE(m.exact);
    EXPECT_THAT(m.contents, HasSubstr("NCCL log"));
    EXPECT_THAT(m.contents, HasSubstr("kernel log line"));
  }
  EXPECT_EQ(snapshots, 2);
  EXPECT_TRUE(plan.members.back().name == "manifest.sig");
  EXPECT_EQ(plan.job_id, "4242");
  EXPECT_GT(plan.suspects, 0);
  EXPECT_EQ(plan.pf_inspection_md, bundle.at("pf-inspection.md"));
  ASSERT_EQ(plan.carried.size(), 2u);
  EXPECT_EQ(plan.carried[1].rfind("node1661: CRITICAL ", 0), 0u) << plan.carried[1];
  EXPECT_THAT(plan.carried[1], HasSubstr("PORT_NOT_ACTIVE_SM"));

  // The files' sizes come from the files the job was opened from.
  const BundlePlan files = planBundle(bundlePlanInputs(job(), {0}, ""), false);
  ASSERT_FALSE(files.members.empty());
  EXPECT_EQ(files.members[0].bytes, std::filesystem::file_size(jobFiles()[0]));
  EXPECT_EQ(sizeWords(812), "812 bytes");
  EXPECT_EQ(sizeWords(14540), "14.2 KiB");
  EXPECT_EQ(sizeWords(2048, false), "about 2.0 KiB");
}

TEST(BundlePlan, RedactedLeavesTheSnapshotsOutAndItsPseudonymMapMatchesTheBundle) {
  const SignedJob s = signedVmJob();
  const std::vector<int> nodes = {0, 1, 2, 3};
  const BundlePlan plan = planBundle(bundlePlanInputs(s.job, nodes, ""), true);
  const core::BundleMembers bundle = exportedBundle(s, nodes, true);
  for (const auto& m : plan.members) {
    EXPECT_EQ(m.name.rfind("snapshots/", 0), std::string::npos) << m.name;
    ASSERT_TRUE(bundle.count(m.name)) << m.name;
    if (m.exact) EXPECT_EQ(m.bytes, bundle.at(m.name).size()) << m.name;
  }
  std::size_t left_snapshots = 0;
  for (const auto& m : plan.left_out) left_snapshots += m.name.rfind("snapshots/", 0) == 0;
  EXPECT_EQ(left_snapshots, 4u);
  EXPECT_EQ(plan.left_out.back().name, "<bundle>.pseudonyms.tsv");
  // The map turns the bundle's pseudonyms back into the names the unredacted bundle has.
  const auto clear = core::parseManifest(exportedBundle(s, nodes, false).at("manifest.json"));
  const auto redacted = core::parseManifest(bundle.at("manifest.json"));
  ASSERT_TRUE(clear.ok() && redacted.ok());
  std::map<std::string, std::string> back(plan.host_pseudonyms.begin(), plan.host_pseudonyms.end());
  ASSERT_EQ(clear->nodes_size(), redacted->nodes_size());
  for (int i = 0; i < clear->nodes_size(); ++i) {
    const std::string& pseudonym = redacted->nodes(i).node();
    EXPECT_EQ(pseudonym.rfind("node-", 0), 0u) << pseudonym;
    std::string name = clear->nodes(i).node();
    name = name.substr(0, name.find(' '));  // "node1720 (gpu01.ibsnap)": the host part
    ASSERT_TRUE(back.count(pseudonym.substr(0, pseudonym.find(' ')))) << pseudonym;
    EXPECT_EQ(back[pseudonym.substr(0, pseudonym.find(' '))], name);
  }
}

TEST(BundlePlan, ANodeCheckedWithoutItsPeersSaysWhichOfItsFindingsTheBundleWillNotCarry) {
  const SignedJob s = signedVmJob();
  const int slow = nodeLabelled(s.job, "node1720 (gpu02.ibsnap)");
  const BundlePlan alone = planBundle(bundlePlanInputs(s.job, {slow}, ""), false);
  const BundlePlan all = planBundle(bundlePlanInputs(s.job, {0, 1, 2, 3}, ""), false);
  // With every node checked, the bundle carries what the job shows.
  EXPECT_TRUE(all.differences.empty()) << all.differences.front();
  // Alone, what only the peers told (the cross-node findings) is named as not carried.
  std::set<std::string> job_codes;
  for (const int f : findingsOfNode(s.job, slow)) job_codes.insert(s.job.report.findings(f).code());
  std::set<std::string> carried;
  const JobData judged_alone =
      diagnoseSnapshots({wholeSnapshot(s.job, static_cast<std::size_t>(slow))}, {"x"});
  for (const auto& f : judged_alone.report.findings()) carried.insert(f.code());
  // Here: a firmware differing from the peers' can only be told with the peers.
  ASSERT_NE(job_codes, carried);
  ASSERT_EQ(alone.differences.size(), 1u);
  EXPECT_EQ(alone.differences[0], "node1720 (gpu02.ibsnap): not carried FW_VERSION_MISMATCH");
  for (const auto& c : job_codes) {
    if (carried.count(c) == 0) EXPECT_THAT(alone.differences[0], HasSubstr(c));
  }
  EXPECT_TRUE(planBundle(bundlePlanInputs(s.job, {}, ""), false).members.empty());
}

TEST(BundlePlan, TheMembersTableHoldsUnderTheModelTester) {
  const SignedJob s = signedVmJob();
  BundleMembersModel model;
  QAbstractItemModelTester tester(&model, kFatal);
  model.setPlan(planBundle(bundlePlanInputs(s.job, {0, 2}, ""), true));
  ASSERT_GT(model.rowCount(), 6);
  for (int r = 0; r < model.rowCount(); ++r) {
    EXPECT_FALSE(model.index(r, BundleMembersModel::Member).data().toString().isEmpty());
    EXPECT_FALSE(model.index(r, BundleMembersModel::Size).data().toString().isEmpty()) << r;
  }
  const int last = model.rowCount() - 1;
  EXPECT_TRUE(model.index(last, 0).data(BundleMembersModel::LeftOutRole).toBool());
  EXPECT_EQ(model.index(last, BundleMembersModel::Size).data().toString(),
            QStringLiteral("beside the bundle"));
  EXPECT_TRUE(model.index(0, BundleMembersModel::Size)
                  .data(BundleMembersModel::SortRole)
                  .canConvert<qulonglong>());
  model.setPlan({});
  EXPECT_EQ(model.rowCount(), 0);
}

}  // namespace
}  // namespace ibc::console

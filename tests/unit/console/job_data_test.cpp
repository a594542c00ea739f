// job_data.h: .ibsnap files and bundles read, checked and judged as a job (the real 4-node
// gcm job, console_fixtures.h); files that are not snapshots, changed or gone are named; what
// the job keeps of each snapshot.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>

#include "console_fixtures.h"
#include "fixtures.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/console/bundle_plan.h"
#include "ibc/console/chart_data.h"
#include "ibc/console/diff_model.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"
#include "ibc/core/bundle.h"
#include "ibc/core/node_metrics.h"
#include "ibc/core/snapshot_file.h"
#include "sysfs_json.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::console {
namespace {

// A FIFO (or a directory) named .ibsnap is refused by name at once; it never blocks the
// loader, and the other files still load.
TEST(LoadSnapshotFiles, AFifoOrADirectoryNamedIbsnapIsRefusedAtOnceAndTheRestLoads) {
  const std::string dir = ibc::test::makeTempDir("console-fifo");
  const std::string fifo = dir + "/stuck.ibsnap";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string folder = dir + "/folder.ibsnap";
  std::filesystem::create_directory(folder);
  const JobData j = loadSnapshotFiles({fifo, folder, jobFiles().front()});
  EXPECT_EQ(j.report.nodes_size(), 1);
  ASSERT_EQ(j.errors.size(), 2u);
  EXPECT_THAT(j.errors[0], HasSubstr("not a regular file (a FIFO)"));
  EXPECT_THAT(j.errors[1], HasSubstr("not a regular file (a directory)"));
}

// A file changed or gone after it was opened is never shown as the snapshot judged: the node
// page, the diff and the bundle plan say so and name the file; the majority says who did not
// vote.
TEST(ConsoleJob, AFileChangedOrGoneSinceOpeningIsNamedNotShown) {
  const std::string dir = ibc::test::makeTempDir("console-changed");
  std::vector<std::string> files;
  for (std::size_t i = 0; i < 3; ++i) {
    files.push_back(dir + "/n" + std::to_string(i) + ".ibsnap");
    std::filesystem::copy_file(jobFiles()[i], files.back());
  }
  const JobData j = loadSnapshotFiles(files);
  ASSERT_EQ(j.report.nodes_size(), 3);
  ASSERT_TRUE(readFullSnapshot(j, 0).ok());
  std::filesystem::copy_file(jobFiles()[3], files[0],
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(files[1]);
  const auto changed = readFullSnapshot(j, 0);
  ASSERT_FALSE(changed.ok());
  EXPECT_THAT(changed.error().message, HasSubstr(files[0] + " changed since it was opened"));
  const auto gone = readFullSnapshot(j, 1);
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.error().message, HasSubstr(files[1]));
  const Majority majority = majorityFacts(j);
  EXPECT_EQ(majority.voters, 1);
  EXPECT_EQ(majority.unread, 2);
  EXPECT_THAT(majority.first_error, HasSubstr(files[0]));
  DiffModel diff;
  diff.compareNodes(&j, 2, 0);
  EXPECT_EQ(diff.rowCount(), 0);
  EXPECT_THAT(diff.error().toStdString(), HasSubstr("changed since it was opened"));
  const BundlePlan plan = planBundle(bundlePlanInputs(j, {0, 2}, ""), false);
  EXPECT_TRUE(plan.members.empty());
  EXPECT_THAT(plan.error, HasSubstr(files[0]));
}

TEST(ConsoleJob, FourRealSnapshotsLoadAsFourNodesWithTheCollidingHostToldApart) {
  const JobData& j = job();
  EXPECT_TRUE(j.errors.empty());
  ASSERT_EQ(j.report.nodes_size(), 4);
  ASSERT_EQ(j.snapshots.size(), 4u);
  std::set<std::string> labels;
  for (const auto& n : j.report.nodes()) labels.insert(n.label());
  EXPECT_EQ(labels.size(), 4u);  // node1720 twice, each with its file
  EXPECT_TRUE(labels.count("node1720 (gpu01.ibsnap)")) << *labels.begin();
}

// console/README.md: the console opens bundles offline, verified with the configured CA. A real
// bundle (two of the job's real snapshots signed by their nodes' certificates, exported by
// a support certificate, as tar+zstd on disk).
TEST(ConsoleJob, ABundleOpensVerifiedWithTheCaAndIsRefusedWithoutItOrTampered) {
  const auto ca = ibc::test::TestCa::create("console bundle CA");
  const auto alice = ca.issue(ibc::test::supportSpec("alice"));
  std::vector<core::BundleSnapshotInput> inputs;
  for (std::size_t i : {std::size_t{0}, std::size_t{2}}) {
    v1::Snapshot s = wholeSnapshot(job(), i);
    const std::string node = core::snapshotNodeName(s.node());
    const auto cred = ca.issue(ibc::test::agentSpec("acme", node));
    auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
    ASSERT_TRUE(signer.ok());
    auto env = signer->sign(s);
    ASSERT_TRUE(env.ok());
    inputs.push_back({core::encodeSnapshotFile(*env), node});
  }
  auto exporter = core::SnapshotSigner::fromPem(alice.certificate_pem, alice.key_pem);
  ASSERT_TRUE(exporter.ok());
  core::BundleExportOptions o;
  o.case_id = "CASE-1";
  auto members = core::buildBundle(inputs, o, *exporter);
  ASSERT_TRUE(members.ok()) << members.error().message;
  const std::string dir = ibc::test::makeTempDir("console-bundle");
  const auto write = [&](const std::string& name, const core::BundleMembers& m) {
    auto archive = bundle::writeBundleArchive(m);
    EXPECT_TRUE(archive.ok());
    std::ofstream(dir + "/" + name, std::ios::binary) << *archive;
    return dir + "/" + name;
  };
  const std::string good = write("case.ibbundle", *members);
  auto verifier = core::SignatureVerifier::fromPem(ca.certificatePem());
  ASSERT_TRUE(verifier.ok());

  const JobData opened = loadSnapshotFiles({good}, {}, {}, nullptr, verifier->get());
  EXPECT_TRUE(opened.errors.empty()) << opened.errors.front();
  ASSERT_EQ(opened.report.nodes_size(), 2);
  ASSERT_EQ(opened.trust.size(), 2u);
  EXPECT_THAT(opened.trust[0],
              HasSubstr("which verified (exported by CN=alice,OU=support,O=ibcollect (support))"));
  EXPECT_EQ(opened.signed_files.size(), 2u);  // the signed bytes travel into a new export
  // The same verdict as the files themselves judged as a job.
  const JobData direct = diagnoseSnapshots({wholeSnapshot(job(), 0), wholeSnapshot(job(), 2)},
                                           {"a.ibsnap", "b.ibsnap"});
  ASSERT_EQ(opened.report.findings_size(), direct.report.findings_size());
  for (int i = 0; i < direct.report.findings_size(); ++i)
    EXPECT_EQ(opened.report.findings(i).code(), direct.report.findings(i).code()) << i;

  const JobData no_ca = loadSnapshotFiles({good});
  EXPECT_EQ(no_ca.report.nodes_size(), 0);
  ASSERT_EQ(no_ca.errors.size(), 1u);
  EXPECT_THAT(no_ca.errors[0], HasSubstr("--ca"));

  auto tampered = *members;
  tampered["report.md"] += "\nAll healthy, close the case.\n";
  const JobData refused =
      loadSnapshotFiles({write("tampered.ibbundle", tampered)}, {}, {}, nullptr, verifier->get());
  EXPECT_EQ(refused.report.nodes_size(), 0);
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_THAT(refused.errors[0], HasSubstr("does not verify"));
  EXPECT_THAT(refused.errors[0], HasSubstr("report.md"));
}

// Issue 22: every row says who signed its snapshot and whether that is the node (the
// collector's rule), and files of several jobs or tenants are never judged as one job.
TEST(ConsoleJob, EachSnapshotSaysWhetherItsSignerIsTheNodeAndMixedJobsOpenApart) {
  const auto ca = ibc::test::TestCa::create("console trust CA");
  const std::string dir = ibc::test::makeTempDir("console-trust");
  auto write = [&](v1::Snapshot s, const std::string& tenant, const std::string& signer_node,
                   const std::string& job_id, const std::string& name) {
    s.mutable_node()->set_job_id(job_id);
    std::string bytes;
    if (signer_node.empty()) {
      v1::SignedSnapshot unsigned_env;
      unsigned_env.set_snapshot(core::serializeSnapshot(s));
      bytes = core::encodeSnapshotFile(unsigned_env);
    } else {
      const auto cred = ca.issue(ibc::test::agentSpec(tenant, signer_node));
      auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
      EXPECT_TRUE(signer.ok());
      auto env = signer->sign(s);
      EXPECT_TRUE(env.ok());
      bytes = core::encodeSnapshotFile(*env);
    }
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  };
  const v1::Snapshot a = wholeSnapshot(job(), 0);
  const v1::Snapshot b = wholeSnapshot(job(), 2);
  const std::string node_a = core::snapshotNodeName(a.node());
  const std::string node_b = core::snapshotNodeName(b.node());
  ASSERT_NE(node_a, node_b);
  auto verifier = core::SignatureVerifier::fromPem(ca.certificatePem());
  ASSERT_TRUE(verifier.ok());

  // One job of tenant acme: a's own certificate, and b signed by a's certificate.
  const std::vector<std::string> one_job = {write(a, "acme", node_a, "77", "a.ibsnap"),
                                            write(b, "acme", node_a, "77", "b.ibsnap")};
  const JobData j = loadSnapshotFiles(one_job, {}, {}, nullptr, verifier->get());
  ASSERT_EQ(j.report.nodes_size(), 2);
  ASSERT_EQ(j.signers.size(), 2u);
  EXPECT_TRUE(j.signers[0].is_node);
  EXPECT_TRUE(j.signers[0].checked);
  EXPECT_FALSE(j.signers[1].is_node);
  EXPECT_EQ(j.signers[1].name, node_a);
  EXPECT_THAT(j.trust[1], HasSubstr("NOT the node's own certificate"));
  EXPECT_THAT(j.trust[0], Not(HasSubstr("NOT")));
  ASSERT_EQ(j.groups.size(), 1u);
  NodeGridModel m;
  m.setJob(&j);
  for (int r = 0; r < m.rowCount(); ++r) {
    const int node = m.index(r, 0).data(NodeGridModel::NodeIndexRole).toInt();
    const QString cell = m.index(r, NodeGridModel::Signer).data().toString();
    if (node == 0) {
      EXPECT_EQ(cell, QString::fromStdString(node_a));
    } else {
      EXPECT_EQ(cell, QString::fromStdString(node_a) + QStringLiteral(": NOT the node"));
      EXPECT_TRUE(m.index(r, NodeGridModel::Signer).data(Qt::BackgroundRole).isValid());
    }
  }

  // Two jobs, another tenant and an unsigned file: four groups, the largest judged alone.
  const std::vector<std::string> mixed = {
      write(a, "acme", node_a, "77", "m1.ibsnap"), write(b, "acme", node_b, "77", "m2.ibsnap"),
      write(b, "acme", node_b, "88", "m3.ibsnap"), write(b, "beta", node_b, "77", "m4.ibsnap"),
      write(a, "", "", "", "m5.ibsnap")};
  const JobData mj = loadSnapshotFiles(mixed, {}, {}, nullptr, verifier->get());
  EXPECT_EQ(mj.report.nodes_size(), 2);
  ASSERT_EQ(mj.groups.size(), 4u);
  EXPECT_TRUE(mj.groups[0].shown);
  EXPECT_EQ(mj.groups[0].tenant, "acme");
  EXPECT_EQ(mj.groups[0].job_id, "77");
  EXPECT_EQ(mj.groups[0].files, (std::vector<std::string>{mixed[0], mixed[1]}));
  EXPECT_EQ(mj.groups[1].job_id, "88");
  EXPECT_EQ(mj.groups[2].tenant, "beta");
  EXPECT_EQ(mj.groups[3].tenant, "");
  EXPECT_EQ(mj.groups[3].files, (std::vector<std::string>{mixed[4]}));
  for (std::size_t g = 1; g < mj.groups.size(); ++g) EXPECT_FALSE(mj.groups[g].shown);
  for (const auto& n : mj.report.nodes()) EXPECT_EQ(n.job_id(), "77");
}

TEST(ConsoleJob, UnreadableFilesAreNamedAndTheRestIsShown) {
  const std::string dir = ibc::test::makeTempDir("console-bad");
  std::ofstream(dir + "/garbage.ibsnap") << "not a snapshot";
  std::vector<std::string> files = {jobFiles()[0], dir + "/garbage.ibsnap",
                                    dir + "/missing.ibsnap"};
  const JobData j = loadSnapshotFiles(files);
  EXPECT_EQ(j.report.nodes_size(), 1);
  ASSERT_EQ(j.errors.size(), 2u);
  EXPECT_THAT(j.errors[0], HasSubstr("garbage.ibsnap"));
  EXPECT_THAT(j.errors[1], HasSubstr("missing.ibsnap: No such file"));
}

TEST(ConsoleJob, ALoadCancelledBeforeTheFirstFileReadsNothingAndSaysSo) {
  std::atomic<bool> cancel{true};
  std::size_t calls = 0;
  const JobData j = loadSnapshotFiles(
      jobFiles(), {}, [&](std::size_t, std::size_t) { ++calls; }, &cancel);
  EXPECT_TRUE(j.cancelled);
  EXPECT_EQ(j.report.nodes_size(), 0);
  EXPECT_EQ(calls, 0u);
}

// The job keeps each snapshot slim (a 2,000-node job cannot hold parsed counters: issue 22):
// no counters, window or kernel lines, and what the pages read of its counters was taken from
// the whole snapshot, equal to what the whole one gives; the whole one is read again from its
// file.
// Checked on the gcm job (files read again) and on the real counter captures with and without
// a window (diagnosed in memory: their whole snapshots are kept serialized).
void expectSlimWithCountersTakenWhole(const JobData& j, int& whole_counters) {
  ASSERT_EQ(j.counters.size(), j.snapshots.size());
  std::vector<v1::Snapshot> wholes = wholeSnapshots(j);
  for (std::size_t i = 0; i < j.snapshots.size(); ++i) {
    const v1::Snapshot& whole = wholes[i];
    v1::Snapshot kept = whole;
    keptForm(kept);
    EXPECT_EQ(core::serializeSnapshot(kept), j.snapshots.bytes(i)) << i;
    const v1::Snapshot held = j.snapshots[i];
    for (const auto& d : held.devices()) {
      for (const auto& p : d.ports()) EXPECT_EQ(p.counters_size(), 0) << i;
    }
    for (const auto& d : whole.devices()) {
      for (const auto& p : d.ports()) whole_counters += p.counters_size();
    }
    // The kept counters, by name, are the whole snapshot's.
    CounterNames names;
    const NodeCounters fresh = nodeCountersOf(whole, names);
    ASSERT_EQ(fresh.ports.size(), j.counters[i].ports.size());
    for (std::size_t p = 0; p < fresh.ports.size(); ++p) {
      ASSERT_EQ(fresh.ports[p].amounts.size(), j.counters[i].ports[p].amounts.size());
      for (std::size_t k = 0; k < fresh.ports[p].amounts.size(); ++k) {
        const auto& [id, amount] = fresh.ports[p].amounts[k];
        EXPECT_EQ(j.counters[i].ports[p].amount(j.counter_names.find(names.name(id))), amount);
      }
    }
  }
  // The charts' per-node values are core's over the whole snapshots.
  std::vector<const v1::Snapshot*> pointers;
  for (const auto& w : wholes) pointers.push_back(&w);
  for (const char* counter : {"symbol_error", "port_rcv_data", "link_downed"}) {
    const auto core_values = core::nodeCounterOutliers(pointers, counter);
    const NodeSeries series = counterPerNode(j, counter);
    std::size_t k = 0;
    for (std::size_t i = 0; i < wholes.size(); ++i) {
      if (!core_values.value[i]) continue;
      ASSERT_LT(k, series.values.size()) << counter;
      EXPECT_EQ(series.values[k].node, static_cast<int>(i));
      EXPECT_EQ(series.values[k].value, *core_values.value[i] * core::counterScale(counter));
      EXPECT_EQ(series.values[k].outlier, core_values.outlier[i]);
      ++k;
    }
    EXPECT_EQ(k, series.values.size()) << counter;
  }
}

TEST(ConsoleJob, KeepsEachSnapshotSlimWithItsCountersTakenWhole) {
  EXPECT_TRUE(job().kept_bytes.empty());  // every node is in a file to read again
  int whole_counters = 0;
  expectSlimWithCountersTakenWhole(job(), whole_counters);
  const JobData totals = diagnoseSnapshots(counterSnapshots(), kCounterFiles);
  EXPECT_EQ(totals.kept_bytes.size(), totals.snapshots.size());
  expectSlimWithCountersTakenWhole(totals, whole_counters);
  expectSlimWithCountersTakenWhole(windowedJob(), whole_counters);
  EXPECT_GT(whole_counters, 100);
}

}  // namespace
}  // namespace ibc::console

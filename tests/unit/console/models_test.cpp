// The console's models on a real 4-node job: the four facebookresearch/gcm captures of
// 8x HDR nodes (tests/fixtures/real/sysfs, PROVENANCE.md): a healthy node, one whose 8 ports
// trained at 100 Gb/s, one whose ib4 is down after 98 carrier changes, one with two ports
// stuck in INIT. Two of them are the same host (node1720), as real fetches give. Every model
// is checked with QAbstractItemModelTester (Fatal), and every verdict against core's report.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <QAbstractItemModelTester>
#include <QGuiApplication>
#include <QSignalSpy>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "agent_doubles.h"
#include "fixtures.h"
#include "ibc/agent/analyze.h"
#include "ibc/agent/os.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/console/bundle_plan.h"
#include "ibc/console/chart_data.h"
#include "ibc/console/check_list_model.h"
#include "ibc/console/counters_model.h"
#include "ibc/console/diff_model.h"
#include "ibc/console/escalation.h"
#include "ibc/console/findings_model.h"
#include "ibc/console/grid_filter.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"
#include "ibc/console/port_counters.h"
#include "ibc/core/bundle.h"
#include "ibc/core/nccl_tests.h"
#include "ibc/core/node_metrics.h"
#include "ibc/core/snapshot_file.h"
#include "sysfs_json.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::console {
namespace {

namespace v1 = ::ibcollect::v1;

// Collects a real capture tree the way `ibcollect snapshot --root` does.
v1::Snapshot collectTree(const std::string& root) {
  agent::RootedFilesystem files("");
  ibc::test::NoCommands runner;
  agent::SystemClock clock;
  ibc::test::MapEnvironment env;
  agent::HostSeams seams{files, files, runner, clock, env, nullptr, nullptr};
  agent::AnalyzeInputs in;
  in.root = root;
  auto out = agent::analyzeInputs(
      in, {}, seams,
      [](const std::string& r) { return std::make_unique<agent::RootedFilesystem>(r); }, "test");
  EXPECT_EQ(out.nodes.size(), 1u);
  return out.nodes.empty() ? v1::Snapshot{} : out.nodes.front().snapshot;
}

const char* const kJob[] = {
    "good_8xhdr200-all-active",
    "ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000",
    "ib_intf_operstate_down_ib4-ipoib-down-carrier-changes-98",
    "stuck_ib_intf_two-ports-state-INIT-ipoib-down",
};

// The job as .ibsnap files, written once per test program.
const std::vector<std::string>& jobFiles() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> out;
    const std::string dir = ibc::test::makeTempDir("console-job");
    int i = 1;
    for (const char* name : kJob) {
      const std::string tree = dir + "/gpu0" + std::to_string(i);
      ibc::test::materializeSysfsJson(
          ibc::test::readFixture(std::string("real/sysfs/sysfs-json_gcm-learn_") + name + ".json"),
          tree);
      const std::string file = tree + ".ibsnap";
      std::ofstream(file, std::ios::binary)
          << core::encodeSnapshotFile(core::wrapUnsigned(collectTree(tree)));
      out.push_back(file);
      ++i;
    }
    return out;
  }();
  return files;
}

const JobData& job() {
  static const JobData data = loadSnapshotFiles(jobFiles());
  return data;
}

// Node `i` of `j` whole, read again from its file (the job keeps its snapshots slim).
v1::Snapshot wholeSnapshot(const JobData& j, std::size_t i) {
  auto whole = readFullSnapshot(j, static_cast<int>(i));
  EXPECT_TRUE(whole.ok()) << (whole.ok() ? "" : whole.error().message);
  return whole.ok() ? std::move(*whole) : v1::Snapshot{};
}

std::vector<v1::Snapshot> wholeSnapshots(const JobData& j) {
  std::vector<v1::Snapshot> out;
  for (std::size_t i = 0; i < j.snapshots.size(); ++i) out.push_back(wholeSnapshot(j, i));
  return out;
}

int rowOfPort(const NodeGridModel& m, const QString& node, const QString& device) {
  for (int r = 0; r < m.rowCount(); ++r) {
    if (m.index(r, NodeGridModel::Node).data().toString() == node &&
        m.index(r, NodeGridModel::Device).data().toString() == device)
      return r;
  }
  return -1;
}

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

TEST(NodeGridModel, OneRowPerPortAndVerdictsAreCoresReport) {
  NodeGridModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setJob(&job());
  ASSERT_EQ(m.rowCount(), 32);
  // A node's worst row verdict is its report verdict: the console and the CLI agree.
  for (int n = 0; n < job().report.nodes_size(); ++n) {
    int worst = 0;
    for (int r = 0; r < m.rowCount(); ++r) {
      const QModelIndex i = m.index(r, NodeGridModel::Verdict);
      if (i.data(NodeGridModel::NodeIndexRole).toInt() == n)
        worst = std::max(worst, i.data(NodeGridModel::SeverityRole).toInt());
    }
    EXPECT_EQ(worst, severityRank(job().report.nodes(n).worst_severity()))
        << job().report.nodes(n).label();
  }
  const int init = rowOfPort(m, "node1661", "mlx5_6");
  ASSERT_GE(init, 0);
  EXPECT_EQ(m.index(init, NodeGridModel::State).data().toString(), "INIT");
  EXPECT_EQ(m.index(init, NodeGridModel::Verdict).data().toString(), "CRITICAL");
  EXPECT_EQ(m.index(init, NodeGridModel::WorstFinding).data().toString(), "PORT_NOT_ACTIVE_SM");
}

TEST(NodeGridModel, CellsThatDifferFromTheJobsMajorityAreOutliers) {
  NodeGridModel m;
  m.setJob(&job());
  EXPECT_EQ(m.majority(NodeGridModel::State), "ACTIVE");
  EXPECT_EQ(m.majority(NodeGridModel::Rate), "200 Gb/s (4X HDR)");
  const int init = rowOfPort(m, "node1661", "mlx5_6");
  EXPECT_TRUE(m.index(init, NodeGridModel::State).data(NodeGridModel::OutlierRole).toBool());
  EXPECT_FALSE(m.index(init, NodeGridModel::Rate).data(NodeGridModel::OutlierRole).toBool());
  const int slow = rowOfPort(m, "node1720 (gpu02.ibsnap)", "mlx5_0");
  EXPECT_TRUE(m.index(slow, NodeGridModel::Rate).data(NodeGridModel::OutlierRole).toBool());
  const int healthy = rowOfPort(m, "node1720 (gpu01.ibsnap)", "mlx5_0");
  for (int c = 0; c < NodeGridModel::ColumnCount; ++c)
    EXPECT_FALSE(m.index(healthy, c).data(NodeGridModel::OutlierRole).toBool()) << c;
  EXPECT_EQ(m.outlierRows(), 10);  // 2 INIT ports + 8 slow ports
}

TEST(NodeGridModel, WidestRowsHoldTheLongestPlainAndBoldTextAndSetJobHandsBackTheOldRows) {
  NodeGridModel m;
  m.setJob(&job());
  for (int c = 0; c < NodeGridModel::ColumnCount; ++c) {
    int longest[2] = {-1, -1};  // plain, outlier (bold)
    for (int r = 0; r < m.rowCount(); ++r) {
      const int font = m.index(r, c).data(NodeGridModel::OutlierRole).toBool() ? 1 : 0;
      longest[font] =
          std::max(longest[font], static_cast<int>(m.index(r, c).data().toString().size()));
    }
    const auto widest = m.widestRows(c);
    for (int font = 0; font < 2; ++font) {
      if (longest[font] < 0) {
        EXPECT_EQ(widest[font], -1) << c;
        continue;
      }
      ASSERT_GE(widest[font], 0) << c;
      EXPECT_EQ(m.index(widest[font], c).data().toString().size(), longest[font]) << c;
    }
  }
  // The two hosts that share a name are told apart by their files: the longest names.
  EXPECT_TRUE(m.index(m.widestRows(NodeGridModel::Node)[0], NodeGridModel::Node)
                  .data()
                  .toString()
                  .startsWith(QStringLiteral("node1720 (gpu0")));
  // The rows it replaced come back (for the window to free off the GUI thread).
  const NodeGridModel::Prepared old = m.setJob(nullptr, {});
  EXPECT_EQ(old.rows.size(), 32u);
  EXPECT_EQ(m.rowCount(), 0);
  EXPECT_EQ(m.widestRows(NodeGridModel::Node)[0], -1);
}

// The grid of the real job behind its filter, the filter watched by QAbstractItemModelTester.
struct GridFilterOnJob : ::testing::Test {
  NodeGridModel m;
  GridFilter f;
  QAbstractItemModelTester tester{&f, QAbstractItemModelTester::FailureReportingMode::Fatal};
  GridFilterOnJob() {
    m.setJob(&job());
    f.setGridModel(&m);
  }
};

TEST_F(GridFilterOnJob, TermsNarrowTheRowsAndATypoShowsNothingWithAReason) {
  EXPECT_EQ(f.rowCount(), 32);
  f.setFilterText("severity>=critical");
  EXPECT_EQ(f.rowCount(), 2);
  f.setFilterText("code=LINK_RATE_BELOW_EXPECTED");
  EXPECT_EQ(f.rowCount(), 8);
  f.setFilterText("node21*");
  EXPECT_EQ(f.rowCount(), 8);
  f.setFilterText("NODE1720* severity>=warning");
  EXPECT_EQ(f.rowCount(), 8);  // the slow copy only
  f.setFilterText("rate<<3");
  EXPECT_EQ(f.rowCount(), 0);
  EXPECT_FALSE(f.filterError().isEmpty());
  f.setFilterText("");
  EXPECT_EQ(f.rowCount(), 32);
}

TEST_F(GridFilterOnJob, AnyColumnByItsKeyWithComparisonsAndTheContextMenusClauseRoundTrips) {
  auto shownColumn = [this](int column) {
    QStringList out;
    for (int r = 0; r < f.rowCount(); ++r) out << f.index(r, column).data().toString();
    return out;
  };
  // The slow copy's eight ports are below 200 Gb/s; numbers compare as numbers.
  f.setFilterText("rate<200");
  EXPECT_TRUE(f.filterError().isEmpty()) << f.filterError().toStdString();
  EXPECT_EQ(f.rowCount(), 8);
  f.setFilterText("rate>=200");
  EXPECT_EQ(f.rowCount(), 24);
  // Words: the stuck node's INIT ports are the ones not ACTIVE.
  f.setFilterText("state!=ACTIVE");
  ASSERT_GE(f.rowCount(), 2);
  for (const QString& state : shownColumn(NodeGridModel::State))
    EXPECT_FALSE(state.contains(QStringLiteral("ACTIVE"))) << state.toStdString();
  const int not_active = f.rowCount();
  f.setFilterText("state=active");  // case-insensitive, one word of the cell
  EXPECT_EQ(f.rowCount(), 32 - not_active);
  // What the context menu adds keeps exactly the rows with that value, or hides them.
  const QString clause = GridFilter::clauseFor(NodeGridModel::State, QStringLiteral("INIT"));
  EXPECT_EQ(clause, QStringLiteral("state=INIT"));
  f.setFilterText(clause);
  EXPECT_EQ(f.rowCount(), not_active);
  EXPECT_EQ(GridFilter::clauseFor(NodeGridModel::Rate, QStringLiteral("100 Gb/sec (4X EDR)")),
            QStringLiteral("rate=100"));
  EXPECT_EQ(GridFilter::clauseFor(NodeGridModel::WorstFinding, QStringLiteral("LINK RATE"), true),
            QStringLiteral("worst!=\"LINK RATE\""));
  // Terms combine; a counter goes by its own name.
  f.setFilterText("rate<200");
  const QString slow = shownColumn(NodeGridModel::Node).value(0);
  f.setFilterText(QStringLiteral("rate<200 node=\"%1\"").arg(slow));
  EXPECT_EQ(f.rowCount(), 8) << slow.toStdString();
  int with_counter = 0;
  for (int r = 0; r < m.rowCount(); ++r)
    with_counter += m.index(r, NodeGridModel::SymbolErrors).data().toString().isEmpty() ? 0 : 1;
  f.setFilterText("symbol_error>=0");
  EXPECT_EQ(f.rowCount(), with_counter);
  // What cannot be read shows nothing and says why.
  f.setFilterText("state<ACTIVE");
  EXPECT_EQ(f.rowCount(), 0);
  EXPECT_TRUE(f.filterError().contains(QStringLiteral("numbers only")))
      << f.filterError().toStdString();
  f.setFilterText("rate>fast");
  EXPECT_EQ(f.rowCount(), 0);
  EXPECT_FALSE(f.filterError().isEmpty());
  f.setFilterText("colour=red");
  EXPECT_EQ(f.rowCount(), 0);
  EXPECT_TRUE(f.filterError().contains(QStringLiteral("no column")));
}

TEST_F(GridFilterOnJob, SortingByRateIsNumericAndByNodeIsNatural) {
  f.sort(NodeGridModel::Rate, Qt::AscendingOrder);
  EXPECT_EQ(f.index(0, NodeGridModel::Rate).data().toString(), "100 Gb/s (4X EDR)");
  f.sort(NodeGridModel::Verdict, Qt::DescendingOrder);
  EXPECT_EQ(f.index(0, NodeGridModel::Verdict).data().toString(), "CRITICAL");
}

// The job's snapshots, each with a real all_reduce_perf output attached (busbw to compare).
std::vector<v1::Snapshot> withNcclTests(std::vector<v1::Snapshot> snaps) {
  const char* const outputs[] = {
      "real/nccl-tests/"
      "nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-ztan-fork.txt",
      "real/nccl-tests/"
      "nccl-tests_all_reduce_perf_1node-8xa100-validation-off-legacy-format_superbenchmark-tests-"
      "data.txt",
      "real/nccl-tests/nccl-tests_all_reduce_perf_rccl-tail-asterisk-footer_rccl-pr-2078.txt",
      "real/nccl-tests/"
      "nccl-tests_all_reduce_perf_ring-large-sizes-busbw95_nccl-tests-issue-252.txt",
  };
  for (std::size_t i = 0; i < snaps.size() && i < 4; ++i) {
    auto* t = snaps[i].add_nccl_tests();
    *t->mutable_parsed() = core::parseNcclTests(ibc::test::readFixture(outputs[i]));
  }
  return snaps;
}

// Real captures that hold port counters (the gcm job's captures hold none): mlx4 QDR with
// two ports, mlx4 with counters_ext, mlx5 with hw_counters errors, hfi1 Omni-Path.
const std::vector<std::string> kCounterFiles = {"mlx4-qdr.ibsnap", "mlx4-ext.ibsnap", "mlx5.ibsnap",
                                                "hfi1.ibsnap"};
const std::vector<v1::Snapshot>& counterSnapshots() {
  static const std::vector<v1::Snapshot> snaps = [] {
    std::vector<v1::Snapshot> out;
    for (const char* tree :
         {"real/sysfs/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures",
          "real/sysfs/sysfs_node-exporter-fixture_mlx4_0_counters-ext.tree",
          "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures",
          "real/sysfs/sysfs_procfs-fixture_hfi1_0_omnipath.tree/fixtures"})
      out.push_back(collectTree(ibc::test::fixturePath(tree)));
    return out;
  }();
  return snaps;
}

// The counter captures as if taken with --window 10 (synthetic second samples, in memory):
// every counter read again unchanged, except on the mlx4 QDR capture's port 1 where
// symbol_error grew by 50 and port_xmit_wait went backwards (a reset: no delta).
JobData windowedJob() {
  std::vector<v1::Snapshot> snaps = counterSnapshots();
  for (std::size_t i = 0; i < snaps.size(); ++i) {
    auto* w = snaps[i].add_window();
    w->set_interval_seconds(10);
    for (const auto& d : snaps[i].devices()) {
      for (const auto& p : d.ports()) {
        auto* s = w->add_ports();
        s->set_device(d.name());
        s->set_port(p.port());
        *s->mutable_counters() = p.counters();
        *s->mutable_counters_ext() = p.counters_ext();
        *s->mutable_hw_counters() = p.hw_counters();
        if (i != 0 || p.port() != 1) continue;
        for (auto& c : *s->mutable_counters()) {
          if (c.name() == "symbol_error") c.set_value(c.value() + 50);
          if (c.name() == "port_xmit_wait") c.set_value(0);
        }
      }
    }
  }
  return diagnoseSnapshots(snaps, kCounterFiles);
}

int rowOfNodePort(const NodeGridModel& m, int node, int port) {
  for (int r = 0; r < m.rowCount(); ++r) {
    if (m.index(r, 0).data(NodeGridModel::NodeIndexRole).toInt() == node &&
        m.index(r, NodeGridModel::Port).data().toInt() == port)
      return r;
  }
  return -1;
}

TEST(NodeGridModel, KeyCounterColumnsAreTheTotalsCoreReadAndMtuIsTheNetdevs) {
  const JobData j = diagnoseSnapshots(counterSnapshots(), kCounterFiles);
  NodeGridModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setJob(&j);
  EXPECT_FALSE(m.hasWindow());
  EXPECT_EQ(m.headerData(NodeGridModel::SymbolErrors, Qt::Horizontal).toString(), "Symbol err");
  int checked = 0;
  for (int r = 0; r < m.rowCount(); ++r) {
    const int n = m.index(r, 0).data(NodeGridModel::NodeIndexRole).toInt();
    const QString device = m.index(r, NodeGridModel::Device).data().toString();
    const int port = m.index(r, NodeGridModel::Port).data().toInt();
    // The same numbers through the node page's walk (port_counters.cpp), not the grid's.
    for (const int column :
         {NodeGridModel::SymbolErrors, NodeGridModel::LinkDowned, NodeGridModel::RcvErrors,
          NodeGridModel::XmitDiscards, NodeGridModel::XmitWait}) {
      std::optional<uint64_t> total;
      bool seen = false;
      for (const auto& c :
           portCounters(wholeSnapshot(j, std::size_t(n)), device.toStdString(), uint32_t(port))) {
        if (c.name != NodeGridModel::counterOfColumn(column) || seen) continue;
        seen = true;
        total = c.total;
      }
      const QModelIndex cell = m.index(r, column);
      if (!total) {
        EXPECT_TRUE(cell.data().toString().isEmpty()) << r << " " << column;
        EXPECT_FALSE(cell.data(NodeGridModel::SortRole).isValid());
        continue;
      }
      EXPECT_EQ(cell.data(NodeGridModel::SortRole).toDouble(), double(*total));
      EXPECT_EQ(cell.data().toString(), QString::number(*total));
      ++checked;
    }
  }
  EXPECT_GE(checked, 15);  // mlx4 QDR's two ports, mlx4 ext and hfi1 carry all five
  // MTU: the IPoIB netdev bound to the port, on the gcm job (its captures have netdevs).
  m.setJob(&job());
  int mtus = 0;
  for (int r = 0; r < m.rowCount(); ++r) {
    const int n = m.index(r, 0).data(NodeGridModel::NodeIndexRole).toInt();
    const QString device = m.index(r, NodeGridModel::Device).data().toString();
    const v1::Snapshot kept = job().snapshots[std::size_t(n)];
    for (const auto& nd : kept.netdevs()) {
      if (QString::fromStdString(nd.rdma_device()) != device || !nd.has_mtu()) continue;
      EXPECT_EQ(m.index(r, NodeGridModel::Mtu).data().toString(), QString::number(nd.mtu()));
      ++mtus;
      break;
    }
  }
  EXPECT_EQ(mtus, 32);
}

TEST(NodeGridModel, WithAWindowCounterColumnsAreRatesAndTheGrowingPortIsTheOutlier) {
  const JobData j = windowedJob();
  NodeGridModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setJob(&j);
  EXPECT_TRUE(m.hasWindow());
  EXPECT_EQ(m.headerData(NodeGridModel::SymbolErrors, Qt::Horizontal).toString(), "Symbol err/s");
  const int grew = rowOfNodePort(m, 0, 1);
  ASSERT_GE(grew, 0);
  const QModelIndex cell = m.index(grew, NodeGridModel::SymbolErrors);
  EXPECT_EQ(cell.data().toString(), "5/s");
  EXPECT_DOUBLE_EQ(cell.data(NodeGridModel::SortRole).toDouble(), 5.0);
  EXPECT_TRUE(cell.data(NodeGridModel::OutlierRole).toBool());
  EXPECT_EQ(m.counter(grew, "symbol_error"), 50.0);  // the delta, for filters and top-X
  int outliers = 0;
  int rates = 0;
  for (int r = 0; r < m.rowCount(); ++r) {
    outliers += m.index(r, NodeGridModel::SymbolErrors).data(NodeGridModel::OutlierRole).toBool();
    const QString text = m.index(r, NodeGridModel::SymbolErrors).data().toString();
    if (r != grew && !text.isEmpty()) {
      EXPECT_EQ(text, "0/s");
      ++rates;
    }
  }
  EXPECT_EQ(outliers, 1);
  EXPECT_GE(rates, 2);
  // A counter that went backwards has no rate (nor a total posing as one).
  EXPECT_TRUE(m.index(grew, NodeGridModel::XmitWait).data().toString().isEmpty());
  EXPECT_FALSE(m.counter(grew, "port_xmit_wait"));
}

TEST(NodeGridModel, BusbwIsTheNodesPeakAndTheSlowNodesRowsAreOutliers) {
  const JobData j = diagnoseSnapshots(withNcclTests(wholeSnapshots(job())), jobFiles());
  NodeGridModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setJob(&j);
  const int fast = rowOfPort(m, "node1720 (gpu01.ibsnap)", "mlx5_0");
  const int slow = rowOfPort(m, "node1661", "mlx5_0");
  EXPECT_EQ(m.index(fast, NodeGridModel::Busbw).data().toString(), "338.8");
  EXPECT_EQ(m.index(slow, NodeGridModel::Busbw).data().toString(), "97.5");
  EXPECT_TRUE(m.index(slow, NodeGridModel::Busbw).data(NodeGridModel::OutlierRole).toBool());
  EXPECT_FALSE(m.index(fast, NodeGridModel::Busbw).data(NodeGridModel::OutlierRole).toBool());
  EXPECT_EQ(m.outlierRows(), 16);  // 8 slow-rate ports + node1661's 8 ports (2 INIT)
}

TEST(GridFilter, SortsEveryColumnByItsNumberEmptyCellsLastAndFiltersAndTopXByCounter) {
  const JobData j = windowedJob();
  NodeGridModel m;
  m.setJob(&j);
  GridFilter f;
  QAbstractItemModelTester tester(&f, QAbstractItemModelTester::FailureReportingMode::Fatal);
  f.setGridModel(&m);
  const int rows = m.rowCount();
  ASSERT_GE(rows, 4);
  for (int c = 0; c < NodeGridModel::ColumnCount; ++c) {
    for (const auto order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
      f.sort(c, order);
      ASSERT_EQ(f.rowCount(), rows);
      bool seen_empty = false;
      for (int r = 0; r < f.rowCount(); ++r) {
        const QVariant key = f.index(r, c).data(NodeGridModel::SortRole);
        if (!key.isValid()) {
          seen_empty = true;
          continue;
        }
        EXPECT_FALSE(seen_empty) << "column " << c << ": a value after an empty cell";
        if (r == 0) continue;
        const QVariant prev = f.index(r - 1, c).data(NodeGridModel::SortRole);
        if (!prev.isValid()) continue;
        if (order == Qt::AscendingOrder)
          EXPECT_LE(prev.toDouble(), key.toDouble()) << "column " << c << " row " << r;
        else
          EXPECT_GE(prev.toDouble(), key.toDouble()) << "column " << c << " row " << r;
      }
    }
  }
  f.sort(NodeGridModel::SymbolErrors, Qt::DescendingOrder);
  EXPECT_EQ(f.index(0, NodeGridModel::SymbolErrors).data().toString(), "5/s");
  EXPECT_EQ(f.index(0, NodeGridModel::Node).data(NodeGridModel::NodeIndexRole).toInt(), 0);
  f.setFilterText("symbol_error>10");
  ASSERT_EQ(f.rowCount(), 1);
  EXPECT_EQ(f.index(0, NodeGridModel::Port).data().toInt(), 1);
  f.setFilterText("symbol_error>50");
  EXPECT_EQ(f.rowCount(), 0);
  f.setFilterText("no_such_counter>0");
  EXPECT_EQ(f.rowCount(), 0);
  f.setFilterText("");
  f.setTopCounter("symbol_error", 1);
  ASSERT_EQ(f.rowCount(), 1);
  EXPECT_EQ(f.index(0, NodeGridModel::Node).data(NodeGridModel::NodeIndexRole).toInt(), 0);
  EXPECT_EQ(f.index(0, NodeGridModel::Port).data().toInt(), 1);
  f.setTopCounter("symbol_error", 2);
  EXPECT_EQ(f.rowCount(), 2);
  f.setTopCounter("", 0);
  EXPECT_EQ(f.rowCount(), rows);
}

TEST(FindingsModel, GroupsBySeverityAndCodeThenNodeThenPortWorstFirstAndEveryFindingOnce) {
  FindingsModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setJob(&job());
  ASSERT_GT(m.groupCount(), 0);
  EXPECT_EQ(m.index(0, 0).data(FindingsModel::CodeRole).toString(), "PORT_NOT_ACTIVE_SM");
  EXPECT_EQ(m.index(0, 0).data(FindingsModel::SeverityRole).toInt(), 3);
  std::set<int> seen;
  int last_severity = 3;
  for (int g = 0; g < m.rowCount(); ++g) {
    const QModelIndex group = m.index(g, 0);
    EXPECT_EQ(group.data(FindingsModel::LevelRole).toInt(), FindingsModel::GroupLevel);
    EXPECT_EQ(group.data(FindingsModel::NodeIndexRole).toInt(), -1);
    EXPECT_LE(group.data(FindingsModel::SeverityRole).toInt(), last_severity);
    last_severity = group.data(FindingsModel::SeverityRole).toInt();
    int group_findings = 0;
    std::set<int> nodes;
    for (int r = 0; r < m.rowCount(group); ++r) {
      const QModelIndex n = m.index(r, 0, group);
      EXPECT_EQ(n.data(FindingsModel::LevelRole).toInt(), FindingsModel::NodeLevel);
      const int node = n.data(FindingsModel::NodeIndexRole).toInt();
      ASSERT_GE(node, 0);
      EXPECT_TRUE(nodes.insert(node).second) << "one row per node in a group";
      EXPECT_EQ(m.index(r, FindingsModel::Node, group).data().toString().toStdString(),
                job().report.nodes(node).label());
      const int count = m.index(r, FindingsModel::Count, group).data().toInt();
      group_findings += count;
      const auto findings = m.findingsOf(n);
      ASSERT_EQ(static_cast<int>(findings.size()), count);
      // A node row stands for its first finding; its ports are its children when it has
      // more than one, else it is the leaf.
      EXPECT_EQ(n.data(FindingsModel::FindingIndexRole).toInt(), findings.front());
      EXPECT_EQ(m.rowCount(n), count > 1 ? count : 0);
      if (count == 1) seen.insert(findings.front());
      for (int p = 0; p < m.rowCount(n); ++p) {
        const QModelIndex port = m.index(p, 0, n);
        EXPECT_EQ(port.data(FindingsModel::LevelRole).toInt(), FindingsModel::PortLevel);
        EXPECT_EQ(port.data(FindingsModel::NodeIndexRole).toInt(), node);
        const int fi = port.data(FindingsModel::FindingIndexRole).toInt();
        EXPECT_EQ(fi, findings[static_cast<std::size_t>(p)]);
        EXPECT_EQ(port.data(FindingsModel::DeviceRole).toString().toStdString(),
                  job().report.findings(fi).device());
        EXPECT_EQ(port.data(FindingsModel::PortRole).toInt(),
                  static_cast<int>(job().report.findings(fi).port()));
        EXPECT_EQ(job().report.findings(fi).code(),
                  group.data(FindingsModel::CodeRole).toString().toStdString());
        seen.insert(fi);
      }
    }
    EXPECT_EQ(m.index(g, FindingsModel::Count).data().toInt(), group_findings);
    EXPECT_EQ(m.index(g, FindingsModel::Node).data().toString(),
              QStringLiteral("%1 node(s)").arg(nodes.size()));
  }
  EXPECT_EQ(static_cast<int>(seen.size()), job().report.findings_size());
}

TEST(FindingsModel, ACodeOnEveryPortOfANodeIsOneNodeRowWithItsPortsBelow) {
  FindingsModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setJob(&job());
  // The node whose 8 ports trained at 100 Gb/s: 8 findings, one node row.
  QModelIndex group;
  for (int g = 0; g < m.rowCount(); ++g) {
    if (m.index(g, 0).data(FindingsModel::CodeRole).toString() == "LINK_RATE_BELOW_EXPECTED")
      group = m.index(g, 0);
  }
  ASSERT_TRUE(group.isValid());
  ASSERT_EQ(m.rowCount(group), 1);
  EXPECT_EQ(m.index(0, FindingsModel::Node, group).data().toString(), "node1720 (gpu02.ibsnap)");
  EXPECT_EQ(m.index(0, FindingsModel::Where, group).data().toString(), "8 ports");
  EXPECT_EQ(m.index(0, FindingsModel::Count, group).data().toInt(), 8);
  const QModelIndex node = m.index(0, 0, group);
  ASSERT_EQ(m.rowCount(node), 8);
  std::set<QString> ports;
  for (int p = 0; p < 8; ++p)
    ports.insert(m.index(p, FindingsModel::Where, node).data().toString());
  EXPECT_EQ(ports.size(), 8u);
  EXPECT_TRUE(ports.count("mlx5_0 port 1"));
  // The node row carries its first port, so selecting it selects a real port.
  EXPECT_EQ(node.data(FindingsModel::DeviceRole).toString(), "mlx5_0");
  EXPECT_EQ(node.data(FindingsModel::PortRole).toInt(), 1);

  // A node found by port: the node's row in the first group that has it, and there its port.
  const int slow = node.data(FindingsModel::NodeIndexRole).toInt();
  const QModelIndex at = m.indexOfNode(slow, "mlx5_3", 1);
  ASSERT_TRUE(at.isValid());
  EXPECT_EQ(at.parent(), node);
  EXPECT_EQ(at.siblingAtColumn(FindingsModel::Where).data().toString(), "mlx5_3 port 1");
  const QModelIndex whole = m.indexOfNode(slow, "", 0);
  EXPECT_EQ(whole.data(FindingsModel::LevelRole).toInt(), FindingsModel::NodeLevel);
  EXPECT_EQ(whole, node);  // its first group (the most severe it has) is this one
  EXPECT_FALSE(m.indexOfNode(job().report.nodes_size() + 5, "", 0).isValid());
}

TEST(FindingsModel, ARowCopiesAsPlainTextWithItsEvidenceAndNextStep) {
  FindingsModel m;
  m.setJob(&job());
  const QModelIndex worst = m.worstFinding();
  ASSERT_TRUE(worst.isValid());
  const int fi = worst.data(FindingsModel::FindingIndexRole).toInt();
  const auto& f = job().report.findings(fi);
  ASSERT_GT(f.evidence_size(), 0);
  // The stuck node's two INIT ports: the node row copies both, a port row its own.
  const QString text = m.copyText(worst);
  EXPECT_TRUE(
      text.startsWith(QStringLiteral("CRITICAL PORT_NOT_ACTIVE_SM on node1661 mlx5_6 port 1\n")))
      << text.toStdString();
  EXPECT_TRUE(text.contains(QString::fromStdString(f.summary())));
  EXPECT_TRUE(
      text.contains(QStringLiteral("Evidence:\n  ") + QString::fromStdString(f.evidence(0))));
  EXPECT_TRUE(text.contains(QStringLiteral("Next step: ") + QString::fromStdString(f.action())));
  EXPECT_TRUE(text.contains(QStringLiteral("From: ") + QString::fromStdString(f.source())));
  ASSERT_EQ(m.rowCount(worst), 2);
  EXPECT_EQ(text.count(QStringLiteral("CRITICAL PORT_NOT_ACTIVE_SM on ")), 2);
  const QString second = m.copyText(m.index(1, 0, worst));
  EXPECT_EQ(second.count(QStringLiteral("CRITICAL PORT_NOT_ACTIVE_SM on ")), 1);
  EXPECT_TRUE(second.contains(QStringLiteral("mlx5_8 port 1"))) << second.toStdString();
  EXPECT_EQ(m.nodeName(worst), "node1661");
  EXPECT_EQ(m.nodeName(m.index(0, 0)), "");  // a group is no node
  EXPECT_EQ(m.copyText({}), "");
}

// A SYNTHETIC 2,000-node job: the four real captures 500 times over, each copy its own host
// (node0001...) and source, diagnosed as the console does.
const JobData& bigJob() {
  static const JobData data = [] {
    std::vector<v1::Snapshot> snaps;
    std::vector<std::string> files;
    for (int i = 0; i < 2000; ++i) {
      v1::Snapshot s = wholeSnapshot(job(), static_cast<std::size_t>(i % 4));
      char name[32];
      std::snprintf(name, sizeof name, "node%04d", i + 1);
      s.mutable_node()->set_hostname(name);
      s.mutable_node()->set_slurm_node(name);
      s.mutable_node()->set_source(std::string("synthetic:") + name);
      snaps.push_back(std::move(s));
      files.push_back(std::string(name) + ".ibsnap");
    }
    return diagnoseSnapshots(std::move(snaps), files);
  }();
  return data;
}

TEST(FindingsModel, TwoThousandNodesAreAFewGroupsOfOneRowPerNodeAndHoldUnderTheTester) {
  const JobData& j = bigJob();
  ASSERT_EQ(j.report.nodes_size(), 2000);
  FindingsModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setJob(&j);
  EXPECT_LE(m.groupCount(), 12);
  // The stuck capture is every fourth node: 500 node rows of 2 ports each, not 1,000 rows.
  const QModelIndex stuck = m.index(0, 0);
  EXPECT_EQ(stuck.data(FindingsModel::CodeRole).toString(), "PORT_NOT_ACTIVE_SM");
  EXPECT_EQ(m.rowCount(stuck), 500);
  EXPECT_EQ(m.index(0, FindingsModel::Count).data().toInt(), 1000);
  EXPECT_EQ(m.rowCount(m.index(499, 0, stuck)), 2);
  int findings = 0;
  for (int g = 0; g < m.rowCount(); ++g)
    findings += m.index(g, FindingsModel::Count).data().toInt();
  EXPECT_EQ(findings, j.report.findings_size());
  const QModelIndex worst = m.worstFinding();
  EXPECT_EQ(worst.parent(), stuck);
  EXPECT_EQ(worst.row(), 0);
  // Found again where the model put it: the last stuck node.
  const int last = m.index(499, 0, stuck).data(FindingsModel::NodeIndexRole).toInt();
  EXPECT_EQ(m.indexOfNode(last, "", 0), m.index(499, 0, stuck));
  m.setJob(nullptr);
  EXPECT_EQ(m.rowCount(), 0);
}

TEST(FindingsModel, AJobOpensOnTheMostSevereGroupsFirstFindingAndItsNodesWorstPort) {
  FindingsModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  EXPECT_FALSE(m.worstFinding().isValid());
  m.setJob(&job());
  const QModelIndex worst = m.worstFinding();
  ASSERT_TRUE(worst.isValid());
  EXPECT_EQ(worst.parent(), m.index(0, 0));
  EXPECT_EQ(worst.row(), 0);
  EXPECT_EQ(worst.data(FindingsModel::SeverityRole).toInt(), 3);
  const int node = worst.data(FindingsModel::NodeIndexRole).toInt();
  ASSERT_GE(node, 0);
  // The node's worst port is the first of its most severe ports.
  const auto& n = job().report.nodes(node);
  const int p = worstPort(n);
  ASSERT_GE(p, 0);
  EXPECT_EQ(severityRank(n.ports(p).worst_severity()), severityRank(n.worst_severity()));
  for (int i = 0; i < p; ++i)
    EXPECT_LT(severityRank(n.ports(i).worst_severity()), severityRank(n.ports(p).worst_severity()));
  EXPECT_EQ(worstPort(v1::NodeReport{}), -1);
}

TEST(FindingsModel, AFilterKeepsTheGroupsAndNodesThatHoldAndATypoKeepsNothing) {
  FindingsModel m;
  m.setJob(&job());
  const int groups = m.rowCount();
  ASSERT_GT(groups, 1);
  auto shown = [&m](const FindingsModel::RowFilter& f) {
    QStringList out;
    for (int g = 0; g < m.rowCount(); ++g)
      if (f.groups[static_cast<std::size_t>(g)])
        out << m.index(g, 0).data(FindingsModel::CodeRole).toString();
    return out;
  };
  const auto all = m.filterRows(QString());
  EXPECT_TRUE(all.error.isEmpty());
  EXPECT_EQ(shown(all).size(), groups);
  EXPECT_EQ(shown(m.filterRows("code=PORT_NOT_ACTIVE_SM")),
            QStringList{QStringLiteral("PORT_NOT_ACTIVE_SM")});
  for (const QString& code : shown(m.filterRows("severity>=critical"))) {
    const int g = [&] {
      for (int k = 0; k < m.rowCount(); ++k)
        if (m.index(k, 0).data(FindingsModel::CodeRole).toString() == code) return k;
      return -1;
    }();
    EXPECT_EQ(m.index(g, 0).data(FindingsModel::SeverityRole).toInt(), 3) << code.toStdString();
  }
  // A node name keeps that node's rows in every group it is in, and no other node's.
  const auto one = m.filterRows("node=node2183");
  ASSERT_FALSE(shown(one).isEmpty());
  for (int g = 0; g < m.rowCount(); ++g) {
    const QModelIndex group = m.index(g, 0);
    for (int r = 0; r < m.rowCount(group); ++r) {
      EXPECT_EQ(one.nodes[static_cast<std::size_t>(g)][static_cast<std::size_t>(r)],
                m.nodeName(m.index(r, 0, group)) == QStringLiteral("node2183"));
    }
  }
  const auto typo = m.filterRows("severity>=urgent");
  EXPECT_FALSE(typo.error.isEmpty());
  EXPECT_TRUE(shown(typo).isEmpty());
}

TEST(FindingsFilter, KeepsTheNodesThatHoldWithTheirPortsAndGroupsUnderTheModelTester) {
  FindingsModel m;
  m.setJob(&job());
  FindingsFilter f;
  QAbstractItemModelTester tester(&f, QAbstractItemModelTester::FailureReportingMode::Fatal);
  f.setFindingsModel(&m);
  EXPECT_EQ(f.rowCount(), m.rowCount());
  f.setFilterText("node=node1661");
  ASSERT_GT(f.rowCount(), 0);
  int ports = 0;
  for (int g = 0; g < f.rowCount(); ++g) {
    const QModelIndex group = f.index(g, 0);
    ASSERT_GT(f.rowCount(group), 0);
    for (int r = 0; r < f.rowCount(group); ++r) {
      const QModelIndex node = f.index(r, 0, group);
      EXPECT_EQ(m.nodeName(f.mapToSource(node)), QStringLiteral("node1661"));
      ports += f.rowCount(node);
    }
  }
  EXPECT_GT(ports, 0);  // its two INIT ports come with it
  f.setFilterText("code=NO_SUCH_CODE");
  EXPECT_EQ(f.rowCount(), 0);
  EXPECT_TRUE(f.filterError().isEmpty());
  f.setFilterText("severity>=urgent");
  EXPECT_EQ(f.rowCount(), 0);
  EXPECT_FALSE(f.filterError().isEmpty());
  f.setFilterText("");
  EXPECT_EQ(f.rowCount(), m.rowCount());
  m.setJob(nullptr);  // a reset of the model resets the filter
  EXPECT_EQ(f.rowCount(), 0);
}

// The real mlx5 capture with hw_counters errors (procfs fixture).
v1::Snapshot mlx5Snapshot() {
  return collectTree(ibc::test::fixturePath(
      "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures"));
}

TEST(CountersModel, ShowsEveryCounterOfAPortWithItsTotalAndNothingForAnotherPort) {
  // The real mlx5 capture with hw_counters errors (procfs fixture).
  const JobData j = diagnoseSnapshots({mlx5Snapshot()}, {"mlx5.ibsnap"});
  CountersModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  const v1::Snapshot whole = wholeSnapshot(j, 0);  // the job keeps it without counters
  m.setPort(&whole, "mlx5_0", 1);
  ASSERT_GT(m.rowCount(), 10);
  bool saw_cqe = false;
  for (int r = 0; r < m.rowCount(); ++r) {
    if (m.index(r, CountersModel::Name).data().toString() == "req_cqe_error") {
      saw_cqe = true;
      EXPECT_EQ(m.index(r, CountersModel::Total).data(CountersModel::RawValueRole).toULongLong(),
                3481u);
    }
  }
  EXPECT_TRUE(saw_cqe);
  m.setPort(&whole, "mlx5_9", 1);
  EXPECT_EQ(m.rowCount(), 0);
}

TEST(CountersFilter, NameGlobsGroupsAndNumbersNarrowTheCountersAndATypoShowsNone) {
  const JobData j = diagnoseSnapshots({mlx5Snapshot()}, {"mlx5.ibsnap"});
  CountersModel m;
  const v1::Snapshot whole = wholeSnapshot(j, 0);
  m.setPort(&whole, "mlx5_0", 1);
  CountersFilter f;
  QAbstractItemModelTester tester(&f, QAbstractItemModelTester::FailureReportingMode::Fatal);
  f.setSourceModel(&m);
  const int all = f.rowCount();
  ASSERT_GT(all, 10);
  auto names = [&f] {
    QStringList out;
    for (int r = 0; r < f.rowCount(); ++r) out << f.index(r, CountersModel::Name).data().toString();
    return out;
  };
  f.setFilterText("req_cqe*");
  EXPECT_TRUE(names().contains(QStringLiteral("req_cqe_error"))) << names().join(' ').toStdString();
  for (const QString& n : names()) EXPECT_TRUE(n.startsWith(QStringLiteral("req_cqe")));
  // The capture's req_cqe_error total is 3,481: a number compares as a number.
  f.setFilterText("req_cqe_error total>3000");
  EXPECT_EQ(f.rowCount(), 1);
  f.setFilterText("req_cqe_error total>4000");
  EXPECT_EQ(f.rowCount(), 0);
  f.setFilterText("total>0");
  const int nonzero = f.rowCount();
  EXPECT_GT(nonzero, 0);
  EXPECT_LT(nonzero, all);
  f.setFilterText("group=hw_counters");
  EXPECT_GT(f.rowCount(), 0);
  for (int r = 0; r < f.rowCount(); ++r)
    EXPECT_TRUE(f.index(r, CountersModel::Group).data().toString().contains("hw_counters"));
  f.setFilterText("total>lots");
  EXPECT_EQ(f.rowCount(), 0);
  EXPECT_FALSE(f.filterError().isEmpty());
  f.setFilterText("");
  EXPECT_EQ(f.rowCount(), all);
}

TEST(CountersModel, TroubleComesFirstMovedThenNonZeroErrorsThenTheRestThenUnreadable) {
  const JobData j = windowedJob();
  CountersModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  // The mlx4 QDR capture's port 1, whose symbol_error grew by 50 in the window.
  const v1::Snapshot whole = wholeSnapshot(j, 0);
  const auto& d = whole.devices(0);
  m.setPort(&whole, QString::fromStdString(d.name()), 1);
  ASSERT_GT(m.rowCount(), 5);
  EXPECT_EQ(m.index(0, CountersModel::Name).data().toString(), "symbol_error");
  EXPECT_EQ(m.index(0, 0).data(CountersModel::ConcernRole).toInt(), CountersModel::Moved);
  EXPECT_EQ(m.index(0, CountersModel::Delta).data().toString(), "+50");
  int last = CountersModel::Moved;
  bool saw_quiet_traffic = false;
  for (int r = 0; r < m.rowCount(); ++r) {
    const int concern = m.index(r, 0).data(CountersModel::ConcernRole).toInt();
    EXPECT_GE(concern, last) << r;  // never back to a more urgent kind
    last = concern;
    const QString name = m.index(r, CountersModel::Name).data().toString();
    // Traffic is never trouble, whatever its total.
    if (name == "port_rcv_data") {
      EXPECT_EQ(concern, CountersModel::Quiet);
      saw_quiet_traffic = true;
    }
  }
  EXPECT_TRUE(saw_quiet_traffic);

  // Without a window: the real mlx5 capture's non-zero error totals lead (req_cqe_error 3481).
  const JobData mlx5 = diagnoseSnapshots(
      {collectTree(ibc::test::fixturePath("real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-"
                                          "counters-errors.tree/fixtures"))},
      {"mlx5.ibsnap"});
  const v1::Snapshot mlx5_whole = wholeSnapshot(mlx5, 0);
  m.setPort(&mlx5_whole, "mlx5_0", 1);
  ASSERT_GT(m.rowCount(), 10);
  EXPECT_EQ(m.index(0, 0).data(CountersModel::ConcernRole).toInt(), CountersModel::NonZeroError);
  int cqe_row = -1;
  int first_quiet = m.rowCount();
  for (int r = 0; r < m.rowCount(); ++r) {
    if (m.index(r, CountersModel::Name).data().toString() == "req_cqe_error") cqe_row = r;
    if (m.index(r, 0).data(CountersModel::ConcernRole).toInt() == CountersModel::Quiet)
      first_quiet = std::min(first_quiet, r);
  }
  ASSERT_GE(cqe_row, 0);
  EXPECT_LT(cqe_row, first_quiet);
}

int nodeLabelled(const JobData& j, const std::string& label) {
  for (int i = 0; i < j.report.nodes_size(); ++i) {
    if (j.report.nodes(i).label() == label) return i;
  }
  return -1;
}

struct DiffRow {
  QString section, field, left, right;
  DiffModel::Direction direction;
  QString change;
};

std::vector<DiffRow> rowsOf(const DiffModel& m) {
  std::vector<DiffRow> out;
  for (int r = 0; r < m.rowCount(); ++r) {
    out.push_back(
        {m.index(r, DiffModel::Section).data().toString(),
         m.index(r, DiffModel::Field).data().toString(),
         m.index(r, DiffModel::Left).data().toString(),
         m.index(r, DiffModel::Right).data().toString(),
         static_cast<DiffModel::Direction>(m.index(r, 0).data(DiffModel::DirectionRole).toInt()),
         m.index(r, DiffModel::Change).data().toString()});
  }
  return out;
}

TEST(DiffModel, TheStuckNodeAgainstTheMajorityShowsItsInitPortsAndFindingsAsWorse) {
  const JobData& j = job();
  const int stuck = nodeLabelled(j, "node1661");
  ASSERT_GE(stuck, 0);
  DiffModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.compareWithMajority(&j, stuck);
  const auto rows = rowsOf(m);
  int init_ports = 0;
  bool saw_finding = false;
  for (const auto& r : rows) {
    if (r.field == "state" && r.left == "INIT") {
      ++init_ports;
      EXPECT_EQ(r.right, "ACTIVE");
      EXPECT_EQ(r.direction, DiffModel::Direction::Worse);
    }
    if (r.section == "findings" && r.field.startsWith("PORT_NOT_ACTIVE_SM")) {
      saw_finding = true;
      EXPECT_EQ(r.direction, DiffModel::Direction::Worse);
    }
    // Only differences: no row whose two sides read the same.
    EXPECT_NE(r.left, r.right) << r.section.toStdString() << " " << r.field.toStdString();
  }
  EXPECT_EQ(init_ports, 2);  // the capture's two ports stuck in INIT
  EXPECT_TRUE(saw_finding);
  EXPECT_EQ(m.worseCount(), static_cast<int>(std::count_if(rows.begin(), rows.end(), [](auto& r) {
              return r.direction == DiffModel::Direction::Worse;
            })));
  // Worst first: the first row is worse.
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().direction, DiffModel::Direction::Worse);
}

TEST(DiffModel, TwoNodesDifferBothWaysAndANodeDoesNotDifferFromItself) {
  const JobData& j = job();
  const int stuck = nodeLabelled(j, "node1661");
  const int good = nodeLabelled(j, "node1720 (gpu01.ibsnap)");
  ASSERT_GE(stuck, 0);
  ASSERT_GE(good, 0);
  DiffModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.compareNodes(&j, good, good);
  EXPECT_EQ(m.rowCount(), 0);
  m.compareNodes(&j, stuck, good);
  const int worse = m.worseCount();
  EXPECT_GT(worse, 0);
  EXPECT_EQ(m.headerData(DiffModel::Left, Qt::Horizontal).toString(), "node1661");
  m.compareNodes(&j, good, stuck);
  int better = 0;
  for (const auto& r : rowsOf(m)) better += r.direction == DiffModel::Direction::Better ? 1 : 0;
  EXPECT_EQ(better, worse);  // the same differences, seen from the other side
  m.compareNodes(&j, good, 99);
  EXPECT_EQ(m.rowCount(), 0);
}

TEST(DiffModel, AnErrorCounterThatGrewIsWorseAndTrafficOnlyChanged) {
  // The real mlx5 capture, and the same snapshot read again later with more errors and
  // more traffic (synthetic values, in memory): only the counters that moved are listed.
  const v1::Snapshot before = mlx5Snapshot();
  v1::Snapshot after = before;
  after.mutable_node()->set_collected_at_unix_ms(before.node().collected_at_unix_ms() + 60000);
  for (auto& c : *after.mutable_devices(0)->mutable_ports(0)->mutable_hw_counters()) {
    if (c.name() == "resp_cqe_error") c.set_value(c.value() + 5);
  }
  for (auto& c : *after.mutable_devices(0)->mutable_ports(0)->mutable_counters()) {
    if (c.name() == "port_xmit_data") c.set_value(c.value() + 1000);
  }
  const JobData j = diagnoseSnapshots({after, before}, {"after.ibsnap", "before.ibsnap"});
  DiffModel m;
  m.compareNodes(&j, 0, 1);
  std::map<QString, DiffRow> by_field;
  for (const auto& r : rowsOf(m)) by_field.emplace(r.field, r);
  ASSERT_TRUE(by_field.count("resp_cqe_error"));
  EXPECT_EQ(by_field.at("resp_cqe_error").left, "8,114");
  EXPECT_EQ(by_field.at("resp_cqe_error").right, "8,109");
  EXPECT_EQ(by_field.at("resp_cqe_error").change, "+5");
  EXPECT_EQ(by_field.at("resp_cqe_error").direction, DiffModel::Direction::Worse);
  ASSERT_TRUE(by_field.count("port_xmit_data"));
  EXPECT_EQ(by_field.at("port_xmit_data").direction, DiffModel::Direction::Changed);
  // 4-byte words shown as bytes: 1,000 more words are 3.91 KiB more.
  EXPECT_EQ(by_field.at("port_xmit_data").change, "+3.91 KiB");
  EXPECT_TRUE(by_field.at("port_xmit_data").left.endsWith("iB"))
      << by_field.at("port_xmit_data").left.toStdString();
  EXPECT_FALSE(by_field.count("symbol_error"));  // did not move
}

// Facts are matched position by position while two nodes share a layout and by key after:
// a node with one more device, listed first, differs in that device and nothing else, against
// the other node and against the job's majority (SYNTHETIC: the real mlx5 capture with a
// copy of its device renamed, in memory).
TEST(DiffModel, ANodeWithAnExtraDeviceFirstDiffersInThatDeviceOnly) {
  const v1::Snapshot plain = mlx5Snapshot();
  v1::Snapshot extra = plain;
  auto* copy = extra.add_devices();
  *copy = plain.devices(0);
  copy->set_name("mlx5_9");
  for (int i = extra.devices_size() - 1; i > 0; --i)
    extra.mutable_devices()->SwapElements(i, i - 1);
  const JobData j =
      diagnoseSnapshots({extra, plain, plain}, {"extra.ibsnap", "a.ibsnap", "b.ibsnap"});
  DiffModel m;
  const auto onlyTheExtraDevice = [&](DiffModel::Direction expected) {
    int extra_rows = 0;
    for (const auto& r : rowsOf(m)) {
      if (r.section == "findings" || r.section == "host") continue;
      EXPECT_TRUE(r.section.startsWith("mlx5_9/"))
          << r.section.toStdString() << " " << r.field.toStdString();
      EXPECT_EQ(r.direction, expected) << r.field.toStdString();
      ++extra_rows;
    }
    EXPECT_GT(extra_rows, 10);
  };
  m.compareNodes(&j, 0, 1);
  onlyTheExtraDevice(DiffModel::Direction::OnlyLeft);
  m.compareNodes(&j, 1, 0);
  onlyTheExtraDevice(DiffModel::Direction::OnlyRight);
  m.compareWithMajority(&j, 0);
  onlyTheExtraDevice(DiffModel::Direction::OnlyLeft);
  m.compareWithMajority(&j, 1);
  for (const auto& r : rowsOf(m)) {
    EXPECT_FALSE(r.section.startsWith("mlx5_")) << r.section.toStdString();
  }
  // The majority holds each key once (the first node's layout, then what others add).
  const auto majority = majorityFacts(j);
  EXPECT_EQ(majority.voters, 3);
  EXPECT_EQ(majority.unread, 0);
  std::set<std::pair<QString, QString>> keys;
  for (const auto& f : majority.facts) EXPECT_TRUE(keys.emplace(f.section, f.field).second);
  const auto second = factsOf(j, 1);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(majority.facts.size(), second->size());
}

// A node whose nccl-tests output moved nothing (every row 0 GB/s: SYNTHETIC, in memory) is
// neither charted nor judged, as core's NODE_OUTLIER leaves it out: the chart used to plot it
// at 0 and call it an outlier the job's verdict never named.
TEST(ChartData, ANodeWhoseTestMovedNothingIsNotChartedAsCoreDoesNotJudgeIt) {
  auto snaps = withNcclTests(wholeSnapshots(job()));
  snaps[0].clear_nccl_tests();
  snaps[0].add_nccl_tests()->mutable_parsed()->add_rows()->set_oop_busbw_gbs(0);
  const JobData j = diagnoseSnapshots(snaps, jobFiles());
  const auto series = busbwPerNode(j);
  ASSERT_EQ(series.values.size(), 3u);
  for (const auto& v : series.values) EXPECT_NE(v.node, 0);
  for (int i : findingsOfNode(j, 0)) {
    const auto& f = j.report.findings(i);
    EXPECT_FALSE(f.code() == "NODE_OUTLIER" && f.summary().find("nccl-tests") != std::string::npos)
        << f.summary();
  }
  // Nor does the grid show it a busbw, let alone mark it.
  NodeGridModel m;
  m.setJob(&j);
  const int row = rowOfPort(m, QString::fromStdString(j.report.nodes(0).label()), "mlx5_0");
  ASSERT_GE(row, 0);
  EXPECT_TRUE(m.index(row, NodeGridModel::Busbw).data().toString().isEmpty());
  EXPECT_FALSE(m.index(row, NodeGridModel::Busbw).data(NodeGridModel::OutlierRole).toBool());
}

TEST(ChartData, BusbwOutliersAreTheNodesTheJobVerdictCallsBusbwOutliers) {
  // The job's snapshots, each with a real all_reduce_perf output attached.
  ASSERT_EQ(job().snapshots.size(), 4u);
  const JobData j = diagnoseSnapshots(withNcclTests(wholeSnapshots(job())), jobFiles());
  const auto series = busbwPerNode(j);
  const auto& bars = series.values;
  ASSERT_EQ(bars.size(), 4u);
  EXPECT_NEAR(bars[0].value, 338.82, 0.01);
  EXPECT_NEAR(bars[1].value, 235.26, 0.01);
  EXPECT_NEAR(bars[3].value, 97.54, 0.01);  // in place at 1 GiB
  // One rule (core::isBusbwOutlier over core::medianOf): the red bars are the nodes core's
  // verdict gave a busbw NODE_OUTLIER, and the 97.5 GB/s node is one of them.
  int outliers = 0;
  for (std::size_t k = 0; k < bars.size(); ++k) {
    const auto& b = bars[k];
    const bool outlier = b.outlier;
    outliers += outlier ? 1 : 0;
    bool judged = false;
    for (const int i : findingsOfNode(j, b.node)) {
      const auto& f = j.report.findings(i);
      judged = judged || (f.code() == "NODE_OUTLIER" &&
                          f.summary().find("bus bandwidth") != std::string::npos);
    }
    EXPECT_EQ(outlier, judged) << b.label << " " << b.value;
  }
  EXPECT_GE(outliers, 1);
  EXPECT_TRUE(bars[3].outlier);
  // The grid marks the busbw cells of exactly those nodes, on every row of the node.
  NodeGridModel grid;
  grid.setJob(&j);
  for (int r = 0; r < grid.rowCount(); ++r) {
    const int node = grid.index(r, 0).data(NodeGridModel::NodeIndexRole).toInt();
    bool bar_outlier = false;
    for (const auto& b : bars) bar_outlier = bar_outlier || (b.node == node && b.outlier);
    EXPECT_EQ(grid.index(r, NodeGridModel::Busbw).data(NodeGridModel::OutlierRole).toBool(),
              bar_outlier)
        << "row " << r;
  }
  EXPECT_EQ(series.outliers(), outliers);
  EXPECT_EQ(series.nodes, 4);
  EXPECT_TRUE(busbwPerNode(job()).values.empty());  // no nccl-tests: no bars, never zeros
}

TEST(ChartData, ACounterPerNodeLeavesOutNodesWithoutItAndOverTimeIsOldestFirst) {
  const v1::Snapshot mlx5 = mlx5Snapshot();
  std::vector<v1::Snapshot> snaps = {wholeSnapshot(job(), 0), mlx5};
  const JobData j = diagnoseSnapshots(snaps, {jobFiles()[0], "mlx5.ibsnap"});
  const auto series = counterPerNode(j, "resp_cqe_error");
  const auto& bars = series.values;
  EXPECT_EQ(series.unit, CounterUnit::Count);
  ASSERT_EQ(bars.size(), 1u);  // the gcm capture has no hw_counters: left out, not 0
  EXPECT_EQ(bars[0].node, 1);
  EXPECT_EQ(bars[0].value, 8109);
  const auto names = counterNames(j);
  EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "resp_cqe_error"));

  // The same host read three times (synthetic later readings, in memory), given newest first.
  std::vector<v1::Snapshot> history;
  for (int k = 2; k >= 0; --k) {
    v1::Snapshot s = mlx5;
    s.mutable_node()->set_collected_at_unix_ms(mlx5.node().collected_at_unix_ms() + k * 60000);
    for (auto& c : *s.mutable_devices(0)->mutable_ports(0)->mutable_hw_counters()) {
      if (c.name() == "resp_cqe_error") c.set_value(c.value() + static_cast<uint64_t>(k) * 10);
    }
    history.push_back(s);
  }
  const JobData h = diagnoseSnapshots(history, {"c.ibsnap", "b.ibsnap", "a.ibsnap"});
  const auto points = counterOverTime(h, 0, "resp_cqe_error");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].value, 8109);
  EXPECT_EQ(points[1].value, 8119);
  EXPECT_EQ(points[2].value, 8129);
  EXPECT_LT(points[0].unix_ms, points[2].unix_ms);
}

TEST(ChartData, DataCountersAreChartedInBytesFourPerWordAndJudgedOnTheirCounts) {
  // The real mlx5 capture: port_xmit_data in sysfs counts 4-byte words (CONTRIBUTING.md, core's
  // nodeCounterMetrics multiplies by 4).
  const v1::Snapshot mlx5 = mlx5Snapshot();
  uint64_t words = 0;
  for (const auto& c : mlx5.devices(0).ports(0).counters())
    if (c.name() == "port_xmit_data") words = c.value();
  ASSERT_GT(words, 0u);
  const JobData j = diagnoseSnapshots({mlx5}, {"mlx5.ibsnap"});
  const auto series = counterPerNode(j, "port_xmit_data");
  ASSERT_EQ(series.values.size(), 1u);
  EXPECT_EQ(series.unit, CounterUnit::Bytes);
  EXPECT_EQ(series.values[0].value, 4.0 * static_cast<double>(words));
  EXPECT_EQ(formatValue(series, 4096), "4.00 KiB");
  const auto points = counterOverTime(j, 0, "port_xmit_data");
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].value, 4.0 * static_cast<double>(words));
}

TEST(Escalation, ACaseRequestCoversTheCheckedNodesSnapshotIdsAndCodes) {
  JobData j = job();
  // Opened files are not in the collector: no case can cover them.
  EXPECT_EQ(caseRequestFor(j, {0}, {}).tenant(), "");
  // As if fetched from the collector: a tenant and one id per snapshot.
  j.tenant = "acme";
  for (int i = 0; i < j.report.nodes_size(); ++i) {
    j.snapshot_ids.push_back(std::string(63, 'a') + static_cast<char>('0' + i));
  }
  const int down = nodeLabelled(j, "node2183");
  std::set<int> flaps;
  for (int i = 0; i < j.report.findings_size(); ++i) {
    if (j.report.findings(i).code() == "KERNEL_LINK_FLAP") flaps.insert(i);
  }
  const auto r = caseRequestFor(j, {down}, flaps);
  EXPECT_EQ(r.tenant(), "acme");
  ASSERT_EQ(r.snapshot_ids_size(), 1);
  EXPECT_EQ(r.snapshot_ids(0), j.snapshot_ids[static_cast<std::size_t>(down)]);
  ASSERT_EQ(r.nodes_size(), 1);
  EXPECT_EQ(r.nodes(0), "node2183");
  ASSERT_EQ(r.finding_codes_size(), 1);
  EXPECT_EQ(r.finding_codes(0), "KERNEL_LINK_FLAP");
  EXPECT_THAT(r.title(), HasSubstr("KERNEL_LINK_FLAP on 1 node(s)"));

  // Every node, every finding: plain node names (never a label with the file), codes sorted.
  std::vector<int> all;
  for (int i = 0; i < j.report.nodes_size(); ++i) all.push_back(i);
  const auto every = caseRequestFor(j, all, {});
  EXPECT_EQ(every.snapshot_ids_size(), j.report.nodes_size());
  for (const auto& n : every.nodes()) EXPECT_THAT(n, Not(HasSubstr(" ")));
  EXPECT_TRUE(std::is_sorted(every.finding_codes().begin(), every.finding_codes().end()));
  EXPECT_GT(every.finding_codes_size(), 1);
}

// The job's nodes as cloud VMs see them (every device's PF is the provider's): the real gcm
// captures with the virtualization evidence a VM's snapshot carries (SYNTHETIC field).
const JobData& vmJob() {
  static const JobData data = [] {
    std::vector<v1::Snapshot> snaps = wholeSnapshots(job());
    for (auto& s : snaps) {
      s.mutable_node()->set_virtual_machine(true);
      s.mutable_node()->set_virtualization_evidence("CPU flag hypervisor");
    }
    return diagnoseSnapshots(snaps, jobFiles());
  }();
  return data;
}

TEST(Escalation, SuspectsAreWhatTheJobVerdictEscalatedAndTheRunbookCoversOnlyTheCheckedOnes) {
  // Bare metal: nothing is the provider's to inspect.
  EXPECT_TRUE(suspectNodes(job()).empty());
  const JobData& j = vmJob();
  const int slow = nodeLabelled(j, "node1720 (gpu02.ibsnap)");
  const int down = nodeLabelled(j, "node2183");
  const int stuck = nodeLabelled(j, "node1661");
  const auto suspects = suspectNodes(j);
  // Links at 100 Gb/s and a port down are the PF's to inspect; ports stuck in INIT go to the
  // subnet manager's runbook; the healthy node is nobody's.
  EXPECT_EQ(std::set<int>(suspects.begin(), suspects.end()), (std::set<int>{slow, down, stuck}));
  const auto sm = pfInspectionFor(j, {stuck}, {}, "4242");
  EXPECT_GT(sm.suspects_size(), 0);
  for (const auto& vf : sm.suspects()) EXPECT_EQ(vf.escalation(), "subnet_manager") << vf.device();
  const auto physical = pfInspectionFor(j, {slow}, {}, "4242");
  EXPECT_GT(physical.suspects_size(), 0);
  for (const auto& vf : physical.suspects()) EXPECT_EQ(vf.escalation(), "physical") << vf.device();
  const auto all = pfInspectionFor(j, suspects, {}, "4242");
  std::set<std::string> nodes;
  for (const auto& s : all.suspects()) nodes.insert(s.node());
  EXPECT_EQ(nodes, (std::set<std::string>{"node1720 (gpu02.ibsnap)", "node2183", "node1661"}));
  EXPECT_EQ(all.job_id(), "4242");

  // Only node2183's link flaps handed over: its one port, nothing of the other node.
  std::set<int> flaps;
  for (int i = 0; i < j.report.findings_size(); ++i) {
    if (j.report.findings(i).code() == "KERNEL_LINK_FLAP") flaps.insert(i);
  }
  ASSERT_EQ(flaps.size(), 1u);
  const auto one = pfInspectionFor(j, {down}, flaps, "4242");
  ASSERT_EQ(one.suspects_size(), 1);
  EXPECT_EQ(one.suspects(0).node(), "node2183");
  EXPECT_EQ(one.suspects(0).device(), "mlx5_6");
}

// The nodes as signed .ibsnap bytes (each signed by its node's agent certificate), for plans
// and bundles over the same bytes.
struct SignedJob {
  JobData job;
  std::vector<std::string> envelopes;  // per node: the signed .ibsnap bytes
  std::unique_ptr<core::SnapshotSigner> exporter;
};

SignedJob signedVmJob(const std::function<void(std::vector<v1::Snapshot>&)>& edit = {}) {
  static const auto ca = ibc::test::TestCa::create("console plan CA");
  SignedJob out;
  std::vector<v1::Snapshot> snaps = wholeSnapshots(vmJob());
  for (auto& s : snaps) s.mutable_node()->set_job_id("4242");
  if (edit) edit(snaps);
  for (const auto& s : snaps) {
    const auto cred = ca.issue(ibc::test::agentSpec("acme", core::snapshotNodeName(s.node())));
    auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
    EXPECT_TRUE(signer.ok());
    auto env = signer->sign(s);
    EXPECT_TRUE(env.ok());
    out.envelopes.push_back(core::encodeSnapshotFile(*env));
  }
  out.job = diagnoseSnapshots(snaps, jobFiles());
  out.job.signed_files = out.envelopes;
  const auto alice = ca.issue(ibc::test::supportSpec("alice"));
  auto exporter = core::SnapshotSigner::fromPem(alice.certificate_pem, alice.key_pem);
  EXPECT_TRUE(exporter.ok());
  out.exporter = std::make_unique<core::SnapshotSigner>(std::move(*exporter));
  return out;
}

core::BundleMembers exportedBundle(const SignedJob& s, const std::vector<int>& nodes, bool redact) {
  std::vector<core::BundleSnapshotInput> inputs;
  for (const int n : nodes) inputs.push_back({s.envelopes[static_cast<std::size_t>(n)], "n"});
  core::BundleExportOptions o;
  o.redact = redact;
  auto members = core::buildBundle(inputs, o, *s.exporter);
  EXPECT_TRUE(members.ok()) << members.error().message;
  return members.ok() ? *members : core::BundleMembers{};
}

TEST(BundlePlan, TheRunbookPaneRendersOnlyTheSelectedNodesVfSections) {
  // core's pf-inspection.md of two real VM nodes (SYNTHETIC DMI on real captures).
  const SignedJob s = signedVmJob();
  const int slow = nodeLabelled(s.job, "node1720 (gpu02.ibsnap)");
  const int stuck = nodeLabelled(s.job, "node1661");
  const BundlePlan plan = planBundle(bundlePlanInputs(s.job, {slow, stuck}, ""), false);
  const std::string& md = plan.pf_inspection_md;
  const auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const int total = count(md, "\n## ");
  ASSERT_GT(count(md, "\n## node1661 "), 0);
  ASSERT_GT(count(md, "\n## node1720 "), 0);
  ASSERT_EQ(total, count(md, "\n## node1661 ") + count(md, "\n## node1720 "));

  const RunbookPart stuck_part = runbookOfNode(md, "node1661");
  EXPECT_EQ(stuck_part.total, total);
  EXPECT_EQ(stuck_part.shown, count(md, "\n## node1661 "));
  EXPECT_EQ(count(stuck_part.markdown, "\n## node1720 "), 0);
  EXPECT_EQ(stuck_part.markdown.rfind("# PF inspection\n", 0), 0u);  // the preamble stays
  // Each section shown is the runbook's own, word for word.
  const auto first = stuck_part.markdown.find("\n## ");
  ASSERT_NE(first, std::string::npos);
  EXPECT_THAT(md, HasSubstr(stuck_part.markdown.substr(first)));

  // A node without a section (or none selected): the first section, said to be one of many.
  const RunbookPart none = runbookOfNode(md, "");
  EXPECT_EQ(none.shown, 1);
  EXPECT_EQ(count(none.markdown, "\n## "), 1);
  EXPECT_EQ(runbookOfNode(md, "node17").shown, 1);  // a prefix is not the node
  // A runbook without suspects is shown whole.
  const RunbookPart empty = runbookOfNode("# PF inspection\n\nNothing to inspect.\n", "x");
  EXPECT_EQ(empty.total, 0);
  EXPECT_EQ(empty.markdown, "# PF inspection\n\nNothing to inspect.\n");
}

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

TEST(CheckListModel, RowsCheckAndUncheckAndSayWhatTheyStandForUnderTheModelTester) {
  CheckListModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setItems({{QStringLiteral("node07  CRITICAL"), QStringLiteral("why"), 7, true, true},
              {QStringLiteral("node08  OK"), {}, 8, false, false},
              {QStringLiteral("node09  OK"), {}, 9, false, false}});
  EXPECT_EQ(m.rowCount(), 3);
  EXPECT_EQ(m.checkedIndexes(), QList<int>{7});
  EXPECT_EQ(m.index(0).data(CheckListModel::IndexRole).toInt(), 7);
  EXPECT_TRUE(m.index(0).data(Qt::ForegroundRole).isValid());
  EXPECT_FALSE(m.index(1).data(Qt::ForegroundRole).isValid());
  EXPECT_TRUE(m.flags(m.index(1)) & Qt::ItemIsUserCheckable);
  QSignalSpy toggled(&m, &CheckListModel::checkToggled);
  EXPECT_TRUE(m.setData(m.index(2), Qt::Checked, Qt::CheckStateRole));
  EXPECT_EQ(toggled.count(), 1);
  EXPECT_EQ(m.checkedIndexes(), (QList<int>{7, 9}));
  m.setCheckedIndexes({8});
  EXPECT_EQ(toggled.count(), 1);  // not the engineer's doing
  EXPECT_EQ(m.checkedIndexes(), QList<int>{8});
  EXPECT_EQ(m.rowOf(9), 2);
  EXPECT_EQ(m.rowOf(42), -1);
  EXPECT_FALSE(m.setData(m.index(0), QStringLiteral("x"), Qt::EditRole));
}

TEST(BundlePlan, TheMembersTableHoldsUnderTheModelTester) {
  const SignedJob s = signedVmJob();
  BundleMembersModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
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

TEST(Escalation, EachSuspectSaysItsKindInWordsAndAVfNothingIdentifiesIsMarked) {
  const SignedJob s = signedVmJob();
  const auto reasons = suspectReasons(s.job);
  const int slow = nodeLabelled(s.job, "node1720 (gpu02.ibsnap)");
  const int stuck = nodeLabelled(s.job, "node1661");
  std::map<int, SuspectReason> by_node;
  for (const auto& r : reasons) by_node[r.node] = r;
  ASSERT_TRUE(by_node.count(stuck) && by_node.count(slow));
  ASSERT_FALSE(by_node[stuck].lines.empty());
  EXPECT_EQ(by_node[stuck].lines[0].rfind("subnet manager: PORT_NOT_ACTIVE_SM on mlx5_", 0), 0u)
      << by_node[stuck].lines[0];
  EXPECT_EQ(by_node[stuck].codes, std::vector<std::string>{"PORT_NOT_ACTIVE_SM"});
  ASSERT_FALSE(by_node[slow].lines.empty());
  EXPECT_EQ(by_node[slow].lines[0].rfind("physical link or device: ", 0), 0u)
      << by_node[slow].lines[0];
  // The VFs marked are exactly the ones core raised VF_IDENTITY_MISSING for (these real
  // captures' GUID files hold their own names: unknown).
  int marked = 0;
  for (const auto& [node, r] : by_node) {
    std::set<std::string> raised;
    for (const int f : findingsOfNode(s.job, node)) {
      const auto& finding = s.job.report.findings(f);
      if (finding.code() == "VF_IDENTITY_MISSING") raised.insert(finding.device());
    }
    std::set<std::string> devices;
    for (const auto& vf : r.identity_missing) devices.insert(vf.substr(0, vf.find('/')));
    EXPECT_EQ(devices, raised) << node;
    marked += static_cast<int>(r.identity_missing.size());
  }
  EXPECT_GT(marked, 0);
  EXPECT_EQ(escalationWords("transport_path"), "transport path");
  // The order is suspectNodes'.
  std::vector<int> order;
  for (const auto& r : reasons) order.push_back(r.node);
  EXPECT_EQ(order, suspectNodes(s.job));
}

TEST(Escalation, TheCommandCarriesTheRealJobIdAndTheJobsCaseInsteadOfCreatingAnother) {
  const SignedJob s = signedVmJob();
  JobData j = s.job;
  // Opened files: named, and the bundle named after the job.
  const auto files = escalationCommands(j, {0, 1}, nullptr, false);
  EXPECT_THAT(files.export_line, HasSubstr(jobFiles()[0]));
  EXPECT_THAT(files.export_line, HasSubstr("-o job4242.ibbundle"));
  EXPECT_THAT(files.export_line, Not(HasSubstr("<JOB>")));
  EXPECT_THAT(files.host_line, HasSubstr("--bundle job4242.ibbundle"));
  EXPECT_NE(escalationCommands(j, {0}, nullptr, true).export_line.find(" --redact"),
            std::string::npos);
  EXPECT_EQ(jobIdOf(j, {0, 3}), "4242");

  // From the collector.
  j.tenant = "acme";
  for (int i = 0; i < j.report.nodes_size(); ++i)
    j.snapshot_ids.push_back(std::string(63, 'a') + char('0' + i));
  const auto by_job = escalationCommands(j, {0, 1}, nullptr, false);
  EXPECT_THAT(by_job.export_line, HasSubstr("--job 4242 --tenant acme"));
  EXPECT_THAT(by_job.note, HasSubstr("every node of the job (4)"));
  EXPECT_TRUE(escalationCommands(j, {0, 1, 2, 3}, nullptr, false).note.empty());

  std::vector<v1::Case> cases(3);
  cases[0].set_case_id("case-old");
  cases[0].set_tenant("acme");
  cases[0].set_job_id("4242");
  cases[0].set_state(v1::CASE_STATE_CLOSED);
  cases[0].set_updated_at_unix_ms(900);
  cases[1].set_case_id("case-other-job");
  cases[1].set_tenant("acme");
  cases[1].set_job_id("77");
  cases[2].set_case_id("case-open");
  cases[2].set_tenant("acme");
  cases[2].set_job_id("4242");
  cases[2].set_state(v1::CASE_STATE_OPEN);
  cases[2].set_updated_at_unix_ms(100);
  cases[2].add_snapshot_ids(j.snapshot_ids[0]);
  cases[2].add_snapshot_ids(j.snapshot_ids[1]);
  const v1::Case* found = caseOfJob(cases, "acme", "4242");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->case_id(), "case-open");
  EXPECT_EQ(caseOfJob(cases, "globex", "4242"), nullptr);
  EXPECT_EQ(caseOfJob(cases, "acme", ""), nullptr);
  const auto by_case = escalationCommands(j, {0, 1}, found, false);
  EXPECT_THAT(by_case.export_line, HasSubstr("--case case-open --tenant acme"));
  EXPECT_TRUE(by_case.note.empty()) << by_case.note;
  EXPECT_NE(escalationCommands(j, {0}, found, false).note.find("case's 2 snapshot(s)"),
            std::string::npos);
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

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

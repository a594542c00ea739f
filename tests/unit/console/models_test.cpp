// The console's models on a real 4-node job: the four facebookresearch/gcm captures of
// 8x HDR nodes (tests/fixtures/real/sysfs, PROVENANCE.md): a healthy node, one whose 8 ports
// trained at 100 Gb/s, one whose ib4 is down after 98 carrier changes, one with two ports
// stuck in INIT. Two of them are the same host (node1720), as real fetches give. Every model
// is checked with QAbstractItemModelTester (Fatal), and every verdict against core's report.

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QGuiApplication>
#include <atomic>
#include <fstream>
#include <memory>
#include <set>

#include "fixtures.h"
#include "ibc/agent/analyze.h"
#include "ibc/agent/os.h"
#include "ibc/console/counters_model.h"
#include "ibc/console/findings_model.h"
#include "ibc/console/grid_filter.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"
#include "ibc/core/snapshot_file.h"
#include "sysfs_json.h"

namespace ibc::console {
namespace {

namespace v1 = ::ibcollect::v1;

class NoEnvironment : public agent::Environment {
 public:
  std::string get(std::string_view) const override { return {}; }
};

struct NoCommands : agent::CommandRunner {
  core::Result<agent::CommandResult> run(const std::vector<std::string>&, std::chrono::milliseconds,
                                         std::size_t) override {
    return core::Error{core::ErrorCode::Unavailable, "no commands in tests"};
  }
  bool available(std::string_view) const override { return false; }
};

// Collects a real capture tree the way `ibcollect snapshot --root` does.
v1::Snapshot collectTree(const std::string& root) {
  agent::RootedFilesystem files("");
  NoCommands runner;
  agent::SystemClock clock;
  NoEnvironment env;
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

int rowOfPort(const NodeGridModel& m, const QString& node, const QString& device) {
  for (int r = 0; r < m.rowCount(); ++r) {
    if (m.index(r, NodeGridModel::Node).data().toString() == node &&
        m.index(r, NodeGridModel::Device).data().toString() == device)
      return r;
  }
  return -1;
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

TEST(ConsoleJob, UnreadableFilesAreNamedAndTheRestIsShown) {
  const std::string dir = ibc::test::makeTempDir("console-bad");
  std::ofstream(dir + "/garbage.ibsnap") << "not a snapshot";
  std::vector<std::string> files = {jobFiles()[0], dir + "/garbage.ibsnap",
                                    dir + "/missing.ibsnap"};
  const JobData j = loadSnapshotFiles(files);
  EXPECT_EQ(j.report.nodes_size(), 1);
  ASSERT_EQ(j.errors.size(), 2u);
  EXPECT_NE(j.errors[0].find("garbage.ibsnap"), std::string::npos) << j.errors[0];
  EXPECT_NE(j.errors[1].find("missing.ibsnap: No such file"), std::string::npos) << j.errors[1];
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
  EXPECT_EQ(m.majority(NodeGridModel::Rate), "200 Gb/s");
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

TEST(GridFilter, TermsNarrowTheRowsAndATypoShowsNothingWithAReason) {
  NodeGridModel m;
  m.setJob(&job());
  GridFilter f;
  QAbstractItemModelTester tester(&f, QAbstractItemModelTester::FailureReportingMode::Fatal);
  f.setGridModel(&m);
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

TEST(GridFilter, SortingByRateIsNumericAndByNodeIsNatural) {
  NodeGridModel m;
  m.setJob(&job());
  GridFilter f;
  f.setGridModel(&m);
  f.sort(NodeGridModel::Rate, Qt::AscendingOrder);
  EXPECT_EQ(f.index(0, NodeGridModel::Rate).data().toString(), "100 Gb/s");
  f.sort(NodeGridModel::Verdict, Qt::DescendingOrder);
  EXPECT_EQ(f.index(0, NodeGridModel::Verdict).data().toString(), "CRITICAL");
}

TEST(FindingsModel, GroupsBySeverityAndCodeWorstFirstAndEveryFindingOnce) {
  FindingsModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setJob(&job());
  ASSERT_GT(m.groupCount(), 0);
  EXPECT_EQ(m.index(0, 0).data(FindingsModel::CodeRole).toString(), "PORT_NOT_ACTIVE_SM");
  EXPECT_EQ(m.index(0, 0).data(FindingsModel::SeverityRole).toInt(), 3);
  int children = 0;
  int last_severity = 3;
  for (int g = 0; g < m.rowCount(); ++g) {
    const QModelIndex group = m.index(g, 0);
    EXPECT_LE(group.data(FindingsModel::SeverityRole).toInt(), last_severity);
    last_severity = group.data(FindingsModel::SeverityRole).toInt();
    for (int r = 0; r < m.rowCount(group); ++r) {
      const QModelIndex f = m.index(r, 0, group);
      const int node = f.data(FindingsModel::NodeIndexRole).toInt();
      ASSERT_GE(node, 0);
      EXPECT_EQ(m.index(r, FindingsModel::Node, group).data().toString().toStdString(),
                job().report.nodes(node).label());
      ++children;
    }
  }
  EXPECT_EQ(children, job().report.findings_size());
}

TEST(CountersModel, ShowsEveryCounterOfAPortWithItsTotalAndNothingForAnotherPort) {
  // The real mlx5 capture with hw_counters errors (procfs fixture).
  const v1::Snapshot snap = collectTree(ibc::test::fixturePath(
      "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures"));
  const JobData j = diagnoseSnapshots({snap}, {"mlx5.ibsnap"});
  CountersModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.setPort(&j, 0, "mlx5_0", 1);
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
  m.setPort(&j, 0, "mlx5_9", 1);
  EXPECT_EQ(m.rowCount(), 0);
}

}  // namespace
}  // namespace ibc::console

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

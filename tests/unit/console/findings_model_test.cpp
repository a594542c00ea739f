// findings_model.h: findings grouped by severity and code, then node, then port, worst first;
// copy text; the page's filter (FindingsFilter); a SYNTHETIC 2,000-node job.

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <cstdio>
#include <set>

#include "console_fixtures.h"
#include "ibc/console/findings_model.h"
#include "ibc/console/job_data.h"

namespace ibc::console {
namespace {

TEST(FindingsModel, GroupsBySeverityAndCodeThenNodeThenPortWorstFirstAndEveryFindingOnce) {
  FindingsModel m;
  QAbstractItemModelTester tester(&m, kFatal);
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
  QAbstractItemModelTester tester(&m, kFatal);
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
  QAbstractItemModelTester tester(&m, kFatal);
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
  QAbstractItemModelTester tester(&m, kFatal);
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
  QAbstractItemModelTester tester(&f, kFatal);
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

}  // namespace
}  // namespace ibc::console

namespace ibc::console {
namespace {

// The same real capture on ten nodes: every finding holds on every node, so each is core's one
// job-wide finding (DESIGN §11), whose row says where it holds as core says it.
TEST(FindingsModel, AFindingOnEveryNodeIsOneJobWideRowWordedByCore) {
  std::vector<v1::Snapshot> snaps;
  std::vector<std::string> files;
  for (int i = 1; i <= 10; ++i) {
    v1::Snapshot s = mlx5Snapshot();
    s.mutable_node()->set_hostname("gpu" + std::to_string(i));
    snaps.push_back(std::move(s));
    files.push_back("gpu" + std::to_string(i) + ".ibsnap");
  }
  const JobData j = diagnoseSnapshots(std::move(snaps), files);
  ASSERT_GT(j.report.findings_size(), 0);
  FindingsModel m;
  QAbstractItemModelTester tester(&m, kFatal);
  m.setJob(&j);
  ASSERT_GT(m.rowCount(), 0);
  for (int g = 0; g < m.rowCount(); ++g) {
    const QModelIndex group = m.index(g, 0);
    ASSERT_EQ(m.rowCount(group), 1) << g;
    EXPECT_EQ(m.index(0, 0, group).data(FindingsModel::NodeIndexRole).toInt(), -1);
    EXPECT_EQ(m.index(0, FindingsModel::Node, group).data().toString(),
              QStringLiteral("job-wide: all 10 nodes"));
  }
}

}  // namespace
}  // namespace ibc::console

// node_grid_model.h: one row per node and port of the real job, verdicts as core's report,
// outliers against the job's majority, counter columns (totals, window rates), busbw.

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <algorithm>
#include <optional>

#include "console_fixtures.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"
#include "ibc/console/port_counters.h"

namespace ibc::console {
namespace {

TEST(NodeGridModel, OneRowPerPortAndVerdictsAreCoresReport) {
  NodeGridModel m;
  QAbstractItemModelTester tester(&m, kFatal);
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

TEST(NodeGridModel, KeyCounterColumnsAreTheTotalsCoreReadAndMtuIsTheNetdevs) {
  const JobData j = diagnoseSnapshots(counterSnapshots(), kCounterFiles);
  NodeGridModel m;
  QAbstractItemModelTester tester(&m, kFatal);
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
  QAbstractItemModelTester tester(&m, kFatal);
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
  QAbstractItemModelTester tester(&m, kFatal);
  m.setJob(&j);
  const int fast = rowOfPort(m, "node1720 (gpu01.ibsnap)", "mlx5_0");
  const int slow = rowOfPort(m, "node1661", "mlx5_0");
  EXPECT_EQ(m.index(fast, NodeGridModel::Busbw).data().toString(), "338.8");
  EXPECT_EQ(m.index(slow, NodeGridModel::Busbw).data().toString(), "97.5");
  EXPECT_TRUE(m.index(slow, NodeGridModel::Busbw).data(NodeGridModel::OutlierRole).toBool());
  EXPECT_FALSE(m.index(fast, NodeGridModel::Busbw).data(NodeGridModel::OutlierRole).toBool());
  EXPECT_EQ(m.outlierRows(), 16);  // 8 slow-rate ports + node1661's 8 ports (2 INIT)
}

}  // namespace
}  // namespace ibc::console

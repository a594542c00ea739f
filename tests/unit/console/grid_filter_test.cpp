// grid_filter.h: the grid's filter terms, the context menu's clauses, numeric sorting and
// top-X by a counter, on the real job under QAbstractItemModelTester.

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>

#include "console_fixtures.h"
#include "ibc/console/grid_filter.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"

namespace ibc::console {
namespace {

// The grid of the real job behind its filter, the filter watched by QAbstractItemModelTester.
struct GridFilterOnJob : ::testing::Test {
  NodeGridModel m;
  GridFilter f;
  QAbstractItemModelTester tester{&f, kFatal};
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

TEST(GridFilter, SortsEveryColumnByItsNumberEmptyCellsLastAndFiltersAndTopXByCounter) {
  const JobData j = windowedJob();
  NodeGridModel m;
  m.setJob(&j);
  GridFilter f;
  QAbstractItemModelTester tester(&f, kFatal);
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

}  // namespace
}  // namespace ibc::console

// pages/grid_page.h: the real job's ports on the grid, worst first, with the summary of what
// is shown; a node's port picked elsewhere selects its row; the filter narrows the rows.

#include <gtest/gtest.h>

#include <QLabel>
#include <QTableView>

#include "console_fixtures.h"
#include "ibc/console/node_grid_model.h"
#include "pages/grid_page.h"
#include "widgets/filter_edit.h"

namespace ibc::console {
namespace {

QString summaryOf(const GridPage& page) {
  QString out;
  for (const QLabel* l : page.findChildren<QLabel*>())
    if (l->text().contains(QStringLiteral("rows shown"))) out = l->text();
  return out;
}

TEST(GridPage, TheJobsPortsAreShownWorstFirstAndANodesPortPickedElsewhereSelectsItsRow) {
  PageOnJob<NodeGridModel, GridPage> shown;
  GridPage& page = shown.page;
  EXPECT_TRUE(page.isReady());
  const QAbstractItemModel* rows = page.view()->model();
  ASSERT_EQ(rows->rowCount(), 32);
  // The stuck node's two INIT ports are the job's only critical rows: on top.
  const int stuck = nodeLabelled(*shown.loaded->data, "node1661");
  ASSERT_GE(stuck, 0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(rows->index(r, NodeGridModel::Node).data(NodeGridModel::NodeIndexRole).toInt(),
              stuck);
    EXPECT_EQ(rows->index(r, NodeGridModel::State).data().toString(), QStringLiteral("INIT"));
    EXPECT_EQ(rows->index(r, NodeGridModel::Verdict).data().toString(), QStringLiteral("CRITICAL"));
  }
  EXPECT_NE(rows->index(2, NodeGridModel::Verdict).data().toString(), QStringLiteral("CRITICAL"));
  const QString summary = summaryOf(page);
  EXPECT_TRUE(summary.startsWith(
      QStringLiteral("32 of 32 rows shown; 10 row(s) differ from the job's majority")))
      << summary.toStdString();
  EXPECT_TRUE(summary.contains(QStringLiteral("no port counters in these snapshots")))
      << summary.toStdString();

  page.selectNode(stuck, QStringLiteral("mlx5_8"), 1);
  const QModelIndex current = page.view()->currentIndex();
  ASSERT_TRUE(current.isValid());
  EXPECT_EQ(current.siblingAtColumn(NodeGridModel::Node).data(NodeGridModel::NodeIndexRole).toInt(),
            stuck);
  EXPECT_EQ(current.siblingAtColumn(NodeGridModel::Device).data().toString(),
            QStringLiteral("mlx5_8"));
  EXPECT_EQ(current.siblingAtColumn(NodeGridModel::Port).data().toInt(), 1);
  EXPECT_TRUE(page.view()->selectionModel()->isRowSelected(current.row(), {}));
}

TEST(GridPage, TheFilterNarrowsTheRowsAndTheSummarySaysHowManyOrWhyNone) {
  PageOnJob<NodeGridModel, GridPage> shown;
  GridPage& page = shown.page;
  const QAbstractItemModel* rows = page.view()->model();
  page.setFilterText(QStringLiteral("severity>=critical"));
  EXPECT_EQ(rows->rowCount(), 2);
  EXPECT_TRUE(summaryOf(page).startsWith(QStringLiteral("2 of 32 rows shown")))
      << summaryOf(page).toStdString();
  page.setFilterText(QStringLiteral("rate<<3"));
  EXPECT_EQ(rows->rowCount(), 0);
  EXPECT_FALSE(page.filterEdit()->error().isEmpty());
  page.setFilterText(QString());
  EXPECT_EQ(rows->rowCount(), 32);
  EXPECT_TRUE(page.filterEdit()->error().isEmpty());
}

}  // namespace
}  // namespace ibc::console

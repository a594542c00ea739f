// pages/findings_page.h: the real job's findings grouped worst first; a node's port picked
// elsewhere selects its finding, which the detail pane shows and Copy copies; the filter box.

#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QTextBrowser>
#include <QTreeView>

#include "console_fixtures.h"
#include "ibc/console/findings_model.h"
#include "pages/findings_page.h"
#include "widgets/filter_edit.h"

namespace ibc::console {
namespace {

TEST(FindingsPage, APortPickedElsewhereSelectsItsFindingWhichTheDetailShowsAndCopyCopies) {
  PageOnJob<FindingsModel, FindingsPage> shown;
  FindingsPage& page = shown.page;
  const QAbstractItemModel* m = page.view()->model();
  ASSERT_GT(m->rowCount(), 1);
  // The critical group first.
  EXPECT_EQ(m->index(0, 0).data(FindingsModel::CodeRole).toString(),
            QStringLiteral("PORT_NOT_ACTIVE_SM"));
  EXPECT_EQ(m->index(0, 0).data(FindingsModel::SeverityRole).toInt(), 3);

  const int stuck = nodeLabelled(*shown.loaded->data, "node1661");
  ASSERT_GE(stuck, 0);
  page.selectNode(stuck, QStringLiteral("mlx5_8"), 1);
  const QModelIndex current = page.view()->currentIndex();
  ASSERT_TRUE(current.isValid());
  EXPECT_EQ(current.data(FindingsModel::NodeIndexRole).toInt(), stuck);
  EXPECT_EQ(current.siblingAtColumn(FindingsModel::Where).data().toString(),
            QStringLiteral("mlx5_8 port 1"));
  const QString detail = page.detail()->toPlainText();
  EXPECT_TRUE(detail.contains(QStringLiteral("PORT_NOT_ACTIVE_SM"))) << detail.toStdString();
  EXPECT_TRUE(detail.contains(QStringLiteral("mlx5_8 port 1"))) << detail.toStdString();
  EXPECT_TRUE(page.copyFindingAction()->isEnabled());
  QApplication::clipboard()->clear();
  page.copyFindingAction()->trigger();
  const QString text = QApplication::clipboard()->text();
  EXPECT_TRUE(
      text.startsWith(QStringLiteral("CRITICAL PORT_NOT_ACTIVE_SM on node1661 mlx5_8 port 1")))
      << text.toStdString();
  EXPECT_EQ(text.count(QStringLiteral("PORT_NOT_ACTIVE_SM")), 1);
}

TEST(FindingsPage, TheFilterKeepsOnlyTheGroupsThatHoldAndATypoShowsNothingWithAReason) {
  PageOnJob<FindingsModel, FindingsPage> shown;
  FindingsPage& page = shown.page;
  const QAbstractItemModel* m = page.view()->model();
  const int groups = m->rowCount();
  ASSERT_GT(groups, 1);
  page.setFilterText(QStringLiteral("severity>=critical"));
  ASSERT_EQ(m->rowCount(), 1);
  EXPECT_EQ(m->index(0, 0).data(FindingsModel::CodeRole).toString(),
            QStringLiteral("PORT_NOT_ACTIVE_SM"));
  page.setFilterText(QStringLiteral("severity>=urgent"));
  EXPECT_EQ(m->rowCount(), 0);
  EXPECT_FALSE(page.filterEdit()->error().isEmpty());
  page.setFilterText(QString());
  EXPECT_EQ(m->rowCount(), groups);
  EXPECT_TRUE(page.filterEdit()->error().isEmpty());
}

}  // namespace
}  // namespace ibc::console

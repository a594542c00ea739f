// pages/node_page.h: the real mlx5 capture's counters on the node page, filtered by name and
// number, copied with their header.

#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QTableView>
#include <QTest>

#include "console_fixtures.h"
#include "ibc/console/counters_model.h"
#include "pages/node_page.h"
#include "widgets/filter_edit.h"

namespace ibc::console {
namespace {

// The node page's counters filter.
TEST_F(ConsoleUi, TheNodePageFiltersItsCountersByNameAndNumber) {
  // The real mlx5 capture: its port has counters and hw_counters.
  openFiles({QString::fromStdString(mlx5File())});
  window_->showPage(QStringLiteral("node"));
  NodePage* page = window_->nodePage();
  QAbstractItemModel* m = page->countersView()->model();
  ASSERT_GT(m->rowCount(), 0);
  const QString first = m->index(0, CountersModel::Name).data().toString();
  page->filterEdit()->setText(first.left(4) + QLatin1Char('*'));
  ASSERT_GT(m->rowCount(), 0) << first.toStdString() << " / "
                              << page->filterEdit()->error().toStdString();
  for (int r = 0; r < m->rowCount(); ++r)
    EXPECT_TRUE(m->index(r, CountersModel::Name).data().toString().startsWith(first.left(4)));
  page->filterEdit()->setText(first + QStringLiteral(" total>=0"));
  EXPECT_GE(m->rowCount(), 1);
  page->filterEdit()->setText(QStringLiteral("total<"));
  EXPECT_EQ(m->rowCount(), 0);
  EXPECT_FALSE(page->filterEdit()->error().isEmpty());
}

// Ctrl+C on the node page's counters and on the diff copies the selected rows with the
// header, as they are shown (units included).
TEST_F(ConsoleUi, CtrlCCopiesTheSelectedCountersAndDiffRowsWithTheirHeader) {
  openFiles({QString::fromStdString(mlx5File())});
  window_->showPage(QStringLiteral("node"));
  QTableView* counters = window_->nodePage()->countersView();
  ASSERT_GT(counters->model()->rowCount(), 1);
  counters->setFocus();
  counters->selectRow(0);
  QApplication::clipboard()->clear();
  QTest::keyClick(counters, Qt::Key_C, Qt::ControlModifier);
  const QStringList lines = QApplication::clipboard()->text().split(QLatin1Char('\n'));
  ASSERT_GE(lines.size(), 2);
  EXPECT_TRUE(lines[0].startsWith(QStringLiteral("Counter\tGroup\tTotal (latest)")))
      << lines[0].toStdString();
  EXPECT_TRUE(lines[1].startsWith(counters->model()->index(0, 0).data().toString() + '\t'))
      << lines[1].toStdString();
  auto* copy = counters->findChild<QAction*>(QStringLiteral("copy-rows"));
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(counters->contextMenuPolicy(), Qt::ActionsContextMenu);
}

}  // namespace
}  // namespace ibc::console

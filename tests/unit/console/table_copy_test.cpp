// widgets/table_copy.h: Ctrl+C on a table copies the selected rows as tab-separated text with
// the header, columns as the header shows them (moved, hidden ones left out).

#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QStandardItemModel>
#include <QTableView>

#include "widgets/table_copy.h"

namespace ibc::console {
namespace {

// A grid-like table: node, state, rate.
struct Table {
  QStandardItemModel model{3, 3};
  QTableView view;
  Table() {
    model.setHorizontalHeaderLabels(
        {QStringLiteral("Node"), QStringLiteral("State"), QStringLiteral("Rate")});
    const char* const rows[3][3] = {
        {"gpu01", "ACTIVE", "200"}, {"gpu02", "INIT", "200"}, {"gpu03", "ACTIVE", "100"}};
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) model.setItem(r, c, new QStandardItem(rows[r][c]));
    }
    view.setModel(&model);
    view.setSelectionBehavior(QAbstractItemView::SelectRows);
  }
  void selectRows(std::initializer_list<int> rows) {
    for (const int r : rows)
      view.selectionModel()->select(model.index(r, 0),
                                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
  }
};

TEST(SelectedRowsText, TheSelectedRowsInOrderWithTheHeaderTabSeparated) {
  Table t;
  t.selectRows({2, 0});
  EXPECT_EQ(selectedRowsText(&t.view),
            QStringLiteral("Node\tState\tRate\ngpu01\tACTIVE\t200\ngpu03\tACTIVE\t100\n"));
}

TEST(SelectedRowsText, ColumnsFollowTheHeaderAsShownAndHiddenOnesAreLeftOut) {
  Table t;
  t.view.horizontalHeader()->moveSection(2, 0);  // Rate first
  t.view.setColumnHidden(1, true);               // no State
  t.selectRows({1});
  EXPECT_EQ(selectedRowsText(&t.view), QStringLiteral("Rate\tNode\n200\tgpu02\n"));
}

TEST(SelectedRowsText, NothingSelectedIsTheHeaderAloneAndNoModelIsNothing) {
  Table t;
  EXPECT_EQ(selectedRowsText(&t.view), QStringLiteral("Node\tState\tRate\n"));
  QTableView empty;
  EXPECT_EQ(selectedRowsText(&empty), QString());
}

TEST(AddCopyAction, TheActionIsCtrlCOnTheViewAndCopiesToTheClipboard) {
  Table t;
  QAction* copy = addCopyAction(&t.view);
  EXPECT_EQ(copy->shortcut(), QKeySequence(QKeySequence::Copy));
  EXPECT_EQ(copy->shortcutContext(), Qt::WidgetShortcut);
  EXPECT_TRUE(t.view.actions().contains(copy));
  EXPECT_EQ(t.view.contextMenuPolicy(), Qt::ActionsContextMenu);
  t.selectRows({1});
  copy->trigger();
  EXPECT_EQ(QApplication::clipboard()->text(),
            QStringLiteral("Node\tState\tRate\ngpu02\tINIT\t200\n"));
  Table plain;
  addCopyAction(&plain.view, /*menu=*/false);
  EXPECT_NE(plain.view.contextMenuPolicy(), Qt::ActionsContextMenu);
}

}  // namespace
}  // namespace ibc::console

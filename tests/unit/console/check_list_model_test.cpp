// check_list_model.h: the escalate page's checkable lists under QAbstractItemModelTester.

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>

#include "console_fixtures.h"
#include "ibc/console/check_list_model.h"

namespace ibc::console {
namespace {

TEST(CheckListModel, RowsCheckAndUncheckAndSayWhatTheyStandForUnderTheModelTester) {
  CheckListModel m;
  QAbstractItemModelTester tester(&m, kFatal);
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

}  // namespace
}  // namespace ibc::console

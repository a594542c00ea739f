// counters_model.h: one port's counters of the real mlx5 capture (totals) and of the windowed
// counter captures (deltas), trouble first; the node page's filter (CountersFilter).

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <algorithm>

#include "console_fixtures.h"
#include "fixtures.h"
#include "ibc/console/counters_model.h"
#include "ibc/console/job_data.h"

namespace ibc::console {
namespace {

TEST(CountersModel, ShowsEveryCounterOfAPortWithItsTotalAndNothingForAnotherPort) {
  // The real mlx5 capture with hw_counters errors (procfs fixture).
  const JobData j = diagnoseSnapshots({mlx5Snapshot()}, {"mlx5.ibsnap"});
  CountersModel m;
  QAbstractItemModelTester tester(&m, kFatal);
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
  QAbstractItemModelTester tester(&f, kFatal);
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
  QAbstractItemModelTester tester(&m, kFatal);
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

}  // namespace
}  // namespace ibc::console

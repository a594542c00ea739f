// pages/diff_page.h: two of the real job's nodes compared (the stuck node's INIT ports worse
// than the healthy node's ACTIVE), a node against itself, and against the job's majority,
// which a worker works out while the page is not ready.

#include <gtest/gtest.h>

#include <QSignalSpy>

#include "console_fixtures.h"
#include "ibc/console/diff_model.h"
#include "pages/diff_page.h"

namespace ibc::console {
namespace {

// Whether `diff` has a `state` row whose left side is INIT, and it is worse.
bool initStateIsWorse(const DiffModel& diff) {
  bool worse = false;
  for (int r = 0; r < diff.rowCount(); ++r) {
    if (diff.index(r, DiffModel::Field).data().toString() == QStringLiteral("state") &&
        diff.index(r, DiffModel::Left).data().toString().contains(QStringLiteral("INIT")))
      worse = diff.index(r, 0).data(DiffModel::DirectionRole).toInt() ==
              static_cast<int>(DiffModel::Direction::Worse);
  }
  return worse;
}

TEST(DiffPage, TheStuckNodeIsWorseThanTheHealthyOneAndTheMajorityInItsInitPortsOnly) {
  DiffPage page;
  page.resize(1400, 800);
  page.show();
  auto loaded = loadedJob(job());
  const int stuck = nodeLabelled(*loaded->data, "node1661");
  const int good = nodeLabelled(*loaded->data, "node1720 (gpu01.ibsnap)");
  ASSERT_GE(stuck, 0);
  ASSERT_GE(good, 0);
  QSignalSpy majority(&page, &DiffPage::majorityReady);
  page.loadJob(loaded.get());
  page.selectNode(stuck, QString(), 0);
  page.setRight(good);
  const DiffModel* diff = page.model();
  ASSERT_GT(diff->rowCount(), 0);
  EXPECT_GT(diff->worseCount(), 0);
  EXPECT_TRUE(initStateIsWorse(*diff));
  // A node against itself differs in nothing.
  page.setRight(stuck);
  EXPECT_EQ(diff->rowCount(), 0);
  // Against the majority of the four nodes, once the worker has it.
  page.setRight(-1);
  if (page.majorityPending()) ASSERT_TRUE(majority.wait(30000));
  EXPECT_FALSE(page.majorityPending());
  EXPECT_TRUE(page.isReady());
  EXPECT_TRUE(diff->rightName().startsWith(QStringLiteral("majority of 4 nodes")))
      << diff->rightName().toStdString();
  EXPECT_TRUE(initStateIsWorse(*diff));
}

}  // namespace
}  // namespace ibc::console

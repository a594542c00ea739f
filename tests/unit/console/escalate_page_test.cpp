// pages/escalate_page.h: a large job's suspects worked out on a worker, the latest job winning.

#include <gtest/gtest.h>

#include <QSignalSpy>
#include <memory>

#include "console_fixtures.h"
#include "ibc/console/job_loader.h"
#include "pages/escalate_page.h"

namespace ibc::console {
namespace {

// A large job's suspects are worked out on a worker: the page says so, then shows them
// and plans their bundle; a newer job drops the older answer.
TEST(EscalatePageUi, ALargeJobsSuspectsArriveFromAWorkerAndTheLatestJobWins) {
  auto loaded = std::make_shared<LoadedJob>();
  loaded->data =
      std::make_unique<JobData>(busbwJob(EscalatePage::kSuspectsOnAWorkerFrom, {{7, 97.5}}));
  EscalatePage page;
  page.resize(1400, 860);
  page.show();
  QSignalSpy ready(&page, &EscalatePage::suspectsReady);
  page.loadJob(loaded.get());
  EXPECT_TRUE(page.suspectsPending());
  EXPECT_FALSE(page.planCurrent());
  ASSERT_TRUE(ready.wait(60000));
  EXPECT_FALSE(page.suspectsPending());
  const int slow = nodeNamed(*loaded->data, "gpu-h100-r07-n0007");
  EXPECT_FALSE(page.nodeText(slow).isEmpty());
  // Another job while one is worked out: only the newer one is shown.
  auto other = std::make_shared<LoadedJob>();
  other->data =
      std::make_unique<JobData>(busbwJob(EscalatePage::kSuspectsOnAWorkerFrom, {{9, 97.5}}));
  page.loadJob(loaded.get());
  page.loadJob(other.get());
  ASSERT_TRUE(ready.wait(60000));
  while (page.suspectsPending()) ASSERT_TRUE(ready.wait(60000));
  EXPECT_FALSE(page.nodeText(nodeNamed(*other->data, "gpu-h100-r07-n0009")).isEmpty());
  page.loadJob(nullptr);
  EXPECT_TRUE(page.nodeText(slow).isEmpty());
}

}  // namespace
}  // namespace ibc::console

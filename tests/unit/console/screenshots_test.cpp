// screenshots.h: --screenshot waits for each page to say it is ready (Page::ready), never
// longer than its bound, and renders every page (or --page alone) of the real job into
// DIR/<page>.png; a --node no snapshot has and files that are not snapshots are told apart.

#include <gtest/gtest.h>

#include <QImage>
#include <QTimer>
#include <filesystem>
#include <fstream>

#include "console_fixtures.h"
#include "main_window.h"
#include "pages/page.h"
#include "pages/page_registry.h"
#include "screenshots.h"
#include "sysfs_json.h"

namespace ibc::console {
namespace {

using std::chrono::milliseconds;

// A page that waits for whatever the test says (the seam a worker's answer goes through).
class WaitingPage : public Page {
 public:
  QString pageName() const override { return QStringLiteral("waiting"); }
  QString pageTitle() const override { return QStringLiteral("Waiting"); }
  void loadJob(LoadedJob*) override {}
  void selectNode(int, const QString&, int) override {}
  void startWork() { setReady(false); }
  void answer() { setReady(true); }
};

TEST(WaitUntilReady, AReadyPageIsNotWaitedFor) {
  WaitingPage page;
  EXPECT_TRUE(page.isReady());
  EXPECT_TRUE(waitUntilReady(page, milliseconds(0)));
}

TEST(WaitUntilReady, APageThatWaitsIsReadyWhenItsAnswerArrives) {
  WaitingPage page;
  page.startWork();
  EXPECT_FALSE(page.isReady());
  int readies = 0;
  QObject::connect(&page, &Page::ready, [&readies] { ++readies; });
  QTimer::singleShot(0, &page, [&page] { page.answer(); });
  EXPECT_TRUE(waitUntilReady(page, milliseconds(120000)));
  EXPECT_EQ(readies, 1);
  page.answer();  // already ready: no second signal
  EXPECT_EQ(readies, 1);
}

TEST(WaitUntilReady, APageThatNeverAnswersIsGivenUpAfterTheTimeout) {
  WaitingPage page;
  page.startWork();
  EXPECT_FALSE(waitUntilReady(page, milliseconds(20)));
  EXPECT_FALSE(page.isReady());
}

ConsoleArguments shotsOf(const std::vector<std::string>& files, const std::string& dir) {
  ConsoleArguments a;
  for (const auto& f : files) a.files << QString::fromStdString(f);
  a.screenshot = QString::fromStdString(dir);
  a.size = QSize(1000, 700);
  return a;
}

TEST(RenderScreenshots, EveryPageOfTheJobIsRenderedIntoItsFileOnceReady) {
  const std::string dir = ibc::test::makeTempDir("console-shots") + "/all";
  MainWindow window;
  ASSERT_EQ(renderScreenshots(window, shotsOf(jobFiles(), dir)), 0);
  for (const QString& name : pageNames()) {
    const QImage shot(QString::fromStdString(dir) + QLatin1Char('/') + name +
                      QStringLiteral(".png"));
    ASSERT_FALSE(shot.isNull()) << name.toStdString();
    EXPECT_EQ(shot.size(), QSize(1000, 700)) << name.toStdString();
    EXPECT_TRUE(window.pageNamed(name)->isReady()) << name.toStdString();
  }
  // The diff page waited for the job's majority (worked out on a worker).
  EXPECT_EQ(window.job()->report.nodes_size(), 4);
}

TEST(RenderScreenshots, PageAloneIsTheOnlyFileAndANodeNoSnapshotHasIsAUsageError) {
  const std::string dir = ibc::test::makeTempDir("console-shots-one");
  ConsoleArguments one = shotsOf(jobFiles(), dir);
  one.page = QStringLiteral("diff");
  one.node = QStringLiteral("node1661");
  MainWindow window;
  ASSERT_EQ(renderScreenshots(window, one), 0);
  std::vector<std::string> written;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    written.push_back(e.path().filename().string());
  EXPECT_EQ(written, std::vector<std::string>{"diff.png"});

  ConsoleArguments nobody = shotsOf(jobFiles(), dir + "/nobody");
  nobody.node = QStringLiteral("gpu99");
  MainWindow other;
  EXPECT_EQ(renderScreenshots(other, nobody), 3);
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/nobody"));
}

TEST(RenderScreenshots, FilesThatHoldNoSnapshotAreNotRendered) {
  const std::string dir = ibc::test::makeTempDir("console-shots-none");
  std::ofstream(dir + "/garbage.ibsnap") << "not a snapshot";
  MainWindow window;
  EXPECT_EQ(renderScreenshots(window, shotsOf({dir + "/garbage.ibsnap"}, dir + "/out")), 4);
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/out"));
}

}  // namespace
}  // namespace ibc::console

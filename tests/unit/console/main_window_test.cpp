// main_window.h: the window over its pages: a job opened on its worker shown worst first on
// every page, the desktop shortcuts, and what survives a restart (QSettings).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <QAction>
#include <QKeySequence>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "console_fixtures.h"
#include "ibc/console/findings_model.h"
#include "ibc/console/node_grid_model.h"
#include "pages/findings_page.h"
#include "pages/grid_page.h"
#include "pages/jobs_page.h"
#include "pages/node_page.h"
#include "sysfs_json.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::console {
namespace {

// A PKI with alice's support certificate and key (a real key, so that its contents could leak).
const std::string& pki() {
  static const std::string dir = [] {
    const std::string out = ibc::test::makeTempDir("console-pki");
    const auto ca = ibc::test::TestCa::create("console window CA");
    const auto cred = ca.issue(ibc::test::supportSpec("alice"));
    std::filesystem::create_directories(out + "/support");
    std::ofstream(out + "/ca.pem") << ca.certificatePem();
    std::ofstream(out + "/support/alice.pem") << cred.certificate_pem;
    std::ofstream(out + "/support/alice.key") << cred.key_pem;
    return out;
  }();
  return dir;
}
CollectorSettings alice(const std::string& endpoint) {
  return {endpoint, pki() + "/ca.pem", pki() + "/support/alice.pem", pki() + "/support/alice.key"};
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

QStringList files(const std::vector<std::string>& paths) {
  QStringList out;
  for (const auto& p : paths) out << QString::fromStdString(p);
  return out;
}

TEST_F(ConsoleUi, TheJobsFilesOpenOnAWorkerAndEveryPageShowsItsWorstNodeFirst) {
  openFiles(files(jobFiles()));
  ASSERT_NE(window_->job(), nullptr);
  ASSERT_EQ(window_->job()->report.nodes_size(), 4);
  EXPECT_TRUE(errors_.empty());
  const QString status = window_->statusBar()->currentMessage();
  EXPECT_TRUE(status.startsWith(QStringLiteral("4 node(s), "))) << status.toStdString();
  // The grid holds every port of the four nodes (8 each), the stuck node's INIT ports first.
  QTableView* grid = window_->gridPage()->view();
  ASSERT_EQ(grid->model()->rowCount(), 32);
  const int stuck = nodeLabelled(*window_->job(), "node1661");
  ASSERT_GE(stuck, 0);
  EXPECT_EQ(grid->model()->index(0, NodeGridModel::Node).data(NodeGridModel::NodeIndexRole).toInt(),
            stuck);
  EXPECT_EQ(grid->model()->index(0, NodeGridModel::State).data().toString(),
            QStringLiteral("INIT"));
  // The findings page is on the critical group's first finding: that node; so is the node page.
  const QModelIndex finding = window_->findingsPage()->view()->currentIndex();
  ASSERT_TRUE(finding.isValid());
  EXPECT_EQ(finding.parent().data(FindingsModel::CodeRole).toString(),
            QStringLiteral("PORT_NOT_ACTIVE_SM"));
  EXPECT_EQ(finding.data(FindingsModel::NodeIndexRole).toInt(), stuck);
  EXPECT_EQ(window_->nodePage()->currentNode(), stuck);
}

QAction* action(QWidget* window, const char* name) {
  return window->findChild<QAction*>(QLatin1String(name));
}

TEST_F(ConsoleUi, TheMenusHaveTheDesktopShortcuts) {
  const std::pair<const char*, QKeySequence> expected[] = {
      {"open", QKeySequence(QKeySequence::Open)},
      {"connect", QKeySequence(QStringLiteral("Ctrl+K"))},
      {"reload", QKeySequence(Qt::Key_F5)},  // QKeySequence::Refresh is empty on some platforms
      {"export", QKeySequence(QStringLiteral("Ctrl+E"))},
      {"find", QKeySequence(QKeySequence::Find)},
      {"quit", QKeySequence(QStringLiteral("Ctrl+Q"))},
  };
  for (const auto& [name, key] : expected) {
    QAction* a = action(window_.get(), name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_FALSE(a->shortcut().isEmpty()) << name;
    EXPECT_EQ(a->shortcut(), key) << name << " " << a->shortcut().toString().toStdString();
  }
  EXPECT_EQ(QKeySequence(QKeySequence::Open).toString(), QStringLiteral("Ctrl+O"));
  EXPECT_EQ(QKeySequence(QKeySequence::Find).toString(), QStringLiteral("Ctrl+F"));
}

TEST_F(ConsoleUi, GeometryAndTheLastConnectionSurviveARestartAndTheCommandLineWins) {
  // QSettings lives in this program's temp dir (console_test_main.cpp points the user scope
  // there).
  QSettings().clear();
  {
    MainWindow first;
    first.restoreSettings();  // nothing saved yet: the defaults
    EXPECT_EQ(first.jobsPage()->settings().endpoint, "");
    first.setCollector(alice("127.0.0.1:7070"), QStringLiteral("acme"));
    first.resize(1111, 777);
    first.show();
    first.showPage(QStringLiteral("findings"));
    first.close();  // saves
  }
  {
    MainWindow second;
    second.restoreSettings();
    const CollectorSettings s = second.jobsPage()->settings();
    EXPECT_EQ(s.endpoint, "127.0.0.1:7070");
    EXPECT_EQ(s.ca_file, pki() + "/ca.pem");
    EXPECT_EQ(s.cert_file, pki() + "/support/alice.pem");
    EXPECT_EQ(s.key_file, pki() + "/support/alice.key");
    EXPECT_EQ(second.jobsPage()->tenant(), QStringLiteral("acme"));
    EXPECT_EQ(second.size(), QSize(1111, 777));
    auto* tabs = second.findChild<QTabWidget*>(QString(), Qt::FindDirectChildrenOnly);
    EXPECT_EQ(tabs->currentWidget(), second.findingsPage());
  }
  {
    MainWindow third;
    third.setCollector(alice("127.0.0.1:9999"), QStringLiteral("other"));
    third.restoreSettings();
    EXPECT_EQ(third.jobsPage()->settings().endpoint, "127.0.0.1:9999");
    EXPECT_EQ(third.jobsPage()->tenant(), QStringLiteral("other"));
  }
  // Never a key's contents: only the path.
  const QString file = QSettings().fileName();
  const std::string text = readAll(file.toStdString());
  EXPECT_THAT(text, HasSubstr("alice.key")) << file.toStdString();
  EXPECT_THAT(text, Not(HasSubstr("PRIVATE KEY")));
}

}  // namespace
}  // namespace ibc::console

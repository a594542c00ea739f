// The console's window driven with QTest under the offscreen platform, on real data: the
// four real captures of tests/integration/console_make_job.sh as signed .ibsnap files, and a
// real `ibcollect-collector` (127.0.0.1, port 0, RocksDB in a temp dir, a certs/make-pki
// PKI) holding the same job, uploaded by the real `ibcollect upload`. Errors go to a sink
// the test installs (the window's dialogs are non-modal; nothing here waits on a click).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <QAbstractItemModel>
#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QListWidget>
#include <QMenu>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>
#include <QThread>
#include <QTimer>
#include <QTreeView>
#include <QUrl>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "collector_process.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/console/bundle_plan.h"
#include "ibc/console/counters_model.h"
#include "ibc/console/diff_model.h"
#include "ibc/console/findings_model.h"
#include "ibc/console/job_loader.h"
#include "ibc/console/node_grid_model.h"
#include "ibc/core/signing.h"
#include "ibc/core/snapshot_file.h"
#include "main_window.h"
#include "pages/charts_page.h"
#include "pages/diff_page.h"
#include "pages/escalate_page.h"
#include "pages/findings_page.h"
#include "pages/grid_page.h"
#include "pages/jobs_page.h"
#include "pages/node_page.h"
#include "widgets/filter_edit.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::console {
namespace {

namespace fs = std::filesystem;
using test::CollectorProcess;

std::string shellQuote(const std::string& s) { return "'" + s + "'"; }

int run(const std::string& command) {
  const int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The job, the PKI and one collector holding the job: made once for every test.
struct World {
  std::string dir;
  std::vector<std::string> files;  // gpu01..04.ibsnap
  std::string pki() const { return dir + "/pki"; }
  std::string ca() const { return pki() + "/ca.pem"; }
  CollectorSettings support(const std::string& endpoint) const {
    return {endpoint, ca(), pki() + "/support/alice.pem", pki() + "/support/alice.key"};
  }
};

World* world = nullptr;

// A collector holding the job, uploaded by node1720's agent (the launcher may be any agent of
// the tenant; each snapshot is signed by its own node).
std::unique_ptr<CollectorProcess> startCollectorWithJob(const std::string& name) {
  const std::string data = world->dir + "/" + name;
  auto collector = std::make_unique<CollectorProcess>(
      IBC_COLLECTOR_BINARY,
      std::vector<std::string>{"--listen", "127.0.0.1:0", "--data", data + "-store", "--ca",
                               world->ca(), "--cert", world->pki() + "/collector.pem", "--key",
                               world->pki() + "/collector.key"},
      data + ".log");
  std::string upload = std::string(IBC_BINARY) + " upload";
  for (const auto& f : world->files) upload += " " + shellQuote(f);
  upload += " --collector " + collector->address() + " --ca " + world->ca() + " --cert " +
            world->pki() + "/agents/acme/node1720.pem --key " + world->pki() +
            "/agents/acme/node1720.key --spool " + data + "-spool --retries 0 >/dev/null";
  EXPECT_EQ(run(upload), 0) << collector->log();
  return collector;
}

class ConsoleUi : public ::testing::Test {
 protected:
  void SetUp() override {
    window_ = std::make_unique<MainWindow>();
    window_->setErrorSink([this](const ErrorAdvice& a) { errors_.push_back(a); });
    window_->resize(1400, 860);
    window_->show();
  }
  void TearDown() override { window_.reset(); }

  // Waits for the window's `finished` (the load ran on its worker and came back).
  bool waitFinished(QSignalSpy& spy, int ms = 60000) { return spy.count() > 0 || spy.wait(ms); }
  void openFiles(const QStringList& files, const std::string& ca) {
    window_->setCollector({"", ca, "", ""}, {});
    QSignalSpy done(window_.get(), &MainWindow::finished);
    window_->openFiles(files, false);
    ASSERT_TRUE(waitFinished(done));
  }
  static QStringList jobFiles() {
    QStringList out;
    for (const auto& f : world->files) out << QString::fromStdString(f);
    return out;
  }
  // Job 4242 of tenant acme opened from `collector` (startCollectorWithJob), as a support
  // engineer does; returns when it is loaded.
  void openJobFrom(const CollectorProcess& collector) {
    window_->setCollector(world->support(collector.address()), QStringLiteral("acme"));
    QSignalSpy done(window_.get(), &MainWindow::finished);
    window_->openCollectorJob(QStringLiteral("acme"), QStringLiteral("4242"), false);
    ASSERT_TRUE(waitFinished(done));
    ASSERT_EQ(window_->job()->report.nodes_size(), 3);
  }
  // Lists the collector's jobs and expects that to fail with one error: that error.
  ErrorAdvice listingFailure() {
    QSignalSpy listed(window_->jobsPage(), &JobsPage::listed);
    window_->jobsPage()->refresh();
    EXPECT_TRUE(listed.wait(60000));
    EXPECT_FALSE(!listed.isEmpty() && listed.at(0).at(0).toBool());
    EXPECT_EQ(errors_.size(), 1u);
    return errors_.empty() ? ErrorAdvice{} : errors_.front();
  }
  // The node of the grid's current row (-1 when none).
  int gridCurrentNode() const {
    const QModelIndex row = window_->gridPage()->view()->currentIndex();
    return row.isValid()
               ? row.siblingAtColumn(NodeGridModel::Node).data(NodeGridModel::NodeIndexRole).toInt()
               : -1;
  }
  int nodeIndex(const std::string& file) const {
    const auto& r = window_->job()->report;
    for (int i = 0; i < r.nodes_size(); ++i)
      if (r.nodes(i).snapshot_file() == file) return i;
    return -1;
  }

  std::unique_ptr<MainWindow> window_;
  std::vector<ErrorAdvice> errors_;
};

TEST_F(ConsoleUi, RealSnapshotFilesOpenCheckedAgainstTheCaAndTheStatusBarSaysFromWhere) {
  openFiles(jobFiles(), world->ca());
  const JobData* job = window_->job();
  ASSERT_EQ(job->report.nodes_size(), 4);
  EXPECT_TRUE(job->errors.empty());
  EXPECT_TRUE(errors_.empty());
  ASSERT_EQ(job->trust.size(), 4u);
  for (const auto& t : job->trust) EXPECT_THAT(t, HasSubstr("checked against the CA"));
  EXPECT_THAT(job->trust[0], HasSubstr("CN=node1720"));
  const QString status = window_->statusBar()->currentMessage();
  EXPECT_TRUE(status.startsWith(QStringLiteral("4 node(s), "))) << status.toStdString();
  EXPECT_TRUE(status.contains(QStringLiteral("4 file(s) in ") + QString::fromStdString(world->dir)))
      << status.toStdString();
  // The grid holds every port of the four nodes (8 each).
  EXPECT_EQ(window_->gridPage()->view()->model()->rowCount(), 32);
}

TEST_F(ConsoleUi, WithoutACaTheSignatureIsCheckedForTamperingAndTheStatusSaysTheSignerIsNot) {
  openFiles(jobFiles(), "");
  ASSERT_EQ(window_->job()->report.nodes_size(), 4);
  for (const auto& t : window_->job()->trust) EXPECT_THAT(t, HasSubstr("NOT checked against a CA"));
  EXPECT_TRUE(window_->statusText().contains(QStringLiteral("4 signature(s) not checked")))
      << window_->statusText().toStdString();
}

TEST_F(ConsoleUi, ATenantsJobsAreListedAndAJobIsFetchedOnAWorkerThreadIntoTheGrid) {
  auto collector = startCollectorWithJob("list");
  window_->setCollector(world->support(collector->address()), QStringLiteral("acme"));
  QSignalSpy listed(window_->jobsPage(), &JobsPage::listed);
  window_->jobsPage()->refresh();
  ASSERT_TRUE(listed.wait(60000));
  ASSERT_TRUE(listed.at(0).at(0).toBool()) << window_->jobsPage()->statusText().toStdString();

  // acme → job 4242 → its three nodes (node1720 twice: one node, two snapshots).
  QTreeView* tree = window_->jobsPage()->view();
  const QAbstractItemModel* m = tree->model();
  QModelIndex tenant;
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->index(r, 0).data().toString() == QStringLiteral("acme")) tenant = m->index(r, 0);
  ASSERT_TRUE(tenant.isValid());
  const QModelIndex job = m->index(0, 0, tenant);
  EXPECT_EQ(job.data().toString(), QStringLiteral("job 4242"));
  EXPECT_EQ(m->rowCount(job), 3);
  EXPECT_EQ(m->index(0, 1, tenant).data().toString(), QStringLiteral("4"));  // snapshots

  std::atomic<bool> off_gui_thread{true};
  std::atomic<int> observed{0};
  QThread* gui = QThread::currentThread();
  window_->setLoadObserver([&](std::size_t, std::size_t) {
    if (QThread::currentThread() == gui) off_gui_thread = false;
    ++observed;
  });
  // Open it as an engineer does: select the job, press Enter.
  QSignalSpy done(window_.get(), &MainWindow::finished);
  window_->showPage(QStringLiteral("jobs"));
  tree->setFocus();
  tree->setCurrentIndex(job);
  QTest::keyClick(tree, Qt::Key_Return);
  ASSERT_TRUE(waitFinished(done));
  const JobData* fetched = window_->job();
  ASSERT_EQ(fetched->report.nodes_size(), 3) << (fetched->errors.empty() ? "" : fetched->errors[0]);
  EXPECT_TRUE(fetched->errors.empty());
  EXPECT_TRUE(errors_.empty());
  EXPECT_EQ(observed.load(), 3);
  EXPECT_TRUE(off_gui_thread.load());
  for (const auto& t : fetched->trust) EXPECT_THAT(t, HasSubstr("checked against the CA"));
  EXPECT_EQ(window_->findChild<QTabWidget*>(QString(), Qt::FindDirectChildrenOnly)->currentWidget(),
            window_->gridPage());
  EXPECT_TRUE(
      window_->statusText().contains(QStringLiteral("from collector %1, tenant acme, job 4242")
                                         .arg(QString::fromStdString(collector->address()))))
      << window_->statusText().toStdString();
}

TEST_F(ConsoleUi, SelectingAFindingSelectsItsNodeAndPortOnTheGridAndNodePages) {
  openFiles(jobFiles(), world->ca());
  // The stuck node's PORT_NOT_ACTIVE_SM findings name a device and a port.
  FindingsPage* page = window_->findingsPage();
  QTreeView* view = page->view();
  const QAbstractItemModel* m = view->model();
  QModelIndex finding;
  for (int g = 0; g < m->rowCount() && !finding.isValid(); ++g) {
    const QModelIndex group = m->index(g, 0);
    if (group.data(FindingsModel::CodeRole).toString() != QStringLiteral("PORT_NOT_ACTIVE_SM"))
      continue;
    // The last one: not the port the window selects first.
    finding = m->index(m->rowCount(group) - 1, 0, group);
  }
  ASSERT_TRUE(finding.isValid());
  const int node = finding.data(FindingsModel::NodeIndexRole).toInt();
  const QString device = finding.data(FindingsModel::DeviceRole).toString();
  const int port = finding.data(FindingsModel::PortRole).toInt();
  ASSERT_EQ(node, nodeIndex(world->files[3]));
  ASSERT_FALSE(device.isEmpty());

  window_->showPage(QStringLiteral("findings"));
  view->setFocus();
  view->setCurrentIndex(finding);  // as a click does: the selection model emits

  QTableView* grid = window_->gridPage()->view();
  const QModelIndex row = grid->currentIndex();
  ASSERT_TRUE(row.isValid());
  EXPECT_EQ(row.siblingAtColumn(NodeGridModel::Node).data(NodeGridModel::NodeIndexRole).toInt(),
            node);
  EXPECT_EQ(row.siblingAtColumn(NodeGridModel::Device).data().toString(), device);
  EXPECT_EQ(row.siblingAtColumn(NodeGridModel::Port).data().toInt(), port);
  EXPECT_TRUE(grid->selectionModel()->isRowSelected(row.row(), {}));
  EXPECT_EQ(window_->nodePage()->currentNode(), node);
  EXPECT_EQ(window_->nodePage()->currentPort(), QStringLiteral("%1 port %2").arg(device).arg(port));
}

TEST_F(ConsoleUi, AJobOpensWorstFirstOnTheGridTheNodePageAndTheFindingsPage) {
  openFiles(jobFiles(), world->ca());
  const JobData* job = window_->job();
  ASSERT_NE(job, nullptr);
  int job_worst = 0;
  for (const auto& n : job->report.nodes())
    job_worst = std::max(job_worst, severityRank(n.worst_severity()));
  ASSERT_GE(job_worst, 2) << "the real job has a fault to show first";

  // The grid is sorted by verdict, worst first: its first row is a port of the worst verdict
  // and no row below is worse than the one above.
  QTableView* grid = window_->gridPage()->view();
  EXPECT_EQ(grid->horizontalHeader()->sortIndicatorSection(), NodeGridModel::Verdict);
  EXPECT_EQ(grid->horizontalHeader()->sortIndicatorOrder(), Qt::DescendingOrder);
  const QAbstractItemModel* rows = grid->model();
  ASSERT_GT(rows->rowCount(), 0);
  EXPECT_EQ(rows->index(0, 0).data(NodeGridModel::SeverityRole).toInt(), job_worst);
  for (int r = 1; r < rows->rowCount(); ++r) {
    ASSERT_LE(rows->index(r, 0).data(NodeGridModel::SeverityRole).toInt(),
              rows->index(r - 1, 0).data(NodeGridModel::SeverityRole).toInt())
        << "row " << r;
  }

  // The findings page is on the most severe group's first finding.
  QTreeView* findings = window_->findingsPage()->view();
  const QModelIndex current = findings->currentIndex();
  ASSERT_TRUE(current.isValid());
  ASSERT_TRUE(current.parent().isValid());
  EXPECT_EQ(current.parent().row(), 0);
  EXPECT_EQ(current.row(), 0);
  EXPECT_EQ(current.parent().data(FindingsModel::SeverityRole).toInt(), job_worst);

  // The node page is on that finding's node, on its port, or (a finding of the whole node)
  // on the node's worst port.
  const int node = current.data(FindingsModel::NodeIndexRole).toInt();
  EXPECT_EQ(window_->nodePage()->currentNode(), node);
  const auto& n = job->report.nodes(node);
  QString device = current.data(FindingsModel::DeviceRole).toString();
  int port = current.data(FindingsModel::PortRole).toInt();
  if (device.isEmpty()) {
    const int p = worstPort(n);
    ASSERT_GE(p, 0);
    device = QString::fromStdString(n.ports(p).device());
    port = static_cast<int>(n.ports(p).port());
  }
  EXPECT_EQ(window_->nodePage()->currentPort(), QStringLiteral("%1 port %2").arg(device).arg(port));
  int port_rank = -1;
  for (const auto& ps : n.ports()) {
    if (QString::fromStdString(ps.device()) == device && static_cast<int>(ps.port()) == port)
      port_rank = severityRank(ps.worst_severity());
  }
  EXPECT_EQ(port_rank, severityRank(n.worst_severity()));
  // And the grid's selected row is that node.
  EXPECT_EQ(gridCurrentNode(), node);
}

TEST_F(ConsoleUi, TwoSnapshotsDiffOnlyWhatDiffersWithTheStuckPortsWorse) {
  openFiles(jobFiles(), world->ca());
  const int stuck = nodeIndex(world->files[3]);
  const int good = nodeIndex(world->files[0]);
  window_->selectNode(QString::fromStdString(window_->job()->report.nodes(stuck).label()));
  window_->showPage(QStringLiteral("diff"));  // the page computes when it is shown
  window_->diffPage()->setRight(good);
  const DiffModel* diff = window_->diffPage()->model();
  ASSERT_GT(diff->rowCount(), 0);
  EXPECT_GT(diff->worseCount(), 0);
  bool init_state = false;
  for (int r = 0; r < diff->rowCount(); ++r) {
    if (diff->index(r, DiffModel::Field).data().toString() == QStringLiteral("state") &&
        diff->index(r, DiffModel::Left).data().toString().contains(QStringLiteral("INIT"))) {
      init_state = true;
      EXPECT_EQ(diff->index(r, 0).data(DiffModel::DirectionRole).toInt(),
                static_cast<int>(DiffModel::Direction::Worse));
    }
  }
  EXPECT_TRUE(init_state);
  // A node against itself differs in nothing.
  window_->diffPage()->setRight(stuck);
  EXPECT_EQ(diff->rowCount(), 0);
  // Against the job's majority: worked out on a worker (the page says so meanwhile), then
  // the stuck node's INIT ports are worse than the majority's ACTIVE.
  window_->diffPage()->setRight(-1);
  if (window_->diffPage()->majorityPending()) {
    QSignalSpy ready(window_->diffPage(), &DiffPage::majorityReady);
    ASSERT_TRUE(ready.wait(30000));
  }
  EXPECT_FALSE(window_->diffPage()->majorityPending());
  ASSERT_GT(diff->rowCount(), 0);
  EXPECT_GT(diff->worseCount(), 0);
  EXPECT_TRUE(diff->rightName().startsWith(QStringLiteral("majority of 4 nodes")))
      << diff->rightName().toStdString();
}

TEST_F(ConsoleUi, ACollectorKilledMidLoadGivesAnErrorWhileTheWindowKeepsRunning) {
  auto collector = startCollectorWithJob("killed");
  window_->setCollector(world->support(collector->address()), QStringLiteral("acme"));
  // After the first snapshot the collector stops (SIGSTOP: the worker waits on it)...
  std::atomic<bool> stopped{false};
  const pid_t pid = collector->pid();
  window_->setLoadObserver([&](std::size_t done, std::size_t) {
    if (done == 1 && !stopped.exchange(true)) ::kill(pid, SIGSTOP);
  });
  QSignalSpy done(window_.get(), &MainWindow::finished);
  window_->openCollectorJob(QStringLiteral("acme"), QStringLiteral("4242"), false);
  ASSERT_TRUE(QTest::qWaitFor([&] { return stopped.load(); }, 60000));
  // ...and the GUI thread keeps turning: a 10 ms timer fires through the stall.
  int ticks = 0;
  QTimer tick;
  QObject::connect(&tick, &QTimer::timeout, [&] { ++ticks; });
  tick.start(10);
  QTest::qWait(500);
  tick.stop();
  EXPECT_GE(ticks, 20);
  EXPECT_EQ(done.count(), 0);  // still loading, not finished with half a job
  // Then it dies.
  collector->signal(SIGKILL);
  ASSERT_TRUE(waitFinished(done, 60000));
  const JobData* job = window_->job();
  EXPECT_EQ(job->report.nodes_size(), 0);
  ASSERT_EQ(job->errors.size(), 1u);
  EXPECT_THAT(job->errors[0], HasSubstr("stopped answering after 1 of 3 snapshots"));
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_EQ(errors_[0].kind, ErrorKind::CollectorDown) << errors_[0].what.toStdString();
  EXPECT_TRUE(errors_[0].next.contains(QStringLiteral("File > Reload")));
  EXPECT_TRUE(errors_[0].next.contains(QString::fromStdString(collector->address())));
  EXPECT_EQ(collector->waitExit(), 128 + SIGKILL);
}

TEST_F(ConsoleUi, ACollectorThatIsDownIsSaidSoWithWhatToDo) {
  // A port nobody listens on: the collector that was there has exited.
  auto collector = startCollectorWithJob("down");
  const std::string address = collector->address();
  collector->signal(SIGKILL);
  collector->waitExit();
  window_->setCollector(world->support(address), QStringLiteral("acme"));
  const ErrorAdvice error = listingFailure();
  EXPECT_EQ(error.kind, ErrorKind::CollectorDown) << error.what.toStdString();
  EXPECT_TRUE(error.what.contains(QStringLiteral("refused")));
}

TEST_F(ConsoleUi, ACertificateOfAnotherCaIsRefusedWithTheReason) {
  auto collector = startCollectorWithJob("wrongcert");
  const std::string other = world->dir + "/other-pki";
  ASSERT_EQ(run(std::string(IBC_MAKE_PKI) + " " + other + " --support mallory >/dev/null"), 0);
  window_->setCollector({collector->address(), world->ca(), other + "/support/mallory.pem",
                         other + "/support/mallory.key"},
                        QStringLiteral("acme"));
  const ErrorAdvice error = listingFailure();
  EXPECT_EQ(error.kind, ErrorKind::Certificate) << error.what.toStdString();
  EXPECT_TRUE(error.next.contains(QStringLiteral("--cert")));
  EXPECT_TRUE(window_->jobsPage()->statusText().startsWith(QStringLiteral("Could not list jobs")));
}

TEST_F(ConsoleUi, AnAgentCertificateMayNotBrowseAndTheCollectorsReasonIsShown) {
  auto collector = startCollectorWithJob("agentcert");
  window_->setCollector(
      {collector->address(), world->ca(), world->pki() + "/agents/acme/node1720.pem",
       world->pki() + "/agents/acme/node1720.key"},
      QStringLiteral("acme"));
  const ErrorAdvice error = listingFailure();
  EXPECT_EQ(error.kind, ErrorKind::Refused) << error.what.toStdString();
}

// The stuck node's snapshot with one port state edited after signing (same length, so it
// still parses): what a hand-edited file looks like.
std::string tamperedCopy() {
  const std::string in = world->files[3];
  const std::string out = world->dir + "/tampered.ibsnap";
  auto env = core::decodeSnapshotFile(test::readAll(in));
  EXPECT_TRUE(env.ok());
  std::string bytes = env->snapshot();
  const auto at = bytes.find("INIT");
  EXPECT_NE(at, std::string::npos);
  bytes.replace(at, 4, "DOWN");
  env->set_snapshot(bytes);
  std::ofstream(out, std::ios::binary) << core::encodeSnapshotFile(*env);
  return out;
}

TEST_F(ConsoleUi, ATamperedSnapshotIsRefusedWithTheReasonAndNeverShown) {
  const std::string tampered = tamperedCopy();
  for (const std::string& ca : {world->ca(), std::string()}) {
    SCOPED_TRACE(ca.empty() ? "without a CA" : "with the CA");
    errors_.clear();
    openFiles({QString::fromStdString(world->files[0]), QString::fromStdString(tampered)}, ca);
    const JobData* job = window_->job();
    ASSERT_EQ(job->report.nodes_size(), 1);
    EXPECT_EQ(job->report.nodes(0).snapshot_file(), world->files[0]);
    ASSERT_EQ(job->errors.size(), 1u);
    EXPECT_THAT(job->errors[0],
                HasSubstr(tampered + ": REFUSED, the snapshot was changed after it was "
                                     "signed"));
    ASSERT_EQ(errors_.size(), 1u);
    EXPECT_EQ(errors_[0].kind, ErrorKind::Tampered);
    EXPECT_TRUE(errors_[0].next.contains(QStringLiteral("original")));
    EXPECT_TRUE(window_->statusText().contains(QStringLiteral("1 refused or unreadable")));
  }
}

int verifyBundle(const std::string& path) {
  return run(std::string(IBC_BINARY) + " bundle verify " + shellQuote(path) + " --ca " +
             world->ca() + " >/dev/null 2>&1");
}

// The page writes on a worker: waits for its exported() signal; "" when written, else why not.
QString exportAndWait(EscalatePage* page, const std::string& path) {
  QSignalSpy spy(page, &EscalatePage::exported);
  page->exportBundle(QString::fromStdString(path));
  if (spy.isEmpty() && !spy.wait(60000)) return QStringLiteral("no exported() within 60 s");
  return spy.at(0).at(0).toBool() ? QString() : spy.at(0).at(1).toString();
}

TEST_F(ConsoleUi, TheEscalatePageWritesASignedBundleThatIbcollectBundleVerifyAccepts) {
  openFiles(jobFiles(), world->ca());
  const CollectorSettings alice = world->support("");
  window_->showPage(QStringLiteral("escalate"));
  EscalatePage* page = window_->escalatePage();
  page->checkNodes({nodeIndex(world->files[1]), nodeIndex(world->files[3])});
  // Without a certificate nothing is written, and the reason says what is missing.
  const std::string unsigned_path = world->dir + "/nocert.ibbundle";
  const QString refused = exportAndWait(page, unsigned_path);
  EXPECT_TRUE(refused.contains(QStringLiteral("--cert/--key"))) << refused.toStdString();
  EXPECT_FALSE(fs::exists(unsigned_path));
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_EQ(errors_[0].title, QStringLiteral("Bundle not written"));

  window_->setCollector({"", world->ca(), alice.cert_file, alice.key_file}, {});
  const std::string path = world->dir + "/console.ibbundle";
  const QString error = exportAndWait(page, path);
  ASSERT_TRUE(error.isEmpty()) << error.toStdString();
  EXPECT_EQ(verifyBundle(path), 0);
  EXPECT_FALSE(fs::exists(path + ".part"));
  // The CLI reads what the console wrote: the two snapshots, signed by alice.
  const std::string listing = world->dir + "/show.txt";
  ASSERT_EQ(run(std::string(IBC_BINARY) + " bundle show " + path + " > " + listing + " 2>&1"), 0);
  const std::string shown = test::readAll(listing);
  EXPECT_THAT(shown, HasSubstr("CN=alice"));
  EXPECT_THAT(shown, HasSubstr("node1720"));
  EXPECT_THAT(shown, HasSubstr("node1661"));
  // A byte flipped in the written bundle fails the same verify (the test can fail).
  std::string bytes = test::readAll(path);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
  std::ofstream(path + ".flipped", std::ios::binary) << bytes;
  EXPECT_NE(verifyBundle(path + ".flipped"), 0);
}

TEST_F(ConsoleUi, AJobFetchedFromTheCollectorExportsItsSignedEnvelopes) {
  auto collector = startCollectorWithJob("export");
  openJobFrom(*collector);
  if (HasFatalFailure()) return;
  window_->showPage(QStringLiteral("escalate"));
  window_->escalatePage()->checkNodes({0, 1, 2});
  const std::string path = world->dir + "/fetched.ibbundle";
  const QString error = exportAndWait(window_->escalatePage(), path);
  ASSERT_TRUE(error.isEmpty()) << error.toStdString();
  EXPECT_EQ(verifyBundle(path), 0);
  EXPECT_TRUE(window_->statusBar()->currentMessage().startsWith(QStringLiteral("Wrote ")));
}

TEST_F(ConsoleUi, TheEscalatePageCreatesACaseInTheCollectorForTheCheckedNodes) {
  auto collector = startCollectorWithJob("case");
  openJobFrom(*collector);
  if (HasFatalFailure()) return;
  window_->showPage(QStringLiteral("escalate"));
  EscalatePage* page = window_->escalatePage();
  page->checkNodes({0, 1});
  auto* button = page->findChild<QPushButton*>(QStringLiteral("create_case"));
  ASSERT_NE(button, nullptr);
  EXPECT_TRUE(button->isEnabled()) << button->toolTip().toStdString();
  QSignalSpy created(page, &EscalatePage::caseCreated);
  QTest::mouseClick(button, Qt::LeftButton);
  ASSERT_TRUE(created.count() > 0 || created.wait(30000)) << errors_.size();
  const QString id = created.at(0).at(0).toString();
  EXPECT_TRUE(id.startsWith(QStringLiteral("case-"))) << id.toStdString();
  EXPECT_TRUE(window_->statusBar()->currentMessage().contains(id));
  // The button now adds to that case.
  EXPECT_EQ(button->text(), QStringLiteral("Update case ") + id);
  EXPECT_TRUE(page->exportCommand().contains(QStringLiteral("--case ") + id));

  // The collector holds it: the two checked nodes' snapshots, their names, tenant and job.
  auto cases = listCases(world->support(collector->address()), "acme");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 1u);
  const auto& c = cases->front();
  EXPECT_EQ(c.case_id(), id.toStdString());
  EXPECT_EQ(c.job_id(), "4242");
  EXPECT_EQ(c.snapshot_ids_size(), 2);
  for (const int n : {0, 1}) {
    EXPECT_NE(std::find(c.snapshot_ids().begin(), c.snapshot_ids().end(),
                        window_->job()->snapshot_ids[static_cast<std::size_t>(n)]),
              c.snapshot_ids().end());
  }
  EXPECT_EQ(c.nodes_size(), 2);
  EXPECT_EQ(c.created_by(), "alice");

  // Checking the third node and pressing again updates the case: 3 snapshots, revision 2.
  page->checkNodes({0, 1, 2});
  QSignalSpy updated(page, &EscalatePage::caseCreated);
  QTest::mouseClick(button, Qt::LeftButton);
  ASSERT_TRUE(updated.count() > 0 || updated.wait(30000)) << errors_.size();
  EXPECT_EQ(updated.at(0).at(0).toString(), id);
  auto after = listCases(world->support(collector->address()), "acme");
  ASSERT_TRUE(after.ok() && after->size() == 1u);
  EXPECT_EQ(after->front().snapshot_ids_size(), 3);
  EXPECT_EQ(after->front().revision(), 2u);
  EXPECT_TRUE(window_->statusBar()->currentMessage().contains(QStringLiteral("updated")));

  // The jobs page lists it under its job: tenant → job 4242 → case.
  QSignalSpy listed(window_->jobsPage(), &JobsPage::listed);
  window_->jobsPage()->refresh();
  ASSERT_TRUE(listed.wait(60000));
  const QAbstractItemModel* m = window_->jobsPage()->view()->model();
  const auto matches = m->match(m->index(0, 0), Qt::DisplayRole, QStringLiteral("case ") + id, 1,
                                Qt::MatchRecursive | Qt::MatchExactly);
  ASSERT_EQ(matches.size(), 1);
  EXPECT_EQ(matches.front().parent().data().toString(), QStringLiteral("job 4242"));

  // Opened files are not in the collector: the button says how to get a case.
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("escalate"));
  EXPECT_FALSE(button->isEnabled());
  EXPECT_TRUE(button->toolTip().contains(QStringLiteral("open the job from the collector")))
      << button->toolTip().toStdString();
}

// The job's nodes as cloud VMs see them: the same signed snapshots with the virtualization a
// VM's snapshot carries (SYNTHETIC field), re-signed by each node's own certificate; with
// `no_identity`, node1661's GUIDs, MACs and VM id unreadable too. Written once per variant.
QStringList vmJobFiles(bool no_identity = false) {
  const std::string dir = world->dir + (no_identity ? "/vm-noid" : "/vm");
  QStringList out;
  fs::create_directories(dir);
  for (std::size_t i = 0; i < world->files.size(); ++i) {
    const std::string path = dir + "/gpu0" + std::to_string(i + 1) + ".ibsnap";
    out << QString::fromStdString(path);
    if (fs::exists(path)) continue;
    auto env = core::decodeSnapshotFile(test::readAll(world->files[i]));
    EXPECT_TRUE(env.ok());
    auto snap = core::openSnapshot(*env);
    EXPECT_TRUE(snap.ok());
    snap->mutable_node()->set_virtual_machine(true);
    snap->mutable_node()->set_virtualization_evidence("CPU flag hypervisor");
    const std::string node = core::snapshotNodeName(snap->node());
    if (no_identity && node == "node1661") {
      snap->mutable_node()->clear_vm_id();
      for (auto& d : *snap->mutable_devices()) {
        d.clear_node_guid();
        d.clear_sys_image_guid();
        for (auto& p : *d.mutable_ports()) p.clear_port_guid();
      }
      for (auto& n : *snap->mutable_netdevs()) n.clear_address();
    }
    auto signer = core::SnapshotSigner::fromPem(
        test::readAll(world->pki() + "/agents/acme/" + node + ".pem"),
        test::readAll(world->pki() + "/agents/acme/" + node + ".key"));
    EXPECT_TRUE(signer.ok()) << node;
    auto signed_env = signer->sign(*snap);
    EXPECT_TRUE(signed_env.ok());
    std::ofstream(path, std::ios::binary) << core::encodeSnapshotFile(*signed_env);
  }
  return out;
}

// The page computes what the bundle carries on a worker: waits until the plan shown is the
// one for the current checks.
bool waitPlanned(EscalatePage* page) {
  QSignalSpy spy(page, &EscalatePage::planned);
  while (!page->planCurrent()) {
    if (!spy.wait(30000)) return false;
  }
  return true;
}

TEST_F(ConsoleUi, TheEscalatePageDisablesExportWhenNothingIsCheckedAndSaysWhy) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("escalate"));
  EscalatePage* page = window_->escalatePage();
  auto* button = page->findChild<QPushButton*>(QStringLiteral("export_bundle"));
  ASSERT_NE(button, nullptr);
  page->checkNodes({});
  EXPECT_FALSE(button->isEnabled());
  EXPECT_TRUE(button->toolTip().contains(QStringLiteral("Nothing is checked")))
      << button->toolTip().toStdString();
  ASSERT_TRUE(waitPlanned(page));
  EXPECT_EQ(page->membersModel()->rowCount(), 0);
  // Ctrl+E with nothing checked writes nothing and says why.
  QSignalSpy exported(page, &EscalatePage::exported);
  page->exportWithDialog();
  ASSERT_EQ(exported.size(), 1);
  EXPECT_FALSE(exported.at(0).at(0).toBool());
  EXPECT_TRUE(exported.at(0).at(1).toString().contains(QStringLiteral("nothing is checked")));
  page->checkNodes({0});
  EXPECT_TRUE(button->isEnabled());
  EXPECT_TRUE(button->toolTip().contains(QStringLiteral("exactly the 1 checked node")))
      << button->toolTip().toStdString();
}

TEST_F(ConsoleUi, TheEscalatePageListsEveryMemberWithItsSizeAndWritesExactlyThose) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("escalate"));
  EscalatePage* page = window_->escalatePage();
  const int slow = nodeIndex(world->files[1]);
  const int stuck = nodeIndex(world->files[3]);
  page->checkNodes({slow, stuck});
  ASSERT_TRUE(waitPlanned(page));
  const QAbstractItemModel* m = page->membersModel();
  std::map<QString, QString> sizes;
  for (int r = 0; r < m->rowCount(); ++r)
    sizes[m->index(r, BundleMembersModel::Member).data().toString()] =
        m->index(r, BundleMembersModel::Size).data().toString();
  for (const char* name : {"findings.json", "report.md", "pf-inspection.md", "pf-inspection.json",
                           "manifest.json", "manifest.sig", "snapshots/node1661.ibsnap"}) {
    ASSERT_TRUE(sizes.count(QLatin1String(name))) << name;
    EXPECT_FALSE(sizes[QLatin1String(name)].isEmpty()) << name;
  }
  // A snapshot's size is its file's, and it says what logs travel inside it.
  EXPECT_EQ(sizes[QStringLiteral("snapshots/node1661.ibsnap")].toStdString(),
            sizeWords(fs::file_size(world->files[3])));
  const auto contents = m->match(m->index(0, BundleMembersModel::Member), Qt::DisplayRole,
                                 QStringLiteral("snapshots/node1661.ibsnap"));
  ASSERT_EQ(contents.size(), 1);
  const QString inside =
      m->index(contents[0].row(), BundleMembersModel::Contents).data().toString();
  EXPECT_TRUE(inside.contains(QStringLiteral("NCCL log"))) << inside.toStdString();
  EXPECT_TRUE(inside.contains(QStringLiteral("kernel log line"))) << inside.toStdString();
  EXPECT_TRUE(inside.contains(QStringLiteral("1 nccl-tests output"))) << inside.toStdString();
  EXPECT_EQ(sizes.size(), 8u);  // two snapshots and six members: nothing else goes

  // Redacted: the snapshots are left out, the pseudonym map goes beside the bundle.
  auto* redact = page->findChild<QCheckBox*>(QStringLiteral("redact"));
  ASSERT_NE(redact, nullptr);
  redact->setChecked(true);
  ASSERT_TRUE(waitPlanned(page));
  EXPECT_EQ(page->plan().members.size(), 6u);
  EXPECT_TRUE(page->exportCommand().contains(QStringLiteral(" --redact")));
  int left_out = 0;
  for (int r = 0; r < m->rowCount(); ++r)
    left_out += m->index(r, 0).data(BundleMembersModel::LeftOutRole).toBool() ? 1 : 0;
  EXPECT_EQ(left_out, 3);  // two snapshots and the map

  const CollectorSettings alice = world->support("");
  window_->setCollector({"", world->ca(), alice.cert_file, alice.key_file}, {});
  const std::string path = world->dir + "/redacted.ibbundle";
  const QString error = exportAndWait(page, path);
  ASSERT_TRUE(error.isEmpty()) << error.toStdString();
  EXPECT_EQ(verifyBundle(path), 0);
  const std::string map = test::readAll(path + ".pseudonyms.tsv");
  EXPECT_THAT(map, HasSubstr("node1661"));
  auto written = bundle::readBundleArchive(test::readAll(path));
  ASSERT_TRUE(written.ok()) << written.error().message;
  std::set<std::string> names, planned;
  for (const auto& [name, bytes] : *written) names.insert(name);
  for (const auto& p : page->plan().members) planned.insert(p.name);
  EXPECT_EQ(names, planned);
  for (const auto& [name, bytes] : *written) EXPECT_THAT(bytes, Not(HasSubstr("node1661"))) << name;
}

TEST_F(ConsoleUi, SuspectsArePreselectedFirstWithTheirReasonAndAVfWithoutIdentityIsMarked) {
  openFiles(vmJobFiles(/*no_identity=*/true), world->ca());
  window_->showPage(QStringLiteral("escalate"));
  EscalatePage* page = window_->escalatePage();
  const auto& r = window_->job()->report;
  int stuck = -1, slow = -1, healthy = -1;
  for (int i = 0; i < r.nodes_size(); ++i) {
    if (r.nodes(i).snapshot_file().find("gpu04") != std::string::npos) stuck = i;
    if (r.nodes(i).snapshot_file().find("gpu02") != std::string::npos) slow = i;
    if (r.nodes(i).snapshot_file().find("gpu01") != std::string::npos) healthy = i;
  }
  const QList<int> checked = page->checkedNodes();
  EXPECT_TRUE(checked.contains(stuck));
  EXPECT_TRUE(checked.contains(slow));
  EXPECT_FALSE(checked.contains(healthy));
  const QString stuck_text = page->nodeText(stuck);
  EXPECT_TRUE(stuck_text.contains(QStringLiteral("suspect: subnet manager: PORT_NOT_ACTIVE_SM")))
      << stuck_text.toStdString();
  EXPECT_TRUE(stuck_text.contains(
      QStringLiteral("the host cannot find this VF: ask the customer for its GUID/MAC/VM id")))
      << stuck_text.toStdString();
  const QString slow_text = page->nodeText(slow);
  EXPECT_TRUE(slow_text.contains(QStringLiteral("suspect: physical link or device: ")))
      << slow_text.toStdString();
  // Suspects are listed first.
  auto* list = page->findChild<QListView*>(QStringLiteral("escalate_nodes"));
  ASSERT_NE(list, nullptr);
  QAbstractItemModelTester tester(list->model(),
                                  QAbstractItemModelTester::FailureReportingMode::Fatal);
  for (int row = 0; row < checked.size(); ++row)
    EXPECT_EQ(list->model()->index(row, 0).data(Qt::CheckStateRole).toInt(), Qt::Checked) << row;
  // The runbook pane is the bundle's pf-inspection.md of the checked nodes.
  ASSERT_TRUE(waitPlanned(page));
  EXPECT_TRUE(page->runbookMarkdown().contains(QStringLiteral("node1661")));
  EXPECT_GT(page->plan().suspects, 0);
}

TEST_F(ConsoleUi, TheCommandHasTheRealJobIdAndTheJobsExistingCaseIsShownNotDuplicated) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("escalate"));
  EscalatePage* page = window_->escalatePage();
  page->checkNodes({0, 1});
  EXPECT_TRUE(page->exportCommand().contains(QStringLiteral("-o job4242.ibbundle")))
      << page->exportCommand().toStdString();
  EXPECT_FALSE(page->exportCommand().contains(QStringLiteral("<JOB>")));
  EXPECT_TRUE(page->hostCommand().contains(QStringLiteral("--bundle job4242.ibbundle")));

  auto collector = startCollectorWithJob("existing-case");
  openJobFrom(*collector);
  if (HasFatalFailure()) return;
  window_->showPage(QStringLiteral("escalate"));
  page->checkNodes({0, 1});
  EXPECT_TRUE(page->exportCommand().contains(QStringLiteral("--job 4242 --tenant acme")))
      << page->exportCommand().toStdString();
  // A case of the job made elsewhere (the CLI): the page shows it and updates it.
  const std::string made = world->dir + "/case-create.txt";
  ASSERT_EQ(run(std::string(IBC_BINARY) + " case create --tenant acme --job 4242 --title t " +
                "--node node1661 --code PORT_NOT_ACTIVE_SM --collector " + collector->address() +
                " --ca " + world->ca() + " --cert " + world->pki() + "/support/alice.pem --key " +
                world->pki() + "/support/alice.key > " + made + " 2>&1"),
            0)
      << test::readAll(made);
  QSignalSpy listed(page, &EscalatePage::casesListed);
  QSignalSpy reopened(window_.get(), &MainWindow::finished);
  window_->openCollectorJob(QStringLiteral("acme"), QStringLiteral("4242"), false);
  ASSERT_TRUE(waitFinished(reopened));
  window_->showPage(QStringLiteral("escalate"));
  // (An answer for the first opening may still arrive: it is dropped.)
  while (!page->existingCase().has_value() && listed.wait(30000)) {
  }
  ASSERT_TRUE(page->existingCase().has_value());
  EXPECT_TRUE(listed.last().at(0).toBool());
  page->checkNodes({0, 1});
  const QString id = QString::fromStdString(page->existingCase()->case_id());
  auto* button = page->findChild<QPushButton*>(QStringLiteral("create_case"));
  EXPECT_EQ(button->text(), QStringLiteral("Update case ") + id);
  EXPECT_TRUE(page->exportCommand().contains(QStringLiteral("--case ") + id));
  auto* label = page->findChild<QLabel*>(QStringLiteral("existing_case"));
  EXPECT_TRUE(label->text().contains(id)) << label->text().toStdString();
  page->checkNodes({0, 1, 2});
  QSignalSpy updated(page, &EscalatePage::caseCreated);
  QTest::mouseClick(button, Qt::LeftButton);
  ASSERT_TRUE(updated.count() > 0 || updated.wait(30000)) << errors_.size();
  auto cases = listCases(world->support(collector->address()), "acme");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  EXPECT_EQ(cases->size(), 1u);  // updated, never a second case
  EXPECT_EQ(cases->front().snapshot_ids_size(), 3);
}

QAction* action(QWidget* window, const char* name) {
  return window->findChild<QAction*>(QLatin1String(name));
}

TEST_F(ConsoleUi, ReloadReadsTheSameFilesAgainAndFindGoesToTheGridFilter) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("node"));
  QSignalSpy again(window_.get(), &MainWindow::finished);
  action(window_.get(), "reload")->trigger();
  ASSERT_TRUE(again.wait(60000));
  EXPECT_EQ(window_->job()->report.nodes_size(), 4);
  EXPECT_TRUE(window_->statusText().startsWith(QStringLiteral("4 node(s)")));
  action(window_.get(), "find")->trigger();
  auto* tabs = window_->findChild<QTabWidget*>(QString(), Qt::FindDirectChildrenOnly);
  EXPECT_EQ(tabs->currentWidget(), window_->gridPage());
  EXPECT_EQ(window_->focusWidget(), window_->gridPage()->filterEdit());
}

TEST_F(ConsoleUi, NothingToReloadIsSaidAndTheConnectionIsOnTheStatusBar) {
  action(window_.get(), "reload")->trigger();
  EXPECT_TRUE(
      window_->statusBar()->currentMessage().startsWith(QStringLiteral("Nothing to reload")));
  EXPECT_EQ(window_->connectionText(), QStringLiteral("offline"));
  window_->setCollector(world->support("127.0.0.1:7070"), QStringLiteral("acme"));
  EXPECT_EQ(window_->connectionText(),
            QStringLiteral("collector 127.0.0.1:7070 as alice, tenant acme (not contacted yet)"));
  // Nothing listens there: the status bar says so until a listing works (issue 22).
  QSignalSpy failed(window_->jobsPage(), &JobsPage::listFailed);
  window_->jobsPage()->refresh();
  ASSERT_TRUE(failed.wait(20000));
  EXPECT_TRUE(window_->connectionText().startsWith(
      QStringLiteral("collector 127.0.0.1:7070 NOT connected: ")))
      << window_->connectionText().toStdString();
  EXPECT_EQ(errors_.size(), 1u);
}

// Issue 22: desktop habits. Enter on a grid row opens its node on the node page; the row's
// context menu opens the node and filters by the value under the cursor.
TEST_F(ConsoleUi, EnterOnAGridRowAndTheContextMenuOpenTheNodeAndFilterByTheValue) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("grid"));
  QTableView* grid = window_->gridPage()->view();
  const int stuck = nodeIndex(world->files[3]);
  int row = -1;
  for (int r = 0; r < grid->model()->rowCount(); ++r) {
    if (grid->model()->index(r, NodeGridModel::Node).data(NodeGridModel::NodeIndexRole).toInt() ==
        stuck)
      row = r;
  }
  ASSERT_GE(row, 0);
  grid->setFocus();
  grid->setCurrentIndex(grid->model()->index(row, NodeGridModel::State));
  window_->showPage(QStringLiteral("grid"));
  QTest::keyClick(grid, Qt::Key_Return);
  auto* tabs = window_->findChild<QTabWidget*>(QString(), Qt::FindDirectChildrenOnly);
  EXPECT_EQ(tabs->currentWidget(), window_->nodePage());
  EXPECT_EQ(window_->nodePage()->currentNode(), stuck);

  window_->showPage(QStringLiteral("grid"));
  const QModelIndex state = grid->model()->index(row, NodeGridModel::State);
  QMenu* menu = window_->gridPage()->contextMenuFor(state);
  auto* filter = menu->findChild<QAction*>(QStringLiteral("filter-value"));
  ASSERT_NE(filter, nullptr);
  const QString value = state.data().toString();
  filter->trigger();
  EXPECT_TRUE(window_->gridPage()->filterEdit()->text().startsWith(QStringLiteral("state=")));
  ASSERT_GT(grid->model()->rowCount(), 0);
  for (int r = 0; r < grid->model()->rowCount(); ++r)
    EXPECT_EQ(grid->model()->index(r, NodeGridModel::State).data().toString(), value);
  auto* open = menu->findChild<QAction*>(QStringLiteral("open-node"));
  ASSERT_NE(open, nullptr);
  window_->showPage(QStringLiteral("findings"));
  open->trigger();
  EXPECT_EQ(tabs->currentWidget(), window_->nodePage());
  delete menu;
}

// Files dropped on the window open like File > Open; what was opened is offered again under
// File > Open Recent once the window remembers (restoreSettings).
TEST_F(ConsoleUi, DroppedFilesOpenAndAreOfferedAgainUnderOpenRecent) {
  QSettings().clear();
  window_->restoreSettings();
  QMimeData mime;
  QList<QUrl> urls;
  for (const QString& f : jobFiles()) urls << QUrl::fromLocalFile(f);
  mime.setUrls(urls);
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &enter);
  EXPECT_TRUE(enter.isAccepted());
  QSignalSpy done(window_.get(), &MainWindow::finished);
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &drop);
  ASSERT_TRUE(waitFinished(done));
  EXPECT_EQ(window_->job()->report.nodes_size(), static_cast<int>(world->files.size()));
  ASSERT_EQ(window_->recentFiles().size(), 1);
  EXPECT_EQ(window_->recentFiles().front().split(QLatin1Char('\n')).size(), jobFiles().size());
  auto* recent = window_->findChild<QMenu*>(QStringLiteral("recent"));
  ASSERT_NE(recent, nullptr);
  ASSERT_EQ(recent->actions().size(), 1);
  QSignalSpy again(window_.get(), &MainWindow::finished);
  recent->actions().front()->trigger();
  ASSERT_TRUE(waitFinished(again));
  EXPECT_EQ(window_->job()->report.nodes_size(), static_cast<int>(world->files.size()));
  QSettings().clear();
}

// The stuck node's PORT_NOT_ACTIVE_SM group on the findings page: its node row and the row of
// its second port (mlx5_8 port 1, not the one the window opens on).
struct StuckRows {
  QModelIndex node;
  QModelIndex second_port;
};
StuckRows stuckRows(const QAbstractItemModel* m) {
  for (int g = 0; g < m->rowCount(); ++g) {
    const QModelIndex group = m->index(g, 0);
    if (group.data(FindingsModel::CodeRole).toString() != QStringLiteral("PORT_NOT_ACTIVE_SM"))
      continue;
    const QModelIndex node = m->index(0, 0, group);
    return {node, m->index(1, 0, node)};
  }
  return {};
}

TEST_F(ConsoleUi, FindingsOpenOnTheWorstGroupAndAPortRowSelectsItsPortAndStaysSelected) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("findings"));
  FindingsPage* page = window_->findingsPage();
  QTreeView* view = page->view();
  const StuckRows rows = stuckRows(view->model());
  ASSERT_TRUE(rows.second_port.isValid());
  // Opened on the most severe group, expanded, its first node selected.
  EXPECT_EQ(view->currentIndex().siblingAtColumn(0), rows.node);
  EXPECT_TRUE(view->isExpanded(rows.node.parent()));
  EXPECT_TRUE(page->detail()->toPlainText().contains(QStringLiteral("Also on this node")));
  const int node = rows.second_port.data(FindingsModel::NodeIndexRole).toInt();
  ASSERT_EQ(node, nodeIndex(world->files[3]));
  ASSERT_EQ(rows.second_port.siblingAtColumn(FindingsModel::Where).data().toString(),
            QStringLiteral("mlx5_8 port 1"));

  view->setFocus();
  view->expand(rows.node);
  view->setCurrentIndex(rows.second_port);  // as a click does
  EXPECT_EQ(window_->nodePage()->currentNode(), node);
  EXPECT_EQ(window_->nodePage()->currentPort(), QStringLiteral("mlx5_8 port 1"));
  QTableView* grid = window_->gridPage()->view();
  EXPECT_EQ(grid->currentIndex().siblingAtColumn(NodeGridModel::Device).data().toString(),
            QStringLiteral("mlx5_8"));
  // The window's selection came back to the page: the engineer's row stays selected.
  EXPECT_EQ(view->currentIndex().siblingAtColumn(0), rows.second_port);
  // The detail pane is that port's finding only.
  const QString detail = page->detail()->toPlainText();
  EXPECT_TRUE(detail.contains(QStringLiteral("mlx5_8 port 1"))) << detail.toStdString();
  EXPECT_FALSE(detail.contains(QStringLiteral("LINK_RATE_BELOW_EXPECTED")));
}

TEST_F(ConsoleUi, CtrlCOnAFindingCopiesItWithItsEvidenceAndNextStep) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("findings"));
  QTreeView* view = window_->findingsPage()->view();
  const StuckRows rows = stuckRows(view->model());
  ASSERT_TRUE(rows.second_port.isValid());
  view->expand(rows.node);
  view->setCurrentIndex(rows.second_port);
  view->setFocus();
  QApplication::clipboard()->clear();
  QTest::keySequence(view, QKeySequence::Copy);
  const QString text = QApplication::clipboard()->text();
  const int fi = rows.second_port.data(FindingsModel::FindingIndexRole).toInt();
  const auto& f = window_->job()->report.findings(fi);
  EXPECT_TRUE(
      text.startsWith(QStringLiteral("CRITICAL PORT_NOT_ACTIVE_SM on node1661 mlx5_8 port 1")))
      << text.toStdString();
  EXPECT_TRUE(text.contains(QString::fromStdString(f.summary())));
  ASSERT_GT(f.evidence_size(), 0);
  for (const auto& e : f.evidence())
    EXPECT_TRUE(text.contains(QStringLiteral("  ") + QString::fromStdString(e))) << e;
  EXPECT_TRUE(text.contains(QStringLiteral("Next step: ") + QString::fromStdString(f.action())));
  // Only that finding: not its sibling port's.
  EXPECT_EQ(text.count(QStringLiteral("PORT_NOT_ACTIVE_SM")), 1);
}

TEST_F(ConsoleUi, TheFindingsContextMenuCopiesTheNodeNameAndOpensTheNode) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("findings"));
  FindingsPage* page = window_->findingsPage();
  QTreeView* view = page->view();
  EXPECT_EQ(view->contextMenuPolicy(), Qt::ActionsContextMenu);
  QStringList texts;
  for (QAction* a : view->actions()) texts << a->text();
  EXPECT_EQ(texts, (QStringList{QStringLiteral("Copy finding with evidence"),
                                QStringLiteral("Copy node name"), QStringLiteral("Open node")}));
  EXPECT_EQ(page->copyFindingAction()->shortcut(), QKeySequence(QKeySequence::Copy));

  const StuckRows rows = stuckRows(view->model());
  ASSERT_TRUE(rows.second_port.isValid());
  view->expand(rows.node);
  view->setCurrentIndex(rows.second_port);
  QApplication::clipboard()->clear();
  page->copyNodeAction()->trigger();
  EXPECT_EQ(QApplication::clipboard()->text(), QStringLiteral("node1661"));

  const int node = nodeIndex(world->files[3]);
  QSignalSpy open(page, &FindingsPage::openNodeRequested);
  page->openNodeAction()->trigger();
  ASSERT_EQ(open.count(), 1);
  EXPECT_EQ(open.front().at(0).toInt(), node);
  EXPECT_EQ(open.front().at(1).toString(), QStringLiteral("mlx5_8"));
  EXPECT_EQ(open.front().at(2).toInt(), 1);
  // The window shows it on the node page, on that port.
  auto* tabs = window_->findChild<QTabWidget*>(QString(), Qt::FindDirectChildrenOnly);
  EXPECT_EQ(tabs->currentWidget(), window_->nodePage());
  EXPECT_EQ(window_->nodePage()->currentNode(), node);
  EXPECT_EQ(window_->nodePage()->currentPort(), QStringLiteral("mlx5_8 port 1"));
  window_->showPage(QStringLiteral("findings"));
  // Enter on a finding opens its node too; on a group it does not.
  view->setFocus();
  QTest::keyClick(view, Qt::Key_Return);
  EXPECT_EQ(open.count(), 2);
  view->setCurrentIndex(rows.node.parent());
  EXPECT_FALSE(page->copyNodeAction()->isEnabled());
  EXPECT_FALSE(page->openNodeAction()->isEnabled());
  page->openNodeAction()->trigger();
  EXPECT_EQ(open.count(), 2);
}

// Issue 22: the findings page's filter box speaks the grid's language; a typo marks the
// box and shows nothing.
TEST_F(ConsoleUi, TheFindingsFilterHidesWhatDoesNotHoldAndATypoShowsNothing) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("findings"));
  FindingsPage* page = window_->findingsPage();
  QTreeView* view = page->view();
  QAbstractItemModel* m = view->model();  // the page's filter over the findings
  QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  auto shownGroups = [&] {
    QStringList out;
    for (int g = 0; g < m->rowCount(); ++g)
      out << m->index(g, 0).data(FindingsModel::CodeRole).toString();
    return out;
  };
  const int groups = m->rowCount();
  ASSERT_GT(groups, 1);
  page->setFilterText(QStringLiteral("code=PORT_NOT_ACTIVE_SM"));
  EXPECT_EQ(shownGroups(), QStringList{QStringLiteral("PORT_NOT_ACTIVE_SM")});
  // A kept node brings its port rows.
  const QModelIndex group = m->index(0, 0);
  ASSERT_GT(m->rowCount(group), 0);
  EXPECT_GT(m->rowCount(m->index(0, 0, group)), 0);
  page->setFilterText(QStringLiteral("severity>=critical"));
  ASSERT_GT(m->rowCount(), 0);
  for (int g = 0; g < m->rowCount(); ++g)
    EXPECT_EQ(m->index(g, 0).data(FindingsModel::SeverityRole).toInt(), 3);
  // A node glob keeps only that node's rows, in every group it is in.
  page->setFilterText(QStringLiteral("node1661"));
  ASSERT_FALSE(shownGroups().isEmpty());
  for (int g = 0; g < m->rowCount(); ++g) {
    const QModelIndex kept = m->index(g, 0);
    for (int r = 0; r < m->rowCount(kept); ++r)
      EXPECT_EQ(m->index(r, FindingsModel::Node, kept).data().toString().left(8),
                QStringLiteral("node1661"));
  }
  // Selecting a kept row still selects its node everywhere.
  view->setCurrentIndex(m->index(0, 0, m->index(0, 0)));
  EXPECT_EQ(window_->nodePage()->currentNode(),
            m->index(0, 0, m->index(0, 0)).data(FindingsModel::NodeIndexRole).toInt());
  page->setFilterText(QStringLiteral("severity>=urgent"));
  EXPECT_TRUE(shownGroups().isEmpty());
  EXPECT_FALSE(page->filterEdit()->error().isEmpty());
  page->setFilterText(QString());
  EXPECT_EQ(shownGroups().size(), groups);
  EXPECT_TRUE(page->filterEdit()->error().isEmpty());
}

// A job without a finding says so instead of leaving the pages blank.
TEST_F(ConsoleUi, AJobWithoutAFindingSaysAllItsNodesAreOk) {
  // The healthy capture alone, with nothing else to compare it with.
  const JobData one = loadSnapshotFiles({world->files[0]});
  if (one.report.findings_size() > 0) GTEST_SKIP() << "the healthy capture has findings";
  openFiles({QString::fromStdString(world->files[0])}, world->ca());
  window_->showPage(QStringLiteral("grid"));
  const auto* summary = window_->gridPage()->findChild<QLabel*>();
  ASSERT_NE(summary, nullptr);
  bool said = false;
  for (auto* l : window_->gridPage()->findChildren<QLabel*>())
    said = said || l->text().contains(QStringLiteral("All 1 node(s) OK"));
  EXPECT_TRUE(said);
  window_->showPage(QStringLiteral("findings"));
  EXPECT_TRUE(window_->findingsPage()->detail()->toPlainText().contains(
      QStringLiteral("All 1 node(s) OK")));
}

// A click on a chart's outlier selects that node on every page (the window wires every
// page's nodeSelected).
TEST_F(ConsoleUi, AClickOnAChartsOutlierSelectsItsNodeOnEveryPage) {
  openFiles(jobFiles(), world->ca());
  window_->showPage(QStringLiteral("charts"));
  ChartsPage* page = window_->chartsPage();
  page->setMode(ChartsPage::BusbwPerNode);
  if (page->outlierList()->count() == 0) GTEST_SKIP() << "no busbw outlier in this job";
  const int node = page->outlierList()->item(0)->data(Qt::UserRole).toInt();
  const QRect item = page->outlierList()->visualItemRect(page->outlierList()->item(0));
  QTest::mouseClick(page->outlierList()->viewport(), Qt::LeftButton, {}, item.center());
  EXPECT_EQ(window_->nodePage()->currentNode(), node);
  EXPECT_EQ(gridCurrentNode(), node);
}

}  // namespace
}  // namespace ibc::console

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  namespace fs = std::filesystem;
  char dir_template[] = "/tmp/ibc-console-ui-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) return 1;
  // Settings of this run only, never the user's.
  QCoreApplication::setOrganizationName(QStringLiteral("ibcollect-test"));
  QCoreApplication::setApplicationName(QStringLiteral("ibcollect-console"));
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope,
                     QString::fromUtf8(dir) + QStringLiteral("/settings"));
  ibc::console::World world{dir, {}};
  const std::string make = std::string(IBC_SOURCE_DIR) + "/tests/integration/console_make_job.sh " +
                           world.dir + " " + IBC_BUILD_DIR;
  if (ibc::console::run(make) != 0) {
    std::fprintf(stderr, "console_make_job.sh failed\n");
    return 1;
  }
  for (int i = 1; i <= 4; ++i)
    world.files.push_back(world.dir + "/gpu0" + std::to_string(i) + ".ibsnap");
  ibc::console::world = &world;
  const int rc = RUN_ALL_TESTS();
  std::error_code ec;
  fs::remove_all(world.dir, ec);
  return rc;
}

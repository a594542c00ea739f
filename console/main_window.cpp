#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPointer>
#include <QProgressDialog>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QThread>
#include <QThreadPool>
#include <QUrl>
#include <algorithm>
#include <chrono>

#include "ibc/console/job_loader.h"
#include "ibc/os/os.h"
#include "pages/charts_page.h"
#include "pages/diff_page.h"
#include "pages/escalate_page.h"
#include "pages/findings_page.h"
#include "pages/grid_page.h"
#include "pages/jobs_page.h"
#include "pages/node_page.h"
#include "pages/page_registry.h"
#include "widgets/filter_edit.h"

namespace ibc::console {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("ibcollect console"));
  setAcceptDrops(true);
  loader_ = new JobLoader(this);
  tabs_ = new QTabWidget(this);
  for (Page* page : createPages(tabs_)) {
    pages_.push_back({page, false, false});
    tabs_->addTab(page, page->pageTitle());
    connect(page, &Page::nodeSelected, this, &MainWindow::select);
    connect(page, &Page::openNodeRequested, this,
            [this](int node, const QString& device, int port) {
              select(node, device, port);
              showPage(QStringLiteral("node"));
            });
    connect(page, &Page::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message); });
    connect(page, &Page::failed, this, [this](const ErrorAdvice& advice) {
      if (error_sink_) error_sink_(advice);
    });
  }
  setCentralWidget(tabs_);
  connect(tabs_, &QTabWidget::currentChanged, this, [this] { applyPending(); });
  connect(loader_, &JobLoader::loaded, this, &MainWindow::setJob);

  createMenus();
  connection_ = new QLabel(this);
  statusBar()->addPermanentWidget(connection_);
  updateConnection();

  error_sink_ = [this](const ErrorAdvice& advice) {
    auto* box =
        new QMessageBox(QMessageBox::Warning, advice.title, advice.title, QMessageBox::Ok, this);
    box->setInformativeText(advice.next);
    box->setDetailedText(advice.what);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setModal(false);
    box->show();
  };
  // The jobs page holds the collector connection; the escalate page creates cases over it.
  JobsPage* jobs = jobsPage();
  connect(jobs, &JobsPage::listFailed, this, [this, jobs](const QString& message) {
    connection_tried_ = true;
    connection_problem_ = message;
    updateConnection();
    reportErrors({message.toStdString()},
                 tr("the collector at %1").arg(QString::fromStdString(jobs->settings().endpoint)));
  });
  connect(jobs, &JobsPage::listed, this, [this](bool ok) {
    connection_tried_ = true;
    if (ok) connection_problem_.clear();
    updateConnection();
    // The connection that worked is the one to offer next time.
    if (ok && remember_) saveSettings();
  });
  connect(jobs, &JobsPage::openFilesRequested, this,
          [this](const QStringList& files) { openFiles(files); });
  connect(jobs, &JobsPage::openJob, this,
          [this](const QString& tenant, const QString& job) { openCollectorJob(tenant, job); });
  escalatePage()->setCredentialSource([jobs] { return jobs->settings(); });
  statusBar()->showMessage(
      tr("Open .ibsnap files or .ibbundle bundles (File > Open, or drop "
         "them here) or pass them on the command line"));
}

MainWindow::~MainWindow() = default;

GridPage* MainWindow::gridPage() const { return page<GridPage>(); }
DiffPage* MainWindow::diffPage() const { return page<DiffPage>(); }
ChartsPage* MainWindow::chartsPage() const { return page<ChartsPage>(); }
FindingsPage* MainWindow::findingsPage() const { return page<FindingsPage>(); }
NodePage* MainWindow::nodePage() const { return page<NodePage>(); }
EscalatePage* MainWindow::escalatePage() const { return page<EscalatePage>(); }
JobsPage* MainWindow::jobsPage() const { return page<JobsPage>(); }

const JobData* MainWindow::job() const { return job_ ? job_->data.get() : nullptr; }

void MainWindow::setLoadObserver(LoadObserver observer) {
  loader_->setObserver(std::move(observer));
}

void MainWindow::createMenus() {
  // Names are stable (objectName): tests find the actions by them.
  auto add = [this](QMenu* menu, const char* name, const QString& text, const QKeySequence& key,
                    auto slot) {
    auto* a = menu->addAction(text);
    a->setObjectName(QLatin1String(name));
    a->setShortcut(key);
    connect(a, &QAction::triggered, this, slot);
    return a;
  };
  auto* file = menuBar()->addMenu(tr("&File"));
  add(file, "open", tr("&Open snapshots..."), QKeySequence::Open, [this] {
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Open snapshots or bundles"), {},
        tr("Snapshots and bundles (*.ibsnap *.ibbundle);;All files (*)"));
    if (!files.isEmpty()) openFiles(files);
  });
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  recent_menu_->setObjectName(QStringLiteral("recent"));
  updateRecentMenu();
  add(file, "connect", tr("&Connect to collector..."), QKeySequence(tr("Ctrl+K")), [this] {
    // The jobs page holds the connection: address, CA, certificate, key, tenant.
    showPage(QStringLiteral("jobs"));
    jobsPage()->collectorEdit()->setFocus();
    if (!jobsPage()->settings().endpoint.empty() && !jobsPage()->tenant().isEmpty())
      jobsPage()->refresh();
  });
  add(file, "reload", tr("&Reload"), QKeySequence(Qt::Key_F5), [this] { reload(); });
  file->addSeparator();
  add(file, "export", tr("&Export bundle..."), QKeySequence(tr("Ctrl+E")), [this] {
    showPage(QStringLiteral("escalate"));
    escalatePage()->exportWithDialog();
  });
  file->addSeparator();
  add(file, "quit", tr("&Quit"), QKeySequence(tr("Ctrl+Q")), [this] { close(); });
  auto* edit = menuBar()->addMenu(tr("&Edit"));
  add(edit, "find", tr("&Find..."), QKeySequence::Find, [this] {
    // The grid's filter box (node glob, severity, code, counter > N); on the jobs page, its
    // search box.
    if (tabs_->currentWidget() == jobsPage()) {
      jobsPage()->searchEdit()->setFocus();
      jobsPage()->searchEdit()->selectAll();
      return;
    }
    showPage(QStringLiteral("grid"));
    gridPage()->filterEdit()->setFocus();
    gridPage()->filterEdit()->selectAll();
  });
  auto* view = menuBar()->addMenu(tr("&View"));
  const QStringList names = pageNames();
  for (int i = 0; i < names.size(); ++i) {
    auto* a = view->addAction(tabs_->tabText(i));
    a->setShortcut(QKeySequence(QStringLiteral("Alt+%1").arg(i + 1)));
    connect(a, &QAction::triggered, this, [this, i] { tabs_->setCurrentIndex(i); });
  }
}

void MainWindow::reload() {
  if (last_load_) {
    // A copy: the load replaces last_load_ while it runs.
    const auto again = last_load_;
    again();
  } else {
    statusBar()->showMessage(tr("Nothing to reload: open files or a collector's job first"));
  }
}

QString MainWindow::connectionText() const {
  const CollectorSettings s = jobsPage()->settings();
  if (s.endpoint.empty()) return tr("offline");
  const QString endpoint = QString::fromStdString(s.endpoint);
  // Only what is known: a listing that failed says so until one works.
  if (!connection_problem_.isEmpty())
    return tr("collector %1 NOT connected: %2").arg(endpoint, connection_problem_.left(80));
  QString who = QFileInfo(QString::fromStdString(s.cert_file)).completeBaseName();
  const QString text =
      tr("collector %1 as %2, tenant %3")
          .arg(endpoint, who.isEmpty() ? tr("(no certificate)") : who,
               jobsPage()->tenant().isEmpty() ? tr("(none)") : jobsPage()->tenant());
  return connection_tried_ ? text : text + tr(" (not contacted yet)");
}

void MainWindow::updateConnection() { connection_->setText(connectionText()); }

void MainWindow::restoreSettings() {
  remember_ = true;
  updateRecentMenu();
  QSettings settings;
  if (settings.contains(QStringLiteral("window/geometry")))
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  if (settings.contains(QStringLiteral("window/state")))
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  const int tab = settings.value(QStringLiteral("window/page"), -1).toInt();
  if (tab >= 0 && tab < tabs_->count()) tabs_->setCurrentIndex(tab);
  // The last connection, unless the command line gave one.
  if (jobsPage()->settings().endpoint.empty() &&
      settings.contains(QStringLiteral("collector/endpoint"))) {
    auto v = [&settings](const char* key) {
      return settings.value(QLatin1String(key)).toString().toStdString();
    };
    setCollector(
        {v("collector/endpoint"), v("collector/ca"), v("collector/cert"), v("collector/key")},
        settings.value(QStringLiteral("collector/tenant")).toString());
  }
}

void MainWindow::saveSettings() const {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  settings.setValue(QStringLiteral("window/page"), tabs_->currentIndex());
  const CollectorSettings s = jobsPage()->settings();
  if (!s.endpoint.empty()) {
    settings.setValue(QStringLiteral("collector/endpoint"), QString::fromStdString(s.endpoint));
    settings.setValue(QStringLiteral("collector/ca"), QString::fromStdString(s.ca_file));
    settings.setValue(QStringLiteral("collector/cert"), QString::fromStdString(s.cert_file));
    settings.setValue(QStringLiteral("collector/key"), QString::fromStdString(s.key_file));
    settings.setValue(QStringLiteral("collector/tenant"), jobsPage()->tenant());
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (remember_) saveSettings();
  QMainWindow::closeEvent(event);
}

QStringList MainWindow::pageNames() const {
  QStringList names;
  for (const Slot& s : pages_) names << s.page->pageName();
  return names;
}

Page* MainWindow::pageNamed(const QString& name) const {
  for (const Slot& s : pages_) {
    if (s.page->pageName() == name) return s.page;
  }
  return nullptr;
}

bool MainWindow::showPage(const QString& name) {
  const int i = static_cast<int>(pageNames().indexOf(name));
  if (i < 0) return false;
  tabs_->setCurrentIndex(i);
  return true;
}

void MainWindow::openFiles(const QStringList& files, bool show_progress) {
  last_load_ = [this, files] { openFiles(files); };
  rememberFiles(files);
  std::vector<std::string> paths;
  QStringList dirs;
  for (const QString& f : files) {
    paths.push_back(f.toStdString());
    const QString dir = QFileInfo(f).absolutePath();
    if (!dirs.contains(dir)) dirs << dir;
  }
  const std::string origin =
      tr("%1 file(s) in %2").arg(files.size()).arg(dirs.join(QStringLiteral(", "))).toStdString();
  const std::string ca_file = jobsPage()->settings().ca_file;
  load(
      [paths, origin, ca_file](const std::function<void(std::size_t, std::size_t)>& progress,
                               const std::atomic<bool>* cancel) {
        // With a CA the signatures are checked as `ibcollect verify` does; without one, only
        // that the bytes are as signed (the trust words say so).
        std::unique_ptr<core::SignatureVerifier> verifier;
        if (!ca_file.empty()) {
          constexpr std::size_t kMaxPemBytes = 1u << 20;  // a CA bundle is a few KiB
          auto pem = os::RootedFilesystem("").readFile(ca_file, kMaxPemBytes);
          auto v = pem.ok() ? core::SignatureVerifier::fromPem(*pem)
                            : core::Result<std::unique_ptr<core::SignatureVerifier>>(pem.error());
          if (!v.ok()) {
            JobData failed;
            failed.errors.push_back("--ca " + (pem.ok() ? ca_file + ": " : std::string()) +
                                    v.error().message);
            failed.origin = origin;
            return failed;
          }
          verifier = std::move(*v);
        }
        JobData job = loadSnapshotFiles(paths, {}, progress, cancel, verifier.get());
        job.origin = origin;
        return job;
      },
      tr("Reading %1 snapshot(s) from %2...")
          .arg(files.size())
          .arg(dirs.join(QStringLiteral(", "))),
      static_cast<int>(files.size()), show_progress);
}

void MainWindow::setCollector(const CollectorSettings& settings, const QString& tenant) {
  jobsPage()->setSettings(settings, tenant);
  connection_tried_ = false;
  connection_problem_.clear();
  updateConnection();
}

void MainWindow::openCollectorJob(const QString& tenant, const QString& job_id,
                                  bool show_progress) {
  last_load_ = [this, tenant, job_id] { openCollectorJob(tenant, job_id); };
  const CollectorSettings settings = jobsPage()->settings();
  escalatePage()->setCollector(settings);
  load(
      [settings, tenant = tenant.toStdString(), job_id = job_id.toStdString()](
          const std::function<void(std::size_t, std::size_t)>& progress,
          const std::atomic<bool>* cancel) {
        auto fetched = fetchJob(settings, tenant, job_id, false, progress, cancel);
        if (fetched.ok()) return std::move(*fetched);
        JobData failed;
        failed.errors.push_back(fetched.error().message);
        failed.origin = "collector " + settings.endpoint + ", tenant " + tenant + ", job " + job_id;
        return failed;
      },
      tr("Fetching job %1 of %2 from the collector at %3...")
          .arg(job_id, tenant, QString::fromStdString(settings.endpoint)),
      0, show_progress);
  // Once it is here, the grid is what the engineer wants to see.
  connect(
      this, &MainWindow::finished, this,
      [this] {
        if (job() != nullptr && job()->report.nodes_size() > 0) showPage(QStringLiteral("grid"));
      },
      Qt::SingleShotConnection);
}

void MainWindow::load(std::function<JobData(const std::function<void(std::size_t, std::size_t)>&,
                                            const std::atomic<bool>*)>
                          work,
                      const QString& what, int total, bool show_progress) {
  if (show_progress) {
    auto* progress = new QProgressDialog(what, tr("Cancel"), 0, total, this);
    progress->setWindowModality(Qt::WindowModal);
    progress->setMinimumDuration(500);
    progress->setAttribute(Qt::WA_DeleteOnClose);
    connect(progress, &QProgressDialog::canceled, loader_, &JobLoader::cancel);
    connect(loader_, &JobLoader::progress, progress, [progress](int done, int all) {
      progress->setMaximum(all);
      progress->setValue(done);
    });
    // Closed by the result.
    connect(loader_, &JobLoader::loaded, progress, &QWidget::close);
  }
  statusBar()->showMessage(what);
  loader_->start(std::move(work));
}

void MainWindow::setJob(std::shared_ptr<LoadedJob> job) {
  // The pages point into the job: they let go before the old job goes. The old job (a
  // 2,000-node job is ~100 MB of messages) is freed off the GUI thread: freeing it here
  // stalled a reload by ~35 ms.
  for (Slot& s : pages_) s.page->loadJob(nullptr);
  QThreadPool::globalInstance()->start([old = std::move(job_)]() mutable { old.reset(); });
  job_ = std::move(job);
  for (Slot& s : pages_) {
    s.job_pending = true;
    s.node_pending = false;
  }
  selected_node_ = -1;
  applyPending();
  statusBar()->showMessage(statusText());
  const JobData& data = *job_->data;
  if (!data.errors.empty()) {
    const QString origin = QString::fromStdString(data.origin);
    reportErrors(data.errors, origin.isEmpty() ? tr("the source") : origin);
  }
  // Worst first: the engineer's first look lands on the fault.
  const NodeSelection first = firstLook(data);
  if (first.node >= 0) select(first.node, QString::fromStdString(first.device), first.port);
  emit finished();
}

QString MainWindow::statusText() const {
  if (!job_)
    return tr("Nothing loaded: open .ibsnap files or a bundle (File > Open) or a collector's job");
  const JobData& data = *job_->data;
  QString status = tr("%1 node(s), %2 finding(s) from %3")
                       .arg(data.report.nodes_size())
                       .arg(data.report.findings_size())
                       .arg(QString::fromStdString(data.origin));
  int unsigned_count = 0;
  int unchecked = 0;
  for (const auto& t : data.trust) {
    if (t.rfind("UNSIGNED", 0) == 0) ++unsigned_count;
    if (t.find("NOT checked") != std::string::npos) ++unchecked;
  }
  if (unsigned_count > 0) status += tr("; %1 UNSIGNED").arg(unsigned_count);
  if (unchecked > 0) status += tr("; %1 signature(s) not checked against a CA").arg(unchecked);
  const auto others = std::count_if(data.groups.begin(), data.groups.end(),
                                    [](const OpenedGroup& g) { return !g.shown; });
  if (others > 0)
    status +=
        tr("; these files hold %1 other job(s) or tenant(s), NOT shown (Jobs page)").arg(others);
  int not_node = 0;
  for (const auto& s : data.signers) not_node += s.is_signed && !s.is_node ? 1 : 0;
  if (not_node > 0) status += tr("; %1 NOT signed by their node").arg(not_node);
  if (data.cancelled) status += tr("; cancelled: only the snapshots read before are shown");
  if (!data.errors.empty()) status += tr("; %1 refused or unreadable").arg(data.errors.size());
  return status;
}

void MainWindow::reportErrors(const std::vector<std::string>& errors, const QString& where) {
  if (errors.empty() || !error_sink_) return;
  error_sink_(adviseErrors(errors, where));
}

bool MainWindow::selectNode(const QString& label) {
  if (!job_) return false;
  const auto& nodes = job_->data->report.nodes();
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (QString::fromStdString(n.label()) == label || QString::fromStdString(n.node()) == label) {
      select(i, {}, 0);
      return true;
    }
  }
  return false;
}

void MainWindow::select(int node_index, const QString& device, int port) {
  selected_node_ = node_index;
  selected_device_ = device;
  selected_port_ = port;
  for (Slot& s : pages_) s.node_pending = true;
  applyPending();
}

void MainWindow::applyPending() {
  // Eager pages follow at once; a lazy page when it is the one shown.
  QWidget* current = tabs_->currentWidget();
  for (Slot& s : pages_) {
    if (s.page->lazy() && s.page != current) continue;
    if (s.job_pending) {
      s.page->loadJob(job_.get());
      s.job_pending = false;
    }
    if (s.node_pending) {
      if (selected_node_ >= 0) s.page->selectNode(selected_node_, selected_device_, selected_port_);
      s.node_pending = false;
    }
  }
}

void MainWindow::rememberFiles(const QStringList& files) {
  if (!remember_) return;
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("recent/files")).toStringList();
  // One entry per opening: the files' common folder when several, else the file.
  QStringList absolute;
  for (const QString& f : files) absolute << QFileInfo(f).absoluteFilePath();
  const QString entry = absolute.join(QLatin1Char('\n'));
  recent.removeAll(entry);
  recent.prepend(entry);
  while (recent.size() > 10) recent.removeLast();
  settings.setValue(QStringLiteral("recent/files"), recent);
  updateRecentMenu();
}

QStringList MainWindow::recentFiles() const {
  return QSettings().value(QStringLiteral("recent/files")).toStringList();
}

void MainWindow::updateRecentMenu() {
  if (recent_menu_ == nullptr) return;
  recent_menu_->clear();
  const QStringList recent = remember_ ? recentFiles() : QStringList();
  for (const QString& entry : recent) {
    const QStringList files = entry.split(QLatin1Char('\n'));
    const QString text =
        files.size() == 1
            ? files.front()
            : tr("%1 files in %2").arg(files.size()).arg(QFileInfo(files.front()).absolutePath());
    auto* a = recent_menu_->addAction(text);
    connect(a, &QAction::triggered, this, [this, files] { openFiles(files); });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  // Snapshot files and bundles dropped from a file manager.
  if (!event->mimeData()->hasUrls()) return;
  for (const QUrl& url : event->mimeData()->urls()) {
    if (!url.isLocalFile()) return;
  }
  event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList files;
  for (const QUrl& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) files << url.toLocalFile();
  }
  if (files.isEmpty()) return;
  event->acceptProposedAction();
  openFiles(files);
}

}  // namespace ibc::console

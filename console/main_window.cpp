#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressDialog>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QThread>
#include <QThreadPool>
#include <chrono>
#include <fstream>
#include <sstream>

#include "ibc/console/findings_model.h"
#include "ibc/console/node_grid_model.h"
#include "pages/charts_page.h"
#include "pages/diff_page.h"
#include "pages/escalate_page.h"
#include "pages/findings_page.h"
#include "pages/grid_page.h"
#include "pages/jobs_page.h"
#include "pages/node_page.h"

namespace ibc::console {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("ibcollect console"));
  grid_model_ = new NodeGridModel(this);
  findings_model_ = new FindingsModel(this);
  tabs_ = new QTabWidget(this);
  jobs_page_ = new JobsPage(tabs_);
  grid_page_ = new GridPage(grid_model_, tabs_);
  findings_page_ = new FindingsPage(findings_model_, tabs_);
  node_page_ = new NodePage(tabs_);
  diff_page_ = new DiffPage(tabs_);
  charts_page_ = new ChartsPage(tabs_);
  escalate_page_ = new EscalatePage(tabs_);
  connect(escalate_page_, &EscalatePage::caseCreated, this,
          [this](const QString&, const QString& summary) { statusBar()->showMessage(summary); });
  connect(escalate_page_, &EscalatePage::caseFailed, this, [this](const QString& message) {
    statusBar()->showMessage(message);
    if (!error_sink_) return;
    ErrorAdvice advice;
    advice.title = tr("Case not created");
    advice.what = message;
    advice.next =
        tr("Cases need a support certificate and a job opened from the collector "
           "(Jobs page); check the connection, then press Create case again.");
    advice.kind = classifyError(message.toStdString());
    error_sink_(advice);
  });
  tabs_->addTab(jobs_page_, tr("Jobs"));
  tabs_->addTab(grid_page_, tr("Grid"));
  tabs_->addTab(node_page_, tr("Node"));
  tabs_->addTab(findings_page_, tr("Findings"));
  tabs_->addTab(diff_page_, tr("Diff"));
  tabs_->addTab(charts_page_, tr("Charts"));
  tabs_->addTab(escalate_page_, tr("Escalate"));
  setCentralWidget(tabs_);
  connect(tabs_, &QTabWidget::currentChanged, this, [this] { applyPending(); });

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
  connect(jobs_page_, &JobsPage::listFailed, this, [this](const QString& message) {
    reportErrors(
        {message.toStdString()},
        tr("the collector at %1").arg(QString::fromStdString(jobs_page_->settings().endpoint)));
  });
  connect(jobs_page_, &JobsPage::listed, this, [this](bool ok) {
    updateConnection();
    // The connection that worked is the one to offer next time.
    if (ok && remember_) saveSettings();
  });
  escalate_page_->setCredentialSource([this] { return jobs_page_->settings(); });
  connect(escalate_page_, &EscalatePage::exported, this, [this](bool ok, const QString& message) {
    if (ok) {
      statusBar()->showMessage(message);
    } else if (error_sink_) {
      ErrorAdvice advice;
      advice.title = tr("Bundle not written");
      advice.what = message;
      advice.next =
          tr("A bundle is signed with your certificate: give --cert and --key (or the jobs "
             "page's Certificate and Key), check the folder is writable, and if a snapshot file "
             "changed, File > Reload first.");
      advice.kind = classifyError(message.toStdString());
      error_sink_(advice);
    }
  });
  connect(jobs_page_, &JobsPage::openJob, this,
          [this](const QString& tenant, const QString& job) { openCollectorJob(tenant, job); });
  connect(grid_page_, &GridPage::nodeSelected, this, &MainWindow::select);
  connect(findings_page_, &FindingsPage::nodeSelected, this, &MainWindow::select);
  statusBar()->showMessage(
      tr("Open .ibsnap files or .ibbundle bundles (File > Open) or pass them on the command line"));
}

MainWindow::~MainWindow() {
  if (cancel_) cancel_->store(true);
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
  add(file, "connect", tr("&Connect to collector..."), QKeySequence(tr("Ctrl+K")), [this] {
    // The jobs page holds the connection: address, CA, certificate, key, tenant.
    showPage(QStringLiteral("jobs"));
    jobs_page_->collectorEdit()->setFocus();
    if (!jobs_page_->settings().endpoint.empty() && !jobs_page_->tenant().isEmpty())
      jobs_page_->refresh();
  });
  add(file, "reload", tr("&Reload"), QKeySequence(Qt::Key_F5), [this] { reload(); });
  file->addSeparator();
  add(file, "export", tr("&Export bundle..."), QKeySequence(tr("Ctrl+E")), [this] {
    showPage(QStringLiteral("escalate"));
    escalate_page_->exportWithDialog();
  });
  file->addSeparator();
  add(file, "quit", tr("&Quit"), QKeySequence(tr("Ctrl+Q")), [this] { close(); });
  auto* edit = menuBar()->addMenu(tr("&Edit"));
  add(edit, "find", tr("&Find..."), QKeySequence::Find, [this] {
    // The grid's filter box (node glob, severity, code, counter > N); on the jobs page, its
    // search box.
    if (tabs_->currentWidget() == jobs_page_) {
      jobs_page_->searchEdit()->setFocus();
      jobs_page_->searchEdit()->selectAll();
      return;
    }
    showPage(QStringLiteral("grid"));
    grid_page_->filterEdit()->setFocus();
    grid_page_->filterEdit()->selectAll();
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
  const CollectorSettings s = jobs_page_->settings();
  if (s.endpoint.empty()) return tr("offline");
  QString who = QFileInfo(QString::fromStdString(s.cert_file)).completeBaseName();
  return tr("collector %1 as %2, tenant %3")
      .arg(QString::fromStdString(s.endpoint), who.isEmpty() ? tr("(no certificate)") : who,
           jobs_page_->tenant().isEmpty() ? tr("(none)") : jobs_page_->tenant());
}

void MainWindow::updateConnection() { connection_->setText(connectionText()); }

void MainWindow::restoreSettings() {
  remember_ = true;
  QSettings settings;
  if (settings.contains(QStringLiteral("window/geometry")))
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  if (settings.contains(QStringLiteral("window/state")))
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  const int tab = settings.value(QStringLiteral("window/page"), -1).toInt();
  if (tab >= 0 && tab < tabs_->count()) tabs_->setCurrentIndex(tab);
  // The last connection, unless the command line gave one.
  if (jobs_page_->settings().endpoint.empty() &&
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
  const CollectorSettings s = jobs_page_->settings();
  if (!s.endpoint.empty()) {
    settings.setValue(QStringLiteral("collector/endpoint"), QString::fromStdString(s.endpoint));
    settings.setValue(QStringLiteral("collector/ca"), QString::fromStdString(s.ca_file));
    settings.setValue(QStringLiteral("collector/cert"), QString::fromStdString(s.cert_file));
    settings.setValue(QStringLiteral("collector/key"), QString::fromStdString(s.key_file));
    settings.setValue(QStringLiteral("collector/tenant"), jobs_page_->tenant());
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (remember_) saveSettings();
  QMainWindow::closeEvent(event);
}

QStringList MainWindow::pageNames() const {
  return {QStringLiteral("jobs"),     QStringLiteral("grid"), QStringLiteral("node"),
          QStringLiteral("findings"), QStringLiteral("diff"), QStringLiteral("charts"),
          QStringLiteral("escalate")};
}

bool MainWindow::showPage(const QString& name) {
  const int i = static_cast<int>(pageNames().indexOf(name));
  if (i < 0) return false;
  tabs_->setCurrentIndex(i);
  return true;
}

void MainWindow::openFiles(const QStringList& files, bool show_progress) {
  last_load_ = [this, files] { openFiles(files); };
  std::vector<std::string> paths;
  QStringList dirs;
  for (const QString& f : files) {
    paths.push_back(f.toStdString());
    const QString dir = QFileInfo(f).absolutePath();
    if (!dirs.contains(dir)) dirs << dir;
  }
  const std::string origin =
      tr("%1 file(s) in %2").arg(files.size()).arg(dirs.join(QStringLiteral(", "))).toStdString();
  const std::string ca_file = jobs_page_->settings().ca_file;
  load(
      [paths, origin, ca_file](const std::function<void(std::size_t, std::size_t)>& progress,
                               const std::atomic<bool>* cancel) {
        // With a CA the signatures are checked as `ibcollect verify` does; without one, only
        // that the bytes are as signed (the trust words say so).
        std::unique_ptr<core::SignatureVerifier> verifier;
        if (!ca_file.empty()) {
          std::ifstream in(ca_file, std::ios::binary);
          std::ostringstream pem;
          pem << in.rdbuf();
          auto v = core::SignatureVerifier::fromPem(pem.str());
          if (!v.ok()) {
            JobData failed;
            failed.errors.push_back("--ca " + ca_file + ": " + v.error().message);
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
  jobs_page_->setSettings(settings, tenant);
  updateConnection();
}

void MainWindow::openCollectorJob(const QString& tenant, const QString& job_id,
                                  bool show_progress) {
  last_load_ = [this, tenant, job_id] { openCollectorJob(tenant, job_id); };
  const CollectorSettings settings = jobs_page_->settings();
  escalate_page_->setCollector(settings);
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
        if (job_ && job_->report.nodes_size() > 0) showPage(QStringLiteral("grid"));
      },
      Qt::SingleShotConnection);
}

void MainWindow::load(Loader loader, const QString& what, int total, bool show_progress) {
  if (cancel_) cancel_->store(true);
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel = cancel_;
  QPointer<QProgressDialog> progress;
  if (show_progress) {
    progress = new QProgressDialog(what, tr("Cancel"), 0, total, this);
    progress->setWindowModality(Qt::WindowModal);
    progress->setMinimumDuration(500);
    connect(progress, &QProgressDialog::canceled, this, [cancel] { cancel->store(true); });
  }
  statusBar()->showMessage(what);
  QPointer<MainWindow> self(this);
  // The worker owns its inputs; results come back to the GUI thread by a queued call.
  QThread* worker = QThread::create(
      [loader = std::move(loader), cancel, progress, self, observer = load_observer_] {
        // At most one progress event per 40 ms: a flood of 2,000 queued updates kept the GUI
        // thread from its timers for tens of milliseconds.
        auto last_post = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        auto job = std::make_unique<JobData>(loader(
            [progress, observer, &last_post](std::size_t done, std::size_t all) {
              if (observer) observer(done, all);
              const auto now = std::chrono::steady_clock::now();
              if (done != all && now - last_post < std::chrono::milliseconds(40)) return;
              last_post = now;
              if (progress)
                QMetaObject::invokeMethod(
                    progress,
                    [progress, done, all] {
                      if (!progress) return;
                      progress->setMaximum(static_cast<int>(all));
                      progress->setValue(static_cast<int>(done));
                    },
                    Qt::QueuedConnection);
            },
            cancel.get()));
        // The grid's rows, majorities and outliers are computed here too: the GUI thread only
        // swaps them in (a 2,000-node job's grid takes ~90 ms to prepare).
        auto grid = std::make_shared<NodeGridModel::Prepared>(NodeGridModel::prepare(job.get()));
        JobData* raw = job.release();
        if (!self) {
          delete raw;
          return;
        }
        QMetaObject::invokeMethod(
            self,
            [self, raw, progress, grid = std::move(grid)] {
              std::unique_ptr<JobData> owned(raw);
              if (progress) progress->deleteLater();
              if (self) self->setJob(std::move(owned), grid);
            },
            Qt::QueuedConnection);
      });
  connect(worker, &QThread::finished, worker, &QObject::deleteLater);
  worker->start();
}

void MainWindow::setJob(std::unique_ptr<JobData> job,
                        std::shared_ptr<NodeGridModel::Prepared> grid) {
  // The models point into the job: reset them before the old job goes. The old job (a
  // 2,000-node job is ~100 MB of messages) and the grid's old rows are freed off the GUI
  // thread: freeing them here stalled a reload by ~35 ms.
  auto old_grid = std::make_shared<NodeGridModel::Prepared>(grid_model_->setJob(nullptr, {}));
  findings_model_->setJob(nullptr);
  findings_page_->setJob(nullptr);
  node_page_->setJob(nullptr);
  diff_page_->setJob(nullptr);
  charts_page_->setJob(nullptr);
  jobs_page_->setJob(nullptr);
  escalate_page_->setJob(nullptr);
  QThreadPool::globalInstance()->start([old_job = std::shared_ptr<JobData>(std::move(job_)),
                                        old_grid = std::move(old_grid)]() mutable {
    old_grid.reset();
    old_job.reset();
  });
  job_ = std::move(job);
  if (grid) {
    grid_model_->setJob(job_.get(), std::move(*grid));
  } else {
    grid_model_->setJob(job_.get());
  }
  findings_model_->setJob(job_.get());
  findings_page_->setJob(job_.get());
  node_page_->setJob(job_.get());
  jobs_page_->setJob(job_.get());
  for (bool& p : pending_job_) p = true;
  for (int& n : pending_node_) n = -1;
  applyPending();
  statusBar()->showMessage(statusText());
  if (!job_->errors.empty()) {
    const QString origin = QString::fromStdString(job_->origin);
    reportErrors(job_->errors, origin.isEmpty() ? tr("the source") : origin);
  }
  // Worst first: the engineer's first look lands on the fault. The most severe group's first
  // finding (the findings page opens on it, the grid and the node page on its node and port;
  // a finding of the whole node opens the node page on its worst port); without findings,
  // the worst node.
  const QModelIndex first = findings_model_->worstFinding();
  if (first.isValid()) {
    select(first.data(FindingsModel::NodeIndexRole).toInt(),
           first.data(FindingsModel::DeviceRole).toString(),
           first.data(FindingsModel::PortRole).toInt());
  } else {
    int worst = -1;
    int worst_rank = -1;
    for (int i = 0; i < job_->report.nodes_size(); ++i) {
      const int r = severityRank(job_->report.nodes(i).worst_severity());
      if (r > worst_rank) {
        worst_rank = r;
        worst = i;
      }
    }
    if (worst >= 0) select(worst, {}, 0);
  }
  emit finished();
}

QString MainWindow::statusText() const {
  if (!job_)
    return tr("Nothing loaded: open .ibsnap files or a bundle (File > Open) or a collector's job");
  QString status = tr("%1 node(s), %2 finding(s) from %3")
                       .arg(job_->report.nodes_size())
                       .arg(job_->report.findings_size())
                       .arg(QString::fromStdString(job_->origin));
  int unsigned_count = 0;
  int unchecked = 0;
  for (const auto& t : job_->trust) {
    if (t.rfind("UNSIGNED", 0) == 0) ++unsigned_count;
    if (t.find("NOT checked") != std::string::npos) ++unchecked;
  }
  if (unsigned_count > 0) status += tr("; %1 UNSIGNED").arg(unsigned_count);
  if (unchecked > 0) status += tr("; %1 signature(s) not checked against a CA").arg(unchecked);
  if (job_->cancelled) status += tr("; cancelled: only the snapshots read before are shown");
  if (!job_->errors.empty()) status += tr("; %1 refused or unreadable").arg(job_->errors.size());
  return status;
}

void MainWindow::reportErrors(const std::vector<std::string>& errors, const QString& where) {
  if (errors.empty() || !error_sink_) return;
  error_sink_(adviseErrors(errors, where));
}

bool MainWindow::selectNode(const QString& label) {
  if (!job_) return false;
  for (int i = 0; i < job_->report.nodes_size(); ++i) {
    const auto& n = job_->report.nodes(i);
    if (QString::fromStdString(n.label()) == label || QString::fromStdString(n.node()) == label) {
      select(i, {}, 0);
      return true;
    }
  }
  return false;
}

void MainWindow::select(int node_index, const QString& device, int port) {
  grid_page_->selectNode(node_index, device, port);
  findings_page_->selectNode(node_index, device, port);
  node_page_->showNode(node_index, device, port);
  pending_node_[0] = node_index;
  pending_node_[1] = node_index;
  applyPending();
}

void MainWindow::applyPending() {
  QWidget* current = tabs_->currentWidget();
  if (current == diff_page_) {
    if (pending_job_[0]) diff_page_->setJob(job_.get());
    if (pending_node_[0] >= 0) diff_page_->showNode(pending_node_[0]);
    pending_job_[0] = false;
    pending_node_[0] = -1;
  } else if (current == charts_page_) {
    if (pending_job_[1]) charts_page_->setJob(job_.get());
    if (pending_node_[1] >= 0) charts_page_->showNode(pending_node_[1]);
    pending_job_[1] = false;
    pending_node_[1] = -1;
  } else if (current == escalate_page_) {
    if (pending_job_[2]) escalate_page_->setJob(job_.get());
    pending_job_[2] = false;
  }
}

}  // namespace ibc::console

#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressDialog>
#include <QStatusBar>
#include <QTabWidget>
#include <QThread>
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
  tabs_->addTab(jobs_page_, tr("Jobs"));
  tabs_->addTab(grid_page_, tr("Grid"));
  tabs_->addTab(node_page_, tr("Node"));
  tabs_->addTab(findings_page_, tr("Findings"));
  tabs_->addTab(diff_page_, tr("Diff"));
  tabs_->addTab(charts_page_, tr("Charts"));
  tabs_->addTab(escalate_page_, tr("Escalate"));
  setCentralWidget(tabs_);

  auto* file = menuBar()->addMenu(tr("&File"));
  auto* open = file->addAction(tr("&Open snapshots..."));
  open->setShortcut(QKeySequence::Open);
  connect(open, &QAction::triggered, this, [this] {
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Open snapshots"), {}, tr("Snapshots (*.ibsnap);;All files (*)"));
    if (!files.isEmpty()) openFiles(files);
  });
  auto* quit = file->addAction(tr("&Quit"));
  quit->setShortcut(QKeySequence::Quit);
  connect(quit, &QAction::triggered, this, &QWidget::close);

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
  connect(jobs_page_, &JobsPage::openJob, this,
          [this](const QString& tenant, const QString& job) { openCollectorJob(tenant, job); });
  connect(grid_page_, &GridPage::nodeSelected, this, &MainWindow::select);
  connect(findings_page_, &FindingsPage::nodeSelected, this, &MainWindow::select);
  statusBar()->showMessage(tr("Open .ibsnap files (File > Open) or pass them on the command line"));
}

MainWindow::~MainWindow() {
  if (cancel_) cancel_->store(true);
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
      tr("Reading %1 snapshot(s)...").arg(files.size()), static_cast<int>(files.size()),
      show_progress);
}

void MainWindow::setCollector(const CollectorSettings& settings, const QString& tenant) {
  jobs_page_->setSettings(settings, tenant);
}

void MainWindow::openCollectorJob(const QString& tenant, const QString& job_id,
                                  bool show_progress) {
  const CollectorSettings settings = jobs_page_->settings();
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
      tr("Fetching job %1 of %2 from the collector...").arg(job_id, tenant), 0, show_progress);
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
        auto job = std::make_unique<JobData>(loader(
            [progress, observer](std::size_t done, std::size_t all) {
              if (observer) observer(done, all);
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
        JobData* raw = job.release();
        if (!self) {
          delete raw;
          return;
        }
        QMetaObject::invokeMethod(
            self,
            [self, raw, progress] {
              std::unique_ptr<JobData> owned(raw);
              if (progress) progress->deleteLater();
              if (self) self->setJob(std::move(owned));
            },
            Qt::QueuedConnection);
      });
  connect(worker, &QThread::finished, worker, &QObject::deleteLater);
  worker->start();
}

void MainWindow::setJob(std::unique_ptr<JobData> job) {
  // The models point into the job: reset them before the old job goes.
  grid_model_->setJob(nullptr);
  findings_model_->setJob(nullptr);
  findings_page_->setJob(nullptr);
  node_page_->setJob(nullptr);
  diff_page_->setJob(nullptr);
  charts_page_->setJob(nullptr);
  jobs_page_->setJob(nullptr);
  escalate_page_->setJob(nullptr);
  job_ = std::move(job);
  grid_model_->setJob(job_.get());
  findings_model_->setJob(job_.get());
  findings_page_->setJob(job_.get());
  node_page_->setJob(job_.get());
  diff_page_->setJob(job_.get());
  charts_page_->setJob(job_.get());
  jobs_page_->setJob(job_.get());
  escalate_page_->setJob(job_.get());
  statusBar()->showMessage(statusText());
  if (!job_->errors.empty()) {
    const QString origin = QString::fromStdString(job_->origin);
    reportErrors(job_->errors, origin.isEmpty() ? tr("the source") : origin);
  }
  // The worst node first: the engineer's first look lands on the outlier.
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
  emit finished();
}

QString MainWindow::statusText() const {
  if (!job_) return tr("Nothing loaded: open .ibsnap files (File > Open) or a collector's job");
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
  diff_page_->showNode(node_index);
  charts_page_->showNode(node_index);
}

}  // namespace ibc::console

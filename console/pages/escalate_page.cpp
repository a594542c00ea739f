#include "pages/escalate_page.h"

#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QThread>
#include <QVBoxLayout>
#include <set>

#include "ibc/console/bundle_export.h"
#include "ibc/console/escalation.h"
#include "ibc/console/job_data.h"
#include "ibc/core/bundle_report.h"

namespace ibc::console {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

constexpr int kIndexRole = Qt::UserRole + 1;

QString shellQuote(const QString& s) {
  static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:@%+=,-]+$"));
  if (plain.match(s).hasMatch()) return s;
  QString out = s;
  out.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + out + QLatin1Char('\'');
}

}  // namespace

EscalatePage::EscalatePage(QWidget* parent) : QWidget(parent) {
  nodes_ = new QListWidget(this);
  findings_ = new QListWidget(this);
  runbook_ = new QTextBrowser(this);
  runbook_->setOpenExternalLinks(false);
  command_ = new QLabel(this);
  command_->setWordWrap(true);
  command_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  create_case_ = new QPushButton(tr("Create case in collector"), this);
  create_case_->setObjectName(QStringLiteral("create_case"));
  create_case_->setEnabled(false);
  write_bundle_ = new QPushButton(tr("Export bundle..."), this);
  write_bundle_->setToolTip(
      tr("Write the escalation bundle of the checked nodes (.ibbundle), signed with your "
         "certificate (--cert/--key); `ibcollect bundle verify` checks it. The bundle holds "
         "every finding of those nodes, judged again from their signed snapshots so the host "
         "side can check them; the checked findings go to the case."));

  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(new QLabel(tr("Nodes (suspects checked):"), left));
  left_layout->addWidget(nodes_, 2);
  left_layout->addWidget(new QLabel(tr("Findings to hand over:"), left));
  left_layout->addWidget(findings_, 3);
  auto* right = new QWidget(this);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addWidget(
      new QLabel(tr("PF runbook for the host side (pf-inspection.md):"), right));
  right_layout->addWidget(runbook_, 1);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(create_case_);
  buttons->addWidget(write_bundle_);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split, 1);
  layout->addWidget(command_);
  layout->addLayout(buttons);

  connect(nodes_, &QListWidget::itemChanged, this, [this] {
    fillFindings();
    updateRunbook();
    updateCaseButton();
  });
  connect(findings_, &QListWidget::itemChanged, this, [this] { updateRunbook(); });
  connect(create_case_, &QPushButton::clicked, this, [this] { createCase(); });
  connect(write_bundle_, &QPushButton::clicked, this, &EscalatePage::exportWithDialog);
}

void EscalatePage::setJob(const JobData* job) {
  job_ = job;
  case_id_.clear();
  const QSignalBlocker block(nodes_);
  nodes_->clear();
  if (job_ != nullptr) {
    const auto suspects = suspectNodes(*job_);
    const std::set<int> suspect(suspects.begin(), suspects.end());
    for (int i = 0; i < job_->report.nodes_size(); ++i) {
      const auto& n = job_->report.nodes(i);
      auto* item = new QListWidgetItem(
          tr("%1  —  %2%3")
              .arg(q(n.label()), q(n.worst_severity()).toUpper(),
                   n.worst_code().empty() ? QString() : QStringLiteral(" ") + q(n.worst_code())),
          nodes_);
      item->setData(kIndexRole, i);
      item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
      item->setCheckState(suspect.count(i) != 0 ? Qt::Checked : Qt::Unchecked);
    }
  }
  fillFindings();
  updateRunbook();
}

void EscalatePage::setCollector(const CollectorSettings& settings) {
  settings_ = settings;
  updateCaseButton();
}

void EscalatePage::updateCaseButton() {
  const bool from_collector = job_ != nullptr && !job_->tenant.empty();
  const bool can =
      from_collector && !settings_.endpoint.empty() && !sending_ && !checkedNodes().isEmpty();
  create_case_->setEnabled(can);
  create_case_->setText(case_id_.isEmpty() ? tr("Create case in collector")
                                           : tr("Add to case %1").arg(case_id_));
  if (!case_id_.isEmpty()) {
    create_case_->setToolTip(
        tr("Add the checked nodes' snapshots and findings to case %1.").arg(case_id_));
  } else if (!from_collector) {
    create_case_->setToolTip(
        tr("A case covers snapshots stored in the collector: open the job from the "
           "collector (Jobs page) to create one."));
  } else if (checkedNodes().isEmpty()) {
    create_case_->setToolTip(tr("Check the nodes the case is about."));
  } else {
    create_case_->setToolTip(
        tr("Create a case in %1 for the checked nodes and findings.").arg(q(settings_.endpoint)));
  }
}

std::set<int> EscalatePage::checkedFindings() const {
  std::set<int> out;
  for (int r = 0; r < findings_->count(); ++r) {
    if (findings_->item(r)->checkState() == Qt::Checked)
      out.insert(findings_->item(r)->data(kIndexRole).toInt());
  }
  return out;
}

void EscalatePage::createCase() {
  if (job_ == nullptr || sending_) return;
  const QList<int> nodes = checkedNodes();
  const auto findings = checkedFindings();
  auto request = caseRequestFor(*job_, std::vector<int>(nodes.begin(), nodes.end()),
                                findings.empty() ? std::set<int>{-1} : findings);
  if (request.tenant().empty() || request.snapshot_ids_size() == 0) {
    emit caseFailed(
        tr("These snapshots are not in the collector: open the job from the "
           "collector to create a case."));
    return;
  }
  sending_ = true;
  updateCaseButton();
  const bool update = !case_id_.isEmpty();
  command_->setText(update ? tr("Updating case %1 in %2...").arg(case_id_, q(settings_.endpoint))
                           : tr("Creating the case in %1...").arg(q(settings_.endpoint)));
  // A case already made for this job: the checked nodes, snapshots and codes are added.
  ::ibcollect::v1::UpdateCaseRequest change;
  if (update) {
    change.set_case_id(case_id_.toStdString());
    change.set_tenant(request.tenant());
    *change.mutable_add_snapshot_ids() = request.snapshot_ids();
    *change.mutable_add_nodes() = request.nodes();
    *change.mutable_add_finding_codes() = request.finding_codes();
  }
  QPointer<EscalatePage> self(this);
  QThread* worker = QThread::create([settings = settings_, request = std::move(request),
                                     change = std::move(change), update, self] {
    auto made = update ? ibc::console::updateCase(settings, change)
                       : ibc::console::createCase(settings, request);
    QMetaObject::invokeMethod(
        self,
        [self, update, ok = made.ok(), c = made.ok() ? *made : ::ibcollect::v1::Case(),
         message = made.ok() ? std::string() : made.error().message] {
          if (!self) return;
          self->sending_ = false;
          if (ok) {
            self->case_id_ = q(c.case_id());
            const QString summary =
                tr("Case %1 %2 in %3: %4 snapshot(s), %5 node(s), revision %6. Bundle: "
                   "ibcollect bundle export --case %1 -o case.ibbundle")
                    .arg(q(c.case_id()), update ? tr("updated") : tr("created"),
                         q(self->settings_.endpoint))
                    .arg(c.snapshot_ids_size())
                    .arg(c.nodes_size())
                    .arg(c.revision());
            self->command_->setText(summary.toHtmlEscaped());
            emit self->caseCreated(self->case_id_, summary);
          } else {
            self->updateRunbook();
            emit self->caseFailed(update ? tr("The case could not be updated: %1").arg(q(message))
                                         : tr("The case could not be created: %1").arg(q(message)));
          }
          self->updateCaseButton();
        },
        Qt::QueuedConnection);
  });
  connect(worker, &QThread::finished, worker, &QObject::deleteLater);
  worker->start();
}

QList<int> EscalatePage::checkedNodes() const {
  QList<int> out;
  for (int r = 0; r < nodes_->count(); ++r) {
    if (nodes_->item(r)->checkState() == Qt::Checked)
      out << nodes_->item(r)->data(kIndexRole).toInt();
  }
  return out;
}

void EscalatePage::checkNodes(const QList<int>& nodes) {
  {
    const QSignalBlocker block(nodes_);
    for (int r = 0; r < nodes_->count(); ++r) {
      auto* item = nodes_->item(r);
      item->setCheckState(nodes.contains(item->data(kIndexRole).toInt()) ? Qt::Checked
                                                                         : Qt::Unchecked);
    }
  }
  fillFindings();
  updateRunbook();
}

void EscalatePage::fillFindings() {
  const QSignalBlocker block(findings_);
  findings_->clear();
  if (job_ == nullptr) return;
  const QList<int> checked = checkedNodes();
  const std::set<int> nodes(checked.begin(), checked.end());
  for (int i = 0; i < job_->report.findings_size(); ++i) {
    if (nodes.count(nodeOfFinding(*job_, i)) == 0) continue;
    const auto& f = job_->report.findings(i);
    QString where = q(f.device());
    if (f.port() != 0) where += QLatin1Char('/') + QString::number(f.port());
    auto* item = new QListWidgetItem(
        tr("%1 %2 on %3 %4").arg(q(f.severity()).toUpper(), q(f.code()), q(f.node()), where),
        findings_);
    item->setToolTip(q(f.summary()));
    item->setData(kIndexRole, i);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(severityRank(f.severity()) >= 2 ? Qt::Checked : Qt::Unchecked);
  }
}

void EscalatePage::updateRunbook() {
  markdown_.clear();
  if (job_ == nullptr) {
    runbook_->setMarkdown(tr("Open a job to escalate it."));
    command_->clear();
    return;
  }
  const QList<int> nodes = checkedNodes();
  std::set<int> findings;
  for (int r = 0; r < findings_->count(); ++r) {
    if (findings_->item(r)->checkState() == Qt::Checked)
      findings.insert(findings_->item(r)->data(kIndexRole).toInt());
  }
  if (nodes.isEmpty()) {
    runbook_->setMarkdown(
        tr("No node checked: check the nodes whose VFs the host side must "
           "inspect."));
  } else {
    // A job id when the checked nodes share one.
    std::string job_id;
    for (const int n : nodes) {
      const std::string& id = job_->report.nodes(n).job_id();
      if (!id.empty()) job_id = job_id.empty() || job_id == id ? id : std::string("several");
    }
    const auto inspection = pfInspectionFor(*job_, std::vector<int>(nodes.begin(), nodes.end()),
                                            findings.empty() ? std::set<int>{-1} : findings,
                                            job_id == "several" ? std::string() : job_id);
    markdown_ = q(core::renderPfInspectionMarkdown(inspection));
    runbook_->setMarkdown(markdown_);
  }
  command_->setText(
      tr("Bundle for these nodes: <code>%1</code>").arg(exportCommand().toHtmlEscaped()));
  updateCaseButton();
}

void EscalatePage::exportWithDialog() {
  if (job_ == nullptr) return;
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export bundle"), QStringLiteral("case.ibbundle"),
                                   tr("Escalation bundles (*.ibbundle);;All files (*)"));
  if (!path.isEmpty()) exportBundle(path);
}

void EscalatePage::exportBundle(const QString& path) {
  if (exporting_) return;
  if (job_ == nullptr) return exportDone(false, tr("open a job first"));
  // What the bundle needs is copied out of the job here (the GUI thread owns the job); the
  // files, the signing and the writing are the worker's.
  const QList<int> checked = checkedNodes();
  auto inputs =
      console::bundleExportInputs(*job_, std::vector<int>(checked.begin(), checked.end()));
  if (!inputs.ok()) return exportDone(false, q(inputs.error().message));
  const CollectorSettings c = credentials_ ? credentials_() : CollectorSettings{};
  BundleExportSettings settings{c.cert_file, c.key_file, case_id_.toStdString(), IBC_VERSION};
  exporting_ = true;
  write_bundle_->setEnabled(false);
  command_->setText(
      tr("Writing %1 (%2 snapshot(s))...").arg(path.toHtmlEscaped()).arg(inputs->nodes.size()));
  QPointer<EscalatePage> self(this);
  QThread* worker =
      QThread::create([inputs = std::move(*inputs), settings = std::move(settings), path, self] {
        auto written = console::writeBundleExport(inputs, settings, path.toStdString());
        const QString message =
            written.ok() ? tr("Wrote %1: %2 snapshot(s), signed by %3. Check it with: ibcollect "
                              "bundle verify %4 --ca CA.pem")
                               .arg(path)
                               .arg(written->snapshots)
                               .arg(q(written->signer), shellQuote(path))
                         : q(written.error().message);
        QMetaObject::invokeMethod(
            self,
            [self, ok = written.ok(), message] {
              if (!self) return;
              self->exporting_ = false;
              self->write_bundle_->setEnabled(true);
              self->exportDone(ok, message);
            },
            Qt::QueuedConnection);
      });
  connect(worker, &QThread::finished, worker, &QObject::deleteLater);
  worker->start();
}

void EscalatePage::exportDone(bool ok, const QString& message) {
  command_->setText(ok ? message.toHtmlEscaped()
                       : tr("<b>Bundle not written:</b> %1").arg(message.toHtmlEscaped()));
  emit exported(ok, message);
}

QString EscalatePage::exportCommand() const {
  QStringList args = {QStringLiteral("ibcollect"), QStringLiteral("bundle"),
                      QStringLiteral("export")};
  int files = 0;
  if (!case_id_.isEmpty()) {
    args << QStringLiteral("--case") << case_id_;
  } else if (job_ != nullptr) {
    for (const int n : checkedNodes()) {
      const QString file = q(job_->report.nodes(n).snapshot_file());
      // Only files on disk can be exported this way; fetched snapshots go by --job.
      if (!file.isEmpty() && QFileInfo::exists(file)) {
        args << shellQuote(file);
        ++files;
      }
    }
    if (files == 0) args << QStringLiteral("--job") << QStringLiteral("<JOB>");
  }
  args << QStringLiteral("-o") << QStringLiteral("case.ibbundle");
  return args.join(QLatin1Char(' '));
}

}  // namespace ibc::console

#include "pages/escalate_page.h"

#include "ibc/console/check_list_model.h"
#include "ibc/console/job_loader.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QColor>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "ibc/console/bundle_export.h"
#include "ibc/console/escalation.h"
#include "ibc/console/job_data.h"
#include "ibc/console/workers.h"
#include "ibc/core/bundle_report.h"

namespace ibc::console {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

std::string joinWords(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

QString joinCodes(const std::vector<std::string>& codes) {
  QStringList out;
  for (const auto& c : codes) out << q(c);
  return out.join(QStringLiteral(", "));
}

QString shellQuote(const QString& s) {
  static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:@%+=,-]+$"));
  if (plain.match(s).hasMatch()) return s;
  QString out = s;
  out.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + out + QLatin1Char('\'');
}

// Where a worker's answer goes: queued to the application object (the GUI thread), then to
// the page if it still exists. A QPointer<EscalatePage> would downcast on the worker, which
// is undefined while the page is being destroyed on the GUI thread.
struct PageRef {
  QPointer<QObject> alive;
  EscalatePage* page;
  explicit operator bool() const { return !alive.isNull(); }
  EscalatePage* operator->() const { return page; }
};

}  // namespace

EscalatePage::EscalatePage(QWidget* parent) : Page(parent) {
  createWidgets();
  layOut();
  connectWidgets();
  updateExportButton();
}

void EscalatePage::createWidgets() {
  // Models with views: a row per node or finding is a small struct, not an item object.
  nodes_model_ = new CheckListModel(this);
  findings_model_ = new CheckListModel(this);
  nodes_ = new QListView(this);
  nodes_->setObjectName(QStringLiteral("escalate_nodes"));
  nodes_->setModel(nodes_model_);
  nodes_->setWordWrap(true);
  nodes_->setAlternatingRowColors(true);
  findings_ = new QListView(this);
  findings_->setObjectName(QStringLiteral("escalate_findings"));
  findings_->setModel(findings_model_);
  findings_->setUniformItemSizes(true);
  runbook_ = new QTextBrowser(this);
  runbook_->setOpenExternalLinks(false);
  members_model_ = new BundleMembersModel(this);
  members_ = new QTableView(this);
  members_->setObjectName(QStringLiteral("bundle_members"));
  members_->setModel(members_model_);
  members_->verticalHeader()->hide();
  members_->verticalHeader()->setDefaultSectionSize(members_->fontMetrics().height() + 6);
  members_->setSelectionBehavior(QAbstractItemView::SelectRows);
  members_->setWordWrap(false);
  members_->horizontalHeader()->setSectionResizeMode(BundleMembersModel::Member,
                                                     QHeaderView::ResizeToContents);
  members_->horizontalHeader()->setSectionResizeMode(BundleMembersModel::Size,
                                                     QHeaderView::ResizeToContents);
  members_->horizontalHeader()->setStretchLastSection(true);
  redact_ = new QCheckBox(tr("Redact host names, IPs and user names"), this);
  redact_->setObjectName(QStringLiteral("redact"));
  redact_->setToolTip(
      tr("As `ibcollect bundle export --redact`: findings, report and PF runbook carry "
         "pseudonyms (node-001, ip-001, user-001); the signed snapshots are left out (their "
         "bytes cannot be redacted without breaking the signature); the host pseudonym map is "
         "written beside the bundle (BUNDLE.pseudonyms.tsv), never inside. GUIDs and MACs stay: "
         "the host needs them."));
  // Plain text that scrolls, not a rich-text label: both grow with the checked nodes (a line
  // and a file per node), and a word-wrapped label lays its whole document out again on every
  // size question of the layout.
  const auto text_pane = [this](const char* name, int lines, bool wrap) {
    auto* pane = new QPlainTextEdit(this);
    pane->setObjectName(QLatin1String(name));
    pane->setReadOnly(true);
    pane->setFrameShape(QFrame::NoFrame);
    pane->viewport()->setAutoFillBackground(false);
    pane->setLineWrapMode(wrap ? QPlainTextEdit::WidgetWidth : QPlainTextEdit::NoWrap);
    pane->setFixedHeight(pane->fontMetrics().lineSpacing() * lines + 8 +
                         (wrap ? 0 : pane->style()->pixelMetric(QStyle::PM_ScrollBarExtent)));
    return pane;
  };
  carried_ = text_pane("bundle_carries", 8, true);
  case_label_ = new QLabel(this);
  case_label_->setObjectName(QStringLiteral("existing_case"));
  case_label_->setWordWrap(true);
  command_ = text_pane("escalate_command", 6, true);
  command_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  // Long commands wrap (a copy keeps each command one line) instead of being clipped on the
  // right: six lines of the fixed font, scrolling when a command list is longer.
  command_->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  command_->setFixedHeight(command_->fontMetrics().lineSpacing() * 6 + 8);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  create_case_ = new QPushButton(tr("Create case in collector"), this);
  create_case_->setObjectName(QStringLiteral("create_case"));
  create_case_->setEnabled(false);
  write_bundle_ = new QPushButton(tr("Export bundle..."), this);
  write_bundle_->setObjectName(QStringLiteral("export_bundle"));
}

void EscalatePage::layOut() {
  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(
      new QLabel(tr("<b>Nodes</b> (suspects first, checked by core's rule, with why):"), left));
  left_layout->addWidget(nodes_, 3);
  auto* findings_label = new QLabel(
      tr("<b>Finding codes for the case</b> (the bundle carries core's whole verdict of the "
         "checked nodes, judged again from their snapshots):"),
      left);
  findings_label->setWordWrap(true);
  left_layout->addWidget(findings_label);
  left_layout->addWidget(findings_, 2);
  auto* sent = new QWidget(this);
  auto* sent_layout = new QVBoxLayout(sent);
  sent_layout->setContentsMargins(0, 0, 0, 0);
  sent_layout->addWidget(new QLabel(tr("<b>What will be sent</b> (the bundle's members):"), sent));
  sent_layout->addWidget(members_, 1);
  sent_layout->addWidget(redact_);
  sent_layout->addWidget(carried_);
  auto* book = new QWidget(this);
  auto* book_layout = new QVBoxLayout(book);
  book_layout->setContentsMargins(0, 0, 0, 0);
  book_layout->addWidget(
      new QLabel(tr("<b>PF runbook</b> for the host side (the bundle's pf-inspection.md):"), book));
  book_layout->addWidget(runbook_, 1);
  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(sent);
  right->addWidget(book);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 1);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(create_case_);
  buttons->addWidget(write_bundle_);
  buttons->addWidget(status_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split, 1);
  layout->addWidget(case_label_);
  layout->addWidget(command_);
  layout->addLayout(buttons);
}

void EscalatePage::connectWidgets() {
  connect(nodes_model_, &CheckListModel::checkToggled, this, [this] {
    fillFindings();
    checksChanged();
  });
  connect(findings_model_, &CheckListModel::checkToggled, this, [this] { updateCaseButton(); });
  // The runbook pane renders the selected node's VF sections only.
  connect(nodes_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this] { showRunbook(); });
  connect(redact_, &QCheckBox::toggled, this, [this] {
    replan();
    updateCommand();
  });
  connect(create_case_, &QPushButton::clicked, this, [this] { createCase(); });
  connect(write_bundle_, &QPushButton::clicked, this, &EscalatePage::exportWithDialog);
  // What the window shows of this page's outcomes (the status bar, or an error with advice).
  connect(this, &EscalatePage::caseCreated, this,
          [this](const QString&, const QString& summary) { emit statusMessage(summary); });
  connect(this, &EscalatePage::caseFailed, this, [this](const QString& message) {
    emit statusMessage(message);
    ErrorAdvice advice;
    advice.title = tr("Case not created");
    advice.what = message;
    advice.next =
        tr("Cases need a support certificate and a job opened from the collector "
           "(Jobs page); check the connection, then press Create case again.");
    advice.kind = classifyError(message.toStdString());
    emit failed(advice);
  });
  connect(this, &EscalatePage::exported, this, [this](bool ok, const QString& message) {
    if (ok) {
      emit statusMessage(message);
      return;
    }
    ErrorAdvice advice;
    advice.title = tr("Bundle not written");
    advice.what = message;
    advice.next =
        tr("A bundle is signed with your certificate: give --cert and --key (or the jobs "
           "page's Certificate and Key), check the folder is writable, and if a snapshot file "
           "changed, File > Reload first.");
    advice.kind = classifyError(message.toStdString());
    emit failed(advice);
  });
}

void EscalatePage::setJob(const JobData* job) {
  ++suspects_generation_;
  suspects_pending_ = false;
  showJob(job, job != nullptr ? suspectReasons(*job) : std::vector<SuspectReason>());
  updateReady();
}

void EscalatePage::loadJob(LoadedJob* job) {
  // Core's escalation of every node (a copy of each snapshot judged again) takes ~70 ms per
  // 1,000 nodes: a large job's is a worker's, holding the job, and the page says so meanwhile.
  if (job == nullptr || job->data->report.nodes_size() < kSuspectsOnAWorkerFrom) {
    setJob(job != nullptr ? job->data.get() : nullptr);
    return;
  }
  const int generation = ++suspects_generation_;
  suspects_pending_ = true;
  showJob(nullptr, {});
  updateReady();
  carried_->setPlainText(tr("Working out which nodes core escalates..."));
  const PageRef self{this, this};
  runOnWorker([hold = job->shared_from_this(), generation, self]() mutable {
    auto reasons = std::make_shared<std::vector<SuspectReason>>(suspectReasons(*hold->data));
    const JobData* data = hold->data.get();
    // The page's job stays alive while the window holds it; a replaced one is dropped.
    std::weak_ptr<LoadedJob> weak = hold;
    hold.reset();
    QMetaObject::invokeMethod(
        qApp,
        [self, generation, reasons, data, weak] {
          if (!self || generation != self->suspects_generation_ || weak.expired()) return;
          self->suspects_pending_ = false;
          self->showJob(data, std::move(*reasons));
          self->updateReady();
          emit self->suspectsReady();
        },
        Qt::QueuedConnection);
  });
}

void EscalatePage::showJob(const JobData* job, std::vector<SuspectReason> reasons) {
  job_ = job;
  case_id_.clear();
  case_.reset();
  ++cases_generation_;
  std::vector<CheckListModel::Item> items;
  if (job_ != nullptr) {
    // Suspects first (core's escalations), checked, each with why; then the others.
    std::map<int, const SuspectReason*> suspect;
    for (const auto& r : reasons) suspect[r.node] = &r;
    std::vector<int> order;
    for (const auto& r : reasons) order.push_back(r.node);
    for (int i = 0; i < job_->report.nodes_size(); ++i) {
      if (suspect.count(i) == 0) order.push_back(i);
    }
    for (const int i : order) {
      const auto& n = job_->report.nodes(i);
      QString text =
          tr("%1  —  %2%3")
              .arg(q(n.label()), q(n.worst_severity()).toUpper(),
                   n.worst_code().empty() ? QString() : QStringLiteral(" ") + q(n.worst_code()));
      const auto it = suspect.find(i);
      if (it != suspect.end()) {
        for (const auto& line : it->second->lines) text += tr("\n    suspect: %1").arg(q(line));
        if (!it->second->identity_missing.empty()) {
          text += tr("\n    \u26a0 %1: %2")
                      .arg(q(joinWords(it->second->identity_missing)), tr(kIdentityMissingWords));
        }
      }
      CheckListModel::Item item{text, {}, i, it != suspect.end(), false};
      if (it != suspect.end()) {
        item.tooltip = tr("Core escalated this node for host inspection (reasons: %1). "
                          "Its VFs are in pf-inspection.md.")
                           .arg(joinCodes(it->second->codes));
        item.marked = !it->second->identity_missing.empty();
      }
      items.push_back(std::move(item));
    }
  }
  {
    const QSignalBlocker block(nodes_->selectionModel());
    nodes_model_->setItems(std::move(items));
    // The first suspect's runbook.
    if (nodes_model_->rowCount() > 0) nodes_->setCurrentIndex(nodes_model_->index(0));
  }
  fillFindings();
  checksChanged();
  listJobCases();
}

void EscalatePage::checksChanged() {
  replan();
  updateCommand();
  updateCaseButton();
  updateExportButton();
}

void EscalatePage::showRunbook() {
  if (markdown_.isEmpty()) return;
  const QModelIndex current = nodes_->currentIndex();
  const int node = current.isValid() ? current.data(CheckListModel::IndexRole).toInt() : -1;
  const std::string name = job_ != nullptr && node >= 0 && node < job_->report.nodes_size()
                               ? job_->report.nodes(node).node()
                               : std::string();
  const std::string md = markdown_.toStdString();
  const RunbookPart part = runbookOfNode(md, name);
  QString shown = q(part.markdown);
  if (part.total > part.shown) {
    shown += tr("\n\n---\n\n*%1 of the runbook's %2 VF sections shown (select a node on the left "
                "for its own); the bundle's pf-inspection.md holds all of them.*\n")
                 .arg(part.shown)
                 .arg(part.total);
  }
  runbook_->setMarkdown(shown);
}

void EscalatePage::updateExportButton() {
  const bool none = job_ == nullptr || checkedNodes().isEmpty();
  write_bundle_->setEnabled(!none && !exporting_);
  if (job_ == nullptr) {
    write_bundle_->setToolTip(tr("Open a job first."));
  } else if (none) {
    write_bundle_->setToolTip(
        tr("Nothing is checked: check the nodes whose snapshots the bundle should carry."));
  } else if (exporting_) {
    write_bundle_->setToolTip(tr("A bundle is being written."));
  } else {
    write_bundle_->setToolTip(
        tr("Write the escalation bundle of exactly the %1 checked node(s) (.ibbundle), signed "
           "with your certificate (--cert/--key); `ibcollect bundle verify` checks it. Its "
           "members are listed above.")
            .arg(checkedNodes().size()));
  }
}

void EscalatePage::setRedact(bool redact) { redact_->setChecked(redact); }
bool EscalatePage::redact() const { return redact_->isChecked(); }

QString EscalatePage::nodeText(int node) const {
  const int row = nodes_model_->rowOf(node);
  return row < 0 ? QString() : nodes_model_->items()[static_cast<std::size_t>(row)].text;
}

void EscalatePage::replan() {
  const int generation = ++plan_generation_;
  updateReady();
  if (job_ == nullptr || checkedNodes().isEmpty()) {
    members_model_->setPlan({});
    carried_->setPlainText(job_ == nullptr ? QString()
                                           : tr("Nothing is checked: the bundle would be empty."));
    markdown_.clear();
    runbook_->setMarkdown(job_ == nullptr ? tr("Open a job to escalate it.")
                                          : tr("No node checked: check the nodes whose VFs the "
                                               "host side must inspect."));
    plan_applied_ = generation;
    updateReady();
    emit planned();
    return;
  }
  // The inputs are copied here (the GUI thread owns the job); judging and rendering are the
  // worker's.
  const QList<int> checked = checkedNodes();
  auto inputs = bundlePlanInputs(*job_, std::vector<int>(checked.begin(), checked.end()),
                                 case_id_.toStdString());
  const bool redact = redact_->isChecked();
  carried_->setPlainText(tr("Working out what the bundle carries..."));
  const PageRef self{this, this};
  runOnWorker([inputs = std::move(inputs), redact, generation, self] {
    auto plan = std::make_shared<BundlePlan>(planBundle(inputs, redact));
    QMetaObject::invokeMethod(
        qApp,
        [self, plan, generation] {
          if (!self || generation != self->plan_generation_) return;
          if (!plan->error.empty()) {
            self->carried_->setPlainText(tr("Cannot work out the bundle: %1").arg(q(plan->error)));
            self->plan_applied_ = generation;
            self->updateReady();
            emit self->planned();
            return;
          }
          self->markdown_ = q(plan->pf_inspection_md);
          self->showRunbook();
          QString text = tr("The bundle carries %1 finding(s), %2 suspect VF(s), %3 "
                            "member(s), %4:")
                             .arg(plan->findings)
                             .arg(plan->suspects)
                             .arg(plan->members.size())
                             .arg(q(sizeWords(plan->total_bytes, false)));
          for (const auto& line : plan->carried) text += QLatin1Char('\n') + q(line);
          if (!plan->differences.empty()) {
            text +=
                tr("\nJudged without the unchecked nodes (a finding known only "
                   "from the peers is not carried; check them too to keep it):");
            for (const auto& d : plan->differences) text += QLatin1Char('\n') + q(d);
          }
          self->carried_->setPlainText(text);
          self->members_model_->setPlan(std::move(*plan));
          self->plan_applied_ = generation;
          self->updateReady();
          emit self->planned();
        },
        Qt::QueuedConnection);
  });
}

void EscalatePage::listJobCases() {
  const int generation = cases_generation_;
  case_label_->clear();
  if (job_ == nullptr || job_->tenant.empty() || settings_.endpoint.empty()) return;
  std::vector<int> all;
  for (int i = 0; i < job_->report.nodes_size(); ++i) all.push_back(i);
  const std::string job_id = jobIdOf(*job_, all);
  if (job_id.empty()) return;
  case_label_->setText(tr("Looking for a case of job %1 in %2...")
                           .arg(q(job_id), q(settings_.endpoint))
                           .toHtmlEscaped());
  const PageRef self{this, this};
  runOnWorker([settings = settings_, tenant = job_->tenant, job_id, generation, self] {
    auto cases = listCases(settings, tenant);
    std::optional<::ibcollect::v1::Case> found;
    std::string error;
    if (cases.ok()) {
      if (const auto* c = caseOfJob(*cases, tenant, job_id)) found = *c;
    } else {
      error = cases.error().message;
    }
    QMetaObject::invokeMethod(
        qApp,
        [self, found = std::move(found), error, job_id, generation] {
          if (!self || generation != self->cases_generation_) return;
          if (!error.empty()) {
            self->case_label_->setText(
                tr("Cases of job %1 could not be listed (%2): a new one would be created.")
                    .arg(q(job_id), q(error))
                    .toHtmlEscaped());
          } else if (found && self->case_id_.isEmpty()) {
            self->case_ = found;
            self->case_id_ = q(found->case_id());
          } else if (!found) {
            self->case_label_->setText(
                tr("Job %1 has no case yet.").arg(q(job_id)).toHtmlEscaped());
          }
          self->updateCaseButton();
          self->updateCommand();
          self->replan();
          emit self->casesListed(found.has_value());
        },
        Qt::QueuedConnection);
  });
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
                                           : tr("Update case %1").arg(case_id_));
  if (case_) {
    const auto& c = *case_;
    static const char* const kStates[] = {"unspecified", "open", "escalated", "closed"};
    const int state = std::clamp(static_cast<int>(c.state()), 0, 3);
    QStringList nodes;
    for (const auto& n : c.nodes()) nodes << q(n);
    case_label_->setText(
        tr("<b>Case %1</b> of job %2 (%3, revision %4, by %5): %6 snapshot(s), nodes %7. "
           "It is this job's case: the button adds the checked nodes and codes to it instead "
           "of creating another.")
            .arg(q(c.case_id()).toHtmlEscaped(), q(c.job_id()).toHtmlEscaped(),
                 QString::fromLatin1(kStates[state]))
            .arg(c.revision())
            .arg(q(c.created_by()).toHtmlEscaped())
            .arg(c.snapshot_ids_size())
            .arg(nodes.join(QStringLiteral(", ")).toHtmlEscaped()));
  }
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
  const QList<int> checked = findings_model_->checkedIndexes();
  return {checked.begin(), checked.end()};
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
  status_->setText(update ? tr("Updating case %1 in %2...").arg(case_id_, q(settings_.endpoint))
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
  const PageRef self{this, this};
  runOnWorker([settings = settings_, request = std::move(request), change = std::move(change),
               update, self] {
    auto made = update ? ibc::console::updateCase(settings, change)
                       : ibc::console::createCase(settings, request);
    QMetaObject::invokeMethod(
        qApp,
        [self, update, ok = made.ok(), c = made.ok() ? *made : ::ibcollect::v1::Case(),
         message = made.ok() ? std::string() : made.error().message] {
          if (!self) return;
          self->sending_ = false;
          if (ok) {
            self->case_id_ = q(c.case_id());
            self->case_ = c;
            const QString summary = tr("Case %1 %2 in %3: %4 snapshot(s), %5 node(s), revision %6.")
                                        .arg(q(c.case_id()), update ? tr("updated") : tr("created"),
                                             q(self->settings_.endpoint))
                                        .arg(c.snapshot_ids_size())
                                        .arg(c.nodes_size())
                                        .arg(c.revision());
            self->status_->setText(summary.toHtmlEscaped());
            self->updateCommand();
            self->replan();
            emit self->caseCreated(self->case_id_, summary);
          } else {
            self->status_->clear();
            emit self->caseFailed(update ? tr("The case could not be updated: %1").arg(q(message))
                                         : tr("The case could not be created: %1").arg(q(message)));
          }
          self->updateCaseButton();
        },
        Qt::QueuedConnection);
  });
}

QList<int> EscalatePage::checkedNodes() const { return nodes_model_->checkedIndexes(); }

void EscalatePage::checkNodes(const QList<int>& nodes) {
  nodes_model_->setCheckedIndexes({nodes.begin(), nodes.end()});
  fillFindings();
  checksChanged();
}

void EscalatePage::fillFindings() {
  std::vector<CheckListModel::Item> items;
  if (job_ == nullptr) {
    findings_model_->setItems({});
    return;
  }
  const QList<int> checked = checkedNodes();
  const std::set<int> nodes(checked.begin(), checked.end());
  for (int i = 0; i < job_->report.findings_size(); ++i) {
    if (nodes.count(nodeOfFinding(*job_, i)) == 0) continue;
    const auto& f = job_->report.findings(i);
    QString where = q(f.device());
    if (f.port() != 0) where += QLatin1Char('/') + QString::number(f.port());
    items.push_back(
        {tr("%1 %2 on %3 %4").arg(q(f.severity()).toUpper(), q(f.code()), q(f.node()), where),
         q(f.summary()), i, severityRank(f.severity()) >= 2, false});
  }
  findings_model_->setItems(std::move(items));
}

void EscalatePage::updateCommand() {
  if (job_ == nullptr) {
    command_->clear();
    return;
  }
  const QList<int> nodes = checkedNodes();
  if (nodes.isEmpty()) {
    command_->setPlainText(tr("Nothing is checked: there is no bundle to write."));
    return;
  }
  const auto c = escalationCommands(*job_, std::vector<int>(nodes.begin(), nodes.end()),
                                    case_ ? &*case_ : nullptr, redact_->isChecked());
  QString text = tr("# Same bundle from the CLI");
  if (!c.note.empty()) text += tr(" (%1)").arg(q(c.note));
  text += QLatin1Char('\n') + q(c.export_line);
  text += tr("\n# On the host:\n") + q(c.host_line);
  command_->setPlainText(text);
}

void EscalatePage::exportWithDialog() {
  if (job_ == nullptr) return;
  // Ctrl+E reaches here with the button disabled too.
  if (checkedNodes().isEmpty())
    return exportDone(false, tr("nothing is checked: check the nodes the bundle should carry"));
  const QList<int> checked = checkedNodes();
  const auto c = escalationCommands(*job_, std::vector<int>(checked.begin(), checked.end()),
                                    case_ ? &*case_ : nullptr, redact_->isChecked());
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export bundle"), q(c.bundle_file),
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
  BundleExportSettings settings{c.cert_file, c.key_file, case_id_.toStdString(), IBC_VERSION,
                                redact_->isChecked()};
  exporting_ = true;
  updateExportButton();
  status_->setText(
      tr("Writing %1 (%2 snapshot(s))...").arg(path.toHtmlEscaped()).arg(inputs->nodes.size()));
  const PageRef self{this, this};
  runOnWorker([inputs = std::move(*inputs), settings = std::move(settings), path, self] {
    auto written = console::writeBundleExport(inputs, settings, path.toStdString());
    const QString message =
        written.ok() ? tr("Wrote %1: %2 node(s)%3, signed by %4. Check it with: ibcollect "
                          "bundle verify %5 --ca CA.pem")
                           .arg(path)
                           .arg(written->snapshots)
                           .arg(written->pseudonym_map.empty()
                                    ? QString()
                                    : tr(", redacted (snapshots left out; pseudonym map %1)")
                                          .arg(q(written->pseudonym_map)))
                           .arg(q(written->signer), shellQuote(path))
                     : q(written.error().message);
    QMetaObject::invokeMethod(
        qApp,
        [self, ok = written.ok(), message] {
          if (!self) return;
          self->exporting_ = false;
          self->updateExportButton();
          self->exportDone(ok, message);
        },
        Qt::QueuedConnection);
  });
}

void EscalatePage::exportDone(bool ok, const QString& message) {
  status_->setText(ok ? message.toHtmlEscaped()
                      : tr("<b>Bundle not written:</b> %1").arg(message.toHtmlEscaped()));
  emit exported(ok, message);
}

QString EscalatePage::exportCommand() const {
  if (job_ == nullptr) return {};
  const QList<int> nodes = checkedNodes();
  return q(escalationCommands(*job_, std::vector<int>(nodes.begin(), nodes.end()),
                              case_ ? &*case_ : nullptr, redact_->isChecked())
               .export_line);
}

QString EscalatePage::hostCommand() const {
  if (job_ == nullptr) return {};
  const QList<int> nodes = checkedNodes();
  return q(escalationCommands(*job_, std::vector<int>(nodes.begin(), nodes.end()),
                              case_ ? &*case_ : nullptr, redact_->isChecked())
               .host_line);
}

}  // namespace ibc::console

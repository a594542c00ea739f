#include "pages/jobs_page.h"

#include "ibc/console/job_loader.h"

#include <algorithm>

#include <QDateTime>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTreeView>
#include <QVBoxLayout>
#include <map>
#include <memory>

#include "ibc/console/workers.h"

namespace ibc::console {

namespace {

constexpr int kJobRole = Qt::UserRole + 1;
constexpr int kTenantRole = Qt::UserRole + 2;
constexpr int kFilesRole = Qt::UserRole + 3;  // an opened group not shown: its files

QString q(const std::string& s) { return QString::fromStdString(s); }

QString when(int64_t unix_ms) {
  if (unix_ms <= 0) return {};
  return QDateTime::fromMSecsSinceEpoch(unix_ms, Qt::UTC)
      .toString(QStringLiteral("yyyy-MM-dd hh:mm 'UTC'"));
}

}  // namespace

JobsPage::JobsPage(QWidget* parent) : Page(parent) {
  collector_ = new QLineEdit(this);
  collector_->setPlaceholderText(tr("host:port"));
  ca_ = new QLineEdit(this);
  ca_->setPlaceholderText(tr("CA.pem the collector's certificate chains to"));
  cert_ = new QLineEdit(this);
  cert_->setPlaceholderText(tr("your support certificate (PEM)"));
  key_ = new QLineEdit(this);
  key_->setPlaceholderText(tr("its private key (PEM)"));
  tenant_ = new QLineEdit(this);
  tenant_->setPlaceholderText(tr("tenant (the O of its agents' certificates)"));
  list_ = new QPushButton(tr("List jobs"), this);
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(tr("Search jobs and nodes (e.g. 1234, gpu0*)"));
  search_->setClearButtonEnabled(true);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  model_ = new QStandardItemModel(this);
  model_->setHorizontalHeaderLabels(
      {tr("Tenant / job / node"), tr("Snapshots"), tr("Last collected"), tr("Where")});
  filter_ = new QSortFilterProxyModel(this);
  filter_->setSourceModel(model_);
  filter_->setRecursiveFilteringEnabled(true);
  filter_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  filter_->setFilterKeyColumn(0);
  view_ = new QTreeView(this);
  view_->setModel(filter_);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->setUniformRowHeights(true);
  view_->header()->setResizeContentsPrecision(200);  // widths from the first rows only
  view_->header()->setStretchLastSection(true);

  auto* form = new QFormLayout;
  form->addRow(tr("Collector:"), collector_);
  form->addRow(tr("CA:"), ca_);
  form->addRow(tr("Certificate:"), cert_);
  form->addRow(tr("Key:"), key_);
  auto* tenant_row = new QHBoxLayout;
  tenant_row->addWidget(tenant_, 1);
  tenant_row->addWidget(list_);
  form->addRow(tr("Tenant:"), tenant_row);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(status_);
  layout->addWidget(search_);
  layout->addWidget(view_, 1);
  status_->setText(
      tr("Offline: the tree lists what was opened. To browse the collector, give "
         "its address, your support certificate and a tenant, then List jobs. "
         "Double-click a job to open it."));

  connect(list_, &QPushButton::clicked, this, &JobsPage::refresh);
  connect(tenant_, &QLineEdit::returnPressed, this, &JobsPage::refresh);
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
    filter_->setFilterWildcard(text.contains(QLatin1Char('*')) || text.isEmpty()
                                   ? text
                                   : QLatin1Char('*') + text + QLatin1Char('*'));
    view_->expandAll();
  });
  connect(view_, &QTreeView::activated, this, [this](const QModelIndex& index) {
    const QModelIndex source = filter_->mapToSource(index.siblingAtColumn(0));
    const QString job = source.data(kJobRole).toString();
    const QString tenant = source.data(kTenantRole).toString();
    const QStringList files = source.data(kFilesRole).toStringList();
    if (!files.isEmpty()) {
      emit openFilesRequested(files);
    } else if (!job.isEmpty() && !tenant.isEmpty()) {
      emit openJob(tenant, job);
    }
  });
}

void JobsPage::setSettings(const CollectorSettings& s, const QString& tenant) {
  collector_->setText(q(s.endpoint));
  ca_->setText(q(s.ca_file));
  cert_->setText(q(s.cert_file));
  key_->setText(q(s.key_file));
  tenant_->setText(tenant);
}

CollectorSettings JobsPage::settings() const {
  return {collector_->text().trimmed().toStdString(), ca_->text().trimmed().toStdString(),
          cert_->text().trimmed().toStdString(), key_->text().trimmed().toStdString()};
}

QString JobsPage::tenant() const { return tenant_->text().trimmed(); }

void JobsPage::refresh() {
  const CollectorSettings s = settings();
  const QString tenant = this->tenant();
  if (s.endpoint.empty() || tenant.isEmpty()) {
    status_->setText(tr("Give the collector's address and a tenant first."));
    emit listed(false);
    return;
  }
  list_->setEnabled(false);
  status_->setText(tr("Asking %1 for the jobs of %2...").arg(q(s.endpoint), tenant));
  ++listings_;
  setReady(false);
  QPointer<JobsPage> self(this);
  runOnWorker([s, tenant, self] {
    auto jobs = std::make_shared<core::Result<std::vector<JobEntry>>>(
        listTenantJobs(s, tenant.toStdString()));
    // The tenant's cases go under their jobs (console/README.md `jobs`: tenants → jobs → cases).
    auto cases = std::make_shared<core::Result<std::vector<::ibcollect::v1::Case>>>(
        jobs->ok() ? listCases(s, tenant.toStdString())
                   : core::Result<std::vector<::ibcollect::v1::Case>>(jobs->error()));
    QMetaObject::invokeMethod(
        self,
        [self, jobs, cases, tenant] {
          if (!self) return;
          self->list_->setEnabled(true);
          self->setReady(--self->listings_ == 0);
          if (!jobs->ok()) {
            self->status_->setText(tr("Could not list jobs: %1").arg(q(jobs->error().message)));
            emit self->listed(false);
            emit self->listFailed(q(jobs->error().message));
            return;
          }
          self->showJobs(tenant, **jobs, *cases);
          emit self->listed(true);
        },
        Qt::QueuedConnection);
  });
}

void JobsPage::showJobs(const QString& tenant, const std::vector<JobEntry>& jobs,
                        const core::Result<std::vector<::ibcollect::v1::Case>>& cases) {
  const auto caseRow = [](const ::ibcollect::v1::Case& c) {
    static const char* const kStates[] = {"?", "open", "escalated", "closed"};
    const int state = c.state() >= 0 && c.state() <= 3 ? c.state() : 0;
    auto* item = new QStandardItem(tr("case %1").arg(q(c.case_id())));
    item->setToolTip(tr("%1: %2 snapshot(s), %3 host result(s), by %4")
                         .arg(q(c.title()))
                         .arg(c.snapshot_ids_size())
                         .arg(c.host_results_size())
                         .arg(q(c.created_by())));
    return QList<QStandardItem*>{
        item, new QStandardItem(QString::number(c.snapshot_ids_size())),
        new QStandardItem(when(c.updated_at_unix_ms())),
        new QStandardItem(tr("%1: %2").arg(tr(kStates[state]), q(c.title())))};
  };
  // Replace this tenant's branch, keep the others (and what was opened).
  const auto found = model_->findItems(tenant);
  for (auto* item : found) model_->removeRow(item->row());
  auto* top = new QStandardItem(tenant);
  for (const auto& j : jobs) {
    auto* job = new QStandardItem(tr("job %1").arg(q(j.job_id)));
    job->setData(q(j.job_id), kJobRole);
    job->setData(tenant, kTenantRole);
    job->setToolTip(tr("Double-click to fetch and open this job's snapshots"));
    uint64_t count = 0;
    int64_t last = 0;
    for (const auto& n : j.nodes) {
      count += n.snapshot_count();
      last = std::max(last, n.last_collected_at_unix_ms());
      job->appendRow({new QStandardItem(q(n.node())),
                      new QStandardItem(QString::number(n.snapshot_count())),
                      new QStandardItem(when(n.last_collected_at_unix_ms())),
                      new QStandardItem(tr("collector"))});
    }
    if (cases.ok()) {
      for (const auto& c : *cases) {
        if (c.job_id() != j.job_id) continue;
        auto row = caseRow(c);
        row[0]->setData(q(j.job_id), kJobRole);  // double-click opens the case's job
        row[0]->setData(tenant, kTenantRole);
        job->appendRow(row);
      }
    }
    top->appendRow({job, new QStandardItem(QString::number(count)), new QStandardItem(when(last)),
                    new QStandardItem(tr("%1 node(s)").arg(j.nodes.size()))});
  }
  if (!cases.ok()) {
    auto* none = new QStandardItem(tr("cases: could not list (%1)").arg(q(cases.error().message)));
    none->setEnabled(false);
    top->appendRow(none);
  } else {
    for (const auto& c : *cases) {
      const bool under_a_job = std::any_of(
          jobs.begin(), jobs.end(), [&](const JobEntry& j) { return j.job_id == c.job_id(); });
      if (!under_a_job) top->appendRow(caseRow(c));
    }
  }
  model_->insertRow(0, {top, new QStandardItem(), new QStandardItem(),
                        new QStandardItem(tr("%1 job(s)").arg(jobs.size()))});
  view_->expand(filter_->mapFromSource(top->index()));
  view_->resizeColumnToContents(0);
  status_->setText(
      tr("%1 job(s) of %2. Double-click a job to open it.").arg(jobs.size()).arg(tenant));
}

QString JobsPage::statusText() const { return status_->text(); }

void JobsPage::setJob(const JobData* job) {
  opened_ = job;
  opened_stale_ = true;
  if (isVisible()) showOpened();
}

void JobsPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (opened_stale_) showOpened();
}

void JobsPage::showOpened() {
  opened_stale_ = false;
  const JobData* job = opened_;
  // The "opened" branch mirrors what the other pages show.
  const auto found = model_->findItems(tr("opened"));
  for (auto* item : found) model_->removeRow(item->row());
  if (job == nullptr || job->report.nodes_size() == 0) return;
  // One row per job the opened files held (tenant and job): the shown one, and the others to
  // open apart (double-click); files of several jobs are never judged as one. Nodes are the
  // grid's (no row per node here: a 2,000-node job would be 2,000 items).
  auto* top = new QStandardItem(tr("opened"));
  auto name = [](const OpenedGroup& g) {
    QString text = g.job_id.empty() ? tr("no job id") : tr("job %1").arg(q(g.job_id));
    text += g.tenant.empty() ? tr(", unsigned") : tr(", tenant %1").arg(q(g.tenant));
    return text;
  };
  if (job->groups.empty()) {
    top->appendRow({new QStandardItem(tr("%1 snapshot(s)").arg(job->report.nodes_size())),
                    new QStandardItem(), new QStandardItem(), new QStandardItem()});
  }
  for (const OpenedGroup& g : job->groups) {
    auto* item = new QStandardItem(name(g));
    QStringList files;
    for (const auto& f : g.files) files << q(f);
    auto* count = new QStandardItem(files.isEmpty() ? QString() : QString::number(files.size()));
    auto* what =
        new QStandardItem(g.shown ? tr("shown: %1 node(s)").arg(job->report.nodes_size())
                                  : tr("NOT shown (another job): double-click to open it apart"));
    if (!g.shown) {
      item->setData(files, kFilesRole);
      QFont bold = item->font();
      bold.setBold(true);
      what->setFont(bold);
    }
    item->setToolTip(files.join(QLatin1Char('\n')).left(4000));
    top->appendRow({item, count, new QStandardItem(), what});
  }
  model_->appendRow({top, new QStandardItem(), new QStandardItem(),
                     new QStandardItem(tr("%1 node(s)").arg(job->report.nodes_size()))});
  view_->expandAll();
  for (int c = 0; c < 3; ++c) view_->resizeColumnToContents(c);
}

void JobsPage::loadJob(LoadedJob* job) { setJob(job != nullptr ? job->data.get() : nullptr); }

}  // namespace ibc::console

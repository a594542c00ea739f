#include "pages/diff_page.h"

#include "ibc/console/job_loader.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "ibc/console/diff_model.h"
#include "ibc/console/job_data.h"
#include "ibc/console/workers.h"
#include "widgets/table_copy.h"

namespace ibc::console {

DiffPage::DiffPage(QWidget* parent) : Page(parent) {
  left_ = new QComboBox(this);
  right_ = new QComboBox(this);
  left_->setMinimumContentsLength(24);
  right_->setMinimumContentsLength(24);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  model_ = new DiffModel(this);
  auto* sorted = new QSortFilterProxyModel(this);
  sorted->setSourceModel(model_);
  sorted->setSortRole(DiffModel::SortRole);
  view_ = new QTableView(this);
  view_->setModel(sorted);
  view_->setSortingEnabled(true);
  view_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);  // the model's order
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setWordWrap(false);
  addCopyAction(view_);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Compare"), this));
  bar->addWidget(left_);
  bar->addWidget(new QLabel(tr("against"), this));
  bar->addWidget(right_);
  bar->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(view_, 1);

  connect(left_, &QComboBox::currentIndexChanged, this, [this] { recompute(); });
  connect(right_, &QComboBox::currentIndexChanged, this, [this] { recompute(); });
}

void DiffPage::setJob(const JobData* job) {
  if (job != job_ && !majority_pending_) majority_.reset();
  job_ = job;
  {
    const QSignalBlocker a(left_);
    const QSignalBlocker b(right_);
    left_->clear();
    right_->clear();
    right_->addItem(tr("the job's majority"), -1);
    if (job_ != nullptr) {
      for (int i = 0; i < job_->report.nodes_size(); ++i) {
        const QString label = QString::fromStdString(job_->report.nodes(i).label());
        left_->addItem(label, i);
        right_->addItem(label, i);
      }
    }
  }
  recompute();
}

void DiffPage::showNode(int node_index) {
  const int i = left_->findData(node_index);
  if (i >= 0) left_->setCurrentIndex(i);
}

void DiffPage::setRight(int node_index) {
  const int i = right_->findData(node_index);
  if (i >= 0) right_->setCurrentIndex(i);
}

void DiffPage::recompute() {
  const int left = left_->currentData().isValid() ? left_->currentData().toInt() : -1;
  const int right = right_->currentData().isValid() ? right_->currentData().toInt() : -1;
  if (job_ == nullptr || left < 0) {
    model_->clear();
    summary_->setText(tr("Open snapshots to compare them."));
    return;
  }
  if (right < 0) {
    if (!majority_ && majority_pending_) {
      model_->clear();
      summary_->setText(
          tr("Working out the job's majority over %1 nodes...").arg(job_->report.nodes_size()));
      return;
    }
    if (!majority_) majority_ = std::make_shared<const Majority>(majorityFacts(*job_));
    model_->compareWithMajority(job_, left, *majority_);
  } else {
    model_->compareNodes(job_, left, right);
  }
  view_->resizeColumnsToContents();
  if (!model_->error().isEmpty()) {
    summary_->setText(tr("Cannot compare: %1").arg(model_->error()));
    return;
  }
  QString unread;
  if (right < 0 && majority_->unread > 0) {
    unread = tr(" (%1 node(s) whose snapshot could not be read again did not vote: %2)")
                 .arg(majority_->unread)
                 .arg(QString::fromStdString(majority_->first_error));
  }
  if (model_->rowCount() == 0) {
    summary_->setText(tr("%1 and %2 do not differ in anything the snapshots hold.")
                          .arg(model_->leftName(), model_->rightName()) +
                      unread);
  } else {
    summary_->setText(tr("%1 difference(s) between %2 and %3; %4 where %2 is worse (red, "
                         "listed first); green where it is better.")
                          .arg(model_->rowCount())
                          .arg(model_->leftName(), model_->rightName())
                          .arg(model_->worseCount()) +
                      unread);
  }
}

void DiffPage::loadJob(LoadedJob* job) {
  ++generation_;
  majority_.reset();
  majority_pending_ = false;
  if (job == nullptr) {
    setJob(nullptr);
    setReady(true);
    return;
  }
  // The majority of a large job takes a while: a worker works it out, holding the job so
  // that it outlives a reload; the page says so meanwhile.
  majority_pending_ = true;
  setReady(false);
  QPointer<DiffPage> self(this);
  runOnWorker([hold = job->shared_from_this(), self, generation = generation_]() mutable {
    auto facts = std::make_shared<const Majority>(majorityFacts(*hold->data));
    hold.reset();  // a replaced job is freed here, not on the GUI thread
    if (!self) return;
    QMetaObject::invokeMethod(
        self,
        [self, generation, facts = std::move(facts)] {
          if (!self || self->generation_ != generation) return;
          self->majority_ = facts;
          self->majority_pending_ = false;
          self->recompute();
          self->setReady(true);
          emit self->majorityReady();
        },
        Qt::QueuedConnection);
  });
  setJob(job->data.get());
}

}  // namespace ibc::console

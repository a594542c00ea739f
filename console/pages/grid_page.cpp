#include "pages/grid_page.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSpinBox>
#include <QTableView>
#include <QThreadPool>
#include <QVBoxLayout>
#include <algorithm>
#include <iterator>

#include "ibc/console/grid_filter.h"
#include "ibc/console/job_data.h"
#include "ibc/console/job_loader.h"
#include "ibc/console/node_grid_model.h"
#include "widgets/filter_edit.h"
#include "widgets/table_copy.h"

namespace ibc::console {

GridPage::GridPage(NodeGridModel* model, QWidget* parent)
    : Page(parent), model_(model), filter_(new GridFilter(this)) {
  filter_->setGridModel(model);

  filter_edit_ =
      new FilterEdit(tr("Filter: node glob (gpu1*), state!=ACTIVE, rate<200, severity>=warning, "
                        "code=NODE_OUTLIER, symbol_error>0, signer!=UNSIGNED"),
                     this);
  top_counter_ = new QLineEdit(this);
  top_counter_->setPlaceholderText(tr("counter for top-X"));
  top_count_ = new QSpinBox(this);
  top_count_->setRange(0, 100000);
  top_count_->setSpecialValueText(tr("all"));
  top_count_->setPrefix(tr("top "));
  summary_ = new QLabel(this);

  view_ = new QTableView(this);
  view_->setModel(filter_);
  view_->setSortingEnabled(true);
  // Worst first (issue 22): by verdict, critical ports on top; equal verdicts keep the
  // model's order (the job's node order), as the proxy's sort is stable.
  view_->sortByColumn(NodeGridModel::Verdict, Qt::DescendingOrder);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  view_->setAlternatingRowColors(true);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->installEventFilter(this);
  // What a tired engineer reads first comes first: who, the verdict and why, then the port's
  // state, then the numbers (the model's column numbers stay as they are).
  const int order[] = {
      NodeGridModel::Node,         NodeGridModel::Device,       NodeGridModel::Port,
      NodeGridModel::Verdict,      NodeGridModel::WorstFinding, NodeGridModel::Findings,
      NodeGridModel::State,        NodeGridModel::PhysState,    NodeGridModel::Rate,
      NodeGridModel::LinkLayer,    NodeGridModel::Mtu,          NodeGridModel::Busbw,
      NodeGridModel::SymbolErrors, NodeGridModel::LinkDowned,   NodeGridModel::RcvErrors,
      NodeGridModel::XmitDiscards, NodeGridModel::XmitWait,     NodeGridModel::Firmware,
      NodeGridModel::Function,     NodeGridModel::Signer};
  for (int i = 0; i < static_cast<int>(std::size(order)); ++i) {
    auto* header = view_->horizontalHeader();
    header->moveSection(header->visualIndex(order[i]), i);
  }

  auto* bar = new QHBoxLayout;
  bar->addWidget(filter_edit_, 3);
  bar->addWidget(top_counter_, 1);
  bar->addWidget(top_count_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(view_, 1);

  connect(filter_edit_, &QLineEdit::textChanged, this, [this](const QString& text) {
    filter_->setFilterText(text);
    filter_edit_->setError(filter_->filterError());
    updateSummary();
  });
  auto top = [this] {
    filter_->setTopCounter(top_counter_->text().trimmed(), top_count_->value());
    updateSummary();
  };
  connect(top_counter_, &QLineEdit::editingFinished, this, top);
  connect(top_count_, &QSpinBox::valueChanged, this, top);
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    // Columns no snapshot has a value for (counters the captures lack, busbw without
    // nccl-tests, VF on bare metal) are hidden; the summary says which.
    for (int c = 0; c < NodeGridModel::ColumnCount; ++c)
      view_->setColumnHidden(c, model_->rowCount() > 0 && model_->columnIsEmpty(c) &&
                                    c != NodeGridModel::WorstFinding);
    fitColumns();
    updateSummary();
  });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            const Target t = targetOf(current);
            emit nodeSelected(t.node, t.device, t.port);
          });
  // Enter or a double-click opens the row's node on the node page.
  connect(view_, &QAbstractItemView::activated, this, [this](const QModelIndex& index) {
    if (!index.isValid()) return;
    const Target t = targetOf(index);
    emit openNodeRequested(t.node, t.device, t.port);
  });
  view_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(view_, &QWidget::customContextMenuRequested, this,
          [this](const QPoint& at) { showContextMenu(at); });
  updateSummary();
}

void GridPage::fitColumns() {
  // Each column as wide as its header or its longest text over every row, asked of the
  // view's own delegate for two cells per column (the longest plain and the longest bold
  // text) instead of every cell of thousands of rows (resizeColumnsToContents took ~15 ms
  // of the GUI thread for a 2,000-node job, and measured only the first rows).
  auto* header = view_->horizontalHeader();
  const int grid = view_->showGrid() ? 1 : 0;
  for (int c = 0; c < NodeGridModel::ColumnCount; ++c) {
    if (view_->isColumnHidden(c)) continue;
    int width = header->sectionSizeHint(c);
    for (const int row : model_->widestRows(c)) {
      if (row < 0) continue;
      const QModelIndex shown = filter_->mapFromSource(model_->index(row, c));
      if (shown.isValid()) width = std::max(width, view_->sizeHintForIndex(shown).width() + grid);
    }
    header->resizeSection(c, width);
  }
}

void GridPage::setFilterText(const QString& text) { filter_edit_->setText(text); }

void GridPage::loadJob(LoadedJob* job) {
  if (job == nullptr) {
    // The old rows are freed off the GUI thread (freeing them here stalled a reload).
    auto old = std::make_shared<NodeGridModel::Prepared>(model_->setJob(nullptr, {}));
    QThreadPool::globalInstance()->start([old = std::move(old)]() mutable { old.reset(); });
    return;
  }
  model_->setJob(job->data.get(), std::move(job->grid));
}

GridPage::Target GridPage::targetOf(const QModelIndex& shown) const {
  const QModelIndex src = filter_->mapToSource(shown);
  return {src.data(NodeGridModel::NodeIndexRole).toInt(),
          model_->index(src.row(), NodeGridModel::Device).data().toString(),
          model_->index(src.row(), NodeGridModel::Port).data().toInt()};
}

QMenu* GridPage::contextMenuFor(const QModelIndex& index) {
  auto* menu = new QMenu(this);
  menu->setAttribute(Qt::WA_DeleteOnClose);
  if (!index.isValid()) return menu;
  const Target t = targetOf(index);
  const QString name = model_->nodeName(filter_->mapToSource(index).row());
  auto* open = menu->addAction(tr("Open node %1").arg(name));
  open->setObjectName(QStringLiteral("open-node"));
  connect(open, &QAction::triggered, this,
          [this, t] { emit openNodeRequested(t.node, t.device, t.port); });
  auto* copy = menu->addAction(tr("Copy selected rows"));
  copy->setObjectName(QStringLiteral("copy-rows"));
  copy->setShortcut(QKeySequence::Copy);
  connect(copy, &QAction::triggered, this, [this] { copySelection(); });
  const QString value = index.data().toString();
  const QString clause = GridFilter::clauseFor(index.column(), value);
  if (!clause.isEmpty()) {
    auto* only = menu->addAction(tr("Filter: %1").arg(clause));
    only->setObjectName(QStringLiteral("filter-value"));
    connect(only, &QAction::triggered, this, [this, clause] { addFilterClause(clause); });
    const QString except = GridFilter::clauseFor(index.column(), value, true);
    auto* hide = menu->addAction(tr("Filter: %1").arg(except));
    hide->setObjectName(QStringLiteral("filter-not-value"));
    connect(hide, &QAction::triggered, this, [this, except] { addFilterClause(except); });
  }
  return menu;
}

void GridPage::showContextMenu(const QPoint& at) {
  contextMenuFor(view_->indexAt(at))->popup(view_->viewport()->mapToGlobal(at));
}

void GridPage::addFilterClause(const QString& clause) {
  const QString now = filter_edit_->text().trimmed();
  filter_edit_->setText(now.isEmpty() ? clause : now + QLatin1Char(' ') + clause);
}

void GridPage::selectNode(int node_index, const QString& device, int port) {
  const int row = model_->rowOf(node_index, device, port);
  if (row < 0) return;
  const QModelIndex proxy = filter_->mapFromSource(model_->index(row, 0));
  if (!proxy.isValid()) return;  // filtered out: leave the engineer's filter alone
  QSignalBlocker block(view_->selectionModel());
  view_->selectionModel()->setCurrentIndex(
      proxy, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  view_->scrollTo(proxy);
}

void GridPage::updateSummary() {
  const int total = model_->rowCount();
  const int shown = filter_->rowCount();
  QString text = tr("%1 of %2 rows shown; %3 row(s) differ from the job's majority (highlighted)")
                     .arg(shown)
                     .arg(total)
                     .arg(model_->outlierRows());
  if (total > 0) {
    bool any_counter = false;
    for (int c = NodeGridModel::SymbolErrors; c <= NodeGridModel::XmitWait; ++c)
      any_counter = any_counter || !model_->columnIsEmpty(c);
    if (!any_counter) {
      text += tr("; no port counters in these snapshots (their columns are hidden)");
    } else {
      text += model_->hasWindow()
                  ? tr("; counters are per second over the snapshots' window")
                  : tr("; counters are totals since reset (no window: snapshot --window for "
                       "rates)");
    }
  }
  if (const JobData* job = model_->job();
      job != nullptr && job->report.findings_size() == 0 && job->report.nodes_size() > 0) {
    // No finding is a result: said first, not left to an empty column.
    text = tr("<b>All %1 node(s) OK</b>: no finding. ").arg(job->report.nodes_size()) + text;
  }
  if (!filter_->filterError().isEmpty())
    text = QStringLiteral("<b>%1</b>").arg(filter_->filterError().toHtmlEscaped());
  summary_->setText(text);
}

bool GridPage::eventFilter(QObject* watched, QEvent* event) {
  if (watched == view_ && event->type() == QEvent::KeyPress &&
      static_cast<QKeyEvent*>(event)->matches(QKeySequence::Copy)) {
    copySelection();
    return true;
  }
  return QWidget::eventFilter(watched, event);
}

void GridPage::copySelection() const { copySelectedRows(view_); }

}  // namespace ibc::console

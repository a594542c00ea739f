#include "pages/findings_page.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>

#include <QHeaderView>
#include <QKeySequence>
#include <QSplitter>
#include <QTextBrowser>
#include <QTreeView>
#include <QVBoxLayout>
#include "ibc/console/job_loader.h"
#include "widgets/filter_edit.h"

#include "ibc/console/findings_model.h"
#include "ibc/console/job_data.h"

namespace ibc::console {

namespace {

// Groups opened at once when the job is small; a large one opens its most severe group only
// (a code on 2,000 nodes is one line until the engineer opens it).
constexpr int kExpandAllBelowRows = 200;
// A job whose every row fits on a screen opens with its ports shown too.
constexpr int kExpandEverythingBelowRows = 40;

}  // namespace

FindingsPage::FindingsPage(FindingsModel* model, QWidget* parent) : Page(parent), model_(model) {
  proxy_ = new FindingsFilter(this);
  proxy_->setFindingsModel(model_);
  view_ = new QTreeView(this);
  view_->setModel(proxy_);
  view_->setUniformRowHeights(true);
  view_->setAlternatingRowColors(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->header()->setStretchLastSection(false);
  view_->header()->setSectionResizeMode(FindingsModel::Summary, QHeaderView::Stretch);
  // Column widths from the first rows only: a 2,000-node job's findings would all be measured.
  view_->header()->setResizeContentsPrecision(200);
  detail_ = new QTextBrowser(this);
  detail_->setOpenLinks(false);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(view_);
  split->addWidget(detail_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  filter_ = new FilterEdit(
      tr("Filter: node glob (gpu1*), code=NCCL_*, severity>=warning, device=mlx5_3"), this);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(filter_);
  layout->addWidget(split);
  connect(filter_, &QLineEdit::textChanged, this, [this] { applyFilter(); });

  copy_finding_ = new QAction(tr("Copy finding with evidence"), view_);
  copy_finding_->setShortcut(QKeySequence::Copy);
  copy_finding_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  copy_node_ = new QAction(tr("Copy node name"), view_);
  open_node_ = new QAction(tr("Open node"), view_);
  view_->addActions({copy_finding_, copy_node_, open_node_});
  view_->setContextMenuPolicy(Qt::ActionsContextMenu);
  connect(copy_finding_, &QAction::triggered, this, [this] {
    const QString text = model_->copyText(source(view_->currentIndex().siblingAtColumn(0)));
    if (!text.isEmpty()) QApplication::clipboard()->setText(text);
  });
  connect(copy_node_, &QAction::triggered, this, [this] {
    const QString name = model_->nodeName(source(view_->currentIndex().siblingAtColumn(0)));
    if (!name.isEmpty()) QApplication::clipboard()->setText(name);
  });
  connect(open_node_, &QAction::triggered, this, [this] { openNode(view_->currentIndex()); });
  // Enter or a double click on a finding (a row without children) opens its node.
  connect(view_, &QAbstractItemView::activated, this, [this](const QModelIndex& index) {
    if (proxy_->rowCount(index.siblingAtColumn(0)) == 0) openNode(index);
  });

  // Expanding and measuring a 2,000-node job's findings costs the GUI thread: done when the
  // page is seen, not on every load.
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    tree_stale_ = true;
    detail_->clear();
    showAllOk();
    updateActions();
    if (isVisible()) layoutTree();
  });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            showFinding(current);
            updateActions();
            if (!current.isValid() || !current.parent().isValid()) return;
            const int node = current.data(FindingsModel::NodeIndexRole).toInt();
            if (node < 0) return;
            emit nodeSelected(node, current.data(FindingsModel::DeviceRole).toString(),
                              current.data(FindingsModel::PortRole).toInt());
          });
  updateActions();
}

void FindingsPage::openNode(const QModelIndex& index) {
  if (!index.isValid()) return;
  const int node = index.data(FindingsModel::NodeIndexRole).toInt();
  if (node < 0) return;
  emit openNodeRequested(node, index.data(FindingsModel::DeviceRole).toString(),
                         index.data(FindingsModel::PortRole).toInt());
}

void FindingsPage::updateActions() {
  const QModelIndex current = view_->currentIndex();
  const bool of_node = current.isValid() && current.data(FindingsModel::NodeIndexRole).toInt() >= 0;
  copy_finding_->setEnabled(current.isValid());
  copy_node_->setEnabled(of_node);
  open_node_->setEnabled(of_node);
}

void FindingsPage::layoutTree() {
  tree_stale_ = false;
  int node_rows = 0;
  int port_rows = 0;
  for (int g = 0; g < proxy_->rowCount(); ++g) {
    const QModelIndex group = proxy_->index(g, 0);
    node_rows += proxy_->rowCount(group);
    for (int r = 0; r < proxy_->rowCount(group) && node_rows <= kExpandAllBelowRows; ++r)
      port_rows += proxy_->rowCount(proxy_->index(r, 0, group));
  }
  if (proxy_->rowCount() + node_rows + port_rows <= kExpandEverythingBelowRows) {
    view_->expandAll();
  } else if (node_rows <= kExpandAllBelowRows) {
    view_->expandToDepth(0);
  } else if (proxy_->rowCount() > 0) {
    view_->expand(proxy_->index(0, 0));
  }
  // Worst first: the most severe group's first node, unless a node was selected already.
  if (!view_->currentIndex().isValid())
    setCurrentSilently(proxy_->mapFromSource(model_->worstFinding()));
  for (int c = FindingsModel::Node; c < FindingsModel::ColumnCount; ++c)
    view_->resizeColumnToContents(c);
  if (view_->currentIndex().isValid()) view_->scrollTo(view_->currentIndex());
}

void FindingsPage::setFilterText(const QString& text) { filter_->setText(text); }

void FindingsPage::showAllOk() {
  // No finding is a result, not a blank page.
  if (job_ == nullptr || model_->rowCount() > 0 || job_->report.nodes_size() == 0) return;
  detail_->setHtml(tr("<h3>All %1 node(s) OK</h3><p>No finding: every port the snapshots hold "
                      "is up at its rate, no error counter moved, and no log says otherwise. "
                      "If the job is still slow, compare busbw on the Charts page and the "
                      "nodes on the Diff page.</p>")
                       .arg(job_->report.nodes_size()));
}

void FindingsPage::applyFilter() {
  proxy_->setFilterText(filter_->text());
  filter_->setError(proxy_->filterError());
  if (!filter_->text().trimmed().isEmpty()) view_->expandToDepth(0);
}

QModelIndex FindingsPage::source(const QModelIndex& shown) const {
  return proxy_->mapToSource(shown);
}

void FindingsPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (tree_stale_) layoutTree();
}

void FindingsPage::showFinding(const QModelIndex& index) {
  if (job_ == nullptr || !index.isValid()) {
    detail_->clear();
    return;
  }
  const QModelIndex row = index.siblingAtColumn(0);
  const std::vector<int> findings = model_->findingsOf(source(row));
  if (findings.empty()) {
    detail_->clear();
    return;
  }
  const auto level = row.data(FindingsModel::LevelRole).toInt();
  auto h = [](const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); };
  auto where = [&](int fi) {
    const auto& f = job_->report.findings(fi);
    if (f.device().empty()) return tr("the whole node");
    return h(f.device()) + (f.port() > 0 ? QStringLiteral(" port %1").arg(f.port()) : QString());
  };
  QString html;
  if (level == FindingsModel::GroupLevel) {
    html += tr("<p><b>%1</b>: %2 finding(s) on %3 node(s). The first is below; open the group "
               "to see every node.</p><hr>")
                .arg(row.data().toString().toHtmlEscaped())
                .arg(findings.size())
                .arg(proxy_->rowCount(row));
  }
  const auto& f = job_->report.findings(findings.front());
  html += QStringLiteral("<p><b>%1 %2</b> on %3 %4</p><p>%5</p><p><b>Evidence</b></p><ul>")
              .arg(h(f.severity()).toUpper(), h(f.code()),
                   row.siblingAtColumn(FindingsModel::Node).data().toString().toHtmlEscaped(),
                   f.device().empty() ? QString() : where(findings.front()), h(f.summary()));
  for (const auto& e : f.evidence()) html += QStringLiteral("<li><tt>%1</tt></li>").arg(h(e));
  html += QStringLiteral("</ul><p><b>Next step</b></p><p>%1</p>").arg(h(f.action()));
  if (level == FindingsModel::NodeLevel && findings.size() > 1) {
    QStringList also;
    for (std::size_t k = 1; k < findings.size(); ++k) also << where(findings[k]);
    html += tr("<p><b>Also on this node</b> (open the row for each): %1</p>")
                .arg(also.join(QStringLiteral(", ")));
  }
  html += QStringLiteral("<p><i>from %1</i></p>").arg(h(f.source()));
  detail_->setHtml(html);
}

void FindingsPage::setCurrentSilently(const QModelIndex& index) {
  if (!index.isValid()) return;
  for (QModelIndex p = index.parent(); p.isValid(); p = p.parent()) view_->expand(p);
  {
    const QSignalBlocker block(view_->selectionModel());
    view_->selectionModel()->setCurrentIndex(
        index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  }
  // The view repaints the new current row on its own signal, blocked above.
  view_->viewport()->update();
  showFinding(index);
  updateActions();
}

void FindingsPage::selectNode(int node_index, const QString& device, int port) {
  // The engineer's own choice stays: a row of that node (in a later group, say) is kept.
  const QModelIndex current = view_->currentIndex();
  if (current.isValid() && current.parent().isValid() &&
      current.data(FindingsModel::NodeIndexRole).toInt() == node_index &&
      (device.isEmpty() || (current.data(FindingsModel::DeviceRole).toString() == device &&
                            current.data(FindingsModel::PortRole).toInt() == port))) {
    view_->scrollTo(current);
    return;
  }
  const QModelIndex at = proxy_->mapFromSource(model_->indexOfNode(node_index, device, port));
  if (!at.isValid()) return;
  setCurrentSilently(at);
  view_->scrollTo(at);
}

void FindingsPage::loadJob(LoadedJob* job) {
  const JobData* data = job != nullptr ? job->data.get() : nullptr;
  setJob(data);  // before the model's reset, which looks at the job
  model_->setJob(data);
}

}  // namespace ibc::console

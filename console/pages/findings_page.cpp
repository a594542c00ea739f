#include "pages/findings_page.h"

#include "ibc/console/job_loader.h"

#include <QHeaderView>
#include <QSplitter>
#include <QTextBrowser>
#include <QTreeView>
#include <QVBoxLayout>

#include "ibc/console/findings_model.h"
#include "ibc/console/job_data.h"

namespace ibc::console {

FindingsPage::FindingsPage(FindingsModel* model, QWidget* parent) : Page(parent), model_(model) {
  view_ = new QTreeView(this);
  view_->setModel(model_);
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
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);

  // Expanding and measuring a 2,000-node job's findings costs the GUI thread ~7 ms: done when
  // the page is seen, not on every load.
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    tree_stale_ = true;
    if (isVisible()) layoutTree();
  });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            showFinding(current);
            if (!current.isValid() || !current.parent().isValid()) return;
            emit nodeSelected(current.data(FindingsModel::NodeIndexRole).toInt(),
                              current.data(FindingsModel::DeviceRole).toString(),
                              current.data(FindingsModel::PortRole).toInt());
          });
}

void FindingsPage::layoutTree() {
  tree_stale_ = false;
  view_->expandAll();
  for (int c = FindingsModel::Node; c < FindingsModel::ColumnCount; ++c)
    view_->resizeColumnToContents(c);
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
  const QModelIndex first = index.parent().isValid() ? index : model_->index(0, 0, index);
  if (!first.isValid()) return;
  const int fi = first.siblingAtColumn(0).data(FindingsModel::FindingIndexRole).toInt();
  const auto& f = job_->report.findings(fi);
  auto h = [](const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); };
  QString html =
      QStringLiteral("<p><b>%1 %2</b> on %3 %4</p><p>%5</p><p><b>Evidence</b></p><ul>")
          .arg(h(f.severity()).toUpper(), h(f.code()), h(f.node()),
               f.device().empty()
                   ? QString()
                   : h(f.device()) +
                         (f.port() > 0 ? QStringLiteral(" port %1").arg(f.port()) : QString()),
               h(f.summary()));
  for (const auto& e : f.evidence()) html += QStringLiteral("<li><tt>%1</tt></li>").arg(h(e));
  html += QStringLiteral("</ul><p><b>Next step</b></p><p>%1</p><p><i>from %2</i></p>")
              .arg(h(f.action()), h(f.source()));
  detail_->setHtml(html);
}

void FindingsPage::selectNode(int node_index, const QString& device, int port) {
  QModelIndex fallback;
  for (int g = 0; g < model_->rowCount(); ++g) {
    const QModelIndex group = model_->index(g, 0);
    for (int r = 0; r < model_->rowCount(group); ++r) {
      const QModelIndex i = model_->index(r, 0, group);
      if (i.data(FindingsModel::NodeIndexRole).toInt() != node_index) continue;
      if (!fallback.isValid()) fallback = i;
      if (i.data(FindingsModel::DeviceRole).toString() == device &&
          i.data(FindingsModel::PortRole).toInt() == port) {
        fallback = i;
        g = model_->rowCount();
        break;
      }
    }
  }
  if (!fallback.isValid()) return;
  QSignalBlocker block(view_->selectionModel());
  view_->selectionModel()->setCurrentIndex(
      fallback, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  view_->scrollTo(fallback);
  showFinding(fallback);
}

void FindingsPage::loadJob(LoadedJob* job) {
  const JobData* data = job != nullptr ? job->data.get() : nullptr;
  model_->setJob(data);
  setJob(data);
}

}  // namespace ibc::console

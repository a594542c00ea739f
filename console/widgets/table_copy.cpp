#include "widgets/table_copy.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QStringList>
#include <QTableView>
#include <set>

namespace ibc::console {

QString selectedRowsText(const QTableView* view) {
  const QAbstractItemModel* m = view->model();
  if (m == nullptr || view->selectionModel() == nullptr) return {};
  std::set<int> rows;
  for (const QModelIndex& i : view->selectionModel()->selectedIndexes()) rows.insert(i.row());
  // Columns in the order the header shows them, hidden ones left out.
  const QHeaderView* header = view->horizontalHeader();
  std::vector<int> columns;
  for (int v = 0; v < header->count(); ++v) {
    const int c = header->logicalIndex(v);
    if (!view->isColumnHidden(c)) columns.push_back(c);
  }
  QStringList lines;
  QStringList head;
  for (const int c : columns) head << m->headerData(c, Qt::Horizontal).toString();
  lines << head.join(QLatin1Char('\t'));
  for (const int row : rows) {
    QStringList cells;
    for (const int c : columns) cells << m->index(row, c).data().toString();
    lines << cells.join(QLatin1Char('\t'));
  }
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void copySelectedRows(const QTableView* view) {
  QApplication::clipboard()->setText(selectedRowsText(view));
}

QAction* addCopyAction(QTableView* view, bool menu) {
  auto* copy = new QAction(QObject::tr("Copy selected rows"), view);
  copy->setObjectName(QStringLiteral("copy-rows"));
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetShortcut);
  QObject::connect(copy, &QAction::triggered, view, [view] { copySelectedRows(view); });
  view->addAction(copy);
  if (menu) view->setContextMenuPolicy(Qt::ActionsContextMenu);
  return copy;
}

}  // namespace ibc::console

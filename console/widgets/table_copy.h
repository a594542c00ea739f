#pragma once

// Ctrl+C on a table (grid, node counters, diff): the selected rows as tab-separated text
// with the header, in the view's order, so they paste into a ticket or a spreadsheet as they
// look.

#include <QString>

class QAction;
class QTableView;

namespace ibc::console {

// The selected rows of `view` (its model's order as shown), header first.
QString selectedRowsText(const QTableView* view);
// Puts selectedRowsText on the clipboard.
void copySelectedRows(const QTableView* view);
// Adds "Copy selected rows" (Ctrl+C while the view has focus) to `view`; with `menu` it is
// also the view's right-click menu. Returns the action.
QAction* addCopyAction(QTableView* view, bool menu = true);

}  // namespace ibc::console

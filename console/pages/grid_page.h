#pragma once

// `grid` page: every node and port side by side, outliers against the job's majority
// coloured, sort by any column, filter box, top-X by a counter, copy rows as text.

#include "pages/page.h"

class QLabel;
class QMenu;
class QLineEdit;
class QSpinBox;
class QTableView;

namespace ibc::console {

class FilterEdit;

class GridFilter;
class NodeGridModel;

class GridPage : public Page {
  Q_OBJECT

 public:
  GridPage(NodeGridModel* model, QWidget* parent = nullptr);
  static constexpr const char* kName = "grid";
  QString pageName() const override { return QString::fromLatin1(kName); }
  QString pageTitle() const override { return tr("Grid"); }
  void loadJob(LoadedJob* job) override;
  void selectNode(int node_index, const QString& device, int port) override;
  NodeGridModel* model() const { return model_; }
  void setFilterText(const QString& text);
  QTableView* view() const { return view_; }
  FilterEdit* filterEdit() const { return filter_edit_; }

  // The menu a right-click on `index` (a view index) shows: open the node, copy, filter by
  // this value or hide it. Tests trigger its actions.
  QMenu* contextMenuFor(const QModelIndex& index);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  struct Target {
    int node = -1;
    QString device;
    int port = 0;
  };
  Target targetOf(const QModelIndex& shown) const;
  void showContextMenu(const QPoint& at);
  void addFilterClause(const QString& clause);
  void updateSummary();
  void fitColumns();
  void copySelection() const;

  NodeGridModel* model_;
  GridFilter* filter_;
  FilterEdit* filter_edit_;
  QLineEdit* top_counter_;
  QSpinBox* top_count_;
  QLabel* summary_;
  QTableView* view_;
};

}  // namespace ibc::console

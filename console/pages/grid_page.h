#pragma once

// `grid` page: every node and port side by side, outliers against the job's majority
// coloured, sort by any column, filter box, top-X by a counter, copy rows as text.

#include <QWidget>

class QLabel;
class QLineEdit;
class QSpinBox;
class QTableView;

namespace ibc::console {

class GridFilter;
class NodeGridModel;

class GridPage : public QWidget {
  Q_OBJECT

 public:
  GridPage(NodeGridModel* model, QWidget* parent = nullptr);
  void selectNode(int node_index, const QString& device, int port);
  void setFilterText(const QString& text);
  QTableView* view() const { return view_; }
  QLineEdit* filterEdit() const { return filter_edit_; }

 signals:
  void nodeSelected(int node_index, const QString& device, int port);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void updateSummary();
  void fitColumns();
  void copySelection() const;

  NodeGridModel* model_;
  GridFilter* filter_;
  QLineEdit* filter_edit_;
  QLineEdit* top_counter_;
  QSpinBox* top_count_;
  QLabel* summary_;
  QTableView* view_;
};

}  // namespace ibc::console

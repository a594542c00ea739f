#pragma once

// `diff` page: the selected node against the job's majority (default) or against another
// node, only what differs, worse in red and better in green.

#include <QWidget>

class QComboBox;
class QLabel;
class QTableView;

namespace ibc::console {

class DiffModel;
struct JobData;

class DiffPage : public QWidget {
  Q_OBJECT

 public:
  explicit DiffPage(QWidget* parent = nullptr);
  void setJob(const JobData* job);
  void showNode(int node_index);
  // -1: the job's majority; else a node index.
  void setRight(int node_index);
  DiffModel* model() const { return model_; }

 private:
  void recompute();

  const JobData* job_ = nullptr;
  QComboBox* left_;
  QComboBox* right_;
  QLabel* summary_;
  DiffModel* model_;
  QTableView* view_;
};

}  // namespace ibc::console

#pragma once

// `diff` page: the selected node against the job's majority (default) or against another
// node, only what differs, worse in red and better in green.

#include "pages/page.h"

class QComboBox;
class QLabel;
class QTableView;

namespace ibc::console {

class DiffModel;
struct JobData;

class DiffPage : public Page {
  Q_OBJECT

 public:
  explicit DiffPage(QWidget* parent = nullptr);
  QString pageName() const override { return QStringLiteral("diff"); }
  QString pageTitle() const override { return tr("Diff"); }
  bool lazy() const override { return true; }
  void loadJob(LoadedJob* job) override;
  void selectNode(int node_index, const QString&, int) override { showNode(node_index); }
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

#pragma once

// `diff` page: the selected node against the job's majority (default) or against another
// node, only what differs, worse in red and better in green.

#include <memory>
#include <vector>

#include "pages/page.h"

class QComboBox;
class QLabel;
class QTableView;

namespace ibc::console {

class DiffModel;
struct Majority;
struct JobData;

class DiffPage : public Page {
  Q_OBJECT

 public:
  explicit DiffPage(QWidget* parent = nullptr);
  static constexpr const char* kName = "diff";
  QString pageName() const override { return QString::fromLatin1(kName); }
  QString pageTitle() const override { return tr("Diff"); }
  bool lazy() const override { return true; }
  void loadJob(LoadedJob* job) override;
  void selectNode(int node_index, const QString&, int) override { showNode(node_index); }
  void setJob(const JobData* job);
  void showNode(int node_index);
  // -1: the job's majority; else a node index.
  void setRight(int node_index);
  DiffModel* model() const { return model_; }
  // True while the job's majority is worked out on a worker (loadJob of a job).
  bool majorityPending() const { return majority_pending_; }

 signals:
  void majorityReady();

 private:
  void recompute();

  const JobData* job_ = nullptr;
  // The job's majority (majorityFacts), computed once per job: on a worker for a loaded job
  // (~1 s at 2,000 nodes), at once for one given by setJob.
  std::shared_ptr<const Majority> majority_;
  bool majority_pending_ = false;
  int generation_ = 0;
  QComboBox* left_;
  QComboBox* right_;
  QLabel* summary_;
  DiffModel* model_;
  QTableView* view_;
};

}  // namespace ibc::console

#pragma once

// `node` page: one node's host facts, its ports, the selected port's counters (totals,
// window deltas, rates, unavailable ones with their reason), and its kernel log and NCCL
// log lines with the lines behind findings highlighted.

#include <optional>

#include "ibcollect/v1/snapshot.pb.h"
#include "pages/page.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QTableView;

namespace ibc::console {

class CountersFilter;
class CountersModel;
class FilterEdit;
struct JobData;

class NodePage : public Page {
  Q_OBJECT

 public:
  explicit NodePage(QWidget* parent = nullptr);
  static constexpr const char* kName = "node";
  QString pageName() const override { return QString::fromLatin1(kName); }
  QString pageTitle() const override { return tr("Node"); }
  void loadJob(LoadedJob* job) override;
  void selectNode(int node_index, const QString& device, int port) override {
    showNode(node_index, device, port);
  }
  void setJob(const JobData* job);
  void showNode(int node_index, const QString& device, int port);
  int currentNode() const { return node_; }
  // The port shown: "mlx5_0 port 1"; "" when none.
  QString currentPort() const;
  QString factsText() const;
  // The counters' filter box (filter_terms.h).
  FilterEdit* filterEdit() const { return filter_; }
  QTableView* countersView() const { return counters_view_; }

 private:
  void showPort();
  // The facts line of a node (name, verdict, kernel, VM, memlock, file, trust).
  QString factsOf(int node) const;
  // The node's kernel log and NCCL log lines, those a finding quotes highlighted (NCCL logs read
  // from the file).
  void showLogs();

  const JobData* job_ = nullptr;
  int node_ = -1;
  // The shown node's whole snapshot, read again from its file when the node is shown (the job
  // keeps it slim); unset with the reason when it could not be read.
  std::optional<::ibcollect::v1::Snapshot> whole_;
  QString whole_error_;
  QLabel* facts_;
  QComboBox* ports_;
  QLabel* empty_;
  CountersModel* counters_;
  CountersFilter* counters_filter_;
  FilterEdit* filter_;
  QTableView* counters_view_;
  QPlainTextEdit* logs_;
};

}  // namespace ibc::console

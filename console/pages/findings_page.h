#pragma once

// `findings` page: findings grouped by severity and code, then node, then port (Wireshark's
// expert information); the selected row's evidence and next step below, laid out for that
// row only; selecting a node or port row selects its node and port on every page. Ctrl+C
// copies the selected finding(s) with their evidence; the context menu copies, copies the
// node's name, or opens the node.

#include "pages/page.h"

class QAction;
class QTextBrowser;
class QTreeView;

namespace ibc::console {

class FilterEdit;

class FindingsFilter;
class FindingsModel;
struct JobData;

class FindingsPage : public Page {
  Q_OBJECT

 public:
  FindingsPage(FindingsModel* model, QWidget* parent = nullptr);
  static constexpr const char* kName = "findings";
  QString pageName() const override { return QString::fromLatin1(kName); }
  QString pageTitle() const override { return tr("Findings"); }
  void loadJob(LoadedJob* job) override;
  void setJob(const JobData* job) { job_ = job; }
  // Selects the node's row in the first group that has it (FindingsModel::indexOfNode: the
  // row of another of its ports there when asked for one), unless the selected row is already
  // that node's (and port's, when one is given); emits nothing.
  void selectNode(int node_index, const QString& device, int port) override;
  QTreeView* view() const { return view_; }
  // The filter box (filter_terms.h): node glob, code=, severity>=, device=; rows that do not
  // hold are hidden, and a group with none.
  void setFilterText(const QString& text);
  FilterEdit* filterEdit() const { return filter_; }
  QTextBrowser* detail() const { return detail_; }
  // The row actions (also the context menu): copy with evidence (Ctrl+C), copy the node's
  // name, open the node.
  QAction* copyFindingAction() const { return copy_finding_; }
  QAction* copyNodeAction() const { return copy_node_; }
  QAction* openNodeAction() const { return open_node_; }

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void showFinding(const QModelIndex& index);
  void layoutTree();
  void applyFilter();
  // The model's index of a row the view shows.
  QModelIndex source(const QModelIndex& shown) const;
  void showAllOk();
  void setCurrentSilently(const QModelIndex& index);
  void updateActions();
  void openNode(const QModelIndex& index);

  FindingsModel* model_;
  const JobData* job_ = nullptr;
  QTreeView* view_;
  FilterEdit* filter_;
  FindingsFilter* proxy_;
  QTextBrowser* detail_;
  QAction* copy_finding_;
  QAction* copy_node_;
  QAction* open_node_;
  bool tree_stale_ = false;  // a new job arrived while the page was hidden
};

}  // namespace ibc::console

#pragma once

// `findings` page: findings grouped by severity and code (Wireshark's expert information);
// the selected finding's evidence and next step below; selecting one selects its node and
// port on every page.

#include "pages/page.h"

class QTextBrowser;
class QTreeView;

namespace ibc::console {

class FindingsModel;
struct JobData;

class FindingsPage : public Page {
  Q_OBJECT

 public:
  FindingsPage(FindingsModel* model, QWidget* parent = nullptr);
  QString pageName() const override { return QStringLiteral("findings"); }
  QString pageTitle() const override { return tr("Findings"); }
  void loadJob(LoadedJob* job) override;
  void setJob(const JobData* job) { job_ = job; }
  // Selects the first finding of that node and port (the first of the node when none).
  void selectNode(int node_index, const QString& device, int port) override;
  QTreeView* view() const { return view_; }

 signals:

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void showFinding(const QModelIndex& index);
  void layoutTree();

  FindingsModel* model_;
  const JobData* job_ = nullptr;
  QTreeView* view_;
  QTextBrowser* detail_;
  bool tree_stale_ = false;  // a new job arrived while the page was hidden
};

}  // namespace ibc::console

#pragma once

// `jobs` page: where an engineer starts. With a support certificate it lists a tenant's jobs
// in the collector and their nodes (queried on a worker thread, never on the GUI thread);
// opening a job fetches its snapshots into every other page. Offline, it lists what was
// opened, by job. A search box filters the tree.

#include "pages/page.h"

#include "ibc/console/collector_source.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTreeView;

namespace ibc::console {

class JobsPage : public Page {
  Q_OBJECT

 public:
  explicit JobsPage(QWidget* parent = nullptr);
  static constexpr const char* kName = "jobs";
  QString pageName() const override { return QString::fromLatin1(kName); }
  QString pageTitle() const override { return tr("Jobs"); }
  void loadJob(LoadedJob* job) override;
  void selectNode(int, const QString&, int) override {}
  void setSettings(const CollectorSettings& settings, const QString& tenant);
  CollectorSettings settings() const;
  QString tenant() const;
  // Lists the tenant's jobs on a worker; `listed` follows (and the page is not ready meanwhile).
  void refresh();
  // What was opened (files or a fetched job), by job: listed when the page is seen (a
  // 2,000-node job's items cost the GUI thread ~8 ms; a hidden page need not pay it on load).
  void setJob(const JobData* job);
  QTreeView* view() const { return view_; }
  QLineEdit* searchEdit() const { return search_; }
  QLineEdit* collectorEdit() const { return collector_; }
  QString statusText() const;

 signals:
  void openJob(const QString& tenant, const QString& job_id);
  // An opened group of files that was not shown (another job or tenant): open it apart.
  void openFilesRequested(const QStringList& files);
  void listed(bool ok);
  // Listing failed: the reason (the main window turns it into advice).
  void listFailed(const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void showOpened();
  void showJobs(const QString& tenant, const std::vector<JobEntry>& jobs,
                const core::Result<std::vector<::ibcollect::v1::Case>>& cases);

  QLineEdit* collector_;
  QLineEdit* ca_;
  QLineEdit* cert_;
  QLineEdit* key_;
  QLineEdit* tenant_;
  QPushButton* list_;
  QLineEdit* search_;
  QLabel* status_;
  QStandardItemModel* model_;
  QSortFilterProxyModel* filter_;
  QTreeView* view_;
  const JobData* opened_ = nullptr;
  bool opened_stale_ = false;
  int listings_ = 0;  // listings on a worker not answered yet: the page is ready at 0
};

}  // namespace ibc::console

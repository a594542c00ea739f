#pragma once

// The console's window: pages as tabs sharing one selection (a node and port chosen on
// any page is shown on every page). Snapshots are read and diagnosed on a worker thread;
// the window shows progress and can cancel.

#include <QMainWindow>
#include <QStringList>
#include <atomic>
#include <memory>

#include <functional>

#include "ibc/console/collector_source.h"
#include "ibc/console/error_advice.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"

class QLabel;
class QTabWidget;

namespace ibc::console {

class ChartsPage;
class DiffPage;
class EscalatePage;
class FindingsModel;
class FindingsPage;
class JobsPage;
class GridPage;
class NodeGridModel;
class NodePage;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Where errors go (what failed, what happened, what to do next). The default is a
  // non-modal dialog (nothing waits on it); tests install their own sink.
  using ErrorSink = std::function<void(const ErrorAdvice& advice)>;
  void setErrorSink(ErrorSink sink) { error_sink_ = std::move(sink); }
  // For tests and benchmarks: called on the loader's worker thread after each snapshot.
  using LoadObserver = std::function<void(std::size_t done, std::size_t total)>;
  void setLoadObserver(LoadObserver observer) { load_observer_ = std::move(observer); }

  // Reads and diagnoses `files` on a worker thread; returns at once. `finished` follows.
  // Signatures are checked against the CA of the jobs page when one is given.
  void openFiles(const QStringList& files, bool show_progress = true);
  // Fetches a job's snapshots from the collector on a worker thread; `finished` follows
  // (with an empty job and the reason in job()->errors when the fetch failed).
  void openCollectorJob(const QString& tenant, const QString& job_id, bool show_progress = true);
  void setCollector(const CollectorSettings& settings, const QString& tenant);
  JobsPage* jobsPage() const { return jobs_page_; }
  const JobData* job() const { return job_.get(); }
  // Page names as --page takes them, in tab order.
  QStringList pageNames() const;
  bool showPage(const QString& name);
  // Selects the node with this label (or node name) on every page; false when none has it.
  bool selectNode(const QString& label);
  GridPage* gridPage() const { return grid_page_; }
  DiffPage* diffPage() const { return diff_page_; }
  ChartsPage* chartsPage() const { return charts_page_; }
  FindingsPage* findingsPage() const { return findings_page_; }
  NodePage* nodePage() const { return node_page_; }
  EscalatePage* escalatePage() const { return escalate_page_; }
  QString statusText() const;
  // Where the window is connected, as the status bar's right side says it.
  QString connectionText() const;

  // Remembered between runs (QSettings, organisation "ibcollect"): window geometry and
  // layout, and the last collector connection that listed jobs (address, CA, certificate,
  // key, tenant; never a key's contents). restoreSettings() applies them and makes the
  // window save them when it closes; screenshots never call it, so they do not depend on
  // who ran the console before.
  void restoreSettings();
  void saveSettings() const;

  // File > Reload: the last load again (the same files, or the same collector job).
  void reload();

 signals:
  void finished();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  using Loader = std::function<JobData(const std::function<void(std::size_t, std::size_t)>&,
                                       const std::atomic<bool>*)>;
  void load(Loader loader, const QString& what, int total, bool show_progress);
  void setJob(std::unique_ptr<JobData> job,
              std::shared_ptr<NodeGridModel::Prepared> grid = nullptr);
  // Pages whose work is heavy on a large job (diff against the majority, charts, escalation)
  // get the job and the selected node when they are shown, not on every load.
  void applyPending();
  void select(int node_index, const QString& device, int port);
  void reportErrors(const std::vector<std::string>& errors, const QString& where);
  void createMenus();
  void updateConnection();

  std::unique_ptr<JobData> job_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  NodeGridModel* grid_model_;
  FindingsModel* findings_model_;
  QTabWidget* tabs_;
  JobsPage* jobs_page_;
  GridPage* grid_page_;
  FindingsPage* findings_page_;
  NodePage* node_page_;
  DiffPage* diff_page_;
  ChartsPage* charts_page_;
  EscalatePage* escalate_page_;
  ErrorSink error_sink_;
  LoadObserver load_observer_;
  std::function<void()> last_load_;  // what Reload repeats
  bool remember_ = false;
  bool pending_job_[3] = {};        // diff, charts, escalate
  int pending_node_[2] = {-1, -1};  // diff, charts
  QLabel* connection_;
};

}  // namespace ibc::console

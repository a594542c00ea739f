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

class QDragEnterEvent;
class QDropEvent;
class QLabel;
class QMenu;
class QTabWidget;

namespace ibc::console {

class ChartsPage;
class DiffPage;
class EscalatePage;
class FindingsPage;
class GridPage;
class JobLoader;
class JobsPage;
class NodePage;
class Page;
struct LoadedJob;

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
  void setLoadObserver(LoadObserver observer);

  // Reads and diagnoses `files` on a worker thread; returns at once. `finished` follows.
  // Signatures are checked against the CA of the jobs page when one is given.
  void openFiles(const QStringList& files, bool show_progress = true);
  // Fetches a job's snapshots from the collector on a worker thread; `finished` follows
  // (with an empty job and the reason in job()->errors when the fetch failed).
  void openCollectorJob(const QString& tenant, const QString& job_id, bool show_progress = true);
  void setCollector(const CollectorSettings& settings, const QString& tenant);
  JobsPage* jobsPage() const;
  const JobData* job() const;
  // Page names as --page takes them, in tab order (the registry's, page_registry.h).
  QStringList pageNames() const;
  bool showPage(const QString& name);
  // The page called `name`; nullptr when none is.
  Page* pageNamed(const QString& name) const;
  // Selects the node with this label (or node name) on every page; false when none has it.
  bool selectNode(const QString& label);
  // The page of type P (tests, and the connection wiring of the jobs and escalate pages).
  template <class P>
  P* page() const {
    for (const Slot& s : pages_) {
      if (auto* p = qobject_cast<P*>(s.page)) return p;
    }
    return nullptr;
  }
  GridPage* gridPage() const;
  DiffPage* diffPage() const;
  ChartsPage* chartsPage() const;
  FindingsPage* findingsPage() const;
  NodePage* nodePage() const;
  EscalatePage* escalatePage() const;
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
  // File > Open Recent: the last files opened (QSettings "recent/files"), newest first.
  QStringList recentFiles() const;

 signals:
  void finished();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  // A page and what it has not been given yet (lazy pages get the job and the selection
  // when shown).
  struct Slot {
    Page* page = nullptr;
    bool job_pending = false;
    bool node_pending = false;
  };
  void load(std::function<JobData(const std::function<void(std::size_t, std::size_t)>&,
                                  const std::atomic<bool>*)>
                work,
            const QString& what, int total, bool show_progress);
  void setJob(std::shared_ptr<LoadedJob> job);
  void applyPending();
  void select(int node_index, const QString& device, int port);
  void reportErrors(const std::vector<std::string>& errors, const QString& where);
  void createMenus();
  void updateConnection();
  void rememberFiles(const QStringList& files);
  void updateRecentMenu();

  std::shared_ptr<LoadedJob> job_;
  std::vector<Slot> pages_;
  JobLoader* loader_;
  QTabWidget* tabs_;
  QMenu* recent_menu_ = nullptr;
  ErrorSink error_sink_;
  std::function<void()> last_load_;  // what Reload repeats
  bool remember_ = false;
  int selected_node_ = -1;
  QString selected_device_;
  int selected_port_ = 0;
  QLabel* connection_;
  QString connection_problem_;  // the last listing's failure; "" once one worked
  bool connection_tried_ = false;
};

}  // namespace ibc::console

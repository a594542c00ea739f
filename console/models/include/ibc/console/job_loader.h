#pragma once

// Loads a job off the GUI thread (console/README.md: the window never freezes; long loads show
// progress and can be cancelled). The work (read files, fetch from the collector) runs on a
// worker thread with the grid's rows prepared there too; `loaded` arrives on the loader's
// thread with the result. Starting a load cancels the one before; its result is dropped.

#include <QObject>
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>

#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"

namespace ibc::console {

// A job as the pages receive it: the judged data, and what the grid shows of it (computed on
// the worker; a 2,000-node job's rows take ~90 ms). A page may take its part (the grid takes
// `grid`).
struct LoadedJob : std::enable_shared_from_this<LoadedJob> {
  std::unique_ptr<JobData> data;
  NodeGridModel::Prepared grid;
};

class JobLoader : public QObject {
  Q_OBJECT

 public:
  using Progress = std::function<void(std::size_t done, std::size_t total)>;
  using Work = std::function<JobData(const Progress& progress, const std::atomic<bool>* cancel)>;

  explicit JobLoader(QObject* parent = nullptr);
  ~JobLoader() override;  // cancels a running load

  // Runs `work` on a worker thread; returns at once.
  void start(Work work);
  void cancel();
  bool running() const { return static_cast<bool>(cancel_) && !done_; }
  // For tests and benchmarks: called on the worker thread after each snapshot.
  void setObserver(Progress observer) { observer_ = std::move(observer); }

 signals:
  // At most one per 40 ms (a flood of 2,000 queued updates kept the GUI thread from its
  // timers for tens of milliseconds), and the last.
  void progress(int done, int total);
  void loaded(std::shared_ptr<LoadedJob> job);

 private:
  std::shared_ptr<std::atomic<bool>> cancel_;
  bool done_ = false;
  Progress observer_;
};

}  // namespace ibc::console

// job_loader.h: a load runs on a worker with progress and cancel, the grid's rows prepared
// there too, and a newer load drops an older one's result (the real job, console_fixtures.h).

#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QSignalSpy>
#include <QThread>
#include <atomic>
#include <future>

#include "console_fixtures.h"
#include "ibc/console/job_loader.h"

namespace ibc::console {
namespace {

constexpr int kWaitMs = 120000;  // a sanitizer build loads the job in well under a second

TEST(JobLoader, ALoadRunsOnAWorkerAndHandsBackTheJobWithTheGridsRowsPrepared) {
  JobLoader loader;
  QSignalSpy loaded(&loader, &JobLoader::loaded);
  QSignalSpy progress(&loader, &JobLoader::progress);
  std::atomic<QThread*> worker{nullptr};
  loader.start([&worker](const JobLoader::Progress& p, const std::atomic<bool>* cancel) {
    worker = QThread::currentThread();
    return loadSnapshotFiles(jobFiles(), {}, p, cancel);
  });
  EXPECT_TRUE(loader.running());
  ASSERT_TRUE(loaded.wait(kWaitMs));
  EXPECT_FALSE(loader.running());
  EXPECT_NE(worker.load(), QThread::currentThread());
  const auto job = loaded.at(0).at(0).value<std::shared_ptr<LoadedJob>>();
  ASSERT_TRUE(job && job->data);
  EXPECT_EQ(job->data->report.nodes_size(), 4);
  EXPECT_FALSE(job->data->cancelled);
  EXPECT_EQ(job->grid.rows.size(), 32u);  // 8 ports per node, prepared on the worker
  // The last progress is always told: all four files.
  ASSERT_GE(progress.count(), 1);
  EXPECT_EQ(progress.last().at(0).toInt(), 4);
  EXPECT_EQ(progress.last().at(1).toInt(), 4);
}

TEST(JobLoader, CancelStopsTheLoadBeforeTheNextFileAndTheJobSaysSo) {
  JobLoader loader;
  QSignalSpy loaded(&loader, &JobLoader::loaded);
  std::promise<void> cancelled;
  std::shared_future<void> told = cancelled.get_future().share();
  // After the first file the worker asks the GUI thread to cancel, and waits until it has.
  loader.setObserver([&loader, &cancelled, told](std::size_t done, std::size_t) {
    if (done != 1) return;
    QMetaObject::invokeMethod(
        &loader,
        [&loader, &cancelled] {
          loader.cancel();
          cancelled.set_value();
        },
        Qt::QueuedConnection);
    told.wait();
  });
  loader.start([](const JobLoader::Progress& p, const std::atomic<bool>* cancel) {
    return loadSnapshotFiles(jobFiles(), {}, p, cancel);
  });
  ASSERT_TRUE(loaded.wait(kWaitMs));
  const auto job = loaded.at(0).at(0).value<std::shared_ptr<LoadedJob>>();
  EXPECT_TRUE(job->data->cancelled);
  EXPECT_EQ(job->data->report.nodes_size(), 1);
  EXPECT_EQ(job->grid.rows.size(), 8u);
}

TEST(JobLoader, ANewerLoadCancelsTheOlderOneAndOnlyItsResultArrives) {
  JobLoader loader;
  QSignalSpy loaded(&loader, &JobLoader::loaded);
  std::promise<void> older_returned;
  loader.start([&older_returned](const JobLoader::Progress&, const std::atomic<bool>* cancel) {
    while (!cancel->load()) QThread::yieldCurrentThread();  // until the newer load starts
    JobData older;
    older.origin = "older";
    older_returned.set_value();
    return older;
  });
  loader.start([](const JobLoader::Progress&, const std::atomic<bool>*) {
    JobData newer;
    newer.origin = "newer";
    return newer;
  });
  ASSERT_TRUE(loaded.wait(kWaitMs));
  EXPECT_EQ(loaded.at(0).at(0).value<std::shared_ptr<LoadedJob>>()->data->origin, "newer");
  older_returned.get_future().wait();  // the older load saw its cancel and returned
  QCoreApplication::processEvents();
  EXPECT_EQ(loaded.count(), 1);
  EXPECT_FALSE(loader.running());
}

}  // namespace
}  // namespace ibc::console

#include "ibc/console/job_loader.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <QMetaObject>
#include <QPointer>
#include <chrono>

#include "ibc/console/workers.h"

namespace ibc::console {

JobLoader::JobLoader(QObject* parent) : QObject(parent) {}

JobLoader::~JobLoader() { cancel(); }

void JobLoader::cancel() {
  if (cancel_) cancel_->store(true);
}

void JobLoader::start(Work work) {
  cancel();
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  done_ = false;
  auto cancel = cancel_;
  QPointer<JobLoader> self(this);
  // The worker owns its inputs; results come back to this thread by a queued call.
  runOnWorker([work = std::move(work), cancel, self, observer = observer_] {
    auto last_post = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    auto job = std::make_shared<LoadedJob>();
    job->data = std::make_unique<JobData>(work(
        [self, cancel, observer, &last_post](std::size_t done, std::size_t all) {
          if (observer) observer(done, all);
          const auto now = std::chrono::steady_clock::now();
          if (done != all && now - last_post < std::chrono::milliseconds(40)) return;
          last_post = now;
          QMetaObject::invokeMethod(
              self,
              [self, cancel, done, all] {
                if (self && !cancel->load())
                  emit self->progress(static_cast<int>(done), static_cast<int>(all));
              },
              Qt::QueuedConnection);
        },
        cancel.get()));
    job->grid = NodeGridModel::prepare(job->data.get());
#ifdef __GLIBC__
    // Loading frees tens of MiB it used for a while (whole parsed snapshots, the judgement's
    // working sets) into this thread's malloc arena, where the GUI thread's pages cannot reuse
    // it: it goes back to the system, not kept as the console's for its lifetime.
    malloc_trim(0);
#endif
    if (!self) return;
    QMetaObject::invokeMethod(
        self,
        [self, cancel, job = std::move(job)]() mutable {
          // A newer load replaced this one: its result is dropped.
          if (!self || self->cancel_ != cancel) return;
          self->done_ = true;
          emit self->loaded(std::move(job));
        },
        Qt::QueuedConnection);
  });
}

}  // namespace ibc::console

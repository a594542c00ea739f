#include "ibc/console/workers.h"

#include <QThreadPool>

namespace ibc::console {
namespace {

// Never deleted: a worker still running when the console quits ends with the process instead
// of holding it up (QThreadPool's destructor would wait for it).
QThreadPool& pool() {
  static QThreadPool* const workers = [] {
    auto* p = new QThreadPool();
    p->setMaxThreadCount(kMaxWorkers);
    p->setObjectName(QStringLiteral("ibc-console-workers"));
    return p;
  }();
  return *workers;
}

}  // namespace

void runOnWorker(std::function<void()> work) { pool().start(std::move(work)); }

void waitForWorkers() { pool().waitForDone(); }

}  // namespace ibc::console

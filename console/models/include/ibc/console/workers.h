// workers.h: the console's background work (loading a job, core's judgements of a large one,
// collector calls, writing a bundle) runs on one pool of worker threads that the console owns.
// A worker reports back by a queued call to the GUI thread; nothing here touches widgets.

#pragma once

#include <functional>

namespace ibc::console {

// Runs `work` on one of the console's worker threads (up to kMaxWorkers at once, the rest
// queued in order). The threads are the pool's, never one per call: none is left to be
// deleted by an event loop that may not run again (a test's end, the window closing).
void runOnWorker(std::function<void()> work);

// Waits until every worker given so far has returned. The tests' program calls it before it
// exits; the console does not, so a slow collector call never holds up quitting.
void waitForWorkers();

inline constexpr int kMaxWorkers = 8;

}  // namespace ibc::console

// The clock seam.
#include <thread>

#include "ibc/os/os.h"

namespace ibc::os {

std::chrono::system_clock::time_point SystemClock::now() const {
  return std::chrono::system_clock::now();
}

std::chrono::steady_clock::time_point SystemClock::steadyNow() const {
  return std::chrono::steady_clock::now();
}

void SystemClock::sleepUntil(std::chrono::steady_clock::time_point deadline) {
  std::this_thread::sleep_until(deadline);
}

}  // namespace ibc::os

// SystemClock: the clock seam's real adapter.

#include <gtest/gtest.h>

#include <chrono>

#include "ibc/os/os.h"

using namespace std::chrono_literals;

namespace ibc::os {
namespace {

TEST(SystemClock, SleepsUntilTheDeadlineAndNotBefore) {
  SystemClock clock;
  const auto deadline = clock.steadyNow() + 20ms;
  clock.sleepUntil(deadline);
  EXPECT_GE(clock.steadyNow(), deadline);
}

TEST(SystemClock, WallTimeIsTheSystemsTime) {
  SystemClock clock;
  const auto before = std::chrono::system_clock::now();
  const auto now = clock.now();
  EXPECT_GE(now, before);
  EXPECT_LE(now, std::chrono::system_clock::now());
}

}  // namespace
}  // namespace ibc::os

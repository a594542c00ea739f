// The retention loop (service/retention_loop.cpp) on a real RocksDB store in a temp dir: a
// pass at once, then one every interval, each logged; the destructor stops it without
// waiting out the interval. Tests wait for the loop's own log lines (CapturedLog::waitFor).

#include "ibc/collector/service/retention_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "collector_test_support.h"

using ::testing::HasSubstr;

namespace ibc::collector {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using test::hexId;
using SystemClock = std::chrono::system_clock;

constexpr int64_t kDayMs = 86'400'000;
constexpr int64_t kStartMs = 1'800'000'000'000;
const SystemClock::time_point kStart{milliseconds(kStartMs)};

// Snapshot n received `n` days after kStart.
std::unique_ptr<Store> storeWithOneSnapshotPerDay(const std::string& dir, int days) {
  auto store = Store::open(dir);
  EXPECT_TRUE(store.ok());
  if (!store.ok()) return nullptr;
  std::vector<SnapshotRecord> records;
  for (int n = 0; n < days; ++n) {
    records.push_back(test::storedRecord(n, "acme", "77", "node01", n, kStartMs + n * kDayMs,
                                         std::string(2000, 'e')));
  }
  std::vector<const SnapshotRecord*> ptrs;
  for (const auto& r : records) ptrs.push_back(&r);
  EXPECT_TRUE((*store)->put(ptrs).ok());
  return std::move(*store);
}

// storeWithOneSnapshotPerDay() in its own temp dir, and the log a loop over it writes.
struct DailyStore {
  explicit DailyStore(int days) : store(storeWithOneSnapshotPerDay(dir.path(), days)) {}
  test::TempDir dir;
  std::unique_ptr<Store> store;
  test::CapturedLog log;
};

bool present(const Store& store, int n) {
  auto got = store.get(hexId(n));
  return got.ok() && got->has_value();
}

TEST(RetentionLoop, RunsAPassAtOnceAndStopsWithoutWaitingOutTheInterval) {
  DailyStore daily(4);
  ASSERT_NE(daily.store, nullptr);
  RetentionPolicy policy;
  policy.max_age = hours(24);
  // As of day 2 and a half, days 0 and 1 are older than a day.
  const auto now = kStart + milliseconds(2 * kDayMs + kDayMs / 2);
  const auto stop_started = [&] {
    RetentionLoop loop(*daily.store, policy, hours(1), daily.log, [now] { return now; });
    EXPECT_TRUE(daily.log.waitFor("event=retention_done", 1));
    return std::chrono::steady_clock::now();
  }();
  // The loop waited an hour for its next run; its destructor ended that wait.
  EXPECT_LT(std::chrono::steady_clock::now() - stop_started, std::chrono::seconds(30));
  ASSERT_EQ(daily.log.count("event=retention_done"), 1u);
  EXPECT_THAT(daily.log.lines()[0], HasSubstr("level=info event=retention_done deleted=2 "));
  EXPECT_THAT(daily.log.lines()[0], HasSubstr(" kept_for_open_cases=0 "));
  EXPECT_FALSE(present(*daily.store, 0));
  EXPECT_FALSE(present(*daily.store, 1));
  EXPECT_TRUE(present(*daily.store, 2));
  EXPECT_TRUE(present(*daily.store, 3));
}

TEST(RetentionLoop, RunsAgainEveryIntervalAsOfTheClockAndAddsUpWhatItDeleted) {
  DailyStore daily(3);
  ASSERT_NE(daily.store, nullptr);
  RetentionPolicy policy;
  policy.max_age = hours(24);
  // The first run is at day 1.5 and deletes day 0; every later one is at day 2.5: the second
  // deletes day 1, the others find nothing more.
  std::atomic<int> calls{0};
  const auto clock = [&calls] {
    const int run = calls++;
    return kStart + milliseconds((std::min(run, 1) + 1) * kDayMs + kDayMs / 2);
  };
  {
    RetentionLoop loop(*daily.store, policy, milliseconds(1), daily.log, clock);
    // The third line is written after the second run was counted.
    ASSERT_TRUE(daily.log.waitFor("event=retention_done", 3));
    EXPECT_GE(loop.runs(), 2u);
    EXPECT_EQ(loop.deleted(), 2u);
  }
  const auto lines = daily.log.lines();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr("deleted=1 "));
  EXPECT_THAT(lines[0], HasSubstr("oldest_received_ms=" + std::to_string(kStartMs)));
  EXPECT_THAT(lines[1], HasSubstr("deleted=1 "));
  EXPECT_THAT(lines[1], HasSubstr("oldest_received_ms=" + std::to_string(kStartMs + kDayMs)));
  EXPECT_THAT(lines[2], HasSubstr("deleted=0 "));
  EXPECT_FALSE(present(*daily.store, 1));
  EXPECT_TRUE(present(*daily.store, 2));
}

TEST(RetentionLoop, AFailedPassIsLoggedAsRetentionFailedAndDeletesNothing) {
  DailyStore daily(2);
  ASSERT_NE(daily.store, nullptr);
  RetentionPolicy policy;
  policy.max_age = hours(1);
  policy.protected_ids = [](const Store&) -> Result<std::unordered_set<std::string>> {
    return Error{ErrorCode::Io, "cases unreadable"};
  };
  {
    RetentionLoop loop(*daily.store, policy, hours(1), daily.log,
                       [] { return kStart + hours(24 * 30); });
    ASSERT_TRUE(daily.log.waitFor("event=retention_failed", 1));
    EXPECT_EQ(loop.deleted(), 0u);
  }
  ASSERT_EQ(daily.log.lines().size(), 1u);
  EXPECT_THAT(daily.log.lines()[0], HasSubstr("level=error event=retention_failed detail="));
  EXPECT_THAT(daily.log.lines()[0], HasSubstr("cases unreadable"));
  EXPECT_EQ(daily.log.count("event=retention_done"), 0u);
  EXPECT_TRUE(present(*daily.store, 0));
  EXPECT_TRUE(present(*daily.store, 1));
}

}  // namespace
}  // namespace ibc::collector

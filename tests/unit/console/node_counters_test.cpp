// node_counters.h: what the job keeps of a node's counters (per port each counter's amount,
// per counter core's node sums) taken from the whole snapshot, on the real counter captures
// with and without a window (console_fixtures.h).

#include <gtest/gtest.h>

#include "console_fixtures.h"
#include "ibc/console/node_counters.h"
#include "ibc/console/port_counters.h"
#include "ibc/core/node_metrics.h"

namespace ibc::console {
namespace {

TEST(CounterNames, ANameIsInternedOnceAndFoundByItsId) {
  CounterNames names;
  EXPECT_EQ(names.find("symbol_error"), -1);
  const int symbol = names.intern("symbol_error");
  const int downed = names.intern("link_downed");
  EXPECT_NE(symbol, downed);
  EXPECT_EQ(names.intern(std::string("symbol_error")), symbol);
  EXPECT_EQ(names.size(), 2);
  EXPECT_EQ(names.find("link_downed"), downed);
  EXPECT_EQ(names.name(symbol), "symbol_error");
}

TEST(NodeCountersOf, EachPortKeepsTheAmountOfEveryReadableCounterAsThePortWalkGivesIt) {
  for (const v1::Snapshot& snapshot : counterSnapshots()) {
    CounterNames names;
    const NodeCounters kept = nodeCountersOf(snapshot, names);
    EXPECT_EQ(kept.interval_seconds, 0);
    EXPECT_FALSE(kept.peak_busbw_gbs.has_value());  // no nccl-tests in these captures
    int port_count = 0;
    for (const auto& d : snapshot.devices()) port_count += d.ports_size();
    ASSERT_EQ(static_cast<int>(kept.ports.size()), port_count);
    for (const auto& port : kept.ports) {
      ASSERT_EQ(kept.port(port.device, port.port), &port);
      // Without a window: the total of the first list that has the name (the port's own lists,
      // then the device's hw_counters), nothing for an unreadable one.
      std::map<std::string, std::optional<uint64_t>> first;
      for (const auto& c : portCounters(snapshot, port.device, port.port))
        first.emplace(c.name, c.total);
      for (const auto& [name, total] : first) {
        const auto amount = port.amount(names.find(name));
        if (total) {
          EXPECT_EQ(amount, static_cast<double>(*total)) << port.device << " " << name;
        } else {
          EXPECT_FALSE(amount.has_value()) << port.device << " " << name;
        }
      }
      for (std::size_t k = 1; k < port.amounts.size(); ++k)
        EXPECT_LT(port.amounts[k - 1].first, port.amounts[k].first);  // sorted, one per name
    }
    EXPECT_EQ(kept.port("no_such_device", 1), nullptr);
  }
}

TEST(NodeCountersOf, WithAWindowAmountsAreDeltasAndACounterThatWentBackwardsIsLeftOut) {
  const JobData j = windowedJob();
  const v1::Snapshot whole = wholeSnapshot(j, 0);
  CounterNames names;
  const NodeCounters kept = nodeCountersOf(whole, names);
  EXPECT_EQ(kept.interval_seconds, 10);
  const auto* grew = kept.port(whole.devices(0).name(), 1);
  ASSERT_NE(grew, nullptr);
  EXPECT_EQ(grew->amount(names.find("symbol_error")), 50.0);
  EXPECT_FALSE(grew->amount(names.find("port_xmit_wait")).has_value());
  EXPECT_EQ(grew->amount(names.find("link_downed")), 0.0);
  // The job kept the same numbers when it loaded the snapshot.
  const auto* loaded = j.counters[0].port(whole.devices(0).name(), 1);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->amount(j.counter_names.find("symbol_error")), 50.0);
}

TEST(NodeCountersOf, TheNodeSumsAreCores) {
  const v1::Snapshot mlx5 = mlx5Snapshot();
  CounterNames names;
  const NodeCounters kept = nodeCountersOf(mlx5, names);
  const auto sums = core::nodeCounterSums(mlx5);
  ASSERT_EQ(kept.sums.size(), sums.size());
  for (const auto& [name, s] : sums) {
    const NodeCounters::Sum* sum = kept.sum(names.find(name));
    ASSERT_NE(sum, nullptr) << name;
    EXPECT_EQ(sum->on_port, s.on_port) << name;
    EXPECT_EQ(sum->has_totals, s.totals.has_value()) << name;
    EXPECT_EQ(sum->totals, s.totals.value_or(0)) << name;
    EXPECT_EQ(sum->has_moved, s.moved.has_value()) << name;
  }
  const int cqe = names.find("req_cqe_error");
  ASSERT_GE(cqe, 0);
  EXPECT_EQ(kept.sum(cqe)->totals, 3481);
  EXPECT_EQ(kept.sum(names.intern("never_seen")), nullptr);
}

}  // namespace
}  // namespace ibc::console

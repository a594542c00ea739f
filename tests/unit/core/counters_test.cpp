// The one walk over a port's counters (counters.cpp: forEachCounter, portCounterValues): its
// order, and each counter's total, window delta and unavailable reason.

#include "ibc/core/counters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ibc/core/compare.h"
#include "mlx4_node.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

using ibc::test::addCounter;
using ibc::test::mlx4Node;

TEST(ForEachCounter, WalksCountersThenCountersExtThenHwCountersOfAPort) {
  const v1::Snapshot s = mlx4Node("a", 0, 0);
  std::vector<std::string> seen;
  forEachCounter(s.devices(0).ports(0), [&](CounterGroup g, const v1::Counter& c) {
    seen.push_back(std::string(counterGroupName(g)) + "/" + c.name());
  });
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "counters/symbol_error", "counters/port_xmit_data", "counters/VL15_dropped",
                      "counters_ext/port_xmit_data_64", "counters_ext/port_rcv_data_64",
                      "hw_counters/local_ack_timeout_err"}));
}

TEST(ForEachCounter, WalksANetdevsEthtoolThenItsStatistics) {
  v1::NetDevice nd;
  addCounter(nd.mutable_stats(), "rx_crc_errors", 1);
  addCounter(nd.mutable_ethtool(), "rx_pause_ctrl_phy", 2);
  std::vector<CounterGroup> groups;
  forEachCounter(nd, [&](CounterGroup g, const v1::Counter&) { groups.push_back(g); });
  EXPECT_EQ(groups, (std::vector<CounterGroup>{CounterGroup::Ethtool, CounterGroup::NetdevStats}));
}

TEST(PortCounterValues, GiveTotalsDeltasAndReasonsThenTheDevicesOwnCounters) {
  const v1::Snapshot s = mlx4Node("a", 5, 250);
  const auto values = portCounterValues(s, "mlx4_0", 1);
  ASSERT_EQ(values.size(), 7u);
  EXPECT_EQ(values[0].name, "symbol_error");
  EXPECT_EQ(values[0].total, 8u);  // the latest reading: 3 before the window, +5 in it
  EXPECT_EQ(values[0].delta, 5);
  EXPECT_EQ(values[2].name, "VL15_dropped");
  EXPECT_FALSE(values[2].total);
  EXPECT_EQ(values[2].unavailable, "EINVAL");
  EXPECT_EQ(values[3].group, CounterGroup::PortCountersExt);
  EXPECT_EQ(values[3].delta, 250);
  EXPECT_FALSE(values[3].device_level);
  // The device's hw_counter: its window sample is port 0; it went backwards.
  EXPECT_TRUE(values[6].device_level);
  EXPECT_EQ(values[6].name, "out_of_buffer");
  EXPECT_FALSE(values[6].delta);
  EXPECT_TRUE(values[6].reset);
  EXPECT_EQ(values[6].total, 0u);  // read 1, then 0 after the reset: the latest is 0
  EXPECT_EQ(values[6].amount(), 0.0);
  EXPECT_TRUE(portCounterValues(s, "mlx4_0", 2).empty());
  EXPECT_TRUE(portCounterValues(s, "mlx5_0", 1).empty());
}

TEST(PortCounterValues, HaveNoDeltaWithoutAWindow) {
  v1::Snapshot s = mlx4Node("a", 5, 250);
  s.clear_window();
  for (const auto& v : portCounterValues(s, "mlx4_0", 1)) {
    EXPECT_FALSE(v.delta) << v.name;
    EXPECT_FALSE(v.reset) << v.name;
  }
}

}  // namespace
}  // namespace ibc::core

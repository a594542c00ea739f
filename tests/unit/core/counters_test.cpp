// The one walk over a port's counters (counters.cpp: forEachCounter, portCounterValues): its
// order, and each counter's total, window delta and unavailable reason.

#include "ibc/core/counters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ibc/core/compare.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

void counter(google::protobuf::RepeatedPtrField<v1::Counter>* list, const std::string& name,
             uint64_t value) {
  auto* c = list->Add();
  c->set_name(name);
  c->set_value(value);
}

// One mlx4-like port: legacy counters/, 64-bit counters_ext/, hw_counters, plus a
// device-level hw_counter; `after` is added to every value in the window's sample.
v1::Snapshot mlx4Node(const std::string& name, uint64_t after_errors, uint64_t after_words) {
  v1::Snapshot s;
  s.mutable_node()->set_hostname(name);
  auto* d = s.add_devices();
  d->set_name("mlx4_0");
  counter(d->mutable_hw_counters(), "out_of_buffer", 1);
  auto* p = d->add_ports();
  p->set_port(1);
  counter(p->mutable_counters(), "symbol_error", 3);
  counter(p->mutable_counters(), "port_xmit_data", 1000);
  counter(p->mutable_counters_ext(), "port_xmit_data_64", 1000);
  counter(p->mutable_counters_ext(), "port_rcv_data_64", 1000);
  counter(p->mutable_hw_counters(), "local_ack_timeout_err", 0);
  auto* unavailable = p->mutable_counters()->Add();
  unavailable->set_name("VL15_dropped");
  unavailable->set_unavailable_reason("EINVAL");

  auto* w = s.add_window();
  w->set_interval_seconds(10);
  auto* sp = w->add_ports();
  sp->set_device("mlx4_0");
  sp->set_port(1);
  counter(sp->mutable_counters(), "symbol_error", 3 + after_errors);
  // The legacy 32-bit counter stopped (saturated); the 64-bit one kept counting.
  counter(sp->mutable_counters(), "port_xmit_data", 1000);
  counter(sp->mutable_counters_ext(), "port_xmit_data_64", 1000 + after_words);
  counter(sp->mutable_counters_ext(), "port_rcv_data_64", 1000 + after_words);
  counter(sp->mutable_hw_counters(), "local_ack_timeout_err", 0);
  auto* sd = w->add_ports();
  sd->set_device("mlx4_0");
  sd->set_port(0);
  counter(sd->mutable_hw_counters(), "out_of_buffer", 0);  // went backwards: reset
  return s;
}

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
  counter(nd.mutable_stats(), "rx_crc_errors", 1);
  counter(nd.mutable_ethtool(), "rx_pause_ctrl_phy", 2);
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

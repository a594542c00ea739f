// port_counters.h: one walk over a port's counters (core's portCounterValues) named in groups
// for the views, with totals and window deltas, on the real mlx5 capture and the windowed
// counter captures (console_fixtures.h).

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "console_fixtures.h"
#include "ibc/console/port_counters.h"
#include "ibc/core/counters.h"

namespace ibc::console {
namespace {

std::map<std::string, PortCounter> byName(const std::vector<PortCounter>& counters) {
  std::map<std::string, PortCounter> out;
  for (const auto& c : counters) out.emplace(c.name, c);
  return out;
}

TEST(PortCounters, ThePortsCountersComeInTheirGroupsWithTheirTotals) {
  const v1::Snapshot mlx5 = mlx5Snapshot();
  const auto counters = portCounters(mlx5, "mlx5_0", 1);
  ASSERT_GT(counters.size(), 10u);
  const auto named = byName(counters);
  ASSERT_TRUE(named.count("req_cqe_error"));
  EXPECT_EQ(named.at("req_cqe_error").group, QStringLiteral("hw_counters"));
  EXPECT_EQ(named.at("req_cqe_error").total, 3481u);
  EXPECT_FALSE(named.at("req_cqe_error").delta.has_value());  // no window
  EXPECT_EQ(named.at("req_cqe_error").amount(), 3481.0);      // the total, then
  ASSERT_TRUE(named.count("symbol_error"));
  EXPECT_EQ(named.at("symbol_error").group, QStringLiteral("counters"));
  EXPECT_NE(named.at("symbol_error").trouble, core::CounterClass::None);
  ASSERT_TRUE(named.count("port_xmit_data"));
  EXPECT_EQ(named.at("port_xmit_data").trouble, core::CounterClass::None);  // traffic
  // The port's own lists come before the device's.
  bool seen_device = false;
  for (const auto& c : counters) {
    if (c.group == QStringLiteral("device hw_counters")) seen_device = true;
    if (seen_device) EXPECT_EQ(c.group, QStringLiteral("device hw_counters")) << c.name;
  }
  EXPECT_TRUE(portCounters(mlx5, "mlx5_0", 9).empty());
  EXPECT_TRUE(portCounters(mlx5, "mlx5_9", 1).empty());
}

TEST(PortCounters, WithAWindowEachCounterHasItsDeltaAndOneThatWentBackwardsHasNone) {
  const JobData j = windowedJob();
  const v1::Snapshot whole = wholeSnapshot(j, 0);  // mlx4 QDR: port 1 grew, port 2 did not
  const std::string device = whole.devices(0).name();
  const auto grew = byName(portCounters(whole, device, 1));
  ASSERT_TRUE(grew.count("symbol_error"));
  EXPECT_EQ(grew.at("symbol_error").delta, 50);
  EXPECT_EQ(grew.at("symbol_error").amount(), 50.0);  // the delta, not the total
  ASSERT_TRUE(grew.count("port_xmit_wait"));
  EXPECT_FALSE(grew.at("port_xmit_wait").delta.has_value());
  EXPECT_TRUE(grew.at("port_xmit_wait").total.has_value());
  const auto quiet = byName(portCounters(whole, device, 2));
  ASSERT_TRUE(quiet.count("symbol_error"));
  EXPECT_EQ(quiet.at("symbol_error").delta, 0);
}

TEST(PortCounters, APortInHandGivesTheSameWalkAsTheLookup) {
  const v1::Snapshot whole = wholeSnapshot(windowedJob(), 0);
  const core::CounterWindowIndex window(whole);
  for (const auto& d : whole.devices()) {
    for (const auto& p : d.ports()) {
      const auto looked_up = portCounters(whole, d.name(), p.port());
      const auto in_hand = portCounters(window, d, p);
      ASSERT_EQ(looked_up.size(), in_hand.size()) << d.name() << "/" << p.port();
      for (std::size_t k = 0; k < in_hand.size(); ++k) {
        EXPECT_EQ(in_hand[k].name, looked_up[k].name);
        EXPECT_EQ(in_hand[k].group, looked_up[k].group);
        EXPECT_EQ(in_hand[k].total, looked_up[k].total);
        EXPECT_EQ(in_hand[k].delta, looked_up[k].delta);
      }
    }
  }
}

TEST(IsTrafficCounter, DataPacketsAndBytesAreTrafficAndErrorsAreNot) {
  for (const char* name : {"port_xmit_data", "port_rcv_packets", "rx_pkts",
                           "rx_vport_rdma_unicast_bytes", "port_multicast_rcv_packets"})
    EXPECT_TRUE(isTrafficCounter(name)) << name;
  for (const char* name : {"symbol_error", "link_downed", "req_cqe_error", "port_xmit_wait"})
    EXPECT_FALSE(isTrafficCounter(name)) << name;
}

}  // namespace
}  // namespace ibc::console

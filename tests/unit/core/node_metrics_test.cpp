// The per-node numbers NODE_OUTLIER judges (node_metrics.cpp): class sums, throughput,
// busbw peaks and the named outlier rules every consumer shares.

#include "ibc/core/node_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ibc/core/compare.h"
#include "mlx4_node.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

using ibc::test::mlx4Node;

// The per-node values the charts and NODE_OUTLIER judge: a counter summed over the ports,
// moved (window) or total; a device's own counter once; nothing readable is no value.
TEST(NodeCounterSum, MovedInTheWindowElseTotalsAndNothingWhenUnreadable) {
  v1::Snapshot s = mlx4Node("a", 5, 250);
  auto* second = s.mutable_devices(0)->add_ports();  // a second port, the same counters
  *second = s.devices(0).ports(0);
  second->set_port(2);
  EXPECT_EQ(nodeCounterSum(s, "symbol_error"), 5.0);  // port 2 has no window sample
  EXPECT_EQ(nodeCounterSum(s, "symbol_error", CounterSum::Totals), 8.0 + 3.0);
  EXPECT_EQ(nodeCounterSum(s, "out_of_buffer", CounterSum::Totals), 0.0);  // once, reset
  EXPECT_FALSE(nodeCounterSum(s, "VL15_dropped"));
  EXPECT_FALSE(nodeCounterSum(s, "no_such_counter"));
  s.clear_window();
  EXPECT_EQ(nodeCounterSum(s, "symbol_error"), 6.0);  // no window: the totals
}

// Every counter's sums in one walk (what the console keeps of a node) are exactly
// nodeCounterSum's, moved and totals, with and without a window; the device's own counter is
// not a port's.
TEST(NodeCounterSums, AreNodeCounterSumForEveryCounterInOneWalk) {
  v1::Snapshot s = mlx4Node("a", 5, 250);
  auto* second = s.mutable_devices(0)->add_ports();
  *second = s.devices(0).ports(0);
  second->set_port(2);
  for (const bool windowed : {true, false}) {
    if (!windowed) s.clear_window();
    const auto all = nodeCounterSums(s);
    ASSERT_EQ(all.count("symbol_error"), 1u);
    EXPECT_EQ(all.count("VL15_dropped"), 0u);  // unreadable everywhere: no sum
    EXPECT_TRUE(all.at("symbol_error").on_port);
    EXPECT_FALSE(all.at("out_of_buffer").on_port);  // only the device's own
    for (const auto& [name, sums] : all) {
      EXPECT_EQ(sums.moved, nodeCounterSum(s, name)) << name << " " << windowed;
      EXPECT_EQ(sums.totals, nodeCounterSum(s, name, CounterSum::Totals)) << name;
    }
  }
}

// A node whose nccl-tests rows all moved nothing has no peak to judge (nor to chart).
TEST(PeakBusbw, TheLargestBusbwOfAnyRowAndNothingWhenNoRowMovedData) {
  v1::Snapshot s;
  EXPECT_FALSE(peakBusbwGbs(s));
  auto* rows = s.add_nccl_tests()->mutable_parsed();
  rows->add_rows()->set_oop_busbw_gbs(0);
  EXPECT_FALSE(peakBusbwGbs(s));
  rows->add_rows()->set_oop_busbw_gbs(120.5);
  auto* r = rows->add_rows();
  r->set_oop_busbw_gbs(200.0);
  r->set_ip_busbw_gbs(201.5);
  EXPECT_EQ(peakBusbwGbs(s), 201.5);
}

TEST(NodeBusbwOutliers, ValuesMarksAndTheNodesWithoutAValueInNodeOrder) {
  // Four nodes' peak busbw, one node without nccl-tests output between them (not judged).
  std::vector<v1::Snapshot> snaps(5);
  const double peaks[] = {338.8, 235.3, 0, 361.2, 97.5};
  for (std::size_t i = 0; i < snaps.size(); ++i) {
    if (peaks[i] == 0) continue;
    auto* row = snaps[i].add_nccl_tests()->mutable_parsed()->add_rows();
    row->set_oop_busbw_gbs(peaks[i]);
  }
  const std::vector<const v1::Snapshot*> nodes = {&snaps[0], &snaps[1], &snaps[2],
                                                  &snaps[3], &snaps[4], nullptr};
  const NodeOutliers judged = nodeBusbwOutliers(nodes);
  ASSERT_EQ(judged.value.size(), 6u);
  EXPECT_EQ(judged.value[0], 338.8);
  EXPECT_FALSE(judged.value[2]);
  EXPECT_FALSE(judged.value[5]);
  EXPECT_EQ(judged.judged(), 4u);
  // The same marks markBusbwOutliers gives the four values, each on its own node.
  const auto marks = markBusbwOutliers({338.8, 235.3, 361.2, 97.5});
  EXPECT_EQ(judged.marks.median, marks.median);
  EXPECT_EQ(judged.outlier,
            (std::vector<bool>{false, marks.outlier[1], false, false, true, false}));
  EXPECT_TRUE(marks.outlier[3]);
  // One node alone has no peers: nothing is marked.
  EXPECT_EQ(nodeBusbwOutliers({&snaps[0]}).outlier, std::vector<bool>{false});
}

TEST(NodeCounterMetrics, ThroughputComesFromCountersExtWhenTheLegacyCounterStopped) {
  const auto m = nodeCounterMetrics(mlx4Node("a", 0, 250));
  ASSERT_TRUE(m.windowed);
  // (250 + 250) words × 4 bytes over 10 s; the stuck 32-bit port_xmit_data adds nothing
  // and would not be added twice if it had moved.
  EXPECT_DOUBLE_EQ(m.bytes_per_second, 200.0);
}

TEST(NodeCounterMetrics, ALegacyCounterACountersExtEntryReplacesIsNotCountedTwice) {
  v1::Snapshot s = mlx4Node("a", 0, 100);
  // Both directories moved by the same amount: one count, from counters_ext.
  s.mutable_window(0)->mutable_ports(0)->mutable_counters(1)->set_value(1100);
  EXPECT_DOUBLE_EQ(nodeCounterMetrics(s).bytes_per_second, 80.0);
}

TEST(NodeCounterMetrics, SumsClassesWithTheirLargestContributor) {
  const auto m = nodeCounterMetrics(mlx4Node("a", 40, 0));
  ASSERT_EQ(m.classes.count(CounterClass::PhyError), 1u);
  EXPECT_DOUBLE_EQ(m.classes.at(CounterClass::PhyError).delta, 40);
  EXPECT_EQ(m.classes.at(CounterClass::PhyError).largest_where, "mlx4_0 port 1 symbol_error +40");
  EXPECT_EQ(m.classes.count(CounterClass::TransportRetry), 0u);  // did not move
}

TEST(NodeCounterMetrics, ASnapshotWithoutAWindowIsNotWindowed) {
  v1::Snapshot s = mlx4Node("a", 40, 0);
  s.clear_window();
  const auto m = nodeCounterMetrics(s);
  EXPECT_FALSE(m.windowed);
  EXPECT_TRUE(m.classes.empty());
}

TEST(CounterOutliers, NameTheNodeAboveTheFactorTimesTheMedian) {
  std::vector<NodeCounterMetrics> m{nodeCounterMetrics(mlx4Node("a", 1, 0)),
                                    nodeCounterMetrics(mlx4Node("b", 0, 0)),
                                    nodeCounterMetrics(mlx4Node("c", 500, 0))};
  const auto out = counterOutliers(m, 10.0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].node, 2u);
  EXPECT_EQ(out[0].cls, CounterClass::PhyError);
  EXPECT_DOUBLE_EQ(out[0].value, 500);
  EXPECT_DOUBLE_EQ(out[0].median, 1);
  EXPECT_EQ(out[0].windowed_nodes, 3u);
  EXPECT_TRUE(counterOutliers({m[2]}, 10.0).empty());  // no peers
}

TEST(CompareNodes, ANodeMovingLessDataInCountersExtIsAnOutlier) {
  // mlx4 ports whose legacy 32-bit data counters stopped: only counters_ext shows that
  // node c moves a tenth of its peers' data.
  const v1::Snapshot a = mlx4Node("a", 0, 500'000'000), b = mlx4Node("b", 0, 500'000'000),
                     c = mlx4Node("c", 0, 50'000'000);
  const auto findings = compareNodes({&a, &b, &c}, CompareOptions{});
  int outliers = 0;
  for (const auto& f : findings) {
    if (f.code() != "NODE_OUTLIER") continue;
    ++outliers;
    EXPECT_EQ(f.node(), "c");
    EXPECT_THAT(f.summary(), HasSubstr("Gb/s of RDMA data"));
  }
  EXPECT_EQ(outliers, 1);
}

}  // namespace
}  // namespace ibc::core

namespace ibc::core {
namespace {

TEST(OutlierMarks, OneRuleMarksBusbwAndCountersForEveryConsumer) {
  const auto busbw = markBusbwOutliers({338.8, 235.3, 361.2, 97.5});
  EXPECT_DOUBLE_EQ(busbw.median, 338.8);  // the upper one of an even count
  EXPECT_EQ(busbw.outlier, (std::vector<bool>{false, true, false, true}));
  const auto counters = markCounterOutliers({0, 0, 50, 3});
  EXPECT_EQ(counters.outlier, (std::vector<bool>{false, false, true, false}));  // > 10 x max(m,1)
  EXPECT_EQ(markBusbwOutliers({1.0}).outlier, std::vector<bool>{false});        // no peers
  EXPECT_TRUE(markCounterOutliers({}).outlier.empty());
  // The marks say their rule, so no surface words it again.
  EXPECT_EQ(busbw.rule, "below 80% of the job's median");
  EXPECT_TRUE(busbw.below);
  EXPECT_DOUBLE_EQ(busbw.threshold, kBusbwOutlierFraction * 338.8);
  EXPECT_EQ(busbw.count(), 2);
  EXPECT_EQ(counters.rule, "above 10 x max(median, 1)");
  EXPECT_FALSE(counters.below);
  EXPECT_DOUBLE_EQ(counters.threshold, 30);  // median 3
  EXPECT_EQ(counters.count(), 1);
}

}  // namespace
}  // namespace ibc::core

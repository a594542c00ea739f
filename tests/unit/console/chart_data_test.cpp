// chart_data.h: busbw and counters per node with core's outlier marks, a counter over a host's
// snapshots (the real job and captures); and the charts' arithmetic, pure: nice axis ticks,
// the histogram a large job is drawn as, the words that name outliers, and the label prefix
// the bars leave out.

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "console_fixtures.h"
#include "ibc/console/chart_data.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"
#include "ibc/core/node_metrics.h"

namespace ibc::console {
namespace {

// A node whose nccl-tests output moved nothing (every row 0 GB/s: SYNTHETIC, in memory) is
// neither charted nor judged, as core's NODE_OUTLIER leaves it out: the chart used to plot it
// at 0 and call it an outlier the job's verdict never named.
TEST(ChartData, ANodeWhoseTestMovedNothingIsNotChartedAsCoreDoesNotJudgeIt) {
  auto snaps = withNcclTests(wholeSnapshots(job()));
  snaps[0].clear_nccl_tests();
  snaps[0].add_nccl_tests()->mutable_parsed()->add_rows()->set_oop_busbw_gbs(0);
  const JobData j = diagnoseSnapshots(snaps, jobFiles());
  const auto series = busbwPerNode(j);
  ASSERT_EQ(series.values.size(), 3u);
  for (const auto& v : series.values) EXPECT_NE(v.node, 0);
  for (int i : findingsOfNode(j, 0)) {
    const auto& f = j.report.findings(i);
    EXPECT_FALSE(f.code() == "NODE_OUTLIER" && f.summary().find("nccl-tests") != std::string::npos)
        << f.summary();
  }
  // Nor does the grid show it a busbw, let alone mark it.
  NodeGridModel m;
  m.setJob(&j);
  const int row = rowOfPort(m, QString::fromStdString(j.report.nodes(0).label()), "mlx5_0");
  ASSERT_GE(row, 0);
  EXPECT_TRUE(m.index(row, NodeGridModel::Busbw).data().toString().isEmpty());
  EXPECT_FALSE(m.index(row, NodeGridModel::Busbw).data(NodeGridModel::OutlierRole).toBool());
}

TEST(ChartData, BusbwOutliersAreTheNodesTheJobVerdictCallsBusbwOutliers) {
  // The job's snapshots, each with a real all_reduce_perf output attached.
  ASSERT_EQ(job().snapshots.size(), 4u);
  const JobData j = diagnoseSnapshots(withNcclTests(wholeSnapshots(job())), jobFiles());
  const auto series = busbwPerNode(j);
  const auto& bars = series.values;
  ASSERT_EQ(bars.size(), 4u);
  EXPECT_NEAR(bars[0].value, 338.82, 0.01);
  EXPECT_NEAR(bars[1].value, 235.26, 0.01);
  EXPECT_NEAR(bars[3].value, 97.54, 0.01);  // in place at 1 GiB
  // One rule (core::isBusbwOutlier over core::medianOf): the red bars are the nodes core's
  // verdict gave a busbw NODE_OUTLIER, and the 97.5 GB/s node is one of them.
  int outliers = 0;
  for (std::size_t k = 0; k < bars.size(); ++k) {
    const auto& b = bars[k];
    const bool outlier = b.outlier;
    outliers += outlier ? 1 : 0;
    bool judged = false;
    for (const int i : findingsOfNode(j, b.node)) {
      const auto& f = j.report.findings(i);
      judged = judged || (f.code() == "NODE_OUTLIER" &&
                          f.summary().find("bus bandwidth") != std::string::npos);
    }
    EXPECT_EQ(outlier, judged) << b.label << " " << b.value;
  }
  EXPECT_GE(outliers, 1);
  EXPECT_TRUE(bars[3].outlier);
  // The grid marks the busbw cells of exactly those nodes, on every row of the node.
  NodeGridModel grid;
  grid.setJob(&j);
  for (int r = 0; r < grid.rowCount(); ++r) {
    const int node = grid.index(r, 0).data(NodeGridModel::NodeIndexRole).toInt();
    bool bar_outlier = false;
    for (const auto& b : bars) bar_outlier = bar_outlier || (b.node == node && b.outlier);
    EXPECT_EQ(grid.index(r, NodeGridModel::Busbw).data(NodeGridModel::OutlierRole).toBool(),
              bar_outlier)
        << "row " << r;
  }
  EXPECT_EQ(series.outliers(), outliers);
  EXPECT_EQ(series.nodes, 4);
  EXPECT_TRUE(busbwPerNode(job()).values.empty());  // no nccl-tests: no bars, never zeros
}

TEST(ChartData, ACounterPerNodeLeavesOutNodesWithoutItAndOverTimeIsOldestFirst) {
  const v1::Snapshot mlx5 = mlx5Snapshot();
  std::vector<v1::Snapshot> snaps = {wholeSnapshot(job(), 0), mlx5};
  const JobData j = diagnoseSnapshots(snaps, {jobFiles()[0], "mlx5.ibsnap"});
  const auto series = counterPerNode(j, "resp_cqe_error");
  const auto& bars = series.values;
  EXPECT_EQ(series.unit, CounterUnit::Count);
  ASSERT_EQ(bars.size(), 1u);  // the gcm capture has no hw_counters: left out, not 0
  EXPECT_EQ(bars[0].node, 1);
  EXPECT_EQ(bars[0].value, 8109);
  const auto names = counterNames(j);
  EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "resp_cqe_error"));

  // The same host read three times (synthetic later readings, in memory), given newest first.
  std::vector<v1::Snapshot> history;
  for (int k = 2; k >= 0; --k) {
    v1::Snapshot s = mlx5;
    s.mutable_node()->set_collected_at_unix_ms(mlx5.node().collected_at_unix_ms() + k * 60000);
    for (auto& c : *s.mutable_devices(0)->mutable_ports(0)->mutable_hw_counters()) {
      if (c.name() == "resp_cqe_error") c.set_value(c.value() + static_cast<uint64_t>(k) * 10);
    }
    history.push_back(s);
  }
  const JobData h = diagnoseSnapshots(history, {"c.ibsnap", "b.ibsnap", "a.ibsnap"});
  const auto points = counterOverTime(h, 0, "resp_cqe_error");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].value, 8109);
  EXPECT_EQ(points[1].value, 8119);
  EXPECT_EQ(points[2].value, 8129);
  EXPECT_LT(points[0].unix_ms, points[2].unix_ms);
}

TEST(ChartData, DataCountersAreChartedInBytesFourPerWordAndJudgedOnTheirCounts) {
  // The real mlx5 capture: port_xmit_data in sysfs counts 4-byte words (CONTRIBUTING.md, core's
  // nodeCounterMetrics multiplies by 4).
  const v1::Snapshot mlx5 = mlx5Snapshot();
  uint64_t words = 0;
  for (const auto& c : mlx5.devices(0).ports(0).counters())
    if (c.name() == "port_xmit_data") words = c.value();
  ASSERT_GT(words, 0u);
  const JobData j = diagnoseSnapshots({mlx5}, {"mlx5.ibsnap"});
  const auto series = counterPerNode(j, "port_xmit_data");
  ASSERT_EQ(series.values.size(), 1u);
  EXPECT_EQ(series.unit, CounterUnit::Bytes);
  EXPECT_EQ(series.values[0].value, 4.0 * static_cast<double>(words));
  EXPECT_EQ(formatValue(series, 4096), "4.00 KiB");
  const auto points = counterOverTime(j, 0, "port_xmit_data");
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].value, 4.0 * static_cast<double>(words));
}

NodeSeries busbwSeries(const std::vector<double>& gbs) {
  NodeSeries s;
  s.quantity = NodeQuantity::Busbw;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < gbs.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "gpu-%04zu", i);
    labels.push_back(name);
  }
  fillSeries(s, labels,
             core::nodeBusbwOutliers(std::vector<std::optional<double>>(gbs.begin(), gbs.end())),
             1.0);
  return s;
}

TEST(NiceAxis, TicksAreOneTwoOrFiveTimesAPowerOfTenAndCoverTheRange) {
  struct Case {
    double lo, hi;
    int max_ticks;
    double want_lo, want_hi, want_step;
    int want_ticks, want_decimals;
  };
  for (const Case& c : {
           // The old y axis of a 390 GB/s job ticked at 97/195/292/390.
           Case{0, 390, 6, 0, 400, 100, 5, 0},
           Case{0, 390, 9, 0, 400, 50, 9, 0},
           Case{97.54, 361.2, 21, 80, 380, 20, 16, 0},
           // 0.02 would take 6 ticks (0 to 0.1): the next nice step.
           Case{0.013, 0.087, 5, 0, 0.1, 0.05, 3, 2},
           Case{-35, 120, 8, -50, 150, 50, 5, 0},
       }) {
    const NiceAxis a = niceAxis(c.lo, c.hi, c.max_ticks);
    const std::string what = std::to_string(c.lo) + ".." + std::to_string(c.hi);
    EXPECT_NEAR(a.lo, c.want_lo, 1e-12) << what;
    EXPECT_NEAR(a.hi, c.want_hi, 1e-12) << what;
    EXPECT_NEAR(a.step, c.want_step, 1e-12) << what;
    EXPECT_EQ(a.tick_count, c.want_ticks) << what;
    EXPECT_EQ(a.decimals, c.want_decimals) << what;
  }
}

TEST(NiceAxis, NeverMoreTicksThanAskedAndAnEmptyRangeIsWidened) {
  for (int max_ticks = 2; max_ticks <= 25; ++max_ticks) {
    for (const double hi : {1.0, 7.0, 99.0, 101.0, 415.3, 1e6 + 3, 8109.0}) {
      const NiceAxis a = niceAxis(0, hi, max_ticks);
      EXPECT_LE(a.tick_count, max_ticks) << hi << " " << max_ticks;
      EXPECT_GE(a.tick_count, 2);
      EXPECT_LE(a.lo, 0);
      EXPECT_GE(a.hi, hi);
      EXPECT_NEAR(a.lo + (a.tick_count - 1) * a.step, a.hi, a.step * 1e-9);
    }
  }
  const NiceAxis zero = niceAxis(0, 0, 5);
  EXPECT_EQ(zero.lo, 0);
  EXPECT_EQ(zero.hi, 1);
  const NiceAxis same = niceAxis(340, 340, 5);
  EXPECT_LT(same.lo, 340);
  EXPECT_GT(same.hi, 340);
  EXPECT_EQ(niceAxis(390, 0, 6).hi, 400);  // given backwards
}

TEST(Histogram, BinEdgesAreNiceCountsAddUpAndEachOutlierIsInTheBinOfItsValue) {
  // 2,000 nodes between 330 and 360 GB/s, three slow ones.
  std::vector<double> gbs;
  for (int i = 0; i < 2000; ++i) gbs.push_back(330 + (i % 31));
  gbs[42] = 97.5;
  gbs[1234] = 121.0;
  gbs[1999] = 250.0;
  const NodeSeries s = busbwSeries(gbs);
  ASSERT_EQ(s.outliers(), 3);
  const Histogram h = histogramOf(s, 20);
  ASSERT_FALSE(h.bins.empty());
  EXPECT_LE(h.bins.size(), 20u);
  EXPECT_EQ(h.step, 20);
  EXPECT_EQ(h.bins.front().lo, 80);
  EXPECT_EQ(h.bins.back().hi, 360);
  int total = 0;
  for (std::size_t b = 0; b < h.bins.size(); ++b) {
    total += h.bins[b].count;
    EXPECT_DOUBLE_EQ(h.bins[b].hi - h.bins[b].lo, h.step);
    if (b > 0) EXPECT_EQ(h.bins[b].lo, h.bins[b - 1].hi);
  }
  EXPECT_EQ(total, 2000);
  // 97.5 in [80, 100), 121 in [120, 140), 250 in [240, 260); those bins hold one node each.
  EXPECT_EQ(binOf(h, 97.5), 0);
  EXPECT_EQ(binOf(h, 121), 2);
  EXPECT_EQ(binOf(h, 250), 8);
  EXPECT_EQ(h.bins[0].outliers, std::vector<int>{42});
  EXPECT_EQ(h.bins[0].first, 42);
  EXPECT_EQ(h.bins[2].outliers, std::vector<int>{1234});
  EXPECT_EQ(h.bins[8].outliers, std::vector<int>{1999});
  EXPECT_EQ(h.bins[8].count, 1);
  for (std::size_t b = 0; b < h.bins.size(); ++b) {
    if (b != 0 && b != 2 && b != 8) EXPECT_TRUE(h.bins[b].outliers.empty()) << b;
  }
  // The largest value is in the last bin (closed on the right); outside: none.
  EXPECT_EQ(binOf(h, 360), static_cast<int>(h.bins.size()) - 1);
  EXPECT_EQ(binOf(h, 79), -1);
  EXPECT_EQ(binOf(h, 361), -1);
  EXPECT_TRUE(histogramOf(NodeSeries{}, 20).bins.empty());
}

TEST(Histogram, EqualValuesMakeOneBinHoldingThemAll) {
  const NodeSeries s = busbwSeries(std::vector<double>(500, 338.8));
  const Histogram h = histogramOf(s, 20);
  int total = 0;
  int nonempty = 0;
  for (const auto& b : h.bins) {
    total += b.count;
    nonempty += b.count > 0 ? 1 : 0;
    EXPECT_TRUE(b.outliers.empty());
  }
  EXPECT_EQ(total, 500);
  EXPECT_EQ(nonempty, 1);
  EXPECT_EQ(s.outliers(), 0);
}

TEST(Histogram, BytesAreBinnedInTheUnitShownSoEdgesAreRoundGiB) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  NodeSeries s;
  s.quantity = NodeQuantity::Counter;
  s.counter = "port_xmit_data";
  s.unit = CounterUnit::Bytes;
  for (int i = 0; i < 1000; ++i) s.values.push_back({i, "n", (i % 7 + 1) * 4 * kGiB});
  s.values[77].value = 520 * kGiB;
  const UnitScale scale = unitScale(s.unit, 520 * kGiB);
  ASSERT_EQ(scale.suffix, "GiB");
  const Histogram h = histogramOf(s, 20, scale.divisor);
  EXPECT_EQ(h.step, 50 * kGiB);  // not 46.6 GiB (5e10 bytes)
  EXPECT_EQ(h.bins.front().lo, 0);
  EXPECT_EQ(h.bins.back().hi, 550 * kGiB);
  EXPECT_EQ(binOf(h, 520 * kGiB), 10);
  EXPECT_EQ(h.bins[0].count, 999);
}

TEST(OutlierWords, OutliersAreNamedWorstFirstWithTheirValueAndTheRuleIsCores) {
  const NodeSeries s = busbwSeries({338.8, 235.26, 361.2, 97.54});
  ASSERT_EQ(s.outliers(), 2);
  EXPECT_EQ(outliersWorstFirst(s), (std::vector<int>{3, 1}));
  EXPECT_EQ(outlierNames(s, 5), "gpu-0003 (97.5 GB/s), gpu-0001 (235.3 GB/s)");
  EXPECT_EQ(outlierNames(s, 1), "gpu-0003 (97.5 GB/s) and 1 more");
  EXPECT_EQ(outlierNames(busbwSeries({300, 301, 302}), 5), "");
  // The rule's numbers are core's: 80% (kBusbwOutlierFraction) of the median, 338.8.
  EXPECT_EQ(core::kBusbwOutlierFraction, 0.8);
  EXPECT_EQ(outlierRule(s), "below 80% of the job's median (338.8 GB/s)");
  EXPECT_EQ(describeValue(s, 3),
            "gpu-0003: 97.5 GB/s\noutlier: below 80% of the job's median (338.8 GB/s)");
  EXPECT_EQ(describeValue(s, 0),
            "gpu-0000: 338.8 GB/s\nnot an outlier (an outlier is below 80% of the job's median "
            "(338.8 GB/s))");

  NodeSeries c;
  c.quantity = NodeQuantity::Counter;
  c.counter = "symbol_error";
  c.unit = counterUnit(c.counter);
  fillSeries(c, {"a", "b", "c", "d", "e"}, core::nodeCounterOutliers({0, 120, 0, 40, 0}),
             1.0);  // core marks b and d
  ASSERT_EQ(c.outliers(), 2);
  EXPECT_EQ(outliersWorstFirst(c), (std::vector<int>{1, 3}));  // the highest first
  EXPECT_EQ(outlierRule(c), "above 10 x max(median, 1) = 10 (median 0)");
  EXPECT_EQ(outlierNames(c, 5), "b (120), d (40)");
}

TEST(LabelPrefix, TheSharedPrefixEndsAtASeparatorAndEveryLabelKeepsWhatTellsItApart) {
  EXPECT_EQ(commonLabelPrefix({"gpu-h100-r07-n01", "gpu-h100-r07-n02", "gpu-h100-r07-n16"}, 5),
            "gpu-h100-r07-");
  // Where no separator is shared, letters turning into digits: node0042 keeps 0042.
  EXPECT_EQ(commonLabelPrefix({"computenode0042", "computenode0107"}, 5), "computenode");
  // Shorter than asked: left on the labels.
  EXPECT_EQ(commonLabelPrefix({"node0042", "node0107"}, 5), "");
  // The colliding host told apart by file: the prefix stops before what differs.
  EXPECT_EQ(commonLabelPrefix({"node1720 (gpu01.ibsnap)", "node1720 (gpu02.ibsnap)"}, 5),
            "node1720 ");
  // A label that is the prefix of another keeps a character of its own.
  EXPECT_EQ(commonLabelPrefix({"gpu-h100-r07", "gpu-h100-r07-n02"}, 5), "gpu-h100-");
  EXPECT_EQ(commonLabelPrefix({"gpu-h100-r07-n01"}, 5), "");
  EXPECT_EQ(commonLabelPrefix({}, 5), "");
  EXPECT_EQ(commonLabelPrefix({"alpha", "beta"}, 1), "");
}

}  // namespace
}  // namespace ibc::console

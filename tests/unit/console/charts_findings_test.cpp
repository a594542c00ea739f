// The charts' arithmetic (chart_data.h), pure: nice axis ticks, the histogram a large job is
// drawn as, the units of counters, the words that name outliers, and the label prefix the
// bars leave out. No widgets, no files: numbers in, numbers and words out.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ibc/console/chart_data.h"
#include "ibc/core/node_metrics.h"

namespace ibc::console {
namespace {

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

TEST(CounterUnits, DataCountersAreFourByteWordsShownAsBytesWithBinaryPrefixes) {
  EXPECT_EQ(counterUnit("port_xmit_data"), CounterUnit::Bytes);
  EXPECT_EQ(counterUnit("port_rcv_data_64"), CounterUnit::Bytes);
  EXPECT_EQ(counterScale("port_xmit_data"), 4.0);
  EXPECT_EQ(counterScale("port_rcv_data_64"), 4.0);
  EXPECT_EQ(counterUnit("rx_vport_rdma_unicast_bytes"), CounterUnit::Bytes);
  EXPECT_EQ(counterScale("rx_vport_rdma_unicast_bytes"), 1.0);
  EXPECT_EQ(counterUnit("port_xmit_packets"), CounterUnit::Packets);
  EXPECT_EQ(counterUnit("unicast_rcv_packets"), CounterUnit::Packets);
  EXPECT_EQ(counterUnit("rx_pkts"), CounterUnit::Packets);
  EXPECT_EQ(counterUnit("symbol_error"), CounterUnit::Count);
  EXPECT_EQ(counterUnit("port_xmit_wait"), CounterUnit::Count);
  EXPECT_EQ(counterScale("symbol_error"), 1.0);

  EXPECT_EQ(formatAmount(812, CounterUnit::Bytes), "812 bytes");
  EXPECT_EQ(formatAmount(1536, CounterUnit::Bytes), "1.50 KiB");
  EXPECT_EQ(formatAmount(3.0 * 1024 * 1024 * 1024, CounterUnit::Bytes), "3.00 GiB");
  EXPECT_EQ(formatAmount(123.0 * 1024 * 1024, CounterUnit::Bytes), "123 MiB");
  EXPECT_EQ(formatAmount(1234567, CounterUnit::Packets), "1,234,567 packets");
  EXPECT_EQ(formatAmount(8109, CounterUnit::Count), "8,109");
  EXPECT_EQ(formatAmount(-468, CounterUnit::Count), "-468");
  EXPECT_EQ(unitScale(CounterUnit::Bytes, 5.0 * 1024 * 1024 * 1024).suffix, "GiB");
  EXPECT_EQ(unitScale(CounterUnit::Bytes, 5.0 * 1024 * 1024 * 1024).divisor, 1024.0 * 1024 * 1024);
  EXPECT_EQ(unitScale(CounterUnit::Bytes, 100).suffix, "bytes");
  EXPECT_EQ(unitScale(CounterUnit::Packets, 1e9).divisor, 1);
  // A counter's raw counts and rates in its unit (node page, diff).
  EXPECT_EQ(formatCounter("port_xmit_data", 1000), "3.91 KiB");
  EXPECT_EQ(formatCounter("port_rcv_packets", 87169372), "87,169,372 packets");
  EXPECT_EQ(formatCounter("symbol_error", 12), "12");
  EXPECT_EQ(formatCounterRate("port_xmit_data", 3.0 * 1024 * 1024), "12.0 MiB/s");
  EXPECT_EQ(formatCounterRate("port_xmit_packets", 3), "3.0 packets/s");
  EXPECT_EQ(formatCounterRate("symbol_error", 0.4), "0.4/s");
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

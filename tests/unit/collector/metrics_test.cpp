// The collector's counters as Prometheus text (service/metrics.cpp): the ack latency
// histogram and the exposition text `--metrics` serves.

#include "ibc/collector/service/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The lines starting with `prefix`.
std::vector<std::string> startingWith(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& l : linesOf(text)) {
    if (l.rfind(prefix, 0) == 0) out.push_back(l);
  }
  return out;
}

MetricsSnapshot sampleSnapshot() {
  MetricsSnapshot m;
  m.stats.set_uploads_stored(12);
  m.stats.set_uploads_duplicate(3);
  m.stats.set_bytes_stored(786432);
  m.stats.set_connections_open(4);
  m.stats.set_connections_accepted(40);
  auto* r = m.stats.add_rejections();
  r->set_reason(v1::REJECT_REASON_BAD_SIGNATURE);
  r->set_name("bad_signature");
  r->set_count(2);
  m.received_bytes = 800000;
  m.writer_queue_depth = 5;
  LatencyHistogram h;
  h.observe(microseconds(500));
  h.observe(milliseconds(30));
  m.ack_latency = h.counts();
  m.store_size = StoreSizeFigures{1000, 20000, 300};
  m.retention_deleted = 7;
  m.process_start_time_seconds = 1700000000.5;
  return m;
}

TEST(LatencyHistogram, AnObservationCountsInItsBucketAndEveryLargerOne) {
  LatencyHistogram h;
  h.observe(microseconds(500));  // <= 0.001
  h.observe(milliseconds(1));    // exactly 0.001: a bound is inclusive (le)
  h.observe(milliseconds(3));    // <= 0.005
  h.observe(seconds(20));        // beyond 10: +Inf only
  const auto c = h.counts();
  const std::vector<uint64_t> want = {2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
  EXPECT_EQ(std::vector<uint64_t>(c.cumulative.begin(), c.cumulative.end()), want);
  EXPECT_EQ(c.count, 4u);
  EXPECT_DOUBLE_EQ(c.sum_seconds, 20.0045);
}

TEST(LatencyHistogram, ANegativeDurationCountsAsZeroSeconds) {
  LatencyHistogram h;
  h.observe(milliseconds(-5));
  const auto c = h.counts();
  EXPECT_EQ(c.cumulative[0], 1u);
  EXPECT_EQ(c.count, 1u);
  EXPECT_DOUBLE_EQ(c.sum_seconds, 0);
}

TEST(PrometheusText, EveryFamilyHasItsHelpAndTypeAndItsSamplesInTheDocumentedOrder) {
  const std::string text = prometheusText(sampleSnapshot());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const std::vector<std::string> families = {"ibcollect_uploads_accepted_total counter",
                                             "ibcollect_rejections_total counter",
                                             "ibcollect_received_bytes_total counter",
                                             "ibcollect_stored_bytes_total counter",
                                             "ibcollect_writer_queue_depth gauge",
                                             "ibcollect_ack_latency_seconds histogram",
                                             "ibcollect_store_size_bytes gauge",
                                             "ibcollect_store_part_bytes gauge",
                                             "ibcollect_open_connections gauge",
                                             "ibcollect_connections_total counter",
                                             "ibcollect_retention_deleted_snapshots_total counter",
                                             "process_start_time_seconds gauge"};
  std::vector<std::string> types;
  for (const auto& l : startingWith(text, "# TYPE ")) types.push_back(l.substr(7));
  EXPECT_EQ(types, families);
  EXPECT_EQ(startingWith(text, "# HELP ").size(), families.size());
  // Each TYPE line follows its HELP line, and the family's samples follow both.
  const auto lines = linesOf(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("# TYPE ", 0) != 0) continue;
    const std::string name = lines[i].substr(7, lines[i].find(' ', 7) - 7);
    ASSERT_GT(i, 0u);
    EXPECT_EQ(lines[i - 1].rfind("# HELP " + name + " ", 0), 0u) << lines[i - 1];
    ASSERT_LT(i + 1, lines.size());
    EXPECT_EQ(lines[i + 1].rfind(name, 0), 0u) << lines[i + 1];
  }
}

TEST(PrometheusText, SamplesCarryTheSnapshotsValues) {
  const std::string text = prometheusText(sampleSnapshot());
  for (const char* line : {
           "ibcollect_uploads_accepted_total{outcome=\"stored\"} 12\n",
           "ibcollect_uploads_accepted_total{outcome=\"duplicate\"} 3\n",
           "ibcollect_rejections_total{reason=\"REJECT_REASON_BAD_SIGNATURE\"} 2\n",
           "ibcollect_rejections_total{reason=\"REJECT_REASON_UNKNOWN_CA\"} 0\n",
           "ibcollect_received_bytes_total 800000\n",
           "ibcollect_stored_bytes_total 786432\n",
           "ibcollect_writer_queue_depth 5\n",
           "ibcollect_ack_latency_seconds_bucket{le=\"0.001\"} 1\n",
           "ibcollect_ack_latency_seconds_bucket{le=\"0.025\"} 1\n",
           "ibcollect_ack_latency_seconds_bucket{le=\"0.05\"} 2\n",
           "ibcollect_ack_latency_seconds_bucket{le=\"10\"} 2\n",
           "ibcollect_ack_latency_seconds_bucket{le=\"+Inf\"} 2\n",
           "ibcollect_ack_latency_seconds_sum 0.0305\n",
           "ibcollect_ack_latency_seconds_count 2\n",
           "ibcollect_store_size_bytes 21300\n",
           "ibcollect_store_part_bytes{part=\"sst\"} 1000\n",
           "ibcollect_store_part_bytes{part=\"blob\"} 20000\n",
           "ibcollect_store_part_bytes{part=\"wal\"} 300\n",
           "ibcollect_open_connections 4\n",
           "ibcollect_connections_total 40\n",
           "ibcollect_retention_deleted_snapshots_total 7\n",
           "process_start_time_seconds 1700000000.5\n",
       }) {
    EXPECT_THAT(text, HasSubstr(line));
  }
}

TEST(PrometheusText, EveryRejectReasonButUnspecifiedHasASampleEvenAtZero) {
  const std::string text = prometheusText(MetricsSnapshot{});
  const auto* reasons = v1::RejectReason_descriptor();
  const auto samples = startingWith(text, "ibcollect_rejections_total{");
  EXPECT_EQ(samples.size(), static_cast<std::size_t>(reasons->value_count() - 1));
  for (const auto& s : samples) EXPECT_EQ(s.substr(s.size() - 2), " 0") << s;
  EXPECT_THAT(text, Not(HasSubstr("REJECT_REASON_UNSPECIFIED")));
}

TEST(PrometheusText, AStoreSizeThatCouldNotBeReadIsLeftOutNotReportedAsZero) {
  MetricsSnapshot m = sampleSnapshot();
  m.store_size.reset();
  const std::string text = prometheusText(m);
  EXPECT_THAT(text, Not(HasSubstr("ibcollect_store_size_bytes")));
  EXPECT_THAT(text, Not(HasSubstr("ibcollect_store_part_bytes")));
  EXPECT_THAT(text, HasSubstr("ibcollect_open_connections 4\n"));
}

TEST(PrometheusText, BucketBoundsAreWrittenInTheirShortestForm) {
  const std::string text = prometheusText(MetricsSnapshot{});
  std::vector<std::string> bounds;
  for (const auto& l : startingWith(text, "ibcollect_ack_latency_seconds_bucket{le=\"")) {
    bounds.push_back(l.substr(41, l.find('"', 41) - 41));
  }
  EXPECT_EQ(bounds,
            (std::vector<std::string>{"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
                                      "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"}));
}

}  // namespace
}  // namespace ibc::collector

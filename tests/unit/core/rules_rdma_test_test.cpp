// RDMA test rule (rules_rdma_test.cpp, RDMA_TEST_LOW_BW) on SYNTHETIC snapshots
// (rule_snapshots.h: one node, mlx5_0 port 1 Active at 200 Gb/s) holding one perftest run.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ibc/core/rules.h"
#include "rule_snapshots.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

using namespace ibc::test;

// One run on mlx5_0 port 1: `fields` are RdmaTest text-format fields.
v1::Snapshot withRun(const std::string& fields) {
  return snapshot("rdma_tests { source: \"bw.txt\" tool: \"ib_write_bw\" first_line: 3 " + fields +
                  " }");
}

constexpr char kGbits[] = R"(device: "mlx5_0" unit: "Gb/sec" size_bytes: 65536 rows: 1 )";

std::string gbits(double gbps) {
  return std::string(kGbits) + "bw_average_raw: " + std::to_string(gbps) +
         " bw_average_gbps: " + std::to_string(gbps);
}

TEST(RdmaTestRule, UnderEightyPercentOfThePortsRateIsLowAndSaysTheBudget) {
  const auto findings = diagnoseNode(withRun(gbits(96)), {});
  const auto* f = find(findings, "RDMA_TEST_LOW_BW");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), "mlx5_0");
  EXPECT_EQ(f->port(), 1u);
  EXPECT_THAT(f->summary(), HasSubstr("ib_write_bw measured 96 Gb/s on mlx5_0 port 1, 48 %"));
  ASSERT_GE(f->evidence_size(), 3);
  EXPECT_THAT(f->evidence(1), HasSubstr("rate 200 Gb/s (mlx5_0 port 1)"));
  EXPECT_THAT(f->evidence(1), HasSubstr("low under 80 %: 160 Gb/s"));
  EXPECT_EQ(f->evidence(2), "source bw.txt line 3");
  // 170 Gb/s of 200 is 85 %: fine, and nothing to notice.
  EXPECT_EQ(find(diagnoseNode(withRun(gbits(170)), {}), "RDMA_TEST_LOW_BW"), nullptr);
  EXPECT_TRUE(rdmaTestNotices(withRun(gbits(170)), {}).empty());
}

TEST(RdmaTestRule, PerftestsMegabytesAreMebibytes) {
  // 20000 MB/sec is 20000 * 2^20 * 8 bit/s = 167.77 Gb/s: 84 % of 200, fine; 18000 is 75 %.
  const std::string mib = R"(device: "mlx5_0" unit: "MB/sec" size_bytes: 65536 rows: 1 )";
  EXPECT_EQ(
      find(diagnoseNode(withRun(mib + "bw_average_raw: 20000 bw_average_gbps: 167.77216"), {}),
           "RDMA_TEST_LOW_BW"),
      nullptr);
  const auto low =
      diagnoseNode(withRun(mib + "bw_average_raw: 18000 bw_average_gbps: 150.994944"), {});
  const auto* f = find(low, "RDMA_TEST_LOW_BW");
  ASSERT_NE(f, nullptr) << describe(low);
  EXPECT_THAT(f->evidence(0), HasSubstr("18000 MB/sec at 65536 B = 151 Gb/s"));
  EXPECT_THAT(f->evidence(0), HasSubstr("MiB/s by perftest's definition"));
}

TEST(RdmaTestRule, ABidirectionalRunIsJudgedAgainstBothDirections) {
  // 300 Gb/s both ways on a 200 Gb/s port: 75 % of 400.
  const auto findings = diagnoseNode(withRun(gbits(300) + " bidirectional: true"), {});
  const auto* f = find(findings, "RDMA_TEST_LOW_BW");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->evidence(1), HasSubstr("both directions: 400 Gb/s"));
  EXPECT_EQ(
      find(diagnoseNode(withRun(gbits(390) + " bidirectional: true"), {}), "RDMA_TEST_LOW_BW"),
      nullptr);
}

TEST(RdmaTestRule, WithoutARateTheRunIsNotJudgedAndANoticeSaysSo) {
  // A device the node does not have: no port rate, and the node's ports are not assumed.
  const std::string other = R"(device: "mlx5_9" unit: "Gb/sec" size_bytes: 65536 rows: 1 )"
                            R"(bw_average_raw: 40 bw_average_gbps: 40)";
  EXPECT_EQ(find(diagnoseNode(withRun(other), {}), "RDMA_TEST_LOW_BW"), nullptr);
  const auto notices = rdmaTestNotices(withRun(other), {});
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_THAT(notices[0], HasSubstr("ib_write_bw (bw.txt) not judged: no rate to judge against"));
  // --expect-rate gives the rate.
  RuleOptions o;
  o.expect_rate_gbps = 100;
  const auto judged = diagnoseNode(withRun(other), o);
  const auto* f = find(judged, "RDMA_TEST_LOW_BW");
  ASSERT_NE(f, nullptr) << describe(judged);
  EXPECT_THAT(f->evidence(1), HasSubstr("rate 100 Gb/s (--expect-rate)"));
  EXPECT_TRUE(rdmaTestNotices(withRun(other), o).empty());
}

TEST(RdmaTestRule, AnUnnamedDeviceTakesTheRateEveryActivePortShares) {
  const std::string unnamed =
      R"(unit: "Gb/sec" size_bytes: 65536 rows: 1 bw_average_raw: 50 bw_average_gbps: 50)";
  const auto findings = diagnoseNode(withRun(unnamed), {});
  const auto* f = find(findings, "RDMA_TEST_LOW_BW");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->device(), "");
  EXPECT_THAT(f->evidence(1), HasSubstr("every active port of the node"));
}

TEST(RdmaTestRule, AJsonValueOfUnknownUnitIsReadOnlyWhenNoLinkCouldCarryItInGbits) {
  const std::string json = R"(device: "mlx5_0" size_bytes: 65536 rows: 1 )";
  // 12000 "Gb/s" on a 200 Gb/s port is impossible: perftest's default MiB/s, 100.7 Gb/s, low.
  const auto findings = diagnoseNode(withRun(json + "bw_average_raw: 12000"), {});
  const auto* f = find(findings, "RDMA_TEST_LOW_BW");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->evidence(0), HasSubstr("unit not shown: read as MiB/s"));
  // 95 could be either: not judged, and said.
  EXPECT_EQ(find(diagnoseNode(withRun(json + "bw_average_raw: 95"), {}), "RDMA_TEST_LOW_BW"),
            nullptr);
  const auto notices = rdmaTestNotices(withRun(json + "bw_average_raw: 95"), {});
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_THAT(notices[0], HasSubstr("unit is not shown"));
}

TEST(RdmaTestRule, SmallMessagesAndFailedRunsAreNotJudgedButSaid) {
  const std::string small = R"(device: "mlx5_0" unit: "Gb/sec" size_bytes: 4096 rows: 1 )"
                            R"(bw_average_raw: 20 bw_average_gbps: 20)";
  EXPECT_EQ(find(diagnoseNode(withRun(small), {}), "RDMA_TEST_LOW_BW"), nullptr);
  auto notices = rdmaTestNotices(withRun(small), {});
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_THAT(notices[0], HasSubstr("largest message is 4096 B"));
  // A latency run has no bandwidth to judge and nothing to say.
  EXPECT_TRUE(rdmaTestNotices(withRun("lat_typical_us: 1.9 size_bytes: 2 rows: 1"), {}).empty());
}

TEST(RdmaTestRule, ARunThatOnlyPrintedErrorsIsRdmaTestFailedWithWhatTheErrorMeans) {
  const auto findings = diagnoseNode(withRun(R"(role: "client" peer: "10.0.0.2" device: "mlx5_0" )"
                                             R"(errors: "Couldn't connect to 10.0.0.2:18515")"),
                                     {});
  const auto* f = find(findings, "RDMA_TEST_FAILED");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->summary(),
            "ib_write_bw did not run: Couldn't connect to 10.0.0.2:18515 (the server side was not "
            "listening or TCP to it is blocked)");
  EXPECT_EQ(f->evidence(1), "run: client of 10.0.0.2, device mlx5_0");
  // Not something the provider is asked about on its own.
  EXPECT_EQ(find(findings, "ESCALATE_HOST_INSPECTION"), nullptr);
  EXPECT_TRUE(
      rdmaTestNotices(withRun(R"(errors: "Couldn't connect to 10.0.0.2:18515")"), {}).empty());
}

TEST(RdmaTestRule, OnAVmTheLowRunIsEscalatedLikeAnyPhysicalLinkFinding) {
  auto s = withRun(gbits(60));
  s.mutable_node()->set_virtual_machine(true);
  const auto findings = diagnoseNode(s, {});
  const auto* e = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(e, nullptr) << describe(findings);
  bool reason = false;
  for (const auto& r : e->reasons()) reason = reason || r == "RDMA_TEST_LOW_BW";
  EXPECT_TRUE(reason) << describe(findings);
}

}  // namespace
}  // namespace ibc::core

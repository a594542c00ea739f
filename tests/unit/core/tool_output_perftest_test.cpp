// perftest output pasted as tool output (tool_output_perftest.cpp): the real captures of
// tests/fixtures/real/perftest (ground truth in their PROVENANCE.md), perftest's units and
// its --out_json file.

#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"
#include "ibc/core/tool_output.h"
#include "tool_evidence_lookup.h"

namespace ibc::core {
namespace {

using test::kindsOf;

ToolEvidence capture(const std::string& name) {
  return parseToolOutput(test::readFixture("real/perftest/" + name));
}

// The one run of a capture.
v1::RdmaTest onlyRun(const ToolEvidence& ev) {
  EXPECT_EQ(ev.rdma_tests.size(), 1u);
  return ev.rdma_tests.empty() ? v1::RdmaTest{} : ev.rdma_tests.front();
}

TEST(PerftestParser, AReportGbitsTableIsReadInGbits) {
  const auto ev = capture(
      "ib_send_bw-report-gbits_client-ib-h100-353gbps_skypilot-nebius-infiniband-readme.txt");
  EXPECT_EQ(kindsOf(ev), "perftest");
  const auto t = onlyRun(ev);
  EXPECT_EQ(t.test(), "Send BW Test");
  EXPECT_EQ(t.device(), "mlx5_0");
  EXPECT_EQ(t.link_type(), "IB");
  EXPECT_EQ(t.unit(), "Gb/sec");
  EXPECT_EQ(t.size_bytes(), 65536u);
  EXPECT_DOUBLE_EQ(t.bw_average_gbps(), 353.53);
  EXPECT_DOUBLE_EQ(t.bw_peak_gbps(), 357.12);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(PerftestParser, MegabytesPerSecondAreMebibytesAndTheBestRowOfASweepIsKept) {
  // A mail-quoted server run of `ib_send_bw -a`. Its best row is at 8192 B, but the best of the
  // rows that fill a link (64 KiB and more) is kept: 11525.82 MB/sec = 11525.82 * 2^20 * 8 bit/s.
  const auto ev =
      capture("ib_send_bw-a_server-ib-mb-per-sec-email-quoted-96gbps_qemu-devel-2024-04-09.txt");
  const auto t = onlyRun(ev);
  EXPECT_EQ(t.role(), "server");
  EXPECT_EQ(t.unit(), "MB/sec");
  EXPECT_DOUBLE_EQ(t.bw_average_raw(), 11525.82);
  EXPECT_EQ(t.size_bytes(), 262144u);
  EXPECT_NEAR(t.bw_average_gbps(), 96.69, 0.01);
  EXPECT_GT(t.rows(), 20u);
}

TEST(PerftestParser, TheCommandLineNamesToolDeviceAndTheServerOfAClient) {
  const auto ev = capture(
      "ib_read_bw-a_client-ib-mb-per-sec-no-separator-lines-excerpt-ends-at-128-bytes_ucx-issue-"
      "8852.txt");
  const auto t = onlyRun(ev);
  EXPECT_EQ(t.tool(), "ib_read_bw");
  EXPECT_EQ(t.role(), "client");
  EXPECT_EQ(t.peer(), "cn2");
  EXPECT_EQ(t.device(), "mlx5_1");
  EXPECT_EQ(t.test(), "RDMA_Read BW Test");
  EXPECT_EQ(t.rows(), 7u);
  EXPECT_EQ(t.size_bytes(), 128u);  // the excerpt ends there
}

TEST(PerftestParser, AGpuDirectRunBehindAShellPromptIsMarkedUseCuda) {
  const auto ev = capture(
      "ib_write_bw-use-cuda-report-gbits_client-roce-16qp-a40-181gbps_nvidia-tools-image-readme."
      "txt");
  const auto t = onlyRun(ev);
  EXPECT_TRUE(t.use_cuda());
  EXPECT_EQ(t.tool(), "ib_write_bw");
  EXPECT_EQ(t.peer(), "192.168.2.1");
  EXPECT_EQ(t.device(), "mlx5_1");
  EXPECT_EQ(t.link_type(), "Ethernet");
  EXPECT_DOUBLE_EQ(t.bw_average_gbps(), 181.46);
}

TEST(PerftestParser, ABidirectionalServerIsToldFromItsTitleAndBanner) {
  const auto ev = capture(
      "ib_write_bw-b-a-report-gbits_server-roce-ionic-4qp-779gbps-bidir-job-control_amd-alibaba-"
      "tests-readme.txt");
  ASSERT_FALSE(ev.rdma_tests.empty());
  const auto& t = ev.rdma_tests.back();
  EXPECT_TRUE(t.bidirectional());
  EXPECT_EQ(t.device(), "ionic_7");
  EXPECT_DOUBLE_EQ(t.bw_average_gbps(), 779.21);
  bool server = false;
  for (const auto& r : ev.rdma_tests) server = server || r.role() == "server";
  EXPECT_TRUE(server);
}

TEST(PerftestParser, ARunThatCouldNotConnectKeepsItsErrors) {
  const auto ev =
      capture("ib_write_bw_client-couldnt-connect-unable-to-init-socket-roce_perftest-pr-228.txt");
  const auto t = onlyRun(ev);
  EXPECT_EQ(t.device(), "rocep133s0f0");
  EXPECT_EQ(t.peer(), "192.168.125.211");
  ASSERT_GE(t.errors_size(), 2);
  EXPECT_EQ(t.errors(0), "Couldn't connect to 192.168.125.211:18515");
  EXPECT_EQ(t.rows(), 0u);
  // perftest's own words start a run even without a command line.
  const auto nodev = capture(
      "ib_write_bw_did-not-detect-devices-unable-to-find-device-ubuntu1804-container_k8s-rdma-"
      "shared-dev-plugin-issue-106.txt");
  EXPECT_EQ(kindsOf(nodev), "perftest");
  const auto n = onlyRun(nodev);
  ASSERT_GE(n.errors_size(), 1);
  EXPECT_EQ(n.errors(n.errors_size() - 1), "Unable to find the Infiniband/RoCE device");
}

TEST(PerftestParser, TheUnquotedJsonFileOfALatencyRunIsRead) {
  const auto ev = capture(
      "ib_write_lat-out-json_client-rxe0-unquoted-keys-jq-parse-error_perftest-issue-216.txt");
  const auto t = onlyRun(ev);
  EXPECT_EQ(t.test(), "RDMA_Write_Latency_Test");
  EXPECT_EQ(t.device(), "rxe0");
  EXPECT_EQ(t.link_type(), "Ethernet");
  EXPECT_EQ(t.size_bytes(), 128u);
  EXPECT_DOUBLE_EQ(t.lat_typical_us(), 2.42);
  EXPECT_DOUBLE_EQ(t.bw_average_raw(), 0);
}

// perftest 4.5's --out_json lines for a bandwidth run (its format strings): no unit.
constexpr char kJsonBw[] =
    "{\ntest_info: {\ntest: RDMA_Write_BW_Test,\nDevice: \"mlx5_0\",\nLink_type: IB,\n},\n"
    "results: {\nMsgSize: 65536,\nn_iterations: 5000,\nBW_peak: 96.10,\nBW_average: 95.92,\n"
    "MsgRate: 0.182951,\n},\n}\n";

TEST(PerftestParser, AJsonBandwidthTakesItsUnitFromTheCommandLineOrNone) {
  auto t = onlyRun(parseToolOutput(kJsonBw));
  EXPECT_EQ(t.unit(), "");
  EXPECT_DOUBLE_EQ(t.bw_average_raw(), 95.92);
  EXPECT_DOUBLE_EQ(t.bw_average_gbps(), 0);  // unknown: the rule decides whether it can tell
  t = onlyRun(parseToolOutput(std::string("$ ib_write_bw -d mlx5_0 --report_gbits --out_json "
                                          "node2\n") +
                              kJsonBw));
  EXPECT_EQ(t.unit(), "Gb/sec");
  EXPECT_DOUBLE_EQ(t.bw_average_gbps(), 95.92);
  t = onlyRun(parseToolOutput(std::string("$ ib_write_bw -d mlx5_0 --out_json node2\n") + kJsonBw));
  EXPECT_EQ(t.unit(), "MB/sec");
  EXPECT_NEAR(t.bw_average_gbps(), 95.92 * 1048576 * 8 / 1e9, 1e-9);
}

TEST(PerftestParser, AServerAndItsClientPastedTogetherAreTwoRuns) {
  const std::string server = test::readFixture(
      "real/perftest/"
      "ib_send_bw-a_server-ib-mb-per-sec-email-quoted-96gbps_qemu-devel-2024-04-09.txt");
  const std::string client = test::readFixture(
      "real/perftest/"
      "ib_send_bw-report-gbits_client-ib-h100-353gbps_skypilot-nebius-infiniband-readme.txt");
  const auto ev = parseToolOutput(server + client);
  ASSERT_EQ(ev.rdma_tests.size(), 2u);
  EXPECT_EQ(ev.rdma_tests[0].unit(), "MB/sec");
  EXPECT_EQ(ev.rdma_tests[1].unit(), "Gb/sec");
  EXPECT_DOUBLE_EQ(ev.rdma_tests[1].bw_average_gbps(), 353.53);
}

}  // namespace
}  // namespace ibc::core

// Finding NCCL's own lines in mangled text (nccl_log_lines.cpp): launcher tags, timestamps,
// logging prefixes, bracketed fields, old releases, wherever a line starts.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/text.h"
#include "nccl_log_fixtures.h"

namespace ibc::core {
namespace {

using namespace ibc::test;  // the NCCL log fixtures and what a summary made of them
using Kind = v1::NcclEvent::Kind;

// A real WARN line (nccl-tests issue 252, kolyoz2) behind the launcher prefixes the parser has
// to see through. The prefixes are synthetic, following Open MPI --tag-output
// ("[jobid,rank]<stdout>:"), srun --label ("N: "), pdsh ("host: ") and NCCL's
// NCCL_DEBUG_TIMESTAMP_FORMAT default "[%F %T] ".
const std::string kWarn =
    "kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer "
    "10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)";

struct PrefixCase {
  std::string name;
  std::string line;
  int rank;
};

class NcclLinePrefixes : public ::testing::TestWithParam<PrefixCase> {};

TEST_P(NcclLinePrefixes, CompletionErrorIsFoundBehindLauncherPrefixes) {
  const auto s = parseNcclLog(GetParam().line);
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::IB_COMPLETION_ERROR});
  const auto& e = s.events(0);
  EXPECT_EQ(e.host(), "kolyoz2");
  EXPECT_EQ(e.device(), 0);
  EXPECT_EQ(e.status(), 4);
  EXPECT_EQ(e.vendor_err(), 81);
  EXPECT_EQ(e.peer(), "10.0.35.1<49189>");
  EXPECT_EQ(e.opcode_or_op(), "Send");
  EXPECT_EQ(e.rank(), GetParam().rank);
  EXPECT_EQ(e.line_number(), 1u);
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"kolyoz2"});
  EXPECT_EQ(s.lines_nccl(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Prefixes, NcclLinePrefixes,
    ::testing::Values(
        PrefixCase{"Bare", kWarn, -1}, PrefixCase{"MpirunTagOutput", "[1,3]<stdout>:" + kWarn, 3},
        PrefixCase{"MpirunTagStderr", "[2,5]<stderr>: " + kWarn, 5},
        PrefixCase{"SrunLabel", "12: " + kWarn, 12}, PrefixCase{"Pdsh", "kolyoz2: " + kWarn, -1},
        PrefixCase{"PdshDoubled", "10.0.35.2: 10.0.35.2: " + kWarn, -1},
        PrefixCase{"PdshThenMpirun", "node-a: [1,7]<stdout>:" + kWarn, 7},
        PrefixCase{"NcclTimestamp", "[2026-03-13 22:26:02] " + kWarn, -1},
        PrefixCase{"WarnWithFunctionName",
                   "kolyoz2:25146:25854 [0] ib_plugin.c:1105 (ncclIbTest) NCCL WARN NET/IB : Got "
                   "completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, "
                   "vendor err 81 (Send)",
                   -1},
        PrefixCase{"TrailingCarriageReturn", kWarn + "\r\n", -1},
        // Issue 10: the line is found by its own shape behind any prefix, in any order.
        PrefixCase{"Iso8601Nanoseconds", "2024-10-23T19:30:56.633819710Z " + kWarn, -1},
        PrefixCase{"Iso8601Offset", "2025-02-18T12:54:01.123+01:00 " + kWarn, -1},
        PrefixCase{"Syslog", "Nov 25 06:11:38 kolyoz2 python[25146]: " + kWarn, -1},
        PrefixCase{"DateTimeZone", "2025-02-18 12:54:01 UTC " + kWarn, -1},
        PrefixCase{"TwoStamps", " 2025-02-18 12:54 [2026-03-13 22:26:02] " + kWarn, -1},
        PrefixCase{"StampThenMpirunTag", "2025-02-18 12:54:01 [1,3]<stdout>:" + kWarn, 3},
        PrefixCase{"StampThenSrunLabel", "2025-02-18T12:54:01Z 6: " + kWarn, 6},
        PrefixCase{"SrunLabelThenStamp", "6: 2025-02-18T12:54:01Z " + kWarn, 6},
        PrefixCase{"TorchrunDefaultTag", "[default3]:" + kWarn, 3},
        PrefixCase{"StampThenTorchrunRank", "[I1206 18:44:12.715] [rank3]:" + kWarn, 3},
        PrefixCase{"PythonLogging", "2025-02-18 12:54:01,123 - INFO - worker.py:42 - " + kWarn, -1},
        PrefixCase{"KubernetesCri", "2024-10-23T19:30:56.633819710Z stdout F " + kWarn, -1},
        PrefixCase{"RayWorker", "(RayWorkerWrapper pid=4009) " + kWarn, -1},
        PrefixCase{"MarkdownQuote", "> " + kWarn, -1},
        PrefixCase{"MarkdownFence", "```" + kWarn, -1},
        PrefixCase{"HtmlTag", "<pre><code>" + kWarn, -1},
        PrefixCase{"EditorLineNumber", "451 " + kWarn, -1},
        PrefixCase{"Indented", "        " + kWarn, -1}),
    [](const auto& p) { return p.param.name; });

TEST(NcclLogParser, DefaultHostIsUsedForLinesWithoutOne) {
  NcclLogOptions options;
  options.default_host = "node-17";
  const auto s = parseFixture(
      "nccl-log_pytorch-watchdog-timeout-reduce-scatter_llamafactory-issue-6269.txt", options);
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"node-17"});
  ASSERT_GT(s.events_size(), 0);
  EXPECT_EQ(s.events(0).host(), "node-17");
  EXPECT_EQ(s.ranks(0).host(), "node-17");
}

TEST(NcclLogRealCaptures, BracketedFieldsBeforeTheLevelNameHostPidDeviceAndCallSite) {
  const auto s = parseFixture(
      "nccl-log_bracketed-host-pid-file-line-prefix-single-rank-channels_ms-swift-issue-"
      "6676.txt");
  EXPECT_EQ(s.lines_total(), 16u);
  EXPECT_EQ(s.lines_nccl(), 16u);
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"training-pod2-1"});
  EXPECT_EQ(s.events_size(), 0);
}

// Synthetic: brackets without a host or a pid are a logger's own fields, not NCCL's prefix.
TEST(NcclLogParser, BracketedPrefixWithoutHostAndPidIsNotADebugLine) {
  const auto s = parseNcclLog(
      "[2025-02-16 22:31:34,422] [misc/socket.cc:586] NCCL WARN socketPollConnect poll() "
      "returned 1, no POLLOUT events\n"
      "[training-pod2-1][0][rings.cc:19] NCCL INFO Channel 04/32 :    0\n");
  EXPECT_EQ(s.hosts_size(), 0);
  EXPECT_EQ(countKind(s, v1::NcclEvent::CONNECT_FAILED), 0);
}

TEST(NcclLogRealCaptures, OfiRegisterMemoryEnomemBehindDoubledPdshPrefix) {
  const auto s = parseFixture("nccl-log_ofi-efa-register-memory-enomem_nccl-issue-563.txt");
  ASSERT_EQ(kindsOf(s),
            std::vector<Kind>{
                v1::NcclEvent::REG_MR_FAILED});  // the "-> 2" propagation lines are not events
  const auto& e = s.events(0);
  EXPECT_EQ(e.status(), 12);
  EXPECT_EQ(e.host(), "ip-10-0-87-143");
  EXPECT_EQ(e.device(), 5);
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"ip-10-0-87-143"});
  EXPECT_EQ(s.lines_nccl(), 6u);
}

TEST(NcclLogRealCaptures, ModifyQpTimeoutBehindNcclTimestampWithRedactedPid) {
  const auto s = parseFixture("nccl-log_roce-modify-qp-timeout-init-rtr-gid3_nccl-issue-2013.txt");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::QP_SETUP_FAILED});
  const auto& e = s.events(0);
  EXPECT_EQ(e.status(), 110);
  EXPECT_EQ(e.rdma_device(), "mlx_x:1");
  EXPECT_EQ(e.host(), "host-01.example.com");
  EXPECT_EQ(e.device(), 5);
}

TEST(NcclLogRealCaptures, MpirunTaggedCopyOfARealLogGivesTheSameSummaryPlusRanks) {
  // The real 928 capture with a synthetic Open MPI --tag-output prefix on every line.
  const std::string text = ibc::test::readFixture(
      kLogDir + "/nccl-log_ib-completion-error4-vendor81_nccl-issue-928.txt");
  std::string tagged;
  forEachLine(text, [&tagged](std::string_view line, uint32_t n) {
    tagged += "[1," + std::to_string(n % 5) + "]<stdout>:";
    tagged += line;
    tagged += '\n';
  });
  const auto plain = parseNcclLog(text);
  const auto s = parseNcclLog(tagged);
  ASSERT_EQ(s.events_size(), plain.events_size());
  EXPECT_EQ(toVector(s.hosts()), toVector(plain.hosts()));
  EXPECT_EQ(s.events(0).rank(), 1);  // line 1 → "[1,1]"
  EXPECT_EQ(s.events(1).rank(), 1);  // line 6 → "[1,1]"
  EXPECT_EQ(s.events(2).status(), 4);
}

TEST(NcclOldReleases, Nccl22LevelWithoutPrefixIsRecognised) {
  const auto s = parseNcclLog(
      "node1:1234:1234 [0] INFO NET : Using interface eth0:10.0.0.1<0>\n"
      "node1:1234:1250 [0] include/socket.h:360 WARN Connect to 10.0.0.2<40123> failed : "
      "Connection refused\n");
  EXPECT_EQ(s.lines_nccl(), 2u);
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::CONNECT_FAILED});
  EXPECT_EQ(s.events(0).host(), "node1");
}

TEST(NcclNothingRecognised, TextWithoutNcclLinesCountsNone) {
  const auto s = parseNcclLog("Traceback (most recent call last):\n  File \"x.py\", line 1\n");
  EXPECT_EQ(s.lines_total(), 2u);
  EXPECT_EQ(s.lines_nccl(), 0u);
  EXPECT_EQ(s.events_size(), 0);
  EXPECT_TRUE(s.hosts().empty());
}

TEST(NcclLogParser, LongLineFullOfBracketsIsReadOnce) {
  // Synthetic worst case for the shape search: an 8 MiB line of "[N] INFO" candidates that
  // never form a debug line, then 100k ISO-stamped lines. Only a bounded number of candidates
  // per line is tried, so this stays linear (a few hundred ms under the sanitizers).
  std::string text;
  text.reserve(16u << 20);
  while (text.size() < (8u << 20)) text += "x [0] INFO ";
  text += "\n";
  for (int i = 0; i < 100000; ++i) {
    text += "2024-10-23T19:30:56.633819710Z n1:12:13 [0] NCCL INFO Using network Socket\n";
  }
  const auto s = parseNcclLog(text);
  EXPECT_EQ(s.lines_total(), 100001u);
  EXPECT_EQ(s.lines_nccl(), 100000u);
  EXPECT_EQ(s.network(), "Socket");
}

}  // namespace
}  // namespace ibc::core

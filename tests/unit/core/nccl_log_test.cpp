// The NCCL log summary (nccl_log.cpp): bounds on events and lines, empty, truncated, garbage
// and huge input, every real capture counted and named, merging per-rank logs, and how a
// rank's progress is printed.

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

TEST(NcclLogParser, EventsAreBoundedAndTheFirstOnesKept) {
  std::string text;
  for (int i = 0; i < 10; ++i) {
    text += "h:1:" + std::to_string(i) +
            " [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error\n";
  }
  NcclLogOptions options;
  options.max_events = 3;
  const auto s = parseNcclLog(text, options);
  EXPECT_TRUE(s.events_truncated());
  ASSERT_EQ(s.events_size(), 3);
  EXPECT_EQ(s.events(0).line_number(), 1u);
  EXPECT_EQ(s.events(2).line_number(), 3u);
}

TEST(NcclLogParser, EmptyInputGivesAnEmptySummary) {
  const auto s = parseNcclLog("");
  EXPECT_EQ(s.lines_total(), 0u);
  EXPECT_EQ(s.lines_nccl(), 0u);
  EXPECT_EQ(s.nranks(), -1);
  EXPECT_EQ(s.events_size(), 0);
  EXPECT_EQ(s.hosts_size(), 0);
  EXPECT_EQ(s.nccl_version(), "");
}

TEST(NcclLogParser, TruncatedLinesKeepWhatTheyShow) {
  // A WARN cut before its numbers, a channel line cut before "via", a prefix cut short.
  const auto s = parseNcclLog(
      "kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer "
      "10.0.35.1<49189> with err\n"
      "nid03084:31364:31364 [0] NCCL INFO Channel 00/0 : 2[2000] -> 3[2000] [rece\n"
      "nid03084:31364:3\n");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::IB_COMPLETION_ERROR});
  EXPECT_EQ(s.events(0).status(), -1);
  EXPECT_EQ(s.events(0).vendor_err(), -1);
  EXPECT_EQ(s.events(0).peer(), "10.0.35.1<49189>");
  EXPECT_EQ(s.transports_size(), 0);
  EXPECT_EQ(s.lines_total(), 3u);
}

TEST(NcclLogParser, GarbageBytesGiveNoFindings) {
  std::mt19937 rng(7);
  std::string text(1 << 16, '\0');
  for (char& c : text) c = static_cast<char>(rng() & 0xff);
  const auto s = parseNcclLog(text);
  uint64_t lines = 0;
  forEachLine(text, [&lines](std::string_view, uint32_t) { ++lines; });
  EXPECT_EQ(s.lines_total(), lines);
  EXPECT_EQ(s.transports_size(), 0);
  EXPECT_EQ(s.nranks(), -1);
  EXPECT_EQ(s.nccl_version(), "");
  for (const auto& e : s.events()) {
    for (char c : e.text()) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\t');
  }
}

TEST(NcclLogParser, HugeLogKeepsTheFirstEventsAndCountsEveryLine) {
  // 50 MB of the real lit-llama async port error capture, repeated.
  const std::string one = ibc::test::readFixture(
      kLogDir + "/nccl-log_ib-async-port-error-repeated_lit-llama-issue-380.txt");
  ASSERT_FALSE(one.empty());
  const std::size_t reps = (50u << 20) / one.size() + 1;
  std::string huge;
  huge.reserve(reps * one.size());
  for (std::size_t i = 0; i < reps; ++i) huge += one;
  const auto s = parseNcclLog(huge);
  EXPECT_EQ(s.lines_total(), 18u * reps);
  EXPECT_EQ(s.lines_nccl(), 8u * reps);
  EXPECT_TRUE(s.events_truncated());
  ASSERT_EQ(s.events_size(), 512);
  EXPECT_EQ(s.events(0).line_number(), 4u);
  EXPECT_EQ(s.events(0).kind(), v1::NcclEvent::IB_ASYNC_EVENT);
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"...-48"});
}

TEST(NcclLogParser, MergingPerRankFilesUnionsTheirFacts) {
  const auto a = parseFixture("nccl-log_ib-no-device-socket-admin0-1rank_vissl-issue-480.txt");
  const auto b = parseFixture("nccl-log_ib-disabled-socket-over-ipoib_nccl-tests-issue-188.txt");
  const auto c = parseFixture("nccl-log_socket-4node-rings_nccl-issue-1344.txt");
  const std::vector<v1::NcclLogSummary> parts = {a, b, c};
  const auto m = mergeNcclLogs(parts);
  EXPECT_EQ(toVector(m.hosts()), (std::vector<std::string>{"r29n2", "user", "nid03084"}));
  EXPECT_EQ(m.nccl_version(), "2.7.8+cuda10.2");
  EXPECT_EQ(m.network(), "Socket");
  EXPECT_EQ(m.socket_interfaces_size(), 3);
  EXPECT_EQ(m.lines_total(), a.lines_total() + b.lines_total() + c.lines_total());
  EXPECT_EQ(m.events_size(), a.events_size() + b.events_size() + c.events_size());
  EXPECT_EQ(m.events(0).kind(), v1::NcclEvent::IB_NO_DEVICE);
  EXPECT_EQ(m.nranks(), 4);
  ASSERT_NE(transport(m, "NET/Socket"), nullptr);
  EXPECT_EQ(transport(m, "NET/Socket")->channel_lines(), 4u);
  EXPECT_EQ(toVector(m.env_settings()), std::vector<std::string>{"NCCL_IB_DISABLE=1"});

  const auto bounded = mergeNcclLogs(parts, 1);
  EXPECT_EQ(bounded.events_size(), 1);
  EXPECT_TRUE(bounded.events_truncated());
  EXPECT_EQ(mergeNcclLogs({}).nranks(), -1);
}

TEST(NcclLogParser, MergeKeepsTheFurthestSequencePerRank) {
  v1::NcclLogSummary a;
  auto* r = a.add_ranks();
  r->set_host("h");
  r->set_rank(0);
  r->set_op_count(5);
  v1::NcclLogSummary b = a;
  b.mutable_ranks(0)->set_op_count(9);
  auto* r1 = b.add_ranks();
  r1->set_host("g");
  r1->set_rank(1);
  r1->set_op_count(3);
  const std::vector<v1::NcclLogSummary> parts = {a, b};
  const auto m = mergeNcclLogs(parts);
  ASSERT_EQ(m.ranks_size(), 2);
  EXPECT_EQ(m.ranks(0).op_count(), 9u);
  EXPECT_EQ(m.ranks(1).rank(), 1);
}

TEST(NcclLogParser, MergeKeepsAnOpCountAndASeqNumOfOneRankApart) {
  v1::NcclLogSummary a, b;
  auto* r = a.add_ranks();
  r->set_host("h");
  r->set_rank(0);
  r->set_op_count(0x2a);
  r->set_sequence(v1::NcclRankProgress::NCCL_OP_COUNT);
  auto* t = b.add_ranks();
  t->set_host("h");
  t->set_rank(0);
  t->set_op_count(7753);
  t->set_sequence(v1::NcclRankProgress::TORCH_SEQ_NUM);
  const std::vector<v1::NcclLogSummary> parts = {a, b};
  const auto m = mergeNcclLogs(parts);
  ASSERT_EQ(m.ranks_size(), 2);
  EXPECT_EQ(m.ranks(0).op_count(), 0x2au);
  EXPECT_EQ(m.ranks(1).op_count(), 7753u);
}

TEST(NcclLogRealCaptures, EveryCaptureIsCountedAndNamed) {
  const auto files = ibc::test::fixtureFiles(kLogDir, ".txt");
  ASSERT_EQ(files.size(), 71u);
  for (const auto& f : files) {
    const std::string text = ibc::test::readFixture(f);
    const auto s = parseNcclLog(text);
    uint64_t lines = 0;
    forEachLine(text, [&lines](std::string_view, uint32_t) { ++lines; });
    EXPECT_EQ(s.lines_total(), lines) << f;
    EXPECT_GT(s.lines_nccl(), 0u) << f;
    // Healthy init excerpts yield only the hosts (and ranks) their lines name.
    EXPECT_TRUE(s.events_size() > 0 || s.transports_size() > 0 || !s.network().empty() ||
                s.env_settings_size() > 0 || s.hosts_size() > 0 || s.ranks_size() > 0)
        << f << " yielded nothing";
    for (const auto& e : s.events()) {
      EXPECT_NE(e.kind(), v1::NcclEvent::KIND_UNSPECIFIED) << f;
      EXPECT_GT(e.line_number(), 0u) << f;
      EXPECT_FALSE(e.text().empty()) << f;
    }
  }
}

TEST(RankProgress, IsPrintedAsItsSourcePrintsIt) {
  EXPECT_EQ(formatRankProgress(v1::NcclRankProgress::NCCL_OP_COUNT, 39), "opCount 27");
  EXPECT_EQ(formatRankProgress(v1::NcclRankProgress::NCCL_OP_COUNT, 42), "opCount 2a");
  EXPECT_EQ(formatRankProgress(v1::NcclRankProgress::SEQUENCE_UNSPECIFIED, 255), "opCount ff");
  EXPECT_EQ(formatRankProgress(v1::NcclRankProgress::TORCH_SEQ_NUM, 7753), "SeqNum 7753");
}

}  // namespace
}  // namespace ibc::core

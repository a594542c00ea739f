// NCCL log and nccl-tests rules (rules_nccl.cpp) on SYNTHETIC snapshots (rule_snapshots.h).

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "ibc/core/nccl_log.h"
#include "ibc/core/rules.h"
#include "rule_snapshots.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

using namespace ibc::test;  // the rule snapshots and what the rules made of them

TEST(Rules, NcclGdrDisabledIsAWarning) {
  const auto s = snapshot(R"pb(
    nccl_logs {
      source: "rank0.log"
      parsed {
        hosts: "node1"
        events {
          kind: GDR_DISABLED
          host: "node1"
          rank: 0
          text: "NCCL INFO GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
        }
      }
    }
  )pb");
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "NCCL_GDR_DISABLED");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  ASSERT_GT(f->evidence_size(), 0);
  EXPECT_THAT(f->evidence(0), HasSubstr("GPU Direct RDMA Disabled"));
}

TEST(Rules, NcclTestWrongResultsIsCriticalAndNamesTheRow) {
  const auto findings = diagnoseNode(snapshot(twoNodeRun("24.5", "3")), {});
  const auto* f = find(findings, "NCCL_TEST_WRONG_RESULTS");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "critical");
  ASSERT_GT(f->evidence_size(), 0);
  EXPECT_THAT(f->evidence(0), HasSubstr("8589934592"));
  EXPECT_EQ(find(diagnoseNode(snapshot(twoNodeRun("24.5", "0")), {}), "NCCL_TEST_WRONG_RESULTS"),
            nullptr);
}

TEST(Rules, NcclTestLowBusbwIsJudgedAgainstTheNodesActivePorts) {
  // One 200 Gb/s port carries at most 25 GB/s: 10 GB/s is under half, 24.5 is not.
  auto findings = diagnoseNode(snapshot(twoNodeRun("10.0", "0")), {});
  const auto* f = find(findings, "NCCL_TEST_LOW_BUSBW");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(find(diagnoseNode(snapshot(twoNodeRun("24.5", "0")), {}), "NCCL_TEST_LOW_BUSBW"),
            nullptr);
  // A single-node run says nothing about the network.
  auto single = snapshot(twoNodeRun("10.0", "0"));
  single.mutable_nccl_tests(0)->mutable_parsed()->mutable_hosts()->RemoveLast();
  EXPECT_EQ(find(diagnoseNode(single, {}), "NCCL_TEST_LOW_BUSBW"), nullptr);
  // The budget and the fraction are in the finding, and in the report for every run.
  bool budget = false;
  for (const auto& e : f->evidence()) budget = budget || e.find("link budget 25 GB/s") == 0;
  EXPECT_TRUE(budget) << describe(findings);
  EXPECT_THAT(f->summary(), HasSubstr("40%"));
  const auto b = busbwAgainstLinks(snapshot(twoNodeRun("10.0", "0")),
                                   snapshot(twoNodeRun("10.0", "0")).nccl_tests(0));
  EXPECT_DOUBLE_EQ(b.link_budget_gbs(), 25.0);
  EXPECT_DOUBLE_EQ(b.fraction(), 0.4);
  EXPECT_EQ(b.active_ports(), 1u);
  EXPECT_EQ(b.peak_size_bytes(), 8589934592u);
  // --expect-busbw overrides the links: 24.5 GB/s is low against 40, 10 is fine against 8.
  RuleOptions o;
  o.expect_busbw_gbs = 40;
  const auto expected = diagnoseNode(snapshot(twoNodeRun("24.5", "0")), o);
  f = find(expected, "NCCL_TEST_LOW_BUSBW");
  ASSERT_NE(f, nullptr) << describe(expected);
  EXPECT_THAT(f->summary(), HasSubstr("--expect-busbw"));
  o.expect_busbw_gbs = 8;
  EXPECT_EQ(find(diagnoseNode(snapshot(twoNodeRun("10.0", "0")), o), "NCCL_TEST_LOW_BUSBW"),
            nullptr);
}

TEST(Rules, NcclTestLowBusbwAgainstAnotherRunOfTheSameHosts) {
  // Two runs of one test on the same two hosts, no port evidence: 5 GB/s beside 122 GB/s is
  // low; the 122 GB/s run is not.
  auto s = snapshot(twoNodeRun("122.0", "0"));
  s.clear_devices();
  auto* slow = s.add_nccl_tests();
  *slow = s.nccl_tests(0);
  slow->set_source("slow.out");
  slow->mutable_parsed()->mutable_rows(1)->set_oop_busbw_gbs(5.0);
  slow->mutable_parsed()->mutable_rows(1)->set_ip_busbw_gbs(5.0);
  const auto findings = diagnoseNode(s, {});
  int low = 0;
  for (const auto& f : findings) {
    if (f.code() != "NCCL_TEST_LOW_BUSBW") continue;
    ++low;
    EXPECT_THAT(f.summary(), HasSubstr("of the 122 GB/s another run on the same hosts reached"));
    EXPECT_THAT(f.evidence(f.evidence_size() - 1), HasSubstr("slow.out"));
  }
  EXPECT_EQ(low, 1) << describe(findings);
  // Other hosts are another fabric path: no comparison.
  slow->mutable_parsed()->set_hosts(1, "node9");
  EXPECT_EQ(find(diagnoseNode(s, {}), "NCCL_TEST_LOW_BUSBW"), nullptr);
}

TEST(RankProgress, TheSingleNodeRuleQuotesOpCountsInHexToo) {
  // SYNTHETIC NCCL_DEBUG_SUBSYS=COLL lines (enqueue.cc format) in one rank-merged log:
  // rank 1 is at opCount 27, rank 0 at 2a.
  v1::Snapshot s;
  s.mutable_node()->set_slurm_node("hostA");
  *s.add_nccl_logs()->mutable_parsed() = parseNcclLog(
      "hostA:100:100 [0] NCCL INFO ncclCommInitRank comm 0x55d0c0 rank 0 nranks 2 cudaDev 0 "
      "nvmlDev 0 busId 1b000 commId 0x8a412f - Init COMPLETE\n"
      "hostA:101:101 [1] NCCL INFO ncclCommInitRank comm 0x55d1c0 rank 1 nranks 2 cudaDev 1 "
      "nvmlDev 1 busId 2b000 commId 0x8a412f - Init COMPLETE\n"
      "hostA:100:100 [0] NCCL INFO AllReduce: opCount 2a sendbuff 0x7f0000 recvbuff 0x7f0000 "
      "count 1048576 datatype 7 op 0 root 0 comm 0x55d0c0 [nranks=2] stream 0x5600\n"
      "hostA:101:101 [1] NCCL INFO AllReduce: opCount 27 sendbuff 0x7f1000 recvbuff 0x7f1000 "
      "count 1048576 datatype 7 op 0 root 0 comm 0x55d1c0 [nranks=2] stream 0x5700\n");
  const auto all = diagnoseNode(s, {});
  const v1::Finding* lagging = nullptr;
  for (const auto& f : all) {
    if (f.code() == "NCCL_RANK_LAGGING") lagging = &f;
  }
  ASSERT_NE(lagging, nullptr);
  ASSERT_EQ(lagging->evidence_size(), 2);
  EXPECT_EQ(lagging->evidence(0), "opCount 27: hostA rank 1");
  EXPECT_EQ(lagging->evidence(1), "opCount 2a: hostA rank 0");
}

}  // namespace
}  // namespace ibc::core

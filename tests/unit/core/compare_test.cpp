// Cross-node pieces of core/compare.h and what they print. Synthetic snapshots: only the
// fields these functions read.

#include "ibc/core/compare.h"

#include <gtest/gtest.h>

#include "ibc/core/nccl_log.h"
#include "ibc/core/rules.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

TEST(RankProgress, IsPrintedAsItsSourcePrintsIt) {
  EXPECT_EQ(formatRankProgress(v1::NcclRankProgress::NCCL_OP_COUNT, 39), "opCount 27");
  EXPECT_EQ(formatRankProgress(v1::NcclRankProgress::NCCL_OP_COUNT, 42), "opCount 2a");
  EXPECT_EQ(formatRankProgress(v1::NcclRankProgress::SEQUENCE_UNSPECIFIED, 255), "opCount ff");
  EXPECT_EQ(formatRankProgress(v1::NcclRankProgress::TORCH_SEQ_NUM, 7753), "SeqNum 7753");
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

// The launcher's aggregation (core/compare.h): host names → job nodes, findings handed to
// their nodes, findings several snapshots repeat word for word, rank progress as NCCL
// prints it. Synthetic snapshots: only the fields these functions read.

#include "ibc/core/compare.h"

#include <gtest/gtest.h>

#include "ibc/core/findings.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/rules.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

AnalyzedNode node(const std::string& slurm, const std::string& hostname) {
  AnalyzedNode n;
  n.snapshot.mutable_node()->set_slurm_node(slurm);
  n.snapshot.mutable_node()->set_hostname(hostname);
  n.snapshot.mutable_node()->set_source("/");  // sysfs was read: no devices is a finding
  return n;
}

v1::Finding finding(const std::string& code, const std::string& node) {
  v1::Finding f;
  f.set_code(code);
  f.set_severity("warning");
  f.set_node(node);
  f.set_summary(code + " on " + node);
  return f;
}

TEST(JobNodeIndex, FindsANodeBySlurmNameHostnameOrShortForm) {
  const std::vector<AnalyzedNode> nodes{node("node1", "gpu-a1.cluster.local"), node("node2", ""),
                                        node("", "10.0.0.3")};
  const JobNodeIndex index(nodes);
  EXPECT_EQ(index.find("node1"), 0u);
  EXPECT_EQ(index.find("gpu-a1.cluster.local"), 0u);
  EXPECT_EQ(index.find("gpu-a1"), 0u);  // NCCL prints the short hostname
  EXPECT_EQ(index.find("node2.cluster.local"), 1u);
  EXPECT_EQ(index.find("10.0.0.3"), 2u);
  EXPECT_EQ(index.find("10.0.0.4"), std::nullopt);  // another address, not node 2
  EXPECT_EQ(index.find("node3"), std::nullopt);
  EXPECT_EQ(index.find(""), std::nullopt);
}

TEST(JobNodeIndex, AnExactNameWinsOverAnotherNodesShortForm) {
  const std::vector<AnalyzedNode> nodes{node("", "node7.a.example"), node("node7", "")};
  const JobNodeIndex index(nodes);
  EXPECT_EQ(index.find("node7"), 1u);
  EXPECT_EQ(index.find("node7.a.example"), 0u);
  EXPECT_EQ(index.find("node7.b.example"), 0u);  // short form: the first node with it
}

TEST(AssignFindings, EveryFindingOfAThousandNodesReachesItsNodeUnderItsJobName) {
  std::vector<AnalyzedNode> nodes;
  for (int i = 0; i < 1000; ++i)
    nodes.push_back(node("node" + std::to_string(i), "node" + std::to_string(i) + ".cl"));
  std::vector<v1::Finding> findings;
  for (int i = 999; i >= 0; --i) {
    findings.push_back(finding("PHY_ERRORS", "node" + std::to_string(i)));
    findings.push_back(finding("NCCL_IB_COMPLETION_ERROR", "node" + std::to_string(i) + ".cl"));
  }
  findings.push_back(finding("NCCL_CONNECT_FAILED", "login1"));  // not a job node
  assignFindings(nodes, std::move(findings));
  for (int i = 0; i < 1000; ++i) {
    const auto& fs = nodes[static_cast<std::size_t>(i)].findings;
    ASSERT_EQ(fs.size(), i == 0 ? 3u : 2u) << "node" << i;
    for (const auto& f : fs) {
      if (f.code() == "NCCL_CONNECT_FAILED") {
        EXPECT_EQ(f.node(), "login1");  // kept, under the name the log used
      } else {
        EXPECT_EQ(f.node(), "node" + std::to_string(i));
      }
    }
  }
}

TEST(DiagnoseJobNodes, OnlyAnsweringNodesAreDiagnosedAndFindingsAreSortedPerNode) {
  std::vector<AnalyzedNode> nodes{node("node1", ""), node("node2", "")};
  nodes[1].unreachable_reason = "no answer";
  diagnoseJobNodes(nodes, {});
  bool no_devices = false;
  for (const auto& f : nodes[0].findings) no_devices = no_devices || f.code() == "NO_RDMA_DEVICES";
  EXPECT_TRUE(no_devices);
  auto sorted = nodes[0].findings;
  sortFindings(sorted);
  ASSERT_EQ(sorted.size(), nodes[0].findings.size());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    EXPECT_EQ(sorted[i].code(), nodes[0].findings[i].code()) << i;
  EXPECT_TRUE(nodes[1].findings.empty());
}

v1::Snapshot withSharedLog(const std::string& name, const std::string& log_text) {
  v1::Snapshot s;
  s.mutable_node()->set_slurm_node(name);
  s.mutable_node()->set_source("/");
  auto* log = s.add_nccl_logs();
  log->set_source("/shared/nccl/rank0.log");
  *log->mutable_parsed() = parseNcclLog(log_text);
  return s;
}

TEST(DiagnoseJob, AFindingEveryNodeRepeatsFromTheSameLogIsReportedOnce) {
  // One rank's log (NCCL's completion-error line, as in the real captures) carried by
  // three nodes, as a shared --nccl-log glob without %h made every node read it.
  const std::string text =
      "node1:4242:4300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from "
      "peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n";
  const auto a = withSharedLog("node1", text), b = withSharedLog("node2", text),
             c = withSharedLog("node3", text);
  const auto all = diagnoseJob({&a, &b, &c}, {});
  int completion = 0;
  for (const auto& f : all) {
    if (f.code() == "NCCL_IB_COMPLETION_ERROR") {
      ++completion;
      EXPECT_EQ(f.node(), "node1");
    }
  }
  EXPECT_EQ(completion, 1);
  // Each node's own findings (no devices) stay: they name different nodes.
  int no_devices = 0;
  for (const auto& f : all) no_devices += f.code() == "NO_RDMA_DEVICES" ? 1 : 0;
  EXPECT_EQ(no_devices, 3);
}

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

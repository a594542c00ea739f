// Comparison across nodes (compare.cpp): which node of a job is which (JobNodeIndex) and
// who stands out from its peers.

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "ibc/core/compare.h"
#include "ibc/core/job_verdict.h"
#include "rule_snapshots.h"

namespace ibc::core {
namespace {

using namespace ibc::test;  // the rule snapshots and what the rules made of them

namespace v1 = ::ibcollect::v1;

TEST(JobNodeIndex, FindsANodeBySlurmNameHostnameOrShortForm) {
  const std::vector<AnalyzedNode> nodes{jobNode("node1", "gpu-a1.cluster.local"),
                                        jobNode("node2", ""), jobNode("", "10.0.0.3")};
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
  const std::vector<AnalyzedNode> nodes{jobNode("", "node7.a.example"), jobNode("node7", "")};
  const JobNodeIndex index(nodes);
  EXPECT_EQ(index.find("node7"), 1u);
  EXPECT_EQ(index.find("node7.a.example"), 0u);
  EXPECT_EQ(index.find("node7.b.example"), 0u);  // short form: the first node with it
}

TEST(Rules, NodeOutlierNamesTheNodeWhoseBusbwTrailsItsPeers) {
  std::vector<v1::Snapshot> nodes;
  for (const auto& [host, peak] : {std::pair{"node1", "24.5"}, std::pair{"node2", "24.1"},
                                   std::pair{"node3", "11.0"}, std::pair{"node4", "24.3"}}) {
    auto s = snapshot(twoNodeRun(peak, "0"));
    s.mutable_node()->set_hostname(host);
    nodes.push_back(std::move(s));
  }
  std::vector<const v1::Snapshot*> views;
  for (const auto& n : nodes) views.push_back(&n);
  const auto findings = compareNodes(views, {});
  std::vector<std::string> outliers;
  for (const auto& f : findings) {
    if (f.code() == "NODE_OUTLIER" && f.summary().find("busbw") == std::string::npos &&
        f.summary().find("bus bandwidth") != std::string::npos) {
      outliers.push_back(f.node());
      EXPECT_EQ(f.severity(), "warning");
    }
  }
  EXPECT_EQ(outliers, std::vector<std::string>{"node3"}) << describe(findings);
}

}  // namespace
}  // namespace ibc::core

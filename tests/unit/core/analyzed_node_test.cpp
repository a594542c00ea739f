// One input of a report (analyzed_node.cpp): where its evidence came from, and labels that
// tell inputs naming the same node apart (by file, else collection time, else order).

#include "ibc/core/analyzed_node.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ibc::core {
namespace {

AnalyzedNode named(const std::string& host, const std::string& file = "",
                   int64_t collected_at_unix_ms = 0) {
  AnalyzedNode n;
  n.snapshot.mutable_node()->set_hostname(host);
  n.snapshot.mutable_node()->set_source("/");
  n.snapshot.mutable_node()->set_collected_at_unix_ms(collected_at_unix_ms);
  n.snapshot_file = file;
  return n;
}

TEST(NodeSource, IsTheSnapshotFileElseTheInputElseTheSnapshotsOwnSource) {
  AnalyzedNode n = named("node1", "/tmp/node1.ibsnap");
  n.input = "nccl.log";
  EXPECT_EQ(nodeSource(n), "/tmp/node1.ibsnap");
  n.snapshot_file.clear();
  EXPECT_EQ(nodeSource(n), "nccl.log");
  n.input.clear();
  EXPECT_EQ(nodeSource(n), "/");
}

TEST(LabelNodes, DistinctNamesAreTheirOwnLabelsAndNeedNoNotice) {
  std::vector<AnalyzedNode> nodes{named("node1"), named("node2")};
  EXPECT_TRUE(labelNodes(nodes).empty());
  EXPECT_EQ(nodes[0].label, "node1");
  EXPECT_EQ(nodes[1].label, "node2");
}

TEST(LabelNodes, TwoFilesOfOneNodeAreToldApartByTheirFileNames) {
  std::vector<AnalyzedNode> nodes{named("node1", "/a/before.ibsnap"),
                                  named("node1", "/b/after.ibsnap"), named("node2")};
  const auto notices = labelNodes(nodes);
  EXPECT_EQ(nodes[0].label, "node1 (before.ibsnap)");
  EXPECT_EQ(nodes[1].label, "node1 (after.ibsnap)");
  EXPECT_EQ(nodes[2].label, "node2");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0],
            "2 inputs name the same node 'node1'; they are reported separately, told apart by "
            "file name");
}

TEST(LabelNodes, SameFileNamesFallBackToTheCollectionTimeThenToTheOrder) {
  std::vector<AnalyzedNode> by_time{named("node1", "/a/n.ibsnap", 1700000000000),
                                    named("node1", "/b/n.ibsnap", 1700000060000)};
  const auto time_notices = labelNodes(by_time);
  EXPECT_EQ(by_time[0].label, "node1 (2023-11-14 22:13:20Z)");
  EXPECT_EQ(by_time[1].label, "node1 (2023-11-14 22:14:20Z)");
  ASSERT_EQ(time_notices.size(), 1u);
  EXPECT_NE(time_notices[0].find("told apart by collection time"), std::string::npos);

  std::vector<AnalyzedNode> by_order{named("node1"), named("node1")};
  const auto order_notices = labelNodes(by_order);
  EXPECT_EQ(by_order[0].label, "node1 (#1)");
  EXPECT_EQ(by_order[1].label, "node1 (#2)");
  ASSERT_EQ(order_notices.size(), 1u);
  EXPECT_NE(order_notices[0].find("told apart by input order"), std::string::npos);
}

TEST(LabelNodes, LabellingTwiceGivesTheSameLabels) {
  std::vector<AnalyzedNode> nodes{named("node1", "/a/x.ibsnap"), named("node1", "/b/y.ibsnap")};
  const auto first = labelNodes(nodes);
  const std::vector<std::string> labels{nodes[0].label, nodes[1].label};
  EXPECT_EQ(labelNodes(nodes), first);
  EXPECT_EQ(nodes[0].label, labels[0]);
  EXPECT_EQ(nodes[1].label, labels[1]);
}

}  // namespace
}  // namespace ibc::core

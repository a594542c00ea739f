// A finding on (nearly) every node of a job is one job-wide finding (DESIGN §11,
// core/report.h): one entry in text and JSON, after the nodes' own findings of its severity,
// naming the nodes it does not hold on. Findings here are built in the test (synthetic).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ibc/core/findings.h"
#include "ibc/core/report.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

std::string name(int i) { return "node" + std::to_string(i); }

v1::Finding socketsOnly(const std::string& node) {
  return makeFinding({FindingCode::NcclIbUnavailable,
                      Severity::Warning,
                      node,
                      "",
                      0,
                      "NCCL did not use InfiniBand on " + node + ": it fell back to sockets",
                      {"NET/Socket : Using [0]eth0"},
                      "Check that the RDMA devices are visible in the container."});
}

v1::Finding slowPort(const std::string& node, const std::string& device) {
  return makeFinding({FindingCode::LinkRateBelowExpected,
                      Severity::Warning,
                      node,
                      device,
                      1,
                      device + " port 1 runs at 100 Gb/s, below the expected 200 Gb/s",
                      {"rate 100"},
                      "Reseat or replace the cable."});
}

AnalyzedNode node(const std::string& host, std::vector<v1::Finding> findings) {
  AnalyzedNode n;
  n.snapshot.mutable_node()->set_hostname(host);
  n.snapshot.mutable_node()->set_slurm_node(host);
  n.findings = std::move(findings);
  return n;
}

// `nodes` nodes, every one with the fallback except those in `without`, and a slow port on
// the nodes in `slow`.
std::vector<AnalyzedNode> job(int nodes, std::vector<int> without, std::vector<int> slow) {
  std::vector<AnalyzedNode> out;
  for (int i = 1; i <= nodes; ++i) {
    std::vector<v1::Finding> fs;
    if (std::find(without.begin(), without.end(), i) == without.end())
      fs.push_back(socketsOnly(name(i)));
    if (std::find(slow.begin(), slow.end(), i) != slow.end())
      fs.push_back(slowPort(name(i), "mlx5_3"));
    out.push_back(node(name(i), std::move(fs)));
  }
  return out;
}

std::vector<const v1::Finding*> withCode(const v1::Report& r, const std::string& code) {
  std::vector<const v1::Finding*> out;
  for (const auto& f : r.findings()) {
    if (f.code() == code) out.push_back(&f);
  }
  return out;
}

TEST(JobWide, AFindingOnEveryNodeIsOneEntryAfterTheNodesOwnOfItsSeverity) {
  const v1::Report r = buildReport(job(40, {}, {7, 33}));
  const auto fallback = withCode(r, "NCCL_IB_UNAVAILABLE");
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(fallback[0]->scope(), "job");
  EXPECT_EQ(fallback[0]->nodes_count(), 40u);
  EXPECT_EQ(fallback[0]->except_size(), 0);
  EXPECT_EQ(fallback[0]->node(), "");
  EXPECT_EQ(fallback[0]->source(), "");
  // The nodes' own faults come first: they are what differs between nodes.
  ASSERT_EQ(r.findings_size(), 3);
  EXPECT_EQ(r.findings(0).node() + " " + r.findings(1).node(), "node33 node7");
  EXPECT_EQ(r.findings(0).scope(), "node");
  EXPECT_EQ(&r.findings(2), fallback[0]);
  EXPECT_EQ(fallback[0]->summary(),
            "NCCL did not use InfiniBand on each node: it fell back to sockets");
  // Its evidence says which node's it is.
  ASSERT_EQ(fallback[0]->evidence_size(), 2);
  EXPECT_EQ(fallback[0]->evidence(0), "on node1 (one of 40 nodes):");
  EXPECT_EQ(fallback[0]->evidence(1), "NET/Socket : Using [0]eth0");
  // A node's own verdict still counts it.
  EXPECT_EQ(r.nodes(0).warning(), 1u);
  EXPECT_EQ(r.nodes(0).worst_severity(), "warning");

  const std::string text = renderText(r, {});
  EXPECT_THAT(text, HasSubstr("WARNING  NCCL_IB_UNAVAILABLE  job-wide: all 40 nodes\n"));
  EXPECT_LT(text.find("LINK_RATE_BELOW_EXPECTED"), text.find("NCCL_IB_UNAVAILABLE  job-wide"));
  const auto json = renderJson(r);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"scope\": \"job\""));
  EXPECT_THAT(*json, HasSubstr("\"nodes_count\": 40"));
}

TEST(JobWide, TheNodesItDoesNotHoldOnAreNamed) {
  const v1::Report r = buildReport(job(20, {17}, {}));
  const auto fallback = withCode(r, "NCCL_IB_UNAVAILABLE");
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(fallback[0]->nodes_count(), 19u);
  ASSERT_EQ(fallback[0]->except_size(), 1);
  EXPECT_EQ(fallback[0]->except(0), "node17");
  EXPECT_THAT(renderText(r, {}),
              HasSubstr("NCCL_IB_UNAVAILABLE  job-wide: all but node17 (19 of 20 nodes)\n"));
}

TEST(JobWide, FewerThanNinetyPercentOrThreeNodesStayTheNodesOwn) {
  // 17 of 20 (85 %): the nodes' own, one per node.
  EXPECT_EQ(withCode(buildReport(job(20, {3, 9, 11}, {})), "NCCL_IB_UNAVAILABLE").size(), 17u);
  // Both nodes of a two-node job: two nodes are not a job's configuration.
  const v1::Report two = buildReport(job(2, {}, {}));
  ASSERT_EQ(two.findings_size(), 2);
  EXPECT_EQ(two.findings(0).scope(), "node");
  // 2 of 3: not nearly every node.
  EXPECT_EQ(withCode(buildReport(job(3, {2}, {})), "NCCL_IB_UNAVAILABLE").size(), 2u);
  // 3 of 3 is.
  EXPECT_EQ(withCode(buildReport(job(3, {}, {})), "NCCL_IB_UNAVAILABLE").size(), 1u);
}

TEST(JobWide, NodesAreCountedNotPlaces) {
  // Eight slow ports on each of 4 of 10 nodes (32 places): 4 nodes, not job-wide.
  std::vector<AnalyzedNode> nodes;
  for (int i = 1; i <= 10; ++i) {
    std::vector<v1::Finding> fs;
    for (int d = 0; d < 8 && i <= 4; ++d)
      fs.push_back(slowPort(name(i), "mlx5_" + std::to_string(d)));
    nodes.push_back(node(name(i), std::move(fs)));
  }
  EXPECT_EQ(withCode(buildReport(nodes), "LINK_RATE_BELOW_EXPECTED").size(), 32u);
  // On every node: one job-wide entry, its place taken out of the summary.
  nodes.clear();
  for (int i = 1; i <= 10; ++i) {
    std::vector<v1::Finding> fs;
    for (int d = 0; d < 8; ++d) fs.push_back(slowPort(name(i), "mlx5_" + std::to_string(d)));
    nodes.push_back(node(name(i), std::move(fs)));
  }
  const v1::Report all = buildReport(nodes);
  const auto slow = withCode(all, "LINK_RATE_BELOW_EXPECTED");
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0]->nodes_count(), 10u);
  EXPECT_EQ(slow[0]->summary(), "The port runs at 100 Gb/s, below the expected 200 Gb/s");
  EXPECT_EQ(slow[0]->evidence(0), "on node1 mlx5_0 port 1 (one of 10 nodes):");
}

v1::Finding escalation(const std::string& node, const std::vector<std::string>& reasons) {
  auto f = makeFinding({FindingCode::EscalateHostInspection,
                        Severity::Warning,
                        node,
                        "mlx5_3",
                        0,
                        "mlx5_3 of " + node + " needs the provider's inspection",
                        {"node GUID 0x" + node},
                        "Run the physical runbook on its PF."});
  for (const auto& r : reasons) f.add_reasons(r);
  return f;
}

TEST(JobWide, APhysicalFaultOnEveryNodeIsOneFabricEscalationNotAPfRunbookPerNode) {
  // Every node's port is slow and escalated for that alone; node2 also has its own PHY_ERRORS.
  std::vector<AnalyzedNode> nodes;
  for (int i = 1; i <= 6; ++i) {
    std::vector<v1::Finding> fs{slowPort(name(i), "mlx5_3")};
    if (i == 2) {
      fs.push_back(makeFinding({FindingCode::PhyErrors,
                                Severity::Warning,
                                name(i),
                                "mlx5_3",
                                1,
                                "mlx5_3 port 1 counts symbol errors",
                                {"symbol_error +40"},
                                "Reseat."}));
      fs.push_back(escalation(name(i), {"LINK_RATE_BELOW_EXPECTED", "PHY_ERRORS"}));
    } else {
      fs.push_back(escalation(name(i), {"LINK_RATE_BELOW_EXPECTED"}));
    }
    nodes.push_back(node(name(i), std::move(fs)));
  }
  const v1::Report r = buildReport(std::move(nodes));
  const auto escalations = withCode(r, "ESCALATE_HOST_INSPECTION");
  ASSERT_EQ(escalations.size(), 2u) << r.DebugString();
  const v1::Finding* fabric = nullptr;
  const v1::Finding* own = nullptr;
  for (const auto* f : escalations) (f->scope() == "job" ? fabric : own) = f;
  ASSERT_NE(fabric, nullptr);
  EXPECT_EQ(fabric->nodes_count(), 5u);
  EXPECT_EQ(std::vector<std::string>(fabric->except().begin(), fabric->except().end()),
            std::vector<std::string>{"node2"});
  EXPECT_THAT(fabric->summary(), HasSubstr("the fabric they share, not one PF per node"));
  EXPECT_EQ(fabric->reasons_size(), 1) << fabric->DebugString();
  EXPECT_EQ(fabric->reasons(0), "LINK_RATE_BELOW_EXPECTED");
  // node2's escalation has a reason of its own: it stays node2's.
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->node(), "node2");
  // Fewer than 90 % of the nodes: no job-wide finding, every node keeps its escalation.
  std::vector<AnalyzedNode> some;
  for (int i = 1; i <= 6; ++i) {
    std::vector<v1::Finding> fs;
    if (i <= 3) {
      fs.push_back(slowPort(name(i), "mlx5_3"));
      fs.push_back(escalation(name(i), {"LINK_RATE_BELOW_EXPECTED"}));
    }
    some.push_back(node(name(i), std::move(fs)));
  }
  const v1::Report partial = buildReport(std::move(some));
  EXPECT_EQ(withCode(partial, "ESCALATE_HOST_INSPECTION").size(), 3u) << partial.DebugString();
}

}  // namespace
}  // namespace ibc::core

// The verdict of a job (job_verdict.cpp judgeJob): evidence rules per node, cross-node
// findings, escalation over each node's whole findings; log evidence stays with its node.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/bundle_report.h"
#include "ibc/core/findings.h"
#include "ibc/core/job_verdict.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/rules.h"
#include "ibc/core/sysfs_values.h"
#include "rule_snapshots.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

using ibc::test::jobNode;

AnalyzedNode withLog(const std::string& name, const std::string& log_text) {
  AnalyzedNode n;
  n.snapshot.mutable_node()->set_slurm_node(name);
  n.snapshot.mutable_node()->set_source("/");
  auto* log = n.snapshot.add_nccl_logs();
  log->set_source("/shared/nccl/rank0.log");
  *log->mutable_parsed() = parseNcclLog(log_text);
  n.snapshot_file = name + ".ibsnap";
  return n;
}

std::size_t countCode(const AnalyzedNode& n, const std::string& code) {
  std::size_t k = 0;
  for (const auto& f : n.findings) k += f.code() == code ? 1 : 0;
  return k;
}

// NCCL's completion-error line as in the real captures, printed by host `host`.
std::string completionError(const std::string& host) {
  return host +
         ":4242:4300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from "
         "peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n";
}

// SYNTHETIC: a VM node with `vfs` ConnectX-6 VFs, one InfiniBand port each, all ACTIVE
// LinkUp at `rate` Gb/s, with GUIDs unless `no_identity`.
AnalyzedNode vmNode(const std::string& name, int vfs, double rate, bool no_identity = false) {
  AnalyzedNode n;
  auto& s = n.snapshot;
  s.mutable_node()->set_slurm_node(name);
  s.mutable_node()->set_hostname(name);
  s.mutable_node()->set_source("/");
  s.mutable_node()->set_virtual_machine(true);
  if (!no_identity) s.mutable_node()->set_vm_id("4c4c4544-0042-3510-8052-b4c04f4e3332");
  for (int d = 0; d < vfs; ++d) {
    auto* dev = s.add_devices();
    dev->set_name("mlx5_" + std::to_string(d));
    dev->set_is_virtual_function(true);
    dev->set_virtual_function_evidence("device id 0x101c is a VF");
    dev->set_hca_type("MT4124");
    dev->set_fw_ver("20.31.1014");
    dev->mutable_pci()->set_address("0000:0" + std::to_string(d) + ":00.0");
    dev->set_node_guid(no_identity ? "node_guid" : "0002:c903:00a0:b1c" + std::to_string(d));
    auto* p = dev->add_ports();
    p->set_port(1);
    *p->mutable_state() = parseEnumValue("4: ACTIVE").value();
    *p->mutable_phys_state() = parseEnumValue("5: LinkUp").value();
    p->set_rate_gbps(rate);
    p->set_rate_raw(rate == 200 ? "200 Gb/sec (4X HDR)" : "100 Gb/sec (4X EDR)");
    p->set_link_layer("InfiniBand");
    if (!no_identity) p->set_port_guid("0002:c903:00a0:b2c" + std::to_string(d));
    p->add_pkeys("0xffff");
  }
  return n;
}

const v1::Finding* findOn(const AnalyzedNode& n, const std::string& code,
                          const std::string& device = "") {
  for (const auto& f : n.findings) {
    if (f.code() == code && (device.empty() || f.device() == device)) return &f;
  }
  return nullptr;
}

std::vector<std::string> reasonsOf(const v1::Finding& f) {
  return {f.reasons().begin(), f.reasons().end()};
}

TEST(JobVerdict, OnlyAnsweringNodesAreJudgedAndFindingsAreSortedPerNode) {
  std::vector<AnalyzedNode> nodes{jobNode("node1", ""), jobNode("node2", "")};
  nodes[1].unreachable_reason = "no answer";
  judgeJob(nodes, {});
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

TEST(JobVerdict, ALineEveryNodeRepeatsFromASharedLogIsKeptOnceOnTheCarrierItNames) {
  // One rank's log carried by three nodes (a shared --nccl-log glob without %h); node1,
  // whose line it is, comes last.
  const std::string text = completionError("node1");
  std::vector<AnalyzedNode> nodes{withLog("node3", text), withLog("node2", text),
                                  withLog("node1", text)};
  judgeJob(nodes, {});
  EXPECT_EQ(countCode(nodes[0], "NCCL_IB_COMPLETION_ERROR"), 0u);
  EXPECT_EQ(countCode(nodes[1], "NCCL_IB_COMPLETION_ERROR"), 0u);
  ASSERT_EQ(countCode(nodes[2], "NCCL_IB_COMPLETION_ERROR"), 1u);
  for (const auto& f : nodes[2].findings) {
    EXPECT_EQ(f.node(), "node1");
    EXPECT_EQ(f.source(), "node1.ibsnap");
  }
  EXPECT_TRUE(nodes[2].notices.empty());
  // Each node's own findings (no devices) stay: they are different inputs' evidence.
  for (const auto& n : nodes) EXPECT_EQ(countCode(n, "NO_RDMA_DEVICES"), 1u);
}

TEST(JobVerdict, ALogHostNameThatIsNoNodeStaysWithTheNodeThatBroughtItAsANotice) {
  // Issue 21: node3's log printed the container's host name; analyze and the bundle made
  // it a fifth node of a four-node job.
  std::vector<AnalyzedNode> nodes{jobNode("node1", ""), jobNode("node2", ""), jobNode("node3", "")};
  nodes[2] = withLog("node3", completionError("kp-ddp-worker-0"));
  judgeJob(nodes, {});
  ASSERT_EQ(countCode(nodes[2], "NCCL_IB_COMPLETION_ERROR"), 1u);
  for (const auto& f : nodes[2].findings) EXPECT_EQ(f.node(), "node3");
  ASSERT_EQ(nodes[2].notices.size(), 1u);
  EXPECT_THAT(nodes[2].notices[0], HasSubstr("names host 'kp-ddp-worker-0', not node3"));
  const auto report = buildReport(nodes);
  EXPECT_EQ(report.nodes_size(), 3);
  for (const auto& f : report.findings()) EXPECT_NE(f.node(), "kp-ddp-worker-0");
}

TEST(JobVerdict, ALogLineNamingAnotherNodeOfTheJobStaysWithItsCarrier) {
  std::vector<AnalyzedNode> nodes{jobNode("node1", ""), withLog("node2", completionError("node1"))};
  judgeJob(nodes, {});
  EXPECT_EQ(countCode(nodes[0], "NCCL_IB_COMPLETION_ERROR"), 0u);
  EXPECT_EQ(countCode(nodes[1], "NCCL_IB_COMPLETION_ERROR"), 1u);
  ASSERT_EQ(nodes[1].notices.size(), 1u);
  EXPECT_THAT(nodes[1].notices[0], HasSubstr("another node of this job"));
}

TEST(JobVerdict, TheNodesNcclsRasReportNamesByAddressAreTheJobsNodesThatHoldIt) {
  // The real RAS capture (issue 1911) names the lagging ranks' node as 10.137.190.124; node2
  // holds that address on its IPoIB interface (SYNTHETIC).
  std::vector<AnalyzedNode> nodes{
      withLog("node1", ibc::test::readFixture("real/nccl-logs/"
                                              "nccl-ras_mismatch-allgather-30-ranks-behind-2_"
                                              "nccl-issue-1911.txt")),
      jobNode("node2", "")};
  auto* ib0 = nodes[1].snapshot.add_netdevs();
  ib0->set_name("ib0");
  ib0->add_addresses("10.137.190.124");
  judgeJob(nodes, {});
  const v1::Finding* lagging = nullptr;
  for (const auto& f : nodes[0].findings) {
    if (f.code() == "NCCL_RANK_LAGGING") lagging = &f;
  }
  ASSERT_NE(lagging, nullptr);
  std::string evidence;
  for (const auto& e : lagging->evidence()) evidence += e + "\n";
  EXPECT_THAT(evidence, ::testing::HasSubstr("RAS's node 10.137.190.124 is node2 ib0"));
}

TEST(JobVerdict, ARateKnownSlowOnlyFromThePeersIsEscalatedAsPhysical) {
  // Issue 21: node4's eight ports at 100 of 200 Gb/s were LINK_RATE_BELOW_EXPECTED in
  // `--job` but not escalated.
  std::vector<AnalyzedNode> nodes{vmNode("node1", 8, 200), vmNode("node2", 8, 200),
                                  vmNode("node3", 8, 200), vmNode("node4", 8, 100)};
  judgeJob(nodes, {});
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(findOn(nodes[i], "ESCALATE_HOST_INSPECTION"), nullptr) << i;
  }
  EXPECT_EQ(countCode(nodes[3], "LINK_RATE_BELOW_EXPECTED"), 8u);
  EXPECT_EQ(countCode(nodes[3], "ESCALATE_HOST_INSPECTION"), 8u);
  const auto* e = findOn(nodes[3], "ESCALATE_HOST_INSPECTION", "mlx5_5");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(reasonsOf(*e), std::vector<std::string>{"LINK_RATE_BELOW_EXPECTED"});
  EXPECT_EQ(e->port(), 1u);
  EXPECT_THAT(e->action(), HasSubstr("mlxlink -d <PF> -p 1 -m -c -e"));
  EXPECT_EQ(findOn(nodes[3], "VF_IDENTITY_MISSING"), nullptr);
  const auto inspection = buildPfInspection(nodes, "", "4242");
  ASSERT_EQ(inspection.suspects_size(), 8);
  for (const auto& vf : inspection.suspects()) {
    EXPECT_EQ(vf.node(), "node4");
    EXPECT_EQ(vf.escalation(), "physical");
    EXPECT_FALSE(vf.identity_missing());
  }
}

TEST(JobVerdict, PortsTheSmHasNotActivatedEscalateWithTheSmRunbookNeverCircularly) {
  std::vector<AnalyzedNode> nodes{vmNode("node1", 8, 200), vmNode("node2", 8, 200),
                                  vmNode("node3", 8, 200)};
  for (int d : {2, 3}) {
    *nodes[2].snapshot.mutable_devices(d)->mutable_ports(0)->mutable_state() =
        parseEnumValue("2: INIT").value();
  }
  judgeJob(nodes, {});
  EXPECT_EQ(countCode(nodes[2], "PORT_NOT_ACTIVE_SM"), 2u);
  const auto* e = findOn(nodes[2], "ESCALATE_HOST_INSPECTION", "mlx5_2");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->severity(), "critical");
  EXPECT_EQ(reasonsOf(*e), std::vector<std::string>{"PORT_NOT_ACTIVE_SM"});
  EXPECT_THAT(e->summary(), HasSubstr("subnet manager"));
  EXPECT_THAT(e->action(), HasSubstr("sriov/<N>/policy"));
  EXPECT_THAT(e->action(), HasSubstr("virt_enabled"));
  EXPECT_THAT(e->action(), Not(HasSubstr("BMC"))) << "no physical runbook: " << e->action();
  const auto inspection = buildPfInspection(nodes, "", "");
  ASSERT_EQ(inspection.suspects_size(), 2);
  for (const auto& vf : inspection.suspects()) {
    EXPECT_EQ(vf.escalation(), "subnet_manager");
    EXPECT_EQ(std::vector<std::string>(vf.reasons().begin(), vf.reasons().end()),
              std::vector<std::string>{"PORT_NOT_ACTIVE_SM"});
    std::string steps;
    for (const auto& st : vf.steps()) steps += st.command() + "\n";
    EXPECT_THAT(steps, HasSubstr("sriov/<N>/node"));
    EXPECT_THAT(steps, Not(HasSubstr("ipmitool sel")));
  }
  const std::string md = renderPfInspectionMarkdown(inspection);
  EXPECT_THAT(md, Not(HasSubstr("Why: ESCALATE_HOST_INSPECTION")));
  EXPECT_THAT(md, HasSubstr("Why: PORT_NOT_ACTIVE_SM"));
}

TEST(JobVerdict, TenantConfigurationIsNeverEscalated) {
  std::vector<AnalyzedNode> nodes{vmNode("node1", 2, 200)};
  nodes[0].snapshot.mutable_host()->set_memlock_soft_bytes(65536);
  auto* log = nodes[0].snapshot.add_nccl_logs();
  *log->mutable_parsed() =
      parseNcclLog("node1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n");
  judgeJob(nodes, {});
  EXPECT_NE(findOn(nodes[0], "NCCL_SOCKET_FALLBACK"), nullptr);
  EXPECT_EQ(findOn(nodes[0], "ESCALATE_HOST_INSPECTION"), nullptr);
}

TEST(JobVerdict, ASuspectVfNothingIdentifiesRaisesVfIdentityMissing) {
  std::vector<AnalyzedNode> nodes{vmNode("node1", 2, 200, true), vmNode("node2", 2, 200, true)};
  *nodes[1].snapshot.mutable_devices(1)->mutable_ports(0)->mutable_phys_state() =
      parseEnumValue("2: Polling").value();
  *nodes[1].snapshot.mutable_devices(1)->mutable_ports(0)->mutable_state() =
      parseEnumValue("1: DOWN").value();
  judgeJob(nodes, {});
  EXPECT_EQ(findOn(nodes[0], "VF_IDENTITY_MISSING"), nullptr);
  const auto* missing = findOn(nodes[1], "VF_IDENTITY_MISSING", "mlx5_1");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->severity(), "warning");
  EXPECT_THAT(missing->action(), HasSubstr("product_uuid"));
  // The sysfs file that held its own name is unknown, never an identity.
  const auto* e = findOn(nodes[1], "ESCALATE_HOST_INSPECTION", "mlx5_1");
  ASSERT_NE(e, nullptr);
  for (const auto& ev : e->evidence()) EXPECT_NE(ev, "node_guid node_guid");
  const auto inspection = buildPfInspection(nodes, "", "");
  ASSERT_EQ(inspection.suspects_size(), 1);
  EXPECT_TRUE(inspection.suspects(0).identity_missing());
  EXPECT_TRUE(inspection.suspects(0).node_guid().empty());
  EXPECT_THAT(renderPfInspectionMarkdown(inspection), HasSubstr("VF_IDENTITY_MISSING"));
}

}  // namespace
}  // namespace ibc::core

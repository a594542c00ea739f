// Golden files for the report: the three real captures of the 3-node --job benchmark
// (bench/job_text_output.sh) collected through the probes, diagnosed as one job and
// rendered as text at 80 and 120 columns and as JSON, compared byte for byte with
// tests/fixtures/golden/. After an intended change of the layout, regenerate with
//   IBC_UPDATE_GOLDEN=1 build/test/tests/unit/ibc_agent_tests --gtest_filter='ReportGolden*'
// and review the diff of tests/fixtures/golden/ like code.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fixtures.h"
#include "ibc/agent/collect.h"
#include "ibc/core/bundle_report.h"
#include "ibc/core/job_verdict.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/nccl_tests.h"
#include "ibc/core/report.h"
#include "os_doubles.h"
#include "sysfs_json.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

namespace v1 = ::ibcollect::v1;

// A node collected through the probes from the tree at `root`, named `name`, at the fixed
// time (the collection time is part of the report).
core::AnalyzedNode collectedFrom(const std::string& root, const std::string& name) {
  ibc::test::FixedClock clock{
      std::chrono::system_clock::time_point(std::chrono::milliseconds(1764000000000))};
  core::AnalyzedNode n;
  n.snapshot = ibc::test::collectFixtureTree(root, clock);
  n.snapshot.mutable_node()->set_slurm_node(name);
  n.snapshot.mutable_node()->set_hostname(name);
  n.snapshot.mutable_node()->set_source("/" + name);  // not this checkout's path
  n.snapshot.mutable_node()->set_collected_at_unix_ms(1764000000000);
  n.snapshot_file = "/tmp/job/" + name + ".ibsnap";
  return n;
}

core::AnalyzedNode collected(const std::string& tree, const std::string& name) {
  return collectedFrom(ibc::test::fixturePath("real/sysfs/" + tree), name);
}

v1::Report jobReport() {
  std::vector<core::AnalyzedNode> nodes;
  nodes.push_back(collected("sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures", "node1"));
  nodes.push_back(collected("sysfs_node-exporter-fixture_mlx4_0_counters-ext.tree", "node2"));
  nodes.push_back(
      collected("sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures", "node3"));
  core::judgeJob(nodes, {});
  return core::buildReport(std::move(nodes));
}

using ibc::test::compareWithGolden;

TEST(ReportGolden, JobTextAt80Columns) {
  core::TextOptions o;
  o.node_table = true;
  o.width = 80;
  const std::string text = core::renderText(jobReport(), o);
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) EXPECT_LE(l.size(), 80u) << l;
  compareWithGolden("job_text_80.txt", text);
}

TEST(ReportGolden, JobTextAt120Columns) {
  core::TextOptions o;
  o.node_table = true;
  o.width = 120;
  compareWithGolden("job_text_120.txt", core::renderText(jobReport(), o));
}

TEST(ReportGolden, PortTableTextAt80Columns) {
  core::TextOptions o;
  o.width = 80;
  compareWithGolden("port_text_80.txt", core::renderText(jobReport(), o));
}

TEST(ReportGolden, JobJson) {
  auto json = core::renderJson(jobReport());
  ASSERT_TRUE(json.ok());
  compareWithGolden("job.json", *json);
}

// Issue 21's job: four VMs of eight HDR VFs each (the real gcm captures, collected through
// the probes; the VM evidence is the one SYNTHETIC field), node3 with two ports stuck in INIT
// and a real NCCL log of completion errors (status 12, RoCE IPv6 GIDs) printed by a host
// named kp-ddp-worker-0; node4 with every port trained at 100 of 200 Gb/s. report.md and
// pf-inspection.md of its bundle, rendered from the job verdict as buildBundle renders them.
std::vector<core::AnalyzedNode> issue21Job() {
  const auto node = [](const std::string& capture, const std::string& name) {
    const std::string dir = ibc::test::makeTempDir("golden-" + name);
    ibc::test::materializeSysfsJson(
        ibc::test::readFixture("real/sysfs/sysfs-json_gcm-" + capture + ".json"), dir);
    core::AnalyzedNode n = collectedFrom(dir, name);
    n.snapshot.mutable_node()->set_job_id("4242");
    n.snapshot.mutable_node()->set_virtual_machine(true);
    n.snapshot.mutable_node()->set_virtualization_evidence("CPU flag hypervisor");
    n.snapshot_file = "snapshots/" + name + ".ibsnap";
    return n;
  };
  std::vector<core::AnalyzedNode> nodes;
  nodes.push_back(node("learn_good_8xhdr200-all-active", "node1"));
  nodes.push_back(node("learn_good_8xhdr200-all-active", "node2"));
  nodes.push_back(node("learn_stuck_ib_intf_two-ports-state-INIT-ipoib-down", "node3"));
  nodes.push_back(node("learn_ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000", "node4"));
  auto* log = nodes[2].snapshot.add_nccl_logs();
  log->set_source("/scratch/logs/nccl.node3.log");
  *log->mutable_parsed() = core::parseNcclLog(ibc::test::readFixture(
      "real/nccl-logs/nccl-log_roce-ipv6gid-completion-status12-vendor129_nccl-issue-1405.txt"));
  core::judgeJob(nodes, {});
  return nodes;
}

v1::BundleManifest issue21Manifest() {
  v1::BundleManifest m;
  m.set_case_id("CASE-21");
  m.set_tenant("acme");
  m.set_job_id("4242");
  m.set_window_start_unix_ms(1764000000000);
  m.set_window_end_unix_ms(1764000000000);
  m.mutable_exporter()->set_subject("CN=alice,OU=support,O=ibcollect");
  m.set_ibcollect_version("golden");
  m.set_created_unix_ms(1764000060000);
  return m;
}

TEST(ReportGolden, Issue21JobVerdictEscalatesNode3ToTheSmAndNode4AsPhysical) {
  const auto nodes = issue21Job();
  std::map<std::string, std::set<std::string>> codes;
  for (const auto& n : nodes) {
    for (const auto& f : n.findings) {
      EXPECT_EQ(f.node(), n.snapshot.node().slurm_node());  // never kp-ddp-worker-0
      if (f.severity() != "info") codes[f.node()].insert(f.code());
    }
  }
  EXPECT_TRUE(codes["node3"].count("PORT_NOT_ACTIVE_SM"));
  EXPECT_TRUE(codes["node3"].count("NCCL_IB_COMPLETION_ERROR"));
  EXPECT_TRUE(codes["node3"].count("ESCALATE_HOST_INSPECTION"));
  EXPECT_TRUE(codes["node4"].count("LINK_RATE_BELOW_EXPECTED"));
  EXPECT_TRUE(codes["node4"].count("ESCALATE_HOST_INSPECTION"));
  EXPECT_TRUE(codes["node4"].count("VF_IDENTITY_MISSING"));  // node_guid files hold their name
  EXPECT_EQ(codes.count("node1"), 0u);
  const auto inspection = core::buildPfInspection(nodes, "CASE-21", "4242");
  std::map<std::string, std::set<std::string>> kinds;
  for (const auto& vf : inspection.suspects()) kinds[vf.node()].insert(vf.escalation());
  EXPECT_EQ(kinds["node4"], (std::set<std::string>{"physical"}));
  EXPECT_TRUE(kinds["node3"].count("subnet_manager"));
}

// Issue 23: a job whose launcher's nccl-tests output (a real 2-node H100 run) is read for
// every node of issue 21's job: the table is printed once, with each node's peak busbw against
// its own links (node3 has two ports in INIT, node4 trains at 100 of 200 Gb/s).
TEST(ReportGolden, JobWithTheSameNcclTestsOnEveryNodeText) {
  auto nodes = issue21Job();
  const std::string table = ibc::test::readFixture(
      "real/nccl-tests/nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-"
      "ztan-fork.txt");
  for (auto& n : nodes) {
    auto* t = n.snapshot.add_nccl_tests();
    t->set_source("/scratch/logs/all_reduce_perf.out");
    *t->mutable_parsed() = core::parseNcclTests(table);
    n.findings.clear();  // judged again below, with the nccl-tests output
    n.notices.clear();
  }
  core::judgeJob(nodes, {});
  core::TextOptions o;
  o.node_table = true;
  o.width = 100;
  const std::string text = core::renderText(core::buildReport(std::move(nodes)), o);
  std::size_t tables = 0;
  for (std::size_t at = text.find("SIZE (B)"); at != std::string::npos;
       at = text.find("SIZE (B)", at + 1))
    ++tables;
  EXPECT_EQ(tables, 1u) << text;
  EXPECT_THAT(text, HasSubstr("node[1-4] (4 nodes carry this same output)"));
  compareWithGolden("job_nccl_tests_text_100.txt", text);
}

// Issue 23: node3's real NCCL log names its peers by address (10.216.210.236) and remote GID
// (fd00:1148:9000:5000:4:200:3:ff1f). Given those as port GIDs of node2 and node4 (SYNTHETIC:
// the gcm captures carry no GID of that fabric), the completion error names the peer's node
// and port, and what node4's findings say of that port.
TEST(ReportGolden, NcclFailuresNameThePeerNodeAndItsPortEvidence) {
  auto nodes = issue21Job();
  auto gid = [&](std::size_t node, int device, const std::string& value) {
    nodes[node].snapshot.mutable_devices(device)->mutable_ports(0)->add_gids(value);
  };
  gid(1, 1, "0000:0000:0000:0000:0000:ffff:0ad8:d2ec");  // ::ffff:10.216.210.236
  gid(3, 0, "fd00:1148:9000:5000:0004:0200:0003:ff1f");
  for (auto& n : nodes) {
    n.findings.clear();  // judged again with the GIDs
    n.notices.clear();
  }
  core::judgeJob(nodes, {});
  const v1::Finding* completion = nullptr;
  for (const auto& f : nodes[2].findings) {
    if (f.code() == "NCCL_IB_COMPLETION_ERROR") completion = &f;
  }
  ASSERT_NE(completion, nullptr);
  std::string evidence;
  for (const auto& e : completion->evidence()) evidence += e + "\n";
  const std::string dev2 = nodes[1].snapshot.devices(1).name();
  const std::string dev4 = nodes[3].snapshot.devices(0).name();
  EXPECT_THAT(evidence, HasSubstr("peer 10.216.210.236 is node2 " + dev2 +
                                  " port 1, with no finding on that port"));
  EXPECT_THAT(evidence, HasSubstr("peer fd00:1148:9000:5000:4:200:3:ff1f is node4 " + dev4 +
                                  " port 1, which shows LINK_RATE_BELOW_EXPECTED: "));
  // An address no node of the job holds (ff20, ff21, ff22) names nobody.
  EXPECT_THAT(evidence, Not(HasSubstr("ff20 is")));
}

// Issue 39: the same peer address held by node2's IPoIB interface (SYNTHETIC: an `ip addr` of
// that fabric is not in the captures) rather than a GID: the failure names node2's port the
// interface is bound to; an interface bound to no RDMA device is named itself.
TEST(ReportGolden, NcclFailuresNameThePeerByTheInterfaceAddressItsNodeHolds) {
  auto nodes = issue21Job();
  const std::string dev2 = nodes[1].snapshot.devices(1).name();
  auto* ib0 = nodes[1].snapshot.add_netdevs();
  ib0->set_name("ib0");
  ib0->set_rdma_device(dev2);
  ib0->set_rdma_port(1);
  ib0->add_addresses("10.216.210.236");
  for (auto& n : nodes) {
    n.findings.clear();
    n.notices.clear();
  }
  core::judgeJob(nodes, {});
  std::string evidence;
  for (const auto& f : nodes[2].findings) {
    if (f.code() != "NCCL_IB_COMPLETION_ERROR") continue;
    for (const auto& e : f.evidence()) evidence += e + "\n";
  }
  EXPECT_THAT(evidence, HasSubstr("peer 10.216.210.236 is node2 " + dev2 + " port 1"));
  // Unbound: the interface is the place.
  auto unbound = issue21Job();
  auto* eth = unbound[1].snapshot.add_netdevs();
  eth->set_name("eth1");
  eth->add_addresses("10.216.210.236");
  for (auto& n : unbound) {
    n.findings.clear();
    n.notices.clear();
  }
  core::judgeJob(unbound, {});
  evidence.clear();
  for (const auto& f : unbound[2].findings) {
    for (const auto& e : f.evidence()) evidence += e + "\n";
  }
  EXPECT_THAT(evidence, HasSubstr("peer 10.216.210.236 is node2 eth1,"));
}

// The verdict taken one node at a time (JobJudgement, as `compare`, `--job` and the console
// take it) is judgeJob's on this job's real NCCL logs, whose completion error names peers by
// address and GID (joined to node2 and node4 as above) and whose nccl-tests output every node
// carries: what a slim node lets go of (raw text, kernel lines, counters, NCCL events that name
// no peer; with Keep::Verdict its nccl-tests tables too) changes no finding. The report of
// Keep::Report nodes is the whole one's (the CLI's text and JSON); Keep::Verdict nodes' report
// entries carry no nccl-tests tables (the console reads them from the node's file).
TEST(ReportGolden, SlimNodesGetTheWholeVerdictOnRealNcclLogsAndPeers) {
  auto job = issue21Job();
  job[1].snapshot.mutable_devices(1)->mutable_ports(0)->add_gids(
      "0000:0000:0000:0000:0000:ffff:0ad8:d2ec");
  job[3].snapshot.mutable_devices(0)->mutable_ports(0)->add_gids(
      "fd00:1148:9000:5000:0004:0200:0003:ff1f");
  const auto table = core::parseNcclTests(ibc::test::readFixture(
      "real/nccl-tests/nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-"
      "ztan-fork.txt"));
  for (auto& n : job) {
    auto* t = n.snapshot.add_nccl_tests();
    t->set_source("/scratch/logs/all_reduce_perf.out");
    *t->mutable_parsed() = table;
    n.findings.clear();
    n.notices.clear();
  }
  auto whole = job;
  core::judgeJob(whole, {});
  const v1::Report whole_report = core::buildReport(whole);
  std::size_t joined = 0;
  for (const auto& f : whole_report.findings()) {
    for (const auto& e : f.evidence()) joined += e.rfind("peer ", 0) == 0 ? 1 : 0;
  }
  ASSERT_GE(joined, 2u);  // the peers were joined: the slim nodes must join them too
  for (const core::Keep keep : {core::Keep::Report, core::Keep::Verdict}) {
    core::JobJudgement judgement({});
    for (const auto& n : job) judgement.add(n, keep);
    const v1::Report slim = core::buildReport(judgement.finish());
    ASSERT_EQ(slim.findings_size(), whole_report.findings_size());
    for (int k = 0; k < slim.findings_size(); ++k) {
      EXPECT_EQ(slim.findings(k).SerializeAsString(), whole_report.findings(k).SerializeAsString())
          << slim.findings(k).ShortDebugString();
    }
    ASSERT_EQ(slim.nodes_size(), whole_report.nodes_size());
    for (int i = 0; i < slim.nodes_size(); ++i) {
      if (keep == core::Keep::Report) {
        EXPECT_EQ(slim.nodes(i).SerializeAsString(), whole_report.nodes(i).SerializeAsString());
      } else {
        v1::NodeReport without = whole_report.nodes(i);
        ASSERT_GT(without.nccl_tests_size(), 0);
        without.clear_nccl_tests();
        without.clear_busbw();
        EXPECT_EQ(slim.nodes(i).SerializeAsString(), without.SerializeAsString());
      }
    }
  }
}

TEST(ReportGolden, Issue21BundleReportMarkdown) {
  const auto nodes = issue21Job();
  const auto inspection = core::buildPfInspection(nodes, "CASE-21", "4242");
  const std::string md =
      core::renderBundleReport(core::buildReport(nodes), issue21Manifest(), inspection);
  EXPECT_THAT(md, HasSubstr("## Ports per node"));
  EXPECT_THAT(md, HasSubstr("| node4 | mlx5_"));
  compareWithGolden("issue21_report.md", md);
}

TEST(ReportGolden, Issue21PfInspectionMarkdown) {
  const auto nodes = issue21Job();
  compareWithGolden(
      "issue21_pf-inspection.md",
      core::renderPfInspectionMarkdown(core::buildPfInspection(nodes, "CASE-21", "4242")));
}

}  // namespace
}  // namespace ibc::agent

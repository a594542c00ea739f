// Core's cross-node comparison (ibc/core/compare.h, job_verdict.h) on real captures
// collected through the agent's probes (node names set per test, since several captures
// come from the same host), plus synthetic windows.

#include "counter_window.h"
#include "ibc/core/compare.h"
#include "ibc/core/job_verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "fixtures.h"
#include "ibc/agent/collect.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/report.h"
#include "os_doubles.h"
#include "sysfs_json.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

namespace v1 = ::ibcollect::v1;

v1::Snapshot collectTree(const std::string& root, const std::string& node) {
  SystemClock clock;
  auto s = ibc::test::collectFixtureTree(root, clock);
  s.mutable_node()->set_slurm_node(node);
  return s;
}

v1::Snapshot gcm(const std::string& capture, const std::string& node) {
  const std::string dir = ibc::test::makeTempDir("cmp-" + node);
  ibc::test::materializeSysfsJson(
      ibc::test::readFixture("real/sysfs/sysfs-json_gcm-" + capture + ".json"), dir);
  return collectTree(dir, node);
}

std::vector<v1::Finding> onNode(const std::vector<v1::Finding>& all, const std::string& node) {
  std::vector<v1::Finding> out;
  for (const auto& f : all) {
    if (f.node() == node) out.push_back(f);
  }
  return out;
}

// Every finding of the job verdict over `snaps`, flattened (node by node).
std::vector<v1::Finding> judged(const std::vector<const v1::Snapshot*>& snaps,
                                std::optional<double> expect_rate = std::nullopt) {
  std::vector<core::AnalyzedNode> nodes;
  for (const auto* s : snaps) {
    core::AnalyzedNode n;
    n.snapshot = *s;
    nodes.push_back(std::move(n));
  }
  core::JobVerdictOptions o;
  o.rules.expect_rate_gbps = expect_rate;
  core::judgeJob(nodes, o);
  std::vector<v1::Finding> all;
  for (auto& n : nodes) {
    for (auto& f : n.findings) all.push_back(std::move(f));
  }
  return all;
}

bool has(const std::vector<v1::Finding>& fs, const std::string& code, const std::string& sev) {
  for (const auto& f : fs) {
    if (f.code() == code && f.severity() == sev) return true;
  }
  return false;
}

std::string dump(const std::vector<v1::Finding>& fs) {
  std::string s;
  for (const auto& f : fs)
    s += f.node() + " " + f.severity() + " " + f.code() + ": " + f.summary() + "\n";
  return s;
}

// Issue 10: two snapshots of one host (before and after; real captures of one machine)
// used to share findings by host name: the healthy one was marked WARNING and the degraded
// one OK. Findings now belong to the input they came from, and the rows are told apart.
TEST(JobVerdict, TwoSnapshotsOfOneHostEachKeepTheirOwnFindings) {
  std::vector<core::AnalyzedNode> nodes(2);
  nodes[0].snapshot = gcm("learn_good_8xhdr200-all-active", "gpu01");
  nodes[0].snapshot_file = "/cases/before.ibsnap";
  nodes[1].snapshot = gcm("learn_ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000", "gpu01");
  nodes[1].snapshot_file = "/cases/after.ibsnap";
  core::judgeJob(nodes, {});
  EXPECT_FALSE(has(nodes[0].findings, "LINK_RATE_BELOW_EXPECTED", "warning") ||
               has(nodes[0].findings, "LINK_RATE_BELOW_EXPECTED", "critical"))
      << "healthy snapshot got: " << dump(nodes[0].findings);
  EXPECT_TRUE(has(nodes[1].findings, "LINK_RATE_BELOW_EXPECTED", "warning") ||
              has(nodes[1].findings, "LINK_RATE_BELOW_EXPECTED", "critical") ||
              has(nodes[1].findings, "NODE_OUTLIER", "warning"))
      << "degraded snapshot got: " << dump(nodes[1].findings);
  for (const auto& f : nodes[0].findings) EXPECT_EQ(f.source(), "/cases/before.ibsnap");
  for (const auto& f : nodes[1].findings) EXPECT_EQ(f.source(), "/cases/after.ibsnap");
  EXPECT_EQ(nodes[0].label, "gpu01 (before.ibsnap)");
  EXPECT_EQ(nodes[1].label, "gpu01 (after.ibsnap)");
  const auto report = core::buildReport(nodes);
  // A JSON reader joins findings to node entries by node and source: both name the input.
  ASSERT_EQ(report.nodes_size(), 2);
  EXPECT_EQ(report.nodes(0).source(), "/cases/before.ibsnap");
  EXPECT_EQ(report.nodes(1).source(), "/cases/after.ibsnap");
  for (const auto& f : report.findings()) {
    EXPECT_TRUE(f.source() == report.nodes(0).source() || f.source() == report.nodes(1).source())
        << f.source();
  }
  ASSERT_EQ(report.notices_size(), 1);
  EXPECT_THAT(report.notices(0), HasSubstr("2 inputs name the same node 'gpu01'"));
  const std::string text = core::renderText(report, {});
  EXPECT_THAT(text, HasSubstr("gpu01 (after.ibsnap)"));
  EXPECT_THAT(text, HasSubstr("note: 2 inputs name the same node 'gpu01'"));
}

// Issue 10: two snapshots of one host that say the same (two fetches of one file, or a
// fault that did not change between before and after) each keep their findings: the
// word-for-word dedupe is for one log read by several nodes, not for two inputs.
TEST(JobVerdict, TwoIdenticalSnapshotsOfOneHostBothKeepTheirFindings) {
  std::vector<core::AnalyzedNode> nodes(2);
  nodes[0].snapshot = gcm("learn_ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000", "gpu01");
  nodes[0].snapshot_file = "/cases/before.ibsnap";
  nodes[1].snapshot = nodes[0].snapshot;
  nodes[1].snapshot_file = "/cases/after.ibsnap";
  core::JobVerdictOptions o;
  o.rules.expect_rate_gbps = 200;
  core::judgeJob(nodes, o);
  EXPECT_TRUE(has(nodes[0].findings, "LINK_RATE_BELOW_EXPECTED", "warning"))
      << dump(nodes[0].findings);
  EXPECT_TRUE(has(nodes[1].findings, "LINK_RATE_BELOW_EXPECTED", "warning"))
      << dump(nodes[1].findings);
  EXPECT_EQ(nodes[0].findings.size(), nodes[1].findings.size())
      << "before:\n"
      << dump(nodes[0].findings) << "after:\n"
      << dump(nodes[1].findings);
  for (const auto& f : nodes[1].findings) EXPECT_EQ(f.source(), "/cases/after.ibsnap");
}

// Issue 10: a NCCL log whose host name is not the Slurm node name (an FQDN no node has, a
// container's name) stays with the node whose snapshot carries it, instead of going to
// whichever node came first.
TEST(JobVerdict, ALogNamingAnUnknownHostStaysWithItsOwnNode) {
  std::vector<core::AnalyzedNode> nodes(3);
  nodes[0].snapshot = gcm("learn_good_8xhdr200-all-active", "node1");
  nodes[1].snapshot = gcm("learn_good_8xhdr200-all-active", "node2");
  nodes[2].snapshot = gcm("learn_good_8xhdr200-all-active", "node3");
  v1::NcclLog* log = nodes[2].snapshot.add_nccl_logs();
  log->set_source("nccl.log");
  // SYNTHETIC line in NCCL's real format; the host is the container name NCCL printed.
  *log->mutable_parsed() = core::parseNcclLog(
      "trainer-7f9c4:4242:4300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion "
      "from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n",
      {});
  core::judgeJob(nodes, {});
  EXPECT_TRUE(has(nodes[2].findings, "NCCL_IB_COMPLETION_ERROR", "critical"))
      << dump(nodes[2].findings);
  EXPECT_FALSE(has(nodes[0].findings, "NCCL_IB_COMPLETION_ERROR", "critical"))
      << dump(nodes[0].findings);
  for (const auto& f : nodes[2].findings) EXPECT_EQ(f.node(), "node3");
}

TEST(CompareNodes, HealthyPeersProduceNothing) {
  const auto a = gcm("learn_good_8xhdr200-all-active", "a"),
             b = gcm("learn_good_8xhdr200-all-active", "b");
  EXPECT_TRUE(core::compareNodes({&a, &b}, {}).empty());
  EXPECT_TRUE(core::compareNodes({&a}, {}).empty());  // one node: nothing to compare
}

TEST(CompareNodes, FirmwareAndRateOfTheOddNodeOut) {
  const auto a = gcm("learn_good_8xhdr200-all-active", "a"),
             b = gcm("learn_good_8xhdr200-all-active", "b");
  const auto c = gcm("learn_ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000", "c");
  const auto all = core::compareNodes({&a, &b, &c}, {});
  const auto odd = onNode(all, "c");
  EXPECT_TRUE(has(odd, "LINK_RATE_BELOW_EXPECTED", "warning")) << dump(all);
  // This capture's fw_ver is the placeholder "fw_ver" (PROVENANCE.md): no version, so
  // not a mismatch with 20.31.2354, only said to be unknown.
  EXPECT_FALSE(has(odd, "FW_VERSION_MISMATCH", "warning")) << dump(all);
  EXPECT_TRUE(has(odd, "FW_VERSION_MISMATCH", "info")) << dump(all);
  EXPECT_TRUE(onNode(all, "a").empty()) << dump(all);
}

const v1::Finding* find(const std::vector<v1::Finding>& fs, const std::string& code) {
  for (const auto& f : fs) {
    if (f.code() == code) return &f;
  }
  return nullptr;
}

void setFirmware(v1::Snapshot& s, const std::string& fw) {
  for (auto& d : *s.mutable_devices()) d.set_fw_ver(fw);
}

TEST(CompareNodes, TwoRealFirmwareVersionsAreAMismatchOnTheOddNode) {
  // The real capture (fw 20.31.2354 on 8 HCAs) three times; SYNTHETIC: the third node's
  // HCAs report a later release.
  const auto a = gcm("learn_good_8xhdr200-all-active", "a"),
             b = gcm("learn_good_8xhdr200-all-active", "b");
  auto c = gcm("learn_good_8xhdr200-all-active", "c");
  setFirmware(c, "20.35.1012");
  const auto all = core::compareNodes({&a, &b, &c}, {});
  const auto odd = onNode(all, "c");
  const auto* f = find(odd, "FW_VERSION_MISMATCH");
  ASSERT_NE(f, nullptr) << dump(all);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_THAT(f->summary(), HasSubstr("fw 20.35.1012 vs 20.31.2354"));
  ASSERT_EQ(f->evidence_size(), 9);  // the 8 odd devices, then the majority
  EXPECT_THAT(f->evidence(8), HasSubstr("majority: fw 20.31.2354 on 16 of 24"));
  EXPECT_TRUE(onNode(all, "a").empty()) << dump(all);
  EXPECT_TRUE(onNode(all, "b").empty()) << dump(all);
}

TEST(CompareNodes, AnEmptyOrGarbageFirmwareStringIsUnknownNotAMismatch) {
  const auto a = gcm("learn_good_8xhdr200-all-active", "a"),
             b = gcm("learn_good_8xhdr200-all-active", "b");
  for (const std::string bad : {"", "N/A", "fw_ver", "20.", ".31", "x20.31.2354", "20"}) {
    auto c = gcm("learn_good_8xhdr200-all-active", "c");
    setFirmware(c, bad);
    const auto all = core::compareNodes({&a, &b, &c}, {});
    EXPECT_FALSE(has(all, "FW_VERSION_MISMATCH", "warning")) << "\"" << bad << "\"\n" << dump(all);
    EXPECT_TRUE(has(onNode(all, "c"), "FW_VERSION_MISMATCH", "info")) << "\"" << bad << "\"\n"
                                                                      << dump(all);
  }
  // A version with what some drivers print after it is still a version.
  auto c = gcm("learn_good_8xhdr200-all-active", "c");
  setFirmware(c, "20.31.2354 (MT_0000000223)");
  const auto all = core::compareNodes({&a, &b, &c}, {});
  EXPECT_TRUE(has(onNode(all, "c"), "FW_VERSION_MISMATCH", "warning")) << dump(all);
  // No node with a version: nothing to compare, nothing said.
  auto x = gcm("learn_good_8xhdr200-all-active", "x"),
       y = gcm("learn_good_8xhdr200-all-active", "y");
  setFirmware(x, "fw_ver");
  setFirmware(y, "fw_ver");
  EXPECT_TRUE(core::compareNodes({&x, &y}, {}).empty());
}

TEST(CompareNodes, ExpectRateReplacesThePeersMajority) {
  const auto a = gcm("learn_good_8xhdr200-all-active", "a"),
             b = gcm("learn_good_8xhdr200-all-active", "b");
  const auto c = gcm("learn_ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000", "c");
  // Without --expect-rate the 100 Gb/s node is below its peers' 200.
  ASSERT_TRUE(has(core::compareNodes({&a, &b, &c}, {}), "LINK_RATE_BELOW_EXPECTED", "warning"));
  // With it, the peers' majority is not used at all ...
  core::CompareOptions expect100;
  expect100.expect_rate_gbps = 100;
  const auto cmp = core::compareNodes({&a, &b, &c}, expect100);
  EXPECT_EQ(find(cmp, "LINK_RATE_BELOW_EXPECTED"), nullptr) << dump(cmp);
  // ... and 100 Gb/s is what was expected: no rate finding anywhere.
  const auto job100 = judged({&a, &b, &c}, 100);
  EXPECT_EQ(find(job100, "LINK_RATE_BELOW_EXPECTED"), nullptr) << dump(job100);
  // Expecting 200, the single-node rule names c's ports against --expect-rate.
  const auto job200 = judged({&a, &b, &c}, 200);
  std::size_t below = 0;
  for (const auto& f : job200) {
    if (f.code() != "LINK_RATE_BELOW_EXPECTED") continue;
    ++below;
    EXPECT_EQ(f.node(), "c");
    std::string ev;
    for (const auto& e : f.evidence()) ev += e + "\n";
    EXPECT_THAT(ev, Not(HasSubstr("peers' majority")));
  }
  EXPECT_EQ(below, 8u) << dump(job200);  // one per port of c
}

// The real mlx5 capture with a SYNTHETIC window: each counter in `moved` grew by that many
// during `seconds`.
v1::Snapshot windowed(const std::string& name, const std::map<std::string, uint64_t>& moved,
                      double seconds = 10) {
  const std::string root = ibc::test::fixturePath(
      "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures");
  auto s = collectTree(root, name);
  auto* w = s.add_window();
  w->set_interval_seconds(seconds);
  auto* p = w->add_ports();
  p->set_device("mlx5_0");
  p->set_port(1);
  for (const auto& c : s.devices(0).ports(0).counters()) {
    auto* c2 = p->add_counters();
    *c2 = c;
    if (auto it = moved.find(c.name()); it != moved.end()) c2->set_value(c.value() + it->second);
  }
  return s;
}

TEST(CompareNodes, ANodeMovingFarLessDataThanItsBusyPeersIsAnOutlier) {
  // port_*_data count 4-byte words: 2.5e9 words in 10 s is 1e9 B/s, 8 Gb/s; the slow node
  // moves a tenth of that.
  const auto q1 =
      windowed("q1", {{"port_xmit_data", 1'250'000'000}, {"port_rcv_data", 1'250'000'000}});
  const auto q2 =
      windowed("q2", {{"port_xmit_data", 1'250'000'000}, {"port_rcv_data", 1'250'000'000}});
  const auto slow =
      windowed("slow", {{"port_xmit_data", 125'000'000}, {"port_rcv_data", 125'000'000}});
  const auto all = core::compareNodes({&q1, &q2, &slow}, {});
  const auto odd = onNode(all, "slow");
  const auto* f = find(odd, "NODE_OUTLIER");
  ASSERT_NE(f, nullptr) << dump(all);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->summary(),
            "Node moved 0.8 Gb/s of RDMA data during the window, the median node 8 Gb/s");
  EXPECT_TRUE(onNode(all, "q1").empty()) << dump(all);
  EXPECT_TRUE(onNode(all, "q2").empty()) << dump(all);

  // Just above half the median is not an outlier.
  const auto half =
      windowed("half", {{"port_xmit_data", 630'000'000}, {"port_rcv_data", 630'000'000}});
  EXPECT_TRUE(core::compareNodes({&q1, &q2, &half}, {}).empty());
}

TEST(CompareNodes, AnIdleJobHasNoThroughputOutlier) {
  // Median 0.08 Gb/s (< 0.8 Gb/s): nothing is running, one node at zero is not slow.
  const auto q1 = windowed("q1", {{"port_xmit_data", 2'500'000}});
  const auto q2 = windowed("q2", {{"port_xmit_data", 2'500'000}});
  const auto zero = windowed("zero", {});
  EXPECT_TRUE(core::compareNodes({&q1, &q2, &zero}, {}).empty());
}

TEST(CompareNodes, SwappedDeviceNamesStandOutFromTheirPeers) {
  const auto a = gcm("learn_good_8xhdr200-all-active", "a"),
             b = gcm("learn_good_8xhdr200-all-active", "b");
  const auto c = gcm("learn_ib_misbound_if_mlx5-names-swapped-vs-pci", "c");
  const auto all = core::compareNodes({&a, &b, &c}, {});
  EXPECT_TRUE(has(onNode(all, "c"), "NODE_OUTLIER", "warning")) << dump(all);
  EXPECT_TRUE(onNode(all, "a").empty()) << dump(all);
}

TEST(CompareNodes, StuckPortsShowAsFewerActivePortsAndAnMtuMismatch) {
  const auto a = gcm("learn_good_8xhdr200-all-active", "a"),
             b = gcm("learn_good_8xhdr200-all-active", "b");
  const auto c = gcm("learn_stuck_ib_intf_two-ports-state-INIT-ipoib-down", "c");
  const auto all = core::compareNodes({&a, &b, &c}, {});
  const auto odd = onNode(all, "c");
  EXPECT_TRUE(has(odd, "NODE_OUTLIER", "warning")) << dump(all);  // 6 active ports, peers 8
  EXPECT_TRUE(has(odd, "MTU_MISMATCH", "warning")) << dump(all);  // ib4/ib6 4092 vs 2044
  // The single-node rule already names the stuck ports; the job verdict keeps both views.
  const auto job = judged({&a, &b, &c});
  EXPECT_TRUE(has(onNode(job, "c"), "PORT_NOT_ACTIVE_SM", "critical"));
}

TEST(CompareNodes, ANodeWhoseErrorCountersRunAwayDuringTheWindowIsAnOutlier) {
  // SYNTHETIC windows on the real mlx5 capture: two quiet nodes, one whose symbol_error
  // moved by 500 during a 10 s window.
  const std::string root = ibc::test::fixturePath(
      "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures");
  std::vector<v1::Snapshot> nodes;
  for (const char* n : {"q1", "q2", "bad"}) {
    auto s = collectTree(root, n);
    const bool bad = std::string(n) == "bad";
    uint64_t symbol_errors = 0;
    for (const auto& c : s.devices(0).ports(0).counters()) {
      if (c.name() == "symbol_error") symbol_errors = c.value();
    }
    test::addCounterWindow(s, bad ? "symbol_error" : "", symbol_errors + 500);
    nodes.push_back(std::move(s));
  }
  const auto all = core::compareNodes({&nodes[0], &nodes[1], &nodes[2]}, {});
  EXPECT_TRUE(has(onNode(all, "bad"), "NODE_OUTLIER", "critical")) << dump(all);
  EXPECT_TRUE(onNode(all, "q1").empty()) << dump(all);
}

TEST(CompareNodes, RanksAtAnEarlierOpCountOnOneNodeAreLagging) {
  // SYNTHETIC rank progress as the NCCL log parser reports it.
  v1::Snapshot a, b;
  a.mutable_node()->set_slurm_node("a");
  b.mutable_node()->set_slurm_node("b");
  for (int r = 0; r < 4; ++r) {
    auto* pa = a.add_nccl_logs()->mutable_parsed()->add_ranks();
    pa->set_host("a");
    pa->set_rank(r);
    pa->set_op_count(120);
    auto* pb = b.add_nccl_logs()->mutable_parsed()->add_ranks();
    pb->set_host("b");
    pb->set_rank(4 + r);
    pb->set_op_count(r == 2 ? 87 : 120);
  }
  const auto all = core::compareNodes({&a, &b}, {});
  EXPECT_TRUE(has(onNode(all, "b"), "NCCL_RANK_LAGGING", "warning")) << dump(all);
  EXPECT_TRUE(onNode(all, "a").empty()) << dump(all);
  // NCCL prints opCounts in hex: 87 is "opCount 57", 120 "opCount 78".
  const auto* f = find(all, "NCCL_RANK_LAGGING");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->summary(), HasSubstr("(opCount 57)"));
  ASSERT_EQ(f->evidence_size(), 2);
  EXPECT_EQ(f->evidence(0), "opCount 57: b rank 6");
  EXPECT_EQ(f->evidence(1).substr(0, 12), "opCount 78: ");
}

TEST(CompareNodes, LaggingRanksQuoteTheOpCountAsTheNcclLogPrintsIt) {
  // SYNTHETIC NCCL_DEBUG_SUBSYS=INIT,COLL lines in NCCL's formats (init.cc, enqueue.cc),
  // one file per host: rank 3 on hostB is at opCount 27 (hex) while the others are at 2a.
  auto init = [](const std::string& host, int pid, int dev, int rank, const std::string& comm) {
    return host + ":" + std::to_string(pid) + ":" + std::to_string(pid) + " [" +
           std::to_string(dev) + "] NCCL INFO ncclCommInitRank comm " + comm + " rank " +
           std::to_string(rank) + " nranks 4 cudaDev " + std::to_string(dev) +
           " nvmlDev 0 busId 1b000 commId 0x8a412f - Init COMPLETE\n";
  };
  auto coll = [](const std::string& host, int pid, int dev, const std::string& op,
                 const std::string& comm) {
    return host + ":" + std::to_string(pid) + ":" + std::to_string(pid) + " [" +
           std::to_string(dev) + "] NCCL INFO AllReduce: opCount " + op +
           " sendbuff 0x7f0000 recvbuff 0x7f0000 count 1048576 datatype 7 op 0 root 0 comm " +
           comm + " [nranks=4] stream 0x5600\n";
  };
  v1::Snapshot a, b;
  a.mutable_node()->set_slurm_node("hostA");
  b.mutable_node()->set_slurm_node("hostB");
  *a.add_nccl_logs()->mutable_parsed() = core::parseNcclLog(
      init("hostA", 100, 0, 0, "0x55d0c0") + init("hostA", 101, 1, 1, "0x55d1c0") +
      coll("hostA", 100, 0, "2a", "0x55d0c0") + coll("hostA", 101, 1, "2a", "0x55d1c0"));
  *b.add_nccl_logs()->mutable_parsed() = core::parseNcclLog(
      init("hostB", 200, 0, 2, "0x66a0c0") + init("hostB", 201, 1, 3, "0x66a1c0") +
      coll("hostB", 200, 0, "2a", "0x66a0c0") + coll("hostB", 201, 1, "27", "0x66a1c0"));
  const auto all = core::compareNodes({&a, &b}, {});
  const auto behind = onNode(all, "hostB");
  const auto* f = find(behind, "NCCL_RANK_LAGGING");
  ASSERT_NE(f, nullptr) << dump(all);
  EXPECT_EQ(f->summary(),
            "Ranks on this node stopped at an earlier collective (opCount 27) than their peers");
  ASSERT_EQ(f->evidence_size(), 2);
  EXPECT_EQ(f->evidence(0), "opCount 27: hostB rank 3");
  EXPECT_EQ(f->evidence(1), "opCount 2a: hostA rank 0, hostA rank 1, hostB rank 2");
}

TEST(CompareNodes, PyTorchSeqNumsAreDecimalAndNeverComparedWithNcclOpCounts) {
  v1::Snapshot a, b;
  a.mutable_node()->set_slurm_node("a");
  b.mutable_node()->set_slurm_node("b");
  auto add = [](v1::Snapshot& s, const std::string& host, int rank, uint64_t v,
                v1::NcclRankProgress::Sequence seq) {
    auto* r = s.add_nccl_logs()->mutable_parsed()->add_ranks();
    r->set_host(host);
    r->set_rank(rank);
    r->set_op_count(v);
    r->set_sequence(seq);
  };
  // Every rank at the same point by each count; the counts differ from each other.
  add(a, "a", 0, 7753, v1::NcclRankProgress::TORCH_SEQ_NUM);
  add(b, "b", 1, 7753, v1::NcclRankProgress::TORCH_SEQ_NUM);
  add(a, "a", 0, 0x2a, v1::NcclRankProgress::NCCL_OP_COUNT);
  add(b, "b", 1, 0x2a, v1::NcclRankProgress::NCCL_OP_COUNT);
  EXPECT_TRUE(core::compareNodes({&a, &b}, {}).empty()) << dump(core::compareNodes({&a, &b}, {}));
  // A rank behind by SeqNum is quoted in decimal.
  add(b, "b", 2, 7750, v1::NcclRankProgress::TORCH_SEQ_NUM);
  const auto all = core::compareNodes({&a, &b}, {});
  const auto* f = find(all, "NCCL_RANK_LAGGING");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->node(), "b");
  EXPECT_THAT(f->summary(), HasSubstr("(SeqNum 7750)"));
}

// A job that exercises every cross-node rule and a kernel log: real captures (good, stuck,
// swapped names) and SYNTHETIC windows on the real mlx5 capture (a node whose symbol_error
// runs away, one moving a tenth of its peers' data).
std::vector<v1::Snapshot> mixedJob() {
  std::vector<v1::Snapshot> out;
  out.push_back(gcm("learn_good_8xhdr200-all-active", "a"));
  out.push_back(gcm("learn_good_8xhdr200-all-active", "b"));
  out.push_back(gcm("learn_stuck_ib_intf_two-ports-state-INIT-ipoib-down", "c"));
  out.push_back(gcm("learn_ib_misbound_if_mlx5-names-swapped-vs-pci", "d"));
  out.push_back(
      windowed("q1", {{"port_xmit_data", 1'250'000'000}, {"port_rcv_data", 1'250'000'000}}));
  out.push_back(
      windowed("q2", {{"port_xmit_data", 1'250'000'000}, {"port_rcv_data", 1'250'000'000}}));
  out.push_back(
      windowed("slow", {{"port_xmit_data", 125'000'000}, {"port_rcv_data", 125'000'000}}));
  out.push_back(windowed("bad", {{"symbol_error", 500}, {"port_xmit_data", 1'250'000'000}}));
  auto* line = out.back().mutable_kernel_log()->add_lines();
  line->set_text("mlx5_core 0000:01:00.0 ens1f0np0: Link down");
  line->set_line_number(1);
  out.back().mutable_kernel_log()->set_source("dmesg");
  return out;
}

std::vector<core::AnalyzedNode> asNodes(const std::vector<v1::Snapshot>& snaps) {
  std::vector<core::AnalyzedNode> nodes;
  for (const auto& s : snaps) {
    core::AnalyzedNode n;
    n.snapshot = s;
    nodes.push_back(std::move(n));
  }
  return nodes;
}

TEST(JobJudgement, SlimNodesGetExactlyTheFindingsOfJudgeJob) {
  const auto snaps = mixedJob();
  auto whole = asNodes(snaps);
  core::judgeJob(whole, {});
  core::JobJudgement judgement({});
  for (auto& n : asNodes(snaps)) judgement.add(std::move(n), core::Keep::Report);
  const auto slim = judgement.finish();
  ASSERT_EQ(slim.size(), whole.size());
  std::size_t findings = 0;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(slim[i].label, whole[i].label);
    ASSERT_EQ(slim[i].findings.size(), whole[i].findings.size()) << whole[i].label;
    for (std::size_t k = 0; k < whole[i].findings.size(); ++k) {
      EXPECT_EQ(slim[i].findings[k].SerializeAsString(), whole[i].findings[k].SerializeAsString())
          << whole[i].findings[k].ShortDebugString();
    }
    findings += whole[i].findings.size();
  }
  // The job is not a quiet one: the comparison and the kernel log had something to say.
  const auto all = judged(
      {&snaps[0], &snaps[1], &snaps[2], &snaps[3], &snaps[4], &snaps[5], &snaps[6], &snaps[7]});
  EXPECT_EQ(all.size(), findings);
  EXPECT_TRUE(has(onNode(all, "bad"), "NODE_OUTLIER", "critical")) << dump(all);
  EXPECT_TRUE(has(onNode(all, "slow"), "NODE_OUTLIER", "warning")) << dump(all);
  EXPECT_TRUE(has(onNode(all, "c"), "MTU_MISMATCH", "warning")) << dump(all);
  EXPECT_TRUE(has(onNode(all, "bad"), "KERNEL_LINK_FLAP", "warning")) << dump(all);
  // ... and the slim snapshots kept what the report reads, not what only the rules read.
  const auto& bad = slim.back().snapshot;
  EXPECT_EQ(bad.devices_size(), snaps.back().devices_size());
  EXPECT_EQ(bad.devices(0).ports_size(), snaps.back().devices(0).ports_size());
  EXPECT_EQ(bad.devices(0).ports(0).state().name(),
            snaps.back().devices(0).ports(0).state().name());
  EXPECT_EQ(bad.devices(0).ports(0).counters_size(), 0);
  EXPECT_EQ(bad.window_size(), 0);
  EXPECT_EQ(bad.kernel_log().lines_size(), 0);
  EXPECT_EQ(bad.kernel_log().source(), "dmesg");
  EXPECT_LT(bad.ByteSizeLong(), snaps.back().ByteSizeLong() / 2);
}

}  // namespace
}  // namespace ibc::agent

// Cross-node comparison on real captures collected through the probes (node names set
// per test, since several captures come from the same host), plus synthetic windows.

#include "ibc/core/compare.h"

#include <gtest/gtest.h>

#include "fixtures.h"
#include "ibc/agent/collect.h"
#include "sysfs_json.h"

namespace ibc::agent {
namespace {

namespace v1 = ::ibcollect::v1;

class NoRunner : public CommandRunner {
 public:
  Result<CommandResult> run(const std::vector<std::string>&, std::chrono::milliseconds,
                            std::size_t) override {
    return Error{ErrorCode::NotFound, "no commands"};
  }
  bool available(std::string_view) const override { return false; }
};
class NoEnv : public Environment {
 public:
  std::string get(std::string_view) const override { return {}; }
};

v1::Snapshot collectTree(const std::string& root, const std::string& node) {
  RootedFilesystem host(root), files("");
  NoRunner runner;
  SystemClock clock;
  NoEnv env;
  CollectOptions o;
  o.root = root;
  auto s = collectSnapshot(o, HostSeams{host, files, runner, clock, env, nullptr, nullptr});
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
  EXPECT_TRUE(has(odd, "FW_VERSION_MISMATCH", "warning")) << dump(all);  // "fw_ver" vs 20.31.2354
  EXPECT_TRUE(onNode(all, "a").empty()) << dump(all);
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
  // The single-node rule already names the stuck ports; diagnoseJob keeps both views.
  const auto job = core::diagnoseJob({&a, &b, &c}, {});
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
    auto* w = s.mutable_window();
    w->set_interval_seconds(10);
    auto* p = w->add_ports();
    p->set_device("mlx5_0");
    p->set_port(1);
    for (const auto& c : s.devices(0).ports(0).counters()) {
      auto* c2 = p->add_counters();
      *c2 = c;
      if (std::string(n) == "bad" && c.name() == "symbol_error") c2->set_value(c.value() + 500);
    }
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
}

}  // namespace
}  // namespace ibc::agent

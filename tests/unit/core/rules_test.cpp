// Finding rules on synthetic snapshots: one table row per code (and per severity where the
// evidence decides it), so every code of docs/codes.md has a test that fails when its rule
// breaks. Codes also exercised on real captures live in fixture_diagnosis_test.cpp; these
// cover the ones no capture in tests/fixtures/real shows. Each snapshot is a healthy node
// (one bare-metal ConnectX port, ACTIVE/LinkUp at 200 Gb/s) plus the evidence of the row.

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "counter_window.h"
#include "ibc/core/compare.h"
#include "ibc/core/report.h"
#include "ibc/core/rules.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

constexpr const char* kHealthyNode = R"pb(
  schema_version: 1
  node { hostname: "node1" }
  host {
    collected: true
    memlock_unlimited: true
    modules_known: true
    uverbs_dir_present: true
    uverbs { path: "/dev/infiniband/uverbs0" readable: true writable: true }
  }
  kernel_log { source: "dmesg" lines_scanned: 100 }
  devices {
    name: "mlx5_0"
    fw_ver: "28.39.1002"
    pci {
      address: "0000:0c:00.0"
      current_link_gts: 16
      current_link_lanes: 16
      max_link_gts: 16
      max_link_lanes: 16
    }
    ports {
      port: 1
      state { code: 4 name: "ACTIVE" raw: "4: ACTIVE" }
      phys_state { code: 5 name: "LinkUp" raw: "5: LinkUp" }
      rate_raw: "200 Gb/sec (4X HDR)"
      rate_gbps: 200
      width_lanes: 4
      speed_name: "HDR"
      link_layer: "InfiniBand"
      counters { name: "symbol_error" value: 0 }
      counters { name: "link_downed" value: 0 }
      counters { name: "excessive_buffer_overrun_errors" value: 0 }
      counters { name: "port_xmit_wait" value: 0 }
    }
  }
)pb";

v1::Snapshot snapshot(const std::string& extra) {
  v1::Snapshot s;
  const std::string text = std::string(kHealthyNode) + extra;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &s)) << text;
  return s;
}

// `e` as sysfs reads "CODE: NAME" (the parser's code, name and raw text).
void setEnum(v1::EnumValue* e, int code, const std::string& name) {
  e->Clear();
  e->set_code(code);
  e->set_name(name);
  e->set_raw(std::to_string(code) + ": " + name);
}

std::string describe(const std::vector<v1::Finding>& findings) {
  std::string out;
  for (const auto& f : findings)
    out += f.code() + "/" + f.severity() + " [" + f.device() + "] " + f.summary() + "\n";
  return out.empty() ? "(no findings)\n" : out;
}

const v1::Finding* find(const std::vector<v1::Finding>& findings, const std::string& code) {
  auto it = std::find_if(findings.begin(), findings.end(),
                         [&](const v1::Finding& f) { return f.code() == code; });
  return it == findings.end() ? nullptr : &*it;
}

// Sets a counter's value in the snapshot (port 1 of mlx5_0), adding it when the healthy
// base node does not have it.
void setCounter(v1::Snapshot& s, const std::string& name, uint64_t value) {
  auto* counters = s.mutable_devices(0)->mutable_ports(0)->mutable_counters();
  for (auto& c : *counters) {
    if (c.name() == name) {
      c.set_value(value);
      return;
    }
  }
  auto* c = counters->Add();
  c->set_name(name);
  c->set_value(value);
}

// A 10 s window in which `name` went from `before` (the snapshot) to `after`.
void addWindow(v1::Snapshot& s, const std::string& name, uint64_t before, uint64_t after) {
  setCounter(s, name, before);
  test::addCounterWindow(s, name, after);
}

TEST(Rules, TheHealthyBaseNodeHasNoFindings) {
  const auto findings = diagnoseNode(snapshot(""), {});
  EXPECT_TRUE(findings.empty()) << describe(findings);
}

struct CounterCase {
  const char* counter;
  const char* code;
  const char* old_total_severity;  // non-zero before the window, not moving
  const char* moving_severity;     // grew during the window
};

class CounterRules : public ::testing::TestWithParam<CounterCase> {};

TEST_P(CounterRules, SeverityFollowsWhetherTheCounterMoved) {
  const CounterCase& c = GetParam();
  // The c.code finding of a snapshot whose counter went from 7 to `after` over the window.
  const auto judged = [&c](uint64_t after) {
    auto s = snapshot("");
    addWindow(s, c.counter, 7, after);
    const auto findings = diagnoseNode(s, {});
    const auto* f = find(findings, c.code);
    EXPECT_NE(f, nullptr) << describe(findings);
    return f ? *f : v1::Finding();
  };
  const v1::Finding counted = judged(7);  // counted before the snapshot, still
  EXPECT_EQ(counted.severity(), c.old_total_severity) << counted.ShortDebugString();
  EXPECT_EQ(counted.device(), "mlx5_0");
  EXPECT_EQ(counted.port(), 1u);
  EXPECT_FALSE(counted.action().empty());
  const v1::Finding moving = judged(19);
  EXPECT_EQ(moving.severity(), c.moving_severity) << moving.ShortDebugString();
  EXPECT_THAT(moving.evidence_size() > 0 ? moving.evidence(0) : "", HasSubstr(c.counter));
}

INSTANTIATE_TEST_SUITE_P(
    Codes, CounterRules,
    ::testing::Values(
        CounterCase{"symbol_error", "PHY_ERRORS", "warning", "critical"},
        CounterCase{"link_downed", "LINK_DOWNED", "warning", "critical"},
        CounterCase{"port_xmit_discards", "XMIT_DISCARDS", "warning", "critical"},
        CounterCase{"local_ack_timeout_err", "TRANSPORT_RETRIES", "warning", "critical"},
        CounterCase{"req_cqe_error", "CQE_ERRORS", "warning", "critical"},
        CounterCase{"excessive_buffer_overrun_errors", "BUFFER_OVERRUN", "warning", "critical"},
        // Congestion is the fabric's state, not this node's fault: a level lower.
        CounterCase{"port_xmit_wait", "CONGESTION", "info", "warning"}),
    [](const auto& info) { return std::string(info.param.code); });

struct KernelCase {
  const char* line;
  const char* code;
  const char* severity;
};

class KernelRules : public ::testing::TestWithParam<KernelCase> {};

TEST_P(KernelRules, ALineOfTheDriversOwnFormatGivesItsCode) {
  const KernelCase& c = GetParam();
  auto s = snapshot("");
  auto* line = s.mutable_kernel_log()->add_lines();
  line->set_text(c.line);
  line->set_timestamp("[ 5678.901234]");
  line->set_monotonic_seconds(5678.901234);
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, c.code);
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), c.severity) << describe(findings);
  EXPECT_EQ(f->device(), "mlx5_0") << "the PCI address names the device";
  ASSERT_GT(f->evidence_size(), 0);
  EXPECT_THAT(f->evidence(0), HasSubstr(c.line));
}

INSTANTIATE_TEST_SUITE_P(
    Codes, KernelRules,
    ::testing::Values(
        // drivers/net/ethernet/mellanox/mlx5/core/cmd.c wait_func()
        KernelCase{"mlx5_core 0000:0c:00.0: wait_func:1189:(pid 72061): ACCESS_REG(0x805) "
                   "timeout. Will cause a leak of a command resource",
                   "FW_COMMAND_TIMEOUT", "critical"},
        // mlx5/core/health.c poll_health()
        KernelCase{"mlx5_core 0000:0c:00.0: poll_health:801:(pid 0): device's health "
                   "compromised - reached miss count",
                   "DEVICE_FATAL", "critical"},
        // mlx5/core/events.c temp_warn()
        KernelCase{"mlx5_core 0000:0c:00.0: temp_warn:165:(pid 0): High temperature on sensors "
                   "with bit set 0 1",
                   "MODULE_TEMPERATURE", "critical"},
        // drivers/pci/pci.c __pcie_print_link_status()
        KernelCase{"mlx5_core 0000:0c:00.0: 63.008 Gb/s available PCIe bandwidth, limited by "
                   "8.0 GT/s PCIe x8 link at 0000:00:03.0 (capable of 252.048 Gb/s with 16.0 "
                   "GT/s PCIe x16 link)",
                   "PCIE_LINK_DEGRADED", "warning"}),
    [](const auto& info) { return std::string(info.param.code); });

TEST(Rules, PcieLinkDegradedFromTheDevicesOwnLinkAttributesOnBareMetalOnly) {
  auto s = snapshot("");
  auto* pci = s.mutable_devices(0)->mutable_pci();
  pci->set_current_link_gts(8);
  pci->set_current_link_lanes(8);
  auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PCIE_LINK_DEGRADED");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), "mlx5_0");
  // A VF's link attributes describe an emulated link ("2.5 GT/s x1" is routine): no finding.
  s.mutable_devices(0)->set_is_virtual_function(true);
  findings = diagnoseNode(s, {});
  EXPECT_EQ(find(findings, "PCIE_LINK_DEGRADED"), nullptr) << describe(findings);
}

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

constexpr const char* kTwoNodeRun = R"pb(
  nccl_tests {
    source: "all_reduce.txt"
    parsed {
      test_name: "all_reduce_perf"
      nranks: 16
      hosts: "node1"
      hosts: "node2"
      format: "modern"
      rows { size_bytes: 1048576 oop_busbw_gbs: 8.1 ip_busbw_gbs: 8.0 oop_wrong: 0 ip_wrong: 0 }
      rows { size_bytes: 8589934592 oop_busbw_gbs: %s ip_busbw_gbs: 8.0 oop_wrong: %s ip_wrong: 0 }
    }
  }
)pb";

std::string twoNodeRun(const char* peak_busbw, const char* wrong) {
  std::string t = kTwoNodeRun;
  t.replace(t.find("%s"), 2, peak_busbw);
  t.replace(t.find("%s"), 2, wrong);
  return t;
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

TEST(Rules, MemlockLimitIsCriticalOnceRegistrationsFailUnderIt) {
  auto s = snapshot("");
  s.mutable_host()->set_memlock_unlimited(false);
  s.mutable_host()->set_memlock_soft_bytes(64 * 1024);
  s.mutable_host()->set_memlock_hard_bytes(64 * 1024);
  auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "MEMLOCK_LIMIT");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  auto* e = s.add_nccl_logs()->mutable_parsed()->add_events();
  e->set_kind(v1::NcclEvent::REG_MR_FAILED);
  e->set_host("node1");
  e->set_text("NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory");
  findings = diagnoseNode(s, {});
  f = find(findings, "MEMLOCK_LIMIT");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "critical");
}

TEST(Rules, NcclTransportErrorsOnAVmWithCleanVfsEscalateTheNode) {
  auto s = snapshot(R"pb(
    nccl_logs {
      source: "rank3.log"
      parsed {
        hosts: "node1"
        events {
          kind: IB_COMPLETION_ERROR
          host: "node1"
          rank: 3
          status: 12
          vendor_err: 129
          text: "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<45678> with error 12, "
                "opcode 0, len 0, vendor err 129"
        }
      }
    }
  )pb");
  // Bare metal: the customer owns the host, nothing to escalate.
  auto findings = diagnoseNode(s, {});
  ASSERT_NE(find(findings, "NCCL_IB_COMPLETION_ERROR"), nullptr) << describe(findings);
  EXPECT_EQ(find(findings, "ESCALATE_HOST_INSPECTION"), nullptr) << describe(findings);
  // The same on a VM whose only device is a clean VF: the PF side must look.
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_devices(0)->set_is_virtual_function(true);
  findings = diagnoseNode(s, {});
  const auto* f = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), "") << "node-level: no device to pin the NCCL error on";
  std::string evidence;
  for (const auto& line : f->evidence()) evidence += line + "\n";
  EXPECT_THAT(evidence, HasSubstr("NCCL_IB_COMPLETION_ERROR"));
  EXPECT_THAT(evidence, HasSubstr("VF mlx5_0"));
}

TEST(Rules, APortStateThatMeansNothingIsAWarningNotASilentOk) {
  auto s = snapshot("");
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->Clear();
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->set_raw("Act?[31mive");
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->set_code(-1);
  auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PORT_STATE_UNKNOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), "mlx5_0");
  EXPECT_EQ(f->port(), 1u);
  EXPECT_THAT(f->summary(), HasSubstr("\"Act?[31mive\""));

  // Expected but not read (the collector leaves an empty state for a missing file).
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->Clear();
  findings = diagnoseNode(s, {});
  f = find(findings, "PORT_STATE_UNKNOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->summary(), HasSubstr("could not be read"));

  // A paste with no state at all (perfquery, a counters listing) says nothing about it.
  s.mutable_devices(0)->mutable_ports(0)->clear_state();
  findings = diagnoseNode(s, {});
  EXPECT_EQ(find(findings, "PORT_STATE_UNKNOWN"), nullptr) << describe(findings);

  // With the physical link known down, PHYS_LINK_NOT_UP says it all.
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->set_raw("garbage");
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->set_code(-1);
  *s.mutable_devices(0)->mutable_ports(0)->mutable_phys_state() = v1::EnumValue();
  s.mutable_devices(0)->mutable_ports(0)->mutable_phys_state()->set_code(2);
  s.mutable_devices(0)->mutable_ports(0)->mutable_phys_state()->set_name("Polling");
  s.mutable_devices(0)->mutable_ports(0)->mutable_phys_state()->set_raw("2: Polling");
  findings = diagnoseNode(s, {});
  EXPECT_EQ(find(findings, "PORT_STATE_UNKNOWN"), nullptr) << describe(findings);
  EXPECT_NE(find(findings, "PHYS_LINK_NOT_UP"), nullptr) << describe(findings);
}

TEST(Rules, ADisabledPortIsOneCriticalWhoseNextStepIsToEnableIt) {
  auto s = snapshot("");
  auto* port = s.mutable_devices(0)->mutable_ports(0);
  setEnum(port->mutable_state(), 1, "DOWN");
  setEnum(port->mutable_phys_state(), 3, "Disabled");
  const auto findings = diagnoseNode(s, {});
  int criticals = 0;
  for (const auto& f : findings) criticals += f.severity() == "critical" ? 1 : 0;
  EXPECT_EQ(criticals, 1) << describe(findings);
  const auto* f = find(findings, "PORT_DOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->summary(), HasSubstr("disabled"));
  EXPECT_THAT(f->action(), HasSubstr("Enable the port"));
  EXPECT_THAT(f->action(), Not(HasSubstr("reseat")));
  EXPECT_EQ(find(findings, "PHYS_LINK_NOT_UP"), nullptr) << describe(findings);

  // Polling: still one critical, and the next step is the cable.
  setEnum(port->mutable_phys_state(), 2, "Polling");
  const auto polling = diagnoseNode(s, {});
  f = find(polling, "PORT_DOWN");
  ASSERT_NE(f, nullptr) << describe(polling);
  EXPECT_THAT(f->action(), HasSubstr("cable"));
  EXPECT_EQ(find(polling, "PHYS_LINK_NOT_UP"), nullptr) << describe(polling);
}

TEST(Rules, ADeviceListedWithoutItsPortsIsNeverOk) {
  auto s = snapshot("");
  s.mutable_devices(0)->clear_ports();
  s.mutable_devices(0)->set_seen_in("ibstat paste");
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PORT_STATE_UNKNOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), s.devices(0).name());
}

TEST(Rules, TransportErrorsOnAVfWhoseStateIsUnknownDoNotClaimItIsClean) {
  auto s = snapshot("");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_devices(0)->set_is_virtual_function(true);
  auto* retries = s.mutable_devices(0)->mutable_ports(0)->add_hw_counters();
  retries->set_name("local_ack_timeout_err");
  retries->set_value(131);
  auto findings = diagnoseNode(s, {});
  ASSERT_NE(find(findings, "TRANSPORT_RETRIES"), nullptr) << describe(findings);
  ASSERT_NE(find(findings, "ESCALATE_HOST_INSPECTION"), nullptr) << describe(findings);
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->Clear();
  findings = diagnoseNode(s, {});
  ASSERT_NE(find(findings, "PORT_STATE_UNKNOWN"), nullptr) << describe(findings);
  EXPECT_EQ(find(findings, "ESCALATE_HOST_INSPECTION"), nullptr) << describe(findings);
}

TEST(Rules, APhysicalFindingOnAVfEscalatesThatDevice) {
  auto s = snapshot("");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_devices(0)->set_is_virtual_function(true);
  addWindow(s, "link_downed", 2, 5);
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "critical") << "as severe as the physical evidence";
  EXPECT_EQ(f->device(), "mlx5_0");
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

// Issue 10, hardware described rightly. A device in a VM (CPU flag hypervisor) without
// PCI evidence is not called a VF in summaries or evidence.
TEST(Wording, ADeviceInAVmWithoutPciEvidenceIsNotCalledAVf) {
  auto s = snapshot("");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_node()->set_virtualization_evidence("CPU flag hypervisor");
  setCounter(s, "symbol_error", 40);
  const auto findings = diagnoseNode(s, {});
  const auto* esc = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(esc, nullptr) << describe(findings);
  EXPECT_THAT(esc->summary(), Not(HasSubstr("is a virtual function")));
  EXPECT_THAT(esc->summary(), HasSubstr("no PCI evidence that it is a VF"));
  bool named = false;
  for (const auto& e : esc->evidence()) {
    EXPECT_NE(e.rfind("VF ", 0), 0u) << e;
    named |= e.find("device mlx5_0") == 0 && e.find("CPU flag hypervisor") != std::string::npos;
  }
  EXPECT_TRUE(named) << describe(findings);
  for (const auto& f : findings) {
    EXPECT_THAT(f.action(), Not(HasSubstr("This is a virtual function")));
  }
}

// The same for transport errors alone (the symptom path): a device in a VM (CPU flag
// hypervisor) without PCI evidence is not said to be a VF in summary, evidence or steps,
// and neither is the node-level escalation of an NCCL symptom.
TEST(Wording, TransportErrorsInAVmWithoutPciEvidenceDoNotCallTheDeviceAVf) {
  auto s = snapshot("");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_node()->set_virtualization_evidence("CPU flag hypervisor");
  auto* retries = s.mutable_devices(0)->mutable_ports(0)->add_hw_counters();
  retries->set_name("local_ack_timeout_err");
  retries->set_value(131);
  const auto findings = diagnoseNode(s, {});
  const auto* esc = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(esc, nullptr) << describe(findings);
  EXPECT_THAT(esc->summary(), Not(HasSubstr("VF-side")));
  EXPECT_THAT(esc->summary(), Not(HasSubstr("beyond the VF")));
  EXPECT_THAT(esc->summary(), HasSubstr("no PCI evidence that it is a VF"));
  EXPECT_THAT(esc->action(), Not(HasSubstr("this VF")));
  for (const auto& e : esc->evidence()) EXPECT_NE(e.rfind("VF ", 0), 0u) << e;
}

TEST(Wording, INITWithAnUnknownPhysicalStateDoesNotClaimTheLinkIsUp) {
  auto s = snapshot("");
  auto* port = s.mutable_devices(0)->mutable_ports(0);
  setEnum(port->mutable_state(), 2, "INIT");
  port->clear_phys_state();
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PORT_NOT_ACTIVE_SM");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->summary(), Not(HasSubstr("while the physical link is up")));
  EXPECT_THAT(f->summary(), HasSubstr("physical state is unknown"));
}

TEST(Wording, UnparsedStatesAreSaidInWordsAndEthernetOnlyAdaptersGetARemark) {
  auto s = snapshot("");
  auto* dev = s.mutable_devices(0);
  dev->mutable_pci()->set_device_id("0x1016");  // ConnectX-4 Lx VF: Ethernet only
  auto* port = dev->mutable_ports(0);
  port->mutable_state()->Clear();
  port->mutable_state()->set_code(9);  // what the parser keeps of a state it does not know
  port->mutable_state()->set_raw("9: BOGUS");
  port->set_rate_raw("25 Gb/sec (1X EDR)");
  port->set_rate_gbps(25);
  AnalyzedNode node;
  node.snapshot = s;
  node.findings = diagnoseNode(s, {});
  const auto report = buildReport({node});
  const std::string text = renderText(report, {});
  EXPECT_THAT(text, Not(HasSubstr("?9")));
  EXPECT_THAT(text, HasSubstr("unknown (\"9: BOGUS\")"));
  EXPECT_THAT(text,
              HasSubstr("remark: node1 mlx5_0 port 1: ConnectX-4 Lx VF (PCI device 0x1016) is an "
                        "Ethernet-only adapter, yet link_layer says InfiniBand"));
  ASSERT_EQ(report.nodes(0).ports_size(), 1);
  EXPECT_THAT(report.nodes(0).ports(0).remark(), HasSubstr("Ethernet-only"));

  // A rate without an InfiniBand speed name is not said to name one.
  AnalyzedNode bare_node = node;
  bare_node.snapshot.mutable_devices(0)->mutable_ports(0)->set_rate_raw("25");
  bare_node.snapshot.mutable_devices(0)->mutable_ports(0)->clear_speed_name();
  const auto bare = buildReport({bare_node});
  EXPECT_THAT(bare.nodes(0).ports(0).remark(), Not(HasSubstr("names an InfiniBand speed")));
  EXPECT_THAT(bare.nodes(0).ports(0).remark(),
              HasSubstr("yet link_layer says InfiniBand: the evidence"));

  // A real RoCE port: the rate is shown as a number, not an InfiniBand speed name.
  port->set_link_layer("Ethernet");
  dev->mutable_pci()->set_device_id("0x101d");
  AnalyzedNode roce;
  roce.snapshot = s;
  const std::string roce_text = renderText(buildReport({roce}), {});
  EXPECT_THAT(roce_text, HasSubstr("25 Gb/s"));
  EXPECT_THAT(roce_text, Not(HasSubstr("EDR")));
}

}  // namespace
}  // namespace ibc::core

#pragma once

// SYNTHETIC snapshots for the rule tests (rules_*_test.cpp, report_test.cpp,
// compare_test.cpp, job_verdict_test.cpp): a healthy node (one bare-metal ConnectX port,
// ACTIVE/LinkUp at 200 Gb/s) plus the evidence of a test, and the helpers that set that evidence
// and find what the rules made of it.

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "counter_window.h"
#include "ibc/core/analyzed_node.h"
#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::test {

namespace v1 = ::ibcollect::v1;

inline constexpr const char* kHealthyNode = R"pb(
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

inline v1::Snapshot snapshot(const std::string& extra) {
  v1::Snapshot s;
  const std::string text = std::string(kHealthyNode) + extra;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &s)) << text;
  return s;
}

// `e` as sysfs reads "CODE: NAME" (the parser's code, name and raw text).
inline void setEnum(v1::EnumValue* e, int code, const std::string& name) {
  e->Clear();
  e->set_code(code);
  e->set_name(name);
  e->set_raw(std::to_string(code) + ": " + name);
}

inline std::string describe(const std::vector<v1::Finding>& findings) {
  std::string out;
  for (const auto& f : findings)
    out += f.code() + "/" + f.severity() + " [" + f.device() + "] " + f.summary() + "\n";
  return out.empty() ? "(no findings)\n" : out;
}

inline const v1::Finding* find(const std::vector<v1::Finding>& findings, const std::string& code) {
  auto it = std::find_if(findings.begin(), findings.end(),
                         [&](const v1::Finding& f) { return f.code() == code; });
  return it == findings.end() ? nullptr : &*it;
}

// Sets a counter's value in the snapshot (port 1 of mlx5_0), adding it when the healthy
// base node does not have it.
inline void setCounter(v1::Snapshot& s, const std::string& name, uint64_t value) {
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
inline void addWindow(v1::Snapshot& s, const std::string& name, uint64_t before, uint64_t after) {
  setCounter(s, name, before);
  addCounterWindow(s, name, after);
}

// A node of a job as the comparison finds it: by its Slurm name and host name (either may
// be empty), with sysfs read (so no devices is a finding).
inline core::AnalyzedNode jobNode(const std::string& slurm, const std::string& hostname) {
  core::AnalyzedNode n;
  n.snapshot.mutable_node()->set_slurm_node(slurm);
  n.snapshot.mutable_node()->set_hostname(hostname);
  n.snapshot.mutable_node()->set_source("/");
  return n;
}

inline constexpr const char* kTwoNodeRun = R"pb(
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

inline std::string twoNodeRun(const char* peak_busbw, const char* wrong) {
  std::string t = kTwoNodeRun;
  t.replace(t.find("%s"), 2, peak_busbw);
  t.replace(t.find("%s"), 2, wrong);
  return t;
}

}  // namespace ibc::test

#include "synthetic_job.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "os_doubles.h"

namespace ibc::bench {

namespace v1 = ::ibcollect::v1;

v1::Snapshot collectTree(const std::string& root, const agent::CollectOptions& extra) {
  os::SystemClock clock;
  return test::collectFixtureTree(root, clock, extra);
}

std::vector<v1::Snapshot> captureTemplates(const std::string& fixtures_dir) {
  const std::string fx = fixtures_dir + "/real/sysfs/";
  return {collectTree(fx + "sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures"),
          collectTree(fx + "sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures"),
          collectTree(fx + "sysfs_node-exporter-fixture_mlx4_0_counters-ext.tree")};
}

v1::Snapshot syntheticNode(const std::vector<v1::Snapshot>& templates, int index,
                           const std::string& name, const std::string& job_id) {
  v1::Snapshot s = templates[static_cast<std::size_t>(index) % templates.size()];
  s.mutable_node()->set_hostname(name);
  s.mutable_node()->set_slurm_node(name);
  if (!job_id.empty()) s.mutable_node()->set_job_id(job_id);
  auto* w = s.add_window();
  w->set_interval_seconds(10);
  for (const auto& d : s.devices()) {
    for (const auto& p : d.ports()) {
      auto* ps = w->add_ports();
      ps->set_device(d.name());
      ps->set_port(p.port());
      *ps->mutable_counters() = p.counters();
      if (index % 50 == 7) {
        for (auto& c : *ps->mutable_counters()) {
          if (c.name() == "symbol_error") c.set_value(c.value() + 40);
        }
      }
    }
  }
  return s;
}

std::string nodeName(const std::string& prefix, int index) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%04d", index);
  return prefix + digits;
}

NodeBenchArgs nodeBenchArgs(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FIXTURES_DIR [max_nodes]\n", argv[0]);
    std::exit(3);
  }
  return {argv[1], argc > 2 ? std::atoi(argv[2]) : 2000, captureTemplates(argv[1])};
}

}  // namespace ibc::bench

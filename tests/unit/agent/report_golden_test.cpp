// Golden files for the report: the three real captures of the 3-node --job benchmark
// (bench/job_text_output.sh) collected through the probes, diagnosed as one job and
// rendered as text at 80 and 120 columns and as JSON, compared byte for byte with
// tests/fixtures/golden/. After an intended change of the layout, regenerate with
//   IBC_UPDATE_GOLDEN=1 build/test/tests/unit/ibc_agent_tests --gtest_filter='ReportGolden*'
// and review the diff of tests/fixtures/golden/ like code.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fixtures.h"
#include "ibc/agent/collect.h"
#include "ibc/core/job_verdict.h"
#include "ibc/core/report.h"

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

// A fixed clock: the collection time is part of the report.
class FixedClock : public Clock {
 public:
  std::chrono::system_clock::time_point now() const override {
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(1764000000000));
  }
  std::chrono::steady_clock::time_point steadyNow() const override { return {}; }
  void sleepUntil(std::chrono::steady_clock::time_point) override {}
};

core::AnalyzedNode collected(const std::string& tree, const std::string& name) {
  const std::string root = ibc::test::fixturePath("real/sysfs/" + tree);
  RootedFilesystem host(root), files("");
  NoRunner runner;
  FixedClock clock;
  NoEnv env;
  CollectOptions o;
  o.root = root;
  core::AnalyzedNode n;
  n.snapshot = collectSnapshot(o, HostSeams{host, files, runner, clock, env, nullptr, nullptr});
  n.snapshot.mutable_node()->set_slurm_node(name);
  n.snapshot.mutable_node()->set_hostname(name);
  n.snapshot.mutable_node()->set_source("/" + name);  // not this checkout's path
  n.snapshot.mutable_node()->set_collected_at_unix_ms(1764000000000);
  n.snapshot_file = "/tmp/job/" + name + ".ibsnap";
  return n;
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

void compareWithGolden(const std::string& name, const std::string& actual) {
  const std::string path = ibc::test::fixturePath("golden/" + name);
  if (const char* u = std::getenv("IBC_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing: regenerate with IBC_UPDATE_GOLDEN=1";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str())
      << "differs from " << path << " (if intended: IBC_UPDATE_GOLDEN=1, then review the diff)";
}

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

}  // namespace
}  // namespace ibc::agent

#include "console_fixtures.h"

#include <gtest/gtest.h>

#include <QSignalSpy>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>

#include "fixtures.h"
#include "ibc/agent/analyze.h"
#include "ibc/core/nccl_tests.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/os/os.h"
#include "os_doubles.h"
#include "sysfs_json.h"
#include "test_pki.h"

namespace ibc::console {

namespace {

const char* const kJob[] = {
    "good_8xhdr200-all-active",
    "ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000",
    "ib_intf_operstate_down_ib4-ipoib-down-carrier-changes-98",
    "stuck_ib_intf_two-ports-state-INIT-ipoib-down",
};

}  // namespace

// Collects a real capture tree the way `ibcollect snapshot --root` does.
v1::Snapshot collectTree(const std::string& root) {
  agent::RootedFilesystem files("");
  ibc::test::NoCommands runner;
  agent::SystemClock clock;
  ibc::test::MapEnvironment env;
  agent::HostSeams seams{files, files, runner, clock, env, nullptr, nullptr};
  agent::AnalyzeInputs in;
  in.root = root;
  auto out = agent::analyzeInputs(
      in, {}, seams,
      [](const std::string& r) { return std::make_unique<agent::RootedFilesystem>(r); }, "test");
  EXPECT_EQ(out.nodes.size(), 1u);
  return out.nodes.empty() ? v1::Snapshot{} : out.nodes.front().snapshot;
}

// The job as .ibsnap files, written once per test program.
const std::vector<std::string>& jobFiles() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> out;
    const std::string dir = ibc::test::makeTempDir("console-job");
    int i = 1;
    for (const char* name : kJob) {
      const std::string tree = dir + "/gpu0" + std::to_string(i);
      ibc::test::materializeSysfsJson(
          ibc::test::readFixture(std::string("real/sysfs/sysfs-json_gcm-learn_") + name + ".json"),
          tree);
      const std::string file = tree + ".ibsnap";
      std::ofstream(file, std::ios::binary)
          << core::encodeSnapshotFile(core::wrapUnsigned(collectTree(tree)));
      out.push_back(file);
      ++i;
    }
    return out;
  }();
  return files;
}

const JobData& job() {
  static const JobData data = loadSnapshotFiles(jobFiles());
  return data;
}

std::shared_ptr<LoadedJob> loadedJob(JobData j) {
  auto out = std::make_shared<LoadedJob>();
  out->data = std::make_unique<JobData>(std::move(j));
  out->grid = NodeGridModel::prepare(out->data.get());
  return out;
}

// Node `i` of `j` whole, read again from its file (the job keeps its snapshots slim).
v1::Snapshot wholeSnapshot(const JobData& j, std::size_t i) {
  auto whole = readFullSnapshot(j, static_cast<int>(i));
  EXPECT_TRUE(whole.ok()) << (whole.ok() ? "" : whole.error().message);
  return whole.ok() ? std::move(*whole) : v1::Snapshot{};
}

std::vector<v1::Snapshot> wholeSnapshots(const JobData& j) {
  std::vector<v1::Snapshot> out;
  for (std::size_t i = 0; i < j.snapshots.size(); ++i) out.push_back(wholeSnapshot(j, i));
  return out;
}

// The job's snapshots, each with a real all_reduce_perf output attached (busbw to compare).
std::vector<v1::Snapshot> withNcclTests(std::vector<v1::Snapshot> snaps) {
  const char* const outputs[] = {
      "real/nccl-tests/"
      "nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-ztan-fork.txt",
      "real/nccl-tests/"
      "nccl-tests_all_reduce_perf_1node-8xa100-validation-off-legacy-format_superbenchmark-tests-"
      "data.txt",
      "real/nccl-tests/nccl-tests_all_reduce_perf_rccl-tail-asterisk-footer_rccl-pr-2078.txt",
      "real/nccl-tests/"
      "nccl-tests_all_reduce_perf_ring-large-sizes-busbw95_nccl-tests-issue-252.txt",
  };
  for (std::size_t i = 0; i < snaps.size() && i < 4; ++i) {
    auto* t = snaps[i].add_nccl_tests();
    *t->mutable_parsed() = core::parseNcclTests(ibc::test::readFixture(outputs[i]));
  }
  return snaps;
}

// Real captures that hold port counters (the gcm job's captures hold none): mlx4 QDR with
// two ports, mlx4 with counters_ext, mlx5 with hw_counters errors, hfi1 Omni-Path.
const std::vector<std::string> kCounterFiles = {"mlx4-qdr.ibsnap", "mlx4-ext.ibsnap", "mlx5.ibsnap",
                                                "hfi1.ibsnap"};

const std::vector<v1::Snapshot>& counterSnapshots() {
  static const std::vector<v1::Snapshot> snaps = [] {
    std::vector<v1::Snapshot> out;
    for (const char* tree :
         {"real/sysfs/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures",
          "real/sysfs/sysfs_node-exporter-fixture_mlx4_0_counters-ext.tree",
          "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures",
          "real/sysfs/sysfs_procfs-fixture_hfi1_0_omnipath.tree/fixtures"})
      out.push_back(collectTree(ibc::test::fixturePath(tree)));
    return out;
  }();
  return snaps;
}

// The counter captures as if taken with --window 10 (synthetic second samples, in memory):
// every counter read again unchanged, except on the mlx4 QDR capture's port 1 where
// symbol_error grew by 50 and port_xmit_wait went backwards (a reset: no delta).
JobData windowedJob() {
  std::vector<v1::Snapshot> snaps = counterSnapshots();
  for (std::size_t i = 0; i < snaps.size(); ++i) {
    auto* w = snaps[i].add_window();
    w->set_interval_seconds(10);
    for (const auto& d : snaps[i].devices()) {
      for (const auto& p : d.ports()) {
        auto* s = w->add_ports();
        s->set_device(d.name());
        s->set_port(p.port());
        *s->mutable_counters() = p.counters();
        *s->mutable_counters_ext() = p.counters_ext();
        *s->mutable_hw_counters() = p.hw_counters();
        if (i != 0 || p.port() != 1) continue;
        for (auto& c : *s->mutable_counters()) {
          if (c.name() == "symbol_error") c.set_value(c.value() + 50);
          if (c.name() == "port_xmit_wait") c.set_value(0);
        }
      }
    }
  }
  return diagnoseSnapshots(snaps, kCounterFiles);
}

// The real mlx5 capture with hw_counters errors (procfs fixture).
v1::Snapshot mlx5Snapshot() {
  return collectTree(ibc::test::fixturePath(
      "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures"));
}

const std::string& mlx5File() {
  static const std::string file = [] {
    const std::string path = ibc::test::makeTempDir("console-mlx5") + "/mlx5.ibsnap";
    std::ofstream(path, std::ios::binary)
        << core::encodeSnapshotFile(core::wrapUnsigned(mlx5Snapshot()));
    return path;
  }();
  return file;
}

JobData busbwJob(int n, const std::map<int, double>& slow) {
  const int healthy = nodeLabelled(job(), "node1720 (gpu01.ibsnap)");
  EXPECT_GE(healthy, 0);
  const v1::Snapshot base =
      withNcclTests({wholeSnapshot(job(), static_cast<std::size_t>(std::max(healthy, 0)))}).front();
  double peak = 0;
  for (const auto& t : base.nccl_tests())
    for (const auto& r : t.parsed().rows())
      peak = std::max({peak, r.oop_busbw_gbs(), r.ip_busbw_gbs()});
  EXPECT_GT(peak, 0);
  std::vector<v1::Snapshot> snaps;
  std::vector<std::string> files;
  for (int i = 0; i < n; ++i) {
    v1::Snapshot s = base;
    char name[32];
    std::snprintf(name, sizeof name, "gpu-h100-r07-n%04d", i);
    s.mutable_node()->set_hostname(name);
    s.mutable_node()->set_slurm_node(name);
    s.mutable_node()->set_source(std::string("synthetic:") + name);
    const auto it = slow.find(i);
    const double want = it != slow.end() ? it->second : 330 + i % 25;
    for (auto& t : *s.mutable_nccl_tests()) {
      for (auto& r : *t.mutable_parsed()->mutable_rows()) {
        r.set_oop_busbw_gbs(r.oop_busbw_gbs() * want / peak);
        r.set_ip_busbw_gbs(r.ip_busbw_gbs() * want / peak);
      }
    }
    snaps.push_back(std::move(s));
    files.push_back(std::string(name) + ".ibsnap");
  }
  return diagnoseSnapshots(std::move(snaps), files);
}

int nodeNamed(const JobData& j, const std::string& name) {
  for (int i = 0; i < j.report.nodes_size(); ++i)
    if (j.report.nodes(i).node() == name) return i;
  return -1;
}

void ConsoleUi::SetUp() {
  window_ = std::make_unique<MainWindow>();
  window_->setErrorSink([this](const ErrorAdvice& a) { errors_.push_back(a); });
  window_->resize(1400, 860);
  window_->show();
}

void ConsoleUi::openFiles(const QStringList& files, const std::string& ca) {
  window_->setCollector({"", ca, "", ""}, {});
  QSignalSpy done(window_.get(), &MainWindow::finished);
  window_->openFiles(files, false);
  ASSERT_TRUE(done.count() > 0 || done.wait(60000));
}

// The job's nodes as cloud VMs see them (every device's PF is the provider's): the real gcm
// captures with the virtualization evidence a VM's snapshot carries (SYNTHETIC field).
const JobData& vmJob() {
  static const JobData data = [] {
    std::vector<v1::Snapshot> snaps = wholeSnapshots(job());
    for (auto& s : snaps) {
      s.mutable_node()->set_virtual_machine(true);
      s.mutable_node()->set_virtualization_evidence("CPU flag hypervisor");
    }
    return diagnoseSnapshots(snaps, jobFiles());
  }();
  return data;
}

SignedJob signedVmJob(const std::function<void(std::vector<v1::Snapshot>&)>& edit) {
  static const auto ca = ibc::test::TestCa::create("console plan CA");
  SignedJob out;
  std::vector<v1::Snapshot> snaps = wholeSnapshots(vmJob());
  for (auto& s : snaps) s.mutable_node()->set_job_id("4242");
  if (edit) edit(snaps);
  for (const auto& s : snaps) {
    const auto cred = ca.issue(ibc::test::agentSpec("acme", core::snapshotNodeName(s.node())));
    auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
    EXPECT_TRUE(signer.ok());
    auto env = signer->sign(s);
    EXPECT_TRUE(env.ok());
    out.envelopes.push_back(core::encodeSnapshotFile(*env));
  }
  out.job = diagnoseSnapshots(snaps, jobFiles());
  out.job.signed_files = out.envelopes;
  const auto alice = ca.issue(ibc::test::supportSpec("alice"));
  auto exporter = core::SnapshotSigner::fromPem(alice.certificate_pem, alice.key_pem);
  EXPECT_TRUE(exporter.ok());
  out.exporter = std::make_unique<core::SnapshotSigner>(std::move(*exporter));
  return out;
}

core::BundleMembers exportedBundle(const SignedJob& s, const std::vector<int>& nodes, bool redact) {
  std::vector<core::BundleSnapshotInput> inputs;
  for (const int n : nodes) inputs.push_back({s.envelopes[static_cast<std::size_t>(n)], "n"});
  core::BundleExportOptions o;
  o.redact = redact;
  auto members = core::buildBundle(inputs, o, *s.exporter);
  EXPECT_TRUE(members.ok()) << members.error().message;
  return members.ok() ? *members : core::BundleMembers{};
}

int rowOfPort(const NodeGridModel& m, const QString& node, const QString& device) {
  for (int r = 0; r < m.rowCount(); ++r) {
    if (m.index(r, NodeGridModel::Node).data().toString() == node &&
        m.index(r, NodeGridModel::Device).data().toString() == device)
      return r;
  }
  return -1;
}

int rowOfNodePort(const NodeGridModel& m, int node, int port) {
  for (int r = 0; r < m.rowCount(); ++r) {
    if (m.index(r, 0).data(NodeGridModel::NodeIndexRole).toInt() == node &&
        m.index(r, NodeGridModel::Port).data().toInt() == port)
      return r;
  }
  return -1;
}

int nodeLabelled(const JobData& j, const std::string& label) {
  for (int i = 0; i < j.report.nodes_size(); ++i) {
    if (j.report.nodes(i).label() == label) return i;
  }
  return -1;
}

}  // namespace ibc::console

#pragma once

// The console tests' real jobs and helpers, shared by every tests/unit/console/*_test.cpp.
//
// The job: the four facebookresearch/gcm captures of 8x HDR nodes (tests/fixtures/real/sysfs,
// PROVENANCE.md) collected as `ibcollect snapshot --root` does and written as .ibsnap files:
// a healthy node, one whose 8 ports trained at 100 Gb/s, one whose ib4 is down after 98
// carrier changes, one with two ports stuck in INIT. Two of them are the same host (node1720),
// as real fetches give. Built once per test program.

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QStringList>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ibc/console/job_data.h"
#include "ibc/console/job_loader.h"
#include "ibc/console/node_grid_model.h"
#include "ibc/core/bundle.h"
#include "ibc/core/signing.h"
#include "ibcollect/v1/snapshot.pb.h"
#include "main_window.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

// QAbstractItemModelTester's mode in every console test: the first violation aborts.
inline constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

// Collects a real capture tree the way `ibcollect snapshot --root` does.
v1::Snapshot collectTree(const std::string& root);

// The job as .ibsnap files (gpu01..gpu04.ibsnap in a temp dir), written once per program.
const std::vector<std::string>& jobFiles();
// The job loaded from its files (loadSnapshotFiles), once per program.
const JobData& job();

// `j` as the window hands a loaded job to its pages: the grid's rows prepared as the loader
// does (held by a shared_ptr: a page's worker keeps it alive through shared_from_this).
std::shared_ptr<LoadedJob> loadedJob(JobData j);

// Node `i` of `j` whole, read again from its file (the job keeps its snapshots slim).
v1::Snapshot wholeSnapshot(const JobData& j, std::size_t i);
std::vector<v1::Snapshot> wholeSnapshots(const JobData& j);

// The job's snapshots, each with a real all_reduce_perf output attached (busbw to compare).
std::vector<v1::Snapshot> withNcclTests(std::vector<v1::Snapshot> snaps);

// Real captures that hold port counters (the gcm job's captures hold none): mlx4 QDR with
// two ports, mlx4 with counters_ext, mlx5 with hw_counters errors, hfi1 Omni-Path.
extern const std::vector<std::string> kCounterFiles;
const std::vector<v1::Snapshot>& counterSnapshots();
// The counter captures as if taken with --window 10 (synthetic second samples, in memory):
// every counter read again unchanged, except on the mlx4 QDR capture's port 1 where
// symbol_error grew by 50 and port_xmit_wait went backwards (a reset: no delta).
JobData windowedJob();
// The real mlx5 capture with hw_counters errors (procfs fixture).
v1::Snapshot mlx5Snapshot();
// mlx5Snapshot() as an unsigned .ibsnap file (mlx5.ibsnap in a temp dir), written once.
const std::string& mlx5File();

// A SYNTHETIC job of `n` nodes made from the real healthy capture (gpu01) and a real
// all_reduce_perf output (withNcclTests): node i is gpu-h100-r07-nNNNN, each busbw row scaled
// so that its peak is 330 + i % 25 GB/s, or `slow[i]` GB/s for the slow nodes. Diagnosed as
// the console does.
JobData busbwJob(int n, const std::map<int, double>& slow);
// The node whose report name (not label) is `name`, -1 when none.
int nodeNamed(const JobData& j, const std::string& name);

// The job's nodes as cloud VMs see them (every device's PF is the provider's): the real gcm
// captures with the virtualization evidence a VM's snapshot carries (SYNTHETIC field).
const JobData& vmJob();

// The VM nodes as signed .ibsnap bytes (each signed by its node's agent certificate, job id
// 4242), for plans and bundles over the same bytes; `edit` changes the snapshots first.
struct SignedJob {
  JobData job;
  std::vector<std::string> envelopes;              // per node: the signed .ibsnap bytes
  std::unique_ptr<core::SnapshotSigner> exporter;  // alice's support certificate
};
SignedJob signedVmJob(const std::function<void(std::vector<v1::Snapshot>&)>& edit = {});
// The bundle core::buildBundle writes of `nodes` of `s`.
core::BundleMembers exportedBundle(const SignedJob& s, const std::vector<int>& nodes, bool redact);

// The grid row of `node`'s `device` (first port), -1 when none.
int rowOfPort(const NodeGridModel& m, const QString& node, const QString& device);
// The grid row of node index `node`'s port `port`, -1 when none.
int rowOfNodePort(const NodeGridModel& m, int node, int port);
// The node with this label, -1 when none.
int nodeLabelled(const JobData& j, const std::string& label);

// A `Page` over its own `Model`, shown (1400x800) with job() loaded: the page tests' start.
template <class Model, class Page>
struct PageOnJob {
  PageOnJob() {
    page.resize(1400, 800);
    page.show();
    page.loadJob(loaded.get());
  }
  Model model;
  Page page{&model};
  std::shared_ptr<LoadedJob> loaded = loadedJob(job());
};

// The console's window, shown (1400x860), its errors collected instead of shown in a dialog.
class ConsoleUi : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override { window_.reset(); }

  // Opens `files` (signatures checked against `ca` when not empty); returns once loaded.
  void openFiles(const QStringList& files, const std::string& ca = "");

  std::unique_ptr<MainWindow> window_;
  std::vector<ErrorAdvice> errors_;
};

}  // namespace ibc::console

// Benchmark (on demand, not in CI; run bench/console_grid.sh): the console's grid on a
// SYNTHETIC job of N nodes, and the GUI thread while 2,000 snapshots stream in.
//
// The job is replicated from real captures by this file (nothing committed): the
// facebookresearch/gcm 8x HDR captures (tests/fixtures/real/sysfs, materialised by the
// script) — one in 100 nodes from the capture whose ports trained at 100 Gb/s, one in 250
// from the one with two ports stuck in INIT, one in 500 from the one with ib4 down — each
// port given the port counters of the real mlx4 QDR capture (the gcm captures hold none) and
// a 10 s window in which one node in 50 gains 40 symbol errors. Nodes are named node0001...
//
// Per size: `load` = NodeGridModel::setJob on the grid page (the page resizes its columns on
// the reset) plus the first paint of the page (QWidget::grab); `sort` = the slowest of
// sorting the proxy by node, rate, symbol errors and verdict; `filter` = the slowest of a
// node glob with a severity, and a counter term. The job's diagnosis (core, on the loader's
// worker thread in the console) is printed apart.
//
// Then the loader: 2,000 such snapshots written as .ibsnap files, opened by the real
// MainWindow (worker thread, progress dialog); a 1 ms timer on the GUI thread records the
// largest gap between its ticks from the call to openFiles() to 100 ms after `finished`
// (the paint after it included). Twice: the first load, then a reload over it (Ctrl+R),
// which also has the old job to let go of.
//
// usage: ibc_bench_console_grid FIXTURES_DIR GCM_TREES_DIR [sizes...]   (default 500 2000 10000)
//        ibc_bench_console_grid --fault-job FIXTURES_DIR GCM_TREES_DIR OUT_DIR N
//
// --fault-job writes a SYNTHETIC job-wide-fault job of N unsigned .ibsnap files into OUT_DIR
// (nodeNNNN.ibsnap) for bench/console_grid.sh to open with `ibcollect-console --screenshot`:
// the synthetic nodes above, every one of them carrying the same real NCCL log with a socket
// fallback (nccl-logs/nccl-log_ib-no-device-socket-fallback-64rank-aws_nccl-issue-226.txt: `NET/IB
// : No device found.`, `Using network Socket`: NCCL_IB_UNAVAILABLE, NCCL_SOCKET_FALLBACK on
// every node, a job-wide misconfiguration), a real nccl-tests output (the 16-rank H100
// all_reduce_perf) and a real kernel log (the healthy mlx5 probe). Each node's NCCL log is its
// own, as NCCL_DEBUG_FILE=%h writes it: the capture's host names (ip-172-31-*) replaced by the
// node's name, then read as `--nccl-log` reads it; so core judges 2 NCCL findings per node,
// not one finding carried word for word by every node. Its busbw is scaled per node
// (SYNTHETIC: see writeFaultJob) so that the charts have outliers to name. The nodes are cloud VMs,
// as the console's users see them: the good tree is read with a QEMU guest's DMI added
// (GCM_TREES_DIR/vm, made by the script, as scripts/console-screenshots.sh does), so core
// escalates their PFs and the escalate page has every node as a suspect. Job id
// SYNTHETIC-jobwide-socket-fallback.

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "ibc/agent/collect.h"
#include "ibc/console/grid_filter.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"
#include "ibc/core/snapshot_file.h"
#include "main_window.h"
#include "pages/grid_page.h"
#include "synthetic_job.h"

namespace {

using namespace ibc;
namespace v1 = ::ibcollect::v1;

v1::Snapshot collect(const std::string& root, const agent::CollectOptions& extra = {}) {
  return bench::collectTree(root, extra);
}

using ibc::bench::ms;

struct Templates {
  v1::Snapshot good, slow, stuck, down;
  google::protobuf::RepeatedPtrField<v1::Counter> counters;  // real mlx4 QDR port 1
};

// Node i of the synthetic job (see the file comment).
v1::Snapshot syntheticNode(const Templates& t, int i) {
  const v1::Snapshot& base = i % 500 == 499   ? t.down
                             : i % 250 == 124 ? t.stuck
                             : i % 100 == 42  ? t.slow
                                              : t.good;
  v1::Snapshot s = base;
  char name[32];
  std::snprintf(name, sizeof name, "node%04d", i + 1);
  s.mutable_node()->set_hostname(name);
  s.mutable_node()->set_slurm_node(name);
  s.mutable_node()->set_job_id("synthetic-4242");
  // Each node its own input, as files or collector ids are (the template's tree is shared).
  s.mutable_node()->set_source(std::string("synthetic:") + name);
  auto* w = s.add_window();
  w->set_interval_seconds(10);
  for (auto& d : *s.mutable_devices()) {
    for (auto& p : *d.mutable_ports()) {
      *p.mutable_counters() = t.counters;
      auto* ps = w->add_ports();
      ps->set_device(d.name());
      ps->set_port(p.port());
      *ps->mutable_counters() = p.counters();
      if (i % 50 == 7 && d.name() == "mlx5_0") {
        for (auto& c : *ps->mutable_counters()) {
          if (c.name() == "symbol_error") c.set_value(c.value() + 40);
        }
      }
    }
  }
  return s;
}

// Runs `f` and returns its wall time in ms.
template <typename F>
double timed(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return ms(std::chrono::steady_clock::now() - t0);
}

}  // namespace

// --fault-job: see the file comment.
int writeFaultJob(const Templates& t, const std::string& fixtures, const std::string& gcm,
                  const std::string& out, int n) {
  agent::CollectOptions o;
  o.nccl_logs = {
      fixtures +
      "/real/nccl-logs/nccl-log_ib-no-device-socket-fallback-64rank-aws_nccl-issue-226.txt"};
  o.nccl_tests = {
      fixtures +
      "/real/nccl-tests/"
      "nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-ztan-fork.txt"};
  o.dmesg_file =
      fixtures + "/real/dmesg/dmesg_mlx5-healthy-probe-pcie-x8-cable-plugged_arm-nas-issue-16.txt";
  const v1::Snapshot logs = collect(gcm + "/vm", o);
  if (logs.nccl_logs_size() == 0 || logs.nccl_tests_size() == 0 ||
      logs.kernel_log().lines_size() == 0 || !logs.node().virtual_machine()) {
    std::fprintf(stderr,
                 "the NCCL log, nccl-tests output, kernel log or the VM's DMI did not collect\n");
    return 4;
  }
  std::ifstream in(o.nccl_logs[0], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::regex aws_host("ip-172-31-[0-9]+-[0-9]+");
  os::RootedFilesystem files("");
  for (int i = 0; i < n; ++i) {
    v1::Snapshot s = syntheticNode(t, i);
    s.mutable_node()->set_job_id("SYNTHETIC-jobwide-socket-fallback");
    s.mutable_node()->set_virtual_machine(true);
    s.mutable_node()->set_virtualization_evidence(logs.node().virtualization_evidence());
    const std::string log_path = out + "/nccl-" + s.node().hostname() + ".log";
    std::ofstream(log_path, std::ios::binary)
        << std::regex_replace(text, aws_host, s.node().hostname());
    std::vector<v1::ProbeError> errors;
    *s.add_nccl_logs() = agent::readNcclLog(files, log_path, o.limits, s.node().hostname(), errors);
    std::remove(log_path.c_str());
    if (!errors.empty() || s.nccl_logs(0).parsed().hosts_size() == 0) {
      std::fprintf(stderr, "the NCCL log of %s did not read\n", s.node().hostname().c_str());
      return 4;
    }
    *s.mutable_nccl_tests() = logs.nccl_tests();
    // SYNTHETIC busbw per node: the real output's rows scaled, a little less on every node
    // (up to 2%), half on the nodes of 100 Gb/s links (the slow template) and 60% on the node
    // whose symbol errors grow (i % 50 == 7), so that the charts have outliers to name.
    const bool slow_links = i % 100 == 42 && i % 250 != 124 && i % 500 != 499;
    const double factor = slow_links ? 0.5 : i % 50 == 7 ? 0.6 : 1.0 - 0.002 * (i % 11);
    for (auto& out_t : *s.mutable_nccl_tests()) {
      for (auto& r : *out_t.mutable_parsed()->mutable_rows()) {
        r.set_oop_busbw_gbs(r.oop_busbw_gbs() * factor);
        r.set_ip_busbw_gbs(r.ip_busbw_gbs() * factor);
        r.set_oop_algbw_gbs(r.oop_algbw_gbs() * factor);
        r.set_ip_algbw_gbs(r.ip_algbw_gbs() * factor);
      }
      auto* parsed = out_t.mutable_parsed();
      if (parsed->has_avg_busbw()) parsed->set_avg_busbw_gbs(parsed->avg_busbw_gbs() * factor);
    }
    *s.mutable_kernel_log() = logs.kernel_log();
    char name[48];
    std::snprintf(name, sizeof name, "/node%04d.ibsnap", i + 1);
    std::ofstream f(out + name, std::ios::binary);
    f << core::encodeSnapshotFile(core::wrapUnsigned(s));
    if (!f) {
      std::fprintf(stderr, "cannot write %s%s\n", out.c_str(), name);
      return 5;
    }
  }
  return 0;
}

// One SYNTHETIC node with `ports` ports (the good capture's 8x HDR device replicated as
// mlx5_0 ... mlx5_<ports/8>), written to OUT: what a console page costs per port.
int writeWideNode(const Templates& t, const std::string& out, int ports) {
  v1::Snapshot s = syntheticNode(t, 0);
  const v1::RdmaDevice model = s.devices(0);
  s.clear_devices();
  for (int i = 0; s.devices_size() * model.ports_size() < ports; ++i) {
    v1::RdmaDevice* d = s.add_devices();
    *d = model;
    d->set_name("mlx5_" + std::to_string(i));
  }
  std::ofstream(out, std::ios::binary) << core::encodeSnapshotFile(core::wrapUnsigned(s));
  return 0;
}

int main(int argc, char** argv) {
  const bool wide_node = argc > 1 && std::string(argv[1]) == "--wide-node";
  const bool fault_job = argc > 1 && std::string(argv[1]) == "--fault-job";
  if (wide_node) {
    if (argc != 6) {
      std::fprintf(stderr, "usage: %s --wide-node FIXTURES_DIR GCM_TREES_DIR OUT PORTS\n", argv[0]);
      return 3;
    }
    ++argv;
    --argc;
  }
  if (fault_job) {
    if (argc != 6) {
      std::fprintf(stderr, "usage: %s --fault-job FIXTURES_DIR GCM_TREES_DIR OUT_DIR N\n", argv[0]);
      return 3;
    }
    ++argv;
    --argc;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FIXTURES_DIR GCM_TREES_DIR [sizes...]\n", argv[0]);
    return 3;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const std::string fx = std::string(argv[1]) + "/real/sysfs/";
  const std::string gcm = argv[2];
  std::vector<int> sizes;
  for (int a = 3; a < argc; ++a) sizes.push_back(std::atoi(argv[a]));
  if (sizes.empty()) sizes = {500, 2000, 10000};

  Templates t;
  t.good = collect(gcm + "/good");
  t.slow = collect(gcm + "/slow");
  t.stuck = collect(gcm + "/stuck");
  t.down = collect(gcm + "/down");
  const v1::Snapshot qdr = collect(fx + "sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures");
  if (qdr.devices_size() == 0 || qdr.devices(0).ports_size() == 0 || t.good.devices_size() == 0) {
    std::fprintf(stderr, "the captures did not collect (wrong directories?)\n");
    return 4;
  }
  t.counters = qdr.devices(0).ports(0).counters();
  if (fault_job) return writeFaultJob(t, argv[1], gcm, argv[3], std::atoi(argv[4]));
  if (wide_node) return writeWideNode(t, argv[3], std::atoi(argv[4]));

  std::printf("console grid on a SYNTHETIC job replicated from real captures (8 ports/node)\n");
  for (const int n : sizes) {
    std::vector<v1::Snapshot> snaps;
    snaps.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) snaps.push_back(syntheticNode(t, i));
    console::JobData job;
    const double diagnose = timed([&] { job = console::diagnoseSnapshots(std::move(snaps), {}); });

    console::NodeGridModel model;
    console::GridPage page(&model);
    page.resize(1400, 800);
    page.show();
    QApplication::processEvents();
    const double load = timed([&] {
      model.setJob(&job);
      page.grab();  // the first paint, as the window shows it
    });
    auto* proxy = static_cast<console::GridFilter*>(page.view()->model());
    double sort = 0;
    for (const int c : {console::NodeGridModel::Node, console::NodeGridModel::Rate,
                        console::NodeGridModel::SymbolErrors, console::NodeGridModel::Verdict}) {
      sort = std::max(sort, timed([&] { proxy->sort(c, Qt::DescendingOrder); }));
    }
    int shown_glob = 0;
    int shown_counter = 0;
    const double glob = timed([&] {
      proxy->setFilterText(QStringLiteral("node00* severity>=warning"));
      shown_glob = proxy->rowCount();
    });
    const double counter = timed([&] {
      proxy->setFilterText(QStringLiteral("symbol_error>10"));
      shown_counter = proxy->rowCount();
    });
    proxy->setFilterText({});
    std::printf("console grid: %d nodes load %.1f ms sort %.1f ms filter %.1f ms", n, load, sort,
                std::max(glob, counter));
    std::printf("   (%d rows; diagnosis %.0f ms; filters showed %d and %d rows)\n",
                model.rowCount(), diagnose, shown_glob, shown_counter);
    std::fflush(stdout);
    model.setJob(nullptr);
  }

  // The loader: 2,000 files through the real window while a GUI-thread timer watches.
  QTemporaryDir dir;
  QStringList files;
  for (int i = 0; i < 2000; ++i) {
    const QString path =
        dir.filePath(QStringLiteral("node%1.ibsnap").arg(i + 1, 4, 10, QLatin1Char('0')));
    std::ofstream(path.toStdString(), std::ios::binary)
        << core::encodeSnapshotFile(core::wrapUnsigned(syntheticNode(t, i)));
    files << path;
  }
  console::MainWindow window;
  window.setErrorSink([](const console::ErrorAdvice&) {});
  window.resize(1400, 860);
  window.show();
  window.showPage(QStringLiteral("grid"));
  QApplication::processEvents();
  // The largest gap between the ticks of a 1 ms GUI-thread timer from openFiles() to 100 ms
  // after `finished` (the paint after the job arrived belongs to the stall too).
  auto streamIn = [&](const char* what) {
    QElapsedTimer clock;
    qint64 last = 0;
    qint64 max_gap = 0;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, [&] {
      const qint64 now = clock.elapsed();
      max_gap = std::max(max_gap, now - last);
      last = now;
    });
    QEventLoop wait;
    QObject::connect(&window, &console::MainWindow::finished, &wait, &QEventLoop::quit);
    clock.start();
    tick.start(1);
    window.openFiles(files, true);
    wait.exec();
    const qint64 loaded = clock.elapsed();
    QTimer::singleShot(100, &wait, &QEventLoop::quit);
    wait.exec();
    tick.stop();
    std::printf(
        "console loader (%s): 2000 snapshots streamed in %lld ms, max GUI-thread gap %lld ms "
        "(%d nodes shown)\n",
        what, static_cast<long long>(loaded), static_cast<long long>(max_gap),
        window.job() != nullptr ? window.job()->report.nodes_size() : 0);
    std::fflush(stdout);
  };
  streamIn("first load");
  streamIn("reload over it");
  return 0;
}

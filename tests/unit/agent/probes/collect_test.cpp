// The probes against real fixture trees, through the seams: values read and parsed,
// failures recorded without aborting, the counter window, live-host facts.

#include "ibc/agent/collect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <functional>

#include <filesystem>
#include <fstream>
#include <map>

#include "fixtures.h"
#include "ibc/core/findings.h"
#include "ibc/core/rules.h"
#include "os_doubles.h"
#include "sysfs_json.h"

using ::testing::HasSubstr;

namespace ibc::agent {
namespace {

const std::string kMlx5Root =
    "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures";

struct Harness {
  RootedFilesystem files{""};
  ibc::test::ScriptedRunner runner;
  ibc::test::SteppingClock clock;
  ibc::test::MapEnvironment env;
  HostSeams seams(const Filesystem& host, std::function<ProcessFacts()> facts = nullptr) {
    return HostSeams{host, files, runner, clock, env, std::move(facts), nullptr};
  }
};

const v1::Counter* counter(const google::protobuf::RepeatedPtrField<v1::Counter>& list,
                           const std::string& name) {
  for (const auto& c : list) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

bool hasFinding(const std::vector<::ibcollect::v1::Finding>& fs, const std::string& code,
                const std::string& sev) {
  for (const auto& f : fs) {
    if (f.code() == code && f.severity() == sev) return true;
  }
  return false;
}

TEST(Collect, ReadsTheRealMlx5TreeWithRawAndParsedValues) {
  RootedFilesystem host(ibc::test::fixturePath(kMlx5Root));
  Harness h;
  CollectOptions o;
  o.root = host.root();
  const auto snap = collectSnapshot(o, h.seams(host));
  ASSERT_EQ(snap.devices_size(), 1);
  const auto& d = snap.devices(0);
  EXPECT_EQ(d.name(), "mlx5_0");
  EXPECT_EQ(d.fw_ver(), "14.28.2006");
  EXPECT_EQ(d.hca_type(), "MT4118");
  EXPECT_EQ(d.node_guid(), "0a7f:bc12:45ef:d23b");  // file has no trailing newline
  EXPECT_TRUE(d.is_virtual_function());
  EXPECT_THAT(d.virtual_function_evidence(), HasSubstr("0x1016"));
  ASSERT_EQ(d.ports_size(), 1);
  const auto& p = d.ports(0);
  EXPECT_EQ(p.state().code(), 4);
  EXPECT_EQ(p.state().raw(), "4: ACTIVE");
  EXPECT_EQ(p.phys_state().raw(), "4: ACTIVE");
  EXPECT_DOUBLE_EQ(p.rate_gbps(), 25);
  EXPECT_EQ(p.width_lanes(), 1u);
  EXPECT_EQ(p.speed_name(), "EDR");
  EXPECT_EQ(p.link_layer(), "InfiniBand");
  ASSERT_NE(counter(p.hw_counters(), "req_cqe_error"), nullptr);
  EXPECT_EQ(counter(p.hw_counters(), "req_cqe_error")->value(), 3481u);
  EXPECT_EQ(counter(p.counters(), "port_xmit_data")->value(), 2880761508848u);
  EXPECT_EQ(counter(p.counters(), "symbol_error")->width_bits(), 16u);
  EXPECT_FALSE(snap.host().collected());  // a tree: no host facts of this machine
  EXPECT_EQ(snap.node().hostname(), "sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree");
  EXPECT_THAT(snap.kernel_log().unavailable_reason(), HasSubstr("--dmesg-file"));
  EXPECT_TRUE(h.runner.calls.empty()) << "a tree must never run commands";
}

TEST(Collect, AFailingAttributeIsRecordedAndTheRestIsCollected) {
  RootedFilesystem real(ibc::test::fixturePath(kMlx5Root));
  ibc::test::FaultyFilesystem host(real);
  host.faults["/ports/1/state"] = ErrorCode::PermissionDenied;
  host.faults["/ports/1/counters/symbol_error"] = ErrorCode::InvalidArgument;
  host.faults["/ports/1/hw_counters/out_of_buffer"] = ErrorCode::PermissionDenied;
  Harness h;
  CollectOptions o;
  o.root = "/tree";
  const auto snap = collectSnapshot(o, h.seams(host));
  ASSERT_EQ(snap.devices_size(), 1);
  const auto& p = snap.devices(0).ports(0);
  EXPECT_TRUE(p.state().raw().empty());
  EXPECT_EQ(counter(p.counters(), "symbol_error")->unavailable_reason(), "EINVAL");
  EXPECT_EQ(counter(p.hw_counters(), "out_of_buffer")->unavailable_reason(), "EACCES");
  EXPECT_EQ(counter(p.hw_counters(), "req_cqe_error")->value(), 3481u);
  bool recorded = false;
  for (const auto& e : snap.probe_errors()) {
    if (e.probe() == "sysfs.port" && e.error() == "EACCES" &&
        e.path().find("/ports/1/state") != std::string::npos) {
      recorded = true;
    }
  }
  EXPECT_TRUE(recorded);
}

// Issue 11 #9: the real tree is a WARNING (CQE errors in hw_counters). When that directory
// cannot be read the verdict must not improve to OK: the counters exist, their findings are
// unknown, and COUNTER_UNAVAILABLE says so as a warning with the reason.
TEST(Collect, AnUnreadableHwCountersDirectoryNeverImprovesTheVerdict) {
  RootedFilesystem real(ibc::test::fixturePath(kMlx5Root));
  Harness h;
  CollectOptions o;
  o.root = "/tree";
  const auto readable = core::diagnoseNode(collectSnapshot(o, h.seams(real)), {});
  ASSERT_TRUE(hasFinding(readable, "CQE_ERRORS", "warning"));

  ibc::test::FaultyFilesystem host(real);
  host.faults["/sys/class/infiniband/mlx5_0/ports/1/hw_counters"] = ErrorCode::PermissionDenied;
  const auto findings = core::diagnoseNode(collectSnapshot(o, h.seams(host)), {});
  EXPECT_FALSE(hasFinding(findings, "CQE_ERRORS", "warning"));
  ASSERT_TRUE(hasFinding(findings, "COUNTER_UNAVAILABLE", "warning"));
  for (const auto& f : findings) {
    if (f.code() != "COUNTER_UNAVAILABLE") continue;
    EXPECT_EQ(f.device(), "mlx5_0");
    EXPECT_EQ(f.port(), 1u);
    EXPECT_THAT(f.summary(), HasSubstr("EACCES"));
    EXPECT_THAT(f.evidence(1), HasSubstr("hw_counters/ (directory)"));
  }
}

// A copy of the real mlx5 tree on disk whose port hw_counters (or another path of the
// device, `under`) is replaced by `make(path)`.
class ReplacedHwCounters {
 public:
  explicit ReplacedHwCounters(const std::function<void(const std::string&)>& make,
                              const std::string& under = "ports/1/hw_counters") {
    std::string pattern = (std::filesystem::temp_directory_path() / "ibc-hwc-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    std::filesystem::copy(ibc::test::fixturePath(kMlx5Root), dir_,
                          std::filesystem::copy_options::recursive);
    const std::string hwc = dir_ + "/sys/class/infiniband/mlx5_0/" + under;
    std::filesystem::remove_all(hwc);
    make(hwc);
  }
  ~ReplacedHwCounters() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& root() const { return dir_; }

 private:
  std::string dir_;
};

// hw_counters as a dangling link or a FIFO (a tree a tenant made, or a broken host): the
// errors it would show are unknown, so the port is never judged clean on it.
TEST(Collect, AHwCountersThatIsNoDirectoryIsAnUnreadableCounterSourceNeverAQuietOk) {
  const std::vector<std::pair<std::string, std::function<void(const std::string&)>>> cases = {
      {"a dangling link",
       [](const std::string& p) { std::filesystem::create_symlink("/nonexistent/hw", p); }},
      {"a FIFO", [](const std::string& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
      {"a file", [](const std::string& p) { std::ofstream(p) << "0\n"; }},
  };
  for (const auto& [what, make] : cases) {
    ReplacedHwCounters tree(make);
    RootedFilesystem host(tree.root());
    Harness h;
    CollectOptions o;
    o.root = "/tree";
    const auto snap = collectSnapshot(o, h.seams(host));
    bool named = false;
    for (const auto& e : snap.probe_errors()) {
      named = named || (e.probe() == "sysfs.counters" &&
                        e.path().find("ports/1/hw_counters") != std::string::npos);
    }
    EXPECT_TRUE(named) << what;
    const auto findings = core::diagnoseNode(snap, {});
    EXPECT_TRUE(hasFinding(findings, "COUNTER_UNAVAILABLE", "warning")) << what;
  }
}

// Issue 27: one counter file that is a FIFO or a dangling link, or that fails with EIO or
// EACCES, is that counter unavailable with its reason and a COUNTER_UNAVAILABLE warning;
// the read never blocks and the port is never a quiet OK.
TEST(Collect, EveryUnreadableCounterFileIsAWarningWithItsReason) {
  const std::string file = "ports/1/counters/symbol_error";
  const std::vector<std::pair<std::string, std::function<void(const std::string&)>>> on_disk = {
      {"a dangling link",
       [](const std::string& p) { std::filesystem::create_symlink("/nonexistent/c", p); }},
      {"a FIFO", [](const std::string& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
  };
  const auto judged = [&](const Filesystem& host, const std::string& what) {
    Harness h;
    CollectOptions o;
    o.root = "/tree";
    const auto snap = collectSnapshot(o, h.seams(host));
    const auto* c = counter(snap.devices(0).ports(0).counters(), "symbol_error");
    ASSERT_NE(c, nullptr) << what;
    EXPECT_FALSE(c->unavailable_reason().empty()) << what;
    EXPECT_TRUE(hasFinding(core::diagnoseNode(snap, {}), "COUNTER_UNAVAILABLE", "warning"))
        << what << ": " << c->unavailable_reason();
  };
  for (const auto& [what, make] : on_disk) {
    ReplacedHwCounters tree(make, file);
    RootedFilesystem host(tree.root());
    judged(host, what);
  }
  RootedFilesystem real(ibc::test::fixturePath(kMlx5Root));
  for (const ErrorCode code : {ErrorCode::Io, ErrorCode::PermissionDenied}) {
    ibc::test::FaultyFilesystem host(real);
    host.faults["/" + file] = code;
    judged(host, std::string(core::errorCodeName(code)));
  }
}

TEST(Collect, CountersTheDeviceDoesNotServeStayInfo) {
  RootedFilesystem real(ibc::test::fixturePath(kMlx5Root));
  ibc::test::FaultyFilesystem host(real);
  host.faults["/ports/1/counters/symbol_error"] = ErrorCode::InvalidArgument;
  Harness h;
  CollectOptions o;
  o.root = "/tree";
  const auto findings = core::diagnoseNode(collectSnapshot(o, h.seams(host)), {});
  EXPECT_TRUE(hasFinding(findings, "COUNTER_UNAVAILABLE", "info"));
  EXPECT_FALSE(hasFinding(findings, "COUNTER_UNAVAILABLE", "warning"));
}

TEST(Collect, ACounterThatMovesDuringTheWindowIsCritical) {
  // The real tree, loaded into memory so the second sample can differ.
  MemoryFilesystem host;
  const std::string base = ibc::test::fixturePath(kMlx5Root);
  for (const auto& e : std::filesystem::recursive_directory_iterator(base)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    host.addFile("/" + std::filesystem::relative(e.path(), base).string(), content);
  }
  const std::string sym = "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error";
  Harness h;
  h.clock.on_sleep = [&] { host.addFile(sym, "5\n"); };
  CollectOptions o;
  o.root = "/tree";
  o.window = std::chrono::seconds(10);
  const auto snap = collectSnapshot(o, h.seams(host));
  ASSERT_EQ(snap.window_size(), 1);
  EXPECT_DOUBLE_EQ(snap.window(0).interval_seconds(), 10.0);
  const auto findings = core::diagnoseNode(snap, {});
  EXPECT_TRUE(hasFinding(findings, "PHY_ERRORS", "critical"));
  bool delta_in_evidence = false;
  for (const auto& f : findings) {
    for (const auto& e : f.evidence())
      delta_in_evidence |= e.find("symbol_error = 0 (+5 in 10 s") == 0;
  }
  EXPECT_TRUE(delta_in_evidence);
  // Totals that did not move stay warnings.
  EXPECT_TRUE(hasFinding(findings, "CQE_ERRORS", "warning"));
}

TEST(Collect, FindsDevicesInAPciDeviceViewTree) {
  const std::string dir = ibc::test::makeTempDir("pci-view");
  ASSERT_GT(
      ibc::test::materializeSysfsJson(
          ibc::test::readFixture("real/sysfs/sysfs-json_gcm-learn_good_8xhdr200-all-active.json"),
          dir),
      100);
  RootedFilesystem host(dir);
  Harness h;
  CollectOptions o;
  o.root = dir;
  const auto snap = collectSnapshot(o, h.seams(host));
  ASSERT_EQ(snap.devices_size(), 8);
  EXPECT_EQ(snap.devices(0).pci().address(), "0000:0c:00.0");
  EXPECT_EQ(snap.devices(0).ports(0).netdevs(0), "ib0");
  EXPECT_EQ(snap.node().hostname(), "node1720");  // from node_desc "node1720 HCA-N"
  int ipoib = 0;
  for (const auto& n : snap.netdevs()) ipoib += n.type() == 32 && n.operstate() == "up" ? 1 : 0;
  EXPECT_EQ(ipoib, 8);
}

TEST(Collect, TheVmIdIsProductUuidElseProductSerialAndNeverAPlaceholder) {
  // SYNTHETIC DMI files over the real gcm tree: an unset product_uuid (all zeros) and a cloud
  // instance id in product_serial; then a product_uuid that holds its own name.
  const std::string dir = ibc::test::makeTempDir("vm-id");
  ibc::test::materializeSysfsJson(
      ibc::test::readFixture("real/sysfs/sysfs-json_gcm-learn_good_8xhdr200-all-active.json"), dir);
  std::filesystem::create_directories(dir + "/sys/class/dmi/id");
  std::ofstream(dir + "/sys/class/dmi/id/product_uuid") << "00000000-0000-0000-0000-000000000000\n";
  std::ofstream(dir + "/sys/class/dmi/id/product_serial") << "i-0abc123def4567890\n";
  RootedFilesystem host(dir);
  Harness h;
  CollectOptions o;
  o.root = dir;
  auto snap = collectSnapshot(o, h.seams(host));
  EXPECT_EQ(snap.node().vm_id(), "i-0abc123def4567890");
  EXPECT_EQ(snap.node().vm_id_source(), "dmi product_serial");
  std::ofstream(dir + "/sys/class/dmi/id/product_uuid") << "product_uuid\n";
  std::filesystem::remove(dir + "/sys/class/dmi/id/product_serial");
  snap = collectSnapshot(o, h.seams(host));
  EXPECT_EQ(snap.node().vm_id(), "");
}

TEST(Collect, LiveHostFactsFeedTheHostRules) {
  // A live-host collection ("/") through in-memory seams: /proc/modules, /dev/infiniband,
  // process limits, and a kernel log that only `dmesg` can give.
  RootedFilesystem tree(ibc::test::fixturePath(kMlx5Root));
  MemoryFilesystem host;
  for (const auto& name : {"fw_ver", "hca_type", "node_guid"}) {
    host.addFile(std::string("/sys/class/infiniband/mlx5_0/") + name,
                 *tree.readFile(std::string("/sys/class/infiniband/mlx5_0/") + name, 4096));
  }
  host.addFile("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  host.addFile("/sys/class/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
  host.addFile("/sys/class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)\n");
  host.addFile("/proc/modules",
               "mlx5_ib 466944 0 - Live 0x0\nmlx5_core 2134016 1 mlx5_ib, Live 0x0\nnvidia "
               "56000000 1 - Live 0x0\n");
  host.addFile("/dev/infiniband/uverbs0", "");
  Harness h;
  h.runner.scripts["dmesg"] = CommandResult{
      0, false,
      ibc::test::readFixture(
          "real/dmesg/dmesg_mlx5-handle-hca-cap-failed-probe-einval_rp-ext-issue-129.txt"),
      "", false};
  h.env.vars["SLURM_JOB_ID"] = "1234";
  h.env.vars["SLURMD_NODENAME"] = "node7";
  CollectOptions o;
  o.root = "/";
  const auto snap = collectSnapshot(o, h.seams(host, [] {
    ProcessFacts f;
    f.memlock_known = true;
    f.memlock_soft_bytes = 64 * 1024;
    f.memlock_hard_bytes = 64 * 1024;
    f.hostname = "vm-node7";
    return f;
  }));
  EXPECT_EQ(snap.node().hostname(), "vm-node7");
  EXPECT_EQ(snap.node().job_id(), "1234");
  EXPECT_EQ(snap.node().slurm_node(), "node7");
  EXPECT_TRUE(snap.host().collected());
  EXPECT_EQ(snap.host().memlock_soft_bytes(), 64u * 1024);
  EXPECT_EQ(snap.kernel_log().source(), "dmesg");
  EXPECT_GE(snap.kernel_log().lines_size(), 3);
  const auto findings = core::diagnoseNode(snap, {});
  EXPECT_TRUE(hasFinding(findings, "MEMLOCK_LIMIT", "warning"));   // no registration failure seen
  EXPECT_TRUE(hasFinding(findings, "UVERBS_ACCESS", "critical"));  // MemoryFilesystem: read-only
  EXPECT_TRUE(hasFinding(findings, "PEERMEM_MISSING", "warning"));
  EXPECT_TRUE(hasFinding(findings, "DRIVER_LOAD_FAILED", "critical"));
  for (const auto& f : findings) EXPECT_EQ(f.node(), "node7") << f.code();
}

TEST(Collect, ASharedNcclLogDirectoryKeepsOnlyThisNodesLogs) {
  // A --job --nccl-log glob without %h ('/shared/nccl/rank*.log'): every node reads every
  // rank's log. SYNTHETIC logs in NCCL's line format: rank 0 ran on node1 (its FQDN in
  // the prefix), rank 1 on node2, and a file with no host prefix at all.
  const std::string dir = ibc::test::makeTempDir("shared-nccl");
  std::ofstream(dir + "/rank0.log")
      << "node1.cluster.local:4242:4300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
         "completion from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 "
         "(Recv)\n";
  std::ofstream(dir + "/rank1.log")
      << "node2:5151:5200 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.2<0>\n";
  std::ofstream(dir + "/rank2.log") << "NCCL version 2.18.3+cuda12.2\n";
  RootedFilesystem host(ibc::test::fixturePath(kMlx5Root));
  auto sources = [&](const std::string& node) {
    Harness h;
    CollectOptions o;
    o.root = host.root();
    o.shared_nccl_logs = {dir + "/rank0.log", dir + "/rank1.log", dir + "/rank2.log"};
    o.node_names = {node};
    const auto snap = collectSnapshot(o, h.seams(host));
    std::vector<std::string> out;
    for (const auto& l : snap.nccl_logs()) out.push_back(l.source());
    for (const auto& e : snap.probe_errors()) {
      EXPECT_NE(e.probe(), "nccl_log") << node << ": " << e.path() << ": " << e.message();
    }
    return out;
  };
  EXPECT_EQ(sources("node1"), (std::vector<std::string>{dir + "/rank0.log", dir + "/rank2.log"}));
  EXPECT_EQ(sources("node2"), (std::vector<std::string>{dir + "/rank1.log", dir + "/rank2.log"}));
  EXPECT_EQ(sources("node3"), (std::vector<std::string>{dir + "/rank2.log"}));
}

TEST(NcclLogOwnership, ALogIsTheNodesWhenItsLinesNameTheNodeOrNoHost) {
  auto hosts = [](std::vector<std::string> names) {
    v1::NcclLogSummary s;
    for (auto& n : names) s.add_hosts(n);
    return s;
  };
  const std::vector<std::string> node{"node1", "gpu-a1"};  // Slurm name, hostname
  EXPECT_TRUE(ncclLogBelongsTo(hosts({}), node));
  EXPECT_TRUE(ncclLogBelongsTo(hosts({"node1"}), node));
  EXPECT_TRUE(ncclLogBelongsTo(hosts({"gpu-a1.cluster.local"}), node));
  EXPECT_TRUE(ncclLogBelongsTo(hosts({"node2", "node1"}), node));  // a log of several hosts
  EXPECT_FALSE(ncclLogBelongsTo(hosts({"node2"}), node));
  EXPECT_FALSE(ncclLogBelongsTo(hosts({"node10"}), node));
}

}  // namespace
}  // namespace ibc::agent

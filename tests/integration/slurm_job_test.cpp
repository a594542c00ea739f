// `ibcollect --job` against a real Slurm cluster started on this machine
// (tests/integration/slurm/cluster.sh): slurmctld and one slurmd per node, each node in
// its own namespaces seeing a different real fixture tree as its RDMA hardware.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "collector_process.h"
#include "fixtures.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"
#include "ibc/os/os.h"
#include "slurm_cluster.h"
#include "sysfs_json.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

using ibc::os::CommandResult;
using ibc::os::ProcessRunner;
using namespace std::chrono_literals;

const std::string kCluster = std::string(IBC_SOURCE_DIR) + "/tests/integration/slurm/cluster.sh";
const std::string kMakePki = std::string(IBC_SOURCE_DIR) + "/certs/make-pki";

std::string runOrDie(const std::vector<std::string>& argv,
                     std::chrono::milliseconds timeout = 60s) {
  ProcessRunner runner;
  auto r = runner.run(argv, timeout);
  if (!r.ok()) {
    ADD_FAILURE() << argv[0] << ": " << r.error().message;
    return {};
  }
  EXPECT_EQ(r->exit_code, 0) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << "\n"
                             << r->err;
  return r->out;
}

struct NodeVerdict {
  std::string severity;  // "ok", "warning", "critical", "unreachable"
  std::string unreachable_reason;
  std::multiset<std::pair<std::string, std::string>> findings;  // (code, severity)
};

std::map<std::string, NodeVerdict> parseReport(const std::string& json) {
  google::protobuf::Struct doc;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &doc).ok()) << json.substr(0, 400);
  std::map<std::string, NodeVerdict> out;
  std::map<std::string, std::string> node_of_label;
  for (const auto& n : doc.fields().at("nodes").list_value().values()) {
    const auto& f = n.struct_value().fields();
    auto& v = out[f.at("node").string_value()];
    v.severity = f.at("worst_severity").string_value();
    v.unreachable_reason = f.at("unreachable_reason").string_value();
    node_of_label[f.at("label").string_value()] = f.at("node").string_value();
  }
  for (const auto& x : doc.fields().at("findings").list_value().values()) {
    const auto& f = x.struct_value().fields();
    const std::pair<std::string, std::string> finding{f.at("code").string_value(),
                                                      f.at("severity").string_value()};
    if (f.at("scope").string_value() != "job") {
      out[f.at("node").string_value()].findings.insert(finding);
      continue;
    }
    // A job-wide finding (docs/commands.md) holds on every node but those in "except".
    std::set<std::string> except;
    for (const auto& e : f.at("except").list_value().values())
      except.insert(node_of_label[e.string_value()]);
    for (auto& [node, v] : out) {
      if (except.count(node) == 0) v.findings.insert(finding);
    }
  }
  return out;
}

// The verdict of one node; a missing node fails the test (with the report) instead of
// throwing.
const NodeVerdict& verdict(const std::map<std::string, NodeVerdict>& nodes, const std::string& node,
                           const std::string& context) {
  static const NodeVerdict kMissing{"missing", "node missing from the report", {}};
  auto it = nodes.find(node);
  if (it == nodes.end()) {
    ADD_FAILURE() << node << " is missing from the report\n" << context.substr(0, 3000);
    return kMissing;
  }
  return it->second;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

bool has(const NodeVerdict& v, const std::string& code, const std::string& sev) {
  return v.findings.count({code, sev}) > 0;
}

class SlurmJob : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = ibc::test::slurmClusterUnavailable();
    if (!skip_.empty()) return;
    dir_ = std::filesystem::temp_directory_path() / ("ibc-slurm-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "trees" / "stuck");
    // gcm capture of a node with two ports stuck in INIT, as the PCI-device view it was
    // captured in.
    ibc::test::materializeSysfsJson(
        ibc::test::readFixture(
            "real/sysfs/sysfs-json_gcm-learn_stuck_ib_intf_two-ports-state-INIT-ipoib-down.json"),
        (dir_ / "trees" / "stuck").string());
    const std::string f = ibc::test::fixturePath("real/sysfs/");
    runOrDie({kCluster, "start", dir_.string(),
              "node1=class:" + f + "sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures",
              "node2=class:" + f + "sysfs_node-exporter-fixture_mlx4_0_counters-ext.tree",
              "node3=pci:" + (dir_ / "trees" / "stuck").string(),
              "node4=class:" + f + "sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures",
              "node5=class:" + f + "sysfs_procfs-fixture_hfi1_0_omnipath.tree/fixtures",
              "node6=class:" + f + "sysfs_procfs-fixture_hfi1_0_omnipath.tree/fixtures"},
             120s);
    ::setenv("SLURM_CONF", (dir_ / "slurm.conf").c_str(), 1);
    // Each node's UTS namespace (its slurmd's): everything the node runs lives in it.
    for (int i = 1; i <= 6; ++i) {
      const auto pids = nodePids("node" + std::to_string(i));
      std::error_code ec;
      if (!pids.empty()) {
        node_uts_.insert(
            std::filesystem::read_symlink("/proc/" + std::to_string(pids.front()) + "/ns/uts", ec)
                .string());
      }
    }
    // A job that ignores SIGTERM, as jobs that checkpoint on it do: cancelling it takes
    // KillWait, and `cluster.sh stop` must still leave nothing of it behind.
    job_ = submit("trap '' TERM; sleep 900", 6);
  }

  static void TearDownTestSuite() {
    if (!dir_.empty()) {
      ProcessRunner runner;
      auto stop = runner.run({kCluster, "stop", dir_.string()}, 120s);
      ASSERT_TRUE(stop.ok());
      // The jobs ended before their slurmds were stopped: nothing was left to kill.
      EXPECT_EQ(stop->exit_code, 0) << stop->err;
      EXPECT_EQ(stop->err, "");
      // Nothing the cluster started outlives it (slurmstepd, the jobs' tasks).
      EXPECT_EQ(node_uts_.size(), 6u);
      for (const auto& p : processesIn(node_uts_)) ADD_FAILURE() << "left running: " << p;
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  // "PID cmdline" of the processes whose UTS namespace is one of `namespaces`.
  static std::vector<std::string> processesIn(const std::set<std::string>& namespaces) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      const std::string pid = it->path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::error_code link_ec;
      const auto ns = std::filesystem::read_symlink(it->path() / "ns" / "uts", link_ec);
      if (link_ec || namespaces.count(ns.string()) == 0) continue;
      std::ifstream in(it->path() / "cmdline");
      std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::replace(cmd.begin(), cmd.end(), '\0', ' ');
      out.push_back(pid + " " + cmd);
    }
    return out;
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_FALSE(job_.empty());
  }

  static std::string submit(const std::string& wrap, int nodes,
                            const std::string& state = "RUNNING") {
    std::string id = runOrDie({"sbatch", "--parsable", "--output=/dev/null", "-N",
                               std::to_string(nodes), "--wrap", wrap});
    while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
    // Poll the scheduler until the job reaches the state (bounded).
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      ProcessRunner r;
      auto s = r.run({"scontrol", "show", "job", id}, 10s);
      if (s.ok() && s->out.find("JobState=" + state) != std::string::npos) return id;
      std::this_thread::sleep_for(100ms);  // polling interval, not synchronisation
    }
    ADD_FAILURE() << "job " << id << " did not reach " << state;
    return {};
  }

 public:
  // ibcollect --job on the test's job, JSON output; time budgets are checked by callers.
  CommandResult runJob(const std::vector<std::string>& extra,
                       std::chrono::milliseconds* elapsed = nullptr) {
    std::vector<std::string> argv{IBC_BINARY, "--job", job_, "--format", "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ProcessRunner runner;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = runner.run(argv, 120s);
    if (elapsed)
      *elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - t0);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : CommandResult{};
  }

 protected:
  static std::vector<pid_t> nodePids(const std::string& node) {
    std::vector<pid_t> pids;
    const std::string out = runOrDie({kCluster, "node-pids", dir_.string(), node});
    for (const auto& tok : ibc::core::splitWhitespace(out)) {
      pids.push_back(static_cast<pid_t>(std::strtol(std::string(tok).c_str(), nullptr, 10)));
    }
    return pids;
  }

  static inline std::string skip_;
  static inline std::filesystem::path dir_;
  static inline std::set<std::string> node_uts_;
  static inline std::string job_;
};

TEST_F(SlurmJob, VerdictNamesTheBrokenNodesWithTheirCodesAndNothingCriticalOnHealthyOnes) {
  std::chrono::milliseconds elapsed{};
  const auto out = (dir_ / "run1").string();
  auto r = runJob({"--window", "1", "--out", out}, &elapsed);
  EXPECT_EQ(r.exit_code, 2) << r.err;  // a critical finding (node3), every node answered
  const auto nodes = parseReport(r.out);
  const std::string ctx = r.out + r.err;
  ASSERT_EQ(nodes.size(), 6u) << r.out.substr(0, 1000);
  EXPECT_TRUE(has(verdict(nodes, "node3", ctx), "PORT_NOT_ACTIVE_SM", "critical"));
  EXPECT_TRUE(has(verdict(nodes, "node2", ctx), "XMIT_DISCARDS", "warning"));
  EXPECT_TRUE(has(verdict(nodes, "node2", ctx), "COUNTER_SATURATED", "warning"));
  EXPECT_TRUE(has(verdict(nodes, "node4", ctx), "CQE_ERRORS", "warning"));
  EXPECT_TRUE(has(verdict(nodes, "node4", ctx), "ESCALATE_HOST_INSPECTION", "warning"));
  for (const char* healthy : {"node1", "node2", "node4", "node5", "node6"}) {
    EXPECT_NE(verdict(nodes, healthy, ctx).severity, "critical") << healthy;
    EXPECT_NE(verdict(nodes, healthy, ctx).severity, "unreachable") << healthy;
  }
  for (const char* n : {"node1", "node2", "node3", "node4", "node5", "node6"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + std::string(n) + ".ibsnap")) << n;
  }
  std::cerr << "[ measured ] ibcollect --job (6 nodes, --window 1) took " << elapsed.count()
            << " ms\n";

  // The same comparison from the saved snapshots.
  std::vector<std::string> argv{IBC_BINARY, "compare", "--format", "json"};
  for (const auto& e : std::filesystem::directory_iterator(out)) argv.push_back(e.path().string());
  ProcessRunner runner;
  auto c = runner.run(argv, 60s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->exit_code, 2) << c->err;
  EXPECT_TRUE(has(verdict(parseReport(c->out), "node3", c->out + c->err), "PORT_NOT_ACTIVE_SM",
                  "critical"));
}

TEST_F(SlurmJob, NcclLogsWrittenPerNodeAreAttributedToTheirNodes) {
  // SYNTHETIC NCCL_DEBUG_FILE output (NCCL's own line format, as in the real captures),
  // written where NCCL_DEBUG_FILE=/dir/nccl.%h.log would put it for node1; the log names
  // the host by its FQDN.
  const auto logs = dir_ / "nccl";
  std::filesystem::create_directories(logs);
  {
    std::ofstream out(logs / "nccl.node1.log");
    out << "node1.cluster.local:4242:4300 [0] NCCL INFO NET/IB : Using [0]mlx4_0:1/IB ; OOB "
           "ib0:10.0.0.1<0>\n"
           "node1.cluster.local:4242:4300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
           "completion "
           "from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n";
  }
  auto r = runJob({"--window", "0", "--nccl-log", (logs / "nccl.%h.log").string(), "--out",
                   (dir_ / "run5").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto nodes = parseReport(r.out);
  const std::string ctx = r.out + r.err;
  EXPECT_TRUE(has(verdict(nodes, "node1", ctx), "NCCL_IB_COMPLETION_ERROR", "critical"))
      << ctx.substr(0, 2000);
  EXPECT_FALSE(has(verdict(nodes, "node2", ctx), "NCCL_IB_COMPLETION_ERROR", "critical"));
}

TEST_F(SlurmJob, NcclLogsInASharedDirectoryAreCountedOnceOnTheirNode) {
  // SYNTHETIC NCCL_DEBUG_FILE=/shared/nccl/rank%r.log-style output in NCCL's line format,
  // read through a glob without %h: every node of the job sees every rank's file (the
  // cluster shares this machine's filesystem). Rank 0 ran on node1 and hit a completion
  // error; rank 1 on node2 is healthy.
  const auto logs = dir_ / "shared-nccl";
  std::filesystem::create_directories(logs);
  std::ofstream(logs / "rank0.log")
      << "node1.cluster.local:4242:4300 [0] NCCL INFO NET/IB : Using [0]mlx4_0:1/IB ; OOB "
         "ib0:10.0.0.1<0>\n"
         "node1.cluster.local:4242:4300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
         "completion from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 "
         "(Recv)\n";
  std::ofstream(logs / "rank1.log")
      << "node2:5151:5200 [0] NCCL INFO NET/IB : Using [0]mlx4_0:1/IB ; OOB ib0:10.0.0.2<0>\n";
  auto r = runJob({"--window", "0", "--nccl-log", (logs / "rank*.log").string(), "--out",
                   (dir_ / "run7").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto nodes = parseReport(r.out);
  const std::string ctx = r.out + r.err;
  std::size_t completion = 0;
  for (const auto& [node, v] : nodes)
    completion += v.findings.count({"NCCL_IB_COMPLETION_ERROR", "critical"});
  EXPECT_EQ(completion, 1u) << ctx.substr(0, 3000);
  EXPECT_TRUE(has(verdict(nodes, "node1", ctx), "NCCL_IB_COMPLETION_ERROR", "critical"));
  // Each node carried its own rank's log only, not every rank's.
  auto logsOf = [&](const std::string& node) {
    std::vector<std::string> sources;
    auto env = ibc::core::decodeSnapshotFile(
        ibc::test::readAll((dir_ / "run7" / (node + ".ibsnap")).string()));
    if (!env.ok()) {
      ADD_FAILURE() << node << ": " << env.error().message;
      return sources;
    }
    auto snap = ibc::core::openSnapshot(*env);
    if (!snap.ok()) {
      ADD_FAILURE() << node << ": " << snap.error().message;
      return sources;
    }
    for (const auto& l : snap->nccl_logs())
      sources.push_back(std::filesystem::path(l.source()).filename().string());
    return sources;
  };
  EXPECT_EQ(logsOf("node1"), std::vector<std::string>{"rank0.log"});
  EXPECT_EQ(logsOf("node2"), std::vector<std::string>{"rank1.log"});
  EXPECT_EQ(logsOf("node3"), std::vector<std::string>{});
}

TEST_F(SlurmJob, AUserWhoMayNotRunStepsInTheJobGetsOneMessageAndExitCode4) {
  // nobody may see root's job (no PrivateData here) but not run a step in it: real
  // srun says "Unable to create step for job N: Access/permission denied".
  ProcessRunner runner;
  auto r = runner.run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", IBC_BINARY,
                       "--job", job_, "--window", "0", "--out", (dir_ / "run8").string()},
                      60s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 4) << r->err;
  EXPECT_THAT(r->err, HasSubstr("does not let this user run a step in job " + job_));
  EXPECT_THAT(r->err, HasSubstr("Access/permission denied"));
  EXPECT_THAT(r->err, Not(HasSubstr("unreachable")));
  EXPECT_THAT(r->err, Not(HasSubstr("srun: srun:")));
  EXPECT_EQ(r->out, "");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "run8"));
}

// The collector process of a node's step: an `ibcollect job-step` whose parent is the
// step's supervisor (also `job-step`) and whose Slurm node is `node`. slurmstepd detaches
// from slurmd, so the process tree cannot be walked from slurmd.
pid_t findCollector(const std::string& node) {
  // A process may exit while its files are read (read() fails with ESRCH and libstdc++
  // throws): it is not the one looked for, so it reads as empty.
  auto slurp = [](const std::filesystem::path& p) {
    try {
      std::ifstream in(p);
      return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    } catch (const std::ios_base::failure&) {
      return std::string();
    }
  };
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto& e = *it;
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (slurp(e.path() / "cmdline").find("job-step") == std::string::npos) continue;
    if (slurp(e.path() / "environ").find("SLURMD_NODENAME=" + node + '\0') == std::string::npos)
      continue;
    const std::string stat = slurp(e.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    const auto fields = ibc::core::splitWhitespace(std::string_view(stat).substr(close + 1));
    if (fields.size() < 2) continue;
    if (slurp("/proc/" + std::string(fields[1]) + "/cmdline").find("job-step") !=
        std::string::npos) {
      return static_cast<pid_t>(std::strtol(pid.c_str(), nullptr, 10));
    }
  }
  return 0;
}

// Runs --job on the test's job and, as soon as `node`'s collector is running, sends it
// `sig`. Returns the result and whether the signal was delivered.
std::pair<CommandResult, bool> jobWhileSignalling(SlurmJob& t, const std::string& node, int sig,
                                                  const std::vector<std::string>& args,
                                                  std::chrono::milliseconds& elapsed) {
  CommandResult result;
  // A jthread: should anything below throw, the job is still waited for (no std::terminate,
  // no job left running into the next test) and the test reports the exception.
  std::jthread run([&] { result = t.runJob(args, &elapsed); });
  bool sent = false;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!sent && std::chrono::steady_clock::now() < deadline) {
    if (const pid_t p = findCollector(node); p > 0) sent = ::kill(p, sig) == 0;
    if (!sent) std::this_thread::sleep_for(20ms);  // polling interval
  }
  run.join();
  return {result, sent};
}

TEST_F(SlurmJob, AKilledCollectorIsNamedUnreachableAndTheOthersAreReported) {
  std::chrono::milliseconds elapsed{};
  auto [result, killed] = jobWhileSignalling(
      *this, "node5", SIGKILL,
      {"--window", "3", "--timeout", "4", "--out", (dir_ / "run2").string()}, elapsed);
  ASSERT_TRUE(killed) << "node5's collector never appeared";
  // node3's critical verdict wins over the unreachable node (2 beats 4).
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const auto nodes = parseReport(result.out);
  const std::string ctx = result.out + result.err;
  EXPECT_EQ(verdict(nodes, "node5", ctx).severity, "unreachable");
  EXPECT_NE(verdict(nodes, "node5", ctx).unreachable_reason.find("killed by signal 9"),
            std::string::npos)
      << verdict(nodes, "node5", ctx).unreachable_reason;
  // srun drops other tasks' output when a task dies by a signal; the supervisor keeps
  // that from happening, so every other node is reported.
  for (const char* n : {"node1", "node2", "node3", "node4", "node6"}) {
    EXPECT_NE(verdict(nodes, n, ctx).severity, "unreachable")
        << n << ": " << verdict(nodes, n, ctx).unreachable_reason;
  }
  EXPECT_TRUE(has(verdict(nodes, "node3", ctx), "PORT_NOT_ACTIVE_SM", "critical"));
  EXPECT_LT(elapsed, 3s + 4s + 10s);  // bounded by window + --timeout (+ launch), not a hang
}

TEST_F(SlurmJob, AHungCollectorIsStoppedAndNamedWithinTheTimeout) {
  std::chrono::milliseconds elapsed{};
  auto [result, stopped] = jobWhileSignalling(
      *this, "node4", SIGSTOP,
      {"--window", "1", "--timeout", "4", "--out", (dir_ / "run3").string()}, elapsed);
  ASSERT_TRUE(stopped) << "node4's collector never appeared";
  // node3's critical verdict wins over the unreachable node (2 beats 4).
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const auto nodes = parseReport(result.out);
  const std::string ctx = result.out + result.err;
  EXPECT_EQ(verdict(nodes, "node4", ctx).severity, "unreachable");
  EXPECT_NE(verdict(nodes, "node4", ctx).unreachable_reason.find("did not finish in time"),
            std::string::npos)
      << verdict(nodes, "node4", ctx).unreachable_reason;
  EXPECT_TRUE(has(verdict(nodes, "node3", ctx), "PORT_NOT_ACTIVE_SM", "critical"));
  EXPECT_LT(elapsed, 1s + 4s + 10s);
}

TEST_F(SlurmJob, EveryNodeSignsItsSnapshotAndTheLauncherUploadsThemToTheCollector) {
  // A PKI from certs/make-pki: one agent identity per node plus the login node's, a
  // support engineer; each node's agent config names its own certificate.
  const auto pki = dir_ / "pki";
  std::vector<std::string> make{kMakePki,     pki.string(), "--agent",
                                "acme/login", "--support",  "alice"};
  for (int i = 1; i <= 6; ++i) {
    make.push_back("--agent");
    make.push_back("acme/node" + std::to_string(i));
  }
  runOrDie(make);
  std::filesystem::create_directories(pki / "conf");
  for (int i = 1; i <= 6; ++i) {
    const std::string n = "node" + std::to_string(i);
    std::ofstream(pki / "conf" / (n + ".conf"))
        << "cert = " << (pki / "agents" / "acme" / (n + ".pem")).string()
        << "\nkey = " << (pki / "agents" / "acme" / (n + ".key")).string() << "\n";
  }
  const std::string ca = (pki / "ca.pem").string();
  ibc::test::CollectorProcess collector(
      IBC_COLLECTOR_BINARY,
      {"--listen", "127.0.0.1:0", "--data", (dir_ / "store").string(), "--ca", ca, "--cert",
       (pki / "collector.pem").string(), "--key", (pki / "collector.key").string()},
      (dir_ / "collector.log").string());
  ASSERT_GT(collector.port(), 0);
  const auto out = dir_ / "run6";
  auto r = runJob({"--window", "0", "--out", out.string(), "--node-config",
                   (pki / "conf" / "%h.conf").string(), "--collector", collector.address(), "--ca",
                   ca, "--cert", (pki / "agents" / "acme" / "login.pem").string(), "--key",
                   (pki / "agents" / "acme" / "login.key").string(), "--spool",
                   (dir_ / "spool").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err << collector.log();  // node3's critical finding; all delivered
  // Over one connection, pipelined: one line for the six.
  EXPECT_THAT(r.err, HasSubstr("delivered 6 of 6 snapshot(s) to " + collector.address()));

  // Support fetches the job: the very bytes the nodes signed.
  ProcessRunner runner;
  const auto fetched = dir_ / "fetched";
  auto f = runner.run(
      {IBC_BINARY, "fetch", "--job", job_, "--tenant", "acme", "-o", fetched.string(),
       "--collector", collector.address(), "--ca", ca, "--cert",
       (pki / "support" / "alice.pem").string(), "--key", (pki / "support" / "alice.key").string()},
      60s);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->exit_code, 0) << f->err;
  std::multiset<std::string> sent, got;
  for (const auto& e : std::filesystem::directory_iterator(out))
    sent.insert(ibc::test::readAll(e.path().string()));
  for (const auto& e : std::filesystem::directory_iterator(fetched))
    got.insert(ibc::test::readAll(e.path().string()));
  EXPECT_EQ(sent.size(), 6u);
  EXPECT_EQ(sent, got);
  // Offline verification of what the nodes signed.
  std::vector<std::string> verify{IBC_BINARY, "verify", "--ca", ca};
  for (const auto& e : std::filesystem::directory_iterator(out))
    verify.push_back(e.path().string());
  auto v = runner.run(verify, 60s);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->exit_code, 0) << v->out << v->err;
}

// Issue 24, zero-install --job: the nodes have no ibcollect, on their PATH or anywhere, and
// --job still gets every node's verdict because srun ships the launcher to them.
//
// All six nodes are this machine, so "not installed on the nodes" has to be made true on
// purpose: the launcher is a copy of the test binary in a directory of its own, and every
// node's mount namespace (its slurmd's, inherited by the steps it starts) has an empty
// read-only tmpfs over that directory. The launcher runs the copy; the nodes cannot see
// it at that path. PATH is cut to the system directories (srun hands the launcher's
// environment to the steps), and a step on every node first checks that neither the path
// nor `command -v ibcollect` finds anything. The same launcher told to use that path on
// the nodes (--agent, no shipping) then fails on every node: the nodes really lack it.
TEST_F(SlurmJob, NodesWithoutIbcollectStillAnswerBecauseSrunShipsTheLauncher) {
  const auto launcher_dir = dir_ / "launcher";
  std::filesystem::create_directories(launcher_dir);
  std::filesystem::permissions(launcher_dir, std::filesystem::perms::owner_all);
  const auto launcher = launcher_dir / "ibcollect";
  std::filesystem::copy_file(IBC_BINARY, launcher);
  runOrDie({kCluster, "mount-tmpfs", dir_.string(), launcher_dir.string(), "ro,size=1m"});
  const std::string path = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  ProcessRunner runner;

  // What a step on each node finds: nothing.
  auto seen =
      runner.run({"env", path, "srun", "--jobid=" + job_, "--overlap", "-N", "6",
                  "--ntasks-per-node=1", "/bin/sh", "-c",
                  "if command -v ibcollect >/dev/null || [ -e \"$1\" ]; then echo \"found on "
                  "$SLURMD_NODENAME\"; else echo \"missing on $SLURMD_NODENAME\"; fi",
                  "sh", launcher.string()},
                 60s);
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(count(seen->out, "missing on node"), 6u) << seen->out << seen->err;
  EXPECT_EQ(count(seen->out, "found"), 0u) << seen->out;
  ASSERT_TRUE(std::filesystem::exists(launcher));  // while the launcher has it

  // --job without --agent: every node's verdict, from the copy srun shipped.
  const auto ship = dir_ / "ship";
  std::filesystem::create_directories(ship);
  auto shipped =
      runner.run({"env", path, launcher.string(), "--job", job_, "--format", "json", "--window",
                  "0", "--ship-dir", ship.string(), "--out", (dir_ / "run9").string()},
                 120s);
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(shipped->exit_code, 2) << shipped->err;  // node3's critical finding, all answered
  const auto nodes = parseReport(shipped->out);
  const std::string ctx = shipped->out + shipped->err;
  ASSERT_EQ(nodes.size(), 6u) << ctx.substr(0, 2000);
  for (const char* n : {"node1", "node2", "node3", "node4", "node5", "node6"}) {
    EXPECT_NE(verdict(nodes, n, ctx).severity, "unreachable")
        << n << ": " << verdict(nodes, n, ctx).unreachable_reason;
  }
  EXPECT_TRUE(has(verdict(nodes, "node3", ctx), "PORT_NOT_ACTIVE_SM", "critical"));
  EXPECT_THAT(shipped->err, HasSubstr("srun ships this program to the nodes (" + ship.string() +
                                      "/ibcollect-job" + job_ + "-"));
  // Each step removed its copy, and the last one the directory: nothing is left.
  EXPECT_TRUE(std::filesystem::is_empty(ship)) << ctx.substr(0, 2000);

  // Control: the same launcher running "its own path" on the nodes, as before shipping.
  auto installed =
      runner.run({"env", path, launcher.string(), "--job", job_, "--format", "json", "--window",
                  "0", "--agent", launcher.string(), "--out", (dir_ / "run10").string()},
                 120s);
  ASSERT_TRUE(installed.ok());
  EXPECT_EQ(installed->exit_code, 4) << installed->err;
  const auto none = parseReport(installed->out);
  ASSERT_EQ(none.size(), 6u) << installed->out.substr(0, 1000) << installed->err;
  for (const auto& [node, v] : none) {
    EXPECT_EQ(v.severity, "unreachable") << node;
    EXPECT_THAT(v.unreachable_reason,
                HasSubstr("ibcollect is not installed at " + launcher.string()))
        << node << ": " << v.unreachable_reason;
  }
}

// A node whose ship directory is full, and one where it is mounted noexec: both named with
// what to do, the four others still collected, and no copy left anywhere.
TEST_F(SlurmJob, ANodeThatCannotTakeOrRunTheCopyIsNamedAndTheOthersAnswer) {
  const auto ship = dir_ / "ship-bad";
  std::filesystem::create_directories(ship);
  runOrDie({kCluster, "mount-tmpfs", dir_.string(), ship.string(), "size=64k", "node2"});
  runOrDie({kCluster, "mount-tmpfs", dir_.string(), ship.string(), "noexec", "node4"});
  auto r =
      runJob({"--window", "0", "--ship-dir", ship.string(), "--out", (dir_ / "run11").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;  // node3's critical finding wins over the two
  const auto nodes = parseReport(r.out);
  const std::string ctx = r.out + r.err;
  const auto& full = verdict(nodes, "node2", ctx);
  EXPECT_EQ(full.severity, "unreachable");
  EXPECT_THAT(full.unreachable_reason, HasSubstr("srun could not copy ibcollect to the node"));
  EXPECT_THAT(full.unreachable_reason, HasSubstr("REQUEST_FILE_BCAST(node2)"));
  const auto& noexec = verdict(nodes, "node4", ctx);
  EXPECT_EQ(noexec.severity, "unreachable");
  EXPECT_THAT(noexec.unreachable_reason, HasSubstr("probably mounted noexec"));
  EXPECT_THAT(noexec.unreachable_reason, HasSubstr("slurmstepd-node4: error: execve()"));
  for (const char* n : {"node1", "node3", "node5", "node6"}) {
    EXPECT_NE(verdict(nodes, n, ctx).severity, "unreachable")
        << n << ": " << verdict(nodes, n, ctx).unreachable_reason;
  }
  // What each node sees in its ship directory afterwards: nothing.
  for (const char* n : {"node2", "node4"}) {
    const auto pids = nodePids(n);
    ASSERT_FALSE(pids.empty());
    EXPECT_EQ(
        runOrDie({"nsenter", "-t", std::to_string(pids.front()), "-m", "ls", "-A", ship.string()}),
        "")
        << n;
  }
  EXPECT_TRUE(std::filesystem::is_empty(ship));
}

TEST_F(SlurmJob, ADeadSlurmdIsNamedUnreachableWithinTheTimeout) {
  const auto pids = nodePids("node6");
  ASSERT_FALSE(pids.empty());
  ASSERT_EQ(::kill(pids.front(), SIGKILL), 0);  // node6's slurmd, started by this test
  std::chrono::milliseconds elapsed{};
  auto r = runJob({"--window", "1", "--timeout", "5", "--out", (dir_ / "run4").string()}, &elapsed);
  // node3's critical verdict wins over the unreachable node (2 beats 4).
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto nodes = parseReport(r.out);
  const std::string ctx = r.out + r.err;
  EXPECT_EQ(verdict(nodes, "node6", ctx).severity, "unreachable");
  EXPECT_FALSE(verdict(nodes, "node6", ctx).unreachable_reason.empty());
  for (const char* n : {"node1", "node2", "node3", "node4"})
    EXPECT_NE(verdict(nodes, n, ctx).severity, "unreachable") << n;
  EXPECT_LT(elapsed, 1s + 5s + 10s);
  std::cerr << "[ measured ] with a dead slurmd: " << elapsed.count() << " ms\n";
}

TEST_F(SlurmJob, UnknownFinishedAndSlurmlessJobsSayWhyWithTheirExitCodes) {
  ProcessRunner runner;
  auto unknown = runner.run({IBC_BINARY, "--job", "999999"}, 60s);
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->exit_code, 3);
  EXPECT_THAT(unknown->err, HasSubstr("does not exist"));

  const std::string done = submit("true", 1, "COMPLETED");
  ASSERT_FALSE(done.empty());
  auto finished = runner.run({IBC_BINARY, "--job", done}, 60s);
  ASSERT_TRUE(finished.ok());
  EXPECT_EQ(finished->exit_code, 4);
  EXPECT_THAT(finished->err, HasSubstr("COMPLETED"));

  auto no_slurm = runner.run({"env", "PATH=/nonexistent", IBC_BINARY, "--job", job_}, 60s);
  ASSERT_TRUE(no_slurm.ok());
  EXPECT_EQ(no_slurm->exit_code, 4);
  EXPECT_THAT(no_slurm->err, HasSubstr("Slurm is not installed"));
}

}  // namespace

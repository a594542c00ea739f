// Issue 21, end to end on a real Slurm cluster (tests/integration/slurm/cluster.sh): one job
// verdict travels unchanged from the customer to the provider. Four nodes see the real gcm
// captures of 8x HDR VFs (node3: two ports stuck in INIT and a real NCCL log of status-12
// completion errors printed by a host named kp-ddp-worker-0; node4: every port at 100 of
// 200 Gb/s). `--job` with uploads → `case create` → `bundle export --case` (and --redact) →
// `host-inspect --bundle` on the labelled-synthetic host trees → `--attach-to` with a
// provider certificate → `bundle verify` → the console's loader and `ibcollect-console
// --screenshot` open the bundle. At every stage node3's and node4's (node, code) sets are the
// same. An agent certificate attaching, and host-inspect on a tampered bundle, are refused.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "collector_process.h"
#include "fixtures.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/console/job_data.h"
#include "ibc/core/signing.h"
#include "ibc/core/text.h"
#include "ibc/os/os.h"
#include "ibcollect/v1/report.pb.h"
#include "slurm_cluster.h"
#include "sysfs_json.h"

using ::testing::Not;

using ::testing::HasSubstr;

namespace {

namespace fs = std::filesystem;
namespace v1 = ::ibcollect::v1;
using ibc::os::CommandResult;
using ibc::os::ProcessRunner;
using namespace std::chrono_literals;
using CodeSets = std::map<std::string, std::set<std::string>>;  // node -> codes above info

const std::string kCluster = std::string(IBC_SOURCE_DIR) + "/tests/integration/slurm/cluster.sh";
const std::string kMakePki = std::string(IBC_SOURCE_DIR) + "/certs/make-pki";
const std::string kHostTrees =
    std::string(IBC_SOURCE_DIR) + "/tests/fixtures/synthetic/make_host_trees.py";

CommandResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = 120s) {
  ProcessRunner runner;
  auto r = runner.run(argv, timeout);
  EXPECT_TRUE(r.ok()) << argv[0] << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : CommandResult{};
}

// The nodes' codes of a {"nodes","findings"} document (findings.json, --format json).
CodeSets codesOf(const std::string& json) {
  v1::Report report;
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = true;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &report, o).ok())
      << json.substr(0, 300);
  CodeSets out;
  for (const auto& f : report.findings()) {
    if (f.severity() != "info") out[f.node()].insert(f.code());
  }
  return out;
}

std::string dump(const std::set<std::string>& s) {
  std::string out;
  for (const auto& c : s) out += c + " ";
  return out;
}

void runOrFail(const std::vector<std::string>& argv) {
  auto r = run(argv);
  ASSERT_EQ(r.exit_code, 0) << argv[0] << ": " << r.err;
}

class JobVerdictE2e : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = ibc::test::slurmClusterUnavailable();
    if (!skip_.empty()) return;
    dir_ = fs::temp_directory_path() / ("ibc-verdict-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    const std::map<std::string, std::string> captures = {
        {"node1", "learn_good_8xhdr200-all-active"},
        {"node2", "learn_good_8xhdr200-all-active"},
        {"node3", "learn_stuck_ib_intf_two-ports-state-INIT-ipoib-down"},
        {"node4", "learn_ib_intf_bad_rate_8x-rate-100edr-vs-ipoib-200000"}};
    std::vector<std::string> start{kCluster, "start", dir_.string()};
    for (const auto& [node, capture] : captures) {
      const auto tree = dir_ / "trees" / node;
      fs::create_directories(tree);
      ibc::test::materializeSysfsJson(
          ibc::test::readFixture("real/sysfs/sysfs-json_gcm-" + capture + ".json"), tree.string());
      start.push_back(node + "=pci:" + tree.string());
    }
    auto started = run(start, 120s);
    if (started.exit_code != 0) {
      ADD_FAILURE() << "cluster.sh start: " << started.err;
      return;
    }
    ::setenv("SLURM_CONF", (dir_ / "slurm.conf").c_str(), 1);
    auto sb = run({"sbatch", "--parsable", "--output=/dev/null", "-N", "4", "--wrap", "sleep 900"});
    job_ = std::string(ibc::core::trim(sb.out));
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (run({"scontrol", "show", "job", job_}, 10s).out.find("JobState=RUNNING") !=
          std::string::npos)
        return;
      std::this_thread::sleep_for(100ms);  // polling the scheduler, not synchronisation
    }
    ADD_FAILURE() << "job " << job_ << " did not start";
  }

  static void TearDownTestSuite() {
    if (dir_.empty()) return;
    auto stop = run({kCluster, "stop", dir_.string()}, 120s);
    EXPECT_EQ(stop.exit_code, 0) << stop.err;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_FALSE(job_.empty());
  }

  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static std::string pki(const std::string& name) { return path("pki/" + name); }
  static std::vector<std::string> as(const std::string& who, std::vector<std::string> args,
                                     const std::string& collector) {
    args.insert(args.begin(), IBC_BINARY);
    for (const auto& a :
         {std::string("--collector"), collector, std::string("--ca"), pki("ca.pem"),
          std::string("--cert"), pki(who + ".pem"), std::string("--key"), pki(who + ".key")})
      args.push_back(a);
    return args;
  }

  static inline std::string skip_;
  static inline fs::path dir_;
  static inline std::string job_;
};

TEST_F(JobVerdictE2e, OneVerdictFromTheJobThroughTheBundleToTheHostAndTheConsole) {
  runOrFail({kMakePki, pki(""), "--agent", "acme/login", "--agent", "acme/node1", "--agent",
             "acme/node2", "--agent", "acme/node3", "--agent", "acme/node4", "--support", "alice",
             "--provider", "hank"});
  fs::create_directories(path("conf"));
  for (int i = 1; i <= 4; ++i) {
    const std::string n = "node" + std::to_string(i);
    std::ofstream(path("conf/" + n + ".conf"))
        << "cert = " << pki("agents/acme/" + n + ".pem")
        << "\nkey = " << pki("agents/acme/" + n + ".key") << "\n";
  }
  // node3's own NCCL log (NCCL_DEBUG_FILE=/logs/nccl.%h.log): a real capture.
  fs::create_directories(path("logs"));
  std::ofstream(path("logs/nccl.node3.log")) << ibc::test::readFixture(
      "real/nccl-logs/nccl-log_roce-ipv6gid-completion-status12-vendor129_nccl-issue-"
      "1405.txt");
  ibc::test::CollectorProcess collector(
      IBC_COLLECTOR_BINARY,
      {"--listen", "127.0.0.1:0", "--data", path("store"), "--ca", pki("ca.pem"), "--cert",
       pki("collector.pem"), "--key", pki("collector.key")},
      path("collector.log"));
  ASSERT_GT(collector.port(), 0);

  // 1. The customer: --job, each node signing its snapshot, the launcher uploading them.
  auto job = run({IBC_BINARY,
                  "--job",
                  job_,
                  "--format",
                  "json",
                  "--window",
                  "0",
                  "--nccl-log",
                  path("logs/nccl.%h.log"),
                  "--out",
                  path("run"),
                  "--node-config",
                  path("conf/%h.conf"),
                  "--collector",
                  collector.address(),
                  "--ca",
                  pki("ca.pem"),
                  "--cert",
                  pki("agents/acme/login.pem"),
                  "--key",
                  pki("agents/acme/login.key"),
                  "--spool",
                  path("spool")});
  ASSERT_EQ(job.exit_code, 2) << job.err << collector.log();
  const CodeSets verdict = codesOf(job.out);
  const auto& node3 = verdict.count("node3") ? verdict.at("node3") : std::set<std::string>{};
  const auto& node4 = verdict.count("node4") ? verdict.at("node4") : std::set<std::string>{};
  EXPECT_TRUE(node3.count("PORT_NOT_ACTIVE_SM")) << dump(node3);
  EXPECT_TRUE(node3.count("NCCL_IB_COMPLETION_ERROR")) << dump(node3);  // node3's, not a 5th node
  EXPECT_TRUE(node4.count("LINK_RATE_BELOW_EXPECTED")) << dump(node4);
  EXPECT_EQ(verdict.count("kp-ddp-worker-0"), 0u) << job.out.substr(0, 2000);
  for (const std::string healthy : {"node1", "node2"}) {
    const auto it = verdict.find(healthy);
    if (it != verdict.end()) {
      EXPECT_EQ(it->second.count("ESCALATE_HOST_INSPECTION"), 0u)
          << healthy << ": " << dump(it->second);
    }
  }
  // The cluster's nodes are VMs when this machine is one (their snapshots say why): then both
  // suspects are escalated, node4 on the peers' rate alone.
  bool vms = false;
  for (const auto& e : fs::directory_iterator(path("run"))) {
    vms = vms ||
          ibc::test::readAll(e.path().string()).find("CPU flag hypervisor") != std::string::npos;
  }
  if (vms) {
    EXPECT_TRUE(node3.count("ESCALATE_HOST_INSPECTION")) << dump(node3);
    EXPECT_TRUE(node4.count("ESCALATE_HOST_INSPECTION")) << dump(node4);
  }
  const auto same = [&](const CodeSets& got, const std::string& stage) {
    for (const std::string n : {"node3", "node4"}) {
      const auto it = got.find(n);
      EXPECT_EQ(it == got.end() ? std::set<std::string>{} : it->second, verdict.at(n))
          << stage << ": " << n;
    }
  };

  // 2. Support: a case on the job, exported with the job's verdict.
  auto created = run(as("support/alice",
                        {"case", "create", "--tenant", "acme", "--job", job_, "--title",
                         "all_reduce hangs", "--node", "node3", "--node", "node4"},
                        collector.address()));
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string case_id = created.out.substr(5, created.out.find(' ', 5) - 5);
  const std::string bundle = path("case.ibbundle");
  auto exported = run(as("support/alice", {"bundle", "export", "--case", case_id, "-o", bundle},
                         collector.address()));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  auto members = ibc::bundle::readBundleArchive(ibc::test::readAll(bundle));
  ASSERT_TRUE(members.ok());
  same(codesOf(members->at("findings.json")), "bundle findings.json");
  EXPECT_THAT(members->at("report.md"), HasSubstr("## Ports per node"));
  EXPECT_THAT(members->at("pf-inspection.md"), Not(HasSubstr("Why: ESCALATE_HOST_INSPECTION")));
  auto shown = run({IBC_BINARY, "bundle", "show", bundle});
  EXPECT_THAT(shown.out, HasSubstr("  node4: "));

  // The redacted export: no node name, log host name or GID of the job survives.
  auto redacted =
      run(as("support/alice",
             {"bundle", "export", "--case", case_id, "--redact", "-o", path("redacted.ibbundle")},
             collector.address()));
  ASSERT_EQ(redacted.exit_code, 0) << redacted.err;
  auto hidden = ibc::bundle::readBundleArchive(ibc::test::readAll(path("redacted.ibbundle")));
  ASSERT_TRUE(hidden.ok());
  for (const auto& [name, bytes] : *hidden) {
    if (name == "manifest.sig") continue;  // the exporter's certificate (DER)
    for (const std::string secret : {"node1", "node2", "node3", "node4", "kp-ddp-worker-0",
                                     "fd00:1148:9000:5000:4:200:3:ff1f", "10.216.210.236"}) {
      std::size_t at = 0;
      while ((at = bytes.find(secret, at)) != std::string::npos) {
        const bool longer = at + secret.size() < bytes.size() &&
                            std::isalnum(static_cast<unsigned char>(bytes[at + secret.size()]));
        EXPECT_TRUE(longer) << secret << " survives in " << name << ": "
                            << bytes.substr(at > 40 ? at - 40 : 0, 100);
        at += secret.size();
      }
    }
  }
  EXPECT_TRUE(fs::exists(path("redacted.ibbundle.pseudonyms.tsv")));

  // 3. The provider: host-inspect verifies first, then says the same about the suspects the
  // bundle names (the gcm captures' GUID files hold their own names: nothing to look for).
  auto trees = run({"python3", kHostTrees, IBC_FIXTURES_DIR, path("hosts")});
  ASSERT_EQ(trees.exit_code, 0) << trees.err;
  auto inspected = run({IBC_BINARY, "host-inspect", "--bundle", bundle, "--ca", pki("ca.pem"),
                        "--root", path("hosts/bundle-pf-errors"), "--format", "json"});
  EXPECT_LE(inspected.exit_code, 2) << inspected.err;
  const CodeSets host = codesOf(inspected.out);
  for (const auto& [node, codes] : host) EXPECT_EQ(codes.count("PF_NOT_FOUND"), 0u) << node;
  std::size_t missing_in_bundle = 0, missing_on_host = 0;
  for (const auto& [node, codes] : verdict) missing_in_bundle += codes.count("VF_IDENTITY_MISSING");
  for (const auto& [node, codes] : host) missing_on_host += codes.count("VF_IDENTITY_MISSING");
  EXPECT_EQ(missing_on_host > 0, missing_in_bundle > 0) << inspected.out.substr(0, 2000);

  // An agent certificate may not attach; a provider attaches, and the bundle still verifies,
  // judged again to the same verdict, with both signers listed.
  auto agent = run({IBC_BINARY, "host-inspect", "--bundle", bundle, "--ca", pki("ca.pem"), "--root",
                    path("hosts/bundle-pf-errors"), "--attach-to", bundle, "--cert",
                    pki("agents/acme/node3.pem"), "--key", pki("agents/acme/node3.key")});
  EXPECT_EQ(agent.exit_code, 3) << agent.err;
  auto attached = run({IBC_BINARY, "host-inspect", "--bundle", bundle, "--ca", pki("ca.pem"),
                       "--root", path("hosts/bundle-pf-errors"), "--attach-to", bundle, "--cert",
                       pki("provider/hank.pem"), "--key", pki("provider/hank.key")});
  EXPECT_LE(attached.exit_code, 2) << attached.err;
  auto verified = run({IBC_BINARY, "bundle", "verify", bundle, "--ca", pki("ca.pem")});
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  EXPECT_THAT(verified.out, HasSubstr("judged again: the snapshots give the same"));
  EXPECT_THAT(verified.out, HasSubstr("CN=hank,OU=provider,O=ibcollect (provider)"));
  members = ibc::bundle::readBundleArchive(ibc::test::readAll(bundle));
  ASSERT_TRUE(members.ok());
  same(codesOf(members->at("findings.json")), "attached bundle findings.json");

  // A report edited after export: host-inspect refuses the bundle (exit 5).
  auto tampered = *members;
  tampered["report.md"] += "\nAll healthy, close the case.\n";
  std::ofstream(path("tampered.ibbundle"), std::ios::binary)
      << *ibc::bundle::writeBundleArchive(tampered);
  auto refused = run({IBC_BINARY, "host-inspect", "--bundle", path("tampered.ibbundle"), "--ca",
                      pki("ca.pem"), "--root", path("hosts/bundle-pf-errors")});
  EXPECT_EQ(refused.exit_code, 5) << refused.out << refused.err;

  // 4. The console opens the bundle offline, verified with the CA: the same verdict.
  auto verifier = ibc::core::SignatureVerifier::fromPem(ibc::test::readAll(pki("ca.pem")));
  ASSERT_TRUE(verifier.ok());
  const auto console = ibc::console::loadSnapshotFiles({bundle}, {}, {}, nullptr, verifier->get());
  EXPECT_TRUE(console.errors.empty()) << console.errors.front();
  CodeSets shown_codes;
  for (const auto& f : console.report.findings()) {
    if (f.severity() != "info") shown_codes[f.node()].insert(f.code());
  }
  same(shown_codes, "console");
  auto shot = run({IBC_CONSOLE_BINARY, bundle, "--ca", pki("ca.pem"), "--screenshot", path("shots"),
                   "--page", "grid"},
                  120s);
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
  EXPECT_TRUE(fs::exists(path("shots/grid.png")));
}

}  // namespace

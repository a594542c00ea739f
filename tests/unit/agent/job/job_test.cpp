// The --job launcher through a scripted command runner: job resolution on real
// `scontrol show job` captures, error paths, srun output reassembly, unreachable nodes,
// shipping this program to the nodes (srun --bcast) and what its failures say.

#include "ibc/agent/job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "fixtures.h"
#include "ibc/core/slurm.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/step_output.h"
#include "ibc/core/text.h"
#include "os_doubles.h"

using ::testing::HasSubstr;

namespace ibc::agent {
namespace {

CommandResult ok(std::string out) { return CommandResult{0, false, std::move(out), "", false}; }

JobOptions options(const std::string& id) {
  JobOptions o;
  o.job_id = id;
  o.agent_path = "/opt/ibcollect/bin/ibcollect";
  o.window = std::chrono::seconds(10);
  o.timeout = std::chrono::seconds(5);
  return o;
}

// Job 77 collected over ssh, `parallelism` sessions at a time (0: the default).
JobOptions sshOptions(std::size_t parallelism = 0) {
  JobOptions o = options("77");
  o.launcher = Launcher::Ssh;
  if (parallelism > 0) o.ssh_parallelism = parallelism;
  return o;
}

TEST(ResolveSlurmJob, ARunningJobFromARealCapture) {
  ibc::test::ScriptedRunner r;
  r.scripts["scontrol"] = ok(ibc::test::readFixture(
      "real/slurm/scontrol-show-job_8node-64gpu-running_gcm-shelper-testdata.txt"));
  auto job = resolveSlurmJob(r, options("8401413"));
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->node_list, "node[1433,1787,1795,1854,1889-1890,1968-1969]");
  EXPECT_EQ(r.calls.front(), (std::vector<std::string>{"scontrol", "show", "job", "8401413"}));
}

TEST(ResolveSlurmJob, AFailedJobHasNoNodesToCollect) {
  ibc::test::ScriptedRunner r;
  r.scripts["scontrol"] = ok(ibc::test::readFixture(
      "real/slurm/"
      "scontrol-show-job_failed-nonzeroexitcode-markdown-bold-partial_ubuntu-slurm-issue-5.txt"));
  auto job = resolveSlurmJob(r, options("42"));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().code, ErrorCode::Unsupported);
  EXPECT_THAT(job.error().message, HasSubstr("FAILED (NonZeroExitCode)"));
  EXPECT_THAT(job.error().message, HasSubstr("--launcher ssh --hosts asus"));
}

TEST(ResolveSlurmJob, UnknownJobsPermissionAndMissingSlurmAreDistinct) {
  ibc::test::ScriptedRunner unknown;
  unknown.scripts["scontrol"] =
      CommandResult{1, false, "", "slurm_load_jobs error: Invalid job id specified\n", false};
  auto u = resolveSlurmJob(unknown, options("999"));
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().code, ErrorCode::InvalidArgument);

  // Slurm 22.05 prints this for a job that does not exist and for one PrivateData=jobs
  // hides from this user alike: the message must not claim the job does not exist.
  EXPECT_THAT(u.error().message,
              HasSubstr("does not exist or is not visible to you (Slurm PrivateData)"));

  ibc::test::ScriptedRunner denied;
  denied.scripts["scontrol"] =
      CommandResult{1, false, "", "slurm_load_jobs error: Access/permission denied\n", false};
  auto d = resolveSlurmJob(denied, options("7"));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, ErrorCode::PermissionDenied);

  ibc::test::ScriptedRunner none;
  auto n = resolveSlurmJob(none, options("7"));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, ErrorCode::Unavailable);
  EXPECT_THAT(n.error().message, HasSubstr("--launcher ssh"));

  ibc::test::ScriptedRunner hung;
  hung.scripts["scontrol"] = CommandResult{-1, true, "", "", false};
  auto h = resolveSlurmJob(hung, options("7"));
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.error().message, HasSubstr("slurmctld"));
}

TEST(ExpandJobHosts, FallsBackToTheBuiltInExpansionWithoutScontrol) {
  ibc::test::ScriptedRunner none;
  auto hosts = expandJobHosts(none, "node[1-2],gpu07", std::chrono::seconds(5));
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(*hosts, (std::vector<std::string>{"node1", "node2", "gpu07"}));
}

TEST(UnresponsiveNodes, ReadsSinfoStates) {
  ibc::test::ScriptedRunner r;
  r.scripts["sinfo"] = ok("node1 alloc\nnode2 down*\nnode3 idle*\nnode4 mix\nnode5 drain\n");
  const auto down =
      unresponsiveNodes(r, {"node1", "node2", "node3", "node4", "node5"}, std::chrono::seconds(5));
  EXPECT_EQ(down.size(), 2u);
  EXPECT_THAT(down.at("node2"), HasSubstr("not responding"));
  EXPECT_EQ(down.count("node5"), 0u);  // draining nodes still run the job's steps
}

TEST(CollectJob, ReassemblesEveryNodeFromSrunsMergedOutputAndNamesTheSilentOne) {
  ::ibcollect::v1::Snapshot a, b;
  a.mutable_node()->set_hostname("node1");
  b.mutable_node()->set_hostname("node2");
  b.add_devices()->set_name("mlx5_0");
  const auto la = core::encodeStepOutput("node1", core::wrapUnsigned(a).SerializeAsString());
  const auto lb = core::encodeStepOutput("node2", core::wrapUnsigned(b).SerializeAsString());
  ibc::test::ScriptedRunner r;
  for (std::size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    if (i < la.size()) r.stream_lines.push_back("0: " + la[i].substr(0, la[i].size() - 1));
    if (i < lb.size()) r.stream_lines.push_back("1: " + lb[i].substr(0, lb[i].size() - 1));
  }
  r.stream_result =
      CommandResult{1, false, "", "srun: error: node3: task 2: Exited with exit code 127\n", false};
  ibc::test::FixedClock clock;
  std::vector<std::pair<std::size_t, std::size_t>> progress;
  const auto coll =
      collectJob(options("1234"), {"node1", "node2", "node3"}, r, clock,
                 [&](std::size_t n, std::size_t of) { progress.emplace_back(n, of); });
  ASSERT_EQ(coll.nodes.size(), 3u);
  EXPECT_TRUE(coll.nodes[0].answered);
  EXPECT_TRUE(coll.nodes[1].answered);
  EXPECT_FALSE(coll.nodes[2].answered);
  EXPECT_THAT(coll.nodes[2].unreachable_reason, HasSubstr("node3: task 2"));
  auto snap = core::openSnapshot(coll.nodes[1].envelope);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->devices(0).name(), "mlx5_0");
  EXPECT_EQ(progress.back(), (std::pair<std::size_t, std::size_t>{2, 3}));

  // srun was asked for one task per node on exactly these nodes, all starting their
  // window at the same instant (launch slack after the clock's now).
  const auto& argv = r.calls.back();
  EXPECT_EQ(argv[0], "srun");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--nodelist=node[1-3]"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--overlap"), argv.end());
  auto ws = std::find(argv.begin(), argv.end(), "--window-start");
  ASSERT_NE(ws, argv.end());
  EXPECT_EQ(*(ws + 1), "1800000000500");
}

TEST(CollectJob, SrunNoticesCarrySrunsPrefixOnce) {
  ibc::test::ScriptedRunner r;
  r.stream_result = CommandResult{
      1, false, "",
      "srun: Job 1234 step creation temporarily disabled, retrying (Requested nodes are busy)\n"
      "srun: error: node3: task 2: Exited with exit code 127\n",
      false};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(options("1234"), {"node3"}, r, clock, nullptr);
  ASSERT_EQ(coll.notices.size(), 1u);
  EXPECT_EQ(coll.notices[0], "srun: error: node3: task 2: Exited with exit code 127");
  EXPECT_FALSE(coll.launch_refused);
}

struct SrunRefusal {
  std::string name;
  std::string err;   // srun's stderr, as Slurm 22.05 prints it (seen on the test cluster)
  std::string says;  // in the message
};

class SrunRefusesTheStep : public ::testing::TestWithParam<SrunRefusal> {};

TEST_P(SrunRefusesTheStep, BeforeAnyNodeAnswersOneMessageInsteadOfUnreachableNodes) {
  ibc::test::ScriptedRunner r;
  r.stream_result = CommandResult{1, false, "", GetParam().err, false};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(options("1234"), {"node1", "node2"}, r, clock, nullptr);
  ASSERT_TRUE(coll.launch_refused.has_value());
  EXPECT_NE(coll.launch_refused->find(GetParam().says), std::string::npos) << *coll.launch_refused;
  // srun's line once, with its own prefix once.
  EXPECT_NE(coll.launch_refused->find("(srun: error: Unable to "), std::string::npos)
      << *coll.launch_refused;
  EXPECT_EQ(coll.launch_refused->find("srun: srun:"), std::string::npos);
  EXPECT_TRUE(coll.notices.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Slurm2205, SrunRefusesTheStep,
    ::testing::Values(
        // A user who may see the job (no PrivateData) but is not its owner.
        SrunRefusal{"StepDenied",
                    "srun: error: Unable to create step for job 1234: Access/permission denied\n",
                    "does not let this user run a step in job 1234"},
        // The same user's srun when PrivateData=jobs hides the job.
        SrunRefusal{
            "HiddenJobDenied",
            "srun: error: Unable to confirm allocation for job 1234: Access/permission denied\n"
            "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job 1234\n",
            "does not let this user run a step in job 1234"},
        // The job ended after scontrol saw it (or never existed).
        SrunRefusal{
            "JobGone",
            "srun: error: Unable to confirm allocation for job 1234: Invalid job id specified\n"
            "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job 1234\n",
            "Slurm PrivateData hides it"},
        SrunRefusal{"JobCompleting",
                    "srun: error: Unable to create step for job 1234: Job/step already completing "
                    "or completed\n",
                    "the job ended after it was looked up"}),
    [](const ::testing::TestParamInfo<SrunRefusal>& p) { return p.param.name; });

TEST(CollectJob, ANodesOwnPermissionErrorIsNotSlurmRefusingTheStep) {
  // execve of the agent failing on the nodes is the nodes' business: named per node.
  ibc::test::ScriptedRunner r;
  r.stream_result =
      CommandResult{1, false, "",
                    "slurmstepd: error: execve(): /opt/ibcollect/bin/ibcollect: Permission denied\n"
                    "srun: error: node1: task 0: Exited with exit code 13\n",
                    false};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(options("1234"), {"node1"}, r, clock, nullptr);
  EXPECT_FALSE(coll.launch_refused);
  ASSERT_EQ(coll.nodes.size(), 1u);
  EXPECT_THAT(coll.nodes[0].unreachable_reason, HasSubstr("node1: task 0"));
}

TEST(CollectJob, NodesThatNeverAnswerAreUnreachableWithTheTimeoutInTheReason) {
  ibc::test::ScriptedRunner r;
  r.stream_result = CommandResult{-1, true, "", "", false};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(options("1234"), {"node1"}, r, clock, nullptr);
  ASSERT_EQ(coll.nodes.size(), 1u);
  EXPECT_FALSE(coll.nodes[0].answered);
  EXPECT_THAT(coll.nodes[0].unreachable_reason, HasSubstr("no answer within 5 s"));
  EXPECT_FALSE(coll.notices.empty());
}

TEST(CollectJob, SshRunsOneQuotedRemoteCommandPerHost) {
  ibc::test::ScriptedRunner r;
  ibc::test::FixedClock clock;
  auto o = sshOptions();
  o.nccl_logs = {"/tmp/nccl.%h.log"};
  (void)collectJob(o, {"gpu1", "gpu2"}, r, clock, nullptr);
  ASSERT_EQ(r.calls.size(), 2u);
  for (const auto& argv : r.calls) {
    EXPECT_EQ(argv[0], "ssh");
    EXPECT_NE(std::find(argv.begin(), argv.end(), "BatchMode=yes"), argv.end());
    EXPECT_THAT(argv.back(), HasSubstr("'job-step'"));
    EXPECT_THAT(argv.back(), HasSubstr("'/tmp/nccl.%h.log'"));
  }
}

// ssh to a node that behaves like `ibcollect job-step`: it answers at the end of its
// counter window. With late_step_fails, a step launched after its window start reports
// that the collector did not finish in time, as runStep does when its deadline (window
// start + window + 0.8 × timeout) has mostly gone before it began; only meaningful when
// sessions run one at a time, since fake sessions end instantly and would make parallel
// siblings look late.
class SshNodes : public CommandRunner {
 public:
  SshNodes(ibc::test::AdvancedClock& clock, std::chrono::milliseconds window)
      : clock_(clock), window_(window) {}
  Result<CommandResult> run(const std::vector<std::string>&, std::chrono::milliseconds,
                            std::size_t) override {
    return Error{ErrorCode::NotFound, "not scripted"};
  }
  bool available(std::string_view) const override { return true; }
  Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds,
                                     const std::function<bool(std::string_view)>& on_line,
                                     std::size_t) override {
    const std::string host = argv[argv.size() - 2];
    const std::string& remote = argv.back();
    const std::string key = "'--window-start' '";
    const auto at = remote.find(key);
    if (at == std::string::npos) return Error{ErrorCode::InvalidArgument, "no --window-start"};
    const auto start = std::chrono::system_clock::time_point(
        std::chrono::milliseconds(std::stoll(remote.substr(at + key.size()))));
    const auto launched = clock_.now();
    {
      std::lock_guard<std::mutex> lock(mu);
      sessions.push_back({host, start, launched});
      max_in_flight = std::max(max_in_flight, ++in_flight);
    }
    std::vector<std::string> lines;
    if (late_step_fails && launched > start) {
      lines.push_back(core::encodeStepError(
          host, "the collector did not finish in time (hung in a kernel read?); stopped it"));
    } else {
      ::ibcollect::v1::Snapshot snap;
      snap.mutable_node()->set_hostname(host);
      lines = core::encodeStepOutput(host, core::wrapUnsigned(snap).SerializeAsString());
    }
    for (auto& l : lines) {
      l.pop_back();  // the runner hands lines without their newline
      on_line(l);
    }
    clock_.advanceTo(std::max(launched, start) + window_);
    {
      std::lock_guard<std::mutex> lock(mu);
      --in_flight;
    }
    return CommandResult{0, false, "", "", false};
  }

  struct Session {
    std::string host;
    std::chrono::system_clock::time_point window_start, launched;
  };
  bool late_step_fails = false;
  std::mutex mu;
  std::vector<Session> sessions;
  std::size_t in_flight = 0, max_in_flight = 0;

 private:
  ibc::test::AdvancedClock& clock_;
  std::chrono::milliseconds window_;
};

std::vector<std::string> hostNames(std::size_t n) {
  std::vector<std::string> hosts;
  for (std::size_t i = 1; i <= n; ++i) hosts.push_back("gpu" + std::to_string(i));
  return hosts;
}

TEST(CollectJob, SshHostsBeyondTheParallelismStartTheirWindowAfterTheyAreLaunched) {
  // One session at a time, three hosts: host 2 and 3 can only be launched once host 1's
  // window is over, so they need a window start of their own.
  ibc::test::AdvancedClock clock;
  auto o = sshOptions(1);
  SshNodes r(clock, o.window);
  r.late_step_fails = true;
  const auto begin = clock.now();
  const auto coll = collectJob(o, hostNames(3), r, clock, nullptr);
  ASSERT_EQ(coll.nodes.size(), 3u);
  for (const auto& n : coll.nodes)
    EXPECT_TRUE(n.answered) << n.node << ": " << n.unreachable_reason;
  ASSERT_EQ(r.sessions.size(), 3u);
  for (const auto& s : r.sessions) {
    EXPECT_LE(s.launched, s.window_start) << s.host << " was launched after its window start";
  }
  EXPECT_EQ(coll.waves, 3u);
  EXPECT_EQ(r.max_in_flight, 1u);
  // Bounded: each wave within launch slack + window + --timeout.
  EXPECT_LE(clock.now() - begin, 3 * (o.launch_slack + o.window + o.timeout));
  ASSERT_EQ(coll.notices.size(), 1u);
  EXPECT_THAT(coll.notices[0], HasSubstr("3 waves"));
}

TEST(CollectJob, SshWavesShareOneWindowStartPerWaveAndNeverOverlap) {
  ibc::test::AdvancedClock clock;
  auto o = sshOptions(2);
  SshNodes r(clock, o.window);
  const auto hosts = hostNames(5);
  const auto coll = collectJob(o, hosts, r, clock, nullptr);
  for (const auto& n : coll.nodes)
    EXPECT_TRUE(n.answered) << n.node << ": " << n.unreachable_reason;
  std::map<std::string, std::chrono::system_clock::time_point> start;
  for (const auto& s : r.sessions) start[s.host] = s.window_start;
  ASSERT_EQ(start.size(), 5u);
  // Waves in host order: {gpu1, gpu2}, {gpu3, gpu4}, {gpu5}.
  EXPECT_EQ(start["gpu1"], start["gpu2"]);
  EXPECT_EQ(start["gpu3"], start["gpu4"]);
  // A wave starts after the previous wave's windows are over.
  EXPECT_GE(start["gpu3"], start["gpu1"] + o.window);
  EXPECT_GE(start["gpu5"], start["gpu3"] + o.window);
  EXPECT_EQ(coll.waves, 3u);
  EXPECT_LE(r.max_in_flight, 2u);
  EXPECT_EQ(coll.window_start, start["gpu1"]);
}

TEST(CollectJob, SshWithinTheParallelismIsOneWaveWithOneWindowStart) {
  ibc::test::AdvancedClock clock;
  auto o = sshOptions();
  SshNodes r(clock, o.window);
  const auto coll = collectJob(o, hostNames(40), r, clock, nullptr);
  std::set<std::chrono::system_clock::time_point> starts;
  for (const auto& s : r.sessions) starts.insert(s.window_start);
  EXPECT_EQ(starts.size(), 1u);
  EXPECT_EQ(coll.waves, 1u);
  EXPECT_TRUE(coll.notices.empty());
  for (const auto& n : coll.nodes) EXPECT_TRUE(n.answered) << n.node;
}

// Shipping (srun --bcast): a runner that answers each of the three srun steps — make the
// private directory, collect (possibly more than once), remove leftovers — by its argv.
class ShippingSlurm : public CommandRunner {
 public:
  struct Step {
    std::vector<std::string> lines;  // stdout, without newlines
    CommandResult result{0, false, "", "", false};
  };
  Result<CommandResult> run(const std::vector<std::string>& argv, std::chrono::milliseconds,
                            std::size_t) override {
    calls.push_back(argv);
    return remove;
  }
  Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds,
                                     const std::function<bool(std::string_view)>& on_line,
                                     std::size_t) override {
    calls.push_back(argv);
    const bool collect = std::find(argv.begin(), argv.end(), "job-step") != argv.end();
    Step step = collect ? (collected < collect_steps.size() ? collect_steps[collected++] : Step{})
                        : make_dir;
    for (const auto& l : step.lines) {
      if (!on_line(l)) break;
    }
    return step.result;
  }
  bool available(std::string_view) const override { return true; }

  // The srun calls that ran `job-step`, and the others.
  std::vector<std::vector<std::string>> collections() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : calls) {
      if (std::find(c.begin(), c.end(), "job-step") != c.end()) out.push_back(c);
    }
    return out;
  }

  Step make_dir;
  std::vector<Step> collect_steps;
  std::size_t collected = 0;
  CommandResult remove{0, false, "", "", false};
  std::vector<std::vector<std::string>> calls;
};

const std::string kShipDir = "/tmp/ibcollect-job1234-00000000000000ff";

JobOptions shipping() {
  JobOptions o = options("1234");
  o.agent_path = "/home/alice/bin/ibcollect";  // this program, on the login node only
  o.ship_dir = kShipDir;
  return o;
}

// What a node's step prints: its whole (unsigned) snapshot, as srun --label shows it.
std::vector<std::string> answerOf(const std::string& node, int task) {
  ::ibcollect::v1::Snapshot s;
  s.mutable_node()->set_hostname(node);
  std::vector<std::string> out;
  for (auto& l : core::encodeStepOutput(node, core::wrapUnsigned(s).SerializeAsString()))
    out.push_back(std::to_string(task) + ": " + l.substr(0, l.size() - 1));
  return out;
}

ShippingSlurm::Step answers(const std::vector<std::string>& nodes, std::string err = "") {
  ShippingSlurm::Step step;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (auto& l : answerOf(nodes[i], static_cast<int>(i))) step.lines.push_back(std::move(l));
  }
  step.result = CommandResult{err.empty() ? 0 : 1, false, "", std::move(err), false};
  return step;
}

std::string valueOf(const std::vector<std::string>& argv, const std::string& prefix) {
  for (const auto& a : argv) {
    if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
  }
  return "(none)";
}

TEST(ShipDirName, IsUnderTheParentNamedByTheJobAndSixteenHexDigits) {
  EXPECT_EQ(shipDirName("/tmp", "1234", 0xff), "/tmp/ibcollect-job1234-00000000000000ff");
  EXPECT_EQ(shipDirName("/scratch/local/", "77", 0x0123456789abcdefULL),
            "/scratch/local/ibcollect-job77-0123456789abcdef");
  EXPECT_EQ(shipDirName("/", "1", 1), "/ibcollect-job1-0000000000000001");
}

TEST(StepArgv, AShippedStepRunsThisProgramAndRemovesItsCopy) {
  const auto argv = stepArgv(shipping(), 42);
  EXPECT_EQ(argv.front(), "/home/alice/bin/ibcollect");  // srun --bcast runs the copy
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--shipped"), 1);
  const auto installed = stepArgv(options("1234"), 42);
  EXPECT_EQ(std::count(installed.begin(), installed.end(), "--shipped"), 0);
}

TEST(CollectJob, ShippingMakesAPrivateDirectoryOnEveryNodeThenCopiesThisProgramIntoIt) {
  ShippingSlurm r;
  r.make_dir.lines = {"ready node1", "ready node2"};
  r.collect_steps = {answers({"node1", "node2"})};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shipping(), {"node1", "node2"}, r, clock, nullptr);
  ASSERT_EQ(coll.nodes.size(), 2u);
  EXPECT_TRUE(coll.nodes[0].answered) << coll.nodes[0].unreachable_reason;
  EXPECT_TRUE(coll.nodes[1].answered) << coll.nodes[1].unreachable_reason;
  // Two steps, and no clean-up step: each node's step removed its own copy.
  ASSERT_EQ(r.calls.size(), 2u);

  // 1. mkdir -m 700 on every node of the run, the directory as the script's one argument.
  const auto& mk = r.calls[0];
  EXPECT_EQ(mk[0], "srun");
  EXPECT_EQ(valueOf(mk, "--nodelist="), "node[1-2]");
  EXPECT_NE(std::find(mk.begin(), mk.end(), "--overlap"), mk.end());
  ASSERT_GE(mk.size(), 5u);
  EXPECT_EQ(mk[mk.size() - 5], "/bin/sh");
  EXPECT_EQ(mk[mk.size() - 4], "-c");
  EXPECT_THAT(mk[mk.size() - 3], HasSubstr("mkdir -m 700 -- \"$1\""));
  EXPECT_THAT(mk[mk.size() - 3], HasSubstr("[ -O \"$1\" ]"));  // ours, or refused
  EXPECT_EQ(mk.back(), kShipDir);

  // 2. srun copies this program into it (one name per node: DIR/) and runs the copy.
  const auto& step = r.calls[1];
  EXPECT_EQ(valueOf(step, "--bcast="), kShipDir + "/");
  const auto program = std::find(step.begin(), step.end(), "/home/alice/bin/ibcollect");
  ASSERT_NE(program, step.end());
  EXPECT_EQ(*(program + 1), "job-step");
  EXPECT_LT(std::find(step.begin(), step.end(), "--bcast=" + kShipDir + "/"), program);
  EXPECT_NE(std::find(program, step.end(), "--shipped"), step.end());
  // The window opens after the copy had time to land: launch slack + ship slack.
  auto ws = std::find(step.begin(), step.end(), "--window-start");
  ASSERT_NE(ws, step.end());
  EXPECT_EQ(*(ws + 1), "1800000002000");
}

TEST(CollectJob, WithAnInstalledAgentNothingIsShipped) {
  ShippingSlurm r;
  r.collect_steps = {answers({"node1"})};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(options("1234"), {"node1"}, r, clock, nullptr);
  EXPECT_TRUE(coll.nodes[0].answered);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(valueOf(r.calls[0], "--bcast"), "(none)");
  EXPECT_NE(std::find(r.calls[0].begin(), r.calls[0].end(), "/opt/ibcollect/bin/ibcollect"),
            r.calls[0].end());
}

TEST(CollectJob, ANodeWhereTheDirectoryCannotBeMadeIsNamedAndTheOthersAreCollected) {
  ShippingSlurm r;
  r.make_dir.lines = {"ready node1", "ready node3"};
  r.make_dir.result = CommandResult{1, false, "",
                                    "node2: mkdir: cannot create directory '" + kShipDir +
                                        "': Read-only file system\n"
                                        "srun: error: node2: task 1: Exited with exit code 1\n",
                                    false};
  r.collect_steps = {answers({"node1", "node3"})};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shipping(), {"node1", "node2", "node3"}, r, clock, nullptr);
  ASSERT_EQ(r.collections().size(), 1u);
  EXPECT_EQ(valueOf(r.collections()[0], "--nodelist="), "node[1,3]");
  EXPECT_TRUE(coll.nodes[0].answered);
  EXPECT_TRUE(coll.nodes[2].answered);
  ASSERT_FALSE(coll.nodes[1].answered);
  const auto& why = coll.nodes[1].unreachable_reason;
  EXPECT_THAT(why, HasSubstr("could not make the directory " + kShipDir));
  EXPECT_THAT(why, HasSubstr("Read-only file system"));
  EXPECT_THAT(why, HasSubstr("--ship-dir"));
  EXPECT_FALSE(coll.launch_refused);
}

TEST(CollectJob, SlurmRefusingTheDirectoryStepIsOneMessageAndNothingElseRuns) {
  ShippingSlurm r;
  r.make_dir.result = CommandResult{
      1, false, "", "srun: error: Unable to create step for job 1234: Access/permission denied\n",
      false};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shipping(), {"node1", "node2"}, r, clock, nullptr);
  ASSERT_TRUE(coll.launch_refused);
  EXPECT_NE(coll.launch_refused->find("does not let this user run a step"), std::string::npos);
  EXPECT_EQ(r.calls.size(), 1u);
}

TEST(CollectJob, ACopyThatFailsOnANodeNamesItAndTheOthersGetAStepOfTheirOwn) {
  // srun 22.05 when a node's disk is full: the whole step is aborted, the node named, and
  // slurmd's ENOSPC reaches srun as "Unspecified error" (seen on the test cluster).
  ShippingSlurm r;
  r.make_dir.lines = {"ready node1", "ready node2", "ready node3"};
  ShippingSlurm::Step aborted;
  aborted.result = CommandResult{
      1, false, "",
      "srun: error: REQUEST_FILE_BCAST(node2): Unspecified error\n"
      "srun: fatal: Failed to broadcast '/home/alice/bin/ibcollect'. Step launch aborted.\n",
      false};
  r.collect_steps = {aborted, answers({"node1", "node3"})};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shipping(), {"node1", "node2", "node3"}, r, clock, nullptr);
  ASSERT_EQ(r.collections().size(), 2u);
  EXPECT_EQ(valueOf(r.collections()[0], "--nodelist="), "node[1-3]");
  EXPECT_EQ(valueOf(r.collections()[1], "--nodelist="), "node[1,3]");
  EXPECT_TRUE(coll.nodes[0].answered);
  EXPECT_TRUE(coll.nodes[2].answered);
  const auto& why = coll.nodes[1].unreachable_reason;
  EXPECT_THAT(why, HasSubstr("could not copy ibcollect to the node"));
  EXPECT_THAT(why, HasSubstr("REQUEST_FILE_BCAST(node2): Unspecified error"));
  EXPECT_THAT(why, HasSubstr("full"));
  // The aborted step may have left copies anywhere: the directory goes on every node.
  const auto& cleanup = r.calls.back();
  EXPECT_EQ(std::find(cleanup.begin(), cleanup.end(), "job-step"), cleanup.end());
  EXPECT_EQ(valueOf(cleanup, "--nodelist="), "node[1-3]");
  EXPECT_THAT(cleanup[cleanup.size() - 3], HasSubstr("rm -f -- \"$1\"/slurm_bcast_*"));
  EXPECT_EQ(cleanup.back(), kShipDir);
}

TEST(CollectJob, CopiesThatKeepFailingStopAfterThreeStepsAndNameEveryNode) {
  ShippingSlurm r;
  r.make_dir.lines = {"ready node1", "ready node2", "ready node3", "ready node4"};
  auto abortOn = [](const std::string& node) {
    ShippingSlurm::Step s;
    s.result = CommandResult{1, false, "",
                             "srun: error: REQUEST_FILE_BCAST(" + node +
                                 "): Unspecified error\nsrun: fatal: Failed to broadcast "
                                 "'/home/alice/bin/ibcollect'. Step launch aborted.\n",
                             false};
    return s;
  };
  r.collect_steps = {abortOn("node1"), abortOn("node2"), abortOn("node3"), answers({"node4"})};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shipping(), {"node1", "node2", "node3", "node4"}, r, clock, nullptr);
  EXPECT_EQ(r.collections().size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(coll.nodes[i].unreachable_reason, HasSubstr("could not copy")) << i;
  }
  EXPECT_FALSE(coll.nodes[3].answered);
  EXPECT_THAT(coll.nodes[3].unreachable_reason, HasSubstr("aborted the step 3 times"));
}

TEST(CollectJob, ACopyAbortedWithoutANodeNameFailsEveryNodeWithSrunsWords) {
  ShippingSlurm r;
  r.make_dir.lines = {"ready node1", "ready node2"};
  ShippingSlurm::Step aborted;
  aborted.result = CommandResult{
      1, false, "",
      "srun: fatal: Failed to broadcast '/home/alice/bin/ibcollect'. Step launch aborted.\n",
      false};
  r.collect_steps = {aborted};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shipping(), {"node1", "node2"}, r, clock, nullptr);
  EXPECT_EQ(r.collections().size(), 1u);
  for (const auto& n : coll.nodes) {
    EXPECT_THAT(n.unreachable_reason, HasSubstr("Failed to broadcast"));
  }
}

TEST(CollectJob, ANoexecShipDirectoryIsNamedWithWhatToDoAndTheCopyIsRemoved) {
  ShippingSlurm r;
  r.make_dir.lines = {"ready node1", "ready node2"};
  r.collect_steps = {
      answers({"node1"}, "1: slurmstepd-node2: error: execve(): " + kShipDir +
                             "/slurm_bcast_1234.1_node2: Permission denied\n"
                             "srun: error: node2: task 1: Exited with exit code 13\n")};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shipping(), {"node1", "node2"}, r, clock, nullptr);
  EXPECT_TRUE(coll.nodes[0].answered);
  const auto& why = coll.nodes[1].unreachable_reason;
  EXPECT_THAT(why, HasSubstr("execve(): " + kShipDir));
  EXPECT_THAT(why, HasSubstr("/tmp is probably mounted noexec"));
  EXPECT_THAT(why, HasSubstr("--ship-dir DIR"));
  // node1's step removed its own copy; node2's never started.
  EXPECT_EQ(valueOf(r.calls.back(), "--nodelist="), "node2");
  EXPECT_EQ(r.calls.back().back(), kShipDir);
}

TEST(CollectJob, ACopyLeftBehindIsNamedWhenItCannotBeRemoved) {
  ShippingSlurm r;
  r.make_dir.lines = {"ready node1"};
  r.collect_steps = {ShippingSlurm::Step{{}, CommandResult{-1, true, "", "", false}}};
  r.remove = CommandResult{-1, true, "", "", false};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shipping(), {"node1"}, r, clock, nullptr);
  const std::string notices = ::testing::PrintToString(coll.notices);
  EXPECT_THAT(notices, HasSubstr("could not remove " + kShipDir));
  EXPECT_THAT(notices, HasSubstr("node1"));
}

TEST(CollectJob, AMissingLibraryIsCreditedToTheNodeRunningThatTask) {
  // The task's own stderr names no node: srun's --label task number and its "node2: task 1"
  // line do.
  ShippingSlurm r;
  r.collect_steps = {
      answers({"node1"},
              "1: /opt/ibcollect/bin/ibcollect: error while loading shared libraries: "
              "libprotobuf.so.32: cannot open shared object file: No such file or directory\n"
              "srun: error: node2: task 1: Exited with exit code 127\n")};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(options("1234"), {"node1", "node2"}, r, clock, nullptr);
  const auto& why = coll.nodes[1].unreachable_reason;
  EXPECT_THAT(why, HasSubstr("a shared library it needs is missing"));
  EXPECT_THAT(why, HasSubstr("libprotobuf.so.32"));
  EXPECT_TRUE(coll.nodes[0].unreachable_reason.empty()) << coll.nodes[0].unreachable_reason;
}

TEST(CollectJob, AnAgentMissingOnTheNodesSaysToLeaveOutAgentSoSrunShipsIt) {
  ShippingSlurm r;
  r.collect_steps = {
      answers({},
              "0: slurmstepd-node1: error: execve(): /opt/ibcollect/bin/ibcollect: No such file or "
              "directory\nsrun: error: node1: task 0: Exited with exit code 2\n")};
  ibc::test::FixedClock clock;
  const auto coll = collectJob(options("1234"), {"node1"}, r, clock, nullptr);
  const auto& why = coll.nodes[0].unreachable_reason;
  EXPECT_THAT(why, HasSubstr("not installed at /opt/ibcollect/bin/ibcollect"));
  EXPECT_THAT(why, HasSubstr("leave out --agent"));
}

TEST(CollectJob, OverSshAMissingIbcollectSaysToInstallItOrUseSrun) {
  ibc::test::ScriptedRunner r;
  r.stream_result = CommandResult{
      127, false, "", "bash: line 1: /opt/ibcollect/bin/ibcollect: No such file or directory\n",
      false};
  JobOptions o = options("1234");
  o.launcher = Launcher::Ssh;
  ibc::test::FixedClock clock;
  const auto coll = collectJob(o, {"host1"}, r, clock, nullptr);
  const auto& why = coll.nodes[0].unreachable_reason;
  EXPECT_THAT(why, HasSubstr("not installed at /opt/ibcollect/bin/ibcollect on the node"));
  EXPECT_THAT(why, HasSubstr("install ibcollect on the nodes"));
  EXPECT_THAT(why, HasSubstr("use --launcher srun"));
}

// Nodes of several architectures (a GH200 rack beside x86_64 nodes): scontrol says each
// node's Arch=, every srun step answers for the nodes of its --nodelist. Safe from the
// threads that run one step per architecture.
class MixedArchSlurm : public CommandRunner {
 public:
  explicit MixedArchSlurm(std::string show_node) : show_node_(std::move(show_node)) {}
  Result<CommandResult> run(const std::vector<std::string>& argv, std::chrono::milliseconds,
                            std::size_t) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls.push_back(argv);
    if (argv[0] == "scontrol") return ok(show_node_);
    return CommandResult{0, false, "", "", false};
  }
  Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds,
                                     const std::function<bool(std::string_view)>& on_line,
                                     std::size_t) override {
    std::vector<std::string> nodes;
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls.push_back(argv);
      for (const auto& a : argv) {
        if (a.rfind("--nodelist=", 0) == 0) nodes = *core::expandHostlist(a.substr(11));
      }
    }
    const bool collect = std::find(argv.begin(), argv.end(), "job-step") != argv.end();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!collect) {
        on_line("ready " + nodes[i]);
        continue;
      }
      for (const auto& l : answerOf(nodes[i], static_cast<int>(i))) on_line(l);
    }
    return CommandResult{0, false, "", "", false};
  }
  bool available(std::string_view) const override { return true; }

  std::vector<std::vector<std::string>> steps() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : calls) {
      if (std::find(c.begin(), c.end(), "job-step") != c.end()) out.push_back(c);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::vector<std::string>> calls;

 private:
  std::string show_node_;
  std::mutex mu_;
};

// Shipping from an x86_64 login node that has the aarch64 program beside it.
JobOptions shippingTwoArchitectures() {
  JobOptions o = shipping();
  o.programs = {{"x86_64", "/home/alice/bin/ibcollect"},
                {"aarch64", "/home/alice/bin/ibcollect-linux-aarch64"}};
  o.programs_dir = "/home/alice/bin";
  return o;
}

TEST(CollectJob, NodesOfEachArchitectureGetTheirOwnProgramInOneStepPerArchitecture) {
  MixedArchSlurm r(
      "NodeName=gh1 Arch=aarch64 CoresPerSocket=72\n   State=MIXED\n\n"
      "NodeName=gh2 Arch=aarch64 CoresPerSocket=72\n   State=MIXED\n\n"
      "NodeName=x1 Arch=x86_64 CoresPerSocket=32\n   State=MIXED\n");
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shippingTwoArchitectures(), {"gh1", "x1", "gh2"}, r, clock, nullptr);
  for (const auto& n : coll.nodes)
    EXPECT_TRUE(n.answered) << n.node << ": " << n.unreachable_reason;
  EXPECT_EQ(r.calls[0], (std::vector<std::string>{"scontrol", "show", "node", "gh[1-2],x1"}));
  const auto steps = r.steps();
  ASSERT_EQ(steps.size(), 2u);
  std::map<std::string, std::string> program_of;  // nodelist -> argv[0] of the step
  std::set<std::string> window_starts;
  for (const auto& step : steps) {
    const auto js = std::find(step.begin(), step.end(), "job-step");
    program_of[valueOf(step, "--nodelist=")] = *(js - 1);
    window_starts.insert(*(std::find(step.begin(), step.end(), "--window-start") + 1));
    EXPECT_EQ(valueOf(step, "--bcast="), kShipDir + "/");  // srun copies each program
  }
  EXPECT_EQ(program_of["gh[1-2]"], "/home/alice/bin/ibcollect-linux-aarch64");
  EXPECT_EQ(program_of["x1"], "/home/alice/bin/ibcollect");
  EXPECT_EQ(window_starts.size(), 1u) << "every node's window opens at the same moment";
}

TEST(CollectJob, ANodeOfAnArchitectureWithoutAProgramIsNamedWithTheFileToInstall) {
  MixedArchSlurm r(
      "NodeName=gh1 Arch=aarch64 CoresPerSocket=72 State=MIXED\n"
      "NodeName=x1 Arch=x86_64 CoresPerSocket=32 State=MIXED\n");
  JobOptions o = shipping();
  o.programs = {{"x86_64", "/home/alice/bin/ibcollect"}};
  o.programs_dir = "/home/alice/bin";
  ibc::test::FixedClock clock;
  const auto coll = collectJob(o, {"gh1", "x1"}, r, clock, nullptr);
  EXPECT_TRUE(coll.nodes[1].answered) << coll.nodes[1].unreachable_reason;
  ASSERT_FALSE(coll.nodes[0].answered);
  EXPECT_THAT(coll.nodes[0].unreachable_reason, HasSubstr("the node is aarch64"));
  EXPECT_THAT(coll.nodes[0].unreachable_reason,
              HasSubstr("/home/alice/bin/ibcollect-linux-aarch64"));
  EXPECT_THAT(coll.nodes[0].unreachable_reason, HasSubstr("--agent-dir"));
  // Nothing is made or run on it.
  for (const auto& c : r.calls) {
    if (c[0] == "srun") EXPECT_EQ(valueOf(c, "--nodelist="), "x1");
  }
}

TEST(CollectJob, ANodeSlurmKnowsNoArchitectureOfRunsThisProgram) {
  MixedArchSlurm r("NodeName=n1 Arch=(null) CoresPerSocket=1 State=UNKNOWN\n");
  ibc::test::FixedClock clock;
  const auto coll = collectJob(shippingTwoArchitectures(), {"n1", "n2"}, r, clock, nullptr);
  for (const auto& n : coll.nodes) EXPECT_TRUE(n.answered) << n.node;
  const auto steps = r.steps();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_NE(std::find(steps[0].begin(), steps[0].end(), "/home/alice/bin/ibcollect"),
            steps[0].end());
}

// ssh that runs the remote command in this machine's own shell: the node is this machine.
class LocalShellSsh : public CommandRunner {
 public:
  Result<CommandResult> run(const std::vector<std::string>&, std::chrono::milliseconds,
                            std::size_t) override {
    return Error{ErrorCode::NotFound, "not scripted"};
  }
  Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds timeout,
                                     const std::function<bool(std::string_view)>& on_line,
                                     std::size_t max_bytes) override {
    return shell_.runStreaming({"/bin/sh", "-c", argv.back()}, timeout, on_line, max_bytes);
  }
  bool available(std::string_view) const override { return true; }

 private:
  os::ProcessRunner shell_;
};

std::string thisMachine() {
  os::ProcessRunner shell;
  auto r = shell.run({"uname", "-m"}, std::chrono::seconds(5), 1024);
  return r.ok() ? std::string(core::trim(r->out)) : std::string();
}

TEST(CollectJob, OverSshTheNodesShellPicksTheProgramOfItsOwnArchitecture) {
  // The program for this machine's architecture prints its arguments as its answer line
  // (no snapshot: the node is reported as not answering, which is beside the point here).
  JobOptions o = sshOptions();
  o.programs = {{thisMachine(), "/bin/echo"}, {"no-such-arch", "/bin/false"}};
  o.programs_dir = "/opt/ibcollect";
  std::vector<std::string> lines;
  std::mutex mu;
  class Recording : public LocalShellSsh {
   public:
    Recording(std::vector<std::string>& l, std::mutex& m) : lines_(l), mu_(m) {}
    Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds t,
                                       const std::function<bool(std::string_view)>& on_line,
                                       std::size_t max) override {
      return LocalShellSsh::runStreaming(
          argv, t,
          [&](std::string_view line) {
            std::lock_guard<std::mutex> lock(mu_);
            lines_.emplace_back(line);
            return on_line(line);
          },
          max);
    }
    std::vector<std::string>& lines_;
    std::mutex& mu_;
  } r(lines, mu);
  ibc::test::FixedClock clock;
  (void)collectJob(o, {"gpu1"}, r, clock, nullptr);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], ::testing::StartsWith("job-step --job 77 "));
  EXPECT_THAT(lines[0], HasSubstr("--node-name gpu1"));
}

TEST(CollectJob, OverSshANodeOfAnotherArchitectureIsNamedWithTheFileToInstall) {
  JobOptions o = sshOptions();
  o.programs = {{"no-such-arch", "/bin/echo"}};
  o.programs_dir = "/opt/ibcollect";
  LocalShellSsh r;
  ibc::test::FixedClock clock;
  const auto coll = collectJob(o, {"gpu1"}, r, clock, nullptr);
  EXPECT_THAT(coll.nodes[0].unreachable_reason, HasSubstr("the node is " + thisMachine()));
  EXPECT_THAT(coll.nodes[0].unreachable_reason,
              HasSubstr("/opt/ibcollect/ibcollect-linux-" + thisMachine()));
}

TEST(CollectJob, OverSshAProgramMissingOnTheNodeIsNamedByItsPath) {
  JobOptions o = sshOptions();
  o.programs = {{thisMachine(), "/nonexistent/ibcollect-linux-" + thisMachine()}};
  o.programs_dir = "/nonexistent";
  LocalShellSsh r;
  ibc::test::FixedClock clock;
  const auto coll = collectJob(o, {"gpu1"}, r, clock, nullptr);
  EXPECT_THAT(
      coll.nodes[0].unreachable_reason,
      HasSubstr("not installed at /nonexistent/ibcollect-linux-" + thisMachine() + " on the node"));
}

TEST(RemoveShippedCopy, RemovesTheCopyAndThenItsDirectory) {
  ibc::test::RecordingWriter w;
  const std::string copy = kShipDir + "/slurm_bcast_1234.3_node2";
  EXPECT_TRUE(removeShippedCopy(copy, w).ok());
  EXPECT_EQ(w.removed, (std::vector<std::string>{copy, kShipDir + "/"}));
  // Another node's copy still in a shared directory: not an error, the last one removes it.
  ibc::test::RecordingWriter shared;
  shared.dir_result = Error{ErrorCode::Io, kShipDir + ": Directory not empty"};
  EXPECT_TRUE(removeShippedCopy(copy, shared).ok());
}

TEST(RemoveShippedCopy, NeverTouchesAnInstalledProgram) {
  for (const std::string& path : std::vector<std::string>{
           "/usr/bin/ibcollect", "/tmp/slurm_bcast_1234.3_node2", kShipDir + "/ibcollect",
           "/home/alice/ibcollect-job1/slurm_bcast_1.0_n", "slurm_bcast_1.0_n", ""}) {
    ibc::test::RecordingWriter w;
    const auto st = removeShippedCopy(path, w);
    if (path == "/home/alice/ibcollect-job1/slurm_bcast_1.0_n") {
      EXPECT_TRUE(st.ok()) << path;  // shaped like a copy: a --ship-dir under a home
      continue;
    }
    EXPECT_FALSE(st.ok()) << path;
    EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument) << path;
    EXPECT_TRUE(w.removed.empty()) << path;
  }
}

}  // namespace
}  // namespace ibc::agent

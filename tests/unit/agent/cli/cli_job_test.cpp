// `ibcollect --job` end to end through runCli with scripted Slurm commands: what the user
// sees when srun refuses the step (docs/commands.md exit code 4, one message).

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "fixtures.h"
#include "ibc/agent/cli.h"
#include "ibc/core/findings.h"
#include "ibc/core/slurm.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/step_output.h"
#include "os_doubles.h"
#include "sysfs_json.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

// Answers by program and first argument ("scontrol show"). srun's collection step streams
// `stream_lines` and fails with `srun_err`; when this program is shipped, the step that
// makes its directory on the nodes succeeds on every node (unless srun_err refuses it), and
// removing leftovers succeeds.
class SlurmCommands : public CommandRunner {
 public:
  Result<CommandResult> run(const std::vector<std::string>& argv, std::chrono::milliseconds,
                            std::size_t) override {
    if (argv[0] == "srun") {
      streamed_argv.push_back(argv);
      return CommandResult{0, false, "", "", false};
    }
    const std::string key = argv.size() > 2 ? argv[0] + " " + argv[1] + " " + argv[2] : argv[0];
    auto it = scripts.find(key);
    if (it == scripts.end()) return Error{ErrorCode::NotFound, argv[0] + ": not installed"};
    return it->second;
  }
  Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds,
                                     const std::function<bool(std::string_view)>& on_line,
                                     std::size_t) override {
    streamed.push_back(argv.front());
    streamed_argv.push_back(argv);
    if (std::find(argv.begin(), argv.end(), "job-step") == argv.end() &&
        srun_err.find("Access/permission denied") == std::string::npos) {
      for (const auto& a : argv) {
        if (a.rfind("--nodelist=", 0) != 0) continue;
        const auto hosts = core::expandHostlist(a.substr(11));
        for (const auto& h : hosts.value()) on_line("ready " + h);
      }
      return CommandResult{0, false, "", "", false};
    }
    for (const auto& l : stream_lines) on_line(l);
    return CommandResult{1, false, "", srun_err, false};
  }
  bool available(std::string_view p) const override { return p == "scontrol" || p == "srun"; }
  std::map<std::string, CommandResult> scripts;
  std::vector<std::string> stream_lines;  // srun's merged output (without newlines)
  std::string srun_err;
  std::vector<std::string> streamed;
  std::vector<std::vector<std::string>> streamed_argv;  // every srun, in order
};

struct Run {
  int code;
  std::string out, err;
  std::vector<std::string> dirs_made;
};

Run runJob(SlurmCommands& runner, const std::vector<std::string>& extra = {},
           const Environment* environment = nullptr) {
  std::ostringstream out, err;
  RootedFilesystem files("");
  ibc::test::FixedClock clock;
  ibc::test::MapEnvironment no_env;
  const Environment& env = environment != nullptr ? *environment : no_env;
  Run r{};
  ibc::test::RecordingWriter writer;
  CliEnvironment cli{
      out,    err,
      files,  [](const std::string&) { return std::make_unique<MemoryFilesystem>(); },
      runner, clock,
      env,    nullptr,
      writer, "/opt/ibcollect/bin/ibcollect",
      nullptr};
  std::vector<std::string> args{"--job", "8401413", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  r.code = runCli(args, cli);
  r.out = out.str();
  r.err = err.str();
  r.dirs_made = writer.dirs;
  return r;
}

// Slurm answering `scontrol show job` with the real capture of a running 8-node job.
SlurmCommands runningEightNodeJob() {
  SlurmCommands runner;
  runner.scripts["scontrol show job"] = CommandResult{
      0, false,
      ibc::test::readFixture(
          "real/slurm/scontrol-show-job_8node-64gpu-running_gcm-shelper-testdata.txt"),
      "", false};
  return runner;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(JobCommand, SrunRefusingTheStepIsOneMessageAndExitCode4) {
  SlurmCommands runner = runningEightNodeJob();
  // A user who may see the job (no PrivateData) but not run steps in it (Slurm 22.05).
  runner.srun_err =
      "srun: error: Unable to create step for job 8401413: Access/permission denied\n";
  const auto r = runJob(runner);
  EXPECT_EQ(r.code, core::kExitCollectFailed) << r.err;
  EXPECT_EQ(runner.streamed, std::vector<std::string>{"srun"});
  EXPECT_EQ(count(r.err, "Access/permission denied"), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("does not let this user run a step in job 8401413"));
  // Not eight nodes "unreachable" with "no answer within 15 s", and no report or
  // snapshot directory for a collection that never ran.
  EXPECT_THAT(r.err, Not(HasSubstr("unreachable")));
  EXPECT_THAT(r.err, Not(HasSubstr("no answer within")));
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(r.dirs_made.empty());
}

// Issue 10: without --out the snapshots go under the user's state directory (never the
// working directory), and the path is printed.
TEST(JobCommand, SnapshotsDefaultToTheUsersStateDirectoryAndThePathIsPrinted) {
  SlurmCommands runner = runningEightNodeJob();
  ibc::test::MapEnvironment env;
  env.vars["XDG_STATE_HOME"] = "/state";
  env.vars["HOME"] = "/home/u";
  const auto r = runJob(runner, {"--timeout", "1"}, &env);
  ASSERT_EQ(r.dirs_made.size(), 1u) << r.err;
  EXPECT_EQ(r.dirs_made[0].rfind("/state/ibcollect/job8401413-", 0), 0u) << r.dirs_made[0];
  EXPECT_THAT(r.err, HasSubstr("snapshots in " + r.dirs_made[0]));

  env.vars.erase("XDG_STATE_HOME");
  SlurmCommands again = runningEightNodeJob();
  const auto home = runJob(again, {"--timeout", "1"}, &env);
  ASSERT_EQ(home.dirs_made.size(), 1u) << home.err;
  EXPECT_EQ(home.dirs_made[0].rfind("/home/u/.local/state/ibcollect/job8401413-", 0), 0u)
      << home.dirs_made[0];
}

TEST(JobCommand, AnInvalidJobIdSaysItMayBeHiddenByPrivateData) {
  SlurmCommands runner;
  runner.scripts["scontrol show job"] =
      CommandResult{1, false, "", "slurm_load_jobs error: Invalid job id specified\n", false};
  const auto r = runJob(runner);
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err,
              HasSubstr("job 8401413 does not exist or is not visible to you (Slurm PrivateData)"));
  EXPECT_TRUE(runner.streamed.empty());
}

TEST(JobCommand, AMissingSlurmConfIsNamedAtOnceNotAfterScontrolsRetries) {
  SlurmCommands runner = runningEightNodeJob();
  ibc::test::MapEnvironment env;
  env.vars["SLURM_CONF"] = "/nonexistent/slurm.conf";
  const auto r = runJob(runner, {}, &env);
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("SLURM_CONF=/nonexistent/slurm.conf does not exist"));
  EXPECT_TRUE(runner.streamed.empty());
}

TEST(JobCommand, ScontrolTimingOutSaysWhatScontrolSaid) {
  SlurmCommands runner;
  runner.scripts["scontrol show job"] = CommandResult{
      -1, true, "",
      "scontrol: error: s_p_parse_file: cannot stat file /etc/slurm/slurm.conf: No such file "
      "or directory, retrying in 1sec up to 60sec\n",
      false};
  const auto r = runJob(runner);
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_THAT(r.err, HasSubstr("it said: scontrol: error: s_p_parse_file: cannot stat file "
                               "/etc/slurm/slurm.conf"));
  SlurmCommands silent;
  silent.scripts["scontrol show job"] = CommandResult{-1, true, "", "", false};
  EXPECT_THAT(runJob(silent).err, HasSubstr("is slurmctld up and reachable from here?"));
}

// `node` answers the collection step on task 0's stream: a snapshot of nothing, unsigned or
// with `signature` (bytes the launcher does not check).
void answerAs(SlurmCommands& runner, const std::string& node, const std::string& signature = "") {
  ::ibcollect::v1::Snapshot answered;
  answered.mutable_node()->set_hostname(node);
  answered.mutable_node()->set_source("/");
  auto envelope = core::wrapUnsigned(answered);
  if (!signature.empty()) envelope.set_signature(signature);
  for (auto& l : core::encodeStepOutput(node, envelope.SerializeAsString())) {
    l.pop_back();
    runner.stream_lines.push_back("0: " + l);
  }
}

TEST(JobCommand, AnUnreachableNodesLogTheLauncherCanReadIsStillDiagnosed) {
  // node1433 answers; node1787 never does, but its NCCL_DEBUG_FILE (SYNTHETIC, NCCL's
  // line format) is on a filesystem the launcher sees. Its completion error is reported
  // on node1787, not lost with the unreachable node's empty snapshot.
  SlurmCommands runner = runningEightNodeJob();
  answerAs(runner, "node1433");
  const std::string dir = ibc::test::makeTempDir("launcher-logs");
  std::ofstream(dir + "/nccl.node1787.log")
      << "node1787:4242:4300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion "
         "from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n";
  const auto r = runJob(runner, {"--hosts", "node[1433,1787]", "--nccl-log", dir + "/nccl.%h.log",
                                 "--out", dir + "/out"});
  // node1787 is unreachable, and its log's critical finding is the verdict (2 beats 4).
  EXPECT_EQ(r.code, core::kExitCritical) << r.err;
  EXPECT_THAT(r.err, HasSubstr("1 of 2 node(s) unreachable"));
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &doc).ok())
      << r.out.substr(0, 500);
  std::size_t completion = 0;
  for (const auto& v : doc.fields().at("findings").list_value().values()) {
    const auto& f = v.struct_value().fields();
    if (f.at("code").string_value() != "NCCL_IB_COMPLETION_ERROR") continue;
    ++completion;
    EXPECT_EQ(f.at("node").string_value(), "node1787");
  }
  EXPECT_EQ(completion, 1u) << r.out.substr(0, 2000);
}

TEST(JobCommand, SignedSnapshotsWithoutACollectorSayTheyWereNotUploadedAndHow) {
  // A node that signed its snapshot (its agent config names an identity) while the launcher
  // has no collector: the output says nothing was uploaded and how to do it.
  SlurmCommands runner = runningEightNodeJob();
  answerAs(runner, "node1433", "signature bytes (not checked by the launcher)");
  const std::string dir = ibc::test::makeTempDir("launcher-unsent");
  const auto r =
      runJob(runner, {"--hosts", "node1433", "--out", dir + "/out", "--config", "/dev/null"});
  EXPECT_THAT(r.err,
              HasSubstr("1 snapshot(s) signed by their nodes were not uploaded (no --collector)"));
  EXPECT_THAT(r.err, HasSubstr("ibcollect upload " + dir + "/out/*.ibsnap --collector HOST:PORT"));
}

TEST(JobCommand, ACollectorWithoutTheLaunchersCertificateSaysWhichCertificate) {
  SlurmCommands runner = runningEightNodeJob();
  const auto r =
      runJob(runner, {"--collector", "127.0.0.1:1", "--ca", "/dev/null", "--config", "/dev/null"});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("agent certificate of the job's tenant"));
}

// Issue 10: a shared --nccl-log glob (no %h) the launcher reads itself. Logs whose NCCL
// lines print a host name that is no Slurm name (a container's name, an address-based
// name) are never credited to whichever node came first: the file name can tell the node
// (nccl.node1787.log), else the log gets a row of its own under the name it prints, and the
// report says so. Log lines are SYNTHETIC, in NCCL's real completion-error format.
TEST(JobCommand, ASharedLogWithAHostNameNoNodeHasIsNeverCreditedToAnotherNode) {
  SlurmCommands runner = runningEightNodeJob();
  answerAs(runner, "node1433");
  const std::string dir = ibc::test::makeTempDir("launcher-shared-logs");
  const std::string line =
      ":4242:4300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
      "10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n";
  std::ofstream(dir + "/nccl.node1787.log") << "trainer-7f9c4" << line;
  std::ofstream(dir + "/rank9.log") << "ip-10-0-0-9" << line;
  const auto r = runJob(
      runner, {"--hosts", "node[1433,1787]", "--nccl-log", dir + "/*.log", "--out", dir + "/out"});
  EXPECT_EQ(r.code, core::kExitCritical) << r.err;
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &doc).ok())
      << r.out.substr(0, 500);
  std::map<std::string, std::string> completion_by_node;  // node -> source
  for (const auto& v : doc.fields().at("findings").list_value().values()) {
    const auto& f = v.struct_value().fields();
    // The log's own row holds only what the log says (no host facts were collected).
    if (f.at("node").string_value() == "ip-10-0-0-9")
      EXPECT_EQ(f.at("code").string_value().rfind("NCCL_", 0), 0u) << f.at("code").string_value();
    if (f.at("code").string_value() != "NCCL_IB_COMPLETION_ERROR") continue;
    completion_by_node[f.at("node").string_value()] = f.at("source").string_value();
  }
  EXPECT_EQ(completion_by_node.count("node1433"), 0u) << r.out.substr(0, 3000);
  EXPECT_EQ(completion_by_node.count("node1787"), 1u) << r.out.substr(0, 3000);
  ASSERT_EQ(completion_by_node.count("ip-10-0-0-9"), 1u) << r.out.substr(0, 3000);
  EXPECT_EQ(completion_by_node["ip-10-0-0-9"], dir + "/rank9.log");
  std::vector<std::string> rows;
  for (const auto& v : doc.fields().at("nodes").list_value().values())
    rows.push_back(v.struct_value().fields().at("node").string_value());
  EXPECT_EQ(rows, (std::vector<std::string>{"node1433", "node1787", "ip-10-0-0-9"}));
  ASSERT_TRUE(doc.fields().count("notices")) << r.out.substr(0, 3000);
  const auto& notices = doc.fields().at("notices").list_value().values();
  std::string all;
  for (const auto& n : notices) all += n.string_value() + "\n";
  ASSERT_EQ(notices.size(), 2) << all;
  EXPECT_THAT(all, HasSubstr("names host 'ip-10-0-0-9', which is not a node of the job"));
  // node1787's own log printed the container's name: its evidence stays node1787's, said once.
  EXPECT_THAT(all, HasSubstr("evidence of node1787 names host 'trainer-7f9c4', not node1787"));
}

// Zero-install --job (issue 24): with srun and no --agent this program is shipped to the
// nodes; --agent PATH means "installed there".
std::string shipDirOf(const std::vector<std::string>& make_dir_step) {
  return make_dir_step.empty() ? "" : make_dir_step.back();
}

TEST(JobCommand, ByDefaultSrunShipsThisProgramIntoAPrivateDirectoryUnderTmp) {
  SlurmCommands runner = runningEightNodeJob();
  const auto r = runJob(runner, {"--hosts", "node1433"});
  // Make the directory, collect, and (the node did not answer here) remove what is left.
  ASSERT_EQ(runner.streamed_argv.size(), 3u) << r.err;
  EXPECT_EQ(runner.streamed_argv[2].back(), runner.streamed_argv[0].back());
  const std::string dir = shipDirOf(runner.streamed_argv[0]);
  ASSERT_EQ(dir.rfind("/tmp/ibcollect-job8401413-", 0), 0u) << dir;
  const std::string hex = dir.substr(std::string("/tmp/ibcollect-job8401413-").size());
  EXPECT_EQ(hex.size(), 16u) << dir;
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << dir;
  const auto& step = runner.streamed_argv[1];
  EXPECT_NE(std::find(step.begin(), step.end(), "--bcast=" + dir + "/"), step.end());
  // srun copies this program (the CLI environment's own path) and runs the copy.
  EXPECT_NE(std::find(step.begin(), step.end(), "/opt/ibcollect/bin/ibcollect"), step.end());
  EXPECT_NE(std::find(step.begin(), step.end(), "--shipped"), step.end());
  EXPECT_THAT(r.err, HasSubstr("srun ships this program to the nodes (" + dir + ")"));
}

TEST(JobCommand, EveryRunShipsIntoADirectoryOfItsOwn) {
  SlurmCommands first = runningEightNodeJob();
  SlurmCommands second = runningEightNodeJob();
  runJob(first, {"--hosts", "node1433"});
  runJob(second, {"--hosts", "node1433"});
  ASSERT_FALSE(first.streamed_argv.empty());
  ASSERT_FALSE(second.streamed_argv.empty());
  EXPECT_NE(shipDirOf(first.streamed_argv[0]), shipDirOf(second.streamed_argv[0]));
}

TEST(JobCommand, ShipDirChoosesWhereOnTheNodesTheCopyGoes) {
  SlurmCommands runner = runningEightNodeJob();
  runJob(runner, {"--hosts", "node1433", "--ship-dir", "/local/scratch/"});
  ASSERT_FALSE(runner.streamed_argv.empty());
  EXPECT_EQ(shipDirOf(runner.streamed_argv[0]).rfind("/local/scratch/ibcollect-job8401413-", 0), 0u)
      << shipDirOf(runner.streamed_argv[0]);
}

TEST(JobCommand, AgentMeansInstalledOnTheNodesAndNothingIsShipped) {
  SlurmCommands runner = runningEightNodeJob();
  const auto r = runJob(runner, {"--hosts", "node1433", "--agent", "/usr/bin/ibcollect"});
  ASSERT_EQ(runner.streamed_argv.size(), 1u) << r.err;
  const auto& step = runner.streamed_argv[0];
  EXPECT_EQ(std::count_if(step.begin(), step.end(),
                          [](const std::string& a) { return a.rfind("--bcast", 0) == 0; }),
            0);
  EXPECT_NE(std::find(step.begin(), step.end(), "/usr/bin/ibcollect"), step.end());
  EXPECT_EQ(std::find(step.begin(), step.end(), "--shipped"), step.end());
  EXPECT_THAT(r.err, Not(HasSubstr("ships")));
}

TEST(JobCommand, ShipDirWithoutShippingOrRelativeIsAUsageError) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--agent", "/usr/bin/ibcollect", "--ship-dir", "/tmp"},
           {"--launcher", "ssh", "--hosts", "h1", "--ship-dir", "/tmp"},
           {"--ship-dir", "scratch"}}) {
    SlurmCommands runner = runningEightNodeJob();
    const auto r = runJob(runner, args);
    EXPECT_EQ(r.code, core::kExitUsage) << ::testing::PrintToString(args) << r.err;
    EXPECT_THAT(r.err, HasSubstr("--ship-dir"));
    EXPECT_TRUE(runner.streamed.empty());
  }
}

// A directory holding ibcollect-linux-aarch64: synthetic, the first 20 bytes of an ELF
// header (64-bit, little-endian, e_machine `machine`), all the launcher reads of it.
std::string agentDirWithAarch64Program(const std::string& name, uint16_t machine) {
  const std::string dir = ibc::test::makeTempDir(name);
  std::string head(
      "\x7f"
      "ELF\x02\x01\x01",
      7);
  head.resize(18, '\0');
  head.push_back(static_cast<char>(machine & 0xff));
  head.push_back(static_cast<char>(machine >> 8));
  std::ofstream(dir + "/ibcollect-linux-aarch64", std::ios::binary) << head;
  return dir;
}

TEST(JobCommand, AnAarch64NodeRunsTheAarch64ProgramFromAgentDir) {
  const std::string dir = agentDirWithAarch64Program("agent-dir", 183);
  SlurmCommands runner = runningEightNodeJob();
  runner.scripts["scontrol show node"] =
      CommandResult{0, false,
                    "NodeName=node1433 Arch=aarch64 CoresPerSocket=72\n   State=MIXED\n"
                    "NodeName=node1787 Arch=x86_64 CoresPerSocket=32\n   State=MIXED\n",
                    "", false};
  const auto r = runJob(runner, {"--hosts", "node1433,node1787", "--agent-dir", dir});
  std::map<std::string, std::string> program_of;  // --nodelist -> the program the step runs
  for (const auto& step : runner.streamed_argv) {
    const auto js = std::find(step.begin(), step.end(), "job-step");
    if (js == step.end()) continue;
    for (const auto& a : step) {
      if (a.rfind("--nodelist=", 0) == 0) program_of[a.substr(11)] = *(js - 1);
    }
  }
  EXPECT_EQ(program_of["node1433"], dir + "/ibcollect-linux-aarch64") << r.err;
  EXPECT_EQ(program_of["node1787"], "/opt/ibcollect/bin/ibcollect") << r.err;
  EXPECT_THAT(r.err, HasSubstr("aarch64 nodes run " + dir + "/ibcollect-linux-aarch64"));
}

TEST(JobCommand, AProgramOfTheWrongArchitectureOrAMissingAgentDirIsAUsageError) {
  const std::string wrong = agentDirWithAarch64Program("agent-dir-wrong", 62);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--agent-dir", wrong},
           {"--agent-dir", "/nonexistent/ibcollect"},
           {"--agent-dir", "relative"},
           {"--agent-dir", wrong, "--agent", "/usr/bin/ibcollect"}}) {
    SlurmCommands runner = runningEightNodeJob();
    const auto r = runJob(runner, args);
    EXPECT_EQ(r.code, core::kExitUsage) << ::testing::PrintToString(args) << r.err;
    EXPECT_THAT(r.err, HasSubstr("--agent")) << r.err;
    EXPECT_TRUE(runner.streamed.empty());
  }
  SlurmCommands runner = runningEightNodeJob();
  EXPECT_THAT(runJob(runner, {"--agent-dir", wrong}).err,
              HasSubstr("ibcollect-linux-aarch64 is built for x86_64, not for aarch64"));
}

TEST(JobCommand, HelpSaysWhatIsShippedAndHowToUseAnInstalledAgent) {
  SlurmCommands runner;
  std::ostringstream out, err;
  RootedFilesystem files("");
  ibc::test::FixedClock clock;
  ibc::test::MapEnvironment env;
  ibc::test::RecordingWriter writer;
  CliEnvironment cli{
      out,    err,
      files,  [](const std::string&) {
    return std::make_unique<MemoryFilesystem>(); },
      runner, clock,
      env,    nullptr,
      writer, "/opt/ibcollect/bin/ibcollect",
      nullptr};
  runCli({"--help"}, cli);
  // Without the help layout's line breaks and indentation.
  std::string help;
  for (char c : out.str() + err.str()) {
    if (c == '\n') c = ' ';
    if (c != ' ' || help.empty() || help.back() != ' ') help += c;
  }
  EXPECT_THAT(help, HasSubstr("srun ships this program to the nodes (srun --bcast)"));
  EXPECT_THAT(help, HasSubstr("--ship-dir"));
}

}  // namespace
}  // namespace ibc::agent

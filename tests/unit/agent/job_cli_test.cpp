// `ibcollect --job` end to end through runCli with scripted Slurm commands: what the user
// sees when srun refuses the step (DESIGN §3 exit code 4, one message).

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "fixtures.h"
#include "ibc/agent/cli.h"
#include "ibc/core/findings.h"

namespace ibc::agent {
namespace {

// Answers by program and first argument ("scontrol show"); srun streams nothing and
// fails with `srun_err`.
class SlurmCommands : public CommandRunner {
 public:
  Result<CommandResult> run(const std::vector<std::string>& argv, std::chrono::milliseconds,
                            std::size_t) override {
    const std::string key = argv.size() > 2 ? argv[0] + " " + argv[1] + " " + argv[2] : argv[0];
    auto it = scripts.find(key);
    if (it == scripts.end()) return Error{ErrorCode::NotFound, argv[0] + ": not installed"};
    return it->second;
  }
  Result<CommandResult> runStreaming(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds,
                                     const std::function<bool(std::string_view)>&,
                                     std::size_t) override {
    streamed.push_back(argv.front());
    return CommandResult{1, false, "", srun_err, false};
  }
  bool available(std::string_view p) const override { return p == "scontrol" || p == "srun"; }
  std::map<std::string, CommandResult> scripts;
  std::string srun_err;
  std::vector<std::string> streamed;
};

class StillClock : public Clock {
 public:
  std::chrono::system_clock::time_point now() const override {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  }
  std::chrono::steady_clock::time_point steadyNow() const override { return {}; }
  void sleepUntil(std::chrono::steady_clock::time_point) override {}
};

class NoEnv : public Environment {
 public:
  std::string get(std::string_view) const override { return {}; }
};

struct Run {
  int code;
  std::string out, err;
  std::vector<std::string> dirs_made;
};

Run runJob(SlurmCommands& runner) {
  std::ostringstream out, err;
  MemoryFilesystem files;
  StillClock clock;
  NoEnv env;
  Run r{};
  CliEnvironment cli{out,
                     err,
                     files,
                     [](const std::string&) { return std::make_unique<MemoryFilesystem>(); },
                     runner,
                     clock,
                     env,
                     nullptr,
                     [](const std::string&, std::string_view) { return core::Status{}; },
                     [&r](const std::string& dir) {
                       r.dirs_made.push_back(dir);
                       return core::Status{};
                     },
                     "/opt/ibcollect/bin/ibcollect"};
  r.code = runCli({"--job", "8401413", "--format", "json"}, cli);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(JobCommand, SrunRefusingTheStepIsOneMessageAndExitCode4) {
  SlurmCommands runner;
  runner.scripts["scontrol show job"] = CommandResult{
      0, false,
      ibc::test::readFixture(
          "real/slurm/scontrol-show-job_8node-64gpu-running_gcm-shelper-testdata.txt"),
      "", false};
  // A user who may see the job (no PrivateData) but not run steps in it (Slurm 22.05).
  runner.srun_err =
      "srun: error: Unable to create step for job 8401413: Access/permission denied\n";
  const auto r = runJob(runner);
  EXPECT_EQ(r.code, core::kExitCollectFailed) << r.err;
  EXPECT_EQ(runner.streamed, std::vector<std::string>{"srun"});
  EXPECT_EQ(count(r.err, "Access/permission denied"), 1u) << r.err;
  EXPECT_NE(r.err.find("does not let this user run a step in job 8401413"), std::string::npos)
      << r.err;
  // Not eight nodes "unreachable" with "no answer within 15 s", and no report or
  // snapshot directory for a collection that never ran.
  EXPECT_EQ(r.err.find("unreachable"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no answer within"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(r.dirs_made.empty());
}

TEST(JobCommand, AnInvalidJobIdSaysItMayBeHiddenByPrivateData) {
  SlurmCommands runner;
  runner.scripts["scontrol show job"] =
      CommandResult{1, false, "", "slurm_load_jobs error: Invalid job id specified\n", false};
  const auto r = runJob(runner);
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_NE(r.err.find("job 8401413 does not exist or is not visible to you (Slurm PrivateData)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(runner.streamed.empty());
}

}  // namespace
}  // namespace ibc::agent

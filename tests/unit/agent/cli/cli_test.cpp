// The top level of `ibcollect` (cli.cpp): the support commands of kSupportCommands are run as
// `ibcollect-support` from this program's directory (or the package is named), --help lists
// them from the table, and a command line without a command is a usage error.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cli_run.h"
#include "ibc/agent/cli.h"
#include "ibc/core/findings.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

using ibc::test::CliHarness;

// Records what would have been exec'd and answers `result`.
struct Exec {
  explicit Exec(core::Status answer) : result(std::move(answer)) {}
  core::Status result;
  std::vector<std::string> paths;
  std::vector<std::vector<std::string>> argvs;
  auto function() {
    return [this](const std::string& path, const std::vector<std::string>& argv) {
      paths.push_back(path);
      argvs.push_back(argv);
      return result;
    };
  }
};

TEST(SupportCommands, RunTheSupportProgramBesideThisOneAndNeverABareName) {
  Exec exec{core::Error{core::ErrorCode::PermissionDenied, "test: not run"}};
  CliHarness h;
  h.exec_program = exec.function();
  EXPECT_EQ(h.run(&runCli, {"bundle", "show"}).code, core::kExitUsage);
  ASSERT_EQ(exec.paths.size(), 1u);
  EXPECT_EQ(exec.paths[0], "/opt/ibcollect/bin/ibcollect-support");
  EXPECT_EQ(exec.argvs[0], (std::vector<std::string>{"ibcollect-support", "bundle", "show"}));
  // Where this program is cannot be told: no exec at all (execv would search the cwd).
  h.executable = "";
  const auto unknown = h.run(&runCli, {"case", "list"});
  EXPECT_EQ(unknown.code, core::kExitUsage);
  EXPECT_EQ(exec.paths.size(), 1u);
  EXPECT_THAT(unknown.err, HasSubstr("cannot tell where this ibcollect is installed"));
}

TEST(SupportCommands, EveryRowOfTheTableIsForwardedWithAllItsWords) {
  Exec exec{core::Error{core::ErrorCode::PermissionDenied, "test: not run"}};
  CliHarness h;
  h.exec_program = exec.function();
  for (const SupportCommand& c : kSupportCommands) {
    h.run(&runCli, {c.name, "--help", "-x", "value"});
  }
  ASSERT_EQ(exec.argvs.size(), std::size(kSupportCommands));
  for (std::size_t i = 0; i < exec.argvs.size(); ++i) {
    EXPECT_EQ(exec.argvs[i],
              (std::vector<std::string>{"ibcollect-support", kSupportCommands[i].name, "--help",
                                        "-x", "value"}));
  }
}

TEST(SupportCommands, AMissingSupportProgramNamesItsPackageAndWhereItWasLookedFor) {
  Exec exec{core::Error{core::ErrorCode::NotFound, "no such file"}};
  CliHarness h;
  h.exec_program = exec.function();
  const auto r = h.run(&runCli, {"host-inspect", "--vf", "42:00.2"});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("ibcollect host-inspect: this is a support command (bundle, case, "
                               "fetch, host-inspect), provided by the package ibcollect-support, "
                               "which is not installed here (no "
                               "/opt/ibcollect/bin/ibcollect-support)."));
  EXPECT_THAT(r.err, HasSubstr("apt-get install ibcollect-support"));
  // No way to exec at all reads the same: the program is not there to run.
  CliHarness without;
  EXPECT_THAT(without.run(&runCli, {"fetch"}).err, HasSubstr("provided by the package"));
}

TEST(SupportCommands, AnExecThatFailsOtherwiseSaysWhyWithThePath) {
  Exec exec{core::Error{core::ErrorCode::PermissionDenied, "Permission denied"}};
  CliHarness h;
  h.exec_program = exec.function();
  const auto r = h.run(&runCli, {"bundle"});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err,
            "ibcollect bundle: cannot run /opt/ibcollect/bin/ibcollect-support: Permission "
            "denied\n");
}

TEST(SupportCommands, NamesAreTheTablesInItsOrder) {
  EXPECT_EQ(supportCommandNames(), "bundle, case, fetch, host-inspect");
}

TEST(TopLevel, HelpListsEverySupportCommandWithItsSummaryUnderItsOwnHeading) {
  CliHarness h;
  const auto r = h.run(&runCli, {"--help"});
  EXPECT_EQ(r.code, core::kExitOk);
  const auto heading = r.out.find("Support commands (ibcollect-support)");
  ASSERT_NE(heading, std::string::npos) << r.out;
  for (const SupportCommand& c : kSupportCommands) {
    const auto at = r.out.find("  " + std::string(c.name) + " ", heading);
    ASSERT_NE(at, std::string::npos) << c.name;
    // The summary may be wrapped: its first word follows the name on the same line.
    const std::string first_word(c.summary, std::string_view(c.summary).find(' '));
    const auto line_end = r.out.find('\n', at);
    EXPECT_NE(r.out.substr(at, line_end - at).find(first_word), std::string::npos) << c.name;
  }
  // The tenant's own commands come before, and the examples after.
  EXPECT_LT(r.out.find("snapshot"), heading);
  EXPECT_THAT(r.out, HasSubstr("Exit codes: 0 no warning or critical finding"));
}

TEST(TopLevel, VersionNamesTheProgram) {
  CliHarness h;
  const auto r = h.run(&runCli, {"--version"});
  EXPECT_EQ(r.code, core::kExitOk);
  EXPECT_EQ(r.out, versionString() + "\n");
  EXPECT_EQ(versionString().rfind("ibcollect ", 0), 0u);
}

TEST(TopLevel, NoCommandIsAUsageErrorThatSaysWhatToGive) {
  CliHarness h;
  const auto r = h.run(&runCli, {});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err,
            "ibcollect: give a command (snapshot, analyze, compare) or --job JOBID\n"
            "Run 'ibcollect --help' for usage.\n");
  const auto unknown = h.run(&runCli, {"frobnicate"});
  EXPECT_EQ(unknown.code, core::kExitUsage);
  EXPECT_THAT(unknown.err, Not(HasSubstr("ibcollect-support")));
}

}  // namespace
}  // namespace ibc::agent

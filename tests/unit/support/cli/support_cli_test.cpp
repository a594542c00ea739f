// The `ibcollect-support` command line (support_cli.cpp): one module per row of
// kSupportCommands, its own version, and what it says when no command is given.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_run.h"
#include "ibc/agent/cli.h"
#include "ibc/core/findings.h"
#include "ibc/support/support_cli.h"

using ::testing::HasSubstr;

namespace ibc::agent {
namespace {

using ibc::test::CliHarness;

TEST(SupportCli, EveryRowOfTheTableIsACommandWithItsOwnHelp) {
  CliHarness h;
  const auto top = h.run(&runSupportCli, {"--help"});
  EXPECT_EQ(top.code, core::kExitOk);
  for (const SupportCommand& c : kSupportCommands) {
    EXPECT_THAT(top.out, HasSubstr("\n  " + std::string(c.name) + " ")) << c.name;
    const auto help = h.run(&runSupportCli, {c.name, "--help"});
    EXPECT_EQ(help.code, core::kExitOk) << c.name;
    EXPECT_THAT(help.out, HasSubstr("Usage:")) << c.name;
    EXPECT_THAT(help.out, HasSubstr(c.name)) << c.name;
  }
}

TEST(SupportCli, NoCommandNamesTheTablesCommands) {
  CliHarness h;
  const auto r = h.run(&runSupportCli, {});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err,
            "ibcollect: give a command (bundle, case, fetch, host-inspect)\n"
            "Run 'ibcollect --help' for usage.\n");
}

TEST(SupportCli, TheTenantsCommandsAreNotHere) {
  CliHarness h;
  const auto r = h.run(&runSupportCli, {"snapshot"});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("snapshot"));
  EXPECT_TRUE(h.recording.written.empty());
}

TEST(SupportCli, VersionNamesTheSupportProgram) {
  CliHarness h;
  const auto r = h.run(&runSupportCli, {"--version"});
  EXPECT_EQ(r.code, core::kExitOk);
  EXPECT_EQ(r.out.rfind(std::string(kSupportProgram) + " ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find(' ')),
            versionString().substr(versionString().find(' ')) + "\n");
}

}  // namespace
}  // namespace ibc::agent

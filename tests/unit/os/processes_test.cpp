// ProcessRunner (posix_spawn + poll, argv never through a shell), runSupervised and
// selfExecutable on real child processes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "ibc/os/os.h"

using ::testing::HasSubstr;
using namespace std::chrono_literals;

namespace ibc::os {
namespace {

constexpr auto kGenerous = 30s;  // a deadline no healthy run reaches, never a measurement

TEST(ProcessRunner, RunsArgvWithoutAShellAndKeepsBothStreams) {
  ProcessRunner runner;
  // A shell would expand `$HOME` and split at the space; argv keeps both as given.
  auto r = runner.run({"printf", "%s|%s", "$HOME", "two words"}, kGenerous);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "$HOME|two words");
  auto failing = runner.run({"ls", "/nonexistent-ibcollect-path"}, kGenerous);
  ASSERT_TRUE(failing.ok());
  EXPECT_NE(failing->exit_code, 0);  // a non-zero exit is a result, not an error
  EXPECT_THAT(failing->err, HasSubstr("nonexistent-ibcollect-path"));
}

TEST(ProcessRunner, AProgramThatIsNotInstalledIsNotFound) {
  ProcessRunner runner;
  EXPECT_FALSE(runner.available("ibcollect-no-such-program"));
  EXPECT_TRUE(runner.available("sh"));
  auto r = runner.run({"ibcollect-no-such-program"}, kGenerous);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, core::ErrorCode::NotFound);
}

TEST(ProcessRunner, AHangingProgramIsStoppedAtItsTimeout) {
  ProcessRunner runner;
  auto r = runner.run({"sleep", "60"}, 100ms);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, -1);
}

TEST(ProcessRunner, OutputBeyondTheLimitIsCutAndSaysSo) {
  ProcessRunner runner;
  auto r = runner.run({"head", "-c", "100000", "/dev/zero"}, kGenerous, 1000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->output_truncated);
  EXPECT_LE(r->out.size(), 1000u);
}

TEST(ProcessRunner, StreamingHandsOverLinesAndStopsWhenAsked) {
  ProcessRunner runner;
  std::vector<std::string> lines;
  auto r = runner.runStreaming({"seq", "1", "1000000"}, kGenerous, [&](std::string_view line) {
    lines.emplace_back(line);
    return lines.size() < 3;
  });
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "1");
  EXPECT_EQ(lines[2], "3");
  EXPECT_LT(lines.size(), 1000000u);  // stopped, not run to the end
}

TEST(RunSupervised, TellsANormalExitFromASignalAndAHang) {
  const auto deadline = [](auto d) { return std::chrono::steady_clock::now() + d; };
  auto exited = runSupervised([] { return 7; }, deadline(kGenerous));
  ASSERT_TRUE(exited.ok()) << exited.error().message;
  EXPECT_TRUE(exited->exited);
  EXPECT_EQ(exited->exit_code, 7);
  // SIGKILL, as the OOM killer sends it (a sanitizer would turn SIGSEGV into an exit).
  auto killed = runSupervised(
      [] {
        ::raise(SIGKILL);
        return 0;
      },
      deadline(kGenerous));
  ASSERT_TRUE(killed.ok());
  EXPECT_FALSE(killed->exited);
  EXPECT_EQ(killed->signal, SIGKILL);
  auto hung = runSupervised(
      [] {
        ::pause();
        return 0;
      },
      deadline(100ms));
  ASSERT_TRUE(hung.ok());
  EXPECT_TRUE(hung->timed_out);
  EXPECT_FALSE(hung->exited);
}

TEST(SelfExecutable, NamesThisTestProgram) {
  const std::string self = selfExecutable();
  EXPECT_THAT(self, HasSubstr("ibc_os_tests"));
}

}  // namespace
}  // namespace ibc::os

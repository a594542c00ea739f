// `completion bash|zsh|fish` (cli_completion.cpp) of both programs through runCli and
// runSupportCli: the scripts come from the command-line definitions (commands, options, what
// each option's value is), and ibcollect hands its support commands to ibcollect-support's.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cli_run.h"
#include "ibc/agent/cli.h"
#include "ibc/agent/cli_common.h"
#include "ibc/core/findings.h"
#include "ibc/support/support_cli.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

using ibc::test::CliRun;
// Completion prints a script and writes nothing.
constexpr auto run = &ibc::test::runWritingNothing;

TEST(Completion, EachProgramPrintsAScriptForEachShell) {
  for (const auto& [program, name] : std::vector<std::pair<CliRunner, std::string>>{
           {&runCli, "ibcollect"}, {&runSupportCli, "ibcollect-support"}}) {
    SCOPED_TRACE(name);
    const CliRun bash = run(program, {"completion", "bash"});
    ASSERT_EQ(bash.code, core::kExitOk) << bash.err;
    std::string function = "_" + name;
    for (char& c : function) c = c == '-' ? '_' : c;
    EXPECT_THAT(bash.out, HasSubstr("\ncomplete -F " + function + " " + name + "\n"));
    const CliRun zsh = run(program, {"completion", "zsh"});
    ASSERT_EQ(zsh.code, core::kExitOk) << zsh.err;
    EXPECT_EQ(zsh.out.rfind("#compdef " + name + "\n", 0), 0u) << zsh.out.substr(0, 200);
    const CliRun fish = run(program, {"completion", "fish"});
    ASSERT_EQ(fish.code, core::kExitOk) << fish.err;
    EXPECT_THAT(fish.out, HasSubstr("complete -c " + name + " "));
    EXPECT_EQ(run(program, {"completion", "tcsh"}).code, core::kExitUsage);
  }
}

TEST(Completion, TheScriptsComeFromTheCommandLineDefinitions) {
  const std::string bash = run(&runCli, {"completion", "bash"}).out;
  // Subcommands, options, their values and files, as --help defines them.
  EXPECT_THAT(bash, HasSubstr("'') REPLY='snapshot analyze compare upload flush verify explain"));
  EXPECT_THAT(bash, HasSubstr("'snapshot|--format') REPLY='choices text json'"));
  EXPECT_THAT(bash, HasSubstr("'|--launcher') REPLY='choices srun ssh'"));
  EXPECT_THAT(bash, HasSubstr("'snapshot|--color') REPLY='choices auto always never'"));
  EXPECT_THAT(bash, HasSubstr("'snapshot|--root') REPLY='dir'"));
  EXPECT_THAT(bash, HasSubstr("'snapshot|--window') REPLY='none'"));
  EXPECT_THAT(bash, HasSubstr("'analyze|--nccl-log') REPLY='file'"));
  EXPECT_THAT(bash, HasSubstr("'explain') REPLY='choices NO_RDMA_DEVICES PORT_DOWN"));
  // Flags take no value; the hidden node side of --job is not offered.
  EXPECT_THAT(bash, Not(HasSubstr("|--force')")));
  EXPECT_THAT(bash, Not(HasSubstr("job-step")));
  // The support commands are ibcollect-support's to complete.
  EXPECT_THAT(bash, HasSubstr("'bundle' | 'case' | 'fetch' | 'host-inspect')"));
  const std::string support = run(&runSupportCli, {"completion", "bash"}).out;
  EXPECT_THAT(support, HasSubstr("'bundle') REPLY='export verify show'"));
  EXPECT_THAT(support, HasSubstr("'case update|--state') REPLY='choices open escalated closed'"));
}

TEST(Completion, ZshDescribesCommandsAndOptionsWithTheirHelpText) {
  const std::string zsh = run(&runCli, {"completion", "zsh"}).out;
  EXPECT_THAT(zsh,
              HasSubstr("'snapshot:Collect this node'\\''s VF-side evidence and diagnose it'"));
  EXPECT_THAT(zsh, HasSubstr("'--force:Overwrite the -o file when it exists'"));
  // Long descriptions are cut at a word for the menu.
  EXPECT_THAT(zsh, HasSubstr("...'"));
  EXPECT_THAT(zsh, HasSubstr("__ibcollect_delegated() {\n  case $1 in\n    'bundle' | 'case' | "
                             "'fetch' | 'host-inspect') return 0 ;;"));
  EXPECT_THAT(zsh, HasSubstr("words[1]=ibcollect-support"));
}

TEST(Completion, FishOffersChoicesFilesAndDirectoriesPerOption) {
  const std::string fish = run(&runCli, {"completion", "fish"}).out;
  EXPECT_THAT(fish, HasSubstr("complete -c ibcollect -n '__ibcollect_at \\'snapshot\\'' -l format "
                              "-x -a 'text json'"));
  EXPECT_THAT(fish, HasSubstr("-l root -x -a '(__fish_complete_directories)'"));
  EXPECT_THAT(fish, HasSubstr("-l nccl-log -r -F"));
  EXPECT_THAT(fish, HasSubstr("set -g __ibcollect_delegated 'bundle' 'case' 'fetch' "
                              "'host-inspect'\n"));
  EXPECT_THAT(fish, HasSubstr("complete -c ibcollect -f -n __ibcollect_delegating -a "
                              "'(__ibcollect_delegate)'\n"));
}

TEST(Completion, TheSupportProgramDelegatesNothing) {
  const std::string bash = run(&runSupportCli, {"completion", "bash"}).out;
  EXPECT_THAT(bash, HasSubstr("\n_ibcollect_support_delegated() { return 1; }\n"));
  const std::string fish = run(&runSupportCli, {"completion", "fish"}).out;
  EXPECT_THAT(fish, HasSubstr("set -g __ibcollect_support_delegated \n"));
  EXPECT_THAT(fish, Not(HasSubstr("__ibcollect_support_delegating -a")));
}

TEST(Completion, ABashScriptFindsTheSupportProgramsScriptBesideIt) {
  const std::string bash = run(&runCli, {"completion", "bash"}).out;
  EXPECT_THAT(bash, HasSubstr("__load_completion ibcollect-support"));
  EXPECT_THAT(bash, HasSubstr(". \"$_ibcollect_dir/ibcollect-support\""));
  EXPECT_THAT(bash, HasSubstr("if declare -F _ibcollect_support >/dev/null; then "
                              "_ibcollect_support; fi"));
}

TEST(SuggestedValues, AcceptsAnyValueAndNamesTheOnesToOffer) {
  CLI::App app;
  std::string value;
  app.add_option("--kind", value)->check(cli::suggestedValues({"ibstat", "perfquery"}));
  EXPECT_NO_THROW(app.parse("--kind anything", false));
  EXPECT_EQ(value, "anything");
  EXPECT_THAT(app.get_option("--kind")->get_type_name(), HasSubstr("{ibstat,perfquery}"));
}

}  // namespace
}  // namespace ibc::agent

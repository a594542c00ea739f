#pragma once

// One command line of `ibcollect` (runCli) or `ibcollect-support` (runSupportCli) run in the
// test process, as main() runs it but with string streams and the doubles of os_doubles.h:
// real files read through an unrooted RootedFilesystem (fixtures, temp dirs), --root trees
// opened rooted, no commands, a fixed clock, an empty environment and a recording writer
// unless a test chooses others.

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ibc/agent/cli.h"
#include "os_doubles.h"

namespace ibc::test {

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

class CliHarness {
 public:
  // The environment main() would build, over this harness's doubles and `out`, `err`.
  agent::CliEnvironment environment(std::ostream& out, std::ostream& err) {
    return agent::CliEnvironment{
        out,
        err,
        files,
        [](const std::string& root) { return std::make_unique<os::RootedFilesystem>(root); },
        *runner,
        *clock,
        env,
        nullptr,
        *writer,
        executable,
        terminal_columns,
        exec_program};
  }

  CliRun run(agent::CliRunner program, const std::vector<std::string>& args) {
    std::ostringstream out, err;
    agent::CliEnvironment cli = environment(out, err);
    CliRun r;
    r.code = program(args, cli);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  os::RootedFilesystem files{""};
  NoCommands no_commands;
  os::CommandRunner* runner = &no_commands;
  FixedClock fixed_clock;
  os::SystemClock system_clock;  // for certificates issued now (test_pki.h)
  os::Clock* clock = &fixed_clock;
  MapEnvironment env;
  RecordingWriter recording;
  os::DiskFileWriter disk;  // for files a later command reads back
  os::FileWriter* writer = &recording;
  std::string executable = "/opt/ibcollect/bin/ibcollect";
  std::function<int()> terminal_columns;
  std::function<core::Status(const std::string&, const std::vector<std::string>&)> exec_program;
};

// `program` with the default doubles, for commands that must write nothing (explain,
// completion): every write is a test failure.
inline CliRun runWritingNothing(agent::CliRunner program, const std::vector<std::string>& args) {
  CliHarness h;
  ForbiddenWrites writer;
  h.writer = &writer;
  return h.run(program, args);
}

// A command's JSON output as a document; fails the current test when it is not JSON.
inline google::protobuf::Struct parsedJson(const std::string& text) {
  google::protobuf::Struct s;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &s).ok()) << text.substr(0, 300);
  return s;
}

}  // namespace ibc::test

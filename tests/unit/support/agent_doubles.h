#pragma once

// Shared test doubles of the agent's OS seams (ibc/agent/os.h) for tests that collect from
// fixture trees: no command is installed, the environment is empty or a map. One copy here
// instead of one per test file.

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/agent/os.h"

namespace ibc::test {

// Every command is "not installed" (NotFound), as on a host without the tool; a fixture
// tree's collection never runs one.
class NoCommands : public agent::CommandRunner {
 public:
  core::Result<agent::CommandResult> run(const std::vector<std::string>& argv,
                                         std::chrono::milliseconds, std::size_t) override {
    return core::Error{
        core::ErrorCode::NotFound,
        (argv.empty() ? std::string("command") : argv.front()) + ": no commands in tests"};
  }
  bool available(std::string_view) const override { return false; }
};

// The environment variables a test sets in `vars`; empty by default.
class MapEnvironment : public agent::Environment {
 public:
  std::string get(std::string_view name) const override {
    const auto it = vars.find(std::string(name));
    return it == vars.end() ? std::string() : it->second;
  }
  std::map<std::string, std::string> vars;
};

}  // namespace ibc::test

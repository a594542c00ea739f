#pragma once

// Shared test doubles of the agent's OS seams (ibc/agent/os.h) for tests that collect from
// fixture trees: no command is installed, the environment is empty or a map; and the
// collection of a copied tree through the agent's probes. One copy here instead of one per
// test file (and benchmark).

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/agent/collect.h"
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

// What the agent's probes collect from the copied tree at `root` (`extra`'s options beside
// the root: NCCL logs, nccl-tests output, a window), with no command and an empty
// environment, at `clock`'s time.
inline ::ibcollect::v1::Snapshot collectFixtureTree(const std::string& root, agent::Clock& clock,
                                                    agent::CollectOptions extra = {}) {
  agent::RootedFilesystem host(root), files("");
  NoCommands runner;
  MapEnvironment env;
  extra.root = root;
  return agent::collectSnapshot(
      extra, agent::HostSeams{host, files, runner, clock, env, nullptr, nullptr});
}

}  // namespace ibc::test

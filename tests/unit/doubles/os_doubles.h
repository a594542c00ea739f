#pragma once

// The test doubles of the OS seams (ibc/os/os.h), each defined once (Envoy's test/mocks/ is
// the model): command runners, clocks, file writers, a faulty filesystem, an environment;
// and the collection of a copied tree through the agent's probes. Tests and benchmarks
// include this instead of writing their own.

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ibc/agent/collect.h"
#include "ibc/os/os.h"

namespace ibc::test {

// Every command is "not installed" (NotFound), as on a host without the tool; a fixture
// tree's collection never runs one.
class NoCommands : public os::CommandRunner {
 public:
  core::Result<os::CommandResult> run(const std::vector<std::string>& argv,
                                      std::chrono::milliseconds, std::size_t) override {
    return core::Error{
        core::ErrorCode::NotFound,
        (argv.empty() ? std::string("command") : argv.front()) + ": no commands in tests"};
  }
  bool available(std::string_view) const override { return false; }
};

// Runs only what a test scripted (by program name); anything else is "not installed".
// runStreaming() hands `stream_lines` over and returns `stream_result`. Every call is kept
// in `calls`; safe to call from several threads (the ssh fan-out).
class ScriptedRunner : public os::CommandRunner {
 public:
  core::Result<os::CommandResult> run(const std::vector<std::string>& argv,
                                      std::chrono::milliseconds, std::size_t) override {
    record(argv);
    auto it = scripts.find(argv.front());
    if (it == scripts.end()) {
      return core::Error{core::ErrorCode::NotFound, argv.front() + ": not installed"};
    }
    return it->second;
  }
  core::Result<os::CommandResult> runStreaming(const std::vector<std::string>& argv,
                                               std::chrono::milliseconds,
                                               const std::function<bool(std::string_view)>& on_line,
                                               std::size_t) override {
    record(argv);
    for (const auto& l : stream_lines) {
      if (!on_line(l)) break;
    }
    return stream_result;
  }
  bool available(std::string_view program) const override {
    return scripts.count(std::string(program)) != 0;
  }

  std::map<std::string, os::CommandResult> scripts;
  std::vector<std::string> stream_lines;
  os::CommandResult stream_result{0, false, "", "", false};
  std::vector<std::vector<std::string>> calls;

 private:
  void record(const std::vector<std::string>& argv) {
    std::lock_guard<std::mutex> lock(mu_);
    calls.push_back(argv);
  }
  std::mutex mu_;
};

// A clock that stands still at `wall` and never sleeps.
class FixedClock : public os::Clock {
 public:
  explicit FixedClock(
      std::chrono::system_clock::time_point wall =
          std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000)))
      : wall_(wall) {}
  std::chrono::system_clock::time_point now() const override { return wall_; }
  std::chrono::steady_clock::time_point steadyNow() const override { return {}; }
  void sleepUntil(std::chrono::steady_clock::time_point) override {}

 private:
  std::chrono::system_clock::time_point wall_;
};

// A clock that does not sleep: sleepUntil() jumps to the deadline, records how long it was
// asked to sleep and runs `on_sleep` (to change counters between a window's two samples).
// Wall time moves with it.
class SteppingClock : public os::Clock {
 public:
  std::chrono::system_clock::time_point now() const override {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000)) +
           (steady_ - std::chrono::steady_clock::time_point());
  }
  std::chrono::steady_clock::time_point steadyNow() const override { return steady_; }
  void sleepUntil(std::chrono::steady_clock::time_point t) override {
    sleeps.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(t - steady_));
    if (t > steady_) steady_ = t;
    if (on_sleep) on_sleep();
  }
  std::function<void()> on_sleep;
  std::vector<std::chrono::milliseconds> sleeps;

 private:
  std::chrono::steady_clock::time_point steady_{};
};

// A clock that moves only when a test advances it (to when a fake ssh session ended).
// Thread-safe: the ssh fan-out runs sessions in parallel.
class AdvancedClock : public os::Clock {
 public:
  std::chrono::system_clock::time_point now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  std::chrono::steady_clock::time_point steadyNow() const override { return {}; }
  void sleepUntil(std::chrono::steady_clock::time_point) override {}
  void advanceTo(std::chrono::system_clock::time_point t) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ = std::max(now_, t);
  }

 private:
  mutable std::mutex mu_;
  std::chrono::system_clock::time_point now_{std::chrono::seconds(1'800'000'000)};
};

// Writes nothing; remembers the directories it was asked for and what it was asked to
// remove (a directory with a trailing '/'); removeEmptyDirectory() answers `dir_result`.
class RecordingWriter : public os::FileWriter {
 public:
  core::Status writeFileAtomic(const std::string& path, std::string_view, unsigned) override {
    written.push_back(path);
    return {};
  }
  core::Status makeDirectories(const std::string& path, unsigned) override {
    dirs.push_back(path);
    return {};
  }
  core::Status removeFile(const std::string& path) override {
    removed.push_back(path);
    return {};
  }
  core::Status removeEmptyDirectory(const std::string& path) override {
    removed.push_back(path + "/");
    return dir_result;
  }
  core::Status renameFile(const std::string&, const std::string&) override { return {}; }
  std::vector<std::string> written;
  std::vector<std::string> dirs;
  std::vector<std::string> removed;
  core::Status dir_result;
};

// For commands that must write nothing: every write or directory is a test failure.
class ForbiddenWrites : public os::FileWriter {
 public:
  core::Status writeFileAtomic(const std::string& path, std::string_view, unsigned) override {
    ADD_FAILURE() << "wrote " << path;
    return {};
  }
  core::Status makeDirectories(const std::string& path, unsigned) override {
    ADD_FAILURE() << "made " << path;
    return {};
  }
  core::Status removeFile(const std::string&) override { return {}; }
  core::Status renameFile(const std::string&, const std::string&) override { return {}; }
};

// A full disk: every write fails with ENOSPC (counted in `writes`); directories, removals
// and renames go to the real disk.
class FullDiskWriter : public os::FileWriter {
 public:
  core::Status writeFileAtomic(const std::string& path, std::string_view, unsigned) override {
    ++writes;
    return os::errnoError(ENOSPC, path);
  }
  core::Status makeDirectories(const std::string& path, unsigned mode) override {
    return disk_.makeDirectories(path, mode);
  }
  core::Status removeFile(const std::string& path) override { return disk_.removeFile(path); }
  core::Status renameFile(const std::string& from, const std::string& to) override {
    return disk_.renameFile(from, to);
  }
  int writes = 0;

 private:
  os::DiskFileWriter disk_;
};

// Wraps a filesystem and fails chosen paths (by suffix) with chosen errors (EACCES, EINVAL),
// as sysfs does for counters a VF's PMA does not serve.
class FaultyFilesystem : public os::Filesystem {
 public:
  explicit FaultyFilesystem(const os::Filesystem& inner) : inner_(inner) {}
  std::map<std::string, core::ErrorCode> faults;  // path suffix → error

  core::Result<std::string> readFile(std::string_view path, std::size_t max,
                                     bool* t) const override {
    if (auto e = fault(path)) return *e;
    return inner_.readFile(path, max, t);
  }
  core::Result<std::string> readTail(std::string_view path, std::size_t max) const override {
    if (auto e = fault(path)) return *e;
    return inner_.readTail(path, max);
  }
  core::Result<std::vector<std::string>> listDir(std::string_view path) const override {
    return inner_.listDir(path);
  }
  core::Result<std::string> readLink(std::string_view path) const override {
    return inner_.readLink(path);
  }
  bool exists(std::string_view path) const override { return inner_.exists(path); }
  bool isDirectory(std::string_view path) const override { return inner_.isDirectory(path); }
  core::Result<os::Access> access(std::string_view path) const override {
    return inner_.access(path);
  }
  core::Result<std::vector<std::pair<std::string, core::Result<std::string>>>> readDirFiles(
      std::string_view dir, std::size_t max_each, std::size_t max_files) const override {
    if (auto e = fault(dir)) return *e;
    auto r = inner_.readDirFiles(dir, max_each, max_files);
    if (!r.ok()) return r;
    for (auto& [name, content] : *r) {
      if (auto e = fault(std::string(dir) + "/" + name)) content = *e;
    }
    return r;
  }
  core::Result<std::vector<std::string>> readKmsgRecords(std::string_view path,
                                                         std::size_t max) const override {
    return inner_.readKmsgRecords(path, max);
  }

 private:
  std::optional<core::Error> fault(std::string_view path) const {
    for (const auto& [suffix, code] : faults) {
      if (path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix) {
        return core::Error{code, std::string(path) + ": injected"};
      }
    }
    return std::nullopt;
  }
  const os::Filesystem& inner_;
};

// The environment variables a test sets in `vars`; empty by default.
class MapEnvironment : public os::Environment {
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
inline ::ibcollect::v1::Snapshot collectFixtureTree(const std::string& root, os::Clock& clock,
                                                    agent::CollectOptions extra = {}) {
  os::RootedFilesystem host(root), files("");
  NoCommands runner;
  MapEnvironment env;
  extra.root = root;
  return agent::collectSnapshot(
      extra, agent::HostSeams{host, files, runner, clock, env, nullptr, nullptr});
}

}  // namespace ibc::test

#pragma once

// The LABELLED-SYNTHETIC physical-host trees of tests/fixtures/synthetic/make_host_trees.py
// (pf-errors, pf-clean, vf-absent, bundle-pf-errors, bundle-pf-clean: ground truth in each
// tree's LABEL), made once per test process under the test temp dir, and the real PF captures
// of tests/fixtures/real/pf/ by the start of their name. Define IBC_HOST_TREES_SCRIPT.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fixtures.h"
#include "ibc/os/os.h"
#include "sysfs_json.h"

namespace ibc::test {

// The tree `name` (a directory holding sys/ and etc/).
inline std::string hostTree(const std::string& name) {
  static const std::string trees = [] {
    const std::string out = makeTempDir("host-trees") + "/trees";
    os::ProcessRunner runner;
    auto r = runner.run({"python3", IBC_HOST_TREES_SCRIPT, IBC_FIXTURES_DIR, out},
                        std::chrono::seconds(60));
    EXPECT_TRUE(r.ok() && r->exit_code == 0)
        << (r.ok() ? r->err : r.error().message) << ": the host trees were not made";
    return out;
  }();
  return trees + "/" + name;
}

// The path of the one real PF capture whose file name starts with `prefix`.
inline std::string pfCapture(const std::string& prefix) {
  for (const auto& f : fixtureFiles("real/pf", ".txt")) {
    const std::string name = f.substr(f.rfind('/') + 1);
    if (name.rfind(prefix, 0) == 0) return fixturePath(f);
  }
  ADD_FAILURE() << "no real PF capture " << prefix;
  return {};
}

}  // namespace ibc::test

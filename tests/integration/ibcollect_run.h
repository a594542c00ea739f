#pragma once

// `ibcollect ARGS...` of the build under test (IBC_BINARY), as the integration tests run it.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "ibc/os/os.h"

namespace ibc::test {

// Its exit code and output; a test failure and an empty result when it could not be run
// (or ran over two minutes).
inline ibc::os::CommandResult runIbcollect(std::vector<std::string> args) {
  args.insert(args.begin(), IBC_BINARY);
  ibc::os::ProcessRunner runner;
  auto r = runner.run(args, std::chrono::seconds(120));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : ibc::os::CommandResult{};
}

}  // namespace ibc::test

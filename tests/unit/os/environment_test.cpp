// ProcessEnvironment and readProcessFacts: the environment seam's real adapters.

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

#include "ibc/os/os.h"

namespace ibc::os {
namespace {

TEST(ProcessEnvironment, ReadsAVariableAndAnUnsetOneIsEmpty) {
  ASSERT_EQ(::setenv("IBC_OS_TEST_VARIABLE", "job 1234", 1), 0);
  ::unsetenv("IBC_OS_TEST_UNSET");
  ProcessEnvironment env;
  EXPECT_EQ(env.get("IBC_OS_TEST_VARIABLE"), "job 1234");
  EXPECT_EQ(env.get("IBC_OS_TEST_UNSET"), "");
}

TEST(ReadProcessFacts, GivesThisProcessesMemlockLimitAndHostName) {
  rlimit rl{};
  ASSERT_EQ(::getrlimit(RLIMIT_MEMLOCK, &rl), 0);
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const ProcessFacts facts = readProcessFacts();
  EXPECT_TRUE(facts.memlock_known);
  EXPECT_EQ(facts.memlock_unlimited, rl.rlim_cur == RLIM_INFINITY);
  if (rl.rlim_cur != RLIM_INFINITY) EXPECT_EQ(facts.memlock_soft_bytes, rl.rlim_cur);
  EXPECT_EQ(facts.hostname, host);
}

}  // namespace
}  // namespace ibc::os

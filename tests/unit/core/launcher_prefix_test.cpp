#include "ibc/core/launcher_prefix.h"

#include <gtest/gtest.h>

#include <string>

namespace ibc::core {
namespace {

TEST(LauncherPrefix, PdshHostPrefixSplitsOnColonSpace) {
  auto hp = splitHostPrefix("10.0.87.143: 10.0.87.143: Traceback");
  ASSERT_TRUE(hp.has_value());
  EXPECT_EQ(hp->host, "10.0.87.143");
  EXPECT_EQ(hp->rest, "10.0.87.143: Traceback");
  hp = splitHostPrefix("...-48: x");
  ASSERT_TRUE(hp.has_value());
  EXPECT_EQ(hp->host, "...-48");
}

TEST(LauncherPrefix, NcclDebugPrefixAndSentencesAreNotHostPrefixes) {
  EXPECT_FALSE(splitHostPrefix("kolyoz2:25146:25854 [0] NCCL INFO x").has_value());
  EXPECT_FALSE(splitHostPrefix("iter 83592: loss 1.5455").has_value());
  EXPECT_FALSE(splitHostPrefix("12: row").has_value());  // an srun label, not a host
  EXPECT_FALSE(splitHostPrefix(": x").has_value());
  EXPECT_FALSE(splitHostPrefix("").has_value());
}

TEST(LauncherPrefix, SrunLabelGivesTheTaskId) {
  auto t = splitTaskLabel("  3: hello");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->rank, 3);
  EXPECT_EQ(t->rest, "hello");
  EXPECT_FALSE(splitTaskLabel("3:hello").has_value());
  EXPECT_FALSE(splitTaskLabel("x3: hello").has_value());
}

TEST(LauncherPrefix, OpenMpiTagOutputGivesTheRank) {
  // Open MPI --tag-output: "[jobid,rank]<stdout>:".
  auto t = splitMpiTag("[1,15]<stdout>:node:1:1 [0] NCCL INFO x");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->rank, 15);
  EXPECT_EQ(t->rest, "node:1:1 [0] NCCL INFO x");
  t = splitMpiTag("[2,0]<stderr>: text");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->rank, 0);
  EXPECT_EQ(t->rest, "text");
  EXPECT_FALSE(splitMpiTag("[1,0]<stdin>:x").has_value());
  EXPECT_FALSE(splitMpiTag("[1]<stdout>:x").has_value());
  EXPECT_FALSE(splitMpiTag("[1,99999999999]<stdout>:x").has_value());
}

TEST(LauncherPrefix, TorchRankPrefixGivesTheRank) {
  auto t = splitTorchRank("[rank4]:[E1206 18:44:12.755262105 ProcessGroupNCCL.cpp:607] x");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->rank, 4);
  EXPECT_EQ(t->rest, "[E1206 18:44:12.755262105 ProcessGroupNCCL.cpp:607] x");
  EXPECT_FALSE(splitTorchRank("[Rank 4] x").has_value());
  EXPECT_FALSE(splitTorchRank("[rank]:x").has_value());
}

TEST(LauncherPrefix, HostnameTokens) {
  EXPECT_TRUE(isHostnameToken("ip-172-31-0-11"));
  EXPECT_TRUE(isHostnameToken("host-01.example.com"));
  EXPECT_FALSE(isHostnameToken("12345"));
  EXPECT_FALSE(isHostnameToken("a b"));
  EXPECT_FALSE(isHostnameToken(""));
  EXPECT_FALSE(isHostnameToken(std::string(300, 'a')));
}

}  // namespace
}  // namespace ibc::core

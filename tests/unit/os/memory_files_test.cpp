// MemoryFilesystem: pasted `grep . /sys/...` listings read through the same probes as a tree.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ibc/os/os.h"

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace ibc::os {
namespace {

MemoryFilesystem pastedPort() {
  MemoryFilesystem fs;
  fs.addFile("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  fs.addFile("/sys/class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)\n");
  fs.addFile("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error", "7\n");
  fs.addSymlink("/sys/class/infiniband/mlx5_0/device", "../../../0000:17:00.1");
  return fs;
}

TEST(MemoryFilesystem, ReadsWhatWasAddedAndDirectoriesExistAboveIt) {
  const MemoryFilesystem fs = pastedPort();
  auto state = fs.readFile("/sys/class/infiniband/mlx5_0/ports/1/state", 64);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(*state, "4: ACTIVE\n");
  EXPECT_TRUE(fs.isDirectory("/sys/class/infiniband/mlx5_0/ports"));
  EXPECT_TRUE(fs.exists("/sys/class/infiniband"));
  EXPECT_FALSE(fs.exists("/sys/class/net"));
  auto ports = fs.listDir("/sys/class/infiniband/mlx5_0/ports/1");
  ASSERT_TRUE(ports.ok());
  EXPECT_THAT(*ports, ElementsAre("counters", "rate", "state"));
}

TEST(MemoryFilesystem, AMissingFileIsNotFoundNamingThePath) {
  const MemoryFilesystem fs = pastedPort();
  auto r = fs.readFile("/sys/class/infiniband/mlx5_0/fw_ver", 64);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, core::ErrorCode::NotFound);
  EXPECT_THAT(r.error().message, HasSubstr("fw_ver"));
}

TEST(MemoryFilesystem, AFileBeyondTheLimitIsTooLargeOrTruncatedWhenAsked) {
  MemoryFilesystem fs;
  fs.addFile("/var/log/kern.log", "0123456789");
  auto refused = fs.readFile("/var/log/kern.log", 4);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, core::ErrorCode::TooLarge);
  bool truncated = false;
  auto head = fs.readFile("/var/log/kern.log", 4, &truncated);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(*head, "0123");
  EXPECT_TRUE(truncated);
  auto tail = fs.readTail("/var/log/kern.log", 3);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, "789");
}

TEST(MemoryFilesystem, LinksReadAsStoredAndDirectoryFilesComeWithTheirContent) {
  const MemoryFilesystem fs = pastedPort();
  auto link = fs.readLink("/sys/class/infiniband/mlx5_0/device");
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(*link, "../../../0000:17:00.1");
  auto counters = fs.readDirFiles("/sys/class/infiniband/mlx5_0/ports/1/counters", 64, 100);
  ASSERT_TRUE(counters.ok());
  ASSERT_EQ(counters->size(), 1u);
  EXPECT_EQ((*counters)[0].first, "symbol_error");
  ASSERT_TRUE((*counters)[0].second.ok());
  EXPECT_EQ(*(*counters)[0].second, "7\n");
}

TEST(MemoryFilesystem, StatusGivesAFilesSizeAndTellsDirectoriesApart) {
  const MemoryFilesystem fs = pastedPort();
  auto rate = fs.status("/sys/class/infiniband/mlx5_0/ports/1/rate");
  ASSERT_TRUE(rate.ok());
  EXPECT_TRUE(rate->regular);
  EXPECT_EQ(rate->bytes, std::string("200 Gb/sec (4X HDR)\n").size());
  auto dir = fs.status("/sys/class/infiniband/mlx5_0");
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(dir->directory);
  EXPECT_FALSE(dir->regular);
  EXPECT_EQ(fs.status("/nowhere").error().code, core::ErrorCode::NotFound);
}

}  // namespace
}  // namespace ibc::os

// The write seam (ibc/os/os.h FileWriter) on a real temporary directory (the spool going
// through a failing writer is in tests/unit/agent/spool_test.cpp).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ibc/os/os.h"

using ::testing::HasSubstr;

namespace ibc::os {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class DiskFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ibc-writer-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  DiskFileWriter disk_;
};

TEST_F(DiskFileWriterTest, ReplacesAFileWholeAndLeavesNoTemporaryBehind) {
  const std::string path = (dir_ / "a.ibsnap").string();
  ASSERT_TRUE(disk_.writeFileAtomic(path, "old").ok());
  ASSERT_TRUE(disk_.writeFileAtomic(path, std::string(100000, 'n')).ok());
  EXPECT_EQ(slurp(path), std::string(100000, 'n'));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(DiskFileWriterTest, NeverPutsAFileInPlaceOfAFifoOrADirectory) {
  // As `snapshot -o /dev/null --force` run by root once replaced /dev/null: a rename over a
  // device or FIFO must not happen (a FIFO stands in for the device here: no root needed).
  const std::string fifo = (dir_ / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto st = disk_.writeFileAtomic(fifo, "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, core::ErrorCode::InvalidArgument);
  EXPECT_THAT(st.error().message, HasSubstr("not a regular file"));
  EXPECT_TRUE(fs::is_fifo(fifo));
  fs::create_directory(dir_ / "d");
  EXPECT_FALSE(disk_.writeFileAtomic((dir_ / "d").string(), "x").ok());
  EXPECT_TRUE(fs::is_directory(dir_ / "d"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 2u);  // no temporary left
}

TEST_F(DiskFileWriterTest, APrivateFileIsWrittenWithOnlyItsOwnersBits) {
  const std::string map = (dir_ / "case7.ibbundle.pseudonyms.tsv").string();
  ASSERT_TRUE(disk_.writeFileAtomic(map, "node-001\tgpu01\n", 0600).ok());
  struct stat st {};
  ASSERT_EQ(::stat(map.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(slurp(map), "node-001\tgpu01\n");
}

TEST_F(DiskFileWriterTest, AMissingParentIsNotFoundNamingThePath) {
  const std::string path = (dir_ / "no" / "such" / "a.ibsnap").string();
  const auto st = disk_.writeFileAtomic(path, "x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, core::ErrorCode::NotFound);
  EXPECT_THAT(st.error().message, HasSubstr(path));
  EXPECT_FALSE(fs::exists(dir_ / "no"));
}

TEST_F(DiskFileWriterTest, MakesParentsAndGivesTheLastDirectoryItsMode) {
  const fs::path leaf = dir_ / "x" / "y" / "spool";
  ASSERT_TRUE(disk_.makeDirectories(leaf.string(), 0700).ok());
  struct stat st {};
  ASSERT_EQ(::stat(leaf.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((dir_ / "x").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 0777, 0700u);                     // parents keep the usual mode
  EXPECT_TRUE(disk_.makeDirectories(leaf.string()).ok());  // existing: fine, mode untouched
  ASSERT_EQ(::stat(leaf.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(DiskFileWriterTest, ADirectoryWhereAFileIsIsRefused) {
  const std::string file = (dir_ / "plain").string();
  ASSERT_TRUE(disk_.writeFileAtomic(file, "x").ok());
  EXPECT_FALSE(disk_.makeDirectories(file).ok());
  EXPECT_FALSE(disk_.makeDirectories(file + "/below").ok());
}

TEST_F(DiskFileWriterTest, RemovesAndRenamesWithTheOsReason) {
  const std::string a = (dir_ / "a").string(), b = (dir_ / "b").string();
  ASSERT_TRUE(disk_.writeFileAtomic(a, "A").ok());
  ASSERT_TRUE(disk_.renameFile(a, b).ok());
  EXPECT_FALSE(fs::exists(a));
  EXPECT_EQ(slurp(b), "A");
  ASSERT_TRUE(disk_.removeFile(b).ok());
  EXPECT_FALSE(fs::exists(b));
  const auto gone = disk_.removeFile(b);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, core::ErrorCode::NotFound);
  EXPECT_THAT(gone.error().message, HasSubstr(b));
  EXPECT_EQ(disk_.renameFile(a, b).error().code, core::ErrorCode::NotFound);
}

}  // namespace
}  // namespace ibc::os

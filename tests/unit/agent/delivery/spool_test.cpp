#include "ibc/agent/spool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ibc/core/snapshot_file.h"
#include "ibc/os/os.h"
#include "os_doubles.h"

using ::testing::HasSubstr;

namespace ibc::agent {
namespace {

namespace v1 = ::ibcollect::v1;
namespace fs = std::filesystem;

v1::SignedSnapshot envelope(int n, std::size_t padding = 100) {
  v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname("node" + std::to_string(n));
  s.mutable_node()->set_job_id(std::string(padding, 'j'));
  auto env = core::wrapUnsigned(s);
  env.set_signature_algorithm("ed25519");
  env.set_signature(std::string(64, static_cast<char>(n)));
  return env;
}

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ibc-spool-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    dir_ = root_ + "/spool";  // created by the spool itself
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string root_;
  std::string dir_;
  RootedFilesystem files_{""};
  DiskFileWriter disk_;
};

TEST_F(SpoolTest, KeepsASnapshotOnceUnderItsIdAndReadsItBack) {
  Spool spool(dir_, {}, files_, disk_);
  const auto env = envelope(1);
  auto path = spool.keep(env);
  ASSERT_TRUE(path.ok()) << path.error().message;
  EXPECT_EQ(*path, dir_ + "/" + core::snapshotId(env) + ".ibsnap");
  EXPECT_EQ((fs::status(dir_).permissions() & fs::perms::all), fs::perms::owner_all);
  auto again = spool.keep(env);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *path);
  auto pending = spool.pending();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].snapshot_id, core::snapshotId(env));
  auto back = spool.read((*pending)[0]);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->SerializeAsString(), env.SerializeAsString());
  ASSERT_TRUE(spool.remove((*pending)[0]).ok());
  EXPECT_TRUE(spool.pending()->empty());
}

TEST_F(SpoolTest, AMissingDirectoryIsAnEmptySpool) {
  Spool spool(dir_ + "/never", {}, files_, disk_);
  auto pending = spool.pending();
  ASSERT_TRUE(pending.ok());
  EXPECT_TRUE(pending->empty());
}

TEST_F(SpoolTest, AFullSpoolRefusesLoudlyAndKeepsWhatItHas) {
  SpoolLimits limits;
  limits.max_files = 2;
  Spool spool(dir_, limits, files_, disk_);
  ASSERT_TRUE(spool.keep(envelope(1)).ok());
  ASSERT_TRUE(spool.keep(envelope(2)).ok());
  auto third = spool.keep(envelope(3));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().code, core::ErrorCode::TooLarge);
  EXPECT_THAT(third.error().message, HasSubstr("spool full"));
  EXPECT_THAT(third.error().message, HasSubstr(dir_));
  EXPECT_EQ(spool.pending()->size(), 2u);
  // A snapshot already kept is still fine: it takes no more room.
  EXPECT_TRUE(spool.keep(envelope(1)).ok());

  SpoolLimits bytes;
  bytes.max_bytes = 3000;
  Spool small(dir_ + "2", bytes, files_, disk_);
  ASSERT_TRUE(small.keep(envelope(1, 1000)).ok());
  auto over = small.keep(envelope(2, 2500));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, core::ErrorCode::TooLarge);
}

// A disk on which every file write fails with ENOSPC.
// Every write goes through the writer: a full disk is the writer's error, named.
TEST_F(SpoolTest, ADiskWriteFailureIsReportedWithItsCause) {
  ibc::test::FullDiskWriter no_space;
  Spool spool(dir_, {}, files_, no_space);
  const auto kept = spool.keep(envelope(1));
  ASSERT_FALSE(kept.ok());
  EXPECT_EQ(no_space.writes, 1);
  EXPECT_THAT(kept.error().message, HasSubstr("No space left on device"));
  EXPECT_TRUE(spool.pending()->empty());
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);  // made through the writer, private
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(SpoolTest, ASpoolPathThatCannotBeADirectoryIsReportedByName) {
  // A regular file where the spool directory should be: fails for root too (ENOTDIR/EEXIST),
  // unlike a read-only directory.
  std::ofstream(dir_) << "not a directory";
  Spool spool(dir_, {}, files_, disk_);
  auto kept = spool.keep(envelope(1));
  ASSERT_FALSE(kept.ok());
  EXPECT_THAT(kept.error().message, HasSubstr(dir_));
  std::ifstream left(dir_);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(left), {}), "not a directory");
}

TEST_F(SpoolTest, RejectedSnapshotsMoveAsideWithTheirReason) {
  Spool spool(dir_, {}, files_, disk_);
  ASSERT_TRUE(spool.keep(envelope(1)).ok());
  const auto entry = (*spool.pending())[0];
  auto moved = spool.reject(entry, "bad_signature: tampered");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_EQ(*moved, dir_ + "/rejected/" + entry.snapshot_id + ".ibsnap");
  EXPECT_TRUE(spool.pending()->empty());
  std::ifstream reason(dir_ + "/rejected/" + entry.snapshot_id + ".reason");
  std::string line;
  std::getline(reason, line);
  EXPECT_EQ(line, "bad_signature: tampered");
  // keepRejected() is for a snapshot that was never pending.
  auto kept = spool.keepRejected(envelope(2), "tenant_mismatch");
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(fs::exists(*kept));
  EXPECT_TRUE(spool.pending()->empty());
}

TEST_F(SpoolTest, AnEntryThatVanishedIsNamedWithTheOsReason) {
  Spool spool(dir_, {}, files_, disk_);
  ASSERT_TRUE(spool.keep(envelope(1)).ok());
  const auto entry = (*spool.pending())[0];
  fs::remove(entry.path);  // another flush delivered it meanwhile
  auto read = spool.read(entry);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, core::ErrorCode::NotFound);
  EXPECT_THAT(read.error().message, HasSubstr(entry.path));
  EXPECT_THAT(read.error().message, HasSubstr("No such file"));
}

TEST_F(SpoolTest, ACorruptSpoolFileIsMalformedAndCanBeMovedAside) {
  Spool spool(dir_, {}, files_, disk_);
  const auto env = envelope(1);
  ASSERT_TRUE(spool.keep(env).ok());
  const auto entry = (*spool.pending())[0];
  std::ofstream(entry.path, std::ios::binary | std::ios::trunc) << "IBSNAP01garbage";
  auto read = spool.read(entry);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, core::ErrorCode::Malformed);
  ASSERT_TRUE(spool.reject(entry, read.error().message).ok());
  EXPECT_TRUE(spool.pending()->empty());
  // Files that are not spooled snapshots are ignored.
  std::ofstream(dir_ + "/notes.txt") << "x";
  std::ofstream(dir_ + "/" + core::snapshotId(env) + ".ibsnap.tmp.1") << "x";
  EXPECT_TRUE(spool.pending()->empty());
}

}  // namespace
}  // namespace ibc::agent

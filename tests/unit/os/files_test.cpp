// A customer's tree is hostile input (issue 11 #6): reads under --root stay inside it, with
// the kernel's openat2(RESOLVE_IN_ROOT) and with the checked walk used where the kernel
// lacks it, while sysfs' own relative links keep working.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "fixtures.h"
#include "ibc/agent/collect.h"
#include "ibc/os/os.h"
#include "os_doubles.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

namespace fs = std::filesystem;

const char kSecret[] = "analyst-secret-5f1c";

void writeFile(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

// The real mlx5 tree laid out as live sysfs is (class entry = relative link into devices/),
// plus links that try to leave it: absolute, `../` beyond the root, and a counter file.
class HostileTree : public ::testing::TestWithParam<RootedFilesystem::Resolution> {
 protected:
  void SetUp() override {
    static int serial = 0;
    base_ = fs::path(::testing::TempDir()) /
            ("hostile-tree-" + std::to_string(::getpid()) + "-" + std::to_string(++serial));
    fs::remove_all(base_);
    outside_ = base_ / "outside" / "secret";
    writeFile(outside_, kSecret);
    root_ = base_ / "tree";
    fs::create_directories(root_);
    fs::copy(ibc::test::fixturePath(
                 "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures"),
             root_, fs::copy_options::recursive);
    const fs::path dev = root_ / "sys/devices/pci0000:00/0000:00:02.0/infiniband/mlx5_0";
    fs::create_directories(dev.parent_path());
    fs::rename(root_ / "sys/class/infiniband/mlx5_0", dev);
    fs::create_symlink("../../devices/pci0000:00/0000:00:02.0/infiniband/mlx5_0",
                       root_ / "sys/class/infiniband/mlx5_0");
    // Absolute link to the analyst's file; relative link climbing far above the root.
    fs::remove(dev / "fw_ver");
    fs::create_symlink(outside_, dev / "fw_ver");
    fs::remove(dev / "board_id");
    std::string climb;
    for (int i = 0; i < 20; ++i) climb += "../";
    fs::create_symlink(climb + fs::relative(outside_, "/").string(), dev / "board_id");
    // A counter that is a link out of the tree, read through the directory reader.
    fs::remove(dev / "ports/1/counters/symbol_error");
    fs::create_symlink(outside_, dev / "ports/1/counters/symbol_error");
    // An absolute link means the tree's own root, as it would on the customer's machine.
    writeFile(root_ / "hca_type_inside", "MT4118\n");
    fs::remove(dev / "hca_type");
    fs::create_symlink("/hca_type_inside", dev / "hca_type");
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path base_, outside_, root_;
};

TEST_P(HostileTree, LinksOutOfTheTreeReadNothingOfTheAnalystsFiles) {
  RootedFilesystem tree(root_.string(), GetParam());
  // Direct reads: the absolute and the climbing link resolve inside the root (not found).
  const std::string dev = "/sys/class/infiniband/mlx5_0";
  auto fw = tree.readFile(dev + "/fw_ver", 4096);
  ASSERT_FALSE(fw.ok()) << "read " << *fw;
  EXPECT_EQ(fw.error().code, ErrorCode::NotFound);
  EXPECT_FALSE(tree.readFile(dev + "/board_id", 4096).ok());
  EXPECT_FALSE(tree.readTail(dev + "/fw_ver", 4096).ok());
  EXPECT_FALSE(tree.exists(dev + "/fw_ver"));
  EXPECT_FALSE(tree.access(dev + "/fw_ver").ok());
  auto counters = tree.readDirFiles(dev + "/ports/1/counters", 4096, 1000);
  ASSERT_TRUE(counters.ok()) << counters.error().message;
  bool saw_symbol_error = false;
  for (const auto& [name, content] : *counters) {
    if (name != "symbol_error") continue;
    saw_symbol_error = true;
    EXPECT_FALSE(content.ok()) << "counter read the analyst's file: " << *content;
  }
  EXPECT_TRUE(saw_symbol_error);
  // The tree's own links keep working: relative into devices/, absolute meaning its root.
  auto hca = tree.readFile(dev + "/hca_type", 4096);
  ASSERT_TRUE(hca.ok()) << hca.error().message;
  EXPECT_EQ(*hca, "MT4118\n");
  EXPECT_TRUE(tree.isDirectory(dev + "/ports/1"));
  auto link = tree.readLink("/sys/class/infiniband/mlx5_0");
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_EQ(*link, "../../devices/pci0000:00/0000:00:02.0/infiniband/mlx5_0");
  // `..` from the root stays at the root.
  EXPECT_TRUE(tree.readFile("/../../../hca_type_inside", 4096).ok());
}

TEST_P(HostileTree, ASnapshotOfTheTreeHoldsNoByteOfTheAnalystsFiles) {
  RootedFilesystem tree(root_.string(), GetParam());
  RootedFilesystem files("");
  CollectOptions o;
  o.root = tree.root();
  ibc::test::NoCommands runner;
  SystemClock clock;
  ibc::test::MapEnvironment env;
  const auto snap =
      collectSnapshot(o, HostSeams{tree, files, runner, clock, env, nullptr, nullptr});
  ASSERT_EQ(snap.devices_size(), 1);
  EXPECT_EQ(snap.devices(0).name(), "mlx5_0");
  EXPECT_EQ(snap.devices(0).hca_type(), "MT4118");
  EXPECT_EQ(snap.devices(0).fw_ver(), "");
  ASSERT_EQ(snap.devices(0).ports_size(), 1);
  EXPECT_EQ(snap.devices(0).ports(0).state().raw(), "4: ACTIVE");
  std::string bytes;
  ASSERT_TRUE(snap.SerializeToString(&bytes));
  EXPECT_THAT(bytes, Not(HasSubstr(kSecret))) << "the analyst's file leaked into the snapshot";
}

TEST(RootedFilesystem, ARootThatCannotBeOpenedFailsEveryReadWithItsReason) {
  RootedFilesystem tree("/nonexistent-ibcollect-root");
  auto r = tree.readFile("/sys/class/infiniband", 10);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::NotFound);
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent-ibcollect-root"));
}

TEST_P(HostileTree, StatusSaysTypeSizeAndAgeInsideTheRootOnly) {
  RootedFilesystem tree(root_.string(), GetParam());
  auto file = tree.status("/hca_type_inside");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_TRUE(file->regular);
  EXPECT_FALSE(file->directory);
  EXPECT_EQ(file->bytes, fs::file_size(root_ / "hca_type_inside"));
  EXPECT_GT(file->modified_ns, int64_t{1'500'000'000} * 1'000'000'000);
  auto dir = tree.status("/sys/class/infiniband");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  EXPECT_TRUE(dir->directory);
  // `..` beyond the root stays at the root, and a link out of the tree means the tree's own
  // path: the analyst's file beside the tree is never what status() describes.
  for (const char* escape : {"/../outside/secret", "/sys/class/infiniband/mlx5_0/fw_ver"}) {
    auto outside = tree.status(escape);
    ASSERT_FALSE(outside.ok()) << escape;
    EXPECT_EQ(outside.error().code, ErrorCode::NotFound) << escape;
  }
}

INSTANTIATE_TEST_SUITE_P(Resolution, HostileTree,
                         ::testing::Values(RootedFilesystem::Resolution::Kernel,
                                           RootedFilesystem::Resolution::Walk),
                         [](const auto& info) {
                           return info.param == RootedFilesystem::Resolution::Kernel
                                      ? std::string("Openat2")
                                      : std::string("CheckedWalk");
                         });

}  // namespace
}  // namespace ibc::agent

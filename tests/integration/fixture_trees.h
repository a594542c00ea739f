#pragma once

// The real sysfs captures the integration tests collect from (tests/fixtures/real/sysfs, see
// its PROVENANCE.md), as a named node sees them. Needs IBC_FIXTURES_DIR.

#include <filesystem>
#include <fstream>
#include <string>

namespace ibc::test {

// mlx5_0 VF with hw_counters errors (transport retries, CQE errors): a faulty node.
inline const std::string kBrokenTree =
    std::string(IBC_FIXTURES_DIR) +
    "/real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures";
// mlx4_0, 2 QDR ports, clean counters: a healthy node.
inline const std::string kHealthyTree =
    std::string(IBC_FIXTURES_DIR) +
    "/real/sysfs/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures";

// A copy of `tree` at `dest` whose /proc/sys/kernel/hostname names `node`, so that its
// snapshot names that node and only the node's certificate may sign it (docs/security.md). Copies
// once; returns `dest`.
inline std::string treeAsNode(const std::string& tree, const std::filesystem::path& dest,
                              const std::string& node) {
  if (!std::filesystem::exists(dest)) {
    std::filesystem::copy(tree, dest, std::filesystem::copy_options::recursive);
    std::filesystem::create_directories(dest / "proc/sys/kernel");
    std::ofstream((dest / "proc/sys/kernel/hostname").string()) << node << "\n";
  }
  return dest.string();
}

}  // namespace ibc::test

// `nvidia-smi topo -m` pasted as tool output (tool_output_topo.cpp): the real captures of
// tests/fixtures/real/nvidia-smi-topo (ground truth in their PROVENANCE.md).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/tool_output.h"
#include "tool_evidence_lookup.h"

namespace ibc::core {
namespace {

using test::kindsOf;

v1::GpuTopology topology(const std::string& name) {
  const auto ev = parseToolOutput(test::readFixture("real/nvidia-smi-topo/" + name));
  EXPECT_EQ(kindsOf(ev), "nvidia-smi-topo") << name;
  EXPECT_EQ(ev.gpu_topologies.size(), 1u) << name;
  return ev.gpu_topologies.empty() ? v1::GpuTopology{} : ev.gpu_topologies.front();
}

std::vector<std::string> nearest(const v1::GpuNics& g) {
  return {g.nearest().begin(), g.nearest().end()};
}

TEST(NvidiaSmiTopoParser, TheOldLayoutNamesNicsByDeviceAndFindsASysOnlyGpu) {
  const auto t =
      topology("nvidia-smi-topo-m_4xa100-2nic-gpu0-gpu3-nearest-nic-sys-hdr_nccl-issue-595.txt");
  ASSERT_EQ(t.gpus_size(), 4);
  EXPECT_EQ(std::vector<std::string>(t.nics().begin(), t.nics().end()),
            (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(t.gpus(0).relation(), "SYS");
  EXPECT_EQ(nearest(t.gpus(0)), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(t.gpus(0).cpu_affinity(), "16-31,80-95");
  EXPECT_EQ(t.gpus(0).numa_affinity(), "1");
  EXPECT_EQ(t.gpus(1).relation(), "PIX");
  EXPECT_EQ(nearest(t.gpus(1)), (std::vector<std::string>{"mlx5_0"}));
  EXPECT_EQ(nearest(t.gpus(2)), (std::vector<std::string>{"mlx5_1"}));
  EXPECT_EQ(t.gpus(3).relation(), "SYS");
}

TEST(NvidiaSmiTopoParser, TheNicLegendNamesTheColumns) {
  const auto t =
      topology("nvidia-smi-topo-m_8gpu-pcie-2nic-all-sys-nic-legend_nccl-issue-1530.txt");
  ASSERT_EQ(t.gpus_size(), 8);
  EXPECT_EQ(std::vector<std::string>(t.nics().begin(), t.nics().end()),
            (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  for (const auto& g : t.gpus()) {
    EXPECT_EQ(g.relation(), "SYS") << g.gpu();
    EXPECT_EQ(g.nearest_size(), 2) << g.gpu();
  }
  EXPECT_EQ(t.gpus(7).cpu_affinity(), "48-63,112-127");
  const auto mp = topology(
      "nvidia-smi-topo-mp_1gpu-10nic-gpu0-nearest-node-nic-legend_nvidia-tools-image-readme.txt");
  ASSERT_EQ(mp.gpus_size(), 1);
  EXPECT_EQ(mp.nics_size(), 10);
  EXPECT_EQ(mp.nics(9), "mlx5_9");
  EXPECT_EQ(mp.gpus(0).relation(), "NODE");
  EXPECT_EQ(mp.gpus(0).nearest_size(), 10);
  EXPECT_EQ(mp.gpus(0).cpu_affinity(), "0,2,4,6,8,10");
}

TEST(NvidiaSmiTopoParser, AnExcerptWithoutItsLegendKeepsTheColumnNames) {
  const auto t = topology(
      "nvidia-smi-topo-m_8gpu-nv18-9nic-nic0-sys-to-all-excerpt-ends-at-nic5_nccl-issue-1453.txt");
  ASSERT_EQ(t.gpus_size(), 8);
  EXPECT_EQ(t.nics_size(), 9);
  EXPECT_EQ(t.gpus(0).relation(), "PIX");
  EXPECT_EQ(nearest(t.gpus(0)), (std::vector<std::string>{"NIC8"}));
  EXPECT_EQ(nearest(t.gpus(7)), (std::vector<std::string>{"NIC1"}));
}

}  // namespace
}  // namespace ibc::core

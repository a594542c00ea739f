// Kernel log rules (rules_kernel.cpp) on SYNTHETIC snapshots (rule_snapshots.h): one table row
// per code, a line in the driver's own format.

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ibc/core/rules.h"
#include "rule_snapshots.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

using namespace ibc::test;  // the rule snapshots and what the rules made of them

struct KernelCase {
  const char* line;
  const char* code;
  const char* severity;
};

class KernelRules : public ::testing::TestWithParam<KernelCase> {};

TEST_P(KernelRules, ALineOfTheDriversOwnFormatGivesItsCode) {
  const KernelCase& c = GetParam();
  auto s = snapshot("");
  auto* line = s.mutable_kernel_log()->add_lines();
  line->set_text(c.line);
  line->set_timestamp("[ 5678.901234]");
  line->set_monotonic_seconds(5678.901234);
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, c.code);
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), c.severity) << describe(findings);
  EXPECT_EQ(f->device(), "mlx5_0") << "the PCI address names the device";
  ASSERT_GT(f->evidence_size(), 0);
  EXPECT_THAT(f->evidence(0), HasSubstr(c.line));
}

INSTANTIATE_TEST_SUITE_P(
    Codes, KernelRules,
    ::testing::Values(
        // drivers/net/ethernet/mellanox/mlx5/core/cmd.c wait_func()
        KernelCase{"mlx5_core 0000:0c:00.0: wait_func:1189:(pid 72061): ACCESS_REG(0x805) "
                   "timeout. Will cause a leak of a command resource",
                   "FW_COMMAND_TIMEOUT", "critical"},
        // mlx5/core/health.c poll_health()
        KernelCase{"mlx5_core 0000:0c:00.0: poll_health:801:(pid 0): device's health "
                   "compromised - reached miss count",
                   "DEVICE_FATAL", "critical"},
        // mlx5/core/events.c temp_warn()
        KernelCase{"mlx5_core 0000:0c:00.0: temp_warn:165:(pid 0): High temperature on sensors "
                   "with bit set 0 1",
                   "MODULE_TEMPERATURE", "critical"},
        // drivers/pci/pci.c __pcie_print_link_status()
        KernelCase{"mlx5_core 0000:0c:00.0: 63.008 Gb/s available PCIe bandwidth, limited by "
                   "8.0 GT/s PCIe x8 link at 0000:00:03.0 (capable of 252.048 Gb/s with 16.0 "
                   "GT/s PCIe x16 link)",
                   "PCIE_LINK_DEGRADED", "warning"}),
    [](const auto& info) { return std::string(info.param.code); });

}  // namespace
}  // namespace ibc::core

// The host kernel log parser (parsers/pf/pf_kernel_log.cpp) on the real captures of
// tests/fixtures/real/pf (labels in its PROVENANCE.md), plus good/empty/truncated/garbage/huge
// input.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fixtures.h"
#include "ibc/core/pf/pf_tools.h"
#include "ibc/core/pf_judge.h"
#include "pf_evidence.h"

namespace ibc::core {
namespace {

using namespace ibc::test;  // the real PF captures, one PF's evidence and its codes

TEST(PfKernelLog, PcieBandwidthLimitedLineIsKeptWrappedOrUnstamped) {
  const auto wrapped = parsePfKernelLog(pfCapture("dmesg-pf_pci-gpu-pcie-limited"));
  const bool whole = std::any_of(wrapped.begin(), wrapped.end(), [](const v1::KernelLogLine& l) {
    return l.text().find(
               "bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:00:01.1 (capable "
               "of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)") != std::string::npos;
  });
  EXPECT_TRUE(whole);
  const auto bare = parsePfKernelLog(
      "mlx5_core 0000:17:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe "
      "x4 link at 0000:16:02.0 (capable of 126.016 Gb/s with 8.0 GT/s PCIe x16 link)\n");
  ASSERT_EQ(bare.size(), 1u);
  v1::PfEvidence e;
  e.set_pf_device("mlx5_0");
  *e.add_kernel_log() = bare[0];
  EXPECT_EQ(codes(judgePf(e, {}, "h", "t")), std::vector<std::string>{"PF_PCIE_ERRORS:warning"});
  // At capability the kernel prints no "limited by": nothing to say.
  const auto at_cap =
      judgePf(onePf(parsePfToolOutput(pfCapture("dmesg-pf_cx5-mlx5-pcie-8gts-x8-at-capability"))),
              {}, "h", "t");
  EXPECT_EQ(codes(at_cap), std::vector<std::string>{"PF_CLEAN:info"});
}

TEST(PfKernelLog, MailWrappedHealthDumpIsJoinedBackToItsRecords) {
  const auto lines = parsePfKernelLog(pfCapture("dmesg-pf_mlx5-health-synd"));
  ASSERT_EQ(lines.size(), 13u);
  const bool synd = std::any_of(lines.begin(), lines.end(), [](const v1::KernelLogLine& l) {
    return l.text().find("print_health_info:385:(pid 0): synd 0x7: irisc not responding") !=
           std::string::npos;
  });
  EXPECT_TRUE(synd);
}

}  // namespace
}  // namespace ibc::core

// Host rules (rules_host.cpp) on SYNTHETIC snapshots (rule_snapshots.h).

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ibc/core/rules.h"
#include "rule_snapshots.h"

namespace ibc::core {
namespace {

using namespace ibc::test;  // the rule snapshots and what the rules made of them

TEST(Rules, PcieLinkDegradedFromTheDevicesOwnLinkAttributesOnBareMetalOnly) {
  auto s = snapshot("");
  auto* pci = s.mutable_devices(0)->mutable_pci();
  pci->set_current_link_gts(8);
  pci->set_current_link_lanes(8);
  auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PCIE_LINK_DEGRADED");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), "mlx5_0");
  // A VF's link attributes describe an emulated link ("2.5 GT/s x1" is routine): no finding.
  s.mutable_devices(0)->set_is_virtual_function(true);
  findings = diagnoseNode(s, {});
  EXPECT_EQ(find(findings, "PCIE_LINK_DEGRADED"), nullptr) << describe(findings);
}

TEST(Rules, MemlockLimitIsCriticalOnceRegistrationsFailUnderIt) {
  auto s = snapshot("");
  s.mutable_host()->set_memlock_unlimited(false);
  s.mutable_host()->set_memlock_soft_bytes(64 * 1024);
  s.mutable_host()->set_memlock_hard_bytes(64 * 1024);
  auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "MEMLOCK_LIMIT");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  auto* e = s.add_nccl_logs()->mutable_parsed()->add_events();
  e->set_kind(v1::NcclEvent::REG_MR_FAILED);
  e->set_host("node1");
  e->set_text("NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory");
  findings = diagnoseNode(s, {});
  f = find(findings, "MEMLOCK_LIMIT");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "critical");
}

}  // namespace
}  // namespace ibc::core

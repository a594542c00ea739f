// Escalation by class (rules_escalation.cpp) on SYNTHETIC snapshots (rule_snapshots.h): what
// is escalated, with which reasons, and how the device is named.

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "ibc/core/rules.h"
#include "rule_snapshots.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

using namespace ibc::test;  // the rule snapshots and what the rules made of them

TEST(Rules, NcclTransportErrorsOnAVmWithCleanVfsEscalateTheNode) {
  auto s = snapshot(R"pb(
    nccl_logs {
      source: "rank3.log"
      parsed {
        hosts: "node1"
        events {
          kind: IB_COMPLETION_ERROR
          host: "node1"
          rank: 3
          status: 12
          vendor_err: 129
          text: "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<45678> with error 12, "
                "opcode 0, len 0, vendor err 129"
        }
      }
    }
  )pb");
  // Bare metal: the customer owns the host, nothing to escalate.
  auto findings = diagnoseNode(s, {});
  ASSERT_NE(find(findings, "NCCL_IB_COMPLETION_ERROR"), nullptr) << describe(findings);
  EXPECT_EQ(find(findings, "ESCALATE_HOST_INSPECTION"), nullptr) << describe(findings);
  // The same on a VM whose only device is a clean VF: the PF side must look.
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_devices(0)->set_is_virtual_function(true);
  findings = diagnoseNode(s, {});
  const auto* f = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), "") << "node-level: no device to pin the NCCL error on";
  std::string evidence;
  for (const auto& line : f->evidence()) evidence += line + "\n";
  EXPECT_THAT(evidence, HasSubstr("NCCL_IB_COMPLETION_ERROR"));
  EXPECT_THAT(evidence, HasSubstr("VF mlx5_0"));
}

TEST(Rules, TransportErrorsOnAVfWhoseStateIsUnknownDoNotClaimItIsClean) {
  auto s = snapshot("");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_devices(0)->set_is_virtual_function(true);
  auto* retries = s.mutable_devices(0)->mutable_ports(0)->add_hw_counters();
  retries->set_name("local_ack_timeout_err");
  retries->set_value(131);
  auto findings = diagnoseNode(s, {});
  ASSERT_NE(find(findings, "TRANSPORT_RETRIES"), nullptr) << describe(findings);
  ASSERT_NE(find(findings, "ESCALATE_HOST_INSPECTION"), nullptr) << describe(findings);
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->Clear();
  findings = diagnoseNode(s, {});
  ASSERT_NE(find(findings, "PORT_STATE_UNKNOWN"), nullptr) << describe(findings);
  EXPECT_EQ(find(findings, "ESCALATE_HOST_INSPECTION"), nullptr) << describe(findings);
}

TEST(Rules, APhysicalFindingOnAVfEscalatesThatDevice) {
  auto s = snapshot("");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_devices(0)->set_is_virtual_function(true);
  addWindow(s, "link_downed", 2, 5);
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "critical") << "as severe as the physical evidence";
  EXPECT_EQ(f->device(), "mlx5_0");
}

// Issue 10, hardware described rightly. A device in a VM (CPU flag hypervisor) without
// PCI evidence is not called a VF in summaries or evidence.
TEST(Wording, ADeviceInAVmWithoutPciEvidenceIsNotCalledAVf) {
  auto s = snapshot("");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_node()->set_virtualization_evidence("CPU flag hypervisor");
  setCounter(s, "symbol_error", 40);
  const auto findings = diagnoseNode(s, {});
  const auto* esc = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(esc, nullptr) << describe(findings);
  EXPECT_THAT(esc->summary(), Not(HasSubstr("is a virtual function")));
  EXPECT_THAT(esc->summary(), HasSubstr("no PCI evidence that it is a VF"));
  bool named = false;
  for (const auto& e : esc->evidence()) {
    EXPECT_NE(e.rfind("VF ", 0), 0u) << e;
    named |= e.find("device mlx5_0") == 0 && e.find("CPU flag hypervisor") != std::string::npos;
  }
  EXPECT_TRUE(named) << describe(findings);
  for (const auto& f : findings) {
    EXPECT_THAT(f.action(), Not(HasSubstr("This is a virtual function")));
  }
}

// The same for transport errors alone (the symptom path): a device in a VM (CPU flag
// hypervisor) without PCI evidence is not said to be a VF in summary, evidence or steps,
// and neither is the node-level escalation of an NCCL symptom.
TEST(Wording, TransportErrorsInAVmWithoutPciEvidenceDoNotCallTheDeviceAVf) {
  auto s = snapshot("");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_node()->set_virtualization_evidence("CPU flag hypervisor");
  auto* retries = s.mutable_devices(0)->mutable_ports(0)->add_hw_counters();
  retries->set_name("local_ack_timeout_err");
  retries->set_value(131);
  const auto findings = diagnoseNode(s, {});
  const auto* esc = find(findings, "ESCALATE_HOST_INSPECTION");
  ASSERT_NE(esc, nullptr) << describe(findings);
  EXPECT_THAT(esc->summary(), Not(HasSubstr("VF-side")));
  EXPECT_THAT(esc->summary(), Not(HasSubstr("beyond the VF")));
  EXPECT_THAT(esc->summary(), HasSubstr("no PCI evidence that it is a VF"));
  EXPECT_THAT(esc->action(), Not(HasSubstr("this VF")));
  for (const auto& e : esc->evidence()) EXPECT_NE(e.rfind("VF ", 0), 0u) << e;
}

TEST(EscalationKind, PhysicalBeatsTheSmWhichBeatsTheTransportPath) {
  EXPECT_EQ(escalationKindFor({"TRANSPORT_RETRIES", "PORT_NOT_ACTIVE_SM", "PHY_ERRORS"}),
            EscalationKind::Physical);
  EXPECT_EQ(escalationKindFor({"TRANSPORT_RETRIES", "PORT_NOT_ACTIVE_SM"}),
            EscalationKind::SubnetManager);
  EXPECT_EQ(escalationKindFor({"CQE_ERRORS"}), EscalationKind::TransportPath);
  EXPECT_EQ(escalationKindFor({"MEMLOCK_LIMIT", "NCCL_SOCKET_FALLBACK"}), std::nullopt);
  EXPECT_EQ(escalationKindFor({}), std::nullopt);
}

}  // namespace
}  // namespace ibc::core

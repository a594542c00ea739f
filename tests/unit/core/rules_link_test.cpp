// Port and link rules (rules_link.cpp) on SYNTHETIC snapshots (rule_snapshots.h).

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ibc/core/rules.h"
#include "rule_snapshots.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

using namespace ibc::test;  // the rule snapshots and what the rules made of them

TEST(Rules, AVfPortDownWithItsPhysicalLinkUpIsTheHostsPolicyNotTheCable) {
  auto s = snapshot("");
  auto* port = s.mutable_devices(0)->mutable_ports(0);
  port->mutable_state()->set_code(1);
  port->mutable_state()->set_name("DOWN");
  port->mutable_state()->set_raw("1: DOWN");
  s.mutable_devices(0)->set_is_virtual_function(true);
  auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PORT_DOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->summary(), HasSubstr("although its physical link is up"));
  EXPECT_THAT(f->summary(), Not(HasSubstr("no physical link")));
  EXPECT_THAT(f->action(), HasSubstr("Not a cable fault"));
  EXPECT_THAT(f->action(), HasSubstr("sriov/<N>/policy"));
  EXPECT_THAT(f->action(), Not(HasSubstr("reseat")));

  // Not a VF: no cable advice either while the link is up.
  s.mutable_devices(0)->set_is_virtual_function(false);
  findings = diagnoseNode(s, {});
  f = find(findings, "PORT_DOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->action(), Not(HasSubstr("reseat")));
  EXPECT_THAT(f->action(), HasSubstr("sminfo"));
}

TEST(Rules, APortStateThatMeansNothingIsAWarningNotASilentOk) {
  auto s = snapshot("");
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->Clear();
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->set_raw("Act?[31mive");
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->set_code(-1);
  auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PORT_STATE_UNKNOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), "mlx5_0");
  EXPECT_EQ(f->port(), 1u);
  EXPECT_THAT(f->summary(), HasSubstr("\"Act?[31mive\""));

  // Expected but not read (the collector leaves an empty state for a missing file).
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->Clear();
  findings = diagnoseNode(s, {});
  f = find(findings, "PORT_STATE_UNKNOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->summary(), HasSubstr("could not be read"));

  // A paste with no state at all (perfquery, a counters listing) says nothing about it.
  s.mutable_devices(0)->mutable_ports(0)->clear_state();
  findings = diagnoseNode(s, {});
  EXPECT_EQ(find(findings, "PORT_STATE_UNKNOWN"), nullptr) << describe(findings);

  // With the physical link known down, PHYS_LINK_NOT_UP says it all.
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->set_raw("garbage");
  s.mutable_devices(0)->mutable_ports(0)->mutable_state()->set_code(-1);
  *s.mutable_devices(0)->mutable_ports(0)->mutable_phys_state() = v1::EnumValue();
  s.mutable_devices(0)->mutable_ports(0)->mutable_phys_state()->set_code(2);
  s.mutable_devices(0)->mutable_ports(0)->mutable_phys_state()->set_name("Polling");
  s.mutable_devices(0)->mutable_ports(0)->mutable_phys_state()->set_raw("2: Polling");
  findings = diagnoseNode(s, {});
  EXPECT_EQ(find(findings, "PORT_STATE_UNKNOWN"), nullptr) << describe(findings);
  EXPECT_NE(find(findings, "PHYS_LINK_NOT_UP"), nullptr) << describe(findings);
}

TEST(Rules, ADisabledPortIsOneCriticalWhoseNextStepIsToEnableIt) {
  auto s = snapshot("");
  auto* port = s.mutable_devices(0)->mutable_ports(0);
  setEnum(port->mutable_state(), 1, "DOWN");
  setEnum(port->mutable_phys_state(), 3, "Disabled");
  const auto findings = diagnoseNode(s, {});
  int criticals = 0;
  for (const auto& f : findings) criticals += f.severity() == "critical" ? 1 : 0;
  EXPECT_EQ(criticals, 1) << describe(findings);
  const auto* f = find(findings, "PORT_DOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->summary(), HasSubstr("disabled"));
  EXPECT_THAT(f->action(), HasSubstr("Enable the port"));
  EXPECT_THAT(f->action(), Not(HasSubstr("reseat")));
  EXPECT_EQ(find(findings, "PHYS_LINK_NOT_UP"), nullptr) << describe(findings);

  // Polling: still one critical, and the next step is the cable.
  setEnum(port->mutable_phys_state(), 2, "Polling");
  const auto polling = diagnoseNode(s, {});
  f = find(polling, "PORT_DOWN");
  ASSERT_NE(f, nullptr) << describe(polling);
  EXPECT_THAT(f->action(), HasSubstr("cable"));
  EXPECT_EQ(find(polling, "PHYS_LINK_NOT_UP"), nullptr) << describe(polling);
}

TEST(Rules, ADeviceListedWithoutItsPortsIsNeverOk) {
  auto s = snapshot("");
  s.mutable_devices(0)->clear_ports();
  s.mutable_devices(0)->set_seen_in("ibstat paste");
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PORT_STATE_UNKNOWN");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_EQ(f->severity(), "warning");
  EXPECT_EQ(f->device(), s.devices(0).name());
}

TEST(Wording, INITWithAnUnknownPhysicalStateDoesNotClaimTheLinkIsUp) {
  auto s = snapshot("");
  auto* port = s.mutable_devices(0)->mutable_ports(0);
  setEnum(port->mutable_state(), 2, "INIT");
  port->clear_phys_state();
  const auto findings = diagnoseNode(s, {});
  const auto* f = find(findings, "PORT_NOT_ACTIVE_SM");
  ASSERT_NE(f, nullptr) << describe(findings);
  EXPECT_THAT(f->summary(), Not(HasSubstr("while the physical link is up")));
  EXPECT_THAT(f->summary(), HasSubstr("physical state is unknown"));
}

}  // namespace
}  // namespace ibc::core

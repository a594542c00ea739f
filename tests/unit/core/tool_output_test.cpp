// The recogniser (parseToolOutput) over every real capture and mixed pastes, and the
// table of edge inputs every parser must survive with exact results: empty, truncated,
// garbage (random bytes, binary) and huge (50 MB).

#include "ibc/core/tool_output.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/sysfs_values.h"
#include "tool_evidence_lookup.h"

namespace ibc::core {
namespace {

using test::findDevice;
using test::findNetdev;
using test::findPort;
using test::kindsOf;
using test::valueOf;

uint64_t countLines(const std::string& text) {
  uint64_t n = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

// ---- every real capture ------------------------------------------------------------------

struct CaptureCase {
  std::string file;
  std::string kinds;
};

void PrintTo(const CaptureCase& c, std::ostream* os) { *os << c.file; }

class RealCaptureTable : public ::testing::TestWithParam<CaptureCase> {};

TEST_P(RealCaptureTable, IsRecognisedWholeWithNothingLeftOver) {
  const auto& c = GetParam();
  const std::string text = test::readFixture(c.file);
  ASSERT_FALSE(text.empty());
  const ToolEvidence ev = parseToolOutput(text);
  EXPECT_EQ(kindsOf(ev), c.kinds);
  EXPECT_EQ(ev.lines_total, countLines(text));
  EXPECT_EQ(ev.lines_unrecognised, 0u);
  EXPECT_FALSE(ev.truncated);
}

const std::vector<CaptureCase>& realCaptures() {
  static const std::vector<CaptureCase> kCases{
      {"real/ibtools/"
       "ibdev2netdev-and-ibv_devinfo_mixed-ib-roce-ib0-down-mlx5_0-port-down_ucx-issue-2534.txt",
       "ibdev2netdev,ibv_devinfo"},
      {"real/ibtools/"
       "ibportstate-and-ibstat_mlx4-port1-down-disabled-port2-active56_rdma-core-pr-847.txt",
       "ibportstate,ibstat"},
      {"real/ibtools/ibportstate_switch-ports-down-disabled-qdr_exadata-issue-2.txt",
       "ibportstate"},
      {"real/ibtools/ibstat_partial-then-ibpanic-stat-mlx5_8-failed_gpud-pr-752.txt", "ibstat"},
      {"real/ibtools/ibstat_roce-cx6dx-2port-active-rate100_l2fwd-nv-issue-6.txt", "ibstat"},
      {"real/ibtools/ibstatus_fatal-sys-files-not-found_trinity-issue-219.txt", "ibstatus"},
      {"real/ibtools/"
       "ibv_devinfo_pod-port-init-lid65535-zero-node-guid_network-operator-issue-1646.txt",
       "ibv_devinfo"},
      {"real/ibtools/perfquery-x_all-zero-counters_infiniband-diags-issue-16.txt", "perfquery"},
      {"real/ibtools/perfquery-x_traffic-no-errors-email-wrapped-header_netdata-issue-2620.txt",
       "perfquery"},
      {"real/ethtool/"
       "ethtool-S_mlx5_core-cx4lx-ubuntu18.04-no-header-no-indent_ethq-tests-f76f228.txt",
       "ethtool-S"},
      {"real/ethtool/ethtool-S_mlx5_core-legacy-counter-names-16rings_ethq-tests-6331e03.txt",
       "ethtool-S"},
      {"real/ethtool/ethtool-i_mlx5_core-cx4lx-fw14.23.1020_ethq-issue-8.txt", "ethtool-i"},
      {"real/iplink/ip-link-show_ipoib-4x-admin-down-noop_mochi-margo-issue-235.txt", "ip-link"},
      // Pasted the way people paste: comments after values, prompts, excerpts, cut pastes.
      {"real/ibtools/"
       "ibdev2netdev_column-t-hash-comments-cx7-ib-cx6-eth_imbue-cluster-health-issue-4.txt",
       "ibdev2netdev"},
      {"real/ibtools/ibstat_truncated-after-phys-state-mlx5_8-down-disabled_gpud-pr-99.txt",
       "ibstat"},
      {"real/ibtools/ibstat_4space-indent-redacted-guids-mlx5_10-down-polling_gpud-pr-482.txt",
       "ibstat"},
      {"real/ibtools/ibstat_excerpt-no-ca-header-port1-down-polling_azhpc-diagnostics-issue-76.txt",
       "ibstat"},
      {"real/ibtools/"
       "ibstat_mail-root-prompt-mlx4-port1-down-polling-port2-eth-disabled_linux-rdma-2020-02-"
       "21.txt",
       "ibstat"},
      {"real/ibtools/"
       "ibstat_pod-prompt-vf-state-down-phys-linkup-lid65535_network-operator-issue-249.txt",
       "ibstat"},
      {"real/ibtools/ibstat_excerpt-roce-active-mlx5_10-down-disabled_mooncake-issue-1999.txt",
       "ibstat"},
      {"real/sysfs/sysfs-grep_i40iw0-counters-no-pma_node_exporter-issue-966.txt", "sysfs-listing"},
  };
  return kCases;
}

INSTANTIATE_TEST_SUITE_P(Captures, RealCaptureTable, ::testing::ValuesIn(realCaptures()));

TEST(ToolOutputRecogniser, EveryRealCaptureInTheToolFixtureFoldersHasACase) {
  std::set<std::string> listed;
  for (const auto& c : realCaptures()) listed.insert(c.file);
  std::vector<std::string> files;
  for (const char* dir : {"real/ibtools", "real/ethtool", "real/iplink"}) {
    for (const auto& f : test::fixtureFiles(dir, ".txt")) files.push_back(f);
  }
  for (const auto& f : test::fixtureFiles("real/sysfs", ".txt")) {
    if (f.find("/sysfs-grep_") != std::string::npos) files.push_back(f);
  }
  EXPECT_EQ(files.size(), 21u);
  for (const auto& f : files) EXPECT_EQ(listed.count(f), 1u) << f << " has no case";
}

TEST(ToolOutputRecogniser, IbstatExcerptWithoutItsCaHeaderFilesThePortUnderAnUnnamedDevice) {
  const ToolEvidence ev = parseToolOutput(test::readFixture(
      "real/ibtools/"
      "ibstat_excerpt-no-ca-header-port1-down-polling_azhpc-diagnostics-issue-76.txt"));
  ASSERT_EQ(ev.devices.size(), 1u);
  EXPECT_EQ(ev.devices[0].name(), kUnnamedIbstatDevice);
  const v1::RdmaPort* p = findPort(&ev.devices[0], 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(portStateOf(p->state()), PortState::Down);
  EXPECT_EQ(p->phys_state().name(), "Polling");
}

TEST(ToolOutputRecogniser, AVfIsAVfFromIbstatsCaTypeAsFromIbvDevinfosPartId) {
  // MT4124 is the ConnectX-6 VF's device id (0x101c), the same table sysfs uses.
  const ToolEvidence ev = parseToolOutput(test::readFixture(
      "real/ibtools/"
      "ibstat_pod-prompt-vf-state-down-phys-linkup-lid65535_network-operator-issue-249.txt"));
  ASSERT_EQ(ev.devices.size(), 1u);
  EXPECT_TRUE(ev.devices[0].is_virtual_function());
  EXPECT_EQ(ev.devices[0].virtual_function_evidence(),
            "hca_type MT4124 = PCI device 0x101c, a ConnectX-6 VF");
  // A PF's CA type (ConnectX-6, MT4123) is not a VF.
  const ToolEvidence pf = parseToolOutput(
      "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: "
      "Active\n\t\tPhysical state: LinkUp\n");
  ASSERT_EQ(pf.devices.size(), 1u);
  EXPECT_FALSE(pf.devices[0].is_virtual_function());
}

TEST(ToolOutputRecogniser, RdmaLinkLinesInEveryIproute2ShapeGiveThePortsStates) {
  // SYNTHETIC lines in the shapes iproute2's `rdma link` prints (with and without the
  // colon, an index prefix of older versions, the IB fields, no netdev), behind a prompt.
  const ToolEvidence ev = parseToolOutput(
      "root@gpu07:~# rdma link\n"
      "link mlx5_0/1 state DOWN physical_state DISABLED netdev ens7f0np0\n"
      "link mlx5_1/1: state ACTIVE physical_state LINK_UP netdev ens21f1\n"
      "8/1: mlx5_bond_0/1: state ACTIVE physical_state LINK_UP netdev reth0\n"
      "link mlx5_2/1 subnet_prefix fe80:0000:0000:0000 lid 65535 sm_lid 1 lmc 0 state INIT "
      "physical_state LINK_UP\n"
      "the link x/1 of the fabric went down\n");
  ASSERT_EQ(ev.kinds, std::vector<std::string>{std::string(kKindRdmaLink)});
  ASSERT_EQ(ev.devices.size(), 4u);
  EXPECT_EQ(ev.devices[0].name(), "mlx5_0");
  EXPECT_EQ(portStateOf(ev.devices[0].ports(0).state()), PortState::Down);
  EXPECT_EQ(physStateOf(ev.devices[0].ports(0).phys_state()), PhysState::Disabled);
  EXPECT_EQ(ev.devices[1].ports(0).netdevs(0), "ens21f1");
  EXPECT_EQ(ev.devices[2].name(), "mlx5_bond_0");
  EXPECT_EQ(portStateOf(ev.devices[3].ports(0).state()), PortState::Init);
  EXPECT_EQ(physStateOf(ev.devices[3].ports(0).phys_state()), PhysState::LinkUp);
  EXPECT_EQ(ev.devices[3].ports(0).netdevs_size(), 0);
  ASSERT_EQ(ev.netdevs.size(), 3u);
  EXPECT_EQ(ev.netdevs[0].rdma_device(), "mlx5_0");
}

TEST(ToolOutputRecogniser, RdmaLinkJsonOnOneLineOrPrettyGivesThePortsStates) {
  // SYNTHETIC output in the shapes of iproute2's print_string(PRINT_ANY, "state", ...) keys:
  // `rdma -j link` on one line, `rdma -j -p link` over lines.
  const ToolEvidence one = parseToolOutput(
      "$ rdma -j link show\n"
      "[{\"ifindex\":0,\"ifname\":\"mlx5_0\",\"port\":1,\"state\":\"ACTIVE\",\"physical_state\":"
      "\"LINK_UP\",\"netdev\":\"ens1f0np0\",\"netdev_index\":2},{\"ifindex\":1,\"ifname\":"
      "\"mlx5_1\",\"port\":1,\"subnet_prefix\":\"fe80:0000:0000:0000\",\"lid\":65535,\"sm_lid\":1,"
      "\"lmc\":0,\"state\":\"DOWN\",\"physical_state\":\"POLLING\"}]\n");
  ASSERT_EQ(one.kinds, std::vector<std::string>{std::string(kKindRdmaLink)});
  ASSERT_EQ(one.devices.size(), 2u);
  EXPECT_EQ(portStateOf(one.devices[0].ports(0).state()), PortState::Active);
  EXPECT_EQ(one.devices[0].ports(0).netdevs(0), "ens1f0np0");
  EXPECT_EQ(portStateOf(one.devices[1].ports(0).state()), PortState::Down);
  EXPECT_EQ(physStateOf(one.devices[1].ports(0).phys_state()), PhysState::Polling);
  EXPECT_EQ(one.lines_unrecognised, 0u);
  const ToolEvidence pretty = parseToolOutput(
      "[ {\n"
      "        \"ifindex\": 0,\n"
      "        \"ifname\": \"mlx5_2\",\n"
      "        \"port\": 1,\n"
      "        \"state\": \"ACTIVE\",\n"
      "        \"physical_state\": \"LINK_UP\",\n"
      "        \"netdev\": \"ib2\"\n"
      "    } ]\n");
  ASSERT_EQ(pretty.devices.size(), 1u);
  EXPECT_EQ(pretty.devices[0].name(), "mlx5_2");
  EXPECT_EQ(pretty.lines_unrecognised, 0u);
  // `ip -j link` has ifname but no physical_state: not rdma's.
  EXPECT_TRUE(
      parseToolOutput("[{\"ifindex\":1,\"ifname\":\"lo\",\"mtu\":65536}]\n").devices.empty());
}

TEST(ToolOutputRecogniser, CommentsAfterIbdev2netdevLinesAreNotPartOfTheState) {
  const ToolEvidence ev = parseToolOutput(test::readFixture(
      "real/ibtools/"
      "ibdev2netdev_column-t-hash-comments-cx7-ib-cx6-eth_imbue-cluster-health-issue-4.txt"));
  EXPECT_EQ(ev.devices.size(), 12u);
  ASSERT_EQ(ev.netdevs.size(), 12u);
  EXPECT_EQ(ev.netdevs[0].name(), "ibp26s0");
  EXPECT_EQ(ev.netdevs[0].operstate(), "down");
  EXPECT_EQ(ev.netdevs[1].operstate(), "up");
}

TEST(ToolOutputRecogniser, ArrowsAndNotesInAnotherScriptAfterAValueAreAnnotations) {
  const ToolEvidence ev = parseToolOutput(
      "CA 'mlx5_0'\n"
      "\tPort 1:\n"
      "\t\tState: Down  <----------------\n"
      "\t\tPhysical state: Disabled <== why?\n"
      "\t\tRate: 10   // lowest rate\n"
      "ethtool -S eth2\n"
      "     rx_prio3_pause: 0   \xe6\x9a\x82\xe5\x81\x9c\xe5\xb8\xa7\n"
      "     np_cnp_sent: 12 \xef\xbc\x88"
      "CNP\xef\xbc\x89\n");
  EXPECT_EQ(ev.lines_unrecognised, 0u);
  ASSERT_EQ(ev.devices.size(), 1u);
  const v1::RdmaPort* p = findPort(&ev.devices[0], 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->state().name(), "Down");
  EXPECT_EQ(p->phys_state().name(), "Disabled");
  EXPECT_DOUBLE_EQ(p->rate_gbps(), 10);
  ASSERT_EQ(ev.netdevs.size(), 1u);
  ASSERT_EQ(ev.netdevs[0].ethtool_size(), 2);
  EXPECT_EQ(ev.netdevs[0].ethtool(0).value(), 0u);
  EXPECT_EQ(ev.netdevs[0].ethtool(1).value(), 12u);
}

TEST(ToolOutputRecogniser, FontTagsWithAttributesAroundIbstatusAreMarkup) {
  EXPECT_EQ(unwrapPasteMarkup("> <font color=\"red\">state: 1: DOWN</font>\n"), "state: 1: DOWN\n");
  EXPECT_EQ(unwrapPasteMarkup("<b><font face=\"Courier New\" size=\"2\">rate: 40 Gb/sec "
                              "(4X QDR)</font></b>"),
            "rate: 40 Gb/sec (4X QDR)");
  // Data in angle brackets stays.
  EXPECT_EQ(unwrapPasteMarkup("2: ib0: <BROADCAST,MULTICAST> mtu 4092"),
            "2: ib0: <BROADCAST,MULTICAST> mtu 4092");
}

TEST(ToolOutputRecogniser, ElisionLinesAreNoise) {
  const ToolEvidence ev = parseToolOutput("...\n[...]\n\xe2\x80\xa6\n");
  EXPECT_EQ(ev.lines_total, 3u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
  EXPECT_TRUE(ev.kinds.empty());
}

TEST(ToolOutputRecogniser, UcxPasteMergesIbdev2netdevBindingsIntoIbvDevinfoDevices) {
  const ToolEvidence ev = parseToolOutput(test::readFixture(
      "real/ibtools/"
      "ibdev2netdev-and-ibv_devinfo_mixed-ib-roce-ib0-down-mlx5_0-port-down_ucx-issue-2534.txt"));
  ASSERT_EQ(ev.devices.size(), 4u);
  const v1::RdmaDevice* mlx5_1 = findDevice(ev, "mlx5_1");
  ASSERT_NE(mlx5_1, nullptr);
  EXPECT_EQ(mlx5_1->seen_in(), "ibdev2netdev,ibv_devinfo");
  const v1::RdmaPort* p = findPort(mlx5_1, 1);
  EXPECT_EQ(portStateOf(p->state()), PortState::Active);
  ASSERT_EQ(p->netdevs_size(), 1);
  EXPECT_EQ(p->netdevs(0), "ib1");
  EXPECT_EQ(portStateOf(findPort(findDevice(ev, "mlx5_0"), 1)->state()), PortState::Down);
  EXPECT_EQ(portStateOf(findPort(findDevice(ev, "mlx5_3"), 1)->state()), PortState::Down);
  EXPECT_EQ(findPort(findDevice(ev, "mlx5_3"), 1)->netdevs(0), "enp23s0f1");
  // mlx5_2 is named only by ibdev2netdev.
  EXPECT_EQ(findDevice(ev, "mlx5_2")->seen_in(), "ibdev2netdev");
  EXPECT_EQ(findNetdev(ev, "ib0")->operstate(), "down");
  EXPECT_EQ(findNetdev(ev, "ib0")->rdma_device(), "mlx5_0");
}

TEST(ToolOutputRecogniser, Pr847PasteSeparatesTheBarePortInfoFromIbstat) {
  const ToolEvidence ev = parseToolOutput(test::readFixture(
      "real/ibtools/"
      "ibportstate-and-ibstat_mlx4-port1-down-disabled-port2-active56_rdma-core-pr-847.txt"));
  ASSERT_EQ(ev.devices.size(), 2u);
  EXPECT_EQ(findPort(findDevice(ev, "lid:38"), 0)->rate_gbps(), 56);
  EXPECT_EQ(findPort(findDevice(ev, "mlx4_0"), 2)->rate_gbps(), 56);
  EXPECT_EQ(findPort(findDevice(ev, "mlx4_0"), 1)->rate_gbps(), 10);
  ASSERT_EQ(ev.spans.size(), 2u);
  EXPECT_EQ(ev.spans[0].kind, "ibportstate");
  EXPECT_EQ(ev.spans[0].first_line, 1u);
  EXPECT_EQ(ev.spans[0].last_line, 15u);
  EXPECT_EQ(ev.spans[1].kind, "ibstat");
  EXPECT_EQ(ev.spans[1].first_line, 23u);
  EXPECT_EQ(ev.spans[1].last_line, 43u);
  EXPECT_TRUE(ev.tool_errors.empty());  // routine ibwarn debug lines are not errors
}

// Synthetic ticket paste: prose, prompts of several shapes, a `set -x` trace, fences, an
// ibwarn failure, and five tools about the same host.
constexpr char kMixedPaste[] =
    "Hi, job 1234 hangs at step 3. Output below.\n"
    "```\n"
    "[root@gpu-node-7 ~]# ibdev2netdev\n"
    "mlx5_0 port 1 ==> ib0 (Up)\n"
    "mlx5_1 port 1 ==> ib1 (Down)\n"
    "root@gpu-node-7:~# ibstat mlx5_1\n"
    "CA 'mlx5_1'\n"
    "\tCA type: MT4123\n"
    "\tNumber of ports: 1\n"
    "\tFirmware version: 20.31.1014\n"
    "\tHardware version: 0\n"
    "\tNode GUID: 0xb8cef60300a1b2c5\n"
    "\tSystem image GUID: 0xb8cef60300a1b2c4\n"
    "\tPort 1:\n"
    "\t\tState: Down\n"
    "\t\tPhysical state: Polling\n"
    "\t\tRate: 10\n"
    "\t\tBase lid: 65535\n"
    "\t\tLMC: 0\n"
    "\t\tSM lid: 0\n"
    "\t\tCapability mask: 0x2651e848\n"
    "\t\tPort GUID: 0xb8cef60300a1b2c5\n"
    "\t\tLink layer: InfiniBand\n"
    "+ ibv_devinfo -d mlx5_1\n"
    "hca_id:\tmlx5_1\n"
    "\ttransport:\t\t\tInfiniBand (0)\n"
    "\tfw_ver:\t\t\t\t20.31.9999\n"
    "\tvendor_part_id:\t\t\t4123\n"
    "\t\tport:\t1\n"
    "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
    "\t\t\tactive_mtu:\t\t4096 (5)\n"
    "\t\t\tlink_layer:\t\tInfiniBand\n"
    "\n"
    "ibwarn: [2231] mad_rpc_open_port: can't open UMAD port ((null):0)\n"
    "$ ip link show ib1\n"
    "6: ib1: <BROADCAST,MULTICAST,UP> mtu 4092 qdisc mq state DOWN mode DEFAULT group default "
    "qlen 256\n"
    "    link/infiniband 00:00:10:29:fe:80:00:00:00:00:00:00:b8:ce:f6:03:00:a1:b2:c5 brd "
    "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff\n"
    "$ ethtool -S ib1\n"
    "no stats available\n"
    "```\n"
    "thanks\n";

TEST(ToolOutputRecogniser, MixedPasteMergesToolsAndCountsOnlyProseAsUnrecognised) {
  const ToolEvidence ev = parseToolOutput(kMixedPaste);
  EXPECT_EQ(kindsOf(ev), "ibdev2netdev,ibstat,ibv_devinfo,ip-link,ethtool-S");
  EXPECT_EQ(ev.lines_total, countLines(kMixedPaste));
  EXPECT_EQ(ev.lines_unrecognised, 2u);  // the greeting and "thanks"

  const v1::RdmaDevice* dev = findDevice(ev, "mlx5_1");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->seen_in(), "ibdev2netdev,ibstat,ibv_devinfo");
  EXPECT_EQ(dev->hca_type(), "MT4123");
  EXPECT_EQ(dev->fw_ver(), "20.31.1014");  // ibstat came first; ibv_devinfo's differs
  EXPECT_EQ(dev->pci().device_id(), "0x101b");
  const v1::RdmaPort* p = findPort(dev, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->state().raw(), "Down");  // first seen wins over ibv_devinfo's PORT_ACTIVE
  EXPECT_EQ(physStateOf(p->phys_state()), PhysState::Polling);
  EXPECT_EQ(p->lid(), 65535u);
  EXPECT_EQ(p->active_mtu(), 4096u);  // only ibv_devinfo knew it
  ASSERT_EQ(p->netdevs_size(), 1);
  EXPECT_EQ(p->netdevs(0), "ib1");

  const v1::NetDevice* ib1 = findNetdev(ev, "ib1");
  ASSERT_NE(ib1, nullptr);
  EXPECT_EQ(ib1->rdma_device(), "mlx5_1");
  EXPECT_EQ(ib1->operstate(), "down");
  EXPECT_EQ(ib1->mtu(), 4092u);
  EXPECT_EQ(ib1->type(), 32u);
  EXPECT_TRUE(ib1->admin_up());
  EXPECT_EQ(ib1->ethtool_unavailable_reason(), "no stats available");
  EXPECT_EQ(ev.netdevs.size(), 2u);

  ASSERT_EQ(ev.tool_errors.size(), 1u);
  EXPECT_EQ(ev.tool_errors[0], "ibwarn: [2231] mad_rpc_open_port: can't open UMAD port ((null):0)");
}

TEST(ToolOutputRecogniser, BlocksOfOneKindSeparatedByNoiseFormOneSpan) {
  const ToolEvidence ev = parseToolOutput(
      "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\n$ ibstat mlx5_1\nCA 'mlx5_1'\n"
      "\tPort 1:\n\t\tState: Down\nnot tool output\nCA 'mlx5_2'\n");
  ASSERT_EQ(ev.spans.size(), 2u);
  EXPECT_EQ(ev.spans[0].first_line, 1u);
  EXPECT_EQ(ev.spans[0].last_line, 8u);
  EXPECT_EQ(ev.spans[1].first_line, 10u);
  EXPECT_EQ(ev.lines_unrecognised, 1u);
  EXPECT_EQ(ev.devices.size(), 3u);
}

TEST(ToolOutputRecogniser, IbvDevinfoBlockDoesNotSwallowAnEthtoolBlockAfterABlankLine) {
  const ToolEvidence ev = parseToolOutput(
      "hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\n"
      "     rx_packets: 5\n     tx_packets: 6\n");
  EXPECT_EQ(kindsOf(ev), "ibv_devinfo,ethtool-S");
  ASSERT_EQ(ev.netdevs.size(), 1u);
  EXPECT_EQ(valueOf(ev.netdevs[0].ethtool(), "tx_packets"), 6u);
}

TEST(ToolOutputRecogniser, NoRdmaDevicesFromAnyToolIsReported) {
  EXPECT_TRUE(parseToolOutput("# ibv_devinfo\nNo IB devices found\n").no_rdma_devices);
  EXPECT_TRUE(
      parseToolOutput(test::readFixture(
                          "real/ibtools/ibstatus_fatal-sys-files-not-found_trinity-issue-219.txt"))
          .no_rdma_devices);
  EXPECT_FALSE(parseToolOutput("CA 'mlx5_0'\n").no_rdma_devices);
}

// ---- edge inputs, for every parser -------------------------------------------------------

struct ParserCase {
  std::string name;
  std::string kind;    // parseToolOutputAs(kind) (the recogniser's row: parseToolOutput), and
                       // the kind it must find
  std::string sample;  // a good input with no unrecognised lines

  ToolEvidence parse(std::string_view text) const {
    return name == "recogniser" ? parseToolOutput(text) : parseToolOutputAs(kind, text);
  }
};

std::string fixture(const char* file) { return test::readFixture(file); }

std::vector<ParserCase> parserCases() {
  return {
      {"ibstat", "ibstat",
       fixture("real/ibtools/ibstat_roce-cx6dx-2port-active-rate100_l2fwd-nv-issue-6.txt")},
      {"ibstatus", "ibstatus",
       "Infiniband device 'mlx4_0' port 1 status:\n\tdefault gid:\t "
       "fe80:0000:0000:0000:0002:c903:0010:1b75\n\tbase lid:\t 0x5\n\tsm lid:\t\t 0x1\n"
       "\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 40 Gb/sec (4X QDR)\n"
       "\tlink_layer:\t InfiniBand\n\n"},
      {"ibv_devinfo", "ibv_devinfo",
       fixture("real/ibtools/"
               "ibv_devinfo_pod-port-init-lid65535-zero-node-guid_network-operator-issue-1646."
               "txt")},
      {"perfquery", "perfquery",
       fixture("real/ibtools/"
               "perfquery-x_traffic-no-errors-email-wrapped-header_netdata-issue-2620.txt")},
      {"ibportstate", "ibportstate",
       fixture("real/ibtools/ibportstate_switch-ports-down-disabled-qdr_exadata-issue-2.txt")},
      {"ibdev2netdev", "ibdev2netdev",
       "mlx5_0 port 1 ==> ib0 (Down)\nmlx5_1 port 1 ==> ib1 (Up)\n"},
      {"ethtool_stats", "ethtool-S",
       "$ ethtool -S eth0\n" +
           fixture("real/ethtool/"
                   "ethtool-S_mlx5_core-legacy-counter-names-16rings_ethq-tests-6331e03.txt")},
      {"ethtool_info", "ethtool-i",
       fixture("real/ethtool/ethtool-i_mlx5_core-cx4lx-fw14.23.1020_ethq-issue-8.txt")},
      {"ip_link", "ip-link",
       fixture("real/iplink/ip-link-show_ipoib-4x-admin-down-noop_mochi-margo-issue-235.txt")},
      {"sysfs_listing", "sysfs-listing",
       fixture("real/sysfs/sysfs-grep_i40iw0-counters-no-pma_node_exporter-issue-966.txt")},
      {"recogniser", "ibstat",
       fixture("real/ibtools/ibstat_partial-then-ibpanic-stat-mlx5_8-failed_gpud-pr-752.txt")},
  };
}

void PrintTo(const ParserCase& c, std::ostream* os) { *os << c.name; }

class ParserEdgeTable : public ::testing::TestWithParam<ParserCase> {};

bool nothingFound(const ToolEvidence& ev) {
  return ev.kinds.empty() && ev.devices.empty() && ev.netdevs.empty() && ev.sysfs_entries.empty() &&
         ev.driver_infos.empty() && ev.tool_errors.empty() && ev.spans.empty() &&
         !ev.no_rdma_devices && !ev.truncated;
}

TEST_P(ParserEdgeTable, SampleIsRecognisedWithoutLeftovers) {
  const auto& c = GetParam();
  const ToolEvidence ev = c.parse(c.sample);
  ASSERT_FALSE(ev.kinds.empty());
  EXPECT_EQ(ev.kinds[0], c.kind);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
  EXPECT_EQ(ev.lines_total, countLines(c.sample));
}

TEST_P(ParserEdgeTable, EmptyAndBlankInputYieldNothing) {
  const auto& c = GetParam();
  const ToolEvidence empty = c.parse("");
  EXPECT_TRUE(nothingFound(empty));
  EXPECT_EQ(empty.lines_total, 0u);
  const ToolEvidence blank = c.parse("\n \n\t\r\n");
  EXPECT_TRUE(nothingFound(blank));
  EXPECT_EQ(blank.lines_total, 3u);
  EXPECT_EQ(blank.lines_unrecognised, 0u);
}

// Lines of random bytes (never '\n', always starting with a byte >= 0x80 so no line is
// blank or a prompt) are each unrecognised; the sample after them is still found whole.
TEST_P(ParserEdgeTable, GarbageLinesAreCountedAndDoNotHideRealOutput) {
  const auto& c = GetParam();
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> high(0x80, 0xff);
  std::uniform_int_distribution<int> length(0, 300);
  std::string garbage;
  const uint64_t kLines = 500;
  for (uint64_t i = 0; i < kLines; ++i) {
    garbage.push_back(static_cast<char>(high(rng)));
    for (int n = length(rng); n > 0; --n) {
      char b = static_cast<char>(byte(rng));
      garbage.push_back(b == '\n' ? '\0' : b);
    }
    garbage.push_back('\n');
  }
  const ToolEvidence only = c.parse(garbage);
  EXPECT_TRUE(nothingFound(only));
  EXPECT_EQ(only.lines_total, kLines);
  EXPECT_EQ(only.lines_unrecognised, kLines);

  const ToolEvidence clean = c.parse(c.sample);
  const ToolEvidence mixed = c.parse(garbage + c.sample);
  EXPECT_EQ(mixed.lines_unrecognised, kLines);
  EXPECT_EQ(mixed.kinds, clean.kinds);
  ASSERT_EQ(mixed.devices.size(), clean.devices.size());
  for (std::size_t i = 0; i < clean.devices.size(); ++i) {
    EXPECT_EQ(mixed.devices[i].SerializeAsString(), clean.devices[i].SerializeAsString());
  }
  ASSERT_EQ(mixed.netdevs.size(), clean.netdevs.size());
  for (std::size_t i = 0; i < clean.netdevs.size(); ++i) {
    EXPECT_EQ(mixed.netdevs[i].SerializeAsString(), clean.netdevs[i].SerializeAsString());
  }
  EXPECT_EQ(mixed.sysfs_entries.size(), clean.sysfs_entries.size());
  EXPECT_EQ(mixed.driver_infos.size(), clean.driver_infos.size());
}

// Cut anywhere, the sample yields a subset of what the whole sample yields: no invented
// devices, netdevs or kinds.
TEST_P(ParserEdgeTable, TruncatedInputYieldsNoNamesTheWholeInputLacks) {
  const auto& c = GetParam();
  const ToolEvidence whole = c.parse(c.sample);
  std::set<std::string> names;
  for (const auto& d : whole.devices) names.insert("dev:" + d.name());
  for (const auto& n : whole.netdevs) names.insert("net:" + n.name());
  for (std::size_t cut = 0; cut < c.sample.size();
       cut += std::max<std::size_t>(1, c.sample.size() / 97)) {
    const ToolEvidence part = c.parse(std::string_view(c.sample).substr(0, cut));
    for (const auto& d : part.devices) {
      // A name cut mid-way is a prefix of a real one (e.g. "mlx5_" from "mlx5_1").
      const bool known = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
        return n.rfind("dev:" + d.name(), 0) == 0;
      });
      EXPECT_TRUE(known) << "cut " << cut << " invented device " << d.name();
    }
    for (const auto& n : part.netdevs) {
      const bool known = std::any_of(names.begin(), names.end(), [&](const std::string& m) {
        return m.rfind("net:" + n.name(), 0) == 0;
      });
      EXPECT_TRUE(known) << "cut " << cut << " invented netdev " << n.name();
    }
    for (const auto& k : part.kinds) {
      EXPECT_NE(std::find(whole.kinds.begin(), whole.kinds.end(), k), whole.kinds.end()) << k;
    }
    // At most the cut line, and a block opener the cut left on its own (a lone
    // "driver: X" is not enough to call ethtool -i).
    EXPECT_LE(part.lines_unrecognised, 2u) << "cut " << cut;
  }
}

// 50 MB of the sample repeated: entities merge by name or stop at their bound, every line
// is accounted for, and it runs in linear time (this test would time out otherwise).
TEST_P(ParserEdgeTable, HugeInputIsAccountedForAndBounded) {
  const auto& c = GetParam();
  const ToolEvidence one = c.parse(c.sample);
  std::string sample = c.sample;
  if (sample.back() != '\n') sample.push_back('\n');
  const std::size_t repeats = 50'000'000 / sample.size() + 1;
  std::string huge;
  huge.reserve(sample.size() * repeats);
  for (std::size_t i = 0; i < repeats; ++i) huge += sample;
  const ToolEvidence ev = c.parse(huge);
  EXPECT_EQ(ev.kinds, one.kinds);
  EXPECT_EQ(ev.lines_total, repeats * countLines(sample));
  EXPECT_EQ(ev.lines_unrecognised, 0u);
  EXPECT_EQ(ev.devices.size(), one.devices.size());
  EXPECT_EQ(ev.netdevs.size(), one.netdevs.size());
  EXPECT_EQ(ev.sysfs_entries.size(),
            std::min(kMaxToolSysfsEntries, repeats * one.sysfs_entries.size()));
  EXPECT_EQ(ev.driver_infos.size(),
            std::min(kMaxToolDriverInfos, repeats * one.driver_infos.size()));
  EXPECT_EQ(ev.tool_errors.size(), std::min(kMaxToolErrors, repeats * one.tool_errors.size()));
  const bool bounded = repeats * one.sysfs_entries.size() > kMaxToolSysfsEntries ||
                       repeats * one.driver_infos.size() > kMaxToolDriverInfos ||
                       repeats * one.tool_errors.size() > kMaxToolErrors;
  EXPECT_EQ(ev.truncated, bounded);
  // Merged devices hold exactly what one copy gave.
  for (std::size_t i = 0; i < one.devices.size(); ++i) {
    EXPECT_EQ(ev.devices[i].SerializeAsString(), one.devices[i].SerializeAsString());
  }
}

INSTANTIATE_TEST_SUITE_P(Parsers, ParserEdgeTable, ::testing::ValuesIn(parserCases()),
                         [](const ::testing::TestParamInfo<ParserCase>& p) {
                           return p.param.name;
                         });

TEST(ToolOutputRecogniser, HugeUnstructuredInputsAreCountedWithoutEvidence) {
  const std::string newlines(50'000'000, '\n');
  const ToolEvidence blank = parseToolOutput(newlines);
  EXPECT_EQ(blank.lines_total, 50'000'000u);
  EXPECT_EQ(blank.lines_unrecognised, 0u);

  std::string one_line(50'000'000, 'x');
  const ToolEvidence line = parseToolOutput(one_line);
  EXPECT_EQ(line.lines_total, 1u);
  EXPECT_EQ(line.lines_unrecognised, 1u);
}

TEST(ToolOutputRecogniser, HugeEthtoolBlockStopsAtItsBoundAndSaysSo) {
  std::string text = "$ ethtool -S eth0\nNIC statistics:\n";
  const std::size_t kLines = kMaxToolCounters + 1000;
  for (std::size_t i = 0; i < kLines; ++i) {
    text += "     rx_queue_" + std::to_string(i) + "_packets: " + std::to_string(i) + "\n";
  }
  const ToolEvidence ev = parseToolOutput(text);
  const v1::NetDevice* n = findNetdev(ev, "eth0");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(static_cast<std::size_t>(n->ethtool_size()), kMaxToolCounters);
  EXPECT_EQ(valueOf(n->ethtool(), "rx_queue_0_packets"), 0u);
  EXPECT_TRUE(ev.truncated);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(ToolOutputRecogniser, BinaryWithNulBytesAroundAToolBlockStillFindsIt) {
  std::string text(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0\n",
      11);
  text += "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tRate: 200\n";
  text += std::string("\0\0\0\xff\xfe\n", 6);
  const ToolEvidence ev = parseToolOutput(text);
  EXPECT_EQ(kindsOf(ev), "ibstat");
  EXPECT_EQ(findPort(findDevice(ev, "mlx5_0"), 1)->rate_gbps(), 200);
  EXPECT_EQ(ev.lines_unrecognised, 2u);
}

// Issue 10: pasted text comes quoted or marked up. Each markup below is applied to a real
// capture (the markup itself is synthetic); the evidence must equal the bare capture's.
std::string serialisedDevices(const ToolEvidence& e) {
  std::string out;
  for (const auto& d : e.devices) out += d.SerializeAsString();
  return out;
}

std::string eachLine(const std::string& text, const std::string& before, const std::string& after) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    const bool value = !line.empty() && line[0] != '#' && line.find(':') != std::string::npos;
    out += before + line + (value ? after : "") + "\n";
    pos = nl + 1;
  }
  return out;
}

TEST(ToolOutputMarkup, QuotedTaggedOrCommentedPasteGivesTheSameEvidence) {
  const std::string bare = ibc::test::readFixture(
      "real/ibtools/ibportstate-and-ibstat_mlx4-port1-down-disabled-port2-active56_rdma-core-pr-"
      "847.txt");
  const auto want = parseToolOutput(bare);
  ASSERT_FALSE(want.devices.empty());
  const std::vector<std::pair<std::string, std::string>> pastes = {
      {"markdown quote", eachLine(bare, "> ", "")},
      {"nested quote", eachLine(bare, "> > ", "")},
      {"html", "<pre><code>" + eachLine(bare, "", "<br>") + "</code></pre>\n"},
      {"fence", "```\n" + bare + "```\n"},
      {"comments", eachLine(bare, "", "   # as seen this morning")},
  };
  for (const auto& [name, text] : pastes) {
    const auto got = parseToolOutput(text);
    EXPECT_EQ(got.kinds, want.kinds) << name;
    EXPECT_EQ(serialisedDevices(got), serialisedDevices(want)) << name;
    EXPECT_EQ(got.lines_unrecognised, want.lines_unrecognised) << name;
  }
}

TEST(ToolOutputMarkup, UnwrapKeepsDataInBracketsAndToolHeaders) {
  EXPECT_EQ(unwrapPasteMarkup("2: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044\n"),
            "2: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044\n");
  EXPECT_EQ(unwrapPasteMarkup("2: ib0: &lt;BROADCAST,UP&gt; mtu 2044<br/>\n"),
            "2: ib0: <BROADCAST,UP> mtu 2044\n");
  EXPECT_EQ(unwrapPasteMarkup("# Port counters: Lid 1 port 1 (CapMask: 0x1400)\n"),
            "# Port counters: Lid 1 port 1 (CapMask: 0x1400)\n");
  EXPECT_EQ(unwrapPasteMarkup("symbol_error:12   # after reseat"), "symbol_error:12");
  EXPECT_EQ(unwrapPasteMarkup("> > State: Active\n"), "State: Active\n");
}

}  // namespace
}  // namespace ibc::core

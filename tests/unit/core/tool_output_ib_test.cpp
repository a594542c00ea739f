// Parsers for pasted infiniband-diags / libibverbs output: ibstat, ibstatus, ibv_devinfo,
// perfquery, ibportstate, ibdev2netdev. Real captures (tests/fixtures/real/ibtools, ground
// truth in its PROVENANCE.md) first; inputs no capture has are written inline below as
// clearly synthetic text in the format the tools print (rdma-core ibstat.c, the ibstatus
// script, libibverbs/examples/devinfo.c, libibmad field dumps).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "fixtures.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/tool_output.h"
#include "tool_evidence_lookup.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

using test::findCounter;
using test::findDevice;
using test::findNetdev;
using test::findPort;
using test::kindsOf;
using test::valueOf;

constexpr char kUcx[] =
    "real/ibtools/"
    "ibdev2netdev-and-ibv_devinfo_mixed-ib-roce-ib0-down-mlx5_0-port-down_ucx-issue-2534.txt";
constexpr char kPr847[] =
    "real/ibtools/"
    "ibportstate-and-ibstat_mlx4-port1-down-disabled-port2-active56_rdma-core-pr-847.txt";
constexpr char kExadata[] =
    "real/ibtools/ibportstate_switch-ports-down-disabled-qdr_exadata-issue-2.txt";
constexpr char kGpud[] =
    "real/ibtools/ibstat_partial-then-ibpanic-stat-mlx5_8-failed_gpud-pr-752.txt";
constexpr char kRoce[] = "real/ibtools/ibstat_roce-cx6dx-2port-active-rate100_l2fwd-nv-issue-6.txt";
constexpr char kIbstatusFatal[] =
    "real/ibtools/ibstatus_fatal-sys-files-not-found_trinity-issue-219.txt";
constexpr char kDevinfoPod[] =
    "real/ibtools/"
    "ibv_devinfo_pod-port-init-lid65535-zero-node-guid_network-operator-issue-1646.txt";
constexpr char kPerfZero[] =
    "real/ibtools/perfquery-x_all-zero-counters_infiniband-diags-issue-16.txt";
constexpr char kPerfWrapped[] =
    "real/ibtools/perfquery-x_traffic-no-errors-email-wrapped-header_netdata-issue-2620.txt";

// ---- ibstat ------------------------------------------------------------------------------

TEST(IbstatParser, RoceCaptureHasTwoActiveEthernetPortsAtRate100) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbstat, test::readFixture(kRoce));
  EXPECT_EQ(kindsOf(ev), "ibstat");
  ASSERT_EQ(ev.devices.size(), 2u);
  for (const char* name : {"mlx5_0", "mlx5_1"}) {
    const v1::RdmaDevice* dev = findDevice(ev, name);
    ASSERT_NE(dev, nullptr) << name;
    EXPECT_EQ(dev->hca_type(), "MT4125");
    EXPECT_EQ(dev->fw_ver(), "22.32.2004");
    EXPECT_EQ(dev->node_type(), "CA");
    EXPECT_EQ(dev->seen_in(), "ibstat");
    ASSERT_EQ(dev->ports_size(), 1);
    const v1::RdmaPort& p = dev->ports(0);
    EXPECT_EQ(p.port(), 1u);
    EXPECT_EQ(p.state().code(), -1);
    EXPECT_EQ(p.state().name(), "Active");
    EXPECT_EQ(p.state().raw(), "Active");
    EXPECT_EQ(p.phys_state().name(), "LinkUp");
    EXPECT_EQ(portStateOf(p.state()), PortState::Active);
    EXPECT_EQ(physStateOf(p.phys_state()), PhysState::LinkUp);
    EXPECT_EQ(p.rate_raw(), "100");
    EXPECT_EQ(p.rate_gbps(), 100);
    EXPECT_EQ(p.link_layer(), "Ethernet");
    ASSERT_TRUE(p.has_lid());
    EXPECT_EQ(p.lid(), 0u);
    ASSERT_TRUE(p.has_sm_lid());
    EXPECT_EQ(p.sm_lid(), 0u);
  }
  const v1::RdmaDevice* mlx5_1 = findDevice(ev, "mlx5_1");
  EXPECT_EQ(mlx5_1->node_guid(), "0x0c42a103001dd12b");
  EXPECT_EQ(mlx5_1->sys_image_guid(), "0x0c42a103001dd12a");
  EXPECT_EQ(mlx5_1->ports(0).port_guid(), "0x0e42a1fffe1dd12b");
  EXPECT_EQ(ev.lines_total, 34u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
  ASSERT_EQ(ev.spans.size(), 1u);
  EXPECT_EQ(ev.spans[0].first_line, 1u);
  EXPECT_EQ(ev.spans[0].last_line, 34u);
}

TEST(IbstatParser, Mlx4Port1IsDownDisabledAtRate10AndPort2ActiveAt56) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbstat, test::readFixture(kPr847));
  const v1::RdmaDevice* dev = findDevice(ev, "mlx4_0");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->hca_type(), "MT4099");
  EXPECT_EQ(dev->fw_ver(), "2.42.5000");
  EXPECT_EQ(dev->node_guid(), "0xf4521403007be0e0");
  const v1::RdmaPort* p1 = findPort(dev, 1);
  ASSERT_NE(p1, nullptr);
  EXPECT_EQ(portStateOf(p1->state()), PortState::Down);
  EXPECT_EQ(physStateOf(p1->phys_state()), PhysState::Disabled);
  EXPECT_EQ(p1->rate_gbps(), 10);
  EXPECT_EQ(p1->lid(), 38u);
  EXPECT_EQ(p1->sm_lid(), 13u);
  EXPECT_EQ(p1->link_layer(), "InfiniBand");
  const v1::RdmaPort* p2 = findPort(dev, 2);
  ASSERT_NE(p2, nullptr);
  EXPECT_EQ(portStateOf(p2->state()), PortState::Active);
  EXPECT_EQ(physStateOf(p2->phys_state()), PhysState::LinkUp);
  EXPECT_EQ(p2->rate_gbps(), 56);
  EXPECT_FALSE(p2->has_lid());  // the excerpt ends after "Rate: 56"
  // The 15 ibportstate PortInfo lines are not ibstat's; ibwarn and `+ cmd` lines are noise.
  EXPECT_EQ(ev.lines_unrecognised, 15u);
  EXPECT_EQ(ev.lines_total, 43u);
  EXPECT_TRUE(ev.tool_errors.empty());
}

TEST(IbstatParser, IbpanicStatFailureMarksTheDeviceMissingAndKeepsTheHealthyOne) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbstat, test::readFixture(kGpud));
  ASSERT_EQ(ev.devices.size(), 2u);
  const v1::RdmaDevice* healthy = findDevice(ev, "mlx5_7");
  ASSERT_NE(healthy, nullptr);
  EXPECT_TRUE(healthy->missing_reason().empty());
  const v1::RdmaPort* p = findPort(healthy, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(portStateOf(p->state()), PortState::Active);
  EXPECT_EQ(physStateOf(p->phys_state()), PhysState::LinkUp);
  EXPECT_EQ(p->rate_gbps(), 200);
  EXPECT_EQ(p->lid(), 13305u);
  EXPECT_EQ(p->sm_lid(), 1u);
  EXPECT_EQ(healthy->fw_ver(), "...");  // redacted by the poster, kept as found
  const std::string panic =
      "ibpanic: [1323906] main: stat of IB device 'mlx5_8' failed: No such file or directory";
  const v1::RdmaDevice* missing = findDevice(ev, "mlx5_8");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->missing_reason(), panic);
  EXPECT_EQ(missing->ports_size(), 0);
  ASSERT_EQ(ev.tool_errors.size(), 1u);
  EXPECT_EQ(ev.tool_errors[0], panic);
  EXPECT_FALSE(ev.no_rdma_devices);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(IbstatParser, SinglePortFormPrintsFieldsWithoutIndentation) {
  // Synthetic: `ibstat mlx5_2 1` prints "CA: 'name'" and an unindented port dump (ibstat.c
  // port_dump(..., alone=1)); "Rate: 2.5" is how 1X SDR is printed.
  const ToolEvidence ev = parseToolOutputAs(kKindIbstat,
                                            "CA: 'mlx5_2'\n"
                                            "Port 1:\n"
                                            "State: Armed\n"
                                            "Physical state: LinkUp\n"
                                            "Rate: 2.5\n"
                                            "Base lid: 12\n"
                                            "LMC: 0\n"
                                            "SM lid: 1\n"
                                            "Capability mask: 0x2651e848\n"
                                            "Port GUID: 0x0002c90300a1b2c5\n"
                                            "Link layer: InfiniBand\n");
  const v1::RdmaPort* p = findPort(findDevice(ev, "mlx5_2"), 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(portStateOf(p->state()), PortState::Armed);
  EXPECT_EQ(p->rate_gbps(), 2.5);
  EXPECT_EQ(p->lid(), 12u);
  EXPECT_EQ(p->port_guid(), "0x0002c90300a1b2c5");
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(IbstatParser, Fdr10RateKeepsItsSpeedName) {
  // Synthetic: ibstat prints "Rate: 40 (FDR10)" for FDR10 links.
  const ToolEvidence ev = parseToolOutputAs(
      kKindIbstat,
      "CA 'mlx4_1'\n\tCA type: MT4099\n\tPort 1:\n\t\tState: Active\n\t\tRate: 40 (FDR10)\n");
  const v1::RdmaPort* p = findPort(findDevice(ev, "mlx4_1"), 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->rate_raw(), "40 (FDR10)");
  EXPECT_EQ(p->rate_gbps(), 40);
  EXPECT_EQ(p->speed_name(), "FDR10");
}

TEST(IbstatParser, CannotListDeviceNamesMeansNoRdmaDevices) {
  const ToolEvidence ev =
      parseToolOutputAs(kKindIbstat, "ibpanic: [4242] main: can't list IB device names\n");
  EXPECT_TRUE(ev.no_rdma_devices);
  EXPECT_TRUE(ev.devices.empty());
  ASSERT_EQ(ev.tool_errors.size(), 1u);
  EXPECT_EQ(kindsOf(ev), "ibstat");
}

// ---- ibstatus ----------------------------------------------------------------------------

TEST(IbstatusParser, SysFilesNotFoundForAllDevicesMeansNoRdmaDevices) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbstatus, test::readFixture(kIbstatusFatal));
  EXPECT_TRUE(ev.no_rdma_devices);
  EXPECT_TRUE(ev.devices.empty());
  ASSERT_EQ(ev.tool_errors.size(), 1u);
  EXPECT_EQ(ev.tool_errors[0],
            "Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)");
  EXPECT_EQ(kindsOf(ev), "ibstatus");
  EXPECT_EQ(ev.lines_total, 2u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);  // the `[root@node045 ~]# ibstatus` prompt is noise
}

TEST(IbstatusParser, SysFilesNotFoundForOneDeviceMarksItMissing) {
  const ToolEvidence ev = parseToolOutputAs(
      kKindIbstatus,
      "Fatal error:  device 'mlx5_3': sys files not found (/sys/class/infiniband/mlx5_3/ports)\n");
  EXPECT_FALSE(ev.no_rdma_devices);
  const v1::RdmaDevice* dev = findDevice(ev, "mlx5_3");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->missing_reason(), ev.tool_errors.at(0));
}

// Synthetic, in the script's echo format ("\tstate:\t\t 4: ACTIVE"): no healthy ibstatus
// capture with clear provenance exists (ibtools/PROVENANCE.md "Gaps").
constexpr char kIbstatusHealthy[] =
    "Infiniband device 'mlx4_0' port 1 status:\n"
    "\tdefault gid:\t fe80:0000:0000:0000:0002:c903:0010:1b75\n"
    "\tbase lid:\t 0x5\n"
    "\tsm lid:\t\t 0x1\n"
    "\tstate:\t\t 4: ACTIVE\n"
    "\tphys state:\t 5: LinkUp\n"
    "\trate:\t\t 40 Gb/sec (4X QDR)\n"
    "\tlink_layer:\t InfiniBand\n"
    "\n"
    "Infiniband device 'mlx4_0' port 2 status:\n"
    "\tdefault gid:\t unknown\n"
    "\tbase lid:\t 0x0\n"
    "\tsm lid:\t\t 0x0\n"
    "\tstate:\t\t 1: DOWN\n"
    "\tphys state:\t 2: Polling\n"
    "\trate:\t\t 10 Gb/sec (4X)\n"
    "\tlink_layer:\t InfiniBand\n"
    "\n";

TEST(IbstatusParser, HealthyOutputGivesNumberedStatesRatesAndLids) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbstatus, kIbstatusHealthy);
  const v1::RdmaDevice* dev = findDevice(ev, "mlx4_0");
  ASSERT_NE(dev, nullptr);
  ASSERT_EQ(dev->ports_size(), 2);
  const v1::RdmaPort* p1 = findPort(dev, 1);
  EXPECT_EQ(p1->state().code(), 4);
  EXPECT_EQ(p1->state().name(), "ACTIVE");
  EXPECT_EQ(p1->state().raw(), "4: ACTIVE");
  EXPECT_EQ(p1->phys_state().code(), 5);
  EXPECT_EQ(physStateOf(p1->phys_state()), PhysState::LinkUp);
  EXPECT_EQ(p1->rate_raw(), "40 Gb/sec (4X QDR)");
  EXPECT_EQ(p1->rate_gbps(), 40);
  EXPECT_EQ(p1->width_lanes(), 4u);
  EXPECT_EQ(p1->speed_name(), "QDR");
  EXPECT_EQ(p1->lid(), 5u);
  EXPECT_EQ(p1->lid_raw(), "0x5");
  EXPECT_EQ(p1->sm_lid(), 1u);
  ASSERT_EQ(p1->gids_size(), 1);
  EXPECT_EQ(p1->gids(0), "fe80:0000:0000:0000:0002:c903:0010:1b75");
  const v1::RdmaPort* p2 = findPort(dev, 2);
  EXPECT_EQ(portStateOf(p2->state()), PortState::Down);
  EXPECT_EQ(physStateOf(p2->phys_state()), PhysState::Polling);
  EXPECT_EQ(p2->gids_size(), 0);  // "unknown" is the script's placeholder, not a GID
  EXPECT_EQ(p2->rate_gbps(), 10);
  EXPECT_TRUE(p2->speed_name().empty());
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

// ---- ibv_devinfo -------------------------------------------------------------------------

TEST(IbvDevinfoParser, PodCaptureIsAVirtualFunctionStuckInInitWithoutLid) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbvDevinfo, test::readFixture(kDevinfoPod));
  EXPECT_EQ(kindsOf(ev), "ibv_devinfo");
  const v1::RdmaDevice* dev = findDevice(ev, "mlx5_7");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->fw_ver(), "28.39.3004");
  EXPECT_EQ(dev->board_id(), "MT_0000000838");
  EXPECT_EQ(dev->node_guid(), "0000:0000:0000:0000");
  EXPECT_TRUE(isZeroGuid(dev->node_guid()));
  EXPECT_EQ(dev->sys_image_guid(), "a088::c203:005b:370c");
  EXPECT_EQ(dev->pci().vendor_id(), "0x02c9");
  EXPECT_EQ(dev->pci().device_id(), "0x101e");
  EXPECT_TRUE(dev->pci().is_virtual_function());
  EXPECT_TRUE(dev->is_virtual_function());
  EXPECT_THAT(dev->virtual_function_evidence(), HasSubstr("4126"));
  EXPECT_THAT(dev->pci().virtual_function_evidence(), HasSubstr("0x101e"));
  const v1::RdmaPort* p = findPort(dev, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->state().code(), 2);
  EXPECT_EQ(p->state().name(), "PORT_INIT");
  EXPECT_EQ(p->state().raw(), "PORT_INIT (2)");
  EXPECT_EQ(portStateOf(p->state()), PortState::Init);
  EXPECT_EQ(p->lid(), 65535u);  // printed as "port_id" in this paste
  EXPECT_EQ(p->lid_raw(), "65535");
  EXPECT_EQ(p->sm_lid(), 4u);
  EXPECT_EQ(p->active_mtu(), 4096u);
  EXPECT_EQ(p->link_layer(), "InfiniBand");
  EXPECT_EQ(ev.lines_unrecognised, 0u);  // prompt line with its odd backslash is noise
}

TEST(IbvDevinfoParser, UcxCaptureHasOneActiveIbPortAndTwoDownPorts) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbvDevinfo, test::readFixture(kUcx));
  ASSERT_EQ(ev.devices.size(), 3u);
  const v1::RdmaDevice* mlx5_1 = findDevice(ev, "mlx5_1");
  ASSERT_NE(mlx5_1, nullptr);
  EXPECT_EQ(mlx5_1->fw_ver(), "12.20.1010");
  EXPECT_EQ(mlx5_1->pci().device_id(), "0x1013");  // 4115 = ConnectX-4, a PF id
  EXPECT_FALSE(mlx5_1->is_virtual_function());
  const v1::RdmaPort* p = findPort(mlx5_1, 1);
  EXPECT_EQ(portStateOf(p->state()), PortState::Active);
  EXPECT_EQ(p->lid(), 2u);
  EXPECT_EQ(p->sm_lid(), 1u);
  EXPECT_EQ(p->link_layer(), "InfiniBand");
  const v1::RdmaDevice* mlx5_3 = findDevice(ev, "mlx5_3");
  ASSERT_NE(mlx5_3, nullptr);
  EXPECT_EQ(mlx5_3->fw_ver(), "14.17.1010");
  EXPECT_EQ(mlx5_3->board_id(), "PEG0000000001");
  EXPECT_EQ(mlx5_3->pci().device_id(), "0x1015");
  EXPECT_EQ(portStateOf(findPort(mlx5_3, 1)->state()), PortState::Down);
  EXPECT_EQ(findPort(mlx5_3, 1)->active_mtu(), 1024u);
  EXPECT_EQ(findPort(mlx5_3, 1)->link_layer(), "Ethernet");
  // The excerpt ends inside mlx5_0's port block: the state is there, nothing else.
  const v1::RdmaPort* cut = findPort(findDevice(ev, "mlx5_0"), 1);
  ASSERT_NE(cut, nullptr);
  EXPECT_EQ(portStateOf(cut->state()), PortState::Down);
  EXPECT_FALSE(cut->has_lid());
  EXPECT_TRUE(cut->link_layer().empty());
  // Only the four ibdev2netdev lines are not ibv_devinfo's ("$ ..." prompts are noise).
  EXPECT_EQ(ev.lines_unrecognised, 4u);
}

// Synthetic `ibv_devinfo -v` (no capture exists): printf formats of devinfo.c, tabs.
constexpr char kDevinfoVerbose[] =
    "hca_id:\tmlx5_0\n"
    "\ttransport:\t\t\tInfiniBand (0)\n"
    "\tfw_ver:\t\t\t\t20.31.1014\n"
    "\tnode_guid:\t\t\tb8ce:f603:00a1:b2c4\n"
    "\tsys_image_guid:\t\t\tb8ce:f603:00a1:b2c4\n"
    "\tvendor_id:\t\t\t0x02c9\n"
    "\tvendor_part_id:\t\t\t4123\n"
    "\thw_ver:\t\t\t\t0x0\n"
    "\tboard_id:\t\t\tMT_0000000223\n"
    "\tphys_port_cnt:\t\t\t2\n"
    "\tmax_mr_size:\t\t\t0xffffffffffffffff\n"
    "\tdevice_cap_flags:\t\t0xed721c36\n"
    "\t\t\t\t\tBAD_PKEY_CNTR\n"
    "\t\t\t\t\tBAD_QKEY_CNTR\n"
    "\tgeneral_odp_caps:\n"
    "\t\t\t\t\tODP_SUPPORT\n"
    "\n"
    "\tcq moderation caps:\n"
    "\t\tmax_cq_count:\t65535\n"
    "\t\tmax_cq_period:\t4095 us\n"
    "\n"
    "\t\tport:\t1\n"
    "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
    "\t\t\tmax_mtu:\t\t4096 (5)\n"
    "\t\t\tactive_mtu:\t\t4096 (5)\n"
    "\t\t\tsm_lid:\t\t\t1\n"
    "\t\t\tport_lid:\t\t7\n"
    "\t\t\tport_lmc:\t\t0x00\n"
    "\t\t\tlink_layer:\t\tInfiniBand\n"
    "\t\t\tmax_msg_sz:\t\t0x40000000\n"
    "\t\t\tactive_width:\t\t4X (2)\n"
    "\t\t\tactive_speed:\t\t50.0 Gbps (64)\n"
    "\t\t\tphys_state:\t\tLINK_UP (5)\n"
    "\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:b8ce:f603:00a1:b2c4\n"
    "\t\t\tGID[  1]:\t\t0000:0000:0000:0000:0000:0000:0000:0000\n"
    "\n"
    "\t\tport:\t2\n"
    "\t\t\tstate:\t\t\tPORT_DOWN (1)\n"
    "\t\t\tactive_width:\t\t4X (2)\n"
    "\t\t\tactive_speed:\t\t14.0 Gbps (16)\n"
    "\t\t\tphys_state:\t\tDISABLED (3)\n"
    "\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:b8ce:f603:00a1:b2c5, RoCE v2\n"
    "\n";

TEST(IbvDevinfoParser, VerboseOutputGivesRateFromWidthTimesLaneSpeedAndNonZeroGids) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbvDevinfo, kDevinfoVerbose);
  const v1::RdmaDevice* dev = findDevice(ev, "mlx5_0");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->pci().device_id(), "0x101b");  // 4123 = ConnectX-6, a PF
  EXPECT_FALSE(dev->is_virtual_function());
  ASSERT_EQ(dev->ports_size(), 2);
  const v1::RdmaPort* p1 = findPort(dev, 1);
  EXPECT_EQ(p1->phys_state().code(), 5);
  EXPECT_EQ(p1->phys_state().name(), "LINK_UP");
  EXPECT_EQ(physStateOf(p1->phys_state()), PhysState::LinkUp);
  EXPECT_EQ(p1->width_lanes(), 4u);
  EXPECT_EQ(p1->rate_gbps(), 200);
  EXPECT_EQ(p1->speed_name(), "HDR");
  EXPECT_EQ(p1->lid(), 7u);
  ASSERT_EQ(p1->gids_size(), 1);  // the all-zero GID[1] is skipped
  EXPECT_EQ(p1->gids(0), "fe80:0000:0000:0000:b8ce:f603:00a1:b2c4");
  const v1::RdmaPort* p2 = findPort(dev, 2);
  EXPECT_EQ(physStateOf(p2->phys_state()), PhysState::Disabled);
  EXPECT_EQ(p2->rate_gbps(), 56);  // 4 x FDR "14.0 Gbps", as the kernel reports it
  EXPECT_EQ(p2->speed_name(), "FDR");
  ASSERT_EQ(p2->gids_size(), 1);
  EXPECT_EQ(p2->gids(0), "fe80:0000:0000:0000:b8ce:f603:00a1:b2c5");  // ", RoCE v2" dropped
  EXPECT_EQ(ev.lines_unrecognised, 0u);
  ASSERT_EQ(ev.spans.size(), 1u);
  EXPECT_EQ(ev.spans[0].last_line, 42u);  // the trailing blank line is not the block's
}

TEST(IbvDevinfoParser, FlattenedPasteWithoutIndentationIsStillParsed) {
  const ToolEvidence ev = parseToolOutputAs(
      kKindIbvDevinfo,
      "hca_id: mlx5_4\ntransport: InfiniBand (0)\nfw_ver: 28.39.3004\nvendor_part_id: 4124\n"
      "port: 1\nstate: PORT_ARMED (3)\nport_lid: 9\n");
  const v1::RdmaDevice* dev = findDevice(ev, "mlx5_4");
  ASSERT_NE(dev, nullptr);
  EXPECT_TRUE(dev->is_virtual_function());  // 4124 = 0x101c, ConnectX-6 VF
  EXPECT_EQ(portStateOf(findPort(dev, 1)->state()), PortState::Armed);
  EXPECT_EQ(findPort(dev, 1)->lid(), 9u);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
}

TEST(IbvDevinfoParser, NoDevicesAndListingsAreUnderstood) {
  const ToolEvidence none =
      parseToolOutputAs(kKindIbvDevinfo, "$ ibv_devinfo\nNo IB devices found\n");
  EXPECT_TRUE(none.no_rdma_devices);
  EXPECT_EQ(none.tool_errors, std::vector<std::string>{"No IB devices found"});
  EXPECT_EQ(kindsOf(none), "ibv_devinfo");

  const ToolEvidence zero = parseToolOutputAs(kKindIbvDevinfo, "0 HCAs found:\n\n");
  EXPECT_TRUE(zero.no_rdma_devices);

  const ToolEvidence listed =
      parseToolOutputAs(kKindIbvDevinfo, "2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n\n");
  EXPECT_FALSE(listed.no_rdma_devices);
  ASSERT_EQ(listed.devices.size(), 2u);
  EXPECT_EQ(listed.devices[1].name(), "mlx5_1");

  const ToolEvidence missing =
      parseToolOutputAs(kKindIbvDevinfo, "IB device 'mlx5_9' wasn't found\n");
  const v1::RdmaDevice* dev = findDevice(missing, "mlx5_9");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->missing_reason(), "IB device 'mlx5_9' wasn't found");
  EXPECT_FALSE(missing.no_rdma_devices);
}

// ---- perfquery ---------------------------------------------------------------------------

TEST(PerfqueryParser, WrappedExtendedHeaderStillGivesLidPortAnd64BitDataCounters) {
  const ToolEvidence ev = parseToolOutputAs(kKindPerfquery, test::readFixture(kPerfWrapped));
  EXPECT_EQ(kindsOf(ev), "perfquery");
  const v1::RdmaPort* p = findPort(findDevice(ev, "lid:21"), 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->counters_size(), 19);
  EXPECT_EQ(valueOf(p->counters(), "port_xmit_data"), 13672645927u);
  EXPECT_EQ(valueOf(p->counters(), "port_rcv_data"), 2341975277576u);
  EXPECT_EQ(valueOf(p->counters(), "port_xmit_packets"), 1352112415u);
  EXPECT_EQ(valueOf(p->counters(), "port_rcv_packets"), 2467501178u);
  EXPECT_EQ(valueOf(p->counters(), "unicast_xmit_packets"), 1352112493u);
  EXPECT_EQ(valueOf(p->counters(), "unicast_rcv_packets"), 2467494386u);
  EXPECT_EQ(valueOf(p->counters(), "multicast_xmit_packets"), 40u);
  EXPECT_EQ(valueOf(p->counters(), "multicast_rcv_packets"), 6779u);
  EXPECT_EQ(valueOf(p->counters(), "symbol_error"), 0u);
  EXPECT_EQ(valueOf(p->counters(), "excessive_buffer_overrun_errors"), 0u);
  for (const char* name : {"port_xmit_data", "unicast_rcv_packets", "multicast_rcv_packets"}) {
    EXPECT_EQ(findCounter(p->counters(), name)->width_bits(), 64u) << name;
  }
  EXPECT_EQ(findCounter(p->counters(), "symbol_error")->width_bits(), 16u);
  EXPECT_EQ(findCounter(p->counters(), "link_downed")->width_bits(), 8u);
  EXPECT_EQ(findCounter(p->counters(), "local_link_integrity_errors")->width_bits(), 4u);
  // Selectors are not counters.
  EXPECT_EQ(findCounter(p->counters(), "port_select"), nullptr);
  EXPECT_EQ(findCounter(p->counters(), "counter_select"), nullptr);
  EXPECT_EQ(findCounter(p->counters(), "counter_select2"), nullptr);
  EXPECT_EQ(ev.lines_unrecognised, 0u);
  ASSERT_EQ(ev.spans.size(), 1u);
  EXPECT_EQ(ev.spans[0].last_line, 24u);
}

TEST(PerfqueryParser, AllZeroCaptureHasEveryCounterZeroIncludingUnmappedQp1Dropped) {
  const ToolEvidence ev = parseToolOutputAs(kKindPerfquery, test::readFixture(kPerfZero));
  const v1::RdmaPort* p = findPort(findDevice(ev, "lid:10"), 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->counters_size(), 22);
  for (const auto& c : p->counters()) {
    EXPECT_TRUE(c.unavailable_reason().empty()) << c.name();
    EXPECT_EQ(c.value(), 0u) << c.name();
  }
  EXPECT_EQ(valueOf(p->counters(), "qp1_dropped"), 0u);
  EXPECT_EQ(findCounter(p->counters(), "VL15_dropped")->width_bits(), 16u);
  EXPECT_EQ(findCounter(p->counters(), "port_xmit_wait")->width_bits(), 32u);
}

TEST(PerfqueryParser, LegacyBlockHas32BitDataCountersSoSaturationShows) {
  // Synthetic `perfquery 5 2` (PortCounters, no -x), libibmad "Name:....value" layout.
  const ToolEvidence ev = parseToolOutputAs(kKindPerfquery,
                                            "# Port counters: Lid 5 port 2 (CapMask: 0x1600)\n"
                                            "PortSelect:......................2\n"
                                            "CounterSelect:...................0x1b01\n"
                                            "SymbolErrorCounter:..............65535\n"
                                            "LinkErrorRecoveryCounter:........255\n"
                                            "LinkDownedCounter:...............3\n"
                                            "PortXmitData:....................4294967295\n"
                                            "PortRcvData:.....................1000\n"
                                            "PortXmitPkts:....................10\n"
                                            "PortRcvPkts:.....................20\n"
                                            "PortXmitWait:....................77\n");
  const v1::RdmaPort* p = findPort(findDevice(ev, "lid:5"), 2);
  ASSERT_NE(p, nullptr);
  const v1::Counter* data = findCounter(p->counters(), "port_xmit_data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->width_bits(), 32u);
  EXPECT_TRUE(isSaturated(data->value(), data->width_bits()));
  const v1::Counter* symbol = findCounter(p->counters(), "symbol_error");
  EXPECT_TRUE(isSaturated(symbol->value(), symbol->width_bits()));
  const v1::Counter* recovery = findCounter(p->counters(), "link_error_recovery");
  EXPECT_TRUE(isSaturated(recovery->value(), recovery->width_bits()));
  EXPECT_EQ(valueOf(p->counters(), "link_downed"), 3u);
  EXPECT_EQ(valueOf(p->counters(), "port_xmit_wait"), 77u);
}

struct PerfNameCase {
  std::string tool;
  std::string sysfs;
};

void PrintTo(const PerfNameCase& c, std::ostream* os) { *os << c.tool; }

class PerfqueryNameTable : public ::testing::TestWithParam<PerfNameCase> {};

TEST_P(PerfqueryNameTable, CounterGetsTheKernelSysfsName) {
  const auto& c = GetParam();
  std::string field = c.tool + ":";
  field.resize(std::max<std::size_t>(field.size() + 1, 33), '.');
  const ToolEvidence ev =
      parseToolOutputAs(kKindPerfquery, "# Port counters: Lid 1 port 1\n" + field + "7\n");
  const v1::RdmaPort* p = findPort(findDevice(ev, "lid:1"), 1);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->counters_size(), 1);
  EXPECT_EQ(p->counters(0).name(), c.sysfs);
  EXPECT_EQ(p->counters(0).value(), 7u);
}

INSTANTIATE_TEST_SUITE_P(
    Names, PerfqueryNameTable,
    ::testing::Values(
        PerfNameCase{"PortXmitData", "port_xmit_data"},
        PerfNameCase{"PortRcvData", "port_rcv_data"},
        PerfNameCase{"PortXmitPkts", "port_xmit_packets"},
        PerfNameCase{"PortRcvPkts", "port_rcv_packets"},
        PerfNameCase{"PortUnicastXmitPkts", "unicast_xmit_packets"},
        PerfNameCase{"PortUnicastRcvPkts", "unicast_rcv_packets"},
        PerfNameCase{"PortMulticastXmitPkts", "multicast_xmit_packets"},
        PerfNameCase{"PortMulticastRcvPkts", "multicast_rcv_packets"},
        PerfNameCase{"SymbolErrorCounter", "symbol_error"},
        PerfNameCase{"LinkErrorRecoveryCounter", "link_error_recovery"},
        PerfNameCase{"LinkDownedCounter", "link_downed"},
        PerfNameCase{"PortRcvErrors", "port_rcv_errors"},
        PerfNameCase{"PortRcvRemotePhysicalErrors", "port_rcv_remote_physical_errors"},
        PerfNameCase{"PortRcvSwitchRelayErrors", "port_rcv_switch_relay_errors"},
        PerfNameCase{"PortXmitDiscards", "port_xmit_discards"},
        PerfNameCase{"PortXmitConstraintErrors", "port_xmit_constraint_errors"},
        PerfNameCase{"PortRcvConstraintErrors", "port_rcv_constraint_errors"},
        PerfNameCase{"LocalLinkIntegrityErrors", "local_link_integrity_errors"},
        PerfNameCase{"ExcessiveBufferOverrunErrors", "excessive_buffer_overrun_errors"},
        PerfNameCase{"VL15Dropped", "VL15_dropped"}, PerfNameCase{"PortXmitWait", "port_xmit_wait"},
        PerfNameCase{"QP1Dropped", "qp1_dropped"},
        PerfNameCase{"PortLocalPhysicalErrors", "port_local_physical_errors"}));

// ---- ibportstate -------------------------------------------------------------------------

TEST(IbportstateParser, SwitchPorts24To26AreDownDisabled) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbportstate, test::readFixture(kExadata));
  EXPECT_EQ(kindsOf(ev), "ibportstate");
  const v1::RdmaDevice* sw = findDevice(ev, "lid:2");
  ASSERT_NE(sw, nullptr);
  ASSERT_EQ(sw->ports_size(), 3);
  for (uint32_t number : {24u, 25u, 26u}) {
    const v1::RdmaPort* p = findPort(sw, number);
    ASSERT_NE(p, nullptr) << number;
    EXPECT_EQ(p->state().raw(), "Down");
    EXPECT_EQ(p->phys_state().raw(), "Disabled");
    EXPECT_EQ(portStateOf(p->state()), PortState::Down);
    EXPECT_EQ(physStateOf(p->phys_state()), PhysState::Disabled);
    EXPECT_EQ(p->width_lanes(), 4u);
    EXPECT_EQ(p->rate_gbps(), 10);  // 4X at 2.5 Gb/s while down
  }
  EXPECT_EQ(ev.lines_unrecognised, 0u);  // prompts are noise, "PortInfo:" is ibportstate's
  ASSERT_EQ(ev.spans.size(), 1u);
}

TEST(IbportstateParser, BarePortInfoDumpWithExtendedSpeedIsFdr56) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbportstate, test::readFixture(kPr847));
  const v1::RdmaDevice* dev = findDevice(ev, "lid:38");
  ASSERT_NE(dev, nullptr);
  const v1::RdmaPort* p = findPort(dev, 0);  // the dump does not say which port
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->lid(), 38u);
  EXPECT_EQ(p->sm_lid(), 13u);
  EXPECT_EQ(p->width_lanes(), 4u);
  EXPECT_EQ(p->rate_gbps(), 56);  // 4 x 14.0625 Gb/s, reported like the kernel
  EXPECT_EQ(p->speed_name(), "FDR");
  EXPECT_EQ(p->rate_raw(), "LinkWidthActive 4X, LinkSpeedExtActive 14.0625 Gbps");
  EXPECT_EQ(ev.lines_unrecognised, 21u);  // the ibstat block
}

struct LaneCase {
  std::string speed_ext;
  double gbps;
  std::string name;
};

void PrintTo(const LaneCase& c, std::ostream* os) { *os << c.speed_ext; }

class IbportstateLaneTable : public ::testing::TestWithParam<LaneCase> {};

TEST_P(IbportstateLaneTable, ExtendedLaneSpeedMapsToTheKernelRate) {
  const auto& c = GetParam();
  // Synthetic bare PortInfo dump that names its port (LocalPort).
  const ToolEvidence ev = parseToolOutputAs(kKindIbportstate,
                                            "Lid:.............................7\n"
                                            "SMLid:...........................1\n"
                                            "LocalPort:.......................1\n"
                                            "LinkState:.......................Active\n"
                                            "PhysLinkState:...................LinkUp\n"
                                            "LinkWidthActive:.................4X\n"
                                            "LinkSpeedActive:.................Extended speed\n"
                                            "LinkSpeedExtActive:.............." +
                                                c.speed_ext + "\n");
  const v1::RdmaPort* p = findPort(findDevice(ev, "lid:7"), 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->rate_gbps(), c.gbps);
  EXPECT_EQ(p->speed_name(), c.name);
  EXPECT_EQ(portStateOf(p->state()), PortState::Active);
}

INSTANTIATE_TEST_SUITE_P(Speeds, IbportstateLaneTable,
                         ::testing::Values(LaneCase{"14.0625 Gbps", 56, "FDR"},
                                           LaneCase{"25.78125 Gbps", 100, "EDR"},
                                           LaneCase{"53.125 Gbps", 200, "HDR"},
                                           LaneCase{"106.25 Gbps", 400, "NDR"},
                                           LaneCase{"10.3125 Gbps", 40, "FDR10"}));

// ---- ibdev2netdev ------------------------------------------------------------------------

TEST(Ibdev2netdevParser, BindsEachNetdevToItsDevicePortWithOperstate) {
  const ToolEvidence ev = parseToolOutputAs(kKindIbdev2netdev, test::readFixture(kUcx));
  EXPECT_EQ(kindsOf(ev), "ibdev2netdev");
  struct Binding {
    const char* device;
    const char* netdev;
    const char* operstate;
  };
  for (const Binding& b :
       {Binding{"mlx5_0", "ib0", "down"}, Binding{"mlx5_1", "ib1", "up"},
        Binding{"mlx5_2", "enp23s0f0", "up"}, Binding{"mlx5_3", "enp23s0f1", "down"}}) {
    const v1::RdmaPort* p = findPort(findDevice(ev, b.device), 1);
    ASSERT_NE(p, nullptr) << b.device;
    ASSERT_EQ(p->netdevs_size(), 1);
    EXPECT_EQ(p->netdevs(0), b.netdev);
    const v1::NetDevice* n = findNetdev(ev, b.netdev);
    ASSERT_NE(n, nullptr) << b.netdev;
    EXPECT_EQ(n->rdma_device(), b.device);
    EXPECT_EQ(n->rdma_port(), 1u);
    EXPECT_EQ(n->operstate(), b.operstate);
  }
  ASSERT_FALSE(ev.spans.empty());
  EXPECT_EQ(ev.spans[0].first_line, 2u);
  EXPECT_EQ(ev.spans[0].last_line, 5u);
}

TEST(Ibdev2netdevParser, VerboseLineAddsPciAddressFirmwareAndPortState) {
  // Synthetic `ibdev2netdev -v` line (MLNX_OFED script format).
  const ToolEvidence ev = parseToolOutputAs(
      kKindIbdev2netdev,
      "0000:0c:00.0 mlx5_0 (MT4123 - MT1911X00000) ConnectX-6 VPI adapter card fw 20.31.1014 "
      "port 1 (ACTIVE) ==> ib0 (Up)\n");
  const v1::RdmaDevice* dev = findDevice(ev, "mlx5_0");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->pci().address(), "0000:0c:00.0");
  EXPECT_EQ(dev->hca_type(), "MT4123");
  EXPECT_EQ(dev->fw_ver(), "20.31.1014");
  EXPECT_EQ(portStateOf(findPort(dev, 1)->state()), PortState::Active);
  const v1::NetDevice* ib0 = findNetdev(ev, "ib0");
  ASSERT_NE(ib0, nullptr);
  EXPECT_EQ(ib0->operstate(), "up");
  EXPECT_EQ(ib0->pci_address(), "0000:0c:00.0");
}

}  // namespace
}  // namespace ibc::core

// mergeToolEvidence (tool_evidence.cpp): pasted tool output merged into a snapshot. A
// `grep . /sys/...` listing runs through the sysfs probes wherever its paths were listed
// from; what a paste contradicts is a conflict and the snapshot's value stays; every paste
// leaves a ToolOutput record with its raw text, bounded.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ibc/agent/analyze.h"
#include "ibc/core/tool_output.h"

namespace ibc::agent {
namespace {

core::ToolEvidence listing(const std::vector<core::SysfsEntry>& entries) {
  core::ToolEvidence e;
  e.kinds = {"sysfs"};
  e.sysfs_entries = entries;
  e.lines_total = entries.size();
  return e;
}

TEST(ToolEvidence, AListingFromThePciDeviceViewIsReadAsTheClassView) {
  const std::string pci = "/sys/bus/pci/devices/0000:3b:00.2/infiniband/mlx5_0/ports/1/";
  const auto e = listing({{pci + "state", "4: ACTIVE"},
                          {pci + "rate", "200 Gb/sec (4X HDR)"},
                          {pci + "counters/symbol_error", "12"},
                          {"/sys/bus/pci/devices/0000:3b:00.2/net/ib0/type", "32"},
                          {"/sys/bus/pci/devices/0000:3b:00.2/net/ib0/mtu", "4092"}});
  v1::Snapshot snap;
  mergeToolEvidence(e, "paste.txt", "raw text", CollectLimits{}, snap);
  ASSERT_EQ(snap.devices_size(), 1);
  const auto& dev = snap.devices(0);
  EXPECT_EQ(dev.name(), "mlx5_0");
  EXPECT_EQ(dev.seen_in(), "paste.txt (sysfs)");
  ASSERT_EQ(dev.ports_size(), 1);
  EXPECT_EQ(dev.ports(0).state().code(), 4);
  EXPECT_DOUBLE_EQ(dev.ports(0).rate_gbps(), 200);
  ASSERT_EQ(dev.ports(0).counters_size(), 1);
  EXPECT_EQ(dev.ports(0).counters(0).value(), 12u);
  ASSERT_EQ(snap.netdevs_size(), 1);
  EXPECT_EQ(snap.netdevs(0).name(), "ib0");
  EXPECT_EQ(snap.netdevs(0).mtu(), 4092u);
  // Attributes the customer did not grep (phys_state, lid, ...) are no probe errors.
  EXPECT_EQ(snap.probe_errors_size(), 0);
}

TEST(ToolEvidence, AStateTheListingDoesNotShowIsNotAnUnreadState) {
  const auto e = listing({{"/sys/class/infiniband/mlx5_0/ports/1/rate", "100 Gb/sec (4X EDR)"}});
  v1::Snapshot snap;
  mergeToolEvidence(e, "rate.txt", "", CollectLimits{}, snap);
  ASSERT_EQ(snap.devices_size(), 1);
  ASSERT_EQ(snap.devices(0).ports_size(), 1);
  EXPECT_FALSE(snap.devices(0).ports(0).has_state());
}

TEST(ToolEvidence, AContradictionKeepsTheSnapshotsValueAndIsReturnedAsAConflict) {
  v1::Snapshot snap;
  auto* port = snap.add_devices();
  port->set_name("mlx5_0");
  port->set_fw_ver("20.31.1014");
  auto* p = port->add_ports();
  p->set_port(1);
  p->mutable_state()->set_code(4);
  p->mutable_state()->set_name("ACTIVE");
  p->mutable_state()->set_raw("4: ACTIVE");
  const auto e = listing({{"/sys/class/infiniband/mlx5_0/ports/1/state", "1: DOWN"}});
  std::vector<core::EvidenceConflict> conflicts;
  mergeToolEvidence(e, "old.txt", "", CollectLimits{}, snap, &conflicts);
  ASSERT_EQ(snap.devices_size(), 1);
  EXPECT_EQ(snap.devices(0).ports(0).state().code(), 4);
  // A device the snapshot already had is not credited to the paste.
  EXPECT_EQ(snap.devices(0).seen_in(), "");
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_NE(conflicts[0].where.find("mlx5_0"), std::string::npos) << conflicts[0].where;
  EXPECT_NE(conflicts[0].kept.find("ACTIVE"), std::string::npos) << conflicts[0].kept;
  EXPECT_NE(conflicts[0].other.find("DOWN"), std::string::npos) << conflicts[0].other;
}

TEST(ToolEvidence, EthtoolDriverInfoNamesTheFirmwareOfTheDeviceOnThatPciAddress) {
  v1::Snapshot snap;
  auto* with_fw = snap.add_devices();
  with_fw->set_name("mlx5_0");
  with_fw->mutable_pci()->set_address("0000:3b:00.0");
  with_fw->set_fw_ver("1.0");
  auto* without = snap.add_devices();
  without->set_name("mlx5_1");
  without->mutable_pci()->set_address("0000:3b:00.1");
  core::ToolEvidence e;
  e.kinds = {"ethtool_i"};
  e.driver_infos = {{"eth0", "mlx5_core", "", "16.35.2000 (MT_0000000012)", "0000:3b:00.0"},
                    {"eth1", "mlx5_core", "", "16.35.2000 (MT_0000000012)", "0000:3b:00.1"}};
  mergeToolEvidence(e, "ethtool-i.txt", "", CollectLimits{}, snap);
  EXPECT_EQ(snap.devices(0).fw_ver(), "1.0");  // never overwritten
  EXPECT_EQ(snap.devices(1).fw_ver(), "16.35.2000 (MT_0000000012)");
}

TEST(ToolEvidence, EveryPasteLeavesARecordWithItsRawTextBounded) {
  core::ToolEvidence e;
  e.kinds = {"ibstat", "perfquery"};
  e.lines_total = 40;
  e.lines_unrecognised = 3;
  e.no_rdma_devices = true;
  e.tool_errors = {"ibpanic: [1234] main: stat of IB device 'mlx5_9' failed"};
  CollectLimits limits;
  limits.artifact_raw_kept = 8;
  v1::Snapshot snap;
  mergeToolEvidence(e, "ibstat.txt", "0123456789abcdef", limits, snap);
  ASSERT_EQ(snap.tool_outputs_size(), 1);
  const auto& t = snap.tool_outputs(0);
  EXPECT_EQ(t.source(), "ibstat.txt");
  ASSERT_EQ(t.kinds_size(), 2);
  EXPECT_EQ(t.kinds(1), "perfquery");
  EXPECT_EQ(t.lines_total(), 40u);
  EXPECT_EQ(t.lines_unrecognised(), 3u);
  EXPECT_TRUE(t.reported_no_rdma_devices());
  ASSERT_EQ(t.tool_errors_size(), 1);
  EXPECT_EQ(t.raw(), "01234567");
  EXPECT_TRUE(t.raw_truncated());
  v1::Snapshot small;
  mergeToolEvidence(e, "ibstat.txt", "0123", limits, small);
  EXPECT_EQ(small.tool_outputs(0).raw(), "0123");
  EXPECT_FALSE(small.tool_outputs(0).raw_truncated());
}

TEST(ToolEvidence, DevicesAToolNamedAreCreditedToThePasteAndItsKinds) {
  core::ToolEvidence e = core::parseToolOutput(
      "CA 'mlx5_0'\n"
      "\tCA type: MT4124\n"
      "\tNumber of ports: 1\n"
      "\tFirmware version: 20.31.1014\n"
      "\tPort 1:\n"
      "\t\tState: Active\n"
      "\t\tPhysical state: LinkUp\n"
      "\t\tRate: 200\n"
      "\t\tLink layer: InfiniBand\n");
  ASSERT_FALSE(e.devices.empty());
  v1::Snapshot snap;
  mergeToolEvidence(e, "ibstat.txt", "", CollectLimits{}, snap);
  ASSERT_EQ(snap.devices_size(), 1);
  EXPECT_EQ(snap.devices(0).fw_ver(), "20.31.1014");
  EXPECT_EQ(snap.devices(0).seen_in(), "ibstat.txt (ibstat)");
}

}  // namespace
}  // namespace ibc::agent

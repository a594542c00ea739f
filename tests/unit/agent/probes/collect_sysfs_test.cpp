// The sysfs probes (collect_sysfs.cpp) on small in-memory trees laid out as sysfs lays them
// out: devices, ports and counters with raw and parsed values, PCI identity and VF evidence,
// GIDs and pkeys, netdevs mapped to ports, and the window's second sample.

#include <gtest/gtest.h>

#include <string>

#include "ibc/agent/collect.h"
#include "ibc/core/result.h"
#include "os_doubles.h"

namespace ibc::agent {
namespace {

const std::string kDev = "/sys/class/infiniband/mlx5_0";
const std::string kPort = kDev + "/ports/1";

// One VF port: ACTIVE, 200 Gb/s HDR, one error counter and one hw counter.
MemoryFilesystem oneVfPort() {
  MemoryFilesystem fs;
  fs.addFile(kDev + "/fw_ver", "20.31.1014\n");
  fs.addFile(kDev + "/hca_type", "MT4124\n");
  fs.addFile(kDev + "/node_guid", "248a:0703:00a1:b2c3\n");
  fs.addFile(kPort + "/state", "4: ACTIVE\n");
  fs.addFile(kPort + "/phys_state", "5: LinkUp\n");
  fs.addFile(kPort + "/rate", "200 Gb/sec (4X HDR)\n");
  fs.addFile(kPort + "/link_layer", "InfiniBand \n");
  fs.addFile(kPort + "/lid", "0x1a\n");
  fs.addFile(kPort + "/sm_lid", "0x1\n");
  fs.addFile(kPort + "/counters/symbol_error", "7\n");
  fs.addFile(kPort + "/hw_counters/out_of_sequence", "3\n");
  fs.addFile(kPort + "/gids/0", "fe80:0000:0000:0000:248a:0703:00a1:b2c3\n");
  fs.addFile(kPort + "/pkeys/0", "0xffff\n");
  return fs;
}

v1::Snapshot devicesOf(const Filesystem& fs, SysfsLayout& layout) {
  v1::Snapshot snap;
  collectRdmaDevices(fs, CollectLimits{}, snap, layout);
  return snap;
}

const v1::Counter* counter(const google::protobuf::RepeatedPtrField<v1::Counter>& list,
                           const std::string& name) {
  for (const auto& c : list) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

TEST(SysfsProbe, KeepsTheRawStringBesideEachParsedPortValue) {
  SysfsLayout layout;
  const auto snap = devicesOf(oneVfPort(), layout);
  ASSERT_EQ(snap.devices_size(), 1);
  const auto& dev = snap.devices(0);
  EXPECT_EQ(dev.name(), "mlx5_0");
  EXPECT_EQ(dev.fw_ver(), "20.31.1014");
  EXPECT_EQ(layout.device_dirs.at("mlx5_0"), kDev);
  ASSERT_EQ(dev.ports_size(), 1);
  const auto& p = dev.ports(0);
  EXPECT_EQ(p.port(), 1u);
  EXPECT_EQ(p.state().raw(), "4: ACTIVE");
  EXPECT_EQ(p.state().code(), 4);
  EXPECT_EQ(p.phys_state().code(), 5);
  EXPECT_EQ(p.rate_raw(), "200 Gb/sec (4X HDR)");
  EXPECT_DOUBLE_EQ(p.rate_gbps(), 200);
  EXPECT_EQ(p.width_lanes(), 4u);
  EXPECT_EQ(p.link_layer(), "InfiniBand");  // the stray space is not part of the name
  EXPECT_EQ(p.lid_raw(), "0x1a");
  EXPECT_EQ(p.lid(), 26u);
  EXPECT_EQ(p.sm_lid(), 1u);
  ASSERT_NE(counter(p.counters(), "symbol_error"), nullptr);
  EXPECT_EQ(counter(p.counters(), "symbol_error")->value(), 7u);
  EXPECT_EQ(counter(p.counters(), "symbol_error")->width_bits(), 16u);
  EXPECT_EQ(counter(p.hw_counters(), "out_of_sequence")->value(), 3u);
  EXPECT_EQ(snap.probe_errors_size(), 0);
}

TEST(SysfsProbe, TheFirstGidGivesThePortGuidAndUnusedPkeysAreLeftOut) {
  MemoryFilesystem fs = oneVfPort();
  fs.addFile(kPort + "/gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n");
  fs.addFile(kPort + "/gids/2", "fe80:0000:0000:0000:248a:0703:00a1:b2c4\n");
  fs.addFile(kPort + "/pkeys/1", "0x0000\n");
  fs.addFile(kPort + "/pkeys/2", "0x8001\n");
  SysfsLayout layout;
  const auto snap = devicesOf(fs, layout);
  const auto& p = snap.devices(0).ports(0);
  ASSERT_EQ(p.gids_size(), 2);
  EXPECT_EQ(p.gids(1), "fe80:0000:0000:0000:248a:0703:00a1:b2c4");
  EXPECT_EQ(p.port_guid(), "248a:0703:00a1:b2c3");
  ASSERT_EQ(p.pkeys_size(), 2);
  EXPECT_EQ(p.pkeys(0), "0xffff");
  EXPECT_EQ(p.pkeys(1), "0x8001");
}

TEST(SysfsProbe, AMissingStateIsAnErrorAndLeavesTheStateExpectedButUnread) {
  MemoryFilesystem fs;
  fs.addFile(kPort + "/rate", "100 Gb/sec (4X EDR)\n");
  SysfsLayout layout;
  const auto snap = devicesOf(fs, layout);
  const auto& p = snap.devices(0).ports(0);
  EXPECT_TRUE(p.has_state());
  EXPECT_EQ(p.state().raw(), "");
  // state and phys_state are files every kernel has: their absence is recorded.
  int missing = 0;
  for (const auto& e : snap.probe_errors()) {
    if (e.path() == kPort + "/state" || e.path() == kPort + "/phys_state") {
      EXPECT_EQ(e.probe(), "sysfs.port");
      EXPECT_EQ(e.error(), core::errorCodeName(core::ErrorCode::NotFound));
      ++missing;
    }
  }
  EXPECT_EQ(missing, 2);
}

TEST(SysfsProbe, AnUnreadableCounterIsUnavailableWithItsReasonAndTheOthersAreRead) {
  MemoryFilesystem mem = oneVfPort();
  mem.addFile(kPort + "/counters/port_rcv_errors", "0\n");
  ibc::test::FaultyFilesystem fs(mem);
  fs.faults["/counters/symbol_error"] = core::ErrorCode::InvalidArgument;
  SysfsLayout layout;
  const auto snap = devicesOf(fs, layout);
  const auto& p = snap.devices(0).ports(0);
  const v1::Counter* bad = counter(p.counters(), "symbol_error");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->unavailable_reason(), core::errorCodeName(core::ErrorCode::InvalidArgument));
  EXPECT_EQ(bad->width_bits(), 16u);
  ASSERT_NE(counter(p.counters(), "port_rcv_errors"), nullptr);
  EXPECT_EQ(counter(p.counters(), "port_rcv_errors")->unavailable_reason(), "");
}

TEST(SysfsProbe, AHwCountersThatIsAFileIsAnErrorNotAnAbsentDirectory) {
  MemoryFilesystem fs = oneVfPort();
  fs.addFile(kDev + "/hw_counters", "not a directory\n");
  SysfsLayout layout;
  const auto snap = devicesOf(fs, layout);
  bool named = false;
  for (const auto& e : snap.probe_errors()) {
    if (e.path() == kDev + "/hw_counters") {
      named = true;
      EXPECT_EQ(e.probe(), "sysfs.counters");
      EXPECT_EQ(e.message(), kDev +
                                 "/hw_counters is not a directory (sysfs has one here): its "
                                 "counters were not read")
          << e.message();
    }
  }
  EXPECT_TRUE(named);
}

TEST(SysfsProbe, APhysfnLinkMakesTheDeviceAVirtualFunctionOfThatPf) {
  MemoryFilesystem fs = oneVfPort();
  fs.addSymlink(kDev + "/device", "../../../0000:3b:00.2");
  fs.addFile(kDev + "/device/vendor", "0x15b3\n");
  fs.addFile(kDev + "/device/device", "0x101c\n");
  fs.addFile(kDev + "/device/numa_node", "1\n");
  fs.addFile(kDev + "/device/current_link_speed", "16.0 GT/s PCIe\n");
  fs.addFile(kDev + "/device/current_link_width", "8\n");
  fs.addSymlink(kDev + "/device/physfn", "../0000:3b:00.0");
  fs.addSymlink(kDev + "/device/driver", "../../../bus/pci/drivers/mlx5_core");
  SysfsLayout layout;
  const auto snap = devicesOf(fs, layout);
  const auto& dev = snap.devices(0);
  EXPECT_EQ(dev.pci().address(), "0000:3b:00.2");
  EXPECT_EQ(dev.pci().vendor_id(), "0x15b3");
  EXPECT_EQ(dev.pci().numa_node(), 1);
  EXPECT_DOUBLE_EQ(dev.pci().current_link_gts(), 16.0);
  EXPECT_EQ(dev.pci().current_link_lanes(), 8u);
  EXPECT_EQ(dev.pci().driver(), "mlx5_core");
  EXPECT_TRUE(dev.is_virtual_function());
  EXPECT_EQ(dev.pci().physfn_address(), "0000:3b:00.0");
  EXPECT_EQ(dev.virtual_function_evidence(), "physfn link to PF 0000:3b:00.0");
}

TEST(SysfsProbe, WithoutAPciLinkTheHcaTypeStillTellsAVirtualFunction) {
  MemoryFilesystem fs = oneVfPort();
  fs.addFile(kDev + "/hca_type", "MT4124\n");  // ConnectX-6 VF (0x101c)
  SysfsLayout layout;
  const auto snap = devicesOf(fs, layout);
  const auto& dev = snap.devices(0);
  EXPECT_FALSE(dev.has_pci());
  EXPECT_TRUE(dev.is_virtual_function());
  EXPECT_EQ(dev.virtual_function_evidence().rfind("hca_type MT4124 = PCI device ", 0), 0u)
      << dev.virtual_function_evidence();
}

TEST(SysfsProbe, APciDeviceViewTreeIsReadWhenTheClassDirectoryIsMissing) {
  MemoryFilesystem fs;
  const std::string pci = "/sys/bus/pci/devices/0000:17:00.1";
  fs.addFile(pci + "/vendor", "0x15b3\n");
  fs.addFile(pci + "/infiniband/mlx5_1/fw_ver", "16.35.2000\n");
  fs.addFile(pci + "/infiniband/mlx5_1/ports/1/state", "1: DOWN\n");
  fs.addFile(pci + "/infiniband/mlx5_1/ports/1/phys_state", "3: Disabled\n");
  SysfsLayout layout;
  const auto snap = devicesOf(fs, layout);
  ASSERT_EQ(snap.devices_size(), 1);
  EXPECT_EQ(snap.devices(0).name(), "mlx5_1");
  EXPECT_EQ(snap.devices(0).pci().address(), "0000:17:00.1");
  EXPECT_EQ(snap.devices(0).pci().vendor_id(), "0x15b3");
  EXPECT_EQ(snap.devices(0).ports(0).state().code(), 1);
  EXPECT_EQ(layout.device_dirs.at("mlx5_1"), pci + "/infiniband/mlx5_1");
}

TEST(SysfsProbe, MoreDevicesThanTheLimitKeepTheFirstAndSaySo) {
  MemoryFilesystem fs;
  for (const char* d : {"mlx5_0", "mlx5_1", "mlx5_2"}) {
    fs.addFile(std::string("/sys/class/infiniband/") + d + "/fw_ver", "1\n");
  }
  CollectLimits limits;
  limits.max_devices = 2;
  v1::Snapshot snap;
  SysfsLayout layout;
  collectRdmaDevices(fs, limits, snap, layout);
  ASSERT_EQ(snap.devices_size(), 2);
  EXPECT_EQ(snap.devices(1).name(), "mlx5_1");
  bool said = false;
  for (const auto& e : snap.probe_errors()) {
    said = said || e.message() == "3 RDMA devices; kept the first 2";
  }
  EXPECT_TRUE(said);
}

TEST(SysfsProbe, NetdevsOfThePciFunctionMapToPortsByDevPort) {
  MemoryFilesystem fs = oneVfPort();
  fs.addFile(kDev + "/ports/2/state", "4: ACTIVE\n");
  fs.addFile(kDev + "/device/net/ib0/mtu", "4092\n");
  fs.addFile(kDev + "/device/net/ib0/operstate", "up\n");
  fs.addFile(kDev + "/device/net/ib0/dev_port", "1\n");
  fs.addFile(kDev + "/device/net/ib0/flags", "0x1003\n");
  fs.addFile(kDev + "/device/net/ib0/carrier_changes", "6\n");
  fs.addFile(kDev + "/device/net/ib0/statistics/rx_errors", "2\n");
  // Another IPoIB interface, not behind the device's PCI function, and a plain Ethernet one.
  fs.addFile("/sys/class/net/ib9/type", "32\n");
  fs.addFile("/sys/class/net/eth0/type", "1\n");
  SysfsLayout layout;
  v1::Snapshot snap = devicesOf(fs, layout);
  collectNetdevs(fs, CollectLimits{}, snap, layout);
  ASSERT_EQ(snap.netdevs_size(), 2);
  const auto& ib0 = snap.netdevs(0);
  EXPECT_EQ(ib0.name(), "ib0");
  EXPECT_EQ(ib0.rdma_device(), "mlx5_0");
  EXPECT_EQ(ib0.rdma_port(), 2u);  // dev_port is 0-based
  EXPECT_EQ(ib0.mtu(), 4092u);
  EXPECT_TRUE(ib0.admin_up());
  EXPECT_EQ(ib0.carrier_changes(), 6u);
  EXPECT_EQ(counter(ib0.stats(), "rx_errors")->value(), 2u);
  EXPECT_EQ(snap.devices(0).ports(1).netdevs_size(), 1);
  EXPECT_EQ(snap.devices(0).ports(1).netdevs(0), "ib0");
  EXPECT_EQ(snap.devices(0).ports(0).netdevs_size(), 0);
  EXPECT_EQ(snap.netdevs(1).name(), "ib9");
  EXPECT_EQ(layout.netdev_dirs.count("eth0"), 0u);
  EXPECT_EQ(ib0.addresses_size(), 0);  // no /proc/net in this tree: no addresses, no error
}

TEST(SysfsProbe, InterfacesCarryTheirAddressesFromProcNet) {
  MemoryFilesystem fs = oneVfPort();
  fs.addFile(kDev + "/device/net/ib0/dev_port", "0\n");
  // SYNTHETIC /proc/net in the kernel's formats (net_addresses_test.cpp has more).
  fs.addFile("/proc/net/if_inet6", "fe800000000000000ec42afffe1b2c3d 04 40 20 80      ib0\n");
  fs.addFile("/proc/net/fib_trie", "Local:\n     |-- 10.2.0.7\n        /32 host LOCAL\n");
  fs.addFile("/proc/net/route",
             "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n"
             "ib0\t0000020A\t00000000\t0001\t0\t0\t0\t0000FFFF\n");
  SysfsLayout layout;
  v1::Snapshot snap = devicesOf(fs, layout);
  collectNetdevs(fs, CollectLimits{}, snap, layout);
  ASSERT_EQ(snap.netdevs_size(), 1);
  ASSERT_EQ(snap.netdevs(0).addresses_size(), 2);
  EXPECT_EQ(snap.netdevs(0).addresses(0), "10.2.0.7");
  EXPECT_EQ(snap.netdevs(0).addresses(1), "fe80::ec4:2aff:fe1b:2c3d");
}

TEST(SysfsProbe, TheSecondSampleReadsOnlyTheCountersTheFirstFound) {
  MemoryFilesystem first = oneVfPort();
  SysfsLayout layout;
  v1::Snapshot snap = devicesOf(first, layout);
  // Between the samples the counter moved and a new counter file appeared.
  MemoryFilesystem second = oneVfPort();
  second.addFile(kPort + "/counters/symbol_error", "9\n");
  second.addFile(kPort + "/counters/link_downed", "1\n");
  sampleWindowCounters(second, CollectLimits{}, layout, snap);
  ASSERT_EQ(snap.window_size(), 1);
  const auto& w = snap.window(0);
  ASSERT_EQ(w.ports_size(), 1);
  EXPECT_EQ(w.ports(0).device(), "mlx5_0");
  EXPECT_EQ(w.ports(0).port(), 1u);
  ASSERT_EQ(w.ports(0).counters_size(), 1);
  EXPECT_EQ(w.ports(0).counters(0).name(), "symbol_error");
  EXPECT_EQ(w.ports(0).counters(0).value(), 9u);
  EXPECT_EQ(w.ports(0).hw_counters(0).value(), 3u);
}

}  // namespace
}  // namespace ibc::agent

#include "ibc/core/kernel_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/text.h"

namespace ibc::core {
namespace {

const std::string kDmesgDir = "real/dmesg";

std::string dmesgFixture(const std::string& name) {
  return ibc::test::readFixture(kDmesgDir + "/" + name);
}

std::size_t nonBlankLines(const std::string& text) {
  std::size_t n = 0;
  forEachLine(text, [&n](std::string_view line, uint32_t) {
    if (!trim(line).empty()) ++n;
  });
  return n;
}

// ---- line shapes -----------------------------------------------------------------------

struct ShapeCase {
  std::string name;
  std::string line;
  std::string text;
  std::string timestamp;
  double monotonic;
  std::string host;
};

class KernelLineShapes : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(KernelLineShapes, PrefixIsStrippedIntoTimestampMonotonicAndHost) {
  const auto& c = GetParam();
  const auto lines = parseKernelLogText(c.line);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text(), c.text);
  EXPECT_EQ(lines[0].timestamp(), c.timestamp);
  EXPECT_DOUBLE_EQ(lines[0].monotonic_seconds(), c.monotonic);
  EXPECT_EQ(lines[0].host(), c.host);
  EXPECT_EQ(lines[0].line_number(), 1u);
}

// The messages are real (tests/fixtures/real/dmesg); the prefixes around them are synthetic,
// written after the formats of util-linux dmesg (-T "[%a %b %e %H:%M:%S %Y]", -x "%-6s:%-6s:",
// -r "<N>", --time-format=iso), journalctl (short, short-iso) and pdsh/clush ("host: ").
const std::string kMsg = "mlx5_core 0000:01:00.0: handle_hca_cap failed";

INSTANTIATE_TEST_SUITE_P(
    Shapes, KernelLineShapes,
    ::testing::Values(
        ShapeCase{"Plain", kMsg, kMsg, "", 0, ""},
        ShapeCase{"Dmesg", "[    5.502207] " + kMsg, kMsg, "[    5.502207]", 5.502207, ""},
        ShapeCase{"DmesgHumanTime", "[Mon Jun  2 10:11:12 2025] " + kMsg, kMsg,
                  "[Mon Jun  2 10:11:12 2025]", 0, ""},
        ShapeCase{"DmesgDecoded", "kern  :err   : [    5.502207] " + kMsg, kMsg, "[    5.502207]",
                  5.502207, ""},
        ShapeCase{"DmesgDecodedWithoutTime", "kern  :info  : " + kMsg, kMsg, "", 0, ""},
        ShapeCase{"SyslogPriority", "<3>[    5.502207] " + kMsg, kMsg, "[    5.502207]", 5.502207,
                  ""},
        ShapeCase{"DmesgIso", "2025-06-02T10:11:12,123456+00:00 " + kMsg, kMsg,
                  "2025-06-02T10:11:12,123456+00:00", 0, ""},
        ShapeCase{"JournalShort", "Feb 06 16:10:07 node7 kernel: " + kMsg, kMsg, "Feb 06 16:10:07",
                  0, "node7"},
        ShapeCase{"JournalShortIso", "2025-02-06T16:10:07+0000 node7 kernel: " + kMsg, kMsg,
                  "2025-02-06T16:10:07+0000", 0, "node7"},
        ShapeCase{"KernLogWithDmesgTime", "Feb  6 16:10:07 node7 kernel: [   12.925245] " + kMsg,
                  kMsg, "Feb  6 16:10:07", 12.925245, "node7"},
        ShapeCase{"JournalOtherProgramKeepsItsName",
                  "Feb 06 16:10:07 node7 NetworkManager[812]: <info> device (ib0): carrier on",
                  "NetworkManager[812]: <info> device (ib0): carrier on", "Feb 06 16:10:07", 0,
                  "node7"},
        ShapeCase{"PdshHost", "node12: [    5.502207] " + kMsg, kMsg, "[    5.502207]", 5.502207,
                  "node12"},
        ShapeCase{"PdshHostRepeated", "10.0.87.143: 10.0.87.143: [    5.502207] " + kMsg, kMsg,
                  "[    5.502207]", 5.502207, "10.0.87.143"},
        ShapeCase{"PdshHostBeforeDecoded", "gpu-3: kern  :err   : [    5.502207] " + kMsg, kMsg,
                  "[    5.502207]", 5.502207, "gpu-3"},
        ShapeCase{"ModuleNameIsNotAHost", "rdma_rxe: Failed sending ack",
                  "rdma_rxe: Failed sending ack", "", 0, ""},
        ShapeCase{"DriverAndPciAddressAreNotAHost", kMsg, kMsg, "", 0, ""}),
    [](const auto& p) { return p.param.name; });

TEST(KernelLogParser, LineNumbersCountBlankLinesButBlankLinesAreNotEntries) {
  const auto lines = parseKernelLogText("\n[    1.000000] a\n\n   \r\n[    2.000000] b\r\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].line_number(), 2u);
  EXPECT_EQ(lines[0].text(), "a");
  EXPECT_EQ(lines[1].line_number(), 5u);
  EXPECT_EQ(lines[1].text(), "b");
}

TEST(KernelLogParser, EmptyInputGivesNoLines) {
  EXPECT_TRUE(parseKernelLogText("").empty());
  EXPECT_TRUE(parseKernelLogText("\n\n  \n").empty());
  const auto log = filterKernelLog("", {});
  EXPECT_EQ(log.lines_scanned(), 0u);
  EXPECT_EQ(log.lines_matched(), 0u);
  EXPECT_FALSE(log.truncated());
}

TEST(KernelLogParser, TruncatedPrefixesAreKeptAsPlainMessages) {
  const auto lines =
      parseKernelLogText("[    5.3764\n[Mon Jun  2 10:1\nFeb 06 16:1\n[  5.5] mlx5_");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].text(), "[    5.3764");
  EXPECT_EQ(lines[0].timestamp(), "");
  EXPECT_EQ(lines[1].text(), "[Mon Jun  2 10:1");
  EXPECT_EQ(lines[2].text(), "Feb 06 16:1");
  EXPECT_EQ(lines[3].text(), "mlx5_");
  EXPECT_DOUBLE_EQ(lines[3].monotonic_seconds(), 5.5);
}

TEST(KernelLogParser, GarbageBytesGiveOnePrintableEntryPerNonBlankLine) {
  std::mt19937 rng(42);
  std::string text(1 << 16, '\0');
  for (char& c : text) c = static_cast<char>(rng() & 0xff);
  const auto lines = parseKernelLogText(text);
  EXPECT_EQ(lines.size(), nonBlankLines(text));
  for (const auto& l : lines) {
    for (char c : l.text()) {
      const auto u = static_cast<unsigned char>(c);
      EXPECT_TRUE(u == '\t' || u >= 0x20) << "control byte in text";
      EXPECT_NE(u, 0x7f);
    }
  }
}

TEST(KernelLogParser, HugeInputIsFilteredWithBoundedMemory) {
  // 50 MB made of the real healthy mlx5 probe capture repeated.
  const std::string one =
      dmesgFixture("dmesg_mlx5-healthy-probe-pcie-x8-cable-plugged_arm-nas-issue-16.txt");
  ASSERT_FALSE(one.empty());
  const std::size_t reps = (50u << 20) / one.size() + 1;
  std::string huge;
  huge.reserve(reps * one.size());
  for (std::size_t i = 0; i < reps; ++i) huge += one;
  const uint64_t total_lines = 14 * reps;

  KernelLogOptions options;
  options.max_lines = 100;
  const auto log = filterKernelLog(huge, options);
  EXPECT_EQ(log.lines_scanned(), total_lines);
  EXPECT_EQ(log.lines_matched(), total_lines);
  EXPECT_TRUE(log.truncated());
  ASSERT_EQ(log.lines_size(), 100);
  EXPECT_EQ(log.lines(99).line_number(), total_lines);  // newest kept, oldest first
  EXPECT_EQ(log.lines(0).line_number(), total_lines - 99);
  EXPECT_EQ(log.lines(99).text(),
            "mlx5_core 0004:01:00.1: E-Switch: Total vports 10, per vport: max uc(1024) max "
            "mc(16384)");
}

TEST(KernelLogParser, HugeSingleLineIsCappedInText) {
  const std::string line = "[    1.000000] mlx5_core 0000:01:00.0: " + std::string(5u << 20, 'x');
  const auto lines = parseKernelLogText(line);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LE(lines[0].text().size(), 1024u + 3u);
  EXPECT_TRUE(isRdmaRelevant(line));
}

// ---- /dev/kmsg ---------------------------------------------------------------------------

TEST(KernelLogParser, KmsgRecordCarriesMicrosecondsSinceBoot) {
  // Synthetic record in the Documentation/ABI/testing/dev-kmsg format, with a real message.
  const auto line = parseKmsgRecord(
      "3,1234,5678901,-;mlx5_core 0000:01:00.0: handle_hca_cap failed\n SUBSYSTEM=pci\n "
      "DEVICE=+pci:0000:01:00.0\n");
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->text(), "mlx5_core 0000:01:00.0: handle_hca_cap failed");
  EXPECT_EQ(line->timestamp(), "[    5.678901]");
  EXPECT_DOUBLE_EQ(line->monotonic_seconds(), 5.678901);
  EXPECT_EQ(line->line_number(), 0u);
  EXPECT_EQ(classifyKernelMessage(line->text()), KernelEvent::DriverLoadFailed);
}

TEST(KernelLogParser, KmsgRecordWithExtraHeaderFieldsIsAccepted) {
  const auto line = parseKmsgRecord("6,339,5140900,-,caller=T1;NET: Registered protocol family 10");
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->text(), "NET: Registered protocol family 10");
  EXPECT_DOUBLE_EQ(line->monotonic_seconds(), 5.1409);
}

TEST(KernelLogParser, MalformedKmsgRecordsAreRejected) {
  EXPECT_FALSE(parseKmsgRecord("").has_value());
  EXPECT_FALSE(parseKmsgRecord("no separator here").has_value());
  EXPECT_FALSE(parseKmsgRecord("6,x,1;msg").has_value());
  EXPECT_FALSE(parseKmsgRecord("6,1;msg").has_value());
  EXPECT_FALSE(parseKmsgRecord(",,,;msg").has_value());
}

// ---- classification --------------------------------------------------------------------

struct ClassifyCase {
  std::string name;
  std::string message;
  KernelEvent event;
};

class KernelClassification : public ::testing::TestWithParam<ClassifyCase> {};

TEST_P(KernelClassification, MessageMapsToEvent) {
  const auto& c = GetParam();
  EXPECT_EQ(kernelEventName(classifyKernelMessage(c.message)), kernelEventName(c.event))
      << c.message;
}

// Messages marked "real" are verbatim lines of tests/fixtures/real/dmesg; the others are
// synthetic instances of the driver format strings named beside them.
INSTANTIATE_TEST_SUITE_P(
    Messages, KernelClassification,
    ::testing::Values(
        // real
        ClassifyCase{"Mlx4FwStatus", "mlx4_core 0000:0d:00.0: command 0x5a failed: fw status = 0x2",
                     KernelEvent::FwCommandFailed},
        ClassifyCase{"NetdevWatchdog",
                     "NETDEV WATCHDOG: eth1 (mlx4_core): transmit queue 0 timed out",
                     KernelEvent::TxTimeout},
        ClassifyCase{"ProbeEinval", "mlx5_core: probe of 0000:01:00.0 failed with error -22",
                     KernelEvent::DriverLoadFailed},
        ClassifyCase{"LoadOne", "mlx5_core 0000:01:00.0: mlx5_load_one failed with error code -22",
                     KernelEvent::DriverLoadFailed},
        ClassifyCase{"HcaCap", "mlx5_core 0000:01:00.0: handle_hca_cap failed",
                     KernelEvent::DriverLoadFailed},
        ClassifyCase{"RxeAck", "rdma_rxe: Failed sending ack", KernelEvent::RdmaSendFailure},
        ClassifyCase{"AddrconfNotReady", "IPv6: ADDRCONF(NETDEV_UP): ens1f0: link is not ready",
                     KernelEvent::LinkNotReady},
        // synthetic, mlx5 cmd.c wait_func_handle_exec_timeout / mlx5_cmd_eq_recover formats
        ClassifyCase{"CmdRecoveredAfterTimeout",
                     "mlx5_core 0000:3b:00.0: wait_func_handle_exec_timeout:1062:(pid 8): cmd[0]: "
                     "CREATE_MKEY(0x200) recovered after timeout",
                     KernelEvent::FwCommandTimeout},
        ClassifyCase{"CmdEqRecovered",
                     "mlx5_core 0000:3b:00.0: mlx5_cmd_eq_recover:245:(pid 8): Recovered 1 EQEs "
                     "on cmd_eq",
                     KernelEvent::FwCommandTimeout},
        ClassifyCase{"CablePluggedIsHealthy",
                     "mlx5_core 0004:01:00.0: Port module event: module 0, Cable plugged",
                     KernelEvent::None},
        ClassifyCase{"FullPcieBandwidthIsHealthy",
                     "mlx5_core 0004:01:00.0: 63.008 Gb/s available PCIe bandwidth (8.0 GT/s "
                     "PCIe x8 link)",
                     KernelEvent::None},
        ClassifyCase{"SlotPowerIsHealthy",
                     "mlx5_core 0004:01:00.0: mlx5_pcie_event:294:(pid 542): PCIe slot "
                     "advertised sufficient power (75W).",
                     KernelEvent::None},
        ClassifyCase{"WatchdogSplatLineIsNotASecondEvent",
                     "WARNING: CPU: 3 PID: 0 at net/sched/sch_generic.c:442 "
                     "dev_watchdog+0x398/0x3a0",
                     KernelEvent::None},
        ClassifyCase{"ModulesLinkedIn", "Modules linked in: mlx4_en mlx4_core", KernelEvent::None},
        // mlx5 cmd.c wait_func(): "%s(0x%x) timeout. Will cause a leak of a command resource"
        ClassifyCase{"Mlx5CmdTimeout",
                     "mlx5_core 0000:56:00.0: wait_func:1189:(pid 72061): ACCESS_REG(0x805) "
                     "timeout. Will cause a leak of a command resource",
                     KernelEvent::FwCommandTimeout},
        ClassifyCase{"Mlx5NoDoneCompletion",
                     "mlx5_core 0000:56:00.0: wait_func_handle_exec_timeout:1159:(pid 72061): "
                     "cmd[0]: ACCESS_REG(0x805) No done completion",
                     KernelEvent::FwCommandTimeout},
        // mlx4 cmd.c: "command 0x%x timed out (go bit not cleared)"
        ClassifyCase{"Mlx4GoBit",
                     "mlx4_core 0000:0d:00.0: command 0x23 timed out (go bit not cleared)",
                     KernelEvent::FwCommandTimeout},
        // mlx5 cmd.c mlx5_cmd_check(): "%s(0x%x) op_mod(0x%x) failed, status %s(0x%x),
        // syndrome (0x%x)"
        ClassifyCase{"Mlx5CmdStatus",
                     "mlx5_core 0000:01:00.0: mlx5_cmd_check:790:(pid 811): CREATE_QP(0x500) "
                     "op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x1d4d0b)",
                     KernelEvent::FwCommandFailed},
        // mlx5 health.c: "device's health compromised - reached miss count"
        ClassifyCase{"HealthCompromised",
                     "mlx5_core 0000:01:00.0: poll_health:801:(pid 0): device's health "
                     "compromised - reached miss count",
                     KernelEvent::DeviceFatal},
        ClassifyCase{"UnrecoverableSyndrome",
                     "mlx5_core 0000:01:00.0: print_health_info:424:(pid 0): synd 0x8: "
                     "unrecoverable hardware error",
                     KernelEvent::DeviceFatal},
        ClassifyCase{"EnterErrorState",
                     "mlx5_core 0000:01:00.0: mlx5_enter_error_state:281:(pid 1234): start",
                     KernelEvent::DeviceFatal},
        ClassifyCase{"Mlx4Catastrophic",
                     "mlx4_core 0000:0d:00.0: Internal error detected on the communication "
                     "channel",
                     KernelEvent::DeviceFatal},
        ClassifyCase{"UnrelatedUnrecoverableIsNotADeviceFatal",
                     "EXT4-fs error (device sda1): unrecoverable journal", KernelEvent::None},
        // mlx5e / mlx4_en TX timeouts
        ClassifyCase{"Mlx5eTxTimeout",
                     "mlx5_core 0000:08:00.0 eth1: TX timeout on queue: 5, SQ: 0x10d, CQ: 0x40a, "
                     "SQ Cons: 0x0 SQ Prod: 0x1, usecs since last trans: 5120000",
                     KernelEvent::TxTimeout},
        // drivers/pci/pci.c __pcie_print_link_status()
        ClassifyCase{"PcieDowntrained",
                     "mlx5_core 0000:3b:00.0: 31.504 Gb/s available PCIe bandwidth, limited by "
                     "8.0 GT/s PCIe x4 link at 0000:3a:00.0 (capable of 63.008 Gb/s with 8.0 "
                     "GT/s PCIe x8 link)",
                     KernelEvent::PcieBandwidthLimited},
        // drivers/pci/pcie/aer.c
        ClassifyCase{"AerCorrected",
                     "pcieport 0000:00:03.1: AER: Corrected error received: 0000:41:00.0",
                     KernelEvent::PcieError},
        ClassifyCase{"AerBusError",
                     "mlx5_core 0000:41:00.0: PCIe Bus Error: severity=Corrected, type=Physical "
                     "Layer, (Receiver ID)",
                     KernelEvent::PcieError},
        // mlx5 events.c port_module() / temp_warn()
        ClassifyCase{"ModuleHighTemperature",
                     "mlx5_core 0000:01:00.0: Port module event[error]: module 0, Cable error, "
                     "High Temperature",
                     KernelEvent::ModuleTemperature},
        ClassifyCase{"SensorHighTemperature",
                     "mlx5_core 0000:01:00.0: High temperature on sensors with bit set 0 1",
                     KernelEvent::ModuleTemperature},
        ClassifyCase{"ModuleBadCable",
                     "mlx5_core 0000:01:00.0: Port module event[error]: module 0, Cable error, "
                     "Bad or shorted cable/module",
                     KernelEvent::ModuleError},
        ClassifyCase{"CableUnplugged",
                     "mlx5_core 0000:01:00.0: Port module event: module 0, Cable unplugged",
                     KernelEvent::CableUnplugged},
        // mlx5e / mlx4_en / Intel link messages
        ClassifyCase{"Mlx5eLinkDown", "mlx5_core 0000:01:00.0 ens1f0np0: Link down",
                     KernelEvent::LinkDown},
        ClassifyCase{"NicLinkDown", "ice 0000:18:00.0 ens785f0: NIC Link is Down",
                     KernelEvent::LinkDown},
        ClassifyCase{"Mlx4LinkUp", "mlx4_en: eth0: Link Up", KernelEvent::LinkUp},
        ClassifyCase{"LinkBecomesReady", "IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready",
                     KernelEvent::LinkUp},
        ClassifyCase{"Empty", "", KernelEvent::None}),
    [](const auto& p) { return p.param.name; });

TEST(KernelLogParser, EventNamesAreStableAndFaultsExcludeLinkUp) {
  EXPECT_EQ(kernelEventName(KernelEvent::FwCommandFailed), "FwCommandFailed");
  EXPECT_EQ(kernelEventName(KernelEvent::PcieBandwidthLimited), "PcieBandwidthLimited");
  EXPECT_FALSE(isKernelFault(KernelEvent::None));
  EXPECT_FALSE(isKernelFault(KernelEvent::LinkUp));
  EXPECT_TRUE(isKernelFault(KernelEvent::LinkDown));
  EXPECT_TRUE(isKernelFault(KernelEvent::DeviceFatal));
}

struct RelevanceCase {
  std::string message;
  bool relevant;
};

class KernelRelevance : public ::testing::TestWithParam<RelevanceCase> {};

TEST_P(KernelRelevance, OnlyRdmaPcieAndLinkLinesAreKept) {
  EXPECT_EQ(isRdmaRelevant(GetParam().message), GetParam().relevant) << GetParam().message;
}

INSTANTIATE_TEST_SUITE_P(
    Messages, KernelRelevance,
    ::testing::Values(RelevanceCase{"mlx5_core 0000:01:00.0: firmware version: 14.32.1010", true},
                      RelevanceCase{"infiniband rxe0: set active", true},
                      RelevanceCase{"rdma_rxe: Failed sending ack", true},
                      RelevanceCase{"efa 0000:00:1d.0: Setup irq:0xffff", true},
                      RelevanceCase{"bnxt_re: Broadcom NetXtreme-C/E RoCE Driver", true},
                      RelevanceCase{"irdma: Intel(R) Ethernet Protocol Driver for RDMA", true},
                      RelevanceCase{"hfi1 0000:05:00.0: hfi1_0: 8051 firmware version 1.27", true},
                      RelevanceCase{"IPv6: ADDRCONF(NETDEV_UP): ib0: link is not ready", true},
                      RelevanceCase{"pcieport 0000:00:03.1: AER: Corrected error received: "
                                    "0000:41:00.0",
                                    true},
                      RelevanceCase{"NETDEV WATCHDOG: eth1 (mlx4_core): transmit queue 0 timed "
                                    "out",
                                    true},
                      RelevanceCase{"ib_srpt: ib_srpt_add_one", true},
                      RelevanceCase{"Modules linked in: mlx4_en mlx4_core ib_core", false},
                      RelevanceCase{"EXT4-fs (sda1): mounted filesystem with ordered data mode",
                                    false},
                      RelevanceCase{"audit: type=1400 default profile loaded", false},
                      RelevanceCase{"usb 1-1: new high-speed USB device", false},
                      RelevanceCase{"", false}));

struct SubjectCase {
  std::string message;
  std::string subject;
  std::string netdev;
  std::string rdma_device;
};

class KernelSubject : public ::testing::TestWithParam<SubjectCase> {};

TEST_P(KernelSubject, DeviceNamedByTheMessageIsExtracted) {
  const auto& c = GetParam();
  EXPECT_EQ(kernelMessageSubject(c.message), c.subject) << c.message;
  const auto s = kernelMessageSubjectOf(c.message);
  EXPECT_EQ(s.netdev, c.netdev) << c.message;
  EXPECT_EQ(s.rdma_device, c.rdma_device) << c.message;
}

INSTANTIATE_TEST_SUITE_P(
    Messages, KernelSubject,
    ::testing::Values(
        SubjectCase{"mlx5_core 0000:01:00.0: handle_hca_cap failed", "0000:01:00.0", "", ""},
        SubjectCase{"mlx5_core: probe of 0000:03:00.0 failed with error -22", "0000:03:00.0", "",
                    ""},
        SubjectCase{"NETDEV WATCHDOG: eth1 (mlx4_core): transmit queue 0 timed out", "eth1", "eth1",
                    ""},
        SubjectCase{"IPv6: ADDRCONF(NETDEV_UP): ens1f0: link is not ready", "ens1f0", "ens1f0", ""},
        SubjectCase{"infiniband rxe0: set active", "rxe0", "", "rxe0"},
        SubjectCase{"mlx5_core 0000:01:00.0 mlx5_0: port 1 link down", "0000:01:00.0", "",
                    "mlx5_0"},
        SubjectCase{"mlx5_core 0000:08:00.0 eth1: TX timeout detected", "0000:08:00.0", "eth1", ""},
        SubjectCase{"mlx4_en: eth0: Link Up", "eth0", "eth0", ""},
        SubjectCase{"bond0: Releasing backup interface ens1f0", "bond0", "bond0", ""},
        SubjectCase{"pcieport 0000:00:03.1: AER: Corrected error received: 0000:41:00.0",
                    "0000:41:00.0", "", ""},
        SubjectCase{"rdma_rxe: Failed sending ack", "", "", ""},
        SubjectCase{"<mlx4_ib> mlx4_ib_add: mlx4_ib: Mellanox ConnectX InfiniBand driver", "", "",
                    ""}));

// ---- real captures (tests/fixtures/real/dmesg/PROVENANCE.md) -----------------------------

std::vector<KernelEvent> eventsOf(const std::vector<v1::KernelLogLine>& lines) {
  std::vector<KernelEvent> out;
  for (const auto& l : lines) out.push_back(classifyKernelMessage(l.text()));
  return out;
}

TEST(KernelLogRealCaptures, EveryCaptureParsesOneTimestampedEntryPerLine) {
  const auto files = ibc::test::fixtureFiles(kDmesgDir, ".txt");
  ASSERT_EQ(files.size(), 10u);
  for (const auto& f : files) {
    // The captures pasted through mail are wrapped: they have their own test below.
    if (f.find("_mail-") != std::string::npos) continue;
    const std::string text = ibc::test::readFixture(f);
    const auto lines = parseKernelLogText(text);
    EXPECT_EQ(lines.size(), nonBlankLines(text)) << f;
    for (const auto& l : lines) {
      EXPECT_FALSE(l.timestamp().empty()) << f << ":" << l.line_number();
      EXPECT_FALSE(l.text().empty()) << f << ":" << l.line_number();
      EXPECT_NE(l.text()[0], '[') << f << ":" << l.line_number();
    }
  }
}

// Each wrapped capture: {file, entries after joining, the entries that are command timeouts}.
struct WrappedCapture {
  std::string file;
  std::size_t entries;
  std::vector<std::size_t> timeouts;
};

TEST(KernelLogRealCaptures, MailWrappedAndQuotedLinesAreJoinedBeforeTheyAreClassified) {
  const std::vector<WrappedCapture> captures{
      {"dmesg-T_mail-quoted-printable-wrapped-mlx5-vf-cmd-eq-recovered-after-timeout_lkml-"
       "20201112.txt",
       8,
       {4, 5}},
      {"dmesg_mail-wrapped-mlx5-vf-cmd-eq-recovered-after-timeout-create-cq_kvm-20230208.txt",
       4,
       {1, 2}},
      {"dmesg_mail-reply-quoted-wrapped-mlx5-cmd-eq-recovered-after-timeout_kvm-20230316.txt",
       4,
       {1, 2}},
  };
  for (const auto& c : captures) {
    const auto lines = parseKernelLogText(dmesgFixture(c.file));
    ASSERT_EQ(lines.size(), c.entries) << c.file;
    for (const auto& l : lines) EXPECT_FALSE(l.timestamp().empty()) << c.file << ": " << l.text();
    const auto events = eventsOf(lines);
    for (std::size_t i : c.timeouts) {
      EXPECT_EQ(events[i], KernelEvent::FwCommandTimeout) << c.file << ": " << lines[i].text();
      EXPECT_TRUE(isRdmaRelevant(lines[i].text())) << lines[i].text();
    }
  }
  // The soft break's '=' goes, the two halves join without a space.
  const auto qp = parseKernelLogText(dmesgFixture(captures[0].file));
  EXPECT_EQ(qp[4].text(),
            "mlx5_core 0000:42:00.2: mlx5_cmd_eq_recover:264:(pid 3390): Recovered 1 EQEs on "
            "cmd_eq");
  EXPECT_EQ(qp[4].line_number(), 7u);
  // A plain wrap joins with one space; the "> " quote is gone.
  const auto quoted = parseKernelLogText(dmesgFixture(captures[2].file));
  EXPECT_EQ(quoted[2].text(),
            "mlx5_core 0000:00:02.0: wait_func_handle_exec_timeout:1113:(pid 3122): cmd[0]: "
            "CREATE_CQ(0x400) recovered after timeout");
  EXPECT_EQ(quoted[2].timestamp(), "[  230.681799]");
}

// Each line of `text` behind `stamp`, as a program that relays dmesg writes it.
std::string relayed(const std::string& text, const std::string& stamp) {
  std::string out;
  for (const auto line : splitLines(text)) out += stamp + std::string(line) + "\n";
  return out;
}

TEST(KernelLogRealCaptures, ALoggersStampInFrontOfTheKernelsOwnIsTakenOffAndItsPiecesJoin) {
  // The wrapped capture relayed by a logger (SYNTHETIC stamps on a real capture): every piece
  // of a cut line got a stamp of its own, but only the kernel's lines have the kernel's.
  const std::string file =
      "dmesg_mail-wrapped-mlx5-vf-cmd-eq-recovered-after-timeout-create-cq_kvm-20230208.txt";
  for (const std::string stamp :
       {"2026-11-20T08:15:02.123Z ", "Nov 20 08:15:02 gpu07 collect[4242]: "}) {
    const auto lines = parseKernelLogText(relayed(dmesgFixture(file), stamp));
    ASSERT_EQ(lines.size(), 4u) << stamp;
    EXPECT_EQ(lines[2].text(),
              "mlx5_core 0000:00:02.0: wait_func_handle_exec_timeout:1113:(pid 3122): cmd[0]: "
              "CREATE_CQ(0x400) recovered after timeout")
        << stamp;
    EXPECT_DOUBLE_EQ(lines[2].monotonic_seconds(), 230.681799) << stamp;
    EXPECT_EQ(eventsOf(lines)[2], KernelEvent::FwCommandTimeout) << stamp;
  }
  // The syslog relay names its host; the program's name goes with the stamps.
  const auto one = parseKernelLogText(
      "Nov 20 08:15:02 gpu07 collect[4242]: [  230.680927] mlx5_core 0000:00:02.0: x\n");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].host(), "gpu07");
  EXPECT_EQ(one[0].text(), "mlx5_core 0000:00:02.0: x");
}

TEST(KernelLogParser, UnstampedLinesOfAnUnstampedLogStayApart) {
  const auto lines = parseKernelLogText(
      "mlx5_core 0000:01:00.0: handle_hca_cap failed with a rather long message that wraps\n"
      "mlx5_core 0000:01:00.0: mlx5_load_one failed with error code -22\n");
  ASSERT_EQ(lines.size(), 2u);
}

TEST(KernelLogParser, AStampedLineThatIsNotCutKeepsTheNextLineApart) {
  const auto lines = parseKernelLogText(
      "[    5.1] mlx5_core 0000:01:00.0: short line\n"
      "some prose after the log\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].text(), "some prose after the log");
}

TEST(KernelLogParser, ContinuationsAreBoundedAndABlankLineEndsAWrap) {
  std::string text = "[    5.1] mlx5_core 0000:01:00.0: cut here (pid\n";
  for (int i = 0; i < 6; ++i) text += "more (\n";
  text += "\n(tail\n";
  const auto lines = parseKernelLogText(text);
  // One entry with 3 continuations, the 3 continuations beyond the bound, then "(tail".
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].text(), "mlx5_core 0000:01:00.0: cut here (pid more ( more ( more (");
  EXPECT_EQ(lines[4].text(), "(tail");
}

TEST(KernelLogRealCaptures, HealthyMlx5ProbeClassifiesNothingAsAFault) {
  const auto lines = parseKernelLogText(
      dmesgFixture("dmesg_mlx5-healthy-probe-pcie-x8-cable-plugged_arm-nas-issue-16.txt"));
  ASSERT_EQ(lines.size(), 14u);
  for (const auto& l : lines) {
    EXPECT_EQ(classifyKernelMessage(l.text()), KernelEvent::None) << l.text();
    EXPECT_TRUE(isRdmaRelevant(l.text())) << l.text();
  }
  EXPECT_EQ(lines[3].text(),
            "mlx5_core 0004:01:00.0: 63.008 Gb/s available PCIe bandwidth (8.0 GT/s PCIe x8 link)");
  EXPECT_EQ(kernelMessageSubject(lines[8].text()), "0004:01:00.1");
  EXPECT_DOUBLE_EQ(lines[0].monotonic_seconds(), 10.642917);
}

TEST(KernelLogRealCaptures, TrinityWorkingNodeHasFwCommand0x5aFailure) {
  const auto lines = parseKernelLogText(dmesgFixture(
      "dmesg_mlx4-ib-load-cmd-0x5a-fw-status-0x2-reported-working-node_trinity-issue-219.txt"));
  ASSERT_EQ(lines.size(), 4u);
  const auto events = eventsOf(lines);
  EXPECT_EQ(std::count(events.begin(), events.end(), KernelEvent::FwCommandFailed), 1);
  EXPECT_EQ(events[3], KernelEvent::FwCommandFailed);
  EXPECT_EQ(lines[3].timestamp(), "[  165.969824]");
  EXPECT_EQ(kernelMessageSubject(lines[3].text()), "0000:0d:00.0");
}

TEST(KernelLogRealCaptures, TrinityNonWorkingNodeShowsNoFaultInTheKernelLog) {
  // The reporter's non-working node differs only by the LSO "upgrade FW" notice, which is not
  // a fault by itself; its failure shows in ibstatus (see ../ibtools).
  const auto lines = parseKernelLogText(
      dmesgFixture("dmesg_mlx4-ib-load-reported-nonworking-node_trinity-issue-219.txt"));
  ASSERT_EQ(lines.size(), 4u);
  for (auto e : eventsOf(lines)) EXPECT_FALSE(isKernelFault(e));
}

TEST(KernelLogRealCaptures, RaspberryPiWatchdogIsATxTimeoutOnEth1) {
  const std::string text = dmesgFixture(
      "dmesg_mlx4-netdev-watchdog-tx-queue-timeout_raspberry-pi-pcie-devices-issue-139.txt");
  const auto lines = parseKernelLogText(text);
  ASSERT_EQ(lines.size(), 4u);
  const auto events = eventsOf(lines);
  EXPECT_EQ(std::count(events.begin(), events.end(), KernelEvent::TxTimeout), 1);
  EXPECT_EQ(events[1], KernelEvent::TxTimeout);
  EXPECT_EQ(kernelMessageSubject(lines[1].text()), "eth1");
  const auto log = filterKernelLog(text, {"file:dmesg", 10});
  EXPECT_EQ(log.source(), "file:dmesg");
  EXPECT_EQ(log.lines_scanned(), 4u);
  EXPECT_EQ(log.lines_matched(), 1u);  // the watchdog line, not the splat or module list
  ASSERT_EQ(log.lines_size(), 1);
  EXPECT_EQ(log.lines(0).line_number(), 2u);
}

TEST(KernelLogRealCaptures, ProbeEinvalCapturesAreDriverLoadFailures) {
  struct Expect {
    std::string file;
    std::string pci;
    std::size_t lines;
  };
  for (const auto& x :
       {Expect{"dmesg_mlx5-handle-hca-cap-failed-probe-einval_rp-ext-issue-129.txt", "0000:01:00.0",
               4},
        Expect{
            "dmesg_mlx5-log-max-qp-handle-hca-cap-failed-probe-einval_tinycore-redpill-issue-9.txt",
            "0000:03:00.0", 6}}) {
    const auto lines = parseKernelLogText(dmesgFixture(x.file));
    ASSERT_EQ(lines.size(), x.lines) << x.file;
    const auto events = eventsOf(lines);
    // handle_hca_cap failed, mlx5_load_one failed, probe ... failed with error -22.
    EXPECT_EQ(std::count(events.begin(), events.end(), KernelEvent::DriverLoadFailed), 3) << x.file;
    EXPECT_EQ(events.back(), KernelEvent::DriverLoadFailed) << x.file;
    EXPECT_EQ(kernelMessageSubject(lines.back().text()), x.pci) << x.file;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i] != KernelEvent::None) {
        EXPECT_EQ(events[i], KernelEvent::DriverLoadFailed) << lines[i].text();
      }
    }
  }
}

TEST(KernelLogRealCaptures, RxeJournalHasSendFailureAndLinksNotReadyWithTheJournalHost) {
  const auto lines = parseKernelLogText(dmesgFixture(
      "journal-kernel_rxe-failed-sending-ack-bond-link-not-ready_spdk-issue-1184.txt"));
  ASSERT_EQ(lines.size(), 11u);
  for (const auto& l : lines) {
    EXPECT_EQ(l.host(), "2eb8df3b-4141-5d0e-b36c-b65a247417d6");
    EXPECT_EQ(l.monotonic_seconds(), 0);
  }
  EXPECT_EQ(lines[0].text(), "infiniband rxe0: set active");
  EXPECT_EQ(lines[0].timestamp(), "Feb 06 16:10:07");
  EXPECT_EQ(kernelMessageSubjectOf(lines[0].text()).rdma_device, "rxe0");
  const auto events = eventsOf(lines);
  EXPECT_EQ(events[2], KernelEvent::RdmaSendFailure);
  EXPECT_EQ(lines[2].timestamp(), "Feb 06 16:14:23");
  EXPECT_EQ(std::count(events.begin(), events.end(), KernelEvent::LinkNotReady), 4);
  EXPECT_EQ(kernelMessageSubject(lines[5].text()), "ens1f0");
  EXPECT_EQ(kernelMessageSubject(lines[7].text()), "bond0");
}

TEST(KernelLogRealCaptures, PdshPrefixedCaptureKeepsHostAndEvents) {
  // The real trinity capture behind a synthetic pdsh prefix, as `pdsh -w node045 dmesg` prints.
  const std::string text = dmesgFixture(
      "dmesg_mlx4-ib-load-cmd-0x5a-fw-status-0x2-reported-working-node_trinity-issue-219.txt");
  std::string prefixed;
  forEachLine(text, [&prefixed](std::string_view line, uint32_t) {
    prefixed += "node045: ";
    prefixed += line;
    prefixed += '\n';
  });
  const auto lines = parseKernelLogText(prefixed);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3].host(), "node045");
  EXPECT_EQ(classifyKernelMessage(lines[3].text()), KernelEvent::FwCommandFailed);
}

TEST(KernelLogParser, FilterKeepsTheNewestMatchingLinesOldestFirst) {
  const std::string text =
      "[    1.000000] mlx5_core 0000:01:00.0: Port module event: module 0, Cable unplugged\n"
      "[    2.000000] usb 1-1: new high-speed USB device\n"
      "[    3.000000] mlx5_core 0000:01:00.0: Port module event: module 0, Cable plugged\n"
      "[    4.000000] mlx5_core 0000:01:00.0 ens1f0np0: Link down\n";
  KernelLogOptions options;
  options.max_lines = 2;
  const auto log = filterKernelLog(text, options);
  EXPECT_EQ(log.lines_scanned(), 4u);
  EXPECT_EQ(log.lines_matched(), 3u);
  EXPECT_TRUE(log.truncated());
  ASSERT_EQ(log.lines_size(), 2);
  EXPECT_EQ(log.lines(0).line_number(), 3u);
  EXPECT_EQ(log.lines(1).line_number(), 4u);
  EXPECT_DOUBLE_EQ(log.lines(1).monotonic_seconds(), 4.0);
}

}  // namespace
}  // namespace ibc::core

namespace ibc::core {
namespace {

// Issue 10: a kernel log is told from text that is none by its own shape (a timestamp
// prefix, or a kernel message about RDMA/PCIe/links): every real capture is one; prose and
// NCCL or nccl-tests output are not.
TEST(KernelLogRealCaptures, EveryCaptureIsRecognisedAsAKernelLogAndOtherTextIsNot) {
  std::size_t captures = 0;
  for (const auto& name : ibc::test::fixtureFiles(kDmesgDir, ".txt")) {
    ++captures;
    const auto log = filterKernelLog(ibc::test::readFixture(name), {"file", 10});
    EXPECT_GT(log.lines_stamped() + log.lines_matched(), 0u) << name;
  }
  EXPECT_GE(captures, 7u);
  const auto prose = filterKernelLog("the job hung at step 4000\nplease help\n", {"file", 10});
  EXPECT_EQ(prose.lines_stamped() + prose.lines_matched(), 0u);
  const auto nccl = filterKernelLog(
      "node1:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n", {"file", 10});
  EXPECT_EQ(nccl.lines_stamped() + nccl.lines_matched(), 0u);
  const auto stamped = filterKernelLog("[    1.234567] clocksource: Switched\n", {"file", 10});
  EXPECT_EQ(stamped.lines_stamped(), 1u);
  EXPECT_EQ(stamped.lines_matched(), 0u);
}

}  // namespace
}  // namespace ibc::core

#include "ibc/core/sysfs_values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"
#include "ibc/core/text.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

TEST(SysfsValues, StripsExactlyOneTrailingNewline) {
  EXPECT_EQ(stripOneNewline("4: ACTIVE\n"), "4: ACTIVE");
  EXPECT_EQ(stripOneNewline("x\n\n"), "x\n");
  EXPECT_EQ(stripOneNewline("0a7f:bc12:45ef:d23b"), "0a7f:bc12:45ef:d23b");
  EXPECT_EQ(stripOneNewline(""), "");
}

struct EnumCase {
  std::string text;
  int code;
  std::string name;
  PortState port;
  PhysState phys;
};

class EnumValueTable : public ::testing::TestWithParam<EnumCase> {};

TEST_P(EnumValueTable, ParsesNumberNameAndKeepsRaw) {
  const auto& c = GetParam();
  auto v = parseEnumValue(c.text);
  ASSERT_TRUE(v.ok()) << c.text;
  EXPECT_EQ(v->code(), c.code);
  EXPECT_EQ(v->name(), c.name);
  EXPECT_EQ(v->raw(), std::string(stripOneNewline(c.text)));
  EXPECT_EQ(portStateOf(*v), c.port) << c.text;
  EXPECT_EQ(physStateOf(*v), c.phys) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    Values, EnumValueTable,
    ::testing::Values(
        EnumCase{"4: ACTIVE\n", 4, "ACTIVE", PortState::Active, PhysState::Unknown},
        EnumCase{"2: INIT\n", 2, "INIT", PortState::Init, PhysState::Unknown},
        EnumCase{"1: DOWN\n", 1, "DOWN", PortState::Down, PhysState::Unknown},
        EnumCase{"5: LinkUp\n", 5, "LinkUp", PortState::Unknown, PhysState::LinkUp},
        EnumCase{"2: Polling\n", 2, "Polling", PortState::Unknown, PhysState::Polling},
        EnumCase{"3: Disabled\n", 3, "Disabled", PortState::Unknown, PhysState::Disabled},
        EnumCase{"Active", -1, "Active", PortState::Active, PhysState::Unknown},
        EnumCase{"LinkUp", -1, "LinkUp", PortState::Unknown, PhysState::LinkUp},
        EnumCase{"PORT_INIT (2)", -1, "PORT_INIT (2)", PortState::Init, PhysState::Unknown},
        EnumCase{"LINK_UP (5)", -1, "LINK_UP (5)", PortState::Unknown, PhysState::LinkUp},
        EnumCase{"7", 7, "", PortState::Unknown, PhysState::PhyTest}));

TEST(SysfsValues, ActiveAsPhysStateIsNotTakenAsTraining) {
  // procfs fixture mlx5_0: phys_state "4: ACTIVE" (a logical name under a physical
  // number). Trusting the number would claim PortConfigurationTraining.
  const std::string text = ibc::test::readFixture(
      "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures/sys/class/"
      "infiniband/mlx5_0/ports/1/phys_state");
  auto v = parseEnumValue(text);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->code(), 4);
  EXPECT_EQ(physStateOf(*v), PhysState::Unknown);
}

TEST(SysfsValues, EmptyAndGarbageEnumValuesAreMalformedOrNamed) {
  EXPECT_FALSE(parseEnumValue("").ok());
  EXPECT_FALSE(parseEnumValue("  \n").ok());
  auto g = parseEnumValue("\x01\x02garbage");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->code(), -1);
  EXPECT_EQ(portStateOf(*g), PortState::Unknown);
}

struct RateCase {
  std::string text;
  double gbps;
  uint32_t lanes;
  std::string speed;
};

class RateTable : public ::testing::TestWithParam<RateCase> {};

TEST_P(RateTable, ParsesSpeedAndWidth) {
  const auto& c = GetParam();
  auto r = parseRate(c.text);
  ASSERT_TRUE(r.ok()) << c.text;
  EXPECT_DOUBLE_EQ(r->gbps, c.gbps);
  EXPECT_EQ(r->width_lanes, c.lanes);
  EXPECT_EQ(r->speed_name, c.speed);
}

INSTANTIATE_TEST_SUITE_P(Values, RateTable,
                         ::testing::Values(RateCase{"200 Gb/sec (4X HDR)\n", 200, 4, "HDR"},
                                           RateCase{"100 Gb/sec (4X EDR)\n", 100, 4, "EDR"},
                                           RateCase{"25 Gb/sec (1X EDR)\n", 25, 1, "EDR"},
                                           RateCase{"2.5 Gb/sec (1X SDR)\n", 2.5, 1, "SDR"},
                                           RateCase{"10 Gb/sec (4X)\n", 10, 4, ""},
                                           RateCase{"40 Gb/sec (4X QDR)", 40, 4, "QDR"},
                                           RateCase{"400 Gb/sec (4X NDR)\n", 400, 4, "NDR"},
                                           RateCase{"100", 100, 0, ""}));

TEST(SysfsValues, RateWithoutNumberIsMalformed) {
  EXPECT_FALSE(parseRate("").ok());
  EXPECT_FALSE(parseRate("Gb/sec").ok());
  EXPECT_FALSE(parseRate("-5 Gb/sec").ok());
}

TEST(SysfsValues, CounterValuesParseOrSayWhyNot) {
  EXPECT_EQ(parseCounterValue("0\n").value(), 0u);
  EXPECT_EQ(parseCounterValue("2880761508848\n").value(), 2880761508848u);
  EXPECT_EQ(parseCounterValue("18446744073709551615\n").value(), UINT64_MAX);
  auto na = parseCounterValue("N/A (no PMA)\n");
  ASSERT_FALSE(na.ok());
  EXPECT_EQ(na.error().code, ErrorCode::Unavailable);
  EXPECT_EQ(na.error().message, "N/A (no PMA)");
  auto big = parseCounterValue("99999999999999999999999\n");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ErrorCode::Malformed);
  EXPECT_FALSE(parseCounterValue("").ok());
  EXPECT_FALSE(parseCounterValue("12abc").ok());
  EXPECT_FALSE(parseCounterValue(std::string(1 << 20, '7')).ok());  // huge
}

TEST(SysfsValues, NoPmaCountersFromTheI40iwFixtureAreUnavailable) {
  const auto files = ibc::test::fixtureFiles(
      "real/sysfs/sysfs_node-exporter-fixture_i40iw0_iwarp-no-pma.tree/sys/class/infiniband/"
      "i40iw0/ports/1/counters");
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    auto c = makeCounter("x", ibc::test::readFixture(f), CounterSet::PortCounters);
    EXPECT_EQ(c.unavailable_reason(), "N/A (no PMA)") << f;
  }
}

TEST(SysfsValues, CounterWidthsDetectSaturation) {
  EXPECT_EQ(counterWidthBits("port_xmit_wait", CounterSet::PortCounters), 32u);
  EXPECT_EQ(counterWidthBits("symbol_error", CounterSet::PortCounters), 16u);
  EXPECT_EQ(counterWidthBits("link_downed", CounterSet::PortCounters), 8u);
  EXPECT_EQ(counterWidthBits("local_link_integrity_errors", CounterSet::PortCounters), 4u);
  EXPECT_EQ(counterWidthBits("something_new", CounterSet::PortCounters), 0u);
  EXPECT_TRUE(isSaturated(4294967295u, 32));
  EXPECT_TRUE(isSaturated(65535u, 16));
  EXPECT_TRUE(isSaturated(255u, 8));
  EXPECT_TRUE(isSaturated(15u, 4));
  EXPECT_FALSE(isSaturated(4294967294u, 32));
  EXPECT_FALSE(isSaturated(5u, 0));
  const auto c = makeCounter(
      "port_xmit_wait",
      ibc::test::readFixture("real/sysfs/sysfs_node-exporter-fixture_mlx4_0_counters-ext.tree/"
                             "sys/class/infiniband/mlx4_0/ports/1/counters/port_xmit_wait"),
      CounterSet::PortCounters);
  EXPECT_TRUE(isSaturated(c.value(), c.width_bits()));
}

TEST(SysfsValues, PcieLinkValues) {
  EXPECT_DOUBLE_EQ(parsePcieSpeedGts("16.0 GT/s PCIe\n").value(), 16.0);
  EXPECT_DOUBLE_EQ(parsePcieSpeedGts("8 GT/s\n").value(), 8.0);
  EXPECT_FALSE(parsePcieSpeedGts("Unknown\n").has_value());
  EXPECT_EQ(parsePcieWidth("16\n").value(), 16u);
  EXPECT_EQ(parsePcieWidth("x8").value(), 8u);
  EXPECT_FALSE(parsePcieWidth("0\n").has_value());
  EXPECT_FALSE(parsePcieWidth("wide").has_value());
}

TEST(SysfsValues, GidsAndGuids) {
  EXPECT_TRUE(isZeroGid("0000:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(isZeroGid("fe80:0000:0000:0000:0a7f:bc12:45ef:d23b"));
  EXPECT_FALSE(isZeroGid(""));
  EXPECT_TRUE(isZeroGuid("0000:0000:0000:0000"));
  EXPECT_TRUE(isZeroGuid("0x0000000000000000"));
  EXPECT_FALSE(isZeroGuid("0000:0000:0000:0001"));
}

TEST(SysfsValues, KnowsMellanoxVirtualFunctionIds) {
  EXPECT_EQ(mellanoxVirtualFunctionName("0x1016"), "ConnectX-4 Lx VF");
  EXPECT_EQ(mellanoxVirtualFunctionName("4126"), "ConnectX family mlx5Gen VF");
  EXPECT_EQ(mellanoxVirtualFunctionName("0x101b"), "");  // ConnectX-6 PF
  EXPECT_EQ(mellanoxVirtualFunctionName("4115"), "");    // ConnectX-4 PF
  EXPECT_EQ(mellanoxVirtualFunctionName("junk"), "");
  EXPECT_EQ(hcaTypeToDeviceId("MT4118\n"), "0x1016");
  EXPECT_EQ(hcaTypeToDeviceId("hca_type\n"), "");
  EXPECT_EQ(hcaTypeToDeviceId("I40IW"), "");
}

// A read cut short (a racing driver, a bounded read, a copied tree written while the port
// changed): never taken for a healthy value, never a crash.
struct TruncatedCase {
  std::string text;
  PortState state;  // as portStateOf() sees the value; Unknown when it cannot tell
};

class TruncatedStateTable : public ::testing::TestWithParam<TruncatedCase> {};

TEST_P(TruncatedStateTable, ACutValueIsNeverReadAsAnotherState) {
  const auto& c = GetParam();
  auto v = parseEnumValue(c.text);
  if (!v.ok()) {
    EXPECT_EQ(c.state, PortState::Unknown) << c.text;
    EXPECT_EQ(v.error().code, ErrorCode::Malformed);
    return;
  }
  EXPECT_EQ(portStateOf(*v), c.state) << c.text.substr(0, 80);
  // The raw text is kept as read when it is printable; anything else is made printable
  // (a snapshot must serialise, a terminal must not receive escapes) and capped.
  EXPECT_EQ(v->raw(), printable(stripOneNewline(c.text), 256)) << c.text.substr(0, 80);
  EXPECT_TRUE(isValidUtf8(v->raw()));
  EXPECT_TRUE(isValidUtf8(v->name()));
}

TEST(SysfsValues, PrintableStatesAreKeptVerbatimAndGarbageIsMadePrintable) {
  auto good = parseEnumValue("4: ACTIVE\n");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->raw(), "4: ACTIVE");
  EXPECT_EQ(good->name(), "ACTIVE");
  auto escape = parseEnumValue("Act\x1b[31mive\n");
  ASSERT_TRUE(escape.ok());
  EXPECT_EQ(escape->raw(), "Act?[31mive");
  EXPECT_EQ(portStateOf(*escape), PortState::Unknown);
  auto binary = parseEnumValue("4: \xff\xfe\xc2\x9b\n");
  ASSERT_TRUE(binary.ok());
  EXPECT_EQ(binary->code(), 4);
  EXPECT_EQ(binary->name(), "???");  // invalid bytes and the C1 CSI
}

TEST(SysfsValues, ACounterReasonNeverQuotesBytesThatAreNotText) {
  const v1::Counter c = makeCounter("symbol_error", "12\xff\x1b\n", CounterSet::PortCounters);
  EXPECT_FALSE(c.unavailable_reason().empty());
  EXPECT_TRUE(isValidUtf8(c.unavailable_reason()));
  EXPECT_THAT(c.unavailable_reason(), Not(HasSubstr("\x1b")));
  EXPECT_THAT(c.unavailable_reason(), Not(HasSubstr("\xff")));
}

INSTANTIATE_TEST_SUITE_P(
    Values, TruncatedStateTable,
    ::testing::Values(TruncatedCase{"4: ACTIVE\n", PortState::Active},        // good
                      TruncatedCase{"4: ACT", PortState::Unknown},            // name cut
                      TruncatedCase{"4: ", PortState::Active},                // name gone
                      TruncatedCase{"4", PortState::Active},                  // number only
                      TruncatedCase{": ACTIVE", PortState::Unknown},          // number gone
                      TruncatedCase{"1: DOWN\n", PortState::Down},            // good
                      TruncatedCase{"1: ACTIVE", PortState::Unknown},         // disagreeing
                      TruncatedCase{"", PortState::Unknown},                  // empty
                      TruncatedCase{"\xff\xfe\x00\x01", PortState::Unknown},  // garbage
                      TruncatedCase{std::string(1 << 20, '4'), PortState::Unknown}));  // huge

TEST(SysfsValues, TruncatedRatesAndCountersKeepWhatTheyCanOrSayWhy) {
  auto cut = parseRate("200 Gb/sec (4X");
  ASSERT_TRUE(cut.ok());
  EXPECT_DOUBLE_EQ(cut->gbps, 200);
  EXPECT_EQ(cut->speed_name, "");
  auto number_cut = parseRate("20");  // cannot be told from a real 20: kept as read
  ASSERT_TRUE(number_cut.ok());
  EXPECT_DOUBLE_EQ(number_cut->gbps, 20);
  EXPECT_FALSE(parseRate(std::string(1 << 20, '9')).ok());  // huge
  auto na_cut = parseCounterValue("N/A (no");
  ASSERT_FALSE(na_cut.ok());
  EXPECT_EQ(na_cut.error().code, ErrorCode::Unavailable);
  EXPECT_FALSE(parseCounterValue("12 3").ok());
  EXPECT_FALSE(parseCounterValue("-1").ok());
}

TEST(SysfsValues, IdentityShapesRefusePlaceholdersAndTruncations) {
  for (const char* good : {"0a7f:bc12:45ef:d23b", "0a:7f:bc:12:45:ef:d2:3b", "0x0a7fbc1245efd23b",
                           "0A7FBC1245EFD23B\n"}) {
    EXPECT_TRUE(isGuidShaped(good)) << good;
  }
  for (const char* bad : {"node_guid", "", "0a7f:bc12:45ef", "0a7f:bc12:45ef:d23b:00",
                          "0a7f::bc12:45ef:d23b", "0a7f:bc12:45ef:d23g", "0a7f:bc12:45ef:d23b:"}) {
    EXPECT_FALSE(isGuidShaped(bad)) << bad;
  }
  EXPECT_TRUE(isMacShaped("24:8a:07:b4:33:aa"));
  EXPECT_TRUE(isMacShaped("00:00:10:87:fe:80:00:00:00:00:00:00:0a:7f:bc:12:45:ef:d2:3c"));
  for (const char* bad :
       {"address", "24:8a:07:b4:33", "24:8a:07:b4:33:aa:", "248a.07b4.33aa", "24:8a:07:b4:33:zz"}) {
    EXPECT_FALSE(isMacShaped(bad)) << bad;
  }
  for (const char* good : {"14.28.2006", "2.31.5050\n", "20.39.1002 (MT_0000000224)"}) {
    EXPECT_TRUE(isFirmwareVersionShaped(good)) << good;
  }
  for (const char* bad : {"fw_ver", "", "14", "v14.28", "14.28.2006 garbage"}) {
    EXPECT_FALSE(isFirmwareVersionShaped(bad)) << bad;
  }
}

}  // namespace
}  // namespace ibc::core

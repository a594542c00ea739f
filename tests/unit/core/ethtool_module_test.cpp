// The `ethtool -m` parser (parsers/pf/ethtool_module.cpp) on the real captures of
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

TEST(EthtoolModuleParser, SfpWithRxPowerLowAlarmOn) {
  const auto r = parseEthtoolModule(pfCapture("ethtool-m_sfp-10gbase-sr-finisar"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].netdev(), "ens22f0");
  EXPECT_EQ(r[0].vendor_pn(), "FTLX8571D3BCL-HD");
  EXPECT_DOUBLE_EQ(r[0].temperature_c(), 30.14);
  ASSERT_EQ(r[0].rx_power_dbm_size(), 1);
  EXPECT_DOUBLE_EQ(r[0].rx_power_dbm(0), -33.98);
  ASSERT_EQ(r[0].alarms_on_size(), 1);
  EXPECT_EQ(r[0].alarms_on(0), "Laser rx power low alarm");
  ASSERT_EQ(r[0].warnings_on_size(), 1);
  EXPECT_EQ(r[0].flags_reported(), 20u);
  EXPECT_TRUE(parseEthtoolModule("Identifier : QSFP28\n").empty());  // mlxlink's, not 0x..
}

TEST(EthtoolModuleParser, MailWrappedAndQuotedPrintableDumpsKeepEveryFlag) {
  // Thunderbird wrapped values after a space; the module must not end at the wrap.
  const auto wrapped = parseEthtoolModule(pfCapture("ethtool-m_dell-m14mk-sfp28"));
  ASSERT_EQ(wrapped.size(), 1u);
  EXPECT_EQ(wrapped[0].vendor_pn(), "M14MK");
  EXPECT_EQ(wrapped[0].flags_reported(), 20u);
  EXPECT_EQ(wrapped[0].alarms_on_size(), 3);
  EXPECT_EQ(wrapped[0].warnings_on_size(), 3);
  // Quoted-printable soft breaks ("125.8=" / "3 degrees F") are joined back.
  const auto qp = parseEthtoolModule(pfCapture("ethtool-m_oem-sfp-10g-sr-all-flags-off"));
  ASSERT_EQ(qp.size(), 1u);
  EXPECT_DOUBLE_EQ(qp[0].temperature_c(), 52.13);
  EXPECT_EQ(qp[0].flags_reported(), 20u);
  EXPECT_EQ(qp[0].alarms_on_size(), 0);
  // A poster's "(...)" elision inside a quoted dump.
  const auto elided = parseEthtoolModule(pfCapture("ethtool-m_cx3pro-mlx4-sfp"));
  ASSERT_EQ(elided.size(), 1u);
  EXPECT_EQ(elided[0].netdev(), "eth2");
  ASSERT_EQ(elided[0].alarms_on_size(), 1);
  EXPECT_EQ(elided[0].alarms_on(0), "Laser rx power low alarm");
}

TEST(EthtoolModuleParser, AnnotatedFlagIsStillOnAndOtherTextEndsTheModule) {
  const auto r = parseEthtoolModule(
      "Identifier : 0x03 (SFP)\nVendor PN : X\nLaser rx power low alarm : On   <-- no light\n"
      "Laser rx power low warning : Off\nsome prose after the paste\nmore prose here\n"
      "Laser bias current high alarm : On\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].alarms_on_size(), 1);
  EXPECT_EQ(r[0].flags_reported(), 2u);
}

}  // namespace
}  // namespace ibc::core

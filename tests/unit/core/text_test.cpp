// core/base text helpers shared by every program: word wrapping for --help, numbers and UTC
// times for people.

#include "ibc/core/text.h"

#include <gtest/gtest.h>

namespace ibc::core {
namespace {

TEST(WrapWords, LinesStayWithinTheWidthAndLongWordsStandAlone) {
  EXPECT_EQ(wrapWords("Collector HOST:PORT (uploads when set)", 20),
            "Collector HOST:PORT\n(uploads when set)");
  EXPECT_EQ(wrapWords("a  b", 10), "a b");
  EXPECT_EQ(wrapWords("averyveryverylongword x", 8), "averyveryverylongword\nx");
  EXPECT_EQ(wrapWords("", 8), "");
}

TEST(FormatNumber, IntegersExactlyOthersWithTheGivenSignificantDigits) {
  EXPECT_EQ(formatNumber(480), "480");
  EXPECT_EQ(formatNumber(12345678, 3), "12345678");
  EXPECT_EQ(formatNumber(3.14159, 3), "3.14");
  EXPECT_EQ(formatNumber(0.000001234, 4), "1.234e-06");
}

TEST(FormatUtc, FollowsTheFormat) {
  EXPECT_EQ(formatUtc(1764000000), "2025-11-24T16:00:00Z");
  EXPECT_EQ(formatUtc(1764000000, "%Y%m%dT%H%M%SZ"), "20251124T160000Z");
}

}  // namespace
}  // namespace ibc::core

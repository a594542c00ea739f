// core/base text helpers shared by every program: word wrapping for --help, numbers and UTC
// times for people.

#include "ibc/core/text.h"

#include <gtest/gtest.h>

#include <charconv>
#include <clocale>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

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

// The C library's conversions stand in for std::from_chars/std::to_chars(double) where GCC 10's
// libstdc++ lacks them (the portable build): they must give the same text and values.
std::vector<double> sampleDoubles() {
  std::vector<double> values = {
      0.0,     -0.0,    1.0,      -1.0,      0.1,     0.3,          1e20,
      1e21,    1e-7,    1e-5,     123456,    1234567, 5e-324,       1.7976931348623157e308,
      2.5e-6,  100.0,   1e15,     1e16,      1e17,    0.001,        9007199254740993.0,
      3.14159, 2.0 / 3, 4.35e-05, 12345.678, 1e100,   6.02214076e23};
  std::mt19937_64 random(38);
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t bits = random();
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) values.push_back(v);
    values.push_back(static_cast<double>(random() % 100000000) / 1000.0);
    values.push_back(static_cast<double>(random() % 1000) *
                     std::pow(10.0, static_cast<int>(random() % 40) - 20));
  }
  return values;
}

TEST(CLibraryNumbers, ShortestDoubleWritesWhatStdToCharsWrites) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  for (double v : sampleDoubles()) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    ASSERT_EQ(c_library::shortestDouble(v), std::string(buf, end)) << "bits of " << buf;
  }
#else
  GTEST_SKIP() << "this C++ library has no floating-point std::to_chars to compare with";
#endif
}

TEST(CLibraryNumbers, ReadDoubleReadsWhatStdFromCharsReads) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  std::vector<std::string> texts = {
      "200 Gb/sec", "2.5", "1e-07",    "-3",    "+3",     " 3",     "0x1p3",     "-0x10", "inf",
      "-infinity",  "nan", "nan(123)", "1e400", "-1e400", "1e-400", ".5",        "5.",    "e5",
      "-",          "",    "1,5",      "12abc", "1e",     "1e+",    "4.35e-05x", "00012", "1_000"};
  for (double v : sampleDoubles()) texts.push_back(c_library::shortestDouble(v));
  for (const auto& text : texts) {
    double expected = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), expected);
    const auto got = c_library::readDouble(text);
    if (ec != std::errc()) {
      EXPECT_FALSE(got.has_value()) << "'" << text << "'";
      continue;
    }
    ASSERT_TRUE(got.has_value()) << "'" << text << "'";
    EXPECT_EQ(got->second, static_cast<std::size_t>(end - text.data())) << "'" << text << "'";
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got->first)) << "'" << text << "'";
    } else {
      EXPECT_EQ(std::signbit(got->first), std::signbit(expected)) << "'" << text << "'";
      EXPECT_EQ(got->first, expected) << "'" << text << "'";
    }
  }
#else
  GTEST_SKIP() << "this C++ library has no floating-point std::from_chars to compare with";
#endif
}

TEST(CLibraryNumbers, FollowNoLocale) {
  const char* previous = std::setlocale(LC_NUMERIC, nullptr);
  const std::string saved = previous ? previous : "C";
  if (!std::setlocale(LC_NUMERIC, "de_DE.UTF-8") && !std::setlocale(LC_NUMERIC, "C.UTF-8"))
    GTEST_SKIP() << "no other locale installed";
  EXPECT_EQ(c_library::shortestDouble(1.5), "1.5");
  const auto read = c_library::readDouble("1.5");
  std::setlocale(LC_NUMERIC, saved.c_str());
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->first, 1.5);
}

}  // namespace
}  // namespace ibc::core

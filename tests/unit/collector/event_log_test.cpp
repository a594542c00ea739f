#include "ibc/collector/event_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

using ::testing::HasSubstr;

namespace ibc::collector {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// One event line: ts, level, event, then key=value pairs with bare or quoted values.
const std::regex kLineShape(
    R"(ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(info|warn|error) event=[a-z_]+)"
    R"(( [a-z_]+=([^ "=\\]+|"([^"\\]|\\.)*"))*)");

TEST(EventLog, ValuesWithSpacesQuotesOrNewlinesAreQuotedAndStayOnOneLine) {
  EXPECT_EQ(formatEvent(LogLevel::Warn, "upload_rejected",
                        {{"reason", "bad_signature"},
                         {"peer", "127.0.0.1:4000"},
                         {"detail", "the signature \"x\" does not\nverify"},
                         {"empty", ""},
                         {"path", "C:\\tmp"},
                         {"eq", "a=b"},
                         {"bell", "\a"}}),
            "level=warn event=upload_rejected reason=bad_signature peer=127.0.0.1:4000 "
            "detail=\"the signature \\\"x\\\" does not\\nverify\" empty=\"\" path=\"C:\\\\tmp\" "
            "eq=\"a=b\" bell=\"\\x07\"");
}

TEST(EventLog, StreamLinesHaveTheStableShape) {
  std::ostringstream out;
  StreamEventLog log(out);
  log.event(LogLevel::Info, "collector_started",
            {{"listen", "127.0.0.1:7443"}, {"data", "/var/lib/x y"}});
  log.write("free text with spaces");
  log.event(LogLevel::Error, "retention_failed", {{"detail", "disk \"full\"\n"}});
  const auto got = lines(out.str());
  ASSERT_EQ(got.size(), 3u) << out.str();
  for (const auto& line : got) EXPECT_TRUE(std::regex_match(line, kLineShape)) << line;
  EXPECT_THAT(got[1], HasSubstr("event=message msg=\"free text with spaces\""));
}

// At most `lines` lines a second, on a clock the test moves.
StreamEventLogOptions limitedTo(int lines, const SteadyClock::time_point& now) {
  StreamEventLogOptions options;
  options.lines_per_second = lines;
  options.steady_now = [&now] { return now; };
  return options;
}

TEST(EventLog, AFloodOfOneKindIsCutToTheLimitPerSecondAndTheRestIsCounted) {
  std::ostringstream out;
  SteadyClock::time_point now{};
  const StreamEventLogOptions options = limitedTo(5, now);
  {
    StreamEventLog log(out, options);
    // 1000 rejected connections within half a second, and one upload rejection among them.
    for (int i = 0; i < 1000; ++i) {
      log.event(LogLevel::Warn, "connection_rejected",
                {{"reason", "handshake_timeout"}, {"peer", "10.0.0.1:" + std::to_string(i)}});
      if (i == 500) log.event(LogLevel::Warn, "upload_rejected", {{"reason", "bad_signature"}});
      now += std::chrono::microseconds(500);
    }
    // The next second: the count of what was held back, then lines again.
    now += milliseconds(600);
    log.event(LogLevel::Warn, "connection_rejected", {{"reason", "handshake_timeout"}});
    // Another kind is not limited by the first.
    log.event(LogLevel::Warn, "connection_rejected", {{"reason", "unknown_ca"}});
  }
  const auto got = lines(out.str());
  std::size_t timeouts = 0, suppressed = 0;
  for (const auto& line : got) {
    EXPECT_TRUE(std::regex_match(line, kLineShape)) << line;
    if (line.find("reason=handshake_timeout") != std::string::npos) ++timeouts;
    if (line.find("event=log_suppressed") != std::string::npos) {
      ++suppressed;
      EXPECT_THAT(
          line,
          HasSubstr("level=warn event=log_suppressed kind=connection_rejected/handshake_timeout "
                    "count=995"));
    }
  }
  EXPECT_EQ(timeouts, 6u) << out.str();  // 5 in the first second, 1 in the next
  EXPECT_EQ(suppressed, 1u) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("reason=bad_signature"));
  EXPECT_THAT(out.str(), HasSubstr("reason=unknown_ca"));
  EXPECT_EQ(got.size(), 9u) << out.str();
}

TEST(EventLog, SuppressedLinesAreReportedAtExitEvenWithoutALaterEvent) {
  std::ostringstream out;
  SteadyClock::time_point now{};
  const StreamEventLogOptions options = limitedTo(2, now);
  {
    StreamEventLog log(out, options);
    for (int i = 0; i < 10; ++i)
      log.event(LogLevel::Warn, "connection_rejected", {{"reason", "x"}});
  }
  EXPECT_THAT(out.str(), HasSubstr("event=log_suppressed kind=connection_rejected/x count=8"));
}

}  // namespace
}  // namespace ibc::collector

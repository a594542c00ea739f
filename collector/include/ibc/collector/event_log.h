#pragma once

// The collector's event log (docs/operations.md): one line per event on stderr, which journald
// picks up, in a stable `key=value` shape that tools can split without a grammar:
//
//   ts=2026-11-25T10:48:22.123Z level=warn event=upload_rejected reason=bad_signature
//     peer=127.0.0.1:40122 tenant=acme role=agent cn=node01 detail="signature does not ..."
//
// (one line; wrapped here). `ts` is UTC with milliseconds, `level` is info|warn|error,
// `event` a stable snake_case name; the other keys depend on the event. A value is written
// bare when it is non-empty and holds only printable ASCII other than space, `"` and `=`;
// otherwise it is double-quoted with `\"`, `\\`, `\n`, `\t` and `\xHH` escapes, so an event
// is always exactly one line. Events carry names, addresses, reasons and counts only: never
// key material, never snapshot contents.
//
// Floods are rate-limited per kind (the event name plus its `reason`): at most
// `lines_per_second` lines of one kind per second; what is held back is counted and
// reported once as `event=log_suppressed kind=KIND count=K` when that kind's second ends
// (on the next event of any kind) or at flushSuppressed().

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ibc::collector {

enum class LogLevel { Info, Warn, Error };
std::string_view logLevelName(LogLevel level);

struct LogField {
  std::string key;  // snake_case
  std::string value;
};
using LogFields = std::vector<LogField>;

// "level=warn event=NAME key=value ..." (no time stamp, no newline).
std::string formatEvent(LogLevel level, std::string_view event, const LogFields& fields);
// Appends `value` bare or quoted (see above).
void appendLogValue(std::string& out, std::string_view value);

// Where events go. Implementations are thread-safe.
class EventLog {
 public:
  virtual ~EventLog() = default;
  virtual void event(LogLevel level, std::string_view event, const LogFields& fields) = 0;
  // Free text, as `level=info event=message msg="..."`.
  void write(std::string_view text) {
    event(LogLevel::Info, "message", {{"msg", std::string(text)}});
  }
};

struct StreamEventLogOptions {
  std::size_t lines_per_second = 20;  // per kind; 0: no limit
  // Seams for tests: the rate limiter's clock and the time stamp.
  std::function<std::chrono::steady_clock::time_point()> steady_now;
  std::function<std::chrono::system_clock::time_point()> wall_now;
};

// Writes "ts=... " + formatEvent(...) + "\n" to a stream, flushed, rate-limited per kind.
class StreamEventLog final : public EventLog {
 public:
  explicit StreamEventLog(std::ostream& out, StreamEventLogOptions options = {});
  ~StreamEventLog() override;
  void event(LogLevel level, std::string_view event, const LogFields& fields) override;
  // Writes the pending log_suppressed lines now (at exit). The destructor calls it.
  void flushSuppressed();

 private:
  struct Window {
    std::chrono::steady_clock::time_point start;
    std::size_t written = 0;
    uint64_t suppressed = 0;
  };
  void writeLine(const std::string& line);
  void reportEnded(std::chrono::steady_clock::time_point now, bool all);

  std::ostream& out_;
  StreamEventLogOptions options_;
  std::mutex mutex_;
  std::map<std::string, Window> windows_;
};

}  // namespace ibc::collector
